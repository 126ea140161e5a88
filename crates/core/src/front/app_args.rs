//! The tray app's options, defined once: `pier-app` parses them to run, and `pier app` parses
//! them too, so `pier app --help` and a wrong value answer without the app's binary (a CLI-only
//! install has none).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::numbers;

/// The options of `pier app` (and of `pier` alone).
#[derive(Debug, Args)]
pub struct AppArgs {
    /// Only projects under DIR (repeatable); also limits "Clean up all safe".
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub under: Vec<PathBuf>,
    /// Seconds between periodic refreshes (1 to 86400); 0 = only on Refresh and after actions.
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = numbers::refresh)]
    pub refresh: Duration,
    /// The activity window of each scan, in milliseconds (0 to 10000; 0 = not sampled).
    #[arg(long = "sample-ms", value_name = "N", default_value = "500",
          value_parser = numbers::scan_sample)]
    pub sample: Duration,
    /// Seconds a card must stay green before its armed stop fires (1 to 3600).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = numbers::settle)]
    pub settle: Duration,
}
