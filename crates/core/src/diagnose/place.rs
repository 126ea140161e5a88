//! Where a resource's live parent is — the tmux pane, the screen window, or the terminal and
//! its tty — so that "not orphaned" names the place to press Ctrl-C (docs/design.md §2: every
//! reason names the next step). Read from the environment of the user's own processes
//! (`TMUX`, `TMUX_PANE`, `STY`, `WINDOW`), the process table, and, for a tmux pane's session
//! and window, the tmux server itself (`Probe::tmux_pane`; which server may be asked is
//! [`may_ask_server`], what may run `probe/tmux.rs`). What cannot be read is left out; the
//! words then say what the environment alone says.

use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;

use super::kinds::Role;
use super::tree::ProcessTable;
use crate::model::client::{Parent, ScreenWindow, TmuxPane};
use crate::probe::tmux::{PaneName, TmuxQuery};
use crate::probe::{Pid, Probe, ProcessInfo};

/// What an environment says of where a process runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FromEnv {
    /// `TMUX` (socket, server pid) and `TMUX_PANE`, when both are set and well formed.
    pub tmux: Option<TmuxEnv>,
    /// `STY` and `WINDOW`.
    pub screen: Option<ScreenWindow>,
}

/// A tmux client's environment: `TMUX=<socket>,<server pid>,<session id>`, `TMUX_PANE=%N`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxEnv {
    /// The server's socket.
    pub socket: PathBuf,
    /// The server's pid.
    pub server: Pid,
    /// The pane's id (`%7`).
    pub pane_id: String,
}

/// Reads `TMUX`, `TMUX_PANE`, `STY` and `WINDOW` from `KEY=value` entries. A malformed value
/// is no value: nothing is guessed.
pub fn from_env(env: &[Vec<u8>]) -> FromEnv {
    let get = |key: &str| {
        env.iter().find_map(|e| {
            let rest = e.strip_prefix(key.as_bytes())?.strip_prefix(b"=")?;
            Some(rest.to_vec())
        })
    };
    let text = |key: &str| get(key).and_then(|v| String::from_utf8(v).ok());
    let tmux = get("TMUX").and_then(|v| {
        // The socket path may hold commas; the pid and session id are the last two fields.
        let mut fields = v.rsplitn(3, |&b| b == b',');
        let _session = fields.next()?;
        let server = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        let socket = PathBuf::from(std::ffi::OsStr::from_bytes(fields.next()?));
        let pane_id = text("TMUX_PANE").filter(|p| is_pane_id(p))?;
        Some(TmuxEnv {
            socket,
            server,
            pane_id,
        })
    });
    let screen = text("STY")
        .filter(|s| !s.is_empty())
        .map(|session| ScreenWindow {
            session,
            window: text("WINDOW").filter(|w| !w.is_empty()),
        });
    FromEnv { tmux, screen }
}

/// `%` and digits: a pane id, nothing a command line could hide in.
fn is_pane_id(p: &str) -> bool {
    p.strip_prefix('%')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// A controlling terminal's device number as its path. Linux: pseudo-terminals are majors
/// 136–143 (`/dev/pts/N`), virtual consoles major 4 (`/dev/ttyN`); macOS: `/dev/ttysNNN`
/// (major 16). 0 is none; anything else is not guessed.
pub fn tty_name(tty_nr: u32) -> Option<String> {
    if tty_nr == 0 {
        return None;
    }
    if cfg!(target_os = "macos") {
        // NOT RUN: Darwin's dev_t is major << 24 | minor.
        let (major, minor) = (tty_nr >> 24, tty_nr & 0xff_ffff);
        return (major == 16).then(|| format!("/dev/ttys{minor:03}"));
    }
    let major = (tty_nr >> 8) & 0xfff;
    let minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00);
    match major {
        136..=143 => Some(format!("/dev/pts/{}", (major - 136) * 256 + minor)),
        4 if minor < 64 => Some(format!("/dev/tty{minor}")),
        _ => None,
    }
}

/// The most of a shell's environment read for `TMUX`, `TMUX_PANE`, `STY` and `WINDOW`: a
/// scan reads it for every live parent, and an environment can be megabytes.
pub const ENV_READ_MAX: usize = 256 * 1024;

/// What a scan's tmux servers answered: each (server, pane) asked once, and a server that
/// gave no answer once is not asked again in that scan, so a scan waits at most one
/// [`ASK_TIMEOUT`](crate::probe::tmux::ASK_TIMEOUT) per server.
#[derive(Debug, Default)]
pub struct Asked {
    panes: HashMap<(PathBuf, Pid, String), Option<PaneName>>,
    silent: HashSet<(PathBuf, Pid)>,
}

impl Asked {
    /// The pane's name as `q`'s server (pid `server`) answers it through `ask`, asked at most
    /// once per scan.
    pub fn ask(
        &mut self,
        server: Pid,
        q: TmuxQuery,
        ask: impl FnOnce(&TmuxQuery) -> Option<PaneName>,
    ) -> Option<PaneName> {
        let at = (q.socket.clone(), server);
        if self.silent.contains(&at) {
            return None;
        }
        let key = (q.socket.clone(), server, q.pane_id.clone());
        let answer = self.panes.entry(key).or_insert_with(|| ask(&q)).clone();
        if answer.is_none() {
            self.silent.insert(at);
        }
        answer
    }
}

/// Where `parent` (the root's live parent, of role `role`) is. Whose environment says it: the
/// parent's, or the root's when the parent is the multiplexer itself (a pane's command). Only
/// the user's own processes' environments are read (`uid`), at most [`ENV_READ_MAX`] of each,
/// and only the user's own tmux server is asked ([`may_ask_server`]), once per pane
/// (`asked`).
pub(crate) fn read(
    probe: &dyn Probe,
    (table, asked): (&ProcessTable, &mut Asked),
    (root, parent, role): (&ProcessInfo, &ProcessInfo, &Role),
    uid: u32,
) -> Parent {
    let said_by = if *role == Role::Multiplexer {
        root
    } else {
        parent
    };
    let env = (said_by.uid == uid)
        .then(|| {
            probe
                .environment_head(said_by.identity.pid, ENV_READ_MAX)
                .ok()
        })
        .flatten()
        .unwrap_or_default();
    let found = from_env(&env);
    let tmux = found
        .tmux
        .map(|t| pane(probe, (table, asked), (&t, said_by), uid));
    // The terminal's owner: the shell's own parent, when the shell has a terminal.
    let tty = tty_name(parent.tty_nr);
    let terminal = tty
        .as_ref()
        .and_then(|_| table.get(parent.ppid))
        .map(|p| p.comm.clone());
    Parent {
        program: parent.comm.clone(),
        pid: parent.identity.pid,
        role: role.describe().to_owned(),
        tty,
        terminal,
        tmux,
        screen: found.screen,
    }
}

/// What the kernel names a tmux server: tmux sets its own name to `tmux: server` on Linux;
/// on macOS the name is the executable's, `tmux`.
const SERVER_COMM: &str = if cfg!(target_os = "macos") {
    "tmux"
} else {
    "tmux: server"
};

/// Whether `server`, the process `shell`'s `TMUX` names, may be asked about `shell`'s pane:
/// the user's own live process, named by the kernel as tmux's server, started no later than
/// `shell`. Why each: another user's server answers as it likes; a `TMUX` left stale names a
/// pid that may now be any program of the user's, which must never be run by a scan; and a
/// server started after the shell cannot have made its pane — its pid is a reused one.
pub fn may_ask_server(server: &ProcessInfo, shell: &ProcessInfo, uid: u32) -> bool {
    server.uid == uid
        && !server.zombie
        && server.comm == SERVER_COMM
        && server.identity.start_time <= shell.identity.start_time
}

/// The pane's id, with its session, window and pane as its server names them when that
/// server may be asked ([`may_ask_server`]) and answers.
fn pane(
    probe: &dyn Probe,
    (table, asked): (&ProcessTable, &mut Asked),
    (t, shell): (&TmuxEnv, &ProcessInfo),
    uid: u32,
) -> TmuxPane {
    let answer = table
        .get(t.server)
        .filter(|s| may_ask_server(s, shell, uid))
        .and_then(|s| probe.details(s.identity.pid)?.exe.ok())
        .and_then(|exe| {
            let q = TmuxQuery {
                exe,
                socket: t.socket.clone(),
                pane_id: t.pane_id.clone(),
            };
            asked.ask(t.server, q, |q| probe.tmux_pane(q))
        });
    TmuxPane {
        session: answer.as_ref().map(|a| a.session.clone()),
        window: answer.as_ref().map(|a| a.window),
        pane: answer.as_ref().map(|a| a.pane),
        pane_id: t.pane_id.clone(),
    }
}

#[cfg(test)]
mod tests;
