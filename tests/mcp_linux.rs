//! `pier mcp` driven by a real MCP client: the official Python SDK's stdio client
//! (tests/mcp/client.py, `mcp` pinned in tests/real_tools/python/mcp.txt, installed by
//! scripts/real-tools.sh into `$PIER_REAL_TOOLS/venv/mcp`), in the protocol version it
//! negotiates by default (2026-07-28, per-request metadata and inline questions) and in the
//! initialize handshake's (2025-11-25, `elicitation/create`). Without `PIER_REAL_TOOLS` those
//! tests say so and pass; the stdout test speaks raw JSON-RPC and always runs.
//!
//! The stops (`a_person_…`, `a_client_that_cannot_ask_…`) need the agent's own
//! (`agent::own`, merged separately) for the cards and plans.
#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::mcp::sdk_python;
use common::*;
use pier_core::agent::AgentError;
use serde_json::{json, Value};

/// Runs the client's `script` against `pier mcp ARGS` in `sb`'s state folder; its lines.
fn drive(sb: &Sandbox, python: &PathBuf, script: Value, args: &[&str]) -> Vec<Value> {
    let driver = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let out = Command::new(python)
        .arg(driver)
        .arg(script.to_string())
        .arg("--")
        .arg(pier_bin())
        .arg("mcp")
        .args(args)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .expect("the MCP client runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the client failed: {stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}")))
        .collect()
}

fn names(listed: &Value) -> Vec<&str> {
    let tools = listed["tools"].as_array().unwrap();
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

/// Every tool says whether it changes anything; `--read-only` lists only those that do not,
/// and refuses the rest by name with the read-only sentence.
#[test]
fn the_tools_carry_their_annotations_and_read_only_offers_no_stop() {
    let Some(py) = sdk_python("tools") else {
        return;
    };
    let sb = Sandbox::new();
    let lines = drive(&sb, &py, json!({"steps": [{"list": true}]}), &[]);
    assert_eq!(lines[0]["protocol"], "2026-07-28", "{lines:?}");
    let all = &lines[1];
    assert_eq!(
        names(all),
        [
            "cards",
            "carry_out",
            "history",
            "plan_stop",
            "restart",
            "who_holds_port"
        ]
    );
    let hints = |name: &str| {
        let t = all["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name);
        let a = &t.unwrap()["annotations"];
        (a["readOnlyHint"].as_bool(), a["destructiveHint"].as_bool())
    };
    for name in ["cards", "who_holds_port", "plan_stop", "history"] {
        assert_eq!(hints(name).0, Some(true), "{name}");
    }
    assert_eq!(hints("carry_out"), (Some(false), Some(true)));
    assert_eq!(hints("restart"), (Some(false), Some(false)));

    let calls = json!({"steps": [
        {"list": true},
        {"call": "plan_stop", "args": {"ids": ["1-1"]}},
        {"call": "carry_out", "args": {"plan": "feed"}},
        {"call": "restart", "args": {"snapshot": "snap-1-1-1"}},
    ]});
    let lines = drive(&sb, &py, calls, &["--read-only"]);
    assert_eq!(names(&lines[1]), ["cards", "history", "who_holds_port"]);
    for refusal in &lines[2..] {
        assert_eq!(refusal["is_error"], true, "{refusal}");
        assert_eq!(refusal["structured"]["refused"], "read_only", "{refusal}");
        assert_eq!(refusal["text"], AgentError::ReadOnly.to_string());
    }
}

/// A bad argument is a tool error in Pier's sentence, in both protocol versions: a bare
/// number for an id (as a string or a number), a relative or missing folder, port 0.
#[test]
fn a_bad_input_is_refused_in_a_sentence() {
    let Some(py) = sdk_python("bad input") else {
        return;
    };
    let sb = Sandbox::new();
    let gone = sb.path().join("gone");
    for mode in ["auto", "legacy"] {
        let script = json!({"mode": mode, "steps": [
            {"call": "plan_stop", "args": {"ids": ["1234"]}},
            {"call": "plan_stop", "args": {"ids": [1234]}},
            {"call": "cards", "args": {"under": ["code/shop"]}},
            {"call": "cards", "args": {"under": [gone]}},
            {"call": "who_holds_port", "args": {"port": 0}},
            {"call": "plan_stop", "args": {"ids": [], "force": true}},
        ]});
        let lines = drive(&sb, &py, script, &[]);
        let bad_id = AgentError::BadId("1234".into()).to_string();
        let want = [
            ("bad_id", bad_id.as_str()),
            ("bad_id", bad_id.as_str()),
            ("bad_folder", "not an absolute path"),
            ("bad_folder", "no such folder"),
            ("bad_port", "`0` is not a port"),
        ];
        for (line, (kind, words)) in lines[1..].iter().zip(want) {
            assert_eq!(line["is_error"], true, "{mode}: {line}");
            assert_eq!(line["structured"]["refused"], kind, "{mode}: {line}");
            assert!(
                line["text"].as_str().unwrap().contains(words),
                "{mode}: {line}"
            );
        }
        let unknown = &lines[6];
        assert_eq!(unknown["is_error"], true, "{mode}: {unknown}");
        assert!(unknown["text"]
            .as_str()
            .unwrap()
            .contains("unknown field `force`"));
    }
}

/// A green server in `sb`, and its id once a scan shows it green.
fn green_server(sb: &Sandbox, name: &str) -> (Value, String) {
    let server = sb.start_vite(name, &[], |_| true);
    let id = id_of(&server);
    wait_for("the server green", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, pid(&server))?;
        (r["level"] == "green").then_some(())
    });
    (server, id)
}

fn plan_and_carry_out(id: &str, mode: &str, elicit: Value) -> Value {
    json!({"mode": mode, "name": "test-agent", "elicit": elicit, "steps": [
        {"call": "plan_stop", "args": {"ids": [id]}},
        {"call": "carry_out", "args": {"plan": "$plan"}},
        {"call": "carry_out", "args": {"plan": "$plan"}},
    ]})
}

/// The person is asked, naming what stops, and their yes stops it: inline on 2026-07-28
/// (an `InputRequiredResult` the SDK fulfils and retries), by `elicitation/create` on
/// 2025-11-25. The plan is then used. (Needs `agent::own` merged.)
#[test]
fn a_person_confirms_the_stop_in_each_protocol() {
    let Some(py) = sdk_python("confirm") else {
        return;
    };
    for (mode, version) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let sb = Sandbox::new();
        let (server, id) = green_server(&sb, "app");
        let lines = drive(
            &sb,
            &py,
            plan_and_carry_out(&id, mode, json!("accept")),
            &[],
        );
        assert_eq!(lines[0]["protocol"], version);
        let done = &lines[2];
        assert_eq!(done["is_error"], false, "{mode}: {done}");
        assert_eq!(done["asked"].as_array().unwrap().len(), 1, "{mode}: {done}");
        assert!(
            done["asked"][0].as_str().unwrap().contains("test-agent"),
            "{done}"
        );
        assert_eq!(done["structured"]["person_asked"], true, "{done}");
        assert_eq!(
            done["structured"]["reports"][0]["result"], "stopped",
            "{done}"
        );
        wait_for("the server gone", || (!alive(pid(&server))).then_some(()));
        assert_eq!(
            lines[3]["structured"]["refused"], "used_plan",
            "{mode}: {}",
            lines[3]
        );
    }
}

/// A no (declined, dismissed, or the box left unticked) signals nothing and uses the plan.
#[test]
fn a_person_who_says_no_stops_nothing() {
    let Some(py) = sdk_python("decline") else {
        return;
    };
    let sb = Sandbox::new();
    let (server, id) = green_server(&sb, "app");
    for (mode, answer) in [
        ("auto", "decline"),
        ("legacy", "cancel"),
        ("auto", "accept-false"),
    ] {
        let lines = drive(&sb, &py, plan_and_carry_out(&id, mode, json!(answer)), &[]);
        let no = &lines[2];
        assert_eq!(no["structured"]["refused"], "declined", "{answer}: {no}");
        assert_eq!(no["asked"].as_array().unwrap().len(), 1, "{answer}: {no}");
        assert_eq!(lines[3]["structured"]["refused"], "used_plan", "{answer}");
        assert!(alive(pid(&server)), "{answer}: the server was stopped");
    }
    assert_eq!(snapshots(&sb), 0, "a declined stop wrote a snapshot");
}

/// A client with no elicitation is not asked; the reply says no person was. (Needs
/// `agent::own` merged.)
#[test]
fn a_client_that_cannot_ask_is_told_no_person_was_asked() {
    let Some(py) = sdk_python("no elicitation") else {
        return;
    };
    let sb = Sandbox::new();
    let (server, id) = green_server(&sb, "app");
    let lines = drive(&sb, &py, plan_and_carry_out(&id, "auto", Value::Null), &[]);
    let done = &lines[2];
    assert_eq!(done["structured"]["person_asked"], false, "{done}");
    assert!(
        done["text"]
            .as_str()
            .unwrap()
            .contains("No person was asked"),
        "{done}"
    );
    assert_eq!(
        done["structured"]["reports"][0]["result"], "stopped",
        "{done}"
    );
    wait_for("the server gone", || (!alive(pid(&server))).then_some(()));
}

/// Every byte `pier mcp` writes to stdout is a JSON-RPC message, one a line, with debug
/// logging on and a real scan, a refusal and an unknown tool answered: logs go to stderr.
#[test]
fn stdout_carries_only_protocol_frames() {
    let sb = Sandbox::new();
    let mut child = Command::new(pier_bin())
        .arg("mcp")
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("PIER_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pier mcp starts");
    let under = sb.path().to_str().unwrap();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "cards", "arguments": {"under": [under]}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "plan_stop", "arguments": {"ids": ["1234"]}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "no_such_tool", "arguments": {}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for r in &requests {
        writeln!(stdin, "{r}").unwrap();
    }
    // Every byte, in chunks as they come; the answers are counted as they arrive, and stdin
    // closes once all five are in (closing it earlier could cancel a call in flight).
    let mut stdout = child.stdout.take().unwrap();
    // Drained as it comes: a full pipe of debug logs would block the server.
    let mut err = child.stderr.take().unwrap();
    let logs = std::thread::spawn(move || {
        let mut text = String::new();
        err.read_to_string(&mut text).map(|_| text)
    });
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = stdout.read(&mut chunk) {
            let _ = tx.send(chunk[..n].to_vec());
        }
    });
    let mut bytes = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while String::from_utf8_lossy(&bytes).matches("\"id\":").count() < 5 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => bytes.extend(chunk),
            Err(e) => panic!(
                "not every request was answered ({e}): {}",
                String::from_utf8_lossy(&bytes)
            ),
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    bytes.extend(rx.try_iter().flatten());
    let stderr = logs.join().unwrap().unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(bytes.ends_with(b"\n"), "a partial frame");
    let text = String::from_utf8(bytes).expect("stdout is UTF-8");
    let mut ids = Vec::new();
    for line in text.lines() {
        let frame: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON-RPC frame ({e}): {line:?}"));
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
        ids.push(frame["id"].as_u64());
    }
    ids.sort();
    assert_eq!(ids, [Some(1), Some(2), Some(3), Some(4), Some(5)], "{text}");
    assert!(!stderr.is_empty(), "debug logging wrote nothing to stderr");
}

/// A signal ends `pier mcp` (after a stop under way reached its seam): its exit code is
/// 128 + the signal's number, and it does not wait for the client to write again.
#[test]
fn a_sigterm_ends_the_server_with_its_exit_code() {
    let sb = Sandbox::new();
    let mut child = Command::new(pier_bin())
        .arg("mcp")
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("pier mcp starts");
    let mut stdin = child.stdin.take().unwrap();
    let hello = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{hello}").unwrap();
    // Its answer to the handshake: the signal handler is in place by then.
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = wait_for("pier mcp to exit after SIGTERM", || {
        child.try_wait().unwrap()
    });
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
    drop(stdin);
}
