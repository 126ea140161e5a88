//! "Automatic stops" (docs/design.md §5a): a submenu saying whether the rules are on, off,
//! unreadable or paused, what they would stop now (the cards whose note says due), and
//! "Pause for 1 hour", "Pause until tomorrow" or "Resume"; and each resource's note, briefly,
//! under its line on its card.

use pier_core::model::card::Resource;
use pier_core::model::rules::{AutoState, RulesState};
use pier_core::words;
use pier_core::worker::ActionKey;

use super::{shortened, Entry};
use crate::ids::Click;
use crate::state::UiState;

/// The submenu's title.
pub const TITLE: &str = "Automatic stops";

/// The items that pause and resume.
pub const PAUSE_HOUR: &str = "Pause for 1 hour";
pub const PAUSE_TOMORROW: &str = "Pause until tomorrow";
pub const RESUME: &str = "Resume";

/// The submenu: `None` until a refresh read the rules.
pub fn submenu(state: &UiState) -> Option<Entry> {
    let status = state.auto.as_ref()?;
    let (word, mut children) = match &status.rules {
        RulesState::Off => (
            "off",
            vec![Entry::info(
                "auto:off",
                "Off: add a rule to rules.toml (`pier auto` says where and how)",
            )],
        ),
        RulesState::Unreadable(why) => (
            "off, unreadable",
            vec![Entry::info(
                "auto:unreadable",
                shortened(&format!("Off: {why}")),
            )],
        ),
        RulesState::On(rules) => {
            let n = rules.rules.len();
            let s = if n == 1 { "" } else { "s" };
            let on = Entry::info("auto:on", format!("On: {n} rule{s}"));
            ("on", [vec![on], due(state)].concat())
        }
    };
    let word = match &status.paused {
        Some(p) => {
            children.push(Entry::info(
                "auto:paused",
                format!("Paused {} (until {})", p.asked, words::utc_minute(p.until)),
            ));
            "paused".to_owned()
        }
        None => word.to_owned(),
    };
    children.push(Entry::Separator);
    children.extend(actions(state, status.paused.is_some()));
    let doing = state.doing(&ActionKey::Auto);
    Some(Entry::Submenu {
        id: "auto".into(),
        text: match doing {
            Some(doing) => format!("{TITLE}: {word} — {doing}"),
            None => format!("{TITLE}: {word}"),
        },
        enabled: true,
        dot: None,
        children,
    })
}

/// What the rules would stop now: each due card's line, or that nothing is due.
fn due(state: &UiState) -> Vec<Entry> {
    let due: Vec<Entry> = state
        .projects()
        .iter()
        .flat_map(|p| p.resources.iter().map(move |r| (p, r)))
        .filter(|(_, r)| r.auto.as_ref().is_some_and(|n| n.state == AutoState::Due))
        .map(|(p, r)| {
            Entry::info(
                format!("auto:due:{}", r.id),
                shortened(&format!("Would stop now: {} in {}", r.kind, p.name)),
            )
        })
        .collect();
    match due.is_empty() {
        true => vec![Entry::info("auto:due", "Nothing is due now")],
        false => due,
    }
}

/// "Pause for 1 hour" and "Pause until tomorrow", or "Resume" while paused; disabled while one
/// of them runs.
fn actions(state: &UiState, paused: bool) -> Vec<Entry> {
    let enabled = !state.is_running(&ActionKey::Auto);
    match paused {
        true => vec![Entry::action(&Click::ResumeAuto, RESUME, enabled)],
        false => vec![
            Entry::action(&Click::PauseAuto { tomorrow: false }, PAUSE_HOUR, enabled),
            Entry::action(
                &Click::PauseAuto { tomorrow: true },
                PAUSE_TOMORROW,
                enabled,
            ),
        ],
    }
}

/// A resource's note under its line on its card, briefly; none when the rules said nothing.
pub fn note(r: &Resource, id: String) -> Option<Entry> {
    let n = r.auto.as_ref()?;
    Some(Entry::info(
        id,
        shortened(&format!("    Auto: {}", words::auto(n))),
    ))
}

#[cfg(test)]
mod tests;
