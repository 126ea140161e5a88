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
        set_aside: Vec::new(),
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

#[test]
fn with_the_mark_every_member_running_is_not_stopped_never_partial() {
    let r = settle(
        &unfinished(Some(true)),
        &[Fate::Running, Fate::Running],
        "now",
    );
    assert_eq!(r.result, Some(ResourceResult::NotStopped), "{r:#?}");
    assert!(stop_was_complete(&r).is_err());
}

#[test]
fn a_stop_reconciled_as_no_stop_keeps_no_environment() {
    let (_dir, store, probe) = world();
    let mut s = unfinished(Some(false));
    for m in &mut s.members {
        m.env = Some(vec![crate::model::bytes::ByteString(b"TOKEN=x".to_vec())]);
    }
    store.put("snap-100-1000-1", &s).unwrap();
    let Reconciled::Written(r) = reconcile(&probe, &store, "snap-100-1000-1", &s) else {
        panic!("written");
    };
    assert!(r.members.iter().all(|m| m.env.is_none()), "{r:#?}");
    // With the mark, signals may have gone out: its restart may need it.
    let s = unfinished(Some(true));
    store.put("snap-100-1000-2", &s).unwrap();
    let Reconciled::Written(r) = reconcile(&probe, &store, "snap-100-1000-2", &s) else {
        panic!("written");
    };
    assert!(r.members.iter().all(|m| m.env.is_some()), "{r:#?}");
}

/// A stop of 100 → 101 that left 100 running (`partially_stopped`), with one newcomer that
/// was gone, and another resource of the project, 200-2000, there when it began.
fn partial() -> Snapshot {
    let mut s = unfinished(Some(true));
    s.signalled = Some(true);
    s.result = Some(ResourceResult::PartiallyStopped);
    s.reason = Some("pid 100 (vite) still runs after its signal".into());
    s.outcomes = vec![
        crate::model::snapshot::RecordedOutcome {
            pid: 100,
            outcome: MemberOutcome::StillRunning,
            detail: "still running after SIGTERM".into(),
        },
        crate::model::snapshot::RecordedOutcome {
            pid: 101,
            outcome: MemberOutcome::Stopped,
            detail: "exited after SIGTERM".into(),
        },
    ];
    s.newcomers = Some(vec![crate::model::snapshot::RecordedNewcomer {
        identity: Identity {
            pid: 150,
            start_time: 1500,
        },
        command: "esbuild".into(),
        fate: crate::model::outcome::NewcomerFate::Exited,
    }]);
    s.neighbours = Some(vec!["200-2000".into()]);
    s
}

#[test]
fn only_a_stop_that_signalled_and_left_something_running_may_end_later() {
    use partial::may_end_later;
    assert!(may_end_later(&partial()));
    let mut s = partial();
    s.result = Some(ResourceResult::NotStopped);
    assert!(may_end_later(&s));
    for result in [
        ResourceResult::Stopped,
        ResourceResult::Refused,
        ResourceResult::Failed,
    ] {
        s.result = Some(result);
        assert!(!may_end_later(&s), "{result:?}");
    }
    let mut s = partial();
    s.signalled = Some(false);
    assert!(!may_end_later(&s), "nothing was sent");
}

/// A scan of `projects` and a process table of `processes`.
fn rescan_of(
    projects: Vec<crate::model::card::Project>,
    processes: Vec<crate::probe::ProcessInfo>,
) -> (crate::model::card::Scan, crate::probe::ProcessList) {
    let scan = crate::model::card::Scan {
        schema: 1,
        generation: 1,
        scanned_at: String::new(),
        sample_ms: 0,
        projects,
        other_listeners: None,
        engines: Vec::new(),
    };
    let list = crate::probe::ProcessList {
        processes,
        ..Default::default()
    };
    (scan, list)
}

fn dirt(
    projects: Vec<crate::model::card::Project>,
    processes: Vec<crate::probe::ProcessInfo>,
    cwd: Result<&str, &str>,
) -> Option<String> {
    let (scan, list) = rescan_of(projects, processes);
    let cwd_of = |_| {
        Some(
            cwd.map(std::path::PathBuf::from)
                .map_err(|e| crate::probe::ProbeError::from(e.to_owned())),
        )
    };
    partial::dirty(&partial(), &scan, &list, 1000, &cwd_of)
}

#[test]
fn a_clean_rescan_finds_nothing_born_after_the_stopped_root() {
    use crate::model::card::Level;
    use crate::model::examples::{project, resource};
    assert_eq!(dirt(Vec::new(), Vec::new(), Ok("/home/u/app")), None);
    // A neighbour, there when the stop began; one started before the stopped root (in a
    // project under it); one in another folder.
    let mut neighbour = resource("200-2000", Level::Green, 3000);
    neighbour.root.start_time = 2000;
    let older = resource("90-100", Level::Green, 3001);
    let mut elsewhere = resource("300-3000", Level::Green, 3002);
    elsewhere.root.start_time = 3000;
    let projects = vec![
        project("/home/u/app", Level::Green, vec![neighbour]),
        project("/home/u/app/docs", Level::Green, vec![older]),
        project("/home/u/other", Level::Green, vec![elsewhere]),
    ];
    assert_eq!(dirt(projects, Vec::new(), Ok("/home/u/app")), None);
    // The same command, run before the stopped root: another server of it, no replacement.
    let mut twin = process(90, 1, &["vite"]);
    twin.identity.start_time = 900;
    assert_eq!(dirt(Vec::new(), vec![twin], Ok("/home/u/app")), None);
    // Another user's process on a member's pid is not the user's replacement.
    let mut theirs = process(100, 1, &["bash"]);
    theirs.uid = 0;
    assert_eq!(dirt(Vec::new(), vec![theirs], Ok("/")), None);
}

#[test]
fn a_rescan_is_dirty_with_a_new_candidate_a_reused_pid_or_a_twin() {
    use crate::model::card::Level;
    use crate::model::examples::{project, resource};
    let mut new = resource("400-4000", Level::Green, 3000);
    new.root.start_time = 4000;
    let projects = vec![project("/home/u/app/web", Level::Green, vec![new])];
    let why = dirt(projects, Vec::new(), Ok("/home/u/app")).unwrap();
    assert!(
        why.starts_with("a new vite runs in the project (id 400-4000)"),
        "{why}"
    );
    // Pid 101 holds another of the user's processes now.
    let why = dirt(Vec::new(), vec![process(101, 1, &["bash"])], Ok("/")).unwrap();
    assert_eq!(why, "pid 101 now belongs to a new process (bash)");
    // The stopped command runs in the project again, or where it runs cannot be read.
    let twin = process(500, 1, &["vite"]);
    let why = dirt(Vec::new(), vec![twin.clone()], Ok("/home/u/app")).unwrap();
    assert_eq!(why, "pid 500 runs the same command in the project again");
    let why = dirt(Vec::new(), vec![twin.clone()], Err("exiting")).unwrap();
    assert!(why.contains("its folder cannot be confirmed"), "{why}");
    assert_eq!(dirt(Vec::new(), vec![twin], Ok("/elsewhere")), None);
}

#[test]
fn a_partial_stop_read_as_stopped_says_it_was_reconciled_and_may_be_restarted() {
    let r = partial::settle_ended(&partial(), "2026-12-05T08:00:00Z");
    assert_eq!(r.result, Some(ResourceResult::Stopped));
    assert_eq!(r.reconciled_at.as_deref(), Some("2026-12-05T08:00:00Z"));
    let reason = r.reason.as_deref().unwrap();
    assert!(
        reason.starts_with(
            "read again, every member and newcomer is gone and the project's rescan is clean \
             (the stop had said: pid 100 (vite) still runs"
        ),
        "{reason}"
    );
    assert_eq!(r.outcomes[0].outcome, MemberOutcome::Stopped);
    assert!(r.outcomes[0]
        .detail
        .ends_with("gone when the stop was reconciled"));
    assert!(stop_was_complete(&r).is_ok(), "{r:#?}");
}

#[test]
fn a_partial_stop_is_read_as_stopped_only_once_what_it_names_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    let s = partial();
    store.put("snap-100-1000-1", &s).unwrap();
    // 100 still runs.
    let (_d, _s, running) = world();
    let r = partial::reconcile_ended(&running, &store, "snap-100-1000-1", &s);
    assert!(
        matches!(&r, Settled::Left(Unsettled::NotYet(why)) if why == "pid 100 still runs"),
        "{r:?}"
    );
    // Its newcomer still runs.
    let newcomer = FakeProbe::default().with(process(150, 1, &["esbuild"]), "/tmp");
    let r = partial::reconcile_ended(&newcomer, &store, "snap-100-1000-1", &s);
    assert!(
        matches!(&r, Settled::Left(Unsettled::NotYet(why)) if why.contains("newcomer pid 150")),
        "{r:?}"
    );
    // A stop of it runs.
    let gone = FakeProbe::default();
    {
        let _running = store.lock("stop-100-1000").unwrap();
        let r = partial::reconcile_ended(&gone, &store, "snap-100-1000-1", &s);
        assert!(matches!(&r, Settled::Left(Unsettled::Locked)), "{r:?}");
    }
    // All gone, the rescan clean: written as stopped.
    let Settled::Written(r) = partial::reconcile_ended(&gone, &store, "snap-100-1000-1", &s) else {
        panic!("written");
    };
    assert_eq!(r.result, Some(ResourceResult::Stopped));
    let read: Snapshot = store.get("snap-100-1000-1").unwrap().unwrap();
    assert_eq!(read, r);
}

#[test]
fn an_old_record_that_names_no_newcomers_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    let mut s = partial();
    s.newcomers = None;
    store.put("snap-100-1000-1", &s).unwrap();
    let r = partial::reconcile_ended(&FakeProbe::default(), &store, "snap-100-1000-1", &s);
    assert!(matches!(&r, Settled::Left(Unsettled::NotYet(_))), "{r:?}");
    // One reconciled from an unfinished stop never knew any: its members' fates decide.
    s.reconciled_at = Some("then".into());
    store.put("snap-100-1000-2", &s).unwrap();
    let r = partial::reconcile_ended(&FakeProbe::default(), &store, "snap-100-1000-2", &s);
    assert!(matches!(&r, Settled::Written(_)), "{r:?}");
}
