//! Past a "no" against real processes (docs/design.md §3.8): a stop anyway needs the person's
//! confirmation and sets aside only what they accepted; Force is SIGKILL, later, to what outlived
//! a stop's SIGTERM, written into that stop's record.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::Value;

/// An orphaned vite stand-in, green, that ignores SIGTERM; its id.
fn stubborn(sb: &Sandbox) -> (Value, String) {
    let report = sb.start_vite("app", &["--ignore-term"], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&report)).expect("the fixture has a card");
    (report, r["id"].as_str().unwrap().to_owned())
}

fn records(sb: &Sandbox) -> usize {
    std::fs::read_dir(sb.path().join("state/records"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("snap-"))
            })
            .count()
        })
        .unwrap_or(0)
}

#[test]
fn force_sends_sigkill_to_what_outlived_sigterm_and_writes_into_that_stops_record() {
    if fixtures_cannot_be_orphans("force") {
        return;
    }
    let sb = Sandbox::new();
    let (report, id) = stubborn(&sb);
    let server = Started {
        pid: pid(&report),
        start_time: report["start_time"].as_u64().unwrap(),
    };
    // The stop sends SIGTERM, which the server ignores: nothing ended, and the next step is named.
    let out = sb.pier_exact(&["stop", &id, "--grace", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    // sh ended on its SIGTERM; the server it ran did not, and is named as still running.
    assert!(text.contains("PARTIALLY STOPPED"), "{text}");
    assert!(!text.contains("appeared"), "{text}");
    assert!(
        text.contains(&format!(
            "`pier stop --force {id}` sends SIGKILL to the 1 process(es)"
        )),
        "{text}"
    );
    assert!(alive(server.pid));
    assert_eq!(records(&sb), 1);
    // Force: SIGKILL to that process, its line in the same record rewritten, no new record.
    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--force", &id, "--json"]));
    let r = &doc["results"][0];
    assert_eq!(
        (code, r["result"].as_str()),
        (0, Some("stopped")),
        "{doc:#}"
    );
    assert_eq!(r["members"][0]["outcome"], "stopped", "{doc:#}");
    assert_eq!(
        r["members"][0]["detail"], "exited after SIGKILL (Force)",
        "{doc:#}"
    );
    assert!(!alive(server.pid) || start_time_of(server.pid) != Some(server.start_time));
    assert_eq!(records(&sb), 1, "Force writes no snapshot of its own");
    // Read again, with every member gone and the project's rescan clean: stopped, restartable.
    let (_, history) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    let entry = &history["snapshots"][0];
    assert!(
        entry["reason"].as_str().unwrap().contains("Force"),
        "{entry:#}"
    );
    assert_eq!(entry["result"], "stopped", "{entry:#}");
    assert_eq!(entry["restartable"], true, "{entry:#}");
    // Nothing is left for a second Force.
    let (code2, doc) = exit_and_json(&sb.pier_exact(&["stop", "--force", &id, "--json"]));
    assert_eq!(code2, 3);
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
}

#[test]
fn a_stop_anyway_needs_a_confirmation_and_force_needs_a_stop_before_it() {
    let sb = Sandbox::new();
    let id = "17824-71008";
    // No terminal, nothing accepted: a usage error, before anything is read or written.
    let out = sb.pier_exact(&["stop", "--anyway", id]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--accept"), "{err}");
    let out = sb.pier_exact(&["stop", "--accept", "busy", id]);
    assert_eq!(out.status.code(), Some(2));
    let out = sb.pier_exact(&["stop", "--anyway", "--accept", "bsy", id]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a reason"), "{err}");
    let out = sb.pier_exact(&["stop", "--anyway", "--accept", "busy", ":3000"]);
    assert_eq!(out.status.code(), Some(2));
    // Force with no stop recorded: refused, saying what comes first.
    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--force", id, "--json"]));
    assert_eq!(code, 3);
    let reason = doc["results"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("no stop of {id} is recorded")),
        "{reason}"
    );
}
