//! A batch, and the one driver of the checkpoint chain (ARCHITECTURE.md, "Batches"): every
//! target of a stop through the chain, over the kinds of target's [`Target`] (`target.rs`).
//! The targets are split by [`TargetId::kind`]; each kind's group goes in lockstep up to the
//! first signal — all of a batch's trees together, each step one read for all of them; each
//! container on its own, since its checks are its engine's slow reads, which must not count
//! against the trees' deadline — and a target refused or failed at a step leaves with its own
//! report while the rest go on. Then each target signals, waits and looks on its own thread,
//! and each project is rescanned once, when all of its targets have ended. The lock, the
//! interruption seams, "no record, no signal", the mark, the deadline, the dry run and the
//! outcome's record are written here once. A stop of one target is a batch of one.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use super::container::Run;
use super::flow::{abandoned, refused, Stopper};
use super::rescan;
use super::target::{Deadline, Ended, Signalled, Target};
use super::tree::Tree;
use crate::model::outcome::{Checkpoint, ResourceResult, StopReport};
use crate::model::shown::Shown;
use crate::model::target::{TargetId, TargetKind};
use crate::probe::reuse::Coalesced;
use crate::probe::{Identity, Probe};
use crate::store::Lock;

#[cfg(test)]
pub(super) use super::tree::disowned;

/// Where a batch is, for a progress line while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One fresh diagnosis of the machine for the whole batch.
    Rediagnosing,
    /// Each resource's recovery snapshot, written.
    Snapshots,
    /// A dry run's stand-in for the snapshots: each member read as a snapshot would record
    /// it, nothing written.
    Reading,
    /// A network or tree checkpoint, one read for the whole batch.
    Check(Checkpoint),
    /// Checkpoint (b): one activity sample over this window.
    Sampling(Duration),
    /// Signals leaf to root, waits and looks: each resource on its own thread.
    Signalling,
}

impl Step {
    /// The step that records each resource: its snapshot written, or in a dry run, which
    /// writes nothing, only read. Why: a status line that said "writing" during a dry run
    /// told the user something was written (issue 41).
    pub fn recording(dry_run: bool) -> Self {
        match dry_run {
            true => Step::Reading,
            false => Step::Snapshots,
        }
    }

    /// The step in plain words, for a status line: "sampling activity for 500 ms". No
    /// checkpoint's letter: a person has not read the design.
    pub fn words(self) -> String {
        match self {
            Step::Rediagnosing => "looking at each resource again".into(),
            Step::Snapshots => "writing recovery snapshots".into(),
            Step::Reading => "reading each process as its recovery snapshot would".into(),
            Step::Check(Checkpoint::A) => "checking ports and connections".into(),
            Step::Check(Checkpoint::B) => "checking activity".into(),
            Step::Check(Checkpoint::C) => "checking ports and connections again".into(),
            Step::Check(Checkpoint::D) => "checking every process is still the same one".into(),
            Step::Check(Checkpoint::E) => "checking everything one last time".into(),
            Step::Check(Checkpoint::Deadline) => "checking the time since the first check".into(),
            Step::Sampling(w) => format!("sampling activity for {} ms", w.as_millis()),
            Step::Signalling => "sending SIGTERM, children before parents".into(),
        }
    }
}

/// What a batch tells its caller while it runs, always on the caller's own thread.
pub enum Progress<'r> {
    /// The batch begins a step with this many resources still in the chain.
    Step(Step, usize),
    /// One resource's report is final: recorded in its snapshot, if one was written.
    Done(&'r StopReport),
}

/// A target asked for: its place among the batch's reports, its id, what was shown of it.
type Asked<'t> = (usize, &'t str, Option<&'t Shown>);

/// A target's place among the batch's reports, and its stop lock (none for an id that names no
/// target).
type Place = (usize, Option<Lock>);

/// A target in the chain, its stop lock held until its outcome is recorded.
struct Live<K> {
    at: usize,
    lock: Option<Lock>,
    target: K,
}

/// The batch's reports, in the order asked, each told to the caller when final.
struct Reports<'p> {
    slots: Vec<Option<StopReport>>,
    progress: &'p mut dyn FnMut(Progress<'_>),
}

impl Reports<'_> {
    fn step(&mut self, step: Step, live: usize) {
        if live > 0 {
            (self.progress)(Progress::Step(step, live));
        }
    }

    /// A step of kind `K`'s chain, if its progress names it.
    fn step_of<'t, K: Target<'t>>(&mut self, step: Step, live: usize) {
        if K::SHOWS_STEPS {
            self.step(step, live);
        }
    }

    fn done(&mut self, at: usize, report: StopReport) {
        (self.progress)(Progress::Done(&report));
        self.slots[at] = Some(report);
    }
}

/// The kind of the target `id`: a container's card id is a container's; anything else is
/// looked for among the trees (and refused there if no tree has it).
fn kind_of(id: &str) -> TargetKind {
    id.parse::<TargetId>()
        .map_or(TargetKind::Tree, |t| t.kind())
}

impl Stopper<'_> {
    /// Stops every resource of `targets` (an id and, if any, what the user was shown of it)
    /// at once, and returns one report per distinct id, in order. `progress` hears of each
    /// step and of each report as soon as it is final.
    pub fn stop_all(
        &self,
        targets: &[(&str, Option<&Shown>)],
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Vec<StopReport> {
        // An id named twice is one resource: stopped once, reported once.
        let mut seen = HashSet::new();
        let targets: Vec<(&str, Option<&Shown>)> = targets
            .iter()
            .filter(|(id, _)| seen.insert(*id))
            .copied()
            .collect();
        let mut out = Reports {
            slots: targets.iter().map(|_| None).collect(),
            progress,
        };
        let asked = |kind| -> Vec<Asked> {
            let each = targets.iter().enumerate();
            each.filter(|(_, (id, _))| kind_of(id) == kind)
                .map(|(at, &(id, shown))| (at, id, shown))
                .collect()
        };
        // The trees together; then each container, one after another.
        self.chain::<Tree>(&asked(TargetKind::Tree), &mut out);
        for container in asked(TargetKind::Container) {
            self.chain::<Run>(&[container], &mut out);
        }
        // Every resource ends with a report; one missing would be Pier's own fault, and its
        // signals unknown here: said so, never "nothing was sent".
        for (at, (id, _)) in targets.iter().enumerate() {
            if out.slots[at].is_none() {
                out.done(at, lost(id));
            }
        }
        out.slots.into_iter().flatten().collect()
    }

    /// The chain for a group of one kind's targets, each ending with its report in `out`.
    fn chain<'t, K: Target<'t>>(&self, asked: &[Asked<'t>], out: &mut Reports) {
        let live = self.rediagnose_each::<K>(self.lock_each(asked, out), out);
        let (t0, checked) = self.check_each(live, out);
        if self.opts.dry_run {
            self.plan_each(t0, checked, out);
        } else {
            self.signal_each(t0, checked, out);
        }
    }

    /// Each resource's own stop lock. A stop of one resource waits for it while another stop
    /// of it runs (`Stopper::lock`); a batch of several only tries it, so a resource another
    /// stop holds is refused at once and never stalls the rest.
    fn lock_each<'t>(
        &self,
        asked: &[Asked<'t>],
        out: &mut Reports,
    ) -> Vec<(Asked<'t>, Option<Lock>)> {
        if let [(at, id, shown)] = asked {
            return match self.lock(id) {
                Ok(lock) => vec![((*at, *id, *shown), lock)],
                Err(report) => {
                    out.done(*at, *report);
                    Vec::new()
                }
            };
        }
        let mut locked = Vec::new();
        for &(at, id, shown) in asked {
            // An id that names no target names no lock: its re-diagnosis refuses it.
            let Ok(target) = id.parse::<TargetId>() else {
                locked.push(((at, id, shown), None));
                continue;
            };
            match self.store.try_lock(&target.stop_lock()) {
                Ok(Some(lock)) => locked.push(((at, id, shown), Some(lock))),
                Ok(None) => out.done(
                    at,
                    StopReport::new(
                        id,
                        ResourceResult::Refused,
                        "its stop lock is held (by another stop of it, or by a read of its \
                         history settling its last stop: `pier history`, `pier restart`, the \
                         app), so this batch left it alone: nothing was sent",
                    ),
                ),
                Err(e) => out.done(
                    at,
                    StopReport::new(id, ResourceResult::Failed, e.to_string()),
                ),
            }
        }
        locked
    }

    /// An interruption before the targets' stops began ends each of them, nothing written.
    fn unless_begun<'t, K: Target<'t>, T>(
        &self,
        group: Vec<(usize, &'t str, T)>,
        out: &mut Reports,
    ) -> Vec<(usize, T)> {
        let signal = self.interrupt.raised();
        let mut kept = Vec::new();
        for (at, id, t) in group {
            match signal {
                Some(signal) => out.done(at, abandoned(id, signal, K::BEFORE_START)),
                None => kept.push((at, t)),
            }
        }
        kept
    }

    /// Steps 1 and 2: the kind's fresh look for the group, each target judged in it; then each
    /// one's record written. Returns what the re-diagnosis saw, for the rescan.
    fn rediagnose_each<'t, K: Target<'t>>(
        &self,
        locked: Vec<(Asked<'t>, Option<Lock>)>,
        out: &mut Reports,
    ) -> (K::Seen, Vec<Live<K>>) {
        // Before anything is written: an interruption before the batch began starts nothing.
        let group = locked
            .into_iter()
            .map(|((at, id, s), l)| (at, id, (id, s, l)));
        let locked = self.unless_begun::<K, _>(group.collect(), out);
        if locked.is_empty() {
            return Default::default();
        }
        out.step(Step::Rediagnosing, locked.len());
        let asked: Vec<(&'t str, Option<&Shown>)> =
            locked.iter().map(|(_, (id, s, _))| (*id, *s)).collect();
        let (seen, answers) = K::rediagnose(self, &asked);
        let mut fresh = Vec::new();
        for ((at, (id, _, lock)), answer) in locked.into_iter().zip(answers) {
            match answer {
                Ok(found) => fresh.push((at, id, (lock, found))),
                Err(r) => out.done(at, *r),
            }
        }
        // Nor does one that came during the re-diagnosis: nothing is written yet.
        let fresh = self.unless_begun::<K, _>(fresh, out);
        if fresh.is_empty() {
            return (seen, Vec::new());
        }
        out.step_of::<K>(Step::recording(self.opts.dry_run), fresh.len());
        let (places, found): (Vec<Place>, Vec<K::Fresh>) = fresh
            .into_iter()
            .map(|(at, (lock, found))| ((at, lock), found))
            .unzip();
        let mut live = Vec::new();
        for ((at, lock), recorded) in places.into_iter().zip(K::record(self, found)) {
            match recorded {
                Ok(target) => live.push(Live { at, lock, target }),
                Err(r) => out.done(at, *r),
            }
        }
        (seen, live)
    }

    /// Step 3 in lockstep: checkpoints (a) to (e), each asked of the group at once, with the
    /// "signals may follow" mark of each after (c). Returns when check (a) ran (every deadline
    /// counts from it) and what the re-diagnosis saw, with the targets that passed.
    fn check_each<'t, K: Target<'t>>(
        &self,
        (seen, mut live): (K::Seen, Vec<Live<K>>),
        out: &mut Reports,
    ) -> (Duration, (K::Seen, Vec<Live<K>>)) {
        let t0 = self.probe.now();
        live = self.judged(live, out, Checkpoint::A);
        live = self.unless_interrupted(live, out);
        out.step_of::<K>(Step::Sampling(self.opts.sample), live.len());
        live = self.judged(live, out, Checkpoint::B);
        live = self.unless_interrupted(live, out);
        live = self.judged(live, out, Checkpoint::C);
        live = self.unless_interrupted(live, out);
        // Before (d) and (e), so the last look stays right before the first signal: the mark
        // says only that signals *may* follow, and a refusal after it still records that
        // none did.
        let mut marked = Vec::new();
        for l in live {
            let marked_now = match self.opts.dry_run {
                true => Ok(()),
                false => l.target.mark(self),
            };
            match marked_now {
                Ok(()) => marked.push(l),
                Err(why) => {
                    let why = why.to_string();
                    let failed = StopReport::new(l.target.id(), ResourceResult::Failed, why);
                    self.end(l, failed, out);
                }
            }
        }
        live = self.judged(marked, out, Checkpoint::D);
        live = self.judged(live, out, Checkpoint::E);
        (t0, (seen, self.unless_interrupted(live, out)))
    }

    /// One checkpoint for every target still in the chain: its kind answers for all at once;
    /// a refused one ends here with its own report.
    fn judged<'t, K: Target<'t>>(
        &self,
        mut live: Vec<Live<K>>,
        out: &mut Reports,
        at: Checkpoint,
    ) -> Vec<Live<K>> {
        if live.is_empty() {
            return live;
        }
        if at != Checkpoint::B {
            out.step_of::<K>(Step::Check(at), live.len());
        }
        let mut group: Vec<&mut K> = live.iter_mut().map(|l| &mut l.target).collect();
        let answers = K::look(self, at, &mut group);
        assert_eq!(answers.len(), live.len(), "one answer per resource");
        let mut passed = Vec::new();
        for (l, answer) in live.into_iter().zip(answers) {
            match answer {
                Ok(()) => passed.push(l),
                Err(why) => {
                    let r = refused(l.target.id(), why, &self.opts);
                    self.end(l, r, out);
                }
            }
        }
        passed
    }

    /// Between two checks: an interruption ends every target still in the chain, with
    /// nothing sent.
    fn unless_interrupted<'t, K: Target<'t>>(
        &self,
        live: Vec<Live<K>>,
        out: &mut Reports,
    ) -> Vec<Live<K>> {
        let Some(signal) = self.interrupt.raised() else {
            return live;
        };
        for l in live {
            let r = abandoned(l.target.id(), signal, K::DURING_CHECKS);
            self.end(l, r, out);
        }
        Vec::new()
    }

    /// The deadline of `target`'s first signal: from its check (a).
    fn deadline<'t, K: Target<'t>>(&self, t0: Duration, target: &K) -> Deadline {
        Deadline {
            t0: target.checked_at().unwrap_or(t0),
            limit: self.opts.deadline,
        }
    }

    /// A dry run's end, where the signals would begin: each target that passed says what it
    /// would have sent, its deadline judged as its first signal would judge it. Nothing is
    /// sent or written.
    fn plan_each<'t, K: Target<'t>>(
        &self,
        t0: Duration,
        (_, checked): (K::Seen, Vec<Live<K>>),
        out: &mut Reports,
    ) {
        for l in checked {
            let r = l.target.plan(self, self.deadline(t0, &l.target));
            self.end(l, r, out);
        }
    }

    /// Steps 4–7: each target's signals, waits and looks on its own thread; each project
    /// rescanned once all of its targets have ended (projects that end together share one
    /// rescan); each result recorded and reported as soon as it is final.
    fn signal_each<'t, K: Target<'t>>(
        &self,
        t0: Duration,
        (seen, checked): (K::Seen, Vec<Live<K>>),
        out: &mut Reports,
    ) {
        if checked.is_empty() {
            return;
        }
        out.step_of::<K>(Step::Signalling, checked.len());
        let members: HashSet<Identity> = checked.iter().flat_map(|l| l.target.members()).collect();
        let mut left: HashMap<String, usize> = HashMap::new();
        for l in &checked {
            *left.entry(l.target.project().to_owned()).or_default() += 1;
        }
        let (mut places, targets): (Vec<Option<Place>>, Vec<K>) = checked
            .into_iter()
            .map(|l| (Some((l.at, l.lock)), l.target))
            .unzip();
        // The threads' looks for newcomers share their reads of the process table, each
        // answered by a read that began after it was asked (`probe::reuse::Coalesced`).
        let shared = Coalesced::new(self.probe);
        let signalling = Stopper {
            probe: &shared,
            opts: self.opts.clone(),
            ..*self
        };
        let deadlines: Vec<Deadline> = targets.iter().map(|t| self.deadline(t0, t)).collect();
        let mut claims: Vec<(String, HashSet<Identity>)> = Vec::new();
        let mut ended: HashMap<String, Vec<(usize, Signalled)>> = HashMap::new();
        std::thread::scope(|s| {
            let rx = spawn_each(s, &signalling, &targets, &deadlines);
            while let Ok(first) = rx.recv() {
                for (i, r) in std::iter::once(first).chain(rx.try_iter()) {
                    let path = targets[i].project().to_owned();
                    *left.get_mut(&path).expect("counted above") -= 1;
                    claims.push(rescan::claimed(targets[i].id(), &r.0.newcomers));
                    ended.entry(path).or_default().push((i, r));
                }
                let group: Vec<(usize, Signalled)> = ready(&left, &ended)
                    .iter()
                    .flat_map(|p| ended.remove(p).unwrap_or_default())
                    .collect();
                if group.is_empty() {
                    continue;
                }
                let batch = Ended {
                    seen: &seen,
                    members: &members,
                    claims: &claims,
                };
                self.rescan_group((&targets, &mut places), group, &batch, out);
            }
        });
    }

    /// Step 6 for a group whose projects have ended: the kind's rescan (its reads its own, on
    /// this thread: the soak's oracle reads the rescan as one survey and the process read that
    /// follows it here), then each target's end.
    fn rescan_group<'t, K: Target<'t>>(
        &self,
        (targets, places): (&[K], &mut [Option<Place>]),
        group: Vec<(usize, Signalled)>,
        batch: &Ended<K::Seen>,
        out: &mut Reports,
    ) {
        let (index, sent): (Vec<usize>, Vec<Signalled>) = group.into_iter().unzip();
        let views = index.iter().map(|&i| &targets[i]).zip(sent).collect();
        for (i, r) in index.into_iter().zip(K::rescan(self, views, batch)) {
            let (at, lock) = places[i].take().expect("each target ends once");
            self.end_at(&targets[i], at, lock, r, out);
        }
    }

    fn end<'t, K: Target<'t>>(&self, l: Live<K>, r: StopReport, out: &mut Reports) {
        self.end_at(&l.target, l.at, l.lock, r, out);
    }

    /// A target's report is final: its outcome recorded in its record (unless an internal
    /// error left it to reconciliation), its lock let go, and the caller told.
    fn end_at<'t, K: Target<'t>>(
        &self,
        t: &K,
        at: usize,
        lock: Option<Lock>,
        mut r: StopReport,
        out: &mut Reports,
    ) {
        t.label(&mut r);
        // A dry run wrote no record: nothing to name, nothing to record.
        if !self.opts.dry_run {
            r.snapshot = Some(t.record_name().to_owned());
            t.close(&mut r);
            still_held(self.probe, &mut r);
            if r.record_error.is_none() {
                r.record_error = t.record_outcome(self, &r);
            }
        }
        drop(lock);
        self.supersede(&r);
        out.done(at, r);
    }

    /// An automatic stop (a rule's, an armed one's) that ended something supersedes the
    /// older automatic records of the same command (`restart::prune::supersede`), once its
    /// own outcome is recorded and its lock let go. A person's or an agent's stop never does:
    /// what a person may want to undo stays theirs.
    fn supersede(&self, r: &StopReport) {
        if self.opts.dry_run || !self.opts.requested_by.is_automatic() || r.record_error.is_some() {
            return;
        }
        let Some(name) = r.snapshot.as_deref() else {
            return;
        };
        match crate::restart::prune::supersede(self.store, self.probe, name) {
            Ok(gone) if !gone.is_empty() => tracing::info!("{name} superseded {gone:?}"),
            Ok(_) => {}
            Err(e) => tracing::warn!("{name} superseded nothing: {e}"),
        }
    }
}

/// A port is called free only when nothing listens on it now, on any address: a stopped server's
/// port may be held by another process (`[::1]:PORT` beside a stopped `127.0.0.1:PORT`), and
/// "free" would send the person to start something that then fails. Those go to
/// `ports_still_held`; when the tables cannot be read, neither is claimed.
fn still_held(probe: &(dyn Probe + Sync), r: &mut StopReport) {
    if r.freed_ports.is_empty() {
        return;
    }
    let Ok(listening) = probe.listening_ports() else {
        r.freed_ports.clear();
        return;
    };
    let (held, free) = r.freed_ports.iter().partition(|p| listening.contains(p));
    (r.ports_still_held, r.freed_ports) = (held, free);
}

/// Each target's signals on its own thread (`send_guarded`), its index and report sent back as
/// each ends. A thread that cannot be made (a limit on processes) leaves its target to this
/// thread, after every other is under way.
fn spawn_each<'s, 'e, 't, K: Target<'t>>(
    s: &'s std::thread::Scope<'s, 'e>,
    stopper: &'e Stopper<'e>,
    targets: &'e [K],
    deadlines: &'e [Deadline],
) -> mpsc::Receiver<(usize, Signalled)> {
    let (tx, rx) = mpsc::channel();
    let mut unthreaded = Vec::new();
    for (i, (t, &deadline)) in targets.iter().zip(deadlines).enumerate() {
        let own = tx.clone();
        let made = std::thread::Builder::new().spawn_scoped(s, move || {
            // The receiver lives until every sender is gone.
            let _ = own.send((i, send_guarded(stopper, t, deadline)));
        });
        if made.is_err() {
            unthreaded.push(i);
        }
    }
    for i in unthreaded {
        let _ = tx.send((i, send_guarded(stopper, &targets[i], deadlines[i])));
    }
    rx
}

/// One target's signals ([`Target::send`]); an internal error (a panic) in them cannot take the
/// rest of the batch down, and is not recorded as an outcome: the next read reconciles its
/// record from what is true then (`reconcile.rs`).
fn send_guarded<'t, K: Target<'t>>(s: &Stopper, t: &K, deadline: Deadline) -> Signalled {
    let run = || t.send(s, deadline);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
        let why = crate::words::of_panic(panic.as_ref());
        let r = StopReport {
            record_error: Some(format!(
                "Pier hit an internal error during its signals ({why}); the next `pier \
                 history` reads what is true and writes it"
            )),
            ..StopReport::new(
                t.id(),
                ResourceResult::PartiallyStopped,
                format!(
                    "Pier hit an internal error during its signals ({why}), so what was \
                     sent is not known here"
                ),
            )
        };
        (r, None)
    })
}

/// The report of a target the batch lost (an internal error).
fn lost(id: &str) -> StopReport {
    StopReport {
        record_error: Some(
            "Pier lost the report of this stop (an internal error); the next `pier \
             history` reconciles its snapshot, if one was written"
                .into(),
        ),
        ..StopReport::new(
            id,
            ResourceResult::PartiallyStopped,
            "Pier lost the report of this stop (an internal error), so what was sent \
             is not known here",
        )
    }
}

/// The projects whose resources in the batch have all ended, and every batch project nested with
/// them too: a project's rescan reads the folders under it, so it waits for the batch's projects
/// there, and a project inside another waits for the outer one, whose resources may still leave
/// something in its folder that only their looks can claim (a nest ends together).
fn ready<V>(left: &HashMap<String, usize>, ended: &HashMap<String, V>) -> Vec<String> {
    ended
        .keys()
        .filter(|p| {
            let p = Path::new(p.as_str());
            left.iter().all(|(q, n)| {
                let q = Path::new(q);
                *n == 0 || !(q.starts_with(p) || p.starts_with(q))
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project's rescan reads the folders under it: it waits for the batch's projects there.
    #[test]
    fn a_project_is_ready_once_it_and_the_projects_under_it_have_ended() {
        let mut left: HashMap<String, usize> = [
            ("/r".to_owned(), 0),
            ("/r/web".to_owned(), 1),
            ("/s".to_owned(), 0),
        ]
        .into();
        let ended: HashMap<String, Vec<(usize, Signalled)>> = ["/r", "/s"]
            .iter()
            .map(|p| ((*p).to_owned(), Vec::new()))
            .collect();
        let mut now = ready(&left, &ended);
        now.sort();
        assert_eq!(now, ["/s"], "/r waits for /r/web");
        // And the nest the other way: /r/web ended, /r still runs.
        let inner: HashMap<String, usize> = [("/r".to_owned(), 1), ("/r/web".to_owned(), 0)].into();
        let only_inner: HashMap<String, Vec<(usize, Signalled)>> =
            [("/r/web".to_owned(), Vec::new())].into();
        assert!(ready(&inner, &only_inner).is_empty(), "/r/web waits for /r");
        left.insert("/r/web".into(), 0);
        let mut now = ready(&left, &ended);
        now.sort();
        assert_eq!(now, ["/r", "/s"]);
    }
}
