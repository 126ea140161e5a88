//! Interruption (docs/design.md §3.10): before the "signals may follow" mark a stop sends
//! nothing and its record says so; after it, no further level is signalled and the result is
//! what is true.

use super::*;
use crate::model::snapshot::Snapshot;

const SIGINT: i32 = 2;

fn record(w: &World, r: &StopReport) -> Snapshot {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    store.get(r.snapshot.as_deref().unwrap()).unwrap().unwrap()
}

#[test]
fn an_interruption_before_the_stop_began_writes_and_sends_nothing() {
    static FLAG: Interrupt = Interrupt::new();
    FLAG.raise(SIGINT);
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| ops.interrupt = &FLAG);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.interrupted.as_deref(), Some("SIGINT"));
    assert!(r.reason.contains("nothing was sent"), "{}", r.reason);
    assert!(sent.is_empty());
    assert_eq!(r.snapshot, None, "no record");
    let records = std::fs::read_dir(w.store_dir.path().join("records")).unwrap();
    assert_eq!(records.count(), 0);
}

#[test]
fn an_interruption_during_the_activity_sample_sends_nothing_and_is_no_stop() {
    static FLAG: Interrupt = Interrupt::new();
    let w = world(|call, _, _| {
        if call == "activity" {
            FLAG.raise(SIGINT);
        }
    });
    let (r, sent) = run_with(&w, opts(), |ops| ops.interrupt = &FLAG);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, None, "no check said no");
    assert_eq!(
        r.reason,
        "interrupted by SIGINT during the checks, before the first signal: nothing was sent"
    );
    assert!(sent.is_empty());
    let s = record(&w, &r);
    assert_eq!(
        s.signals_may_follow,
        Some(false),
        "the mark was never written"
    );
    assert_eq!(
        s.signalled,
        Some(false),
        "a stop that sent nothing is no stop"
    );
    assert_eq!(s.result, Some(ResourceResult::Refused));
}

#[test]
fn the_mark_is_on_disk_before_the_first_signal() {
    let w = world(|_, _, _| {});
    let dir = w.store_dir.path().to_path_buf();
    let marks = std::sync::Arc::new(Shared::new(Vec::new()));
    let seen = marks.clone();
    let (r, _) = run_with(&w, opts(), move |ops| {
        ops.after_send(102, move |_| {
            let store = Store::open_at(&dir).unwrap();
            let listing = store.list::<Snapshot>("snap-").unwrap();
            for (_, s) in listing.records {
                seen.borrow_mut().push(s.signals_may_follow);
            }
        })
    });
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(*marks.borrow(), vec![Some(true)]);
}

#[test]
fn an_interruption_after_the_first_level_signals_no_further_level() {
    static FLAG: Interrupt = Interrupt::new();
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.interrupt = &FLAG;
        ops.after_send(102, |_| FLAG.raise(SIGINT));
    });
    assert_eq!(sent, vec![102], "only the leaf's level was signalled");
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert_eq!(r.interrupted.as_deref(), Some("SIGINT"));
    assert!(
        r.reason
            .starts_with("interrupted by SIGINT, so no further level was signalled; "),
        "{}",
        r.reason
    );
    assert_eq!(outcome(&r, 102), MemberOutcome::Stopped);
    for pid in [101, 100] {
        assert_eq!(outcome(&r, pid), MemberOutcome::Skipped);
        assert!(w.probe.alive(pid));
    }
    let s = record(&w, &r);
    assert_eq!(s.signals_may_follow, Some(true));
    assert_eq!(s.signalled, Some(true));
    assert_eq!(s.result, Some(ResourceResult::PartiallyStopped));
}

#[test]
fn a_mark_that_cannot_be_written_means_zero_signals() {
    let w = world(|_, _, _| {});
    let dir = w.store_dir.path().to_path_buf();
    // The record lock cannot be taken once `locks` is a file: the update fails, the snapshot
    // itself was written.
    let w = World {
        probe: Scripted::new(tree(), move |call, _, _| {
            if call == "activity" {
                let locks = dir.join("locks");
                let _ = std::fs::remove_dir_all(&locks);
                std::fs::write(&locks, b"").unwrap();
            }
        }),
        store_dir: w.store_dir,
    };
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Failed, "{r:#?}");
    assert!(
        r.reason.contains("\"signals may follow\" mark"),
        "{}",
        r.reason
    );
    assert!(sent.is_empty());
}

/// Whether the snapshot in `dir` carries the mark.
fn marked(dir: &std::path::Path) -> bool {
    let store = Store::open_at(dir).unwrap();
    let listing = store.list::<Snapshot>("snap-").unwrap();
    listing
        .records
        .iter()
        .any(|(_, s)| s.signals_may_follow == Some(true))
}

#[test]
fn an_interruption_after_the_mark_and_before_the_first_signal_sends_nothing_and_is_no_stop() {
    static FLAG: Interrupt = Interrupt::new();
    let store_dir = tempfile::tempdir().unwrap();
    let dir = store_dir.path().to_path_buf();
    // The tree checks (d) and (e) come after the mark: the first read of the table once it
    // is on disk is where the Ctrl-C lands.
    let w = World {
        probe: Scripted::new(tree(), move |call, _, _| {
            if call == "processes" && marked(&dir) {
                FLAG.raise(SIGINT);
            }
        }),
        store_dir,
    };
    let (r, sent) = run_with(&w, opts(), |ops| ops.interrupt = &FLAG);
    assert!(sent.is_empty(), "{r:#?}");
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.interrupted.as_deref(), Some("SIGINT"));
    let s = record(&w, &r);
    assert_eq!(s.signals_may_follow, Some(true));
    assert_eq!(
        s.signalled,
        Some(false),
        "the stop itself knows nothing was sent"
    );
    assert_eq!(s.result, Some(ResourceResult::Refused));
}

/// The words only: the scripted waiter does not end its wait early; that a real wait ends at
/// once is `ctrl_c_during_the_grace_wait_ends_it_at_once` (`tests/interrupt_linux.rs`).
#[test]
fn a_member_still_running_when_an_interruption_ends_its_wait_says_so() {
    static FLAG: Interrupt = Interrupt::new();
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.interrupt = &FLAG;
        ops.ignores_term.insert(102);
        ops.after_send(102, |_| FLAG.raise(SIGINT));
    });
    assert_eq!(sent, vec![102]);
    assert_eq!(outcome(&r, 102), MemberOutcome::StillRunning);
    let line = r.members.iter().find(|m| m.pid == 102).unwrap();
    assert_eq!(
        line.detail,
        "still running when SIGINT ended the wait for it"
    );
    assert!(
        r.reason
            .starts_with("interrupted by SIGINT, so no further level was signalled; "),
        "{}",
        r.reason
    );
}

#[test]
fn an_interruption_in_the_last_levels_wait_says_so_and_no_level_was_left() {
    static FLAG: Interrupt = Interrupt::new();
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.interrupt = &FLAG;
        ops.ignores_term.insert(100);
        ops.after_send(100, |_| FLAG.raise(SIGINT));
    });
    assert_eq!(sent, vec![102, 101, 100], "every level was signalled");
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason
            .starts_with("interrupted by SIGINT during a wait; "),
        "{}",
        r.reason
    );
}
