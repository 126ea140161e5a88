//! Another user on the machine, for the tests that play them (root only): throwaway accounts
//! made with `useradd` and removed when dropped, commands run as one of them, and a run bounded
//! in time for what could hang.

use std::os::unix::fs::{chown, lchown, PermissionsExt};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{kill_by_identity, start_time_of, Started, DEADLINE};

/// `useradd` and `userdel` lock `/etc/passwd`: one at a time in this process, and retried
/// while another process holds the lock.
static ACCOUNTS: Mutex<()> = Mutex::new(());

/// A throwaway account and its private group, gone (with its processes) when dropped.
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// Runs `cmd` on the accounts files until it succeeds, or says why at the deadline.
fn on_accounts(what: &str, mut cmd: impl FnMut() -> Command) -> Result<(), String> {
    let _one = ACCOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let end = Instant::now() + DEADLINE;
    loop {
        let out = cmd().output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        if Instant::now() > end {
            return Err(format!("{what}: {}", String::from_utf8_lossy(&out.stderr)));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn id(flag: &str, name: &str) -> u32 {
    let out = Command::new("id").args([flag, name]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

impl Account {
    /// A new account named for `role`, this test process and a counter: no home, its own
    /// group.
    pub fn new(role: &str) -> Account {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "pier{role}{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        on_accounts(&format!("useradd {name}"), || {
            let mut c = Command::new("useradd");
            c.args(["-M", "--user-group", "--shell", "/bin/false", &name]);
            c
        })
        .unwrap();
        let (uid, gid) = (id("-u", &name), id("-g", &name));
        Account { name, uid, gid }
    }

    /// `program args…` as this account (real and effective ids, its groups), with a clean
    /// `HOME`, so nothing of root's is read on its behalf.
    pub fn run(&self, program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", &self.uid.to_string()])
            .args(["--regid", &self.gid.to_string()])
            .args(["--init-groups", "--"])
            .arg(program)
            .env("HOME", home)
            .env_remove("XDG_RUNTIME_DIR");
        c
    }

    /// Gives `path` and everything under it to this account (links themselves, not their
    /// targets).
    pub fn own(&self, path: &Path) {
        lchown(path, Some(self.uid), Some(self.gid)).unwrap();
        if path.is_dir() && !path.is_symlink() {
            for e in std::fs::read_dir(path).unwrap() {
                self.own(&e.unwrap().path());
            }
        }
    }

    /// A new folder of this account's, with `mode`.
    pub fn folder(&self, path: &Path, mode: u32) {
        std::fs::create_dir_all(path).unwrap();
        chown(path, Some(self.uid), Some(self.gid)).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// This account's processes, by identity.
    fn processes(&self) -> Vec<Started> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("Uid:"))
                        .is_some_and(|ids| {
                            ids.split_whitespace().any(|u| u == self.uid.to_string())
                        })
                })
            })
            .filter_map(|pid| {
                Some(Started {
                    pid,
                    start_time: start_time_of(pid)?,
                })
            })
            .collect()
    }
}

impl Drop for Account {
    /// Ends every process of the account (only the test's: the account is the test's), then
    /// removes it.
    fn drop(&mut self) {
        let end = Instant::now() + DEADLINE;
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() > end {
                break;
            }
            left.into_iter().for_each(kill_by_identity);
            std::thread::sleep(Duration::from_millis(20));
        }
        let name = self.name.clone();
        let removed = on_accounts(&format!("userdel {name}"), || {
            let mut c = Command::new("userdel");
            c.arg(&name);
            c
        });
        if let Err(e) = removed {
            eprintln!("the test account {name} was left behind: {e}");
        }
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
