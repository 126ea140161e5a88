//! `pier` with no arguments, or `pier app`: the menu-bar / tray app. Its log goes to
//! `app.log` in the state folder, not to a terminal it may not have.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{resolve_dirs, usage, EXIT_FAILED};
use crate::store::Store;
use crate::ui::{self, AppOptions, NotStarted};

#[derive(Debug, Args, Default)]
pub struct AppArgs {
    /// Only projects under DIR (repeatable); also limits "Clean up all safe".
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// Seconds between periodic refreshes; 0 = only on Refresh and after actions.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    refresh: f64,
    /// The activity window of each scan, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 500)]
    sample_ms: u64,
}

impl AppArgs {
    /// What `pier` with no arguments runs.
    pub fn defaults() -> Self {
        Self {
            under: Vec::new(),
            refresh: 30.0,
            sample_ms: 500,
        }
    }
}

/// Runs the app; returns only when it could not start.
pub fn run(args: AppArgs) -> ExitCode {
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    if !args.refresh.is_finite() || args.refresh < 0.0 {
        return usage(&format!(
            "--refresh {}: must be a number of seconds, zero or more",
            args.refresh
        ));
    }
    let store = match Store::open() {
        Ok(store) => store,
        Err(e) => {
            eprintln!("pier: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    log_to_file(&store);
    let opts = AppOptions {
        under,
        refresh: (args.refresh > 0.0).then(|| Duration::from_secs_f64(args.refresh)),
        sample: Duration::from_millis(args.sample_ms),
    };
    match ui::run(opts, store) {
        Ok(never) => match never {},
        Err(NotStarted::AlreadyRunning(why)) => {
            eprintln!("pier: {why}");
            ExitCode::SUCCESS
        }
        Err(NotStarted::Failed(why)) => {
            eprintln!("pier: {why}");
            tracing::error!("{why}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Sends the log to `app.log` (0600) in the state folder; on failure it stays on stderr.
fn log_to_file(store: &Store) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = store.folder().join("app.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path);
    match file {
        Ok(file) => super::init_logging(Some(file), "info"),
        Err(e) => {
            super::init_logging(None, "info");
            eprintln!("pier: the log {} cannot be written: {e}", path.display());
        }
    }
}
