//! Results never contradict (issue 40): a stop whose signalled members all outlived their
//! signal is `not_stopped`, never "partially stopped"; a record of an attempt that sent nothing
//! keeps no environment, and one that signalled keeps it for its restart.

use super::*;
use crate::model::snapshot::Snapshot;

/// `tree()` with a secret in every member's environment.
fn with_secrets(hook: impl FnMut(&'static str, usize, &mut FakeProbe) + Send + 'static) -> World {
    let mut fake = tree();
    for pid in [100, 101, 102] {
        fake.environments
            .insert(pid, vec![b"API_TOKEN=hunter2".to_vec()]);
    }
    World {
        probe: Scripted::new(fake, hook),
        store_dir: tempfile::tempdir().unwrap(),
    }
}

fn record(w: &World, r: &StopReport) -> Snapshot {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    store.get(r.snapshot.as_deref().unwrap()).unwrap().unwrap()
}

#[test]
fn every_member_outliving_its_sigterm_is_not_stopped_never_partially() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.ignores_term.extend([100, 101, 102]);
    });
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.result, ResourceResult::NotStopped, "{r:#?}");
    assert!(
        r.reason.starts_with("pid 102 (")
            && r.reason
                .contains("still run after SIGTERM; wait and look again, or stop it where it runs"),
        "{}",
        r.reason
    );
    assert!(
        !r.reason.contains("after its signal"),
        "the survivors are named once: {}",
        r.reason
    );
    assert_eq!(record(&w, &r).result, Some(ResourceResult::NotStopped));
}

#[test]
fn one_member_ending_makes_it_partial_not_not_stopped() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.ignores_term.extend([100, 101]);
    });
    assert_eq!(outcome(&r, 102), MemberOutcome::Stopped, "{r:#?}");
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
}

#[test]
fn a_refusal_after_the_snapshot_keeps_no_environment() {
    // Socket read 2 is check (a): a client connects after the snapshot was written.
    let w = with_secrets(|call, n, p| {
        if call == "sockets" && n == 2 {
            client_on_5173(p);
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
    let snap = record(&w, &r);
    assert_eq!(snap.signalled, Some(false));
    assert!(snap.members.iter().all(|m| m.env.is_none()), "{snap:#?}");
}

#[test]
fn a_stop_that_signalled_keeps_the_environment_its_restart_needs() {
    let w = with_secrets(|_, _, _| {});
    let (r, _) = run(&w);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    let snap = record(&w, &r);
    assert!(
        snap.members.iter().all(|m| m.env
            == Some(vec![crate::model::bytes::ByteString(
                b"API_TOKEN=hunter2".to_vec()
            )])),
        "{snap:#?}"
    );
    assert_eq!(
        snap.newcomers,
        Some(Vec::new()),
        "the newcomers it named: none"
    );
}
