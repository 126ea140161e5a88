//! The menu-bar / tray app's command line. `pier` with no arguments, or `pier app`, execs the
//! `pier-app` binary beside it with the same arguments: the app links GTK (on Linux), the CLI
//! does not, so `pier scan` starts in a few milliseconds with a few MB. `pier-app` parses them
//! here ([`app_main`]) and logs to `app.log` in the state folder, not to a terminal it may not
//! have.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser};

use super::{resolve_dirs, usage, EXIT_FAILED};
use crate::store::Store;
use crate::ui::{self, AppOptions, NotStarted};

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

/// The name of the app's binary, beside `pier`.
pub const APP_BINARY: &str = "pier-app";

/// `pier` / `pier app ARGS`: becomes `pier-app ARGS` (same pid); returns only when it cannot.
pub fn exec_app(args: Vec<OsString>) -> ExitCode {
    let app = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(APP_BINARY),
        Err(e) => {
            eprintln!("pier: Pier cannot find its own program, so not the app beside it: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let error = std::process::Command::new(&app).args(args).exec();
    eprintln!(
        "pier: the tray app {} could not be started ({error}); `pier scan` and `pier stop` work \
         without it",
        app.display()
    );
    ExitCode::from(EXIT_FAILED)
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
        refresh: (!refresh.is_zero()).then_some(refresh),
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
