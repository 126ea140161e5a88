//! `pier-app`'s command line (the options of `pier app`, which execs this binary with the same
//! arguments), and its start: the state folder, the log in `app.log` there (not a terminal it
//! may not have), then the event loop. What it says on stderr when it cannot start, and its
//! exit codes (those of `pier`, `src/cli/exit.rs`), are here.

use std::process::ExitCode;

use clap::Parser;
use pier_core::front::app_args::AppArgs;
use pier_core::front::{init_logging, resolve_dirs};
use pier_core::store::{Store, StoreError};
use pier_core::words::for_terminal;

use crate::{AppOptions, NotStarted};

/// `pier-app`'s own command line: the options of `pier app`.
#[derive(Debug, Parser)]
#[command(name = "pier-app", version, about = "Pier's menu-bar / tray app")]
struct AppCli {
    #[command(flatten)]
    args: AppArgs,
}

/// The app could not start (its state folder or the session was unusable), as `pier`'s 1.
const EXIT_FAILED: u8 = 1;
/// The command line was wrong, as `pier`'s 2.
const EXIT_USAGE: u8 = 2;

/// A usage error: one sentence on stderr, exit 2.
fn usage(message: &str) -> ExitCode {
    eprintln!("pier: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// A state folder that could not be opened: one sentence on stderr and exit 1; an empty or
/// relative `PIER_STATE_DIR` is a usage error (exit 2), as in `pier`.
fn store_failed(e: &StoreError) -> ExitCode {
    eprintln!("pier: {}", for_terminal(&e.to_string()));
    ExitCode::from(match e {
        StoreError::EmptyStateDir | StoreError::RelativeStateDir(_) => EXIT_USAGE,
        _ => EXIT_FAILED,
    })
}

/// `pier-app`'s main: parse, then run the app; returns only when it could not start.
pub fn app_main() -> ExitCode {
    match AppCli::try_parse() {
        Ok(cli) => run(cli.args),
        Err(e) => refused(&e),
    }
}

/// A command line clap did not take: a value `front::numbers` refused is its sentence (exit
/// 2), as in `pier`; anything else is clap's message (exit 2), or the help asked for (exit 0).
fn refused(e: &clap::Error) -> ExitCode {
    use std::error::Error as _;
    if e.kind() == clap::error::ErrorKind::ValueValidation {
        if let Some(why) = e.source() {
            return usage(&why.to_string());
        }
    }
    let _ = e.print();
    ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 })
}

fn run(args: AppArgs) -> ExitCode {
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(e) => return usage(&e.to_string()),
    };
    let store = match Store::open() {
        Ok(store) => store,
        Err(e) => return store_failed(&e),
    };
    log_to_file(&store);
    let opts = AppOptions {
        under,
        refresh: (!args.refresh.is_zero()).then_some(args.refresh),
        sample: args.sample,
        settle: args.settle,
    };
    match crate::run(opts, store) {
        Ok(never) => match never {},
        Err(e @ NotStarted::AlreadyRunning(_)) => {
            eprintln!("pier: {}", for_terminal(&e.to_string()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            let why = e.to_string();
            let why = for_terminal(&why);
            eprintln!("pier: {why}");
            tracing::error!("{why}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Sends the log to `app.log` (0600) in the state folder, opened as every file there is (a
/// regular file of the user's, never a link); on failure it stays on stderr.
fn log_to_file(store: &Store) {
    match store.append_file("app.log") {
        Ok(file) => init_logging(Some(file), "info"),
        Err(e) => {
            init_logging(None, "info");
            eprintln!(
                "pier: the app's log cannot be written: {}",
                for_terminal(&e.to_string())
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::front::numbers;
    use std::time::Duration;

    /// Found by trying: `pier-app --refresh 1e20` said the value must be "zero or more".
    #[test]
    fn the_apps_numbers_are_refused_by_their_parsers_with_the_range() {
        use std::error::Error as _;
        for (flag, value, why) in [
            ("--refresh", "1e20", numbers::refresh("1e20").unwrap_err()),
            ("--refresh", "0.2", numbers::refresh("0.2").unwrap_err()),
            (
                "--sample-ms",
                "20000",
                numbers::scan_sample("20000").unwrap_err(),
            ),
        ] {
            let e = AppCli::try_parse_from(["pier-app", flag, value]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
            assert_eq!(e.source().map(ToString::to_string), Some(why.to_string()));
        }
        let defaults = AppCli::try_parse_from(["pier-app"]).unwrap().args;
        assert_eq!(defaults.refresh, Duration::from_secs(30));
        assert_eq!(defaults.sample, Duration::from_millis(500));
        let off = AppCli::try_parse_from(["pier-app", "--refresh", "0", "--sample-ms", "0"])
            .unwrap()
            .args;
        assert_eq!((off.refresh, off.sample), (Duration::ZERO, Duration::ZERO));
    }
}
