//! `pier-app`'s command line (the options of `pier app`, which execs this binary with the same
//! arguments), and its start: the state folder, the log in `app.log` there (not a terminal it
//! may not have), then the event loop.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser};
use pier_core::front::{init_logging, open_store, resolve_dirs, usage, EXIT_FAILED};
use pier_core::store::Store;

use crate::{AppOptions, NotStarted};

/// The options of `pier app`.
#[derive(Debug, Args)]
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

/// `pier-app`'s own command line: the options of `pier app`.
#[derive(Debug, Parser)]
#[command(name = "pier-app", version, about = "Pier's menu-bar / tray app")]
struct AppCli {
    #[command(flatten)]
    args: AppArgs,
}

/// `pier-app`'s main: parse, then run the app; returns only when it could not start.
pub fn app_main() -> ExitCode {
    let cli = match AppCli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    run(cli.args)
}

fn run(args: AppArgs) -> ExitCode {
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let Ok(refresh) = Duration::try_from_secs_f64(args.refresh) else {
        return usage(&format!(
            "--refresh {}: must be a number of seconds, zero or more",
            args.refresh
        ));
    };
    let store = match open_store() {
        Ok(store) => store,
        Err(code) => return code,
    };
    log_to_file(&store);
    let opts = AppOptions {
        under,
        refresh: (!refresh.is_zero()).then_some(refresh),
        sample: Duration::from_millis(args.sample_ms),
    };
    match crate::run(opts, store) {
        Ok(never) => match never {},
        Err(NotStarted::AlreadyRunning(why)) => {
            eprintln!("pier: {}", pier_core::words::for_terminal(&why));
            ExitCode::SUCCESS
        }
        Err(NotStarted::Failed(why)) => {
            let why = pier_core::words::for_terminal(&why);
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
        Ok(file) => init_logging(Some(file), "info"),
        Err(e) => {
            init_logging(None, "info");
            eprintln!(
                "pier: the log {} cannot be written: {e}",
                pier_core::words::path_for_terminal(&path)
            );
        }
    }
}
