//! A container's restart from its stop's record (`ctr-…`, docs/design.md §4a): the same
//! container started again through its engine — its configuration is the engine's, so
//! nothing is rebuilt or re-run by Pier.
//!
//! Refused, with the reason, when the stop was not complete, the engine cannot be asked, the
//! container was removed (`docker rm`), it already runs, or a recorded port is taken. Then
//! started, its new run recorded at once, and ready when every recorded port listens again on
//! the host (the engine's proxy) and, where its namespace can be read, inside the container
//! on its container port (the server itself). Pier does not supervise what it restarted.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant, SystemTime};

use crate::containers::control::{Control, EngineAccess};
use crate::diagnose::connections;
use crate::model::history::{HistoryEntry, RestartReport, RestartResult};
use crate::model::outcome::ResourceResult;
use crate::model::snapshot::{ContainerRestart, ContainerSnapshot};
use crate::probe::{Probe, SocketTable, TcpState};
use crate::stop::container::{CARD_PREFIX, RECORD_PREFIX};
use crate::stop::reconcile::container::{self as reconcile, Settled};
use crate::store::Store;

/// How often the ports are looked at while a restart waits for them.
const POLL: Duration = Duration::from_millis(50);

/// Whether `name` is a container's stop record (`ctr-…`).
pub fn is_record(name: &str) -> bool {
    name.starts_with(RECORD_PREFIX)
}

/// The record a user named: its name (`ctr-…`) or the card's id (`container-…`: its newest).
pub fn find(store: &Store, name_or_id: &str) -> Result<(String, ContainerSnapshot), String> {
    if is_record(name_or_id) {
        return match store.get::<ContainerSnapshot>(name_or_id) {
            Ok(Some(s)) => Ok((name_or_id.to_owned(), s)),
            Ok(None) => Err(format!("there is no record {name_or_id}")),
            Err(e) => Err(e.to_string()),
        };
    }
    let hex = name_or_id.trim_start_matches(CARD_PREFIX);
    super::newest(store, &format!("{RECORD_PREFIX}{hex}-"))?
        .ok_or_else(|| format!("there is no stop record for {name_or_id}"))
}

/// Only a complete stop may be undone: one that signalled and stopped the container, or one
/// reconciled after Pier ended mid-stop whose run had ended (`stop/reconcile/container.rs`).
pub fn stop_was_complete(s: &ContainerSnapshot) -> Result<(), String> {
    match (s.signalled, s.result) {
        (Some(true), Some(ResourceResult::Stopped)) => Ok(()),
        (None, Some(ResourceResult::Stopped)) if s.reconciled_at.is_some() => Ok(()),
        (_, None) => Err("the stop has not finished (Pier ended during it)".to_owned()),
        (Some(false), _) | (_, Some(ResourceResult::Refused | ResourceResult::Failed)) => {
            Err("the stop sent nothing: the container was never stopped".into())
        }
        (_, Some(r)) => Err(format!("the stop was {}, not complete", r.as_str())),
    }
}

/// Everything that argues against starting the container of `s` again now, first reason
/// only; `sockets`: the host's listeners now.
fn refusal(
    engine: &dyn Control,
    s: &ContainerSnapshot,
    sockets: &Result<SocketTable, String>,
) -> Result<(), String> {
    stop_was_complete(s)?;
    match engine.state(&s.container_id)? {
        None => {
            return Err(format!(
                "container {} was removed since its stop, so it cannot be started again",
                s.name
            ))
        }
        Some(now) if now.running => {
            return Err(format!(
                "container {} already runs (its run began at {})",
                s.name, now.started_at
            ))
        }
        Some(_) => {}
    }
    let table = sockets
        .as_ref()
        .map_err(|e| format!("the ports could not be checked: {e}"))?;
    for p in &s.ports {
        if let Some(taken) = listener_on(table, &p.address, p.port) {
            return Err(format!("port {taken} is taken"));
        }
    }
    Ok(())
}

/// A host listener that serves `address:port` or is served by it, if any.
fn listener_on(table: &SocketTable, address: &str, port: u16) -> Option<SocketAddr> {
    let ip: IpAddr = address
        .parse()
        .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let want = SocketAddr::new(ip, port);
    table
        .sockets
        .iter()
        .find(|t| {
            t.state == TcpState::Listen
                && (connections::serves(t.local, want) || connections::serves(want, t.local))
        })
        .map(|t| t.local)
}

/// A record as a reader should see it: an unfinished one reconciled
/// (`stop/reconcile/container.rs`); with why it was left unfinished, or why the reconciled
/// view was not written.
fn settled(
    store: &Store,
    engine: Result<&dyn Control, &str>,
    name: &str,
    s: ContainerSnapshot,
) -> (ContainerSnapshot, Result<(), String>, Option<String>) {
    if s.result.is_some() {
        return (s, Ok(()), None);
    }
    match reconcile::reconcile(store, engine, name, &s) {
        Settled::Written(on_disk) => (on_disk, Ok(()), None),
        Settled::Shown(view, why) => (view, Ok(()), Some(why)),
        Settled::Left(why) => (s, Err(why), None),
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
    let failed = |mut r: RestartReport, why: String| {
        (r.result, r.reason) = (RestartResult::Failed, why);
        r
    };
    let _lock = match store.lock(&format!("restart-{name}")) {
        Ok(lock) => lock,
        Err(e) => return failed(report, e.to_string()),
    };
    let s = match store.get::<ContainerSnapshot>(name) {
        Ok(Some(s)) => s,
        Ok(None) => return failed(report, format!("there is no record {name}")),
        Err(e) => return failed(report, e.to_string()),
    };
    let engine = match engines.connect(&s.engine_host) {
        Ok(engine) => engine,
        Err(why) => {
            report.reason = why;
            return report;
        }
    };
    let s = match settled(store, Ok(engine.as_ref()), name, s) {
        (s, Ok(()), _) => s,
        (_, Err(why), _) => {
            report.reason = format!("the stop has not finished: {why}");
            return report;
        }
    };
    let sockets = probe.sockets(&[]).map_err(|e| e.to_string());
    if let Err(why) = refusal(engine.as_ref(), &s, &sockets) {
        report.reason = why;
        return report;
    }
    if let Err(why) = engine.start(&s.container_id) {
        return failed(report, why);
    }
    let now = match engine.state(&s.container_id) {
        Ok(Some(now)) => now,
        Ok(None) => {
            return failed(
                report,
                format!("container {} vanished as it started", s.name),
            )
        }
        Err(why) => return failed(report, format!("it was started, but {why}")),
    };
    report.pid = now.pid;
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let recorded = |ready| ContainerRestart {
        started_at: now.started_at.clone(),
        at: at.clone(),
        ready,
    };
    if let Err(e) = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
        r.restarts.push(recorded(false));
    }) {
        tracing::warn!("the restart of {name} could not be recorded: {e}");
    }
    let missing = wait_for_ports(probe, &s, now.pid, wait);
    if missing.is_empty() {
        let _ = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
            if let Some(last) = r.restarts.last_mut() {
                last.ready = true;
            }
        });
        report.result = RestartResult::Ready;
        report.reason = format!(
            "container {} runs again (run begun at {}), its ports listening",
            s.name, now.started_at
        );
    } else {
        report.result = RestartResult::NotReady;
        report.reason = format!(
            "container {} was started, but within {} s these ports did not listen: {} \
             (`docker logs {}` says why)",
            s.name,
            wait.as_secs_f64(),
            missing.join(", "),
            s.name
        );
    }
    report
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
                    let on_host = listener_on(&table, &p.address, p.port).is_some();
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
type Connected = Result<Box<dyn Control>, String>;

/// Every container stop record as a history line, with whether it can be restarted now
/// (asked of its engine: advice, a restart checks again); and the unreadable records.
pub fn history(
    probe: &dyn Probe,
    store: &Store,
    engines: &dyn EngineAccess,
) -> Result<(Vec<HistoryEntry>, Vec<String>), String> {
    let listing = store
        .list::<ContainerSnapshot>(RECORD_PREFIX)
        .map_err(|e| e.to_string())?;
    let sockets = probe.sockets(&[]).map_err(|e| e.to_string());
    let mut connected: Vec<(String, Connected)> = Vec::new();
    let entries = listing
        .records
        .into_iter()
        .map(|(name, s)| {
            if !connected.iter().any(|(h, _)| *h == s.engine_host) {
                let c = engines.connect(&s.engine_host);
                connected.push((s.engine_host.clone(), c));
            }
            let engine = connected
                .iter()
                .find(|(h, _)| *h == s.engine_host)
                .map(|(_, c)| c.as_ref().map(AsRef::as_ref).map_err(String::as_str))
                .expect("connected above");
            let (s, left, not_written) = settled(store, engine, &name, s);
            let why_not = match left {
                Err(why) => Some(format!("the stop has not finished: {why}")),
                Ok(()) => stop_was_complete(&s).err().or_else(|| match engine {
                    Ok(engine) => refusal(engine, &s, &sockets).err(),
                    Err(why) => Some(why.to_owned()),
                }),
            };
            let (signalled, result, reason) = (
                s.signalled,
                s.result.map(|r| r.as_str().to_owned()),
                s.reason.clone(),
            );
            HistoryEntry {
                snapshot: name,
                id: s.id.clone(),
                kind: Some(format!("container {} ({})", s.name, s.image)),
                project: s.project.path.clone(),
                root_command: Vec::new(),
                ports: s
                    .ports
                    .iter()
                    .map(|p| {
                        SocketAddr::new(
                            p.address
                                .parse()
                                .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)),
                            p.port,
                        )
                        .to_string()
                    })
                    .collect(),
                helper_ports: Vec::new(),
                stopped_at: s.created_at.clone(),
                result,
                signalled,
                reason,
                reconciled_at: s.reconciled_at.clone(),
                not_written,
                restartable: why_not.is_none(),
                why_not,
            }
        })
        .collect();
    Ok((
        entries,
        listing.damaged.iter().map(ToString::to_string).collect(),
    ))
}
