//! The self-test's own processes: a private folder for them to work in, the test process
//! ([`super::child`]) started with the fixed environment, and a guard that reaps each child
//! whatever happens, so the doctor never leaves a zombie or a folder behind.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::fault::Fault;
use super::{child, dump, Options, CHILD_COMMAND, CHILD_ENV, CHILD_EXIT_FLAG};
use crate::probe::{Identity, Pid};

/// A fresh private folder for the children to work in, removed at the end; canonical, as the
/// kernel reports a cwd (macOS's `/var` is `/private/var`).
pub(super) struct TestFolder(pub(super) PathBuf);

impl TestFolder {
    pub(super) fn new() -> Result<Self, Fault> {
        use std::os::unix::fs::DirBuilderExt as _;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let made = std::env::temp_dir().join(format!("pier-doctor-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&made)
            .map_err(|source| Fault::NoFolder {
                path: made.clone(),
                source,
            })?;
        // Owned from here on: a failure below still removes it.
        let mut folder = Self(made);
        folder.0 = folder
            .0
            .canonicalize()
            .map_err(|source| Fault::FolderUnresolved {
                path: folder.0.clone(),
                source,
            })?;
        Ok(folder)
    }
}

impl Drop for TestFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A child of the doctor's, reaped when dropped: its stdin is closed first (which ends the
/// test process, `child::main`), then it is waited for, 5 s at most, then killed and waited
/// for. A child is never reaped before this, so its pid cannot be reused while it is held.
pub(super) struct Reaped(pub(super) Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        self.0.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if !matches!(self.0.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The test process, as started.
pub(super) struct TestChild {
    /// Its stdin stays in the child: the guard closes it first, which ends the test process.
    pub(super) child: Reaped,
    pub(super) argv: Vec<OsString>,
    pub(super) cwd: PathBuf,
    pub(super) port: u16,
    pub(super) client_port: u16,
    /// Its identity and executable as the probe read them, once read: what a stop's signal
    /// is checked against.
    pub(super) read: Option<(Identity, PathBuf)>,
}

impl TestChild {
    pub(super) fn pid(&self) -> Pid {
        self.child.0.id()
    }

    /// Sends one line to the test process (`spin`, `rest`).
    pub(super) fn say(&mut self, line: &str) -> Result<(), Fault> {
        let stdin = self.child.0.stdin.as_mut().ok_or(Fault::StdinClosed)?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(Fault::StdinGone)
    }

    pub(super) fn facts(&self, exe: &std::path::Path) -> dump::Facts {
        dump::Facts {
            pid: self.pid(),
            argv: self
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env: fixed_env(),
            cwd: self.cwd.display().to_string(),
            exe: exe.display().to_string(),
            port: self.port,
            client_port: self.client_port,
        }
    }
}

/// [`CHILD_ENV`] as `KEY=value` strings, in its order.
pub(super) fn fixed_env() -> Vec<String> {
    CHILD_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// `program args…` with the fixed environment, in `folder`, stdin and stdout piped.
pub(super) fn command(program: &std::path::Path, args: &[&str], folder: &TestFolder) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(CHILD_ENV.iter().copied())
        .current_dir(&folder.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// The zombie check's child: the test process that ends at once.
pub(super) fn spawn_ending(opts: &Options, folder: &TestFolder) -> std::io::Result<Reaped> {
    command(&opts.pier, &[CHILD_COMMAND, CHILD_EXIT_FLAG], folder)
        .spawn()
        .map(Reaped)
}

/// Starts the test process and waits (10 s at most) for its `listening` line.
pub(super) fn start(opts: &Options, folder: &TestFolder) -> Result<TestChild, Fault> {
    let mut child = command(&opts.pier, &[CHILD_COMMAND], folder)
        .spawn()
        .map(Reaped)
        .map_err(|source| Fault::NotStarted {
            program: opts.pier.clone(),
            source,
        })?;
    let stdout = child.0.stdout.take().ok_or(Fault::NoStdout)?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    let ports: Vec<u16> = line
        .strip_prefix(child::READY)
        .map(|r| {
            r.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let [port, client_port] = ports[..] else {
        return Err(Fault::NotListening {
            pid: child.0.id(),
            line,
        });
    };
    Ok(TestChild {
        child,
        argv: vec![opts.pier.clone().into_os_string(), CHILD_COMMAND.into()],
        cwd: folder.0.clone(),
        port,
        client_port,
        read: None,
    })
}
