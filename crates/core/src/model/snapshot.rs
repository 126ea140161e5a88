//! The recovery snapshot as data: everything needed to bring a stopped resource back, written
//! before the first signal (`docs/design.md` §3.2, §5); later the stop's outcomes are added
//! to it. What reads and writes it: `stop/snapshot.rs`, `restart/`.

use serde::{Deserialize, Serialize};

use super::bytes::ByteString;
use super::card::{Evidence, Port};
use super::outcome::{MemberOutcome, ResourceResult};
use super::Identity;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotProject {
    pub name: String,
    pub path: String,
    pub marker: Option<String>,
}

/// One member as it was when the stop began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMember {
    pub identity: Identity,
    pub ppid: u32,
    pub uid: u32,
    pub argv: Vec<ByteString>,
    /// `None` when the environment could not be read (the member cannot be restarted as it
    /// was).
    pub env: Option<Vec<ByteString>>,
    pub exe: ByteString,
    pub cwd: Option<ByteString>,
}

/// How each member's stop ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOutcome {
    pub pid: u32,
    pub outcome: MemberOutcome,
    pub detail: String,
}

/// The snapshot record (`snap-<id>-<ms>` in the state folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub schema: u32,
    /// The resource id: `"<root pid>-<root start_time>"`.
    pub id: String,
    /// The tool kind the scan saw (`"vite"`); absent in records written before it was kept.
    #[serde(default)]
    pub kind: Option<String>,
    /// The kernel's boot id: identities from another boot mean nothing.
    pub boot_id: Option<String>,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub project: SnapshotProject,
    pub ports: Vec<Port>,
    /// The evidence at stop time.
    pub evidence: Vec<Evidence>,
    /// The member to restart (the root of the tree).
    pub root: Identity,
    pub members: Vec<SnapshotMember>,
    /// Whether any signal was sent: `None` while the stop runs (or if Pier died during it),
    /// so "unknown" is never read as "nothing was sent". Only `Some(true)` with a complete
    /// result is offered for restart.
    pub signalled: Option<bool>,
    pub outcomes: Vec<RecordedOutcome>,
    /// `None` until the stop has finished.
    pub result: Option<ResourceResult>,
    pub reason: Option<String>,
    /// Every restart made from this snapshot, oldest first.
    #[serde(default)]
    pub restarts: Vec<RecordedRestart>,
}

/// One restart: the new root's identity and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRestart {
    pub identity: Identity,
    /// RFC 3339, UTC.
    pub at: String,
    /// Whether every recorded port listened from the new tree within the wait.
    pub ready: bool,
}
