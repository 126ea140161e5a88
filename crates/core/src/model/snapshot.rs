//! The recovery snapshot as data: everything needed to bring a stopped resource back, written
//! before the first signal (`docs/design.md` §3.2, §5); later the stop's outcomes are added
//! to it. What reads and writes it: `stop/snapshot.rs`, `restart/`.

use serde::{Deserialize, Serialize};

use super::bytes::ByteString;
use super::card::{Evidence, Port};
use super::container::PublishedPort;
use super::outcome::{ContainerOutcome, MemberOutcome, NewcomerFate, ResourceResult};
use super::request::RequestedBy;
use super::Identity;

/// The card group the resource was in when it was stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotProject {
    /// The folder's last component, as the card showed it.
    pub name: String,
    /// The project folder, or the root's working directory outside any project. A restart
    /// takes its lock from it, and a process of ours running a member's argv inside it is a
    /// twin that blocks the restart.
    pub path: String,
    /// The marker that made `path` a project (`".git"`, `"package.json"`, …); `None` outside
    /// any project.
    pub marker: Option<String>,
}

/// One member as it was when the stop began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMember {
    /// Who it was: its pid and start time.
    pub identity: Identity,
    /// Its parent's pid when the snapshot was taken.
    pub ppid: u32,
    /// The uid it ran as (its effective uid: whose process it was).
    pub uid: u32,
    /// Its exact argv, read afresh for the snapshot: what a restart replays.
    pub argv: Vec<ByteString>,
    /// `None` when the environment could not be read (the member cannot be restarted as it
    /// was).
    pub env: Option<Vec<ByteString>>,
    /// The exact path of its executable (a member whose executable cannot be read is never
    /// snapshotted: the stop is refused).
    pub exe: ByteString,
    /// Its exact working directory; `None` when it could not be read.
    pub cwd: Option<ByteString>,
    /// Its memory as the stop's re-diagnosis read it, right before the stop: what the report
    /// says the stop freed (`memory::freed`). Absent when unread, and in records written
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::memory::Memory>,
}

/// How each member's stop ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedOutcome {
    /// The member's pid.
    pub pid: u32,
    /// How its stop ended.
    pub outcome: MemberOutcome,
    /// The same in words, as the stop's report gave it.
    pub detail: String,
}

/// A process born during the stop that the stop named (a newcomer), as it was when the stop
/// ended: a later read that reconciles a partial stop asks whether it is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedNewcomer {
    /// Who it is: its pid and start time.
    pub identity: Identity,
    /// Its command line for a person, as the report gave it.
    pub command: String,
    /// Whether it was gone or still running when the stop ended.
    pub fate: NewcomerFate,
}

/// The snapshot record (`snap-<id>-<ms>` in the state folder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The record's schema version (1). A Pier that knows only older ones reports a newer
    /// record as damaged, and keeps it.
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
    /// The card group the resource was in.
    pub project: SnapshotProject,
    /// Its listening sockets as the card showed them, helpers' included: a restart waits for
    /// the server's own to listen again.
    pub ports: Vec<Port>,
    /// The evidence at stop time.
    pub evidence: Vec<Evidence>,
    /// The process manager that ran the root, as the stop's re-diagnosis named it (a Force
    /// stop of a managed resource): the stop watches it for the replacement it starts.
    /// Absent when none did, and in records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_by: Option<super::managed::ManagedBy>,
    /// The member to restart (the root of the tree).
    pub root: Identity,
    /// Every member as it was when the stop began, root first, then breadth first.
    pub members: Vec<SnapshotMember>,
    /// Whether any signal was sent: `None` while the stop runs (or if Pier died during it),
    /// so "unknown" is never read as "nothing was sent". Only `Some(true)` with a complete
    /// result is offered for restart.
    pub signalled: Option<bool>,
    /// The "signals may follow" mark (`docs/design.md` §3.10): `Some(false)` as the snapshot is
    /// written, `Some(true)` — written and fsynced — right before the first signal. An
    /// unfinished stop without it sent nothing. `None` in records of Pier builds from before
    /// the mark: whether signals followed is unknown, so it is read as set.
    #[serde(default)]
    pub signals_may_follow: Option<bool>,
    /// Set (RFC 3339, UTC) when a later read reconciled this unfinished stop against the live
    /// system: its result then comes from its members' fates, not from the stop itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_at: Option<String>,
    /// Each member's outcome, added when the stop has finished; empty until then.
    pub outcomes: Vec<RecordedOutcome>,
    /// The newcomers the stop named, added with the outcomes: a partial stop is read as
    /// stopped later only once each of them is gone too (`stop/reconcile.rs`). `None` until
    /// the stop has finished, and in records written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newcomers: Option<Vec<RecordedNewcomer>>,
    /// The ids of the other resources of its project when the stop began: none of them is a
    /// replacement a later reconciliation of a partial stop may find. `None` in records
    /// written before they were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbours: Option<Vec<String>>,
    /// `None` until the stop has finished.
    pub result: Option<ResourceResult>,
    /// The stop's reason in words, as its report gave it; `None` until the stop has finished.
    pub reason: Option<String>,
    /// Every restart made from this snapshot, oldest first.
    #[serde(default)]
    pub restarts: Vec<RecordedRestart>,
    /// The cleanup this stop was part of: one value for every resource of one `pier stop` or
    /// one click, which `pier restart --last` starts again together. Absent in records written
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<String>,
    /// Who asked for the stop; a record written before it was kept reads as a person's.
    #[serde(default)]
    pub requested_by: RequestedBy,
    /// A stop anyway: the reasons it set aside, each with its fact (`reason::SetAside`).
    /// Absent for any other stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<super::reason::SetAside>,
}

impl Snapshot {
    /// Drops every member's environment once the record says no signal was sent (docs/design.md
    /// §5): an environment carries secrets, and it is kept only to restart what a stop ended.
    /// A stop that sent nothing ended nothing, so nothing of it is ever restarted.
    pub fn forget_environments(&mut self) {
        for m in &mut self.members {
            m.env = None;
        }
    }
}

/// One restart: the new root's identity and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRestart {
    /// The new root process: its pid and start time.
    pub identity: Identity,
    /// RFC 3339, UTC.
    pub at: String,
    /// Whether every recorded port listened from the new tree within the wait.
    pub ready: bool,
    /// How it ended, when it exited before listening. Absent in records written before it
    /// was kept, and for a restart that did not exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exited: Option<super::history::Exited>,
}

/// The recovery record of a container's stop (`ctr-<12 hex digits of its id>-<unix ms>`),
/// written before its signal: what `pier restart` needs to start the same container again
/// through its engine (docs/design.md §4a). A container keeps its configuration in its
/// engine, so the record names it rather than copying it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerSnapshot {
    /// The record's schema version (1).
    pub schema: u32,
    /// The card's id (`"container-<12 hex digits>"`).
    pub id: String,
    /// The engine's full container id: what a restart starts.
    pub container_id: String,
    /// Its name and image, as the card showed them.
    pub name: String,
    /// The image it ran.
    pub image: String,
    /// The engine (`"Docker"`) and where it was asked (`"unix:///var/run/docker.sock"`).
    pub engine: String,
    /// Where the engine was asked: a restart asks the same socket.
    pub engine_host: String,
    /// The run that was stopped: its start time, as the engine wrote it.
    pub started_at: String,
    /// The signal its stop sends through the engine.
    pub stop_signal: String,
    /// RFC 3339, UTC: when the stop began.
    pub created_at: String,
    /// The card group it was in.
    pub project: SnapshotProject,
    /// Its published ports: a restart refuses while another listener holds one, and waits
    /// for them to listen again.
    pub ports: Vec<PublishedPort>,
    /// The evidence at stop time.
    pub evidence: Vec<Evidence>,
    /// Whether the signal was sent: `None` while the stop runs (or if Pier died during it).
    pub signalled: Option<bool>,
    /// The "signals may follow" mark, as for a resource's snapshot.
    pub signals_may_follow: Option<bool>,
    /// Set when a later read reconciled this unfinished stop from the engine's account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_at: Option<String>,
    /// What became of it, once the stop finished.
    pub outcome: Option<ContainerOutcome>,
    /// `None` until the stop has finished.
    pub result: Option<ResourceResult>,
    /// The stop's reason in words; `None` until the stop has finished.
    pub reason: Option<String>,
    /// Every restart made from this record, oldest first.
    #[serde(default)]
    pub restarts: Vec<ContainerRestart>,
    /// The cleanup this stop was part of: one value for every resource of one `pier stop` or
    /// one click, which `pier restart --last` starts again together. Absent in records written
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<String>,
    /// Who asked for the stop; a record written before it was kept reads as a person's.
    #[serde(default)]
    pub requested_by: RequestedBy,
}

/// One restart of a container: the run it began and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerRestart {
    /// The new run's start time, as the engine wrote it.
    pub started_at: String,
    /// RFC 3339, UTC.
    pub at: String,
    /// Whether every recorded port listened again within the wait.
    pub ready: bool,
}

impl ContainerSnapshot {
    /// The identity this record speaks for, as the store's updates ask it (`store::Owned`):
    /// the stopped run — its container (the first 8 hex digits of its id, in the place of a
    /// pid: a container is no process) and its start time in nanoseconds since the epoch.
    /// Stays the same across restarts, which are appended, not substituted.
    pub fn run(&self) -> Identity {
        let ns = super::container::parse_engine_time(&self.started_at)
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let container = self
            .container_id
            .get(..8)
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .unwrap_or(0);
        Identity {
            pid: container,
            start_time: ns,
        }
    }
}
