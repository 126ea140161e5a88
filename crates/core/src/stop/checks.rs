//! The checkpoints of docs/design.md §3.3, each a fresh read through the probe that answers
//! "go on" or "stop here, because …". Any read that fails says stop.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::diagnose::connections;
use crate::diagnose::rules::{self, ActivityFacts, MemberActivity, Thresholds};
use crate::diagnose::tree::ProcessTable;
use crate::model::card::Level;
use crate::model::snapshot::Snapshot;
use crate::probe::{Identity, IdentityRead, Pid, Probe, TcpState};
use crate::signal::Expected;

/// (a), (c), (e): no live connection on the members' listeners, every source readable.
pub fn network(probe: &dyn Probe, members: &HashSet<Pid>) -> Result<(), String> {
    // argv plays no part in a network check: none is read beyond the socket holders'.
    let survey = probe
        .survey(&|_| false)
        .map_err(|e| format!("the ports and connections could not be checked: {e}"))?;
    // A member whose row cannot be read was not walked: its sockets are unknown.
    if let Some(u) = survey
        .processes
        .unreadable
        .iter()
        .find(|u| members.contains(&u.pid))
    {
        return Err(format!(
            "pid {} could not be read, so its connections are unknown: {}",
            u.pid, u.error
        ));
    }
    let table = survey
        .sockets
        .map_err(|e| format!("connection data could not be read: {e}"))?;
    if let Some((pid, why)) = table.blind.iter().find(|(p, _)| members.contains(p)) {
        return Err(format!(
            "the connections of pid {pid} cannot be seen: {why}"
        ));
    }
    if let Some((pid, why)) = table.unreadable.iter().find(|(p, _)| members.contains(p)) {
        return Err(format!(
            "the open files of pid {pid} could not be read, so its connections are unknown: {why}"
        ));
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
        let who = match c.peer_pid {
            Some(pid) => match survey
                .processes
                .processes
                .iter()
                .find(|p| p.identity.pid == pid)
            {
                Some(p) => format!("pid {pid}, {}", p.comm),
                None => format!("pid {pid}"),
            },
            None => "a process Pier cannot see".to_owned(),
        };
        return Err(format!(
            "a client is connected: live connection {} ← {} ({who})",
            c.local, c.peer
        ));
    }
    let queued = connections::queued_on(&listeners);
    if queued > 0 {
        return Err(format!(
            "a client is waiting: {queued} connection(s) not yet accepted"
        ));
    }
    Ok(())
}

/// (b): the members are idle over the window, judged by the scan's own activity rule, so the
/// refusal names what was seen in the same words as the card: the figures, the window and the
/// busiest member.
pub fn activity(
    probe: &dyn Probe,
    snapshot: &Snapshot,
    window: std::time::Duration,
    t: Thresholds,
) -> Result<(), String> {
    if window.is_zero() {
        return Err("activity cannot be judged over an empty window".into());
    }
    let pids: Vec<Pid> = snapshot.members.iter().map(|m| m.identity.pid).collect();
    let sample = probe.activity(&pids, window);
    let mut measured = Vec::new();
    for (pid, delta) in &sample.per_pid {
        let d = delta
            .as_ref()
            .map_err(|e| format!("the activity of pid {pid} could not be read: {e}"))?;
        measured.push(MemberActivity {
            pid: *pid,
            command: snapshot.short_command_of(*pid),
            delta: *d,
        });
    }
    let (evidence, _) = rules::activity_evidence(&ActivityFacts::Measured(measured, window), t);
    match evidence.level {
        Level::Green => Ok(()),
        Level::Yellow | Level::Red => Err(evidence.message),
    }
}

/// What each member must still be: its identity and executable from the snapshot.
pub fn expected(snapshot: &Snapshot) -> Vec<Expected> {
    snapshot
        .members
        .iter()
        .map(|m| Expected {
            identity: m.identity,
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
    let list = probe
        .processes()
        .map_err(|e| format!("the process tree could not be checked: {e}"))?;
    let present: Vec<Identity> = list.processes.iter().map(|p| p.identity).collect();
    let table = ProcessTable::new(list.processes);
    let root = snapshot.root.pid;
    let recorded: BTreeSet<Identity> = snapshot.members.iter().map(|m| m.identity).collect();
    let root_alive = table
        .get(root)
        .is_some_and(|p| p.identity.start_time == snapshot.root.start_time && !p.zombie);
    if !root_alive {
        // Its children now hang elsewhere, where new ones could not be seen: the tree changed.
        return Err(format!(
            "the root process {root} ({}) exited during the checks",
            snapshot.short_command_of(root)
        ));
    }
    for pid in table.members(root) {
        let p = table.get(pid).expect("members come from the table");
        if !recorded.contains(&p.identity) {
            return Err(format!(
                "a new process joined the tree during the checks: pid {pid} ({}), child of pid {}",
                p.comm, p.ppid
            ));
        }
    }
    let mut gone = Vec::new();
    for e in expected(snapshot) {
        match probe.identity(e.identity.pid) {
            IdentityRead::Gone => gone.push(e.identity),
            IdentityRead::Unknown(why) => {
                return Err(format!(
                    "whether pid {} is still the same process could not be read: {why}",
                    e.identity.pid
                ))
            }
            IdentityRead::Alive { identity, .. } if identity != e.identity => gone.push(e.identity),
            IdentityRead::Alive { exe: None, .. } => {
                return Err(format!(
                    "the executable of pid {} can no longer be read, so it cannot be shown to \
                     be the same program",
                    e.identity.pid
                ))
            }
            IdentityRead::Alive { exe: Some(exe), .. } if exe != e.exe => {
                return Err(format!(
                    "pid {} now runs {}, not {}: it exec'd another program",
                    e.identity.pid,
                    exe.display(),
                    e.exe.display()
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
