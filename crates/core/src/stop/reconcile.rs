//! An unfinished stop, reconciled on a later read (docs/design.md §3.10): Pier was killed (or the
//! disk filled) between the snapshot and the outcome, so the record has no result. A reader —
//! `pier history`, `pier restart`, the app's history — settles it against the live system:
//!
//! - only while holding the resource's stop lock, taken without waiting: never while a stop of
//!   it runs, from the CLI or the app;
//! - on behalf of the identity the record names, as every record change is (`store`);
//! - without the "signals may follow" mark, nothing was sent: it was no stop;
//! - with it (or in a record older than the mark, where signals may have followed), the
//!   members' fates decide: every member gone is a complete stop, restartable (a restart still
//!   asks afresh whether its command runs again or its port is taken); one still running makes
//!   it partial;
//! - in a state folder that cannot be written (read-only, full), the reconciled view is shown
//!   and not written; the next read that can write it does.
//!
//! [`settle`] is the rule, pure; [`reconcile`] takes the lock, reads the fates, and writes.

pub mod container;
pub mod partial;

use std::time::SystemTime;

use crate::model::outcome::{MemberOutcome, ResourceResult};
use crate::model::snapshot::{RecordedOutcome, Snapshot};
use crate::model::target::TargetId;
use crate::probe::{IdentityRead, Probe};
use crate::store::Store;

/// What a read did with an unfinished record of kind `R` (a tree's snapshot, a container's
/// stop record): the same three answers for every kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled<R> {
    /// The record as it is on disk now: reconciled and written, or finished meanwhile.
    Written(R),
    /// The reconciled view, which could not be written (the reason says why); shown as it
    /// is, and written by a later read.
    Shown(R, String),
    /// Left unfinished: a stop of it runs now, or its fate could not be read.
    Left(Unsettled),
}

/// What a read did with a tree's unfinished snapshot.
pub type Reconciled = Settled<Snapshot>;

/// Why a read left an unfinished stop unfinished.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsettled {
    /// A stop of it runs now, or another read is reconciling it.
    #[error("its stop lock is held: a stop of it runs now, or another read is reconciling it")]
    Locked,
    /// Its stop lock could not be taken, in the store's words.
    #[error("its stop lock could not be taken: {0}")]
    Lock(String),
    /// Its id names no target, so no lock.
    #[error("its stop lock cannot be named: {0}")]
    BadId(String),
    /// The record went away meanwhile.
    #[error("the record is gone")]
    Gone,
    /// The record could not be read again, in the store's words.
    #[error("{0}")]
    Store(String),
    /// Its fate could not be read now.
    #[error("it cannot be reconciled yet: {0}")]
    NotYet(String),
}

/// One member's fate now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It runs as itself.
    Running,
    /// Its pid is free or holds another process (or the machine restarted since).
    Gone,
}

/// The reconciled record: unfinished `s` (no result yet) with a result from the mark and the
/// members' fates (`fates`, in the order of `s.members`; unused without the mark). `at` is
/// now (RFC 3339).
///
/// What may run in the stop's place since (the same command started again in the project, a
/// recorded port taken) is not judged here, once and for good: a restart asks it afresh
/// every time (`restart::refusal`), and `pier history` shows its answer.
pub fn settle(s: &Snapshot, fates: &[Fate], at: &str) -> Snapshot {
    debug_assert!(s.result.is_none(), "only an unfinished stop is reconciled");
    let mut r = s.clone();
    r.reconciled_at = Some(at.to_owned());
    if s.signals_may_follow == Some(false) {
        return unmarked(r);
    }
    settle_marked(s, r, fates)
}

/// A stop without its "signals may follow" mark: every member `skipped`.
fn unmarked(mut r: Snapshot) -> Snapshot {
    // Why "no stop": the mark is written before the first signal, so without it no
    // signal can have gone out.
    r.signalled = Some(false);
    r.forget_environments();
    r.result = Some(ResourceResult::Refused);
    r.reason = Some(
        "Pier ended before this stop's first signal (its \"signals may follow\" mark was \
         never written): nothing was sent"
            .into(),
    );
    r.outcomes = r
        .members
        .iter()
        .map(|m| RecordedOutcome {
            pid: m.identity.pid,
            outcome: MemberOutcome::Skipped,
            detail: "not signalled: Pier ended before the first signal".into(),
        })
        .collect();
    r
}

/// A stop past its mark (or from before the mark existed): each member's fate now.
fn settle_marked(s: &Snapshot, mut r: Snapshot, fates: &[Fate]) -> Snapshot {
    let members = s.members.iter().zip(fates);
    let running: Vec<String> = members
        .clone()
        .filter(|(_, &fate)| fate == Fate::Running)
        .map(|(m, _)| {
            format!(
                "pid {} ({})",
                m.identity.pid,
                s.short_command_of(m.identity.pid)
            )
        })
        .collect();
    r.outcomes = members
        .map(|(m, fate)| {
            let (outcome, detail) = match fate {
                Fate::Gone => (MemberOutcome::Stopped, "gone when the stop was reconciled"),
                Fate::Running => (
                    MemberOutcome::StillRunning,
                    "still running when the stop was reconciled",
                ),
            };
            RecordedOutcome {
                pid: m.identity.pid,
                outcome,
                detail: detail.into(),
            }
        })
        .collect();
    let how = match s.signals_may_follow {
        Some(_) => "Pier ended during this stop, after its \"signals may follow\" mark",
        None => {
            "Pier ended during this stop, whose record predates the \"signals may follow\" mark"
        }
    };
    // Whether a signal went out is not known; only the fates are.
    r.signalled = None;
    // Every member still running: nothing ended, so nothing was partly stopped.
    let result = match (running.is_empty(), running.len() == s.members.len()) {
        (true, _) => ResourceResult::Stopped,
        (false, true) => ResourceResult::NotStopped,
        (false, false) => ResourceResult::PartiallyStopped,
    };
    let (result, reason) = match running.is_empty() {
        true => (
            result,
            format!("{how}; when it was reconciled, every member was gone"),
        ),
        false => (
            result,
            format!(
                "{how}; when it was reconciled, {} still ran",
                running.join(", ")
            ),
        ),
    };
    (r.result, r.reason) = (Some(result), Some(reason));
    r
}

/// Each member's fate now; `Err` when one cannot be read (then nothing is decided).
fn fates(probe: &dyn Probe, s: &Snapshot) -> Result<Vec<Fate>, Unsettled> {
    // Identities from another boot mean nothing: every member is gone.
    let rebooted = matches!((&s.boot_id, probe.boot_id()), (Some(then), Some(now)) if *then != now);
    s.members
        .iter()
        .map(|m| {
            let id = m.identity;
            if rebooted {
                return Ok(Fate::Gone);
            }
            match probe.identity(id.pid) {
                IdentityRead::Alive { identity, .. } if identity == id => Ok(Fate::Running),
                IdentityRead::Alive { .. } | IdentityRead::Gone => Ok(Fate::Gone),
                IdentityRead::Unknown(why) => Err(Unsettled::NotYet(format!(
                    "whether pid {} still runs could not be read: {why}",
                    id.pid
                ))),
            }
        })
        .collect()
}

/// Reconciles the unfinished record `name` (as read: `s`) against the live system, under the
/// resource's stop lock, writing it when the folder allows.
pub fn reconcile(probe: &dyn Probe, store: &Store, name: &str, s: &Snapshot) -> Reconciled {
    // Read again under the lock: a stop that just ended has written its own result.
    let (_lock, s) = match locked_fresh::<Snapshot>(store, &s.id, name) {
        Ok(found) => found,
        Err(why) => return Settled::Left(why),
    };
    if s.result.is_some() {
        return Settled::Written(s); // finished meanwhile
    }
    // Without the mark no fate matters: nothing was sent.
    let fates = if s.signals_may_follow == Some(false) {
        Vec::new()
    } else {
        match fates(probe, &s) {
            Ok(fates) => fates,
            Err(why) => return Settled::Left(why),
        }
    };
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let settled = settle(&s, &fates, &at);
    let written = store.update::<Snapshot, _>(name, s.root, |r| {
        if settled.signalled == Some(false) {
            // Not a stop: nothing of it is restarted, so nothing of its environment is kept.
            r.forget_environments();
        }
        r.signalled = settled.signalled;
        r.outcomes = settled.outcomes.clone();
        r.result = settled.result;
        r.reason = settled.reason.clone();
        r.reconciled_at = settled.reconciled_at.clone();
    });
    self::written(written, settled)
}

/// The record `name` of target `id` read again under its stop lock (taken without waiting,
/// [`stop_lock`]): what a reader settles, never while a stop of it runs. The lock is held until
/// the returned guard drops.
pub(crate) fn locked_fresh<R>(
    store: &Store,
    id: &str,
    name: &str,
) -> Result<(crate::store::Lock, R), Unsettled>
where
    R: serde::de::DeserializeOwned + crate::store::Versioned,
{
    let lock = stop_lock(store, id)?;
    match store.get::<R>(name) {
        Ok(Some(fresh)) => Ok((lock, fresh)),
        Ok(None) => Err(Unsettled::Gone),
        Err(e) => Err(Unsettled::Store(e.to_string())),
    }
}

/// A settled record's write: the record as written, or the settled view and why it could not
/// be written (a read-only or full folder).
pub(crate) fn written<R>(update: Result<R, crate::store::StoreError>, settled: R) -> Settled<R> {
    match update {
        Ok(on_disk) => Settled::Written(on_disk),
        Err(e) => Settled::Shown(settled, e.to_string()),
    }
}

/// The stop lock of resource or card `id`, taken without waiting: a reader reconciles only
/// while no stop of it runs (and no other reader reconciles it).
pub(crate) fn stop_lock(store: &Store, id: &str) -> Result<crate::store::Lock, Unsettled> {
    let target: TargetId = id
        .parse()
        .map_err(|e: crate::model::target::BadName| Unsettled::BadId(e.to_string()))?;
    match store.try_lock(&target.stop_lock()) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Unsettled::Locked),
        Err(e) => Err(Unsettled::Lock(e.to_string())),
    }
}

#[cfg(test)]
mod tests;
