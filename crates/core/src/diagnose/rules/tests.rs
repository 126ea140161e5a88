//! One test per rule and per answer: yes, no, and "could not read".

use super::*;
use crate::probe::fake::process;
use crate::probe::ActivityDelta;

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

fn parentage<'a>(
    root: &'a ProcessInfo,
    parent: Option<(&'a ProcessInfo, Role)>,
    cgroup: Option<&'a Result<String, ProbeError>>,
) -> Parentage<'a> {
    Parentage {
        root,
        parent,
        session_leader_alive: true,
        cgroup,
        managed: None,
        place: None,
    }
}

/// Issue 40: "parent bash is a live interactive shell" said neither which shell nor what to
/// do; with its place read, the evidence names the pane and where to press Ctrl-C.
#[test]
fn a_live_shell_in_a_tmux_pane_is_named_with_where_to_press_ctrl_c() {
    let mut shell = process(20, 10, &["-bash"]);
    shell.comm = "bash".into();
    let root = process(30, 20, &["vite"]);
    let place = crate::model::client::Parent {
        program: "bash".into(),
        pid: 20,
        role: "interactive shell".into(),
        tty: Some("/dev/pts/3".into()),
        terminal: Some("tmux: server".into()),
        tmux: Some(crate::model::client::TmuxPane {
            session: Some("dev".into()),
            window: Some(2),
            pane: Some(1),
            pane_id: "%7".into(),
        }),
        screen: None,
    };
    let mut p = parentage(&root, Some((&shell, Role::InteractiveShell)), None);
    p.place = Some(&place);
    let e = orphan_evidence(&p);
    assert_eq!(
        (e.kind, e.level),
        (EvidenceKind::NotOrphaned, Level::Yellow)
    );
    assert_eq!(
        e.message,
        "parent bash (pid 20) is a live interactive shell in tmux pane dev:2.1 (%7): press \
         Ctrl-C in tmux pane dev:2.1 to stop it there"
    );
}

#[test]
fn adopted_by_init_is_orphaned_unless_a_service_runs_it_or_the_cgroup_cannot_be_read() {
    let init = process(1, 0, &["/sbin/init"]);
    let root = process(100, 1, &["vite"]);
    let scope = Ok("/user.slice/session-1.scope".to_owned());
    let unreadable = Err(ProbeError::from("permission denied"));
    let p = |cg| orphan_evidence(&parentage(&root, Some((&init, Role::Init)), cg));
    assert_eq!(p(Some(&scope)).kind, EvidenceKind::Orphaned);
    assert_eq!(
        p(None).kind,
        EvidenceKind::Orphaned,
        "no cgroups on this OS"
    );
    assert_eq!(p(Some(&unreadable)).level, Level::Yellow);

    // A service (its cgroup, read by `managers::systemd_unit`) is its manager's: named.
    let started = [b"INVOCATION_ID=5f2c".to_vec()];
    let unit = crate::diagnose::managers::systemd_unit(
        "/user.slice/u/user@1000.service/dev.service",
        Ok(crate::diagnose::managers::Env(&started)),
    )
    .unwrap();
    let mut service = parentage(&root, Some((&init, Role::Init)), Some(&scope));
    service.managed = Some(&unit);
    let e = orphan_evidence(&service);
    assert_eq!(
        (e.kind, e.level),
        (EvidenceKind::ServiceUnit, Level::Yellow)
    );
    assert!(
        e.message
            .contains("`systemctl --user stop dev.service` stops it there"),
        "{}",
        e.message
    );
}

#[test]
fn a_process_managers_program_is_yellow_and_named_with_its_stop_command() {
    let mut god = process(50, 1, &["PM2 v5.4.3: God Daemon (/h)"]);
    god.comm = "PM2 v5.4.3: God".into();
    let root = process(100, 50, &["node", "/p/server.js"]);
    let named = crate::model::managed::ManagedBy {
        manager: "pm2".into(),
        pid: Some(50),
        program: Some("api".into()),
        stop_command: Some("pm2 stop 0".into()),
        source: "environment and pm2's pid file".into(),
        note: None,
    };
    let mut p = parentage(&root, Some((&god, Role::ProcessManager)), None);
    p.managed = Some(&named);
    let e = orphan_evidence(&p);
    assert_eq!((e.kind, e.level), (EvidenceKind::Managed, Level::Yellow));
    assert!(
        e.message.contains("pm2 (pid 50) runs it as api")
            && e.message.contains("`pm2 stop 0` stops it there"),
        "{}",
        e.message
    );
    let unnamed = crate::model::managed::ManagedBy {
        program: None,
        stop_command: None,
        note: Some("its environment could not be read: denied".into()),
        ..named.clone()
    };
    p.managed = Some(&unnamed);
    let e = orphan_evidence(&p);
    assert_eq!(e.level, Level::Yellow);
    assert!(
        e.message
            .contains("parent PM2 v5.4.3: God (pid 50) is a live process manager (pm2)")
            && e.message.contains("denied"),
        "{}",
        e.message
    );
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
fn a_gone_terminal_orphans_only_a_child_of_that_terminals_shell() {
    // The shell of a terminal that hung up (its leader gone, the tty cleared for the whole
    // session), and still alive.
    let mut shell = process(60, 50, &["bash"]);
    shell.session = 50;
    let mut root = process(100, 60, &["vite"]);
    root.session = 50;
    let hung_up = |root: &ProcessInfo, parent: &ProcessInfo, role: Role| {
        let mut p = parentage(root, Some((parent, role)), None);
        p.session_leader_alive = false;
        orphan_evidence(&p)
    };
    assert_eq!(
        hung_up(&root, &shell, Role::InteractiveShell).kind,
        EvidenceKind::Orphaned
    );

    let mut with_tty = root.clone();
    with_tty.tty_nr = 34816;
    assert_eq!(
        hung_up(&with_tty, &shell, Role::InteractiveShell).kind,
        EvidenceKind::NotOrphaned,
        "the tty is still set"
    );
    let mut live_shell = shell.clone();
    live_shell.tty_nr = 34817;
    assert_eq!(
        hung_up(&root, &live_shell, Role::InteractiveShell).kind,
        EvidenceKind::NotOrphaned,
        "the parent is the shell of a live terminal"
    );
    let mut other_session = shell.clone();
    other_session.session = 70;
    assert_eq!(
        hung_up(&root, &other_session, Role::InteractiveShell).kind,
        EvidenceKind::NotOrphaned,
        "the parent is a shell of another session, not that terminal's"
    );
    // An unknown live parent still holds what it started, terminal or not.
    let other = process(60, 1, &["python3", "orchestrate.py"]);
    let e = hung_up(&root, &other, Role::Other);
    assert_eq!(
        (e.kind, e.level),
        (EvidenceKind::NotOrphaned, Level::Yellow)
    );
    assert!(e.message.contains("is a live process"), "{}", e.message);
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
            life: None,
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
         pid 101 (cmd 101), at 15.4% CPU: its CPU time over its life could not be read, so \
         whether waiting helps is unknown"
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
         member is pid 101 (cmd 101), at 2.3 MB/s disk I/O: its CPU time over its life could \
         not be read, so whether waiting helps is unknown",
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
         the busiest member is pid 100 (cmd 100), at 20.0% CPU and 5.0 MB/s disk I/O: its CPU \
         time over its life could not be read, so whether waiting helps is unknown"
    );
}

#[test]
fn waiting_helps_a_quiet_life_not_a_working_one_and_a_young_one_may_be_starting() {
    let two_hours = 7_200;
    assert_eq!(waiting_helps(Some((0.4, two_hours))), Waiting::MayHelp);
    assert_eq!(waiting_helps(Some((9.9, two_hours))), Waiting::MayHelp);
    assert_eq!(waiting_helps(Some((10.0, two_hours))), Waiting::WillNotHelp);
    assert_eq!(waiting_helps(Some((35.0, two_hours))), Waiting::WillNotHelp);
    assert_eq!(waiting_helps(Some((80.0, 5))), Waiting::Young);
    assert_eq!(
        waiting_helps(Some((80.0, YOUNG_SECONDS))),
        Waiting::WillNotHelp
    );
    assert_eq!(waiting_helps(None), Waiting::Unknown);
}

/// Issue 40: "busy" said which member and how much, but not whether waiting would help.
#[test]
fn busy_words_say_whether_waiting_helps_from_the_busiest_members_life() {
    let t = Thresholds::default();
    let w = Duration::from_secs(1);
    let with_life = |cpu_s: u64, age_seconds: u64| {
        let mut m = named(vec![cpu_ms(200)]);
        m[0].life = Some(crate::diagnose::judge::LifeSpent {
            cpu_ns: cpu_s * 1_000_000_000,
            age_seconds,
        });
        ActivityFacts::Measured(m, w)
    };
    // 29 s of CPU over 2 h: 0.4 % of a core.
    let (e, a) = activity_evidence(&with_life(29, 7_200), t);
    assert!(
        e.message.ends_with(
            "at 20.0% CPU: it has used 0.4% of a core over its 2 h life: this looks like a \
             burst, waiting may help"
        ),
        "{}",
        e.message
    );
    let b = a.unwrap().busiest.unwrap();
    assert!((b.life_cpu_percent.unwrap() - 0.4027).abs() < 1e-3);
    assert_eq!(b.age_seconds, Some(7_200));
    // 2,520 s of CPU over 2 h: 35 % of a core.
    let (e, _) = activity_evidence(&with_life(2_520, 7_200), t);
    assert!(
        e.message.ends_with(
            "it has worked for most of its 2 h life (35% of a core): waiting will likely not \
             help — it is working (a build, a poller)"
        ),
        "{}",
        e.message
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
        client: None,
    };
    let e = connection_evidence(&[c(true, Some(5)), c(false, None)], 0);
    assert_eq!(e[0].kind, EvidenceKind::InternalConnection);
    assert_eq!(e[0].level, Level::Green);
    assert_eq!(e[1].level, Level::Red);
    assert!(e[1].message.contains("a process Pier cannot see"));
    let queued = connection_evidence(&[], 3);
    assert_eq!(
        queued[0].level,
        Level::Red,
        "an accept queue holds live connections"
    );
    assert!(connection_evidence(&[], 0).is_empty());
}
