//! Where the container engines' sockets are, decided as the `docker` CLI decides it:
//! `DOCKER_HOST` when set; otherwise the current Docker context (`DOCKER_CONTEXT`, or
//! `currentContext` in `$DOCKER_CONFIG/config.json`, `~/.docker` by default) when it is not
//! `default`; otherwise every usual place that holds a socket: Docker Engine's
//! `/var/run/docker.sock`, rootless Docker's `$XDG_RUNTIME_DIR/docker.sock`, Docker Desktop's
//! `~/.docker/run/docker.sock` (macOS) and `~/.docker/desktop/docker.sock` (Linux), OrbStack's
//! `~/.orbstack/run/docker.sock`, Colima's `~/.colima/default/docker.sock`, and Podman's
//! `$XDG_RUNTIME_DIR/podman/podman.sock` and `/run/podman/podman.sock`. One socket reached by
//! two names (Docker Desktop links `/var/run/docker.sock` to its own) is asked once.
//!
//! Only unix sockets: an engine over TCP or SSH is another machine's, whose ports are not this
//! one's. Such a setting is reported, not ignored.
//!
//! Run here: `DOCKER_HOST` naming Debian's Docker 20.10 (`tests/containers_linux.rs`), and every
//! rule below against real files and sockets in a temporary home (the unit tests). Not run
//! against the engines themselves: Docker Desktop, OrbStack, Colima, rootless Docker and Podman
//! — their places are written from their documentation (Docker Desktop's `~/.docker/run` on
//! macOS and `~/.docker/desktop` on Linux, OrbStack's `~/.orbstack/run`, Colima's
//! `~/.colima/default`, Podman's `podman.sock` under the runtime folder), and a context's
//! `meta.json` from the layout the Docker CLI writes.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::UnusableSetting;
use crate::trust::read;

/// One engine's socket, and how Pier came to ask it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The engine as its socket's place names it: `Docker`, `Docker Desktop`, `OrbStack`,
    /// `Colima`, `Podman`.
    pub engine: &'static str,
    /// The host as Docker writes it: `unix:///var/run/docker.sock`.
    pub host: String,
    /// Why this one: `DOCKER_HOST`, `docker context NAME` or `default place`.
    pub origin: String,
}

impl Endpoint {
    /// The socket's path, for a `unix://` host.
    pub fn socket(&self) -> Option<&Path> {
        self.host.strip_prefix("unix://").map(Path::new)
    }
}

/// The environment the decision reads.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `DOCKER_HOST`.
    pub docker_host: Option<String>,
    /// `DOCKER_CONTEXT`.
    pub docker_context: Option<String>,
    /// `DOCKER_CONFIG`: the folder of `config.json` and `contexts/`.
    pub docker_config: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR`.
    pub runtime_dir: Option<PathBuf>,
}

impl Env {
    /// This process's environment.
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Self {
            docker_host: var("DOCKER_HOST"),
            docker_context: var("DOCKER_CONTEXT"),
            docker_config: var("DOCKER_CONFIG").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
            runtime_dir: var("XDG_RUNTIME_DIR").map(PathBuf::from),
        }
    }

    fn config_dir(&self) -> Option<PathBuf> {
        self.docker_config
            .clone()
            .or_else(|| Some(self.home.as_ref()?.join(".docker")))
    }
}

/// A setting that names an engine Pier cannot ask: the endpoint as named, and why.
pub type Unusable = (Endpoint, UnusableSetting);

/// The engines to ask (see the module's comment). An explicit setting (`DOCKER_HOST`, a
/// context) is the only one asked, as by the `docker` CLI; without one, every usual place
/// that holds a socket.
pub fn find(env: &Env) -> Vec<Result<Endpoint, Unusable>> {
    if let Some(host) = &env.docker_host {
        return vec![named(host, "DOCKER_HOST".to_owned())];
    }
    match current_context(env) {
        Ok(None) => {}
        Ok(Some((name, host))) => return vec![named(&host, format!("docker context {name}"))],
        Err(unusable) => return vec![Err(unusable)],
    }
    let mut out: Vec<Result<Endpoint, Unusable>> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for (engine, path) in default_places(env) {
        // A socket, not a leftover file or a folder: the engine may still be down (it is
        // then reported as unreachable), but something made it.
        let Ok(real) = fs::canonicalize(&path) else {
            continue;
        };
        if !is_socket(&real) || seen.contains(&real) {
            continue;
        }
        seen.push(real);
        out.push(Ok(Endpoint {
            engine,
            host: format!("unix://{}", path.display()),
            origin: "default place".to_owned(),
        }));
    }
    out
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The usual places, in the order they are asked and reported.
fn default_places(env: &Env) -> Vec<(&'static str, PathBuf)> {
    let mut out = vec![("Docker", PathBuf::from("/var/run/docker.sock"))];
    if let Some(run) = &env.runtime_dir {
        out.push(("Docker", run.join("docker.sock")));
    }
    if let Some(home) = &env.home {
        out.push(("Docker Desktop", home.join(".docker/run/docker.sock")));
        out.push(("Docker Desktop", home.join(".docker/desktop/docker.sock")));
        out.push(("OrbStack", home.join(".orbstack/run/docker.sock")));
        out.push(("Colima", home.join(".colima/default/docker.sock")));
    }
    if let Some(run) = &env.runtime_dir {
        out.push(("Podman", run.join("podman/podman.sock")));
    }
    out.push(("Podman", PathBuf::from("/run/podman/podman.sock")));
    out
}

/// An endpoint the user named: usable when it is a unix socket.
fn named(host: &str, origin: String) -> Result<Endpoint, Unusable> {
    let engine = engine_of(host);
    let endpoint = Endpoint {
        engine,
        host: host.to_owned(),
        origin,
    };
    if host.starts_with("unix://") {
        Ok(endpoint)
    } else {
        let why = UnusableSetting::NotUnix {
            origin: endpoint.origin.clone(),
            host: host.to_owned(),
        };
        Err((endpoint, why))
    }
}

/// The engine a socket's path names.
fn engine_of(host: &str) -> &'static str {
    if host.contains("podman") {
        "Podman"
    } else if host.contains(".orbstack") {
        "OrbStack"
    } else if host.contains(".colima") {
        "Colima"
    } else if host.contains("/.docker/") {
        "Docker Desktop"
    } else {
        "Docker"
    }
}

/// The current context when it is not `default`: its name and its Docker endpoint's host.
fn current_context(env: &Env) -> Result<Option<(String, String)>, Unusable> {
    let config = env.config_dir();
    let name = match &env.docker_context {
        Some(name) => name.clone(),
        None => match config.as_deref().and_then(context_in_config) {
            Some(name) => name,
            None => return Ok(None),
        },
    };
    if name == "default" {
        return Ok(None);
    }
    let endpoint = Endpoint {
        engine: "Docker",
        host: format!("context {name}"),
        origin: format!("docker context {name}"),
    };
    let Some(meta) = config.map(|c| c.join("contexts/meta")) else {
        return Err((endpoint, UnusableSetting::NoConfigFolder { name }));
    };
    match context_host(&meta, &name) {
        Some(Ok(host)) => Ok(Some((name, host))),
        Some(Err(meta)) => Err((endpoint, UnusableSetting::NoEndpoint { name, meta })),
        None => Err((
            endpoint,
            UnusableSetting::NoSuchContext { name, folder: meta },
        )),
    }
}

/// The current context `config.json` in `config` names, when it names one. A config that
/// does not parse: none. The CLI refuses to run with it; Pier falls back to the usual places,
/// and says nothing: a broken config is the CLI's to report.
fn context_in_config(config: &Path) -> Option<String> {
    let bytes = read::following(&config.join("config.json"), read::CONFIG).ok()?;
    let v = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?;
    match v.get("currentContext").and_then(|c| c.as_str()) {
        Some(name) if !name.is_empty() => Some(name.to_owned()),
        _ => None,
    }
}

/// The Docker endpoint's host of the context `name` among those in `meta`: `None` when no
/// context has that name, `Err` with its `meta.json` when it names no Docker endpoint.
fn context_host(meta: &Path, name: &str) -> Option<Result<String, PathBuf>> {
    // Each context is a folder named by the SHA-256 of its name, holding meta.json; reading
    // each one's "Name" finds it without hashing.
    for entry in fs::read_dir(meta).into_iter().flatten().flatten() {
        let file = entry.path().join("meta.json");
        let Ok(bytes) = read::following(&file, read::CONFIG) else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        if v.get("Name").and_then(|n| n.as_str()) != Some(name) {
            continue;
        }
        return Some(
            match v.pointer("/Endpoints/docker/Host").and_then(|h| h.as_str()) {
                Some(host) => Ok(host.to_owned()),
                None => Err(file),
            },
        );
    }
    None
}

#[cfg(test)]
mod tests;
