//! The undo of automatic stops against real servers on Linux (issue 43, docs/design.md §5a):
//! a stop asked by a rule says so in `pier history`; `pier restart --last` restarts the last
//! stop a person asked for and names a newer automatic one; an automatic snapshot supersedes
//! the older automatic ones of the same command, never a person's, another command's or an
//! unfinished one. The automatic stops are driven through the engine's own stopper, with the
//! asker a rule or an armed stop would give, on fixtures under the test's own folder.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use common::*;
use pier_core::front::System;
use pier_core::model::RequestedBy;
use pier_core::stop::StopOptions;
use pier_core::store::Store;
use serde_json::Value;

fn rule() -> RequestedBy {
    RequestedBy::Rule {
        name: "idle 30 min".into(),
        because: Some("idle 42 min".into()),
    }
}

/// A green server's card id, once its card is green in a scan of the sandbox.
fn green_id(sb: &Sandbox, root: u32) -> String {
    wait_for("a green card", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, root)?;
        (r["level"] == "green").then(|| r["id"].as_str().unwrap().to_owned())
    })
}

/// Stops `id` through the engine's stopper as `who` asked; its report as JSON.
fn stop_as(sb: &Sandbox, id: &str, who: RequestedBy) -> Value {
    let system = System::new(Store::open_at(sb.path().join("state")).unwrap());
    let stopper = system.stopper(StopOptions {
        requested_by: who,
        sample: Duration::from_millis(100),
        ..Default::default()
    });
    let reports = stopper.stop_all(&[(id, None)], &mut |_| {});
    let r = serde_json::to_value(&reports[0]).unwrap();
    assert_eq!(r["result"], "stopped", "{r:#}");
    r
}

/// A person's stop at the CLI; its report.
fn stop_by_hand(sb: &Sandbox, id: &str) -> Value {
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id]);
    let (_, doc) = exit_and_json(&out);
    let r = doc["results"][0].clone();
    assert_eq!(r["result"], "stopped", "{doc:#}");
    r
}

/// `pier restart SNAPSHOT`, ready; the new server's report (its root registered).
fn restart(sb: &Sandbox, snapshot: &str, name: &str, old: u32) -> Value {
    let (code, r) = exit_and_json(&sb.pier_exact(&["restart", "--json", "--wait", "10", snapshot]));
    assert_eq!((code, &r["result"]), (0, &Value::from("ready")), "{r:#}");
    sb.own(Started {
        pid: r["pid"].as_u64().unwrap() as u32,
        start_time: r["start_time"].as_u64().unwrap(),
    });
    let after = sb.report(name, |v| v["pid"].as_u64() != Some(u64::from(old)));
    sb.own_parent(&after);
    after
}

fn record(sb: &Sandbox, name: &str) -> PathBuf {
    sb.path().join("state/records").join(format!("{name}.json"))
}

fn snap(r: &Value) -> String {
    r["snapshot"].as_str().unwrap().to_owned()
}

/// `sh -c 'vite --port P'` in project `name`: the same command at every restart.
fn server(sb: &Sandbox, name: &str) -> Value {
    let port = free_port().to_string();
    sb.start_vite(name, &["--port", &port], |_| true)
}

/// A copy of `of`'s record as an unfinished stop of the same command: no outcome yet.
fn plant_unfinished(sb: &Sandbox, of: &str) -> PathBuf {
    let mut v: Value = serde_json::from_slice(&std::fs::read(record(sb, of)).unwrap()).unwrap();
    for (k, to) in [
        ("result", Value::Null),
        ("reason", Value::Null),
        ("signalled", Value::Null),
        ("outcomes", Value::Array(vec![])),
    ] {
        v[k] = to;
    }
    let name = format!("snap-{}-1", v["id"].as_str().unwrap());
    let path = record(sb, &name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

#[test]
fn automatic_stops_are_named_in_history_left_out_of_last_and_supersede_their_own_kind() {
    if fixtures_cannot_be_orphans("the undo of automatic stops") {
        return;
    }
    let sb = Sandbox::new();
    let web = server(&sb, "web");
    let api = server(&sb, "api");

    // A person's snapshot of web's command, then a rule's, and a rule's of api.
    let by_hand = stop_by_hand(&sb, &green_id(&sb, id_root(&web)));
    let web2 = restart(&sb, &snap(&by_hand), "web", pid(&web));
    let first = stop_as(&sb, &green_id(&sb, id_root(&web2)), rule());
    let other = stop_as(&sb, &green_id(&sb, id_root(&api)), rule());

    let (_, h) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    let by = h["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["snapshot"] == first["snapshot"])
        .map(|e| e["requested_by"].clone())
        .unwrap();
    assert_eq!(
        by,
        serde_json::json!({"kind": "rule", "name": "idle 30 min", "because": "idle 42 min"})
    );
    let text = String::from_utf8(sb.pier_exact(&["history"]).stdout).unwrap();
    assert!(
        text.contains("by your rule 'idle 30 min': idle 42 min"),
        "{text}"
    );

    // The next automatic stop of web's command supersedes the first, and nothing else.
    let unfinished = plant_unfinished(&sb, &snap(&first));
    let web3 = restart(&sb, &snap(&first), "web", pid(&web2));
    let second = stop_as(&sb, &green_id(&sb, id_root(&web3)), RequestedBy::Armed);
    assert!(!record(&sb, &snap(&first)).exists(), "superseded");
    for kept in [&second, &by_hand, &other] {
        assert!(record(&sb, &snap(kept)).exists(), "{kept:#}");
    }
    assert!(unfinished.exists(), "an unfinished record stays");
    std::fs::remove_file(unfinished).unwrap();

    // --last: the person's stop, restarted; the newer automatic one named with its command.
    let out = sb.pier_exact(&["restart", "--last", "--wait", "10"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let after = sb.report("web", |v| v["pid"].as_u64() != Some(u64::from(pid(&web3))));
    sb.own_parent(&after);
    let left_out = format!(
        "the automatic stop of vite in {} at ",
        web3["cwd"].as_str().unwrap()
    );
    let line = said.lines().last().unwrap();
    assert!(line.starts_with(&left_out), "{said}");
    assert!(
        line.ends_with(&format!(
            "(by your armed stop) is not part of --last: `pier restart {}`",
            snap(&second)
        )),
        "{said}"
    );
    assert!(said.starts_with(&snap(&by_hand)), "{said}");
}

#[test]
fn with_only_automatic_stops_last_restarts_nothing_and_names_the_newest() {
    if fixtures_cannot_be_orphans("--last with only automatic stops") {
        return;
    }
    let sb = Sandbox::new();
    let web = server(&sb, "web");
    let stopped = stop_as(&sb, &green_id(&sb, id_root(&web)), rule());
    let out = sb.pier_exact(&["restart", "--last"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no stop you asked for"), "{err}");
    assert!(
        err.trim_end().ends_with(&format!(
            "(by your rule 'idle 30 min': idle 42 min) is not part of --last: `pier restart {}`",
            snap(&stopped)
        )),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let scan = sb.scan(&[]);
    assert!(
        resource_with(&scan, pid(&web)).is_none(),
        "nothing restarted"
    );
}

/// The root of a `start_vite` server's tree: its `sh`.
fn id_root(server: &Value) -> u32 {
    server["ppid"].as_u64().unwrap() as u32
}
