//! Asking the person before a plan is carried out (elicitation), in the two ways the protocol
//! has: on 2026-07-28 and later a server may not send requests, so the tool call answers
//! "input required" with the question and the client calls again with the answer (MRTR,
//! SEP-2322); before it, the server sends `elicitation/create` and waits. Which one is
//! decided per request from the negotiated version; whether to ask at all from the client's
//! capabilities. A client that cannot ask is not asked (the plan and the chain are the
//! safety), and the reply says so.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::json;

/// The key of the one input request Pier makes, and of the field the person ticks.
const KEY: &str = "confirm";

/// How the person can be asked in this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// 2026-07-28 and later: an `InputRequiredResult`, answered in the client's next call.
    Inline,
    /// Before: an `elicitation/create` request to the client.
    Request,
    /// The client has no form elicitation: nobody can be asked.
    Cannot,
}

/// How to ask, from the request's protocol version and the client's capabilities.
pub fn how(ctx: &RequestContext<RoleServer>) -> Ask {
    how_for(
        ctx.protocol_version().as_ref(),
        ctx.client_capabilities().as_ref(),
    )
}

/// Why: a client declares form elicitation (`elicitation: {}` meant form before modes
/// existed); without it, a question would fail. A version that forbids server requests gets
/// the question inline.
fn how_for(version: Option<&ProtocolVersion>, caps: Option<&ClientCapabilities>) -> Ask {
    let form = caps
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    match version {
        _ if !form => Ask::Cannot,
        Some(v) if *v >= ProtocolVersion::V_2026_07_28 => Ask::Inline,
        _ => Ask::Request,
    }
}

/// The form: `question`, and one boolean the person must tick.
pub fn form(question: &str) -> ElicitRequestParams {
    let schema: ElicitationSchema = serde_json::from_value(json!({
        "type": "object",
        "properties": { KEY: {
            "type": "boolean",
            "title": "Stop these now",
            "description": "Tick to let Pier stop what the question names; anything else stops nothing.",
            "default": false,
        }},
        "required": [KEY],
    }))
    .expect("the confirmation form is a valid elicitation schema");
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema: schema,
    }
}

/// Whether the person said yes: accepted, with the box ticked. Why so strict: a decline, a
/// dismissal, an empty or malformed answer all leave the processes running.
pub fn said_yes(answer: &ElicitResult) -> bool {
    answer.action == ElicitationAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get(KEY))
            .and_then(|v| v.as_bool())
            == Some(true)
}

/// The plans whose question went out inline and awaits its answer. An answer counts only for
/// a plan asked about in this session, once: the echoed state names the plan, and a replayed
/// or forged one is asked again.
#[derive(Debug, Default)]
pub struct Pending(Mutex<HashSet<String>>);

impl Pending {
    /// The inline question for `plan`, remembered until its answer comes back.
    pub fn ask(&self, plan: &str, question: &str) -> InputRequiredResult {
        self.lock().insert(plan.to_owned());
        let mut requests = InputRequests::new();
        requests.insert(
            KEY.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form(question))),
        );
        InputRequiredResult::new(Some(requests), Some(plan.to_owned()))
    }

    /// The person's answer for `plan` from a retried call, if this call carries one to a
    /// question asked for it (taken: it counts once); `None`: ask.
    pub fn answer(
        &self,
        plan: &str,
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Option<ElicitResult> {
        if state != Some(plan) || !self.lock().remove(plan) {
            return None;
        }
        let answer = responses?.get(KEY)?.clone();
        // A malformed answer is no yes: it reads as a cancel.
        Some(
            serde_json::from_value(answer)
                .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel)),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // A set of strings cannot be left half-changed: a poisoned lock's data is whole.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitationCapability, FormElicitationCapability, UrlElicitationCapability};

    fn caps(form: bool, url: bool) -> ClientCapabilities {
        let mut e = ElicitationCapability::new();
        e.form = form.then(FormElicitationCapability::new);
        e.url = url.then(UrlElicitationCapability::default);
        let mut c = ClientCapabilities::default();
        c.elicitation = Some(e);
        c
    }

    #[test]
    fn a_client_is_asked_the_way_its_version_allows_and_only_if_it_has_forms() {
        let new = ProtocolVersion::V_2026_07_28;
        let old = ProtocolVersion::V_2025_11_25;
        assert_eq!(how_for(Some(&new), Some(&caps(true, true))), Ask::Inline);
        assert_eq!(how_for(Some(&old), Some(&caps(true, false))), Ask::Request);
        // `elicitation: {}`, from before modes: form.
        assert_eq!(how_for(Some(&old), Some(&caps(false, false))), Ask::Request);
        assert_eq!(how_for(Some(&new), Some(&caps(false, true))), Ask::Cannot);
        assert_eq!(
            how_for(Some(&new), Some(&ClientCapabilities::default())),
            Ask::Cannot
        );
        assert_eq!(how_for(Some(&new), None), Ask::Cannot);
    }

    fn answer(action: ElicitationAction, content: serde_json::Value) -> ElicitResult {
        ElicitResult::new(action).with_content(content)
    }

    #[test]
    fn only_an_accepted_ticked_box_is_a_yes() {
        assert!(said_yes(&answer(
            ElicitationAction::Accept,
            json!({"confirm": true})
        )));
        for no in [
            answer(ElicitationAction::Accept, json!({"confirm": false})),
            answer(ElicitationAction::Accept, json!({"confirm": "true"})),
            answer(ElicitationAction::Accept, json!({})),
            answer(ElicitationAction::Decline, json!({"confirm": true})),
            answer(ElicitationAction::Cancel, json!({"confirm": true})),
            ElicitResult::new(ElicitationAction::Accept),
        ] {
            assert!(!said_yes(&no), "{no:?}");
        }
    }

    /// An answer counts for the plan it was asked about, once; another plan's state, none, or
    /// a replay is asked again.
    #[test]
    fn an_inline_answer_counts_once_for_the_plan_it_was_asked_about() {
        let pending = Pending::default();
        let yes: InputResponses = [(
            KEY.to_owned(),
            json!({"action": "accept", "content": {"confirm": true}}),
        )]
        .into();
        assert!(
            pending.answer("p1", Some("p1"), Some(&yes)).is_none(),
            "never asked"
        );
        let asked = pending.ask("p1", "Stop vite?");
        assert_eq!(asked.request_state.as_deref(), Some("p1"));
        assert!(
            pending.answer("p1", Some("p2"), Some(&yes)).is_none(),
            "another state"
        );
        assert!(pending.answer("p1", None, Some(&yes)).is_none(), "no state");
        pending.ask("p1", "Stop vite?");
        assert!(said_yes(
            &pending.answer("p1", Some("p1"), Some(&yes)).unwrap()
        ));
        assert!(
            pending.answer("p1", Some("p1"), Some(&yes)).is_none(),
            "a replay"
        );
        pending.ask("p1", "Stop vite?");
        let garbage: InputResponses = [(KEY.to_owned(), json!(42))].into();
        assert!(!said_yes(
            &pending.answer("p1", Some("p1"), Some(&garbage)).unwrap()
        ));
    }
}
