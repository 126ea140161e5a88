//! The protect list: what the user says Pier must never offer — projects (folders), ports and
//! container names (docs/design.md §2.10). A resource or container it names is never green,
//! never in a batch, and never stopped, not even with Force. Plain data; the file it lives in
//! is `crate::config`'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The list as the file holds it (`protect.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectList {
    /// Project folders, absolute: every resource and container whose project is one of them,
    /// or a folder inside one.
    #[serde(default)]
    pub projects: Vec<PathBuf>,
    /// TCP ports: every resource that listens on one (a helper's listener too), every
    /// container that publishes one.
    #[serde(default)]
    pub ports: Vec<u16>,
    /// Container names, as the engine names them (`db`, `shop-db-1`).
    #[serde(default)]
    pub containers: Vec<String>,
}

/// The protect list as a scan sees it: read, or why it could not be read. An unreadable list
/// protects everything: Pier cannot tell what it would have named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protect {
    /// Read (a missing file is an empty list).
    List(ProtectList),
    /// The file exists but could not be read or parsed: this sentence says why.
    Unreadable(String),
}

impl Default for Protect {
    fn default() -> Self {
        Protect::List(ProtectList::default())
    }
}

impl ProtectList {
    /// Whether the list names nothing.
    pub fn is_empty(&self) -> bool {
        self.projects.is_empty() && self.ports.is_empty() && self.containers.is_empty()
    }

    /// What of the list names a card whose folders are `places` (its project's, and its
    /// members' working folders: a listed folder inside a project names what works in it)
    /// listening on `ports`, with `container` its name when it is a container's: the first
    /// entry that does, in words (`"project /home/me/pay"`, `"port 5432"`, `"container db"`),
    /// and the flag that takes it off (`--project /home/me/pay`). Folders match whole
    /// components: `/pay` never names `/payments`.
    pub fn names(
        &self,
        places: &[&Path],
        ports: &[u16],
        container: Option<&str>,
    ) -> Option<(String, String)> {
        let listed = |p: &PathBuf| places.iter().any(|place| place.starts_with(p));
        if let Some(p) = self.projects.iter().find(|p| listed(p)) {
            let p = p.display();
            return Some((format!("project {p}"), format!("--project {p}")));
        }
        if let Some(port) = self.ports.iter().find(|p| ports.contains(p)) {
            return Some((format!("port {port}"), format!("--port {port}")));
        }
        let name = container?;
        self.containers
            .iter()
            .find(|c| *c == name)
            .map(|c| (format!("container {c}"), format!("--container {c}")))
    }
}
