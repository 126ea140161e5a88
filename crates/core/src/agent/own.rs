//! What an agent started itself (docs/design.md §7a, the table of §2): a root started after
//! the session began, descended from the MCP client's own process through non-interactive
//! launchers only — never through an interactive shell, a terminal, a multiplexer or an
//! editor, which are the person's. Only for those may "its parent still runs" be set aside.
//!
//! Every answer here is read from one [`ProcessList`]; a row that is missing, unreadable or
//! whose argv was left unread is never taken for a launcher: the answer is then "unread".

use crate::diagnose::kinds::{role, Role};
use crate::probe::{Identity, Pid, ProcessInfo, ProcessList};

/// How many parents a walk climbs at most: real chains are a handful deep, and a table read
/// while processes come and go may hold a loop of parent pids.
const MAX_DEPTH: usize = 64;

/// The MCP client's process, found from the server's own: its nearest ancestor that is not a
/// non-interactive launcher (`sh -c`, `npx`, `env`), which a client may start the server
/// through.
pub fn client_of(list: &ProcessList, server_pid: u32) -> Result<Identity, NoClient> {
    let server = row(list, server_pid).ok_or(NoClient::Unread)?;
    let mut pid = server.ppid;
    for _ in 0..MAX_DEPTH {
        let p = row(list, pid).ok_or(NoClient::Unread)?;
        let r = role(p);
        if climbs_to_client(p, &r) {
            pid = p.ppid;
            continue;
        }
        if is_persons(&r) || is_electron_helper(p) {
            return Err(NoClient::Person(who(p, &r)));
        }
        return Ok(p.identity);
    }
    Err(NoClient::Unread)
}

/// Why the client could not be found, or is not an agent Pier may grant anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoClient {
    /// The server's parent chain could not be read.
    #[error("the process that started `pier mcp` could not be read")]
    Unread,
    /// The server was started by a person's shell, terminal or editor, not by an agent.
    #[error("`pier mcp` was started by {0}, which is a person's, not an agent's")]
    Person(String),
}

/// Whether the resource rooted at `root` is the agent's own: started after `since` (the
/// session's start, in the kernel's start-time units) and descended from `client` through
/// non-interactive launchers only.
pub fn judge(
    list: &ProcessList,
    root: Identity,
    client: Identity,
    since: u64,
) -> Result<(), NotOwn> {
    let root_row = row(list, root.pid)
        .filter(|p| p.identity == root)
        .ok_or(NotOwn::Unread)?;
    if !started_after(root.start_time, since) {
        return Err(NotOwn::Before);
    }
    let between = chain_to(list, root_row, client)?;
    match between.iter().find(|p| !launches_for_agent(p)) {
        Some(p) => Err(NotOwn::ThroughPerson(who(p, &role(p)))),
        None => Ok(()),
    }
}

/// Why a resource is not the agent's own, in words made here once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOwn {
    /// Started before the session did.
    #[error("it was running before this agent's session began")]
    Before,
    /// Its ancestry does not reach the client.
    #[error("it does not descend from this agent's process")]
    NotDescended,
    /// It descends through a person's shell, terminal, multiplexer or editor.
    #[error("it was started through {0}, which is the person's, not the agent's")]
    ThroughPerson(String),
    /// Its ancestry could not be read.
    #[error("its ancestry could not be read")]
    Unread,
}

/// A process's row, when it was read whole. Why: a process listed as unreadable, absent, or
/// whose argv was left unread (a survey's) has no role Pier can trust, and an unknown link
/// of a chain must never pass for a launcher.
fn row(list: &ProcessList, pid: Pid) -> Option<&ProcessInfo> {
    if list.unreadable.iter().any(|u| u.pid == pid) {
        return None;
    }
    list.processes
        .iter()
        .find(|p| p.identity.pid == pid && !p.argv_unread)
}

/// The processes strictly between `root` and `client`, root's parent first. Why the client is
/// matched by pid *and* start time: a pid the client held once may belong to anything now.
/// Why "not descended" wins over what lies on the way: a chain that never reaches the client
/// is not the agent's, whoever started it.
fn chain_to<'a>(
    list: &'a ProcessList,
    root: &'a ProcessInfo,
    client: Identity,
) -> Result<Vec<&'a ProcessInfo>, NotOwn> {
    let mut between = Vec::new();
    let mut pid = root.ppid;
    for _ in 0..MAX_DEPTH {
        if pid == 0 {
            return Err(NotOwn::NotDescended);
        }
        let p = row(list, pid).ok_or(NotOwn::Unread)?;
        if pid == client.pid {
            if p.identity == client {
                return Ok(between);
            }
            return Err(NotOwn::NotDescended);
        }
        between.push(p);
        pid = p.ppid;
    }
    Err(NotOwn::NotDescended)
}

/// Started after the session began. Why strictly after: a process born in the same tick as
/// the session cannot be told from one the person started just before it.
fn started_after(start_time: u64, since: u64) -> bool {
    start_time > since
}

/// A link of the server's chain that the client may sit above: a launcher that only starts
/// the next program (`sh -c`, `env`, `npx`, `nohup`). Why not every launcher Pier knows: a
/// runtime running a script (`bun agent.ts`, `node`, `cargo run`, `make`) may be the client
/// itself, and climbing past it would hand its role to whatever started it.
fn climbs_to_client(p: &ProcessInfo, r: &Role) -> bool {
    const PURE: &[&str] = &[
        "sh", "bash", "dash", "zsh", "ksh", "fish", "env", "npx", "pnpx", "bunx", "uvx", "nohup",
        "timeout", "setsid", "stdbuf", "nice", "ionice",
    ];
    let arg0 = p
        .argv
        .first()
        .map(|a| String::from_utf8_lossy(a).into_owned());
    let name = arg0
        .as_deref()
        .map(|a| a.rsplit('/').next().unwrap_or(a).trim_start_matches('-'))
        .unwrap_or_default();
    // npx runs the package through `npm exec`, which writes that over its argv[0].
    let npm_exec = arg0.as_deref().is_some_and(|a| a.starts_with("npm exec "));
    (matches!(r, Role::Wrapper) && PURE.contains(&name)) || npm_exec
}

/// An Electron app's helper process (`--type=renderer`, `--type=utility`): an editor built on
/// Electron (VS Code and each of its forks) runs its extensions and debug sessions under one.
/// Why by the flag, not a list of names: the forks are many and new ones come every month,
/// and what such an app starts is started by the person using it.
fn is_electron_helper(p: &ProcessInfo) -> bool {
    p.argv.iter().skip(1).any(|a| a.starts_with(b"--type="))
}

/// A process that belongs to a person or to the system, not to an agent: what it starts was
/// started by the person (or adopted), so nothing under it is an agent's own.
fn is_persons(r: &Role) -> bool {
    matches!(
        r,
        Role::InteractiveShell
            | Role::Terminal
            | Role::Multiplexer
            | Role::Editor
            | Role::Init
            | Role::Subreaper
            | Role::ProcessManager
    )
}

/// A link between the client and an agent's root: a launcher, a tool, or another program
/// that does not lead a session on a terminal. Why the terminal check: a program leading a
/// terminal's session is a person's login there, whatever its name.
fn launches_for_agent(p: &ProcessInfo) -> bool {
    if is_electron_helper(p) {
        return false;
    }
    match role(p) {
        Role::Wrapper | Role::Tool(_) => true,
        Role::Other => !leads_terminal_session(p),
        _ => false,
    }
}

/// Leads its session, and that session has a terminal: a person's terminal session.
fn leads_terminal_session(p: &ProcessInfo) -> bool {
    p.session == p.identity.pid && p.tty_nr != 0
}

/// "the interactive shell `bash` (pid 812)": the process in the words of its role.
fn who(p: &ProcessInfo, r: &Role) -> String {
    format!("the {} `{}` (pid {})", r.describe(), p.comm, p.identity.pid)
}

#[cfg(test)]
mod tests;
