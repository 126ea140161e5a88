//! The front door both binaries (`pier`, `pier-app`) come in by: [`System`], the one place
//! the engine is built for this machine (the probe, the signaller, the exit waiter, the state
//! folder), which the CLI's commands and the worker's [`crate::worker::SystemEngine`] both
//! use; and exit codes, the `--under` folders, a usage error as one sentence, logging, and
//! [`numbers`]: every number the command lines take, parsed into its range.

pub mod numbers;

use std::path::PathBuf;
use std::process::ExitCode;

use crate::diagnose::project;
use crate::probe::{self, Probe};
use crate::signal::wait::{self, ExitWaiter};
use crate::signal::{self, Signaller};
use crate::stop::{StopOptions, Stopper};
use crate::store::{Store, StoreError};

/// Pier's engine on this machine: the probe, the race-free signaller and the exit waiter for
/// the OS Pier was built for, over a state folder. They are put together here and nowhere
/// else, so a command and the app cannot wire them differently. (`pier scan` writes no state
/// and opens no state folder: it needs the probe alone, [`probe::system_probe`].)
pub struct System {
    /// Reads processes, sockets, identities and activity.
    pub probe: Box<dyn Probe + Send + Sync>,
    /// Sends a signal only to the process Pier judged.
    pub signaller: Box<dyn Signaller + Send + Sync>,
    /// Waits for signalled members to exit.
    pub waiter: Box<dyn ExitWaiter + Send + Sync>,
    /// The state folder, where the snapshots and other records live.
    pub store: Store,
}

impl System {
    /// This machine's probe, signaller and exit waiter, over `store`.
    pub fn new(store: Store) -> Self {
        Self {
            probe: probe::system_probe(),
            signaller: signal::system_signaller(),
            waiter: wait::system_waiter(),
            store,
        }
    }

    /// Over the state folder ([`open_store`]).
    pub fn open() -> Result<Self, ExitCode> {
        open_store().map(Self::new)
    }

    /// Over the state folder opened for reading ([`Store::open_for_reading`]): `pier history`
    /// reads a folder it cannot write.
    pub fn open_for_reading() -> Result<Self, ExitCode> {
        opened(Store::open_for_reading()).map(Self::new)
    }

    /// A stop through this engine, judging project folders by their markers on disk and
    /// resources by the user's protect list, read now (`crate::config`): no caller can stop
    /// past the list by forgetting to read it.
    pub fn stopper(&self, opts: StopOptions) -> Stopper<'_> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let opts = StopOptions {
            protect: crate::config::protect(),
            // One name per cleanup: the time it began and who made it.
            batch: Some(format!("{ms}-{}", std::process::id())),
            ..opts
        };
        Stopper {
            probe: self.probe.as_ref(),
            signaller: self.signaller.as_ref(),
            waiter: self.waiter.as_ref(),
            store: &self.store,
            marker_at: &project::marker_on_disk,
            interrupt: &crate::stop::interrupt::PROCESS,
            engines: &crate::containers::control::LiveEngines,
            opts,
        }
    }
}

/// The state folder (`PIER_STATE_DIR`, else the platform's); one that cannot be opened is
/// one sentence on stderr and exit 1, and a `PIER_STATE_DIR` that is empty or relative is a
/// usage error (exit 2), like a wrong flag: it is how Pier was asked to run.
pub fn open_store() -> Result<Store, ExitCode> {
    opened(Store::open())
}

/// A state folder that could not be opened, as one sentence on stderr and its exit code.
fn opened(store: Result<Store, StoreError>) -> Result<Store, ExitCode> {
    store.map_err(|e| {
        eprintln!("pier: {}", crate::words::for_terminal(&e.to_string()));
        ExitCode::from(match e {
            StoreError::EmptyStateDir | StoreError::RelativeStateDir(_) => EXIT_USAGE,
            _ => EXIT_FAILED,
        })
    })
}

/// Pier could not work at all (the process table or the state folder was unreadable).
pub const EXIT_FAILED: u8 = 1;
/// The command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// A stop left some requested resource not `stopped`, or a restart was refused or not ready.
pub const EXIT_NOT_ALL_STOPPED: u8 = 3;
/// Every requested resource was stopped, but some outcome could not be written to its
/// snapshot (a full disk): the next read reconciles it (docs/design.md §3.10).
pub const EXIT_NOT_RECORDED: u8 = 4;

/// `--under` folders, resolved; a missing one is a usage error.
pub fn resolve_dirs(flag: &str, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ExitCode> {
    let mut out = Vec::new();
    for dir in dirs {
        let shown = crate::words::path_for_terminal(dir);
        match dir.canonicalize() {
            Ok(path) if path.is_dir() => out.push(path),
            Ok(_) => return Err(usage(&format!("{flag} {shown}: not a folder"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(usage(&format!("{flag} {shown}: no such folder")))
            }
            Err(e) => return Err(usage(&format!("{flag} {shown}: {e}"))),
        }
    }
    Ok(out)
}

/// A usage error: one sentence on stderr, exit 2. A name in `message` is already shown as
/// [`crate::words::for_terminal`] writes it (or as `{:?}`).
pub fn usage(message: &str) -> ExitCode {
    eprintln!("pier: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Logs go to `file` when given (the app's log in its state folder), else to stderr; `PIER_LOG`
/// overrides the `default` filter.
pub fn init_logging(file: Option<std::fs::File>, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PIER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match file {
        Some(file) => builder
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
            .try_init(),
        // Colour only on a terminal, and never with `NO_COLOR` set (found by trying:
        // `PIER_LOG=debug pier scan 2>log` wrote escape codes into the file).
        None => {
            use std::io::IsTerminal as _;
            let colour = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder
                .with_ansi(colour)
                .with_writer(std::io::stderr)
                .try_init()
        }
    };
}
