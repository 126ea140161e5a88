//! `pier history` (newest first, with each snapshot's restarts), `pier restart --last` (the
//! whole last cleanup) and `pier history --prune` against real processes on Linux: the
//! test's own orphans on free ports, each in its own project; clean-up by identity.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::Value;

/// The fixture started directly (no `sh`) in project `name` on a free port, so that its
/// snapshot restarts it on the same port.
fn started(sb: &Sandbox, name: &str) -> Value {
    let project = sb.project(name, VITE);
    let report = sb.report_path(name);
    let port = free_port().to_string();
    sb.spawn_orphan(
        &project,
        &[VITE, "--report", report.to_str().unwrap(), "--port", &port],
    );
    sb.report(name, |_| true)
}

fn json(sb: &Sandbox, args: &[&str]) -> (i32, Value) {
    exit_and_json(&sb.pier_exact(args))
}

#[test]
fn the_last_cleanup_restarts_together_shows_its_restarts_and_is_pruned_once_it_runs() {
    if fixtures_cannot_be_orphans("history") {
        return;
    }
    let sb = Sandbox::new();
    let old = started(&sb, "old");
    let (a, b) = (started(&sb, "a"), started(&sb, "b"));
    let scan = sb.scan(&[]);
    let id = |s: &Value| {
        resource_with(&scan, pid(s)).unwrap().1["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // An earlier cleanup of its own, then the two together.
    let (code, _) = json(&sb, &["stop", "--json", "--sample-ms", "50", &id(&old)]);
    assert_eq!(code, 0);
    let (code, stop) = json(
        &sb,
        &["stop", "--json", "--sample-ms", "50", &id(&a), &id(&b)],
    );
    assert_eq!(code, 0, "{stop:#}");
    let r = &stop["results"][0];
    assert_eq!(r["kind"], "vite");
    assert!(r["project"].as_str().unwrap().ends_with("/a"), "{r:#}");
    let command = r["members"][0]["command"].as_str().unwrap();
    assert!(command.contains("--port"), "whole, not cut: {command}");

    let (_, history) = json(&sb, &["history", "--json"]);
    let snaps = history["snapshots"].as_array().unwrap();
    assert_eq!(snaps.len(), 3);
    let newest_first: Vec<u64> = snaps
        .iter()
        .map(|s| {
            s["snapshot"]
                .as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(
        newest_first.windows(2).all(|w| w[0] >= w[1]),
        "{newest_first:?}"
    );
    assert!(snaps[2]["project"].as_str().unwrap().ends_with("/old"));

    let (code, last) = json(&sb, &["restart", "--last", "--json", "--wait", "10"]);
    let restarts = last["restarts"].as_array().unwrap();
    for r in restarts {
        if let (Some(pid), Some(start_time)) = (r["pid"].as_u64(), r["start_time"].as_u64()) {
            sb.own(Started {
                pid: pid as u32,
                start_time,
            });
        }
    }
    assert_eq!(code, 0, "{last:#}");
    assert_eq!(restarts.len(), 2, "a and b, not old: {last:#}");
    assert!(restarts.iter().all(|r| r["result"] == "ready"), "{last:#}");

    let (_, history) = json(&sb, &["history", "--json"]);
    let snaps = history["snapshots"].as_array().unwrap();
    for s in &snaps[..2] {
        assert_eq!(s["restarts"][0]["ready"], true, "{s:#}");
        assert_eq!(s["restartable"], false, "it runs again");
    }
    assert_eq!(snaps[2]["restartable"], true, "old can still come back");
    // --prune removes what cannot be restarted, keeps what can.
    let (code, pruned) = json(&sb, &["history", "--prune", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(pruned["removed"].as_array().unwrap().len(), 2, "{pruned:#}");
    let (_, history) = json(&sb, &["history", "--json"]);
    let left: Vec<&str> = history["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["project"].as_str().unwrap())
        .collect();
    assert_eq!(left.len(), 1);
    assert!(left[0].ends_with("/old"));
    let text = String::from_utf8(sb.pier_exact(&["history"]).stdout).unwrap();
    assert!(text.contains("  STOPPED  vite in "), "{text}");
}

/// A record whose stop lock is held is never pruned, even with --all; a stop leaves no lock
/// file, and a prune removes one nobody holds.
#[test]
fn a_locked_record_is_kept_by_a_prune() {
    if fixtures_cannot_be_orphans("history lock") {
        return;
    }
    let sb = Sandbox::new();
    let s = started(&sb, "a");
    let scan = sb.scan(&[]);
    let id = resource_with(&scan, pid(&s)).unwrap().1["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, _) = json(&sb, &["stop", "--json", "--sample-ms", "50", &id]);
    assert_eq!(code, 0);
    let locks = sb.path().join("state/locks");
    assert_eq!(
        std::fs::read_dir(&locks).unwrap().count(),
        0,
        "the stop and its record updates left no lock file"
    );
    // Another stop of it, as one from before lock files were removed would leave its file.
    let lock = std::fs::File::create(locks.join(format!("stop-{id}.lock"))).unwrap();
    lock.lock().unwrap();
    let (_, pruned) = json(&sb, &["history", "--prune", "--all", "--json"]);
    assert!(
        pruned["removed"].as_array().unwrap().is_empty(),
        "{pruned:#}"
    );
    assert!(pruned["kept"][0]["why"]
        .as_str()
        .unwrap()
        .contains("stop lock is held"));
    assert_eq!(pruned["locks_removed"], 0, "a held lock stays: {pruned:#}");
    drop(lock);
    // And one left by a stop of an id that named nothing, by a Pier from before.
    std::fs::File::create(locks.join("stop-1-2.lock")).unwrap();
    let (_, pruned) = json(&sb, &["history", "--prune", "--all", "--json"]);
    assert_eq!(pruned["removed"].as_array().unwrap().len(), 1, "{pruned:#}");
    assert_eq!(pruned["locks_removed"], 1, "the mistyped id's: {pruned:#}");
    assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 0);
}

/// Odd entries planted in `locks/` — a folder, a FIFO, a link to a file outside — are left as
/// they are (the link never followed: its file survives) and counted, and the stale lock files
/// beside them are removed and counted, with no warning. Before, the folder stopped the prune
/// with a raw `WARN`, the stale files stayed and no count was given (issue 41's review).
#[test]
fn a_prune_leaves_odd_entries_of_the_locks_folder_and_removes_the_stale_files() {
    let sb = Sandbox::new();
    let (code, _) = json(&sb, &["history", "--json"]);
    assert_eq!(code, 0);
    let locks = sb.path().join("state/locks");
    let outside = sb.path().join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    std::fs::create_dir(locks.join("c.lock")).unwrap();
    std::os::unix::fs::symlink(&outside, locks.join("a.lock")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(locks.join("b.lock"))
        .status()
        .unwrap();
    assert!(fifo.success());
    for stale in ["e", "z"] {
        std::fs::write(locks.join(format!("{stale}.lock")), b"").unwrap();
    }
    // Another user's file (only root can put one there, as the test can): never Pier's to remove.
    let mut odd = vec!["a.lock", "b.lock", "c.lock"];
    if is_root() {
        let theirs = locks.join("d.lock");
        std::fs::write(&theirs, b"theirs").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        odd.push("d.lock");
    }
    let out = sb.pier_exact(&["history", "--prune"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.is_empty(), "no warning: {stderr}");
    assert!(stdout.contains("2 unused lock file(s) removed"), "{stdout}");
    let left_words = format!("{} entr(ies) in the locks folder left", odd.len());
    assert!(stdout.contains(&left_words), "{stdout}");
    let mut left: Vec<String> = std::fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, odd);
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
    let (_, pruned) = json(&sb, &["history", "--prune", "--json"]);
    assert_eq!(pruned["locks_removed"], 0, "{pruned:#}");
    assert_eq!(pruned["locks_left"], odd.len(), "{pruned:#}");
}
