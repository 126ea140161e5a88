//! The checkpoints of DESIGN.md §3 step 3, each a fresh read through the probe that answers
//! "go on" or "stop here, because …". Any read that fails says stop.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::snapshot::Snapshot;
use crate::diagnose::connections;
use crate::diagnose::rules::Thresholds;
use crate::diagnose::tree::ProcessTable;
use crate::probe::{Identity, IdentityRead, Pid, Probe, TcpState};
use crate::signal::Expected;

/// (a), (c), (e): no live connection on the members' listeners, every source readable.
pub fn network(probe: &dyn Probe, members: &HashSet<Pid>) -> Result<(), String> {
    // argv plays no part in a network check: none is read beyond the socket holders'.
    let survey = probe.survey(&|_| false).map_err(|e| e.to_string())?;
    // A member whose row cannot be read was not walked: its sockets are unknown.
    if let Some(u) = survey
        .processes
        .unreadable
        .iter()
        .find(|u| members.contains(&u.pid))
    {
        return Err(format!("pid {} could not be read: {}", u.pid, u.error));
    }
    let table = survey
        .sockets
        .map_err(|e| format!("connection data could not be read: {e}"))?;
    if let Some((pid, why)) = table.blind.iter().find(|(p, _)| members.contains(p)) {
        return Err(format!("connections of pid {pid} cannot be seen: {why}"));
    }
    if let Some((pid, why)) = table.unreadable.iter().find(|(p, _)| members.contains(p)) {
        return Err(format!("open files of pid {pid} could not be read: {why}"));
    }
    let listeners: Vec<_> = table
        .sockets
        .iter()
        .filter(|s| s.state == TcpState::Listen && s.owners.iter().any(|o| members.contains(o)))
        .collect();
    let addrs: Vec<SocketAddr> = listeners.iter().map(|s| s.local).collect();
    let live = connections::connections_on(&addrs, &table.sockets, members)
        .into_iter()
        .find(|c| !c.internal);
    if let Some(c) = live {
        return Err(format!("live connection {} ← {}", c.local, c.peer));
    }
    let queued = connections::queued_on(&listeners);
    if queued > 0 {
        return Err(format!("{queued} connection(s) waiting to be accepted"));
    }
    Ok(())
}

/// (b): the members are idle over the window.
pub fn activity(
    probe: &dyn Probe,
    members: &[Pid],
    window: std::time::Duration,
    t: Thresholds,
) -> Result<(), String> {
    if window.is_zero() {
        return Err("activity cannot be judged over an empty window".into());
    }
    let sample = probe.activity(members, window);
    let mut cpu_ns = 0u64;
    let mut io = 0u64;
    for (pid, delta) in &sample.per_pid {
        let d = delta
            .as_ref()
            .map_err(|e| format!("activity of pid {pid} could not be read: {e}"))?;
        cpu_ns = cpu_ns.saturating_add(d.cpu_ns);
        io = io.saturating_add(d.io_bytes);
    }
    let secs = window.as_secs_f64().max(1e-9);
    let cpu_percent = cpu_ns as f64 / 1e9 / secs * 100.0;
    let io_rate = io as f64 / secs;
    if cpu_percent > t.cpu_percent || io_rate > t.io_bytes_per_second {
        return Err(format!(
            "busy: {cpu_percent:.1}% CPU, {io_rate:.0} B/s disk I/O over {} ms",
            window.as_millis()
        ));
    }
    Ok(())
}

/// What each member must still be: its identity and executable from the snapshot.
pub fn expected(snapshot: &Snapshot) -> Vec<Expected> {
    snapshot
        .members
        .iter()
        .map(|m| Expected {
            identity: m.identity.into(),
            exe: PathBuf::from(OsStr::from_bytes(&m.exe.0)),
        })
        .collect()
}

/// What a passing tree check saw.
#[derive(Debug, Clone, Default)]
pub struct TreeCheck {
    /// The members found gone (or whose pid now holds another process): they get no signal,
    /// and their outcome is `skipped`, since they were gone before the first signal.
    pub gone: Vec<Identity>,
    /// Every identity in the process table it read: after check (e), nothing here is a
    /// newcomer.
    pub present: Vec<Identity>,
}

/// (d) and (e): the tree under the root holds no member the snapshot lacks, and every member
/// still alive is the same process (start time and executable).
pub fn tree(probe: &dyn Probe, snapshot: &Snapshot) -> Result<TreeCheck, String> {
    let list = probe.processes().map_err(|e| e.to_string())?;
    let present: Vec<Identity> = list.processes.iter().map(|p| p.identity).collect();
    let table = ProcessTable::new(list.processes);
    let root = snapshot.root.pid;
    let recorded: BTreeSet<Identity> = snapshot.members.iter().map(|m| m.identity.into()).collect();
    let root_alive = table
        .get(root)
        .is_some_and(|p| p.identity.start_time == snapshot.root.start_time && !p.zombie);
    if !root_alive {
        // Its children now hang elsewhere, where new ones could not be seen: the tree changed.
        return Err(format!("the root process {root} exited"));
    }
    for pid in table.members(root) {
        let p = table.get(pid).expect("members come from the table");
        if !recorded.contains(&p.identity) {
            return Err(format!(
                "a new process joined the tree: pid {pid} ({})",
                p.comm
            ));
        }
    }
    let mut gone = Vec::new();
    for e in expected(snapshot) {
        match probe.identity(e.identity.pid) {
            IdentityRead::Gone => gone.push(e.identity),
            IdentityRead::Unknown(why) => {
                return Err(format!(
                    "pid {} could not be re-read: {why}",
                    e.identity.pid
                ))
            }
            IdentityRead::Alive { identity, .. } if identity != e.identity => gone.push(e.identity),
            IdentityRead::Alive { exe: None, .. } => {
                return Err(format!(
                    "the executable of pid {} can no longer be read",
                    e.identity.pid
                ))
            }
            IdentityRead::Alive { exe: Some(exe), .. } if exe != e.exe => {
                return Err(format!(
                    "pid {} now runs {}: it exec'd",
                    e.identity.pid,
                    exe.display()
                ))
            }
            IdentityRead::Alive { .. } => {}
        }
    }
    Ok(TreeCheck { gone, present })
}

/// Leaf-to-root order: members grouped by depth under the root, deepest first.
pub fn levels(snapshot: &Snapshot) -> Vec<Vec<Expected>> {
    let expected = expected(snapshot);
    let depth = |pid: Pid| -> usize {
        let mut d = 0;
        let mut cur = pid;
        while cur != snapshot.root.pid && d <= snapshot.members.len() {
            let Some(m) = snapshot.members.iter().find(|m| m.identity.pid == cur) else {
                break;
            };
            cur = m.ppid;
            d += 1;
        }
        d
    };
    let max = expected
        .iter()
        .map(|e| depth(e.identity.pid))
        .max()
        .unwrap_or(0);
    (0..=max)
        .rev()
        .map(|level| {
            expected
                .iter()
                .filter(|e| depth(e.identity.pid) == level)
                .cloned()
                .collect()
        })
        .filter(|l: &Vec<Expected>| !l.is_empty())
        .collect()
}
