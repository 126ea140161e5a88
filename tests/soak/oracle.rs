//! Judges one stop against the round's ground truth.
//!
//! Times are call numbers of the stop: an event "at n" happened before Pier's call n, so a read
//! at n or later sees it. Three cuts follow from the trace:
//! - the network cut: the last survey before the first signal request (check (e)'s network
//!   read); a client connected at or before it must get the stop refused;
//! - the tree cut: the last process-table read before the first signal request (check (e)'s
//!   tree read, followed by every member's identity); a new process under the root, a member
//!   that exec'd, or a root that ended, at or before it, must get the stop refused;
//! - the rescan: the first survey after the first signal request; a process an event made
//!   that runs then must keep the result from `stopped`.
//!
//! Before any signal, the trace must end with the whole checkpoint chain, in order.
//!
//! What is a wrong signal: any line in the fixtures' signal log that is not SIGTERM to a
//! member of the diagnosed tree in its diagnosed image, any line at all when the stop says it
//! sent nothing, and any process of the round that ended with no line, no event ending it and
//! no other explanation (a SIGKILL cannot be logged; this counts it).

use std::collections::BTreeSet;

use pier_core::model::outcome::{
    Checkpoint, MemberOutcome, NewcomerFate, ResourceResult, StopReport, TieKind,
};
use pier_core::probe::Identity;
use pier_core::signal::SignalOutcome;

use super::hook::Call;
use super::{Kind, Known, Origin, Round};

const SIGTERM: i32 = 15;
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// What the judge found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub wrong_signals: Vec<String>,
    pub disagreements: Vec<String>,
}

/// The round's facts, gathered right after the stop returned.
pub struct Facts<'r> {
    pub round: &'r Round,
    pub report: &'r StopReport,
    pub root: Identity,
    pub initial: Vec<Identity>,
    /// Which known processes ran right after the stop returned.
    pub running: Vec<Identity>,
    /// Members' pids held by another process right after the stop returned (a pid reuse,
    /// which the rescan must report; anything on the machine can take a freed pid).
    pub reused: Vec<u32>,
}

fn last_before(trace: &[Call], end: usize, want: impl Fn(&Call) -> bool) -> Option<usize> {
    trace[..end].iter().rposition(want)
}

impl Facts<'_> {
    pub fn judge(&self) -> Verdict {
        let mut v = Verdict::default();
        let trace = self.round.trace.borrow();
        let known = self.round.known.borrow();
        let fired = self.round.fired.borrow();
        let lines = self.round.signal_lines();
        let first_request = trace.iter().position(|c| matches!(c, Call::Signal(_)));
        let first_sent = self
            .round
            .signals
            .borrow()
            .iter()
            .find(|(_, _, o)| *o == SignalOutcome::Sent)
            .map(|(n, _, _)| *n);
        let sent_nothing = matches!(
            self.report.result,
            ResourceResult::Refused | ResourceResult::Failed
        );
        let member = |id: &Identity| self.initial.contains(id);

        // Wrong signals, from the log.
        for (id, image, signo) in &lines {
            if *signo != SIGTERM || image != "orig" || !member(id) || sent_nothing {
                v.wrong_signals.push(format!(
                    "signal {signo} reached pid {} (start {}, image {image}): {}",
                    id.pid,
                    id.start_time,
                    if sent_nothing {
                        "the stop says it sent nothing"
                    } else {
                        "not a diagnosed member as it was diagnosed"
                    }
                ));
            }
        }
        let termed = |id: &Identity| {
            lines
                .iter()
                .any(|(l, image, s)| l == id && image == "orig" && *s == SIGTERM)
        };
        let logged = |id: &Identity| lines.iter().any(|(l, _, _)| l == id);
        let running = |id: &Identity| self.running.contains(id);
        // Deaths nobody explains.
        for k in known.iter() {
            if !running(&k.id) && !logged(&k.id) && k.ended.is_none() {
                v.wrong_signals.push(format!(
                    "pid {} ({:?}) ended with no signal logged and no event ending it",
                    k.id.pid, k.origin
                ));
            }
        }

        // The chain of docs/design.md §3.3 ran in full, in order, right before the first signal:
        // (a) network, (b) activity, (c) network, (d) tree, (e) network and tree.
        if let (Some(first), Some(_)) = (first_request, first_sent) {
            let chain: Vec<Call> = trace[..first]
                .iter()
                .copied()
                .filter(|c| matches!(c, Call::Survey | Call::Activity | Call::Processes))
                .collect();
            let want = [
                Call::Survey,
                Call::Activity,
                Call::Survey,
                Call::Processes,
                Call::Survey,
                Call::Processes,
            ];
            if !chain.ends_with(&want) {
                v.disagreements.push(format!(
                    "signals were sent after {chain:?}, which does not end with the full chain \
                     {want:?}"
                ));
            }
            // No signal without the snapshot on disk first.
            match &self.round.snapshot.borrow().found {
                Some(Ok(())) => {}
                Some(Err(why)) => v
                    .disagreements
                    .push(format!("no whole snapshot before the first signal: {why}")),
                None => v
                    .disagreements
                    .push("the snapshot was not looked for before the first signal".into()),
            }
            // At most 2 s from check (a) to the first signal sent, on the test's own clock: the
            // clock reads Pier made right before (a) and right before that signal.
            let checks: Vec<usize> = (0..first)
                .filter(|&i| matches!(trace[i], Call::Survey | Call::Activity | Call::Processes))
                .collect();
            let a = checks.len().checked_sub(want.len()).map(|i| checks[i]);
            let stamps = self.round.stamps.borrow();
            let clock_before = |i: usize| last_before(&trace, i, |c| *c == Call::Now);
            if let (Some(a), Some(s)) = (a, first_sent) {
                if let (Some(ta), Some(ts)) = (clock_before(a), clock_before(s)) {
                    let took = stamps[ts].duration_since(stamps[ta]);
                    if took > DEADLINE + std::time::Duration::from_millis(10) {
                        v.disagreements.push(format!(
                            "{} ms from check (a) to the first signal, over the 2 s limit",
                            took.as_millis()
                        ));
                    }
                }
            }
        }

        // What the checks before the first signal had to see.
        if let (Some(first), Some(_)) = (first_request, first_sent) {
            let net_cut = last_before(&trace, first, |c| *c == Call::Survey);
            let tree_cut = last_before(&trace, first, |c| *c == Call::Processes);
            for f in fired.iter().filter(|f| f.done) {
                let before = |cut: Option<usize>| cut.is_some_and(|c| f.at <= c);
                let must_refuse = match f.kind {
                    Kind::Connect => before(net_cut),
                    Kind::Exec => {
                        before(tree_cut)
                            && f.target
                                .is_some_and(|t| member(&t) && !ended_by(&known, t, tree_cut))
                    }
                    Kind::Exit | Kind::Recycle => before(tree_cut) && f.target == Some(self.root),
                    Kind::Fork | Kind::Respawn => false, // judged by their products, below
                };
                if must_refuse {
                    v.disagreements.push(format!(
                        "{:?} at call {} came before the checks' last look (network {net_cut:?}, \
                         tree {tree_cut:?}), yet signals were sent",
                        f.kind, f.at
                    ));
                }
            }
            for k in known.iter().filter(|k| k.origin == Origin::Forked) {
                let cut = tree_cut.unwrap_or(0);
                if k.born <= cut
                    && !ended_by(&known, k.id, tree_cut)
                    && under_root(&known, k, self.root, cut)
                {
                    v.disagreements.push(format!(
                        "pid {} joined the tree at call {} before the tree check at {cut}, \
                         yet signals were sent",
                        k.id.pid, k.born
                    ));
                }
            }
        }

        // One honest outcome per member.
        let reported: BTreeSet<Identity> = self
            .report
            .members
            .iter()
            .map(|m| Identity {
                pid: m.pid,
                start_time: m.start_time,
            })
            .collect();
        if first_request.is_some()
            && !sent_nothing
            && (reported != self.initial.iter().copied().collect()
                || self.report.members.len() != self.initial.len())
        {
            v.disagreements.push(format!(
                "the report's members {reported:?} are not the diagnosed ones {:?}",
                self.initial
            ));
        }
        // Every signal the signaller says it sent reached its process (the log), unless the
        // test SIGKILLed that process first (a recycle), which no handler can log.
        let killed_after = |id: &Identity, n: usize| {
            known
                .iter()
                .any(|k| k.id == *id && matches!(k.ended, Some((e, Kind::Recycle)) if e > n))
        };
        let signals = self.round.signals.borrow();
        for (n, id, outcome) in signals.iter() {
            if *outcome == SignalOutcome::Sent && !termed(id) && !killed_after(id, *n) {
                v.disagreements.push(format!(
                    "the signaller said it sent SIGTERM to pid {} at call {n}, but no such \
                     signal arrived",
                    id.pid
                ));
            }
        }
        // What the test saw of each member right after its last wait.
        let after_wait = self.round.after_wait.borrow();
        let seen_after_wait = |id: &Identity| {
            after_wait
                .iter()
                .rev()
                .find(|(_, a, _)| a == id)
                .map(|(_, _, alive)| *alive)
        };
        for m in &self.report.members {
            let id = Identity {
                pid: m.pid,
                start_time: m.start_time,
            };
            let k = known.iter().find(|k| k.id == id);
            let ended = k.and_then(|k| k.ended).map(|(e, _)| e);
            let exec = k.and_then(|k| k.exec_at);
            // The call at which Pier asked to signal this member, if it did.
            let asked = signals
                .iter()
                .find(|(_, s, _)| *s == id)
                .map_or(usize::MAX, |(n, _, _)| *n);
            let taken = fired.iter().any(|f| {
                f.kind == Kind::Recycle
                    && f.target == Some(id)
                    && f.note.contains("taken")
                    && f.at <= asked
            });
            let sent_to = signals
                .iter()
                .find(|(_, s, o)| *s == id && *o == SignalOutcome::Sent)
                .map(|(n, _, _)| *n);
            // Killed by the test (a recycle) after Pier's signal went out, before its handler
            // could log: it was signalled, and it did exit within the grace period.
            let killed_after_signal = sent_to.is_some_and(|s| killed_after(&id, s));
            let ok = match m.outcome {
                MemberOutcome::Stopped => {
                    (termed(&id) || killed_after_signal)
                        && !running(&id)
                        && seen_after_wait(&id) != Some(true)
                }
                MemberOutcome::StillRunning => termed(&id) && seen_after_wait(&id) == Some(true),
                MemberOutcome::Exited => {
                    // Gone before the first signal but after Pier's last look at it cannot be
                    // told from gone after it; gone before that look must read "skipped".
                    let last_look = first_sent
                        .and_then(|s| last_before(&trace, s, |c| *c == Call::Identity(id.pid)));
                    !termed(&id)
                        && !running(&id)
                        && ended.is_some_and(|e| last_look.is_none_or(|l| e > l))
                }
                MemberOutcome::Skipped => {
                    !termed(&id)
                        && (first_sent.is_none()
                            || ended.is_some_and(|e| first_sent.is_some_and(|s| e <= s))
                            || exec.is_some_and(|x| x <= asked)
                            || taken)
                }
                MemberOutcome::Failed => false,
            };
            if !ok {
                v.disagreements.push(format!(
                    "pid {} reported {} ({}), but: SIGTERM logged {}, running {}, ended at \
                     {ended:?}, exec'd at {exec:?}, pid taken {taken}, first signal at \
                     {first_sent:?}",
                    m.pid,
                    m.outcome.as_str(),
                    m.detail,
                    termed(&id),
                    running(&id)
                ));
            }
        }

        // The resource's result.
        let rescan = first_request.and_then(|f| {
            trace[f..]
                .iter()
                .position(|c| *c == Call::Survey)
                .map(|p| p + f)
        });
        self.judge_newcomers(&mut v, first_request, rescan, seen_after_wait);
        let made = |k: &&Known| matches!(k.origin, Origin::Forked | Origin::Newcomer);
        // The rescan spans its survey, the folder reads of what it found, and the process read
        // of its argv-twin rule: only what ran throughout it must have been seen (found by the
        // soak: a recycled newcomer that exited between the survey and its folder read).
        let rescan_end = rescan.map(|r| {
            trace[r..]
                .iter()
                .position(|c| *c == Call::Processes)
                .map_or(trace.len(), |p| p + r)
        });
        let left_behind: Vec<&Known> = known
            .iter()
            .filter(made)
            .filter(|k| {
                rescan
                    .zip(rescan_end)
                    .is_some_and(|(r, end)| k.born <= r && k.ended.is_none_or(|(e, _)| e > end))
            })
            .collect();
        let members_running: Vec<&Identity> =
            self.initial.iter().filter(|id| running(id)).collect();
        let bad_member = self.report.members.iter().any(|m| {
            matches!(
                m.outcome,
                MemberOutcome::StillRunning | MemberOutcome::Failed
            )
        });
        match self.report.result {
            ResourceResult::Stopped => {
                if bad_member || !left_behind.is_empty() || !members_running.is_empty() {
                    v.disagreements.push(format!(
                        "result stopped, but made by events and running at the rescan: {:?}; \
                         members running: {members_running:?}",
                        left_behind.iter().map(|k| k.id).collect::<Vec<_>>()
                    ));
                }
            }
            ResourceResult::PartiallyStopped => {
                let any_made = known
                    .iter()
                    .filter(made)
                    .any(|k| rescan.is_some_and(|r| k.ended.is_none_or(|(e, _)| e > r)));
                // A skipped member the stop's last wait saw running justifies it, even if it
                // ended right after (found by the soak: an exec'd member that an exit event
                // ended after the wait).
                let skipped_alive = self.report.members.iter().any(|m| {
                    m.outcome == MemberOutcome::Skipped
                        && seen_after_wait(&m.identity()) == Some(true)
                });
                if !bad_member
                    && !any_made
                    && !skipped_alive
                    && members_running.is_empty()
                    && self.reused.is_empty()
                {
                    v.disagreements.push(format!(
                        "result partially_stopped ({}), but every member is gone and nothing \
                         an event made ran at the rescan",
                        self.report.reason
                    ));
                }
            }
            ResourceResult::Refused | ResourceResult::Failed => {
                if self.report.timings.is_some() {
                    v.disagreements
                        .push("result refused or failed, but the stop has signal timings".into());
                }
            }
        }
        // A refusal for the 2 s deadline is right whatever happened (a loaded machine).
        let deadline = self.report.checkpoint == Some(Checkpoint::Deadline);
        if fired.iter().all(|f| !f.done)
            && self.report.result != ResourceResult::Stopped
            && self.reused.is_empty()
            && !deadline
        {
            v.disagreements.push(format!(
                "nothing happened during the stop, yet it ended {} ({})",
                self.report.result.as_str(),
                self.report.reason
            ));
        }
        v
    }
}

impl Facts<'_> {
    /// Newcomers (`stop/newcomers.rs`): every one Pier names is a process an event made after
    /// check (e), named with its birth parent and its true fate; every replacement a member's
    /// parent made that Pier's looks could see as a member's child is named; one that still
    /// runs keeps the result from `stopped`. (That none is signalled is the wrong-signal rule.)
    ///
    /// Pier's looks are the process-table reads after the first signal request and before the
    /// rescan's survey.
    fn judge_newcomers(
        &self,
        v: &mut Verdict,
        first_request: Option<usize>,
        rescan: Option<usize>,
        seen_after_wait: impl Fn(&Identity) -> Option<bool>,
    ) {
        let trace = self.round.trace.borrow();
        let known = self.round.known.borrow();
        let (Some(first), Some(_)) = (
            first_request,
            self.round
                .signals
                .borrow()
                .iter()
                .find(|(_, _, o)| *o == SignalOutcome::Sent)
                .map(|(n, _, _)| *n),
        ) else {
            if !self.report.newcomers.is_empty() {
                v.disagreements
                    .push("newcomers reported, but no signal was sent".into());
            }
            return;
        };
        let tree_cut = last_before(&trace, first, |c| *c == Call::Processes).unwrap_or(0);
        let end = rescan.unwrap_or(trace.len());
        let looks: Vec<usize> = (first..end)
            .filter(|&i| trace[i] == Call::Processes)
            .collect();
        for n in &self.report.newcomers {
            let id = Identity {
                pid: n.pid,
                start_time: n.start_time,
            };
            let Some(k) = known.iter().find(|k| k.id == id) else {
                v.disagreements.push(format!(
                    "newcomer pid {} ({}) is no process an event of the round made",
                    n.pid, n.how
                ));
                continue;
            };
            if k.origin == Origin::Initial || k.born <= tree_cut {
                v.disagreements.push(format!(
                    "newcomer pid {} was there at check (e) (born at call {}, cut {tree_cut})",
                    n.pid, k.born
                ));
            }
            let child = matches!(n.tie, TieKind::ChildOfMember | TieKind::ChildOfNewcomer);
            if child && n.parent != k.ppid {
                v.disagreements.push(format!(
                    "newcomer pid {} named with parent {}, but its parent was {}",
                    n.pid, n.parent, k.ppid
                ));
            }
            // The parent it was born to, and what that parent was to the round.
            let parent = known
                .iter()
                .find(|p| p.id.pid == k.ppid && p.born <= k.born)
                .map(|p| p.origin);
            let tie_ok = match n.tie {
                TieKind::ChildOfMember => parent == Some(Origin::Initial),
                TieKind::ChildOfNewcomer => {
                    matches!(parent, Some(Origin::Forked | Origin::Newcomer))
                }
                // Only the root listens, and only on the recorded port; the projects' folders
                // hold only the round's processes.
                TieKind::Listens | TieKind::OrphanInProject => true,
            };
            if !tie_ok {
                v.disagreements.push(format!(
                    "newcomer pid {} named as {:?} ({}), but its parent was {parent:?}",
                    n.pid, n.tie, n.how
                ));
            }
            let alive = seen_after_wait(&id);
            let fate_ok = match n.fate {
                NewcomerFate::StillRunning => {
                    // Seen only by the look after the last wait: running then.
                    alive == Some(true) || (alive.is_none() && self.running.contains(&id))
                }
                NewcomerFate::Exited => alive == Some(false),
            };
            if !fate_ok {
                v.disagreements.push(format!(
                    "newcomer pid {} reported {}, but after the last wait the test saw it {}",
                    n.pid,
                    n.fate.as_str(),
                    match alive {
                        Some(true) => "running",
                        Some(false) => "gone",
                        None => "never waited for",
                    }
                ));
            }
            if n.fate == NewcomerFate::StillRunning && self.report.result == ResourceResult::Stopped
            {
                v.disagreements.push(format!(
                    "result stopped, but newcomer pid {} still runs",
                    n.pid
                ));
            }
        }
        let signals = self.round.signals.borrow();
        let reported = |id: Identity| {
            self.report
                .newcomers
                .iter()
                .any(|n| n.pid == id.pid && n.start_time == id.start_time)
        };
        let ended_by_event = |id: Identity, at: usize| {
            known
                .iter()
                .any(|k| k.id == id && k.ended.is_some_and(|(e, _)| e <= at))
        };
        // A look that could not read the process table is reported as such: nothing to demand.
        if self.report.reason.contains("could not be looked for") {
            return;
        }
        for k in known
            .iter()
            .filter(|k| k.origin == Origin::Forked && k.born > tree_cut)
        {
            let Some(parent) = known
                .iter()
                .find(|p| p.id.pid == k.ppid && p.born <= k.born && p.origin == Origin::Initial)
            else {
                continue;
            };
            let signalled_before = |at: usize| {
                signals
                    .iter()
                    .any(|(n, s, o)| *s == parent.id && *o == SignalOutcome::Sent && *n < at)
            };
            let visible = looks.iter().any(|&o| {
                o >= k.born
                    && !signalled_before(o)
                    && !ended_by_event(parent.id, o)
                    && !ended_by_event(k.id, o)
            });
            if visible && !reported(k.id) {
                v.disagreements.push(format!(
                    "pid {} was born to member pid {} at call {} and a look at {looks:?} could see it, but it is not named as a newcomer",
                    k.id.pid, parent.id.pid, k.born
                ));
            }
        }
    }
}

/// Whether the test ended `id` at or before call `cut`.
fn ended_by(known: &[Known], id: Identity, cut: Option<usize>) -> bool {
    let cut = cut.unwrap_or(0);
    known
        .iter()
        .any(|k| k.id == id && k.ended.is_some_and(|(e, _)| e <= cut))
}

/// Whether `k` hung under `root` at call `cut`: every process up its parent chain was there
/// and not yet ended by the test.
fn under_root(known: &[Known], k: &Known, root: Identity, cut: usize) -> bool {
    let mut cur = k;
    for _ in 0..known.len() + 1 {
        if cur.id == root {
            return true;
        }
        let parent = known.iter().find(|p| {
            p.id.pid == cur.ppid && p.born <= cut && p.ended.is_none_or(|(e, _)| e > cut)
        });
        match parent {
            Some(p) => cur = p,
            None => return false,
        }
    }
    false
}
