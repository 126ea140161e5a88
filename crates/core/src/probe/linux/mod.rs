//! The Linux probe: `/proc` for processes, identities and activity, netlink `sock_diag` (or
//! `/proc/net/tcp{,6}`) for the socket tables, `/proc/<pid>/fd` links for socket ownership,
//! `smaps_rollup` (or `statm`) for a process's memory (`memory.rs`); memory pressure from
//! PSI (`pressure.rs`); the idle clock's cumulative counters and clocks (`cumulative.rs`) and
//! its dump of ended connections (`tables.rs`).
//!
//! A survey — what a scan and each network checkpoint need — reads the socket tables first and
//! then makes one pass over `/proc`, spread over the cores: per process its row and, for the
//! user's live processes, the sockets it holds. It keeps which of their fds named a path, so
//! that the files a member holds (`Probe::writes_of`) are read without walking its fds again.
//!
//! Error policy: a process that vanishes between two reads is left out (ENOENT/ESRCH mean
//! gone); any other failure is carried to the caller as a `ProbeError` in the field it spoiled.

mod children;
mod cumulative;
mod fds;
mod memory;
pub mod pressure;
mod rows;
pub mod tables;
mod writes;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rustix::fs::{openat, Mode, OFlags, RawDir, CWD};

use super::procfs::{self as parse, TcpRow};
use super::unix::UnixRow;
use super::{
    ActivitySample, Identity, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessInfo,
    Socket, SocketTable, Survey, UnixSocket, WantsArgv,
};
use super::{Counters, ProcessList};
use fds::{FdWalk, Walker};
use rows::{Clock, Row};
use tables::Source;

/// The Linux backend: `/proc`, and netlink `sock_diag` or `/proc/net/tcp{,6}` for the TCP
/// tables.
pub struct LinuxProbe {
    ticks_per_second: u64,
    uid: u32,
    pid: Pid,
    tables: Source,
    /// [`LinuxProbe::last_tables`], as a number (0 none, 1 sock_diag, 2 `/proc/net`).
    last_tables: AtomicU8,
    /// What the last survey saw of the open files of the user's processes it walked whole.
    surveyed: Mutex<HashMap<Pid, Files>>,
}

/// The fds of one process whose links named a path when a survey walked its fd folder.
struct Files {
    /// The process's start time: the fds are its, and no later holder's of its pid.
    start_time: u64,
    fds: Vec<u32>,
}

/// Pids handed to a thread at a time.
const BLOCK: usize = 32;

/// What a pass over `/proc` reads per pid.
#[derive(Clone, Copy)]
enum PassMode<'a> {
    /// Whole rows ([`Probe::processes`]).
    Rows,
    /// Sockets only, of every pid given ([`Probe::sockets`]).
    Walk,
    /// The user's rows, with argv only where wanted, and their sockets when `walk`; other
    /// users' processes as `others` says ([`Probe::survey`], [`Probe::survey_own`]).
    Survey {
        walk: bool,
        wants_argv: &'a WantsArgv<'a>,
        others: Others,
    },
}

/// What a survey reads of another user's process, once its owner said it is not the user's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Others {
    /// Its `stat` (parent, session, start time), for a table with every process in it
    /// ([`Probe::survey`]: the stop's checkpoints judge whole trees on it).
    Rows,
    /// Nothing more ([`Probe::survey_own`]: the scan reads the few it needs later).
    Sighted,
}

/// The unix-socket table as read, or why it could not be.
type Unix = Result<Vec<UnixRow>, ProbeError>;

/// What a pass over `/proc` read.
#[derive(Default)]
struct Pass {
    list: ProcessList,
    fds: FdWalk,
}

/// The tables with each socket's holders among the walked processes; of the unix sockets,
/// only those some walked process holds.
fn attribute(rows: Vec<TcpRow>, unix: Unix, fds: FdWalk) -> SocketTable {
    let mut owners: HashMap<u64, Vec<Pid>> = HashMap::new();
    for (inode, pid) in fds.sockets {
        owners.entry(inode).or_default().push(pid);
    }
    for list in owners.values_mut() {
        list.sort_unstable();
        list.dedup();
    }
    let sockets = rows
        .into_iter()
        .map(|row| Socket {
            local: row.local,
            remote: row.remote,
            state: row.state,
            owners: match row.inode {
                0 => Vec::new(),
                inode => owners.get(&inode).cloned().unwrap_or_default(),
            },
            queued: None,
        })
        .collect();
    let (unix, unix_unreadable) = match unix {
        Ok(rows) => (held_unix(rows, &owners), None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    SocketTable {
        sockets,
        unreadable: fds.unreadable,
        blind: fds.blind,
        unix,
        unix_unreadable,
    }
}

/// The unix sockets of `rows` that some walked process holds, with their holders.
fn held_unix(rows: Vec<UnixRow>, owners: &HashMap<u64, Vec<Pid>>) -> Vec<UnixSocket> {
    rows.into_iter()
        .filter_map(|row| {
            let holders = owners.get(&row.inode)?;
            Some(UnixSocket {
                id: row.inode,
                name: row.name,
                listening: row.listening,
                peer: row.peer,
                queued: row.queued,
                owners: holders.clone(),
            })
        })
        .collect()
}

/// The parts of a pass as one, in pid order whatever thread read what: answers do not depend
/// on scheduling.
fn merge(parts: Vec<Pass>) -> Pass {
    let mut all = Pass::default();
    for mut part in parts {
        all.list.processes.append(&mut part.list.processes);
        all.list.unreadable.append(&mut part.list.unreadable);
        all.list.sighted.append(&mut part.list.sighted);
        all.fds.sockets.append(&mut part.fds.sockets);
        all.fds.unreadable.append(&mut part.fds.unreadable);
        all.fds.blind.append(&mut part.fds.blind);
        all.fds.files.append(&mut part.fds.files);
    }
    all.list.processes.sort_unstable_by_key(|p| p.identity.pid);
    all.list.unreadable.sort_unstable_by_key(|u| u.pid);
    all.list.sighted.sort_unstable();
    all.fds.unreadable.sort_unstable();
    all.fds.blind.sort_unstable();
    all
}

/// Walks the fd folder of `pid` (which started at `start_time`) for its sockets, keeping the
/// fds that named a path: whether it holds a socket; or, when its folder is gone or cannot be
/// read, the row it reads as. A folder that cannot be opened is noted among the unreadable.
fn walk_fds(pid: Pid, start_time: u64, walker: &mut Walker, fds: &mut FdWalk) -> Result<bool, Row> {
    match Walker::open(pid) {
        Ok(dir) => match fd_folder(pid, &dir, start_time) {
            Folder::Read { size } => {
                let walked = walker.walk_open(pid, dir, size, fds);
                if let Some(files) = walked.files {
                    fds.files.push((pid, start_time, files));
                }
                Ok(walked.holds_sockets)
            }
            Folder::Gone => Err(Row::Gone),
            Folder::Unreadable(why) => Err(rows::unreadable(pid, why)),
        },
        Err(e) if is_gone(&e) => Err(Row::Gone),
        Err(e) => {
            fds.unreadable.push((pid, format!("/proc/{pid}/fd: {e}")));
            Ok(false)
        }
    }
}

/// The threads a pass runs on: the cores, up to eight.
fn cores() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
}

/// The `getdents` buffer `/proc` is listed with: small, so that the first pids reach the
/// pass's other threads at once (listing `/proc` costs the kernel about a microsecond an
/// entry, a long wait for 2,000 processes).
const PROC_DIRENTS: usize = 4096;

/// Lists `/proc` (open as `dir`), handing its pids to `block` [`BLOCK`] at a time as they are
/// read. A failed read fails the listing: the table would not be whole.
fn list_proc(dir: &OwnedFd, mut block: impl FnMut(Vec<Pid>)) -> Result<(), ProbeError> {
    let mut buf = [MaybeUninit::<u8>::uninit(); PROC_DIRENTS];
    let mut entries = RawDir::new(dir, &mut buf);
    let mut pending = Vec::with_capacity(BLOCK);
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| ProbeError::io("/proc", e))?;
        let Some(pid) = std::str::from_utf8(entry.file_name().to_bytes())
            .ok()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        pending.push(pid);
        if pending.len() == BLOCK {
            block(std::mem::replace(&mut pending, Vec::with_capacity(BLOCK)));
        }
    }
    if !pending.is_empty() {
        block(pending);
    }
    Ok(())
}

/// Where the threads of a pass take their next block of pids.
enum Blocks<'a> {
    Given {
        pids: &'a [Pid],
        next: AtomicUsize,
    },
    /// As `/proc` is listed, until it has been listed whole.
    Listed(Mutex<Receiver<Vec<Pid>>>),
}

impl Blocks<'_> {
    fn next(&self) -> Option<Cow<'_, [Pid]>> {
        match self {
            Blocks::Given { pids, next } => {
                let start = next.fetch_add(BLOCK, Ordering::Relaxed);
                let block = pids.get(start..(start + BLOCK).min(pids.len()))?;
                Some(Cow::Borrowed(block))
            }
            // The lock is held only to take one block.
            Blocks::Listed(rx) => rx
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .recv()
                .ok()
                .map(Cow::Owned),
        }
    }
}

impl LinuxProbe {
    /// A probe for this process (its effective uid and pid), reading the TCP tables from
    /// sock_diag, falling back to `/proc/net`; `PIER_SOCKET_TABLES=procfs` reads `/proc/net`
    /// only.
    pub fn new() -> Self {
        Self::with_tables(Source::from_env())
    }

    /// A probe reading the TCP tables from `tables` (tests pin the `/proc/net` fallback).
    pub fn with_tables(tables: Source) -> Self {
        Self {
            ticks_per_second: rustix::param::clock_ticks_per_second().max(1),
            uid: rustix::process::geteuid().as_raw(),
            pid: std::process::id(),
            tables,
            last_tables: AtomicU8::new(0),
            surveyed: Mutex::new(HashMap::new()),
        }
    }

    /// The source that answered the last table read: sock_diag, or `/proc/net` after a
    /// fallback (`None` before any read, or when both failed).
    pub fn last_tables(&self) -> Option<Source> {
        match self.last_tables.load(Ordering::Relaxed) {
            1 => Some(Source::SockDiag),
            2 => Some(Source::ProcNet),
            _ => None,
        }
    }

    fn tables(&self) -> Result<Vec<TcpRow>, ProbeError> {
        let read = tables::read(self.tables);
        let code = match &read {
            Ok((_, Source::SockDiag)) => 1,
            Ok((_, Source::ProcNet)) => 2,
            Err(_) => 0,
        };
        self.last_tables.store(code, Ordering::Relaxed);
        read.map(|(rows, _)| rows)
    }

    /// How this boot turns start times into ages.
    fn clock(&self) -> Clock {
        Clock {
            ticks_per_second: self.ticks_per_second,
            uptime: read_small(Path::new("/proc/uptime"))
                .ok()
                .and_then(|b| parse::parse_uptime(&b)),
        }
    }

    /// One pass over every process, spread over the machine's cores: this thread lists
    /// `/proc` while the others read the blocks it has listed, then reads with them. A failed
    /// listing fails the pass.
    fn pass_all(&self, mode: PassMode) -> Result<Pass, ProbeError> {
        let dir = openat(
            CWD,
            "/proc",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| ProbeError::io("/proc", e))?;
        let (tx, rx) = channel();
        let blocks = Blocks::Listed(Mutex::new(rx));
        // `tx` goes with the listing: the channel closes when the listing ends.
        let list = move || list_proc(&dir, |block| drop(tx.send(block)));
        let (pass, listed) = self.pass(&blocks, cores(), mode, list);
        listed.map(|()| pass)
    }

    /// One pass over `pids`, spread over the machine's cores.
    fn pass_over(&self, pids: &[Pid], mode: PassMode) -> Pass {
        let blocks = Blocks::Given {
            pids,
            next: AtomicUsize::new(0),
        };
        let threads = cores().min(pids.len().div_ceil(BLOCK));
        self.pass(&blocks, threads, mode, || ()).0
    }

    /// The pass itself: `threads` threads, this one among them once it has run `first`, read
    /// the pids of `blocks` as `mode` says.
    fn pass<R>(
        &self,
        blocks: &Blocks,
        threads: usize,
        mode: PassMode,
        first: impl FnOnce() -> R,
    ) -> (Pass, R) {
        let clock = self.clock();
        let own_ns = fs::read_link("/proc/self/ns/net").ok();
        // Processes differ in cost (a few fds or thousands), so the work is handed out in
        // small blocks as threads come free rather than split in equal halves up front.
        let work = || {
            let mut out = Pass::default();
            let mut walker = Walker::new(own_ns.as_deref());
            while let Some(block) = blocks.next() {
                for &pid in block.iter() {
                    self.read_one(pid, mode, clock, &mut walker, &mut out);
                }
            }
            out
        };
        // This thread works too: one fewer to start.
        let (parts, first) = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            let first = first();
            let mine = work();
            let parts: Vec<Pass> = handles
                .into_iter()
                .map(|h| h.join().expect("a /proc pass never panics"))
                .chain([mine])
                .collect();
            (parts, first)
        });
        (merge(parts), first)
    }

    /// One pid of a pass, read as `mode` says into `out`.
    fn read_one(
        &self,
        pid: Pid,
        mode: PassMode,
        clock: Clock,
        walker: &mut Walker,
        out: &mut Pass,
    ) {
        let row = match mode {
            PassMode::Rows => rows::read_row(pid, clock),
            PassMode::Walk => {
                walker.walk(pid, &mut out.fds);
                return;
            }
            PassMode::Survey {
                walk,
                wants_argv,
                others,
            } => self.survey_one(
                pid,
                clock,
                walk.then_some(walker),
                wants_argv,
                others,
                &mut out.fds,
            ),
        };
        match row {
            Row::Read(info) => out.list.processes.push(info),
            Row::Sighted(pid) => out.list.sighted.push(pid),
            Row::Gone => {}
            Row::Unreadable(u) => out.list.unreadable.push(u),
        }
    }

    /// One process of a survey. First its owner, one `stat` of its folder: another user's
    /// process costs that and what `others` asks, no more. Of the user's, the stat and the fd
    /// folder (opened once: its size bounds the listing, its links give the sockets); argv
    /// for those that hold a socket or whose name `wants_argv` accepts; the rest is left
    /// unread.
    fn survey_one(
        &self,
        pid: Pid,
        clock: Clock,
        walker: Option<&mut Walker>,
        wants_argv: &WantsArgv,
        others: Others,
        fds: &mut FdWalk,
    ) -> Row {
        // A pid that changed hands between this read and the next would have to come round
        // the whole pid space in between; every stop reads its trees again.
        let uid = match rows::owner(pid) {
            Ok(Some(uid)) => uid,
            Ok(None) => return Row::Gone,
            Err(e) => return rows::unreadable(pid, e),
        };
        if uid != self.uid {
            return match others {
                Others::Rows => rows::stat_row(pid, uid, clock),
                Others::Sighted => Row::Sighted(pid),
            };
        }
        let (comm, stat) = match rows::stat(pid) {
            Ok(Some(read)) => read,
            Ok(None) => return Row::Gone,
            Err(e) => return rows::unreadable(pid, e),
        };
        let zombie = stat.state == b'Z' || stat.state == b'X';
        // A wanted name's argv is read right after its stat, as a whole row read does.
        let mut argv = None;
        if wants_argv(&comm) {
            argv = match rows::argv(pid) {
                Some(argv) => Some(argv),
                None => return Row::Gone,
            };
        }
        let mut holds_sockets = false;
        if let Some(walker) = walker.filter(|_| !zombie) {
            holds_sockets = match walk_fds(pid, stat.start_time, walker, fds) {
                Ok(holds) => holds,
                Err(row) => return row,
            };
        }
        // A socket holder's argv is read after its walk, which can be long: the start time is
        // read again, so a pid that changed hands meanwhile never lends its argv.
        if holds_sockets && argv.is_none() {
            let identity = Identity {
                pid,
                start_time: stat.start_time,
            };
            argv = match self.argv(identity) {
                Some(argv) => Some(argv),
                None => return Row::Gone,
            };
        }
        Row::Read(rows::info(pid, comm, stat, uid, argv, clock))
    }

    /// One survey: the tables first (every socket in them that a process still holds is then
    /// found), then one pass.
    fn survey_with(&self, wants_argv: &WantsArgv, others: Others) -> Result<Survey, ProbeError> {
        let tables = self.tables();
        let unix = tables::unix(self.tables);
        // Without tables there is nothing to attribute: the walk is skipped, and every
        // resource fails closed on the error.
        let walk = tables.is_ok();
        let mode = PassMode::Survey {
            walk,
            wants_argv,
            others,
        };
        let mut pass = self.pass_all(mode);
        let files = pass.as_mut().map(|p| std::mem::take(&mut p.fds.files));
        self.keep_files(files.unwrap_or_default());
        let pass = pass?;
        Ok(Survey {
            processes: pass.list,
            sockets: tables.map(|rows| attribute(rows, unix, pass.fds)),
        })
    }

    /// Keeps what this survey saw of open files in place of the last one's (nothing, when it
    /// walked no fds or failed): [`Probe::writes_of`] answers from the newest survey only.
    fn keep_files(&self, files: Vec<(Pid, u64, Vec<u32>)>) {
        let files = files
            .into_iter()
            .map(|(pid, start_time, fds)| (pid, Files { start_time, fds }))
            .collect();
        *self.surveyed.lock().unwrap_or_else(PoisonError::into_inner) = files;
    }

    /// CPU ns summed over the threads of `pid`, and its storage I/O bytes.
    /// Precise CPU ns over the live threads (`task/*/schedstat`), coarse CPU over all of them
    /// (`stat` utime + stime), and storage I/O bytes. Any failed read is an error, never 0.
    fn counters(&self, pid: Pid) -> Option<Result<Counters, ProbeError>> {
        let stat_path = format!("/proc/{pid}/stat");
        let ticks = match read_small(Path::new(&stat_path)) {
            Ok(bytes) => match parse::parse_stat(&bytes) {
                // Dead, being reaped: its counters read 0 now; it is gone.
                Some((_, stat)) if stat.state == b'X' => return None,
                Some((_, stat)) => stat.cpu_ticks,
                None => return Some(Err(unexpected(stat_path))),
            },
            Err(e) if is_gone(&e) => return None,
            Err(e) => return Some(Err(ProbeError::read(stat_path, e))),
        };
        let mut threads = match thread_ns(pid)? {
            Ok(threads) => threads,
            Err(e) => return Some(Err(e)),
        };
        let io_path = format!("/proc/{pid}/io");
        let io = match read_small(Path::new(&io_path)) {
            Ok(bytes) => parse::parse_io_bytes(&bytes),
            Err(e) if is_gone(&e) => return None,
            Err(e) => return Some(Err(ProbeError::read(io_path, e))),
        };
        threads.sort_unstable();
        let ns_per_tick = 1_000_000_000 / self.ticks_per_second;
        Some(
            io.map(|io_bytes| Counters {
                per_thread_ns: Some(threads),
                cpu_total_ns: ticks.saturating_mul(ns_per_tick),
                io_bytes,
            })
            .ok_or_else(|| unexpected(io_path)),
        )
    }
}

/// The precise CPU ns of each live thread of `pid` (`task/*/schedstat`), as `(tid, ns)`;
/// `None` when the process is gone. A thread that ended mid-walk is left out: the coarse
/// total still holds its time.
fn thread_ns(pid: Pid) -> Option<Result<Vec<(u32, u64)>, ProbeError>> {
    let task_dir = format!("/proc/{pid}/task");
    let tasks = match fs::read_dir(&task_dir) {
        Ok(tasks) => tasks,
        Err(e) if is_gone(&e) => return None,
        Err(e) => return Some(Err(ProbeError::read(task_dir, e))),
    };
    let mut threads = Vec::new();
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<u32>().ok())
        else {
            continue;
        };
        let path = task.path().join("schedstat");
        match read_small(&path).map(|b| parse::parse_schedstat(&b)) {
            Ok(Some(ns)) => threads.push((tid, ns)),
            Ok(None) => return Some(Err(unexpected(path.display().to_string()))),
            Err(e) if is_gone(&e) => {}
            Err(e) => return Some(Err(ProbeError::read(path.display().to_string(), e))),
        }
    }
    Some(Ok(threads))
}

/// A `/proc` file that did not read as its format says.
fn unexpected(path: String) -> ProbeError {
    ProbeError::malformed(path, "unexpected format")
}

/// Reads a small `/proc` file whole. `fs::read` sizes its buffer from the file's length, which
/// `/proc` reports as 0, and then grows it from 32 bytes in many reads; one 4 KiB read (and one
/// more to see the end) is what these files need.
fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(4096);
    read_into(path, &mut out)?;
    Ok(out)
}

/// At most the first `max` bytes of a NUL-separated `/proc` file (`environ`), cut after its
/// last whole entry when there is more: an entry cut short is no entry.
fn read_head(path: &Path, max: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::with_capacity(max.min(16 * 1024));
    fs::File::open(path)?
        .take(max as u64 + 1)
        .read_to_end(&mut out)?;
    if out.len() > max {
        let whole = out[..max]
            .iter()
            .rposition(|&b| b == 0)
            .map_or(0, |i| i + 1);
        out.truncate(whole);
    }
    Ok(out)
}

/// [`read_small`] into `out` (cleared first), so a caller reading many files reuses one buffer.
fn read_into(path: &Path, out: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read;
    let mut file = fs::File::open(path)?;
    out.clear();
    loop {
        out.reserve(4096);
        let start = out.len();
        out.resize(start + 4096, 0);
        let n = file.read(&mut out[start..])?;
        out.truncate(start + n);
        // These files are generated whole on the first read: a short read is the end, which
        // saves the extra read that would only return 0.
        if n < 4096 {
            return Ok(());
        }
    }
}

impl Default for LinuxProbe {
    fn default() -> Self {
        Self::new()
    }
}

/// What the open `/proc/<pid>/fd` folder says of its process.
#[derive(Debug, PartialEq, Eq)]
enum Folder {
    /// Its size: the process's open fds, where the kernel counts them.
    Read {
        size: Option<u64>,
    },
    /// The process ended after its folder was opened.
    Gone,
    Unreadable(ProbeError),
}

/// The size of the open fd folder of the process `pid` that started at
/// `start_time`. Found by the soak's runs side by side: a folder opened just before its
/// process ended answers ENOENT, and every resource on the machine read red ("it may belong
/// to this resource") for a process that was simply gone. It is gone if its pid no longer
/// holds it.
fn fd_folder(pid: Pid, dir: &impl rustix::fd::AsFd, start_time: u64) -> Folder {
    match rustix::fs::fstat(dir) {
        Ok(st) => Folder::Read {
            size: u64::try_from(st.st_size).ok(),
        },
        Err(e) if is_gone(&e.into()) && !still_there(pid, start_time) => Folder::Gone,
        Err(e) => Folder::Unreadable(ProbeError::read(format!("/proc/{pid}/fd"), e)),
    }
}

/// Whether `pid` still holds the process that started at `start_time`.
fn still_there(pid: Pid, start_time: u64) -> bool {
    matches!(rows::stat(pid), Ok(Some((_, s))) if s.start_time == start_time)
}

/// The CPU time of the cgroup `is_its` accepts, read through process `pid` (a container's
/// first process): `probe::cgroup_cpu_ns`. The counter read is one its `/proc/<pid>/cgroup`
/// names on a line `is_its` accepts, before and after the read, and the process's start time
/// is returned with it, so a caller comparing two reads knows they are the same process's.
pub(super) fn cgroup_cpu_ns(
    pid: Pid,
    is_its: &dyn Fn(&str) -> bool,
) -> Result<super::CgroupCpu, ProbeError> {
    let io = |path: &str| {
        let path = path.to_owned();
        move |source: std::io::Error| ProbeError::io(path, source)
    };
    let stat_path = format!("/proc/{pid}/stat");
    let start_time = || -> Result<u64, ProbeError> {
        let bytes = read_small(Path::new(&stat_path)).map_err(io(&stat_path))?;
        parse::parse_stat(&bytes)
            .map(|(_, stat)| stat.start_time)
            .ok_or_else(|| ProbeError::Parse {
                path: stat_path.clone(),
                what: "unexpected format".into(),
            })
    };
    let cgroup_path = format!("/proc/{pid}/cgroup");
    let files = || -> Result<_, ProbeError> {
        let bytes = read_small(Path::new(&cgroup_path)).map_err(io(&cgroup_path))?;
        Ok(parse::cgroup_cpu_files(&bytes, is_its))
    };
    let started = start_time()?;
    let candidates = files()?;
    if candidates.is_empty() {
        return Err(ProbeError::NoContainerCgroup(pid));
    }
    let mut last = None;
    for (file, kind) in candidates {
        let counter = match read_small(&file) {
            Ok(counter) => counter,
            Err(source) => {
                last = Some(ProbeError::io(file.display().to_string(), source));
                continue;
            }
        };
        let cpu_ns = parse::parse_cgroup_cpu(&counter, kind).ok_or_else(|| ProbeError::Parse {
            path: file.display().to_string(),
            what: "no CPU time".into(),
        })?;
        // The same process all through, still in that cgroup.
        if start_time()? != started || !files()?.iter().any(|(f, _)| *f == file) {
            return Err(ProbeError::ChangedWhileRead(pid));
        }
        return Ok(super::CgroupCpu {
            cpu_ns,
            start_time: started,
        });
    }
    Err(last.unwrap_or(ProbeError::Parse {
        path: cgroup_path,
        what: "no cgroup that counts CPU time".into(),
    }))
}

/// See [`super::namespace_sockets`].
pub(super) fn namespace_sockets(
    pid: Pid,
    is_its: &dyn Fn(&str) -> bool,
) -> Result<Vec<Socket>, ProbeError> {
    let check = || {
        let path = format!("/proc/{pid}/cgroup");
        let bytes =
            read_small(Path::new(&path)).map_err(|source| ProbeError::io(path.clone(), source))?;
        match parse::parse_cgroup(&bytes) {
            Some(cgroup) if is_its(&cgroup) => Ok(()),
            Some(cgroup) => Err(ProbeError::NotTheContainers { pid, cgroup }),
            None => Err(ProbeError::Parse {
                path,
                what: "no cgroup path".into(),
            }),
        }
    };
    check()?;
    let rows = tables::namespace_of(pid)?;
    // The same process all through: had it ended, a missing table would have read as none.
    check()?;
    Ok(rows
        .into_iter()
        .map(|r| Socket {
            local: r.local,
            remote: r.remote,
            state: r.state,
            owners: Vec::new(),
            queued: None,
        })
        .collect())
}

/// ENOENT and ESRCH: the process (or its fd) is gone, which is an answer, not a failure.
fn is_gone(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(3)
}

impl Probe for LinuxProbe {
    fn current_uid(&self) -> u32 {
        self.uid
    }

    fn own_pid(&self) -> Pid {
        self.pid
    }

    fn processes(&self) -> Result<ProcessList, ProbeError> {
        Ok(self.pass_all(PassMode::Rows)?.list)
    }

    /// Each parent's own children files; `Unsupported` where the kernel lists none, an error
    /// where a list or a child could not be read.
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        let clock = self.clock();
        let mut out = Vec::new();
        for &parent in parents {
            match children::of(parent, clock) {
                children::Read::Children(found) => {
                    out.extend(found.into_iter().map(|c| (parent, c)))
                }
                // Without children lists a glance would read the whole table every few
                // milliseconds, all through a wait: it is skipped (the stop's looks remain).
                children::Read::Unsupported => return Err(ProbeError::Unsupported),
                children::Read::Failed(why) => return Err(why),
            }
        }
        Ok(out)
    }

    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.survey_with(wants_argv, Others::Rows)
    }

    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.survey_with(wants_argv, Others::Sighted)
    }

    fn rows(&self, pids: &[Pid]) -> ProcessList {
        self.pass_over(pids, PassMode::Rows).list
    }

    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let at = |name: &str| format!("{}/{name}", dir.display());
        let exe = match fs::read_link(dir.join("exe")) {
            Ok(exe) => Ok(exe),
            Err(e) if is_gone(&e) && !dir.exists() => return None,
            Err(e) => Err(ProbeError::read(at("exe"), e)),
        };
        let cwd = match fs::read_link(dir.join("cwd")) {
            Ok(cwd) => Ok(cwd),
            // A process loses its folder link only as it exits (the kernel drops its program,
            // then its folder; a kernel thread keeps `/`): it is ending. Found by the soak's
            // runs side by side, twice: another run's server, ending between the two reads,
            // read as a twin "whose folder cannot be confirmed".
            Err(e) if is_gone(&e) => return None,
            Err(e) => Err(ProbeError::read(at("cwd"), e)),
        };
        let cgroup = read_small(&dir.join("cgroup"))
            .map_err(|e| ProbeError::read(at("cgroup"), e))
            .and_then(|b| parse::parse_cgroup(&b).ok_or(ProbeError::NoCgroup));
        Some(ProcessDetails {
            exe,
            cwd,
            cgroup: Some(cgroup),
        })
    }

    /// cmdline, then the start time again: a pid reused in between shows another start time,
    /// and a match means the same process was there throughout, so the argv is its own.
    fn argv(&self, identity: Identity) -> Option<Vec<Vec<u8>>> {
        let argv = rows::argv(identity.pid)?;
        match rows::stat(identity.pid) {
            Ok(Some((_, stat))) if stat.start_time == identity.start_time => Some(argv),
            _ => None,
        }
    }

    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        let path = format!("/proc/{pid}/environ");
        read_small(Path::new(&path))
            .map(|bytes| parse::parse_cmdline(&bytes))
            .map_err(|e| ProbeError::read(path, e))
    }

    fn environment_head(&self, pid: Pid, max: usize) -> Result<Vec<Vec<u8>>, ProbeError> {
        let path = format!("/proc/{pid}/environ");
        read_head(Path::new(&path), max)
            .map(|bytes| parse::parse_cmdline(&bytes))
            .map_err(|e| ProbeError::read(path, e))
    }

    /// The TCP tables alone: whether a port is free needs neither holders nor unix sockets.
    fn listening_ports(&self) -> Result<Vec<u16>, ProbeError> {
        let mut ports: Vec<u16> = self
            .tables()?
            .iter()
            .filter(|r| r.state == super::TcpState::Listen)
            .map(|r| r.local.port())
            .collect();
        ports.sort_unstable();
        ports.dedup();
        Ok(ports)
    }

    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        let rows = self.tables()?;
        let unix = tables::unix(self.tables);
        Ok(attribute(
            rows,
            unix,
            self.pass_over(owners_among, PassMode::Walk).fds,
        ))
    }

    fn memory(&self, pid: Pid) -> Result<super::Memory, ProbeError> {
        memory::read(pid)
    }

    fn writes(&self, pid: Pid) -> Result<Vec<super::Written>, ProbeError> {
        writes::read(pid)
    }

    /// Only the fds the last survey saw naming a path, when it walked this very process;
    /// otherwise every fd, as [`writes`](Probe::writes) reads them.
    fn writes_of(&self, identity: Identity) -> Result<Vec<super::Written>, ProbeError> {
        let fds = {
            let surveyed = self.surveyed.lock().unwrap_or_else(PoisonError::into_inner);
            surveyed
                .get(&identity.pid)
                .filter(|f| f.start_time == identity.start_time)
                .map(|f| f.fds.clone())
        };
        match fds {
            Some(fds) => writes::read_fds(identity.pid, &fds),
            None => writes::read(identity.pid),
        }
    }

    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        super::sample_counters(pids, window, |pid| self.counters(pid))
    }

    fn identity(&self, pid: Pid) -> IdentityRead {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let bytes = match read_small(&dir.join("stat")) {
            Ok(bytes) => bytes,
            Err(e) if is_gone(&e) => return IdentityRead::Gone,
            Err(e) => return IdentityRead::Unknown(format!("{}/stat: {e}", dir.display())),
        };
        let Some((_, stat)) = parse::parse_stat(&bytes) else {
            return IdentityRead::Unknown(format!("{}/stat: unexpected format", dir.display()));
        };
        if stat.state == b'Z' || stat.state == b'X' {
            return IdentityRead::Gone;
        }
        let exe = fs::read_link(dir.join("exe")).ok();
        // A process on its way out loses its executable a moment before it becomes a zombie;
        // read as "unreadable", that made a dying member look changed (the review of the stop
        // soak). Look once more: if it is a zombie or gone by now, it is gone.
        if exe.is_none() {
            let again = match read_small(&dir.join("stat")) {
                Ok(bytes) => bytes,
                Err(e) if is_gone(&e) => return IdentityRead::Gone,
                Err(e) => return IdentityRead::Unknown(format!("{}/stat: {e}", dir.display())),
            };
            match parse::parse_stat(&again) {
                Some((_, s)) if s.start_time != stat.start_time => return IdentityRead::Gone,
                Some((_, s)) if s.state == b'Z' || s.state == b'X' => return IdentityRead::Gone,
                Some(_) => {}
                None => {
                    return IdentityRead::Unknown(format!(
                        "{}/stat: unexpected format",
                        dir.display()
                    ))
                }
            }
        }
        IdentityRead::Alive {
            identity: Identity {
                pid,
                start_time: stat.start_time,
            },
            exe,
        }
    }

    /// CLOCK_BOOTTIME: unlike `Instant`, it keeps counting while the machine sleeps, so a
    /// laptop that suspends between two checkpoints shows the time that really passed.
    fn now(&self) -> Duration {
        cumulative::duration(rustix::time::clock_gettime(rustix::time::ClockId::Boottime))
    }

    /// Each member's `stat` and `io`, checked against its start time before and after.
    fn counters(
        &self,
        members: &[Identity],
    ) -> Vec<(Identity, Result<super::Cumulative, ProbeError>)> {
        members
            .iter()
            .map(|&m| (m, cumulative::read(m, self.ticks_per_second)))
            .collect()
    }

    fn times(&self) -> super::Times {
        cumulative::times()
    }

    fn ended_connections(&self) -> Result<Vec<super::Ended>, ProbeError> {
        tables::ended()
    }

    fn memory_pressure(&self) -> Result<crate::model::rules::MemoryPressure, ProbeError> {
        pressure::read()
    }

    fn boot_id(&self) -> Option<String> {
        fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that has ended but is not reaped (a zombie: its program and folder are gone,
    /// its pid still shows) has no details: it is gone, not a process whose folder cannot be
    /// read.
    #[test]
    fn a_process_that_has_ended_has_no_details() {
        let probe = LinuxProbe::new();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exit 0"])
            .spawn()
            .expect("sh runs");
        let pid = child.id();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !matches!(rows::stat(pid), Ok(Some((_, s))) if s.state == b'Z') {
            assert!(std::time::Instant::now() < end, "the child never ended");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(probe.details(pid).is_none(), "a zombie has no details");
        child.wait().unwrap();
        let me = probe
            .details(std::process::id())
            .expect("this process has details");
        assert!(me.exe.is_ok() && me.cwd.is_ok());
    }

    /// A namespace's tables are read only from a process whose cgroup is the one asked for,
    /// and they hold its listeners (this process's namespace stands in for a container's).
    #[test]
    fn a_namespace_is_read_only_from_the_process_its_cgroup_names() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let local = listener.local_addr().unwrap();
        let me = std::process::id();
        let mine = fs::read(format!("/proc/{me}/cgroup")).unwrap();
        let mine = parse::parse_cgroup(&mine).unwrap();
        let read = namespace_sockets(me, &|cgroup| cgroup == mine).unwrap();
        assert!(
            read.iter()
                .any(|s| s.local == local && s.state == crate::probe::TcpState::Listen),
            "{read:?}"
        );
        let refused = namespace_sockets(me, &|_| false).unwrap_err();
        assert_eq!(
            refused,
            ProbeError::NotTheContainers {
                pid: me,
                cgroup: mine.clone()
            }
        );
    }

    /// A process's fd folder opened, then the process ended and was reaped: the open folder
    /// answers ENOENT, and the process reads as gone, not unreadable.
    #[test]
    fn an_fd_folder_whose_process_ended_after_it_was_opened_is_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let start_time = rows::stat(pid).unwrap().unwrap().1.start_time;
        let dir = Walker::open(pid).expect("its fd folder opens");
        assert!(matches!(
            fd_folder(pid, &dir, start_time),
            Folder::Read { .. }
        ));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(fd_folder(pid, &dir, start_time), Folder::Gone);
    }
}
