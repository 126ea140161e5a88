//! Every fact against a resource as one typed reason, and the one table of what may set each
//! aside (docs/design.md §2.13): a person's stop anyway, an armed stop that waits, an agent's
//! stop of what it started itself.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::card::{Evidence, EvidenceKind, Level};

/// One kind of fact against stopping a resource: a row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A client holds a connection on one of its listeners, or waits to be accepted.
    LiveConnection,
    /// Busy in the activity sample.
    Busy,
    /// Its parent still runs: a shell, terminal, editor, or any process Pier cannot place.
    NotOrphaned,
    /// A tool Pier does not know, or known only by how it was launched and not idle over its
    /// life.
    UnknownKind,
    /// A restart could not bring it back (argv rewritten, environment withheld).
    NotRestartable,
    /// A database, cache, queue or store: its data lives there.
    DataService,
    /// Run by a process manager, a service unit, or (a container) its engine's policy.
    Managed,
    /// PID 1, Pier and its ancestors, another user's process, an engine's process or client,
    /// or on the user's protect list.
    Protected,
    /// Something that could not be read (a process, its files, its identity, its activity, the
    /// connection tables), or a listener shared with a process outside it.
    Unreadable,
}

/// Every reason, in the table's order.
pub const ALL: [Reason; 9] = [
    Reason::LiveConnection,
    Reason::Busy,
    Reason::NotOrphaned,
    Reason::UnknownKind,
    Reason::NotRestartable,
    Reason::DataService,
    Reason::Managed,
    Reason::Protected,
    Reason::Unreadable,
];

impl Reason {
    /// The reason a piece of evidence is, if it argues against stopping (yellow or red).
    /// Why a fact that is never against (a kind, a port) still maps when it is: an unexpected
    /// level must not become a reason anything may set aside, so it fails closed as unread.
    pub fn of(e: &Evidence) -> Option<Reason> {
        use EvidenceKind as K;
        if e.level == Level::Green {
            return None;
        }
        Some(match e.kind {
            K::LiveConnection => Reason::LiveConnection,
            K::Activity => Reason::Busy,
            K::NotOrphaned => Reason::NotOrphaned,
            K::UnknownKind | K::LifeActivity => Reason::UnknownKind,
            K::NotRestartable => Reason::NotRestartable,
            K::DataService => Reason::DataService,
            K::ServiceUnit | K::Managed | K::EngineManaged => Reason::Managed,
            K::Protected | K::UserProtected | K::EngineClient => Reason::Protected,
            K::ConnectionsUnreadable
            | K::IdentityUnreadable
            | K::ExeUnreadable
            | K::FdTableUnreadable
            | K::ActivityUnreadable
            | K::SharedListener
            | K::ContainerConnectionsUnread => Reason::Unreadable,
            K::ToolKind
            | K::Listening
            | K::InternalConnection
            | K::Orphaned
            | K::Respawner
            | K::ActivityNotSampled
            | K::Container => Reason::Unreadable,
        })
    }

    /// Whether a person who was shown it may set it aside with a stop anyway. What stays is
    /// what a restart or a second look cannot undo: a data service's data, a manager that
    /// would start it again, what Pier must never touch, and what Pier could not see.
    pub fn person_may_skip(self) -> bool {
        matches!(
            self,
            Reason::LiveConnection
                | Reason::Busy
                | Reason::NotOrphaned
                | Reason::UnknownKind
                | Reason::NotRestartable
        )
    }

    /// Whether an armed stop ("stop when safe") waits for it to clear: what can change on its
    /// own (a client leaves, a build ends, a parent exits, a table becomes readable).
    pub fn armed_waits(self) -> bool {
        matches!(
            self,
            Reason::LiveConnection | Reason::Busy | Reason::NotOrphaned | Reason::Unreadable
        )
    }

    /// Whether an agent may set it aside on what it started itself: only its own live
    /// parent, which is the agent (docs/design.md §7a).
    pub fn agent_own_waives(self) -> bool {
        self == Reason::NotOrphaned
    }

    /// What no stop ever signals, a stop anyway and Force included: what Pier must never touch,
    /// a data service's data, and a manager's program, which its manager would start again.
    pub fn never_signalled(self) -> bool {
        matches!(
            self,
            Reason::Protected | Reason::DataService | Reason::Managed
        )
    }

    /// What setting it aside means for a restart, when it changes anything: the words a stop
    /// anyway's confirmation repeats (the CLI's question, the app's submenu).
    pub fn after_restart(self) -> Option<&'static str> {
        match self {
            Reason::NotOrphaned => {
                Some("A restart would run it on its own: its parent is not brought back.")
            }
            Reason::NotRestartable => Some("It cannot be restarted afterwards."),
            _ => None,
        }
    }

    /// The reason as the JSON and `--accept` spell it (`"live_connection"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::LiveConnection => "live_connection",
            Reason::Busy => "busy",
            Reason::NotOrphaned => "not_orphaned",
            Reason::UnknownKind => "unknown_kind",
            Reason::NotRestartable => "not_restartable",
            Reason::DataService => "data_service",
            Reason::Managed => "managed",
            Reason::Protected => "protected",
            Reason::Unreadable => "unreadable",
        }
    }

    /// The reason in a few words, for a sentence ("a live connection").
    pub fn words(self) -> &'static str {
        match self {
            Reason::LiveConnection => "a live connection",
            Reason::Busy => "busy",
            Reason::NotOrphaned => "its parent still runs",
            Reason::UnknownKind => "not a dev tool Pier knows",
            Reason::NotRestartable => "it could not be restarted",
            Reason::DataService => "a data service",
            Reason::Managed => "run by a manager",
            Reason::Protected => "protected",
            Reason::Unreadable => "something could not be read",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that names no reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a reason; the reasons are {names}", names = names())]
pub struct BadReason(pub String);

/// Every reason's name, comma-separated.
fn names() -> String {
    ALL.map(Reason::as_str).join(", ")
}

impl std::str::FromStr for Reason {
    type Err = BadReason;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ALL.into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| BadReason(s.to_owned()))
    }
}

/// The reasons a resource's evidence gives against stopping it. No evidence at all is not
/// knowing anything (`rules::level_of` calls it yellow): unread, never set aside.
pub fn reasons_of(evidence: &[Evidence]) -> BTreeSet<Reason> {
    if evidence.is_empty() {
        return BTreeSet::from([Reason::Unreadable]);
    }
    evidence.iter().filter_map(Reason::of).collect()
}

/// A reason a stop anyway set aside, with the fact it was (the evidence's words).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetAside {
    /// Which reason.
    pub reason: Reason,
    /// The fact, as the card or the checkpoint said it.
    pub fact: String,
}

/// A stop anyway: for each target id, the reasons the person was shown and confirmed. Empty:
/// an ordinary stop, which sets nothing aside.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anyway(BTreeMap<String, BTreeSet<Reason>>);

impl Anyway {
    /// A stop anyway of `id`, for the reasons `confirmed`.
    pub fn confirm(&mut self, id: &str, confirmed: BTreeSet<Reason>) {
        self.0.insert(id.to_owned(), confirmed);
    }

    /// What the person confirmed for `id`; `None`: no stop anyway of it.
    pub fn confirmed(&self, id: &str) -> Option<&BTreeSet<Reason>> {
        self.0.get(id)
    }

    /// Whether this is a stop anyway of anything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Why a stop anyway of a resource with `found` reasons cannot go on, given what the person
/// `confirmed`: the first reason no person may set aside, else the first not confirmed. `None`:
/// every reason may be set aside and was confirmed.
pub fn not_set_aside(found: &BTreeSet<Reason>, confirmed: &BTreeSet<Reason>) -> Option<Refused> {
    if let Some(r) = found.iter().find(|r| !r.person_may_skip()) {
        return Some(Refused::Never(*r));
    }
    found
        .iter()
        .find(|r| !confirmed.contains(r))
        .map(|r| Refused::NotConfirmed(*r))
}

/// Why a reason was not set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No stop anyway sets it aside.
    Never(Reason),
    /// The person did not confirm it: it is new since they were shown the card.
    NotConfirmed(Reason),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EvidenceKind, level: Level) -> Evidence {
        Evidence {
            kind,
            level,
            message: String::new(),
            source: String::new(),
        }
    }

    #[test]
    fn the_table_lets_a_person_skip_only_what_a_restart_or_a_second_look_can_undo() {
        let skippable: Vec<Reason> = ALL.into_iter().filter(|r| r.person_may_skip()).collect();
        assert_eq!(
            skippable,
            [
                Reason::LiveConnection,
                Reason::Busy,
                Reason::NotOrphaned,
                Reason::UnknownKind,
                Reason::NotRestartable
            ]
        );
        let agent: Vec<Reason> = ALL.into_iter().filter(|r| r.agent_own_waives()).collect();
        assert_eq!(agent, [Reason::NotOrphaned]);
    }

    #[test]
    fn green_evidence_is_no_reason_and_an_unexpected_level_fails_closed() {
        assert_eq!(Reason::of(&ev(EvidenceKind::Activity, Level::Green)), None);
        assert_eq!(
            Reason::of(&ev(EvidenceKind::Activity, Level::Yellow)),
            Some(Reason::Busy)
        );
        assert_eq!(
            Reason::of(&ev(EvidenceKind::ToolKind, Level::Yellow)),
            Some(Reason::Unreadable)
        );
        assert_eq!(reasons_of(&[]), BTreeSet::from([Reason::Unreadable]));
    }

    #[test]
    fn a_new_or_never_skippable_reason_is_not_set_aside() {
        let confirmed = BTreeSet::from([Reason::LiveConnection]);
        let found = BTreeSet::from([Reason::LiveConnection]);
        assert_eq!(not_set_aside(&found, &confirmed), None);
        let found = BTreeSet::from([Reason::LiveConnection, Reason::Busy]);
        assert_eq!(
            not_set_aside(&found, &confirmed),
            Some(Refused::NotConfirmed(Reason::Busy))
        );
        let confirmed = BTreeSet::from([Reason::LiveConnection, Reason::DataService]);
        let found = BTreeSet::from([Reason::LiveConnection, Reason::DataService]);
        assert_eq!(
            not_set_aside(&found, &confirmed),
            Some(Refused::Never(Reason::DataService))
        );
    }

    #[test]
    fn every_reason_reads_back_from_its_name() {
        for r in ALL {
            assert_eq!(r.as_str().parse::<Reason>(), Ok(r));
        }
        assert!("busy,".parse::<Reason>().is_err());
    }
}
