//! One engine's running containers, through its API on a unix socket, with `bollard`.
//!
//! One call per scan and engine, plus one per running container: the list of running
//! containers (names, image, published ports, labels, networks), spoken in API 1.44 — an
//! older engine, such as Debian's Docker 20.10 at API 1.41, refuses it, and is then asked its
//! version and spoken to in its own — and each one's inspection, all at once (its start time,
//! restart policy, auto-remove, first process).
//!
//! Run here against Debian's Docker 20.10 (API 1.41, so the version fallback below); Podman's
//! compatible API and Docker 25+ accepting API 1.44 at once are from their documentation.
//!
//! bollard is async: each read runs on a current-thread runtime of its own, on the calling
//! thread, which is never one of the worker's runtime threads (`ask_engines` asks each engine
//! on a thread of its own).

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bollard::models::{ContainerInspectResponse, ContainerSummary, RestartPolicyNameEnum};
use bollard::query_parameters::{InspectContainerOptions, ListContainersOptions};
use bollard::{ClientVersion, Docker};

use super::error::EngineError;
use super::{Compose, ContainerFacts, Endpoint, Published};

/// The running containers of the engine at `endpoint`, or why they could not be read.
pub fn running(endpoint: &Endpoint, timeout: Duration) -> Result<Vec<ContainerFacts>, EngineError> {
    let runtime = client_runtime()?;
    let unreachable = |e: bollard::errors::Error| unreachable(endpoint, words(&e));
    // bollard asks `Path::exists`, which calls a socket Pier may not reach "not found".
    if let Some(socket) = endpoint.socket() {
        if let Err(e) = std::fs::metadata(socket) {
            return Err(unreachable_socket(endpoint, socket, &e));
        }
    }
    runtime.block_on(async {
        let connect = |version: &ClientVersion| {
            Docker::connect_with_unix(&endpoint.host, timeout.as_secs().max(1), version)
        };
        let docker = connect(&FIRST_TRY).map_err(unreachable)?;
        let (docker, list) = list(docker).await.map_err(unreachable)?;
        let inspected = inspect_all(&docker, &list).await.map_err(|e| match e {
            Inspected::Task(why) => EngineError::Inspection { why },
            Inspected::Engine(e) => unreachable(e),
        })?;
        Ok(list
            .into_iter()
            .zip(inspected)
            .filter_map(|(summary, inspected)| facts(summary, inspected?))
            .collect())
    })
}

/// A current-thread runtime for one engine client.
pub(super) fn client_runtime() -> Result<tokio::runtime::Runtime, EngineError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::Client { why: e.to_string() })
}

fn unreachable(endpoint: &Endpoint, why: String) -> EngineError {
    EngineError::Unreachable {
        who: endpoint.engine,
        host: endpoint.host.clone(),
        why,
    }
}

fn unreachable_socket(endpoint: &Endpoint, socket: &Path, e: &std::io::Error) -> EngineError {
    unreachable(endpoint, format!("{}: {e}", socket.display()))
}

/// The running containers' list entries. Spoken first in the version current engines all
/// accept, which saves asking for the version (the engine's slowest answer, milliseconds); an
/// engine that refuses it (Docker before 25, or a Podman that wants another) is asked its
/// own, and then spoken to in it: the client returned is the one that answered.
async fn list(
    mut docker: Docker,
) -> Result<(Docker, Vec<ContainerSummary>), bollard::errors::Error> {
    let options = || {
        Some(ListContainersOptions {
            all: false,
            ..Default::default()
        })
    };
    let list = match docker.list_containers(options()).await {
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 400,
            message,
        }) if message.contains("version") => {
            docker = docker.negotiate_version().await?;
            docker.list_containers(options()).await
        }
        other => other,
    }?;
    Ok((docker, list))
}

/// Why the inspections of a list could not all be had.
enum Inspected {
    /// A task of the runtime's failed.
    Task(String),
    /// The engine failed one.
    Engine(bollard::errors::Error),
}

/// Every entry of `list` inspected, at once (each is one round trip to the engine), in the
/// list's order; `None` for one removed between the list and its inspection: gone, not a
/// failure.
async fn inspect_all(
    docker: &Docker,
    list: &[ContainerSummary],
) -> Result<Vec<Option<ContainerInspectResponse>>, Inspected> {
    let mut inspections = tokio::task::JoinSet::new();
    for (i, id) in list.iter().enumerate() {
        let Some(id) = id.id.clone() else {
            continue;
        };
        let docker = docker.clone();
        inspections.spawn(async move {
            let inspected = docker
                .inspect_container(&id, None::<InspectContainerOptions>)
                .await;
            (i, inspected)
        });
    }
    let mut inspected: Vec<Option<ContainerInspectResponse>> = vec![None; list.len()];
    while let Some(done) = inspections.join_next().await {
        let (i, answer) = done.map_err(|e| Inspected::Task(e.to_string()))?;
        match answer {
            Ok(one) => inspected[i] = Some(one),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => return Err(Inspected::Engine(e)),
        }
    }
    Ok(inspected)
}

/// The restart policy of a container whose inspection gave no host configuration.
pub const UNKNOWN_POLICY: &str = "unknown (the engine did not say)";

/// API 1.44: Docker Engine 25 and later accept it (29 accepts nothing older).
const FIRST_TRY: ClientVersion = ClientVersion {
    major_version: 1,
    minor_version: 44,
};

/// An engine error in a sentence: the engine's own message when it answered.
pub(super) fn words(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => {
            // "error trying to connect: Permission denied (os error 13)": the innermost cause
            // is the one a person can act on.
            let mut cause: &dyn std::error::Error = other;
            while let Some(inner) = cause.source() {
                cause = inner;
            }
            cause.to_string()
        }
    }
}

/// One container's facts from its list entry and its inspection. `None`: not running any
/// more.
pub fn facts(
    summary: ContainerSummary,
    inspected: ContainerInspectResponse,
) -> Option<ContainerFacts> {
    let state = inspected.state.as_ref();
    if state.and_then(|s| s.running) == Some(false) {
        return None;
    }
    let host_config = inspected.host_config.as_ref();
    let labels = summary.labels.unwrap_or_default();
    let ports = published(summary.ports.unwrap_or_default());
    let network_mode = summary
        .host_config
        .and_then(|h| h.network_mode)
        .unwrap_or_default();
    let addresses = addresses(summary.network_settings);
    Some(ContainerFacts {
        id: summary.id?,
        name: summary
            .names
            .unwrap_or_default()
            .first()
            .map(|n| n.trim_start_matches('/').to_owned())
            .unwrap_or_default(),
        image: summary.image.unwrap_or_default(),
        started_at: state.and_then(|s| s.started_at.clone()),
        ports,
        restart_policy: policy_of(host_config),
        auto_remove: host_config.and_then(|h| h.auto_remove).unwrap_or(false),
        stop_signal: inspected
            .config
            .as_ref()
            .and_then(|c| c.stop_signal.clone())
            .filter(|s| !s.is_empty()),
        compose: compose(&labels),
        pid: state
            .and_then(|s| s.pid)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p > 0),
        addresses,
        host_network: network_mode == "host",
        namespace: None,
    })
}

/// A container's published TCP ports, sorted, each once.
fn published(ports: Vec<bollard::models::PortSummary>) -> Vec<Published> {
    let mut ports: Vec<Published> = ports
        .into_iter()
        .filter(|p| {
            p.typ
                .is_none_or(|t| t == bollard::models::PortSummaryTypeEnum::TCP)
        })
        .filter_map(|p| {
            Some(Published {
                // No address, or one that does not parse: every address, which claims the
                // port's listeners and counts their clients (over-matching only reddens).
                host_ip: p
                    .ip
                    .as_deref()
                    .and_then(|ip| ip.parse().ok())
                    .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)),
                host_port: p.public_port?,
                container_port: p.private_port,
            })
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// A container's addresses on its engine's networks.
fn addresses(settings: Option<bollard::models::ContainerSummaryNetworkSettings>) -> Vec<IpAddr> {
    settings
        .and_then(|n| n.networks)
        .unwrap_or_default()
        .into_values()
        .flat_map(|n| [n.ip_address, n.global_ipv6_address])
        .flatten()
        .filter_map(|a| a.parse().ok())
        .collect()
}

/// A container's restart policy from its inspection's host configuration; `None` for `no`.
/// An inspection without a host configuration says nothing of a policy: unknown, not none.
pub(super) fn policy_of(host_config: Option<&bollard::models::HostConfig>) -> Option<String> {
    match host_config {
        None => Some(UNKNOWN_POLICY.to_owned()),
        Some(h) => h
            .restart_policy
            .as_ref()
            .and_then(|r| r.name)
            .and_then(|n| match n {
                RestartPolicyNameEnum::EMPTY | RestartPolicyNameEnum::NO => None,
                other => Some(other.to_string()),
            }),
    }
}

fn compose(labels: &HashMap<String, String>) -> Option<Compose> {
    Some(Compose {
        project: labels.get("com.docker.compose.project")?.clone(),
        service: labels.get("com.docker.compose.service").cloned(),
        working_dir: labels
            .get("com.docker.compose.project.working_dir")
            .map(PathBuf::from),
    })
}

#[cfg(test)]
mod tests;
