//! "Stop anyway…" on a resource of a yellow or red card (docs/design.md §2, §3): a submenu
//! that repeats each fact against the resource and what a restart will not bring back, then one
//! item that confirms them and sends SIGTERM anyway. Offered only where a person may set every
//! reason aside ([`ids::offers_anyway`]).

use pier_core::model::card::{Project, Resource};
use pier_core::model::reason::Reason;
use pier_core::worker::ActionKey;

use super::{evidence_mark, shortened, Entry};
use crate::ids::{self, Click};
use crate::state::UiState;

/// The submenu's title.
pub const TITLE: &str = "Stop anyway…";

/// The item that confirms the reasons shown above it.
pub const CONFIRM: &str = "Send SIGTERM anyway";

/// The "Stop anyway…" submenu of `r`, the `i`th resource of the card of `p`, when the card
/// offers one: a line per fact against it, what it means for a restart, and the confirming
/// item (enabled as "Clean up safely" is, when no stop of the card runs). `at` names each line.
pub fn submenu(
    state: &UiState,
    p: &Project,
    i: usize,
    r: &Resource,
    at: &dyn Fn(&str) -> String,
) -> Option<Entry> {
    if !ids::offers_anyway(p, r) {
        return None;
    }
    let click = Click::StopAnyway {
        path: p.path.clone(),
        id: r.id.parse().ok()?,
        seen: ids::card_seen(p),
        reasons: r.reasons.clone(),
    };
    let of = |what: &str| at(&format!("res:{i}:anyway{what}"));
    let mut children: Vec<Entry> = r
        .evidence
        .iter()
        .filter_map(|e| Some((Reason::of(e)?, e)))
        .enumerate()
        .map(|(j, (reason, e))| {
            let fact = format!("{} {reason}: {}", evidence_mark(e.level), e.message);
            Entry::info(of(&format!(":fact:{j}")), shortened(&fact))
        })
        .collect();
    let restart: Vec<&str> = r.reasons.iter().filter_map(|x| x.after_restart()).collect();
    if !restart.is_empty() {
        children.push(Entry::info(of(":restart"), restart.join(" ")));
    }
    children.push(Entry::Separator);
    let key = ActionKey::Project(p.path.clone());
    let enabled = !state.is_running(&key) && state.may_stop().is_ok();
    children.push(Entry::action(&click, CONFIRM, enabled));
    Some(Entry::Submenu {
        id: of(""),
        text: TITLE.into(),
        enabled: true,
        dot: None,
        children,
    })
}

#[cfg(test)]
mod tests;
