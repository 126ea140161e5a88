//! Why an agent's request does not go on, in sentences made here once. Every one names what
//! the agent (or the person it works for) can do next.

use std::time::Duration;

/// Why an agent's request was not carried out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// `--read-only`: no plan, stop or restart.
    #[error("this Pier server is read-only (`pier mcp --read-only`): it plans, stops and restarts nothing; ask the person to do it in the Pier app, or with `pier stop` or `pier restart`")]
    ReadOnly,
    /// No plan by that id in this session (never made here, or another session's).
    #[error("no plan `{echo}` in this session: plans are made by `plan_stop` and carried out in the session that made them", echo = echo(.0))]
    UnknownPlan(String),
    /// The plan was carried out (or declined) already.
    #[error(
        "plan `{0}` was used already: a plan is carried out once; make a new one with `plan_stop`"
    )]
    UsedPlan(String),
    /// The plan is older than its lifetime.
    #[error("plan `{0}` expired ({after} after it was made): make a new one with `plan_stop`", after = crate::words::duration_seconds(.1.as_secs()))]
    ExpiredPlan(String, Duration),
    /// The plan has nothing Pier would stop.
    #[error(
        "the plan stops nothing: every target was refused (see `refused` for why and what to do)"
    )]
    EmptyPlan,
    /// The person said no (or dismissed the question) when asked through the client.
    #[error("the person declined the stop when asked: nothing was signalled")]
    Declined,
    /// The session's cap of stops is reached.
    #[error("this session has stopped its {0} resources already (`pier mcp --max-stops`): ask the person to stop more")]
    Cap(usize),
    /// A target the agent named is not an id Pier gives (a bare number, a name, a path).
    #[error("`{echo}` is not a resource id: an id is a card's `id` from the `cards` tool, a pid and its start time (`2476-4670263`) or `container-` and 12 hex digits; a port goes in `ports`", echo = echo(.0))]
    BadId(String),
    /// A port the agent named is not one (0, above 65535, not a whole number).
    #[error("`{echo}` is not a port: a port is a whole number from 1 to 65535 (e.g. 5173)", echo = echo(.0))]
    BadPort(String),
    /// The client said it can ask the person, and asking failed: nothing was signalled, and
    /// the plan is still open.
    #[error("the person could not be asked to confirm ({0}): nothing was signalled; the plan is still open, so try `carry_out` again, or ask the person to stop it in the Pier app or with `pier stop`")]
    Unasked(String),
    /// A folder the agent named to scope a scan cannot be used.
    #[error("{0}")]
    BadFolder(String),
    /// A snapshot this agent did not stop.
    #[error("`{echo}` is not a stop this session made: an agent restarts only what it stopped itself in this session (see `history`); the person can restart it with `pier restart {echo}`", echo = echo(.0))]
    NotYours(String),
    /// Pier could not work at all (the process table or the state folder).
    #[error("{0}")]
    Failed(String),
}

/// What the agent sent, as a sentence repeats it: at most 80 characters, control characters
/// shown as `?`. Why: an id or port is short, and a long or binary one need not come back.
fn echo(sent: &str) -> String {
    let mut out: String = sent
        .chars()
        .take(80)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if sent.chars().nth(80).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_agent_sent_comes_back_short_and_printable() {
        let long = AgentError::BadId("1".repeat(2_000_000)).to_string();
        assert!(long.len() < 300, "{}", long.len());
        let nul = AgentError::BadId("a\0b".into()).to_string();
        assert!(nul.starts_with("`a?b` is not a resource id"), "{nul}");
    }
}
