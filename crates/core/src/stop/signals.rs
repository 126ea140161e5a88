//! Steps 4 and 5 of a stop: signals leaf to root, level by level, each member re-verified by
//! the signaller right before its signal, and a bounded wait per level. The looks for newcomers
//! and the outcomes as they are when the stop ends are `ending.rs`'s.

use std::collections::HashSet;
use std::time::Duration;

use super::deadline::Deadline;
use super::interrupt::Interrupt;
use super::newcomers::{Watch, GLANCE};
use super::refusal::Why;
use super::StopOptions;
use crate::model::outcome::{MemberOutcome, MemberReport};
use crate::model::snapshot::Snapshot;
use crate::probe::{Identity, Probe};
use crate::signal::wait::ExitWaiter;
use crate::signal::{Expected, Sig, SignalOutcome, Signaller};

/// How long a parent gets to exit on its own after its children did, before its signal.
const SETTLE: Duration = Duration::from_millis(200);

/// What one tree's signals, waits and looks use: the stop's interfaces and options, and no
/// more (the order of the chain is the driver's, `batch.rs`).
#[derive(Clone, Copy)]
pub(super) struct Hands<'a> {
    pub(super) probe: &'a (dyn Probe + Sync),
    pub(super) signaller: &'a (dyn Signaller + Sync),
    pub(super) waiter: &'a (dyn ExitWaiter + Sync),
    pub(super) interrupt: &'a Interrupt,
    pub(super) opts: &'a StopOptions,
}

/// Steps 4 and 5 for one resource: signals leaf to root, one honest outcome per member.
pub(super) struct Signals<'s> {
    pub(super) hands: Hands<'s>,
    pub(super) snapshot: &'s Snapshot,
    /// From check (a) to the first signal.
    pub(super) deadline: Deadline,
    /// Members the last check found gone (or their pid taken): gone before any signal.
    pub(super) gone_before: Vec<Identity>,
    pub(super) members: Vec<MemberReport>,
    pub(super) first: Option<Duration>,
    pub(super) last: Option<Duration>,
    /// Processes born during the stop.
    pub(super) watch: Watch,
    /// The members whose signal went out.
    pub(super) signalled: HashSet<Identity>,
    /// Set when a look for newcomers could not be made: then they cannot be ruled out.
    pub(super) blind: Option<String>,
    /// Set when an interruption left a level unsignalled ([`Signals::not_reached`]).
    pub(super) unreached: bool,
}

impl Signals<'_> {
    pub(super) fn line(
        &self,
        e: &Expected,
        outcome: MemberOutcome,
        detail: String,
    ) -> MemberReport {
        MemberReport {
            pid: e.identity.pid,
            start_time: e.identity.start_time,
            command: self.snapshot.command_of(e.identity.pid),
            outcome,
            detail,
        }
    }

    /// Members the last check already found gone are `skipped` (they were gone before the
    /// first signal, whenever their turn comes). Then, after the first signal: a parent whose
    /// children just exited often ends on its own (`sh -c`, npm): give it a moment, bounded,
    /// before signalling it. Returns the ones still alive.
    pub(super) fn settle(&mut self, level: Vec<Expected>) -> Vec<Expected> {
        let (gone, level): (Vec<Expected>, Vec<Expected>) = level
            .into_iter()
            .partition(|e| self.gone_before.contains(&e.identity));
        for e in gone {
            let line = self.line(
                &e,
                MemberOutcome::Skipped,
                "already gone at the last check, before any signal".into(),
            );
            self.members.push(line);
        }
        if self.first.is_none() {
            return level;
        }
        let wait = SETTLE.min(self.hands.opts.grace);
        let stopper = self.hands;
        let exited = stopper.waiter.wait_glancing(&level, wait, GLANCE, &mut || {
            self.glance_unless_interrupted()
        });
        let mut alive = Vec::new();
        for (e, gone) in level.into_iter().zip(exited) {
            if gone {
                let line = self.line(
                    &e,
                    MemberOutcome::Exited,
                    "exited on its own after the first signal".into(),
                );
                self.members.push(line);
            } else {
                alive.push(e);
            }
        }
        alive
    }

    /// Signals each member of one level through the signaller; `Err` when the deadline from
    /// check (a) passed before the first signal (then nothing was sent).
    pub(super) fn signal_level(&mut self, level: Vec<Expected>) -> Result<Vec<Expected>, Why> {
        let sig = Sig::Term;
        let mut sent = Vec::new();
        for e in level {
            let now = self.hands.probe.now();
            if self.first.is_none() && self.deadline.passed(now).is_some() {
                return Err(Why::Deadline {
                    limit: self.deadline.limit,
                });
            }
            let (outcome, detail) = match self.hands.signaller.signal(&e, sig) {
                SignalOutcome::Sent => {
                    let now = self.deadline.since(self.hands.probe.now());
                    self.first.get_or_insert(now);
                    self.last = Some(now);
                    self.signalled.insert(e.identity);
                    sent.push(e);
                    continue;
                }
                SignalOutcome::Gone if self.first.is_some() => (
                    MemberOutcome::Exited,
                    "exited on its own after the first signal".to_owned(),
                ),
                SignalOutcome::Gone => (
                    MemberOutcome::Skipped,
                    "already gone before any signal".to_owned(),
                ),
                SignalOutcome::Mismatch(why) => (MemberOutcome::Skipped, why),
                SignalOutcome::Failed(why) => (MemberOutcome::Failed, why),
            };
            let line = self.line(&e, outcome, detail);
            self.members.push(line);
        }
        Ok(sent)
    }

    /// A glance (`ending.rs`), and whether the wait should go on: an interruption ends it.
    pub(super) fn glance_unless_interrupted(&mut self) -> bool {
        self.glance();
        self.hands.interrupt.raised().is_none()
    }

    /// A level the stop did not reach, because `signal` interrupted it: no member of it is
    /// signalled. Each is `skipped`, and the end of the stop tells whether it still runs
    /// (then it is a problem, and the result is not `stopped`).
    pub(super) fn not_reached(&mut self, level: Vec<Expected>, signal: &str) {
        self.unreached |= !level.is_empty();
        for e in level {
            let detail = format!("{signal} interrupted the stop before its turn");
            let line = self.line(&e, MemberOutcome::Skipped, detail);
            self.members.push(line);
        }
    }

    /// Waits (bounded by the grace period) for the signalled members: stopped or still running.
    pub(super) fn await_level(&mut self, sent: &[Expected]) {
        let stopper = self.hands;
        let opts = stopper.opts;
        let exited = stopper
            .waiter
            .wait_glancing(sent, opts.grace, GLANCE, &mut || {
                self.glance_unless_interrupted()
            });
        let cut_short = stopper.interrupt.raised();
        for (e, gone) in sent.iter().zip(exited) {
            let line = if gone {
                self.line(e, MemberOutcome::Stopped, "exited after SIGTERM".into())
            } else if let Some(by) = cut_short {
                let detail = format!("still running when {by} ended the wait for it");
                self.line(e, MemberOutcome::StillRunning, detail)
            } else {
                let detail = format!(
                    "still running {} s after the signal",
                    opts.grace.as_secs_f64()
                );
                self.line(e, MemberOutcome::StillRunning, detail)
            };
            self.members.push(line);
        }
    }
}
