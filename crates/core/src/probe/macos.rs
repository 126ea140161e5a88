//! The macOS probe: `libproc` (`proc_pidinfo` — `PROC_PIDTASKALLINFO` for a row and its
//! life's CPU time —, `proc_pidfdinfo`, `proc_pidpath`, `proc_pid_rusage`, for activity and
//! memory) and `sysctl` (`KERN_PROCARGS2`, `KERN_PROC_PID`, `hw.tbfrequency`,
//! `kern.memorystatus_vm_pressure_level` in `macos/pressure.rs`).
//!
//! NOT RUN: no Mac is available to this project. This file is type-checked and linted for
//! `aarch64-apple-darwin` on every CI run; it is written from the libc and libproc crates'
//! source and `docs/design.md` §7.3. The byte decoding it relies on lives in `darwin.rs` and is
//! unit-tested on Linux.
//!
//! Differences from Linux, by design:
//! - Another user's process gives EPERM for BSD info, fds, cwd and rusage; its row comes from
//!   `sysctl(KERN_PROC_PID)` instead (ppid, uid, start time), with no argv. A scan's survey
//!   lists only the user's (`PROC_UID_ONLY`) and reads another's row only when the diagnosis
//!   asks (`Probe::rows`, `Probe::children`).
//! - A connection the server has not accepted, or whose handshake it has not completed
//!   (SYN-RECEIVED), has no fd anywhere: the listener's accept queue, half-open ones included
//!   (`soi_qlen`), is reported in `Socket::queued` instead of as rows.
//! - Sockets of processes outside `owners_among` are invisible (no global table), so peers
//!   there are unattributed — which counts as live, as it should.
//! - No cgroups: `ProcessDetails::cgroup` is `None`.
//! - The session id comes from `getsid(2)`; when that fails the process is taken as its own
//!   session leader, so "terminal gone" is never concluded from a failed read.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, OsStr};
use std::io;
use std::mem::{size_of, zeroed};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::darwin;
use super::{
    ActivitySample, Identity, IdentityRead, OsError, Pid, Probe, ProbeError, ProcessDetails,
    ProcessInfo, Socket, SocketTable, Survey, WantsArgv,
};
use super::{Counters, ProcessList, UnreadableProcess};

/// `PROC_PIDFDSOCKETINFO` (XNU `bsd/sys/proc_info.h`; the libc crate does not declare it).
pub(super) const PROC_PIDFDSOCKETINFO: c_int = 3;
/// `PROC_PIDFDVNODEPATHINFO` (XNU `bsd/sys/proc_info.h`; the libc crate does not declare it):
/// a file fd's open flags and its vnode's path, as a [`VnodeFdInfoWithPath`].
pub(super) const PROC_PIDFDVNODEPATHINFO: c_int = 2;
/// `FWRITE` (XNU `bsd/sys/fcntl.h`): in `fi_openflags` (the open file's `fg_flag`), open for
/// writing.
pub(super) const FWRITE: u32 = 0x2;
/// `VREG` (XNU `bsd/sys/vnode.h` `enum vtype`): a regular file's `vi_type`.
pub(super) const VREG: c_int = 1;

/// XNU `bsd/sys/proc_info.h` `struct proc_fileinfo`: what every `proc_pidfdinfo` flavor starts
/// with (the libproc crate's `ProcFileInfo`, declared here to be `Copy`).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct ProcFileInfo {
    pub fi_openflags: u32,
    pub fi_status: u32,
    pub fi_offset: libc::off_t,
    pub fi_type: i32,
    pub fi_guardflags: u32,
}

/// XNU `bsd/sys/proc_info.h` `struct vnode_fdinfowithpath` (`PROC_PIDFDVNODEPATHINFO`): the
/// open file, then its vnode and path. Pinned in `darwin_layout.rs`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct VnodeFdInfoWithPath {
    pub pfi: ProcFileInfo,
    pub pvip: libc::vnode_info_path,
}

/// `SZOMB` (XNU `bsd/sys/proc.h`): `pbi_status` / `p_stat` of a zombie.
pub(super) const SZOMB: u32 = 5;

/// The macOS backend: `libproc` and `sysctl` (type-checked and linted, never run).
pub struct MacProbe {
    epoch: Instant,
    uid: u32,
    pid: Pid,
    /// `hw.tbfrequency`: Mach ticks per second, for CPU times. `None` if unreadable.
    tb_frequency_hz: Option<u64>,
}

impl MacProbe {
    /// A probe for this process (its effective uid and pid), with the Mach timebase read once.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
            // SAFETY: geteuid has no preconditions and cannot fail.
            uid: unsafe { libc::geteuid() },
            pid: std::process::id(),
            tb_frequency_hz: tb_frequency(),
        }
    }
}

impl Default for MacProbe {
    fn default() -> Self {
        Self::new()
    }
}

fn errno() -> c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn errno_text(code: c_int) -> String {
    io::Error::from_raw_os_error(code).to_string()
}

/// What a call read (`exe of pid 7`) failed with the OS's error `code`: "exe of pid 7:
/// Operation not permitted (os error 1)".
fn failed(what: String, code: c_int) -> ProbeError {
    ProbeError::read(what, OsError::from_raw(code))
}

/// The answer of one libproc call: data, the process is gone, or the read failed.
pub(crate) enum Read<T> {
    Ok(T),
    Gone,
    Failed(c_int),
}

fn pid_arg(pid: Pid) -> c_int {
    c_int::try_from(pid).unwrap_or(c_int::MAX)
}

/// The `arg` of `proc_pidinfo(PROC_PIDTBSDINFO)`: non-zero asks the kernel to look among
/// zombies too (XNU `bsd/kern/proc_info.c` `proc_pidinfo_internal`: "Check if we need to look
/// for zombies"). With 0 a zombie answers ESRCH, reads as gone, and `SZOMB` never shows.
const FIND_ZOMBIES: u64 = 1;

fn bsd_info(pid: Pid) -> Read<libc::proc_bsdinfo> {
    // SAFETY: proc_bsdinfo is plain old data, which `PROC_PIDTBSDINFO` fills.
    unsafe { pid_info(pid, libc::PROC_PIDTBSDINFO, FIND_ZOMBIES) }
}

/// `proc_pidinfo(PROC_PIDTASKALLINFO)`: the BSD info `bsd_info` reads, and the task's
/// (`proc_taskinfo`: its CPU time over its life among them), in one call — XNU
/// `bsd/kern/proc_info.c` fills `pbsd` as for `PROC_PIDTBSDINFO` of a live process, then
/// `ptinfo` (`proc_pidtaskinfo`). It looks among live processes only (the zombie search is
/// `PROC_PIDTBSDINFO`'s), so a zombie answers ESRCH here. (NOT RUN: no Mac here.)
fn task_all_info(pid: Pid) -> Read<libc::proc_taskallinfo> {
    // SAFETY: proc_taskallinfo is plain old data, which `PROC_PIDTASKALLINFO` fills.
    unsafe { pid_info(pid, libc::PROC_PIDTASKALLINFO, 0) }
}

/// One `proc_pidinfo` call of `flavor`, whose answer is a `T` filled whole; ESRCH is gone.
///
/// # Safety
/// `T` must be plain old data (an all-zero value is valid) and the struct `flavor` answers.
unsafe fn pid_info<T>(pid: Pid, flavor: c_int, arg: u64) -> Read<T> {
    // SAFETY: the caller promises T is plain old data.
    let mut info: T = unsafe { zeroed() };
    let size = size_of::<T>() as c_int;
    // SAFETY: the buffer is a live T of exactly `size` bytes.
    let n = unsafe {
        libc::proc_pidinfo(
            pid_arg(pid),
            flavor,
            arg,
            (&mut info as *mut T).cast::<c_void>(),
            size,
        )
    };
    if n == size {
        return Read::Ok(info);
    }
    match errno() {
        libc::ESRCH => Read::Gone,
        0 => Read::Failed(libc::EIO),
        e => Read::Failed(e),
    }
}

/// `sysctl(KERN_PROCARGS2)`: argv (and environment) of a process of ours.
fn procargs(pid: Pid) -> Result<darwin::ProcArgs, ProbeError> {
    Ok(darwin::parse_procargs2(&procargs_bytes(pid)?)?)
}

/// The raw `KERN_PROCARGS2` buffer, as the kernel copied it out.
fn procargs_bytes(pid: Pid) -> Result<Vec<u8>, ProbeError> {
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    let mut argmax: c_int = 0;
    let mut len = size_of::<c_int>();
    // SAFETY: mib and the out-parameters are valid for the sizes given.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            2,
            (&mut argmax as *mut c_int).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 || argmax <= 0 {
        return Err(failed("sysctl(KERN_ARGMAX)".into(), errno()));
    }
    let mut buf = vec![0u8; argmax as usize];
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, pid_arg(pid)];
    let mut len = buf.len();
    // SAFETY: buf is writable for `len` bytes; the kernel writes at most that and updates len.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buf.as_mut_ptr().cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(failed(format!("sysctl(KERN_PROCARGS2, {pid})"), errno()));
    }
    if len >= buf.len() {
        // Larger than ARG_MAX: the kernel hands back only the tail, which would parse as
        // garbage.
        return Err(ProbeError::ArgumentsTooLarge(pid));
    }
    buf.truncate(len);
    Ok(buf)
}

fn pid_path(pid: Pid) -> Read<PathBuf> {
    let mut buf = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: buf is writable for the size passed.
    let n = unsafe {
        libc::proc_pidpath(
            pid_arg(pid),
            buf.as_mut_ptr().cast::<c_void>(),
            buf.len() as u32,
        )
    };
    if n > 0 {
        buf.truncate(n as usize);
        return Read::Ok(PathBuf::from(OsStr::from_bytes(&buf)));
    }
    match errno() {
        libc::ESRCH => Read::Gone,
        e => Read::Failed(e),
    }
}

/// `PROC_PIDVNODEPATHINFO`: the cwd and root vnodes with their paths.
fn vnode_path_info(pid: Pid) -> Result<libc::proc_vnodepathinfo, ProbeError> {
    // SAFETY: plain old data; all-zero is valid.
    let mut info: libc::proc_vnodepathinfo = unsafe { zeroed() };
    let size = size_of::<libc::proc_vnodepathinfo>() as c_int;
    // SAFETY: the buffer is a live proc_vnodepathinfo of `size` bytes.
    let n = unsafe {
        libc::proc_pidinfo(
            pid_arg(pid),
            libc::PROC_PIDVNODEPATHINFO,
            0,
            (&mut info as *mut libc::proc_vnodepathinfo).cast::<c_void>(),
            size,
        )
    };
    if n != size {
        return Err(failed(format!("cwd of pid {pid}"), errno()));
    }
    Ok(info)
}

/// cwd from `PROC_PIDVNODEPATHINFO` (`libproc::proc_pid::pidcwd` errors on macOS).
fn pid_cwd(pid: Pid) -> Result<PathBuf, ProbeError> {
    let info = vnode_path_info(pid)?;
    let raw: Vec<u8> = info
        .pvi_cdir
        .vip_path
        .iter()
        .flatten()
        .map(|&c| c as u8)
        .collect();
    Ok(PathBuf::from(OsStr::from_bytes(darwin::c_bytes(&raw))))
}

/// `proc_listpids` kinds (XNU `bsd/sys/proc_info.h`; the libc crate declares the call, not
/// these).
pub(super) const PROC_ALL_PIDS: u32 = 1;
/// Processes whose effective uid (`kauth_cred_getuid`, the `pbi_uid` of their BSD info) is
/// the argument.
pub(super) const PROC_UID_ONLY: u32 = 4;

/// The pids `proc_listpids(kind, arg)` lists. A full buffer may have been cut short (the
/// kernel truncates silently): grow it (`darwin::listed_pids` decides).
fn list_pids(kind: u32, arg: u32) -> Result<Vec<Pid>, ProbeError> {
    let failed = || ProbeError::io("proc_listpids", io::Error::last_os_error());
    // SAFETY: a null buffer asks for the size only.
    let size = unsafe { libc::proc_listpids(kind, arg, std::ptr::null_mut(), 0) };
    if size < 0 {
        return Err(failed());
    }
    let mut cap = size as usize / size_of::<c_int>() + 64;
    loop {
        let mut buf = vec![0 as c_int; cap];
        let bytes = c_int::try_from(cap * size_of::<c_int>()).unwrap_or(c_int::MAX);
        // 0 answers both "none" and a failure: clear errno to tell them apart.
        // SAFETY: __error() returns this thread's errno slot.
        unsafe { *libc::__error() = 0 };
        // SAFETY: buf is writable for `bytes` bytes.
        let n = unsafe { libc::proc_listpids(kind, arg, buf.as_mut_ptr().cast(), bytes) };
        if n < 0 || (n == 0 && errno() != 0) {
            return Err(failed());
        }
        match darwin::listed_pids(&buf, n) {
            Ok(darwin::Listing::Pids(pids)) => return Ok(pids),
            Ok(darwin::Listing::Grow) if cap < 1 << 22 => cap *= 2,
            Ok(darwin::Listing::Grow) => {
                return Err(ProbeError::Parse {
                    path: "proc_listpids".into(),
                    what: format!("more than {cap} processes"),
                })
            }
            Err(what) => {
                return Err(ProbeError::Parse {
                    path: "proc_listpids".into(),
                    what: what.to_string(),
                })
            }
        }
    }
}

fn tb_frequency() -> Option<u64> {
    let mut value: u64 = 0;
    let mut len = size_of::<u64>();
    // SAFETY: the name is NUL-terminated; value is writable for len bytes.
    let rc = unsafe {
        libc::sysctlbyname(
            c"hw.tbfrequency".as_ptr(),
            (&mut value as *mut u64).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    match (rc, len) {
        (0, 8) => Some(value),
        // A 32-bit answer lands in the low bytes (little-endian).
        (0, 4) => Some(value & 0xFFFF_FFFF),
        _ => None,
    }
}

fn session_of(pid: Pid) -> Pid {
    // SAFETY: getsid has no memory preconditions.
    let sid = unsafe { libc::getsid(pid_arg(pid)) };
    u32::try_from(sid).unwrap_or(pid)
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl MacProbe {
    /// One row: `Ok(None)` when the process is gone, `Err` when it exists but cannot be read.
    ///
    /// Read by `PROC_PIDTASKALLINFO`, which gives the BSD info and the task's CPU times in the
    /// one call a row already cost. Where it does not answer — a zombie (it does not look
    /// among them), another user's process, or a policy that withholds the task's info — the
    /// row is read as before, by `PROC_PIDTBSDINFO`, with its life's CPU unknown.
    fn row(&self, pid: Pid, now: u64) -> Result<Option<ProcessInfo>, ProbeError> {
        let (info, cpu_ns) = match task_all_info(pid) {
            Read::Ok(all) => {
                let t = &all.ptinfo;
                let cpu = darwin::lifetime_cpu_ns(
                    t.pti_total_user,
                    t.pti_total_system,
                    self.tb_frequency_hz,
                );
                (all.pbsd, cpu)
            }
            Read::Gone | Read::Failed(_) => match bsd_info(pid) {
                Read::Ok(info) => (info, None),
                Read::Gone => return Ok(None),
                Read::Failed(_) => return other_users_row(pid, now),
            },
        };
        let start_time = darwin::start_time_us(info.pbi_start_tvsec, info.pbi_start_tvusec)
            .ok_or_else(|| out_of_range(pid))?;
        let comm: Vec<u8> = info.pbi_comm.iter().map(|&c| c as u8).collect();
        // KERN_PROCARGS2 answers when the target's effective uid is ours (or we are root).
        let argv = if self.uid == 0 || info.pbi_uid == self.uid {
            procargs(pid).map(|p| p.argv).unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(Some(ProcessInfo {
            identity: Identity { pid, start_time },
            ppid: info.pbi_ppid,
            // Effective, as `PROC_UID_ONLY` lists (and as Linux reads it).
            uid: info.pbi_uid,
            session: session_of(pid),
            tty_nr: darwin::tty_nr(info.e_tdev, info.pbi_flags),
            comm: String::from_utf8_lossy(darwin::c_bytes(&comm)).into_owned(),
            argv,
            argv_unread: false,
            zombie: info.pbi_status == SZOMB,
            age_seconds: Some(now.saturating_sub(start_time) / 1_000_000),
            cpu_ns,
        }))
    }

    /// Adds `pid`'s TCP sockets to `seen`, keyed by the kernel's socket handle (`soi_so`), so a
    /// socket held by several processes is one row with all of them as owners.
    /// Its unix stream and seqpacket sockets go to `unix`, keyed the same way (NOT RUN:
    /// `darwin::unix`).
    fn sockets_of(
        &self,
        pid: Pid,
        seen: &mut HashMap<u64, Socket>,
        unix: &mut HashMap<u64, super::UnixSocket>,
        out: &mut SocketTable,
    ) {
        let fds = match list_fds(pid) {
            Read::Ok(fds) => fds,
            Read::Gone => return,
            Read::Failed(e) => {
                out.unreadable
                    .push((pid, format!("fds of pid {pid}: {}", errno_text(e))));
                return;
            }
        };
        for fd in fds
            .iter()
            .filter(|f| f.proc_fdtype == libc::PROX_FDTYPE_SOCKET as u32)
        {
            let bytes = match socket_fdinfo_bytes(pid, fd.proc_fd) {
                Read::Ok(bytes) => bytes,
                Read::Gone => continue,
                // Closed since the listing, or closed and reused by something else.
                Read::Failed(libc::EBADF | libc::ENOTSOCK) => continue,
                Read::Failed(e) => {
                    out.unreadable.push((
                        pid,
                        format!("socket fd {} of pid {pid}: {}", fd.proc_fd, errno_text(e)),
                    ));
                    return;
                }
            };
            let decoded = darwin::decode_socket_fdinfo(&bytes).and_then(|tcp| match tcp {
                Some(row) => Ok(Some(Ok(row))),
                None => darwin::unix::decode_unix_fdinfo(&bytes).map(|u| u.map(Err)),
            });
            match decoded {
                Ok(Some(Ok(row))) => match seen.get_mut(&row.handle) {
                    Some(known) => known.owners.push(pid),
                    None => {
                        seen.insert(row.handle, socket_of(row, pid));
                    }
                },
                Ok(Some(Err(row))) => unix
                    .entry(row.inode)
                    .or_insert_with(|| unix_socket_of(row))
                    .owners
                    .push(pid),
                Ok(None) => {}
                Err(what) => {
                    out.unreadable.push((
                        pid,
                        format!("socket fd {} of pid {pid}: {what}", fd.proc_fd),
                    ));
                    return;
                }
            }
        }
    }
}

/// Another user's process: `sysctl(KERN_PROC_PID)` still gives ppid, uid (`e_ucred.cr_uid`,
/// the effective one) and start time.
fn other_users_row(pid: Pid, now: u64) -> Result<Option<ProcessInfo>, ProbeError> {
    let k = match libproc::proc_pid::kproc_info_raw(pid_arg(pid)) {
        Ok(k) => k,
        Err(_) if !exists(pid) => return Ok(None),
        Err(e) => return Err(ProbeError::Partial(format!("pid {pid}: {e}"))),
    };
    let tv = k.kp_proc.p_un;
    let start_time = u64::try_from(tv.tv_sec)
        .ok()
        .zip(u64::try_from(tv.tv_usec).ok())
        .and_then(|(s, us)| darwin::start_time_us(s, us))
        .ok_or_else(|| out_of_range(pid))?;
    let comm: Vec<u8> = k.kp_proc.p_comm.iter().map(|&c| c as u8).collect();
    Ok(Some(ProcessInfo {
        identity: Identity { pid, start_time },
        ppid: u32::try_from(k.kp_eproc.e_ppid).unwrap_or(0),
        uid: k.kp_eproc.e_ucred.cr_uid,
        session: pid,
        tty_nr: 0,
        comm: String::from_utf8_lossy(darwin::c_bytes(&comm)).into_owned(),
        argv: Vec::new(),
        argv_unread: false,
        zombie: k.kp_proc.p_stat as u32 == SZOMB,
        age_seconds: Some(now.saturating_sub(start_time) / 1_000_000),
        // Unknown: the task's info is refused (EPERM), and `kinfo_proc` carries no CPU time
        // (XNU `bsd/kern/kern_sysctl.c` `fill_user64_externproc` never fills `p_uticks` or
        // `p_sticks`). Another user's process is never a member anyway.
        cpu_ns: None,
    }))
}

/// A start time the kernel gave that no clock can hold.
fn out_of_range(pid: Pid) -> ProbeError {
    ProbeError::malformed(format!("pid {pid}"), "start time out of range")
}

/// `kill(pid, 0)`: does the pid exist? (ESRCH: no; anything else, e.g. EPERM: yes.)
fn exists(pid: Pid) -> bool {
    // SAFETY: signal 0 sends nothing.
    let rc = unsafe { libc::kill(pid_arg(pid), 0) };
    rc == 0 || errno() != libc::ESRCH
}

fn list_fds(pid: Pid) -> Read<Vec<libc::proc_fdinfo>> {
    let nfiles = match bsd_info(pid) {
        Read::Ok(info) => info.pbi_nfiles as usize,
        Read::Gone => return Read::Gone,
        Read::Failed(e) => return Read::Failed(e),
    };
    // Slack for fds opened since the count; a full buffer may have been cut short: grow it.
    let mut cap = nfiles + 32;
    loop {
        match list_fds_into(pid, cap) {
            Read::Ok(fds) if fds.len() == cap && cap < 1 << 20 => cap *= 4,
            other => return other,
        }
    }
}

fn list_fds_into(pid: Pid, cap: usize) -> Read<Vec<libc::proc_fdinfo>> {
    // SAFETY: proc_fdinfo is plain old data; all-zero is valid.
    let mut fds: Vec<libc::proc_fdinfo> = vec![unsafe { zeroed() }; cap];
    let bytes = (cap * size_of::<libc::proc_fdinfo>()) as c_int;
    // proc_pidinfo answers 0 both for "no fds" and for a failure: clear errno to tell them apart.
    // SAFETY: __error() returns this thread's errno slot.
    unsafe { *libc::__error() = 0 };
    // SAFETY: fds is writable for `bytes` bytes.
    let n = unsafe {
        libc::proc_pidinfo(
            pid_arg(pid),
            libc::PROC_PIDLISTFDS,
            0,
            fds.as_mut_ptr().cast(),
            bytes,
        )
    };
    if n < 0 || (n == 0 && errno() != 0) {
        return match errno() {
            libc::ESRCH => Read::Gone,
            e => Read::Failed(e),
        };
    }
    fds.truncate(n as usize / size_of::<libc::proc_fdinfo>());
    Read::Ok(fds)
}

/// The `struct socket_fdinfo` the kernel writes for one socket fd
/// (`proc_pidfdinfo(PROC_PIDFDSOCKETINFO)`), as the bytes it wrote: what
/// `darwin::decode_socket_fdinfo` reads, and what a dump of the probe's input can save as is.
pub(crate) fn socket_fdinfo_bytes(pid: Pid, fd: c_int) -> Read<Vec<u8>> {
    let mut buf = vec![0u8; darwin::socket_fdinfo::SIZE];
    let size = darwin::socket_fdinfo::SIZE as c_int;
    // SAFETY: buf is writable for `size` bytes, all the kernel writes for this flavor.
    let n = unsafe {
        libc::proc_pidfdinfo(
            pid_arg(pid),
            fd,
            PROC_PIDFDSOCKETINFO,
            buf.as_mut_ptr().cast::<c_void>(),
            size,
        )
    };
    if n <= 0 {
        return match errno() {
            libc::ESRCH => Read::Gone,
            0 => Read::Failed(libc::EIO),
            e => Read::Failed(e),
        };
    }
    // The kernel answers the length it wrote: shorter than the struct, the decoder refuses it
    // in a sentence; longer than the buffer cannot be true.
    if n as usize > buf.len() {
        return Read::Failed(libc::EOVERFLOW);
    }
    buf.truncate(n as usize);
    Read::Ok(buf)
}

/// `proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO)` of one file fd. (NOT RUN: no Mac here.)
pub(crate) fn vnode_fdinfo(pid: Pid, fd: c_int) -> Read<VnodeFdInfoWithPath> {
    // SAFETY: plain old data; all-zero is valid.
    let mut info: VnodeFdInfoWithPath = unsafe { zeroed() };
    let size = size_of::<VnodeFdInfoWithPath>() as c_int;
    // SAFETY: the buffer is a live VnodeFdInfoWithPath of `size` bytes, all the kernel writes
    // for this flavor.
    let n = unsafe {
        libc::proc_pidfdinfo(
            pid_arg(pid),
            fd,
            PROC_PIDFDVNODEPATHINFO,
            (&mut info as *mut VnodeFdInfoWithPath).cast::<c_void>(),
            size,
        )
    };
    if n == size {
        return Read::Ok(info);
    }
    match errno() {
        libc::ESRCH => Read::Gone,
        0 => Read::Failed(libc::EIO),
        e => Read::Failed(e),
    }
}

/// `pid`'s regular files open for writing (`Probe::writes`), from each file fd's
/// `PROC_PIDFDVNODEPATHINFO`: `FWRITE` in its open flags, `VREG`, a link count above 0, and
/// its `vip_path`. Locks stay unread: macOS shows no lock through `proc_pidfdinfo` (nor any
/// other call a process of the user may make on another), so a file held only locked, and
/// open read-only, is missed here; its writers are still seen. (NOT RUN: no Mac here.)
fn writes_of(pid: Pid) -> Result<Vec<super::Written>, ProbeError> {
    let fds = match list_fds(pid) {
        Read::Ok(fds) => fds,
        Read::Gone => return Ok(Vec::new()),
        Read::Failed(e) => return Err(failed(format!("fds of pid {pid}"), e)),
    };
    let mut out = Vec::new();
    for fd in fds
        .iter()
        .filter(|f| f.proc_fdtype == libc::PROX_FDTYPE_VNODE as u32)
    {
        let info = match vnode_fdinfo(pid, fd.proc_fd) {
            Read::Ok(info) => info,
            Read::Gone => return Ok(Vec::new()),
            // Closed since the listing, or reused for something that is not a file.
            Read::Failed(libc::EBADF | libc::ENOENT) => continue,
            Read::Failed(e) => {
                return Err(failed(format!("file fd {} of pid {pid}", fd.proc_fd), e))
            }
        };
        let vi = &info.pvip.vip_vi;
        let held =
            info.pfi.fi_openflags & FWRITE != 0 && vi.vi_type == VREG && vi.vi_stat.vst_nlink > 0;
        let raw: Vec<u8> = info
            .pvip
            .vip_path
            .iter()
            .flatten()
            .map(|&c| c as u8)
            .collect();
        let path = darwin::c_bytes(&raw);
        if !held || path.first() != Some(&b'/') {
            continue;
        }
        out.push(super::Written {
            fd: u32::try_from(fd.proc_fd).unwrap_or(u32::MAX),
            path: PathBuf::from(OsStr::from_bytes(path)),
            how: super::Hold::Write,
        });
    }
    Ok(out)
}

/// A decoded unix socket as the probe's [`super::UnixSocket`], its holders still to add.
fn unix_socket_of(row: super::unix::UnixRow) -> super::UnixSocket {
    super::UnixSocket {
        id: row.inode,
        name: row.name,
        listening: row.listening,
        peer: row.peer,
        queued: row.queued,
        owners: Vec::new(),
    }
}

/// A decoded socket as the probe's [`Socket`], held by `pid`.
fn socket_of(row: darwin::SocketRow, pid: Pid) -> Socket {
    Socket {
        local: row.local,
        remote: row.remote,
        state: row.state,
        owners: vec![pid],
        queued: row.queued,
    }
}

fn rusage(pid: Pid) -> Read<libc::rusage_info_v2> {
    // SAFETY: plain old data; all-zero is valid.
    let mut ri: libc::rusage_info_v2 = unsafe { zeroed() };
    // SAFETY: the buffer is a live rusage_info_v2, the struct RUSAGE_INFO_V2 asks for.
    let rc = unsafe {
        libc::proc_pid_rusage(
            pid_arg(pid),
            libc::RUSAGE_INFO_V2,
            (&mut ri as *mut libc::rusage_info_v2).cast::<libc::rusage_info_t>(),
        )
    };
    if rc == 0 {
        return Read::Ok(ri);
    }
    match errno() {
        libc::ESRCH => Read::Gone,
        e => Read::Failed(e),
    }
}

impl MacProbe {
    fn counters(&self, pid: Pid) -> Option<Result<Counters, ProbeError>> {
        match rusage(pid) {
            Read::Gone => None,
            Read::Failed(e) => Some(Err(failed(format!("rusage of pid {pid}"), e))),
            Read::Ok(ri) => {
                let Some(hz) = self.tb_frequency_hz else {
                    return Some(Err(ProbeError::NoTimebase));
                };
                let ticks = ri.ri_user_time.saturating_add(ri.ri_system_time);
                let cpu = darwin::mach_ticks_to_ns(ticks, hz).unwrap_or(u64::MAX);
                let io = ri
                    .ri_diskio_bytesread
                    .saturating_add(ri.ri_diskio_byteswritten);
                // Task totals are precise and include ended threads.
                Some(Ok(Counters {
                    per_thread_ns: None,
                    cpu_total_ns: cpu,
                    io_bytes: io,
                }))
            }
        }
    }
}

impl Probe for MacProbe {
    fn current_uid(&self) -> u32 {
        self.uid
    }

    fn own_pid(&self) -> Pid {
        self.pid
    }

    fn processes(&self) -> Result<ProcessList, ProbeError> {
        Ok(self.rows(&list_pids(PROC_ALL_PIDS, 0)?))
    }

    fn rows(&self, pids: &[Pid]) -> ProcessList {
        let now = now_us();
        let mut list = ProcessList::default();
        // kernel_task (0) is never listed (`darwin::listed_pids`).
        for &pid in pids.iter().filter(|&&pid| pid != 0) {
            match self.row(pid, now) {
                Ok(Some(row)) => list.processes.push(row),
                Ok(None) => {}
                Err(error) => list.unreadable.push(UnreadableProcess {
                    pid,
                    uid: None,
                    error: error.to_string(),
                }),
            }
        }
        list
    }

    /// The user's processes by `PROC_UID_ONLY`, read as the table's rows are, and their
    /// sockets; every other pid of `PROC_ALL_PIDS` only sighted. Two listings and no call per
    /// other process. (Type-checked only: no Mac here.)
    fn survey_own(&self, _wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let mine = list_pids(PROC_UID_ONLY, self.uid)?;
        let all = list_pids(PROC_ALL_PIDS, 0)?;
        let mut processes = self.rows(&mine);
        // Both listings are sorted.
        processes.sighted = all
            .into_iter()
            .filter(|pid| mine.binary_search(pid).is_err())
            .collect();
        let own = super::own_live(&processes, self.uid);
        let sockets = self.sockets(&own);
        Ok(Survey { processes, sockets })
    }

    /// Each parent's children by `PROC_PPID_ONLY` (libproc's `pids_by_type`), each row read
    /// as the table's are and kept when it names the parent, which must still run as itself
    /// after the listing. (Type-checked only: no Mac here.)
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        let now = now_us();
        let mut out = Vec::new();
        for &parent in parents {
            let filter = libproc::processes::ProcFilter::ByParentProcess { ppid: parent.pid };
            // A list that cannot be read is an error, never "no children": a scan completes
            // its trees from these lists, and reads every process instead when they fail.
            let pids = libproc::processes::pids_by_type(filter).map_err(|e| {
                ProbeError::Partial(format!("the children of pid {}: {e}", parent.pid))
            })?;
            let itself = matches!(self.identity(parent.pid),
                IdentityRead::Alive { identity, .. } if identity == parent);
            if !itself {
                continue;
            }
            for pid in pids {
                match self.row(pid, now) {
                    Ok(Some(row)) if row.ppid == parent.pid => out.push((parent, row)),
                    Ok(_) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(out)
    }

    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        let exe = match pid_path(pid) {
            Read::Ok(p) => Ok(p),
            Read::Gone => return None,
            Read::Failed(e) => Err(failed(format!("exe of pid {pid}"), e)),
        };
        Some(ProcessDetails {
            exe,
            cwd: pid_cwd(pid),
            cgroup: None,
        })
    }

    /// The environment from `KERN_PROCARGS2`; one the kernel withholds (a code-signing-
    /// restricted process) or that is cut short is an error, never an empty environment.
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        Ok(procargs(pid)?.env?)
    }

    /// Sockets are read per process here: those of the user's own live processes (another
    /// user's listener is not seen; docs/macos.md). Type-checked only, never run.
    fn listening_ports(&self) -> Result<Vec<u16>, ProbeError> {
        let own = super::own_live(&self.processes()?, self.current_uid());
        Ok(super::listening(&self.sockets(&own)?))
    }

    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        let mut table = SocketTable::default();
        let mut seen = HashMap::new();
        let mut unix = HashMap::new();
        for &pid in owners_among {
            self.sockets_of(pid, &mut seen, &mut unix, &mut table);
        }
        table.sockets = seen.into_values().collect();
        for s in &mut table.sockets {
            s.owners.sort_unstable();
            s.owners.dedup();
        }
        table.unix = unix.into_values().collect();
        for u in &mut table.unix {
            u.owners.sort_unstable();
            u.owners.dedup();
        }
        Ok(table)
    }

    /// `ri_phys_footprint` of `proc_pid_rusage(RUSAGE_INFO_V2)` (NOT RUN: written from the
    /// libc crate's `rusage_info_v2` and XNU's `proc_pid_rusage`): what Activity Monitor shows
    /// as a process's memory — its dirty private pages, compressed or swapped ones included,
    /// shared libraries left out. macOS has no proportional set size, so the figure is
    /// labelled `Footprint`, never `Proportional`. Another user's process gives EPERM: an
    /// error, as any read that fails.
    fn memory(&self, pid: Pid) -> Result<super::Memory, ProbeError> {
        match rusage(pid) {
            Read::Ok(ri) => Ok(super::Memory {
                bytes: ri.ri_phys_footprint,
                kind: super::MemoryKind::Footprint,
            }),
            Read::Gone => Err(ProbeError::Gone(pid)),
            Read::Failed(e) => Err(failed(format!("rusage of pid {pid}"), e)),
        }
    }

    fn writes(&self, pid: Pid) -> Result<Vec<super::Written>, ProbeError> {
        writes_of(pid)
    }

    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        super::sample_counters(pids, window, |pid| self.counters(pid))
    }

    fn identity(&self, pid: Pid) -> IdentityRead {
        let info = match bsd_info(pid) {
            Read::Ok(info) => info,
            Read::Gone => return IdentityRead::Gone,
            Read::Failed(e) => {
                return IdentityRead::Unknown(format!("pid {pid}: {}", errno_text(e)))
            }
        };
        if info.pbi_status == SZOMB {
            return IdentityRead::Gone;
        }
        let Some(start_time) = darwin::start_time_us(info.pbi_start_tvsec, info.pbi_start_tvusec)
        else {
            return IdentityRead::Unknown(format!("pid {pid}: start time out of range"));
        };
        let exe = match pid_path(pid) {
            Read::Ok(p) => Some(p),
            Read::Gone => return IdentityRead::Gone,
            Read::Failed(_) => None,
        };
        IdentityRead::Alive {
            identity: Identity { pid, start_time },
            exe,
        }
    }

    /// CLOCK_MONOTONIC, which on macOS keeps counting while the machine sleeps (unlike
    /// `Instant`, which uses CLOCK_UPTIME_RAW).
    fn now(&self) -> Duration {
        // SAFETY: plain old data; all-zero is valid.
        let mut t: libc::timespec = unsafe { zeroed() };
        // SAFETY: t is a valid out-parameter.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
        if rc != 0 {
            return self.epoch.elapsed();
        }
        Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    }

    /// `proc_pid_rusage` and the task info, checked against the start time before and after
    /// (NOT RUN: no Mac here).
    fn counters(
        &self,
        members: &[Identity],
    ) -> Vec<(Identity, Result<super::Cumulative, ProbeError>)> {
        members
            .iter()
            .map(|&m| (m, cumulative::read(m, self.tb_frequency_hz)))
            .collect()
    }

    /// Uptime and continuous time (NOT RUN: no Mac here). Should either fail, both are
    /// [`now`](Probe::now): no sleep is told, as the trait's default.
    fn times(&self) -> super::Times {
        cumulative::times().unwrap_or_else(|| {
            let now = self.now();
            super::Times {
                awake: now,
                since_boot: now,
            }
        })
    }

    fn memory_pressure(&self) -> Result<crate::model::rules::MemoryPressure, ProbeError> {
        pressure::read()
    }

    fn boot_id(&self) -> Option<String> {
        let mut buf = [0u8; 64];
        let mut len = buf.len();
        // SAFETY: the name is NUL-terminated; buf is writable for len bytes.
        let rc = unsafe {
            libc::sysctlbyname(
                c"kern.bootsessionuuid".as_ptr(),
                buf.as_mut_ptr().cast::<c_void>(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        (rc == 0).then(|| {
            String::from_utf8_lossy(darwin::c_bytes(&buf[..len.min(buf.len())])).into_owned()
        })
    }
}

mod cumulative;
mod pressure;
mod raw;
pub(super) use raw::raw_buffers;
