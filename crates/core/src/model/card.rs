//! What a scan says: the cards, as plain serialisable data. This is the `pier scan --json`
//! document (schema 1, described in `docs/scan-json.md`); the text cards render the same values.
//! Text that was not UTF-8 on the machine is carried here with U+FFFD in its place.

use serde::{Deserialize, Serialize};

use super::Identity;

/// The JSON document's schema version. Bump it when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// Safe to stop, argued against, or do not touch. Ordered: the worst level wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Green,
    Yellow,
    Red,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Green => "green",
            Level::Yellow => "yellow",
            Level::Red => "red",
        }
    }
}

/// The kinds of fact a level can rest on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// A known dev tool, recognised from argv.
    ToolKind,
    /// Listens inside a project, but the tool is not one Pier knows.
    UnknownKind,
    Listening,
    LiveConnection,
    /// A connection between two members of the resource (does not count as live).
    InternalConnection,
    ConnectionsUnreadable,
    Orphaned,
    NotOrphaned,
    /// Run on purpose by a service manager (a systemd `.service` unit).
    ServiceUnit,
    Activity,
    ActivityUnreadable,
    ActivityNotSampled,
    IdentityUnreadable,
    /// A member's executable cannot be read (e.g. a non-dumpable process).
    ExeUnreadable,
    FdTableUnreadable,
    /// PID 1, Pier itself, an ancestor of Pier, or another user's process.
    Protected,
    /// No process of the tree has its command line any more (each rewrote it): a restart
    /// could not bring it back.
    NotRestartable,
    /// A listening socket the resource shares with a process outside it: stopping the
    /// resource would not free the port, and the other holder may be serving on it.
    SharedListener,
}

/// One typed fact behind a level, with where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub level: Level,
    pub message: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub port: u16,
    pub address: String,
    pub pid: u32,
    /// The helper whose listener this is (`"notebook kernel"`), or `None`: the server's own
    /// (the rule is in `diagnose::helpers`). A helper's port is shown apart, never offered to
    /// open and never waited for by a restart; it still counts for connections and the stop's
    /// checks. Absent in snapshots written before it was kept: those read as the server's.
    #[serde(default)]
    pub helper: Option<String>,
}

impl Port {
    /// The server's own listener (not a helper's).
    pub fn is_server(&self) -> bool {
        self.helper.is_none()
    }

    /// `127.0.0.1:5173`, `[::1]:5173`.
    pub fn endpoint(&self) -> String {
        endpoint(&self.address, self.port)
    }
}

/// An address and port as a person and a browser write them: `127.0.0.1:5173`, `[::1]:5173`.
pub fn endpoint(address: &str, port: u16) -> String {
    if address.contains(':') {
        format!("[{address}]:{port}")
    } else {
        format!("{address}:{port}")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub pid: u32,
    pub start_time: u64,
    pub ppid: u32,
    pub uid: u32,
    pub argv: Vec<String>,
    /// The kernel's short name for the process.
    pub command: String,
    pub exe: Option<String>,
    pub cwd: Option<String>,
}

impl Member {
    /// Who it is: its pid and start time, the JSON's two flat fields.
    pub fn identity(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub local: String,
    pub peer: String,
    /// The process holding the other end, when Pier could see it.
    pub peer_pid: Option<u32>,
    /// Both ends belong to this resource: it does not count as a live connection.
    pub internal: bool,
}

/// CPU and disk I/O of all members over the sample window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Activity {
    pub window_ms: u64,
    /// Percent of one core.
    pub cpu_percent: f64,
    pub io_bytes_per_second: f64,
    /// The member that used the most (CPU, or disk I/O when only that is over the threshold);
    /// `null` when no member was measured.
    pub busiest: Option<BusiestMember>,
}

/// One member's share of the sample: the process the activity evidence names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BusiestMember {
    pub pid: u32,
    /// Its command line, short: the program and its script by file name, then the arguments
    /// (a rewritten title's padding dropped, cut at 60 characters).
    pub command: String,
    /// Percent of one core.
    pub cpu_percent: f64,
    pub io_bytes_per_second: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// `"<root pid>-<root start_time>"`: stable for the same tree; what `pier stop` takes.
    pub id: String,
    pub level: Level,
    /// The known tool kind (`"vite"`, `"next-dev"`, …), or `"unknown"`.
    pub kind: String,
    pub root: Identity,
    pub ports: Vec<Port>,
    pub members: Vec<Member>,
    pub connections: Vec<Connection>,
    pub age_seconds: Option<u64>,
    /// `null` when not sampled (`--sample-ms 0`) or unreadable (see the evidence).
    pub activity: Option<Activity>,
    pub evidence: Vec<Evidence>,
}

impl Resource {
    /// The server's own listeners: the ones to open, and the ones a restart waits for.
    pub fn server_ports(&self) -> impl Iterator<Item = &Port> {
        self.ports.iter().filter(|p| p.is_server())
    }

    /// The helpers' listeners as endpoints, per helper in order of first appearance, to be
    /// shown apart from the server's (`notebook kernel: 127.0.0.1:40123, …`).
    pub fn helper_ports(&self) -> Vec<(&str, Vec<String>)> {
        let mut out: Vec<(&str, Vec<String>)> = Vec::new();
        for p in &self.ports {
            let Some(helper) = p.helper.as_deref() else {
                continue;
            };
            match out.iter_mut().find(|(h, _)| *h == helper) {
                Some((_, list)) => list.push(p.endpoint()),
                None => out.push((helper, vec![p.endpoint()])),
            }
        }
        out
    }

    /// Every member's identity, root first, as the stop compares them with what was shown.
    pub fn identities(&self) -> Vec<Identity> {
        self.members.iter().map(Member::identity).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Project {
    pub name: String,
    /// The project folder; for resources outside any project, their working directory.
    pub path: String,
    /// The marker that made `path` a project (`".git"`, `"package.json"`, …); `null` when the
    /// resources are outside any project and shown under their working directory.
    pub marker: Option<String>,
    pub level: Level,
    pub resources: Vec<Resource>,
}

/// A listener that is not a candidate (listed with `--all`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherListener {
    pub port: u16,
    pub address: String,
    pub pid: Option<u32>,
    pub command: Option<String>,
    pub reason: String,
}

/// One whole scan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scan {
    pub schema: u32,
    pub generation: u64,
    /// RFC 3339, UTC.
    pub scanned_at: String,
    /// The activity window; 0 when not sampled.
    pub sample_ms: u64,
    pub projects: Vec<Project>,
    /// Present with `--all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_listeners: Option<Vec<OtherListener>>,
}
