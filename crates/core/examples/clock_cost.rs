//! What the idle clock's rescans cost beside the app's refresh (issue 42: "the clock's rescans
//! cost at most what the app's 30 s refresh costs"). In one long-lived process, paired rounds in
//! a rotating order of three:
//!
//! - **clock**: one rescan as `pier watch` makes it every `--every` (`Scheduler::rescan`: a scan
//!   with no sample window, memory or engine, the clock measured, the arms listed, the rules
//!   read from `PIER_CONFIG_DIR` and judged);
//! - **refresh**: one refresh of the tray app as it runs (`SystemEngine::refresh`, the app's
//!   default sample window, memory, the engines asked, the clock inside, the history);
//! - **scan+history**: the same refresh without the clock (`refresh_without_clock`): what a
//!   refresh cost before it, so the refresh's own figure shows what the clock adds.
//!
//! Each is timed in CPU time (the process's user + system, its reaped children's too: the
//! sample window's wait costs none) and wall time. The state folder is `PIER_STATE_DIR`.
//! `bench/clock.sh` runs it among 2,000 processes and 20 servers; `bench/auto.sh` runs it with
//! a rules file and without one, for what the rules add.
//!
//!   cargo run --release -p pier-core --features cli --example clock_cost -- ROUNDS [DIR...]
//!
//! Prints, one line each: `resources CLOCK REFRESH SCAN_HISTORY` (what each found, the same in
//! every round, or it fails; the clock's count is of the cards it measured), `cpu_ms …` and
//! `wall_ms …` (medians), `sample_ms N` (the refresh's window), then the medians of the
//! per-round CPU ratios `clock/refresh R`, `clock/scan+history R` and `refresh/scan+history R`.
//! DIRs limit every scan as `--under` does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, FromArgMatches};
use pier_core::auto::scheduler::{Scheduler, SchedulerOptions};
use pier_core::diagnose::ScanOptions;
use pier_core::front::app_args::AppArgs;
use pier_core::front::System;
use pier_core::model::card::Scan;
use pier_core::stop::StopOptions;
use pier_core::store::Store;
use pier_core::worker::{Engine, Refreshed, SystemEngine};

/// The three things timed, in the order of a round that starts with the first.
const KINDS: [&str; 3] = ["clock", "refresh", "scan+history"];

/// One timed run: CPU ms, wall ms, and the resources it found.
struct Timed {
    cpu: f64,
    wall: f64,
    found: usize,
}

/// The process's CPU time so far (user + system, its threads' and its reaped children's), ms.
fn cpu_ms() -> f64 {
    let used = |who| {
        // SAFETY: getrusage writes one struct it is given; a zeroed one is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a live, writable rusage.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            fail(&std::io::Error::last_os_error());
        }
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
        ms(ru.ru_utime) + ms(ru.ru_stime)
    };
    used(libc::RUSAGE_SELF) + used(libc::RUSAGE_CHILDREN)
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("clock_cost: {e}");
    std::process::exit(1);
}

/// `run`'s CPU and wall time, and what it found.
fn timed(run: impl FnOnce() -> usize) -> Timed {
    let (cpu, wall) = (cpu_ms(), Instant::now());
    let found = run();
    Timed {
        wall: wall.elapsed().as_secs_f64() * 1e3,
        cpu: cpu_ms() - cpu,
        found,
    }
}

/// The app's default sample window, as the app parses its options with none given.
fn app_sample() -> Duration {
    let cmd = AppArgs::augment_args(clap::Command::new("pier-app"));
    let parsed = cmd
        .try_get_matches_from(["pier-app"])
        .and_then(|m| AppArgs::from_arg_matches(&m));
    parsed.unwrap_or_else(|e| fail(&e)).sample
}

/// The resources of a scan: all of them, or (`measured`) those whose card the clock filled.
fn resources(scan: &Scan, measured: bool) -> usize {
    let all = scan.projects.iter().flat_map(|p| &p.resources);
    all.filter(|r| !measured || r.idle.is_some()).count()
}

fn refreshed(r: Refreshed) -> usize {
    let scan = r.scan.unwrap_or_else(|e| fail(&e));
    r.history.unwrap_or_else(|e| fail(&e));
    resources(&scan, false)
}

/// What is measured, each kept for the whole run as `pier watch` and the app keep theirs.
struct Bench {
    system: System,
    scheduler: Scheduler,
    under: Vec<PathBuf>,
    engine: SystemEngine,
    generation: u64,
}

impl Bench {
    /// One run of kind `k` (an index into [`KINDS`]).
    fn run(&mut self, k: usize) -> Timed {
        self.generation += 1;
        let generation = self.generation;
        match k {
            0 => timed(|| {
                let opts = ScanOptions {
                    generation,
                    under: self.under.clone(),
                    protect: pier_core::config::protect(),
                    ..ScanOptions::default()
                };
                // Read at every rescan, as `pier watch` reads it.
                let rules = pier_core::auto::rules::read();
                let rescan = self.scheduler.rescan(
                    &self.system,
                    &opts,
                    &StopOptions::default(),
                    &rules,
                    true,
                );
                resources(&rescan.unwrap_or_else(|e| fail(&e)).0, true)
            }),
            1 => timed(|| refreshed(self.engine.refresh(generation))),
            _ => timed(|| refreshed(self.engine.refresh_without_clock(generation))),
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = match args.next().map(|r| r.parse()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            eprintln!("usage: clock_cost ROUNDS [DIR...]");
            std::process::exit(2);
        }
    };
    let under: Vec<PathBuf> = args.map(PathBuf::from).collect();
    let open = || Store::open().unwrap_or_else(|e| fail(&e));
    let sample = app_sample();
    let mut bench = Bench {
        system: System::new(open()),
        scheduler: Scheduler::new(SchedulerOptions::default()),
        engine: SystemEngine::new(open(), under.clone(), sample, PathBuf::from("pier")),
        under,
        generation: 0,
    };
    // A first round unmeasured: the clock's first rescan has no interval before it yet.
    for k in 0..KINDS.len() {
        bench.run(k);
    }
    let mut runs: [Vec<Timed>; 3] = Default::default();
    for round in 0..rounds {
        // A rotating order: each kind goes first, second and third alike.
        for i in 0..KINDS.len() {
            let k = (round + i) % KINDS.len();
            runs[k].push(bench.run(k));
        }
    }
    report(&runs, sample);
}

/// The figures, one line each (the module's doc).
fn report(runs: &[Vec<Timed>; 3], sample: Duration) {
    // Every round of a kind found the same resources, or the figures compare unlike scans.
    let found: Vec<String> = runs
        .iter()
        .zip(KINDS)
        .map(|(r, kind)| match r.iter().map(|t| t.found).min() {
            Some(least) if r.iter().all(|t| t.found == least) => least.to_string(),
            _ => fail(&format!(
                "{kind}: the resources found changed between rounds"
            )),
        })
        .collect();
    println!("resources {}", found.join(" "));
    let medians = |f: fn(&Timed) -> f64| {
        let m: Vec<String> = runs
            .iter()
            .map(|r| format!("{:.2}", median(r.iter().map(f).collect())))
            .collect();
        m.join(" ")
    };
    println!("cpu_ms {}", medians(|t| t.cpu));
    println!("wall_ms {}", medians(|t| t.wall));
    println!("sample_ms {}", sample.as_millis());
    let ratio = |a: usize, b: usize| {
        let each = runs[a].iter().zip(&runs[b]).map(|(x, y)| x.cpu / y.cpu);
        median(each.collect())
    };
    println!("clock/refresh {:.3}", ratio(0, 1));
    println!("clock/scan+history {:.3}", ratio(0, 2));
    println!("refresh/scan+history {:.3}", ratio(1, 2));
}
