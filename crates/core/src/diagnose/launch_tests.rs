//! Kinds from the launch chain through the whole diagnosis (`kinds/chain.rs`): what the card says
//! for a retitled tool, a dev script and a tree with no command left.

use super::tests::{has, only, run, APP};
use crate::diagnose::kinds::chain::tests::titled;
use crate::model::card::{EvidenceKind, Level, Resource};
use crate::probe::fake::{process, FakeProbe};

fn message(r: &Resource, kind: EvidenceKind) -> String {
    r.evidence
        .iter()
        .find(|e| e.kind == kind)
        .map(|e| e.message.clone())
        .unwrap_or_else(|| panic!("no {kind:?} evidence: {r:#?}"))
}

#[test]
fn webpack_retitled_under_npm_is_known_from_its_launcher_and_green() {
    // `"dev": "webpack serve"`: npm → sh -c 'webpack serve' → node, retitled "webpack".
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "webpack serve"]), APP)
        .with(titled(12, 11, "webpack"), APP)
        .listen("127.0.0.1:8080", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!((r.kind.as_str(), r.root.pid), ("webpack", 10), "{r:#?}");
    assert_eq!(r.level, Level::Green, "{r:#?}");
    let why = message(r, EvidenceKind::ToolKind);
    assert!(why.contains("pid 11: webpack serve"), "{why}");
    assert!(!has(r, EvidenceKind::NotRestartable), "sh -c is a command");
}

#[test]
fn a_plain_dev_script_is_known_and_the_evidence_names_the_listener() {
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "node server.js"]), APP)
        .with(process(12, 11, &["node", "server.js"]), APP)
        .listen("127.0.0.1:3000", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.kind, "dev-script", "{r:#?}");
    assert_eq!(r.level, Level::Green, "{r:#?}");
    let why = message(r, EvidenceKind::ToolKind);
    assert!(
        why.contains("`npm run dev` (pid 10); node (pid 12) listens"),
        "{why}"
    );
}

#[test]
fn a_start_script_stays_unknown_and_names_the_listener_not_its_launcher() {
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm start"), APP)
        .with(process(11, 10, &["sh", "-c", "node server.js"]), APP)
        .with(process(12, 11, &["node", "server.js"]), APP)
        .listen("127.0.0.1:3000", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!((r.kind.as_str(), r.level), ("unknown", Level::Yellow));
    let why = message(r, EvidenceKind::UnknownKind);
    assert!(why.starts_with("node (pid 12) listens"), "{why}");
}

#[test]
fn a_tree_with_no_command_left_is_known_but_yellow() {
    // `rails server`: Puma writes its title over the argv of the process that ran it.
    let probe = FakeProbe::default()
        .with(
            titled(10, 1, "puma 5.6.5 (tcp://127.0.0.1:3000) [app]"),
            APP,
        )
        .listen("127.0.0.1:3000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.kind, "puma", "{r:#?}");
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(why.contains("could not be restarted"), "{why}");
    assert!(
        why.contains("puma 5.6.5 (tcp://127.0.0.1:3000) [app]\")"),
        "{why}"
    );
}

#[test]
fn puma_with_a_watcher_child_is_not_restartable_and_not_the_watchers_kind_green() {
    // tailwindcss-rails' Puma plugin: the watcher runs under Puma, whose argv is a title.
    let probe = FakeProbe::default()
        .with(
            titled(10, 1, "puma 5.6.5 (tcp://127.0.0.1:3000) [app]"),
            APP,
        )
        .with(
            process(
                11,
                10,
                &["/home/u/app/bin/tailwindcss", "-i", "app.css", "-w"],
            ),
            APP,
        )
        .listen("127.0.0.1:3000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(why.contains("pid 10 rewrote its command line"), "{why}");
}

#[test]
fn a_dev_script_outside_the_listeners_tree_makes_nothing_known() {
    let probe = FakeProbe::default()
        .with(process(10, 1, &["python3", "app.py"]), APP)
        .with(process(11, 10, &["npm", "run", "watch"]), APP)
        .with(process(12, 11, &["sh", "-c", "node build.js --watch"]), APP)
        .listen("127.0.0.1:8000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("unknown", Level::Yellow),
        "{r:#?}"
    );
}

#[test]
fn a_withheld_environment_makes_the_command_it_would_replay_not_restartable() {
    // macOS withholds the environment of a code-signing-restricted process: a restart would
    // replay an empty one, so the card is yellow and says so.
    let mut probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "vite"]), APP)
        .with(
            process(12, 11, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("127.0.0.1:5173", 12);
    probe.environment_withheld.insert(11);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("vite", Level::Yellow),
        "{r:#?}"
    );
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(
        why.starts_with("could not be restarted: the environment of pid 11"),
        "{why}"
    );
    assert!(why.contains("only Force stops it"), "{why}");

    // Only the process a restart replays matters: the listener's own environment is not read
    // back, so withholding it changes nothing.
    probe.environment_withheld.clear();
    probe.environment_withheld.insert(12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert!(!has(r, EvidenceKind::NotRestartable));
}
