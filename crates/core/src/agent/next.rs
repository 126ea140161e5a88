//! The way forward an agent is told for a resource Pier will not stop for it, in words made
//! here once. Never a stop anyway or Force (docs/design.md §7a): what is not green is the
//! person's to decide, or turns green on its own.

use std::collections::BTreeSet;

use crate::diagnose::port::PortAnswer;
use crate::model::card::{Level, Resource};
use crate::model::container::Container;
use crate::model::reason::{self, Reason};

use super::own::NotOwn;
use super::reply::{NextStep, PlannedStop};

/// What an agent can do about `r`. `own`: whether the agent started it itself, and if not why.
pub fn next_step(r: &Resource, own: &Result<(), NotOwn>) -> String {
    if r.level == Level::Green {
        return "`plan_stop` can stop it".into();
    }
    let found = reason::reasons_of(&r.evidence);
    if own.is_ok() && found.iter().all(|x| x.agent_own_waives()) {
        return "you started it: `plan_stop` stops it, setting aside only that its parent (you) \
                still runs"
            .into();
    }
    let facts = crate::words::level_reasons(r);
    let reason = found.iter().copied().max_by_key(|x| weight(*x));
    let then = match reason {
        Some(x) if x.never_signalled() => {
            "Pier never stops it for anyone; its own words above say who does".to_owned()
        }
        Some(Reason::NotOrphaned) => match own {
            Err(NotOwn::Before) => "it began before this session, so Pier cannot tell whether \
                                    you started it: if you did, stop it the way you started it; \
                                    else it is the person's: ask them"
                .to_owned(),
            Err(why) => format!(
                "it is the person's ({why}): ask them; what these facts say can be done is \
                 theirs to do, not yours"
            ),
            Ok(()) => "ask the person".to_owned(),
        },
        Some(x) if x.armed_waits() => {
            "it may turn green on its own: look again with `cards` later, or ask the person"
                .to_owned()
        }
        _ => "only the person can decide to stop it: ask them".to_owned(),
    };
    format!("{}; {then}", super::mask::line(&facts))
}

/// Which reason decides the way forward: what no one may set aside first, then what belongs
/// to the person, then what may clear on its own.
fn weight(r: Reason) -> u8 {
    match r {
        x if x.never_signalled() => 3,
        Reason::NotOrphaned | Reason::UnknownKind | Reason::NotRestartable => 2,
        _ => 1,
    }
}

/// What can be done about a container card that is not green: the person's to decide.
pub fn container_step(c: &Container) -> NextStep {
    let facts: Vec<&str> = c
        .evidence
        .iter()
        .filter(|e| e.level != Level::Green)
        .map(|e| e.message.as_str())
        .collect();
    NextStep {
        id: c.id.clone(),
        level: c.level,
        next: format!(
            "{}; only the person can decide to stop it: ask them",
            super::mask::line(&facts.join("; "))
        ),
    }
}

/// A target the plan cannot find now.
pub fn gone(id: &str) -> NextStep {
    NextStep {
        id: id.to_owned(),
        level: Level::Red,
        next: "no such card now (it may have exited, or it is another user's): look again \
               with `cards`"
            .into(),
    }
}

/// A port the plan was asked for that no card holds.
pub fn nothing_on(port: u16) -> NextStep {
    NextStep {
        id: format!(":{port}"),
        level: Level::Green,
        next: format!(
            "no card listens on TCP port {port}: `who_holds_port` says what does, if anything"
        ),
    }
}

/// Why a target of a plan was refused before the chain: what it relied on changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Changed {
    /// It is gone.
    #[error("refused: it is gone since the plan was made; nothing was signalled")]
    Gone,
    /// Its ports are others now.
    #[error("refused: its ports changed since the plan was made (planned {0:?}, now {1:?}); nothing was signalled")]
    Ports(BTreeSet<u16>, BTreeSet<u16>),
    /// A member runs other arguments now.
    #[error(
        "refused: a member runs other arguments since the plan was made; nothing was signalled"
    )]
    Argv,
    /// It is no longer one the agent started itself.
    #[error("refused: it is no longer one the agent started itself; nothing was signalled")]
    NotOwn,
}

/// One target in the words of the person's question: `vite in /src/shop (:5173; pids 10, 11)`.
pub fn describe(s: &PlannedStop) -> String {
    let pids: Vec<&str> = s
        .members
        .iter()
        .filter_map(|m| m.split(':').next())
        .collect();
    let ports: Vec<String> = s.ports.iter().map(|p| format!(":{p}")).collect();
    let kind = s.kind.clone().unwrap_or_else(|| "container".into());
    let mut what = format!("{kind} in {}", s.project);
    match (ports.is_empty(), pids.is_empty()) {
        (false, false) => what += &format!(" ({}; pids {})", ports.join(" "), pids.join(", ")),
        (false, true) => what += &format!(" ({})", ports.join(" ")),
        (true, false) => what += &format!(" (pids {})", pids.join(", ")),
        (true, true) => {}
    }
    if s.own {
        what += ", which the agent started itself";
    }
    what
}

/// The question a person is asked before a plan of `stops` is carried out.
pub fn question(client: &str, stops: &[PlannedStop]) -> String {
    let what: Vec<String> = stops.iter().map(describe).collect();
    question_of(client, &what)
}

/// The one question a person is asked before an agent's stop.
pub fn question_of(client: &str, what: &[String]) -> String {
    format!(
        "The agent {client:?} asks Pier to stop {}. Pier checks again that it is safe and keeps \
         a snapshot of what it stops. Stop it?",
        what.join("; ")
    )
}

/// A port's answer for an agent: who holds it, and the way forward — never a person's command
/// line (`pier stop`), which an agent must not reach past the plan with. `holder`: the one
/// resource that holds it, when one does.
pub fn port_words(
    a: &PortAnswer,
    holder: Option<&Resource>,
    own: Option<&Result<(), NotOwn>>,
    read_only: bool,
) -> (String, Option<String>) {
    let who: Vec<String> = a
        .holders
        .iter()
        .map(|h| match h.level {
            Some(level) => format!("{} ({})", h.what, level.as_str()),
            None => h.what.clone(),
        })
        .collect();
    let reason = format!("TCP port {} is held by {}", a.port, who.join("; "));
    let plan = match read_only {
        true => "green; this Pier server is read-only: ask the person to stop it",
        false => "green: `plan_stop` with this port plans its stop",
    };
    let hint = match (a.holders.len(), holder, own) {
        (1, Some(r), _) if r.level == Level::Green => plan.to_owned(),
        (1, Some(r), Some(own)) => next_step(r, own),
        (1, None, _) if a.holders[0].level == Some(Level::Green) => plan.to_owned(),
        (1, _, _) => "Pier does not stop it for an agent: ask the person".to_owned(),
        _ => "each holder is its own card: `cards` with this port says what can be done".into(),
    };
    (reason, Some(hint))
}
