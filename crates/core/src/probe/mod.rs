//! The probe: everything Pier reads from the operating system, behind one narrow trait.
//!
//! The engine (diagnosis now; the stop checkpoints and restart later) is generic over
//! [`Probe`] and never touches `/proc` or `libproc` itself. That keeps the rules testable with
//! the scripted [`fake::FakeProbe`], and makes a new OS one backend file.
//!
//! Invariants every implementation keeps:
//! - A process is named by its [`Identity`] (pid + the kernel's raw start time), never a bare pid.
//! - "Could not read" is never answered as "nothing there": a failed socket table is an `Err`,
//!   an unreadable fd table is listed in [`SocketTable::unreadable`], an unreadable field is an
//!   `Err` in its slot. Callers fail closed on every one of them.
//! - A process that vanished mid-read is simply absent (it is gone, which is the goal state).
//!
//! The backend is chosen in exactly one place, [`system_probe`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub mod darwin;
mod error;
// Compile-time checks of the kernel's layouts; nothing in it runs.
#[cfg(target_os = "macos")]
mod darwin_layout;
#[cfg(any(test, feature = "test-support"))]
pub mod fake;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
pub mod netlink;
pub mod procfs;
pub mod raw;
pub mod reuse;
pub mod tmux;
pub mod unix;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod unsupported;

#[cfg(target_os = "linux")]
pub use linux::{pressure as psi, tables::Source as TableSource, LinuxProbe};
#[cfg(target_os = "macos")]
pub use macos::MacProbe;

pub use crate::model::memory::{Memory, MemoryKind};
pub use crate::model::{Identity, Pid};
pub use error::{OsError, ProbeError};

/// One row of the process table, read in one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Who it is: its pid and the kernel's raw start time.
    pub identity: Identity,
    /// Its parent's pid; 0 when it has none (PID 1's parent).
    pub ppid: Pid,
    /// Whose process it is: its effective uid, the one it runs with (Linux: the owner of
    /// `/proc/<pid>`; macOS: `pbi_uid`, the uid `PROC_UID_ONLY` lists by).
    pub uid: u32,
    /// Session id (the pid of the session leader).
    pub session: Pid,
    /// Controlling terminal device number; 0 when the process has none (or it was hung up).
    pub tty_nr: u32,
    /// The kernel's short name (`comm`), lossily decoded.
    pub comm: String,
    /// argv exactly as the kernel holds it, as bytes. Empty for kernel threads and when it
    /// could not be read: either way the process is never a candidate.
    pub argv: Vec<Vec<u8>>,
    /// `argv` was left unread (and is empty): a [`Probe::survey`] reads it only for processes
    /// whose name could be a program the caller cares about, and for socket holders.
    /// [`Probe::argv`] reads it when it turns out to be needed.
    pub argv_unread: bool,
    /// Exited but not yet reaped. A zombie counts as gone.
    pub zombie: bool,
    /// Seconds since the process started, when known.
    pub age_seconds: Option<u64>,
    /// CPU time it has used over its life (user + system, every thread's), in nanoseconds,
    /// when known: with `age_seconds`, how busy its life has been (`diagnose::launch`).
    pub cpu_ns: Option<u64>,
}

/// The process table as read: the rows, and the processes that exist but could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessList {
    /// One row per process that could be read; processes that vanished mid-read are left out.
    pub processes: Vec<ProcessInfo>,
    /// Present, not gone, but unreadable: their parent and identity are unknown, so they may
    /// belong to any resource.
    pub unreadable: Vec<UnreadableProcess>,
    /// Seen, not read: another user's processes, which a survey of the user's own
    /// ([`Probe::survey_own`]) leaves to [`Probe::rows`]. Empty from every other read.
    pub sighted: Vec<Pid>,
}

/// A process that exists but whose row could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableProcess {
    /// Its process id.
    pub pid: Pid,
    /// Its owner, when even that could not be read: `None`.
    pub uid: Option<u32>,
    /// Why its row could not be read.
    pub error: String,
}

/// Slower per-process facts, read only for the processes the diagnosis cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessDetails {
    /// The path of its executable (Linux: the `/proc/<pid>/exe` link), or why it could not be
    /// read.
    pub exe: Result<PathBuf, ProbeError>,
    /// Its working directory (Linux: the `/proc/<pid>/cwd` link), or why it could not be read.
    pub cwd: Result<PathBuf, ProbeError>,
    /// The process's cgroup path where the OS has cgroups (`None` elsewhere).
    pub cgroup: Option<Result<String, ProbeError>>,
}

/// How a process holds a file that may be its data ([`Probe::writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hold {
    /// It holds a lock on the file (Linux: `flock`, POSIX or OFD locks, read or write; macOS
    /// does not show locks, see `macos.rs`).
    Lock,
    /// It keeps the file open for writing (`O_WRONLY` or `O_RDWR`; macOS `FWRITE`).
    Write,
}

/// One regular file a process holds a lock on or keeps open for writing: what a data
/// service's files look like (`diagnose::data`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file descriptor it is held through (0, 1 and 2 are the standard streams).
    pub fd: u32,
    /// The file's path as the kernel names it (a deleted file is left out).
    pub path: PathBuf,
    /// Locked (the stronger fact, when it is both) or open for writing.
    pub how: Hold,
}

/// TCP states Pier reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TcpState {
    /// `LISTEN`: a socket waiting for connections.
    Listen,
    /// `ESTABLISHED`: one end of an open connection.
    Established,
    /// `SYN-RECV`: the server's end of a connection whose handshake it has not completed — a
    /// client's end may already be established (a listener with `TCP_DEFER_ACCEPT` keeps a
    /// silent client here until it sends), so it is a connection on the listener all the same.
    /// No process holds it.
    SynRecv,
}

/// One TCP socket from the kernel's tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Socket {
    /// This end's address and port.
    pub local: SocketAddr,
    /// The other end's address and port (the unspecified address and port 0 for a listener).
    pub remote: SocketAddr,
    /// Whether it listens or is one end of a connection (open, or half-open on the server's
    /// side).
    pub state: TcpState,
    /// Every probed process holding the socket (a listening socket can be shared, e.g. passed
    /// to a child or held by a socket-activating manager). Empty for a connection the server
    /// has not accepted yet, and for sockets held only by processes that were not probed.
    pub owners: Vec<Pid>,
    /// For a listener on platforms whose tables do not list unaccepted connections (macOS):
    /// how many completed connections wait in its accept queue. `None` where the table lists
    /// them as rows of their own (Linux).
    pub queued: Option<u32>,
}

/// The TCP tables, with the owners Pier could attribute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketTable {
    /// Every LISTEN, ESTABLISHED and SYN-RECV TCP socket read, IPv4 and IPv6.
    pub sockets: Vec<Socket>,
    /// Processes whose open files could not be read, with the reason. Their sockets may be in
    /// `sockets` without an owner: ownership for them is unknown, not absent.
    pub unreadable: Vec<(Pid, String)>,
    /// Processes whose connections these tables cannot show at all (Linux: another network
    /// namespace, with tables of its own). Nothing can be said about their connections.
    pub blind: Vec<(Pid, String)>,
    /// The stream and seqpacket unix sockets, listening or connected, that the processes
    /// owners were looked for among hold (others are left out: a peer not listed is held by
    /// none of them, so it cannot be attributed).
    pub unix: Vec<UnixSocket>,
    /// Why the unix sockets could not be read (then `unix` is empty, and every resource
    /// fails closed on it).
    pub unix_unreadable: Option<String>,
}

/// The other end of a connected unix socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnixPeer {
    /// The table does not say (Linux's `/proc/net/unix`): it counts as a client.
    Unknown,
    /// The other end has been closed: nobody is attached any more.
    Closed,
    /// The other end, by its id ([`UnixSocket::id`]).
    Socket(u64),
}

/// One unix stream or seqpacket socket held by the processes a table was read for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixSocket {
    /// The kernel's id for it, the same in every process holding it (Linux: its inode;
    /// macOS: `soi_so`).
    pub id: u64,
    /// Its name as bytes: a path, `@…` for a Linux abstract name, `None` when unnamed. The
    /// server's end of an accepted connection carries its listener's name (Linux and XNU
    /// both copy it), which is how a connection is tied to its listener.
    pub name: Option<Vec<u8>>,
    /// It listens.
    pub listening: bool,
    /// The other end of a connected socket; [`UnixPeer::Unknown`] for a listener.
    pub peer: UnixPeer,
    /// For a listener, the connections waiting to be accepted, when the table says.
    pub queued: Option<u32>,
    /// The processes holding it, sorted.
    pub owners: Vec<Pid>,
}

/// The port numbers of the listening sockets in `table`.
pub fn listening(table: &SocketTable) -> Vec<u16> {
    let mut ports: Vec<u16> = table
        .sockets
        .iter()
        .filter(|s| s.state == TcpState::Listen)
        .map(|s| s.local.port())
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// Whether a survey should read the argv of a process with this kernel name (`comm`).
pub type WantsArgv<'a> = dyn Fn(&str) -> bool + Sync + 'a;

/// The process table and the TCP tables read together: what a scan and every network
/// checkpoint start from.
#[derive(Debug)]
pub struct Survey {
    /// The process table, read first.
    pub processes: ProcessList,
    /// Owners attributed among the user's live processes ([`own_live`]). An `Err` here spoils
    /// connections only; the process table still stands.
    pub sockets: Result<SocketTable, ProbeError>,
}

/// The children of `parents` in one read of the table, as [`Probe::children`] gives them.
pub fn children_in(list: ProcessList, parents: &[Identity]) -> Vec<(Identity, ProcessInfo)> {
    let present: HashMap<Pid, Identity> = list
        .processes
        .iter()
        .filter(|p| parents.contains(&p.identity))
        .map(|p| (p.identity.pid, p.identity))
        .collect();
    list.processes
        .into_iter()
        .filter_map(|p| Some((*present.get(&p.ppid)?, p)))
        .collect()
}

/// The pids whose open files a survey reads: `uid`'s processes that are not zombies. Every one
/// of them, argv or not: a member without argv must not hide a connection.
pub fn own_live(list: &ProcessList, uid: u32) -> Vec<Pid> {
    list.processes
        .iter()
        .filter(|p| p.uid == uid && !p.zombie)
        .map(|p| p.identity.pid)
        .collect()
}

/// CPU time and disk I/O a process used over a sample window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivityDelta {
    /// CPU time used in the window by all its threads, in nanoseconds.
    pub cpu_ns: u64,
    /// Bytes of disk I/O, read and written, in the window (Linux: `read_bytes` plus
    /// `write_bytes` of `/proc/<pid>/io`).
    pub io_bytes: u64,
}

/// The result of sampling activity over `window`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivitySample {
    /// How long the sample waited between its two readings.
    pub window: Duration,
    /// Per pid: the delta, or why it could not be read. Pids that exited during the window are
    /// absent.
    pub per_pid: Vec<(Pid, Result<ActivityDelta, ProbeError>)>,
}

/// One process's cumulative counters since it started, read once, without a sample window:
/// what the idle clock takes the difference of between two rescans (docs/design.md §5a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cumulative {
    /// CPU time of all its threads, ended ones included, and of the children it has reaped,
    /// in nanoseconds: a short-lived child that came and went between two rescans counts.
    pub cpu_ns: u64,
    /// Bytes moved by its read and write calls (Linux `rchar` + `wchar`: files, pipes,
    /// terminals, and sockets read and written with read/write; macOS: disk bytes).
    pub io_bytes: u64,
    /// Its system calls that move data (Linux `syscr` + `syscw`; macOS every Unix and Mach
    /// call, which is all the kernel counts).
    pub syscalls: u64,
}

/// Two clocks read together: the idle clock counts awake time only, and tells a sleep by the
/// gap between them (docs/design.md §5a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    /// Time the machine has been awake (Linux `CLOCK_MONOTONIC`, macOS `CLOCK_UPTIME_RAW`):
    /// it stands still in suspend.
    pub awake: Duration,
    /// Time since boot, suspend included (Linux `CLOCK_BOOTTIME`, macOS
    /// `CLOCK_MONOTONIC_RAW`).
    pub since_boot: Duration,
}

/// A TCP connection that has closed or is closing (FIN-WAIT, LAST-ACK, CLOSING,
/// TIME-WAIT): held by no process any more, it still names its two ends for a while (Linux
/// keeps TIME-WAIT 60 s), so a rescan sees that a listener served since the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// This end's address and port.
    pub local: SocketAddr,
    /// The other end's address and port.
    pub remote: SocketAddr,
}

/// A fresh read of one pid's identity: the three answers, never two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdentityRead {
    /// The pid runs, with this start time and executable (`None`: exe unreadable).
    Alive {
        /// Its pid and start time, as read now.
        identity: Identity,
        /// The path of its executable now; `None` when it could not be read.
        exe: Option<PathBuf>,
    },
    /// No such process, or only its zombie is left.
    Gone,
    /// The read failed; nothing may be concluded.
    Unknown(String),
}

/// Everything the engine reads from the OS. Implementations: Linux (`/proc`), the scripted
/// macOS (`libproc`, `sysctl`; type-checked here, never run), the scripted fake for tests, and
/// an "unsupported" answer elsewhere.
pub trait Probe {
    /// The uid whose processes Pier may consider (the effective uid of Pier itself).
    fn current_uid(&self) -> u32;
    /// Pier's own pid, so that Pier and its ancestors are never candidates.
    fn own_pid(&self) -> Pid;
    /// Every visible process. Processes that vanish mid-read are left out; processes that
    /// exist but cannot be read are listed as such.
    fn processes(&self) -> Result<ProcessList, ProbeError>;
    /// exe, cwd and cgroup of one process; `None` when the process is gone or ending (its
    /// folder is gone: a process exiting has none).
    fn details(&self, pid: Pid) -> Option<ProcessDetails>;
    /// The environment a process started with, as `KEY=value` byte strings (a process of ours
    /// only; what a restart replays).
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError>;
    /// The entries of [`environment`](Probe::environment) that lie whole within its first
    /// `max` bytes: a scan's bounded read of a shell's environment (Linux; elsewhere the
    /// whole environment, already bounded by the OS's argument limit).
    fn environment_head(&self, pid: Pid, max: usize) -> Result<Vec<Vec<u8>>, ProbeError> {
        let _ = max;
        self.environment(pid)
    }
    /// Which session, window and pane a tmux pane id is, asked of its own server
    /// ([`tmux::ask`]: only a binary the user controls, only the user's socket, bounded);
    /// `None` when it was not asked or gave no answer.
    fn tmux_pane(&self, q: &tmux::TmuxQuery) -> Option<tmux::PaneName> {
        tmux::ask(q)
    }
    /// LISTEN, ESTABLISHED and SYN-RECV TCP sockets over IPv4 and IPv6, with owners attributed
    /// among `owners_among` (reading every process's open files is what the scan spends most
    /// on).
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError>;
    /// The TCP ports something listens on now, on any address: whether a stopped server's port
    /// is free. Linux's tables hold every user's sockets; a backend whose sockets are read per
    /// process (macOS) reads those of the user's own processes.
    fn listening_ports(&self) -> Result<Vec<u16>, ProbeError> {
        let table = self.sockets(&[])?;
        Ok(listening(&table))
    }
    /// [`processes`](Probe::processes), then [`sockets`](Probe::sockets) over [`own_live`].
    /// A backend may do both in one pass (Linux does), but must keep the order: the tables are
    /// read before the owners are looked for, so every socket in them that one of those
    /// processes still holds is attributed.
    ///
    /// A backend may also leave argv unread (`argv_unread`) for a process of the user that
    /// holds no socket and whose kernel name `wants_argv` turns down; reading every argv is a
    /// large share of a scan, and most processes are nothing the caller looks for.
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let _ = wants_argv;
        let processes = self.processes()?;
        let own = own_live(&processes, self.current_uid());
        let sockets = self.sockets(&own);
        Ok(Survey { processes, sockets })
    }
    /// A survey of the user's own processes, what a scan starts from: the user's rows and
    /// sockets as [`survey`](Probe::survey) reads them, and every other process only seen
    /// ([`ProcessList::sighted`]), at the one cheapest call that says "not the user's". The
    /// diagnosis reads the few of those it needs with [`rows`](Probe::rows) and
    /// [`children`](Probe::children): the ancestors of what it judges, and the children of
    /// its members (docs/decisions.md, "What a scan reads"). The default reads everything.
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.survey(wants_argv)
    }
    /// Whole rows of `pids` (argv included), read now; a pid that is gone is left out, one
    /// that cannot be read is listed as such.
    fn rows(&self, pids: &[Pid]) -> ProcessList {
        match self.processes() {
            Ok(mut list) => {
                list.processes.retain(|p| pids.contains(&p.identity.pid));
                list.unreadable.retain(|u| pids.contains(&u.pid));
                list.sighted.clear();
                list
            }
            Err(e) => ProcessList {
                unreadable: pids
                    .iter()
                    .map(|&pid| UnreadableProcess {
                        pid,
                        uid: None,
                        error: e.to_string(),
                    })
                    .collect(),
                ..ProcessList::default()
            },
        }
    }
    /// argv of the process `identity` names, read now: `None` when it is gone (or its pid now
    /// belongs to another process). What a survey left unread.
    fn argv(&self, identity: Identity) -> Option<Vec<Vec<u8>>> {
        let list = self.processes().ok()?;
        let p = list
            .processes
            .into_iter()
            .find(|p| p.identity == identity)?;
        (!p.argv_unread).then_some(p.argv)
    }
    /// The live children of each of `parents`, read now, as `(parent, child)`: a child is
    /// listed only when its parent ran as that identity through the read and the child's own
    /// row names it as its parent. A parent that is gone has none. What a stop glances at
    /// while it waits (`stop/newcomers.rs`): the default reads the whole table once; a backend
    /// that can list one process's children reads only those, and answers `Unsupported` where
    /// it cannot (Linux without `CONFIG_PROC_CHILDREN`): a glance is then skipped rather than
    /// made a whole-table read every few milliseconds.
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        Ok(children_in(self.processes()?, parents))
    }
    /// The memory of one process, read now (docs/design.md §2.11): its proportional set size
    /// where the OS gives it cheaply (Linux `smaps_rollup`), else what it does give, labelled
    /// as such (`Resident`, macOS's `Footprint`). `Err` with why when it could not be read (or
    /// the process is gone). Read only for the members of the resources a scan shows: on
    /// Linux the kernel walks the process's page tables to answer.
    fn memory(&self, pid: Pid) -> Result<Memory, ProbeError>;
    /// The regular files `pid` holds a lock on or keeps open for writing, in one pass over its
    /// open files (Linux: `/proc/<pid>/fd` and each fd's `fdinfo`; macOS: `proc_pidfdinfo`).
    /// Read only for the members of resources inside a project (`diagnose::data`). A process
    /// that is gone holds nothing; one whose open files cannot be read is an `Err`, never an
    /// empty list. The default, for a probe that cannot tell, is such an `Err`.
    fn writes(&self, pid: Pid) -> Result<Vec<Written>, ProbeError> {
        Err(ProbeError::OpenFilesUnsupported(pid))
    }
    /// [`writes`](Probe::writes) of the process `identity` names, as a scan asks right after
    /// its survey. A backend whose survey already listed that very process's fds may look
    /// again only at those that named a path (Linux); the default reads them all.
    fn writes_of(&self, identity: Identity) -> Result<Vec<Written>, ProbeError> {
        self.writes(identity.pid)
    }
    /// The cumulative counters of each of `members`, read now, each checked to still be that
    /// identity (a pid run by another process since is [`ProbeError::Gone`], as is one that
    /// ended). No window: the idle clock takes the difference between two rescans. The
    /// default, for a probe that cannot read them, answers `Unsupported` for each: an unread
    /// counter is never idle.
    fn counters(&self, members: &[Identity]) -> Vec<(Identity, Result<Cumulative, ProbeError>)> {
        members
            .iter()
            .map(|&m| (m, Err(ProbeError::Unsupported)))
            .collect()
    }
    /// The awake clock and the boot clock, read together. The default counts no sleep (both
    /// are [`now`](Probe::now)).
    fn times(&self) -> Times {
        let now = self.now();
        Times {
            awake: now,
            since_boot: now,
        }
    }
    /// The TCP connections of this machine that have closed or are closing, IPv4 and IPv6
    /// (Linux: the kernel's tables; `Unsupported` where they are read per process and a closed
    /// connection has no process, macOS).
    fn ended_connections(&self) -> Result<Vec<Ended>, ProbeError> {
        Err(ProbeError::Unsupported)
    }
    /// Whether the machine's memory is under pressure (Linux: PSI, `/proc/pressure/memory`;
    /// macOS: `kern.memorystatus_vm_pressure_level`). `Unsupported` where it cannot be read: a
    /// pressure rule then never acts.
    fn memory_pressure(&self) -> Result<crate::model::rules::MemoryPressure, ProbeError> {
        Err(ProbeError::Unsupported)
    }
    /// CPU time and I/O of `pids` over `window` (this call takes `window` to return).
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample;
    /// A fresh identity read of one pid.
    fn identity(&self, pid: Pid) -> IdentityRead;
    /// A monotonic clock: time since an arbitrary fixed point.
    fn now(&self) -> Duration;
    /// This boot's id: identities (pid, start time) from another boot mean nothing.
    fn boot_id(&self) -> Option<String>;
}

/// One reading of a process's activity counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Counters {
    /// Precise CPU time (ns) per live thread, `(tid, ns)` sorted by tid, where the OS gives
    /// it (Linux `task/*/schedstat`); `None` where only the total is known.
    pub per_thread_ns: Option<Vec<(u32, u64)>>,
    /// CPU time (ns) of every thread, ended ones included (Linux: in 10 ms ticks).
    pub cpu_total_ns: u64,
    pub io_bytes: u64,
}

impl Counters {
    /// Activity from `self` to `later`. Per thread where known (a new thread's whole time
    /// fell in the window); if a thread ended in between, its share is unknown, so the
    /// coarse total's difference is taken when larger — an ending thread never hides time.
    fn until(&self, later: &Counters) -> ActivityDelta {
        let total = later.cpu_total_ns.saturating_sub(self.cpu_total_ns);
        let cpu_ns = match (&self.per_thread_ns, &later.per_thread_ns) {
            (Some(before), Some(after)) => {
                let was = |tid: u32| {
                    before
                        .binary_search_by_key(&tid, |t| t.0)
                        .map(|i| before[i].1)
                };
                let precise: u64 = after
                    .iter()
                    .map(|&(tid, ns)| ns.saturating_sub(was(tid).unwrap_or(0)))
                    .sum();
                let ended = before
                    .iter()
                    .any(|t| after.binary_search_by_key(&t.0, |a| a.0).is_err());
                if ended {
                    precise.max(total)
                } else {
                    precise
                }
            }
            _ => total,
        };
        ActivityDelta {
            cpu_ns,
            io_bytes: later.io_bytes.saturating_sub(self.io_bytes),
        }
    }
}

/// Reads `counters` for each pid, waits `window`, reads again, and returns the differences.
/// `counters` answers `None` for a process that is gone. Shared by the backends so both
/// sample the same way.
pub(crate) fn sample_counters(
    pids: &[Pid],
    window: Duration,
    counters: impl Fn(Pid) -> Option<Result<Counters, ProbeError>>,
) -> ActivitySample {
    let before: Vec<_> = pids.iter().map(|&p| (p, counters(p))).collect();
    // The sample window itself: the one deliberate wait in a scan.
    std::thread::sleep(window);
    let per_pid = before
        .into_iter()
        .filter_map(|(pid, first)| {
            let first = first?;
            let second = counters(pid)?;
            let delta = first.and_then(|a| second.map(|b| a.until(&b)));
            Some((pid, delta))
        })
        .collect();
    ActivitySample { window, per_pid }
}

/// The LISTEN, ESTABLISHED and SYN-RECV TCP sockets of the network namespace process `pid`
/// lives in (a container's first process), without owners: what a container's connections are
/// read from (`containers::ask_engines`, `diagnose/containers.rs`). `Unsupported` where the OS
/// cannot show another namespace's tables (macOS, whose containers run in a VM). A free
/// function, not a `Probe` method: the engines are asked on threads of their own, beside the
/// survey.
///
/// `is_its(cgroup)` must accept the process's cgroup path before the read and after it, or
/// the read fails: a pid the engine gave that is not the container's (an engine in a VM gives
/// the VM's pids; a pid reused since) never lends its tables.
pub fn namespace_sockets(
    pid: Pid,
    is_its: &dyn Fn(&str) -> bool,
) -> Result<Vec<Socket>, ProbeError> {
    #[cfg(target_os = "linux")]
    {
        linux::namespace_sockets(pid, is_its)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, is_its);
        Err(ProbeError::Unsupported)
    }
}

/// One read of a cgroup's CPU time ([`cgroup_cpu_ns`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupCpu {
    /// The CPU time used by every process of the cgroup since it was made, in ns.
    pub cpu_ns: u64,
    /// The start time of the process it was read through: two reads through the same
    /// process carry the same one.
    pub start_time: u64,
}

/// The CPU time counted by the cgroup `is_its` accepts — a container's own cgroup, read
/// through its first process `pid` (whichever child of it that process sits in), so its whole
/// container's: the counter its engine's statistics report, read on the host where the host
/// can (`containers::sample`). `Unsupported` elsewhere (macOS: the container runs in a VM).
/// `is_its(cgroup path)` names the cgroup on the very line the counter comes from, before and
/// after the read, as for [`namespace_sockets`].
pub fn cgroup_cpu_ns(pid: Pid, is_its: &dyn Fn(&str) -> bool) -> Result<CgroupCpu, ProbeError> {
    #[cfg(target_os = "linux")]
    {
        linux::cgroup_cpu_ns(pid, is_its)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, is_its);
        Err(ProbeError::Unsupported)
    }
}

/// The probe for the OS Pier was built for. The one place a backend is chosen.
pub fn system_probe() -> Box<dyn Probe + Send + Sync> {
    #[cfg(target_os = "linux")]
    {
        Box::new(LinuxProbe::new())
    }
    #[cfg(target_os = "macos")]
    {
        Box::new(MacProbe::new())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Box::new(unsupported::UnsupportedProbe::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(threads: &[(u32, u64)], cpu_total_ns: u64, io_bytes: u64) -> Counters {
        Counters {
            per_thread_ns: Some(threads.to_vec()),
            cpu_total_ns,
            io_bytes,
        }
    }

    #[test]
    fn cpu_is_measured_per_thread_without_tick_noise() {
        // The coarse total moved one 10 ms tick; the threads really used 3 ms.
        let d = c(&[(1, 100), (2, 500)], 0, 10).until(&c(
            &[(1, 1_000_100), (2, 2_000_500)],
            10_000_000,
            20,
        ));
        assert_eq!((d.cpu_ns, d.io_bytes), (3_000_000, 10));
        // A thread born in the window counts whole.
        let d = c(&[(1, 100)], 0, 0).until(&c(&[(1, 100), (7, 4_000)], 0, 0));
        assert_eq!(d.cpu_ns, 4_000);
    }

    #[test]
    fn an_ending_thread_cannot_hide_the_cpu_others_spent() {
        // Thread 2 (900 ms) ended; the coarse total still rose 40 ms.
        let before = c(&[(1, 100_000_000), (2, 900_000_000)], 1_000_000_000, 0);
        let after = c(&[(1, 100_000_000)], 1_040_000_000, 0);
        assert_eq!(before.until(&after).cpu_ns, 40_000_000);
        // Where only totals exist (macOS), the total is the answer.
        let mac = |t| Counters {
            per_thread_ns: None,
            cpu_total_ns: t,
            io_bytes: 0,
        };
        assert_eq!(mac(5).until(&mac(9)).cpu_ns, 4);
    }
}
