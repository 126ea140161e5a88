//! Asking a tmux server which session, window and pane a pane id is (`%7` → `dev:2.1`), so a
//! card can say where to press Ctrl-C: the one program a scan runs. Asked only when every
//! check holds; otherwise the card names the pane by its id alone:
//! - the server (the pid in the shell's `TMUX`) is the user's live process, its kernel name
//!   is tmux's own (`tmux: server`), and it started no later than that shell
//!   (`place::may_ask_server`; a later one holds a reused pid);
//! - what runs is that server's own executable, which the user controls with every folder on
//!   its path (`trust::check_path`), against the user's own socket, not a link ([`may_ask`]);
//! - no shell, an empty environment, stdin closed, its own process group; one deadline,
//!   [`ASK_TIMEOUT`], from start to answer read; then the whole group is killed and the child
//!   reaped. An answer counts only whole (at most [`MAX_ANSWER`] bytes) with exit 0.
//!
//! A scan asks each (socket, pane) once, and a server that gave no answer once is not asked
//! again in that scan (`place::Asked`).

use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid as RawPid, Signal, WaitId, WaitIdOptions};

/// The longest an ask takes, from starting the client to its answer read.
pub const ASK_TIMEOUT: Duration = Duration::from_millis(300);

/// The most of an answer read: a pane's name is one short line.
pub const MAX_ANSWER: usize = 4096;

/// What tmux prints for a pane: `session:window.pane`.
const FORMAT: &str = "#{session_name}:#{window_index}.#{pane_index}";

/// One question to one tmux server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxQuery {
    /// The server's own executable (Linux: `/proc/<server pid>/exe`).
    pub exe: PathBuf,
    /// The server's socket (`TMUX`'s first field).
    pub socket: PathBuf,
    /// The pane's id (`TMUX_PANE`: `%7`).
    pub pane_id: String,
}

/// Where a pane is, as its server names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneName {
    /// The session's name.
    pub session: String,
    /// The window's index.
    pub window: u32,
    /// The pane's index in its window.
    pub pane: u32,
}

/// Parses tmux's answer to [`FORMAT`]: `dev:2.1`. A session name may hold `:`; the indexes
/// are after the last one.
pub fn parse_answer(out: &str) -> Option<PaneName> {
    let line = out.lines().next()?.trim_end();
    let (session, at) = line.rsplit_once(':')?;
    let (window, pane) = at.split_once('.')?;
    Some(PaneName {
        session: session.to_owned(),
        window: window.parse().ok()?,
        pane: pane.parse().ok()?,
    })
}

/// Whether Pier may run `q.exe` against `q.socket` for user `me`: the binary is one the user
/// controls (owned by the user or root, no folder on its path writable by others), and the
/// socket is a socket of the user's, not a link (another user's socket would be another
/// user's server, answering with whatever it likes).
pub fn may_ask(q: &TmuxQuery, me: &crate::trust::Me) -> bool {
    let socket = match std::fs::symlink_metadata(&q.socket) {
        Ok(m) => m,
        Err(_) => return false,
    };
    socket.file_type().is_socket()
        && socket.uid() == me.uid
        && q.pane_id.starts_with('%')
        && crate::trust::check_path(&q.exe, me).is_ok()
}

/// Asks the server (when [`may_ask`]) and parses its answer; `None` on any failure: not
/// asked, no whole answer by the deadline, an answer over [`MAX_ANSWER`], or an exit other
/// than 0.
pub fn ask(q: &TmuxQuery) -> Option<PaneName> {
    if !may_ask(q, crate::trust::Me::current()) {
        return None;
    }
    let deadline = Instant::now() + ASK_TIMEOUT;
    let mut child = Command::new(&q.exe)
        .arg("-S")
        .arg(&q.socket)
        .args(["display-message", "-p", "-t", &q.pane_id, FORMAT])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let out = child.stdout.take().and_then(|o| read_by(o, deadline));
    let exited = exits_by(&child, deadline);
    let status = end_group(&mut child);
    let answered = exited && status.is_some_and(|s| s.success());
    parse_answer(std::str::from_utf8(&out.filter(|_| answered)?).ok()?)
}

/// Reads `out` to its end, by `deadline` and within [`MAX_ANSWER`] bytes; `None` otherwise. A
/// descendant holding the pipe open cannot make it wait longer: each wait is a `poll` bounded
/// by what is left of the deadline.
fn read_by(mut out: ChildStdout, deadline: Instant) -> Option<Vec<u8>> {
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let left = Timespec::try_from(left).ok()?;
        let mut fds = [PollFd::new(&out, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&left)) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return None,
        }
        // Readable or hung up: this read does not block.
        let n = out.read(&mut chunk).ok()?;
        if n == 0 {
            return Some(answer);
        }
        if answer.len() + n > MAX_ANSWER {
            return None;
        }
        answer.extend_from_slice(&chunk[..n]);
    }
}

/// Whether `child` has exited by `deadline`, without reaping it (its pid, which is its
/// group's id, stays its own until [`end_group`] has killed the group).
fn exits_by(child: &Child, deadline: Instant) -> bool {
    let Some(pid) = RawPid::from_raw(child.id() as i32) else {
        return false;
    };
    let how = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), how) {
            Ok(Some(_)) => return true,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            _ => return false,
        }
    }
}

/// Kills the group of the child we started (every descendant that stayed in it), then reaps
/// the child; its exit status. Ours to end: the group is the child's own (`process_group(0)`),
/// named by its pid while the child is not yet reaped, so it cannot be another's group.
fn end_group(child: &mut Child) -> Option<std::process::ExitStatus> {
    if let Some(group) = RawPid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process_group(group, Signal::KILL);
    }
    child.wait().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_session_window_and_pane_and_a_session_may_hold_a_colon() {
        let want = |s: &str, w, p| {
            Some(PaneName {
                session: s.into(),
                window: w,
                pane: p,
            })
        };
        assert_eq!(parse_answer("dev:2.1\n"), want("dev", 2, 1));
        assert_eq!(parse_answer("a:b:0.3"), want("a:b", 0, 3));
        assert_eq!(parse_answer("dev:x.1"), None);
        assert_eq!(parse_answer("no server running"), None);
        assert_eq!(parse_answer(""), None);
    }

    #[test]
    fn only_the_users_own_socket_and_a_binary_the_user_controls_are_asked() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let me = *crate::trust::Me::current();
        let q = |exe: &str, socket: &std::path::Path| TmuxQuery {
            exe: exe.into(),
            socket: socket.to_path_buf(),
            pane_id: "%1".into(),
        };
        assert!(may_ask(&q("/bin/sh", &socket), &me), "a system binary");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        assert!(!may_ask(&q("/bin/sh", &link), &me), "a link to a socket");
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        assert!(!may_ask(&q("/bin/sh", &plain), &me), "not a socket");
        let other = crate::trust::Me {
            uid: me.uid + 1,
            ..me
        };
        assert!(
            !may_ask(&q("/bin/sh", &socket), &other),
            "another user's socket"
        );
        // A binary in a folder others can write.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::copy("/bin/sh", open.join("tmux")).unwrap();
        let exe = open.join("tmux");
        assert!(
            !may_ask(&q(exe.to_str().unwrap(), &socket), &me),
            "others can write"
        );
    }

    /// A planted "tmux" (a script in a folder of the test's, answering `body`) and its socket.
    #[cfg(target_os = "linux")]
    fn planted(dir: &std::path::Path, body: &str) -> TmuxQuery {
        use std::os::unix::fs::PermissionsExt as _;
        let exe = dir.join("tmux");
        std::fs::write(&exe, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        TmuxQuery {
            exe,
            socket: dir.join("s"),
            pane_id: "%1".into(),
        }
    }

    /// Whether `pid` is gone (or a zombie) within a few seconds.
    #[cfg(target_os = "linux")]
    fn ends_soon(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let stat = std::fs::read(format!("/proc/{pid}/stat")).unwrap_or_default();
            let stat = String::from_utf8_lossy(&stat);
            if stat.is_empty()
                || stat
                    .rsplit_once(") ")
                    .is_some_and(|(_, r)| r.starts_with('Z'))
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_answer_is_read_whole_by_the_deadline_and_a_descendant_holding_the_pipe_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let q = planted(dir.path(), "echo dev:2.1");
        let want = PaneName {
            session: "dev".into(),
            window: 2,
            pane: 1,
        };
        assert_eq!(ask(&q), Some(want));

        // Answers, then leaves a child holding stdout open for 30 s.
        let pid_file = dir.path().join("held");
        let q = planted(
            dir.path(),
            &format!(
                "sleep 30 & echo $! > '{}'; echo dev:2.1; exit 0",
                pid_file.display()
            ),
        );
        let started = Instant::now();
        assert_eq!(ask(&q), None, "no whole answer by the deadline");
        let took = started.elapsed();
        assert!(took < ASK_TIMEOUT + Duration::from_millis(700), "{took:?}");
        let held: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(ends_soon(held), "the child's group is killed");

        let q = planted(dir.path(), "yes dev:2.1 | head -c 100000");
        assert_eq!(ask(&q), None, "an answer over MAX_ANSWER");
        let q = planted(dir.path(), "echo dev:2.1; exit 1");
        assert_eq!(ask(&q), None, "a failed exit");
    }
}
