//! Throwaway accounts for the tests that play another user of the machine (root only): each
//! is created with `useradd`, used through `setpriv`, and removed — its processes ended by uid
//! first — when dropped.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `useradd` and `userdel` lock `/etc/passwd`: one at a time within a test binary.
static ACCOUNTS: Mutex<()> = Mutex::new(());

/// A user that exists for the life of the value.
pub struct User {
    /// Its login name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary group.
    pub gid: u32,
}

impl User {
    /// Creates a user named `pier-<role>-<pid>-<n>`, with a private group and no home.
    pub fn create(role: &str) -> User {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("pt{role}{}x{n}", std::process::id());
        let _one = ACCOUNTS.lock().unwrap_or_else(|p| p.into_inner());
        let out = Command::new("useradd")
            .args(["-M", "--user-group", "--shell", "/usr/sbin/nologin", &name])
            .output()
            .expect("useradd runs");
        assert!(
            out.status.success(),
            "useradd {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = |flag: &str| {
            let out = Command::new("id")
                .args([flag, name.as_str()])
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        };
        User {
            uid: id("-u"),
            gid: id("-g"),
            name,
        }
    }

    /// `program` run as this user (real and effective ids, its group only).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("setpriv");
        c.arg(format!("--reuid={}", self.uid))
            .arg(format!("--regid={}", self.gid))
            .arg("--clear-groups")
            .arg("--")
            .arg(program);
        c
    }

    /// Hands `path` to this user.
    pub fn own(&self, path: &Path) {
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)).unwrap();
    }
}

impl Drop for User {
    fn drop(&mut self) {
        // Its processes, by its uid: every one of them was started by this test.
        let _ = Command::new("pkill")
            .args(["-KILL", "-U", &self.uid.to_string()])
            .status();
        let _one = ACCOUNTS.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..50 {
            let gone = Command::new("userdel")
                .arg(&self.name)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if gone {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = Command::new("userdel").args(["-f", &self.name]).status();
    }
}

/// Runs `cmd` to its end, or kills it (it is this test's own child) at `limit` and fails the
/// test: what it tests could hang (a FIFO).
pub fn finishes_within(mut cmd: Command, limit: Duration, what: &str) -> Output {
    let child: Child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let pid = child.id();
    let end = Instant::now() + limit;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(out) => return out.expect("waited"),
            Err(_) if Instant::now() < end => {}
            Err(_) => {
                // Not reaped yet (the waiting thread holds it), so the pid is still this child's.
                let _ = rustix::process::kill_process(
                    rustix::process::Pid::from_raw(pid as i32).unwrap(),
                    rustix::process::Signal::KILL,
                );
                panic!("{what} hung: still running after {limit:?}, killed");
            }
        }
    }
}
