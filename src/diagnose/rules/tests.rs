//! One test per rule and per answer: yes, no, and "could not read".

use super::*;
use crate::probe::fake::process;

#[test]
fn the_worst_evidence_decides_the_level() {
    let g = listening_evidence("127.0.0.1", 1);
    let r = connections_unreadable("x");
    assert_eq!(level_of(std::slice::from_ref(&g)), Level::Green);
    assert_eq!(level_of(&[g, r]), Level::Red);
    assert_eq!(
        level_of(&[]),
        Level::Yellow,
        "no facts are not a reason to stop"
    );
}

#[test]
fn service_units_are_told_from_the_user_manager_and_scopes() {
    assert!(is_service_unit("/system.slice/nginx.service"));
    assert!(is_service_unit(
        "/user.slice/user-1000.slice/user@1000.service/app.slice/dev.service"
    ));
    assert!(!is_service_unit(
        "/user.slice/user-1000.slice/user@1000.service/app.slice/app-term.scope"
    ));
    assert!(!is_service_unit(
        "/user.slice/user-1000.slice/session-2.scope"
    ));
    assert!(!is_service_unit("/"));
}

fn parentage<'a>(
    root: &'a ProcessInfo,
    parent: Option<(&'a ProcessInfo, Role)>,
    cgroup: Option<&'a Result<String, String>>,
) -> Parentage<'a> {
    Parentage {
        root,
        parent,
        session_leader_alive: true,
        cgroup,
    }
}

#[test]
fn adopted_by_init_is_orphaned_unless_the_cgroup_says_service_or_cannot_be_read() {
    let init = process(1, 0, &["/sbin/init"]);
    let root = process(100, 1, &["vite"]);
    let scope = Ok("/user.slice/session-1.scope".to_owned());
    let service = Ok("/system.slice/vite.service".to_owned());
    let unreadable = Err("permission denied".to_owned());
    let p = |cg| orphan_evidence(&parentage(&root, Some((&init, Role::Init)), cg));
    assert_eq!(p(Some(&scope)).kind, EvidenceKind::Orphaned);
    assert_eq!(
        p(None).kind,
        EvidenceKind::Orphaned,
        "no cgroups on this OS"
    );
    assert_eq!(p(Some(&service)).level, Level::Yellow);
    assert_eq!(p(Some(&unreadable)).level, Level::Yellow);
}

#[test]
fn a_live_parent_or_an_unreadable_one_is_not_orphaned() {
    let root = process(100, 50, &["vite"]);
    let editor = process(50, 1, &["code"]);
    let e = orphan_evidence(&parentage(&root, Some((&editor, Role::Editor)), None));
    assert_eq!(e.level, Level::Yellow);
    assert!(e.message.contains("live editor"), "{}", e.message);
    let e = orphan_evidence(&parentage(&root, None, None));
    assert_eq!(e.kind, EvidenceKind::NotOrphaned);
    assert!(e.message.contains("could not be read"));
}

#[test]
fn a_gone_terminal_needs_both_a_dead_leader_and_no_tty() {
    let other = process(60, 1, &["python3", "x.py"]);
    let mut root = process(100, 60, &["vite"]);
    root.session = 50;
    let mut p = parentage(&root, Some((&other, Role::Other)), None);
    p.session_leader_alive = false;
    assert_eq!(orphan_evidence(&p).kind, EvidenceKind::Orphaned);

    let mut with_tty = root.clone();
    with_tty.tty_nr = 34816;
    let mut p = parentage(&with_tty, Some((&other, Role::Other)), None);
    p.session_leader_alive = false;
    assert_eq!(
        orphan_evidence(&p).kind,
        EvidenceKind::NotOrphaned,
        "the tty is still set"
    );
}

#[test]
fn activity_above_either_threshold_is_busy() {
    let t = Thresholds::default();
    let w = Duration::from_secs(1);
    let idle = ActivityDelta {
        cpu_ns: 49_000_000,
        io_bytes: 999_999,
    };
    let cpu = ActivityDelta {
        cpu_ns: 51_000_000,
        io_bytes: 0,
    };
    let io = ActivityDelta {
        cpu_ns: 0,
        io_bytes: 1_000_001,
    };
    let level =
        |d: Vec<ActivityDelta>| activity_evidence(&ActivityFacts::Measured(d, w), t).0.level;
    assert_eq!(level(vec![idle]), Level::Green);
    assert_eq!(level(vec![cpu]), Level::Yellow);
    assert_eq!(level(vec![io]), Level::Yellow);
    let half = ActivityDelta {
        cpu_ns: 30_000_000,
        io_bytes: 0,
    };
    assert_eq!(level(vec![half, half]), Level::Yellow, "members add up");
    assert_eq!(level(vec![]), Level::Green);
}

#[test]
fn unsampled_activity_is_neutral_and_unreadable_activity_is_not() {
    let t = Thresholds::default();
    let (e, a) = activity_evidence(&ActivityFacts::NotSampled, t);
    assert_eq!((e.level, a), (Level::Green, None));
    let (e, _) = activity_evidence(&ActivityFacts::Unreadable("EACCES".into()), t);
    assert_eq!(e.level, Level::Yellow);
}

#[test]
fn live_and_internal_connections_are_told_apart() {
    let c = |internal, peer_pid| Conn {
        local: "127.0.0.1:1".parse().unwrap(),
        peer: "127.0.0.1:2".parse().unwrap(),
        peer_pid,
        internal,
    };
    let e = connection_evidence(&[c(true, Some(5)), c(false, None)], 0);
    assert_eq!(e[0].kind, EvidenceKind::InternalConnection);
    assert_eq!(e[0].level, Level::Green);
    assert_eq!(e[1].level, Level::Red);
    assert!(e[1].message.contains("unattributed"));
    let queued = connection_evidence(&[], 3);
    assert_eq!(
        queued[0].level,
        Level::Red,
        "an accept queue holds live connections"
    );
    assert!(connection_evidence(&[], 0).is_empty());
}
