//! The way forward an agent is told for a resource Pier will not stop for it, in words made
//! here once. Never a stop anyway or Force (docs/design.md §7a): what is not green is the
//! person's to decide, or turns green on its own.

use crate::model::card::{Level, Resource};
use crate::model::reason::{self, Reason};

use super::own::NotOwn;

/// What an agent can do about `r`. `own`: whether the agent started it itself, and if not why.
pub fn next_step(r: &Resource, own: &Result<(), NotOwn>) -> String {
    if r.level == Level::Green {
        return "green: `plan_stop` can stop it".into();
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
            Err(why) => format!("it is the person's ({why}): ask them"),
            Ok(()) => "ask the person".to_owned(),
        },
        Some(x) if x.armed_waits() => {
            "it may turn green on its own: look again with `cards` later, or ask the person"
                .to_owned()
        }
        _ => "only the person can decide to stop it: ask them".to_owned(),
    };
    format!("{}: {facts}; {then}", r.level.as_str())
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
