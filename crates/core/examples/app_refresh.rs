//! What one refresh of the tray app costs: `SystemEngine::refresh` — the scan and the snapshot
//! history judged after it — run again and again in one long-lived process, as the app does.
//! `bench/scan.sh` runs it beside `pier scan` to show the app's periodic scan costs no more
//! than the CLI's. The state folder is `PIER_STATE_DIR` (the benchmark gives a fresh one).
//!
//!   cargo run --release --example app_refresh -- ROUNDS [DIR...]
//!
//! Prints the median refresh in milliseconds; DIRs limit the scan as `--under` does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pier_core::store::Store;
use pier_core::worker::{Engine, SystemEngine};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: u64 = match args.next().map(|r| r.parse()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            eprintln!("usage: app_refresh ROUNDS [DIR...]");
            std::process::exit(2);
        }
    };
    let under: Vec<PathBuf> = args.map(PathBuf::from).collect();
    let store = match Store::open() {
        Ok(store) => store,
        Err(e) => {
            eprintln!("app_refresh: {e}");
            std::process::exit(1);
        }
    };
    let pier = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.join("pier")))
        .unwrap_or_else(|| PathBuf::from("pier"));
    let engine = SystemEngine::new(store, under, Duration::ZERO, pier);
    let mut times = Vec::new();
    for generation in 1..=rounds {
        let started = Instant::now();
        let refreshed = engine.refresh(generation);
        let (scan, history) = (refreshed.scan, refreshed.history);
        times.push(started.elapsed().as_secs_f64() * 1e3);
        if let Err(e) = scan.and(history.map(|_| ())) {
            eprintln!("app_refresh: refresh {generation} failed: {e}");
            std::process::exit(1);
        }
    }
    times.sort_by(f64::total_cmp);
    println!("{:.1}", times[times.len() / 2]);
}
