//! The idle clock's reads (docs/design.md §5a): a process's cumulative counters, with no
//! window, and the two clocks. A counter is the identity's or it is not read: the start time
//! is checked before and after, so a pid that changed hands in between is `Gone`, never a
//! stranger's counters; a file that cannot be read is an error, never 0.

use std::path::Path;
use std::time::Duration;

use super::{is_gone, read_small, rows, thread_ns, unexpected};
use crate::probe::procfs::{self as parse, Stat};
use crate::probe::{Cumulative, Identity, ProbeError, Times};

/// The counters of `identity`, read now (`ticks_per_second`: the kernel's clock ticks).
pub(super) fn read(identity: Identity, ticks_per_second: u64) -> Result<Cumulative, ProbeError> {
    let pid = identity.pid;
    let gone = || ProbeError::Gone(pid);
    let before = stat_of(identity)?;
    let threads = thread_ns(pid).ok_or_else(gone)??;
    let io_path = format!("/proc/{pid}/io");
    let io = match read_small(Path::new(&io_path)) {
        Ok(bytes) => parse::parse_io_calls(&bytes).ok_or_else(|| unexpected(io_path))?,
        Err(e) if is_gone(&e) => return Err(gone()),
        Err(e) => return Err(ProbeError::read(io_path, e)),
    };
    // Read again after: the start time still the identity's means the files read in between
    // were its own, and its later utime + stime bound the threads that ended meanwhile.
    let after = stat_of(identity)?;
    let live_ns = threads
        .iter()
        .map(|&(_, ns)| ns)
        .fold(0u64, u64::saturating_add);
    let ns_per_tick = 1_000_000_000 / ticks_per_second.max(1);
    Ok(Cumulative {
        cpu_ns: cpu_ns(
            live_ns,
            after.cpu_ticks.max(before.cpu_ticks),
            after.child_cpu_ticks,
            ns_per_tick,
        ),
        io_bytes: io.bytes,
        syscalls: io.calls,
    })
}

/// The `stat` of `identity`'s pid, if it still holds that process, alive.
fn stat_of(identity: Identity) -> Result<Stat, ProbeError> {
    match rows::stat(identity.pid)? {
        Some((_, stat)) if is_the_process(identity, &stat) => Ok(stat),
        _ => Err(ProbeError::Gone(identity.pid)),
    }
}

/// Whether `stat` is `identity`'s process, still running. Why the state too: a zombie has
/// ended (its counters stand still, and its parent's wait is about to add them to its own),
/// so reading it as a member that is idle would count one process's time twice or never.
fn is_the_process(identity: Identity, stat: &Stat) -> bool {
    stat.start_time == identity.start_time && !matches!(stat.state, b'Z' | b'X')
}

/// A process's CPU time in ns: the precise sum over its live threads or its coarse total of
/// every thread (ended ones too), whichever is larger — an ended thread's time is only in
/// the total, and the live threads' precise sum runs up to a tick ahead of it — plus the
/// children it has reaped (`child_ticks`): a build step that came and went between two
/// rescans was work.
fn cpu_ns(live_threads_ns: u64, ticks: u64, child_ticks: u64, ns_per_tick: u64) -> u64 {
    live_threads_ns
        .max(ticks.saturating_mul(ns_per_tick))
        .saturating_add(child_ticks.saturating_mul(ns_per_tick))
}

/// The awake clock (`CLOCK_MONOTONIC`, which stands still in suspend) and the boot clock
/// (`CLOCK_BOOTTIME`), read one right after the other.
pub(super) fn times() -> Times {
    use rustix::time::{clock_gettime, ClockId};
    Times {
        awake: duration(clock_gettime(ClockId::Monotonic)),
        since_boot: duration(clock_gettime(ClockId::Boottime)),
    }
}

/// A clock's reading as a `Duration` (a clock since boot is never negative).
pub(super) fn duration(t: rustix::time::Timespec) -> Duration {
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(state: u8, start_time: u64) -> Stat {
        Stat {
            state,
            ppid: 1,
            session: 1,
            tty_nr: 0,
            cpu_ticks: 0,
            child_cpu_ticks: 0,
            start_time,
        }
    }

    #[test]
    fn a_process_is_the_identity_s_only_alive_and_with_its_start_time() {
        let id = Identity {
            pid: 7,
            start_time: 100,
        };
        assert!(is_the_process(id, &stat(b'S', 100)));
        assert!(is_the_process(id, &stat(b'R', 100)));
        // Another process on the same pid.
        assert!(!is_the_process(id, &stat(b'S', 101)));
        // Ended: a zombie, or one being released.
        assert!(!is_the_process(id, &stat(b'Z', 100)));
        assert!(!is_the_process(id, &stat(b'X', 100)));
    }

    #[test]
    fn cpu_time_is_the_larger_of_the_threads_and_the_total_plus_reaped_children() {
        let tick = 10_000_000;
        // The live threads' precise sum ahead of the coarse total.
        assert_eq!(cpu_ns(25_000_000, 2, 0, tick), 25_000_000);
        // A thread ended: only the total holds its time.
        assert_eq!(cpu_ns(5_000_000, 2, 0, tick), 20_000_000);
        // A reaped child's time is added on top.
        assert_eq!(cpu_ns(25_000_000, 2, 3, tick), 55_000_000);
        assert_eq!(cpu_ns(u64::MAX, u64::MAX, u64::MAX, tick), u64::MAX);
    }
}
