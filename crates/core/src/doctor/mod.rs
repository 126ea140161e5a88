//! `pier doctor`: a self-test on the user's machine. It starts its own test process (a child
//! with a fixed, secret-free environment in a fresh folder, [`child`]), which listens on a free
//! loopback port and connects to itself, and checks that the probe finds what a scan needs —
//! the child's row, argv, cwd, executable, start time, environment, its listener and its
//! connection, its activity — and that the signaller a stop uses pins it, refuses a stale
//! identity, signals it, and that the exit waiter sees it end. Each check says whether a stop
//! needs it; `ready` is false when one that is needed did not pass (design §7.7).
//!
//! It signals nothing but its own children, identified as it started them, and writes nothing
//! but one lock file in the state folder (and the `--dump` folder when asked).

pub mod child;
mod dump;
mod tally;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::model::doctor::{DoctorReport, DOCTOR_SCHEMA};
use crate::probe::{self, IdentityRead, Pid, Probe, ProcessInfo, TcpState};
use crate::signal::{self, wait, Expected, Sig, SignalOutcome};
use crate::store::Store;
use tally::Tally;

/// The child's whole environment: fixed, so `--dump` holds nothing of the user's, and known,
/// so the probe's read of it can be checked.
pub const CHILD_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/bin:/bin"),
    ("LANG", "C"),
    ("PIER_DOCTOR", "child"),
];

/// The hidden subcommand that runs [`child::main`], and its flag for the zombie's child.
pub const CHILD_COMMAND: &str = "doctor-child";
/// See [`CHILD_COMMAND`].
pub const CHILD_EXIT_FLAG: &str = "--exit";

/// How `pier doctor` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `pier` executable, which runs the child (`pier doctor-child`).
    pub pier: PathBuf,
    /// Where to write the raw OS buffers of the child (`--dump DIR`).
    pub dump: Option<PathBuf>,
    /// How long the activity sample waits.
    pub sample: Duration,
}

/// Runs every check and returns the report; never panics on what it finds.
pub fn run(opts: &Options) -> DoctorReport {
    let probe = probe::system_probe();
    let mut t = Tally::default();
    state_folder(&mut t);
    let folder = match TestFolder::new() {
        Ok(f) => Some(f),
        Err(e) => {
            t.fail("child", e);
            None
        }
    };
    let mut dumped = None;
    if let Some(folder) = &folder {
        if let Some(mut c) = start(&mut t, opts, folder) {
            look(&mut t, probe.as_ref(), &mut c, opts);
            if let Some(dir) = &opts.dump {
                dumped = Some(dump::write(dir, &c.facts()));
            }
            zombie(&mut t, probe.as_ref(), opts, folder);
            stop(&mut t, probe.as_ref(), &mut c);
        }
    }
    t.skip_rest();
    let signalling = signal::system_path();
    DoctorReport {
        schema: DOCTOR_SCHEMA,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        ready: t.ready(),
        signalling,
        checks: t.checks,
        dump: dumped.map(|d| match d {
            Ok(p) => p.display().to_string(),
            Err(e) => format!("not written: {e}"),
        }),
    }
}

/// The state folder opens as Pier opens it (real, the user's, mode 0700) and takes a lock.
fn state_folder(t: &mut Tally) {
    let checked = Store::open().map_err(|e| e.to_string()).and_then(|store| {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = store.folder().to_path_buf();
        let mode = std::fs::metadata(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{} has mode {:o}: others could read the snapshots",
                dir.display(),
                mode & 0o777
            ));
        }
        store
            .try_lock("doctor")
            .map_err(|e| e.to_string())
            .map(|_| format!("{} (mode {:o})", dir.display(), mode & 0o777))
    });
    t.record("state_folder", checked);
}

/// A fresh private folder for the child to work in, removed at the end; canonical, as the
/// kernel reports a cwd (macOS's `/var` is `/private/var`).
struct TestFolder(PathBuf);

impl TestFolder {
    fn new() -> Result<Self, String> {
        use std::os::unix::fs::DirBuilderExt as _;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("pier-doctor-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .and_then(|()| dir.canonicalize())
            .map(Self)
            .map_err(|e| {
                format!(
                    "a folder for the test process could not be made in {}: {e}",
                    dir.display()
                )
            })
    }
}

impl Drop for TestFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The running child, as started.
struct TestChild {
    child: Child,
    stdin: Option<ChildStdin>,
    argv: Vec<OsString>,
    exe: PathBuf,
    cwd: PathBuf,
    port: u16,
    client_port: u16,
    /// Its identity as the probe read it, once read.
    identity: Option<probe::Identity>,
}

impl TestChild {
    fn pid(&self) -> Pid {
        self.child.id()
    }

    fn say(&mut self, line: &str) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or("the test process's stdin is closed")?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("the test process stopped listening to its stdin: {e}"))
    }

    fn facts(&self) -> dump::Facts {
        dump::Facts {
            pid: self.pid(),
            argv: self
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env: CHILD_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            cwd: self.cwd.display().to_string(),
            exe: self.exe.display().to_string(),
            port: self.port,
            client_port: self.client_port,
        }
    }
}

impl Drop for TestChild {
    fn drop(&mut self) {
        // Closing stdin ends it (`child::main`); reap it so no zombie stays.
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn child_command(opts: &Options, folder: &TestFolder, exit_at_once: bool) -> Command {
    let mut cmd = Command::new(&opts.pier);
    cmd.arg(CHILD_COMMAND);
    if exit_at_once {
        cmd.arg(CHILD_EXIT_FLAG);
    }
    cmd.env_clear()
        .envs(CHILD_ENV.iter().copied())
        .current_dir(&folder.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// Starts the child and waits (10 s at most) for its `listening` line.
fn start(t: &mut Tally, opts: &Options, folder: &TestFolder) -> Option<TestChild> {
    let mut child = match child_command(opts, folder, false).spawn() {
        Ok(c) => c,
        Err(e) => {
            t.fail(
                "child",
                format!("{} could not be started: {e}", opts.pier.display()),
            );
            return None;
        }
    };
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("stdout is piped");
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
    let exe = opts
        .pier
        .canonicalize()
        .unwrap_or_else(|_| opts.pier.clone());
    let mut c = TestChild {
        child,
        stdin,
        argv: vec![opts.pier.clone().into_os_string(), CHILD_COMMAND.into()],
        exe,
        cwd: folder.0.clone(),
        port: 0,
        client_port: 0,
        identity: None,
    };
    match ports[..] {
        [port, client_port] => {
            c.port = port;
            c.client_port = client_port;
            t.record(
                "child",
                Ok(format!("pid {}, listening on 127.0.0.1:{port}", c.pid())),
            );
            Some(c)
        }
        _ => {
            let said = format!("it said {line:?}");
            t.fail(
                "child",
                format!(
                    "pid {} did not say it was listening within 10 s ({said})",
                    c.pid()
                ),
            );
            None
        }
    }
}

/// What the probe reads of the child, check by check.
fn look(t: &mut Tally, probe: &dyn Probe, c: &mut TestChild, opts: &Options) {
    let pid = c.pid();
    let survey = probe.survey_own(&|_| true);
    let row: Result<ProcessInfo, String> = match &survey {
        Err(e) => Err(format!("the process table could not be read: {e}")),
        Ok(s) => s
            .processes
            .processes
            .iter()
            .find(|p| p.identity.pid == pid)
            .cloned()
            .ok_or_else(|| format!("pid {pid} is not in the user's process table")),
    };
    let me = probe.own_pid();
    t.record(
        "process_table",
        row.clone().and_then(|p| {
            if p.ppid != me || p.uid != probe.current_uid() {
                Err(format!(
                    "pid {pid} reads as the child of {} and user {}, not of {me} and user {}",
                    p.ppid,
                    p.uid,
                    probe.current_uid()
                ))
            } else {
                Ok(format!("pid {pid}, parent {me}, user {}", p.uid))
            }
        }),
    );
    let Ok(row) = row else { return };
    let want: Vec<Vec<u8>> = c
        .argv
        .iter()
        .map(|a| a.as_encoded_bytes().to_vec())
        .collect();
    t.record(
        "argv",
        if row.argv == want {
            Ok(shown(&row.argv))
        } else {
            Err(format!(
                "read {}, started as {}",
                shown(&row.argv),
                shown(&want)
            ))
        },
    );
    t.record(
        "start_time",
        start_time(probe, &row).inspect(|_| c.identity = Some(row.identity)),
    );
    let details = probe.details(pid);
    let cwd = details.as_ref().map(|d| d.cwd.clone());
    t.record(
        "cwd",
        match cwd {
            Some(Ok(cwd)) if cwd == c.cwd => Ok(cwd.display().to_string()),
            Some(Ok(cwd)) => Err(format!(
                "read {}, started in {}",
                cwd.display(),
                c.cwd.display()
            )),
            Some(Err(e)) => Err(e),
            None => Err(format!("pid {pid} reads as gone")),
        },
    );
    let exe = details.map(|d| d.exe);
    t.record(
        "executable",
        match exe {
            Some(Ok(exe)) if exe == c.exe => Ok(exe.display().to_string()),
            Some(Ok(exe)) => Err(format!(
                "read {}, started {}",
                exe.display(),
                c.exe.display()
            )),
            Some(Err(e)) => Err(e),
            None => Err(format!("pid {pid} reads as gone")),
        },
    );
    t.record("environment", environment(probe, pid));
    let sockets = survey.ok().map(|s| s.sockets.map_err(|e| e.to_string()));
    let sockets = match sockets {
        Some(Ok(table)) => Ok(table.sockets),
        Some(Err(e)) => Err(format!("the socket tables could not be read: {e}")),
        None => Err("the process table could not be read".to_owned()),
    };
    let held = |state: TcpState, local: u16, remote: Option<u16>| -> Result<String, String> {
        let all = sockets.as_ref().map_err(Clone::clone)?;
        all.iter()
            .find(|s| {
                s.state == state
                    && s.local.port() == local
                    && s.local.ip().is_loopback()
                    && remote.is_none_or(|r| s.remote.port() == r)
                    && s.owners.contains(&pid)
            })
            .map(|s| match state {
                TcpState::Listen => format!("{}, held by pid {pid}", s.local),
                _ => format!("{} → {}, held by pid {pid}", s.local, s.remote),
            })
            .ok_or_else(|| format!("no such socket of pid {pid} among {} read", all.len()))
    };
    t.record("listener", held(TcpState::Listen, c.port, None));
    t.record(
        "connection",
        held(TcpState::Established, c.port, Some(c.client_port)).and_then(|a| {
            held(TcpState::Established, c.client_port, Some(c.port)).map(|b| format!("{a}; {b}"))
        }),
    );
    t.record("activity", activity(probe, c, opts.sample));
    t.record(
        "memory",
        probe.memory(pid).and_then(|m| {
            if m.bytes > 0 {
                Ok(format!(
                    "{} ({})",
                    crate::words::byte_size(m.bytes),
                    m.kind.as_str()
                ))
            } else {
                Err("read as 0 bytes".to_owned())
            }
        }),
    );
}

fn shown(argv: &[Vec<u8>]) -> String {
    crate::words::command_for_a_person(argv.iter().map(Vec::as_slice))
}

fn start_time(probe: &dyn Probe, row: &ProcessInfo) -> Result<String, String> {
    match probe.identity(row.identity.pid) {
        IdentityRead::Alive { identity, .. } if identity == row.identity => Ok(format!(
            "{} (started {} s ago)",
            identity.start_time,
            row.age_seconds.map_or("?".to_owned(), |a| a.to_string())
        )),
        IdentityRead::Alive { identity, .. } => Err(format!(
            "two reads disagree: {} then {}",
            row.identity.start_time, identity.start_time
        )),
        IdentityRead::Gone => Err(format!("pid {} reads as gone", row.identity.pid)),
        IdentityRead::Unknown(e) => Err(e),
    }
}

fn environment(probe: &dyn Probe, pid: Pid) -> Result<String, String> {
    let mut read: Vec<String> = probe
        .environment(pid)?
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let mut want: Vec<String> = CHILD_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect();
    read.sort();
    want.sort();
    if read == want {
        Ok(format!("{} variables, as set", read.len()))
    } else {
        Err(format!("read {read:?}, started with {want:?}"))
    }
}

/// The child spins while the probe samples it.
fn activity(probe: &dyn Probe, c: &mut TestChild, window: Duration) -> Result<String, String> {
    c.say("spin")?;
    let sample = probe.activity(&[c.pid()], window);
    c.say("rest")?;
    let delta = sample
        .per_pid
        .iter()
        .find(|(p, _)| *p == c.pid())
        .map(|(_, d)| d.clone())
        .ok_or_else(|| format!("pid {} is missing from the sample", c.pid()))??;
    if delta.cpu_ns == 0 {
        return Err(format!(
            "a busy process read as idle over {} ms",
            window.as_millis()
        ));
    }
    Ok(format!(
        "{} ms of CPU in {} ms",
        delta.cpu_ns / 1_000_000,
        sample.window.as_millis()
    ))
}

/// A child that has ended and is not yet reaped reads as a zombie (macOS needs the right
/// argument to show one at all).
fn zombie(t: &mut Tally, probe: &dyn Probe, opts: &Options, folder: &TestFolder) {
    let mut child = match child_command(opts, folder, true).spawn() {
        Ok(c) => c,
        Err(e) => {
            t.fail("zombie", format!("could not be started: {e}"));
            return;
        }
    };
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(5);
    let seen = loop {
        let rows = probe.rows(&[pid]);
        match rows.processes.iter().find(|p| p.identity.pid == pid) {
            Some(p) if p.zombie => break Ok(format!("pid {pid} ({})", p.comm)),
            Some(_) if Instant::now() < deadline => {}
            Some(_) => break Err(format!("pid {pid} never read as a zombie in 5 s")),
            None => {
                break Err(format!(
                    "pid {pid} is missing from the table before it was reaped"
                ))
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = child.wait();
    t.record("zombie", seen);
}

/// Signals the child as a stop does, after checking that a stale identity is refused.
fn stop(t: &mut Tally, probe: &dyn Probe, c: &mut TestChild) {
    let Some(identity) = c.identity else { return };
    let signaller = signal::system_signaller();
    let waiter = wait::system_waiter();
    let stale = Expected {
        identity: probe::Identity {
            start_time: identity.start_time.wrapping_add(1),
            ..identity
        },
        exe: c.exe.clone(),
    };
    let refused = match signaller.signal(&stale, Sig::Term) {
        SignalOutcome::Mismatch(why) => match probe.identity(identity.pid) {
            IdentityRead::Alive { identity: now, .. } if now == identity => Ok(why),
            _ => Err("the test process ended after a signal that should have been refused".into()),
        },
        other => Err(format!(
            "a signal to a stale identity gave {other:?}, not a refusal"
        )),
    };
    t.record("stale_identity", refused);
    let expected = Expected {
        identity,
        exe: c.exe.clone(),
    };
    let sent = match signaller.signal(&expected, Sig::Term) {
        SignalOutcome::Sent => Ok(format!(
            "SIGTERM to pid {} ({})",
            identity.pid,
            signal::system_path().name
        )),
        other => Err(format!("{other:?}")),
    };
    let was_sent = sent.is_ok();
    t.record("signal", sent);
    if !was_sent {
        return;
    }
    let begun = Instant::now();
    let exited = waiter.wait_for_exit(std::slice::from_ref(&expected), Duration::from_secs(5));
    t.record(
        "exit_wait",
        if exited == [true] {
            Ok(format!("in {} ms", begun.elapsed().as_millis()))
        } else {
            Err("not seen to end within 5 s".to_owned())
        },
    );
}
