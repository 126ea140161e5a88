//! The command line: `pier scan` (text cards or `--json`). Errors become one sentence on
//! stderr and a documented exit code; nothing here prints a stack trace.
//!
//! Exit codes: 0 the scan ran (whatever it found); 1 Pier could not scan (for example the
//! process table was unreadable); 2 the command line was wrong (an unknown flag, a `--under`
//! folder that does not exist).

mod render;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::diagnose::rules::Thresholds;
use crate::diagnose::{self, project, ScanOptions};
use crate::probe;

/// Finds dev servers and watchers left running after their terminal is gone.
#[derive(Debug, Parser)]
#[command(name = "pier", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show dev residue, one card per project, green / yellow / red with the evidence.
    Scan(ScanArgs),
}

#[derive(Debug, Args)]
struct ScanArgs {
    /// Print one JSON document (schema 1, see docs/scan-json.md) instead of cards.
    #[arg(long)]
    json: bool,
    /// How long to sample CPU and disk activity, in milliseconds; 0 = do not sample.
    #[arg(long, value_name = "N", default_value_t = 500)]
    sample_ms: u64,
    /// Only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// Also list listening ports that are not candidates, with the reason.
    #[arg(long)]
    all: bool,
    /// CPU use above which a resource counts as busy, in percent of one core.
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().cpu_percent)]
    cpu_threshold: f64,
    /// Disk I/O above which a resource counts as busy, in bytes per second.
    #[arg(long, value_name = "BYTES", default_value_t = Thresholds::default().io_bytes_per_second)]
    io_threshold: f64,
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to anything non-empty.
fn use_colour(stdout_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stdout_is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Exit codes, as documented in the module docs and the README.
const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    init_logging();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match cli.command {
        Command::Scan(args) => scan(args),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PIER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn scan(args: ScanArgs) -> ExitCode {
    let mut under = Vec::new();
    for dir in &args.under {
        match dir.canonicalize() {
            Ok(path) if path.is_dir() => under.push(path),
            Ok(_) => return usage(&format!("--under {}: not a folder", dir.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return usage(&format!("--under {}: no such folder", dir.display()))
            }
            Err(e) => return usage(&format!("--under {}: {e}", dir.display())),
        }
    }
    for (flag, value) in [
        ("--cpu-threshold", args.cpu_threshold),
        ("--io-threshold", args.io_threshold),
    ] {
        if !value.is_finite() || value < 0.0 {
            return usage(&format!("{flag} {value}: must be a number of zero or more"));
        }
    }
    let opts = ScanOptions {
        sample: Duration::from_millis(args.sample_ms),
        under,
        include_others: args.all,
        thresholds: Thresholds {
            cpu_percent: args.cpu_threshold,
            io_bytes_per_second: args.io_threshold,
        },
        ..ScanOptions::default()
    };
    let probe = probe::system_probe();
    let result = match diagnose::scan(probe.as_ref(), &opts, &project::marker_on_disk) {
        Ok(result) => result,
        Err(e) => {
            eprintln!("pier: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, &result)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        let colour = use_colour(
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        );
        out.write_all(render::cards(&result, colour).as_bytes())
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`pier scan | head`) is the reader's choice, not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pier: could not write the result: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("pier: {message}");
    ExitCode::from(EXIT_USAGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(use_colour(true, None));
        assert!(
            use_colour(true, Some(OsStr::new(""))),
            "an empty NO_COLOR is unset"
        );
        assert!(!use_colour(true, Some(OsStr::new("1"))));
        assert!(!use_colour(false, None), "never when piped");
    }
}
