//! `pier watch` fires armed stops against real servers, rescanning every second with a settle
//! of two (docs/design.md §5a): a client holds a server red, the user arms it, the client
//! leaves, and the stop fires once its closed connection has left the tables and the card has
//! been green for the settle, recorded as asked for by the armed stop; a client that comes back during the settle holds the firing off; a
//! busy server waits; an arm whose root's pid runs another process is dropped. Every scan is
//! scoped to the sandbox (`--under`), and the test's processes are ended by identity.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::watch::Watch;
use common::*;
use serde_json::Value;

/// The first line, within `secs`, that `f` picks; every line before it is passed to `seen`.
fn until<T>(
    watch: &Watch,
    what: &str,
    secs: u64,
    mut seen: impl FnMut(&Value),
    mut f: impl FnMut(&Value) -> Option<T>,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let Some((_, v)) = watch.next(deadline) else {
            panic!("pier watch: {what} did not happen within {secs} s");
        };
        if let Some(t) = f(&v) {
            return t;
        }
        seen(&v);
    }
}

/// This resource in a rescan line.
fn in_rescan<'v>(line: &'v Value, id: &str) -> Option<&'v Value> {
    (line["event"] == "rescan")
        .then(|| line["resources"].as_array())
        .flatten()?
        .iter()
        .find(|r| r["id"] == id)
}

/// A server held red by a client of the test's, armed: the server's report, its id, the
/// client.
fn armed_server(sb: &Sandbox, extra: &[&str]) -> (Value, String, Option<TcpStream>) {
    let server = sb.start_vite("web", extra, |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let busy = extra.contains(&"--busy");
    let client = (!busy).then(|| TcpStream::connect(("127.0.0.1", port)).unwrap());
    let id = id_of(&server);
    wait_for("the card to be held", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, pid(&server))?;
        (!against(&r).is_empty()).then_some(())
    });
    let out = sb.pier(&["stop", "--when-safe", &id, "--sample-ms", "200"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (server, id, client)
}

fn fired<'v>(line: &'v Value, id: &str) -> Option<&'v Value> {
    (line["event"] == "fired" && line["id"] == id).then_some(line)
}

#[test]
fn an_armed_stop_fires_once_the_client_leaves_and_the_card_stays_green_for_the_settle() {
    if fixtures_cannot_be_orphans("armed stop fired by pier watch") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id, client) = armed_server(&sb, &[]);
    let watch = Watch::start(&sb, 1, 2);
    // Armed and waiting for the client, which holds it: no firing.
    until(
        &watch,
        "the arm waiting for the client",
        20,
        |_| {},
        |l| {
            let r = in_rescan(l, &id)?;
            let waits = r["armed"]["waiting_for"][0].as_str()?;
            waits.contains("to leave").then_some(())
        },
    );
    // A normal close: the connection stays in the tables (TIME-WAIT) for a minute, and the card
    // counts as used until it is gone.
    drop(client);
    let left = Instant::now();
    let mut green_lines = 0;
    let line = until(
        &watch,
        "the armed stop",
        120,
        |l| {
            if in_rescan(l, &id).is_some_and(|r| r["level"] == "green") {
                green_lines += 1;
            }
        },
        |l| fired(l, &id).cloned(),
    );
    assert_eq!(line["report"]["result"], "stopped", "{line:#}");
    assert_eq!(line["kept"], false);
    assert!(
        green_lines >= 2,
        "it stayed green for the settle first ({green_lines} rescans)"
    );
    assert!(
        left.elapsed() >= Duration::from_secs(50),
        "not while its closed connection said it was used: {:?}",
        left.elapsed()
    );
    wait_for("the server to end", || (!alive(pid(&server))).then_some(()));
    // The record says who asked; the arm is gone.
    let (_, history) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    let entry = &history["snapshots"][0];
    assert_eq!(entry["requested_by"]["kind"], "armed", "{history:#}");
    let (_, arms) = exit_and_json(&sb.pier_exact(&["armed", "--json"]));
    assert_eq!(arms["arms"].as_array().map(Vec::len), Some(0), "{arms:#}");
}

#[test]
fn a_client_that_comes_back_during_the_settle_holds_the_firing_off() {
    if fixtures_cannot_be_orphans("armed stop held off by a returning client") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id, client) = armed_server(&sb, &[]);
    let port = server["port"].as_u64().unwrap() as u16;
    let watch = Watch::start(&sb, 1, 2);
    reset(client.unwrap());
    // Green, settling: the client comes back before the settle ends.
    until(
        &watch,
        "the settle to begin",
        20,
        |_| {},
        |l| {
            let r = in_rescan(l, &id)?;
            let waits = r["armed"]["waiting_for"].as_array()?;
            waits
                .iter()
                .any(|w| w.as_str().is_some_and(|w| w.starts_with("green for")))
                .then_some(())
        },
    );
    let _back = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // It waits for the client again, and nothing fired for the next five rescans.
    let mut rescans = 0;
    until(
        &watch,
        "five rescans with the client back",
        20,
        |_| {},
        |l| {
            assert!(fired(l, &id).is_none(), "fired with a client back: {l:#}");
            if in_rescan(l, &id).is_some() {
                rescans += 1;
            }
            (rescans >= 5).then_some(())
        },
    );
    assert!(alive(pid(&server)));
}

#[test]
fn a_busy_server_waits_and_is_never_fired() {
    if fixtures_cannot_be_orphans("armed stop of a busy server") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id, _) = armed_server(&sb, &["--busy"]);
    let watch = Watch::start(&sb, 1, 2);
    let mut rescans = 0;
    let waits = until(
        &watch,
        "five rescans of a busy server",
        30,
        |_| {},
        |l| {
            assert!(fired(l, &id).is_none(), "a busy server fired: {l:#}");
            let r = in_rescan(l, &id)?;
            rescans += 1;
            (rescans >= 5).then(|| r["armed"]["waiting_for"].clone())
        },
    );
    let waits = waits.to_string();
    assert!(waits.contains("CPU"), "it waits for its activity: {waits}");
    assert!(alive(pid(&server)));
}

#[test]
fn an_arm_whose_roots_pid_runs_another_process_now_is_dropped() {
    if fixtures_cannot_be_orphans("armed stop of a changed identity") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id, _client) = armed_server(&sb, &[]);
    // The same pid under another start time: what the record would name after a pid reuse.
    let records = sb.path().join("state/records");
    let mut arm: Value =
        serde_json::from_slice(&std::fs::read(records.join(format!("arm-{id}.json"))).unwrap())
            .unwrap();
    let start = arm["root"]["start_time"].as_u64().unwrap() - 1;
    let pid_ = arm["root"]["pid"].as_u64().unwrap();
    let old = format!("{pid_}-{start}");
    arm["root"]["start_time"] = start.into();
    arm["id"] = old.clone().into();
    let path = records.join(format!("arm-{old}.json"));
    std::fs::write(&path, serde_json::to_vec(&arm).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let watch = Watch::start(&sb, 1, 2);
    let line = until(
        &watch,
        "the drop",
        20,
        |_| {},
        |l| (l["event"] == "dropped" && l["id"] == old.as_str()).then(|| l.clone()),
    );
    assert!(
        line["why"]
            .as_str()
            .unwrap()
            .contains("runs another process or program now"),
        "{line:#}"
    );
    assert!(!path.exists(), "the dropped arm is removed");
    assert!(alive(pid(&server)), "a drop signals nothing");
}
