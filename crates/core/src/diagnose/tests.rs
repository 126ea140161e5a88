//! The diagnosis pipeline against the scripted probe: one test per rule of docs/design.md §2.

use std::path::Path;
use std::time::Duration;

use super::*;
use crate::model::card::{EvidenceKind, Level, Resource, Scan};
use std::os::unix::ffi::OsStrExt;

use crate::probe::fake::{process, FakeProbe, PIER_PID};
use crate::probe::{ActivityDelta, ProcessDetails};

pub(super) const APP: &str = "/home/u/app";

pub(super) fn markers(dir: &Path) -> Option<&'static str> {
    match dir.to_str()? {
        "/home/u/app" | "/home/u/other" => Some("package.json"),
        "/home/u" => Some(".git"),
        _ => None,
    }
}

pub(super) fn opts() -> ScanOptions {
    ScanOptions {
        sample: Duration::from_millis(100),
        home: Some("/home/u".into()),
        ..ScanOptions::default()
    }
}

/// The scan of `probe`, made three ways that must agree: from a survey of the user's own
/// (other users' processes read on demand, through lists of children), the same where the OS
/// lists no children (every sighted process read), and from a survey of everyone. Every rule
/// tested here is so tested against the reads on demand (`complete.rs`).
pub(super) fn run(probe: &FakeProbe) -> Scan {
    let once = || {
        let mut s = scan(probe, &opts(), &markers).expect("scan");
        s.scanned_at.clear();
        s
    };
    probe.survey_everyone.set(true);
    let everyone = once();
    probe.survey_everyone.set(false);
    probe.no_children_lists.set(true);
    let no_lists = once();
    probe.no_children_lists.set(false);
    let own = once();
    assert_eq!(
        own, everyone,
        "the user's own, read on demand, against everyone's"
    );
    assert_eq!(
        no_lists, everyone,
        "without lists of children, against everyone's"
    );
    own
}

/// An orphaned vite in `APP` listening on 127.0.0.1:5173: the green baseline.
fn orphan_vite() -> FakeProbe {
    FakeProbe::default()
        .with(
            process(100, 1, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("127.0.0.1:5173", 100)
}

pub(super) fn only(scan: &Scan) -> &Resource {
    assert_eq!(scan.projects.len(), 1, "{scan:#?}");
    assert_eq!(scan.projects[0].resources.len(), 1, "{scan:#?}");
    &scan.projects[0].resources[0]
}

pub(super) fn has(r: &Resource, kind: EvidenceKind) -> bool {
    r.evidence.iter().any(|e| e.kind == kind)
}

#[test]
fn an_orphaned_idle_known_tool_is_green_with_its_port_and_project() {
    let scan = run(&orphan_vite());
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert_eq!(r.kind, "vite");
    assert_eq!(r.id, "100-1000");
    assert_eq!(r.ports[0].port, 5173);
    assert_eq!(r.ports[0].pid, 100);
    assert_eq!(scan.projects[0].path, APP);
    assert_eq!(scan.projects[0].name, "app");
    assert_eq!(scan.projects[0].marker.as_deref(), Some("package.json"));
    assert!(has(r, EvidenceKind::Orphaned));
}

#[test]
fn a_client_connection_makes_it_red() {
    let probe = orphan_vite()
        .with(process(200, 1, &["firefox"]), "/home/u")
        .established("127.0.0.1:5173", "127.0.0.1:40000", Some(100))
        .established("127.0.0.1:40000", "127.0.0.1:5173", Some(200));
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Red);
    assert_eq!(r.connections[0].peer_pid, Some(200));
    assert_eq!(
        scan.projects[0].level,
        Level::Red,
        "a project is its worst resource"
    );
}

#[test]
fn a_connection_nobody_accepted_yet_makes_it_red() {
    let probe = orphan_vite().established("127.0.0.1:5173", "127.0.0.1:40000", None);
    assert_eq!(only(&run(&probe)).level, Level::Red);
}

#[test]
fn a_connection_between_members_does_not_count() {
    let probe = orphan_vite()
        .with(process(101, 100, &["node", "worker.js"]), APP)
        .established("127.0.0.1:5173", "127.0.0.1:40000", Some(100))
        .established("127.0.0.1:40000", "127.0.0.1:5173", Some(101));
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert!(r.connections[0].internal);
}

#[test]
fn unreadable_socket_tables_make_it_red() {
    let mut probe = orphan_vite();
    probe.sockets = None;
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Red);
    assert!(has(r, EvidenceKind::ConnectionsUnreadable));
}

#[test]
fn a_listener_of_unknown_kind_inside_a_project_is_yellow() {
    let probe = FakeProbe::default()
        .with(process(100, 1, &["python3", "server.py"]), APP)
        .listen("127.0.0.1:8000", 100);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::UnknownKind));
}

#[test]
fn a_listener_of_unknown_kind_outside_projects_is_only_listed_with_all() {
    let probe = FakeProbe::default()
        .with(process(100, 1, &["python3", "server.py"]), "/srv")
        .listen("127.0.0.1:8000", 100);
    assert!(run(&probe).projects.is_empty());
    let mut o = opts();
    o.include_others = true;
    let scan = scan(&probe, &o, &markers).unwrap();
    let others = scan.other_listeners.unwrap();
    assert_eq!(others.len(), 1);
    assert_eq!(others[0].pid, Some(100));
}

#[test]
fn another_users_tool_is_never_a_candidate() {
    let mut p = process(100, 1, &["vite"]);
    p.uid = 65534;
    let probe = FakeProbe::default()
        .with(p, APP)
        .listen("127.0.0.1:5173", 100);
    assert!(run(&probe).projects.is_empty());
}

#[test]
fn a_launch_chain_is_one_resource_rooted_at_its_launcher() {
    let probe = FakeProbe::default()
        .with(process(100, 1, &["sh", "-c", "vite"]), APP)
        .with(
            process(101, 100, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .with(
            process(102, 101, &["/home/u/app/node_modules/esbuild/bin/esbuild"]),
            APP,
        )
        .listen("127.0.0.1:5173", 101);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.root.pid, 100);
    let pids: Vec<u32> = r.members.iter().map(|m| m.pid).collect();
    assert_eq!(pids, vec![100, 101, 102]);
    assert_eq!(r.level, Level::Green);
}

#[test]
fn a_tool_under_a_live_interactive_shell_is_yellow() {
    let mut shell = process(50, 1, &["-zsh"]);
    shell.tty_nr = 34816;
    let mut vite = process(100, 50, &["vite"]);
    vite.session = 50;
    vite.tty_nr = 34816;
    let probe = FakeProbe::default().with(shell, "/home/u").with(vite, APP);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.root.pid, 100, "the shell is not part of the resource");
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::NotOrphaned));
}

#[test]
fn a_tool_whose_terminal_session_is_gone_is_orphaned_under_that_terminals_shell_only() {
    // Its parent is the terminal's shell, still alive, but the session leader has exited
    // and the kernel cleared the tty of the whole session.
    let world = || {
        let mut shell = process(60, 50, &["bash"]);
        shell.session = 50;
        let mut vite = process(100, 60, &["vite"]);
        vite.session = 50;
        FakeProbe::default().with(shell, "/home/u").with(vite, APP)
    };
    assert_eq!(only(&run(&world())).level, Level::Green);

    // An unknown live parent is never taken for an absent one: hung-up terminal or not.
    let mut vite = process(100, 60, &["vite"]);
    vite.session = 50;
    let unknown = FakeProbe::default()
        .with(process(60, 1, &["python3", "orchestrate.py"]), "/home/u")
        .with(vite, APP);
    let r = only(&run(&unknown)).clone();
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::NotOrphaned));

    let mut live = world();
    live.processes.push(process(50, 1, &["-bash"]));
    assert_eq!(
        only(&run(&live)).level,
        Level::Yellow,
        "the session leader still runs"
    );
    // A console login's session leader is `login`, root's: it runs all the same.
    let mut login = process(50, 1, &["login", "--", "u"]);
    login.uid = 0;
    let mut led_by_root = world();
    led_by_root.processes.push(login);
    assert_eq!(
        only(&run(&led_by_root)).level,
        Level::Yellow,
        "a session leader of another user's still runs"
    );
}

#[test]
fn a_subreapers_orphan_is_orphaned_unless_it_is_a_service() {
    let probe = FakeProbe::default()
        .with(process(40, 1, &["/lib/systemd/systemd", "--user"]), "/")
        .with(process(100, 40, &["vite"]), APP);
    assert_eq!(only(&run(&probe)).level, Level::Green);

    let mut service = probe;
    service.details.get_mut(&100).unwrap().cgroup = Some(Ok(
        "/user.slice/user-1000.slice/user@1000.service/app.slice/vite.service".into(),
    ));
    let r = only(&run(&service)).clone();
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::ServiceUnit));
}

#[test]
fn busy_or_unreadable_activity_is_yellow_and_no_sample_is_neutral() {
    let mut busy = orphan_vite();
    busy.activity.insert(
        100,
        Ok(ActivityDelta {
            cpu_ns: 50_000_000,
            io_bytes: 0,
        }),
    );
    let r = only(&run(&busy)).clone();
    assert_eq!(r.level, Level::Yellow, "50 ms of CPU in 100 ms is 50 %");
    assert!(r.activity.unwrap().cpu_percent > 40.0);

    let mut io = orphan_vite();
    io.activity.insert(
        100,
        Ok(ActivityDelta {
            cpu_ns: 0,
            io_bytes: 200_000,
        }),
    );
    assert_eq!(only(&run(&io)).level, Level::Yellow, "2 MB/s of disk I/O");

    let mut unreadable = orphan_vite();
    unreadable
        .activity
        .insert(100, Err("permission denied".into()));
    assert_eq!(only(&run(&unreadable)).level, Level::Yellow);

    let mut o = opts();
    o.sample = Duration::ZERO;
    let scan = scan(&busy, &o, &markers).unwrap();
    let r = only(&scan);
    assert_eq!(r.level, Level::Green);
    assert!(has(r, EvidenceKind::ActivityNotSampled));
    assert_eq!(scan.sample_ms, 0);
}

#[test]
fn a_member_whose_executable_cannot_be_read_is_yellow() {
    // A non-dumpable process: its start time is known, its exe is not (docs/design.md §2.6).
    let mut probe = orphan_vite();
    probe.details.get_mut(&100).unwrap().exe = Err("permission denied".into());
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::ExeUnreadable));
}

#[test]
fn a_process_that_exists_but_cannot_be_read_makes_every_resource_red() {
    // Its parent is unknown, so it may be a member of any resource.
    let mut probe = orphan_vite();
    probe
        .unreadable_processes
        .push(crate::probe::UnreadableProcess {
            pid: 555,
            uid: Some(crate::probe::fake::USER),
            error: "/proc/555/stat: permission denied".into(),
        });
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red);
    assert!(has(&r, EvidenceKind::IdentityUnreadable));

    let mut others = orphan_vite();
    others
        .unreadable_processes
        .push(crate::probe::UnreadableProcess {
            pid: 556,
            uid: Some(0),
            error: "x".into(),
        });
    assert_eq!(
        only(&run(&others)).level,
        Level::Green,
        "another user's cannot be ours"
    );
}

#[test]
fn a_member_in_another_network_namespace_is_red() {
    // Its sockets are in tables Pier did not read: nothing can be said of its connections.
    let mut probe = orphan_vite();
    probe
        .blind
        .push((100, "its sockets are in another network namespace".into()));
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red);
    assert!(has(&r, EvidenceKind::ConnectionsUnreadable));
}

#[test]
fn a_listening_socket_shared_with_an_outsider_is_yellow_and_its_clients_count() {
    let mut probe = orphan_vite()
        .with(process(300, 1, &["socket-holder"]), "/srv")
        .established("127.0.0.1:5173", "127.0.0.1:40000", None);
    probe.sockets.as_mut().unwrap()[0].owners.push(300);
    let r = only(&run(&probe)).clone();
    assert!(has(&r, EvidenceKind::SharedListener), "{r:#?}");
    assert_eq!(r.level, Level::Red, "the unaccepted client still counts");

    let mut quiet = orphan_vite().with(process(300, 1, &["socket-holder"]), "/srv");
    quiet.sockets.as_mut().unwrap()[0].owners.push(300);
    assert_eq!(only(&run(&quiet)).level, Level::Yellow);
}

#[test]
fn a_member_run_by_another_user_is_red() {
    let mut child = process(101, 100, &["node", "inspector.js"]);
    child.uid = 0;
    let probe = orphan_vite().with(child, APP);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red);
    assert!(
        r.evidence
            .iter()
            .any(|e| e.message.contains("another user's")),
        "{r:#?}"
    );
}

/// The user's → another user's → another user's → the user's, under one root: every member
/// is found through the other users' processes (a second round of lists of children: the
/// worker at the bottom is no candidate, so nothing climbs to them from below), and only what
/// the scan needs of the other users is read.
#[test]
fn a_tree_through_another_users_process_is_whole_and_nothing_else_is_read() {
    let mut sudo = process(101, 100, &["sudo", "sh", "-c", "npm run dev"]);
    sudo.uid = 0;
    let mut sh = process(102, 101, &["sh", "-c", "npm run dev"]);
    sh.uid = 0;
    let probe = orphan_vite().with(sudo, APP).with(sh, APP);
    let mut probe = probe.with(process(103, 102, &["node", "worker.js"]), APP);
    for pid in 2000..2300 {
        let mut idle = process(pid, 1, &["sleep", "3600"]);
        idle.uid = 0;
        probe.processes.push(idle);
    }
    let r = only(&run(&probe)).clone();
    let members: Vec<Pid> = r.members.iter().map(|m| m.pid).collect();
    assert_eq!(members, vec![100, 101, 102, 103], "{r:#?}");
    assert_eq!(r.level, Level::Red, "another user's member: {r:#?}");

    probe.read_later.borrow_mut().clear();
    scan(&probe, &opts(), &markers).unwrap();
    let read = probe.read_later.borrow().clone();
    assert!(
        !read.iter().any(|pid| (2000..2300).contains(pid)),
        "no idle process of another user's is read: {read:?}"
    );
}

#[test]
fn a_member_without_argv_still_has_its_connections_seen() {
    let mut child = process(101, 100, &[]);
    child.comm = "worker".into();
    let probe = orphan_vite()
        .with(child, APP)
        .listen("127.0.0.1:9229", 101)
        .established("127.0.0.1:9229", "127.0.0.1:40000", None);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red, "{r:#?}");
}

#[test]
fn a_lost_terminal_does_not_orphan_a_child_of_a_live_process_manager() {
    // `nohup foreman start &`: the shell and its terminal are gone, foreman still runs vite.
    let mut vite = process(100, 60, &["vite"]);
    vite.session = 50;
    let probe = FakeProbe::default()
        .with(process(60, 1, &["foreman", "start"]), APP)
        .with(vite, APP);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    assert!(has(&r, EvidenceKind::Managed));
    assert_eq!(r.managed_by.unwrap().manager, "foreman");
}

#[test]
fn a_member_whose_fd_table_cannot_be_read_is_yellow() {
    let mut probe = orphan_vite();
    probe.unreadable_fds.push((100, "permission denied".into()));
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Yellow);
    assert!(has(&r, EvidenceKind::FdTableUnreadable));
}

#[test]
fn pier_and_its_ancestors_are_red() {
    // `cargo watch -x 'run -- scan'`: Pier runs inside a dev tool's tree.
    let probe = FakeProbe::default()
        .with(process(100, 1, &["cargo", "watch", "-x", "run"]), APP)
        .with(process(101, 100, &["cargo", "run", "--", "scan"]), APP)
        .with(process(PIER_PID, 101, &["pier", "scan"]), APP);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red);
    let protected: Vec<&str> = r
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Protected)
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(
        protected,
        vec![
            "pid 100 is an ancestor of Pier",
            "pid 101 is an ancestor of Pier",
            &format!("pid {PIER_PID} is Pier itself"),
        ]
    );
}

#[test]
fn a_dev_tool_running_as_pid_1_is_red() {
    // A container whose init is the dev server.
    let mut probe = FakeProbe::default();
    probe.processes.clear();
    probe = probe.with(process(1, 0, &["vite"]), APP);
    probe.process_mut(1).uid = probe.uid;
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Red);
    assert!(
        r.evidence
            .iter()
            .any(|e| e.message == "pid 1 is init (PID 1)"),
        "{r:#?}"
    );
}

#[test]
fn a_process_that_vanished_mid_scan_is_left_out_without_failing() {
    let mut probe = orphan_vite().with(process(101, 100, &["esbuild"]), APP);
    probe.details.remove(&101);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.members.len(), 1);
    assert_eq!(r.level, Level::Green);
}

#[test]
fn non_utf8_argv_and_cwd_are_shown_with_replacement_characters() {
    let mut p = process(100, 1, &[]);
    p.argv = vec![
        b"/home/u/app/node_modules/.bin/vite".to_vec(),
        b"--x=\xff".to_vec(),
    ];
    // The kernel's name for it, as an exec of that file sets it.
    p.comm = "vite".into();
    let mut probe = FakeProbe::default().with(p, APP);
    probe.details.insert(
        100,
        ProcessDetails {
            exe: Ok("/usr/bin/node".into()),
            cwd: Ok(std::ffi::OsStr::from_bytes(b"/home/u/app/\xff").into()),
            cgroup: None,
        },
    );
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.members[0].argv[1], "--x=\u{fffd}");
    assert_eq!(r.members[0].cwd.as_deref(), Some("/home/u/app/\u{fffd}"));
    assert_eq!(
        scan.projects[0].path, APP,
        "the project is found above the odd folder"
    );
}

#[test]
fn under_keeps_only_projects_inside_the_folder() {
    let probe = orphan_vite().with(process(300, 1, &["vite"]), "/home/u/other");
    assert_eq!(run(&probe).projects.len(), 2);
    let mut o = opts();
    o.under = vec!["/home/u/other".into()];
    let scan = scan(&probe, &o, &markers).unwrap();
    assert_eq!(scan.projects.len(), 1);
    assert_eq!(scan.projects[0].path, "/home/u/other");
}

#[test]
fn home_is_never_the_project_of_a_stray_tool() {
    let probe = FakeProbe::default().with(process(100, 1, &["vite"]), "/home/u/scratch");
    let scan = run(&probe);
    assert_eq!(scan.projects[0].marker, None);
    assert_eq!(scan.projects[0].path, "/home/u/scratch");
}

#[test]
fn the_scan_carries_its_generation_and_schema() {
    let mut o = opts();
    o.generation = 7;
    let scan = scan(&orphan_vite(), &o, &markers).unwrap();
    assert_eq!(scan.generation, 7);
    assert_eq!(scan.schema, 1);
}

/// A survey reads argv only for names that could be tools; the launch chain above a tool and
/// the members below it are read on demand, so the card is what a full read would give.
#[test]
fn launchers_and_members_with_names_of_no_tool_are_still_judged_by_argv() {
    let mut npm = process(10, 1, &["npm", "run", "dev"]);
    npm.comm = "npm run dev".into();
    let helper = &[
        "/home/u/app/node_modules/.bin/lightningcss-helper",
        "--stdio",
    ];
    let probe = FakeProbe::default()
        .with(npm, APP)
        .with(process(11, 10, &["sh", "-c", "vite"]), APP)
        .with(
            process(12, 11, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .with(process(13, 12, helper), APP)
        .listen("127.0.0.1:5173", 12);
    let survey = probe.survey(&kinds::name_may_matter).unwrap();
    let unread: Vec<Pid> = survey
        .processes
        .processes
        .iter()
        .filter(|p| p.argv_unread)
        .map(|p| p.identity.pid)
        .collect();
    assert_eq!(unread, vec![1, 10, 11, 13], "the survey left these unread");
    let r = only(&run(&probe)).clone();
    assert_eq!(r.members[0].pid, 10, "npm run dev is the root: {r:#?}");
    let pids: Vec<Pid> = r.members.iter().map(|m| m.pid).collect();
    assert_eq!(pids, vec![10, 11, 12, 13]);
    assert_eq!(r.members[3].argv, helper.map(String::from).to_vec());
    assert_eq!(
        r.members[0].argv,
        ["npm", "run", "dev"].map(String::from).to_vec()
    );
}

/// A dev server that renamed itself and works outside any project is still known by its argv:
/// a survey reads the argv of every socket holder.
#[test]
fn a_renamed_listener_outside_any_project_is_still_known_by_argv() {
    let mut p = process(100, 1, &["node", "/tmp/scratch/node_modules/.bin/vite"]);
    p.comm = "my title".into();
    let probe = FakeProbe::default()
        .with(p, "/tmp/scratch")
        .listen("127.0.0.1:5173", 100);
    let scan = run(&probe);
    assert_eq!(only(&scan).kind, "vite", "{scan:#?}");
}

#[test]
fn a_pm2_app_is_yellow_and_names_pm2_its_program_and_the_command_that_stops_it() {
    let mut god = process(60, 1, &["PM2 v5.4.3: God Daemon (/home/u/.pm2)     "]);
    god.comm = "PM2 v5.4.3: God".into();
    let mut probe = FakeProbe::default()
        .with(god, "/home/u")
        .with(process(100, 60, &["node", "/home/u/app/server.js"]), APP)
        .listen("127.0.0.1:3000", 100);
    probe.environments.insert(
        100,
        ["name=api", "pm_id=0", "instances=1", "HOME=/home/u"]
            .iter()
            .map(|v| v.as_bytes().to_vec())
            .collect(),
    );
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Yellow);
    let m = r.managed_by.clone().expect("managed");
    assert_eq!(
        (m.manager.as_str(), m.pid, m.program.as_deref()),
        ("pm2", Some(60), Some("api"))
    );
    assert_eq!(m.stop_command.as_deref(), Some("pm2 stop 0"));
    let e = r
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::Managed)
        .expect("managed evidence");
    assert!(e.message.contains("`pm2 stop 0`"), "{}", e.message);
    assert!(
        !has(&r, EvidenceKind::NotOrphaned),
        "one piece of evidence says who holds it"
    );
}

#[test]
fn a_respawner_inside_the_resource_is_named_and_keeps_it_green() {
    let probe = FakeProbe::default()
        .with(
            process(100, 1, &["sh", "-c", "while true; do vite; done"]),
            APP,
        )
        .with(
            process(101, 100, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("127.0.0.1:5173", 101);
    let r = only(&run(&probe)).clone();
    assert_eq!(r.level, Level::Green, "{:#?}", r.evidence);
    assert_eq!(r.root.pid, 100, "the loop is part of the resource");
    assert_eq!(r.respawners.len(), 1);
    assert_eq!(r.respawners[0].pid, 100);
    assert!(r.respawners[0].how.contains("`while`"));
    assert!(has(&r, EvidenceKind::Respawner));
    assert_eq!(r.managed_by, None);
}

/// A card's memory is its members' added up, with their kind; one member's unread figure
/// leaves the card's unknown (a total without it would look smaller than the tree is), and
/// argues nothing: memory is shown, never judged.
#[test]
fn a_cards_memory_is_its_members_added_up_and_unknown_when_one_is_unread() {
    use crate::model::memory::{Memory, MemoryKind};
    let pss = |bytes| {
        Ok(Memory {
            bytes,
            kind: MemoryKind::Proportional,
        })
    };
    let mut probe = orphan_vite().with(process(101, 100, &["esbuild", "--service"]), APP);
    probe.memory.insert(100, pss(30_000_000));
    probe.memory.insert(101, pss(12_000_000));
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.memory, pss(42_000_000).ok());
    assert_eq!(r.members[1].memory, pss(12_000_000).ok());
    probe.memory.insert(101, Err("permission denied".into()));
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.memory, None);
    assert_eq!(r.members[0].memory, pss(30_000_000).ok());
    assert_eq!(r.level, Level::Green, "{r:#?}");
}
