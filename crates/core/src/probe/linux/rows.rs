//! One row of the process table per pid: `/proc/<pid>/stat` (comm, ppid, session, tty, start
//! time, state), the owner, and argv — as a whole ([`read`]) or piece by piece for the survey.

use std::cell::RefCell;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{is_gone, read_into};
use crate::probe::procfs::{self as parse, Stat};
use crate::probe::{Identity, Pid, ProbeError, ProcessInfo, UnreadableProcess};

/// What one row read answered.
pub enum Row {
    Read(ProcessInfo),
    /// Another user's process, left unread ([`crate::probe::ProcessList::sighted`]).
    Sighted(Pid),
    /// The process is gone.
    Gone,
    Unreadable(UnreadableProcess),
}

/// How to turn a start time into an age.
#[derive(Clone, Copy)]
pub struct Clock {
    pub ticks_per_second: u64,
    /// Seconds since boot, when readable.
    pub uptime: Option<f64>,
}

thread_local! {
    /// The buffer each small file is read into, one per thread of a pass.
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(4096));
}

/// Reads one `/proc/<pid>` file and hands its bytes to `f`: `Ok(None)` when the process is
/// gone.
fn read_with<T>(pid: Pid, name: &str, f: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, ProbeError> {
    let path = format!("/proc/{pid}/{name}");
    SCRATCH.with_borrow_mut(|buf| match read_into(Path::new(&path), buf) {
        Ok(()) => Ok(Some(f(buf))),
        Err(e) if is_gone(&e) => Ok(None),
        Err(e) => Err(ProbeError::read(path, e)),
    })
}

/// The whole row of `pid`: stat, owner, argv.
pub fn read_row(pid: Pid, clock: Clock) -> Row {
    let whole = || -> Result<Option<ProcessInfo>, ProbeError> {
        let Some((comm, stat)) = stat(pid)? else {
            return Ok(None);
        };
        let Some(uid) = owner(pid)? else {
            return Ok(None);
        };
        let Some(argv) = argv(pid) else {
            return Ok(None);
        };
        Ok(Some(info(pid, comm, stat, uid, Some(argv), clock)))
    };
    match whole() {
        Ok(Some(info)) => Row::Read(info),
        Ok(None) => Row::Gone,
        Err(error) => unreadable(pid, error),
    }
}

/// The row of another user's process as a survey needs it: its stat, argv left unread (a
/// survey reads none of theirs).
pub fn stat_row(pid: Pid, uid: u32, clock: Clock) -> Row {
    match stat(pid) {
        Ok(Some((comm, stat))) => Row::Read(info(pid, comm, stat, uid, None, clock)),
        Ok(None) => Row::Gone,
        Err(error) => unreadable(pid, error),
    }
}

/// A process that exists but could not be read, with its owner when even that is known.
pub fn unreadable(pid: Pid, error: ProbeError) -> Row {
    Row::Unreadable(UnreadableProcess {
        pid,
        uid: fs::metadata(format!("/proc/{pid}")).ok().map(|m| m.uid()),
        error: error.to_string(),
    })
}

/// `(comm, fields)` of `/proc/<pid>/stat`; `Ok(None)` when the process is gone.
pub fn stat(pid: Pid) -> Result<Option<(String, Stat)>, ProbeError> {
    match read_with(pid, "stat", parse::parse_stat)? {
        None => Ok(None),
        Some(Some(read)) => Ok(Some(read)),
        Some(None) => Err(ProbeError::malformed(
            format!("/proc/{pid}/stat"),
            "unexpected format",
        )),
    }
}

/// Whose process `pid` is: the owner of its `/proc/<pid>` folder, one `stat`, the cheapest
/// call that answers it. The kernel gives that folder the process's effective uid, always: a
/// non-dumpable process's other entries (`fd`, `stat`, `environ`) show root as their owner,
/// its folder does not (`task_dump_owner` leaves world-readable folders out of that rule);
/// a kernel thread's is root's. `Ok(None)`: the process is gone.
pub fn owner(pid: Pid) -> Result<Option<u32>, ProbeError> {
    let path = format!("/proc/{pid}");
    match rustix::fs::stat(path.as_str()) {
        Ok(st) => Ok(Some(st.st_uid)),
        Err(e) if is_gone(&e.into()) => Ok(None),
        Err(e) => Err(ProbeError::read(path, e)),
    }
}

/// argv; `None` when the process is gone. Unreadable argv (a hidepid mount) is empty: it only
/// means "never a candidate".
pub fn argv(pid: Pid) -> Option<Vec<Vec<u8>>> {
    match read_with(pid, "cmdline", parse::parse_cmdline) {
        Ok(Some(argv)) => Some(argv),
        Ok(None) => None,
        Err(_) => Some(Vec::new()),
    }
}

/// The row from its parts; `argv: None` means left unread.
pub fn info(
    pid: Pid,
    comm: String,
    stat: Stat,
    uid: u32,
    argv: Option<Vec<Vec<u8>>>,
    clock: Clock,
) -> ProcessInfo {
    let age_seconds = clock.uptime.map(|up| {
        let started = stat.start_time as f64 / clock.ticks_per_second as f64;
        (up - started).max(0.0) as u64
    });
    ProcessInfo {
        identity: Identity {
            pid,
            start_time: stat.start_time,
        },
        ppid: stat.ppid,
        uid,
        session: stat.session,
        tty_nr: stat.tty_nr,
        comm,
        argv_unread: argv.is_none(),
        argv: argv.unwrap_or_default(),
        zombie: stat.state == b'Z' || stat.state == b'X',
        age_seconds,
        cpu_ns: Some(
            stat.cpu_ticks
                .saturating_mul(1_000_000_000 / clock.ticks_per_second.max(1)),
        ),
    }
}
