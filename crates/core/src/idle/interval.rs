//! One interval between two rescans, judged idle or not (docs/design.md §5a): a pure function
//! of the bounds, the interval's awake length, and what the two rescans read.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::model::Identity;
use crate::probe::Cumulative;

/// What an interval must stay under to count as idle. Rates are per second of awake time,
/// summed over the resource's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// CPU, in thousandths of one core (10 = 1%). Why 1%: an idle Node dev server and its npm
    /// wrapper spend about 0.3% on their own timers; a request, a rebuild or a test run spends
    /// far more.
    pub cpu_per_mille: u64,
    /// Bytes through read and write calls per second. Why 1 KiB/s: idle tools move a few bytes a
    /// second through their own pipes; a page load, a rebuild or a log of requests moves more.
    pub io_bytes_per_second: u64,
    /// Read and write calls per second. Why 10: idle tools make one or two.
    pub syscalls_per_second: u64,
    /// The longest interval that can count. Why 60 s: a connection that opened and closed
    /// between two rescans still shows for 60 s on Linux (TIME-WAIT), so a longer interval
    /// could hide one.
    pub longest: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            cpu_per_mille: 10,
            io_bytes_per_second: 1024,
            syscalls_per_second: 10,
            longest: Duration::from_secs(60),
        }
    }
}

/// One rescan's counters of a resource's members.
pub type Read = BTreeMap<Identity, Result<Cumulative, String>>;

/// Why an interval was not idle: each sentence made here, once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotIdle {
    /// The rescans were too far apart to vouch for the time between them.
    #[error("{} s between rescans, more than {} s: a client could have come and gone unseen", .0.as_secs(), .1.as_secs())]
    TooLong(Duration, Duration),
    /// A member's counters could not be read at one of the two rescans.
    #[error("pid {pid}'s counters could not be read ({why})")]
    Unread {
        /// The member.
        pid: u32,
        /// What the probe said.
        why: String,
    },
    /// A counter went back: a thread ended between the reads, or a count wrapped (macOS's
    /// are 32-bit). What it did cannot be told, so it is not idle.
    #[error("pid {0}'s counters went back (a thread ended, or a count wrapped)")]
    Backwards(u32),
    /// A process joined the resource.
    #[error("pid {0} started")]
    Newcomer(u32),
    /// A member ended: what it did before it ended is unknown.
    #[error("pid {0} ended")]
    Left(u32),
    /// A connection on one of its listeners, live or recently closed.
    #[error("{0}")]
    Connection(String),
    /// Its CPU was over the bound.
    #[error("{:.1}% CPU over {} s (more than {:.1}%)", *.used as f64 / 10.0, .secs, *.bound as f64 / 10.0)]
    Cpu {
        /// Thousandths of one core used.
        used: u64,
        /// The bound, in the same unit.
        bound: u64,
        /// The interval, in whole seconds.
        secs: u64,
    },
    /// Its reads and writes moved more than the bound.
    #[error("{} read and written over {} s (more than {}/s)", crate::words::byte_size(*.bytes), .secs, crate::words::byte_size(*.bound))]
    Io {
        /// Bytes moved.
        bytes: u64,
        /// The bound per second.
        bound: u64,
        /// The interval, in whole seconds.
        secs: u64,
    },
    /// It made more read and write calls than the bound.
    #[error("{calls} read and write calls over {secs} s (more than {bound}/s)")]
    Calls {
        /// Calls made.
        calls: u64,
        /// The bound per second.
        bound: u64,
        /// The interval, in whole seconds.
        secs: u64,
    },
}

impl NotIdle {
    /// Whether only the interval's own CPU, bytes or calls kept it from idle: what a
    /// scheduler judges by the busy thresholds instead. Anything else — a connection, a
    /// process that came or went, a counter unread or gone back, a gap too long to vouch for —
    /// means it was used or cannot be vouched for.
    pub fn only_activity(&self) -> bool {
        matches!(
            self,
            NotIdle::Cpu { .. } | NotIdle::Io { .. } | NotIdle::Calls { .. }
        )
    }
}

/// What the second rescan of an interval saw of the resource.
#[derive(Debug, Clone, Copy)]
pub struct Now<'a> {
    /// Every member's counters.
    pub read: &'a Read,
    /// Members whose CPU is a respawner's own polling, set aside (docs/design.md §2.9).
    pub pollers: &'a [Identity],
    /// Connections on its listeners seen at this rescan, live or recently closed, in words.
    pub connections: &'a [String],
}

/// An interval's activity as rates, pollers aside: what a scheduler without a sample judges
/// "busy" by (the scan's thresholds, `diagnose::rules::Thresholds`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Percent of one core.
    pub cpu_percent: f64,
    /// Bytes through read and write calls per second.
    pub io_bytes_per_second: f64,
}

/// What an interval came to: idle or why not, and its rates when every counter was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// Idle, or why not.
    pub idle: Result<(), NotIdle>,
    /// Its rates; `None` when a counter was not read.
    pub rates: Option<Rates>,
}

/// Whether the interval of awake length `len` from `before` to `now` was idle: every member
/// read at both ends, the same members, no connection, and the sums under `bounds`.
pub fn judge(bounds: &Bounds, len: Duration, before: &Read, now: Now) -> Judged {
    let sums = sums(before, now);
    let rates = sums.as_ref().ok().map(|s| s.rates(len));
    let idle = (|| {
        if len > bounds.longest {
            return Err(NotIdle::TooLong(len, bounds.longest));
        }
        let s = sums?;
        if let Some(c) = now.connections.first() {
            return Err(NotIdle::Connection(c.clone()));
        }
        if let Some(pid) = s.newcomer {
            return Err(NotIdle::Newcomer(pid));
        }
        if let Some(gone) = before.keys().find(|k| !now.read.contains_key(k)) {
            return Err(NotIdle::Left(gone.pid));
        }
        under_bounds(bounds, len, s.cpu_ns, s.io_bytes, s.syscalls)
    })();
    Judged { idle, rates }
}

/// The members' counters added up over an interval.
struct Sums {
    cpu_ns: u64,
    io_bytes: u64,
    syscalls: u64,
    /// A member not read at the start: its whole count is taken.
    newcomer: Option<u32>,
}

impl Sums {
    fn rates(&self, len: Duration) -> Rates {
        let secs = len.as_secs_f64().max(1e-9);
        Rates {
            cpu_percent: self.cpu_ns as f64 / 1e9 / secs * 100.0,
            io_bytes_per_second: self.io_bytes as f64 / secs,
        }
    }
}

/// What every member used from `before` to `now`, pollers' CPU aside; a counter unread at
/// either end is an error.
fn sums(before: &Read, now: Now) -> Result<Sums, NotIdle> {
    let zero = Ok(Cumulative {
        cpu_ns: 0,
        io_bytes: 0,
        syscalls: 0,
    });
    let mut s = Sums {
        cpu_ns: 0,
        io_bytes: 0,
        syscalls: 0,
        newcomer: None,
    };
    for (who, after) in now.read {
        let was = match before.get(who) {
            Some(was) => was,
            None => {
                s.newcomer.get_or_insert(who.pid);
                &zero
            }
        };
        let (was, after) = both(who, was, after)?;
        let moved = |a: u64, b: u64| b.checked_sub(a).ok_or(NotIdle::Backwards(who.pid));
        if !now.pollers.contains(who) {
            s.cpu_ns = s.cpu_ns.saturating_add(moved(was.cpu_ns, after.cpu_ns)?);
        }
        s.io_bytes = s
            .io_bytes
            .saturating_add(moved(was.io_bytes, after.io_bytes)?);
        s.syscalls = s
            .syscalls
            .saturating_add(moved(was.syscalls, after.syscalls)?);
    }
    for (who, was) in before {
        if let Err(why) = was {
            return Err(NotIdle::Unread {
                pid: who.pid,
                why: why.clone(),
            });
        }
    }
    Ok(s)
}

/// Both readings of one member, or why not.
fn both<'r>(
    who: &Identity,
    was: &'r Result<Cumulative, String>,
    after: &'r Result<Cumulative, String>,
) -> Result<(&'r Cumulative, &'r Cumulative), NotIdle> {
    match (was, after) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(why), _) | (_, Err(why)) => Err(NotIdle::Unread {
            pid: who.pid,
            why: why.clone(),
        }),
    }
}

/// The sums against the bounds, scaled to the interval's length.
fn under_bounds(
    b: &Bounds,
    len: Duration,
    cpu_ns: u64,
    io: u64,
    calls: u64,
) -> Result<(), NotIdle> {
    let nanos = len.as_nanos().max(1);
    // For the words: 1.9 s reads "2 s", not "1 s".
    let secs = len.as_secs_f64().round() as u64;
    // Thousandths of one core, rounded up: a bound is never met by rounding.
    let used = (u128::from(cpu_ns) * 1000).div_ceil(nanos) as u64;
    if used > b.cpu_per_mille {
        return Err(NotIdle::Cpu {
            used,
            bound: b.cpu_per_mille,
            secs,
        });
    }
    let per_second =
        |total: u64, bound: u64| u128::from(total) * 1_000_000_000 > u128::from(bound) * nanos;
    if per_second(io, b.io_bytes_per_second) {
        return Err(NotIdle::Io {
            bytes: io,
            bound: b.io_bytes_per_second,
            secs,
        });
    }
    if per_second(calls, b.syscalls_per_second) {
        return Err(NotIdle::Calls {
            calls,
            bound: b.syscalls_per_second,
            secs,
        });
    }
    Ok(())
}
