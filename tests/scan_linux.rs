//! `pier scan` against real processes and sockets on Linux. Every fixture is a real process
//! started as an orphan in the test's own temporary folder; every scan is scoped to that
//! folder with `--under`; every clean-up signals only the test's processes, by identity.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;

use common::*;
use serde_json::Value;

fn port(v: &Value) -> u16 {
    v["port"].as_u64().unwrap() as u16
}

#[test]
fn an_orphaned_dev_server_is_green_with_its_port_pid_and_project() {
    if fixtures_cannot_be_orphans("an_orphaned_dev_server_is_green_with_its_port_pid_and_project") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let scan = sb.scan(&[]);
    let (project, r) = resource_with(&scan, pid(&server)).expect("the fixture is found");
    assert_eq!(r["level"], "green", "{r:#}");
    assert_eq!(r["kind"], "vite");
    assert_eq!(project["name"], "app");
    assert_eq!(project["marker"], "package.json");
    assert_eq!(
        Some(project["path"].as_str().unwrap()),
        sb.path().join("app").canonicalize().unwrap().to_str()
    );
    let ports = r["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["port"], port(&server));
    assert_eq!(ports[0]["address"], "127.0.0.1");
    assert_eq!(ports[0]["pid"], pid(&server));
    assert!(evidence_kinds(&r).contains(&"orphaned".to_owned()));
    assert_eq!(scan["schema"], 1);
    assert!(r["activity"]["window_ms"].as_u64().unwrap() >= 100);
}

/// A server holding 50 MiB of its own shows at least that much on its card, proportional,
/// member by member and summed; the text card says it, and the line under the counts says
/// about what stopping the green would free.
#[test]
fn a_dev_server_holding_50_mib_shows_it_on_its_card_and_in_what_the_green_would_free() {
    if fixtures_cannot_be_orphans("a_dev_server_holding_50_mib_shows_it") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--hold-mb", "50"], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the fixture is found");
    assert_eq!(r["level"], "green", "{r:#}");
    let bytes = |v: &Value| v["memory"]["bytes"].as_u64().unwrap();
    assert!(bytes(&r) >= 50 << 20, "{r:#}");
    assert_eq!(r["memory"]["kind"], "proportional", "{r:#}");
    let members = r["members"].as_array().unwrap();
    assert_eq!(
        members.iter().map(bytes).sum::<u64>(),
        bytes(&r),
        "the card's figure is its members' added up: {r:#}"
    );

    let out = sb.pier(&["scan", "--sample-ms", "0"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let card = text
        .lines()
        .find(|l| l.contains(&format!("pids {} ", members[0]["pid"])))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(card.contains(" MB (proportional)  id "), "{card}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("1 green resource(s) would free about ")
                && l.ends_with(" MB (proportional)")),
        "{text}"
    );
}

#[test]
fn a_busy_dev_server_is_yellow_and_its_activity_is_measured() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--busy"], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["level"], "yellow", "{r:#}");
    let cpu = r["activity"]["cpu_percent"].as_f64().unwrap();
    assert!(cpu > 5.0, "a spinning thread shows: {cpu}%");
}

#[test]
fn a_held_client_connection_makes_it_red() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let _client = TcpStream::connect(("127.0.0.1", port(&server))).unwrap();
    sb.report("app", |r| r["accepted"] == 1);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["level"], "red", "{r:#}");
    let conns = r["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1);
    assert_eq!(
        conns[0]["peer_pid"],
        std::process::id(),
        "the peer is this test"
    );
    assert_eq!(conns[0]["internal"], false);
}

#[test]
fn a_connection_the_server_never_accepted_makes_it_red() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--no-accept"], |_| true);
    // The kernel completes the handshake into the accept queue; no process holds that socket.
    let _client = TcpStream::connect(("127.0.0.1", port(&server))).unwrap();
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["level"], "red", "{r:#}");
    assert!(evidence_kinds(&r).contains(&"live_connection".to_owned()));
}

#[test]
fn a_connection_between_two_members_does_not_count() {
    if fixtures_cannot_be_orphans("a_connection_between_two_members_does_not_count") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--self-connect"], |r| r["accepted"] == 1);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    let conns = r["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "the connection is seen: {r:#}");
    assert_eq!(conns[0]["internal"], true);
    assert_eq!(conns[0]["peer_pid"], server["children"][0]);
    assert_eq!(r["level"], "green", "{r:#}");
}

#[test]
fn ipv6_loopback_listeners_are_found_and_told_apart_from_ipv4_on_the_same_port() {
    if fixtures_cannot_be_orphans(
        "ipv6_loopback_listeners_are_found_and_told_apart_from_ipv4_on_the_same_port",
    ) {
        return;
    }
    let sb = Sandbox::new();
    let v4 = sb.start_vite("four", &[], |_| true);
    let p = port(&v4).to_string();
    let v6 = sb.start_vite("six", &["--host", "::1", "--port", &p], |_| true);
    let _client = TcpStream::connect(("::1", port(&v4))).unwrap();
    sb.report("six", |r| r["accepted"] == 1);

    let scan = sb.scan(&[]);
    let (_, six) = resource_with(&scan, pid(&v6)).expect("the ::1 listener is found");
    let (_, four) = resource_with(&scan, pid(&v4)).unwrap();
    assert_eq!(six["ports"][0]["address"], "::1");
    assert_eq!(six["ports"][0]["port"], port(&v4));
    assert_eq!(
        six["level"], "red",
        "the client connected to [::1]: {six:#}"
    );
    assert_eq!(four["level"], "green", "127.0.0.1 has no client: {four:#}");
}

#[test]
fn a_process_named_with_spaces_and_parens_keeps_its_kernel_start_time() {
    let sb = Sandbox::new();
    // Read before the rename, by the fixture itself; the name mimics the fields after it.
    let server = sb.start_vite("app", &["--name", "'a) R 1 2 (b c'"], |_| true);
    wait_for("the rename", || {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", pid(&server))).ok()?;
        (comm.trim_end() == "a) R 1 2 (b c").then_some(())
    });
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    let member = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pid"] == pid(&server))
        .unwrap()
        .clone();
    assert_eq!(member["command"], "a) R 1 2 (b c");
    assert_eq!(member["start_time"], server["start_time"]);
    assert_eq!(member["ppid"], server["ppid"]);
}

#[test]
fn a_sh_node_child_tree_is_one_resource_rooted_at_sh() {
    if fixtures_cannot_be_orphans("a_sh_node_child_tree_is_one_resource_rooted_at_sh") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--child"], |_| true);
    let scan = sb.scan(&[]);
    assert_eq!(resources(&scan).len(), 1, "{scan:#}");
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    let sh = server["ppid"].as_u64().unwrap();
    assert_eq!(r["root"]["pid"], sh);
    assert_eq!(r["root"]["start_time"], server["ppid_start_time"]);
    assert_eq!(r["id"], format!("{sh}-{}", server["ppid_start_time"]));
    let members: Vec<u64> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(
        members,
        vec![
            sh,
            server["pid"].as_u64().unwrap(),
            server["children"][0].as_u64().unwrap()
        ]
    );
    assert_eq!(r["members"][0]["argv"][0], "sh");
    assert_eq!(r["level"], "green", "{r:#}");
}

#[test]
fn a_listener_run_as_uid_65534_is_never_a_candidate() {
    if needs_root("a_listener_run_as_uid_65534_is_never_a_candidate") {
        return;
    }
    let sb = Sandbox::new();
    // The fixture must be able to reach its script and write its report as `nobody`.
    for dir in [sb.path().to_path_buf(), sb.path().join("reports")] {
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
    }
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let report = report.to_str().unwrap();
    sb.spawn_orphan(
        &project,
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            VITE,
            "--report",
            report,
        ],
    );
    let server = sb.report("app", |_| true);
    let uid = std::fs::read_to_string(format!("/proc/{}/status", pid(&server))).unwrap();
    assert!(
        uid.lines().any(|l| l.starts_with("Uid:\t65534")),
        "the fixture runs as 65534"
    );

    let scan = sb.scan(&["--all"]);
    assert!(resource_with(&scan, pid(&server)).is_none(), "{scan:#}");
    let others = scan["other_listeners"].as_array().unwrap();
    let listed = others
        .iter()
        .find(|l| l["port"] == port(&server))
        .expect("listed with --all");
    assert_eq!(
        listed["pid"],
        Value::Null,
        "another user's socket has no visible owner"
    );
}

#[test]
fn a_dev_server_inside_a_live_pty_session_is_yellow() {
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    sb.install(&sb.path().join("ptyhold.py"), "ptyhold.py");
    let report = sb.report_path("app");
    let cmd = format!("./{VITE} --report '{}'; true", report.display());
    let holder = sb.path().join("ptyhold.py");
    sb.spawn_orphan(&project, &[holder.to_str().unwrap(), "sh", "-c", &cmd]);
    let server = sb.report("app", |_| true);
    let sh = server["ppid"].as_u64().unwrap() as u32;
    let holder_pid = ppid_of(sh).unwrap();
    sb.own(Started {
        pid: sh,
        start_time: server["ppid_start_time"].as_u64().unwrap(),
    });
    sb.own(Started {
        pid: holder_pid,
        start_time: start_time_of(holder_pid).unwrap(),
    });

    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert_eq!(
        r["root"]["pid"],
        pid(&server),
        "the session's shell is not part of it"
    );
    let not_orphaned = r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "not_orphaned")
        .expect("not orphaned")
        .clone();
    assert!(
        not_orphaned["message"]
            .as_str()
            .unwrap()
            .contains("interactive shell"),
        "{not_orphaned:#}"
    );
}

#[test]
fn an_orphan_adopted_by_a_systemd_user_like_subreaper_is_orphaned() {
    if fixtures_cannot_be_orphans("an_orphan_adopted_by_a_systemd_user_like_subreaper_is_orphaned")
    {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    sb.install(&sb.path().join("subreaper.py"), "subreaper.py");
    let report = sb.report_path("app");
    let reaper = sb.path().join("subreaper.py");
    sb.spawn_orphan(
        &project,
        &[
            reaper.to_str().unwrap(),
            "setsid",
            "-f",
            VITE,
            "--report",
            report.to_str().unwrap(),
        ],
    );
    // The fixture's report is written before the re-parenting may have happened: wait for it.
    let server = sb.report("app", |_| true);
    let reaper_pid = wait_for("adoption by the subreaper", || {
        let parent = ppid_of(pid(&server))?;
        let comm = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
        (comm.trim_end() == "systemd").then_some(parent)
    });
    sb.own(Started {
        pid: reaper_pid,
        start_time: start_time_of(reaper_pid).unwrap(),
    });

    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["level"], "green", "{r:#}");
    let orphaned = r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "orphaned")
        .expect("orphaned")
        .clone();
    assert!(
        orphaned["message"].as_str().unwrap().contains("subreaper"),
        "{orphaned:#}"
    );
}

#[test]
fn a_dev_server_in_another_network_namespace_is_red() {
    // Its sockets live in tables of their own: Pier cannot see its connections, so it must
    // not call it safe.
    if needs_root("a_dev_server_in_another_network_namespace_is_red") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    sb.spawn_orphan(
        &project,
        &[
            "unshare",
            "--net",
            VITE,
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let server = sb.report("app", |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("found by its argv");
    assert_eq!(r["level"], "red", "{r:#}");
    assert!(evidence_kinds(&r).contains(&"connections_unreadable".to_owned()));
}

#[test]
fn piped_text_cards_have_no_colour_and_a_bad_folder_is_a_usage_error() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let out = sb.pier(&["scan", "--sample-ms", "0"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b'), "no escape codes when piped: {text}");
    assert!(
        text.contains(&format!("127.0.0.1:{}", port(&server))),
        "{text}"
    );
    assert!(text.contains("activity not sampled"), "{text}");

    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["scan", "--under"])
        .arg(sb.path().join("no-such-folder"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert!(
        err.starts_with("pier: --under "),
        "one sentence, no stack trace: {err}"
    );
}

/// `pier scan` run as a normal user (uid 65534), as users run it: other users' processes are
/// only sighted by its survey, and every rule still holds on what it reads of them on demand.
/// - the user's orphaned server: green;
/// - the user's server with a client of root's (the test's own connection, whose far end the
///   user cannot attribute): red, the connection counted;
/// - the user's `sh -c` tree holding a setuid-root member (another user's, by its effective
///   uid, found only through the children of `sh`): red; that member's `smaps_rollup` is
///   refused to the user, so its memory is its resident size, and the card's sum says
///   "resident" (while the user's own server reads "proportional");
/// - root's server in the same folder: never a candidate.
#[test]
fn a_scan_as_a_normal_user_keeps_every_rule_on_other_users_processes() {
    let test = "a_scan_as_a_normal_user_keeps_every_rule_on_other_users_processes";
    if needs_root(test) || fixtures_cannot_be_orphans(test) {
        return;
    }
    let sb = Sandbox::new();
    let mode = |m| std::os::unix::fs::PermissionsExt::from_mode(m);
    std::fs::set_permissions(sb.path(), mode(0o755)).unwrap();
    for dir in ["reports", "state"] {
        let dir = sb.path().join(dir);
        std::fs::set_permissions(&dir, mode(0o777)).unwrap();
    }
    // Pier where that user can run it, and a sleep that runs as root for whoever starts it.
    let bin = sb.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(pier_bin(), bin.join("pier")).unwrap();
    let suid = bin.join("suid-sleep");
    std::fs::copy("/bin/sleep", &suid).unwrap();
    std::fs::set_permissions(&suid, mode(0o4755)).unwrap();
    let as_user = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ];

    let start = |name: &str, cmd: String, user: bool| {
        let project = sb.project(name, VITE);
        let mut argv: Vec<&str> = if user { as_user.to_vec() } else { Vec::new() };
        argv.extend(["sh", "-c", &cmd]);
        sb.spawn_orphan(&project, &argv);
        let r = sb.report(name, |_| true);
        sb.own_parent(&r);
        r
    };
    let vite = |name: &str| {
        format!(
            "./{VITE} --report '{}'; true",
            sb.report_path(name).display()
        )
    };
    let mine = start("mine", vite("mine"), true);
    let held = start("held", vite("held"), true);
    let with_suid = start(
        "suid",
        format!("'{}' 600 & {}", suid.display(), vite("suid")),
        true,
    );
    let roots = start("roots", vite("roots"), false);
    // The setuid member: the child of `sh` that is not the server.
    let sh = with_suid["ppid"].as_u64().unwrap() as u32;
    let suid_pid = wait_for("the setuid sleep", || {
        let kids = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).ok()?;
        kids.split_whitespace()
            .filter_map(|k| k.parse::<u32>().ok())
            .find(|&k| k != pid(&with_suid))
    });
    sb.own(Started {
        pid: suid_pid,
        start_time: start_time_of(suid_pid).unwrap(),
    });
    let owner = std::os::unix::fs::MetadataExt::uid(
        &std::fs::metadata(format!("/proc/{suid_pid}")).unwrap(),
    );
    if owner != 0 {
        eprintln!("{test}: skipped: the temporary folder ignores setuid bits (nosuid)");
        return;
    }
    let _client = TcpStream::connect(("127.0.0.1", port(&held))).unwrap();

    let out = std::process::Command::new(as_user[0])
        .args(&as_user[1..])
        .arg("env")
        .arg(format!(
            "PIER_STATE_DIR={}",
            sb.path().join("state").display()
        ))
        .arg(format!(
            "PIER_CONFIG_DIR={}",
            sb.path().join("config").display()
        ))
        .arg("NO_COLOR=1")
        .arg(bin.join("pier"))
        .args(["scan", "--json", "--sample-ms", "100", "--under"])
        .arg(sb.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scan: Value = serde_json::from_slice(&out.stdout).unwrap();

    let (_, r) = resource_with(&scan, pid(&mine)).expect("the user's server is found");
    assert_eq!(r["level"], "green", "{r:#}");
    assert_eq!(r["memory"]["kind"], "proportional", "{r:#}");
    let (_, r) = resource_with(&scan, pid(&held)).expect("the held server is found");
    assert_eq!(r["level"], "red", "{r:#}");
    let live = r["connections"].as_array().unwrap();
    assert!(live.iter().any(|c| c["internal"] == false), "{r:#}");
    let (_, r) = resource_with(&scan, pid(&with_suid)).expect("the setuid tree is found");
    assert_eq!(r["level"], "red", "{r:#}");
    let member = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pid"] == suid_pid)
        .unwrap_or_else(|| panic!("the setuid member is a member: {r:#}"));
    assert_eq!(member["uid"], 0);
    assert_eq!(member["memory"]["kind"], "resident", "{member:#}");
    assert!(
        member["memory"]["bytes"].as_u64().unwrap() > 0,
        "{member:#}"
    );
    assert_eq!(r["memory"]["kind"], "resident", "a mixed sum: {r:#}");
    assert!(
        evidence_kinds(&r).contains(&"protected".to_owned()),
        "{r:#}"
    );
    assert!(
        resource_with(&scan, pid(&roots)).is_none(),
        "root's server is not the user's: {scan:#}"
    );
}
