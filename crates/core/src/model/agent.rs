//! What an agent asked for, as a record (`agent-<ms>-<pid>-<n>` in the state folder): who asked
//! (the MCP client's name), what, and the honest result of each target — never a bare "done"
//! (docs/design.md §7a). A stop that reached the chain is also in its snapshot; this record is
//! what stays of one refused before it, of a plan the person declined, and of a restart.
//! What writes and reads it: `agent/journal.rs`.

use serde::{Deserialize, Serialize};

/// What the agent asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentAction {
    /// A plan carried out (`carry_out`).
    Stop,
    /// A plan the person declined when asked through the client: nothing was signalled.
    Declined,
    /// A restart of a snapshot (`restart`).
    Restart,
}

impl AgentAction {
    /// The action as the JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentAction::Stop => "stop",
            AgentAction::Declined => "declined",
            AgentAction::Restart => "restart",
        }
    }
}

/// One target's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentResult {
    /// The target: a resource id (`2476-4670263`, `ctr-…`), or for a restart the snapshot's
    /// name.
    pub id: String,
    /// As the stop or restart reports it (`"stopped"`, `"partially_stopped"`, `"refused"`,
    /// `"ready"`, …), or `"declined"`.
    pub result: String,
    /// Why, in the words the agent was told (secrets masked).
    pub reason: String,
    /// The snapshot record that shows this result too (a stop's snapshot, a restart recorded
    /// in it); `None`: this record is the only one.
    pub snapshot: Option<String>,
    /// Processes that came back during the stop and still ran when it ended, each
    /// `pid N: command`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub respawns: Vec<String>,
}

/// The agent request record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRequest {
    /// The record's schema version (1).
    pub schema: u32,
    /// Who asked: the name the MCP client gave (`clientInfo.name`).
    pub client: String,
    /// When, RFC 3339, UTC.
    pub at: String,
    /// What it asked for.
    pub action: AgentAction,
    /// The plan, for a stop or a decline.
    pub plan: Option<String>,
    /// Why the request as a whole was refused before any target was looked at (a used or
    /// expired plan); `None` otherwise.
    pub refused: Option<String>,
    /// One result per target.
    pub results: Vec<AgentResult>,
}

impl AgentRequest {
    /// The schema this build writes.
    pub const SCHEMA: u32 = 1;
}

/// One line of `pier history` for an agent's request that no snapshot shows: a refusal before
/// the chain, a decline, a restart that did not start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentLine {
    /// The record's name.
    pub record: String,
    /// When, RFC 3339, UTC.
    pub at: String,
    /// Who asked: the MCP client's name.
    pub client: String,
    /// What it asked for.
    pub action: AgentAction,
    /// The plan, for a stop or a decline.
    pub plan: Option<String>,
    /// The target; `None` when the request as a whole was refused.
    pub id: Option<String>,
    /// The result (`"refused"`, `"declined"`, …).
    pub result: String,
    /// Why, as the agent was told.
    pub reason: String,
    /// What came back during the stop and still ran.
    pub respawns: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_written_and_spells_its_action_in_snake_case() {
        let r = AgentRequest {
            schema: AgentRequest::SCHEMA,
            client: "claude-code".into(),
            at: "2026-12-01T12:00:00Z".into(),
            action: AgentAction::Declined,
            plan: Some("ab12".into()),
            refused: None,
            results: vec![AgentResult {
                id: "100-1000".into(),
                result: "declined".into(),
                reason: "the person declined".into(),
                snapshot: None,
                respawns: Vec::new(),
            }],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""action":"declined""#), "{text}");
        assert!(!text.contains("respawns"), "{text}");
        assert_eq!(serde_json::from_str::<AgentRequest>(&text).unwrap(), r);
    }
}
