//! Force (docs/design.md §3.8): a later, separate step after a stop, for the members that
//! outlived their SIGTERM. It writes no new snapshot: it adds to the stop's own record. Under
//! the resource's stop lock it re-reads who still runs, asks of each what no step may skip
//! (`judge::force_allowed`; never a data service, a manager's program or a protected one, by a
//! fresh diagnosis), then sends SIGKILL leaf to root, each member re-verified by the signaller
//! right before its signal, and waits a bounded time for each level.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;

use super::checks;
use super::flow::Stopper;
use super::reconcile::Settled;
use crate::diagnose::judge::{self, Guard};
use crate::diagnose::tree::ProcessTable;
use crate::model::card::Evidence;
use crate::model::outcome::StopReport;
use crate::model::outcome::{MemberOutcome, MemberReport, PlannedSignal, ResourceResult};
use crate::model::reason::Reason;
use crate::model::snapshot::Snapshot;
use crate::model::target::TargetId;
use crate::probe::Identity;
use crate::signal::{Expected, Sig, SignalOutcome};

/// Why Force does not act, in words made here once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoForce {
    /// Not a process tree's id.
    #[error("Force is for processes: a container is stopped only through its engine")]
    NotATree,
    /// No record of a stop of it.
    #[error(
        "no stop of {0} is recorded: Force only follows a stop whose processes outlived their \
         SIGTERM (`pier stop {0}`, or `pier stop --anyway {0}`, first)"
    )]
    NoStop(String),
    /// The machine restarted since that stop: every process it names is gone.
    #[error("the machine restarted since its last stop ({0}): nothing of it runs")]
    Rebooted(String),
    /// Its last stop has no outcome yet.
    #[error("its last stop ({0}) is unfinished: `pier history` settles it first")]
    Unfinished(String),
    /// Its last stop left nothing running.
    #[error(
        "no process of its last stop ({0}) outlived its SIGTERM: there is nothing for Force \
         to end"
    )]
    NothingLeft(String),
    /// The records could not be read.
    #[error("its records could not be read: {0}")]
    Records(String),
    /// The process table could not be read: nothing can be re-verified.
    #[error("the process table could not be read: {0}")]
    Table(String),
    /// A member no signal may reach.
    #[error("pid {pid} is never signalled, Force included: {why}")]
    Protected {
        /// Its pid.
        pid: u32,
        /// What protects it.
        why: judge::Protection,
    },
    /// The fresh diagnosis failed or names a reason nothing sets aside.
    #[error("never touched, Force included: {0}")]
    Never(String),
}

impl Stopper<'_> {
    /// Force for the resource `id`: SIGKILL to each member of its last stop that still ran
    /// when that stop ended, added to that stop's record. A dry run says what it would send.
    pub fn force(&self, id: &str) -> StopReport {
        let refuse = |why: NoForce| StopReport::new(id, ResourceResult::Refused, why.to_string());
        let Ok(target @ TargetId::Tree(_)) = id.parse::<TargetId>() else {
            return refuse(NoForce::NotATree);
        };
        let lock = match self.lock(id) {
            Ok(lock) => lock,
            Err(report) => return *report,
        };
        let (name, snapshot) = match last_stop(self, &target, id) {
            Ok(found) => found,
            Err(why) => return refuse(why),
        };
        let mut report = match self.forced(&snapshot) {
            Ok(report) => report,
            Err(why) => refuse(why),
        };
        report.kind = snapshot.kind.clone();
        report.project = Some(snapshot.project.path.clone());
        if !self.opts.dry_run {
            report.snapshot = Some(name.clone());
            report.record_error = self.add_to_record(&name, &snapshot, &report);
            drop(lock);
            self.complete(&name, &snapshot, &mut report);
        }
        report
    }

    /// Once Force ended every member it was asked for, the stop may be complete: read again as
    /// any partial record is (`reconcile::partial`: every member and newcomer gone, the
    /// project's rescan clean), under the stop lock it takes again.
    fn complete(&self, name: &str, s: &Snapshot, report: &mut StopReport) {
        let ended = |m: &MemberReport| m.outcome == MemberOutcome::Stopped;
        if report.record_error.is_some() || !report.members.iter().all(ended) {
            return;
        }
        let settled = super::reconcile::partial::reconcile_ended(self.probe, self.store, name, s);
        if let Settled::Written(r) = settled {
            if r.result == Some(ResourceResult::Stopped) {
                report.result = ResourceResult::Stopped;
                report.reason = format!(
                    "{}; every member and newcomer of the stop is gone and its project's \
                     rescan is clean: the stop is complete",
                    report.reason
                );
            }
        }
    }

    /// The checks and signals of Force over the members `s` left running: its report.
    fn forced(&self, s: &Snapshot) -> Result<StopReport, NoForce> {
        let left = outlived(s);
        let list = self
            .probe
            .processes()
            .map_err(|e| NoForce::Table(e.to_string()))?;
        let table = ProcessTable::new(list.processes);
        let present: HashSet<Identity> = left
            .iter()
            .copied()
            .filter(|i| {
                table
                    .get(i.pid)
                    .is_some_and(|p| p.identity == *i && !p.zombie)
            })
            .collect();
        self.allowed(&table, &present)?;
        self.not_on_the_list(s)?;
        self.never_touched(&present)?;
        let levels: Vec<Vec<Expected>> = checks::levels(s)
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .filter(|e| left.contains(&e.identity))
                    .collect()
            })
            .filter(|l: &Vec<Expected>| !l.is_empty())
            .collect();
        if self.opts.dry_run {
            return Ok(planned(s, &levels, &present));
        }
        let members = self.kill(s, levels, &present);
        Ok(result_of(s, members))
    }

    /// Every member still present may be signalled at all (`judge::force_allowed`).
    fn allowed(&self, table: &ProcessTable, present: &HashSet<Identity>) -> Result<(), NoForce> {
        let pier = self.probe.own_pid();
        let ancestors = table.ancestors(pier).into_iter().collect();
        let guard = Guard {
            uid: self.probe.current_uid(),
            pier,
            pier_ancestors: &ancestors,
        };
        for i in present {
            let p = table.get(i.pid).expect("present comes from the table");
            judge::force_allowed(p, &guard)
                .map_err(|why| NoForce::Protected { pid: i.pid, why })?;
        }
        Ok(())
    }

    /// The user's protect list, asked of the stop's record itself (its project, its members'
    /// folders, its ports): a member left running may be on no card any more, and an
    /// unreadable list protects everything.
    fn not_on_the_list(&self, s: &Snapshot) -> Result<(), NoForce> {
        let cwds: Vec<std::path::PathBuf> = s
            .members
            .iter()
            .filter_map(|m| m.cwd.as_ref())
            .map(|c| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&c.0)))
            .collect();
        let mut places = vec![std::path::Path::new(&s.project.path)];
        places.extend(cwds.iter().map(|c| c.as_path()));
        let ports: Vec<u16> = s.ports.iter().map(|p| p.port).collect();
        match crate::diagnose::rules::user_protected(&self.opts.protect, &places, &ports, None) {
            Some(e) => Err(NoForce::Never(e.message)),
            None => Ok(()),
        }
    }

    /// A fresh diagnosis of the machine: no card holding a member still present may be one
    /// nothing sets aside. A diagnosis that fails says nothing, so Force does not act.
    fn never_touched(&self, present: &HashSet<Identity>) -> Result<(), NoForce> {
        let scan =
            crate::diagnose::scan(self.probe, &self.scan_options(Vec::new()), self.marker_at)
                .map_err(|e| NoForce::Never(format!("the fresh diagnosis failed: {e}")))?;
        let holding = scan
            .projects
            .iter()
            .flat_map(|p| &p.resources)
            .filter(|r| r.identities().iter().any(|i| present.contains(i)));
        for r in holding {
            let never = |e: &&Evidence| Reason::of(e).is_some_and(Reason::never_signalled);
            if let Some(e) = r.evidence.iter().find(never) {
                return Err(NoForce::Never(e.message.clone()));
            }
        }
        Ok(())
    }

    /// SIGKILL level by level, leaf to root, each through the signaller's re-verification, and
    /// a bounded wait per level. One line per member that outlived its SIGTERM.
    fn kill(
        &self,
        s: &Snapshot,
        levels: Vec<Vec<Expected>>,
        present: &HashSet<Identity>,
    ) -> Vec<MemberReport> {
        let line = |e: &Expected, outcome, detail: String| MemberReport {
            pid: e.identity.pid,
            start_time: e.identity.start_time,
            command: s.command_of(e.identity.pid),
            outcome,
            detail,
        };
        let mut out = Vec::new();
        for level in levels {
            let mut sent = Vec::new();
            for e in level {
                if !present.contains(&e.identity) {
                    let gone = "gone before Force: it exited after the stop ended".into();
                    out.push(line(&e, MemberOutcome::Stopped, gone));
                    continue;
                }
                match self.signaller.signal(&e, Sig::Kill) {
                    SignalOutcome::Sent => sent.push(e),
                    SignalOutcome::Gone => {
                        let gone = "gone before its SIGKILL: it exited after the stop".into();
                        out.push(line(&e, MemberOutcome::Stopped, gone));
                    }
                    // Present by pid and start time, so the same process, running another
                    // program now: it outlived its SIGTERM, and Force sends it nothing.
                    SignalOutcome::Mismatch(why) => out.push(line(
                        &e,
                        MemberOutcome::StillRunning,
                        format!("{why}; Force sent it nothing"),
                    )),
                    SignalOutcome::Failed(why) => out.push(line(&e, MemberOutcome::Failed, why)),
                }
            }
            let exited = self.waiter.wait_for_exit(&sent, self.opts.grace);
            for (e, gone) in sent.iter().zip(exited) {
                out.push(match gone {
                    true => line(
                        e,
                        MemberOutcome::Stopped,
                        "exited after SIGKILL (Force)".into(),
                    ),
                    false => line(
                        e,
                        MemberOutcome::StillRunning,
                        format!(
                            "still running {} s after SIGKILL",
                            self.opts.grace.as_secs_f64()
                        ),
                    ),
                });
            }
        }
        out
    }

    /// Force's lines written over those members' outcomes in the stop's own record, and its
    /// result: the record's, until every member is gone. Why not, if it could not be.
    fn add_to_record(&self, name: &str, s: &Snapshot, r: &StopReport) -> Option<String> {
        let updated = self.store.update::<Snapshot, _>(name, s.root, |rec| {
            for m in &r.members {
                if let Some(o) = rec.outcomes.iter_mut().find(|o| o.pid == m.pid) {
                    o.outcome = m.outcome;
                    o.detail = m.detail.clone();
                }
            }
            rec.result = Some(r.result);
            rec.reason = Some(r.reason.clone());
        });
        updated
            .err()
            .map(|e| format!("Force's outcome could not be written to the stop's record: {e}"))
    }
}

/// The last recorded stop of `id` (records are named by the time they were written), with its
/// name: only a finished one.
fn last_stop(s: &Stopper, target: &TargetId, id: &str) -> Result<(String, Snapshot), NoForce> {
    let listing = s
        .store
        .list::<Snapshot>(&target.record_prefix())
        .map_err(|e| NoForce::Records(e.to_string()))?;
    let (name, snapshot) = listing
        .records
        .into_iter()
        .filter(|(_, r)| r.id == id)
        .max_by(|a, b| a.0.cmp(&b.0))
        .ok_or_else(|| NoForce::NoStop(id.to_owned()))?;
    match snapshot.result {
        // Another boot: a pid and start time name other processes now.
        _ if snapshot.boot_id.is_some() && snapshot.boot_id != s.probe.boot_id() => {
            Err(NoForce::Rebooted(name))
        }
        None => Err(NoForce::Unfinished(name)),
        Some(_) if outlived(&snapshot).is_empty() => Err(NoForce::NothingLeft(name)),
        Some(_) => Ok((name, snapshot)),
    }
}

/// The members the stop recorded as still running when it ended.
fn outlived(s: &Snapshot) -> HashSet<Identity> {
    s.outcomes
        .iter()
        .filter(|o| o.outcome == MemberOutcome::StillRunning)
        .filter_map(|o| s.members.iter().find(|m| m.identity.pid == o.pid))
        .map(|m| m.identity)
        .collect()
}

/// Force's result: the record's own, since Force ends only what the stop left; `stopped` only
/// when the stop's members all ended now and the stop's other findings (a newcomer, a
/// replacement) are for a later read to settle (`reconcile.rs`).
fn result_of(s: &Snapshot, members: Vec<MemberReport>) -> StopReport {
    let still: Vec<String> = members
        .iter()
        .filter(|m| {
            matches!(
                m.outcome,
                MemberOutcome::StillRunning | MemberOutcome::Failed
            )
        })
        .map(|m| format!("pid {} ({}): {}", m.pid, m.command, m.detail))
        .collect();
    let ended = members.len() - still.len();
    let was = s.result.unwrap_or(ResourceResult::PartiallyStopped);
    let (result, reason) = if still.is_empty() {
        let reason = format!(
            "Force sent SIGKILL: each of the {ended} process(es) that outlived SIGTERM is gone"
        );
        (ResourceResult::PartiallyStopped, reason)
    } else {
        (was, format!("after Force: {}", still.join("; ")))
    };
    StopReport {
        members,
        ..StopReport::new(&s.id, result, reason)
    }
}

/// What a dry run of Force would send.
fn planned(s: &Snapshot, levels: &[Vec<Expected>], present: &HashSet<Identity>) -> StopReport {
    let mut would_signal = Vec::new();
    for (order, level) in levels.iter().enumerate() {
        for e in level.iter().filter(|e| present.contains(&e.identity)) {
            would_signal.push(PlannedSignal {
                pid: Some(e.identity.pid),
                start_time: Some(e.identity.start_time),
                command: s.command_of(e.identity.pid),
                signal: "SIGKILL".into(),
                order: order + 1,
            });
        }
    }
    let n = would_signal.len();
    StopReport {
        would_signal,
        ..StopReport::new(
            &s.id,
            ResourceResult::WouldStop,
            format!("--dry-run: nothing was sent or written ({n} process(es) would get SIGKILL)"),
        )
    }
}
