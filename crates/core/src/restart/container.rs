//! A container's restart from its stop's record (`ctr-…`, docs/design.md §4a): the same
//! container started again through its engine — its configuration is the engine's, so
//! nothing is rebuilt or re-run by Pier.
//!
//! Refused, with the reason, when the stop was not complete, the engine cannot be asked, the
//! container was removed (`docker rm`), it already runs, or a recorded port is taken. Then
//! started, its new run recorded at once, and ready when every recorded port listens again on
//! the host (the engine's proxy) and, where its namespace can be read, inside the container
//! on its container port (the server itself). Pier does not supervise what it restarted.

use std::time::{Duration, Instant, SystemTime};

use super::error::{NotFound, NotRestartable};
use super::listener_on;
use crate::containers::control::{Control, EngineAccess, State, Unsent};
use crate::containers::EngineError;
use crate::model::history::{RestartReport, RestartResult};
use crate::model::outcome::ResourceResult;
use crate::model::snapshot::{ContainerRestart, ContainerSnapshot};
use crate::model::target::{record_prefix_of, RecordName, TargetId, TargetKind};
use crate::probe::{Probe, ProbeError, SocketTable, TcpState};
use crate::stop::reconcile::container::{self as reconcile, Settled};
use crate::store::Store;

/// How often the ports are looked at while a restart waits for them.
const POLL: Duration = Duration::from_millis(50);

/// How long the engine's start may take to answer (network and storage set up).
const START_LIMIT: Duration = Duration::from_secs(30);

/// Whether `name` is a container's stop record (`ctr-…`).
/// The record a user named: its name (`ctr-…`) or the card's id (`container-…`: its newest).
pub fn find(store: &Store, name_or_id: &str) -> Result<(String, ContainerSnapshot), NotFound> {
    if name_or_id.starts_with(record_prefix_of(TargetKind::Container)) {
        return match store.get::<ContainerSnapshot>(name_or_id) {
            Ok(Some(s)) => Ok((name_or_id.to_owned(), s)),
            Ok(None) => Err(NotFound::Record(name_or_id.to_owned())),
            Err(e) => Err(NotFound::Store(e.to_string())),
        };
    }
    let none = || NotFound::RecordFor(name_or_id.to_owned());
    let target: TargetId = name_or_id.parse().map_err(|_| none())?;
    super::newest(store, &target.record_prefix())?.ok_or_else(none)
}

/// The restart lock of the container a record `name` is of: one per container, whichever of
/// its records is named (a prune takes it too).
pub(crate) fn restart_lock(name: &str) -> String {
    match name.parse::<RecordName>() {
        Ok(record) => format!("restart-{}", record.target),
        Err(_) => format!("restart-{name}"),
    }
}

/// Only a complete stop may be undone: one that stopped the container's run — signalled, or
/// with a signal the engine did not confirm, or reconciled after Pier ended mid-stop
/// (`stop/reconcile/container.rs`): whether the signal went out is then unknown, but the run
/// ended, which is what a restart needs.
pub fn stop_was_complete(s: &ContainerSnapshot) -> Result<(), NotRestartable> {
    match (s.signalled, s.result) {
        (Some(true) | None, Some(ResourceResult::Stopped)) => Ok(()),
        (_, None) => Err(NotRestartable::ContainerUnfinished),
        (Some(false), _) | (_, Some(ResourceResult::Refused | ResourceResult::Failed)) => {
            Err(NotRestartable::ContainerNeverStopped)
        }
        (_, Some(r)) => Err(NotRestartable::ContainerIncomplete(r.as_str())),
    }
}

/// Everything that argues against starting the container of `s` again now, first reason
/// only; `sockets`: the host's listeners now.
pub(super) fn refusal(
    engine: &dyn Control,
    s: &ContainerSnapshot,
    sockets: &Result<SocketTable, ProbeError>,
) -> Result<(), NotRestartable> {
    stop_was_complete(s)?;
    match engine
        .state(&s.container_id)
        .map_err(NotRestartable::Engine)?
    {
        None => return Err(NotRestartable::ContainerRemoved(s.name.clone())),
        Some(now) if now.running => {
            return Err(NotRestartable::ContainerRuns {
                name: s.name.clone(),
                started_at: now.started_at,
            })
        }
        Some(_) => {}
    }
    let table = sockets
        .as_ref()
        .map_err(|e| NotRestartable::PortsUnread(e.clone()))?;
    for p in &s.ports {
        if let Some(taken) = listener_on(table, p.host_addr()) {
            return Err(NotRestartable::PortTaken {
                endpoint: taken.to_string(),
                holder: None,
            });
        }
    }
    Ok(())
}

/// A record as a reader should see it: an unfinished one reconciled
/// (`stop/reconcile/container.rs`); with why it was left unfinished, or why the reconciled
/// view was not written.
pub(super) fn settled(
    store: &Store,
    engine: Result<&dyn Control, &EngineError>,
    name: &str,
    s: ContainerSnapshot,
) -> super::record::Settled<ContainerSnapshot> {
    if s.result.is_some() {
        return (s, None, None);
    }
    match reconcile::reconcile(store, engine, name, &s) {
        Settled::Written(on_disk) => (on_disk, None, None),
        Settled::Shown(view, why) => (view, Some(why), None),
        Settled::Left(why) => (s, None, Some(why.to_string())),
    }
}

/// Starts the container of record `name` again, waiting up to `wait` for its ports.
pub fn restart(
    probe: &dyn Probe,
    store: &Store,
    engines: &dyn EngineAccess,
    name: &str,
    wait: Duration,
) -> RestartReport {
    let mut report = RestartReport::not_started(name, RestartResult::Refused, String::new());
    let _lock = match store.lock(&restart_lock(name)) {
        Ok(lock) => lock,
        Err(e) => return failed(report, e.to_string()),
    };
    let (s, engine) = match ready_to_start(probe, store, engines, name) {
        Ok(found) => found,
        Err((result, why)) => {
            (report.result, report.reason) = (result, why);
            return report;
        }
    };
    let now = match start(store, engine.as_ref(), name, &s) {
        Ok(now) => now,
        Err((result, why)) => {
            (report.result, report.reason) = (result, why);
            return report;
        }
    };
    report.pid = now.pid;
    (report.result, report.reason) = await_ready(probe, store, name, &s, &now, wait);
    report
}

fn failed(mut r: RestartReport, why: String) -> RestartReport {
    (r.result, r.reason) = (RestartResult::Failed, why);
    r
}

/// Why a restart did not start, and how it ended.
type NotStarted = (RestartResult, String);

/// The record `name`, settled, and its engine, once every rule allows its start.
fn ready_to_start(
    probe: &dyn Probe,
    store: &Store,
    engines: &dyn EngineAccess,
    name: &str,
) -> Result<(ContainerSnapshot, Box<dyn Control>), NotStarted> {
    let failed = |why: String| (RestartResult::Failed, why);
    let refused = |why: String| (RestartResult::Refused, why);
    let s = match store.get::<ContainerSnapshot>(name) {
        Ok(Some(s)) => s,
        Ok(None) => return Err(failed(NotFound::Record(name.to_owned()).to_string())),
        Err(e) => return Err(failed(e.to_string())),
    };
    let engine = engines
        .connect(&s.engine_host)
        .map_err(|e| refused(e.to_string()))?;
    let s = match settled(store, Ok(engine.as_ref()), name, s) {
        (s, _, None) => s,
        (_, _, Some(why)) => return Err(refused(format!("the stop has not finished: {why}"))),
    };
    let sockets = probe.sockets(&[]);
    refusal(engine.as_ref(), &s, &sockets).map_err(|why| refused(why.to_string()))?;
    Ok((s, engine))
}

/// Its start through the engine, and the new run as the engine tells it.
fn start(
    store: &Store,
    engine: &dyn Control,
    name: &str,
    s: &ContainerSnapshot,
) -> Result<State, NotStarted> {
    let failed = |why: String| (RestartResult::Failed, why);
    // No answer to the start: it may have started, so the engine's account of it says.
    let unanswered = match engine.start(&s.container_id, START_LIMIT) {
        Ok(()) => None,
        Err(Unsent::Refused(why)) => return Err(failed(format!("it was not started: {why}"))),
        Err(Unsent::Unknown(why)) => Some(why),
    };
    match (engine.state(&s.container_id), unanswered) {
        (Ok(Some(now)), _) if now.running && now.started_at != s.started_at => Ok(now),
        (Ok(_), Some(why)) => Err(failed(format!(
            "its start got no answer ({why}), and it does not run"
        ))),
        (Ok(Some(now)), None) => {
            // A run began (its start time changed) and ended at once: recorded, not ready.
            if now.started_at != s.started_at {
                let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
                let run = ContainerRestart {
                    started_at: now.started_at.clone(),
                    at,
                    ready: false,
                };
                let _ = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
                    r.restarts.push(run);
                });
            }
            Err((
                RestartResult::NotReady,
                format!(
                    "container {} was started but does not run: it ended at once (`docker logs \
                     {}` says why)",
                    s.name, s.name
                ),
            ))
        }
        (Ok(None), _) => Err(failed(format!(
            "container {} vanished as it started",
            s.name
        ))),
        (Err(why), Some(unanswered)) => Err(failed(format!(
            "its start got no answer ({unanswered}), and whether it runs could not be asked: \
             {why}"
        ))),
        (Err(why), None) => Err((
            RestartResult::NotReady,
            format!("it was started, but its engine's account of it: {why}"),
        )),
    }
}

/// The new run recorded at once, then ready when its ports listen within `wait`.
fn await_ready(
    probe: &dyn Probe,
    store: &Store,
    name: &str,
    s: &ContainerSnapshot,
    now: &State,
    wait: Duration,
) -> (RestartResult, String) {
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let recorded = ContainerRestart {
        started_at: now.started_at.clone(),
        at,
        ready: false,
    };
    if let Err(e) = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
        r.restarts.push(recorded);
    }) {
        tracing::warn!("the restart of {name} could not be recorded: {e}");
    }
    let missing = wait_for_ports(probe, s, now.pid, wait);
    if !missing.is_empty() {
        return (
            RestartResult::NotReady,
            format!(
                "container {} was started, but within {} s these ports did not listen: {} \
                 (`docker logs {}` says why)",
                s.name,
                wait.as_secs_f64(),
                missing.join(", "),
                s.name
            ),
        );
    }
    let _ = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
        if let Some(last) = r.restarts.last_mut() {
            last.ready = true;
        }
    });
    (
        RestartResult::Ready,
        format!(
            "container {} runs again (run begun at {}), its ports listening",
            s.name, now.started_at
        ),
    )
}

/// The recorded ports that do not listen within `wait` (polled every 50 ms): on the host
/// (the engine's proxy, which listens as soon as the container starts) and, where the new
/// run's namespace can be read (`pid`, its first process), inside it on the container port —
/// the server itself. An unreadable namespace leaves the host's word alone.
fn wait_for_ports(
    probe: &dyn Probe,
    s: &ContainerSnapshot,
    pid: Option<u32>,
    wait: Duration,
) -> Vec<String> {
    let started = Instant::now();
    let is_its = |cgroup: &str| {
        crate::containers::processes::container_of_cgroup(cgroup) == Some(s.container_id.as_str())
    };
    loop {
        let inside = pid.and_then(|pid| crate::probe::namespace_sockets(pid, &is_its).ok());
        let missing: Vec<String> = match probe.sockets(&[]) {
            Ok(table) => s
                .ports
                .iter()
                .filter(|p| {
                    let on_host = listener_on(&table, p.host_addr()).is_some();
                    let served = inside.as_ref().is_none_or(|inside| {
                        inside.iter().any(|t| {
                            t.state == TcpState::Listen && t.local.port() == p.container_port
                        })
                    });
                    !(on_host && served)
                })
                .map(|p| format!("{}:{} → {}", p.address, p.port, p.container_port))
                .collect(),
            Err(e) => vec![format!("(the socket table could not be read: {e})")],
        };
        if missing.is_empty() || started.elapsed() >= wait {
            return missing;
        }
        std::thread::sleep(POLL.min(wait.saturating_sub(started.elapsed())));
    }
}

/// An engine connected to, or why it could not be.
#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::containers::control::{Measured, State};
    use crate::containers::{EngineRead, Unmeasured};
    use crate::model::snapshot::SnapshotProject;
    use crate::probe::fake::FakeProbe;

    const HOST: &str = "unix:///var/run/docker.sock";

    /// An engine that knows each container's state by id, and starts one by giving it a new
    /// run.
    #[derive(Clone, Default)]
    struct Engine(Arc<Mutex<Vec<State>>>);

    impl EngineAccess for Engine {
        fn read(&self) -> Vec<EngineRead> {
            Vec::new()
        }
        fn connect(&self, _host: &str) -> Result<Box<dyn Control>, EngineError> {
            Ok(Box::new(self.clone()))
        }
    }

    impl Control for Engine {
        fn state(&self, id: &str) -> Result<Option<State>, EngineError> {
            Ok(self.0.lock().unwrap().iter().find(|s| s.id == id).cloned())
        }
        fn activity(&self, _: &str, _: &mut dyn FnMut()) -> Result<Measured, Unmeasured> {
            Err(Unmeasured::NotRead)
        }
        fn signal(&self, _: &str, _: &str) -> Result<(), Unsent> {
            Err(Unsent::Refused("not in these tests".into()))
        }
        fn wait_stopped(&self, _: &str, _: Duration) -> Result<(), EngineError> {
            Ok(())
        }
        fn start(&self, id: &str, _: Duration) -> Result<(), Unsent> {
            let mut all = self.0.lock().unwrap();
            let s = all.iter_mut().find(|s| s.id == id).unwrap();
            s.running = true;
            s.started_at = "2026-12-03T09:00:00Z".into();
            Ok(())
        }
    }

    fn id(n: u8) -> String {
        format!("{n:x}").repeat(64)
    }

    fn state(n: u8, running: bool) -> State {
        State {
            id: id(n),
            name: format!("c{n}"),
            running,
            started_at: "2026-12-03T08:00:00Z".into(),
            stop_signal: "SIGTERM".into(),
            ..State::default()
        }
    }

    fn record(n: u8, result: Option<ResourceResult>, mark: bool) -> ContainerSnapshot {
        ContainerSnapshot {
            schema: 1,
            id: format!("container-{}", &id(n)[..12]),
            container_id: id(n),
            name: format!("c{n}"),
            image: "busybox".into(),
            engine: "Docker".into(),
            engine_host: HOST.into(),
            started_at: "2026-12-03T08:00:00Z".into(),
            stop_signal: "SIGTERM".into(),
            created_at: "2026-12-03T08:10:00Z".into(),
            project: SnapshotProject {
                name: "shop".into(),
                path: "/w/shop".into(),
                marker: None,
            },
            ports: Vec::new(),
            evidence: Vec::new(),
            signalled: result.map(|_| true),
            signals_may_follow: Some(mark),
            reconciled_at: None,
            outcome: None,
            result,
            reason: None,
            restarts: Vec::new(),
            batch: None,
            requested_by: Default::default(),
        }
    }

    fn store_with(records: &[(&str, ContainerSnapshot)]) -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_at(dir.path()).unwrap();
        for (name, r) in records {
            store.put(name, r).unwrap();
        }
        (store, dir)
    }

    #[test]
    fn history_asks_the_engine_and_reconciles_what_pier_left_unfinished() {
        let stopped = Some(ResourceResult::Stopped);
        let (store, _dir) = store_with(&[
            ("ctr-111111111111-3", record(1, stopped, true)),
            ("ctr-222222222222-1", record(2, stopped, true)),
            ("ctr-333333333333-2", record(3, None, true)),
        ]);
        let engine = Engine(Arc::new(Mutex::new(vec![
            state(1, false),
            state(2, true),
            state(3, false),
        ])));
        let probe = FakeProbe::default();
        let (entries, damaged) = crate::restart::history_with(&probe, &store, &engine).unwrap();
        assert!(damaged.is_empty(), "{damaged:?}");
        let names: Vec<&str> = entries.iter().map(|e| e.snapshot.as_str()).collect();
        assert_eq!(
            names,
            [
                "ctr-111111111111-3",
                "ctr-333333333333-2",
                "ctr-222222222222-1"
            ],
            "newest first, by the time in each name"
        );
        assert!(entries[0].restartable, "{:?}", entries[0]);
        assert!(entries[2]
            .why_not
            .as_deref()
            .unwrap()
            .contains("already runs"));
        // Pier ended after the mark; the run has ended since: a complete stop, written.
        assert_eq!(entries[1].result.as_deref(), Some("stopped"));
        assert!(entries[1].reconciled_at.is_some());
        assert!(entries[1].restartable, "{:?}", entries[1]);
        let on_disk = store
            .get::<ContainerSnapshot>("ctr-333333333333-2")
            .unwrap();
        assert_eq!(on_disk.unwrap().result, Some(ResourceResult::Stopped));
    }

    #[test]
    fn a_restart_starts_the_same_container_and_records_its_new_run() {
        let (store, _dir) = store_with(&[(
            "ctr-111111111111-3",
            record(1, Some(ResourceResult::Stopped), true),
        )]);
        let engine = Engine(Arc::new(Mutex::new(vec![state(1, false)])));
        let probe = FakeProbe::default();
        let r = restart(
            &probe,
            &store,
            &engine,
            "ctr-111111111111-3",
            Duration::from_millis(100),
        );
        assert_eq!(r.result, RestartResult::Ready, "{r:#?}");
        let rec = store
            .get::<ContainerSnapshot>("ctr-111111111111-3")
            .unwrap()
            .unwrap();
        assert_eq!(rec.restarts.len(), 1);
        assert_eq!(rec.restarts[0].started_at, "2026-12-03T09:00:00Z");
        assert!(rec.restarts[0].ready);
        // It runs now: a second restart is refused.
        let again = restart(
            &probe,
            &store,
            &engine,
            "ctr-111111111111-3",
            Duration::from_millis(100),
        );
        assert_eq!(again.result, RestartResult::Refused, "{again:#?}");
    }

    #[test]
    fn a_partial_or_refused_stop_is_never_restarted() {
        for result in [ResourceResult::PartiallyStopped, ResourceResult::Refused] {
            let mut r = record(1, Some(result), true);
            if result == ResourceResult::Refused {
                r.signalled = Some(false);
            }
            assert!(stop_was_complete(&r).is_err(), "{result:?}");
        }
        assert_eq!(
            stop_was_complete(&record(1, Some(ResourceResult::Stopped), true)),
            Ok(())
        );
    }
}
