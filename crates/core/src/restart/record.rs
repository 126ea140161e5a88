//! A kind of stop record — a tree's snapshot (`snap-…`), a container's stop record (`ctr-…`) —
//! and what a read of the history does with each: settle an unfinished stop (`stop/reconcile`),
//! say why it cannot be restarted now, and make its line. `pier history` is one loop over the
//! kinds ([`history_of`]); a third kind of target adds one implementation.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::NotRestartable;
use super::{container, trust, Now};
use crate::containers::control::{Control, EngineAccess};
use crate::containers::EngineError;
use crate::model::history::{HistoryEntry, HistoryRestart};
use crate::model::snapshot::{ContainerSnapshot, Snapshot};
use crate::model::target::{record_prefix_of, TargetKind};
use crate::probe::{Probe, ProbeError, SocketTable};
use crate::store::{Owned, Store, StoreError, Versioned};

/// A record as a read settled it, why the reconciled record could not be written, and why it
/// was left unfinished.
pub type Settled<R> = (R, Option<String>, Option<String>);

/// One kind of stop record.
pub trait Record: Sized + Serialize + DeserializeOwned + Versioned + Owned {
    /// The kind of target whose stops it records.
    const KIND: TargetKind;
    /// What one read of the history reads once for all of this kind's records.
    type Now<'a>;

    /// That read.
    fn now<'a>(probe: &'a (dyn Probe + Sync), engines: &'a dyn EngineAccess) -> Self::Now<'a>;

    /// The record as it is settled: finished already, or an unfinished stop reconciled now;
    /// with why the reconciled record could not be written, and why it was left unfinished.
    fn settle(self, now: &Self::Now<'_>, store: &Store, name: &str) -> Settled<Self>;

    /// Why it cannot be restarted now, if it cannot.
    fn why_not(&self, now: &Self::Now<'_>) -> Option<NotRestartable>;

    /// Its line in the history, with none of `not_written`, `restartable`, `why_not` yet.
    fn entry(&self, name: String, now: &Self::Now<'_>) -> HistoryEntry;
}

/// The history of one kind of record: each settled and judged, with the names of those that
/// could not be read.
pub fn history_of<R: Record>(
    probe: &(dyn Probe + Sync),
    store: &Store,
    engines: &dyn EngineAccess,
) -> Result<(Vec<HistoryEntry>, Vec<String>), StoreError> {
    let now = R::now(probe, engines);
    let listing = store.list::<R>(record_prefix_of(R::KIND))?;
    let entries = listing
        .records
        .into_iter()
        .map(|(name, s)| line(s, name, &now, store))
        .collect();
    let damaged = listing.damaged.iter().map(ToString::to_string).collect();
    Ok((entries, damaged))
}

/// One record's line: settled first, then judged.
fn line<R: Record>(s: R, name: String, now: &R::Now<'_>, store: &Store) -> HistoryEntry {
    let (s, not_written, left) = s.settle(now, store, &name);
    let why_not = match left {
        Some(why) => Some(format!("the stop has not finished: {why}")),
        None => s.why_not(now).as_ref().map(ToString::to_string),
    };
    HistoryEntry {
        not_written,
        restartable: why_not.is_none(),
        why_not,
        ..s.entry(name, now)
    }
}

impl Record for Snapshot {
    const KIND: TargetKind = TargetKind::Tree;
    type Now<'a> = Now<'a>;

    fn now<'a>(probe: &'a (dyn Probe + Sync), _: &'a dyn EngineAccess) -> Now<'a> {
        Now::read(probe)
    }

    fn settle(self, now: &Now<'_>, store: &Store, name: &str) -> Settled<Self> {
        super::settled(now.probe, store, name, self)
    }

    fn why_not(&self, now: &Now<'_>) -> Option<NotRestartable> {
        super::refusal(now, self).err()
    }

    fn entry(&self, name: String, now: &Now<'_>) -> HistoryEntry {
        let replay = trust::replay(self, now.me);
        HistoryEntry {
            snapshot: name,
            id: self.id.clone(),
            kind: self.kind.clone(),
            project: self.project.path.clone(),
            root_command: super::rules::target(self)
                .map(|m| m.argv.iter().map(|a| super::lossy(&a.0)).collect())
                .ok()
                .unwrap_or_default(),
            ports: self
                .ports
                .iter()
                .map(crate::model::card::Port::endpoint)
                .collect(),
            helper_ports: super::helper_endpoints(self),
            stopped_at: self.created_at.clone(),
            result: self.result.map(|r| r.as_str().to_owned()),
            signalled: self.signalled,
            reason: self.reason.clone(),
            reconciled_at: self.reconciled_at.clone(),
            not_written: None,
            restartable: false,
            why_not: None,
            program: replay.program,
            folder: replay.folder,
            code_env: replay.code_env,
            restarts: self
                .restarts
                .iter()
                .map(|r| HistoryRestart {
                    at: r.at.clone(),
                    pid: Some(r.identity.pid),
                    ready: r.ready,
                    exited: r.exited.clone(),
                })
                .collect(),
            batch: self.batch.clone(),
            requested_by: self.requested_by.clone(),
            set_aside: self.set_aside.clone(),
        }
    }
}

/// A read of the history's containers: the socket table, and one connection per engine
/// however many of its records there are.
pub struct Engines<'a> {
    engines: &'a dyn EngineAccess,
    sockets: Result<SocketTable, ProbeError>,
    connected: RefCell<HashMap<String, Rc<Connected>>>,
}

type Connected = Result<Box<dyn Control>, EngineError>;

impl Engines<'_> {
    /// The engine at `host`, connected once.
    fn engine(&self, host: &str) -> Rc<Connected> {
        let mut connected = self.connected.borrow_mut();
        let engine = connected
            .entry(host.to_owned())
            .or_insert_with(|| Rc::new(self.engines.connect(host)));
        engine.clone()
    }
}

fn as_control(c: &Connected) -> Result<&dyn Control, &EngineError> {
    c.as_ref().map(AsRef::as_ref)
}

impl Record for ContainerSnapshot {
    const KIND: TargetKind = TargetKind::Container;
    type Now<'a> = Engines<'a>;

    fn now<'a>(probe: &'a (dyn Probe + Sync), engines: &'a dyn EngineAccess) -> Engines<'a> {
        Engines {
            engines,
            sockets: probe.sockets(&[]),
            connected: RefCell::default(),
        }
    }

    fn settle(self, now: &Engines<'_>, store: &Store, name: &str) -> Settled<Self> {
        let engine = now.engine(&self.engine_host);
        container::settled(store, as_control(&engine), name, self)
    }

    fn why_not(&self, now: &Engines<'_>) -> Option<NotRestartable> {
        let engine = now.engine(&self.engine_host);
        container::stop_was_complete(self)
            .err()
            .or_else(|| match as_control(&engine) {
                Ok(engine) => container::refusal(engine, self, &now.sockets).err(),
                Err(why) => Some(NotRestartable::Engine(why.clone())),
            })
    }

    fn entry(&self, name: String, _: &Engines<'_>) -> HistoryEntry {
        HistoryEntry {
            snapshot: name,
            id: self.id.clone(),
            kind: Some(format!("container {} ({})", self.name, self.image)),
            project: self.project.path.clone(),
            root_command: Vec::new(),
            ports: self
                .ports
                .iter()
                .map(|p| p.host_addr().to_string())
                .collect(),
            helper_ports: Vec::new(),
            stopped_at: self.created_at.clone(),
            result: self.result.map(|r| r.as_str().to_owned()),
            signalled: self.signalled,
            reason: self.reason.clone(),
            reconciled_at: self.reconciled_at.clone(),
            not_written: None,
            restartable: false,
            why_not: None,
            // Its engine starts it again: no program, folder or environment of Pier's.
            program: None,
            folder: None,
            code_env: Vec::new(),
            restarts: self
                .restarts
                .iter()
                .map(|r| HistoryRestart {
                    at: r.at.clone(),
                    pid: None,
                    ready: r.ready,
                    exited: None,
                })
                .collect(),
            batch: self.batch.clone(),
            requested_by: self.requested_by.clone(),
            set_aside: Vec::new(),
        }
    }
}
