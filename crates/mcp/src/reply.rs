//! What a tool call answers: the session's reply as structured content (the serde JSON of
//! `pier_core::agent::reply`'s types) with a short text for the model to read, or a refusal —
//! a tool error (`isError`) carrying the `AgentError`'s sentence and its kind, never a
//! protocol error: an agent reads why and what to do next.

use pier_core::agent::reply::{Cards, CarriedOut, HistoryReply, PlanReply, Restarted};
use pier_core::agent::AgentError;
use pier_core::diagnose::port::PortAnswer;
use pier_core::model::card::Level;
use pier_core::model::outcome::ResourceResult;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

/// A reply: `doc` as structured content, `text` as the text content.
pub fn done(doc: &impl Serialize, text: String) -> CallToolResult {
    // Every reply is plain data: serialising it cannot fail.
    let value = serde_json::to_value(doc).expect("a reply serialises");
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// A refusal: the sentence as text, and `{"refused": kind, "why": sentence}` as structured
/// content, so a client can tell a read-only server from a bad id without reading words.
pub fn refused(e: &AgentError) -> CallToolResult {
    let why = e.to_string();
    let mut result = CallToolResult::error(vec![ContentBlock::text(why.clone())]);
    result.structured_content = Some(serde_json::json!({ "refused": kind(e), "why": why }));
    result
}

/// Either.
pub fn answer<T>(reply: Result<T, AgentError>, text: impl FnOnce(&T) -> String) -> CallToolResult
where
    T: Serialize,
{
    match reply {
        Ok(doc) => {
            let words = text(&doc);
            done(&doc, words)
        }
        Err(e) => refused(&e),
    }
}

/// The refusal's kind, as the structured content names it.
pub fn kind(e: &AgentError) -> &'static str {
    match e {
        AgentError::ReadOnly => "read_only",
        AgentError::UnknownPlan(_) => "unknown_plan",
        AgentError::UsedPlan(_) => "used_plan",
        AgentError::ExpiredPlan(..) => "expired_plan",
        AgentError::EmptyPlan => "empty_plan",
        AgentError::Declined => "declined",
        AgentError::Cap(_) => "cap",
        AgentError::BadId(_) => "bad_id",
        AgentError::BadPort(_) => "bad_port",
        AgentError::BadFolder(_) => "bad_folder",
        AgentError::NotYours(_) => "not_yours",
        AgentError::Unasked(_) => "unasked",
        AgentError::Failed(_) => "failed",
    }
}

/// How a `carry_out` was confirmed, added to its structured content as `person_asked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmed {
    /// The person said yes through the client.
    ByPerson,
    /// The client cannot ask (no form elicitation): the plan and the chain were the safety.
    NotAsked,
}

/// A stopped resource its client starts again (`words::comes_back_by_its_client`).
fn by_client(r: &pier_core::model::outcome::StopReport) -> Option<&'static str> {
    pier_core::words::comes_back_by_its_client(r.kind.as_deref())
}

/// `carry_out`'s reply, saying whether a person was asked.
pub fn carried_out(reply: &CarriedOut, how: Confirmed) -> CallToolResult {
    let mut doc = serde_json::to_value(reply).expect("a reply serialises");
    if let Value::Object(map) = &mut doc {
        map.insert(
            "person_asked".into(),
            Value::Bool(how == Confirmed::ByPerson),
        );
    }
    let mut lines: Vec<String> = reply
        .reports
        .iter()
        .map(|r| match &r.snapshot {
            Some(_) if r.result == ResourceResult::Stopped && by_client(r).is_some() => format!(
                "{}: {} ({}); {}",
                r.id,
                r.result.as_str(),
                r.reason,
                by_client(r).unwrap_or_default()
            ),
            Some(snap) if r.result == ResourceResult::Stopped => format!(
                "{}: {} ({}); `restart` {{\"snapshot\": \"{snap}\"}} brings it back",
                r.id,
                r.result.as_str(),
                r.reason
            ),
            _ => format!("{}: {} ({})", r.id, r.result.as_str(), r.reason),
        })
        .collect();
    lines.push(format!(
        "{} left in this session.",
        count(reply.stops_left, "stop", "stops")
    ));
    lines.extend(reply.record_error.as_deref().map(not_recorded));
    if how == Confirmed::NotAsked {
        lines.push(
            "No person was asked: this client cannot ask (no elicitation); the plan and \
             Pier's checks were the only safety."
                .into(),
        );
    }
    done(&doc, lines.join("\n"))
}

/// `cards`: the counts, then one line per card with its id and, when it is not green, the way
/// forward — the text alone is enough for a client that shows the model no structured content.
pub fn cards_text(c: &Cards) -> String {
    let mut lines = Vec::new();
    let (mut all, mut green) = (0, 0);
    for p in &c.scan.projects {
        for r in &p.resources {
            (all, green) = (all + 1, green + usize::from(r.level == Level::Green));
            let ports: Vec<String> = r.ports.iter().map(|x| format!(":{}", x.port)).collect();
            let yours = match c.mine.contains(&r.id) {
                true => ", started by you",
                false => "",
            };
            lines.push(format!(
                "{} {} {} in {} {}{yours}{}",
                r.id,
                r.level.as_str(),
                r.kind,
                p.path,
                ports.join(" "),
                step_of(c, &r.id)
            ));
        }
        for k in &p.containers {
            (all, green) = (all + 1, green + usize::from(k.level == Level::Green));
            lines.push(format!(
                "{} {} container {} ({}) in {}{}",
                k.id,
                k.level.as_str(),
                k.name,
                k.image,
                p.path,
                step_of(c, &k.id)
            ));
        }
    }
    let head = format!(
        "{}, {green} green, {} started by you. A green card, or one you started, can be \
         planned with `plan_stop` {{\"ids\": [id]}}.",
        count(all, "card", "cards"),
        c.mine.len()
    );
    std::iter::once(head)
        .chain(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

/// " — the way forward" for a card that is not green, else nothing.
fn step_of(c: &Cards, id: &str) -> String {
    c.next_steps
        .iter()
        .find(|n| n.id == id)
        .map_or_else(String::new, |n| format!(" — {}", n.next))
}

/// `n` and the noun, singular or plural.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `who_holds_port`: the answer's own words.
pub fn port_text(a: &PortAnswer) -> String {
    match &a.hint {
        Some(hint) => format!("port {}: {}; {hint}", a.port, a.reason),
        None => format!("port {}: {}", a.port, a.reason),
    }
}

/// `plan_stop`: what would stop, what would not, and the next call.
pub fn plan_text(p: &PlanReply) -> String {
    let stops: Vec<&str> = p.stops.iter().map(|s| s.id.as_str()).collect();
    let refused: Vec<String> = p
        .refused
        .iter()
        .map(|r| format!("{} ({}): {}", r.id, r.level.as_str(), r.next))
        .collect();
    let mut text = match &p.plan {
        Some(id) => format!(
            "Plan {id} would stop {}. Carry it out with `carry_out` {{\"plan\": \"{id}\"}} \
             within {} s.",
            stops.join(", "),
            p.expires_in_seconds
        ),
        None => "Nothing in this plan would be stopped.".to_owned(),
    };
    if !refused.is_empty() {
        text.push_str(&format!(" Not stopped: {}", refused.join("; ")));
    }
    text
}

/// `history`: one line per stop record, newest first: what a `restart` takes.
pub fn history_text(h: &HistoryReply) -> String {
    let mut lines = vec![format!(
        "{}.",
        count(h.entries.len(), "stop record", "stop records")
    )];
    for e in &h.entries {
        let who =
            pier_core::words::asked_by(&e.requested_by).unwrap_or_else(|| "by the person".into());
        let result = e.result.as_deref().unwrap_or("unfinished");
        let kind = e.kind.as_deref().unwrap_or("resource");
        let again = match e.restartable {
            true => "; `restart` takes it if this session stopped it",
            false => "",
        };
        lines.push(format!(
            "{} {result}: {kind} in {} at {}, {who}{again}",
            e.snapshot, e.project, e.stopped_at
        ));
    }
    if !h.damaged.is_empty() {
        lines.push(format!(
            "{} could not be read.",
            count(h.damaged.len(), "record", "records")
        ));
    }
    lines.join("\n")
}

/// `restart`: how it ended, and why.
pub fn restart_text(r: &Restarted) -> String {
    let result = serde_json::to_value(r.report.result).unwrap_or_default();
    let mut text = format!(
        "{}: {} ({})",
        r.report.snapshot,
        result.as_str().unwrap_or("?"),
        r.report.reason
    );
    if let Some(why) = &r.record_error {
        text = format!("{text}\n{}", not_recorded(why));
    }
    text
}

/// A request Pier could not put on its record: what was done stands, and the agent is told.
pub fn not_recorded(why: &str) -> String {
    format!("This request is not on Pier's record (the history): {why}")
}

/// A decline the session could not put on its record: the refusal says so too, in its text and
/// as `record_error` in its structured content.
pub fn declined(record_error: Option<&str>) -> CallToolResult {
    let mut result = refused(&AgentError::Declined);
    if let Some(why) = record_error {
        result.content.push(ContentBlock::text(not_recorded(why)));
        if let Some(Value::Object(map)) = &mut result.structured_content {
            map.insert("record_error".into(), Value::from(why));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decline Pier could not put on its record is still a decline, and says it is not on
    /// the record.
    #[test]
    fn a_decline_not_on_the_record_says_so() {
        let plain = declined(None);
        assert_eq!(
            plain.structured_content.as_ref().unwrap()["refused"],
            "declined"
        );
        assert!(plain
            .structured_content
            .unwrap()
            .get("record_error")
            .is_none());
        let lost = declined(Some("disk full"));
        let doc = lost.structured_content.as_ref().unwrap();
        assert_eq!(doc["refused"], "declined");
        assert_eq!(doc["record_error"], "disk full");
        assert_eq!(lost.is_error, Some(true));
        assert_eq!(lost.content.len(), 2);
    }

    /// A refusal is a tool error with the sentence, never a bare "error".
    #[test]
    fn a_refusal_is_a_tool_error_with_its_sentence_and_kind() {
        let r = refused(&AgentError::BadId("1234".into()));
        assert_eq!(r.is_error, Some(true));
        let text = r.content[0].as_text().unwrap().text.clone();
        assert_eq!(text, AgentError::BadId("1234".into()).to_string());
        assert_eq!(r.structured_content.unwrap()["refused"], "bad_id");
    }
}
