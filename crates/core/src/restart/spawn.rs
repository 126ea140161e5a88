//! Starting the recorded root without a shell, and waiting (bounded) for its ports.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::error::NotLaunched;
use super::rules;
use crate::diagnose::connections;
use crate::diagnose::tree::ProcessTable;
use crate::model::card::Port;
use crate::model::snapshot::SnapshotMember;
use crate::probe::{Pid, Probe, TcpState};

/// Execs `program` with the member's recorded argv (argv[0] kept as recorded), recorded
/// environment only, in `cwd`, in a new session, stdin closed, stdout and stderr appended to
/// `log` (the store opened it, 0600, in its checked `logs` folder).
pub fn start(
    program: &Path,
    root: &SnapshotMember,
    cwd: &Path,
    log: File,
) -> Result<Child, NotLaunched> {
    let err = log
        .try_clone()
        .map_err(|e| NotLaunched::Log(e.to_string()))?;
    let out = log;
    let env: Vec<Vec<u8>> = root
        .env
        .as_ref()
        .map(|e| e.iter().map(|b| b.0.clone()).collect())
        .unwrap_or_default();
    let mut cmd = Command::new(program);
    cmd.arg0(OsStr::from_bytes(&root.argv[0].0))
        .args(root.argv[1..].iter().map(|a| OsStr::from_bytes(&a.0)))
        .env_clear()
        .envs(rules::env_pairs(&env))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent. It is the only
    // call in the child between fork and exec (not with process_group(0): that is EPERM).
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    cmd.spawn().map_err(|e| NotLaunched::Spawn {
        program: program.to_path_buf(),
        error: e.to_string(),
    })
}

/// How the wait for the ports ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitEnd {
    Ready,
    /// The wait ended with these ports (`127.0.0.1:8888`) not listening from the new tree.
    TimedOut(Vec<String>),
    /// The process exited (and was reaped) before its ports listened: its exit status, its
    /// signal.
    Exited(Option<i32>, Option<i32>),
}

/// Polls until every port of `ports` listens from the new tree, bounded by `wait`. The caller
/// passes the server's recorded ports only: a helper's are chosen afresh at each start.
pub fn wait_for_ports(
    probe: &dyn Probe,
    child: &mut Child,
    ports: &[&Port],
    wait: Duration,
) -> WaitEnd {
    let end = Instant::now() + wait;
    let pid = child.id();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            use std::os::unix::process::ExitStatusExt as _;
            return WaitEnd::Exited(status.code(), status.signal());
        }
        let missing = not_listening(probe, pid, ports);
        if missing.is_empty() {
            return WaitEnd::Ready;
        }
        if Instant::now() >= end {
            return WaitEnd::TimedOut(missing.iter().map(|p| p.endpoint()).collect());
        }
        // A bounded poll of the socket table: the new server gives no other sign of readiness.
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
}

/// The ports of `ports` that no process of the tree of `root` listens on; all of them when the
/// tables cannot be read.
pub(super) fn not_listening<'a>(probe: &dyn Probe, root: Pid, ports: &[&'a Port]) -> Vec<&'a Port> {
    let Ok(list) = probe.processes() else {
        return ports.to_vec();
    };
    let members = ProcessTable::new(list.processes).members(root);
    let Ok(table) = probe.sockets(&members) else {
        return ports.to_vec();
    };
    ports
        .iter()
        .copied()
        .filter(|p| {
            let Ok(want) = p.address.parse::<std::net::IpAddr>() else {
                return true;
            };
            let want = std::net::SocketAddr::new(want, p.port);
            !table.sockets.iter().any(|s| {
                s.state == TcpState::Listen
                    && s.owners.iter().any(|o| members.contains(o))
                    && (s.local == want || connections::serves(s.local, want))
            })
        })
        .collect()
}

/// The last `n` lines of what this run wrote to its log, decoded leniently.
pub fn tail(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

/// The last `n` lines of a crash's output that say what went wrong: a stack's frames (node's
/// `    at …`, Python's `  File …` and its source line) bury the error line — node prints it
/// above them, Python below — so a line that starts with a stack frame's words, and the
/// indented line after a `File "…"` frame, are left out (blank lines too). Only for a crash:
/// a server that did not get ready may say where it listens in an indented line.
pub fn error_lines(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut kept: Vec<&str> = Vec::new();
    let mut after_file_frame = false;
    for line in text.lines() {
        let t = line.trim_start();
        let indented = t.len() < line.len();
        let frame = indented && (t.starts_with("at ") || t.starts_with("File \""));
        let source = indented && after_file_frame;
        after_file_frame = indented && t.starts_with("File \"");
        if !frame && !source && !t.is_empty() {
            kept.push(line);
        }
    }
    kept[kept.len().saturating_sub(n)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

/// What a crashed restart's record keeps of its output: the last [`CRASH_LINES`] lines of
/// what this run wrote to its log, at most [`CRASH_BYTES`] bytes (cut at a character, from
/// the front), decoded leniently. Why bounded: it is kept in the snapshot, which every
/// history read loads, and shown on a terminal; the whole log stays in its file.
pub fn crash_tail(bytes: &[u8]) -> String {
    let lines = error_lines(bytes, CRASH_LINES).join("\n");
    let mut cut = lines.len().saturating_sub(CRASH_BYTES);
    while !lines.is_char_boundary(cut) {
        cut += 1;
    }
    lines[cut..].to_owned()
}

/// How many of a crash's last lines its record keeps.
pub const CRASH_LINES: usize = 5;
/// How many bytes of them, at most.
pub const CRASH_BYTES: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_keeps_its_last_lines_bounded_in_bytes() {
        let log = b"one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
        assert_eq!(crash_tail(log), "three\nfour\nfive\nsix\nseven");
        assert_eq!(crash_tail(b""), "");
        let long = "\u{e9}".repeat(CRASH_BYTES);
        let kept = crash_tail(long.as_bytes());
        assert!(kept.len() <= CRASH_BYTES, "{}", kept.len());
        assert!(kept.chars().all(|c| c == '\u{e9}'), "cut at a character");
    }

    /// Found by trying a real Vite whose config throws: the tail was ten of node's stack
    /// frames, and the line that said what went wrong was above them.
    #[test]
    fn a_crash_s_lines_leave_out_the_stack_frames_that_bury_its_error() {
        let node = b"failed to load config\nError: boom\n    at Object.<anonymous> (x.js:1:7)\n    at Module._compile (loader:1521:14)\n";
        assert_eq!(
            error_lines(node, 5),
            ["failed to load config", "Error: boom"]
        );
        let python = b"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    raise ValueError('boom')\nValueError: boom\n";
        assert_eq!(
            error_lines(python, 5),
            ["Traceback (most recent call last):", "ValueError: boom"]
        );
        // What is not a frame stays, indented or not: Vite says where it listens indented.
        let vite = b"Port 5173 is in use, trying another one...\n\n  VITE v5  ready\n  -> Local: http://localhost:5174/\n";
        assert_eq!(
            error_lines(vite, 5),
            [
                "Port 5173 is in use, trying another one...",
                "  VITE v5  ready",
                "  -> Local: http://localhost:5174/"
            ]
        );
        assert_eq!(
            tail(vite, 2),
            ["  VITE v5  ready", "  -> Local: http://localhost:5174/"]
        );
    }
}
