//! What reading the members' held files costs a scan (docs/design.md §2.12, data services):
//! paired rounds of an unsampled scan with each project member's files read and without (the
//! same probe, whose `writes` answers at once), in alternating order. Like `memory_cost`, run
//! beside the scan benchmark's fixtures.
//!
//!   cargo run --release --example writes_cost -- ROUNDS [DIR...]
//!
//! Prints one line: `WITH_MS WITHOUT_MS RATIO` — the medians with and without the reads and the
//! median of each round's with / without. DIRs limit the scans as `--under` does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pier_core::diagnose::{project, scan, ScanOptions};
use pier_core::probe::{
    system_probe, ActivitySample, Identity, IdentityRead, Memory, Pid, Probe, ProbeError,
    ProcessDetails, ProcessInfo, ProcessList, SocketTable, Survey, WantsArgv,
};

/// The system's probe, except that no member holds a file: the scan without its files read.
struct NoWrites<'p>(&'p (dyn Probe + Sync));

impl Probe for NoWrites<'_> {
    fn memory(&self, pid: Pid) -> Result<Memory, String> {
        self.0.memory(pid)
    }
    fn current_uid(&self) -> u32 {
        self.0.current_uid()
    }
    fn own_pid(&self) -> Pid {
        self.0.own_pid()
    }
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        self.0.processes()
    }
    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.0.details(pid)
    }
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, String> {
        self.0.environment(pid)
    }
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        self.0.sockets(owners_among)
    }
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.0.survey(wants_argv)
    }
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.0.survey_own(wants_argv)
    }
    fn rows(&self, pids: &[Pid]) -> ProcessList {
        self.0.rows(pids)
    }
    fn argv(&self, identity: Identity) -> Option<Vec<Vec<u8>>> {
        self.0.argv(identity)
    }
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        self.0.children(parents)
    }
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        self.0.activity(pids, window)
    }
    fn writes(&self, _pid: Pid) -> Result<Vec<pier_core::probe::Written>, String> {
        Ok(Vec::new())
    }
    fn identity(&self, pid: Pid) -> IdentityRead {
        self.0.identity(pid)
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
    fn boot_id(&self) -> Option<String> {
        self.0.boot_id()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One scan's time in ms.
fn timed(probe: &(dyn Probe + Sync), opts: &ScanOptions) -> f64 {
    let started = Instant::now();
    if let Err(e) = scan(probe, opts, &project::marker_on_disk) {
        eprintln!("writes_cost: {e}");
        std::process::exit(1);
    }
    started.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = match args.next().map(|r| r.parse()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            eprintln!("usage: writes_cost ROUNDS [DIR...]");
            std::process::exit(2);
        }
    };
    let opts = ScanOptions {
        sample: Duration::ZERO,
        under: args.map(PathBuf::from).collect(),
        ..ScanOptions::default()
    };
    let probe = system_probe();
    let without = NoWrites(probe.as_ref());
    let (mut with_ms, mut without_ms, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternating order: neither variant always runs on the caches the other warmed.
        let (a, b) = if round % 2 == 0 {
            let a = timed(probe.as_ref(), &opts);
            (a, timed(&without, &opts))
        } else {
            let b = timed(&without, &opts);
            (timed(probe.as_ref(), &opts), b)
        };
        with_ms.push(a);
        without_ms.push(b);
        ratios.push(a / b);
    }
    println!(
        "{:.2} {:.2} {:.3}",
        median(with_ms),
        median(without_ms),
        median(ratios)
    );
}
