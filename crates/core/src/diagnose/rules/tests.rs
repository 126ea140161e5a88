//! One test per rule and per answer: yes, no, and "could not read".

use super::*;
use crate::probe::fake::process;

#[test]
fn the_worst_evidence_decides_the_level() {
    let g = listening_evidence("127.0.0.1", 1, None);
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
    let level = |d: Vec<ActivityDelta>| {
        activity_evidence(&ActivityFacts::Measured(named(d), w), t)
            .0
            .level
    };
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

/// Members 100, 101, … named "cmd 100", "cmd 101", …, in order.
fn named(deltas: Vec<ActivityDelta>) -> Vec<MemberActivity> {
    deltas
        .into_iter()
        .zip(100..)
        .map(|(delta, pid)| MemberActivity {
            pid,
            command: format!("cmd {pid}"),
            delta,
        })
        .collect()
}

fn cpu_ms(ms: u64) -> ActivityDelta {
    ActivityDelta {
        cpu_ns: ms * 1_000_000,
        io_bytes: 0,
    }
}

/// Found by trying uvicorn without watchfiles: "busy" said neither which process nor how much
/// of it, so a polling reloader could not be told from a server at work.
#[test]
fn busy_activity_names_the_busiest_member_its_figure_and_the_window() {
    let t = Thresholds::default();
    let w = Duration::from_millis(500);
    let facts = ActivityFacts::Measured(named(vec![cpu_ms(2), cpu_ms(77), cpu_ms(0)]), w);
    let (e, a) = activity_evidence(&facts, t);
    assert_eq!(e.level, Level::Yellow);
    assert_eq!(
        e.message,
        "busy over 500 ms: 15.8% CPU (more than 5%), 0 B/s disk I/O; the busiest member is \
         pid 101 (cmd 101), at 15.4% CPU"
    );
    let busiest = a.unwrap().busiest.unwrap();
    assert_eq!((busiest.pid, busiest.command.as_str()), (101, "cmd 101"));
    assert!((busiest.cpu_percent - 15.4).abs() < 1e-9);
}

#[test]
fn busy_disk_io_alone_names_the_member_doing_the_io() {
    let t = Thresholds::default();
    let w = Duration::from_secs(1);
    let writer = ActivityDelta {
        cpu_ns: 1_000_000,
        io_bytes: 2_300_000,
    };
    let facts = ActivityFacts::Measured(named(vec![cpu_ms(30), writer]), w);
    let (e, _) = activity_evidence(&facts, t);
    assert_eq!(
        e.message,
        "busy over 1000 ms: 3.1% CPU, 2.3 MB/s disk I/O (more than 1.0 MB/s); the busiest \
         member is pid 101 (cmd 101), at 2.3 MB/s disk I/O",
        "by disk I/O, not by CPU, when only disk I/O is over"
    );
}

#[test]
fn busy_on_both_counts_names_both_figures_of_the_busiest_by_cpu() {
    let t = Thresholds::default();
    let w = Duration::from_secs(1);
    let both = ActivityDelta {
        cpu_ns: 200_000_000,
        io_bytes: 5_000_000,
    };
    let (e, _) = activity_evidence(&ActivityFacts::Measured(named(vec![both]), w), t);
    assert_eq!(
        e.message,
        "busy over 1000 ms: 20.0% CPU (more than 5%), 5.0 MB/s disk I/O (more than 1.0 MB/s); \
         the busiest member is pid 100 (cmd 100), at 20.0% CPU and 5.0 MB/s disk I/O"
    );
}

#[test]
fn idle_activity_keeps_its_short_words() {
    let t = Thresholds::default();
    let w = Duration::from_millis(500);
    let (e, a) = activity_evidence(&ActivityFacts::Measured(named(vec![cpu_ms(1)]), w), t);
    assert_eq!(e.message, "idle over 500 ms: 0.2% CPU, 0 B/s disk I/O");
    assert_eq!(
        a.unwrap().busiest.unwrap().pid,
        100,
        "still named in the JSON"
    );
    let (e, a) = activity_evidence(&ActivityFacts::Measured(Vec::new(), w), t);
    assert_eq!(e.level, Level::Green);
    assert_eq!(a.unwrap().busiest, None, "no member measured");
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
