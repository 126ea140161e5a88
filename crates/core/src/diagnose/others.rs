//! The listeners no resource holds (`pier scan --all`), each with why it is not a candidate:
//! no visible owner, a container engine's own process, or a process that is no known dev
//! tool and works outside any project.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;

use super::{project, Facts};
use crate::model::card::OtherListener;
use crate::probe::{Pid, ProcessInfo, TcpState};

/// Listeners no candidate holds, with the reason they are not candidates.
pub(super) fn other_listeners(
    facts: &mut Facts,
    claimed: &HashSet<Pid>,
    published: &HashSet<SocketAddr>,
    unasked_engine: Option<String>,
    under: &[PathBuf],
) -> Vec<OtherListener> {
    let Ok(table) = &facts.sockets else {
        return Vec::new();
    };
    let listeners: Vec<_> = table
        .sockets
        .iter()
        .filter(|s| s.state == TcpState::Listen && !s.owners.iter().any(|o| claimed.contains(o)))
        .filter(|s| !published.contains(&s.local))
        .map(|s| (s.local, s.owners.first().copied()))
        .collect();
    let mut out: Vec<OtherListener> = Vec::new();
    for (local, owner) in listeners {
        let (pid, command, reason) = match owner {
            None => (None, None, unowned(unasked_engine.as_deref())),
            Some(pid) => {
                if facts
                    .cwd(pid)
                    .is_some_and(|cwd| !project::is_under(&cwd, under))
                {
                    continue;
                }
                let p = facts.table.get(pid);
                let command = p.map(|p| p.comm.clone());
                (Some(pid), command, owned(p, unasked_engine.as_deref()))
            }
        };
        let entry = OtherListener {
            port: local.port(),
            address: local.ip().to_string(),
            pid,
            command,
            reason,
        };
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    out.sort_by(|a, b| (a.port, &a.address).cmp(&(b.port, &b.address)));
    out
}

/// Why a listener with no visible owner is not a candidate; a container's port, perhaps, when
/// an engine could not be asked.
fn unowned(unasked_engine: Option<&str>) -> String {
    let mut reason = "no visible owner: another user's process, or one Pier cannot read".to_owned();
    if let Some(engine) = unasked_engine {
        let _ = write!(
            reason,
            "; {engine} could not be asked, so it may be a container's port"
        );
    }
    reason
}

/// Why the listener of process `p` is not a candidate.
fn owned(p: Option<&ProcessInfo>, unasked_engine: Option<&str>) -> String {
    let engine = p.and_then(|p| crate::containers::processes::engine_program(&p.comm, &p.argv));
    match (engine, unasked_engine) {
        (Some(program), Some(unasked)) => format!(
            "the container engine's own process ({program}), never stopped by Pier; \
             {unasked} could not be asked which container publishes this port"
        ),
        (Some(program), None) => format!(
            "the container engine's own process ({program}), never stopped by Pier; \
             no running container publishes this port"
        ),
        (None, _) => "not a known dev tool, and not working inside a project".to_owned(),
    }
}
