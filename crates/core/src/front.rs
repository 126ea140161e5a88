//! The front door both binaries (`pier`, `pier-app`) come in by: exit codes, the `--under`
//! folders, a usage error as one sentence, logging. What builds the engine lives beside it
//! ([`crate::worker::SystemEngine`]).

use std::path::PathBuf;
use std::process::ExitCode;

/// Pier could not work at all (the process table or the state folder was unreadable).
pub const EXIT_FAILED: u8 = 1;
/// The command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// A stop left some requested resource not `stopped`, or a restart was refused or not ready.
pub const EXIT_NOT_ALL_STOPPED: u8 = 3;

/// `--under` folders, resolved; a missing one is a usage error.
pub fn resolve_dirs(flag: &str, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ExitCode> {
    let mut out = Vec::new();
    for dir in dirs {
        match dir.canonicalize() {
            Ok(path) if path.is_dir() => out.push(path),
            Ok(_) => return Err(usage(&format!("{flag} {}: not a folder", dir.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(usage(&format!("{flag} {}: no such folder", dir.display())))
            }
            Err(e) => return Err(usage(&format!("{flag} {}: {e}", dir.display()))),
        }
    }
    Ok(out)
}

/// A usage error: one sentence on stderr, exit 2.
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
        None => builder.with_writer(std::io::stderr).try_init(),
    };
}
