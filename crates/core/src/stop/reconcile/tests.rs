//! The reconciliation rule, and the locks and owners it honours.

use super::*;
use crate::model::snapshot::{SnapshotMember, SnapshotProject};
use crate::model::Identity;
use crate::probe::fake::{process, FakeProbe};
use crate::restart::rules::stop_was_complete;

fn member(pid: u32) -> SnapshotMember {
    SnapshotMember {
        identity: Identity {
            pid,
            start_time: u64::from(pid) * 10,
        },
        ppid: 1,
        uid: 1000,
        argv: vec![crate::model::bytes::ByteString(b"vite".to_vec())],
        env: Some(Vec::new()),
        exe: crate::model::bytes::ByteString(b"/usr/bin/node".to_vec()),
        cwd: None,
        memory: None,
    }
}

/// An unfinished stop of 100 → 101, with the mark as given.
fn unfinished(mark: Option<bool>) -> Snapshot {
    Snapshot {
        schema: crate::model::SCHEMA_VERSION,
        id: "100-1000".into(),
        kind: Some("vite".into()),
        boot_id: Some("fake-boot".into()),
        created_at: "2026-12-01T00:00:00Z".into(),
        project: SnapshotProject {
            name: "app".into(),
            path: "/home/u/app".into(),
            marker: None,
        },
        ports: Vec::new(),
        evidence: Vec::new(),
        managed_by: None,
        root: member(100).identity,
        members: vec![member(100), member(101)],
        signalled: None,
        signals_may_follow: mark,
        reconciled_at: None,
        outcomes: Vec::new(),
        newcomers: None,
        neighbours: None,
        result: None,
        reason: None,
        restarts: Vec::new(),
        batch: None,
        requested_by: Default::default(),
    }
}

const GONE: &[Fate] = &[Fate::Gone, Fate::Gone];

#[test]
fn without_the_mark_it_was_no_stop() {
    let r = settle(&unfinished(Some(false)), GONE, "now");
    assert_eq!(r.signalled, Some(false), "nothing can have been sent");
    assert_eq!(r.result, Some(ResourceResult::Refused));
    assert!(stop_was_complete(&r).is_err());
    assert!(r.reason.unwrap().contains("nothing was sent"));
}

#[test]
fn with_the_mark_every_member_gone_is_a_complete_restartable_stop() {
    for mark in [Some(true), None] {
        let r = settle(&unfinished(mark), GONE, "now");
        assert_eq!(r.result, Some(ResourceResult::Stopped));
        assert_eq!(r.signalled, None, "whether a signal went out is unknown");
        assert_eq!(r.reconciled_at.as_deref(), Some("now"));
        assert!(stop_was_complete(&r).is_ok(), "{r:#?}");
        assert!(r
            .outcomes
            .iter()
            .all(|o| o.outcome == MemberOutcome::Stopped));
    }
}

#[test]
fn with_the_mark_one_member_running_is_partial_and_not_restartable() {
    let r = settle(&unfinished(Some(true)), &[Fate::Running, Fate::Gone], "now");
    assert_eq!(r.result, Some(ResourceResult::PartiallyStopped));
    assert!(
        r.reason
            .as_deref()
            .unwrap()
            .contains("pid 100 (vite) still ran"),
        "{r:#?}"
    );
    assert!(stop_was_complete(&r).is_err());
}

/// The store and a probe in which 100 still runs as itself and 101 is gone.
fn world() -> (tempfile::TempDir, Store, FakeProbe) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    let probe = FakeProbe::default().with(process(100, 1, &["vite"]), "/home/u/app");
    (dir, store, probe)
}

#[test]
fn it_is_written_on_behalf_of_its_root_and_read_back() {
    let (_dir, store, probe) = world();
    let s = unfinished(Some(true));
    store.put("snap-100-1000-1", &s).unwrap();
    let Reconciled::Written(on_disk) = reconcile(&probe, &store, "snap-100-1000-1", &s) else {
        panic!("written");
    };
    assert_eq!(on_disk.result, Some(ResourceResult::PartiallyStopped));
    let read: Snapshot = store.get("snap-100-1000-1").unwrap().unwrap();
    assert_eq!(read, on_disk);
}

#[test]
fn never_while_a_stop_of_it_holds_its_lock() {
    let (_dir, store, probe) = world();
    let s = unfinished(Some(true));
    store.put("snap-100-1000-1", &s).unwrap();
    let _running = store.lock("stop-100-1000").unwrap();
    let r = reconcile(&probe, &store, "snap-100-1000-1", &s);
    assert!(
        matches!(&r, Reconciled::Left(super::Unsettled::Locked)),
        "{r:?}"
    );
    assert_eq!(
        super::Unsettled::Locked.to_string(),
        "its stop lock is held: a stop of it runs now, or another read is reconciling it"
    );
    let read: Snapshot = store.get("snap-100-1000-1").unwrap().unwrap();
    assert_eq!(read.result, None, "left unfinished on disk");
}

#[test]
fn a_member_whose_fate_cannot_be_read_leaves_it_unfinished() {
    let (_dir, store, mut probe) = world();
    probe.identity_unknown.insert(101);
    let s = unfinished(Some(true));
    store.put("snap-100-1000-1", &s).unwrap();
    let r = reconcile(&probe, &store, "snap-100-1000-1", &s);
    assert!(
        matches!(&r, Reconciled::Left(super::Unsettled::NotYet(why)) if why.contains("pid 101")),
        "{r:?}"
    );
}

#[test]
fn after_a_reboot_every_member_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    // Pid 100 is another process now, outside the project.
    let probe = FakeProbe::default().with(process(100, 1, &["bash"]), "/home/u");
    let mut s = unfinished(Some(true));
    s.boot_id = Some("an-earlier-boot".into());
    store.put("snap-100-1000-1", &s).unwrap();
    let Reconciled::Written(r) = reconcile(&probe, &store, "snap-100-1000-1", &s) else {
        panic!("written");
    };
    assert_eq!(
        r.result,
        Some(ResourceResult::Stopped),
        "pid 100 now is another process"
    );
}

#[test]
fn without_the_mark_no_fate_is_read() {
    let (_dir, store, mut probe) = world();
    probe.identity_unknown.insert(100);
    probe.identity_unknown.insert(101);
    let s = unfinished(Some(false));
    store.put("snap-100-1000-1", &s).unwrap();
    let Reconciled::Written(r) = reconcile(&probe, &store, "snap-100-1000-1", &s) else {
        panic!("written: nothing was sent, whatever the members' fates");
    };
    assert_eq!(r.signalled, Some(false));
}

/// A finished stop is never reconciled: it is read as it is, whatever its members' fates.
#[test]
fn a_stop_that_finished_meanwhile_is_read_as_it_is() {
    let (_dir, store, mut probe) = world();
    probe.identity_unknown.insert(101);
    let mut s = unfinished(Some(true));
    s.result = Some(ResourceResult::Stopped);
    s.signalled = Some(true);
    store.put("snap-100-1000-1", &s).unwrap();
    let stale = unfinished(Some(true));
    assert_eq!(
        reconcile(&probe, &store, "snap-100-1000-1", &stale),
        Reconciled::Written(s)
    );
}
