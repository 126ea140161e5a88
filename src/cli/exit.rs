//! How `pier` ends: its documented exit codes (`pier --help`, the `cli` module's doc), and the
//! one sentence on stderr that says why when it did not do what was asked. The engine returns
//! typed errors; which exit code each one is, and its words on stderr, are decided here.

use std::path::PathBuf;
use std::process::ExitCode;

use pier_core::front::{self, System};
use pier_core::store::StoreError;
use pier_core::words::for_terminal;

/// Pier could not work at all (the process table or the state folder was unreadable).
pub const EXIT_FAILED: u8 = 1;
/// The command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// A stop left some requested resource not `stopped`, or a restart was refused or not ready.
pub const EXIT_NOT_ALL_STOPPED: u8 = 3;
/// Every requested resource was stopped, but some outcome could not be written to its
/// snapshot (a full disk): the next read reconciles it (docs/design.md §3.10).
pub const EXIT_NOT_RECORDED: u8 = 4;

/// A usage error: one sentence on stderr, exit 2. A name in `message` is already shown as
/// [`for_terminal`] writes it (or as `{:?}`).
pub fn usage(message: &str) -> ExitCode {
    eprintln!("pier: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Pier could not work: `why` as one sentence on stderr, shown through [`for_terminal`], and
/// exit 1.
pub fn failed(why: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("pier: {}", for_terminal(&why.to_string()));
    ExitCode::from(EXIT_FAILED)
}

/// A state folder that could not be opened: one sentence on stderr, and exit 1; but a
/// `PIER_STATE_DIR` that is empty or relative is a usage error (exit 2), like a wrong flag: it
/// is how Pier was asked to run.
pub fn store_failed(e: &StoreError) -> ExitCode {
    let code = failed(e);
    match e {
        StoreError::EmptyStateDir | StoreError::RelativeStateDir(_) => ExitCode::from(EXIT_USAGE),
        _ => code,
    }
}

/// Pier's engine over the state folder ([`System::open`]).
pub fn open_system() -> Result<System, ExitCode> {
    System::open().map_err(|e| store_failed(&e))
}

/// Pier's engine over the state folder opened for reading ([`System::open_for_reading`]).
pub fn open_system_for_reading() -> Result<System, ExitCode> {
    System::open_for_reading().map_err(|e| store_failed(&e))
}

/// `--under` (or `--project`) folders, resolved; one that is not a folder is a usage error.
pub fn resolve_dirs(flag: &'static str, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ExitCode> {
    front::resolve_dirs(flag, dirs).map_err(|e| usage(&e.to_string()))
}
