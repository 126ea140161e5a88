//! Pruning the history (docs/design.md §5.5): a snapshot holds a whole environment — tokens,
//! keys — so one that can no longer bring anything back should not be kept for ever.
//!
//! - `pier history --prune` removes every finished record that cannot be restarted now;
//!   `--prune --all` the restartable ones too.
//! - Expiry, at every `pier history` and app refresh: a record whose stop can **never** be
//!   restarted — it sent nothing, or was partial, refused or failed — goes once it is older
//!   than [`EXPIRY`].
//!
//! `--prune` also removes every lock file nobody holds (`Store::remove_free_locks`); an entry
//! there that is not a lock file of the user's is left as it is, and counted.
//!
//! Never removed, whatever was asked: a damaged record (it is not even listed), an unfinished
//! one (Pier ended mid-stop and no read could settle it yet), one whose stop lock is held (a
//! stop or a read of it is under way), another user's. Each kept one says why.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use crate::model::history::HistoryEntry;
use crate::model::snapshot::{ContainerSnapshot, RecordedRestart, Snapshot};
use crate::model::target::{RecordName, TargetId, TargetKind};
use crate::probe::{Pid, Probe};
use crate::store::Store;

/// How long a record whose stop can never be restarted is kept: a week, long enough to read
/// what happened, short enough that its environment does not linger.
pub const EXPIRY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// What a prune is asked to remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prune {
    /// Every finished record that cannot be restarted now (`pier history --prune`).
    Unrestartable,
    /// Every finished record (`pier history --prune --all`).
    All,
    /// Records whose stop can never be restarted, older than [`EXPIRY`] at this time.
    Expired(SystemTime),
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The records removed, by name.
    pub removed: Vec<String>,
    /// The records it would have removed but kept, each with why.
    pub kept: Vec<(String, String)>,
    /// How many lock files nobody held it removed (`--prune` only, not expiry).
    pub locks: usize,
    /// How many entries of the `locks` folder it left as they are: not lock files of the
    /// user's (a folder, a link, a FIFO), or not to be taken.
    pub locks_left: usize,
}

/// Whether `e` goes under `what`: `Ok` to remove, `Err(why)` to keep it, `None` when it is
/// not asked about at all (restartable under `--prune`, young or restartable at expiry).
pub fn decide(e: &HistoryEntry, what: Prune) -> Option<Result<(), Kept>> {
    let unfinished = e.result.is_none() || e.not_written.is_some();
    match what {
        Prune::Expired(now) => {
            // Only what can never come back: a complete stop may be restarted later, when
            // its port or command is free again.
            let never = e.sent_nothing()
                || matches!(
                    e.result.as_deref(),
                    Some("refused" | "failed" | "partially_stopped" | "not_stopped")
                );
            // Counted from the last word on it: a stop a read settled only now is shown for a
            // week from then, not removed in the read that settled it.
            let last = e.reconciled_at.as_deref().unwrap_or(&e.stopped_at);
            let old = humantime::parse_rfc3339(last)
                .ok()
                .and_then(|at| now.duration_since(at).ok())
                .is_some_and(|age| age > EXPIRY);
            (never && old && !unfinished).then_some(Ok(()))
        }
        Prune::Unrestartable if e.restartable => None,
        Prune::Unrestartable | Prune::All if unfinished => Some(Err(Kept::Unfinished)),
        Prune::Unrestartable | Prune::All => Some(Ok(())),
    }
}

/// Why a record was kept by a prune.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Kept {
    /// Its stop never finished.
    #[error("its stop never finished; the next `pier history` settles it first")]
    Unfinished,
    /// A stop or a read of it is under way.
    #[error("its stop lock is held (a stop or a read of it is under way)")]
    Locked,
    /// A restart from it, or in its project, is under way.
    #[error("a restart from it (or in its project) is under way")]
    Restarting,
    /// The record changed since it was listed.
    #[error("{0} changed since it was listed; kept")]
    Changed(String),
    /// The state folder said no, in its words.
    #[error("{0}")]
    Store(String),
    /// The record went, its restart log did not.
    #[error("its record was removed, but not its restart log: {0}")]
    Log(String),
}

/// Removes what `what` asks among `entries` (as `restart::history` read them), each under
/// its resource's stop lock, taken without waiting; and its restart log with it.
pub fn prune(store: &Store, probe: &dyn Probe, entries: &[HistoryEntry], what: Prune) -> Pruned {
    let mut out = Pruned::default();
    let ended = Ended {
        stopped: entries
            .iter()
            .filter(|e| e.result.as_deref() == Some("stopped"))
            .map(|e| e.id.as_str())
            .collect(),
        // Expiry removes only records that were never restarted: no table read at every read.
        sessions: match what {
            Prune::Expired(_) => None,
            _ => live_sessions(probe),
        },
    };
    for e in entries {
        match decide(e, what) {
            None => {}
            Some(Err(why)) => out.kept.push((e.snapshot.clone(), why.to_string())),
            Some(Ok(())) => match remove(store, Named::of(e), &ended) {
                Ok(()) => out.removed.push(e.snapshot.clone()),
                Err(why) => out.kept.push((e.snapshot.clone(), why.to_string())),
            },
        }
    }
    // Asked for, not at expiry: lock files left by a Pier that was killed, or by one from
    // before locks were removed by their holders. A held one is never removed.
    if !matches!(what, Prune::Expired(_)) {
        match store.remove_free_locks() {
            Ok(n) => (out.locks, out.locks_left) = (n.removed, n.left),
            Err(e) => tracing::warn!("lock files not pruned: {e}"),
        }
    }
    out
}

/// A record as a removal names it: its name, the resource it records, its project.
#[derive(Clone, Copy)]
struct Named<'e> {
    name: &'e str,
    id: &'e str,
    project: &'e str,
}

impl<'e> Named<'e> {
    fn of(e: &'e HistoryEntry) -> Self {
        Self {
            name: &e.snapshot,
            id: &e.id,
            project: &e.project,
        }
    }
}

/// One record removed, under the stop lock of its resource and the restart lock its restart
/// takes, after it is read again under them: still the record of `e.id`, still finished. Its
/// restart log goes with it unless a restart it records may still write there.
fn remove(store: &Store, e: Named, ended: &Ended) -> Result<(), Kept> {
    let container = matches!(
        e.name.parse::<RecordName>(),
        Ok(r) if r.target.kind() == TargetKind::Container
    );
    let changed = || Kept::Changed(e.name.to_owned());
    let target: TargetId = e.id.parse().map_err(|_| changed())?;
    let Some(_lock) = store
        .try_lock(&target.stop_lock())
        .map_err(|e| Kept::Store(e.to_string()))?
    else {
        return Err(Kept::Locked);
    };
    let restart_lock = match container {
        true => super::container::restart_lock(e.name),
        false => super::restart_lock(e.project),
    };
    let Some(_restarting) = store
        .try_lock(&restart_lock)
        .map_err(|e| Kept::Store(e.to_string()))?
    else {
        return Err(Kept::Restarting);
    };
    let (removed, restarted) = if container {
        let s = store
            .get::<ContainerSnapshot>(e.name)
            .map_err(|e| Kept::Store(e.to_string()))?
            .filter(|s| s.id == e.id && s.result.is_some())
            .ok_or_else(changed)?;
        let restarted = !s.restarts.is_empty();
        (
            store.remove::<ContainerSnapshot>(e.name, s.run()),
            restarted,
        )
    } else {
        // On behalf of the resource the listing named, not of whatever the file says now.
        let s = store
            .get::<Snapshot>(e.name)
            .map_err(|e| Kept::Store(e.to_string()))?
            .filter(|s| s.id == e.id && s.result.is_some())
            .ok_or_else(changed)?;
        let TargetId::Tree(owner) = target else {
            return Err(changed());
        };
        (
            store.remove::<Snapshot>(e.name, owner),
            s.restarts.iter().any(|r| ended.may_still_write(r)),
        )
    };
    removed.map_err(|e| Kept::Store(e.to_string()))?;
    // A restarted server may still write its log: it is kept (it holds its output, not its
    // environment).
    if restarted {
        return Ok(());
    }
    store
        .remove_log(&format!("{}.log", e.name))
        .map_err(|err| Kept::Log(err.to_string()))
}

/// Each live process's session and start time, for [`Ended`]; `None` when they could not be
/// read.
fn live_sessions(probe: &dyn Probe) -> Option<Vec<(Pid, u64)>> {
    probe.processes().ok().map(|list| {
        let live = list.processes.iter().filter(|p| !p.zombie);
        live.map(|p| (p.session, p.identity.start_time)).collect()
    })
}

/// What tells a restart that can no longer write its log.
struct Ended<'e> {
    /// The ids of the trees a stop ended whole (`stopped`).
    stopped: HashSet<&'e str>,
    /// Each live process's session and start time; `None` when they could not be read.
    sessions: Option<Vec<(Pid, u64)>>,
}

impl Ended<'_> {
    /// Whether a restart may still write its log. A restart runs in a session of its own, led
    /// by its root: while a process started since runs in that session, it may. Otherwise not
    /// once it crashed (exited before listening) or a later stop ended its tree whole (its root
    /// is that stop's id) — anything else, or a table that cannot be read, may still write
    /// (a child that left the session).
    fn may_still_write(&self, r: &RecordedRestart) -> bool {
        let Some(sessions) = &self.sessions else {
            return true;
        };
        let root = r.identity;
        let in_session = |&(sid, start): &(Pid, u64)| sid == root.pid && start >= root.start_time;
        let id = format!("{}-{}", root.pid, root.start_time);
        sessions.iter().any(in_session) || r.exited.is_none() && !self.stopped.contains(id.as_str())
    }
}

mod supersede;
pub use supersede::supersede;

#[cfg(test)]
mod tests;
