//! A restart's result, and `pier history`: one line per snapshot, and the records that could not
//! be read.

use serde::{Deserialize, Serialize};

use super::request::RequestedBy;
use super::Pid;

/// How a restart ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartResult {
    /// Started, and every recorded server port listens from the new tree.
    Ready,
    /// Started, but not every recorded server port listened within the wait (see the log).
    NotReady,
    /// Not started: a rule said no.
    Refused,
    /// Not started: Pier could not (the record, the log, the exec).
    Failed,
}

/// The answer to one restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartReport {
    /// The snapshot record it was asked to restart from (`snap-<id>-<ms>`).
    pub snapshot: String,
    /// How it ended.
    pub result: RestartResult,
    /// Why, in words (`"listening again as pid 4242"`).
    pub reason: String,
    /// The new root, once started.
    pub pid: Option<Pid>,
    /// The new root's start time, the kernel's raw value; `None` until started, or when it
    /// could not be read.
    pub start_time: Option<u64>,
    /// The log file the new tree writes its output to (`<state folder>/logs/<snapshot>.log`),
    /// once the restart got that far.
    pub log: Option<String>,
    /// The last lines of the log, when not ready.
    pub log_tail: Vec<String>,
    /// The recorded ports that were a helper's (`127.0.0.1:40123`): not waited for, since a
    /// helper picks new ones at each start. Absent from reports of older `pier` binaries.
    #[serde(default)]
    pub helper_ports: Vec<String>,
    /// The program it runs (argv[0] resolved against the recorded folder and `PATH`), once the
    /// record was read and it could be resolved; `None` for a container.
    #[serde(default)]
    pub program: Option<String>,
    /// The folder it runs it in, as recorded; `None` for a container.
    #[serde(default)]
    pub folder: Option<String>,
    /// The recorded environment's entries that change what code runs (`LD_PRELOAD=/x`, a
    /// `PATH` led by a folder the user does not control), as `KEY=value`; no other entry.
    #[serde(default)]
    pub code_env: Vec<String>,
    /// How the started root ended, when it exited before the server's ports listened (a
    /// crash); `None` otherwise, and in reports of older `pier` binaries.
    #[serde(default)]
    pub exited: Option<Exited>,
}

/// How a restarted root ended before its server's ports listened: a crash, or a command that
/// no longer serves. Kept in the snapshot's restart record, so `pier history` says it too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exited {
    /// Its exit status, when it exited on its own (`1`).
    pub status: Option<i32>,
    /// The signal that ended it, when one did (`9`).
    pub signal: Option<i32>,
    /// The last lines this run wrote to its log, bounded (`restart::spawn::crash_tail`);
    /// empty when it wrote nothing there (its output went elsewhere, or it wrote none).
    pub log_tail: String,
}

impl RestartReport {
    /// A restart that started nothing (`Refused` or `Failed`), saying why.
    pub fn not_started(snapshot: &str, result: RestartResult, reason: String) -> Self {
        Self {
            snapshot: snapshot.to_owned(),
            result,
            reason,
            pid: None,
            start_time: None,
            log: None,
            log_tail: Vec::new(),
            helper_ports: Vec::new(),
            program: None,
            folder: None,
            code_env: Vec::new(),
            exited: None,
        }
    }
}

/// One line of `pier history`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The snapshot record's name (`snap-<id>-<ms>`): what `pier restart` takes.
    pub snapshot: String,
    /// The stopped resource's id (`"<root pid>-<root start_time>"`).
    pub id: String,
    /// The tool kind at stop time, when the record has it.
    pub kind: Option<String>,
    /// The project folder (or, outside any project, the working directory) it was stopped in.
    pub project: String,
    /// The argv a restart runs (the restart target's, with U+FFFD for bytes that are not
    /// UTF-8); empty when no recorded member can bring the tree back.
    pub root_command: Vec<String>,
    /// Every recorded listener (`127.0.0.1:5173`, `[::1]:5173`).
    pub ports: Vec<String>,
    /// Those of `ports` that were a helper's: shown apart, not checked or waited for.
    pub helper_ports: Vec<String>,
    /// When the stop began (its snapshot was written), whatever became of it.
    pub stopped_at: String,
    /// The stop's result (`"stopped"`, `"partially_stopped"`, `"refused"`, `"failed"`);
    /// `null` until it finished.
    pub result: Option<String>,
    /// Whether the stop sent any signal: `false` when a check refused it before the first
    /// one (nothing was stopped), `null` when it is not known — it never finished recording
    /// its outcome, it was reconciled later, or (a container's) its engine did not confirm the
    /// signal.
    pub signalled: Option<bool>,
    /// The stop's reason, as it reported it; `null` until it finished.
    pub reason: Option<String>,
    /// When a read reconciled this stop, which Pier could not finish (it was killed, or the
    /// disk was full): its result then comes from its members' fates (docs/design.md §3.10).
    pub reconciled_at: Option<String>,
    /// Why the reconciled view shown here could not be written (a read-only or full state
    /// folder); a later read that can write it does. `null` otherwise.
    pub not_written: Option<String>,
    /// Whether every restart rule passed when the history was read. Advice: a restart checks
    /// everything again.
    pub restartable: bool,
    /// Why it cannot be restarted now, in words; `null` when it can.
    pub why_not: Option<String>,
    /// The program a restart runs (argv[0] resolved against the recorded folder and `PATH`);
    /// `None` when it cannot be resolved, and for a container.
    pub program: Option<String>,
    /// The folder a restart runs it in, as recorded; `None` for a container.
    pub folder: Option<String>,
    /// The recorded environment's entries that change what code runs (`LD_PRELOAD=/x`, a
    /// `PATH` led by a folder the user does not control), as `KEY=value`; no other entry is
    /// ever shown (the environment holds secrets).
    pub code_env: Vec<String>,
    /// Every restart made from it, oldest first.
    pub restarts: Vec<HistoryRestart>,
    /// The cleanup it was part of (`pier restart --last`); `null` in records written before
    /// it was kept.
    pub batch: Option<String>,
    /// Who asked for the stop (a person, in records written before it was kept).
    pub requested_by: RequestedBy,
    /// A stop anyway: the reasons it set aside, each with its fact. Empty otherwise.
    #[serde(default)]
    pub set_aside: Vec<super::reason::SetAside>,
}

/// One restart made from a snapshot, as `pier history` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryRestart {
    /// When it was made (RFC 3339, UTC).
    pub at: String,
    /// The new root's pid; `null` for a container (its engine started it).
    pub pid: Option<u32>,
    /// Whether every recorded server port listened again within the wait.
    pub ready: bool,
    /// How it ended, when it exited before listening; `null` otherwise (and in records
    /// written before it was kept).
    pub exited: Option<Exited>,
}

impl HistoryEntry {
    /// The server's recorded ports: `ports` without the helpers'.
    pub fn server_ports(&self) -> impl Iterator<Item = &String> {
        self.ports.iter().filter(|p| !self.helper_ports.contains(p))
    }

    /// A stop that sent no signal stopped nothing: its record is kept, but it
    /// is never shown as a stop.
    pub fn sent_nothing(&self) -> bool {
        self.signalled == Some(false)
    }
}

/// The snapshots, and the records that could not be read (kept as they are).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// One line per snapshot record, by record name.
    pub entries: Vec<HistoryEntry>,
    /// The records that could not be read, each a sentence saying which and why.
    pub damaged: Vec<String>,
}
