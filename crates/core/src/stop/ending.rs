//! The end of a stop (ARCHITECTURE.md, "Outcomes are what is true when the stop ends"): the
//! looks for newcomers (`newcomers.rs`), and every outcome as it is **when the stop ends**, not
//! when a level's wait ended.
//!
//! Once a first signal has gone out, before each further level's signals: members that outlived
//! their grace and are gone by now are `stopped` (the detail says whether their parent had been
//! signalled), and one read of the process table looks for newcomers. After the last level: a
//! last look (children, orphans in the project, strangers on a recorded port), one bounded wait
//! for whatever may still end — members that outlived their grace, members skipped while alive,
//! newcomers — and one more look for anything born during that wait. All through every wait,
//! once a signal has gone out, a glance every `GLANCE` reads only the lineage's children
//! ([`Signals::glance`]). A newcomer is only ever waited for, never signalled.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::newcomers::{Seen, GLANCE};
use super::signals::Signals;
use crate::model::outcome::{
    MemberOutcome, MemberReport, NewcomerFate, NewcomerReport, ResourceResult,
};
use crate::probe::{Identity, IdentityRead, Pid, Probe, ProcessList};
use crate::signal::Expected;

/// How long, at the end, a member that outlived its own grace gets to show it exited after a
/// later signal (a `multiprocessing.resource_tracker` ends when its parent does): it has had
/// its grace already, and what a later signal brings about comes at once.
const LAST_LOOK: Duration = Duration::from_secs(1);

/// What is true when the stop ends.
pub(super) struct Ending {
    pub(super) members: Vec<MemberReport>,
    pub(super) newcomers: Vec<NewcomerReport>,
    /// Why the stop cannot be called complete, from the members and newcomers alone.
    pub(super) problems: Vec<Problem>,
    /// Every identity the process table held at check (e), as the looks knew it: none of them
    /// is a replacement the rescan may find.
    pub(super) present: HashSet<Identity>,
}

/// One reason a stop cannot be called complete, and the newcomer it is about, if any: a batch
/// takes back a newcomer another of its resources claims by descent (`batch.rs`).
#[derive(Debug, Clone)]
pub(super) struct Problem {
    pub(super) text: String,
    pub(super) newcomer: Option<Identity>,
    /// A signalled member that outlived its signal: a `not_stopped` reason names it its own way.
    pub(super) outlived: bool,
}

impl From<String> for Problem {
    fn from(text: String) -> Self {
        Problem {
            text,
            newcomer: None,
            outlived: false,
        }
    }
}

/// What the waiter watches: an identity (the waiter never signals, and needs no executable).
fn watched(identity: Identity) -> Expected {
    Expected {
        identity,
        exe: PathBuf::new(),
    }
}

/// Whether the process `id` still runs as itself: a later read by bare pid (its folder, its
/// sockets) must not lend another process's answer to it.
fn still_is(probe: &dyn Probe, id: Identity) -> bool {
    matches!(probe.identity(id.pid), IdentityRead::Alive { identity, .. } if identity == id)
}

/// Whether the process `id` is known to have ended: its pid is free or holds another process.
/// A failed read is not an ending.
fn has_ended(probe: &dyn Probe, id: Identity) -> bool {
    match probe.identity(id.pid) {
        IdentityRead::Gone => true,
        IdentityRead::Alive { identity, .. } => identity != id,
        IdentityRead::Unknown(_) => false,
    }
}

impl Signals<'_> {
    /// Right before a level's signals, once a signal has gone out.
    pub(super) fn before_level(&mut self) {
        if self.first.is_none() {
            return;
        }
        self.recheck_outlived();
        self.look();
    }

    /// Members that outlived their grace and are gone now, before the next level's signal.
    fn recheck_outlived(&mut self) {
        let late: Vec<usize> = (0..self.members.len())
            .filter(|&i| self.members[i].outcome == MemberOutcome::StillRunning)
            .collect();
        if late.is_empty() {
            return;
        }
        let ids: Vec<Expected> = late
            .iter()
            .map(|&i| watched(self.members[i].identity()))
            .collect();
        let gone = self.hands.waiter.wait_for_exit(&ids, Duration::ZERO);
        for (&i, gone) in late.iter().zip(gone) {
            if gone {
                let detail = self.after_grace(self.members[i].identity(), false);
                let m = &mut self.members[i];
                m.outcome = MemberOutcome::Stopped;
                m.detail = detail;
            }
        }
    }

    /// One read of the process table, looked at; a failed read means newcomers cannot be
    /// ruled out.
    fn look(&mut self) -> Option<ProcessList> {
        match self.hands.probe.processes() {
            Ok(list) => {
                self.look_at(&list);
                Some(list)
            }
            Err(e) => {
                self.blind.get_or_insert(e.to_string());
                None
            }
        }
    }

    /// A glance, all through a wait once a signal has gone out (as the looks): the lineage's
    /// children read on their own ([`Probe::children`]), then theirs, until no newcomer is left
    /// to follow. A failed read decides nothing: whether newcomers could be looked for is the
    /// looks' to say.
    pub(super) fn glance(&mut self) {
        if self.first.is_none() {
            return;
        }
        let probe = self.hands.probe;
        let mut parents = self.watch.lineage();
        while !parents.is_empty() {
            let Ok(pairs) = probe.children(&parents) else {
                return;
            };
            parents = self.watch.look_at_children(&pairs);
        }
    }

    /// Members' children, then orphans working in the project (their folders read one by one:
    /// there are few).
    fn look_at(&mut self, list: &ProcessList) {
        let probe = self.hands.probe;
        let uid = probe.current_uid();
        self.watch.look(list);
        let cwds: Vec<(Pid, PathBuf)> = self
            .watch
            .orphans(list, uid)
            .into_iter()
            .filter_map(|pid| Some((pid, probe.details(pid)?.cwd.ok()?)))
            .collect();
        let from = self.watch.seen().len();
        self.watch
            .look_at_orphans(list, &cwds, Path::new(&self.snapshot.project.path));
        self.watch.keep_from(from, |id| still_is(probe, id));
    }

    /// After the last level: a look, then the listeners on recorded ports held by processes
    /// absent at check (e).
    fn last_look(&mut self) {
        let Some(list) = self.look() else {
            return;
        };
        let mut ports: Vec<u16> = self.snapshot.ports.iter().map(|p| p.port).collect();
        ports.sort_unstable();
        ports.dedup();
        if ports.is_empty() {
            return;
        }
        let probe = self.hands.probe;
        let uid = probe.current_uid();
        match probe.sockets(&self.watch.unknown_pids(&list, uid)) {
            Ok(table) => {
                let from = self.watch.seen().len();
                self.watch.look_at_listeners(&list, &table, &ports, uid);
                self.watch.keep_from(from, |id| still_is(probe, id));
            }
            Err(e) => {
                self.blind.get_or_insert(e.to_string());
            }
        }
    }

    /// The end: the last look, one bounded wait, every outcome re-read from it, and a look for
    /// anything born during the wait. A stop that sent nothing ends as it is.
    pub(super) fn finish(mut self) -> Ending {
        if self.first.is_none() {
            return self.nothing_sent();
        }
        self.last_look();
        let mut problems = Vec::new();
        let pending = self.pending(&mut problems);
        let seen: Vec<Seen> = self.watch.seen().to_vec();
        let reported: HashSet<Identity> = seen.iter().map(|n| n.identity).collect();
        let (bound, exited) = self.last_wait(&pending, &seen);
        let (members_gone, newcomers_gone) = exited.split_at(pending.len());
        self.settle_members(&pending, members_gone, &mut problems);
        let mut newcomers: Vec<NewcomerReport> = seen
            .into_iter()
            .zip(newcomers_gone)
            .map(|(n, &gone)| report(n, gone, bound, &mut problems))
            .collect();
        let born = self.born_since(&reported, &mut problems);
        newcomers.extend(born);
        if let Some(why) = self.blind.take() {
            problems.push(Problem::from(format!(
                "processes born during the stop could not be looked for: {why}"
            )));
        }
        Ending {
            members: self.members,
            newcomers,
            problems,
            present: self.watch.into_baseline(),
        }
    }

    /// A stop that sent nothing ends as it is: nothing to wait for, and a signal the kernel
    /// refused is still what the reason must say.
    fn nothing_sent(self) -> Ending {
        let problems = failed(&self.members)
            .into_iter()
            .map(Problem::from)
            .collect();
        Ending {
            members: self.members,
            newcomers: Vec::new(),
            problems,
            present: self.watch.into_baseline(),
        }
    }

    /// The one bounded wait at the end, for the `pending` members and the newcomers `seen`,
    /// glancing all through it: its bound, and whether each of them (members first) exited.
    fn last_wait(&mut self, pending: &[usize], seen: &[Seen]) -> (Duration, Vec<bool>) {
        let mut ids: Vec<Expected> = pending
            .iter()
            .map(|&i| watched(self.members[i].identity()))
            .collect();
        ids.extend(seen.iter().map(|n| watched(n.identity)));
        let grace = self.hands.opts.grace;
        // An interrupted stop still takes its last look, but waits no grace for newcomers.
        let bound = if seen.is_empty() || self.hands.interrupt.raised().is_some() {
            LAST_LOOK.min(grace)
        } else {
            grace
        };
        if ids.is_empty() {
            return (bound, Vec::new());
        }
        let hands = self.hands;
        let exited = hands.waiter.wait_glancing(&ids, bound, GLANCE, &mut || {
            self.glance();
            true
        });
        (bound, exited)
    }

    /// Born during the last wait (a newcomer's own child, a flush spawned by a late exit): seen
    /// by its glances or by one more look, running unless it is known to have ended since;
    /// none of `reported`.
    fn born_since(
        &mut self,
        reported: &HashSet<Identity>,
        problems: &mut Vec<Problem>,
    ) -> Vec<NewcomerReport> {
        self.look();
        let probe = self.hands.probe;
        let born: Vec<Seen> = self
            .watch
            .seen()
            .iter()
            .filter(|n| !reported.contains(&n.identity))
            .cloned()
            .collect();
        born.into_iter()
            .map(|n| {
                let gone = has_ended(probe, n.identity);
                report(n, gone, Duration::ZERO, problems)
            })
            .collect()
    }

    /// The members whose end is still open: outlived their grace, or skipped while alive. A
    /// skipped member whose identity cannot be read is a problem: it may run.
    fn pending(&self, problems: &mut Vec<Problem>) -> Vec<usize> {
        let probe = self.hands.probe;
        (0..self.members.len())
            .filter(|&i| {
                let m = &self.members[i];
                match m.outcome {
                    MemberOutcome::StillRunning => true,
                    MemberOutcome::Skipped => match probe.identity(m.pid) {
                        IdentityRead::Alive { identity, .. } => identity == m.identity(),
                        IdentityRead::Gone => false,
                        IdentityRead::Unknown(why) => {
                            problems.push(Problem::from(format!(
                                "pid {} ({}) was not signalled, and whether it still runs could \
                                 not be read: {why}",
                                m.pid, m.command
                            )));
                            false
                        }
                    },
                    _ => false,
                }
            })
            .collect()
    }

    /// The pending members' outcomes from the final wait; the failed ones are problems too.
    fn settle_members(&mut self, pending: &[usize], gone: &[bool], problems: &mut Vec<Problem>) {
        for (&i, &gone) in pending.iter().zip(gone) {
            let detail = self.after_grace(self.members[i].identity(), true);
            let m = &mut self.members[i];
            match (m.outcome, gone) {
                (MemberOutcome::StillRunning, true) => {
                    m.outcome = MemberOutcome::Stopped;
                    m.detail = detail;
                }
                (MemberOutcome::StillRunning, false) => problems.push(Problem {
                    outlived: true,
                    ..Problem::from(format!(
                        "pid {} ({}) still runs after its signal",
                        m.pid, m.command
                    ))
                }),
                (_, false) => problems.push(Problem::from(format!(
                    "pid {} ({}) was not signalled ({}) and still runs",
                    m.pid, m.command, m.detail
                ))),
                (_, true) => {}
            }
        }
        problems.extend(failed(&self.members).into_iter().map(Problem::from));
    }

    /// The detail of a member that outlived its grace and is gone now. It was seen alive right
    /// before each later level's signals, so once its parent's signal went out, it ended after
    /// it. `at_end`: seen gone at the end of the stop, not before a level's signals.
    fn after_grace(&self, id: Identity, at_end: bool) -> String {
        let parent = self
            .snapshot
            .members
            .iter()
            .find(|m| m.identity == id)
            .and_then(|m| {
                self.snapshot
                    .members
                    .iter()
                    .find(|p| p.identity.pid == m.ppid)
            })
            .map(|p| p.identity);
        if parent.is_some_and(|p| self.signalled.contains(&p)) {
            "outlived its grace, exited after its parent was signalled".into()
        } else if at_end {
            "outlived its grace, exited before the stop ended".into()
        } else {
            "outlived its grace, exited before its parent was signalled".into()
        }
    }
}

/// One newcomer's line; one still running is a problem.
fn report(n: Seen, gone: bool, waited: Duration, problems: &mut Vec<Problem>) -> NewcomerReport {
    if !gone {
        let text = format!(
            "pid {} ({}, {}) was born during the stop and still runs",
            n.identity.pid,
            n.how(),
            n.command
        );
        problems.push(Problem {
            newcomer: Some(n.identity),
            ..Problem::from(text)
        });
    }
    let detail = match (gone, waited.is_zero()) {
        (true, _) => "born during the stop, never signalled; gone when the stop ended".into(),
        (false, true) => "born during the stop's last wait, never signalled; running".into(),
        (false, false) => format!(
            "born during the stop, never signalled; still running {} s later",
            waited.as_secs_f64()
        ),
    };
    NewcomerReport {
        pid: n.identity.pid,
        start_time: n.identity.start_time,
        parent: n.parent,
        how: n.how(),
        tie: n.tie.kind(),
        command: n.command,
        fate: if gone {
            NewcomerFate::Exited
        } else {
            NewcomerFate::StillRunning
        },
        detail,
    }
}

/// The members whose signal the kernel refused, in words.
fn failed(members: &[MemberReport]) -> Vec<String> {
    members
        .iter()
        .filter(|m| m.outcome == MemberOutcome::Failed)
        .map(|m| {
            format!(
                "pid {} ({}) could not be signalled: {}",
                m.pid, m.command, m.detail
            )
        })
        .collect()
}

/// What decides the result of a stop that reached its signals, kept apart from its report so
/// that a batch can take back a newcomer another of its resources claims (`batch.rs`) before the
/// result is final.
pub(super) struct Verdict {
    /// Whether any signal went out.
    pub(super) signalled: bool,
    /// Whether an interruption left a level unsignalled.
    pub(super) unreached: bool,
    pub(super) interrupted: Option<&'static str>,
    /// The members still running or failed, and the newcomers still running.
    pub(super) problems: Vec<Problem>,
    /// Whether any member ended after the first signal (`stopped` or `exited`): without one,
    /// the stop ended nothing.
    pub(super) ended_any: bool,
    /// The signalled members still running, as "pid N (command)", and the signal they outlived.
    pub(super) outlived: (Vec<String>, &'static str),
    /// Every identity the process table held at check (e): none of them is a replacement
    /// the rescan may find (`rescan.rs`).
    pub(super) present: HashSet<Identity>,
}

/// What a verdict needs of the members as they ended: whether any ended, and who outlived
/// `signal` (as "pid N (command)").
pub(super) fn ended_and_outlived(
    members: &[MemberReport],
    signal: &'static str,
) -> (bool, (Vec<String>, &'static str)) {
    let ended = members
        .iter()
        .any(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited));
    let outlived = members
        .iter()
        .filter(|m| m.outcome == MemberOutcome::StillRunning)
        .map(|m| format!("pid {} ({})", m.pid, m.command))
        .collect();
    (ended, (outlived, signal))
}

impl Verdict {
    /// Step 7 from what is true when the stop ends (the rescan may still lower it).
    pub(super) fn result(&self) -> (ResourceResult, String) {
        let problems = &self.problems;
        let ended = Ended {
            any: self.ended_any,
            outlived: &self.outlived.0,
            signal: self.outlived.1,
        };
        match self.interrupted {
            Some(signal) if !self.signalled => (
                ResourceResult::Refused,
                format!("interrupted by {signal} before the first signal: nothing was sent"),
            ),
            Some(signal) => {
                let (result, reason) = result_of(true, problems, &ended);
                let reason = match (result, self.unreached) {
                    (ResourceResult::Stopped, _) => reason,
                    (_, true) => format!(
                        "interrupted by {signal}, so no further level was signalled; {reason}"
                    ),
                    (_, false) => format!("interrupted by {signal} during a wait; {reason}"),
                };
                (result, reason)
            }
            None => result_of(self.signalled, problems, &ended),
        }
    }
}

/// How the members ended, as [`result_of`] asks it.
struct Ended<'a> {
    /// Whether any member ended after the first signal.
    any: bool,
    /// The signalled members still running ("pid N (command)").
    outlived: &'a [String],
    /// The signal they outlived.
    signal: &'a str,
}

/// Step 7 from what is true when the stop ends (the rescan may still lower it): `problems`
/// are the members still running or failed and the newcomers still running. Why `not_stopped`
/// apart from `partially_stopped`: when signals went out and not one member ended, "partially"
/// would claim a part of the tree stopped, and it did not.
fn result_of(signalled: bool, problems: &[Problem], ended: &Ended) -> (ResourceResult, String) {
    let texts = |outlived: bool| -> Vec<String> {
        problems
            .iter()
            .filter(|p| outlived || !p.outlived)
            .map(|p| p.text.clone())
            .collect()
    };
    if !signalled {
        // Nothing was sent: say why in the members' words (a signal the kernel refused), or
        // that there was no one left to send it to.
        let why = if problems.is_empty() {
            "every member was gone or had changed".to_owned()
        } else {
            texts(true).join("; ")
        };
        return (
            ResourceResult::Refused,
            format!("no signal was sent: {why}"),
        );
    }
    if problems.is_empty() {
        (ResourceResult::Stopped, "every member is gone".into())
    } else if !ended.any && !ended.outlived.is_empty() {
        let mut why = vec![still_runs_after(ended.outlived, ended.signal)];
        // What else is true (a failed signal, a newcomer), but not the survivors twice.
        why.extend(texts(false));
        (ResourceResult::NotStopped, why.join("; "))
    } else {
        (ResourceResult::PartiallyStopped, texts(true).join("; "))
    }
}

/// The sentence of a `not_stopped` stop: who still runs after which signal, and the next step.
/// The one place it is made.
pub(crate) fn still_runs_after(who: &[String], signal: &str) -> String {
    format!(
        "{} still {} after {signal}; wait and look again, or stop it where it runs",
        who.join(", "),
        if who.len() == 1 { "runs" } else { "run" }
    )
}
