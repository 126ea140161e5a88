//! One row of the process table per pid: `/proc/<pid>/stat` (comm, ppid, session, tty, start
//! time, state), the owner, and argv — as a whole ([`read`]) or piece by piece for the survey.

use std::cell::RefCell;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{is_gone, read_into};
use crate::probe::procfs::{self as parse, Stat};
use crate::probe::{Identity, Pid, ProcessInfo, UnreadableProcess};

/// What one row read answered.
pub enum Row {
    Read(ProcessInfo),
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
fn read_with<T>(pid: Pid, name: &str, f: impl FnOnce(&[u8]) -> T) -> Result<Option<T>, String> {
    let path = format!("/proc/{pid}/{name}");
    SCRATCH.with_borrow_mut(|buf| match read_into(Path::new(&path), buf) {
        Ok(()) => Ok(Some(f(buf))),
        Err(e) if is_gone(&e) => Ok(None),
        Err(e) => Err(format!("{path}: {e}")),
    })
}

/// The whole row of `pid`: stat, owner, argv.
pub fn read_row(pid: Pid, own_uid: u32, clock: Clock) -> Row {
    let whole = || -> Result<Option<ProcessInfo>, String> {
        let Some((comm, stat)) = stat(pid)? else {
            return Ok(None);
        };
        let Some(uid) = owner(pid, own_uid, None)? else {
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

/// A process that exists but could not be read, with its owner when even that is known.
pub fn unreadable(pid: Pid, error: String) -> Row {
    Row::Unreadable(UnreadableProcess {
        pid,
        uid: fs::metadata(format!("/proc/{pid}")).ok().map(|m| m.uid()),
        error,
    })
}

/// `(comm, fields)` of `/proc/<pid>/stat`; `Ok(None)` when the process is gone.
pub fn stat(pid: Pid) -> Result<Option<(String, Stat)>, String> {
    match read_with(pid, "stat", parse::parse_stat)? {
        None => Ok(None),
        Some(Some(read)) => Ok(Some(read)),
        Some(None) => Err(format!("/proc/{pid}/stat: unexpected format")),
    }
}

/// The real uid of `pid`. Its `/proc` folders belong to its effective uid (`folder_owner`,
/// when the caller already has it, else one cheap stat away); only when that is not ours is
/// the costly `status` read for the real uid: a non-dumpable process of ours shows a
/// root-owned folder.
pub fn owner(pid: Pid, own_uid: u32, folder_owner: Option<u32>) -> Result<Option<u32>, String> {
    let owner = match folder_owner {
        Some(uid) => uid,
        None => match fs::metadata(format!("/proc/{pid}")) {
            Ok(m) => m.uid(),
            Err(e) if is_gone(&e) => return Ok(None),
            Err(e) => return Err(format!("/proc/{pid}: {e}")),
        },
    };
    if owner == own_uid {
        return Ok(Some(owner));
    }
    match read_with(pid, "status", parse::parse_status_uid)? {
        None => Ok(None),
        Some(Some(uid)) => Ok(Some(uid)),
        Some(None) => Err(format!("/proc/{pid}/status: no Uid line")),
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
    }
}
