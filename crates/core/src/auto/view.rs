//! The running scheduler's view (`pier auto`, docs/auto-json.md): the scheduler that acts
//! writes, at every rescan, what it judged — who it is, how often it rescans, the memory
//! pressure, and each card's level, idle clock and rule note — as the record `auto-view` in the
//! state folder. A one-shot `pier auto` has no idle clock of its own: it shows this view while
//! its writer runs, and judges a fresh, unmeasured scan itself otherwise.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::lock::Who;
use super::NOBODY;
use crate::front::System;
use crate::model::card::{Level, Scan};
use crate::model::idle::Idle;
use crate::model::rules::{AutoNote, MemoryPressure};
use crate::model::Identity;
use crate::probe::{IdentityRead, Probe};
use crate::store::{Owned, Store, StoreError, Versioned};

/// The view record's name.
const RECORD: &str = "auto-view";

/// The schema of the view record.
const SCHEMA: u32 = 1;

/// How many intervals a view stays fresh while its writer runs. Why 3: a rescan that took
/// longer than its interval (a slow stop through the chain) must not make the scheduler look
/// gone, and a writer that hung is noticed within a minute and a half at the default 30 s.
const FRESH_INTERVALS: u64 = 3;

/// Slack on top of the intervals, for a stop's grace period within one rescan.
const FRESH_SLACK: u64 = 15;

/// What the scheduler that acts saw at its last rescan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View {
    schema: u32,
    /// When it was written, seconds since the Unix epoch.
    pub written_at: u64,
    /// Who wrote it: `"pier watch"` or `"the Pier app"`.
    pub by: String,
    /// The writer's pid.
    pub pid: u32,
    /// The writer's start time (as a resource id's second half).
    pub start_time: u64,
    /// Seconds between two of its rescans.
    pub every_seconds: u64,
    /// The memory pressure it read; `null` when the rules are not on, or it could not be read.
    pub pressure: Option<MemoryPressure>,
    /// Each card it judged.
    pub resources: Vec<Seen>,
}

/// One card in the view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// The resource's id.
    pub id: String,
    /// Its project's folder.
    pub project: String,
    /// Its tool kind.
    pub kind: String,
    /// Its level at that rescan.
    pub level: Level,
    /// Its idle clock; `null` before a whole interval was measured.
    pub idle: Option<Idle>,
    /// What the rules said of it; `null` when they are off.
    pub auto: Option<AutoNote>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Record {
    #[serde(flatten)]
    view: View,
}

impl Versioned for Record {
    const SCHEMA: u32 = SCHEMA;
    fn schema(&self) -> u32 {
        self.view.schema
    }
}

impl Owned for Record {
    fn owner(&self) -> Identity {
        NOBODY
    }
}

/// The view of `scan` (already ticked), as `writer` running every `every` writes it, at `now`
/// (seconds since the Unix epoch). `None` when Pier's own identity cannot be read.
pub fn of(
    system: &System,
    writer: Who,
    every: Duration,
    scan: &Scan,
    pressure: Option<&MemoryPressure>,
    now: u64,
) -> Option<View> {
    let me = own_identity(system.probe.as_ref())?;
    let resources = seen(scan);
    Some(View {
        schema: SCHEMA,
        written_at: now,
        by: writer.words().to_owned(),
        pid: me.pid,
        start_time: me.start_time,
        every_seconds: every.as_secs().max(1),
        pressure: pressure.cloned(),
        resources,
    })
}

/// Each card of `scan`, as a view holds it.
pub fn seen(scan: &Scan) -> Vec<Seen> {
    scan.projects
        .iter()
        .flat_map(|p| {
            p.resources.iter().map(|r| Seen {
                id: r.id.clone(),
                project: p.path.clone(),
                kind: r.kind.clone(),
                level: r.level,
                idle: r.idle.clone(),
                auto: r.auto.clone(),
            })
        })
        .collect()
}

/// Pier's own identity, read from the kernel.
fn own_identity(probe: &dyn Probe) -> Option<Identity> {
    match probe.identity(probe.own_pid()) {
        IdentityRead::Alive { identity, .. } => Some(identity),
        _ => None,
    }
}

/// Writes `view` over the last one.
pub fn write(store: &Store, view: &View) -> Result<(), StoreError> {
    store.put_or_update(RECORD, &Record { view: view.clone() })
}

/// Writes the view of `scan`; a failure is logged, never stops the scheduler. Why: the view
/// only informs `pier auto`; a scheduler that stopped acting over it would be worse.
pub fn write_or_log(
    system: &System,
    writer: Who,
    every: Duration,
    scan: &Scan,
    pressure: Option<&MemoryPressure>,
) {
    let Some(view) = of(system, writer, every, scan, pressure, super::pause::now()) else {
        tracing::warn!("the scheduler's view not written: Pier's own identity could not be read");
        return;
    };
    if let Err(e) = write(&system.store, &view) {
        tracing::warn!("the scheduler's view not written: {e}");
    }
}

/// The last view written, whatever its age; `None` when there is none.
pub fn read(store: &Store) -> Result<Option<View>, StoreError> {
    Ok(store.get::<Record>(RECORD)?.map(|r| r.view))
}

/// Whether `view` speaks for a scheduler that runs now: written within a few of its intervals
/// before `now`, and its writer (`writer`, as read now) is still the same process. Why both: a
/// writer that exited leaves its view behind, and a pid reused by another process must not make
/// an old view look current.
pub fn fresh(view: &View, writer: &IdentityRead, now: u64) -> bool {
    let within = view.every_seconds * FRESH_INTERVALS + FRESH_SLACK;
    let same = matches!(writer, IdentityRead::Alive { identity, .. }
        if identity.pid == view.pid && identity.start_time == view.start_time);
    same && now <= view.written_at + within
}

/// The last view, when its writer runs now ([`fresh`]).
pub fn running(system: &System, now: u64) -> Result<Option<View>, StoreError> {
    Ok(read(&system.store)?.filter(|v| fresh(v, &system.probe.identity(v.pid), now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(written_at: u64) -> View {
        View {
            schema: SCHEMA,
            written_at,
            by: "pier watch".into(),
            pid: 42,
            start_time: 7,
            every_seconds: 10,
            pressure: None,
            resources: Vec::new(),
        }
    }

    fn alive(pid: u32, start_time: u64) -> IdentityRead {
        IdentityRead::Alive {
            identity: Identity { pid, start_time },
            exe: None,
        }
    }

    /// A view is the running scheduler's only while its writer is the same process and it was
    /// written within three intervals and the slack; a reused pid or an old view is not.
    #[test]
    fn a_view_is_fresh_only_while_its_writer_runs_and_it_is_recent() {
        let v = view(1000);
        assert!(fresh(&v, &alive(42, 7), 1000 + 45));
        assert!(
            !fresh(&v, &alive(42, 7), 1000 + 46),
            "three intervals and the slack"
        );
        assert!(
            !fresh(&v, &alive(42, 8), 1001),
            "the pid is another process now"
        );
        assert!(!fresh(&v, &IdentityRead::Gone, 1001), "its writer exited");
        assert!(!fresh(&v, &IdentityRead::Unknown("eperm".into()), 1001));
    }

    /// A view replaces the one before it, whoever wrote that one.
    #[test]
    fn a_view_replaces_the_last_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_at(dir.path().join("state")).unwrap();
        assert_eq!(read(&store).unwrap(), None);
        write(&store, &view(1)).unwrap();
        let mut next = view(2);
        next.pid = 43;
        write(&store, &next).unwrap();
        assert_eq!(read(&store).unwrap(), Some(next));
    }
}
