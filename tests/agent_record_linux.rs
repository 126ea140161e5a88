//! Every action an agent asked for is on the record (issue 44 item 5, docs/design.md §7a):
//! through a real `Session` over a real engine and a real server, a plan the person declined,
//! a plan carried out after the server changed (a client connected: refused by the chain
//! before any snapshot), and a restart of what the agent did not stop — each shows in
//! `pier history` (the built binary) with the client's name, the target, the result and why.
#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::*;
use pier_core::agent::{AgentError, Client, Session, SessionOptions};
use pier_core::front::System;
use pier_core::store::Store;
use serde_json::Value;

const CLIENT: &str = "journal-test-client";

/// The session reads the protect list: an empty config folder of the test's, set once for
/// both tests (before either reads it).
fn empty_config() {
    static CONFIG: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    CONFIG.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("PIER_CONFIG_DIR", dir.path());
        dir
    });
}

fn session(sb: &Sandbox) -> Session {
    empty_config();
    let system = System::new(Store::open_at(sb.path().join("state")).unwrap());
    let client = Client {
        name: CLIENT.into(),
        process: None,
        since: 0,
    };
    let opts = SessionOptions {
        sample: Duration::from_millis(100),
        ..SessionOptions::default()
    };
    Session::new(system, client, opts)
}

/// The server's id once its card is green in a scan of the sandbox.
fn green_id(sb: &Sandbox, root: u32) -> String {
    wait_for("a green card", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, root)?;
        (r["level"] == "green").then(|| r["id"].as_str().unwrap().to_owned())
    })
}

/// `pier history --json`'s lines for the agent's requests.
fn agent_lines(sb: &Sandbox) -> Vec<Value> {
    let (code, doc) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    assert_eq!(code, 0, "{doc:#}");
    doc["agent_requests"].as_array().unwrap().clone()
}

#[test]
fn a_decline_a_refused_stop_and_a_refused_restart_are_on_the_record_with_the_client() {
    empty_config();
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let id = green_id(&sb, pid(&server));
    let mut agent = session(&sb);

    // The person says no.
    let plan = agent.plan(std::slice::from_ref(&id), &[], false).unwrap();
    let plan = plan.plan.expect("a green server is planned");
    let declined = agent.decline(&plan).unwrap();
    assert_eq!(declined.record_error, None);

    // The server changes after the plan: a client connects and holds the connection.
    let plan = agent
        .plan(std::slice::from_ref(&id), &[], false)
        .unwrap()
        .plan
        .unwrap();
    let port = server["port"].as_u64().unwrap() as u16;
    let _held = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    sb.report("web", |v| v["accepted"].as_u64() >= Some(1));
    let done = agent.carry_out(&plan).unwrap();
    let r = &done.reports[0];
    assert_eq!(r.result.as_str(), "refused", "{r:#?}");
    assert_eq!(r.snapshot, None, "refused before any snapshot: {r:#?}");
    assert_eq!(done.record_error, None);
    assert!(alive(pid(&server)), "nothing was signalled");

    // A restart of what this agent did not stop.
    let no = agent.restart("not-a-snapshot").unwrap_err();
    assert!(matches!(no, AgentError::NotYours(_)), "{no}");

    let lines = agent_lines(&sb);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines.iter().all(|l| l["client"] == CLIENT), "{lines:#?}");
    // Newest first.
    assert_eq!(
        (&lines[0]["action"], &lines[0]["id"], &lines[0]["result"]),
        (
            &"restart".into(),
            &"not-a-snapshot".into(),
            &"refused".into()
        )
    );
    assert_eq!(lines[0]["reason"], no.to_string());
    let stop = &lines[1];
    assert_eq!(
        (&stop["action"], &stop["id"], &stop["result"]),
        (&"stop".into(), &Value::from(id.as_str()), &"refused".into()),
        "{stop:#}"
    );
    assert_eq!(stop["reason"], r.reason.as_str());
    let reason = stop["reason"].as_str().unwrap();
    assert!(
        reason.contains("live connection"),
        "the chain's own reason: {reason}"
    );
    assert_eq!(stop["plan"], plan.as_str());
    assert_eq!(
        (&lines[2]["action"], &lines[2]["id"], &lines[2]["result"]),
        (
            &"declined".into(),
            &Value::from(id.as_str()),
            &"declined".into()
        )
    );

    // The text says the same, one line each, naming the client.
    let out = sb.pier_exact(&["history"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let by = format!("by the agent {CLIENT}: ");
    assert_eq!(text.matches(&by).count(), 3, "{text}");
    assert!(
        text.contains(&format!("REFUSED  stop of {id}  {by}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("DECLINED  stop of {id}  {by}")),
        "{text}"
    );
}

/// A record that cannot be written does not make a result a lie: the reply says so, and the
/// results are what happened. (The records folder is removed under the open store, so no
/// record can be created in it, root or not.)
#[test]
fn a_record_that_cannot_be_written_is_said_and_the_results_stay_honest() {
    empty_config();
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let id = green_id(&sb, pid(&server));
    let mut agent = session(&sb);
    std::fs::remove_dir(sb.path().join("state/records")).unwrap();

    let plan = agent
        .plan(std::slice::from_ref(&id), &[], false)
        .unwrap()
        .plan
        .unwrap();
    let declined = agent.decline(&plan).unwrap();
    assert!(declined.record_error.is_some(), "{declined:?}");

    // The server is gone before the plan is carried out: refused by the session's own check.
    let plan = agent
        .plan(std::slice::from_ref(&id), &[], false)
        .unwrap()
        .plan
        .unwrap();
    let root = pid(&server);
    kill_by_identity(Started {
        pid: root,
        start_time: server["start_time"].as_u64().unwrap(),
    });
    wait_for("the server gone", || (!alive(root)).then_some(()));
    let done = agent.carry_out(&plan).unwrap();
    let r = &done.reports[0];
    assert_eq!(r.result.as_str(), "refused", "{r:#?}");
    assert!(r.reason.contains("it is gone"), "{}", r.reason);
    let why = done
        .record_error
        .as_deref()
        .expect("the reply says it is not on the record");
    assert!(why.contains("could not be written"), "{why}");
}
