//! A batch: every resource of a stop through its checkpoint chain at the same time
//! (ARCHITECTURE.md, "Batches"). Up to the first signal the resources go in lockstep, and each
//! step makes one read for all of them — one re-diagnosis, one process table for the snapshots,
//! one survey per network check, one activity sample, one table per tree check — judged per
//! resource, each over its own members. A resource refused or failed at a step leaves the
//! lockstep with its own report, and the rest go on. Then each resource signals, waits and
//! looks on its own thread, and each project is rescanned once, when all of its resources have
//! ended. A stop of one resource is a batch of one.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use super::checks::{self, TreeCheck};
use super::container::is_container_id;
use super::flow::{abandoned, refused, report, Stopper, Verdict};
use super::refusal::Why;
use super::rescan::{self, Ended};
use crate::diagnose;
use crate::model::card::Project;
use crate::model::outcome::{
    Checkpoint, NewcomerReport, PlannedSignal, ResourceResult, StopReport, TieKind,
};
use crate::model::shown::Shown;
use crate::model::snapshot::Snapshot;
use crate::probe::reuse::Coalesced;
use crate::probe::Identity;
use crate::probe::Pid;
use crate::store::Lock;

/// Where a batch is, for a progress line while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One fresh diagnosis of the machine for the whole batch.
    Rediagnosing,
    /// Each resource's recovery snapshot.
    Snapshots,
    /// A network or tree checkpoint, one read for the whole batch.
    Check(Checkpoint),
    /// Checkpoint (b): one activity sample over this window.
    Sampling(Duration),
    /// Signals leaf to root, waits and looks: each resource on its own thread.
    Signalling,
}

impl Step {
    /// The step in words, for a status line: "sampling activity for 500 ms".
    pub fn words(self) -> String {
        match self {
            Step::Rediagnosing => "re-diagnosing".into(),
            Step::Snapshots => "writing recovery snapshots".into(),
            Step::Check(Checkpoint::A) => "checking ports and connections (a)".into(),
            Step::Check(Checkpoint::B) => "checking activity (b)".into(),
            Step::Check(Checkpoint::C) => "checking ports and connections again (c)".into(),
            Step::Check(Checkpoint::D) => "checking the process trees and identities (d)".into(),
            Step::Check(Checkpoint::E) => "checking everything one last time (e)".into(),
            Step::Check(Checkpoint::Deadline) => "checking the time since (a)".into(),
            Step::Sampling(w) => format!("sampling activity for {} ms", w.as_millis()),
            Step::Signalling => "signalling leaf to root".into(),
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

/// A resource whose stop lock is held.
struct Locked<'t> {
    /// Its place among the batch's reports.
    at: usize,
    id: &'t str,
    shown: Option<&'t Shown>,
    lock: Lock,
}

/// A resource in the chain past its snapshot.
struct Entry<'t> {
    at: usize,
    id: &'t str,
    /// Held until its outcome is recorded.
    _lock: Lock,
    project: Project,
    name: String,
    snapshot: Snapshot,
    members: HashSet<Pid>,
    /// The respawners whose polling the re-diagnosis set aside (`Respawner::quieter`), which
    /// check (b) sets aside as the card did.
    pollers: Vec<crate::diagnose::rules::Poller>,
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

    fn done(&mut self, at: usize, report: StopReport) {
        (self.progress)(Progress::Done(&report));
        self.slots[at] = Some(report);
    }
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
        // Containers are stopped through their engines, one after another, once the
        // processes' batch has ended (`container.rs`).
        if targets.iter().any(|(id, _)| is_container_id(id)) {
            return self.stop_mixed(&targets, progress);
        }
        let mut out = Reports {
            slots: targets.iter().map(|_| None).collect(),
            progress,
        };
        let locked = self.lock_each(&targets, &mut out);
        let (known, live) = self.rediagnose_each(locked, &mut out);
        let (t0, checked) = self.check_each(live, &mut out);
        if self.opts.dry_run {
            self.plan_each(t0, checked, &mut out);
        } else {
            self.signal_each(t0, checked, &known, &mut out);
        }
        // Every resource ends with a report; one missing would be Pier's own fault, and its
        // signals unknown here: said so, never "nothing was sent".
        for (at, (id, _)) in targets.iter().enumerate() {
            if out.slots[at].is_none() {
                let lost = StopReport {
                    record_error: Some(
                        "Pier lost the report of this stop (an internal error); the next `pier \
                         history` reconciles its snapshot, if one was written"
                            .into(),
                    ),
                    ..report(
                        id,
                        ResourceResult::PartiallyStopped,
                        "Pier lost the report of this stop (an internal error), so what was sent \
                         is not known here",
                    )
                };
                out.done(at, lost);
            }
        }
        out.slots.into_iter().flatten().collect()
    }

    /// A batch with containers in it: the processes' batch, then each container's stop;
    /// the reports in the order of `targets`.
    fn stop_mixed(
        &self,
        targets: &[(&str, Option<&Shown>)],
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Vec<StopReport> {
        let (containers, processes): (Vec<_>, Vec<_>) =
            targets.iter().partition(|(id, _)| is_container_id(id));
        let mut reports = if processes.is_empty() {
            Vec::new()
        } else {
            self.stop_all(&processes, progress)
        };
        for (id, shown) in containers {
            if self.interrupt.raised().is_some() {
                let signal = self.interrupt.raised().unwrap_or("a signal");
                let r = super::flow::abandoned(id, signal, "before its stop began");
                progress(Progress::Done(&r));
                reports.push(r);
                continue;
            }
            progress(Progress::Step(Step::Rediagnosing, 1));
            let r = self.stop_container(id, shown);
            progress(Progress::Done(&r));
            reports.push(r);
        }
        targets
            .iter()
            .filter_map(|(id, _)| reports.iter().find(|r| r.id == *id).cloned())
            .collect()
    }

    /// Each resource's own stop lock. A stop of one resource waits for it while another stop
    /// of it runs (`Stopper::lock`); a batch of several only tries it, so a resource another
    /// stop holds is refused at once and never stalls the rest.
    fn lock_each<'t>(
        &self,
        targets: &[(&'t str, Option<&'t Shown>)],
        out: &mut Reports,
    ) -> Vec<Locked<'t>> {
        if let [(id, shown)] = targets {
            return match self.lock(id) {
                Ok(lock) => vec![Locked {
                    at: 0,
                    id,
                    shown: *shown,
                    lock,
                }],
                Err(report) => {
                    out.done(0, *report);
                    Vec::new()
                }
            };
        }
        let mut locked = Vec::new();
        for (at, &(id, shown)) in targets.iter().enumerate() {
            match self.store.try_lock(&format!("stop-{id}")) {
                Ok(Some(lock)) => locked.push(Locked {
                    at,
                    id,
                    shown,
                    lock,
                }),
                Ok(None) => out.done(
                    at,
                    report(
                        id,
                        ResourceResult::Refused,
                        "its stop lock is held (by another stop of it, or by a read of its \
                         history settling its last stop: `pier history`, `pier restart`, the \
                         app), so this batch left it alone: nothing was sent",
                    ),
                ),
                Err(e) => out.done(at, report(id, ResourceResult::Failed, e.to_string())),
            }
        }
        locked
    }

    /// Steps 1 and 2: one fresh diagnosis of the machine, each resource judged in it; then one
    /// read of the process table, and each resource's snapshot written from it. Also returns
    /// the id of every resource the diagnosis saw, which the rescan compares against.
    fn rediagnose_each<'t>(
        &self,
        locked: Vec<Locked<'t>>,
        out: &mut Reports,
    ) -> (BTreeSet<String>, Vec<Entry<'t>>) {
        if locked.is_empty() {
            return Default::default();
        }
        // Before anything is written: an interruption before the batch began starts nothing.
        if let Some(signal) = self.interrupt.raised() {
            for l in locked {
                out.done(l.at, abandoned(l.id, signal, "before this stop began"));
            }
            return Default::default();
        }
        out.step(Step::Rediagnosing, locked.len());
        // Memory too: each member's, recorded in its snapshot, is what the stop frees.
        let opts = diagnose::ScanOptions {
            memory: true,
            ..self.scan_options(Vec::new())
        };
        let scan = diagnose::scan(self.probe, &opts, self.marker_at).map_err(|e| e.to_string());
        let known = scan
            .iter()
            .flat_map(|s| &s.projects)
            .flat_map(|p| &p.resources)
            .map(|r| r.id.clone())
            .collect();
        let mut fresh = Vec::new();
        for l in locked {
            match self.rediagnose(&scan, l.id, l.shown) {
                Ok(found) => fresh.push((l, found)),
                Err(refusal) => out.done(l.at, *refusal),
            }
        }
        drop(scan);
        if fresh.is_empty() {
            return (known, Vec::new());
        }
        // Nor does one that came during the re-diagnosis: nothing is written yet.
        if let Some(signal) = self.interrupt.raised() {
            for (l, _) in fresh {
                out.done(l.at, abandoned(l.id, signal, "before this stop began"));
            }
            return (known, Vec::new());
        }
        out.step(Step::Snapshots, fresh.len());
        let list = self.probe.processes().map_err(|e| e.to_string());
        let mut live = Vec::new();
        for (l, (project, resource)) in fresh {
            match self.write_snapshot(&project, &resource, &list) {
                Ok((name, snapshot)) => live.push(Entry {
                    at: l.at,
                    id: l.id,
                    _lock: l.lock,
                    members: snapshot.members.iter().map(|m| m.identity.pid).collect(),
                    pollers: resource
                        .respawners
                        .iter()
                        .filter_map(|r| {
                            Some(crate::diagnose::rules::Poller {
                                pid: r.pid,
                                quieter: r.quieter.clone()?,
                            })
                        })
                        .collect(),
                    project,
                    name,
                    snapshot,
                }),
                Err((result, why)) => out.done(l.at, report(l.id, result, why)),
            }
        }
        (known, live)
    }

    /// Step 3 in lockstep: checkpoints (a) to (e), each one read for every resource still in
    /// the chain, with the "signals may follow" mark of each after (c). Returns when check (a)
    /// ran (every deadline counts from it) and, per resource that passed, what (e) saw.
    fn check_each<'t>(
        &self,
        mut live: Vec<Entry<'t>>,
        out: &mut Reports,
    ) -> (Duration, Vec<(Entry<'t>, TreeCheck)>) {
        let t0 = self.probe.now();
        let probe = self.probe;
        let network = |es: &[Entry]| {
            let sets: Vec<&HashSet<Pid>> = es.iter().map(|e| &e.members).collect();
            checks::network(probe, &sets)
        };
        if !self.opts.force {
            live = self.judged(live, out, Checkpoint::A, network);
            live = self.unless_interrupted(live, out);
            out.step(Step::Sampling(self.opts.sample), live.len());
            live = self.judged(live, out, Checkpoint::B, |es| {
                let (window, t) = (self.opts.sample, self.opts.thresholds);
                let with: Vec<_> = es
                    .iter()
                    .map(|e| (&e.snapshot, e.pollers.as_slice()))
                    .collect();
                checks::activity(probe, &with, window, t)
            });
            live = self.unless_interrupted(live, out);
            live = self.judged(live, out, Checkpoint::C, network);
        }
        live = self.unless_interrupted(live, out);
        // Before (d) and (e), so the last look stays right before the first signal: the mark
        // says only that signals *may* follow, and a refusal after it still records that
        // none did.
        let mut marked = Vec::new();
        for e in live {
            let marked_now = match self.opts.dry_run {
                true => Ok(()),
                false => self.mark(&e.name, &e.snapshot),
            };
            match marked_now {
                Ok(()) => marked.push(e),
                Err(why) => {
                    let failed = report(e.id, ResourceResult::Failed, why);
                    self.end(e, failed, out);
                }
            }
        }
        live = self.judged(marked, out, Checkpoint::D, |es| {
            checks::tree(probe, &snapshots(es))
                .into_iter()
                .map(|r| r.map(drop))
                .collect()
        });
        if live.is_empty() {
            return (t0, Vec::new());
        }
        out.step(Step::Check(Checkpoint::E), live.len());
        let trees = if self.opts.force {
            // Force skips the network part of (e): its tree check alone.
            checks::tree(probe, &snapshots(&live))
        } else {
            let both: Vec<(&HashSet<Pid>, &Snapshot)> =
                live.iter().map(|e| (&e.members, &e.snapshot)).collect();
            checks::last_look(probe, &both)
        };
        assert_eq!(trees.len(), live.len(), "one answer per resource");
        let mut checked = Vec::new();
        for (e, tree) in live.into_iter().zip(trees) {
            match tree {
                Ok(tree) => checked.push((e, tree)),
                Err(why) => {
                    let r = refused(e.id, why.at(Checkpoint::E));
                    self.end(e, r, out);
                }
            }
        }
        if let Some(signal) = self.interrupt.raised() {
            for (e, _) in checked {
                let r = abandoned(e.id, signal, "during the checks, before the first signal");
                self.end(e, r, out);
            }
            return (t0, Vec::new());
        }
        (t0, checked)
    }

    /// A dry run's end, where the signals would begin: the deadline from check (a) is judged
    /// as the first signal would judge it, and each resource that passed says what it would
    /// have signalled, level by level, leaf to root — the members check (e) found gone left
    /// out, as the stop would skip them. Nothing is sent or written.
    fn plan_each(&self, t0: Duration, checked: Vec<(Entry, TreeCheck)>, out: &mut Reports) {
        let signal = if self.opts.force {
            "SIGKILL"
        } else {
            "SIGTERM"
        };
        for (e, last) in checked {
            let took = self.probe.now().saturating_sub(t0);
            let r = if took > self.opts.deadline {
                let why = Why::Deadline {
                    limit: self.opts.deadline,
                };
                refused(e.id, why.at(Checkpoint::Deadline))
            } else {
                planned(e.id, &e.snapshot, &last, signal)
            };
            self.end(e, r, out);
        }
    }

    /// One checkpoint for every resource still in the chain: `check` reads once and answers
    /// per resource; a refused one ends here with its own report.
    fn judged<'t>(
        &self,
        live: Vec<Entry<'t>>,
        out: &mut Reports,
        at: Checkpoint,
        check: impl FnOnce(&[Entry]) -> Vec<Result<(), Why>>,
    ) -> Vec<Entry<'t>> {
        if live.is_empty() {
            return live;
        }
        if at != Checkpoint::B {
            out.step(Step::Check(at), live.len());
        }
        let answers = check(&live);
        assert_eq!(answers.len(), live.len(), "one answer per resource");
        let mut passed = Vec::new();
        for (e, answer) in live.into_iter().zip(answers) {
            match answer {
                Ok(()) => passed.push(e),
                Err(why) => {
                    let r = refused(e.id, why.at(at));
                    self.end(e, r, out);
                }
            }
        }
        passed
    }

    /// Between two checks: an interruption ends every resource still in the chain, with
    /// nothing sent.
    fn unless_interrupted<'t>(&self, live: Vec<Entry<'t>>, out: &mut Reports) -> Vec<Entry<'t>> {
        let Some(signal) = self.interrupt.raised() else {
            return live;
        };
        for e in live {
            let r = abandoned(e.id, signal, "during the checks, before the first signal");
            self.end(e, r, out);
        }
        Vec::new()
    }

    /// Steps 4–7: each resource's signals, waits and looks on its own thread; each project
    /// rescanned once all of its resources have ended (projects that end together share one
    /// rescan); each result recorded and reported as soon as it is final.
    fn signal_each(
        &self,
        t0: Duration,
        checked: Vec<(Entry, TreeCheck)>,
        known: &BTreeSet<String>,
        out: &mut Reports,
    ) {
        if checked.is_empty() {
            return;
        }
        out.step(Step::Signalling, checked.len());
        let members: HashSet<Identity> = checked
            .iter()
            .flat_map(|(e, _)| e.snapshot.members.iter().map(|m| m.identity))
            .collect();
        let mut claims: Vec<(String, HashSet<Identity>)> = Vec::new();
        let mut left: HashMap<String, usize> = HashMap::new();
        for (e, _) in &checked {
            *left.entry(e.project.path.clone()).or_default() += 1;
        }
        let mut ended: HashMap<String, Vec<(Entry, Signalled)>> = HashMap::new();
        // The threads' looks for newcomers share their reads of the process table, each
        // answered by a read that began after it was asked (`probe::reuse::Coalesced`).
        let shared = Coalesced::new(self.probe);
        let signalling = Stopper {
            probe: &shared,
            signaller: self.signaller,
            waiter: self.waiter,
            store: self.store,
            marker_at: self.marker_at,
            interrupt: self.interrupt,
            engines: self.engines,
            opts: self.opts.clone(),
        };
        let signalling = &signalling;
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let mut unthreaded = Vec::new();
            for (e, last) in checked {
                let tx = tx.clone();
                // The thread takes its resource once it runs: a thread that cannot be made (a
                // limit on processes) leaves it here, to signal on this thread instead, rather
                // than lost with its lock, unrecorded.
                let (give, take) = mpsc::channel::<(Entry, TreeCheck)>();
                let own = tx.clone();
                let made = std::thread::Builder::new().spawn_scoped(s, move || {
                    if let Ok((e, last)) = take.recv() {
                        let r = signalling.signal_guarded(&e, t0, last);
                        // The receiver lives until every sender is gone.
                        let _ = own.send((e, r));
                    }
                });
                match made {
                    Ok(_) => give
                        .send((e, last))
                        .expect("the thread waits for its resource"),
                    Err(_) => unthreaded.push((e, last)),
                }
            }
            // After every thread is under way, so that none waits for these.
            for (e, last) in unthreaded {
                let r = signalling.signal_guarded(&e, t0, last);
                let _ = tx.send((e, r));
            }
            drop(tx);
            while let Ok(first) = rx.recv() {
                for (e, r) in std::iter::once(first).chain(rx.try_iter()) {
                    let path = e.project.path.clone();
                    *left.get_mut(&path).expect("counted above") -= 1;
                    claims.push(rescan::claimed(e.id, &r.0.newcomers));
                    ended.entry(path).or_default().push((e, r));
                }
                let group: Vec<(Entry, Signalled)> = ready(&left, &ended)
                    .iter()
                    .flat_map(|p| ended.remove(p).unwrap_or_default())
                    .collect();
                if !group.is_empty() {
                    let batch = rescan::Batch {
                        known,
                        members: &members,
                        claims: &claims,
                    };
                    // Its reads are its own, on this thread (the soak's oracle reads the rescan
                    // as one survey and the process read that follows it here).
                    self.rescan_and_end(group, &batch, out);
                }
            }
        });
    }

    /// One resource's signals (`Stopper::signal_tree`); an internal error (a panic) in them
    /// cannot take the rest of the batch down, and is not recorded as an outcome: the next
    /// read reconciles its snapshot from what is true then (`reconcile.rs`).
    fn signal_guarded(&self, e: &Entry, t0: Duration, last: TreeCheck) -> Signalled {
        let run = || self.signal_tree(e.id, &e.snapshot, t0, last);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|panic| {
            let why = crate::words::of_panic(panic.as_ref());
            let r = StopReport {
                record_error: Some(format!(
                    "Pier hit an internal error during its signals ({why}); the next `pier \
                     history` reads what is true and writes it"
                )),
                ..report(
                    e.id,
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

    /// Step 6 for resources whose projects have ended: one rescan for all of them, each
    /// resource that sent a signal judged for its own replacements; then each result is final.
    fn rescan_and_end(
        &self,
        group: Vec<(Entry, Signalled)>,
        batch: &rescan::Batch,
        out: &mut Reports,
    ) {
        let (entries, signalled): (Vec<Entry>, Vec<Signalled>) = group.into_iter().unzip();
        // What each one's check (e) saw: none of it is a replacement.
        let present: Vec<Option<HashSet<Identity>>> = signalled
            .iter()
            .map(|(_, v)| v.as_ref().map(|v| v.present.clone()))
            .collect();
        let group: Vec<(Entry, StopReport)> = entries
            .into_iter()
            .zip(disowned(signalled, batch.claims))
            .collect();
        // Only what sent signals can have left a replacement behind.
        let signalled: Vec<usize> = (0..group.len())
            .filter(|&i| group[i].1.timings.is_some())
            .collect();
        let views: Vec<Ended> = signalled
            .iter()
            .map(|&i| Ended {
                project: &group[i].0.project,
                snapshot: &group[i].0.snapshot,
                newcomers: &group[i].1.newcomers,
                present: present[i].as_ref(),
            })
            .collect();
        let whys = if views.is_empty() {
            Vec::new()
        } else {
            rescan::replacements(self, &views, batch)
        };
        drop(views);
        let mut whys: HashMap<usize, Option<String>> = signalled.into_iter().zip(whys).collect();
        for (i, (e, mut r)) in group.into_iter().enumerate() {
            if let Some(why) = whys.remove(&i).flatten() {
                r.reason = if r.result == ResourceResult::PartiallyStopped {
                    format!("{}; {why}", r.reason)
                } else {
                    why
                };
                r.result = ResourceResult::PartiallyStopped;
            }
            self.end(e, r, out);
        }
    }

    /// A resource's report is final: its outcome recorded in its snapshot (unless an internal
    /// error left it to reconciliation), its lock let go, and the caller told.
    /// Then what it freed, from its members' outcomes (`memory::freed`).
    fn end(&self, e: Entry, mut r: StopReport, out: &mut Reports) {
        // What it is and where, as the re-diagnosis found it.
        r.kind
            .get_or_insert_with(|| e.snapshot.kind.clone().unwrap_or_default());
        r.project.get_or_insert_with(|| e.project.path.clone());
        // A dry run wrote no snapshot: nothing to name, nothing to record.
        if self.opts.dry_run {
            let at = e.at;
            drop(e);
            out.done(at, r);
            return;
        }
        r.snapshot = Some(e.name.clone());
        if matches!(
            r.result,
            ResourceResult::Stopped | ResourceResult::PartiallyStopped
        ) {
            r.freed = crate::model::memory::freed(&r.members, &e.snapshot.members);
        }
        if r.record_error.is_none() {
            r.record_error = self.record_outcome(&e.name, &e.snapshot, &r);
        }
        let at = e.at;
        drop(e);
        out.done(at, r);
    }
}

/// A resource's report from its thread, and what decided its result if signals went out.
pub(super) type Signalled = (StopReport, Option<Verdict>);

/// The projects whose resources in the batch have all ended, and every batch project nested with
/// them too: a project's rescan reads the folders under it, so it waits for the batch's projects
/// there, and a project inside another waits for the outer one, whose resources may still leave
/// something in its folder that only their looks can claim (a nest ends together).
fn ready(
    left: &HashMap<String, usize>,
    ended: &HashMap<String, Vec<(Entry, Signalled)>>,
) -> Vec<String> {
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

/// A project's resources as they ended, with every newcomer another resource of the batch
/// claims (`rescan::claimed`: its looks saw it born to it) taken back from those that saw it
/// only as an orphan working in the project — the other's tree left it, not theirs — with its
/// own children born during the stop, and each result decided afresh.
pub(super) fn disowned(
    group: Vec<Signalled>,
    claims: &[(String, HashSet<Identity>)],
) -> Vec<StopReport> {
    let of = |n: &NewcomerReport| Identity {
        pid: n.pid,
        start_time: n.start_time,
    };
    group
        .into_iter()
        .map(|(mut r, verdict)| {
            let Some(mut verdict) = verdict else {
                return r;
            };
            let theirs = |id: &Identity| {
                claims
                    .iter()
                    .any(|(owner, born)| *owner != r.id && born.contains(id))
            };
            let mut taken: HashSet<Identity> = r
                .newcomers
                .iter()
                .filter(|n| n.tie == TieKind::OrphanInProject && theirs(&of(n)))
                .map(of)
                .collect();
            // And what those were seen to have born since.
            loop {
                let pids: HashSet<Pid> = taken.iter().map(|i| i.pid).collect();
                // Only what another report keeps: a child it never saw stays here.
                let more: Vec<Identity> = r
                    .newcomers
                    .iter()
                    .filter(|n| n.tie == TieKind::ChildOfNewcomer && pids.contains(&n.parent))
                    .map(of)
                    .filter(|i| !taken.contains(i) && theirs(i))
                    .collect();
                if more.is_empty() {
                    break;
                }
                taken.extend(more);
            }
            if !taken.is_empty() {
                r.newcomers.retain(|n| !taken.contains(&of(n)));
                verdict
                    .problems
                    .retain(|p| p.newcomer.is_none_or(|n| !taken.contains(&n)));
                (r.result, r.reason) = verdict.result();
            }
            r
        })
        .collect()
}

/// What a dry run of `id` would signal: every member check (e) saw alive, by level, leaf to
/// root.
fn planned(id: &str, snapshot: &Snapshot, last: &TreeCheck, signal: &str) -> StopReport {
    let mut would_signal = Vec::new();
    for (order, level) in checks::levels(snapshot).into_iter().enumerate() {
        for m in level.iter().filter(|m| !last.gone.contains(&m.identity)) {
            let command = snapshot
                .members
                .iter()
                .find(|s| s.identity == m.identity)
                .map(|s| crate::words::whole_command(s.argv.iter().map(|a| a.0.as_slice())))
                .unwrap_or_default();
            would_signal.push(PlannedSignal {
                pid: Some(m.identity.pid),
                start_time: Some(m.identity.start_time),
                command,
                signal: signal.to_owned(),
                order: order + 1,
            });
        }
    }
    let n = would_signal.len();
    let noun = if n == 1 { "process" } else { "processes" };
    StopReport {
        would_signal,
        ..report(
            id,
            ResourceResult::WouldStop,
            format!(
                "every check passed; --dry-run: nothing was sent or written ({n} {noun} would \
                 get {signal}, leaf to root)"
            ),
        )
    }
}

fn snapshots<'e>(es: &'e [Entry]) -> Vec<&'e Snapshot> {
    es.iter().map(|e| &e.snapshot).collect()
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
        let ended: HashMap<String, Vec<(Entry, Signalled)>> = ["/r", "/s"]
            .iter()
            .map(|p| ((*p).to_owned(), Vec::new()))
            .collect();
        let mut now = ready(&left, &ended);
        now.sort();
        assert_eq!(now, ["/s"], "/r waits for /r/web");
        // And the nest the other way: /r/web ended, /r still runs.
        let inner: HashMap<String, usize> = [("/r".to_owned(), 1), ("/r/web".to_owned(), 0)].into();
        let only_inner: HashMap<String, Vec<(Entry, Signalled)>> =
            [("/r/web".to_owned(), Vec::new())].into();
        assert!(ready(&inner, &only_inner).is_empty(), "/r/web waits for /r");
        left.insert("/r/web".into(), 0);
        let mut now = ready(&left, &ended);
        now.sort();
        assert_eq!(now, ["/r", "/s"]);
    }
}
