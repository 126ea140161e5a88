//! The steps of one resource's stop (see the module docs of `stop`): what is judged, written
//! and signalled for it alone. `batch.rs` runs them for every resource of a batch at once,
//! sharing the reads; a stop of one resource is a batch of one.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::anyway;
use super::failure::{Changed, NotTaken, Unrecorded};
use super::interrupt::Interrupt;
use super::refusal::Refusal;
use super::StopOptions;
use crate::containers::control::EngineAccess;
use crate::diagnose::{MarkerLookup, ScanError, ScanOptions};
use crate::model::bytes::ByteString;
use crate::model::card::{Evidence, Level, Member, Project, Resource, Scan};
use crate::model::outcome::{ResourceResult, StopReport};
use crate::model::reason::Reason;
use crate::model::reason::SetAside;
use crate::model::shown::Shown;
use crate::model::snapshot::{
    RecordedNewcomer, RecordedOutcome, Snapshot, SnapshotMember, SnapshotProject,
};
use crate::model::target::TargetId;
use crate::probe::{Identity, Probe, ProbeError, ProcessList};
use crate::signal::wait::ExitWaiter;
use crate::signal::Signaller;
use crate::store::{Lock, Store};

/// Everything a stop needs, each behind its interface.
pub struct Stopper<'a> {
    /// Reads the processes, sockets, identities and activity every checkpoint judges.
    pub probe: &'a (dyn Probe + Sync),
    /// Sends each signal, only to the process the snapshot recorded.
    pub signaller: &'a (dyn Signaller + Sync),
    /// Waits, bounded by the grace period, for the signalled members to exit.
    pub waiter: &'a (dyn ExitWaiter + Sync),
    /// The state folder: the stop's lock and the resource's snapshot.
    pub store: &'a Store,
    /// Which project marker a folder holds, for the stop's own scans.
    pub marker_at: MarkerLookup<'a>,
    /// Raised by SIGINT, SIGTERM or SIGHUP (`interrupt.rs`): read at the stop's seams.
    pub interrupt: &'a Interrupt,
    /// The container engines, for a container's stop (`container.rs`).
    pub engines: &'a dyn EngineAccess,
    /// How to stop: grace, sample window, thresholds, Force, deadline.
    pub opts: StopOptions,
}

/// A stop interrupted before the mark: nothing was sent, and the report says so.
pub(super) fn abandoned(id: &str, signal: &str, before: &str) -> StopReport {
    StopReport {
        interrupted: Some(signal.to_owned()),
        ..StopReport::new(
            id,
            ResourceResult::Refused,
            format!("interrupted by {signal} {before}: nothing was sent"),
        )
    }
}

/// A stop a checkpoint refused: nothing was sent, and the report names the checkpoint and,
/// where a person may set the reason aside and a person asked, the stop anyway that would.
pub(super) fn refused(id: &str, r: Refusal, opts: &StopOptions) -> StopReport {
    let reason = match r.why.reason() {
        Some(reason) if opts.offers_anyway() => format!("{r}; {}", anyway::offer(id, &[reason])),
        _ => r.to_string(),
    };
    StopReport {
        checkpoint: Some(r.checkpoint),
        refused_for: r.why.table_reason(),
        ..StopReport::new(id, ResourceResult::Refused, reason)
    }
}

impl Stopper<'_> {
    pub(super) fn scan_options(&self, under: Vec<std::path::PathBuf>) -> ScanOptions {
        ScanOptions {
            generation: 0,
            sample: Duration::ZERO,
            under,
            include_others: false,
            thresholds: self.opts.thresholds,
            home: self.opts.home.clone(),
            engines: crate::diagnose::Engines::NotAsked,
            protect: self.opts.protect.clone(),
            // The checks' and rescans' scans show nothing: the re-diagnosis asks for it.
            memory: false,
        }
    }

    /// Stops the resource `id`, a batch of one (`batch.rs`). `shown`: what the user was shown,
    /// if anything.
    pub fn stop(&self, id: &str, shown: Option<&Shown>) -> StopReport {
        let mut reports = self.stop_all(&[(id, shown)], &mut |_| {});
        reports.pop().expect("a batch of one has one report")
    }

    /// The resource's stop lock, waited for while another stop of it runs — but not past an
    /// interruption: Ctrl-C must work while Pier waits (a blocking `flock` would be restarted
    /// after the signal handler, and wait on).
    /// An id that names no target names no lock: its re-diagnosis refuses it.
    pub(super) fn lock(&self, id: &str) -> Result<Option<Lock>, Box<StopReport>> {
        let Ok(target) = id.parse::<TargetId>() else {
            return Ok(None);
        };
        let interrupted = || self.interrupt.raised().is_some();
        match self
            .store
            .lock_polling(&target.stop_lock(), super::newcomers::GLANCE, &interrupted)
        {
            Ok(Some(lock)) => Ok(Some(lock)),
            Ok(None) => {
                let signal = self.interrupt.raised().unwrap_or("a signal");
                let before = "while another stop of it held its lock, before this one began";
                Err(Box::new(abandoned(id, signal, before)))
            }
            Err(e) => Err(Box::new(StopReport::new(
                id,
                ResourceResult::Failed,
                e.to_string(),
            ))),
        }
    }

    /// Step 1: the fresh diagnosis (`scan`, of the whole machine with no sample, made after
    /// the lock was taken) must still say what the user agreed to. With it, what a stop anyway
    /// sets aside of it (empty for any other stop).
    pub(super) fn rediagnose(
        &self,
        scan: &Result<Scan, ScanError>,
        id: &str,
        shown: Option<&Shown>,
    ) -> Result<(Project, Resource, Vec<SetAside>), Box<StopReport>> {
        let refuse = |why: String| Box::new(StopReport::new(id, ResourceResult::Refused, why));
        let scan = scan
            .as_ref()
            .map_err(|e| refuse(format!("the fresh diagnosis failed: {e}")))?;
        let found = scan.projects.iter().find_map(|p| {
            let r = p.resources.iter().find(|r| r.id == id).cloned()?;
            Some((p.clone(), r))
        });
        let Some((project, resource)) = found else {
            let mut why =
                format!("no resource {id} now: its root process is gone or no longer a candidate");
            if let Some(s) = crate::diagnose::suggest::did_you_mean(scan, id) {
                why = format!("{why}; {}", crate::words::did_you_mean(&s));
            }
            return Err(refuse(why));
        };
        let with_fresh = |why: String| {
            let mut r = refuse(why);
            r.fresh = Some(resource.clone());
            r.kind = Some(resource.kind.clone());
            r.project = Some(project.path.clone());
            r
        };
        // What no stop ever signals (`Reason::never_signalled`): protected, by Pier's rules or
        // the user's list, an engine's client, a data service, a manager's program — each
        // fact's own words name who stops it instead.
        let never = |e: &&Evidence| Reason::of(e).is_some_and(Reason::never_signalled);
        if let Some(p) = resource.evidence.iter().find(never) {
            return Err(with_fresh(format!("never touched: {}", p.message)));
        }
        let set_aside = match self.opts.anyway.confirmed(id) {
            _ if resource.level == Level::Green => Vec::new(),
            Some(confirmed) => anyway::set_aside(&resource, confirmed)
                .map_err(|why| with_fresh(why.to_string()))?,
            None if self.opts.offers_anyway() => {
                return Err(with_fresh(anyway::not_green(&resource)))
            }
            None => return Err(with_fresh(anyway::not_green_plainly(&resource))),
        };
        if let Some(why) = shown.and_then(|shown| unlike_shown(shown, &project, &resource)) {
            return Err(with_fresh(why));
        }
        Ok((project, resource, set_aside))
    }

    /// Step 2: the snapshot, with exact bytes read afresh for every member, written before
    /// any signal. A member that changed since the diagnosis refuses the stop; a snapshot
    /// that cannot be written fails it.
    /// `list`: the process table, read once for the batch after its re-diagnosis.
    pub(super) fn write_snapshot(
        &self,
        project: &Project,
        r: &Resource,
        set_aside: Vec<SetAside>,
        list: &Result<ProcessList, ProbeError>,
    ) -> Result<(String, Snapshot), NotTaken> {
        let list = list.as_ref().map_err(|e| Changed::TableUnread(e.clone()))?;
        let members = r
            .members
            .iter()
            .map(|m| self.snapshot_member(list, m))
            .collect::<Result<Vec<_>, _>>()?;
        let snapshot = self.snapshot_of(project, r, members, set_aside);
        // A dry run keeps the snapshot in memory only: the checks judge it, nothing is written.
        if self.opts.dry_run {
            return Ok((String::new(), snapshot));
        }
        let name = self.put_snapshot(&snapshot)?;
        Ok((name, snapshot))
    }

    /// One member as the snapshot records it, re-read now: it must still be the process that
    /// was diagnosed (same identity in the table, same argv, same executable — an exec in
    /// between is a change), and its executable must be readable. Its environment and folder
    /// are recorded when they can be read (a restart refuses without them).
    fn snapshot_member(&self, list: &ProcessList, m: &Member) -> Result<SnapshotMember, Changed> {
        let info = list
            .processes
            .iter()
            .find(|p| p.identity.pid == m.pid && p.identity.start_time == m.start_time)
            .ok_or(Changed::Replaced(m.pid))?;
        let details = self.probe.details(m.pid).ok_or(Changed::Exited(m.pid))?;
        let exe = details.exe.map_err(|e| Changed::ExeUnread {
            pid: m.pid,
            error: e.to_string(),
        })?;
        // What is recorded must be what was diagnosed: an exec in between is a change.
        let argv_now: Vec<String> = info
            .argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let exe_now = exe.to_string_lossy();
        if argv_now != m.argv || m.exe.as_deref() != Some(exe_now.as_ref()) {
            return Err(Changed::Execd {
                pid: m.pid,
                exe: exe_now.into_owned(),
            });
        }
        Ok(SnapshotMember {
            identity: info.identity,
            ppid: info.ppid,
            uid: info.uid,
            argv: info.argv.iter().map(|a| ByteString(a.clone())).collect(),
            env: self
                .probe
                .environment(m.pid)
                .ok()
                .map(|env| env.into_iter().map(ByteString).collect()),
            exe: ByteString(exe.as_os_str().as_bytes().to_vec()),
            cwd: details
                .cwd
                .ok()
                .map(|c| ByteString(c.as_os_str().as_bytes().to_vec())),
            memory: m.memory,
        })
    }

    /// The record of a stop about to begin: the resource as diagnosed (its project, ports,
    /// evidence, root) with `members` as re-read, on this boot, and nothing yet of its end.
    fn snapshot_of(
        &self,
        project: &Project,
        r: &Resource,
        members: Vec<SnapshotMember>,
        set_aside: Vec<SetAside>,
    ) -> Snapshot {
        Snapshot {
            schema: crate::model::SCHEMA_VERSION,
            id: r.id.clone(),
            kind: Some(r.kind.clone()),
            boot_id: self.probe.boot_id(),
            created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            project: SnapshotProject {
                name: project.name.clone(),
                path: project.path.clone(),
                marker: project.marker.clone(),
            },
            ports: r.ports.clone(),
            evidence: r.evidence.clone(),
            managed_by: r.managed_by.clone(),
            root: Identity {
                pid: r.root.pid,
                start_time: r.root.start_time,
            },
            members,
            signalled: None,
            signals_may_follow: Some(false),
            reconciled_at: None,
            outcomes: Vec::new(),
            newcomers: None,
            neighbours: Some(
                project
                    .resources
                    .iter()
                    .filter(|o| o.id != r.id)
                    .map(|o| o.id.clone())
                    .collect(),
            ),
            result: None,
            reason: None,
            restarts: Vec::new(),
            batch: self.opts.batch.clone(),
            requested_by: self.opts.requested_by.clone(),
            set_aside,
        }
    }

    /// Writes `snapshot` as `snap-<id>-<unix ms>` and returns that name; why it could not be
    /// written is the stop's reason, with no signal sent.
    fn put_snapshot(&self, snapshot: &Snapshot) -> Result<String, Unrecorded> {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let not_written = |e: &dyn std::fmt::Display| Unrecorded::Snapshot(e.to_string());
        let target: TargetId = snapshot.id.parse().map_err(|e| not_written(&e))?;
        let name = target.record(ms).to_string();
        self.store
            .put(&name, snapshot)
            .map_err(|e| not_written(&e))?;
        Ok(name)
    }

    /// The "signals may follow" mark, written and fsynced in the snapshot before the last two
    /// checks and the first signal (docs/design.md §3.10): an unfinished record without it
    /// sent nothing, so a later read may call it "not a stop"; with it, only the members'
    /// fates can tell.
    pub(super) fn mark(&self, name: &str, snapshot: &Snapshot) -> Result<(), Unrecorded> {
        self.store
            .update::<Snapshot, _>(name, snapshot.root, |s| s.signals_may_follow = Some(true))
            .map(drop)
            .map_err(|e| Unrecorded::SnapshotMark(e.to_string()))
    }

    /// Adds the outcomes to the snapshot, on behalf of the identity it names only. Returns why
    /// it could not, if it could not.
    pub(super) fn record_outcome(
        &self,
        name: &str,
        snapshot: &Snapshot,
        out: &StopReport,
    ) -> Option<String> {
        let outcomes = out
            .members
            .iter()
            .map(|m| RecordedOutcome {
                pid: m.pid,
                outcome: m.outcome,
                detail: m.detail.clone(),
            })
            .collect();
        let newcomers = out
            .newcomers
            .iter()
            .map(|n| RecordedNewcomer {
                identity: n.identity(),
                command: n.command.clone(),
                fate: n.fate,
            })
            .collect();
        let signalled = out.timings.is_some();
        let updated = self.store.update::<Snapshot, _>(name, snapshot.root, |s| {
            s.signalled = Some(signalled);
            s.outcomes = outcomes;
            s.result = Some(out.result);
            s.reason = Some(out.reason.clone());
            s.newcomers = Some(newcomers);
            if !signalled {
                s.forget_environments();
            }
            // What the checks set aside too, once signals went out.
            if !out.set_aside.is_empty() {
                s.set_aside = out.set_aside.clone();
            }
        });
        updated.err().map(|e| {
            format!(
                "its outcome could not be written to its snapshot ({e}); free some space in {}: \
                 the next `pier history` writes it from what is true then",
                self.store.folder().display()
            )
        })
    }
}

/// How the fresh diagnosis differs from what the user was shown, if it does: the project's
/// level, the set of member identities, or a member's executable (same pid and start time,
/// but it exec'd another program since).
fn unlike_shown(shown: &Shown, project: &Project, resource: &Resource) -> Option<String> {
    let fresh: BTreeSet<Identity> = resource.identities().into_iter().collect();
    let was: BTreeSet<Identity> = shown.members.iter().map(|m| m.identity).collect();
    if shown.project_level != project.level {
        return Some(format!(
            "the project is {} now, not {} as shown",
            project.level.as_str(),
            shown.project_level.as_str()
        ));
    }
    if fresh != was {
        return Some("its processes changed since they were shown".into());
    }
    let now = crate::model::shown::shown_members(resource);
    let m = shown.members.iter().find(|m| !now.contains(m))?;
    let exe_now = now
        .iter()
        .find(|n| n.identity == m.identity)
        .and_then(|n| n.exe.clone());
    Some(format!(
        "pid {} runs {} now, not {} as shown: it exec'd",
        m.identity.pid,
        exe_now.as_deref().unwrap_or("an unreadable executable"),
        m.exe.as_deref().unwrap_or("an unreadable executable"),
    ))
}
