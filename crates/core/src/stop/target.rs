//! What the checkpoint chain (`batch.rs`, its one driver) asks of a kind of target: a process
//! tree (`tree.rs`) or a container run (`container.rs`). The driver owns the order — the lock,
//! the interruption seams, the record before any look, the "signals may follow" mark, the
//! deadline, the dry run, the rescan's grouping, the outcome's record — and a kind answers each
//! step for a group of its targets, with its own reads: one read per step for all of a batch's
//! trees; a container's own engine reads. A third kind of target is one more implementation.

use std::collections::HashSet;
use std::time::Duration;

pub(super) use super::deadline::Deadline;
use super::ending::Verdict;
use super::failure::Unrecorded;
use super::flow::Stopper;
use super::refusal::Refusal;
use crate::model::outcome::{Checkpoint, StopReport};
use crate::model::shown::Shown;
use crate::probe::Identity;

/// A report from a target's signals, and what decided its result if signals went out (a tree's
/// members and newcomers; a batch takes back a newcomer another of its targets claims).
pub(super) type Signalled = (StopReport, Option<Verdict>);

/// A target that goes on to the next step, or its report (refused or failed there).
pub(super) type Answer<T> = Result<T, Box<StopReport>>;

/// What the rescans of a batch know of it, for a kind's [`Target::rescan`].
pub(super) struct Ended<'b, S> {
    /// What the kind's re-diagnosis saw ([`Target::Seen`]).
    pub(super) seen: &'b S,
    /// Every member of every target the batch signals: none is another's replacement.
    pub(super) members: &'b HashSet<Identity>,
    /// What each target of the batch ended so far claims (`rescan::claimed`).
    pub(super) claims: &'b [(String, HashSet<Identity>)],
}

/// One kind of target, through the chain. Each step's method answers for a group of targets
/// still in the chain, in their order; a failed or refused one leaves with its own report.
pub(super) trait Target<'t>: Sized + Sync {
    /// What the re-diagnosis found of one target, before its record is written.
    type Fresh;
    /// What the kind's re-diagnosis saw that its rescan compares against.
    type Seen: Default + Sync;
    /// Whether a batch's progress names every step (a container's stop names its re-diagnosis
    /// only: its checks are its engine's reads, not the batch's).
    const SHOWS_STEPS: bool;
    /// The words of an interruption before the target's stop began.
    const BEFORE_START: &'static str;
    /// The words of an interruption during its checks.
    const DURING_CHECKS: &'static str;

    /// Step 1: one fresh look for the group (each asked by id, with what the user was shown),
    /// each judged against what was shown: a target to record, or its report.
    fn rediagnose(
        s: &Stopper,
        asked: &[(&'t str, Option<&Shown>)],
    ) -> (Self::Seen, Vec<Answer<Self::Fresh>>);

    /// Step 2: each recovery record written (kept in memory on a dry run) — no record, no
    /// signal.
    fn record(s: &Stopper, fresh: Vec<Self::Fresh>) -> Vec<Answer<Self>>;

    /// Step 3: checkpoint `at` for the group, one answer each.
    fn look(s: &Stopper, at: Checkpoint, group: &mut [&mut Self]) -> Vec<Result<(), Refusal>>;

    /// The "signals may follow" mark in its record, before the last checks; why not, if it
    /// could not be written.
    fn mark(&self, s: &Stopper) -> Result<(), Unrecorded>;

    /// When its own check (a) ran, if not when the driver's did (an engine's first reading).
    fn checked_at(&self) -> Option<Duration> {
        None
    }

    /// A dry run's end, where its signals would begin: what would be sent.
    fn plan(&self, s: &Stopper, deadline: Deadline) -> StopReport;

    /// Steps 4 and 5, on the target's own thread: its signals (none past `deadline`), the
    /// bounded wait for its end, and what is true then.
    fn send(&self, s: &Stopper, deadline: Deadline) -> Signalled;

    /// Step 6, once the group's projects have ended: each one's final report.
    fn rescan(
        s: &Stopper,
        ended: Vec<(&Self, Signalled)>,
        batch: &Ended<Self::Seen>,
    ) -> Vec<StopReport>;

    /// The target's id, as asked.
    fn id(&self) -> &str;
    /// Its project's folder: the rescan waits for a project's targets to end.
    fn project(&self) -> &str;
    /// Its members' identities (none for a container).
    fn members(&self) -> Vec<Identity> {
        Vec::new()
    }
    /// What it is and where, on any report once it was re-diagnosed.
    fn label(&self, r: &mut StopReport);
    /// Its record's name.
    fn record_name(&self) -> &str;
    /// What its report adds once final (what it freed).
    fn close(&self, _r: &mut StopReport) {}
    /// Step 7: the outcome added to its record, on behalf of what it names; why not, if not.
    fn record_outcome(&self, s: &Stopper, r: &StopReport) -> Option<String>;
}
