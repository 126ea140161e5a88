//! Honest results as types: the five member outcomes and the five resource results of
//! docs/design.md §3.5 and §3.7. A caller matching on them cannot forget one.

use serde::{Deserialize, Serialize};

use super::card::Resource;
use super::Identity;

/// What happened to one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberOutcome {
    /// We signalled it and it is gone when the stop ends (within its grace, or after it: the
    /// detail says which).
    Stopped,
    /// We signalled it and it is still alive when the stop ends.
    StillRunning,
    /// It exited on its own after the resource's first signal, before its own turn.
    Exited,
    /// No signal: gone before the resource's first signal, or its identity no longer matched.
    Skipped,
    /// The signal or a check errored.
    Failed,
}

/// What happened to the resource as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceResult {
    /// Signals sent; every member stopped, exited or skipped; the rescan is clean.
    Stopped,
    /// Some member still runs or failed, or the rescan found a replacement.
    PartiallyStopped,
    /// Signals were sent and no member ended: every member that was signalled still runs
    /// (one already gone before its turn does not count as ended). Never "partially".
    NotStopped,
    /// No signal: a check said no.
    Refused,
    /// No signal: Pier itself could not proceed (snapshot, state folder, lock).
    Failed,
    /// A dry run (`pier stop --dry-run`): every check passed up to the first signal, and
    /// nothing was sent or written. Not an outcome of a stop: never recorded.
    WouldStop,
}

impl ResourceResult {
    /// The result as the JSON spells it (`"partially_stopped"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceResult::Stopped => "stopped",
            ResourceResult::PartiallyStopped => "partially_stopped",
            ResourceResult::NotStopped => "not_stopped",
            ResourceResult::Refused => "refused",
            ResourceResult::Failed => "failed",
            ResourceResult::WouldStop => "would_stop",
        }
    }
}

impl MemberOutcome {
    /// The outcome as the JSON spells it (`"still_running"`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemberOutcome::Stopped => "stopped",
            MemberOutcome::StillRunning => "still_running",
            MemberOutcome::Exited => "exited",
            MemberOutcome::Skipped => "skipped",
            MemberOutcome::Failed => "failed",
        }
    }
}

/// One member's line in the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberReport {
    /// The member's pid.
    pub pid: u32,
    /// Its start time, the kernel's raw value; with `pid`, who it is
    /// ([`MemberReport::identity`]).
    pub start_time: u64,
    /// Its command line for a person, from the snapshot's exact argv.
    pub command: String,
    /// What happened to it.
    pub outcome: MemberOutcome,
    /// How, in words (`"already gone at the last check, before any signal"`).
    pub detail: String,
}

/// What became of a newcomer (a process born during the stop), read when the stop ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NewcomerFate {
    /// Gone when the stop ended.
    Exited,
    /// Still alive when the stop ended, after its bounded wait.
    StillRunning,
}

impl NewcomerFate {
    /// The fate as the JSON spells it (`"still_running"`).
    pub fn as_str(self) -> &'static str {
        match self {
            NewcomerFate::Exited => "exited",
            NewcomerFate::StillRunning => "still_running",
        }
    }
}

impl MemberReport {
    /// Who it is: its pid and start time, the JSON's two flat fields.
    pub fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

/// How a newcomer is tied to the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TieKind {
    /// Its parent, when first seen, was a member.
    ChildOfMember,
    /// Its parent, when first seen, was a newcomer.
    ChildOfNewcomer,
    /// It listens on one of the resource's recorded ports.
    Listens,
    /// Init or a subreaper adopted it, and it works inside the project's folder.
    OrphanInProject,
}

/// A process born during the stop that belongs to it (`newcomers.rs`). Never signalled:
/// the checkpoint chain did not verify it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewcomerReport {
    /// The newcomer's pid.
    pub pid: u32,
    /// Its start time, the kernel's raw value.
    pub start_time: u64,
    /// Its parent pid when it was first seen.
    pub parent: u32,
    /// How it is tied to the resource, in words: "child of member pid N", "child of newcomer
    /// pid N", "listens on ADDR, a port of the resource", "orphaned, working in the project".
    pub how: String,
    /// The same, as a value.
    pub tie: TieKind,
    /// Its command line for a person, as read when it was first seen (its argv, else the
    /// kernel's name).
    pub command: String,
    /// Whether it was gone or still running when the stop ended.
    pub fate: NewcomerFate,
    /// The same in words, with how long it was waited for (`"born during the stop, never
    /// signalled; gone when the stop ended"`).
    pub detail: String,
}

impl NewcomerReport {
    /// Who it is: its pid and start time.
    pub fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

/// The checkpoint of the stop's chain (README, `pier stop`) that refused a stop, for programs;
/// the reason says in words what it saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Checkpoint {
    /// (a) ports and connections, before the activity sample.
    A,
    /// (b) the activity sample.
    B,
    /// (c) ports and connections, after the sample.
    C,
    /// (d) the process tree and every member's identity.
    D,
    /// (e) ports, connections and the process tree, one last time.
    E,
    /// The checks passed, but more time than allowed went by from (a) to the first signal.
    Deadline,
}

/// How long the checkpoint chain took, on the probe's monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timings {
    /// From check (a) to the first signal.
    pub a_to_first_signal_ms: f64,
    /// From check (a) to the last signal.
    pub a_to_last_signal_ms: f64,
    /// The activity window the stop was set to sample at check (b), in milliseconds; `0`
    /// under Force, which samples none.
    pub sample_ms: u64,
}

/// The whole answer for one resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StopReport {
    /// The resource id the stop was asked for (`"<root pid>-<root start_time>"`).
    pub id: String,
    /// What it is: the tool kind (`"vite"`) or `"container NAME"`, once the re-diagnosis
    /// found it; `null` when the stop ended before (no such resource now, a lock held).
    pub kind: Option<String>,
    /// Its project's folder (outside any project, its working directory), when known as for
    /// `kind`.
    pub project: Option<String>,
    /// How the stop ended for the resource as a whole.
    pub result: ResourceResult,
    /// Why, in words a person reads.
    pub reason: String,
    /// The checkpoint that refused the stop (`null` otherwise: signals went out, or the stop
    /// ended before the checkpoints).
    pub checkpoint: Option<Checkpoint>,
    /// One line per member, with its outcome, once the checkpoints passed; empty when the stop
    /// ended before them.
    pub members: Vec<MemberReport>,
    /// Processes born during the stop, each with its parent and its fate.
    pub newcomers: Vec<NewcomerReport>,
    /// The snapshot record's name, once written.
    pub snapshot: Option<String>,
    /// The fresh diagnosis, when the stop was refused because of it.
    pub fresh: Option<Resource>,
    /// How long the checkpoint chain took; `null` when no signal was sent.
    pub timings: Option<Timings>,
    /// Set when the outcome could not be added to the snapshot on disk.
    pub record_error: Option<String>,
    /// The signal that interrupted the stop (`"SIGINT"`), if one did (docs/design.md §3.10):
    /// then no further level was signalled, and the result is what was true when it ended.
    pub interrupted: Option<String>,
    /// For a container's stop, once its checkpoints passed: what became of it (`members` is
    /// then empty: the engine, not Pier, signals its processes). `null` for a resource.
    pub container: Option<ContainerOutcome>,
    /// A dry run's answer once every check passed (`result` `would_stop`): each signal the
    /// stop would send, in its order. Empty otherwise.
    pub would_signal: Vec<PlannedSignal>,
    /// About what the stop freed, for a `stopped` or `partially_stopped` result: the memory
    /// of the members it ended, as recorded in the snapshot right before the stop
    /// (`memory::freed`). `null` for any other result, a container, or when a figure is
    /// missing.
    pub freed: Option<super::memory::Memory>,
    /// A stop anyway: the reasons it set aside, each with its fact. Empty for any other stop.
    pub set_aside: Vec<super::reason::SetAside>,
    /// The port numbers a `stopped` result freed: the server's recorded ports (a container's
    /// published ones) that nothing listens on once the stop ended. Empty for any other result.
    pub freed_ports: Vec<u16>,
    /// The server's recorded ports that something else still listens on once it was stopped
    /// (another process, another address): not free.
    pub ports_still_held: Vec<u16>,
    /// For a stop a checkpoint refused: the reason of the table (`model::reason`) what it saw
    /// is, when it is one (`"live_connection"`, `"busy"`, `"unreadable"`); `null` otherwise (a
    /// change in the tree, the deadline, any other result). An armed stop reads it to know
    /// whether to keep waiting.
    pub refused_for: Option<super::reason::Reason>,
}

impl StopReport {
    /// A report of `result` for the target `id`, for `reason`, with nothing else learnt yet: the
    /// one constructor, which the stop fills in as it learns.
    pub fn new(id: impl Into<String>, result: ResourceResult, reason: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            kind: None,
            project: None,
            result,
            reason: reason.into(),
            checkpoint: None,
            members: Vec::new(),
            newcomers: Vec::new(),
            snapshot: None,
            fresh: None,
            timings: None,
            record_error: None,
            interrupted: None,
            container: None,
            would_signal: Vec::new(),
            freed: None,
            set_aside: Vec::new(),
            freed_ports: Vec::new(),
            ports_still_held: Vec::new(),
            refused_for: None,
        }
    }
}

/// One signal a dry run would have sent (`pier stop --dry-run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedSignal {
    /// The process, for a resource's member; `null` for a container (its engine signals it).
    pub pid: Option<u32>,
    /// Its start time, the kernel's raw value; `null` for a container.
    pub start_time: Option<u64>,
    /// Its command line, exactly as recorded (a container: `container NAME`).
    pub command: String,
    /// `"SIGTERM"`, `"SIGKILL"` under Force, or a container's own stop signal.
    pub signal: String,
    /// Its level, leaf to root: 1 is signalled first; the root's level is last.
    pub order: usize,
}

/// What became of a container a stop signalled through its engine (docs/design.md §4a).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerOutcome {
    /// The engine's full container id.
    pub container_id: String,
    /// Its name.
    pub name: String,
    /// The signal sent through the engine (its stop signal, `"SIGTERM"` unless its image says
    /// otherwise).
    pub signal: String,
    /// Whether the engine took it: `true` sent, `false` refused (nothing was sent), `null`
    /// unknown (no answer came: it may have gone out; the outcome says what is true).
    pub sent: Option<bool>,
    /// What happened to its run: `stopped`, `still_running` (Pier never sends the engine's
    /// SIGKILL), `skipped` (no signal, when a reconciled stop never sent one) or `failed` (the
    /// engine refused the signal, or whether it stopped could not be read).
    pub outcome: MemberOutcome,
    /// The same in words.
    pub detail: String,
}
