//! `pier scan`: the cards, as text or as the `--json` document.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::{colour_wanted, print, render, resolve_dirs, EXIT_FAILED};
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::numbers;
use pier_core::probe;

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Print one JSON document (schema 1, see docs/scan-json.md) instead of cards.
    #[arg(long)]
    json: bool,
    /// How long to sample CPU and disk activity, in milliseconds (0 to 10000); 0 = do not
    /// sample.
    #[arg(long = "sample-ms", value_name = "N", default_value = "500",
          value_parser = numbers::scan_sample)]
    sample: Duration,
    /// Only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// Also list listening ports that are not candidates, with the reason.
    #[arg(long)]
    all: bool,
    /// CPU use above which a resource counts as busy, in percent of one core (0 to 10000).
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().cpu_percent,
          value_parser = numbers::cpu_percent)]
    cpu_threshold: f64,
    /// Disk I/O above which a resource counts as busy, in bytes per second (0 to 10^12).
    #[arg(long, value_name = "BYTES", default_value_t = Thresholds::default().io_bytes_per_second,
          value_parser = numbers::io_bytes_per_second)]
    io_threshold: f64,
}

/// Runs `pier scan`.
pub fn run(args: ScanArgs) -> ExitCode {
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let opts = ScanOptions {
        sample: args.sample,
        under,
        include_others: args.all,
        thresholds: Thresholds {
            cpu_percent: args.cpu_threshold,
            io_bytes_per_second: args.io_threshold,
        },
        engines: diagnose::Engines::Ask,
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
