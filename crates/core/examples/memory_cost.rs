//! What reading memory costs a scan (docs/design.md §2.11): paired rounds of a scan with the
//! members' memory read and without it (the same probe, whose memory reads answer at once), in
//! alternating order — unsampled, as `pier scan --sample-ms 0` scans (the worst case: the reads
//! are the scan's own time), and sampled over 100 ms (the reads run while the sample waits).
//! `bench/scan.sh` runs it beside `pier scan`.
//!
//!   cargo run --release --example memory_cost -- ROUNDS [DIR...]
//!
//! Prints one line: `MEMBERS WITH_MS WITHOUT_MS RATIO SAMPLED_WITH_MS SAMPLED_WITHOUT_MS
//! SAMPLED_RATIO` — the members read, then per kind of scan the medians with and without the
//! memory read and the median of each round's with / without. DIRs limit the scans as
//! `--under` does.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pier_core::diagnose::{project, scan, ScanOptions};
use pier_core::probe::{
    system_probe, ActivitySample, Identity, IdentityRead, Memory, Pid, Probe, ProbeError,
    ProcessDetails, ProcessInfo, ProcessList, SocketTable, Survey, WantsArgv,
};

/// The system's probe, except that memory is never read: the scan without its memory read.
struct NoMemory<'p>(&'p (dyn Probe + Sync));

impl Probe for NoMemory<'_> {
    fn memory(&self, _pid: Pid) -> Result<Memory, ProbeError> {
        Err(ProbeError::Partial(
            "not read: the benchmark's scan without memory".into(),
        ))
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
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
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
    fn writes(&self, pid: Pid) -> Result<Vec<pier_core::probe::Written>, ProbeError> {
        self.0.writes(pid)
    }
    fn writes_of(
        &self,
        identity: pier_core::probe::Identity,
    ) -> Result<Vec<pier_core::probe::Written>, ProbeError> {
        self.0.writes_of(identity)
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

/// One scan's time in ms, and how many members' memory it read.
fn timed(probe: &(dyn Probe + Sync), opts: &ScanOptions) -> (f64, usize) {
    let started = Instant::now();
    let found = scan(probe, opts, &project::marker_on_disk).unwrap_or_else(|e| {
        eprintln!("memory_cost: {e}");
        std::process::exit(1);
    });
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let read = found
        .projects
        .iter()
        .flat_map(|p| &p.resources)
        .flat_map(|r| &r.members)
        .filter(|m| m.memory.is_some())
        .count();
    (ms, read)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = match args.next().map(|r| r.parse()) {
        Some(Ok(n)) if n > 0 => n,
        _ => {
            eprintln!("usage: memory_cost ROUNDS [DIR...]");
            std::process::exit(2);
        }
    };
    let unsampled = ScanOptions {
        sample: Duration::ZERO,
        under: args.map(PathBuf::from).collect(),
        ..ScanOptions::default()
    };
    let sampled = ScanOptions {
        sample: Duration::from_millis(100),
        ..unsampled.clone()
    };
    let probe = system_probe();
    let (members, unsampled) = paired(probe.as_ref(), &unsampled, rounds);
    let (_, sampled) = paired(probe.as_ref(), &sampled, rounds);
    println!("{members} {unsampled} {sampled}");
}

/// `rounds` paired scans with and without the memory read: the members read, and "WITH_MS
/// WITHOUT_MS RATIO" (medians).
fn paired(probe: &(dyn Probe + Sync), opts: &ScanOptions, rounds: usize) -> (usize, String) {
    let without = NoMemory(probe);
    let (mut with_ms, mut without_ms, mut ratios, mut members) =
        (Vec::new(), Vec::new(), Vec::new(), 0);
    for round in 0..rounds {
        // Alternating order: neither variant always runs on the caches the other warmed.
        let (a, b) = if round % 2 == 0 {
            let a = timed(probe, opts);
            (a, timed(&without, opts))
        } else {
            let b = timed(&without, opts);
            (timed(probe, opts), b)
        };
        members = a.1;
        with_ms.push(a.0);
        without_ms.push(b.0);
        ratios.push(a.0 / b.0);
    }
    let line = format!(
        "{:.2} {:.2} {:.3}",
        median(with_ms),
        median(without_ms),
        median(ratios)
    );
    (members, line)
}
