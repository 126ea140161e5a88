//! A stop anyway (docs/design.md §3.8): the same chain, setting aside only the reasons the
//! table lets a person skip (`model::reason`) and only those the person confirmed. What is set
//! aside is named in the report and the record; anything else refuses.

use std::collections::BTreeSet;

use crate::model::card::{Evidence, Resource};
use crate::model::reason::{self, Reason, Refused, SetAside};

/// Why a stop anyway of a resource does not go on, in words made here once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAside {
    /// A reason no stop anyway sets aside, with its fact.
    #[error("a stop anyway never sets aside {0} ({words}): {1}", words = .0.words())]
    Never(Reason, String),
    /// A reason the person did not confirm: new since they were shown the card.
    #[error(
        "{0} was not among the reasons confirmed for the stop anyway ({1}): look at the card \
         again and confirm it, or wait"
    )]
    New(Reason, String),
}

/// What a stop anyway of `r` sets aside, given the reasons the person `confirmed`: every fact
/// against it, when each may be set aside and was confirmed; else why not.
pub fn set_aside(r: &Resource, confirmed: &BTreeSet<Reason>) -> Result<Vec<SetAside>, NotAside> {
    let found = reason::reasons_of(&r.evidence);
    if let Some(refused) = reason::not_set_aside(&found, confirmed) {
        let why = match refused {
            Refused::Never(x) => NotAside::Never(x, fact_of(&r.evidence, x)),
            Refused::NotConfirmed(x) => NotAside::New(x, fact_of(&r.evidence, x)),
        };
        return Err(why);
    }
    Ok(aside(&r.evidence))
}

/// Every fact against a stop in `evidence`, as set aside.
pub fn aside(evidence: &[Evidence]) -> Vec<SetAside> {
    evidence
        .iter()
        .filter_map(|e| {
            Some(SetAside {
                reason: Reason::of(e)?,
                fact: e.message.clone(),
            })
        })
        .collect()
}

/// The first fact in `evidence` that is `reason`, in its words.
fn fact_of(evidence: &[Evidence], reason: Reason) -> String {
    evidence
        .iter()
        .find(|e| Reason::of(e) == Some(reason))
        .map_or_else(|| "nothing is known about it".into(), |e| e.message.clone())
}

/// Why an ordinary stop refuses a resource that is not green, with the way forward: a stop
/// anyway when every reason may be set aside; else the card's own next step.
pub fn not_green(r: &Resource) -> String {
    let found = reason::reasons_of(&r.evidence);
    let reasons = crate::words::level_reasons(r);
    let level = r.level.as_str();
    if found.iter().all(|r| r.person_may_skip()) {
        let found: Vec<Reason> = found.into_iter().collect();
        format!(
            "it is {level} now, not green: {reasons}; {}",
            offer(&r.id, &found)
        )
    } else {
        format!("it is {level} now, not green: {reasons}")
    }
}

/// Why a stop refuses a resource that is not green, offering nothing past it: what an agent
/// is told (docs/design.md §7a), for whom a stop anyway is never offered.
pub fn not_green_plainly(r: &Resource) -> String {
    format!(
        "it is {} now, not green: {}",
        r.level.as_str(),
        crate::words::level_reasons(r)
    )
}

pub use crate::words::stop_anyway as offer;

/// Whether a checkpoint sets aside a fact that is `reason`, in a stop anyway that confirmed
/// `confirmed` (`None`: no stop anyway).
pub fn skips(confirmed: Option<&BTreeSet<Reason>>, reason: Reason) -> bool {
    reason.person_may_skip() && confirmed.is_some_and(|c| c.contains(&reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::card::{EvidenceKind, Level};
    use crate::model::examples;

    fn with(kind: EvidenceKind, level: Level, message: &str) -> Resource {
        let mut r = examples::resource("10-20", level, 5173);
        r.evidence.push(Evidence {
            kind,
            level,
            message: message.into(),
            source: "test".into(),
        });
        r
    }

    #[test]
    fn a_confirmed_skippable_reason_is_set_aside_and_named() {
        let r = with(
            EvidenceKind::NotOrphaned,
            Level::Yellow,
            "its parent is bash",
        );
        let got = set_aside(&r, &BTreeSet::from([Reason::NotOrphaned])).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].reason, Reason::NotOrphaned);
        assert_eq!(got[0].fact, "its parent is bash");
    }

    #[test]
    fn a_reason_not_confirmed_or_never_skippable_refuses() {
        let r = with(EvidenceKind::LiveConnection, Level::Red, "curl holds it");
        let why = set_aside(&r, &BTreeSet::from([Reason::NotOrphaned]))
            .unwrap_err()
            .to_string();
        assert!(why.contains("not among the reasons confirmed"), "{why}");
        let r = with(EvidenceKind::DataService, Level::Yellow, "postgres");
        let all = reason::ALL.into_iter().collect();
        let why = set_aside(&r, &all).unwrap_err().to_string();
        assert!(why.contains("never sets aside data_service"), "{why}");
    }

    #[test]
    fn an_ordinary_refusal_offers_a_stop_anyway_only_where_one_may_go_on() {
        let r = with(EvidenceKind::Activity, Level::Yellow, "busy");
        assert!(not_green(&r).contains("pier stop --anyway 10-20"));
        let r = with(EvidenceKind::Managed, Level::Yellow, "pm2 runs it");
        assert!(!not_green(&r).contains("--anyway"));
    }
}
