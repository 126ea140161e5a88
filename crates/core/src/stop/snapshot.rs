//! The recovery snapshot: everything needed to bring a stopped resource back, written before
//! the first signal (docs/design.md §3.2, §5). Later the stop's outcomes are added to it.

use serde::{Deserialize, Serialize};

use super::bytes::ByteString;
use super::outcome::{MemberOutcome, ResourceResult};
use crate::diagnose::model::{Evidence, Port};
use crate::probe::Identity;
use crate::store::{Owned, Versioned};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedIdentity {
    pub pid: u32,
    pub start_time: u64,
}

impl From<Identity> for RecordedIdentity {
    fn from(i: Identity) -> Self {
        Self {
            pid: i.pid,
            start_time: i.start_time,
        }
    }
}

impl From<RecordedIdentity> for Identity {
    fn from(r: RecordedIdentity) -> Self {
        Identity {
            pid: r.pid,
            start_time: r.start_time,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotProject {
    pub name: String,
    pub path: String,
    pub marker: Option<String>,
}

/// One member as it was when the stop began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMember {
    pub identity: RecordedIdentity,
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
    pub root: RecordedIdentity,
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
    pub identity: RecordedIdentity,
    /// RFC 3339, UTC.
    pub at: String,
    /// Whether every recorded port listened from the new tree within the wait.
    pub ready: bool,
}

impl Snapshot {
    fn argv_of(&self, pid: u32) -> impl Iterator<Item = &[u8]> {
        let member = self.members.iter().find(|m| m.identity.pid == pid);
        member
            .into_iter()
            .flat_map(|m| m.argv.iter().map(|a| a.0.as_slice()))
    }

    /// A member's command line for a person, from its exact recorded argv (empty when `pid`
    /// is not a member).
    pub fn command_of(&self, pid: u32) -> String {
        crate::words::command_for_a_person(self.argv_of(pid))
    }

    /// The same, short enough to name the member inside a sentence.
    pub fn short_command_of(&self, pid: u32) -> String {
        crate::words::short_command(self.argv_of(pid))
    }
}

impl Versioned for Snapshot {
    const SCHEMA: u32 = 1;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Snapshot {
    fn owner(&self) -> Identity {
        self.root.into()
    }
}
