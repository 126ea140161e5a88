//! `--dry-run`: every check up to the first signal, then what would be signalled — nothing
//! sent, nothing written (no snapshot, no record, no mark).

use super::container::{dry_run_of_a_container, FakeEngine};
use super::*;

fn dry() -> StopOptions {
    StopOptions {
        dry_run: true,
        ..opts()
    }
}

/// The state folder's records: a dry run leaves none.
fn records(w: &World) -> usize {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    store
        .list::<crate::model::snapshot::Snapshot>("snap-")
        .unwrap()
        .records
        .len()
}

#[test]
fn a_dry_run_of_a_green_tree_names_each_signal_leaf_to_root_and_sends_none() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, dry(), |_| {});
    assert_eq!(r.result, ResourceResult::WouldStop, "{r:#?}");
    assert!(sent.is_empty(), "nothing sent: {sent:?}");
    let plan: Vec<(Option<Pid>, usize, &str)> = r
        .would_signal
        .iter()
        .map(|s| (s.pid, s.order, s.signal.as_str()))
        .collect();
    assert_eq!(
        plan,
        [
            (Some(102), 1, "SIGTERM"),
            (Some(101), 2, "SIGTERM"),
            (Some(100), 3, "SIGTERM")
        ]
    );
    assert_eq!(r.would_signal[2].command, "sh -c vite");
    assert!(r.members.is_empty() && r.timings.is_none() && r.snapshot.is_none());
    assert_eq!(records(&w), 0, "no snapshot written");
    for pid in [100, 101, 102] {
        assert!(w.probe.alive(pid));
    }
}

/// A dry run runs the very checks a stop runs: a client at the last check refuses it.
#[test]
fn a_dry_run_is_refused_where_the_stop_would_be() {
    let w = world(|call, n, p| {
        if call == "sockets" && n == 4 {
            client_on_5173(p);
        }
    });
    let (r, sent) = run_with(&w, dry(), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::E));
    assert!(r.would_signal.is_empty() && sent.is_empty());
    assert_eq!(records(&w), 0);
    // And the deadline, which the first signal would judge.
    let w = world(|_, _, _| {});
    let slow = StopOptions {
        sample: Duration::from_millis(2_100),
        ..dry()
    };
    let (r, _) = run_with(&w, slow, |_| {});
    assert_eq!(r.checkpoint, Some(Checkpoint::Deadline), "{r:#?}");
}

#[test]
fn a_dry_run_of_a_stop_anyway_would_send_sigterm_and_names_what_it_sets_aside() {
    let w = world(|_, _, p| vite_busy(p));
    let o = StopOptions {
        dry_run: true,
        ..anyway()
    };
    let (r, sent) = run_with(&w, o, |_| {});
    assert_eq!(r.result, ResourceResult::WouldStop, "{r:#?}");
    assert!(sent.is_empty());
    assert!(r.would_signal.iter().all(|s| s.signal == "SIGTERM"));
    assert_eq!(r.set_aside[0].reason, crate::model::reason::Reason::Busy);
}

#[test]
fn a_dry_run_of_a_container_asks_its_engine_nothing_but_its_state() {
    let engine = FakeEngine::new(|_| {});
    let (r, records) = dry_run_of_a_container(&engine);
    assert_eq!(r.result, ResourceResult::WouldStop, "{r:#?}");
    assert_eq!(r.would_signal.len(), 1);
    assert_eq!(
        r.would_signal[0].signal, "SIGINT",
        "its image's stop signal"
    );
    assert_eq!(r.would_signal[0].command, "container web");
    assert_eq!(records, 0, "no stop record written");
}
