//! The idle clock's reads on macOS (docs/design.md §5a): a process's cumulative counters from
//! `proc_pid_rusage(RUSAGE_INFO_V2)` and `proc_pidinfo(PROC_PIDTASKINFO)`, checked to be the
//! identity's before and after, and the two clocks. Closed connections are not read here: the
//! tables are read per process, and a closed connection has none (`Unsupported`).
//!
//! NOT RUN: no Mac is available to this project; type-checked for `aarch64-apple-darwin`,
//! the layouts pinned in `darwin_layout.rs`.

use std::mem::zeroed;
use std::time::Duration;

use super::{bsd_info, darwin, failed, pid_info, rusage, Read, SZOMB};
use crate::probe::{Cumulative, Identity, Pid, ProbeError, Times};

/// `proc_pidinfo(PROC_PIDTASKINFO)`: the task's counts, its system calls among them. A zombie
/// has no task: ESRCH, gone.
fn task_info(pid: Pid) -> Read<libc::proc_taskinfo> {
    // SAFETY: proc_taskinfo is plain old data, which `PROC_PIDTASKINFO` fills.
    unsafe { pid_info(pid, libc::PROC_PIDTASKINFO, 0) }
}

/// The counters of `identity`, read now (`tb_frequency_hz`: `hw.tbfrequency`).
pub(super) fn read(
    identity: Identity,
    tb_frequency_hz: Option<u64>,
) -> Result<Cumulative, ProbeError> {
    let pid = identity.pid;
    let hz = tb_frequency_hz.ok_or(ProbeError::NoTimebase)?;
    check(identity)?;
    let ri = match rusage(pid) {
        Read::Ok(ri) => ri,
        Read::Gone => return Err(ProbeError::Gone(pid)),
        Read::Failed(e) => return Err(failed(format!("rusage of pid {pid}"), e)),
    };
    let task = match task_info(pid) {
        Read::Ok(task) => task,
        Read::Gone => return Err(ProbeError::Gone(pid)),
        Read::Failed(e) => return Err(failed(format!("task info of pid {pid}"), e)),
    };
    // The same process after both reads: they were its own, not a later holder's of its pid.
    check(identity)?;
    let counts = darwin::TaskCounts {
        cpu_ticks: ri.ri_user_time.saturating_add(ri.ri_system_time),
        child_cpu_ticks: ri
            .ri_child_user_time
            .saturating_add(ri.ri_child_system_time),
        disk_bytes: ri
            .ri_diskio_bytesread
            .saturating_add(ri.ri_diskio_byteswritten),
        syscalls_unix: task.pti_syscalls_unix,
        syscalls_mach: task.pti_syscalls_mach,
    };
    darwin::cumulative(counts, hz).ok_or(ProbeError::NoTimebase)
}

/// `Ok` while `identity`'s pid holds that process, alive (its start time, as the identity is
/// read, and not a zombie); `Gone` otherwise.
fn check(identity: Identity) -> Result<(), ProbeError> {
    let pid = identity.pid;
    let info = match bsd_info(pid) {
        Read::Ok(info) => info,
        Read::Gone => return Err(ProbeError::Gone(pid)),
        Read::Failed(e) => return Err(failed(format!("BSD info of pid {pid}"), e)),
    };
    let started = darwin::start_time_us(info.pbi_start_tvsec, info.pbi_start_tvusec);
    if info.pbi_status == SZOMB || started != Some(identity.start_time) {
        return Err(ProbeError::Gone(pid));
    }
    Ok(())
}

/// The awake clock (`CLOCK_UPTIME_RAW`, which stands still in sleep) and the boot clock
/// (`CLOCK_MONOTONIC_RAW`, which does not). `clock_gettime` with these ids is what
/// `clock_gettime_nsec_np` reads (the libc crate does not declare the latter). `None` if
/// either fails.
pub(super) fn times() -> Option<Times> {
    Some(Times {
        awake: clock(libc::CLOCK_UPTIME_RAW)?,
        since_boot: clock(libc::CLOCK_MONOTONIC_RAW)?,
    })
}

fn clock(id: libc::clockid_t) -> Option<Duration> {
    // SAFETY: plain old data; all-zero is valid.
    let mut t: libc::timespec = unsafe { zeroed() };
    // SAFETY: t is a valid out-parameter.
    let rc = unsafe { libc::clock_gettime(id, &mut t) };
    (rc == 0).then(|| {
        Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    })
}
