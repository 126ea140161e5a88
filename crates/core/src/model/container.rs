//! A container card: a container publishing ports on this machine, as its engine describes it
//! and as the socket tables show its connections (docs/design.md §2.8). Part of the
//! `pier scan --json` document (schema 1, `docs/scan-json.md`).

use serde::{Deserialize, Serialize};

use super::card::{Activity, Connection, Evidence, Level};

/// One running container with published ports (or on the host's network).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Container {
    /// `"container-<first 12 hex digits of its id>"`, as `docker ps` shows it.
    pub id: String,
    /// The worst level among its evidence.
    pub level: Level,
    /// Its name (`"shop-db-1"`).
    pub name: String,
    /// The image it runs (`"postgres:16"`).
    pub image: String,
    /// The engine's full container id.
    pub container_id: String,
    /// The engine that runs it: `"Docker"`, `"Docker Desktop"`, `"OrbStack"`, `"Colima"`,
    /// `"Podman"`.
    pub engine: String,
    /// Where the engine was asked (`"unix:///var/run/docker.sock"`).
    pub engine_host: String,
    /// Its published TCP ports, by port then address.
    pub ports: Vec<PublishedPort>,
    /// The ESTABLISHED connections on its published ports and to its addresses, as the host's
    /// socket tables show them.
    pub connections: Vec<Connection>,
    /// Seconds since its current run started; `null` when the engine did not say.
    pub age_seconds: Option<u64>,
    /// When its current run started (RFC 3339, as the engine wrote it); with
    /// `container_id`, the identity of this run, which a stop re-checks before its signal.
    pub started_at: Option<String>,
    /// Its CPU time over the scan's sample (its cgroup's, read on the host, else from its
    /// engine's statistics; disk I/O is not measured); `null` when not sampled or not
    /// measured (the evidence says why).
    pub activity: Option<Activity>,
    /// Its Compose project and service, when Compose created it.
    pub compose_project: Option<String>,
    /// Its Compose service.
    pub compose_service: Option<String>,
    /// Its restart policy (`"always"`, `"unless-stopped"`, `"on-failure"`); `null` for none.
    pub restart_policy: Option<String>,
    /// Removed by the engine once it stops (`docker run --rm`).
    pub auto_remove: bool,
    /// Every fact its level rests on.
    pub evidence: Vec<Evidence>,
    /// The reasons against stopping it, as a resource's (`reason::Reason`).
    pub reasons: Vec<super::reason::Reason>,
}

/// A container port published on a host address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedPort {
    /// The host port.
    pub port: u16,
    /// The host address, without brackets (`"127.0.0.1"`, `"0.0.0.0"`, `"::"`).
    pub address: String,
    /// The port inside the container.
    pub container_port: u16,
}

impl PublishedPort {
    /// The host address and port it is published on; an address that does not parse reads
    /// as every address (over-matching can only refuse more).
    pub fn host_addr(&self) -> std::net::SocketAddr {
        let ip = self
            .address
            .parse()
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        std::net::SocketAddr::new(ip, self.port)
    }
}

/// One container engine the scan asked, and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineStatus {
    /// `"Docker"`, `"Podman"`, …
    pub engine: String,
    /// Where it was asked.
    pub host: String,
    /// Why it was asked: `"DOCKER_HOST"`, `"docker context NAME"` or `"default place"`.
    pub origin: String,
    /// How many running containers it has; `null` when it could not be asked.
    pub running: Option<usize>,
    /// Why it could not be asked, in words; `null` when it answered. Its containers' ports
    /// then show as other listeners with no visible owner, and nothing of it is signalled.
    pub error: Option<String>,
}

/// A time as an engine writes it (RFC 3339: Docker's `Z`, Podman's `+01:00`), or `None`.
pub fn parse_engine_time(text: &str) -> Option<std::time::SystemTime> {
    if let Ok(t) = humantime::parse_rfc3339(text) {
        return Some(t);
    }
    // An offset: the same instant written in UTC, then moved by the offset.
    let split = text
        .len()
        .checked_sub(6)
        .and_then(|i| Some((text.get(..i)?, text.get(i..)?)));
    let (local, sign, offset) = match split {
        Some((local, off)) if off.starts_with(['+', '-']) && off.as_bytes()[3] == b':' => {
            (local, &off[..1], &off[1..])
        }
        _ => return None,
    };
    let (h, m) = offset.split_once(':')?;
    let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let utc = humantime::parse_rfc3339(&format!("{local}Z")).ok()?;
    let shift = std::time::Duration::from_secs(h * 3600 + m * 60);
    // 12:00+01:00 is 11:00Z.
    if sign == "+" {
        utc.checked_sub(shift)
    } else {
        utc.checked_add(shift)
    }
}
