//! Restart: bring a stopped resource back from its snapshot (docs/design.md §4), and the history of
//! snapshots that says which can come back and why not.
//!
//! Invariants: Pier never builds or interprets a command string — the root's argv is exec'd
//! exactly as recorded (a recorded `sh -c '…'` is replayed as it was), with the recorded
//! environment only, in the recorded cwd, in a new session, stdin closed, output appended to a
//! log in the state folder. Refused, with the reason, when the stop was partial, the cwd or the
//! program is gone, a recorded server port is taken, the same command already runs in that
//! folder, or the folder, the program or a file its argv names is not the user's alone
//! (`trust.rs`: another user's code never runs as the user). Ready when the server's recorded
//! ports listen again: a helper's (a notebook kernel's, see `diagnose::helpers`) are neither
//! checked nor waited for. Pier does not supervise what it restarted.

pub mod container;
pub mod error;
pub mod escape;
pub mod prune;
pub mod record;
pub mod rules;
mod spawn;
pub mod trust;

use std::ffi::OsStr;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use self::error::{NotFound, NotLaunched, NotRecorded, NotRestartable, PortHolder};
use crate::diagnose::connections;
use crate::diagnose::judge::{self, TwinPlace};
use crate::model::card::Port;
use crate::model::history::{Exited, HistoryEntry, RestartReport, RestartResult};
use crate::model::snapshot::{ContainerSnapshot, RecordedRestart, Snapshot};
use crate::model::target::{record_prefix_of, RecordName, TargetId, TargetKind};
use crate::probe::{Pid, Probe, ProbeError, ProcessList, SocketTable, TcpState};
use crate::stop::reconcile::{partial, reconcile, Reconciled};
use crate::store::{Lock, Store, StoreError};

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The server's recorded ports: what a restart checks and waits for.
fn server_ports(s: &Snapshot) -> Vec<&Port> {
    s.ports.iter().filter(|p| p.is_server()).collect()
}

/// The helpers' recorded ports, as endpoints.
fn helper_endpoints(s: &Snapshot) -> Vec<String> {
    s.ports
        .iter()
        .filter(|p| !p.is_server())
        .map(Port::endpoint)
        .collect()
}

/// What is running and listening now, read once and judged against any number of snapshots.
pub struct Now<'p> {
    probe: &'p (dyn Probe + Sync),
    /// Whom the restart runs as: what it runs must be theirs (or root's) alone.
    me: &'p crate::trust::Me,
    processes: Result<ProcessList, ProbeError>,
    sockets: Result<SocketTable, ProbeError>,
}

impl<'p> Now<'p> {
    /// Reads the process table and the socket tables once; a failed read is kept as its
    /// error, which then argues against every restart.
    pub fn read(probe: &'p (dyn Probe + Sync)) -> Self {
        Self {
            probe,
            me: crate::trust::Me::current(),
            processes: probe.processes(),
            sockets: probe.sockets(&[]),
        }
    }
}

/// Whether a stop of a resource of `kind` offers its restart (the CLI's line, the app's undo):
/// never one its client starts on demand, whose restart is always refused
/// (`rules::not_started_by_its_client`).
pub fn offered(kind: Option<&str>) -> bool {
    !kind.is_some_and(|k| crate::diagnose::kinds::family(k).started_by_its_client())
}

/// Everything that argues against restarting `s` now, first reason only. Missing facts argue
/// against it too.
pub fn refusal(now: &Now, s: &Snapshot) -> Result<(PathBuf, PathBuf), NotRestartable> {
    refusal_in(now, s, crate::diagnose::kinds::family)
}

/// [`refusal`], with the families of kinds from `family` (a test's own table).
fn refusal_in(
    now: &Now,
    s: &Snapshot,
    family: impl Fn(&str) -> crate::diagnose::kinds::Family,
) -> Result<(PathBuf, PathBuf), NotRestartable> {
    // Its client starts it when it needs one: nothing of it is restarted.
    rules::not_started_by_its_client(s, family)?;
    // A manager's program is its manager's to start again, whatever its stop became (its
    // manager's respawn made it partial).
    rules::not_a_managers(s)?;
    rules::stop_was_complete(s)?;
    let target = rules::target(s)?;
    let env: Vec<Vec<u8>> = target
        .env
        .as_ref()
        .ok_or(NotRestartable::NoEnvironment)?
        .iter()
        .map(|e| e.0.clone())
        .collect();
    let cwd = target
        .cwd
        .as_ref()
        .map(|c| PathBuf::from(OsStr::from_bytes(&c.0)))
        .ok_or(NotRestartable::NoFolder)?;
    if !cwd.is_dir() {
        return Err(NotRestartable::FolderGone(cwd));
    }
    trust::judge_folder(now.me, &cwd).map_err(NotRestartable::Untrusted)?;
    let arg0 = target.argv.first().ok_or(NotRestartable::EmptyCommand)?;
    let program = rules::resolve_program(&arg0.0, &cwd, &env)?;
    let argv: Vec<&[u8]> = target.argv.iter().map(|a| a.0.as_slice()).collect();
    trust::judge_code(now.me, &cwd, &program, &argv, &env).map_err(NotRestartable::Untrusted)?;
    same_program(&program, &rules::recorded_exe(target))?;
    // Before the ports: a second restart finds the first one's server on the port, and
    // "already runs" is the reason a person needs (found by the real-tools suite).
    if let Some(pid) = already_running(now, s)? {
        return Err(NotRestartable::AlreadyRuns {
            project: s.project.path.clone(),
            pid,
        });
    }
    ports_free(now, s)?;
    Ok((program, cwd))
}

/// The file must be one the kernel runs itself (else `execvp` would hand it to `/bin/sh`),
/// and a binary must be the very program that ran (not another one further down `PATH`).
fn same_program(program: &Path, recorded: &Path) -> Result<(), NotRestartable> {
    let mut head = [0u8; 4];
    let n = std::fs::File::open(program)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| NotRestartable::Unreadable {
            program: program.to_path_buf(),
            error: e.to_string(),
        })?;
    if !rules::is_directly_executable(&head[..n]) {
        return Err(NotRestartable::NeedsAShell(program.to_path_buf()));
    }
    if head.starts_with(b"#!") {
        return Ok(());
    }
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if canon(program) != canon(recorded) {
        return Err(NotRestartable::NotTheProgram {
            program: program.to_path_buf(),
            recorded: recorded.to_path_buf(),
        });
    }
    Ok(())
}

/// No recorded server port may be held by anyone now. A helper's may: it picks new ones at
/// each start, so another process on one of its old ports takes nothing from the restart.
fn ports_free(now: &Now, s: &Snapshot) -> Result<(), NotRestartable> {
    let table = now
        .sockets
        .as_ref()
        .map_err(|e| NotRestartable::PortsUnread(e.clone()))?;
    for port in server_ports(s) {
        let ip: IpAddr = port
            .address
            .parse()
            .map_err(|_| NotRestartable::BadAddress(port.address.clone()))?;
        if let Some(taken) = listener_on(table, SocketAddr::new(ip, port.port)) {
            return Err(NotRestartable::PortTaken {
                endpoint: port.endpoint(),
                holder: Some(holder_of(now, taken)),
            });
        }
    }
    Ok(())
}

/// Who holds the listener at `taken`: the restart's tables were read without owners (a
/// restart that goes ahead needs none), so the sockets are read again with every process's as
/// candidates — only on this refusal. A holder whose row or files cannot be read is unseen.
fn holder_of(now: &Now, taken: SocketAddr) -> PortHolder {
    let Ok(list) = now.processes.as_ref() else {
        return PortHolder::Unseen;
    };
    let everyone: Vec<Pid> = list.processes.iter().map(|p| p.identity.pid).collect();
    let owner = now.probe.sockets(&everyone).ok().and_then(|t| {
        t.sockets
            .iter()
            .find(|s| s.state == TcpState::Listen && s.local == taken)
            .and_then(|s| s.owners.first().copied())
    });
    let row = owner.and_then(|pid| list.processes.iter().find(|p| p.identity.pid == pid));
    let Some(p) = row else {
        return PortHolder::Unseen;
    };
    if p.uid != now.probe.current_uid() {
        return PortHolder::OtherUser {
            pid: p.identity.pid,
            uid: p.uid,
            program: p.comm.clone(),
        };
    }
    PortHolder::Own {
        pid: p.identity.pid,
        program: crate::diagnose::clients::program_of(p).0,
        command: crate::words::short_command(p.argv.iter().map(Vec::as_slice)),
    }
}

/// A listener that serves `want` or that `want` would serve (an overlapping address on the
/// same port), if any: what makes a recorded port taken.
pub(crate) fn listener_on(table: &SocketTable, want: SocketAddr) -> Option<SocketAddr> {
    table
        .sockets
        .iter()
        .find(|t| {
            t.state == TcpState::Listen
                && (connections::serves(t.local, want) || connections::serves(want, t.local))
        })
        .map(|t| t.local)
}

/// A process of ours running a recorded member's exact argv inside the project
/// (`judge::argv_twin`). A twin whose folder cannot be read cannot be ruled out.
fn already_running(now: &Now, s: &Snapshot) -> Result<Option<Pid>, NotRestartable> {
    let probe = now.probe;
    let list = now
        .processes
        .as_ref()
        .map_err(|e| NotRestartable::ProcessesUnread(e.clone()))?;
    let uid = probe.current_uid();
    let project = Path::new(&s.project.path);
    let recorded: Vec<Vec<&[u8]>> = s
        .members
        .iter()
        .map(|m| m.argv.iter().map(|a| a.0.as_slice()).collect())
        .collect();
    for p in &list.processes {
        let cwd_of = |pid| probe.details(pid).map(|d| d.cwd);
        match judge::argv_twin(p, uid, &recorded, project, cwd_of) {
            Some(TwinPlace::InProject) => return Ok(Some(p.identity.pid)),
            Some(TwinPlace::Elsewhere) | None => {}
            Some(TwinPlace::Unknown(e)) => {
                return Err(NotRestartable::TwinUnknown {
                    pid: p.identity.pid,
                    error: e.to_string(),
                })
            }
        }
    }
    Ok(None)
}

/// Every snapshot, newest first, with whether it can be restarted now; and the unreadable ones.
/// Containers' stop records among them, their engines found on this machine.
pub fn history(
    probe: &(dyn Probe + Sync),
    store: &Store,
) -> Result<(Vec<HistoryEntry>, Vec<String>), StoreError> {
    history_with(probe, store, &crate::containers::LiveEngines)
}

/// [`history`], asking `engines` about the containers' records.
pub fn history_with(
    probe: &(dyn Probe + Sync),
    store: &Store,
    engines: &dyn crate::containers::control::EngineAccess,
) -> Result<(Vec<HistoryEntry>, Vec<String>), StoreError> {
    let (mut entries, mut damaged) = record::history_of::<Snapshot>(probe, store, engines)?;
    // Containers' stops, from their own records (`container.rs`).
    match record::history_of::<ContainerSnapshot>(probe, store, engines) {
        Ok((more, more_damaged)) => {
            entries.extend(more);
            damaged.extend(more_damaged);
        }
        Err(e) => damaged.push(e.to_string()),
    }
    // Newest first, whichever kind of record: by the unix ms every record's name ends with.
    entries.sort_by_key(|e| std::cmp::Reverse(written_ms(&e.snapshot)));
    Ok((entries, damaged))
}

fn settled(
    probe: &(dyn Probe + Sync),
    store: &Store,
    name: &str,
    s: Snapshot,
) -> (Snapshot, Option<String>, Option<String>) {
    if s.result.is_some() {
        // A stop that left something running may have ended since (§3.10); while it has not,
        // it is shown as it was recorded.
        if !partial::may_end_later(&s) {
            return (s, None, None);
        }
        return match partial::reconcile_ended(probe, store, name, &s) {
            Reconciled::Written(on_disk) => (on_disk, None, None),
            Reconciled::Shown(view, why) => (view, Some(why), None),
            Reconciled::Left(_) => (s, None, None),
        };
    }
    match reconcile(probe, store, name, &s) {
        Reconciled::Written(on_disk) => (on_disk, None, None),
        Reconciled::Shown(view, why) => (view, Some(why), None),
        Reconciled::Left(why) => (s, None, Some(why.to_string())),
    }
}

/// The snapshot a user named: a record name (`snap-…`), or a resource id (its newest one).
pub fn find(store: &Store, name_or_id: &str) -> Result<(String, Snapshot), NotFound> {
    if name_or_id.starts_with(record_prefix_of(TargetKind::Tree)) {
        return match store.get::<Snapshot>(name_or_id) {
            Ok(Some(s)) => Ok((name_or_id.to_owned(), s)),
            Ok(None) => Err(NotFound::Snapshot(name_or_id.to_owned())),
            Err(e) => Err(NotFound::Store(e.to_string())),
        };
    }
    let none = || NotFound::SnapshotFor(name_or_id.to_owned());
    let target: TargetId = name_or_id.parse().map_err(|_| none())?;
    newest(store, &target.record_prefix())?.ok_or_else(none)
}

/// When record `name` was written: the unix ms its name ends with (0 for none).
fn written_ms(name: &str) -> u128 {
    name.parse::<RecordName>().map_or(0, |r| r.ms)
}

/// The newest record whose name starts with `prefix`, by the unix ms its name ends with.
pub(crate) fn newest<T>(store: &Store, prefix: &str) -> Result<Option<(String, T)>, NotFound>
where
    T: serde::de::DeserializeOwned + crate::store::Versioned,
{
    let listing = store
        .list::<T>(prefix)
        .map_err(|e| NotFound::Store(e.to_string()))?;
    Ok(listing
        .records
        .into_iter()
        .max_by_key(|(name, _)| written_ms(name)))
}

/// Restarts the snapshot `name`, waiting up to `wait` for its ports: under the project's
/// restart lock, the record is read, every refusal asked, the root started and recorded at
/// once, then the server's ports awaited and the restart marked ready when they listen.
pub fn restart(
    probe: &(dyn Probe + Sync),
    store: &Store,
    name: &str,
    wait: Duration,
) -> RestartReport {
    let mut report = RestartReport::not_started(name, RestartResult::Refused, String::new());
    let _lock = match lock_project(store, name) {
        Ok(lock) => lock,
        Err(e) => return failed(report, e.to_string()),
    };
    let snapshot = match read_record(probe, store, name) {
        Ok(s) => s,
        Err((result, why)) => {
            (report.result, report.reason) = (result, why);
            return report;
        }
    };
    let now = Now::read(probe);
    // Named whatever the answer: a refused restart says what it would have run.
    let replay = trust::replay(&snapshot, now.me);
    (report.program, report.folder, report.code_env) =
        (replay.program, replay.folder, replay.code_env);
    let (program, cwd) = match refusal(&now, &snapshot) {
        Ok(found) => found,
        Err(why) => {
            report.reason = why.to_string();
            return report;
        }
    };
    report.helper_ports = helper_endpoints(&snapshot);
    let log_name = format!("{name}.log");
    let (log, log_path) = match store.open_log(&log_name) {
        Ok(opened) => opened,
        Err(e) => return failed(report, e.to_string()),
    };
    report.log = Some(log_path.display().to_string());
    let log_start = log.metadata().map_or(0, |m| m.len());
    let launched = match launch(probe, store, name, &snapshot, (&program, &cwd), log) {
        Ok(launched) => launched,
        Err(e) => return failed(report, e.to_string()),
    };
    let (pid, start_time) = (launched.pid, launched.start_time);
    (report.pid, report.start_time) = (Some(pid), start_time);
    let (end, unrecorded) = await_ports(probe, store, name, &snapshot, launched, wait);
    (report.result, report.reason) = outcome(&end, pid, &snapshot, wait);
    let log = (log_name.as_str(), log_start);
    let crash = not_ready(
        store,
        (name, &snapshot),
        &mut report,
        (&end, log),
        (pid, start_time),
    );
    let unrecorded = unrecorded.or(crash.err());
    if let Some(parent) = parent_left_behind(&snapshot) {
        report.reason = format!("{}; {parent}", report.reason);
    }
    if let Some(e) = unrecorded {
        report.reason = format!("{}; the restart could not be recorded: {e}", report.reason);
    }
    report
}

/// A restart that did not get ready: the last lines of its log; and when it exited, how (in
/// the report, and in the snapshot's restart record, so `pier history` says it too), or that
/// its log is empty.
fn not_ready(
    store: &Store,
    (name, snapshot): (&str, &Snapshot),
    report: &mut RestartReport,
    (end, (log_name, log_start)): (&spawn::WaitEnd, (&str, u64)),
    (pid, start_time): (Pid, Option<u64>),
) -> Result<(), NotRecorded> {
    if *end == spawn::WaitEnd::Ready {
        return Ok(());
    }
    let output = store.log_tail(log_name, log_start);
    report.exited = crashed(end, &output);
    report.log_tail = match report.exited {
        Some(_) => Some(spawn::error_lines(&output, 10)).filter(|l| !l.is_empty()),
        None => None,
    }
    .unwrap_or_else(|| spawn::tail(&output, 10));
    let Some(exited) = &report.exited else {
        return Ok(());
    };
    if exited.log_tail.is_empty() {
        report.reason = format!("{}; {}", report.reason, crate::words::EMPTY_LOG);
    }
    let restart = (pid, start_time, false);
    record(store, name, snapshot, restart, Some(exited.clone()))
}

/// How the started root ended, when it exited before listening, with the bounded tail of
/// what this run wrote to its log (`output`).
fn crashed(end: &spawn::WaitEnd, output: &[u8]) -> Option<Exited> {
    match end {
        spawn::WaitEnd::Exited(status, signal) => Some(Exited {
            status: *status,
            signal: *signal,
            log_tail: spawn::crash_tail(output),
        }),
        _ => None,
    }
}

/// A stop anyway that set aside a live parent: the restart runs the server on its own, in a
/// session of its own, and the old parent (a shell, an editor) is not brought back — said so.
fn parent_left_behind(s: &Snapshot) -> Option<String> {
    let aside = s
        .set_aside
        .iter()
        .find(|a| a.reason == crate::model::reason::Reason::NotOrphaned)?;
    Some(format!(
        "it runs in a session of its own now: it was stopped while its parent still ran ({}), \
         and a restart does not bring that parent back",
        aside.fact
    ))
}

/// One lock per project, held for the whole restart: two snapshots of one command must not
/// both start.
fn lock_project(store: &Store, name: &str) -> Result<Lock, StoreError> {
    store.lock(&restart_lock(&name_project(store, name)))
}

/// The name of the restart lock of the project at `path` (a prune takes it too: a record is
/// never removed under a restart from it).
pub(crate) fn restart_lock(path: &str) -> String {
    format!("restart-{:016x}", fnv1a(path.as_bytes()))
}

/// The snapshot `name`, read under the lock. Missing, the restart failed; damaged, it is
/// refused, and the record is kept as it is: nothing is started from it.
fn read_record(
    probe: &(dyn Probe + Sync),
    store: &Store,
    name: &str,
) -> Result<Snapshot, (RestartResult, String)> {
    match store.get::<Snapshot>(name) {
        Ok(Some(s)) => match settled(probe, store, name, s) {
            (s, None, None) => Ok(s),
            (_, Some(why), _) => Err((
                RestartResult::Failed,
                format!("the unfinished stop was reconciled, but could not be written: {why}"),
            )),
            (_, _, Some(why)) => Err((
                RestartResult::Refused,
                format!("the stop has not finished: {why}"),
            )),
        },
        Ok(None) => Err((
            RestartResult::Failed,
            format!("there is no snapshot {name}"),
        )),
        Err(e) => Err((RestartResult::Refused, e.to_string())),
    }
}

/// A restarted root, started and recorded (or not) in its snapshot.
struct Launched {
    child: std::process::Child,
    pid: Pid,
    /// Its start time, if it could be read.
    start_time: Option<u64>,
    /// Why the new identity could not be recorded, if it could not.
    unrecorded: Option<NotRecorded>,
}

/// Starts the recorded root (`program` in `cwd`, output to `log`), reads its start time, and
/// records the new identity in the snapshot at once, so an interrupted wait never leaves a
/// restart unrecorded.
fn launch(
    probe: &dyn Probe,
    store: &Store,
    name: &str,
    snapshot: &Snapshot,
    (program, cwd): (&Path, &Path),
    log: std::fs::File,
) -> Result<Launched, NotLaunched> {
    let target = rules::target(snapshot).expect("refusal checked the target");
    let child = spawn::start(program, target, cwd, log)?;
    let pid = child.id();
    let start_time = match probe.identity(pid) {
        crate::probe::IdentityRead::Alive { identity, .. } => Some(identity.start_time),
        _ => None,
    };
    let unrecorded = record(store, name, snapshot, (pid, start_time, false), None).err();
    Ok(Launched {
        child,
        pid,
        start_time,
        unrecorded,
    })
}

/// Waits (at most `wait`) for the server's recorded ports to listen from the new tree, hands
/// the child to a thread that reaps it when it exits (in the CLI, Pier exits first and init
/// adopts it), and marks the restart ready in the snapshot when the ports listen. Returns how
/// the wait ended, and why the restart could not be recorded, if it could not.
fn await_ports(
    probe: &dyn Probe,
    store: &Store,
    name: &str,
    snapshot: &Snapshot,
    launched: Launched,
    wait: Duration,
) -> (spawn::WaitEnd, Option<NotRecorded>) {
    let Launched {
        mut child,
        pid,
        start_time,
        mut unrecorded,
    } = launched;
    let awaited = server_ports(snapshot);
    let end = spawn::wait_for_ports(probe, &mut child, &awaited, wait);
    std::thread::spawn(move || child.wait());
    if end == spawn::WaitEnd::Ready {
        let ready = record(store, name, snapshot, (pid, start_time, true), None);
        unrecorded = unrecorded.or(ready.err());
    }
    (end, unrecorded)
}

/// The result and its sentence, from how the wait for the server's ports ended. A snapshot
/// with only a helper's ports had nothing of its own to wait for: running is ready, as for a
/// watcher with no port.
fn outcome(
    end: &spawn::WaitEnd,
    pid: Pid,
    snapshot: &Snapshot,
    wait: Duration,
) -> (RestartResult, String) {
    match end {
        spawn::WaitEnd::Ready if snapshot.ports.is_empty() => (
            RestartResult::Ready,
            format!("running again as pid {pid} (it had no port to wait for)"),
        ),
        spawn::WaitEnd::Ready if server_ports(snapshot).is_empty() => (
            RestartResult::Ready,
            format!(
                "running again as pid {pid} (it had no port of its own to wait for, only a \
                 helper's)"
            ),
        ),
        spawn::WaitEnd::Ready => (
            RestartResult::Ready,
            format!("listening again as pid {pid}"),
        ),
        spawn::WaitEnd::TimedOut(missing) => (
            RestartResult::NotReady,
            format!(
                "started as pid {pid}, but {} did not listen again within {} s",
                missing.join(", "),
                wait.as_secs_f64()
            ),
        ),
        spawn::WaitEnd::Exited(status, signal) => {
            let exited = Exited {
                status: *status,
                signal: *signal,
                log_tail: String::new(),
            };
            (
                RestartResult::NotReady,
                format!(
                    "started as pid {pid}, which {}",
                    crate::words::exited_before_listening(&exited)
                ),
            )
        }
    }
}

/// Adds (or completes: ready, or how it exited) this restart in the snapshot. The update is on behalf of the identity
/// the record names — the stopped root — which is what the snapshot speaks for.
fn record(
    store: &Store,
    name: &str,
    snapshot: &Snapshot,
    (pid, start_time, ready): (Pid, Option<u64>, bool),
    exited: Option<Exited>,
) -> Result<(), NotRecorded> {
    let start_time = start_time.ok_or(NotRecorded::NoStartTime)?;
    let identity = crate::probe::Identity { pid, start_time };
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    store
        .update::<Snapshot, _>(name, snapshot.root, |s| {
            match s.restarts.iter_mut().find(|r| r.identity == identity) {
                Some(r) => {
                    r.ready = ready;
                    r.exited = exited;
                }
                None => s.restarts.push(RecordedRestart {
                    identity,
                    at,
                    ready,
                    exited,
                }),
            }
        })
        .map(|_| ())
        .map_err(|e| NotRecorded::Store(e.to_string()))
}

/// The project a snapshot belongs to (its name when unreadable), for the restart lock.
fn name_project(store: &Store, name: &str) -> String {
    match store.get::<Snapshot>(name) {
        Ok(Some(s)) => s.project.path,
        _ => name.to_owned(),
    }
}

/// FNV-1a: a stable, dependency-free hash for lock names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn failed(mut report: RestartReport, why: String) -> RestartReport {
    report.result = RestartResult::Failed;
    report.reason = why;
    report
}

#[cfg(test)]
pub(crate) mod tests;
