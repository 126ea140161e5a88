//! What users type that is no resource id, against the real `pier stop`: a bare number is a
//! question asked on a terminal only (a real pty), acted on by the id it resolved and never
//! from a pipe; a repeated target is done once; a mistyped id names the one it may have meant.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn runs(server: &Value) -> bool {
    start_time_of(pid(server)) == server["start_time"].as_u64() && alive(pid(server))
}

/// `pier stop ARGS` on a real pseudo-terminal (`fixtures/pty_answer.py`), typing `answer` at
/// its question (the number of the line naming `id`, for "y" at a numbered choice): the exit
/// code and everything shown on the terminal.
fn on_a_terminal(sb: &Sandbox, answer: &str, id: &str, args: &[&str]) -> (i32, String) {
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pty_answer.py");
    let out = Command::new(python())
        .arg(helper)
        .args([answer, id])
        .arg(pier_bin())
        .arg("stop")
        .args(args)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    (out.status.code().unwrap_or(-1), seen)
}

/// `pier stop ARGS` from a pipe that holds `stdin` (a script answering for a person).
fn piped(sb: &Sandbox, stdin: &str, args: &[&str]) -> std::process::Output {
    let mut child = Command::new(pier_bin())
        .arg("stop")
        .args(args)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn a_bare_number_on_a_terminal_is_asked_and_stopped_by_the_id_it_resolved_only_on_yes() {
    if fixtures_cannot_be_orphans("bare number on a pty") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let (id, n) = (id_of(&server), pid(&server).to_string());

    for no in ["n", ""] {
        let (code, seen) = on_a_terminal(&sb, no, &id, &[&n, "--sample-ms", "50"]);
        assert!(
            seen.contains(&format!("pid {n} is part of vite in ")) && seen.contains(&id),
            "{seen}"
        );
        assert!(
            seen.contains("? [") && seen.contains("nothing was stopped"),
            "{seen}"
        );
        assert_eq!(code, 3, "declined with {no:?}: {seen}");
        assert!(runs(&server), "declined with {no:?}: {seen}");
        assert_eq!(snapshots(&sb), 0, "nothing written: {seen}");
    }

    let (code, seen) = on_a_terminal(&sb, "y", &id, &[&n, "--sample-ms", "50"]);
    assert!(
        seen.contains("stopped vite in ") && seen.contains(&format!("pier restart {id}")),
        "{seen}"
    );
    assert_eq!(code, 0, "{seen}");
    assert_eq!(snapshots(&sb), 1, "the stop's own snapshot: {seen}");
    wait_for("the server to end", || (!runs(&server)).then_some(()));
}

#[test]
fn a_bare_number_from_a_pipe_stops_nothing_and_names_the_id_and_the_port() {
    if fixtures_cannot_be_orphans("bare number on a pipe") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let (id, n) = (id_of(&server), pid(&server).to_string());
    let port = server["port"].as_u64().unwrap().to_string();

    // A script answering "y" is no person: nothing is asked, read or acted on.
    for args in [vec![n.as_str()], vec![n.as_str(), "--json"], vec![&port]] {
        let out = piped(&sb, "y\n1\n", &args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains("nothing was stopped"), "{said}");
        assert!(said.contains(&id), "{args:?}: {said}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(runs(&server), "{args:?}: {said}");
    }
    // As a pid, the number names the resource and the command for it; as a port, who
    // holds it and the command for it.
    let out = piped(&sb, "", &[&n]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("pid {n} is part of vite in ")),
        "{said}"
    );
    assert!(said.contains(&format!("`pier stop {id}`")), "{said}");
    let out = piped(&sb, "", &[&port]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&format!(":{port} is held by vite")), "{said}");
    assert!(said.contains(&format!("`pier stop :{port}`")), "{said}");

    // Never past a "no", even on a terminal: the id to use is named instead.
    for flag in ["--anyway", "--force"] {
        let (code, seen) = on_a_terminal(&sb, "y", &id, &[flag, &n]);
        assert_eq!(code, 2, "{flag}: {seen}");
        assert!(
            seen.contains(&format!("`pier stop {id}`")),
            "{flag}: {seen}"
        );
        assert!(!seen.contains("? ["), "never asked: {seen}");
    }
    // Beside another target, not asked either.
    let out = piped(&sb, "y\n", &[&n, &id, "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(runs(&server));
    assert_eq!(snapshots(&sb), 0);
}

#[test]
fn a_repeated_port_or_id_is_done_once() {
    if fixtures_cannot_be_orphans("repeated targets") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let id = id_of(&server);
    let port = format!(":{}", server["port"].as_u64().unwrap());
    for args in [
        vec![port.as_str(), &port],
        vec![&id, &id],
        vec![&id, &port, &id],
    ] {
        let out = sb.pier_exact(
            &[
                &["stop", "--json", "--dry-run", "--sample-ms", "50"],
                &args[..],
            ]
            .concat(),
        );
        let (code, doc) = exit_and_json(&out);
        assert_eq!(code, 0, "{args:?}: {doc:#}");
        let results = doc["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{args:?}: {doc:#}");
        assert_eq!(results[0]["id"], id.as_str());
        let ports = doc["ports"].as_array().unwrap();
        assert!(ports.len() <= 1, "one port answer: {doc:#}");
    }
    // As text: the port's line once, and one report.
    let out = sb.pier_exact(&["stop", "--sample-ms", "50", &port, &port]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    assert_eq!(
        text.matches(&format!("pier restart {id}")).count(),
        1,
        "{text}"
    );
    // With -v, the port's line once, and one report.
    let server = sb.start_vite("again", &[], |_| true);
    let (id, port) = (
        id_of(&server),
        format!(":{}", server["port"].as_u64().unwrap()),
    );
    let out = sb.pier_exact(&["stop", "-v", "--sample-ms", "50", &port, &id, &port]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches(&format!("{port}  ")).count(), 1, "{text}");
    assert_eq!(text.matches(&format!("{id}  STOPPED")).count(), 1, "{text}");
    assert!(!runs(&server));
}

#[test]
fn a_mistyped_id_names_the_one_it_may_have_meant() {
    if fixtures_cannot_be_orphans("did you mean") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let id = id_of(&server);
    let (root, start) = id.split_once('-').unwrap();
    let start: u64 = start.parse().unwrap();

    // The start time one off: the root's pid is this id now.
    let typo = format!("{root}-{}", start + 1);
    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--json", &typo]));
    assert_eq!(code, 3);
    let reason = doc["results"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("pid {root} is now {id}")),
        "{reason}"
    );
    // A pid digit doubled: the one id within two edits.
    let typo = format!("{root}{}-{start}", &root[root.len() - 1..]);
    let (_, doc) = exit_and_json(&sb.pier_exact(&["stop", "--json", &typo]));
    let reason = doc["results"][0]["reason"].as_str().unwrap();
    assert!(reason.contains(&format!("did you mean {id}?")), "{reason}");
    // Malformed, and close to it: a usage error that names it.
    let out = sb.pier_exact(&["stop", &format!("{id}x")]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("is not a resource id") && said.contains(&format!("Did you mean {id}?")),
        "{said}"
    );
    // Words only: nothing was stopped.
    assert!(runs(&server));
    assert_eq!(snapshots(&sb), 0);
}

/// A card that is not green is never offered: a "y" would only be refused by the chain. Its
/// line says its level and the command that says why; nothing is asked, nothing is stopped.
#[test]
fn a_bare_number_naming_a_yellow_card_is_not_offered_and_nothing_is_asked() {
    if fixtures_cannot_be_orphans("yellow card by its pid") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let (id, n) = (id_of(&server), pid(&server).to_string());
    let port = server["port"].as_u64().unwrap() as u16;
    // A live client makes it yellow: a stop would refuse it.
    let _client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    // Its level, as the stop would say it: yellow or red, never offered.
    let line = format!(": `pier stop {id}` says why and what you can do");
    let level = |said: &str| {
        said.contains(&format!("(id {id}), yellow{line}"))
            || said.contains(&format!("(id {id}), red{line}"))
    };

    let (code, seen) = on_a_terminal(&sb, "y", &id, &[&n, "--sample-ms", "50"]);
    assert_eq!(code, 3, "{seen}");
    assert!(
        seen.contains(&format!("pid {n} is part of vite in ")) && level(&seen),
        "{seen}"
    );
    assert!(!seen.contains("? ["), "never asked: {seen}");
    assert!(
        !seen.contains("pier scan"),
        "its line is the way forward: {seen}"
    );
    // From a pipe, the same line.
    let out = piped(&sb, "y\n", &[&n]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(level(&said), "{said}");
    assert!(runs(&server), "{seen}");
    assert_eq!(snapshots(&sb), 0, "nothing written: {seen}");
}

/// A number no process has as its pid, and no listener as its port (one the kernel just gave
/// and took back).
fn a_number_naming_nothing() -> String {
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !Path::new(&format!("/proc/{port}")).exists() {
            return port.to_string();
        }
    }
}

/// A number that names nothing of Pier's ends with the command that lists what there is.
#[test]
fn a_bare_number_that_names_nothing_ends_with_pier_scan() {
    let sb = Sandbox::new();
    let n = a_number_naming_nothing();
    let scan = "`pier scan` lists what Pier can stop, with each id.\n";
    let out = piped(&sb, "", &[&n]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "no process has pid {n}\n  nothing listens on :{n}\n"
        )),
        "{said}"
    );
    assert!(said.ends_with(scan), "{said}");
    let (code, seen) = on_a_terminal(&sb, "y", "", &[&n]);
    assert_eq!(code, 3, "{seen}");
    assert!(seen.ends_with(scan), "{seen}");
    assert!(!seen.contains("? ["), "never asked: {seen}");
}

/// What a person answered is what the decline says; a dry run's port line checks, never says
/// it stops; a port written as an address (`5173:`, `localhost:5173`) is named as `:5173`.
#[test]
fn a_decline_a_dry_runs_port_and_an_address_are_said_as_they_are() {
    if fixtures_cannot_be_orphans("decline, dry run, address") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let (id, n) = (id_of(&server), pid(&server).to_string());
    let port = server["port"].as_u64().unwrap();

    let (code, seen) = on_a_terminal(&sb, "n", &id, &[&n, "--sample-ms", "50"]);
    assert_eq!(code, 3, "{seen}");
    assert!(
        seen.contains(&format!("pier: {n}: nothing was stopped (you answered no)")),
        "{seen}"
    );

    let at = format!(":{port}");
    let root = id.split_once('-').unwrap().0;
    let out = sb.pier_exact(&["stop", &at, "--dry-run", "-v", "--sample-ms", "50"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!(
            "{at}  vite (pid {root}, id {id}) holds it: checking it"
        )) && first.ends_with("stopping nothing"),
        "{text}"
    );
    assert!(!text.contains("stopping it"), "{text}");
    let (_, doc) = exit_and_json(&sb.pier_exact(&["stop", &at, "--dry-run", "--json"]));
    let reason = doc["ports"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("checking it as a stop would"), "{reason}");

    for typed in [format!("{port}:"), format!("localhost:{port}")] {
        let out = sb.pier_exact(&["stop", &typed]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains(&format!("Did you mean :{port}?")), "{said}");
        assert!(said.len() < 160, "one short sentence: {said}");
    }
    assert!(runs(&server));
    assert_eq!(snapshots(&sb), 0);
}
