//! Armed stops ("stop when safe", docs/design.md §5a): a person arms a yellow or red card whose
//! reasons can clear, and a scheduler's tick runs the whole chain once the card is green and has
//! stayed green for a settle, within an expiry.
//!
//! - the records: `arm-<root pid>-<root start time>` in the state folder, through
//!   [`Store`] (atomic private writes, ownership by the root's identity, damaged records kept);
//! - [`may_arm`]: whether a fresh card may be armed at all, or the refusal naming the way
//!   forward ([`ArmRefusal`]);
//! - [`judge`]: at each rescan, fire, wait (what for, in words), or drop (why, typed);
//!   [`after_stop`]: what a fired stop's report means for the arm.

mod judge;
mod refuse;

pub use judge::{after_stop, armed_view, judge, waiting_for, AfterFire, Dropped, Seen, Verdict};
pub use refuse::{holds_kernel, may_arm, ArmRefusal, Armable};

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::model::arm::{Arm, ARM_SCHEMA};
use crate::model::card::Resource;
use crate::model::target::TargetId;
use crate::model::{Identity, RequestedBy};
use crate::probe::Probe;
use crate::store::{Listing, Owned, Store, StoreError, Versioned};

/// How long an arm waits when no expiry is given: a working day (docs/design.md §5a).
pub const DEFAULT_WITHIN: Duration = Duration::from_secs(8 * 3600);

/// Why a card was not armed: refused (the way forward in its sentence), or the state folder
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    /// The card may not be armed ([`may_arm`]).
    #[error(transparent)]
    Refused(#[from] ArmRefusal),
    /// The record could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The fresh scan the card is judged on could not be made.
    #[error("it could not be looked at again: {0}")]
    Scan(#[from] crate::diagnose::ScanError),
}

/// What an arm asks besides its card: where the card is, for how long, who asks, and whether
/// the person was told that a live notebook kernel's state is lost.
#[derive(Debug, Clone)]
pub struct ArmAsk<'a> {
    /// The path of the card's project, which names the arm to a person.
    pub project: &'a str,
    /// How long it waits before it lapses unfired.
    pub within: Duration,
    /// The CLI or the app.
    pub armed_by: RequestedBy,
    /// The person confirmed a kernel's state is lost (`--yes`, the menu's item that says so).
    pub kernel_state_lost: bool,
}

/// Arms the stop of `r`, a fresh sampled card: judged by [`may_arm`], then written with this
/// boot's id (`probe`) and an expiry `within` from now. The one path the CLI and the app arm
/// through.
pub fn arm_card(
    store: &Store,
    probe: &dyn Probe,
    r: &Resource,
    ask: &ArmAsk<'_>,
) -> Result<Arm, ArmError> {
    may_arm(Armable::Resource(r), ask.kernel_state_lost)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let arm = Arm {
        schema: ARM_SCHEMA,
        id: r.id.clone(),
        root: r.root,
        boot_id: probe.boot_id(),
        project: ask.project.to_owned(),
        kind: r.kind.clone(),
        reasons: r.reasons.clone(),
        armed_at: now,
        expires_at: now + ask.within.as_secs(),
        armed_by: ask.armed_by.clone(),
        kernel_state_lost: ask.kernel_state_lost && holds_kernel(r),
        exe: r
            .members
            .iter()
            .find(|m| m.identity() == r.root)
            .and_then(|m| m.exe.clone()),
    };
    Ok(arm_record(store, &arm)?)
}

/// What every arm record's name starts with: no other listing (`snap-`, `ctr-`) reads it.
pub const ARM_PREFIX: &str = "arm-";

impl Versioned for Arm {
    const SCHEMA: u32 = ARM_SCHEMA;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Arm {
    /// The resource's root: the arm speaks for that identity only.
    fn owner(&self) -> Identity {
        self.root
    }
}

/// The record name of the arm on resource `id`; `None` for anything but a resource's id (a
/// container is never armed, and a malformed id names no record).
pub fn record_name(id: &str) -> Option<String> {
    match id.parse::<TargetId>().ok()? {
        TargetId::Tree(root) => Some(name_of(root)),
        TargetId::Container(_) => None,
    }
}

fn name_of(root: Identity) -> String {
    format!("{ARM_PREFIX}{}-{}", root.pid, root.start_time)
}

/// Writes `arm`, or re-arms: an arm already on that resource gets the new expiry, reasons,
/// boot and confirmation, and keeps when it was first armed. Returns the arm as written.
pub fn arm_record(store: &Store, arm: &Arm) -> Result<Arm, StoreError> {
    let name = name_of(arm.root);
    let rearm = |store: &Store| {
        store.update::<Arm, _>(&name, arm.root, |old| {
            *old = Arm {
                armed_at: old.armed_at,
                ..arm.clone()
            }
        })
    };
    if store.get::<Arm>(&name)?.is_some() {
        return rearm(store);
    }
    match store.put(&name, arm) {
        Ok(()) => Ok(arm.clone()),
        // Armed by another call since the look: re-arm that one.
        Err(StoreError::Write { source, .. })
            if source.kind() == std::io::ErrorKind::AlreadyExists =>
        {
            rearm(store)
        }
        Err(e) => Err(e),
    }
}

/// Cancels the arm on resource `id`: the arm removed, or `None` when none waits on it.
pub fn cancel(store: &Store, id: &str) -> Result<Option<Arm>, StoreError> {
    let Some(name) = record_name(id) else {
        return Ok(None);
    };
    let Some(arm) = store.get::<Arm>(&name)? else {
        return Ok(None);
    };
    store.remove::<Arm>(&name, arm.root)?;
    Ok(Some(arm))
}

/// The longest an arm may wait: what `--within` allows (docs/design.md §5.2).
const LONGEST: u64 = 7 * 24 * 3600;

/// Every arm, by name; the records that could not be read, and those whose name, id and root
/// disagree or whose expiry is past what an arm may wait, are reported and kept — never
/// judged, fired or removed: a record is acted on only under the name its root gives it.
pub fn list(store: &Store) -> Result<Listing<Arm>, StoreError> {
    let mut listing = store.list::<Arm>(ARM_PREFIX)?;
    let (good, bad): (Vec<_>, Vec<_>) = listing
        .records
        .into_iter()
        .partition(|(name, arm)| consistent(name, arm));
    listing.records = good;
    listing
        .damaged
        .extend(bad.into_iter().map(|(name, _)| StoreError::Damaged {
            path: store.folder().join("records").join(format!("{name}.json")),
            why: "its name, id and root do not agree, or it waits longer than 7 days".to_owned(),
        }));
    Ok(listing)
}

/// Whether a listed arm is what its name says: named by its root, its id the root's, and an
/// expiry an arm can have.
fn consistent(name: &str, arm: &Arm) -> bool {
    name == name_of(arm.root)
        && arm.id == format!("{}-{}", arm.root.pid, arm.root.start_time)
        && arm.expires_at <= arm.armed_at.saturating_add(LONGEST)
}

/// The right to fire `arm` now: its lock, taken without waiting, and the record still there
/// under it. `None` when another scheduler (the app beside `pier watch`) holds it or has just
/// fired or dropped it: one arm is fired once.
pub fn claim(store: &Store, arm: &Arm) -> Result<Option<crate::store::Lock>, StoreError> {
    let name = name_of(arm.root);
    let Some(lock) = store.try_lock(&format!("fire-{name}"))? else {
        return Ok(None);
    };
    Ok(store.get::<Arm>(&name)?.filter(|a| a == arm).map(|_| lock))
}

/// Removes `arm` (fired, dropped), only on behalf of its root: a record that now names another
/// identity, or is damaged, is kept.
pub fn remove(store: &Store, arm: &Arm) -> Result<(), StoreError> {
    store.remove::<Arm>(&name_of(arm.root), arm.root)
}

#[cfg(test)]
mod tests;
