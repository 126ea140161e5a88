use super::*;
use crate::model::history::HistoryEntry;
use crate::probe::fake::{self, FakeProbe};

fn entry(
    result: Option<&str>,
    signalled: Option<bool>,
    restartable: bool,
    at: &str,
) -> HistoryEntry {
    HistoryEntry {
        snapshot: "snap-100-1000-1".into(),
        id: "100-1000".into(),
        kind: Some("vite".into()),
        project: "/h/u/app".into(),
        root_command: vec!["vite".into()],
        ports: vec![],
        helper_ports: vec![],
        stopped_at: at.into(),
        result: result.map(Into::into),
        signalled,
        reason: None,
        reconciled_at: None,
        not_written: None,
        restartable,
        why_not: (!restartable).then(|| "already runs".into()),
        program: None,
        folder: None,
        code_env: vec![],
        restarts: vec![],
        batch: None,
        requested_by: Default::default(),
        set_aside: Vec::new(),
    }
}

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-12-20T00:00:00Z").unwrap()
}

#[test]
fn prune_keeps_what_can_be_restarted_unless_asked_and_never_an_unfinished_stop() {
    let ok = entry(Some("stopped"), Some(true), true, "2026-12-01T00:00:00Z");
    assert_eq!(decide(&ok, Prune::Unrestartable), None);
    assert_eq!(decide(&ok, Prune::All), Some(Ok(())));
    let running = entry(Some("stopped"), Some(true), false, "2026-12-01T00:00:00Z");
    assert_eq!(decide(&running, Prune::Unrestartable), Some(Ok(())));
    let unfinished = entry(None, None, false, "2026-12-01T00:00:00Z");
    for what in [Prune::Unrestartable, Prune::All, Prune::Expired(now())] {
        assert!(
            !matches!(decide(&unfinished, what), Some(Ok(()))),
            "{what:?}"
        );
    }
    let mut unwritten = entry(Some("stopped"), None, false, "2026-12-01T00:00:00Z");
    unwritten.not_written = Some("read-only".into());
    assert!(matches!(
        decide(&unwritten, Prune::All),
        Some(Err(super::Kept::Unfinished))
    ));
}

#[test]
fn only_a_stop_that_can_never_be_restarted_expires_and_only_after_a_week() {
    let old = "2026-12-12T23:59:59Z";
    let young = "2026-12-13T00:00:01Z";
    for (result, signalled) in [
        (Some("refused"), Some(false)),
        (Some("failed"), Some(false)),
        (Some("partially_stopped"), Some(true)),
    ] {
        let e = entry(result, signalled, false, old);
        assert_eq!(
            decide(&e, Prune::Expired(now())),
            Some(Ok(())),
            "{result:?}"
        );
        let e = entry(result, signalled, false, young);
        assert_eq!(
            decide(&e, Prune::Expired(now())),
            None,
            "{result:?} is a week old at most"
        );
    }
    // A complete stop can come back, whenever its port is free again: it never expires.
    let done = entry(Some("stopped"), Some(true), false, "2020-01-01T00:00:00Z");
    assert_eq!(decide(&done, Prune::Expired(now())), None);
}

/// Expiry against a real state folder: an old record whose stop sent nothing goes with its
/// log; a complete stop as old stays; a damaged record is never listed, so never touched; a
/// record whose stop lock is held is kept, saying why.
#[test]
fn expiry_removes_an_old_record_that_can_never_come_back_and_nothing_else() {
    use crate::model::outcome::ResourceResult;
    use crate::restart::tests::snap;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    let old = "2026-01-01T00:00:00Z";
    let mut refused = snap(Some(false), Some(ResourceResult::Refused));
    refused.created_at = old.into();
    let mut done = snap(Some(true), Some(ResourceResult::Stopped));
    (done.id, done.root.pid, done.created_at) = ("2-1".into(), 2, old.into());
    store.put("snap-1-1-1", &refused).unwrap();
    store.put("snap-2-1-2", &done).unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    std::fs::write(dir.path().join("logs/snap-1-1-1.log"), "output").unwrap();
    std::fs::write(dir.path().join("records/snap-3-1-3.json"), "{ damaged").unwrap();
    let listed = |name: &str, s: &Snapshot| {
        let mut e = entry(
            s.result.map(|r| r.as_str()),
            s.signalled,
            false,
            &s.created_at,
        );
        (e.snapshot, e.id) = (name.into(), s.id.clone());
        e
    };
    let entries = [listed("snap-1-1-1", &refused), listed("snap-2-1-2", &done)];
    let pruned = prune(
        &store,
        &FakeProbe::default(),
        &entries,
        Prune::Expired(now()),
    );
    assert_eq!(pruned.removed, ["snap-1-1-1"], "{pruned:?}");
    assert!(store.get::<Snapshot>("snap-1-1-1").unwrap().is_none());
    assert!(
        !dir.path().join("logs/snap-1-1-1.log").exists(),
        "its log too"
    );
    assert!(
        store.get::<Snapshot>("snap-2-1-2").unwrap().is_some(),
        "a complete stop stays"
    );
    assert!(
        dir.path().join("records/snap-3-1-3.json").exists(),
        "damaged: kept"
    );
    // Held: kept, and says why.
    store.put("snap-1-1-1", &refused).unwrap();
    let _held = store.lock("stop-1-1").unwrap();
    let pruned = prune(
        &store,
        &FakeProbe::default(),
        &entries[..1],
        Prune::Expired(now()),
    );
    assert!(pruned.removed.is_empty());
    assert!(pruned.kept[0].1.contains("stop lock is held"), "{pruned:?}");
}

/// Found by a new user: after `--prune --all` removed every record, every restart log stayed.
/// A record's log goes with it unless a restart it records may still write there: one that
/// crashed (exited before listening) cannot, nor one whose tree a later stop ended whole.
#[test]
fn a_restart_log_goes_with_its_record_unless_the_restart_may_still_write_it() {
    use crate::model::history::Exited;
    use crate::model::identity::Identity;
    use crate::model::outcome::ResourceResult;
    use crate::model::snapshot::RecordedRestart;
    use crate::restart::tests::snap;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    let restarted = |pid: u32, exited: Option<Exited>| RecordedRestart {
        identity: Identity { pid, start_time: 7 },
        at: "2026-12-05T00:00:00Z".into(),
        ready: exited.is_none(),
        exited,
    };
    let crash = Exited {
        status: Some(1),
        signal: None,
        log_tail: String::new(),
    };
    // 1: crashed; 2: restarted as 20-7, which a later stop (record 4) ended; 3: still runs.
    let cases = [
        (1, restarted(10, Some(crash.clone()))),
        (2, restarted(20, None)),
        (3, restarted(30, None)),
    ];
    let mut entries = Vec::new();
    for (n, r) in cases {
        let mut s = snap(Some(true), Some(ResourceResult::Stopped));
        (s.id, s.root.pid) = (format!("{n}-1"), n);
        s.restarts.push(r);
        let name = format!("snap-{n}-1-{n}");
        store.put(&name, &s).unwrap();
        std::fs::write(dir.path().join(format!("logs/{name}.log")), "output").unwrap();
        let mut e = entry(Some("stopped"), Some(true), true, &s.created_at);
        (e.snapshot, e.id) = (name, s.id.clone());
        entries.push(e);
    }
    let mut later = entry(Some("stopped"), Some(true), true, "2026-12-05T01:00:00Z");
    (later.snapshot, later.id) = ("snap-20-7-9".into(), "20-7".into());
    // `prune` is handed all that `pier history` lists: the later stop is among them (its
    // record is not in this folder, so it is kept, as changed).
    entries.push(later);
    // A child the crashed restart 10-7 left runs on in its session: record 1 keeps its log
    // while it runs.
    let mut child = fake::process(11, 1, &["node", "server.js"]);
    (child.session, child.identity.start_time) = (10, 8);
    let running = FakeProbe::default().with(child, "/h/u/app");
    let log = |n: u32| dir.path().join(format!("logs/snap-{n}-1-{n}.log")).exists();
    let pruned = prune(&store, &running, &entries[..1], Prune::All);
    assert_eq!(pruned.removed.len(), 1, "{pruned:?}");
    assert!(log(1), "a crash's child still writes");
    let pruned = prune(&store, &FakeProbe::default(), &entries, Prune::All);
    assert_eq!(pruned.removed.len(), 2, "{pruned:?}");
    assert!(!log(2), "a restart a later stop ended whole writes no more");
    assert!(log(3), "a restart that may still run keeps its log");
    std::fs::write(dir.path().join("logs/snap-1-1-1.log"), "output").unwrap();
    store
        .put("snap-1-1-1", &{
            let mut s = snap(Some(true), Some(ResourceResult::Stopped));
            (s.id, s.root.pid) = ("1-1".into(), 1);
            s.restarts.push(restarted(10, Some(crash.clone())));
            s
        })
        .unwrap();
    prune(&store, &FakeProbe::default(), &entries[..1], Prune::All);
    assert!(
        !log(1),
        "a crashed restart with nothing left in its session writes no more"
    );
}
