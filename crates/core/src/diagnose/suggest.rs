//! "Did you mean": for an id that names no card now, the card the user most likely meant,
//! from the same scan. Words only: a suggestion is never acted on, and it only ever names a
//! card the user's own `pier scan` shows (a scan's cards are the user's resources and
//! containers, docs/design.md §2.1).

use crate::model::card::Scan;
use crate::model::target::TargetId;

/// How far (in single-character edits) a typed id may be from a card's id and still be
/// suggested: one or two keys mistyped, not a different id.
const CLOSE: usize = 2;

/// A card the typed id may have meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suggestion {
    /// The typed id's root pid is the root of another card now: `pid` is `now`.
    SamePid {
        /// The typed id's root pid.
        pid: u32,
        /// The id of the card whose root has that pid now.
        now: String,
    },
    /// The one card's id within [`CLOSE`] edits of what was typed.
    Close {
        /// The card's id.
        id: String,
    },
}

impl Suggestion {
    /// The card's id suggested.
    pub fn id(&self) -> &str {
        match self {
            Self::SamePid { now, .. } => now,
            Self::Close { id } => id,
        }
    }
}

/// The card `typed` may have meant, when it names none in `scan`: the card whose root has the
/// typed id's pid (its start time differs: the pid now belongs to a process that started
/// since — a restart, or a start time mistyped), else the one card id closest to it within
/// [`CLOSE`] edits. Why not more: a guess further off, or one of two equally close ids, would
/// name a resource the user did not mean. `None` when `typed` names a card, or nothing is
/// close.
pub fn did_you_mean(scan: &Scan, typed: &str) -> Option<Suggestion> {
    let ids: Vec<&str> = scan
        .projects
        .iter()
        .flat_map(|p| {
            let trees = p.resources.iter().map(|r| r.id.as_str());
            trees.chain(p.containers.iter().map(|c| c.id.as_str()))
        })
        .collect();
    if ids.contains(&typed) {
        return None;
    }
    if let Ok(TargetId::Tree(identity)) = typed.parse::<TargetId>() {
        let same_pid = scan
            .projects
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.root.pid == identity.pid);
        if let Some(r) = same_pid {
            return Some(Suggestion::SamePid {
                pid: identity.pid,
                now: r.id.clone(),
            });
        }
    }
    closest(&ids, typed).map(|id| Suggestion::Close { id: id.to_owned() })
}

/// The one id of `ids` nearest to `typed`, within [`CLOSE`] edits; `None` when none is, or
/// two are equally near.
fn closest<'a>(ids: &[&'a str], typed: &str) -> Option<&'a str> {
    let mut near: Vec<(usize, &str)> = ids
        .iter()
        .map(|id| (edits(id, typed), *id))
        .filter(|(d, _)| *d <= CLOSE)
        .collect();
    near.sort_unstable();
    near.dedup_by(|a, b| a.1 == b.1);
    match near.as_slice() {
        [(d, id), rest @ ..] if rest.first().is_none_or(|(e, _)| e > d) => Some(id),
        _ => None,
    }
}

/// The Levenshtein distance between `a` and `b`, by character: how many insertions,
/// deletions and substitutions turn one into the other.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::card::Level;
    use crate::model::examples::{project, resource};

    fn scan_of(ids: &[&str]) -> Scan {
        let resources = ids
            .iter()
            .map(|id| resource(id, Level::Green, 3000))
            .collect();
        Scan {
            schema: 1,
            generation: 1,
            scanned_at: String::new(),
            sample_ms: 0,
            projects: vec![project("/h/u/web", Level::Green, resources)],
            other_listeners: None,
            engines: Vec::new(),
        }
    }

    #[test]
    fn edits_count_single_character_changes() {
        assert_eq!(edits("6989-3721068", "6989-3721068"), 0);
        assert_eq!(edits("6989-3721068", "6989-3721069"), 1);
        assert_eq!(edits("6989-3721068", "6989-372108"), 1);
        assert_eq!(edits("6989-3721068", "9689-3721068"), 2);
        assert_eq!(edits("", "abc"), 3);
    }

    /// A pid whose start time changed (a restart, or a start time mistyped) names its card now.
    #[test]
    fn the_same_root_pid_names_the_card_it_has_now() {
        let scan = scan_of(&["6989-3721068", "120-5"]);
        assert_eq!(
            did_you_mean(&scan, "6989-1"),
            Some(Suggestion::SamePid {
                pid: 6989,
                now: "6989-3721068".into()
            })
        );
    }

    #[test]
    fn a_mistyped_pid_names_the_one_close_id() {
        let scan = scan_of(&["6989-3721068", "120-5"]);
        assert_eq!(
            did_you_mean(&scan, "6998-3721068").map(|s| s.id().to_owned()),
            Some("6989-3721068".into())
        );
        // Malformed, and close all the same.
        assert_eq!(
            did_you_mean(&scan, "6989-372106x").map(|s| s.id().to_owned()),
            Some("6989-3721068".into())
        );
    }

    /// Too far, or two equally near: no guess, since it would name what the user did not mean.
    #[test]
    fn nothing_is_suggested_when_no_id_is_close_or_two_are() {
        let scan = scan_of(&["6989-3721068", "120-5"]);
        assert_eq!(did_you_mean(&scan, "5555-1111111"), None);
        assert_eq!(did_you_mean(&scan, "6989-3721068"), None, "it names a card");
        let two = scan_of(&["10-17", "10-18"]);
        assert_eq!(did_you_mean(&two, "11-19"), None);
    }
}
