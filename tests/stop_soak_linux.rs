//! The adversarial soak of the stop engine (docs/design.md §3).
//!
//! Each round starts a real fixture tree (`tests/fixtures/soak.py`: a server with 0–2 children,
//! each with 0–1 children) as an orphan in its own project, diagnoses it, and stops it with
//! Pier's own `Stopper` over the real Linux probe, signaller and exit waiter (`front::System`). Those three sit
//! behind a hook (`soak/hook.rs`) that, before a randomly chosen call, makes something happen:
//! a client connects, a process of the tree forks, exits, execs another executable, or is
//! killed and a newcomer running the same argv in the same folder takes its pid
//! (`ns_last_pid`, as root); or, right after one of Pier's signals, the signalled member's
//! parent forks a replacement (a respawn, as a supervisor does). The ground truth is the round's own (`soak/mod.rs`): the processes
//! reported by the fixtures themselves, the events, and the signals each fixture logged.
//! `soak/oracle.rs` judges each report against it.
//!
//! Bounded in rounds and time: PIER_SOAK_ROUNDS (default 40), PIER_SOAK_SECS (default 240);
//! PIER_SOAK_SEED replays the plans of a run (not its timing). The long version:
//! `PIER_SOAK_ROUNDS=1000 PIER_SOAK_SECS=3600 cargo test --release --test stop_soak_linux -- --nocapture`
//! (`scripts/long.sh`). Only the round's own processes are ever signalled by the test, by
//! identity; the state folder is the test's temp folder.
#![cfg(target_os = "linux")]

mod common;
mod soak;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::System;
use pier_core::model::outcome::{Checkpoint, ResourceResult};
use pier_core::model::shown::Shown;
use pier_core::stop::{StopOptions, Stopper};
use pier_core::store::Store;
use soak::hook::{Call, Hooked};
use soak::oracle::Facts;
use soak::{Kind, Rng, Round, KINDS};

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// 0, 1 or 2 events at calls drawn from `0..horizon`.
fn plan(rng: &mut Rng, horizon: usize) -> Vec<(usize, Kind)> {
    let n = match rng.below(10) {
        0 => 0,
        1..=6 => 1,
        _ => 2,
    };
    (0..n)
        .map(|_| match KINDS[rng.below(KINDS.len())] {
            // A respawn fires at the first signal after it comes due: due early, it meets one.
            Kind::Respawn => (rng.below(horizon / 2), Kind::Respawn),
            kind => (rng.below(horizon), kind),
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    rounds: usize,
    results: BTreeMap<&'static str, usize>,
    events: BTreeMap<(Kind, bool), usize>,
    recycled: usize,
    /// Rounds where some other process had taken a member's pid by the end.
    reused: usize,
    /// Refusals for the 2 s deadline.
    deadline: usize,
    /// Fixtures that failed on their own (a test error, not Pier's).
    fixture_errors: Vec<String>,
    wrong_signals: Vec<String>,
    disagreements: Vec<String>,
    calls: Vec<usize>,
    stop_ms: Vec<f64>,
}

#[test]
fn random_races_during_stops_never_get_a_wrong_signal_or_a_wrong_outcome() {
    if common::fixtures_cannot_be_orphans("stop soak") {
        return;
    }
    let rounds: usize = env_or("PIER_SOAK_ROUNDS", 40);
    let budget = Duration::from_secs(env_or("PIER_SOAK_SECS", 240));
    let seed: u64 = env_or(
        "PIER_SOAK_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    );
    let sb = common::Sandbox::new();
    std::env::set_var("PIER_STATE_DIR", sb.path().join("state"));
    let system = System::new(Store::open_at(sb.path().join("state")).unwrap());
    let interpreter = soak::interpreter_copy(sb.path());
    let mut rng = Rng(seed);
    let mut horizon = 80;
    let mut t = Tally::default();
    let started = Instant::now();

    while t.rounds < rounds && started.elapsed() < budget {
        let n = t.rounds;
        let shape = soak::random_tree(&mut rng);
        let events = plan(&mut rng, horizon);
        let round = Round::start(
            sb.path(),
            n,
            &shape,
            events.clone(),
            Rng(rng.next()),
            &interpreter,
        );
        let root = round.root();
        let initial = round.initial();

        // What the user was shown: a scan of this project alone, unhooked.
        let opts = ScanOptions {
            sample: Duration::ZERO,
            under: vec![round.project.clone()],
            home: None,
            ..ScanOptions::default()
        };
        let scan = diagnose::scan(system.probe.as_ref(), &opts, &project::marker_on_disk).unwrap();
        let (shown_project, resource) = scan
            .projects
            .iter()
            .find_map(|p| {
                p.resources
                    .iter()
                    .find(|r| r.root.pid == root.pid)
                    .map(|r| (p, r))
            })
            .unwrap_or_else(|| panic!("round {n}: the tree is not found: {scan:#?}"));
        let mut diagnosed = resource.identities();
        diagnosed.sort();
        assert_eq!(
            diagnosed, initial,
            "round {n}: Pier and the fixtures disagree on the tree"
        );
        assert_eq!(
            shown_project.level,
            pier_core::model::card::Level::Green,
            "round {n}: the tree is not green before anything happens: {resource:#?}"
        );
        let shown = Shown::of(shown_project.level, resource);

        let hooked = Hooked {
            probe: system.probe.as_ref(),
            signaller: system.signaller.as_ref(),
            waiter: system.waiter.as_ref(),
            tick: &round,
        };
        let stopper = Stopper {
            probe: &hooked,
            signaller: &hooked,
            waiter: &hooked,
            store: &system.store,
            marker_at: &project::marker_on_disk,
            interrupt: &pier_core::stop::interrupt::PROCESS,
            opts: StopOptions {
                grace: Duration::from_secs(2),
                sample: Duration::from_millis(50),
                home: None,
                ..StopOptions::default()
            },
        };
        round.snapshot.borrow_mut().expected =
            Some((sb.path().join("state/records"), resource.id.clone()));
        let t0 = Instant::now();
        let report = stopper.stop(&resource.id, Some(&shown));
        t.stop_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        round.close_plan();
        // Every signal already sent is handled and logged before anything is judged.
        round.settle_signals();
        let running: Vec<_> = round
            .known
            .borrow()
            .iter()
            .map(|k| k.id)
            .filter(|id| soak::runs(*id))
            .collect();
        let mut reused: Vec<u32> = initial
            .iter()
            .filter(|id| common::start_time_of(id.pid).is_some_and(|st| st != id.start_time))
            .map(|id| id.pid)
            .collect();
        reused.extend(round.reused_at_rescan.borrow().iter().flatten());
        t.reused += usize::from(!reused.is_empty());
        let verdict = Facts {
            round: &round,
            report: &report,
            root,
            initial,
            running,
            reused,
        }
        .judge();

        let calls = round.trace.borrow().len();
        t.calls.push(calls);
        horizon = horizon.max(calls + calls / 10);
        t.rounds += 1;
        *t.results.entry(report.result.as_str()).or_default() += 1;
        for f in round.fired.borrow().iter() {
            *t.events.entry((f.kind, f.done)).or_default() += 1;
            t.recycled += usize::from(f.note.contains("taken by a newcomer"));
        }
        let context = || {
            format!(
                "round {n} (seed {seed}, plan {events:?}, tree {shape}):\n  fired {:?}\n  \
                 result {} ({}), members {:?}\n  trace {:?}",
                round.fired.borrow(),
                report.result.as_str(),
                report.reason,
                report
                    .members
                    .iter()
                    .map(|m| (m.pid, m.outcome.as_str(), m.detail.as_str()))
                    .collect::<Vec<_>>(),
                round
                    .trace
                    .borrow()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !matches!(c, Call::Now | Call::Uid | Call::OwnPid))
                    .collect::<Vec<_>>()
            )
        };
        for w in verdict.wrong_signals {
            t.wrong_signals.push(format!("{w}\n  {}", context()));
        }
        for d in verdict.disagreements {
            t.disagreements.push(format!("{d}\n  {}", context()));
        }
        let crashes = round.crashes();
        if !crashes.is_empty() {
            t.fixture_errors.push(format!("round {n}: {crashes}"));
        }
        t.deadline += usize::from(report.checkpoint == Some(Checkpoint::Deadline));
        if report.result == ResourceResult::Failed {
            t.disagreements.push(format!(
                "the stop failed: {}\n  {}",
                report.reason,
                context()
            ));
        }
        drop(round);
    }

    t.calls.sort_unstable();
    t.stop_ms.sort_by(f64::total_cmp);
    let median = |v: &[f64]| v.get(v.len() / 2).copied().unwrap_or(0.0);
    eprintln!(
        "stop soak: {} rounds in {:.1} s (seed {seed}); results {:?}",
        t.rounds,
        started.elapsed().as_secs_f64(),
        t.results
    );
    eprintln!(
        "stop soak: events (kind, happened) {:?}; pids taken by a newcomer: {}; rounds where \
         a member's pid held another process at the end: {}",
        t.events, t.recycled, t.reused
    );
    eprintln!(
        "stop soak: calls per stop {}..{}; stop median {:.0} ms, max {:.0} ms",
        t.calls.first().unwrap_or(&0),
        t.calls.last().unwrap_or(&0),
        median(&t.stop_ms),
        t.stop_ms.last().unwrap_or(&0.0)
    );
    eprintln!(
        "stop soak: wrong signals {}, outcomes that disagree with the ground truth {}",
        t.wrong_signals.len(),
        t.disagreements.len()
    );
    eprintln!("stop soak: refusals for the 2 s deadline: {}", t.deadline);
    assert!(
        t.fixture_errors.is_empty(),
        "fixtures failed (a test error):\n{}",
        t.fixture_errors.join("\n")
    );
    assert!(
        t.wrong_signals.is_empty() && t.disagreements.is_empty(),
        "wrong signals:\n{}\n\ndisagreements:\n{}",
        t.wrong_signals.join("\n"),
        t.disagreements.join("\n")
    );
    assert!(t.rounds > 0, "no round ran");
}
