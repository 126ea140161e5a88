//! The one judge: the rules that decide whether a resource may be stopped, each a small pure
//! function over facts already read, answering with typed findings.
//!
//! Two callers ask the same functions. The scan (`evaluate.rs`) words every finding as
//! evidence ([`Finding::evidence`], beside its level) and takes the worst level; the stop's
//! checkpoints (`stop/checks.rs`) read the same facts again and refuse on the first finding
//! that is not green. So a checkpoint can never let through what a scan would not call green, and the
//! tests here (and `stop/tests/judge.rs`, which puts each fact before both callers) pin both.
//! Force asks its own verdict here too ([`force_allowed`]), and so do the stop's rescan and a
//! restart's refusal when they look for a process running a stopped member's command
//! ([`argv_twin`]).
//!
//! Fail closed everywhere: a fact that could not be read is a finding against stopping.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::connections::{self, Conn, SocketIndex};
use super::debugging::{self, Driven};
use super::unix_clients::{self, UnixConn};
use crate::model::card::{Evidence, EvidenceKind, Level};
use crate::probe::{
    ActivityDelta, ActivitySample, Pid, ProbeError, ProcessInfo, Socket, SocketTable,
    UnreadableProcess,
};

/// One fact about a resource that bears on stopping it, with its level ([`Finding::level`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// A process of the user's exists but its row could not be read (see [`unreadable_of`]).
    ProcessUnreadable {
        /// The pid whose row could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// The socket tables could not be read.
    TablesUnreadable(String),
    /// A member's connections these tables cannot show at all (another network namespace).
    Blind {
        /// The member whose connections cannot be seen.
        pid: Pid,
        /// Why, in the probe's words.
        why: String,
    },
    /// A member's open files could not be read.
    FdsUnreadable {
        /// The member whose open files could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        why: String,
    },
    /// A listener of the resource also held by the processes `outside` it.
    SharedListener {
        /// The address and port the shared socket listens on.
        local: SocketAddr,
        /// The holders that are not members.
        outside: Vec<Pid>,
    },
    /// A connection on one of the resource's listeners, seen at either end.
    Connection(Conn),
    /// Connections not yet accepted on the resource's listeners, completed or half-open (the
    /// macOS accept queue; Linux lists them as connections of their own), unix ones included.
    Queued(u32),
    /// A driver at work on a member's debugging port or pipe (`debugging.rs`), even one in
    /// the same tree.
    Driven(Driven),
    /// A client attached over a unix socket to one of the resource's unix listeners.
    UnixClient(UnixConn),
}

impl Finding {
    /// How much the fact argues against stopping:
    /// - red: what cannot be seen may be anything (an unreadable process may be a member, the
    ///   tables or a member's namespace unread hide every connection), and a live or queued
    ///   connection is a client the stop would cut off;
    /// - yellow: a member's open files unread (its connections may still show in the tables,
    ///   unattributed, which count), a listener shared outside (stopping would not free the
    ///   port, and the other holder may be serving on it);
    /// - green: a connection between members, which the stop ends on both sides.
    pub fn level(&self) -> Level {
        match self {
            Finding::ProcessUnreadable { .. }
            | Finding::TablesUnreadable(_)
            | Finding::Blind { .. }
            | Finding::Queued(_)
            | Finding::Driven(_)
            | Finding::UnixClient(_) => Level::Red,
            Finding::FdsUnreadable { .. } | Finding::SharedListener { .. } => Level::Yellow,
            Finding::Connection(c) if c.internal => Level::Green,
            Finding::Connection(_) => Level::Red,
        }
    }

    /// The finding in the scan's words, at its level: the one place each finding's sentence
    /// is made, beside the level it argues for.
    pub fn evidence(&self) -> Evidence {
        let (kind, message, source) = self.words();
        Evidence {
            kind,
            level: self.level(),
            message,
            source: source.to_owned(),
        }
    }

    /// What kind of evidence the finding is, its sentence, and where it was read.
    fn words(&self) -> (EvidenceKind, String, &'static str) {
        match self {
            Finding::ProcessUnreadable { pid, error } => (
                EvidenceKind::IdentityUnreadable,
                format!(
                    "identity of pid {pid} could not be read: {error} (it may belong to this \
                     resource)"
                ),
                "process table",
            ),
            Finding::TablesUnreadable(e) => (
                EvidenceKind::ConnectionsUnreadable,
                format!("connection data could not be read: {e}"),
                "socket table",
            ),
            Finding::Blind { pid, why } => (
                EvidenceKind::ConnectionsUnreadable,
                format!("connection data could not be read: pid {pid}: {why}"),
                "socket table",
            ),
            Finding::FdsUnreadable { pid, why } => (
                EvidenceKind::FdTableUnreadable,
                format!("open files of pid {pid} could not be read: {why}"),
                "fd table",
            ),
            Finding::SharedListener { local, outside } => (
                EvidenceKind::SharedListener,
                shared_words(local, outside),
                "fd table",
            ),
            Finding::Connection(c) => connection_words(c),
            Finding::Queued(n) => (
                EvidenceKind::LiveConnection,
                format!("{n} connection(s) waiting to be accepted"),
                "socket table",
            ),
            Finding::Driven(d) => (EvidenceKind::LiveConnection, driven_words(d), "argv"),
            Finding::UnixClient(c) => (
                EvidenceKind::LiveConnection,
                unix_client_words(c),
                "unix socket table",
            ),
        }
    }
}

/// A listener also held outside the resource, in words.
fn shared_words(local: &SocketAddr, outside: &[Pid]) -> String {
    let pids: Vec<String> = outside.iter().map(u32::to_string).collect();
    format!(
        "the socket listening on port {} ({}) is also held by pid {} outside this resource",
        local.port(),
        local.ip(),
        pids.join(", ")
    )
}

/// A connection on a listener, in words: between members, or live — named by its client's
/// program and what it likely is, and when it ends (`words::client_of_connection`).
fn connection_words(c: &Conn) -> (EvidenceKind, String, &'static str) {
    if c.internal {
        let who = c
            .peer_pid
            .map_or("an unattributed peer".to_owned(), |p| format!("pid {p}"));
        (
            EvidenceKind::InternalConnection,
            format!("{} ↔ {} is between members ({who})", c.local, c.peer),
            "socket table",
        )
    } else {
        (
            EvidenceKind::LiveConnection,
            format!(
                "live connection {} ← {} {}",
                c.local,
                c.peer,
                crate::words::client_of_connection(c.client.as_ref(), c.peer_pid)
            ),
            "socket table",
        )
    }
}

/// A driver at work, in words: on the debugging port, or through the pipe.
fn driven_words(d: &Driven) -> String {
    let who = |client: Option<&crate::model::client::Client>, pid: Pid| match client {
        Some(c) => match &c.command {
            Some(command) => format!("{} (pid {}: `{command}`)", c.program, c.pid),
            None => format!("{} (pid {})", c.program, c.pid),
        },
        None => format!("pid {pid}, whose program could not be read"),
    };
    match d {
        Driven::Port(c, port) => {
            let client = match c.peer_pid {
                Some(pid) => who(c.client.as_ref(), pid),
                None => "a process Pier cannot see".to_owned(),
            };
            format!(
                "a client on its debugging port :{port}: {client}, a driver at work ({} ← {})",
                c.local, c.peer
            )
        }
        Driven::Pipe { pid, parent, .. } if *parent <= 1 => format!(
            "pid {pid} is driven through its debugging pipe by the process holding its other \
             end (its parent is gone), a driver at work"
        ),
        Driven::Pipe {
            pid,
            parent,
            driver,
        } => format!(
            "pid {pid} is driven through its debugging pipe by {}, a driver at work",
            who(driver.as_ref(), *parent)
        ),
    }
}

/// A client attached over a unix socket, in words: the listener's name, and the client as a
/// TCP connection's is named.
pub fn unix_client_words(c: &UnixConn) -> String {
    format!(
        "live connection on unix socket {} {}",
        String::from_utf8_lossy(&c.name),
        crate::words::unix_client_of_connection(c.client.as_ref(), c.peer_pid)
    )
}

/// The first finding that is not green: what a checkpoint refuses on.
pub fn first_against(findings: &[Finding]) -> Option<&Finding> {
    findings.iter().find(|f| f.level() != Level::Green)
}

/// The processes of user `uid`, or of an owner that could not be read, that exist but whose
/// row could not be read. Why they count against every resource, not only one: an unreadable
/// row has an unknown parent, so the process may be a member of any resource — a member
/// nobody saw, which can hold a connection or be a new child. Another user's unreadable
/// process is never a member (Pier reads only the user's trees).
pub fn unreadable_of(list: &[UnreadableProcess], uid: u32) -> Vec<Finding> {
    list.iter()
        .filter(|u| u.uid.is_none_or(|owner| owner == uid))
        .map(|u| Finding::ProcessUnreadable {
            pid: u.pid,
            error: u.error.clone(),
        })
        .collect()
}

/// The resource's network as the rules see it, from one socket table.
#[derive(Debug)]
pub struct Network<'t> {
    /// The listening sockets any member holds, in table order.
    pub listeners: Vec<&'t Socket>,
    /// The connections on them, internal ones included (shown, not counted).
    pub conns: Vec<Conn>,
    /// The clients attached over unix sockets to the unix listeners any member holds.
    pub unix: Vec<UnixConn>,
    /// Every finding, in the order a checkpoint names them: what cannot be seen first (the
    /// tables, a member's namespace, a member's open files), then a shared listener, then each
    /// connection, then the accept queue.
    pub findings: Vec<Finding>,
}

/// Judges the connections of the resource `members` against the socket table (`index` built
/// from it once, for any number of resources).
///
/// A live connection is one on a member's listener seen at either end — the server's
/// (ESTABLISHED or half-open SYN-RECV) at the listener's address and port, or the client's
/// established to it — and listed once (`connections::connections_indexed`), internal only
/// when every holder of its other end is a member — but never on a member's debugging port,
/// where a driver in the same tree is a client at work, and a member on a debugging pipe is
/// driven too (`debugging.rs`). `row` is the caller's process table as user `uid` reads it,
/// members' argv read: it names each client (`connections::name_clients`) and says which
/// listener is a debugging port. A failed table says nothing about connections, so it is the
/// one finding. Clients on the members' unix listeners count as TCP clients do
/// (`unix_clients`); a unix table that could not be read fails every resource closed, as the
/// TCP tables do.
pub fn network<'t, 'r>(
    table: Result<&'t SocketTable, impl std::fmt::Display>,
    index: &SocketIndex,
    members: &HashSet<Pid>,
    row: impl Fn(Pid) -> Option<&'r ProcessInfo>,
    uid: u32,
) -> Network<'t> {
    let table = match table {
        Ok(table) => table,
        Err(e) => {
            return Network {
                listeners: Vec::new(),
                conns: Vec::new(),
                unix: Vec::new(),
                findings: vec![Finding::TablesUnreadable(e.to_string())],
            }
        }
    };
    let mut findings: Vec<Finding> = table
        .unix_unreadable
        .iter()
        .map(|e| Finding::TablesUnreadable(format!("unix sockets: {e}")))
        .collect();
    findings.extend(unseen(table, members));
    let listeners: Vec<&Socket> = index
        .listeners_of(members)
        .into_iter()
        .map(|i| &table.sockets[i])
        .collect();
    findings.extend(listeners.iter().filter_map(|s| shared(s, members)));
    let addrs: Vec<SocketAddr> = listeners.iter().map(|s| s.local).collect();
    let mut conns = connections::connections_indexed(&addrs, &table.sockets, index, members);
    connections::name_clients(&mut conns, &row, uid);
    let debugging = debugging::debugging_listeners(&listeners, members, &row);
    findings.extend(conns.iter_mut().map(|c| on_listener(c, &debugging)));
    findings.extend(
        debugging::piped(members, &row, uid)
            .into_iter()
            .map(Finding::Driven),
    );
    let (mut unix, unix_queued) = unix_clients::unix_clients(table, members);
    unix_clients::name_unix_clients(&mut unix, &row, uid);
    findings.extend(unix.iter().cloned().map(Finding::UnixClient));
    let queued = connections::queued_on(&listeners) + unix_queued;
    if queued > 0 {
        findings.push(Finding::Queued(queued));
    }
    Network {
        listeners,
        conns,
        unix,
        findings,
    }
}

/// A connection on a listener as a finding: on a debugging listener (`debugging`), never
/// internal — a driver in the same tree is a client at work.
fn on_listener(c: &mut Conn, debugging: &[SocketAddr]) -> Finding {
    match debugging.iter().find(|&&l| connections::serves(l, c.local)) {
        Some(l) => {
            c.internal = false;
            Finding::Driven(Driven::Port(c.clone(), l.port()))
        }
        None => Finding::Connection(c.clone()),
    }
}

/// One member's share of an activity sample, with what names it for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberActivity {
    /// The member's pid.
    pub pid: u32,
    /// Its command line for a person ([`crate::words::command_for_a_person`]).
    pub command: String,
    /// The CPU time and disk I/O it used over the window.
    pub delta: ActivityDelta,
    /// The CPU time it used over its whole life, and its age, when read
    /// ([`with_lives`]): whether waiting for it helps (`rules::waiting_helps`).
    pub life: Option<LifeSpent>,
}

/// A member's CPU time over its life, and its age.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LifeSpent {
    /// CPU time since it started (user + system, every thread's), in nanoseconds.
    pub cpu_ns: u64,
    /// Seconds since it started.
    pub age_seconds: u64,
}

impl LifeSpent {
    /// What a process-table row says of its life; `None` when either figure was not read.
    pub fn of(p: &ProcessInfo) -> Option<Self> {
        Some(Self {
            cpu_ns: p.cpu_ns?,
            age_seconds: p.age_seconds?,
        })
    }
}

/// Fills each member's life from `life` (a pid's, `None`: not read).
pub fn with_lives(measured: &mut [MemberActivity], life: impl Fn(Pid) -> Option<LifeSpent>) {
    for m in measured {
        m.life = life(m.pid);
    }
}

/// What the tables cannot show of the members: the connections of a member in another
/// namespace, then the open files of a member that could not be read.
fn unseen(table: &SocketTable, members: &HashSet<Pid>) -> Vec<Finding> {
    let of_members = |list: &[(Pid, String)]| -> Vec<(Pid, String)> {
        list.iter()
            .filter(|(pid, _)| members.contains(pid))
            .cloned()
            .collect()
    };
    let mut findings: Vec<Finding> = of_members(&table.blind)
        .into_iter()
        .map(|(pid, why)| Finding::Blind { pid, why })
        .collect();
    findings.extend(
        of_members(&table.unreadable)
            .into_iter()
            .map(|(pid, why)| Finding::FdsUnreadable { pid, why }),
    );
    findings
}

/// A listener of the members also held by processes outside them.
fn shared(s: &Socket, members: &HashSet<Pid>) -> Option<Finding> {
    let outside: Vec<Pid> = s
        .owners
        .iter()
        .copied()
        .filter(|o| !members.contains(o))
        .collect();
    (!outside.is_empty()).then_some(Finding::SharedListener {
        local: s.local,
        outside,
    })
}

/// The members' share of an activity sample, each named by `name` (`None`: not a member, left
/// out). `Err` names the first member whose activity could not be read, and why: what it did is
/// unknown, so the sample cannot argue the resource is idle — one unreadable member spoils
/// the whole sample. Whether the figures are busy is `rules::activity_evidence`'s to say.
pub fn measured(
    sample: &ActivitySample,
    name: impl Fn(Pid) -> Option<String>,
) -> Result<Vec<MemberActivity>, (Pid, String)> {
    let mut out = Vec::new();
    for (pid, delta) in &sample.per_pid {
        let Some(command) = name(*pid) else {
            continue;
        };
        match delta {
            Ok(d) => out.push(MemberActivity {
                pid: *pid,
                command,
                delta: *d,
                life: None,
            }),
            Err(e) => return Err((*pid, e.to_string())),
        }
    }
    Ok(out)
}

/// Why a process is never signalled, Force included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Protection {
    /// Another user's process, with its owner's uid.
    #[error("another user's process (uid {0})")]
    OtherUser(u32),
    /// PID 1.
    #[error("init (PID 1)")]
    Init,
    /// Pier's own process.
    #[error("Pier itself")]
    Pier,
    /// A process Pier runs under: its parent, its parent's parent, and so on.
    #[error("an ancestor of Pier")]
    PierAncestor,
    /// A container engine's own process, with its program (docs/design.md §2.8).
    #[error("the container engine's own process ({0})")]
    ContainerEngine(&'static str),
    /// A container engine's client that stands for containers (`docker run` attached,
    /// `docker compose up`), with its program (docs/design.md §2.8): a signal to it stops them.
    #[error("a container engine's client ({0}), which stands for its containers")]
    EngineClient(&'static str),
}

/// Who Pier is, for [`force_allowed`].
#[derive(Debug, Clone, Copy)]
pub struct Guard<'a> {
    /// The user Pier runs as.
    pub uid: u32,
    /// Pier's own pid.
    pub pier: Pid,
    /// Pier's ancestors, from the process table the judgement reads.
    pub pier_ancestors: &'a HashSet<Pid>,
}

/// Whether `p` may be signalled at all — the one verdict Force cannot skip. Never another
/// user's process: Pier never acts with another user's privileges, and a resource holding one
/// cannot be stopped as a unit. Never PID 1, whose end is the machine's. Never Pier or an
/// ancestor of Pier: stopping one stops the stop itself, or the terminal or editor it reports
/// to (`cargo watch -x 'run -- stop'` puts Pier inside a dev tool's tree). Never a container
/// engine's own process (`containers::processes`): stopping docker-proxy or containerd cuts or
/// stops every container it serves; a container is stopped through its engine only. Never a
/// client that stands for containers (`docker run` attached, `docker compose up`): a SIGTERM to
/// it stops them, and `--rm` removes one, outside the container rules — nor a client's program
/// whose argv was not read, which may be one.
pub fn force_allowed(p: &ProcessInfo, guard: &Guard) -> Result<(), Protection> {
    let pid = p.identity.pid;
    if p.uid != guard.uid {
        Err(Protection::OtherUser(p.uid))
    } else if pid == 1 {
        Err(Protection::Init)
    } else if pid == guard.pier {
        Err(Protection::Pier)
    } else if guard.pier_ancestors.contains(&pid) {
        Err(Protection::PierAncestor)
    } else if let Some(program) =
        crate::containers::processes::stands_for_containers(&p.comm, &p.argv, p.argv_unread)
    {
        // Before the engine's own names: `podman run` is Podman's client, named as such.
        Err(Protection::EngineClient(program))
    } else if let Some(program) = crate::containers::processes::engine_program(&p.comm, &p.argv) {
        Err(Protection::ContainerEngine(program))
    } else {
        Ok(())
    }
}

/// Where a process running a stopped member's command works, as far as can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TwinPlace {
    /// Inside the snapshot's project folder.
    InProject,
    /// Somewhere else: another checkout running the same command.
    Elsewhere,
    /// Its folder could not be read.
    Unknown(ProbeError),
}

/// Whether `p` runs, argument for argument and byte for byte, one of the `recorded` argvs (a
/// stopped member's), and if so where it works (`cwd_of` is asked only then; `None`: it is
/// gone). Only a live process of user `uid` with an argv can be one: a zombie runs nothing,
/// and an empty argv (unread, or a kernel thread) matches no command.
///
/// Why the stop's rescan and a restart both ask: a twin in the project is the same server
/// back already (a restart would start it twice); a twin whose folder cannot be read may be
/// that one, and cannot be ruled out.
pub fn argv_twin(
    p: &ProcessInfo,
    uid: u32,
    recorded: &[Vec<&[u8]>],
    project: &Path,
    cwd_of: impl FnOnce(Pid) -> Option<Result<PathBuf, ProbeError>>,
) -> Option<TwinPlace> {
    if p.uid != uid || p.zombie || !runs_recorded_argv(&p.argv, recorded) {
        return None;
    }
    Some(match cwd_of(p.identity.pid)? {
        Ok(cwd) if cwd.starts_with(project) => TwinPlace::InProject,
        Ok(_) => TwinPlace::Elsewhere,
        Err(e) => TwinPlace::Unknown(e),
    })
}

/// Whether `argv` is, argument for argument and byte for byte, one of the `recorded` argvs (a
/// stopped member's): the same command. An empty argv (unread, a kernel thread, a zombie, a
/// process exiting) runs none. The stop's rescan and a restart ask it of a twin
/// ([`argv_twin`]); the stop asks it of what a manager started during a Force stop (its
/// replacement, or another of its programs).
pub fn runs_recorded_argv<A: AsRef<[u8]>, R: AsRef<[u8]>>(argv: &[A], recorded: &[Vec<R>]) -> bool {
    !argv.is_empty()
        && recorded.iter().any(|r| {
            r.len() == argv.len() && r.iter().zip(argv).all(|(a, b)| a.as_ref() == b.as_ref())
        })
}

#[cfg(test)]
mod tests;
