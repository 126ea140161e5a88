//! Past a "no" (docs/design.md §3.8): a stop anyway sets aside only the reasons a person may
//! and did confirm, with SIGTERM through the whole chain; Force is a later SIGKILL for what
//! outlived a stop's SIGTERM, added to that stop's record.

use super::*;
use crate::model::reason::Reason;
use crate::model::snapshot::Snapshot;

/// A stop anyway of [`ID`] that confirmed `reasons`.
fn confirming(reasons: &[Reason]) -> StopOptions {
    let mut o = opts();
    o.anyway.confirm(ID, reasons.iter().copied().collect());
    o
}

fn the_record(w: &World) -> Snapshot {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let mut all = store.list::<Snapshot>("snap-").unwrap().records;
    assert_eq!(all.len(), 1, "one record: Force writes none of its own");
    all.pop().unwrap().1
}

#[test]
fn a_busy_tree_is_refused_with_the_stop_anyway_that_would_set_it_aside() {
    let (r, sent) = run_with(&world(|_, _, p| vite_busy(p)), opts(), |_| {});
    assert_eq!(r.checkpoint, Some(Checkpoint::B), "{r:#?}");
    assert!(
        r.reason
            .ends_with("`pier stop --anyway 100-1000` sends SIGTERM anyway, setting aside busy"),
        "{}",
        r.reason
    );
    assert!(sent.is_empty());
}

#[test]
fn a_stop_anyway_sets_aside_only_what_was_confirmed() {
    // Busy, but only a live parent was confirmed: refused at the sample, nothing sent.
    let w = world(|_, _, p| vite_busy(p));
    let (r, sent) = run_with(&w, confirming(&[Reason::NotOrphaned]), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::B));
    assert!(sent.is_empty());
    // Busy confirmed: SIGTERM leaf to root, and busy named in the report and the record.
    let w = world(|_, _, p| vite_busy(p));
    let (r, sent) = run_with(&w, confirming(&[Reason::Busy]), |_| {});
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100]);
    let aside: Vec<Reason> = r.set_aside.iter().map(|a| a.reason).collect();
    assert_eq!(aside, [Reason::Busy]);
    assert_eq!(the_record(&w).set_aside, r.set_aside);
}

#[test]
fn a_client_is_set_aside_only_when_confirmed() {
    // The client connects after the re-diagnosis, as check (a) begins.
    let at_a = |call: &'static str, n: usize, p: &mut FakeProbe| {
        // Read 1 is the re-diagnosis, 2 the snapshot's table, 3 check (a).
        if call == "processes" && n == 3 {
            client_on_5173(p);
        }
    };
    let (r, sent) = run_with(&world(at_a), confirming(&[Reason::Busy]), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
    let w = world(at_a);
    let (r, sent) = run_with(&w, confirming(&[Reason::LiveConnection]), |_| {});
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.set_aside[0].reason, Reason::LiveConnection, "{r:#?}");
    assert!(r.set_aside[0].fact.contains("127.0.0.1:40000"), "{r:#?}");
}

#[test]
fn what_cannot_be_read_is_never_set_aside() {
    let all = crate::model::reason::ALL;
    let w = world(|call, n, p| {
        if call == "processes" && n == 3 {
            p.sockets = None;
        }
    });
    let (r, sent) = run_with(&w, confirming(&all), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::A), "{r:#?}");
    assert!(sent.is_empty());
}

/// A stop, then Force on the same state folder; the reports and the pids sent SIGKILL.
fn stop_then_force(
    w: &World,
    tune: impl FnOnce(&mut FakeOps),
) -> (StopReport, StopReport, Vec<Pid>) {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let mut ops = fake_ops(&w.probe);
    tune(&mut ops);
    let waiter = FakeWaiter::new(&w.probe);
    let stopper = stopper(&w.probe, &ops, &waiter, &store, opts());
    let stop = stopper.stop(ID, None);
    let force = stopper.force(ID);
    let killed = ops.killed.borrow().clone();
    (stop, force, killed)
}

#[test]
fn force_kills_only_what_outlived_its_sigterm_and_adds_to_that_stops_record() {
    let w = world(|_, _, _| {});
    let (stop, force, killed) = stop_then_force(&w, |ops| {
        ops.ignores_term.insert(101);
    });
    assert_eq!(
        outcome(&stop, 101),
        MemberOutcome::StillRunning,
        "{stop:#?}"
    );
    assert!(stop.timings.is_some());
    assert_eq!(
        killed,
        [101],
        "SIGKILL to what outlived SIGTERM, nothing else"
    );
    assert_eq!(outcome(&force, 101), MemberOutcome::Stopped, "{force:#?}");
    assert_eq!(force.members.len(), 1);
    let record = the_record(&w);
    let line = record.outcomes.iter().find(|o| o.pid == 101).unwrap();
    assert_eq!(line.outcome, MemberOutcome::Stopped);
    assert_eq!(line.detail, "exited after SIGKILL (Force)");
}

/// `sh -c vite` where vite ignores SIGTERM: sh ends, vite is adopted and roots a tree of its
/// own. The report names it still running, never "a new vite appeared".
#[test]
fn a_member_that_outlived_its_signal_and_was_adopted_is_not_called_new() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.ignores_term.insert(101);
        ops.after_send(100, |p| p.process_mut(101).ppid = 1);
    });
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert_eq!(outcome(&r, 101), MemberOutcome::StillRunning);
    assert!(!r.reason.contains("appeared"), "{}", r.reason);
}

#[test]
fn force_refuses_with_no_stop_before_it_or_nothing_left_sending_nothing() {
    let w = world(|_, _, _| {});
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let ops = fake_ops(&w.probe);
    let waiter = FakeWaiter::new(&w.probe);
    let stopper = stopper(&w.probe, &ops, &waiter, &store, opts());
    let r = stopper.force(ID);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(
        r.reason.starts_with("no stop of 100-1000 is recorded"),
        "{}",
        r.reason
    );
    // A stop that ended everything leaves Force nothing.
    assert_eq!(stopper.stop(ID, None).result, ResourceResult::Stopped);
    let r = stopper.force(ID);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(r.reason.contains("outlived its SIGTERM"), "{}", r.reason);
    assert!(ops.killed.borrow().is_empty());
}

#[test]
fn force_never_touches_a_member_that_became_protected() {
    let w = world(|_, _, _| {});
    let (_, force, killed) = stop_then_force(&w, |ops| {
        ops.ignores_term.insert(101);
        // Right after its SIGTERM, it runs as another user (a setuid helper).
        ops.after_send(101, |p| p.process_mut(101).uid = 0);
    });
    assert_eq!(force.result, ResourceResult::Refused, "{force:#?}");
    assert!(
        force.reason.contains("another user's process"),
        "{}",
        force.reason
    );
    assert!(killed.is_empty());
}

/// A stop that left vite (101) running; then the world is changed by `between` and the
/// signaller by `tune`, and Force runs with `o`. Force's report, the pids sent SIGKILL, and the
/// record.
fn force_after(
    o: StopOptions,
    between: impl FnOnce(&World, &Store),
    tune: impl FnOnce(&mut FakeOps),
) -> (StopReport, Vec<Pid>, Snapshot) {
    force_after_of(101, o, between, tune)
}

/// [`force_after`], with `stubborn` the member that outlives its SIGTERM.
fn force_after_of(
    stubborn: Pid,
    o: StopOptions,
    between: impl FnOnce(&World, &Store),
    tune: impl FnOnce(&mut FakeOps),
) -> (StopReport, Vec<Pid>, Snapshot) {
    let w = world(|_, _, _| {});
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let mut ops = fake_ops(&w.probe);
    ops.ignores_term.insert(stubborn);
    let waiter = FakeWaiter::new(&w.probe);
    let stop = stopper(&w.probe, &ops, &waiter, &store, opts()).stop(ID, None);
    assert_eq!(
        outcome(&stop, stubborn),
        MemberOutcome::StillRunning,
        "{stop:#?}"
    );
    between(&w, &store);
    tune(&mut ops);
    let force = stopper(&w.probe, &ops, &waiter, &store, o).force(ID);
    let killed = ops.killed.borrow().clone();
    (force, killed, the_record(&w))
}

/// esbuild (102), portless, outlives its SIGTERM while vite and sh end: it is on no card, so
/// only the stop's record can tell the protect list names it.
#[test]
fn force_asks_the_protect_list_of_the_stops_record_itself() {
    use crate::model::protect::{Protect, ProtectList};
    let listed = StopOptions {
        protect: Protect::List(ProtectList {
            projects: vec![APP.into()],
            ..Default::default()
        }),
        ..opts()
    };
    let (r, killed, _) = force_after_of(102, listed, |_, _| {}, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.contains("on your protect list"), "{}", r.reason);
    assert!(killed.is_empty());
    let unreadable = StopOptions {
        protect: Protect::Unreadable("protect.toml could not be parsed".into()),
        ..opts()
    };
    let (r, killed, _) = force_after_of(102, unreadable, |_, _| {}, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(killed.is_empty());
}

#[test]
fn force_refuses_a_stop_made_before_the_machine_restarted() {
    let earlier = |w: &World, store: &Store| {
        let name = the_record_name(w);
        store
            .update::<Snapshot, _>(
                &name,
                crate::probe::Identity {
                    pid: 100,
                    start_time: 1000,
                },
                |s| s.boot_id = Some("an-earlier-boot".into()),
            )
            .unwrap();
    };
    let (r, killed, _) = force_after(opts(), earlier, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.contains("restarted"), "{}", r.reason);
    assert!(killed.is_empty());
}

/// A member that exec'd since its SIGTERM is the same process running another program: Force
/// sends it nothing, and neither its report nor the record says it is gone.
#[test]
fn force_sends_nothing_to_a_member_that_execd_and_says_it_still_runs() {
    let (r, killed, record) = force_after(
        opts(),
        |_, _| {},
        |ops| {
            ops.exec_on_pin.set(Some(101));
        },
    );
    assert!(killed.is_empty(), "{r:#?}");
    assert_eq!(outcome(&r, 101), MemberOutcome::StillRunning, "{r:#?}");
    assert!(!r.reason.contains("is gone"), "{}", r.reason);
    let line = record.outcomes.iter().find(|o| o.pid == 101).unwrap();
    assert_eq!(line.outcome, MemberOutcome::StillRunning);
}

fn the_record_name(w: &World) -> String {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    store.list::<Snapshot>("snap-").unwrap().records.remove(0).0
}
