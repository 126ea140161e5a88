//! Containers: what the container engines say about the ports they publish, read through
//! their API on a unix socket (docs/design.md §2.8).
//!
//! A port published by a container is held on the host by the engine (docker-proxy,
//! rootlessport, com.docker.backend, OrbStack): a user usually cannot see that process, and
//! stopping it would cut every container it serves. So the port is attributed from the engine's
//! own account — which container publishes it — not from the process holding it.
//!
//! - [`endpoints`]: where the engines' sockets are (`DOCKER_HOST`, the Docker context, the
//!   usual places of Docker, Docker Desktop, OrbStack, rootless Docker and Podman);
//! - [`engine`]: one engine's running containers, through `bollard`;
//! - [`processes`]: the engines' own processes, by name, which are never signalled;
//! - [`control`]: what a stop and a restart ask of an engine about one container (its state,
//!   its counters, its stop signal, a bounded wait, a start), and [`api`], the real one;
//! - [`sample`]: containers' activity over a window, from their engines' counters;
//! - [`error`]: what can go wrong in asking them, as kinds.
//!
//! The diagnosis turns these facts into container cards (`diagnose/containers.rs`).

pub mod control;
pub mod endpoints;
pub mod error;
pub mod processes;
pub mod sample;

#[cfg(unix)]
pub mod api;
#[cfg(unix)]
pub mod engine;

use std::net::IpAddr;

use crate::probe::{ProbeError, Socket};
use std::path::PathBuf;
use std::time::Duration;

pub use endpoints::Endpoint;
pub use error::{EngineError, NamespaceUnread, Unmeasured};

/// What one engine said, or why it could not be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineRead {
    /// Where it was asked.
    pub endpoint: Endpoint,
    /// Its running containers, or why they could not be read.
    pub containers: Result<Vec<ContainerFacts>, EngineError>,
}

/// One running container, as its engine describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerFacts {
    /// The engine's full container id (64 hex digits for Docker and Podman).
    pub id: String,
    /// Its name, without Docker's leading `/`.
    pub name: String,
    /// The image it was created from, as the user named it (`postgres:16`).
    pub image: String,
    /// When its current run started (RFC 3339, from the engine); `None` when not given.
    pub started_at: Option<String>,
    /// Its published TCP ports.
    pub ports: Vec<Published>,
    /// Its restart policy when it has one (`always`, `unless-stopped`, `on-failure`); `None`
    /// for `no`.
    pub restart_policy: Option<String>,
    /// Removed by the engine once it stops (`docker run --rm`).
    pub auto_remove: bool,
    /// The signal its stop sends (`Config.StopSignal`); `None` when its image sets none
    /// (SIGTERM).
    pub stop_signal: Option<String>,
    /// Its Compose project, when Compose created it.
    pub compose: Option<Compose>,
    /// The host pid of its first process, when the engine gives it (0 in a VM).
    pub pid: Option<u32>,
    /// Its addresses on the engine's networks.
    pub addresses: Vec<IpAddr>,
    /// Runs in the host's network namespace (`--network host`): its listeners are host
    /// listeners of its own processes, and it publishes nothing.
    pub host_network: bool,
    /// The TCP sockets of its own network namespace, read from its first process
    /// (`probe::namespace_sockets`), or why they could not be; `None` when not read (no host
    /// process, or the host's network).
    pub namespace: Option<Result<Vec<Socket>, NamespaceUnread>>,
}

/// A container port published on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Published {
    /// The host address it is published on (`0.0.0.0`, `::` or one address).
    pub host_ip: IpAddr,
    /// The host port.
    pub host_port: u16,
    /// The port inside the container.
    pub container_port: u16,
}

/// The Compose labels of a container Compose created.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Compose {
    /// `com.docker.compose.project`.
    pub project: String,
    /// `com.docker.compose.service`.
    pub service: Option<String>,
    /// `com.docker.compose.project.working_dir`: the folder `docker compose up` ran in.
    pub working_dir: Option<PathBuf>,
}

/// How long one engine may take to answer a scan. A daemon that hangs costs a scan this much,
/// once, and is then reported as unreachable.
pub const ENGINE_TIMEOUT: Duration = Duration::from_secs(2);

/// The engines to ask on this machine, from this process's environment ([`endpoints::find`]):
/// a few `stat`s, so a scan asks nothing, and starts no thread, where there is no engine.
pub fn find_engines() -> Vec<Result<Endpoint, endpoints::Unusable>> {
    endpoints::find(&endpoints::Env::from_process())
}

/// Asks each engine of `found` for its running containers, side by side. None found:
/// nothing, which is not an error.
pub fn ask_engines(found: Vec<Result<Endpoint, endpoints::Unusable>>) -> Vec<EngineRead> {
    std::thread::scope(|scope| {
        let asks: Vec<_> = found
            .into_iter()
            .map(|found| scope.spawn(move || ask(found)))
            .collect();
        asks.into_iter()
            .map(|h| h.join().expect("an engine read never panics"))
            .collect()
    })
}

fn ask(found: Result<Endpoint, endpoints::Unusable>) -> EngineRead {
    match found {
        Ok(endpoint) => {
            #[cfg(unix)]
            let containers = engine::running(&endpoint, ENGINE_TIMEOUT);
            #[cfg(not(unix))]
            let containers = Err(EngineError::NoUnixSockets);
            EngineRead {
                containers: containers.map(with_namespaces),
                endpoint,
            }
        }
        Err((endpoint, why)) => EngineRead {
            endpoint,
            containers: Err(why.into()),
        },
    }
}

/// Each card's own network namespace read, side by side: every read of a `/proc/<pid>/net`
/// table walks the kernel's whole connection hash table (about 2 ms each). Read now, before or
/// after the host's tables: a connection seen only inside counts as live, which can only make a
/// card redder.
fn with_namespaces(mut list: Vec<ContainerFacts>) -> Vec<ContainerFacts> {
    std::thread::scope(|scope| {
        let reads: Vec<_> = list
            .iter_mut()
            .filter(|c| !c.ports.is_empty() && !c.host_network)
            .map(|c| {
                scope.spawn(move || {
                    let id = c.id.clone();
                    let is_its = move |cgroup: &str| {
                        processes::container_of_cgroup(cgroup) == Some(id.as_str())
                    };
                    c.namespace = c.pid.map(|pid| {
                        crate::probe::namespace_sockets(pid, &is_its).map_err(|e| match e {
                            ProbeError::Unsupported => NamespaceUnread::InVm,
                            other => NamespaceUnread::Probe(other),
                        })
                    });
                })
            })
            .collect();
        for r in reads {
            r.join().expect("a namespace read never panics");
        }
    });
    list
}

/// This machine's engines: those [`find_engines`] finds, asked through their API
/// ([`control::EngineAccess`]).
pub struct LiveEngines;

impl control::EngineAccess for LiveEngines {
    fn read(&self) -> Vec<EngineRead> {
        ask_engines(find_engines())
    }

    #[cfg(unix)]
    fn connect(&self, host: &str) -> Result<Box<dyn control::Control>, EngineError> {
        api::Api::connect(host).map(|api| Box::new(api) as Box<dyn control::Control>)
    }

    #[cfg(not(unix))]
    fn connect(&self, host: &str) -> Result<Box<dyn control::Control>, EngineError> {
        let host = host.to_owned();
        Err(EngineError::NoUnixSocketsFor { host })
    }
}
