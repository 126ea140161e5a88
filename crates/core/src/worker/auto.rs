//! The app's automatic stops (docs/design.md §5a): the rules and their pause as the menu shows
//! them at each refresh, and "Pause for 1 hour", "Pause until tomorrow", "Resume" as result
//! lines. Pure functions over the engine's answers.

use super::{ActionKey, ActionReport, Tone};
use crate::model::rules::{Pause, RulesState};
use crate::store::StoreError;

/// The rules as a refresh read them, and the pause in force: what the menu's "Automatic
/// stops" says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoStatus {
    /// On, off or unreadable.
    pub rules: RulesState,
    /// The pause in force; `None` when there is none (or it could not be read: the cards say
    /// so then).
    pub paused: Option<Pause>,
}

/// "Automatic stops paused for 60 min (until …)", or why not.
pub fn pause_summary(result: &Result<Pause, StoreError>) -> ActionReport {
    let (tone, summary) = match result {
        Ok(p) => (
            Tone::Done,
            format!(
                "Automatic stops paused {} (until {})",
                p.asked,
                crate::words::utc_minute(p.until)
            ),
        ),
        Err(e) => (Tone::Failed, format!("Automatic stops not paused — {e}")),
    };
    ActionReport {
        key: ActionKey::Auto,
        tone,
        summary,
        restart: None,
    }
}

/// "Automatic stops resumed", "… were not paused", or why not.
pub fn resume_summary(result: &Result<bool, StoreError>) -> ActionReport {
    let (tone, summary) = match result {
        Ok(true) => (Tone::Done, "Automatic stops resumed".to_owned()),
        Ok(false) => (Tone::Done, "Automatic stops were not paused".to_owned()),
        Err(e) => (Tone::Failed, format!("Automatic stops not resumed — {e}")),
    };
    ActionReport {
        key: ActionKey::Auto,
        tone,
        summary,
        restart: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pause and a resume each say what they did, or that they failed, under the one key
    /// of the automatic stops.
    #[test]
    fn a_pause_and_a_resume_say_what_they_did() {
        let p = Pause {
            until: 86_400,
            asked: "until tomorrow".into(),
        };
        let r = pause_summary(&Ok(p));
        assert_eq!(r.key, ActionKey::Auto);
        assert_eq!(r.tone, Tone::Done);
        assert!(r
            .summary
            .starts_with("Automatic stops paused until tomorrow (until 1970-01-02"));
        let failed = pause_summary(&Err(StoreError::EmptyStateDir));
        assert_eq!(failed.tone, Tone::Failed);
        assert_eq!(
            resume_summary(&Ok(false)).summary,
            "Automatic stops were not paused"
        );
    }
}
