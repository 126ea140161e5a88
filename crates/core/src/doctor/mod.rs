//! `pier doctor`: a self-test on the user's machine. It starts its own test process (a child
//! with a fixed, secret-free environment in a fresh folder, [`child`]), which listens on a free
//! loopback port and connects to itself, and checks that the probe finds what a scan needs —
//! the child's row, argv, cwd, executable, start time, environment, its listener and its
//! connection, its activity — and that the signaller a stop uses pins it, refuses a stale
//! identity, signals it, and that the exit waiter sees it end. Each check says whether a stop
//! needs it; `ready` is false when one that is needed did not pass (design §7.7).
//! [`run_with`] takes the probe, signaller and waiter, so a test can hand it ones that lie and
//! see each check catch them.
//!
//! It signals nothing but its own children, identified as it started them, and writes nothing
//! but one lock file in the state folder (and the `--dump` folder when asked).

mod checks;
pub mod child;
mod dump;
mod fault;
mod process;
mod tally;

use std::path::PathBuf;
use std::time::Duration;

use crate::model::doctor::{DoctorReport, DOCTOR_SCHEMA};
use crate::probe::{self, Probe};
use crate::signal::wait::{self, ExitWaiter};
use crate::signal::{self, Signaller};
use crate::store::Store;
use fault::Fault;
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

/// How long the activity check samples the spinning test process, in `pier doctor` and the app.
pub const SAMPLE: Duration = Duration::from_millis(300);

/// How `pier doctor` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `pier` executable, which runs the child (`pier doctor-child`).
    pub pier: PathBuf,
    /// Where to write the raw OS buffers of the child (`--dump DIR`).
    pub dump: Option<PathBuf>,
    /// How long the activity sample waits.
    pub sample: Duration,
    /// The state folder to check; `None`: the one a stop opens (`Store::open`).
    pub state: Option<PathBuf>,
}

/// What the checks run through: a stop's probe, signaller and exit waiter.
pub struct Machine<'a> {
    /// Reads the test process.
    pub probe: &'a dyn Probe,
    /// Signals it, by identity.
    pub signaller: &'a dyn Signaller,
    /// Waits for it to end.
    pub waiter: &'a dyn ExitWaiter,
}

/// Runs every check with this machine's probe, signaller and waiter — the ones a stop uses
/// (`front::System`) — and returns the report; never panics on what it finds.
pub fn run(opts: &Options) -> DoctorReport {
    let (probe, signaller, waiter) = (
        probe::system_probe(),
        signal::system_signaller(),
        wait::system_waiter(),
    );
    run_with(
        opts,
        &Machine {
            probe: probe.as_ref(),
            signaller: signaller.as_ref(),
            waiter: waiter.as_ref(),
        },
    )
}

/// [`run`] through the given probe, signaller and waiter.
pub fn run_with(opts: &Options, m: &Machine) -> DoctorReport {
    let mut t = Tally::default();
    state_folder(&mut t, opts.state.as_deref());
    config_folder(&mut t);
    memory_pressure(&mut t, m);
    let mut dumped = None;
    match process::TestFolder::new() {
        Err(e) => t.fail("child", e),
        Ok(folder) => match process::start(opts, &folder) {
            Err(e) => t.fail("child", e),
            Ok(mut c) => {
                t.pass(
                    "child",
                    format!("pid {}, listening on 127.0.0.1:{}", c.pid(), c.port),
                );
                checks::look(&mut t, m, &mut c, opts);
                if let Some(dir) = &opts.dump {
                    dumped = Some(dump::write(dir, &c.facts(&opts.pier)));
                }
                checks::zombie(&mut t, m, opts, &folder);
                checks::shell_environment(&mut t, m, &folder);
                checks::stop(&mut t, m, &mut c);
            }
        },
    }
    t.skip_rest();
    DoctorReport {
        schema: DOCTOR_SCHEMA,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        ready: t.ready(),
        signalling: signal::system_path(),
        checks: t.checks,
        dump: dumped.map(|d| match d {
            Ok(p) => p.display().to_string(),
            Err(e) => format!("not written: {e}"),
        }),
    }
}

/// The configuration folder and its protect list read as a scan reads them. A list that cannot
/// be read protects everything, so Pier offers nothing; a stop does without it (not needed).
/// What the user put there — a file in the folder's place, a list that is not valid, a folder
/// or a FIFO where the list goes — is the setup's, never a bug to report.
fn config_folder(t: &mut Tally) {
    use crate::config::{self, ProtectError, Unreadable};
    use crate::trust::read::FileError;
    let path = match config::protect_path() {
        Ok(path) => path,
        Err(e) => return t.setup_fault("config_folder", e),
    };
    match config::read_list(&path) {
        Ok(list) => {
            let n = list.projects.len() + list.ports.len() + list.containers.len();
            t.pass(
                "config_folder",
                format!("{}: {n} protected", path.display()),
            );
        }
        Err(
            e @ (ProtectError::Setup(_)
            | ProtectError::Invalid { .. }
            | ProtectError::Unreadable {
                why: Unreadable::Unresolved(_) | Unreadable::File(FileError::NotRegular(_)),
                ..
            }),
        ) => t.setup_fault("config_folder", e),
        Err(e) => t.fail("config_folder", e),
    }
}

/// Whether memory pressure can be read: where it cannot (a kernel without PSI), the machine's
/// setup, and the pressure rules never act.
fn memory_pressure(t: &mut Tally, m: &Machine) {
    match m.probe.memory_pressure() {
        Ok(p) => t.pass("memory_pressure", p.words),
        Err(crate::probe::ProbeError::Unsupported) => {
            t.setup_fault("memory_pressure", Fault::NoPressure)
        }
        Err(e) => t.fail("memory_pressure", Fault::Probe(e)),
    }
}

/// The state folder opens as a stop opens it (the user's, no one else's to change) and a record
/// can be written in it: a scratch file is created, synced and removed where records go.
fn state_folder(t: &mut Tally, dir: Option<&std::path::Path>) {
    let opened = match dir {
        Some(dir) => Store::open_at(dir),
        None => Store::open(),
    };
    let store = match opened {
        Ok(store) => store,
        Err(e) if e.is_setup() => return t.setup_fault("state_folder", e),
        Err(e) => return t.fail("state_folder", e),
    };
    use std::os::unix::fs::PermissionsExt as _;
    let dir = store.folder().to_path_buf();
    match store.try_write() {
        Err(e) if e.is_setup() => return t.setup_fault("state_folder", e),
        _ => {}
    }
    let checked = std::fs::metadata(&dir)
        .map_err(|source| Fault::Io {
            path: dir.clone(),
            source,
        })
        .and_then(|m| {
            store.try_write().map_err(|source| Fault::NoRecord {
                records: dir.join("records"),
                source,
            })?;
            let mode = m.permissions().mode() & 0o777;
            Ok(format!("{} (mode {mode:o})", dir.display()))
        });
    t.record("state_folder", checked);
}
