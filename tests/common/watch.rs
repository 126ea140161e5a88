//! `pier watch --json` over a sandbox, its lines read on a thread of their own, each stamped
//! with when it arrived (a rescan that arrived after a request answered measured an interval
//! that held the request).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{pier_bin, Sandbox};

/// A running `pier watch --json --every EVERY --settle SETTLE --under <sandbox>`.
pub struct Watch {
    child: Child,
    lines: mpsc::Receiver<(Instant, Value)>,
}

/// The sandbox's own runtime folder (mode 0700), where its schedulers' lock is: tests running
/// side by side never share one.
pub fn runtime(sandbox: &Sandbox) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let run = sandbox.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    run
}

impl Watch {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills it (SIGKILL, by its own child's handle) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn start(sandbox: &Sandbox, every: u64, settle: u64) -> Watch {
        let mut child = Command::new(pier_bin())
            .args(["watch", "--json", "--every", &every.to_string()])
            .args(["--settle", &settle.to_string(), "--under"])
            .arg(sandbox.path())
            .env("PIER_STATE_DIR", sandbox.path().join("state"))
            .env("PIER_CONFIG_DIR", sandbox.path().join("config"))
            .env("XDG_RUNTIME_DIR", runtime(sandbox))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pier watch starts");
        let out = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                let v: Value = serde_json::from_str(&line).expect("each line is JSON");
                if tx.send((Instant::now(), v)).is_err() {
                    return;
                }
            }
        });
        Watch { child, lines }
    }

    /// The next line, or `None` when none came before `deadline` (or the watch ended).
    pub fn next(&self, deadline: Instant) -> Option<(Instant, Value)> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.lines
            .recv_timeout(left.max(Duration::from_millis(1)))
            .ok()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Our own child, by its handle: SIGKILL is fine for a watcher with nothing in flight.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
