//! What an agent is told: serialisable replies, each with its masks applied (`mask`) and no
//! environment, and no stop anyway or Force ever offered. `pier-mcp` sends them as a tool's
//! structured content, with `text` as its text content.

use serde::Serialize;

use crate::model::card::{Level, Scan};
use crate::model::history::{HistoryEntry, RestartReport};
use crate::model::outcome::StopReport;
use crate::model::reason::SetAside;

/// The `cards` tool: the scan, and for every resource that is not green the way forward.
#[derive(Debug, Clone, Serialize)]
pub struct Cards {
    /// The scan document (docs/scan-json.md, schema 1), argv masked.
    pub scan: Scan,
    /// The ids of the resources this agent started itself (`own`).
    pub mine: Vec<String>,
    /// One line per resource that is not green: what would make it stoppable, or who can.
    pub next_steps: Vec<NextStep>,
}

/// What can be done about a resource Pier will not stop for an agent.
#[derive(Debug, Clone, Serialize)]
pub struct NextStep {
    /// The resource's id.
    pub id: String,
    /// Its level now.
    pub level: Level,
    /// The way forward, in words (never a stop anyway or Force).
    pub next: String,
}

/// The `plan_stop` tool: what would stop, what would not and why.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReply {
    /// The plan's id, for `carry_out`; `null` when nothing would be stopped.
    pub plan: Option<String>,
    /// Seconds until the plan expires.
    pub expires_in_seconds: u64,
    /// What carrying it out would stop.
    pub stops: Vec<PlannedStop>,
    /// What it would not stop, each with why and the way forward.
    pub refused: Vec<NextStep>,
    /// The question the person is asked before it is carried out, where the client can ask;
    /// `null` when there is no plan.
    pub question: Option<String>,
}

/// One target a plan would stop.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedStop {
    /// Its id.
    pub id: String,
    /// What it is (`vite`), when known.
    pub kind: Option<String>,
    /// Its project folder.
    pub project: String,
    /// Its ports.
    pub ports: Vec<u16>,
    /// Its members, leaf last, each as `pid: command` with secrets masked.
    pub members: Vec<String>,
    /// The agent started it itself.
    pub own: bool,
    /// What the stop sets aside: for the agent's own, its live parent; else nothing.
    pub sets_aside: Vec<SetAside>,
}

/// The `carry_out` tool: one honest result per target, never a bare "done".
#[derive(Debug, Clone, Serialize)]
pub struct CarriedOut {
    /// The plan carried out.
    pub plan: String,
    /// One report per target (docs/stop-json.md), argv masked.
    pub reports: Vec<StopReport>,
    /// Stops this session may still make.
    pub stops_left: usize,
    /// Why this request could not be put on the record (`null`: it is); the stops above
    /// happened as reported all the same.
    pub record_error: Option<String>,
}

/// A plan the person declined when asked: nothing was signalled, and it is on the record.
#[derive(Debug, Clone, Serialize)]
pub struct Declined {
    /// The plan declined (now used).
    pub plan: String,
    /// Why the decline could not be put on the record (`null`: it is).
    pub record_error: Option<String>,
}

/// The `history` tool: the records, masked.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryReply {
    /// One line per stop record, as `pier history --json` gives them, masked.
    pub entries: Vec<HistoryEntry>,
    /// The records that could not be read, each a sentence.
    pub damaged: Vec<String>,
}

/// The `restart` tool: the restart's report.
#[derive(Debug, Clone, Serialize)]
pub struct Restarted {
    /// `pier restart --json`'s report.
    pub report: RestartReport,
    /// Why this restart could not be put on the record (`null`: it is); it happened as
    /// reported all the same.
    pub record_error: Option<String>,
}
