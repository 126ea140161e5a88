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
//! Half the rounds are batches: 2 to 4 trees, each in its own project, stopped together by
//! one `stop_all`, with the races aimed at one tree each and one tree left untouched; every tree
//! is judged by the same oracle on the batch's one timeline (`soak/mod.rs`, `Batch`).
//!
//! Bounded in rounds and time: PIER_SOAK_ROUNDS (default 40), PIER_SOAK_SECS (default 240);
//! PIER_SOAK_SEED replays the plans of a run (not its timing); PIER_SOAK_REPORT names a file
//! for the run's figures as JSON. The long version, 10,000 rounds over four runs side by side:
//! `scripts/long.sh soak`. Only the round's own processes are ever signalled by the test, by
//! identity; the state folder is the test's temp folder.
#![cfg(target_os = "linux")]

mod common;
mod soak;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::System;
use pier_core::model::outcome::{Checkpoint, ResourceResult, StopReport};
use pier_core::model::shown::Shown;
use pier_core::stop::{Progress, StopOptions, Stopper};
use pier_core::store::Store;
use soak::hook::{Call, Hooked};
use soak::oracle::Facts;
use soak::{Batch, Kind, Rng, Round, Timeline, KINDS};

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
    /// Stops: one tree, or a batch of several.
    rounds: usize,
    /// Resources stopped, over all rounds.
    resources: usize,
    /// Rounds by batch size.
    sizes: BTreeMap<usize, usize>,
    /// Trees of a batch no event touched, and how many of them ended stopped.
    untouched: usize,
    untouched_stopped: usize,
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
    /// The harness's own time per round: starting the trees, judging, ending them.
    start_ms: Vec<f64>,
    judge_ms: Vec<f64>,
    end_ms: Vec<f64>,
}

/// The run's figures as JSON, for `scripts/long.sh` to add up runs made side by side.
fn write_tally(path: &str, t: &Tally, seed: u64, took: Duration) {
    let events: Vec<_> = t
        .events
        .iter()
        .map(|((kind, done), n)| serde_json::json!([format!("{kind:?}"), done, n]))
        .collect();
    let doc = serde_json::json!({
        "seed": seed,
        "secs": took.as_secs_f64(),
        "rounds": t.rounds,
        "resources": t.resources,
        "sizes": t.sizes.iter().map(|(k, v)| (k.to_string(), v)).collect::<BTreeMap<_, _>>(),
        "results": t.results,
        "events": events,
        "recycled": t.recycled,
        "reused": t.reused,
        "untouched": t.untouched,
        "untouched_stopped": t.untouched_stopped,
        "deadline": t.deadline,
        "wrong_signals": t.wrong_signals.len(),
        "disagreements": t.disagreements.len(),
        "fixture_errors": t.fixture_errors.len(),
        "stop_ms": t.stop_ms,
    });
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).expect("the soak's report is written");
}

/// One event each for all but one tree of a batch, of distinct kinds, at calls drawn from
/// `0..horizon` (a client on one, a fork in another, a pid taken over in a third, …); the last
/// tree is left untouched, and must end stopped.
fn aimed_plans(rng: &mut Rng, size: usize, horizon: usize) -> Vec<Vec<(usize, Kind)>> {
    let mut kinds = KINDS.to_vec();
    let mut plans: Vec<Vec<(usize, Kind)>> = (0..size)
        .map(|i| {
            if i + 1 == size {
                return Vec::new();
            }
            let kind = kinds.remove(rng.below(kinds.len()));
            let at = match kind {
                Kind::Respawn => rng.below(horizon / 2),
                _ => rng.below(horizon),
            };
            vec![(at, kind)]
        })
        .collect();
    // Which tree is left untouched varies.
    let turn = rng.below(size);
    plans.rotate_left(turn);
    plans
}

/// Judges one tree's report against its round's truth, and counts it.
fn judge_one(
    t: &mut Tally,
    n: usize,
    seed: u64,
    round: &Round,
    report: &StopReport,
    done_at: usize,
    size: usize,
) {
    round.close_plan();
    // Every signal already sent is handled and logged before anything is judged.
    round.settle_signals();
    let root = round.root();
    let initial = round.initial();
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
    let facts = Facts {
        round,
        report,
        root,
        initial,
        running,
        reused: Vec::new(),
        done_at,
    };
    // The pids taken during this tree's rescan: at its survey or at its process read (found
    // by the soak beside other runs: another run's process took a member's pid between them).
    if let Some((r, end)) = facts.rescan_calls() {
        for (_, at) in round
            .reused_at
            .borrow()
            .iter()
            .filter(|(c, _)| (r..=end).contains(c))
        {
            reused.extend(at);
        }
    }
    reused.sort_unstable();
    reused.dedup();
    t.reused += usize::from(!reused.is_empty());
    let verdict = Facts { reused, ..facts }.judge();

    *t.results.entry(report.result.as_str()).or_default() += 1;
    let touched = round.fired.borrow().iter().any(|f| f.done);
    if size > 1 && !touched {
        t.untouched += 1;
        t.untouched_stopped += usize::from(report.result == ResourceResult::Stopped);
    }
    for f in round.fired.borrow().iter() {
        *t.events.entry((f.kind, f.done)).or_default() += 1;
        t.recycled += usize::from(f.note.contains("taken by a newcomer"));
    }
    let context = || {
        let trace = round.trace.borrow();
        format!(
            "round {n}, a batch of {size} (seed {seed}, plan {:?}):\n  fired {:?}\n  \
             result {} ({}), members {:?}\n  trace {:?}",
            round.plan(),
            round.fired.borrow(),
            report.result.as_str(),
            report.reason,
            report
                .members
                .iter()
                .map(|m| (m.pid, m.outcome.as_str(), m.detail.as_str()))
                .collect::<Vec<_>>(),
            trace
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
    std::env::set_var("PIER_CONFIG_DIR", sb.path().join("config"));
    let system = System::new(Store::open_at(sb.path().join("state")).unwrap());
    let interpreter = soak::interpreter_copy(sb.path());
    let mut rng = Rng(seed);
    let mut horizon = 80;
    let mut batch_horizon = 200;
    let mut t = Tally::default();
    let started = Instant::now();

    while t.rounds < rounds && started.elapsed() < budget {
        let n = t.rounds;
        // Half the rounds stop one tree; the rest stop 2 to 4 trees as one batch, each in its
        // own project, with the races aimed at one tree each and one tree left untouched.
        let size = if rng.below(2) == 0 {
            1
        } else {
            2 + rng.below(3)
        };
        let h = if size == 1 {
            &mut horizon
        } else {
            &mut batch_horizon
        };
        let plans = if size == 1 {
            vec![plan(&mut rng, *h)]
        } else {
            aimed_plans(&mut rng, size, *h)
        };
        let timeline = Timeline::default();
        let began = Instant::now();
        let shapes: Vec<_> = (0..size).map(|_| soak::random_tree(&mut rng)).collect();
        let batch: Vec<Round> = (0..size)
            .map(|i| {
                Round::start(
                    sb.path(),
                    n * 4 + i,
                    &shapes[i],
                    plans[i].clone(),
                    Rng(rng.next()),
                    &interpreter,
                    &timeline,
                )
            })
            .collect();

        t.start_ms.push(began.elapsed().as_secs_f64() * 1e3);
        // What the user was shown: a scan of the batch's projects alone, unhooked.
        let opts = ScanOptions {
            sample: Duration::ZERO,
            under: batch.iter().map(|r| r.project.clone()).collect(),
            home: None,
            ..ScanOptions::default()
        };
        // Runs side by side (`scripts/long.sh`) start and end processes all the time: a scan
        // that reads one of theirs as it ends may call every resource red ("it may belong to
        // this resource"). What the user was shown is a scan where the trees read green: a
        // few looks, as a user would look at the menu again.
        let green = |scan: &pier_core::model::card::Scan| {
            let roots: Vec<u32> = batch.iter().map(|r| r.root().pid).collect();
            let ours = scan
                .projects
                .iter()
                .flat_map(|p| &p.resources)
                .filter(|r| roots.contains(&r.root.pid));
            ours.clone().count() == roots.len()
                && ours
                    .clone()
                    .all(|r| r.level == pier_core::model::card::Level::Green)
        };
        let mut scan =
            diagnose::scan(system.probe.as_ref(), &opts, &project::marker_on_disk).unwrap();
        for _ in 0..4 {
            if green(&scan) {
                break;
            }
            scan = diagnose::scan(system.probe.as_ref(), &opts, &project::marker_on_disk).unwrap();
        }
        let mut targets = Vec::new();
        for round in &batch {
            let root = round.root();
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
                diagnosed,
                round.initial(),
                "round {n}: Pier and the fixtures disagree on the tree"
            );
            assert_eq!(
                shown_project.level,
                pier_core::model::card::Level::Green,
                "round {n}: the tree is not green before anything happens: {resource:#?}"
            );
            round.snapshot.borrow_mut().expected =
                Some((sb.path().join("state/records"), resource.id.clone()));
            targets.push((
                resource.id.clone(),
                Shown::of(shown_project.level, resource),
            ));
        }

        let tick = Batch {
            timeline: &timeline,
            rounds: &batch,
        };
        let hooked = Hooked {
            probe: system.probe.as_ref(),
            signaller: system.signaller.as_ref(),
            waiter: system.waiter.as_ref(),
            tick: &tick,
        };
        let stopper = Stopper {
            probe: &hooked,
            signaller: &hooked,
            waiter: &hooked,
            store: &system.store,
            marker_at: &project::marker_on_disk,
            interrupt: &pier_core::stop::interrupt::PROCESS,
            engines: &pier_core::containers::LiveEngines,
            opts: StopOptions {
                // The fixtures end at once on SIGTERM; a second bounds what a newcomer that
                // still runs costs a round (the stop's last wait), so that 10,000 rounds fit in
                // an hour or so (`scripts/long.sh`).
                grace: Duration::from_secs(1),
                sample: Duration::from_millis(50),
                home: None,
                ..StopOptions::default()
            },
        };
        let asked: Vec<(&str, Option<&Shown>)> = targets
            .iter()
            .map(|(id, s)| (id.as_str(), Some(s)))
            .collect();
        let mut done_at = BTreeMap::new();
        let t0 = Instant::now();
        let reports = stopper.stop_all(&asked, &mut |p| {
            if let Progress::Done(r) = p {
                done_at.insert(r.id.clone(), timeline.calls.borrow().len());
            }
        });
        t.stop_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        assert_eq!(reports.len(), size, "round {n}: one report per resource");
        let calls = timeline.calls.borrow().len();
        t.calls.push(calls);
        *h = (*h).max(calls + calls / 10);
        t.rounds += 1;
        t.resources += size;
        *t.sizes.entry(size).or_default() += 1;

        let judged = Instant::now();
        for (round, report) in batch.iter().zip(&reports) {
            judge_one(&mut t, n, seed, round, report, done_at[&report.id], size);
        }
        t.judge_ms.push(judged.elapsed().as_secs_f64() * 1e3);
        let ended = Instant::now();
        drop(batch);
        t.end_ms.push(ended.elapsed().as_secs_f64() * 1e3);
    }

    t.calls.sort_unstable();
    for v in [
        &mut t.stop_ms,
        &mut t.start_ms,
        &mut t.judge_ms,
        &mut t.end_ms,
    ] {
        v.sort_by(f64::total_cmp);
    }
    let median = |v: &[f64]| v.get(v.len() / 2).copied().unwrap_or(0.0);
    eprintln!(
        "stop soak: {} rounds ({} resources; rounds by batch size {:?}) in {:.1} s (seed \
         {seed}); results {:?}",
        t.rounds,
        t.resources,
        t.sizes,
        started.elapsed().as_secs_f64(),
        t.results
    );
    eprintln!(
        "stop soak: untouched resources of a batch: {}, of which stopped: {}",
        t.untouched, t.untouched_stopped
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
        "stop soak: the harness per round (median): starting the trees {:.0} ms, judging {:.0} \
         ms, ending them {:.0} ms",
        median(&t.start_ms),
        median(&t.judge_ms),
        median(&t.end_ms)
    );
    eprintln!(
        "stop soak: wrong signals {}, outcomes that disagree with the ground truth {}",
        t.wrong_signals.len(),
        t.disagreements.len()
    );
    eprintln!("stop soak: refusals for the 2 s deadline: {}", t.deadline);
    if let Ok(path) = std::env::var("PIER_SOAK_REPORT") {
        write_tally(&path, &t, seed, started.elapsed());
    }
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
