//! The restart rules over recorded snapshots.

use super::rules::stop_was_complete;
use crate::stop::snapshot::{RecordedIdentity, Snapshot, SnapshotProject};
use crate::stop::ResourceResult;

fn snap(signalled: Option<bool>, result: Option<ResourceResult>) -> Snapshot {
    Snapshot {
        kind: Some("vite".into()),
        schema: 1,
        id: "1-1".into(),
        boot_id: None,
        created_at: String::new(),
        project: SnapshotProject {
            name: "app".into(),
            path: "/p".into(),
            marker: None,
        },
        ports: Vec::new(),
        evidence: Vec::new(),
        root: RecordedIdentity {
            pid: 1,
            start_time: 1,
        },
        members: Vec::new(),
        signalled,
        outcomes: Vec::new(),
        result,
        reason: None,
        restarts: Vec::new(),
    }
}

#[test]
fn only_a_complete_recorded_stop_can_be_restarted() {
    assert!(stop_was_complete(&snap(Some(true), Some(ResourceResult::Stopped))).is_ok());
    let partial = stop_was_complete(&snap(Some(true), Some(ResourceResult::PartiallyStopped)));
    assert!(partial.unwrap_err().contains("partial"));
    assert!(stop_was_complete(&snap(Some(false), Some(ResourceResult::Refused))).is_err());
    assert!(stop_was_complete(&snap(None, None))
        .unwrap_err()
        .contains("never finished"));
    assert!(
        stop_was_complete(&snap(Some(true), None)).is_err(),
        "no result, no restart"
    );
}
