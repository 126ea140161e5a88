//! The journal against a real store in a temp folder.

use std::time::{Duration, SystemTime};

use super::*;
use crate::model::outcome::{NewcomerReport, ResourceResult, TieKind};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path().join("state")).unwrap();
    (dir, store)
}

fn request(client: &str, action: AgentAction, results: Vec<AgentResult>) -> Request<'_> {
    Request {
        client,
        action,
        plan: Some("ab12"),
        refused: None,
        results,
    }
}

#[test]
fn a_request_is_written_as_a_private_record_and_reads_back_with_the_clients_name() {
    let (_dir, store) = store();
    let refused = StopReport::new("100-1000", ResourceResult::Refused, "refused: it changed");
    let name = record(
        &store,
        request("claude-code", AgentAction::Stop, vec![of_stop(&refused)]),
    )
    .unwrap();
    assert!(name.starts_with(PREFIX), "{name}");
    let file = store.folder().join("records").join(format!("{name}.json"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let back: AgentRequest = store.get(&name).unwrap().unwrap();
    assert_eq!(back.client, "claude-code");
    assert_eq!(back.action, AgentAction::Stop);
    assert_eq!(back.plan.as_deref(), Some("ab12"));
    assert_eq!(back.results[0].result, "refused");
    assert_eq!(back.results[0].reason, "refused: it changed");
    // Two requests in the same millisecond get two records.
    let again = record(&store, request("claude-code", AgentAction::Stop, vec![])).unwrap();
    assert_ne!(again, name);
}

#[test]
fn history_shows_only_what_no_snapshot_shows_newest_first() {
    let (_dir, store) = store();
    let mut stopped = StopReport::new("100-1000", ResourceResult::PartiallyStopped, "pid 9 runs");
    stopped.snapshot = Some("snap-100-1000-5".into());
    stopped.newcomers.push(NewcomerReport {
        pid: 9,
        start_time: 1,
        parent: 1,
        how: "listens on a port of the resource".into(),
        tie: TieKind::Listens,
        command: "node vite".into(),
        fate: NewcomerFate::StillRunning,
        detail: String::new(),
    });
    let refused = StopReport::new("200-2000", ResourceResult::Refused, "refused: it is gone");
    let results = vec![of_stop(&stopped), of_stop(&refused)];
    assert_eq!(results[0].respawns, ["pid 9: node vite"]);
    record(&store, request("cursor", AgentAction::Stop, results)).unwrap();
    let used = AgentError::UsedPlan("ab12".into());
    let mut whole = request("cursor", AgentAction::Stop, vec![]);
    whole.refused = Some(&used);
    record(&store, whole).unwrap();
    let (lines, damaged) = unshown(&store).unwrap();
    assert!(damaged.is_empty());
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0].id, None, "the newest first: {lines:?}");
    assert_eq!(lines[0].reason, used.to_string());
    assert_eq!(lines[1].id.as_deref(), Some("200-2000"));
    assert_eq!(lines[1].client, "cursor");
}

#[test]
fn a_restart_that_started_is_its_snapshots_and_a_refused_one_is_only_here() {
    let ready = RestartReport::not_started("snap-1-1-1", RestartResult::Ready, "listening".into());
    assert_eq!(of_restart(&ready).snapshot.as_deref(), Some("snap-1-1-1"));
    assert_eq!(of_restart(&ready).result, "ready");
    let no = RestartReport::not_started("snap-1-1-1", RestartResult::Refused, "port taken".into());
    assert_eq!(of_restart(&no).snapshot, None);
    assert_eq!(of_restart(&no).result, "refused");
}

#[test]
fn a_record_older_than_a_week_expires_and_a_younger_one_stays() {
    let (_dir, store) = store();
    let name = record(
        &store,
        request("x", AgentAction::Declined, declined(["1-1".into()])),
    )
    .unwrap();
    let now = SystemTime::now();
    assert!(expire(&store, now + EXPIRY - Duration::from_secs(60)).is_empty());
    assert_eq!(unshown(&store).unwrap().0.len(), 1);
    assert_eq!(
        expire(&store, now + EXPIRY + Duration::from_secs(5)),
        [name]
    );
    assert!(unshown(&store).unwrap().0.is_empty());
}

/// What another user may plant where an agent's records live — a FIFO and a link to
/// `/dev/zero` named like them — never blocks `pier history` or the expiry, is said to be
/// unreadable, and is never removed.
#[test]
fn a_planted_fifo_or_link_among_the_agents_records_is_reported_never_read_or_removed() {
    let (_dir, store) = store();
    let records = store.folder().join("records");
    crate::trust::tests::mkfifo(&records.join("agent-fifo.json"));
    std::os::unix::fs::symlink("/dev/zero", records.join("agent-zero.json")).unwrap();
    let refused = StopReport::new("100-1000", ResourceResult::Refused, "refused: it changed");
    record(
        &store,
        request("c", AgentAction::Stop, vec![of_stop(&refused)]),
    )
    .unwrap();
    let held = store.clone();
    let (lines, damaged) = crate::trust::tests::within_10_s(move || unshown(&held)).unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(damaged.len(), 2, "{damaged:?}");
    let far = SystemTime::now() + Duration::from_secs(365 * 24 * 3600);
    let held = store.clone();
    let gone = crate::trust::tests::within_10_s(move || expire(&held, far));
    assert_eq!(gone.len(), 1, "only the real record expires: {gone:?}");
    for planted in ["agent-fifo.json", "agent-zero.json"] {
        assert!(
            std::fs::symlink_metadata(records.join(planted)).is_ok(),
            "{planted} kept"
        );
    }
}
