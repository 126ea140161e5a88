//! Restart: bring a stopped resource back from its snapshot (DESIGN.md §4), and the history of
//! snapshots that says which can come back and why not.
//!
//! Invariants: Pier never builds or interprets a command string — the root's argv is exec'd
//! exactly as recorded (a recorded `sh -c '…'` is replayed as it was), with the recorded
//! environment only, in the recorded cwd, in a new session, stdin closed, output appended to a
//! log in the state folder. Refused, with the reason, when the stop was partial, the cwd or the
//! program is gone, a recorded port is taken, or the same command already runs in that folder.
//! Pier does not supervise what it restarted.

pub mod rules;
mod spawn;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::diagnose::connections;
use crate::probe::{Pid, Probe, TcpState};
use crate::stop::snapshot::{RecordedRestart, Snapshot};
use crate::store::Store;

/// How a restart ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartResult {
    /// Started, and every recorded port listens from the new tree.
    Ready,
    /// Started, but not every recorded port listened within the wait (see the log).
    NotReady,
    /// Not started: a rule said no.
    Refused,
    /// Not started: Pier could not (the record, the log, the exec).
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestartReport {
    pub snapshot: String,
    pub result: RestartResult,
    pub reason: String,
    /// The new root, once started.
    pub pid: Option<Pid>,
    pub start_time: Option<u64>,
    pub log: Option<String>,
    /// The last lines of the log, when not ready.
    pub log_tail: Vec<String>,
}

/// One line of `pier history`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    pub snapshot: String,
    pub id: String,
    pub project: String,
    pub root_command: Vec<String>,
    pub ports: Vec<String>,
    pub stopped_at: String,
    pub result: Option<String>,
    pub restartable: bool,
    pub why_not: Option<String>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn endpoint(address: &str, port: u16) -> String {
    if address.contains(':') {
        format!("[{address}]:{port}")
    } else {
        format!("{address}:{port}")
    }
}

/// Everything that argues against restarting `s` now, first reason only.
pub fn refusal(probe: &dyn Probe, s: &Snapshot) -> Result<(PathBuf, PathBuf), String> {
    rules::stop_was_complete(s)?;
    let root = rules::target(s).ok_or("the snapshot does not record its root")?;
    let env: Vec<Vec<u8>> = root
        .env
        .as_ref()
        .ok_or("the root's environment was not recorded")?
        .iter()
        .map(|e| e.0.clone())
        .collect();
    let cwd = root
        .cwd
        .as_ref()
        .map(|c| PathBuf::from(OsStr::from_bytes(&c.0)))
        .ok_or("the root's folder was not recorded")?;
    if !cwd.is_dir() {
        return Err(format!("the folder {} is gone", cwd.display()));
    }
    let arg0 = root.argv.first().ok_or("the recorded command is empty")?;
    let program = rules::resolve_program(&arg0.0, &cwd, &env)?;
    let table = probe
        .sockets(&[])
        .map_err(|e| format!("the ports could not be checked: {e}"))?;
    for port in &s.ports {
        let want = format!("{}:{}", bracketed(&port.address), port.port);
        let Ok(want) = want.parse() else { continue };
        if table.sockets.iter().any(|t| {
            t.state == TcpState::Listen
                && (connections::serves(t.local, want) || connections::serves(want, t.local))
        }) {
            return Err(format!(
                "port {} is taken",
                endpoint(&port.address, port.port)
            ));
        }
    }
    if let Some(pid) = already_running(probe, s, &cwd) {
        return Err(format!(
            "the same command already runs in {} (pid {pid})",
            cwd.display()
        ));
    }
    Ok((program, cwd))
}

fn bracketed(address: &str) -> String {
    if address.contains(':') {
        format!("[{address}]")
    } else {
        address.to_owned()
    }
}

/// A process of ours running a recorded member's exact argv in the recorded folder.
fn already_running(probe: &dyn Probe, s: &Snapshot, cwd: &Path) -> Option<Pid> {
    let list = probe.processes().ok()?;
    let uid = probe.current_uid();
    list.processes
        .iter()
        .filter(|p| p.uid == uid && !p.zombie && !p.argv.is_empty())
        .filter(|p| {
            s.members.iter().any(|m| {
                m.argv.len() == p.argv.len() && m.argv.iter().zip(&p.argv).all(|(a, b)| a.0 == *b)
            })
        })
        .find(|p| {
            probe
                .details(p.identity.pid)
                .and_then(|d| d.cwd.ok())
                .as_deref()
                == Some(cwd)
        })
        .map(|p| p.identity.pid)
}

/// Every snapshot, newest last, with whether it can be restarted now; and the unreadable ones.
pub fn history(
    probe: &dyn Probe,
    store: &Store,
) -> Result<(Vec<HistoryEntry>, Vec<String>), String> {
    let listing = store.list::<Snapshot>("snap-").map_err(|e| e.to_string())?;
    let entries = listing
        .records
        .into_iter()
        .map(|(name, s)| {
            let why_not = refusal(probe, &s).err();
            HistoryEntry {
                snapshot: name,
                id: s.id.clone(),
                project: s.project.path.clone(),
                root_command: rules::target(&s)
                    .map(|m| m.argv.iter().map(|a| lossy(&a.0)).collect())
                    .unwrap_or_default(),
                ports: s
                    .ports
                    .iter()
                    .map(|p| endpoint(&p.address, p.port))
                    .collect(),
                stopped_at: s.created_at.clone(),
                result: s.result.map(|r| r.as_str().to_owned()),
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

/// The snapshot a user named: a record name (`snap-…`), or a resource id (its newest one).
pub fn find(store: &Store, name_or_id: &str) -> Result<(String, Snapshot), String> {
    if name_or_id.starts_with("snap-") {
        return match store.get::<Snapshot>(name_or_id) {
            Ok(Some(s)) => Ok((name_or_id.to_owned(), s)),
            Ok(None) => Err(format!("there is no snapshot {name_or_id}")),
            Err(e) => Err(e.to_string()),
        };
    }
    let listing = store
        .list::<Snapshot>(&format!("snap-{name_or_id}-"))
        .map_err(|e| e.to_string())?;
    listing
        .records
        .into_iter()
        .max_by_key(|(name, _)| {
            name.rsplit('-')
                .next()
                .and_then(|ms| ms.parse::<u128>().ok())
        })
        .ok_or_else(|| format!("there is no snapshot for {name_or_id}"))
}

/// Restarts the snapshot `name`, waiting up to `wait` for its ports.
pub fn restart(probe: &dyn Probe, store: &Store, name: &str, wait: Duration) -> RestartReport {
    let mut report = RestartReport {
        snapshot: name.to_owned(),
        result: RestartResult::Refused,
        reason: String::new(),
        pid: None,
        start_time: None,
        log: None,
        log_tail: Vec::new(),
    };
    let _lock = match store.lock(&format!("restart-{name}")) {
        Ok(lock) => lock,
        Err(e) => return failed(report, e.to_string()),
    };
    let snapshot = match store.get::<Snapshot>(name) {
        Ok(Some(s)) => s,
        Ok(None) => return failed(report, format!("there is no snapshot {name}")),
        Err(e) => {
            // A damaged record is kept as it is, and nothing is started from it.
            report.reason = e.to_string();
            return report;
        }
    };
    let (program, cwd) = match refusal(probe, &snapshot) {
        Ok(found) => found,
        Err(why) => {
            report.reason = why;
            return report;
        }
    };
    let log = store.folder().join("logs").join(format!("{name}.log"));
    report.log = Some(log.display().to_string());
    let root = rules::target(&snapshot).expect("refusal checked the root");
    let mut child = match spawn::start(&program, root, &cwd, &log) {
        Ok(child) => child,
        Err(e) => return failed(report, e),
    };
    let pid = child.id();
    let start_time = match probe.identity(pid) {
        crate::probe::IdentityRead::Alive { identity, .. } => Some(identity.start_time),
        _ => None,
    };
    report.pid = Some(pid);
    report.start_time = start_time;
    let ready = spawn::wait_for_ports(probe, &mut child, &snapshot.ports, wait);
    report.result = if ready {
        RestartResult::Ready
    } else {
        RestartResult::NotReady
    };
    report.reason = if ready {
        format!("listening again as pid {pid}")
    } else {
        report.log_tail = spawn::tail(&log, 10);
        format!(
            "started as pid {pid}, but not every recorded port listened within {} s",
            wait.as_secs_f64()
        )
    };
    if let Some(start_time) = start_time {
        let record = RecordedRestart {
            identity: crate::probe::Identity { pid, start_time }.into(),
            at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            ready,
        };
        let owner = snapshot.root.into();
        if let Err(e) = store.update::<Snapshot, _>(name, owner, |s| s.restarts.push(record)) {
            report.reason = format!("{}; the restart could not be recorded: {e}", report.reason);
        }
    }
    report
}

fn failed(mut report: RestartReport, why: String) -> RestartReport {
    report.result = RestartResult::Failed;
    report.reason = why;
    report
}

#[cfg(test)]
mod tests;
