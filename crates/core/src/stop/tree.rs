//! A process tree as a kind of target of the chain (`target.rs`, driven by `batch.rs`): its
//! re-diagnosis in one fresh scan of the machine, its snapshot from one read of the process
//! table, its checkpoints one read for all of a batch's trees (`checks.rs`), its signals leaf
//! to root (`signals.rs`, `ending.rs`), and its rescan (`rescan.rs`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use super::checks::{self, TreeCheck};
use super::ending::Verdict;
use super::failure::Unrecorded;
use super::flow::Stopper;
use super::newcomers::Watch;
use super::refusal::{Refusal, Why};
use super::rescan;
use super::signals::{Hands, Signals};
use super::target::{Answer, Deadline, Ended, Signalled, Target};
use crate::diagnose;
use crate::diagnose::rules::Poller;
use crate::model::card::{Project, Resource};
use crate::model::outcome::{
    Checkpoint, MemberOutcome, NewcomerReport, PlannedSignal, ResourceResult, StopReport, TieKind,
    Timings,
};
use crate::model::reason::SetAside;
use crate::model::shown::Shown;
use crate::model::snapshot::Snapshot;
use crate::probe::{Identity, Pid};

/// A process tree in the chain past its snapshot.
pub(super) struct Tree<'t> {
    id: &'t str,
    project: Project,
    /// The snapshot's name (empty on a dry run, which writes none).
    name: String,
    snapshot: Snapshot,
    members: HashSet<Pid>,
    /// The respawners whose polling the re-diagnosis set aside (`Respawner::quieter`), which
    /// check (b) sets aside as the card did.
    pollers: Vec<Poller>,
    /// What check (e) saw.
    last: TreeCheck,
    /// What a stop anyway set aside so far: at the re-diagnosis, then at each check.
    set_aside: Vec<SetAside>,
}

/// A tree as the re-diagnosis found it.
pub(super) struct FreshTree<'t> {
    id: &'t str,
    project: Project,
    resource: Resource,
    set_aside: Vec<SetAside>,
}

impl<'t> Target<'t> for Tree<'t> {
    type Fresh = FreshTree<'t>;
    type Seen = BTreeSet<String>;
    const SHOWS_STEPS: bool = true;
    const BEFORE_START: &'static str = "before this stop began";
    const DURING_CHECKS: &'static str = "during the checks, before the first signal";

    /// One fresh diagnosis of the machine, each tree judged in it; what it saw is the id of
    /// every resource, which the rescan compares against.
    fn rediagnose(
        s: &Stopper,
        asked: &[(&'t str, Option<&Shown>)],
    ) -> (Self::Seen, Vec<Answer<Self::Fresh>>) {
        // Memory too: each member's, recorded in its snapshot, is what the stop frees.
        let opts = diagnose::ScanOptions {
            memory: true,
            ..s.scan_options(Vec::new())
        };
        let scan = diagnose::scan(s.probe, &opts, s.marker_at);
        let known = scan
            .iter()
            .flat_map(|s| &s.projects)
            .flat_map(|p| &p.resources)
            .map(|r| r.id.clone())
            .collect();
        let answers = asked
            .iter()
            .map(|&(id, shown)| {
                let (project, resource, set_aside) = s.rediagnose(&scan, id, shown)?;
                Ok(FreshTree {
                    id,
                    project,
                    resource,
                    set_aside,
                })
            })
            .collect();
        (known, answers)
    }

    /// One read of the process table, and each tree's snapshot written from it.
    fn record(s: &Stopper, fresh: Vec<Self::Fresh>) -> Vec<Answer<Self>> {
        let list = s.probe.processes();
        fresh
            .into_iter()
            .map(|f| {
                let (name, snapshot) = s
                    .write_snapshot(&f.project, &f.resource, f.set_aside.clone(), &list)
                    .map_err(|e| Box::new(StopReport::new(f.id, e.result(), e.to_string())))?;
                Ok(Tree {
                    set_aside: f.set_aside,
                    id: f.id,
                    members: snapshot.members.iter().map(|m| m.identity.pid).collect(),
                    pollers: pollers(&f.resource),
                    project: f.project,
                    name,
                    snapshot,
                    last: TreeCheck::default(),
                })
            })
            .collect()
    }

    fn look(s: &Stopper, at: Checkpoint, group: &mut [&mut Self]) -> Vec<Result<(), Refusal>> {
        let probe = s.probe;
        let answers: Vec<checks::Passed<()>> = match at {
            Checkpoint::A | Checkpoint::C => {
                let sets: Vec<_> = group.iter().map(|t| (&t.members, t.skip(s))).collect();
                checks::network(probe, &sets)
            }
            Checkpoint::B => {
                let (window, th) = (s.opts.sample, s.opts.thresholds);
                let with: Vec<_> = group
                    .iter()
                    .map(|t| (&t.snapshot, t.pollers.as_slice(), t.skip(s)))
                    .collect();
                checks::activity(probe, &with, window, th)
            }
            Checkpoint::D => {
                let snapshots: Vec<&Snapshot> = group.iter().map(|t| &t.snapshot).collect();
                checks::tree(probe, &snapshots)
                    .into_iter()
                    .map(|r| r.map(|_| ((), Vec::new())))
                    .collect()
            }
            Checkpoint::E | Checkpoint::Deadline => return last_checks(s, group),
        };
        group
            .iter_mut()
            .zip(answers)
            .map(|(t, a)| {
                let ((), aside) = a.map_err(|why| why.at(at))?;
                t.note(aside);
                Ok(())
            })
            .collect()
    }

    fn mark(&self, s: &Stopper) -> Result<(), Unrecorded> {
        s.mark(&self.name, &self.snapshot)
    }

    /// Every member check (e) saw alive would be signalled, level by level, leaf to root — the
    /// members it found gone left out, as the stop would skip them.
    fn plan(&self, s: &Stopper, deadline: Deadline) -> StopReport {
        if deadline.passed(s.probe.now()).is_some() {
            let why = Why::Deadline {
                limit: deadline.limit,
            };
            return super::flow::refused(self.id, why.at(Checkpoint::Deadline), &s.opts);
        }
        StopReport {
            set_aside: self.set_aside.clone(),
            ..planned(self.id, &self.snapshot, &self.last)
        }
    }

    fn send(&self, s: &Stopper, deadline: Deadline) -> Signalled {
        signal_tree(s, self.id, &self.snapshot, deadline, self.last.clone())
    }

    /// One rescan for the group, each tree that sent a signal judged for its own replacements.
    fn rescan(
        s: &Stopper,
        ended: Vec<(&Self, Signalled)>,
        batch: &Ended<Self::Seen>,
    ) -> Vec<StopReport> {
        let (trees, signalled): (Vec<&Self>, Vec<Signalled>) = ended.into_iter().unzip();
        // What each one's check (e) saw: none of it is a replacement.
        let present: Vec<Option<HashSet<Identity>>> = signalled
            .iter()
            .map(|(_, v)| v.as_ref().map(|v| v.present.clone()))
            .collect();
        let mut reports = disowned(signalled, batch.claims);
        // Only what sent signals can have left a replacement behind.
        let sent: Vec<usize> = (0..reports.len())
            .filter(|&i| reports[i].timings.is_some())
            .collect();
        let views: Vec<rescan::Ended> = sent
            .iter()
            .map(|&i| rescan::Ended {
                project: &trees[i].project,
                snapshot: &trees[i].snapshot,
                newcomers: &reports[i].newcomers,
                present: present[i].as_ref(),
                outlived: reports[i]
                    .members
                    .iter()
                    .filter(|m| m.outcome == MemberOutcome::StillRunning)
                    .map(|m| m.identity())
                    .collect(),
            })
            .collect();
        let whys = if views.is_empty() {
            Vec::new()
        } else {
            let known = rescan::Batch {
                known: batch.seen,
                members: batch.members,
                claims: batch.claims,
            };
            rescan::replacements(s, &views, &known)
        };
        drop(views);
        let mut whys: HashMap<usize, Option<String>> = sent.into_iter().zip(whys).collect();
        for (i, r) in reports.iter_mut().enumerate() {
            if let Some(why) = whys.remove(&i).flatten() {
                (r.result, r.reason) = lowered(r.result, &r.reason, why);
            }
        }
        reports
    }

    fn id(&self) -> &str {
        self.id
    }

    fn project(&self) -> &str {
        &self.project.path
    }

    fn members(&self) -> Vec<Identity> {
        self.snapshot.members.iter().map(|m| m.identity).collect()
    }

    /// What it is and where, as the re-diagnosis found it.
    fn label(&self, r: &mut StopReport) {
        r.kind
            .get_or_insert_with(|| self.snapshot.kind.clone().unwrap_or_default());
        r.project.get_or_insert_with(|| self.project.path.clone());
    }

    fn record_name(&self) -> &str {
        &self.name
    }

    /// What it freed, from its members' outcomes (`memory::freed`), and its server's ports.
    fn close(&self, r: &mut StopReport) {
        if r.timings.is_some() {
            r.set_aside = self.set_aside.clone();
        }
        if matches!(
            r.result,
            ResourceResult::Stopped | ResourceResult::PartiallyStopped
        ) {
            r.freed = crate::model::memory::freed(&r.members, &self.snapshot.members);
        }
        if r.result == ResourceResult::Stopped {
            let server = self.snapshot.ports.iter().filter(|p| p.is_server());
            r.freed_ports = port_numbers(server.map(|p| p.port));
        }
    }

    fn record_outcome(&self, s: &Stopper, r: &StopReport) -> Option<String> {
        s.record_outcome(&self.name, &self.snapshot, r)
    }
}

impl Tree<'_> {
    /// What a stop anyway of it confirmed, for a check (`None`: an ordinary stop).
    fn skip<'s>(&self, s: &'s Stopper) -> checks::Skip<'s> {
        s.opts.anyway.confirmed(self.id)
    }

    /// Facts a check set aside, each named once.
    fn note(&mut self, aside: Vec<SetAside>) {
        for a in aside {
            if !self.set_aside.contains(&a) {
                self.set_aside.push(a);
            }
        }
    }
}

/// Check (e) for the group: the tree once more and the network with it; what it saw kept for
/// the signals.
fn last_checks(s: &Stopper, group: &mut [&mut Tree]) -> Vec<Result<(), Refusal>> {
    let all: Vec<_> = group
        .iter()
        .map(|t| (&t.members, &t.snapshot, t.skip(s)))
        .collect();
    let trees = checks::last_look(s.probe, &all);
    assert_eq!(trees.len(), group.len(), "one answer per resource");
    group
        .iter_mut()
        .zip(trees)
        .map(|(t, tree)| {
            let (last, aside) = tree.map_err(|why| why.at(Checkpoint::E))?;
            t.last = last;
            t.note(aside);
            Ok(())
        })
        .collect()
}

/// The respawners whose polling the re-diagnosis set aside.
fn pollers(r: &Resource) -> Vec<Poller> {
    r.respawners
        .iter()
        .filter_map(|r| {
            Some(Poller {
                pid: r.pid,
                quieter: r.quieter.clone()?,
            })
        })
        .collect()
}

/// Steps 4–5, once checkpoint (e) passed (`last_check`: what (e) saw): signals leaf to root
/// with a look for newcomers before and a bounded wait after each level, then the outcomes as
/// they are when the stop ends. Runs on the tree's own thread in a batch. With the report, what
/// decided its result, when signals went out.
pub(super) fn signal_tree(
    s: &Stopper,
    id: &str,
    snapshot: &Snapshot,
    deadline: Deadline,
    last_check: TreeCheck,
) -> Signalled {
    let members = snapshot.members.iter().map(|m| m.identity);
    let mut run = Signals {
        hands: Hands {
            probe: s.probe,
            signaller: s.signaller,
            waiter: s.waiter,
            interrupt: s.interrupt,
            opts: &s.opts,
        },
        snapshot,
        deadline,
        gone_before: last_check.gone,
        members: Vec::new(),
        first: None,
        last: None,
        watch: Watch::new(last_check.present, members),
        signalled: HashSet::new(),
        blind: None,
        unreached: false,
    };
    for level in checks::levels(snapshot) {
        // The settle wait ends at an interruption's next glance; then no further level is
        // signalled.
        let level = run.settle(level);
        if let Some(signal) = s.interrupt.raised() {
            run.not_reached(level, signal);
            continue;
        }
        // Right before a parent's signal: what it spawned since its child's signal (a
        // supervisor's replacement) still hangs under it, where a look can see it.
        run.before_level();
        let sent = match run.signal_level(level) {
            Ok(sent) => sent,
            Err(why) => {
                let r = super::flow::refused(id, why.at(Checkpoint::Deadline), &s.opts);
                return (r, None);
            }
        };
        run.await_level(&sent);
    }
    ended(s, id, run)
}

/// A result the rescan found a replacement for (`why`): a stop that ended nothing stays
/// `not_stopped` (a replacement does not make a part of it stopped), any other becomes
/// `partially_stopped`; the reason says both.
fn lowered(result: ResourceResult, reason: &str, why: String) -> (ResourceResult, String) {
    match result {
        ResourceResult::PartiallyStopped | ResourceResult::NotStopped => {
            (result, format!("{reason}; {why}"))
        }
        _ => (ResourceResult::PartiallyStopped, why),
    }
}

/// The report of a tree whose signals ended, from what is true then.
fn ended(s: &Stopper, id: &str, run: Signals) -> Signalled {
    let (first, last, unreached) = (run.first, run.last, run.unreached);
    let ending = run.finish();
    let interrupted = s.interrupt.raised();
    let (ended_any, outlived) = super::ending::ended_and_outlived(&ending.members, "SIGTERM");
    let verdict = Verdict {
        signalled: first.is_some(),
        unreached,
        interrupted,
        problems: ending.problems,
        ended_any,
        outlived,
        present: ending.present,
    };
    let (result, reason) = verdict.result();
    let since = |at: Duration| at.as_secs_f64() * 1e3;
    let report = StopReport {
        members: ending.members,
        newcomers: ending.newcomers,
        interrupted: interrupted.map(str::to_owned),
        timings: first.zip(last).map(|(f, l)| Timings {
            a_to_first_signal_ms: since(f),
            a_to_last_signal_ms: since(l),
            sample_ms: s.opts.sample.as_millis() as u64,
        }),
        ..StopReport::new(id, result, reason)
    };
    (report, Some(verdict))
}

/// A project's resources as they ended, with every newcomer another resource of the batch
/// claims (`rescan::claimed`: its looks saw it born to it) taken back from those that saw it
/// only as an orphan working in the project — the other's tree left it, not theirs — with its
/// own children born during the stop, and each result decided afresh.
pub(crate) fn disowned(
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
fn planned(id: &str, snapshot: &Snapshot, last: &TreeCheck) -> StopReport {
    let signal = "SIGTERM";
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
        ..StopReport::new(
            id,
            ResourceResult::WouldStop,
            format!(
                "every check passed; --dry-run: nothing was sent or written ({n} {noun} would \
                 get {signal}, leaf to root)"
            ),
        )
    }
}

/// Port numbers, each once, in order: a server on `127.0.0.1:5173` and `[::1]:5173` frees one
/// port for a person.
pub(super) fn port_numbers(ports: impl Iterator<Item = u16>) -> Vec<u16> {
    let mut numbers: Vec<u16> = ports.collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}
