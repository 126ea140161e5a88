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
    /// `"green"`: safe to stop. Only a green resource is stopped without `--force`.
    Green,
    /// `"yellow"`: something argues against stopping it (someone may still hold it, it is
    /// busy, a fact is missing); worth a look first.
    Yellow,
    /// `"red"`: do not touch (a live connection, an identity or socket table that could not
    /// be read, a protected process).
    Red,
}

impl Level {
    /// The level as the JSON spells it: `"green"`, `"yellow"` or `"red"`.
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
    /// A port the resource listens on: a fact, not an argument either way (green).
    Listening,
    /// An established connection from outside the resource, or connections waiting to be
    /// accepted on its listener (red).
    LiveConnection,
    /// A connection between two members of the resource (does not count as live).
    InternalConnection,
    /// The socket table could not be read, or a member's connections cannot be seen at all
    /// (another network namespace): nothing can be said about connections (red).
    ConnectionsUnreadable,
    /// Adopted by init or a session subreaper, or its terminal hung up and its parent is that
    /// terminal's shell (green).
    Orphaned,
    /// Its parent is still a live shell, terminal, editor, multiplexer, or any process Pier
    /// cannot place, or its parent could not be read (yellow).
    NotOrphaned,
    /// Run on purpose by a service manager (a systemd `.service` unit, a launchd agent),
    /// named with the command that stops it there (yellow).
    ServiceUnit,
    /// Run by a live process manager (pm2, supervisord, overmind, foreman, process-compose),
    /// named with its program and the command that stops it there (yellow): a signal would
    /// be answered by a restart.
    Managed,
    /// A member that starts its child again when it exits (nodemon, a reloader, a shell
    /// loop): part of the resource, stopped with it (green: a fact, not an argument).
    Respawner,
    /// CPU and disk I/O over the sample window: idle (green) or busy (yellow).
    Activity,
    /// The CPU time a tree known only by how it was launched used over its life: mostly idle
    /// (green), or a job's (yellow), or unread (yellow).
    LifeActivity,
    /// A member's activity counters could not be read: it cannot be shown idle (yellow).
    ActivityUnreadable,
    /// No activity sample was taken (`--sample-ms 0`): it does not count (green).
    ActivityNotSampled,
    /// A process of the resource, or one that may belong to it, could not be read, so it
    /// cannot be re-verified before a signal (red).
    IdentityUnreadable,
    /// A member's executable cannot be read (e.g. a non-dumpable process).
    ExeUnreadable,
    /// A member's open files could not be read: it may hold connections Pier cannot see
    /// (yellow).
    FdTableUnreadable,
    /// PID 1, Pier itself, an ancestor of Pier, another user's process, or a container
    /// engine's own process.
    Protected,
    /// A member is a container engine's client that stands for containers (`docker run`
    /// attached, `docker compose up`), named with the engine's own command (yellow): never
    /// signalled, not even with Force — a signal would stop its containers (and `--rm` remove
    /// one) outside the container rules. The container's card is where it is stopped.
    EngineClient,
    /// The user's protect list names it (its project, a port, its container's name), or the
    /// list could not be read (yellow): never offered, never stopped, not even with Force.
    UserProtected,
    /// No process of the tree has its command line any more (each rewrote it): a restart
    /// could not bring it back.
    NotRestartable,
    /// A data service — a database, cache, queue, search or object store, an emulator — known
    /// by name or by a member holding a file of the project locked or open for writing, named
    /// with where its data is and its own shutdown command; or a member whose open files could
    /// not be read, so that it cannot be ruled out (yellow). Never stopped, not even with
    /// Force: its data lives there.
    DataService,
    /// A listening socket the resource shares with a process outside it: stopping the
    /// resource would not free the port, and the other holder may be serving on it.
    SharedListener,
    /// A container, as its engine describes it: name, image, engine (green).
    Container,
    /// The engine decides this container's fate: a restart policy (it would start it again),
    /// auto-remove (once stopped it could not be started again), or a stop Pier does not make
    /// (yellow).
    EngineManaged,
    /// A container's connections inside its own network namespace could not be read (yellow).
    ContainerConnectionsUnread,
}

/// One typed fact behind a level, with where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What kind of fact it is (`"tool_kind"`, `"live_connection"`, …).
    pub kind: EvidenceKind,
    /// What this fact argues for; the resource's level is the worst of its evidence's.
    pub level: Level,
    /// The fact in words, for a person (`"known dev tool: vite (pid 17821)"`).
    pub message: String,
    /// Where it was read: `"argv"`, `"launcher's argv"`, `"title"`, `"package-manager
    /// script"`, `"socket table"`, `"process table"`, `"cgroup"`, `"activity sample"` or
    /// `"fd table"`.
    pub source: String,
}

/// One listening TCP socket of the resource's members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    /// The local port it listens on.
    pub port: u16,
    /// The local address it is bound to, without brackets (`"127.0.0.1"`, `"::"`).
    pub address: String,
    /// The first member among the socket's holders (a listening socket can be shared).
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

/// One process of a resource (its root, or a live descendant), as the scan read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    /// Its process id; with `start_time`, who it is ([`Member::identity`]).
    pub pid: u32,
    /// The kernel's raw start time (Linux: clock ticks since boot, `/proc/<pid>/stat` field
    /// 22; macOS: µs since the epoch).
    pub start_time: u64,
    /// Its parent's pid when the table was read.
    pub ppid: u32,
    /// The uid it runs as (its effective uid: whose process it is).
    pub uid: u32,
    /// Its argv as the kernel gives it, a rewritten title's padding included, with U+FFFD for
    /// bytes that are not UTF-8.
    pub argv: Vec<String>,
    /// The kernel's short name for the process.
    pub command: String,
    /// The path of its executable; `null` when unreadable (which makes the resource yellow,
    /// `exe_unreadable`).
    pub exe: Option<String>,
    /// Its working directory; `null` when unreadable.
    pub cwd: Option<String>,
    /// Its memory as the scan read it (`Probe::memory`): proportional where the OS gives it,
    /// else resident; `null` when it could not be read.
    pub memory: Option<super::memory::Memory>,
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

/// One ESTABLISHED connection on one of the resource's listeners.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Connection {
    /// The resource's end, `address:port` (`127.0.0.1:5173`, `[::1]:5173`).
    pub local: String,
    /// The other end, `address:port`.
    pub peer: String,
    /// The process holding the other end, when Pier could see it.
    pub peer_pid: Option<u32>,
    /// Both ends belong to this resource: it does not count as a live connection.
    pub internal: bool,
    /// The program holding the other end and what it likely is; `null` when Pier could not
    /// see it (another user's socket, another machine, not yet accepted).
    pub client: Option<super::client::Client>,
}

/// CPU and disk I/O of all members over the sample window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Activity {
    /// The sample window, in milliseconds.
    pub window_ms: u64,
    /// Percent of one core.
    pub cpu_percent: f64,
    /// Bytes of disk I/O (read and written) per second, summed over the members.
    pub io_bytes_per_second: f64,
    /// The member that used the most (CPU, or disk I/O when only that is over the threshold);
    /// `null` when no member was measured.
    pub busiest: Option<BusiestMember>,
}

/// One member's share of the sample: the process the activity evidence names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BusiestMember {
    /// Its process id.
    pub pid: u32,
    /// Its command line, short: the program and its script by file name, then the arguments
    /// (a rewritten title's padding dropped, cut at 60 characters).
    pub command: String,
    /// Percent of one core.
    pub cpu_percent: f64,
    /// Its bytes of disk I/O (read and written) per second.
    pub io_bytes_per_second: f64,
    /// Percent of one core it used on average over its whole life: far below its share in
    /// the window means a burst that waiting may outlast; `null` when not read.
    pub life_cpu_percent: Option<f64>,
    /// Seconds since it started; `null` when not read.
    pub age_seconds: Option<u64>,
}

/// One resource: a root process and its live descendants, with what the scan saw of them and
/// the evidence behind their level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// `"<root pid>-<root start_time>"`: stable for the same tree; what `pier stop` takes.
    pub id: String,
    /// The worst level among its evidence.
    pub level: Level,
    /// The known tool kind (`"vite"`, `"next-dev"`, …), or `"unknown"`.
    pub kind: String,
    /// The root process: the top of the tool's launch chain, `{"pid": N, "start_time": N}`.
    pub root: Identity,
    /// Every listening socket its members hold, by port then address; a helper's too (see
    /// [`Port::helper`]).
    pub ports: Vec<Port>,
    /// The root and every live descendant, root first, then breadth first.
    pub members: Vec<Member>,
    /// The ESTABLISHED connections on its listeners, internal ones included.
    pub connections: Vec<Connection>,
    /// Seconds since the root started; `null` when unknown.
    pub age_seconds: Option<u64>,
    /// `null` when not sampled (`--sample-ms 0`) or unreadable (see the evidence).
    pub activity: Option<Activity>,
    /// The memory of its members added up ([`super::memory::Memory::total`]): about what
    /// stopping it frees. `null` when a member's could not be read.
    pub memory: Option<super::memory::Memory>,
    /// Every fact its level rests on.
    pub evidence: Vec<Evidence>,
    /// The reasons against stopping it, one per kind of fact that is not green, in the table's
    /// order (`reason::Reason`: what a stop anyway may set aside).
    pub reasons: Vec<super::reason::Reason>,
    /// The process manager, systemd unit or launchd agent that runs its root on purpose;
    /// `null` when none does. Such a resource is never green.
    pub managed_by: Option<super::managed::ManagedBy>,
    /// The members that start their child again when it exits (nodemon, a reloader, a shell
    /// loop): part of the resource, stopped with it.
    pub respawners: Vec<super::managed::Respawner>,
    /// Where the live parent that keeps it from being orphaned is — its program, terminal,
    /// tmux pane or screen window — while that is a reason (`not_orphaned`); else `null`.
    pub parent: Option<super::client::Parent>,
    /// Its idle clock (docs/design.md §5a), where a scheduler measured it (the app, `pier
    /// watch`); `null` in a scan that has no clock (`pier scan`).
    #[serde(default)]
    pub idle: Option<super::idle::Idle>,
    /// Its armed stop ("stop when safe"), when one waits on it; else `null`.
    #[serde(default)]
    pub armed: Option<super::arm::Armed>,
    /// What the automatic-stop rules say of it, where a scheduler judged them (the app, `pier
    /// watch`, `pier auto`), or that they are off because the rules file is unreadable; else
    /// `null`.
    #[serde(default)]
    pub auto: Option<super::rules::AutoNote>,
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

/// One group of cards: a project folder (or, outside any project, a working directory) and the
/// resources found in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Project {
    /// The folder's last component (`"shop-web"`).
    pub name: String,
    /// The project folder; for resources outside any project, their working directory.
    pub path: String,
    /// The marker that made `path` a project (`".git"`, `"package.json"`, …); `null` when the
    /// resources are outside any project and shown under their working directory.
    pub marker: Option<String>,
    /// The worst level among its resources.
    pub level: Level,
    /// The resources found there, by root pid.
    pub resources: Vec<Resource>,
    /// The containers placed here: a Compose project's in its folder, the others in their
    /// engine's group (whose `path` is the engine's host, `marker` `"container engine"`).
    pub containers: Vec<super::container::Container>,
}

/// A listener that is not a candidate (listed with `--all`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherListener {
    /// The local port it listens on.
    pub port: u16,
    /// The local address it is bound to, without brackets (`"0.0.0.0"`, `"::1"`).
    pub address: String,
    /// A process holding it; `null` when no owner is visible (another user's process, or one
    /// Pier cannot read).
    pub pid: Option<u32>,
    /// That process's kernel short name (`comm`); `null` when it is not visible.
    pub command: Option<String>,
    /// Why it is not a candidate, in words.
    pub reason: String,
}

/// One whole scan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scan {
    /// The document's schema version, [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The scan counter of the worker that made it; `1` from the CLI.
    pub generation: u64,
    /// RFC 3339, UTC.
    pub scanned_at: String,
    /// The activity window; 0 when not sampled.
    pub sample_ms: u64,
    /// The cards, one group per folder, by path.
    pub projects: Vec<Project>,
    /// Present with `--all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_listeners: Option<Vec<OtherListener>>,
    /// The container engines asked, each with its count of running containers or why it
    /// could not be asked. Empty when none was found.
    pub engines: Vec<super::container::EngineStatus>,
}
