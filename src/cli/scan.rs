//! `pier scan`: the cards, as text or as the `--json` document.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{colour_wanted, print, render, resolve_dirs, thresholds, EXIT_FAILED};
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::probe;

#[derive(Debug, Args)]
pub struct ScanArgs {
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

/// Runs `pier scan`.
pub fn run(args: ScanArgs) -> ExitCode {
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let thresholds = match thresholds(args.cpu_threshold, args.io_threshold) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let opts = ScanOptions {
        sample: Duration::from_millis(args.sample_ms),
        under,
        include_others: args.all,
        thresholds,
        ..ScanOptions::default()
    };
    let probe = probe::system_probe();
    let result = match diagnose::scan(probe.as_ref(), &opts, &project::marker_on_disk) {
        Ok(result) => result,
        Err(e) => {
            eprintln!("pier: {}", pier_core::words::for_terminal(&e.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if args.json {
        let mut text = serde_json::to_vec_pretty(&result).expect("the scan serialises");
        text.push(b'\n');
        print(&text)
    } else {
        print(render::cards(&result, colour_wanted()).as_bytes())
    }
}
