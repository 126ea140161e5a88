//! Container cards: each running container that publishes ports (or runs on the host's
//! network), from its engine's account, with its connections from the socket tables
//! (docs/design.md §2.8).
//!
//! - Its ports are the engine's published ports. The host listeners on them (docker-proxy,
//!   rootlessport, com.docker.backend) are the container's: they are claimed here, so they are
//!   neither candidates nor "other listeners", whoever holds them and whether or not the user
//!   can see who does.
//! - Its connections: ESTABLISHED host sockets on a published port (clients through the
//!   engine's proxy) or whose far end is one of the container's addresses (clients on the host
//!   talking to it directly), and ESTABLISHED sockets on a listener inside the container's own
//!   network namespace (clients from other containers, and through NAT, never touch a host
//!   listener). A proxy's leg into the container, seen on both sides, is counted once, on the
//!   host. Where the namespace cannot be read, the container cannot be green.
//! - It is placed in its Compose project's folder (`com.docker.compose.project.working_dir`),
//!   or in its engine's group.

use std::collections::{BTreeSet, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::connections::{self, Conn};
use super::judge::Finding;
use super::rules::Thresholds;
use super::{project, rules, Facts, MarkerLookup};
use crate::containers::sample::Samples;
use crate::containers::{processes, Compose, ContainerFacts, EngineRead, Published};
use crate::model::card::Evidence;
use crate::model::container::{Container, EngineStatus, PublishedPort};
use crate::probe::{Pid, Socket, TcpState};

/// Where a container card goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The group's key and `path`: a project folder, or the engine's host.
    pub path: PathBuf,
    /// The group's name.
    pub name: String,
    /// The group's marker.
    pub marker: Option<String>,
}

/// What the engines' containers add to a scan.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Each card, with where it goes.
    pub cards: Vec<(Place, Container)>,
    /// The host listeners on published ports: the containers', not anyone's candidates.
    pub claimed: HashSet<SocketAddr>,
    /// Each engine asked, and what came of it.
    pub engines: Vec<EngineStatus>,
}

/// The cards of every engine's containers, kept when they fall under `under`.
/// `sample`: each container's activity over the scan's window (`None`: not sampled).
pub(crate) fn cards(
    facts: &mut Facts,
    reads: &[EngineRead],
    (sample, thresholds): (Option<&Samples>, Thresholds),
    home: Option<&Path>,
    under: &[PathBuf],
    marker_at: MarkerLookup,
) -> Found {
    let mut found = Found::default();
    let in_containers = listeners_if_host_network(facts, reads);
    let facts: &Facts = facts;
    let host: &[Socket] = match &facts.sockets {
        Ok(t) => &t.sockets,
        Err(_) => &[],
    };
    let engine_processes = engine_owners(facts, host);
    for read in reads {
        found.engines.push(engine_status(read));
        let Ok(list) = &read.containers else {
            continue;
        };
        for c in list
            .iter()
            .filter(|c| !c.ports.is_empty() || c.host_network)
        {
            let own: Vec<&HeldInside> = in_containers
                .iter()
                .filter(|l| l.container == c.id)
                .collect();
            let c = &with_own_listeners(c, &own);
            let processes: HashSet<Pid> = own.iter().flat_map(|l| l.owners.clone()).collect();
            let published = claimed_listeners(&c.ports, host);
            found.claimed.extend(published.iter().copied());
            let place = place(c, &read.endpoint.host, home, marker_at);
            if !project::is_under(&place.path, under)
                || (place.marker.as_deref() == Some(ENGINE_GROUP) && !under.is_empty())
            {
                continue;
            }
            let card = card(
                facts,
                (read.endpoint.engine, &read.endpoint.host),
                c,
                (&processes, &engine_processes),
                (host, &published),
                (sample, thresholds),
            );
            found.cards.push((place, card));
        }
    }
    found
}

/// The listeners of the containers' own processes on the host, when a container runs on the
/// host's network (none otherwise: no container then listens on the host itself).
fn listeners_if_host_network(facts: &mut Facts, reads: &[EngineRead]) -> Vec<HeldInside> {
    let host_network = reads
        .iter()
        .filter_map(|r| r.containers.as_ref().ok())
        .flatten()
        .any(|c| c.host_network);
    if host_network {
        listeners_in_containers(facts)
    } else {
        Vec::new()
    }
}

/// What came of asking one engine.
fn engine_status(read: &EngineRead) -> EngineStatus {
    EngineStatus {
        engine: read.endpoint.engine.to_owned(),
        host: read.endpoint.host.clone(),
        origin: read.endpoint.origin.clone(),
        running: read.containers.as_ref().ok().map(Vec::len),
        error: read.containers.as_ref().err().map(ToString::to_string),
    }
}

/// `c`, with its own processes' listeners on the host as its ports: a host-network container
/// publishes nothing.
fn with_own_listeners(c: &ContainerFacts, own: &[&HeldInside]) -> ContainerFacts {
    let mut c = c.clone();
    c.ports.extend(own.iter().map(|l| Published {
        host_ip: l.local.ip(),
        host_port: l.local.port(),
        container_port: l.local.port(),
    }));
    c
}

/// The command that stops `c` through its engine, as its user would type it: Compose's for a
/// Compose service (`docker compose -p shop stop db`), the engine's own otherwise.
fn stop_command(engine: &str, c: &ContainerFacts) -> String {
    let cli = if engine == "Podman" {
        "podman"
    } else {
        "docker"
    };
    match &c.compose {
        Some(Compose {
            project,
            service: Some(service),
            ..
        }) => format!("{cli} compose -p {project} stop {service}"),
        _ => format!("{cli} stop {}", c.name),
    }
}

/// A host listener held by a container's processes (their cgroup names it).
struct HeldInside {
    /// The container's full id.
    container: String,
    /// The listener.
    local: SocketAddr,
    /// Its holders.
    owners: Vec<Pid>,
}

/// Every host listener held by a container's processes.
fn listeners_in_containers(facts: &mut Facts) -> Vec<HeldInside> {
    let listeners: Vec<(SocketAddr, Vec<Pid>)> = match &facts.sockets {
        Ok(t) => t
            .sockets
            .iter()
            .filter(|s| s.state == TcpState::Listen && !s.owners.is_empty())
            .map(|s| (s.local, s.owners.clone()))
            .collect(),
        Err(_) => return Vec::new(),
    };
    listeners
        .into_iter()
        .filter_map(|(local, owners)| {
            let container = owners.iter().find_map(|&o| facts.container_of(o))?;
            Some(HeldInside {
                container,
                local,
                owners,
            })
        })
        .collect()
}

/// The marker of an engine's group: its containers outside any Compose project.
pub(crate) const ENGINE_GROUP: &str = "container engine";

/// A Compose project's folder (the project around it, when there is one, so its containers
/// share a card group with the project's dev servers), or the engine's group.
fn place(c: &ContainerFacts, host: &str, home: Option<&Path>, marker_at: MarkerLookup) -> Place {
    // `$HOME` and `/` are never projects, Compose's or anyone's.
    let working_dir = c
        .compose
        .as_ref()
        .and_then(|c| c.working_dir.as_ref())
        .filter(|d| d.parent().is_some() && Some(d.as_path()) != home);
    if let Some(dir) = working_dir {
        let (path, marker) = match project::find_project(dir, home, marker_at) {
            Some(p) => (p.path, p.marker.to_owned()),
            None => (dir.clone(), "docker compose".to_owned()),
        };
        return Place {
            name: super::folder_name(&path),
            path,
            marker: Some(marker),
        };
    }
    Place {
        path: PathBuf::from(host),
        name: "Containers".to_owned(),
        marker: Some(ENGINE_GROUP.to_owned()),
    }
}

/// The host listeners a published port is held by: bound to its port, on its address (an
/// unspecified one is published on both families' wildcard).
fn claimed_listeners(ports: &[Published], host: &[Socket]) -> Vec<SocketAddr> {
    host.iter()
        .filter(|s| s.state == TcpState::Listen)
        .filter(|s| {
            ports.iter().any(|p| {
                p.host_port == s.local.port()
                    && (p.host_ip == s.local.ip()
                        || (p.host_ip.is_unspecified() && s.local.ip().is_unspecified()))
            })
        })
        .map(|s| s.local)
        .collect()
}

/// One container's card. `engine`: its engine's name and host; `processes`: its own processes
/// seen holding host listeners (a host-network container's), and every engine process holding
/// a host socket; `host`: the host's sockets, and the listeners its ports are held by.
fn card(
    facts: &Facts,
    (engine, host_name): (&str, &str),
    c: &ContainerFacts,
    holders: (&HashSet<Pid>, &[Pid]),
    host: (&[Socket], &[SocketAddr]),
    (sample, thresholds): (Option<&Samples>, Thresholds),
) -> Container {
    let mut evidence = engine_evidence(engine, c);
    let measured = sample.map(|s| {
        s.get(&c.id)
            .cloned()
            .unwrap_or(Err(crate::containers::Unmeasured::NotRead))
    });
    let (activity, measured) = rules::container_activity(&c.name, measured, thresholds);
    evidence.push(activity);
    let conns = connections(facts, engine, c, holders, host, &mut evidence);
    Container {
        id: format!("container-{}", c.id.get(..12).unwrap_or(&c.id)),
        level: rules::level_of(&evidence),
        name: c.name.clone(),
        image: c.image.clone(),
        container_id: c.id.clone(),
        engine: engine.to_owned(),
        engine_host: host_name.to_owned(),
        ports: published_ports(c),
        connections: conns.iter().map(Conn::shown).collect(),
        age_seconds: c.started_at.as_deref().and_then(age_seconds),
        started_at: c.started_at.clone(),
        activity: measured,
        compose_project: c.compose.as_ref().map(|c| c.project.clone()),
        compose_service: c.compose.as_ref().and_then(|c| c.service.clone()),
        restart_policy: c.restart_policy.clone(),
        auto_remove: c.auto_remove,
        reasons: crate::model::reason::reasons_of(&evidence)
            .into_iter()
            .collect(),
        evidence,
    }
}

/// What the engine says of the container: what it is, what makes the engine its manager,
/// and a stop signal Pier would never send.
fn engine_evidence(engine: &str, c: &ContainerFacts) -> Vec<Evidence> {
    let mut evidence = vec![rules::container_evidence(
        &c.name,
        &c.image,
        engine,
        c.host_network,
    )];
    evidence.extend(rules::engine_managed(
        c.restart_policy.as_deref(),
        c.auto_remove,
        engine,
        &stop_command(engine, c),
    ));
    if let Some(why) = c
        .stop_signal
        .as_deref()
        .and_then(|s| crate::containers::control::check_stop_signal(s).err())
    {
        evidence.push(rules::unsendable_stop_signal(
            &why.to_string(),
            &stop_command(engine, c),
        ));
    }
    evidence
}

/// The container's connections — on its published ports, to its addresses, and inside its
/// own namespace — with their evidence added to `evidence`, after what could not be read.
fn connections(
    facts: &Facts,
    engine: &str,
    c: &ContainerFacts,
    (processes, engine_processes): (&HashSet<Pid>, &[Pid]),
    (host, published): (&[Socket], &[SocketAddr]),
    evidence: &mut Vec<Evidence>,
) -> Vec<Conn> {
    // The engine's side of every connection: whoever holds the published ports' listeners,
    // and every engine process holding a socket.
    let engine_pids: HashSet<Pid> = host
        .iter()
        .filter(|s| s.state == TcpState::Listen && published.contains(&s.local))
        .flat_map(|s| s.owners.iter().copied())
        .chain(engine_processes.iter().copied())
        .chain(processes.iter().copied())
        .collect();
    // Without the host's tables nothing can be said of its connections (red, as for any
    // resource).
    if let Err(e) = &facts.sockets {
        evidence.push(Finding::TablesUnreadable(e.to_string()).evidence());
    }
    let mut conns = on_published(&c.ports, facts, host, &engine_pids);
    conns.extend(to_addresses(c, host, &engine_pids));
    if c.host_network {
        // Its namespace is the host's: every connection is in the host's table.
        if processes.is_empty() {
            evidence.push(rules::host_network(engine));
        }
    } else {
        match &c.namespace {
            Some(Ok(inside)) => conns.extend(inside_namespace(inside, host)),
            Some(Err(e)) => evidence.push(rules::container_connections_unread(&e.to_string())),
            None => evidence.push(rules::container_connections_unread(&format!(
                "{engine} gives no host process for it (it runs in a VM)"
            ))),
        }
    }
    connections::name_clients(&mut conns, |pid| facts.table.get(pid), facts.uid);
    evidence.extend(rules::connection_evidence(&conns, 0));
    conns
}

/// The container's published ports, by port and address.
fn published_ports(c: &ContainerFacts) -> Vec<PublishedPort> {
    let mut ports: Vec<PublishedPort> = c
        .ports
        .iter()
        .map(|p| PublishedPort {
            port: p.host_port,
            address: p.host_ip.to_string(),
            container_port: p.container_port,
        })
        .collect();
    ports.sort_by(|a, b| (a.port, &a.address).cmp(&(b.port, &b.address)));
    ports
}

/// The engine's processes among the holders of host sockets: their legs are the engine's
/// plumbing, not clients.
fn engine_owners(facts: &Facts, host: &[Socket]) -> Vec<Pid> {
    let owners: BTreeSet<Pid> = host.iter().flat_map(|s| s.owners.iter().copied()).collect();
    owners
        .into_iter()
        .filter(|&pid| {
            facts
                .table
                .get(pid)
                .is_some_and(|p| processes::engine_program(&p.comm, &p.argv).is_some())
        })
        .collect()
}

/// Clients of the published ports, on the host: connections accepted by the engine's proxy.
fn on_published(
    ports: &[Published],
    facts: &Facts,
    host: &[Socket],
    engine_pids: &HashSet<Pid>,
) -> Vec<Conn> {
    let listeners: Vec<SocketAddr> = ports
        .iter()
        .map(|p| SocketAddr::new(p.host_ip, p.host_port))
        .collect();
    connections::connections_indexed(&listeners, host, &facts.index, engine_pids)
}

/// Host sockets whose far end is one of the container's addresses, held by anyone but the
/// engine (a client on the host talking to the container directly; the proxy's own legs are
/// counted at the published port).
fn to_addresses(c: &ContainerFacts, host: &[Socket], engine_pids: &HashSet<Pid>) -> Vec<Conn> {
    let canonical = connections::canonical_addr;
    host.iter()
        .filter(|s| {
            // A dual-stack client writes the container's IPv4 address IPv4-mapped.
            s.state == TcpState::Established
                && c.addresses.iter().any(|&a| {
                    let a = canonical(SocketAddr::new(a, 0)).ip();
                    canonical(s.remote).ip() == a
                })
        })
        .filter(|s| s.owners.is_empty() || !s.owners.iter().all(|o| engine_pids.contains(o)))
        .map(|s| Conn {
            local: canonical(s.remote),
            peer: canonical(s.local),
            peer_pid: s.owners.first().copied(),
            internal: false,
            client: None,
        })
        .collect()
}

/// Connections on the container's own listeners, inside its namespace, but for those whose
/// other end is a host socket (counted on the host).
fn inside_namespace(inside: &[Socket], host: &[Socket]) -> Vec<Conn> {
    let listeners: Vec<SocketAddr> = inside
        .iter()
        .filter(|s| s.state == TcpState::Listen)
        .map(|s| s.local)
        .collect();
    let canonical = connections::canonical_addr;
    let seen_on_host: HashSet<(SocketAddr, SocketAddr)> = host
        .iter()
        .filter(|s| s.state == TcpState::Established)
        .map(|s| (canonical(s.local), canonical(s.remote)))
        .collect();
    // A half-open server end (SYN-RECV, under `TCP_DEFER_ACCEPT`) is a client too (§2.4).
    inside
        .iter()
        .filter(|s| matches!(s.state, TcpState::Established | TcpState::SynRecv))
        .filter(|s| listeners.iter().any(|&l| connections::serves(l, s.local)))
        .map(|s| (canonical(s.local), canonical(s.remote)))
        .filter(|&(local, remote)| !seen_on_host.contains(&(remote, local)))
        .map(|(local, peer)| Conn {
            local,
            peer,
            peer_pid: None,
            internal: false,
            client: None,
        })
        .collect()
}

/// Seconds since an RFC 3339 time the engine gave; `None` for a time it did not give (Docker
/// writes `0001-01-01T00:00:00Z`) or one in the future.
fn age_seconds(started_at: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339(started_at).ok()?;
    SystemTime::now()
        .duration_since(t)
        .ok()
        .map(|d| d.as_secs())
}

#[cfg(test)]
mod tests;
