//! `pier auto` end to end against a real fixture server (docs/design.md §5a): the rules off
//! (and how to turn them on), on, unreadable (said on every card of `pier auto` and of `pier
//! scan`), paused and resumed; and with a running `pier watch`: its view named, the card it
//! judged, a dry run that sends nothing and records nothing, and once resumed the rule's stop.
//! Every scan is scoped to the sandbox (`--under`), and the test's processes are ended by
//! identity.
#![cfg(target_os = "linux")]

mod common;

use std::time::{Duration, Instant};

use common::auto::{auto_json, card, rules};
use common::watch::Watch;
use common::*;
use serde_json::Value;

fn auto_text(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.pier(&[&["auto"], args].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn pier_auto_says_off_on_unreadable_paused_and_resumed() {
    if fixtures_cannot_be_orphans("pier auto") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let id = id_of(&server);

    let text = auto_text(&sb, &[]);
    assert!(text.starts_with("Automatic stops: off"), "{text}");
    assert!(
        text.contains("config/rules.toml") && text.contains("[[rule]]"),
        "{text}"
    );
    assert!(text.contains("`pier watch --install`"), "{text}");

    rules(&sb, "[[rule]]\nname = \"quick\"\nidle = \"2s\"\n");
    let doc = auto_json(&sb, &[]);
    assert_eq!(doc["rules"], "on");
    assert_eq!(doc["rule"][0]["name"], "quick");
    assert!(doc["scheduler"].is_null(), "no scheduler runs: {doc}");
    let c = wait_for("the fixture's card", || {
        card(&auto_json(&sb, &[]), &id).cloned()
    });
    assert_eq!(c["auto"]["state"], "waiting", "{c}");
    assert!(
        c["auto"]["why"]
            .as_str()
            .unwrap()
            .contains("not measured yet"),
        "{c}"
    );

    rules(&sb, "[[rule]]\nidle = \"2s\"\nthis line is not toml\n");
    let text = auto_text(&sb, &[]);
    assert!(
        text.starts_with("Automatic stops are off: the rules file"),
        "{text}"
    );
    let doc = auto_json(&sb, &[]);
    assert_eq!(doc["rules"], "unreadable");
    let scan = sb.scan(&[]);
    let cards = resources(&scan);
    assert!(!cards.is_empty());
    for c in [card(&doc, &id).unwrap().clone()]
        .into_iter()
        .chain(cards.into_iter().map(|(_, r)| r))
    {
        let why = c["auto"]["why"].as_str().unwrap_or_default();
        assert!(why.starts_with("automatic stops are off: "), "{c}");
    }

    rules(&sb, "[[rule]]\nname = \"quick\"\nidle = \"2s\"\n");
    let said = auto_text(&sb, &["--pause", "1h"]);
    assert!(
        said.starts_with("Automatic stops paused for 60 min (until "),
        "{said}"
    );
    let doc = auto_json(&sb, &[]);
    assert_eq!(doc["paused"]["asked"], "for 60 min");
    let bad = sb.pier(&["auto", "--pause", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("\"soon\" is not a pause"));
    assert!(auto_text(&sb, &["--resume"]).starts_with("Automatic stops resumed"));
    assert!(auto_json(&sb, &[])["paused"].is_null());
    assert!(auto_text(&sb, &["--resume"]).contains("were not paused"));
}

#[test]
fn with_pier_watch_running_pier_auto_shows_its_view_and_a_dry_run_sends_nothing() {
    if fixtures_cannot_be_orphans("pier auto with pier watch") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "[[rule]]\nname = \"quick\"\nidle = \"2s\"\n");
    // Paused: the watch judges the card and holds its stop, so the preview has time.
    assert_eq!(sb.pier(&["auto", "--pause", "1h"]).status.code(), Some(0));
    let server = sb.start_vite("web", &[], |_| true);
    let id = id_of(&server);
    let root = Started {
        pid: server["ppid"].as_u64().unwrap() as u32,
        start_time: server["ppid_start_time"].as_u64().unwrap(),
    };
    let watch = Watch::start(&sb, 1, 1);
    let held = wait_for("the watch's view: the card held by the pause", || {
        let doc = auto_json(&sb, &[]);
        let c = card(&doc, &id)?.clone();
        (doc["scheduler"]["by"] == "pier watch" && c["auto"]["state"] == "held").then_some(c)
    });
    assert_eq!(held["auto"]["rule"], "quick", "{held}");
    assert!(
        held["auto"]["why"].as_str().unwrap().contains("paused"),
        "{held}"
    );
    let text = auto_text(&sb, &[]);
    assert!(text.contains("Run by pier watch (pid "), "{text}");

    let out = sb.pier(&["auto", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let dry: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = dry["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{dry}");
    assert_eq!(results[0]["rule"], "quick");
    assert_eq!(results[0]["report"]["id"], id.as_str(), "{dry}");
    assert_eq!(
        start_time_of(root.pid),
        Some(root.start_time),
        "nothing was sent"
    );
    assert_eq!(snapshots(&sb), 0, "a dry run records nothing");

    assert!(auto_text(&sb, &["--resume"]).starts_with("Automatic stops resumed"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut due_seen = false;
    loop {
        let (_, line) = watch.next(deadline).expect("the rule's stop within 20 s");
        if line["event"] == "rescan" {
            let r = line["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["id"] == id);
            due_seen |= r.is_some_and(|r| r["auto"]["state"] == "due");
        }
        if line["event"] == "ruled" && line["id"] == id.as_str() {
            assert_eq!(line["rule"], "quick");
            assert_eq!(line["report"]["result"], "stopped", "{line}");
            break;
        }
    }
    assert!(due_seen, "the rescan that stopped it showed it due");
    wait_for("the fixture gone", || (!alive(root.pid)).then_some(()));
}

/// A server that outlives SIGTERM is asked once by a rule, then backed off: the next rescans
/// do not ask it again (each would be a record, a notification and one of the hour's cap).
/// Found by the review: it was asked at every rescan until the cap was spent on it.
#[test]
fn a_rule_stop_that_did_not_stop_it_backs_the_resource_off() {
    if fixtures_cannot_be_orphans("a rule's back-off after a stop that did not stop it") {
        return;
    }
    let sb = Sandbox::new();
    rules(&sb, "[[rule]]\nname = \"quick\"\nidle = \"2s\"\n");
    let server = sb.start_vite("stubborn", &["--ignore-term"], |_| true);
    let pid = server["pid"].as_u64().unwrap();
    // Its card once it is its own root: its id is its own identity.
    let own_id = format!("{pid}-{}", server["start_time"].as_u64().unwrap());
    let watch = Watch::start(&sb, 1, 1);
    let asks = |line: &Value| {
        line["event"] == "ruled"
            && line["report"]["members"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["pid"] == pid))
    };
    // Its launcher `sh` ends on SIGTERM; the server, now its own root, is backed off with it:
    // every member of a stop that did not stop it is.
    let mut deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, line) = watch
            .next(deadline)
            .expect("the rule asks the server within 60 s");
        if asks(&line) && line["report"]["result"] != "stopped" {
            break;
        }
    }
    deadline = Instant::now() + Duration::from_secs(12);
    let mut held = false;
    while let Some((_, line)) = watch.next(deadline) {
        assert!(!asks(&line), "asked again, not backed off: {line}");
        held |= line["event"] == "rescan"
            && line["resources"].as_array().unwrap().iter().any(|r| {
                r["id"] == own_id.as_str()
                    && r["auto"]["why"]
                        .as_str()
                        .unwrap_or("")
                        .contains("did not stop it")
            });
    }
    assert!(held, "its card says it waits out the back-off");
    assert!(alive(pid as u32), "it still runs (it ignores SIGTERM)");
}
