//! `pier stop --when-safe` and `pier armed` against a real server on Linux: a client the test
//! holds keeps it red, an arm is written to the sandbox's state folder, listed and cancelled;
//! a green server and a bad `--within` are refused. Every scan is scoped to the sandbox
//! (`--under`); nothing here fires an arm (the scheduler's tick does).
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;

use common::*;
use serde_json::Value;

/// The server's card in a scan of the sandbox, once `until` holds on it.
fn card_until(sb: &Sandbox, server: &Value, until: impl Fn(&Value) -> bool) -> Value {
    wait_for("the server's card", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, pid(server))?;
        until(&r).then_some(r)
    })
}

fn arm_record(sb: &Sandbox, id: &str) -> std::path::PathBuf {
    sb.path()
        .join("state/records")
        .join(format!("arm-{id}.json"))
}

#[test]
fn a_server_held_red_by_a_live_client_is_armed_listed_and_cancelled() {
    if fixtures_cannot_be_orphans("armed stop") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let r = card_until(&sb, &server, |r| {
        against(r).iter().any(|k| k == "live_connection")
    });
    let id = r["id"].as_str().unwrap().to_owned();

    let out = sb.pier(&["stop", "--when-safe", &id, "--sample-ms", "100", "--json"]);
    let (code, doc) = exit_and_json(&out);
    assert_eq!(code, 0, "{doc:#}");
    let answer = &doc["results"][0];
    assert_eq!(answer["result"], "armed", "{doc:#}");
    assert_eq!(answer["arm"]["id"], id.as_str());
    assert_eq!(answer["arm"]["armed_by"]["kind"], "cli");
    let waits = answer["waiting_for"][0].as_str().unwrap();
    assert!(waits.contains(&format!(":{port}")), "{waits}");
    let record: Value =
        serde_json::from_slice(&std::fs::read(arm_record(&sb, &id)).unwrap()).unwrap();
    assert_eq!(record["reasons"][0], "live_connection");
    let window = record["expires_at"].as_u64().unwrap() - record["armed_at"].as_u64().unwrap();
    assert_eq!(window, 8 * 3600, "the default expiry");
    assert!(record["boot_id"].is_string(), "{record:#}");

    let (code, listed) = exit_and_json(&sb.pier_exact(&["armed", "--json"]));
    assert_eq!(code, 0);
    assert_eq!(listed["arms"][0]["id"], id.as_str(), "{listed:#}");
    // Not a snapshot: `pier history` does not list it.
    let (_, history) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    assert_eq!(
        history["snapshots"].as_array().unwrap().len(),
        0,
        "{history:#}"
    );

    let out = sb.pier_exact(&["armed", "--cancel", &id]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!arm_record(&sb, &id).exists());
    let again = sb.pier_exact(&["armed", "--cancel", &id]);
    assert_eq!(again.status.code(), Some(3), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stdout).contains("has no armed stop"));
    assert!(alive(pid(&server)), "arming never stops anything");
}

#[test]
fn a_green_server_is_refused_with_the_plain_stop_as_the_way_forward() {
    if fixtures_cannot_be_orphans("armed stop of a green server") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let r = card_until(&sb, &server, |r| r["level"] == "green");
    let id = r["id"].as_str().unwrap().to_owned();
    let out = sb.pier(&["stop", "--when-safe", &id, "--sample-ms", "100"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("is safe to stop now: `pier stop {id}`")),
        "{text}"
    );
    assert!(!arm_record(&sb, &id).exists());
    assert!(alive(pid(&server)));
}

#[test]
fn a_bad_within_or_a_conflicting_flag_is_one_sentence_and_exit_2() {
    let sb = Sandbox::new();
    let out = sb.pier_exact(&["stop", "--when-safe", "17824-71008", "--within", "30s"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("pier: --within 30s: must be a duration from 1 min to 7 days"),
        "{err}"
    );
    let out = sb.pier_exact(&["stop", "--when-safe", "--anyway", "17824-71008"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--when-safe") && err.contains("--anyway"),
        "{err}"
    );
    let out = sb.pier_exact(&["stop", "--within", "1h", "17824-71008"]);
    assert_eq!(out.status.code(), Some(2), "--within without --when-safe");
    // Found by a new user: beside --dry-run, clap let it through, and a stop went ahead.
    for extra in [&["--within", "1h"][..], &["--yes"]] {
        let out = sb.pier_exact(&[&["stop", "--dry-run", "17824-71008"][..], extra].concat());
        assert_eq!(
            out.status.code(),
            Some(2),
            "{extra:?} without --when-safe: {out:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("go with --when-safe"), "{err}");
    }
}

/// `pier scan` shows arms but writes nothing: in a state folder with no records, it makes
/// none (found by CI: a scan that created `records/` changed what a later stop on a read-only
/// folder said).
#[test]
fn a_scan_reads_arms_but_writes_nothing_in_the_state_folder() {
    let sb = Sandbox::new();
    let _ = sb.scan(&[]);
    let left: Vec<_> = std::fs::read_dir(sb.path().join("state"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
