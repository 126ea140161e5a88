//! A finished stop that left something running (`partially_stopped`, `not_stopped`, an
//! interrupted one among them), read again later (docs/design.md §3.10): once every member and
//! every newcomer it named is gone, and a rescan of its project is clean, it is read as
//! `stopped` and restartable, and says it was reconciled. A stop interrupted in its grace wait
//! whose server then finished its shutdown is the case: nothing runs, and the record must not
//! say "part of it may still run" for ever.
//!
//! Clean means what the stop's own rescan means (`stop/rescan.rs`), read from the record:
//! no candidate in the project that was not there when the stop began (its `neighbours`) and
//! started after the stopped root; no process of the user's on a recorded member's pid; no
//! process of the user's running a stopped member's exact argv in the project
//! (`judge::argv_twin`) that started after the stopped root, nor one whose folder cannot be
//! read. Like every reconciliation: only under the resource's stop lock, never while a stop of
//! it runs; a record that cannot be written is shown reconciled, not written.

use std::path::Path;
use std::time::SystemTime;

use super::{fates, Fate, Settled, Unsettled};
use crate::diagnose::judge::{self, TwinPlace};
use crate::diagnose::{self, project, ScanOptions};
use crate::model::card::Scan;
use crate::model::outcome::{MemberOutcome, ResourceResult};
use crate::model::snapshot::Snapshot;
use crate::probe::{IdentityRead, Pid, Probe, ProbeError, ProcessList};
use crate::store::Store;

/// Whether `s` is a finished stop a later read may find ended after all: its signals went out
/// and it left something running. Why not `refused` or `failed`: they sent nothing, so nothing
/// of theirs can have ended since.
pub fn may_end_later(s: &Snapshot) -> bool {
    matches!(
        s.result,
        Some(ResourceResult::PartiallyStopped | ResourceResult::NotStopped)
    ) && s.signalled != Some(false)
}

/// Why what the record names may still run: a member or a newcomer that runs (or whose fate
/// cannot be read), or newcomers the record cannot name. `None` when all of it is gone.
fn still_running(probe: &dyn Probe, s: &Snapshot) -> Option<String> {
    match fates(probe, s) {
        Err(why) => return Some(why.to_string()),
        Ok(fates) => {
            if let Some((m, _)) = s
                .members
                .iter()
                .zip(&fates)
                .find(|(_, f)| **f == Fate::Running)
            {
                return Some(format!("pid {} still runs", m.identity.pid));
            }
        }
    }
    let newcomers = match &s.newcomers {
        Some(newcomers) => newcomers,
        // A stop reconciled from an unfinished record never knew its newcomers: its members'
        // fates were all it had, and are all a later read has.
        None if s.reconciled_at.is_some() => return None,
        None => return Some("the record does not name the stop's newcomers".into()),
    };
    newcomers
        .iter()
        .find_map(|n| match probe.identity(n.identity.pid) {
            IdentityRead::Alive { identity, .. } if identity == n.identity => Some(format!(
                "newcomer pid {} ({}) still runs",
                n.identity.pid, n.command
            )),
            IdentityRead::Unknown(why) => Some(format!(
                "whether newcomer pid {} still runs could not be read: {why}",
                n.identity.pid
            )),
            _ => None,
        })
}

/// What a later rescan of `s`'s project finds against it (the rule in the module's doc), if
/// anything. `scan`: a scan of the project; `list`: the process table; `uid`: the user's;
/// `cwd_of`: a process's folder, read only for a process running a member's argv.
pub fn dirty(
    s: &Snapshot,
    scan: &Scan,
    list: &ProcessList,
    uid: u32,
    cwd_of: &dyn Fn(Pid) -> Option<Result<std::path::PathBuf, ProbeError>>,
) -> Option<String> {
    let project = Path::new(&s.project.path);
    let member_pids: Vec<Pid> = s.members.iter().map(|m| m.identity.pid).collect();
    // Born after the stopped root: only such a process can be its replacement.
    let later = |start_time: u64| start_time > s.root.start_time;
    let neighbour = |id: &str| s.neighbours.iter().flatten().any(|n| n == id);
    for r in scan
        .projects
        .iter()
        .filter(|p| Path::new(&p.path).starts_with(project))
        .flat_map(|p| &p.resources)
    {
        if r.id != s.id && !neighbour(&r.id) && later(r.root.start_time) {
            return Some(format!(
                "a new {} runs in the project (id {}): `pier scan` shows it",
                r.kind, r.id
            ));
        }
    }
    let recorded: Vec<Vec<&[u8]>> = s
        .members
        .iter()
        .map(|m| m.argv.iter().map(|a| a.0.as_slice()).collect())
        .collect();
    for p in list.processes.iter().filter(|p| p.uid == uid && !p.zombie) {
        if member_pids.contains(&p.identity.pid) {
            return Some(format!(
                "pid {} now belongs to a new process ({})",
                p.identity.pid, p.comm
            ));
        }
        match judge::argv_twin(p, uid, &recorded, project, cwd_of) {
            Some(TwinPlace::InProject) if later(p.identity.start_time) => {
                return Some(format!(
                    "pid {} runs the same command in the project again",
                    p.identity.pid
                ))
            }
            Some(TwinPlace::Unknown(why)) => {
                return Some(format!(
                    "pid {} runs the same command and its folder cannot be confirmed ({why})",
                    p.identity.pid
                ))
            }
            _ => {}
        }
    }
    None
}

/// Why `s` cannot be read as stopped now, from the live system: what it names still runs, or
/// its project's rescan is not clean. `None`: it may be.
fn why_not_yet(probe: &(dyn Probe + Sync), s: &Snapshot) -> Option<String> {
    if let Some(why) = still_running(probe, s) {
        return Some(why);
    }
    let opts = ScanOptions {
        sample: std::time::Duration::ZERO,
        under: vec![s.project.path.clone().into()],
        memory: false,
        ..ScanOptions::default()
    };
    let scan = match diagnose::scan(probe, &opts, &project::marker_on_disk) {
        Ok(scan) => scan,
        Err(e) => return Some(format!("the project could not be rescanned: {e}")),
    };
    let list = match probe.processes() {
        Ok(list) => list,
        Err(e) => return Some(format!("the process table could not be read: {e}")),
    };
    let cwd_of = |pid| probe.details(pid).map(|d| d.cwd);
    dirty(s, &scan, &list, probe.current_uid(), &cwd_of)
}

/// The record read as stopped (`at`: now, RFC 3339): its result, its reason (what the stop had
/// said kept after it), when, and the outcomes of the members it left running.
pub fn settle_ended(s: &Snapshot, at: &str) -> Snapshot {
    let mut r = s.clone();
    r.result = Some(ResourceResult::Stopped);
    // `reconciled_at` says when; history prints it before the reason.
    r.reason = Some(format!(
        "read again, every member and newcomer is gone and the project's rescan is clean \
         (the stop had said: {})",
        s.reason.as_deref().unwrap_or("nothing")
    ));
    r.reconciled_at = Some(at.to_owned());
    for o in &mut r.outcomes {
        match o.outcome {
            MemberOutcome::StillRunning => {
                o.outcome = MemberOutcome::Stopped;
                o.detail = format!("{}; gone when the stop was reconciled", o.detail);
            }
            // Its signal failed: it ended, but not by Pier's hand.
            MemberOutcome::Failed => {
                o.outcome = MemberOutcome::Exited;
                o.detail = format!("{}; gone when the stop was reconciled", o.detail);
            }
            _ => {}
        }
    }
    r
}

/// Reads the finished record `name` (as read: `s`) as stopped when everything it names is gone
/// and its project's rescan is clean, under the resource's stop lock; writes it when the
/// folder allows. `Left(NotYet)` says why not yet.
pub fn reconcile_ended(
    probe: &(dyn Probe + Sync),
    store: &Store,
    name: &str,
    s: &Snapshot,
) -> Settled<Snapshot> {
    // The cheap reads first, without the lock: most partial records still name a runner.
    if let Some(why) = still_running(probe, s) {
        return Settled::Left(Unsettled::NotYet(why));
    }
    let (_lock, s) = match super::locked_fresh::<Snapshot>(store, &s.id, name) {
        Ok(found) => found,
        Err(why) => return Settled::Left(why),
    };
    if !may_end_later(&s) {
        return Settled::Written(s);
    }
    if let Some(why) = why_not_yet(probe, &s) {
        return Settled::Left(Unsettled::NotYet(why));
    }
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let settled = settle_ended(&s, &at);
    let written = store.update::<Snapshot, _>(name, s.root, |r| {
        r.outcomes = settled.outcomes.clone();
        r.result = settled.result;
        r.reason = settled.reason.clone();
        r.reconciled_at = settled.reconciled_at.clone();
    });
    super::written(written, settled)
}
