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

/// The last `n` lines of what this run wrote to its log, decoded leniently, blank ones left out.
pub fn tail(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    last(&lines, n)
}

/// At most `n` lines of a crash's output that say what went wrong: the first line that reads
/// as an error, then the last ones, stack frames left out. Why: node, Go, Ruby and Rust print
/// the error above their frames and notes, Python below them, so neither the head nor the tail
/// alone holds it.
pub fn error_lines(bytes: &[u8], n: usize) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let kept = without_frames(&text);
    let tail = last(&kept, n);
    let first = kept.iter().position(|l| reads_as_error(l));
    match first {
        Some(i) if n > 1 && i < kept.len().saturating_sub(n) => {
            let mut out = vec![kept[i].to_owned()];
            out.extend(last(&kept, n - 1));
            out
        }
        _ => tail,
    }
}

/// The lines that are not a stack's frames nor blank: node's and Java's `    at …`, Ruby's
/// `\tfrom …`, Go's `\t/path/x.go:12 +0x1a5`, Rust's `   3: symbol`, Python's `  File "…"` and
/// the source and caret lines under it.
fn without_frames(text: &str) -> Vec<&str> {
    let mut kept = Vec::new();
    let mut under_file_frame = false;
    for line in text.lines() {
        let t = line.trim_start();
        let indented = t.len() < line.len();
        let numbered = t
            .split_once(": ")
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        let frame = indented
            && (t.starts_with("at ")
                || t.starts_with("from ")
                || t.starts_with("File \"")
                || t.contains(" +0x")
                || numbered);
        let source = indented && under_file_frame;
        under_file_frame = indented && (t.starts_with("File \"") || under_file_frame && !frame);
        if !frame && !source && !t.is_empty() {
            kept.push(line);
        }
    }
    kept
}

/// A line that names the failure: `Error: …`, `ValueError: …`, `(LoadError)`, `panic: …`,
/// `thread 'main' panicked`, `Traceback …`, `fatal: …`.
fn reads_as_error(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    ["error", "panic", "exception", "traceback", "fatal"]
        .iter()
        .any(|w| l.contains(w))
}

fn last(lines: &[&str], n: usize) -> Vec<String> {
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

/// What a crashed restart's record keeps of its output: the last [`CRASH_LINES`] lines of
/// what this run wrote to its log, at most [`CRASH_BYTES`] bytes (cut at a character, from
/// the front), decoded leniently. Why bounded: it is kept in the snapshot, which every
/// history read loads, and shown on a terminal; the whole log stays in its file.
pub fn crash_tail(bytes: &[u8]) -> String {
    // Output that is all frames is still output: "the log is empty" is said only of none.
    let mut lines = error_lines(bytes, CRASH_LINES);
    if lines.is_empty() {
        lines = tail(bytes, CRASH_LINES);
    }
    let lines = lines.join("\n");
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
    /// frames, and the line that said what went wrong was above them. Then by a review: Go,
    /// Ruby, Rust and node's coded errors print the error first and more than five lines after.
    #[test]
    fn a_crash_s_lines_keep_its_error_and_leave_out_stack_frames() {
        let node = b"failed to load config\nError: boom\n    at Object.<anonymous> (x.js:1:7)\n    at Module._compile (loader:1521:14)\n";
        assert_eq!(
            error_lines(node, 5),
            ["failed to load config", "Error: boom"]
        );
        let python = b"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    raise ValueError('boom')\n    ^^^^^^^^^^^^^^^^^^\nValueError: boom\n";
        assert_eq!(
            error_lines(python, 5),
            ["Traceback (most recent call last):", "ValueError: boom"]
        );
        let module = b"node:internal/modules/cjs/loader:1080\n  throw err;\n  ^\n\nError: Cannot find module 'express'\nRequire stack:\n- /x/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15)\n    at node:internal/main/run_main_module:23:47 {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: [ '/x/index.js' ]\n}\n\nNode.js v20.11.0\n";
        let kept = error_lines(module, 5);
        assert_eq!(kept[0], "Error: Cannot find module 'express'", "{kept:?}");
        assert_eq!(kept.len(), 5);
        let go = b"panic: open config.yaml: no such file or directory\n\ngoroutine 1 [running]:\nmain.load(...)\n\t/src/app/main.go:12 +0x1a5\nmain.setup()\n\t/src/app/main.go:20 +0x25\nmain.main()\n\t/src/app/main.go:30 +0x1d\nexit status 2\n";
        assert_eq!(
            error_lines(go, 5)[0],
            "panic: open config.yaml: no such file or directory"
        );
        let ruby = b"/app/config/boot.rb:4:in `require': cannot load such file -- bootsnap/setup (LoadError)\n\tfrom /app/config/boot.rb:4:in `<top (required)>'\n\tfrom bin/rails:3:in `require_relative'\n\tfrom bin/rails:3:in `<main>'\n";
        assert_eq!(
            error_lines(ruby, 5),
            ["/app/config/boot.rb:4:in `require': cannot load such file -- bootsnap/setup (LoadError)"]
        );
        let rust = b"thread 'main' panicked at src/main.rs:2:5:\nboom\nstack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\n   2: app::main\n   3: core::ops::function::FnOnce::call_once\nnote: Some details are omitted\n";
        let kept = error_lines(rust, 5);
        assert_eq!(
            kept[0], "thread 'main' panicked at src/main.rs:2:5:",
            "{kept:?}"
        );
        assert!(kept.iter().all(|l| !l.starts_with("   ")), "{kept:?}");
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
