//! A resource whose environment the OS withholds (macOS, a code-signing-restricted process)
//! cannot be restarted faithfully (design §4): the re-diagnosis refuses it, and only a stop
//! anyway stops it, recording no environment, so no restart replays an empty one.

use super::*;
use crate::model::snapshot::Snapshot;
use crate::restart::{refusal, Now};

/// `tree()` with the environment of `sh -c vite` (100), the command a restart replays, withheld.
fn withheld() -> World {
    let mut fake = tree();
    fake.environment_withheld.insert(100);
    World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    }
}

#[test]
fn a_withheld_environment_is_refused_without_a_stop_anyway_with_nothing_sent() {
    let w = withheld();
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
    let why = &r.reason;
    assert!(why.contains("could not be restarted"), "{why}");
}

#[test]
fn a_stop_anyway_stops_it_and_the_snapshot_records_no_environment_so_no_restart_replays_one() {
    let w = withheld();
    let (r, sent) = run_with(&w, anyway(), |_| {});
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100]);
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let snap: Snapshot = store.get(r.snapshot.as_deref().unwrap()).unwrap().unwrap();
    let root = snap.members.iter().find(|m| m.identity.pid == 100).unwrap();
    assert_eq!(root.env, None, "withheld is not recorded as empty");
    let why = refusal(&Now::read(&w.probe), &snap).unwrap_err();
    assert_eq!(why, crate::restart::error::NotRestartable::NoEnvironment);
}
