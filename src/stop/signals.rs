//! Steps 4 and 5 of a stop: signals leaf to root, level by level, each member re-verified by
//! the signaller right before its signal, a bounded wait per level, a look for newcomers before
//! each level's signals, and one honest outcome each — what is true **when the stop ends** (the final
//! look in [`Signals::finish`]), not when a level's wait ended.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use super::flow::Stopper;
use super::newcomers::Watch;
use super::outcome::{MemberOutcome, MemberReport, NewcomerFate, NewcomerReport};
use super::snapshot::Snapshot;
use crate::probe::{Identity, IdentityRead, Pid};
use crate::signal::{Expected, Sig, SignalOutcome};

/// How long a parent gets to exit on its own after its children did, before its signal.
const SETTLE: Duration = Duration::from_millis(200);

/// How long, at the end, a member that outlived its own grace gets to show it exited after a
/// later signal (a `multiprocessing.resource_tracker` ends when its parent does): it has had
/// its grace already, and what a later signal brings about comes at once.
const LAST_LOOK: Duration = Duration::from_secs(1);

/// Steps 4 and 5 for one resource: signals leaf to root, one honest outcome per member.
pub(super) struct Signals<'s, 'a> {
    pub(super) stopper: &'s Stopper<'a>,
    pub(super) snapshot: &'s Snapshot,
    /// When check (a) ran.
    pub(super) t0: Duration,
    /// Members the last check found gone (or their pid taken): gone before any signal.
    pub(super) gone_before: Vec<Identity>,
    pub(super) members: Vec<MemberReport>,
    pub(super) first: Option<Duration>,
    pub(super) last: Option<Duration>,
    /// Processes born during the stop.
    pub(super) watch: Watch,
    /// Pids whose signal went out.
    pub(super) signalled: HashSet<Pid>,
    /// Set when a look for newcomers could not be made: then they cannot be ruled out.
    pub(super) blind: Option<String>,
}

/// What is true when the stop ends.
pub(super) struct Ending {
    pub(super) members: Vec<MemberReport>,
    pub(super) newcomers: Vec<NewcomerReport>,
    /// Why the stop cannot be called complete, from the members and newcomers alone.
    pub(super) problems: Vec<String>,
}

impl Signals<'_, '_> {
    fn line(&self, e: &Expected, outcome: MemberOutcome, detail: String) -> MemberReport {
        MemberReport {
            pid: e.identity.pid,
            start_time: e.identity.start_time,
            command: command_of(self.snapshot, e.identity.pid),
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
        let wait = SETTLE.min(self.stopper.opts.grace);
        let exited = self.stopper.waiter.wait_for_exit(&level, wait);
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
    pub(super) fn signal_level(&mut self, level: Vec<Expected>) -> Result<Vec<Expected>, String> {
        let opts = &self.stopper.opts;
        let sig = if opts.force { Sig::Kill } else { Sig::Term };
        let mut sent = Vec::new();
        for e in level {
            let since = self.stopper.probe.now().saturating_sub(self.t0);
            if self.first.is_none() && since > opts.deadline {
                return Err(format!(
                    "more than {} s passed between check (a) and the first signal; nothing was sent",
                    opts.deadline.as_secs_f64()
                ));
            }
            let (outcome, detail) = match self.stopper.signaller.signal(&e, sig) {
                SignalOutcome::Sent => {
                    let now = self.stopper.probe.now().saturating_sub(self.t0);
                    self.first.get_or_insert(now);
                    self.last = Some(now);
                    self.signalled.insert(e.identity.pid);
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

    /// Waits (bounded by the grace period) for the signalled members: stopped or still running.
    pub(super) fn await_level(&mut self, sent: &[Expected]) {
        let opts = &self.stopper.opts;
        let exited = self.stopper.waiter.wait_for_exit(sent, opts.grace);
        for (e, gone) in sent.iter().zip(exited) {
            let line = if gone {
                let signal = if opts.force { "SIGKILL" } else { "SIGTERM" };
                self.line(e, MemberOutcome::Stopped, format!("exited after {signal}"))
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

impl Signals<'_, '_> {
    /// Before a level's signals, once a signal has gone out: one read of the process table,
    /// for children born to members (or to earlier newcomers) since check (e).
    pub(super) fn look_for_newcomers(&mut self) {
        if self.first.is_none() {
            return;
        }
        let probe = self.stopper.probe;
        match probe.processes() {
            Ok(list) => self.look_at(&list),
            Err(e) => {
                self.blind.get_or_insert(e.to_string());
            }
        }
    }

    /// One look at a read of the process table: members' children, then orphans working in
    /// the project (their folders read one by one: there are few).
    fn look_at(&mut self, list: &crate::probe::ProcessList) {
        let probe = self.stopper.probe;
        let uid = probe.current_uid();
        self.watch.look(list, uid);
        let cwds: Vec<(Pid, PathBuf)> = self
            .watch
            .orphans(list, uid)
            .into_iter()
            .filter_map(|pid| Some((pid, probe.details(pid)?.cwd.ok()?)))
            .collect();
        let project = std::path::Path::new(&self.snapshot.project.path);
        self.watch.look_at_orphans(list, &cwds, project);
    }

    /// The last look, when every level has had its turn: children born since the last look,
    /// and strangers listening on a recorded port; then one bounded wait for whatever may
    /// still end (members that outlived their grace, members skipped while alive, newcomers),
    /// and every outcome re-read from it. A newcomer is never signalled.
    pub(super) fn finish(mut self) -> Ending {
        if self.first.is_some() {
            self.last_look();
        }
        let probe = self.stopper.probe;
        let skipped_alive = |m: &MemberReport| {
            m.outcome == MemberOutcome::Skipped
                && matches!(probe.identity(m.pid), IdentityRead::Alive { identity, .. }
                    if identity.start_time == m.start_time)
        };
        let pending: Vec<usize> = (0..self.members.len())
            .filter(|&i| {
                let m = &self.members[i];
                m.outcome == MemberOutcome::StillRunning || skipped_alive(m)
            })
            .collect();
        let newcomers = self.watch.seen().to_vec();
        let mut watched: Vec<Expected> = pending
            .iter()
            .map(|&i| expected_of(&self.members[i]))
            .collect();
        watched.extend(newcomers.iter().map(|n| Expected {
            identity: n.identity,
            exe: PathBuf::new(),
        }));
        let grace = self.stopper.opts.grace;
        let bound = if newcomers.is_empty() {
            LAST_LOOK.min(grace)
        } else {
            grace
        };
        let exited = if watched.is_empty() {
            Vec::new()
        } else {
            self.stopper.waiter.wait_for_exit(&watched, bound)
        };
        let mut problems = Vec::new();
        for (k, &i) in pending.iter().enumerate() {
            let gone = exited[k];
            let detail = self.after_grace(self.members[i].pid);
            let m = &mut self.members[i];
            match (m.outcome, gone) {
                (MemberOutcome::StillRunning, true) => {
                    m.outcome = MemberOutcome::Stopped;
                    m.detail = detail;
                }
                (MemberOutcome::StillRunning, false) => {
                    problems.push(format!("pid {} still_running", m.pid));
                }
                (_, false) => problems.push(format!("pid {} skipped and still runs", m.pid)),
                (_, true) => {}
            }
        }
        for m in self
            .members
            .iter()
            .filter(|m| m.outcome == MemberOutcome::Failed)
        {
            problems.push(format!("pid {} failed", m.pid));
        }
        let newcomers: Vec<NewcomerReport> = newcomers
            .into_iter()
            .enumerate()
            .map(|(k, n)| {
                let gone = exited[pending.len() + k];
                if !gone {
                    problems.push(format!(
                        "pid {} ({}, {}) was born during the stop and still runs",
                        n.identity.pid,
                        n.tie.words(),
                        n.command
                    ));
                }
                NewcomerReport {
                    pid: n.identity.pid,
                    start_time: n.identity.start_time,
                    parent: n.parent,
                    how: n.tie.words(),
                    command: n.command,
                    fate: if gone {
                        NewcomerFate::Exited
                    } else {
                        NewcomerFate::StillRunning
                    },
                    detail: if gone {
                        "born during the stop, never signalled; gone when the stop ended".into()
                    } else {
                        format!(
                            "born during the stop, never signalled; still running {} s later",
                            bound.as_secs_f64()
                        )
                    },
                }
            })
            .collect();
        if let Some(why) = self.blind {
            problems.push(format!(
                "processes born during the stop could not be looked for: {why}"
            ));
        }
        Ending {
            members: self.members,
            newcomers,
            problems,
        }
    }

    /// The final look's reads: the process table, then the listeners held by processes absent
    /// at check (e).
    fn last_look(&mut self) {
        let probe = self.stopper.probe;
        let uid = probe.current_uid();
        let list = match probe.processes() {
            Ok(list) => list,
            Err(e) => {
                self.blind.get_or_insert(e.to_string());
                return;
            }
        };
        self.look_at(&list);
        let mut ports: Vec<u16> = self.snapshot.ports.iter().map(|p| p.port).collect();
        ports.sort_unstable();
        ports.dedup();
        if ports.is_empty() {
            return;
        }
        match probe.sockets(&self.watch.unknown_pids(&list, uid)) {
            Ok(table) => self.watch.look_at_listeners(&list, &table, &ports, uid),
            Err(e) => {
                self.blind.get_or_insert(e.to_string());
            }
        }
    }

    /// The detail of a member that outlived its grace and was gone by the end.
    fn after_grace(&self, pid: Pid) -> String {
        let parent = self
            .snapshot
            .members
            .iter()
            .find(|m| m.identity.pid == pid)
            .map(|m| m.ppid);
        if parent.is_some_and(|p| self.signalled.contains(&p)) {
            "outlived its grace, exited after its parent was signalled".into()
        } else {
            "outlived its grace, exited before the stop ended".into()
        }
    }
}

/// What the waiter watches of a reported member: its identity (the waiter never signals).
fn expected_of(m: &MemberReport) -> Expected {
    Expected {
        identity: Identity {
            pid: m.pid,
            start_time: m.start_time,
        },
        exe: PathBuf::new(),
    }
}

/// A member's command line for a person: lossy, control characters blanked, cut at 60.
fn command_of(snapshot: &Snapshot, pid: Pid) -> String {
    let argv: Vec<String> = snapshot
        .members
        .iter()
        .find(|m| m.identity.pid == pid)
        .map(|m| {
            m.argv
                .iter()
                .map(|a| String::from_utf8_lossy(&a.0).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let joined: String = argv
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match joined.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}
