//! `pier stop :PORT`, `pier scan :PORT` and `--dry-run` against real processes on Linux: the
//! test's own orphans in its own temp folder, on ports the kernel picked. Every scan is the
//! whole machine's (a port is), but only the test's own ports are asked about, and clean-up
//! signals only the test's processes, by identity.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;

use common::*;
use serde_json::Value;

/// `pier ARGS --json`; returns (exit code, document).
fn json(sb: &Sandbox, args: &[&str]) -> (i32, Value) {
    exit_and_json(&sb.pier_exact(&[args, &["--json"]].concat()))
}

/// A server on 127.0.0.1 and ::1 at one port is one holder; a dry run by its port runs every
/// check and sends nothing; the stop by its port stops it and frees the port.
#[test]
fn a_green_server_is_stopped_by_its_port_after_a_dry_run_that_sent_nothing() {
    if fixtures_cannot_be_orphans("stop by port") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--also-host", "::1"], |_| true);
    let port = server["port"].as_u64().unwrap();
    let at = format!(":{port}");

    let (code, scan) = json(&sb, &["scan", &at, "--sample-ms", "100"]);
    assert_eq!(code, 0);
    let answer = &scan["port"];
    assert_eq!(answer["holders"].as_array().unwrap().len(), 1, "{answer:#}");
    let mut listeners: Vec<&str> = answer["holders"][0]["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    listeners.sort_unstable();
    assert_eq!(
        listeners,
        [format!("127.0.0.1:{port}"), format!("[::1]:{port}")]
    );
    let id = answer["stops"]
        .as_str()
        .expect("green: it would stop it")
        .to_owned();
    assert_eq!(
        scan["projects"].as_array().unwrap().len(),
        1,
        "only the holder's card"
    );

    let (code, dry) = json(&sb, &["stop", &at, "--dry-run", "--sample-ms", "100"]);
    assert_eq!(code, 0, "{dry:#}");
    assert_eq!(dry["dry_run"], true);
    let r = &dry["results"][0];
    assert_eq!(r["result"], "would_stop", "{dry:#}");
    assert_eq!(r["id"], id.as_str());
    let planned: Vec<u64> = r["would_signal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(
        planned,
        [pid(&server) as u64, server["ppid"].as_u64().unwrap()],
        "the server, then its sh: leaf to root"
    );
    assert!(r["snapshot"].is_null() && r["members"].as_array().unwrap().is_empty());
    assert_eq!(snapshots(&sb), 0, "a dry run writes no snapshot");
    assert!(alive(pid(&server)), "a dry run sends nothing");

    // Issue 41: a successful stop printed twelve lines, starting with an echo of the command
    // just typed; `npx kill-port` prints one. One resource stopped is exactly one line.
    let done = sb.pier_exact(&["stop", &at, "--sample-ms", "100"]);
    let text = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(0), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    let project = scan["projects"][0]["path"].as_str().unwrap();
    let line = format!("stopped vite in {project} (2 processes): {at} free, about ");
    assert!(text.starts_with(&line), "{text}");
    assert!(
        text.ends_with(&format!(" MB · pier restart {id}\n")),
        "{text}"
    );
    let history = sb.pier_exact(&["history", "--json"]);
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(history["snapshots"][0]["result"], "stopped", "{history:#}");
    wait_for("the port to be free", || {
        TcpStream::connect(("127.0.0.1", port as u16))
            .is_err()
            .then_some(())
    });
    let (code, free) = json(&sb, &["stop", &at]);
    assert_eq!(code, 0, "a free port is what was asked for");
    assert!(free["ports"][0]["holders"].as_array().unwrap().is_empty());
    assert!(free["results"].as_array().unwrap().is_empty());
}

/// Found by an independent review: the stop's line said ":PORT free" while another process of
/// the user's still listened on `[::1]:PORT`. Free is what nothing listens on once the stop ended.
#[test]
fn a_port_another_process_still_listens_on_is_not_called_free() {
    if fixtures_cannot_be_orphans("a port still held") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let Ok(other) = std::net::TcpListener::bind(("::1", port)) else {
        eprintln!("skipped: no IPv6 loopback here");
        return;
    };
    let id = id_of(&server);
    let done = sb.pier_exact(&["stop", &id, "--sample-ms", "100"]);
    let text = String::from_utf8_lossy(&done.stdout);
    assert_eq!(done.status.code(), Some(0), "{text}");
    assert!(!text.contains(&format!(":{port} free")), "{text}");
    assert!(
        text.contains(&format!(":{port} still in use by another process")),
        "{text}"
    );
    drop(other);
    let server = sb.start_vite("again", &[], |_| true);
    let (code, doc) = json(&sb, &["stop", &id_of(&server), "--sample-ms", "100"]);
    assert_eq!(code, 0, "{doc:#}");
    let port = server["port"].as_u64().unwrap();
    assert_eq!(
        doc["results"][0]["freed_ports"],
        serde_json::json!([port]),
        "{doc:#}"
    );
    assert_eq!(
        doc["results"][0]["ports_still_held"],
        serde_json::json!([]),
        "{doc:#}"
    );
}

/// A client on the port: nothing is stopped, the client is named by its pid, and a stop
/// anyway is offered by the holder's id, never by port.
#[test]
fn a_port_with_a_live_client_names_it_and_offers_a_stop_anyway_by_id() {
    if fixtures_cannot_be_orphans("stop by port, client") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let at = format!(":{port}");
    let (code, doc) = json(&sb, &["stop", &at, "--dry-run", "--sample-ms", "100"]);
    assert_eq!(code, 3, "{doc:#}");
    let answer = &doc["ports"][0];
    assert!(answer["stops"].is_null(), "{answer:#}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("pid {}: `", std::process::id())),
        "the client, this test, by its pid: {reason}"
    );
    let hint = answer["hint"].as_str().unwrap();
    let id = answer["holders"][0]["id"].as_str().unwrap();
    assert!(
        hint.contains(&format!("`pier stop --anyway {id}`")),
        "{hint}"
    );
    assert!(doc["results"].as_array().unwrap().is_empty());
    assert!(alive(pid(&server)));
    let text = sb.pier_exact(&["stop", &at]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(&format!("{at}  nothing stopped: vite (pid ")),
        "{text}"
    );
    assert!(alive(pid(&server)));
}

/// A listener that is no dev tool (python's own socket, in a folder that is no project) is
/// never Pier's: named with its pid, never stopped, no stop anyway offered.
#[test]
fn a_listener_that_is_no_dev_tool_is_named_and_left_alone() {
    let sb = Sandbox::new();
    let mut child = std::process::Command::new(python())
        .args(["-c", "import socket,sys,time\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1)\nprint(s.getsockname()[1], flush=True); time.sleep(120)"])
        .current_dir(sb.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let started = Started {
        pid: child.id(),
        start_time: start_time_of(child.id()).unwrap(),
    };
    sb.own(started);
    let (code, doc) = json(&sb, &["stop", &format!(":{port}")]);
    assert_eq!(code, 3, "{doc:#}");
    let answer = &doc["ports"][0];
    assert!(answer["stops"].is_null());
    assert_eq!(answer["holders"][0]["pid"], child.id(), "{answer:#}");
    assert!(answer["holders"][0]["id"].is_null(), "no card");
    assert!(!answer["hint"].as_str().unwrap().contains("--anyway"));
    assert!(alive(child.id()));
    let (code, scan) = json(&sb, &["scan", &format!(":{port}"), "--sample-ms", "0"]);
    assert_eq!(code, 0);
    // Ours, once (another family's listener on the same number would be someone else's).
    let ours: Vec<&Value> = scan["other_listeners"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["pid"] == child.id())
        .collect();
    assert_eq!(ours.len(), 1, "{scan:#}");
    assert_eq!(ours[0]["address"], "127.0.0.1", "{scan:#}");
    assert!(scan["projects"].as_array().unwrap().is_empty());
    kill_by_identity(started);
    let _ = child.wait();
}

/// This test's own socket, in the repository (a project): a candidate, but an ancestor of
/// Pier, so protected — and no stop anyway is offered.
#[test]
fn a_port_held_by_an_ancestor_of_pier_is_never_offered_even_to_a_stop_anyway() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let sb = Sandbox::new();
    let (code, doc) = json(&sb, &["stop", &format!(":{port}")]);
    assert_eq!(code, 3, "{doc:#}");
    let answer = &doc["ports"][0];
    assert!(answer["stops"].is_null());
    assert_eq!(
        answer["hint"], "Pier never stops it, not even with --anyway",
        "{answer:#}"
    );
}

#[test]
fn a_port_is_written_as_a_colon_and_a_number() {
    let sb = Sandbox::new();
    for (args, said) in [
        (&["stop", ":0"][..], "is not a port"),
        (&["stop", ":http"], "is not a port"),
        (&["stop", "--force", ":3000"], "never by port"),
        (&["scan", "3000"], "takes a port as :PORT"),
    ] {
        let out = sb.pier_exact(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{args:?}: {err}");
    }
}

/// `--dry-run` on a batch: every green resource in scope would be stopped, none is.
#[test]
fn a_dry_run_of_all_green_sends_nothing_and_writes_nothing() {
    if fixtures_cannot_be_orphans("dry run batch") {
        return;
    }
    let sb = Sandbox::new();
    let a = sb.start_vite("a", &[], |_| true);
    let b = sb.start_vite("b", &[], |_| true);
    let out = sb.pier(&[
        "stop",
        "--all-green",
        "--dry-run",
        "--json",
        "--sample-ms",
        "100",
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{doc:#}");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{doc:#}");
    assert!(
        results.iter().all(|r| r["result"] == "would_stop"),
        "{doc:#}"
    );
    assert_eq!(snapshots(&sb), 0);
    assert!(alive(pid(&a)) && alive(pid(&b)));
    let text = sb.pier(&["stop", "--all-green", "--dry-run", "--sample-ms", "100"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.ends_with("2 of 2 would be stopped (--dry-run: nothing was sent or written)\n"),
        "{text}"
    );
}
