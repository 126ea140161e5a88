//! Automatic-stop rules fired by `pier watch` against real servers, with a threshold of
//! seconds (docs/design.md §5a): `rules.toml` in the sandbox's configuration folder says
//! `idle = "3s"`, the watch rescans every second, every scan is scoped to the sandbox
//! (`--under`). An idle server is stopped through the chain, recorded as asked for by the rule,
//! and `pier restart` brings it back (and the rule leaves the restarted one alone); a server
//! with a client is never stopped while the client holds it; a busy one waits; the cap holds
//! the second of two; a server started again by hand is left alone. The test's processes are
//! ended by identity.
//!
//! Not here: the back-off after a refusal against a real server. A refusal needs something to
//! use the server between the rescan that judged it due and the chain's checkpoints, and the
//! watch says nothing between the two, so no test can aim at that moment deterministically;
//! the judge's unit tests (`auto/rules/tests.rs`) pin the back-off.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::watch::Watch;
use common::*;
use serde_json::Value;

/// The rule every test here writes, a threshold of seconds.
const RULE: &str = "idle 3 s";

/// Writes `rules.toml` with one rule, idle 3 s, and `extra` above it (e.g. the cap).
fn rules(sb: &Sandbox, extra: &str) {
    let dir = sb.path().join("config");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!("{extra}\n[[rule]]\nname = \"{RULE}\"\nidle = \"3s\"\n");
    std::fs::write(dir.join("rules.toml"), text).unwrap();
}

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

fn ruled<'v>(line: &'v Value, id: &str) -> Option<&'v Value> {
    (line["event"] == "ruled" && line["id"] == id).then_some(line)
}

/// Watches `n` rescans that show `id`, failing on any rule's stop of it; the last note seen.
fn never_ruled(watch: &Watch, id: &str, n: usize, what: &str) -> Value {
    let mut seen = 0;
    until(
        watch,
        what,
        n as u64 * 3 + 20,
        |_| {},
        |l| {
            assert!(ruled(l, id).is_none(), "{what}: a rule stopped it: {l:#}");
            let r = in_rescan(l, id)?;
            assert_ne!(r["auto"]["state"], "due", "{what}: due: {r:#}");
            seen += 1;
            (seen >= n).then(|| r["auto"].clone())
        },
    )
}

/// Seconds of idle a rule's `because` names ("idle 4 s").
fn idle_seconds(because: &str) -> u64 {
    let s = because
        .strip_prefix("idle ")
        .and_then(|s| s.strip_suffix(" s"));
    s.and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("because {because:?} is not \"idle N s\""))
}

/// An idle server is stopped by the rule, after its idle time; the line says the rule and why.
fn stopped_by_rule(watch: &Watch, id: &str) -> Value {
    let mut due_seen = false;
    let line = until(
        watch,
        "the rule's stop",
        60,
        |l| {
            if in_rescan(l, id).is_some_and(|r| r["auto"]["state"] == "due") {
                due_seen = true;
            }
        },
        |l| ruled(l, id).cloned(),
    );
    assert!(due_seen, "the rescan before the stop said due");
    assert_eq!(line["rule"], RULE, "{line:#}");
    assert_eq!(line["report"]["result"], "stopped", "{line:#}");
    let idle = idle_seconds(line["because"].as_str().unwrap());
    assert!(idle >= 3, "stopped at idle {idle} s, before the rule's 3 s");
    line
}

#[test]
fn an_idle_server_is_stopped_by_the_rule_recorded_as_its_and_restart_brings_it_back() {
    if fixtures_cannot_be_orphans("rule stop of an idle server") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "");
    let port = free_port();
    let server = sb.start_vite("web", &["--port", &port.to_string()], |_| true);
    let id = id_of(&server);
    let watch = Watch::start(&sb, 1, 2);
    let line = stopped_by_rule(&watch, &id);
    eprintln!("ruled: {line}");
    wait_for("the server to end", || (!alive(pid(&server))).then_some(()));

    let (_, history) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    let by = &history["snapshots"][0]["requested_by"];
    assert_eq!(by["kind"], "rule", "{history:#}");
    assert_eq!(by["name"], RULE, "{history:#}");
    assert_eq!(by["because"], line["because"], "{history:#}");

    // The undo: the snapshot's command runs again and its port answers.
    let out = sb.pier_exact(&["restart", &id, "--json", "--wait", "30"]);
    let (_, restarted) = exit_and_json(&out);
    assert_eq!(restarted["result"], "ready", "{restarted:#}");
    let back = sb.report("web", |r| r["pid"] != server["pid"]);
    sb.own_parent(&back);
    wait_for("the restarted server's port", || {
        TcpStream::connect(("127.0.0.1", port)).ok().map(reset)
    });
    // Started again from the snapshot: the rule leaves it alone, and says why.
    let again = id_of(&back);
    let note = never_ruled(&watch, &again, 8, "the restarted server");
    assert_eq!(note["state"], "held", "{note:#}");
    assert!(
        note["why"].as_str().unwrap().contains("started again"),
        "{note:#}"
    );
    assert!(alive(pid(&back)));
}

#[test]
fn a_server_with_a_client_is_never_stopped_while_the_client_holds_it() {
    if fixtures_cannot_be_orphans("rule and a client") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "");
    let server = sb.start_vite("web", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let id = id_of(&server);
    let watch = Watch::start(&sb, 1, 2);
    // Three times the rule's idle time and more, held.
    let note = never_ruled(&watch, &id, 10, "a server with a client");
    eprintln!("with a client: {note}");
    assert!(alive(pid(&server)));
    // The client leaves (a reset: no TIME-WAIT row keeps it used for a minute); then it is
    // stopped, once the idle time has passed.
    reset(client);
    let left = Instant::now();
    stopped_by_rule(&watch, &id);
    assert!(
        left.elapsed() >= Duration::from_secs(3),
        "stopped {:?} after the client left, before the idle time",
        left.elapsed()
    );
}

#[test]
fn a_busy_server_waits() {
    if fixtures_cannot_be_orphans("rule and a busy server") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "");
    let server = sb.start_vite("web", &["--busy"], |_| true);
    let id = id_of(&server);
    let watch = Watch::start(&sb, 1, 2);
    let note = never_ruled(&watch, &id, 10, "a busy server");
    eprintln!("busy: {note}");
    assert!(alive(pid(&server)));
}

#[test]
fn the_cap_stops_one_of_two_idle_servers_and_the_others_note_says_the_cap() {
    if fixtures_cannot_be_orphans("rule cap") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "cap_per_hour = 1");
    let a = sb.start_vite("a", &[], |_| true);
    let b = sb.start_vite("b", &[], |_| true);
    let (ida, idb) = (id_of(&a), id_of(&b));
    let watch = Watch::start(&sb, 1, 2);
    let first = until(
        &watch,
        "a rule's stop",
        60,
        |_| {},
        |l| (l["event"] == "ruled").then(|| l["id"].as_str().unwrap().to_owned()),
    );
    let other = if first == ida { &idb } else { &ida };
    assert!(first == ida || first == idb, "stopped {first}, not ours");
    let note = never_ruled(&watch, other, 6, "the second idle server under the cap");
    assert_eq!(note["state"], "held", "{note:#}");
    assert!(
        note["why"].as_str().unwrap().contains("the cap"),
        "{note:#}"
    );
    let alive_one = if first == ida { &b } else { &a };
    assert!(alive(pid(alive_one)));
}

#[test]
fn a_server_started_again_by_hand_after_a_rules_stop_is_left_alone() {
    if fixtures_cannot_be_orphans("rule and a server started again by hand") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "");
    let server = sb.start_vite("web", &[], |_| true);
    let id = id_of(&server);
    let watch = Watch::start(&sb, 1, 2);
    stopped_by_rule(&watch, &id);
    wait_for("the server to end", || (!alive(pid(&server))).then_some(()));
    // The same command in the same project, by hand (as `start_vite` ran it).
    let cmd = format!(
        "./{VITE} --report '{}' ; true",
        sb.report_path("web").display()
    );
    sb.spawn_orphan(&sb.path().join("web"), &["sh", "-c", &cmd]);
    let again = sb.report("web", |r| r["pid"] != server["pid"]);
    sb.own_parent(&again);
    let note = never_ruled(&watch, &id_of(&again), 8, "a server started again by hand");
    assert_eq!(note["state"], "held", "{note:#}");
    assert!(
        note["why"].as_str().unwrap().contains("started again"),
        "{note:#}"
    );
    assert!(alive(pid(&again)));
}
