//! What one rescan saw of each resource, for the clock: its members' counters (one read for
//! all of them), its respawners' polling, and the connections on its listeners, live or
//! recently closed.

use std::net::{IpAddr, SocketAddr};

use crate::model::card::{Port, Resource, Scan};
use crate::model::Identity;
use crate::probe::{Ended, Probe, ProbeError};

use super::Read;

/// One resource at one rescan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The resource's id.
    pub id: String,
    /// Its members' counters.
    pub read: Read,
    /// Members whose CPU is a respawner's own polling, set aside.
    pub pollers: Vec<Identity>,
    /// Connections on its listeners, live or recently closed, in words; or that the closed
    /// ones could not be read.
    pub connections: Vec<String>,
}

/// Every process-tree resource of `scan`, as the clock sees it now. Containers are not
/// measured: their processes' counters are not the user's to read.
pub fn observe_scan(scan: &Scan, probe: &dyn Probe) -> Vec<Observation> {
    let resources: Vec<&Resource> = scan.projects.iter().flat_map(|p| &p.resources).collect();
    let members: Vec<Identity> = resources
        .iter()
        .flat_map(|r| r.members.iter().map(|m| m.identity()))
        .collect();
    let counters = probe.counters(&members);
    let ended = match probe.ended_connections() {
        Ok(ended) => Ok(ended),
        // Where the tables cannot show a closed connection, there is nothing to see.
        Err(ProbeError::Unsupported) => Ok(Vec::new()),
        Err(e) => Err(format!("the closed connections could not be read ({e})")),
    };
    resources
        .into_iter()
        .map(|r| {
            let read = r
                .members
                .iter()
                .map(|m| {
                    let who = m.identity();
                    let c = counters
                        .iter()
                        .find(|(id, _)| *id == who)
                        .map(|(_, c)| c.clone().map_err(|e| e.to_string()))
                        .unwrap_or_else(|| Err("not read".to_owned()));
                    (who, c)
                })
                .collect();
            Observation {
                id: r.id.clone(),
                read,
                pollers: pollers(r),
                connections: connections(r, &ended),
            }
        })
        .collect()
}

/// The members whose CPU the scan sets aside as a respawner's polling.
fn pollers(r: &Resource) -> Vec<Identity> {
    r.respawners
        .iter()
        .filter(|s| s.quieter.is_some())
        .filter_map(|s| r.members.iter().find(|m| m.pid == s.pid))
        .map(|m| m.identity())
        .collect()
}

/// The connections that keep `r` from idle: live ones from outside it, and closed ones on its
/// listeners.
fn connections(r: &Resource, ended: &Result<Vec<Ended>, String>) -> Vec<String> {
    let mut out: Vec<String> = r
        .connections
        .iter()
        .filter(|c| !c.internal)
        .map(|c| format!("a connection to {} from {}", c.local, c.peer))
        .collect();
    match ended {
        Ok(ended) => {
            for p in &r.ports {
                if ended.iter().any(|e| served(p, e)) {
                    out.push(format!(
                        "a connection on :{} closing, or closed within the last minute",
                        p.port
                    ));
                }
            }
        }
        Err(why) => out.push(why.clone()),
    }
    out.dedup();
    out
}

/// Whether closed connection `e` was one on listener `p`: seen from the server's end (its
/// local end is the listener's port and address), or from a client's on this machine (its
/// other end is the listener, reached at this machine's own address).
pub(crate) fn served(p: &Port, e: &Ended) -> bool {
    let Ok(listens) = p.address.parse::<IpAddr>() else {
        return false;
    };
    let on = |addr: &SocketAddr| {
        addr.port() == p.port
            && (listens.is_unspecified() || addr.ip().to_canonical() == listens.to_canonical())
    };
    let local_client = |e: &Ended| {
        let remote = e.remote.ip().to_canonical();
        remote.is_loopback() || remote == e.local.ip().to_canonical()
    };
    on(&e.local) || (on(&e.remote) && (!listens.is_unspecified() || local_client(e)))
}
