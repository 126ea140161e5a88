//! Judges one stop against the round's ground truth.
//!
//! Times are call numbers of the stop (of the batch, in a batch round): an event "at n"
//! happened before Pier's call n, so a read at n or later sees it. In a batch the checkpoints
//! run in lockstep for every tree before any signal, so the cuts of the checks are the batch's:
//! - the network cut: the last survey before the batch's first signal request (check (e)'s
//!   network read); a client connected at or before it must get the stop refused;
//! - the tree cut: the last process-table read before the batch's first signal request (check
//!   (e)'s survey, whose table its tree check judges, followed by every member's identity); a
//!   new process under the root, a member that exec'd, or a root that ended, at or before it,
//!   must get the stop refused;
//! - the rescan: the last survey before the batch reported this tree's resource (its
//!   project's rescan, made once all of its resources had ended); a process an event made
//!   that runs then must keep the result from `stopped`.
//!
//! The looks of this tree's stop are the calls on its own thread: the thread that made its
//! first signal request.
//!
//! Before any signal, the trace must end with the whole checkpoint chain, in order.
//!
//! What is a wrong signal: any line in the fixtures' signal log that is not SIGTERM to a
//! member of the diagnosed tree in its diagnosed image, any line at all when the stop says it
//! sent nothing, and any process of the round that ended with no line, no event ending it and
//! no other explanation (a SIGKILL cannot be logged; this counts it).

use std::collections::BTreeSet;
use std::sync::MutexGuard as Ref;
use std::thread::ThreadId;

use pier_core::model::outcome::{
    Checkpoint, MemberOutcome, MemberReport, NewcomerFate, NewcomerReport, ResourceResult,
    StopReport, TieKind,
};
use pier_core::probe::Identity;
use pier_core::signal::SignalOutcome;

use super::hook::Call;
use super::{AfterWait, Fired, Kind, Known, Logged, Origin, Round};

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
    /// How many calls the trace held when the batch reported this tree's resource.
    pub done_at: usize,
}

fn last_before(trace: &[Call], end: usize, want: impl Fn(&Call) -> bool) -> Option<usize> {
    trace[..end].iter().rposition(want)
}

/// The last call before `end` made on `thread` that `want` picks.
fn last_on(
    trace: &[Call],
    threads: &[ThreadId],
    end: usize,
    thread: ThreadId,
    want: impl Fn(&Call) -> bool,
) -> Option<usize> {
    (0..end)
        .rev()
        .find(|&i| threads[i] == thread && want(&trace[i]))
}

impl Facts<'_> {
    /// The calls of this tree's rescan, if it had one: its survey, and the process read that
    /// ends it ([`Record::rescan_end`]).
    pub fn rescan_calls(&self) -> Option<(usize, usize)> {
        let record = Record::of(self);
        record.rescan().map(|r| (r, record.rescan_end(r)))
    }

    /// Every rule below, in turn, over the round's record as it stands after the stop.
    pub fn judge(&self) -> Verdict {
        let record = Record::of(self);
        let mut v = Verdict::default();
        record.logged_signals(&mut v);
        record.unexplained_deaths(&mut v);
        record.chain_before_first_signal(&mut v);
        record.events_the_checks_saw(&mut v);
        record.members_reported(&mut v);
        record.sent_signals_arrived(&mut v);
        record.member_outcomes(&mut v);
        let rescan = record.rescan();
        record.newcomers(&mut v, rescan);
        record.resource_result(&mut v, rescan);
        record.nothing_happened(&mut v);
        v
    }
}

/// The round's record, borrowed once for the judge, with the moments its rules measure from.
struct Record<'a> {
    facts: &'a Facts<'a>,
    trace: Ref<'a, Vec<Call>>,
    /// The thread that made each call.
    threads: Ref<'a, Vec<ThreadId>>,
    known: Ref<'a, Vec<Known>>,
    fired: Ref<'a, Vec<Fired>>,
    /// What the signaller answered: (call, identity, outcome).
    signals: Ref<'a, Vec<(usize, Identity, SignalOutcome)>>,
    /// What the test saw of each waited-for process right after a wait, and when it ended.
    after_wait: Ref<'a, Vec<AfterWait>>,
    /// The fixtures' signal log.
    lines: Vec<Logged>,
    /// The call at which Pier first asked to signal one of this tree's members.
    first_request: Option<usize>,
    /// The call at which Pier first asked to signal anything in the batch: the end of the
    /// lockstep checks.
    batch_first: Option<usize>,
    /// The thread this tree's signals, waits and looks ran on.
    thread: Option<ThreadId>,
    /// The call of the first signal the signaller says it sent.
    first_sent: Option<usize>,
    /// The stop says it sent nothing (refused or failed).
    sent_nothing: bool,
}

impl<'a> Record<'a> {
    fn of(facts: &'a Facts<'a>) -> Self {
        let round = facts.round;
        let trace = round.trace.borrow();
        let threads = round.threads.borrow();
        let signals = round.signals.borrow();
        let first_request = signals.first().map(|(n, _, _)| *n);
        let batch_first = trace.iter().position(|c| matches!(c, Call::Signal(_)));
        let first_sent = signals
            .iter()
            .find(|(_, _, o)| *o == SignalOutcome::Sent)
            .map(|(n, _, _)| *n);
        Self {
            facts,
            known: round.known.borrow(),
            fired: round.fired.borrow(),
            after_wait: round.after_wait.borrow(),
            lines: round.signal_lines(),
            first_request,
            batch_first,
            thread: first_request.map(|n| threads[n]),
            first_sent,
            sent_nothing: matches!(
                facts.report.result,
                ResourceResult::Refused | ResourceResult::Failed
            ),
            trace,
            threads,
            signals,
        }
    }

    fn report(&self) -> &StopReport {
        self.facts.report
    }

    /// A member of the diagnosed tree.
    fn member(&self, id: &Identity) -> bool {
        self.facts.initial.contains(id)
    }

    /// Ran right after the stop returned.
    fn running(&self, id: &Identity) -> bool {
        self.facts.running.contains(id)
    }

    /// The log holds a SIGTERM to `id` in its diagnosed image.
    fn termed(&self, id: &Identity) -> bool {
        self.lines
            .iter()
            .any(|l| l.id == *id && l.image == "orig" && l.signo == SIGTERM)
    }

    /// The log holds any signal to `id`.
    fn logged(&self, id: &Identity) -> bool {
        self.lines.iter().any(|l| l.id == *id)
    }

    /// The test SIGKILLed `id` (a recycle) after call `n`: no handler can log what reached it.
    fn killed_after(&self, id: &Identity, n: usize) -> bool {
        self.known
            .iter()
            .any(|k| k.id == *id && matches!(k.ended, Some((e, Kind::Recycle)) if e > n))
    }

    /// What the test saw of `id` right after the last wait for it: alive or not, if waited for.
    fn seen_after_wait(&self, id: &Identity) -> Option<bool> {
        self.after_wait
            .iter()
            .rev()
            .find(|w| w.id == *id)
            .map(|w| w.alive)
    }

    /// Whether `id` still ran when its last wait ended: seen alive right after it, or its
    /// handler logged a signal less than [`EXITING_NS`] before the wait ended (a process exits
    /// right after logging, but its exit takes a moment, and the kernel has it running until
    /// the exit is done). Why not the look alone: on a loaded machine the test's look, a
    /// moment after the wait, can find gone a process that was there when the wait gave up
    /// (4 times in 20,000 rounds).
    fn ran_when_wait_ended(&self, id: &Identity) -> bool {
        self.seen_after_wait(id) == Some(true)
            || self
                .logged_before_wait_end_ns(id)
                .is_some_and(|gap| gap < i128::from(EXITING_NS))
    }

    /// How long before its last wait ended `id`'s handler last logged, in ns (negative: after
    /// it), if it was waited for and logged.
    fn logged_before_wait_end_ns(&self, id: &Identity) -> Option<i128> {
        let last = self.after_wait.iter().rev().find(|w| w.id == *id)?;
        let logged = self.lines.iter().rev().find(|l| l.id == *id)?;
        Some(i128::from(last.ended_ns) - i128::from(logged.at_ns))
    }

    /// Wrong signals, from the log: every line must be a SIGTERM to a diagnosed member in its
    /// diagnosed image, and there must be none at all when the stop says it sent nothing.
    fn logged_signals(&self, v: &mut Verdict) {
        for Logged {
            id, image, signo, ..
        } in &self.lines
        {
            if *signo != SIGTERM || image != "orig" || !self.member(id) || self.sent_nothing {
                v.wrong_signals.push(format!(
                    "signal {signo} reached pid {} (start {}, image {image}): {}",
                    id.pid,
                    id.start_time,
                    if self.sent_nothing {
                        "the stop says it sent nothing"
                    } else {
                        "not a diagnosed member as it was diagnosed"
                    }
                ));
            }
        }
    }

    /// Deaths nobody explains: a process of the round that no longer runs, with no signal
    /// logged and no event ending it, was signalled where no handler could log (a SIGKILL).
    fn unexplained_deaths(&self, v: &mut Verdict) {
        for k in self.known.iter() {
            if !self.running(&k.id) && !self.logged(&k.id) && k.ended.is_none() {
                v.wrong_signals.push(format!(
                    "pid {} ({:?}) ended with no signal logged and no event ending it",
                    k.id.pid, k.origin
                ));
            }
        }
    }

    /// The chain of docs/design.md §3.3 ran in full, in order, right before the first signal:
    /// (a) network, (b) activity, (c) network, (d) tree, (e) network and tree (one survey); the snapshot was
    /// whole on disk first; and at most 2 s passed from check (a) to the first signal sent.
    fn chain_before_first_signal(&self, v: &mut Verdict) {
        let (Some(first), Some(_), Some(thread)) = (self.batch_first, self.first_sent, self.thread)
        else {
            return;
        };
        let trace = &self.trace;
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
        ];
        if !chain.ends_with(&want) {
            v.disagreements.push(format!(
                "signals were sent after {chain:?}, which does not end with the full chain \
                 {want:?}"
            ));
        }
        // No signal without the snapshot on disk first.
        match &self.facts.round.snapshot.borrow().found {
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
        let stamps = self.facts.round.stamps.borrow();
        let clock_before = |i: usize| last_before(trace, i, |c| *c == Call::Now);
        let own_clock_before =
            |i: usize| last_on(trace, &self.threads, i, thread, |c| *c == Call::Now);
        if let (Some(a), Some(s)) = (a, self.first_sent) {
            if let (Some(ta), Some(ts)) = (clock_before(a), own_clock_before(s)) {
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

    /// What the checks before the first signal had to see: a client connected by the network
    /// cut, a member's exec or the root's end by the tree cut, or a process forked under the
    /// root by the tree cut, each must have got the stop refused.
    fn events_the_checks_saw(&self, v: &mut Verdict) {
        let (Some(first), Some(_)) = (self.batch_first, self.first_sent) else {
            return;
        };
        let known = &self.known;
        let net_cut = last_before(&self.trace, first, |c| *c == Call::Survey);
        let tree_cut = last_before(&self.trace, first, table_read);
        for f in self.fired.iter().filter(|f| f.done) {
            let before = |cut: Option<usize>| cut.is_some_and(|c| f.at <= c);
            let must_refuse = match f.kind {
                Kind::Connect => before(net_cut),
                Kind::Exec => {
                    before(tree_cut)
                        && f.target
                            .is_some_and(|t| self.member(&t) && !ended_by(known, t, tree_cut))
                }
                Kind::Exit | Kind::Recycle => before(tree_cut) && f.target == Some(self.facts.root),
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
                && !ended_by(known, k.id, tree_cut)
                && under_root(known, k, self.facts.root, cut)
            {
                v.disagreements.push(format!(
                    "pid {} joined the tree at call {} before the tree check at {cut}, \
                     yet signals were sent",
                    k.id.pid, k.born
                ));
            }
        }
    }

    /// One outcome per member: a stop that signalled reports exactly the diagnosed members,
    /// each once.
    fn members_reported(&self, v: &mut Verdict) {
        let report = self.report();
        let initial = &self.facts.initial;
        let reported: BTreeSet<Identity> = report
            .members
            .iter()
            .map(|m| Identity {
                pid: m.pid,
                start_time: m.start_time,
            })
            .collect();
        if self.first_request.is_some()
            && !self.sent_nothing
            && (reported != initial.iter().copied().collect()
                || report.members.len() != initial.len())
        {
            v.disagreements.push(format!(
                "the report's members {reported:?} are not the diagnosed ones {initial:?}",
            ));
        }
    }

    /// Every signal the signaller says it sent reached its process (the log), unless the test
    /// SIGKILLed that process first (a recycle), which no handler can log.
    fn sent_signals_arrived(&self, v: &mut Verdict) {
        for (n, id, outcome) in self.signals.iter() {
            if *outcome == SignalOutcome::Sent && !self.termed(id) && !self.killed_after(id, *n) {
                v.disagreements.push(format!(
                    "the signaller said it sent SIGTERM to pid {} at call {n}, but no such \
                     signal arrived",
                    id.pid
                ));
            }
        }
    }

    /// Each member's outcome is honest ([`Record::outcome_disagrees`]).
    fn member_outcomes(&self, v: &mut Verdict) {
        for m in &self.report().members {
            if let Some(d) = self.outcome_disagrees(m) {
                v.disagreements.push(d);
            }
        }
    }

    /// Why `m`'s outcome is not what the record shows, if it is not: `stopped` only if it was
    /// signalled and is gone after its wait; `still_running` only if signalled and still
    /// there when its wait ended; `exited` only if it ended unsignalled after Pier's last look
    /// at it; `skipped` only if unsignalled and gone, exec'd or its pid taken before its turn
    /// (or no signal went out at all); never `failed`.
    fn outcome_disagrees(&self, m: &MemberReport) -> Option<String> {
        let id = Identity {
            pid: m.pid,
            start_time: m.start_time,
        };
        let first_sent = self.first_sent;
        let k = self.known.iter().find(|k| k.id == id);
        let ended = k.and_then(|k| k.ended).map(|(e, _)| e);
        let exec = k.and_then(|k| k.exec_at);
        // The call at which Pier asked to signal this member, if it did.
        let asked = self
            .signals
            .iter()
            .find(|(_, s, _)| *s == id)
            .map_or(usize::MAX, |(n, _, _)| *n);
        let taken = self.fired.iter().any(|f| {
            f.kind == Kind::Recycle
                && f.target == Some(id)
                && f.note.contains("taken")
                && f.at <= asked
        });
        let sent_to = self
            .signals
            .iter()
            .find(|(_, s, o)| *s == id && *o == SignalOutcome::Sent)
            .map(|(n, _, _)| *n);
        // Killed by the test (a recycle) after Pier's signal went out, before its handler
        // could log: it was signalled, and it did exit within the grace period.
        let killed_after_signal = sent_to.is_some_and(|s| self.killed_after(&id, s));
        let termed = self.termed(&id);
        let running = self.running(&id);
        let ok = match m.outcome {
            MemberOutcome::Stopped => {
                (termed || killed_after_signal)
                    && !running
                    && self.seen_after_wait(&id) != Some(true)
            }
            MemberOutcome::StillRunning => termed && self.ran_when_wait_ended(&id),
            MemberOutcome::Exited => {
                // Gone before the first signal but after Pier's last look at it cannot be
                // told from gone after it; gone before that look must read "skipped".
                let last_look = first_sent
                    .and_then(|s| last_before(&self.trace, s, |c| *c == Call::Identity(id.pid)));
                !termed && !running && ended.is_some_and(|e| last_look.is_none_or(|l| e > l))
            }
            MemberOutcome::Skipped => {
                !termed
                    && (first_sent.is_none()
                        || ended.is_some_and(|e| first_sent.is_some_and(|s| e <= s))
                        || exec.is_some_and(|x| x <= asked)
                        || taken)
            }
            MemberOutcome::Failed => false,
        };
        (!ok).then(|| {
            format!(
                "pid {} reported {} ({}), but: SIGTERM logged {termed} ({:?} ms before its last \
                 wait ended), running {running}, ended at {ended:?}, exec'd at {exec:?}, pid \
                 taken {taken}, first signal at {first_sent:?}",
                m.pid,
                m.outcome.as_str(),
                m.detail,
                self.logged_before_wait_end_ns(&id)
                    .map(|ns| ns as f64 / 1e6),
            )
        })
    }

    /// The rescan: the last survey before the batch reported this tree's resource, after its
    /// first signal request (a stop that asked for none rescans nothing).
    fn rescan(&self) -> Option<usize> {
        let first = self.first_request?;
        let end = self.facts.done_at.min(self.trace.len());
        last_before(&self.trace, end, |c| *c == Call::Survey).filter(|&r| r > first)
    }

    /// Newcomers (`crates/core/src/stop/newcomers.rs`): every one Pier names is a process an
    /// event made after check (e), named honestly ([`Record::newcomer_disagrees`]); every
    /// replacement a member's parent made that Pier's looks could see is named
    /// ([`Record::replacements_named`]). None is reported when no signal was sent. (That none
    /// is signalled is the wrong-signal rule.)
    ///
    /// Pier's looks are the process-table reads on this tree's thread after its first signal
    /// request and before the rescan's survey.
    fn newcomers(&self, v: &mut Verdict, rescan: Option<usize>) {
        let (Some(first), Some(_), Some(batch_first), Some(thread)) = (
            self.first_request,
            self.first_sent,
            self.batch_first,
            self.thread,
        ) else {
            if !self.report().newcomers.is_empty() {
                v.disagreements
                    .push("newcomers reported, but no signal was sent".into());
            }
            return;
        };
        let tree_cut = last_before(&self.trace, batch_first, table_read).unwrap_or(0);
        for n in &self.report().newcomers {
            v.disagreements.extend(self.newcomer_disagrees(n, tree_cut));
        }
        // A look that could not read the process table is reported as such: nothing to demand.
        if self.report().reason.contains("could not be looked for") {
            return;
        }
        let end = rescan.unwrap_or(self.trace.len());
        let looks: Vec<usize> = (first..end)
            .filter(|&i| self.trace[i] == Call::Processes && self.threads[i] == thread)
            .collect();
        self.replacements_named(v, tree_cut, &looks);
    }

    /// What is wrong with how newcomer `n` is named, if anything: it must be a process an
    /// event made, born after check (e)'s tree read (`tree_cut`); named with its birth parent
    /// and a tie that matches what that parent was to the round; with the fate the test saw
    /// after the last wait; and, still running, it keeps the result from `stopped`.
    fn newcomer_disagrees(&self, n: &NewcomerReport, tree_cut: usize) -> Vec<String> {
        let mut out = Vec::new();
        let known = &self.known;
        let id = Identity {
            pid: n.pid,
            start_time: n.start_time,
        };
        let Some(k) = known.iter().find(|k| k.id == id) else {
            out.push(format!(
                "newcomer pid {} ({}) is no process an event of the round made",
                n.pid, n.how
            ));
            return out;
        };
        if k.origin == Origin::Initial || k.born <= tree_cut {
            out.push(format!(
                "newcomer pid {} was there at check (e) (born at call {}, cut {tree_cut})",
                n.pid, k.born
            ));
        }
        let child = matches!(n.tie, TieKind::ChildOfMember | TieKind::ChildOfNewcomer);
        if child && n.parent != k.ppid {
            out.push(format!(
                "newcomer pid {} named with parent {}, but its parent was {}",
                n.pid, n.parent, k.ppid
            ));
        }
        // The parent it was born to, and what that parent was to the round.
        let parent = parent_of(known, k).map(|p| p.origin);
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
            out.push(format!(
                "newcomer pid {} named as {:?} ({}), but its parent was {parent:?}",
                n.pid, n.tie, n.how
            ));
        }
        out.extend(self.fate_disagrees(n, id));
        if n.fate == NewcomerFate::StillRunning && self.report().result == ResourceResult::Stopped {
            out.push(format!(
                "result stopped, but newcomer pid {} still runs",
                n.pid
            ));
        }
        out
    }

    /// Why newcomer `n`'s fate is not what the test saw after the last wait, if it is not
    /// (one seen only by the look after the last wait is running if it ran when the stop
    /// returned).
    fn fate_disagrees(&self, n: &NewcomerReport, id: Identity) -> Option<String> {
        let alive = self.seen_after_wait(&id);
        let fate_ok = match n.fate {
            NewcomerFate::StillRunning => {
                // Seen only by the look after the last wait: running then.
                alive == Some(true) || (alive.is_none() && self.running(&id))
            }
            NewcomerFate::Exited => alive == Some(false),
        };
        (!fate_ok).then(|| {
            format!(
                "newcomer pid {} reported {}, but after the last wait the test saw it {}",
                n.pid,
                n.fate.as_str(),
                match alive {
                    Some(true) => "running",
                    Some(false) => "gone",
                    None => "never waited for",
                }
            )
        })
    }

    /// Every process a member forked after check (e)'s tree read that one of Pier's `looks`
    /// could see under that member (born by then, the member not yet signalled, neither ended
    /// by the test) is named as a newcomer.
    fn replacements_named(&self, v: &mut Verdict, tree_cut: usize, looks: &[usize]) {
        let known = &self.known;
        let reported = |id: Identity| {
            self.report()
                .newcomers
                .iter()
                .any(|n| n.pid == id.pid && n.start_time == id.start_time)
        };
        let ended_by_event = |id: Identity, at: usize| {
            known
                .iter()
                .any(|k| k.id == id && k.ended.is_some_and(|(e, _)| e <= at))
        };
        for k in known
            .iter()
            .filter(|k| k.origin == Origin::Forked && k.born > tree_cut)
        {
            let Some(parent) = parent_of(known, k).filter(|p| p.origin == Origin::Initial) else {
                continue;
            };
            let signalled_before = |at: usize| {
                self.signals
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

    /// The resource's result: `stopped` only with no member still running or failed and
    /// nothing an event made running throughout the rescan; `partially_stopped` only with
    /// something to show for it ([`Record::partial_is_shown`]); `not_stopped` only when signals
    /// went out, no member ended and one outlived its signal; `refused` or `failed` only
    /// with no signal timings.
    fn resource_result(&self, v: &mut Verdict, rescan: Option<usize>) {
        let report = self.report();
        let members_running: Vec<&Identity> = self
            .facts
            .initial
            .iter()
            .filter(|id| self.running(id))
            .collect();
        let bad_member = report.members.iter().any(|m| {
            matches!(
                m.outcome,
                MemberOutcome::StillRunning | MemberOutcome::Failed
            )
        });
        match report.result {
            ResourceResult::Stopped => {
                let left_behind = self.left_behind(rescan);
                if bad_member || !left_behind.is_empty() || !members_running.is_empty() {
                    v.disagreements.push(format!(
                        "result stopped, but made by events and running at the rescan: {:?}; \
                         members running: {members_running:?}",
                        left_behind.iter().map(|k| k.id).collect::<Vec<_>>()
                    ));
                }
            }
            ResourceResult::PartiallyStopped => {
                if !bad_member && members_running.is_empty() && !self.partial_is_shown(rescan) {
                    v.disagreements.push(format!(
                        "result partially_stopped ({}), but every member is gone, no newcomer \
                         ran after the last wait and nothing an event made ran at the rescan",
                        report.reason
                    ));
                }
            }
            ResourceResult::NotStopped => {
                let ended = report
                    .members
                    .iter()
                    .any(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited));
                let outlived = report
                    .members
                    .iter()
                    .any(|m| m.outcome == MemberOutcome::StillRunning);
                if report.timings.is_none() || ended || !outlived {
                    v.disagreements.push(format!(
                        "result not_stopped ({}), but no signal went out, a member ended, or \
                         none outlived its signal",
                        report.reason
                    ));
                }
            }
            ResourceResult::Refused | ResourceResult::Failed => {
                if report.timings.is_some() {
                    v.disagreements
                        .push("result refused or failed, but the stop has signal timings".into());
                }
            }
            // The soak makes no dry run.
            ResourceResult::WouldStop => v
                .disagreements
                .push("a dry run's result from a stop that was no dry run".into()),
        }
    }

    /// The processes an event made that ran throughout the rescan. The rescan spans its
    /// survey, the folder reads of what it found, and the process read of its argv-twin rule:
    /// only what ran throughout it must have been seen (found by the soak: a recycled newcomer
    /// that exited between the survey and its folder read).
    fn left_behind(&self, rescan: Option<usize>) -> Vec<&Known> {
        let rescan_end = rescan.map(|r| self.rescan_end(r));
        self.known
            .iter()
            .filter(made_by_event)
            .filter(|k| {
                rescan
                    .zip(rescan_end)
                    .is_some_and(|(r, end)| k.born <= r && k.ended.is_none_or(|(e, _)| e > end))
            })
            .collect()
    }

    /// The rescan's own process read (its argv-twin rule), on the thread that made its survey
    /// at call `r`.
    fn rescan_end(&self, r: usize) -> usize {
        let trace = &self.trace;
        (r..trace.len())
            .find(|&i| trace[i] == Call::Processes && self.threads[i] == self.threads[r])
            .unwrap_or(trace.len())
    }

    /// Besides a member still running or failed, what shows a stop was partial: something an
    /// event made still ran when the rescan began, a skipped member the stop's last wait saw
    /// running (even if it ended right after; found by the soak: an exec'd member that an exit
    /// event ended after the wait), a newcomer rightly reported still running (the same: an
    /// exit event ended it between the last wait and the rescan), or a member's pid held by
    /// another process.
    fn partial_is_shown(&self, rescan: Option<usize>) -> bool {
        let any_made = self
            .known
            .iter()
            .filter(made_by_event)
            .any(|k| rescan.is_some_and(|r| k.ended.is_none_or(|(e, _)| e > r)));
        let skipped_alive = self.report().members.iter().any(|m| {
            m.outcome == MemberOutcome::Skipped && self.seen_after_wait(&m.identity()) == Some(true)
        });
        let newcomer_ran = self.report().newcomers.iter().any(|n| {
            let id = Identity {
                pid: n.pid,
                start_time: n.start_time,
            };
            n.fate == NewcomerFate::StillRunning && self.fate_disagrees(n, id).is_none()
        });
        any_made || skipped_alive || newcomer_ran || !self.facts.reused.is_empty()
    }

    /// A stop during which nothing happened ends `stopped`; a refusal for the 2 s deadline is
    /// right whatever happened (a loaded machine), and so is a pid reused by anything.
    fn nothing_happened(&self, v: &mut Verdict) {
        let report = self.report();
        let deadline = report.checkpoint == Some(Checkpoint::Deadline);
        if self.fired.iter().all(|f| !f.done)
            && report.result != ResourceResult::Stopped
            && self.facts.reused.is_empty()
            && !deadline
        {
            v.disagreements.push(format!(
                "nothing happened during the stop, yet it ended {} ({})",
                report.result.as_str(),
                report.reason
            ));
        }
    }
}

/// How long a process that has logged its signal may still be exiting, by the kernel's
/// account, on a loaded machine. Short against the soak's 1 s grace: a waiter that missed an
/// exit would be seen a whole grace after the log.
const EXITING_NS: u64 = 200_000_000;

/// The process `k` was born to: of those that held its parent pid by its birth, the last one
/// born (a pid taken over after its first holder ended is held by the newcomer, not by the
/// process that first had it).
fn parent_of<'a>(known: &'a [Known], k: &Known) -> Option<&'a Known> {
    known
        .iter()
        .filter(|p| p.id.pid == k.ppid && p.born <= k.born)
        .max_by_key(|p| p.born)
}

/// A read of the process table: on its own, or a survey's (in the same call).
fn table_read(c: &Call) -> bool {
    matches!(c, Call::Processes | Call::Survey)
}

/// A process an event made (a fork's child, a recycle's newcomer).
fn made_by_event(k: &&Known) -> bool {
    matches!(k.origin, Origin::Forked | Origin::Newcomer)
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
