//! A glance's judgement (`Watch::look_at_children`): only a live child of the user's, absent at
//! check (e), of a parent of the lineage *by identity*, is a newcomer.

use super::*;
use crate::probe::fake::{process, USER};

fn id(pid: Pid) -> Identity {
    Identity {
        pid,
        start_time: u64::from(pid) * 10,
    }
}

/// At check (e): 100 (member) → 101 (member), and 300, someone else's process of the user's.
fn watch() -> Watch {
    Watch::new([id(100), id(101), id(300)], [id(100), id(101)])
}

#[test]
fn a_child_of_a_member_is_a_newcomer_then_its_own_child_one_of_a_newcomer() {
    let mut w = watch();
    let found = w.look_at_children(&[(id(100), process(102, 100, &["python", "worker"]))]);
    assert_eq!(found, vec![id(102)], "the next glance reads its children");
    assert_eq!(w.seen()[0].tie, Tie::ChildOfMember);
    assert_eq!(w.seen()[0].parent, 100);
    assert_eq!(w.seen()[0].command, "python worker");
    let found = w.look_at_children(&[(id(102), process(103, 102, &["sh"]))]);
    assert_eq!(found, vec![id(103)]);
    assert_eq!(w.seen()[1].tie, Tie::ChildOfNewcomer);
    assert_eq!(w.seen()[1].how(), "child of newcomer pid 102");
    assert!(
        w.look_at_children(&[(id(100), process(102, 100, &["python", "worker"]))])
            .is_empty(),
        "seen once, named once"
    );
    assert_eq!(w.seen().len(), 2);
}

#[test]
fn a_parent_matched_by_pid_but_not_by_identity_has_no_newcomer() {
    let mut w = watch();
    let other_on_100 = Identity {
        pid: 100,
        start_time: 7,
    };
    let found = w.look_at_children(&[(other_on_100, process(102, 100, &["x"]))]);
    assert!(found.is_empty() && w.seen().is_empty(), "{:?}", w.seen());
}

#[test]
fn a_zombie_a_process_of_check_e_and_a_stranger_s_child_are_none() {
    let mut w = watch();
    let mut zombie = process(103, 100, &["x"]);
    zombie.zombie = true;
    let old = process(300, 100, &["x"]);
    let strangers = process(104, 300, &["x"]);
    let found = w.look_at_children(&[(id(100), zombie), (id(100), old), (id(300), strangers)]);
    assert!(found.is_empty() && w.seen().is_empty(), "{:?}", w.seen());
}

/// A member's `sudo` runs as root (its effective uid): still the stop's newcomer, reported,
/// never signalled.
#[test]
fn another_user_s_child_of_a_member_is_a_newcomer() {
    let mut w = watch();
    let mut theirs = process(102, 100, &["sudo"]);
    theirs.uid = USER + 1;
    let found = w.look_at_children(&[(id(100), theirs)]);
    assert_eq!(found.len(), 1, "{:?}", w.seen());
}
