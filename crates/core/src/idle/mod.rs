//! The idle clock (docs/design.md §5a): idleness measured over the awake time between rescans,
//! from cumulative counters, not in one short sample. A scheduler (the app's worker, `pier
//! watch`) keeps one [`Clock`] and feeds it each rescan; a card then says "idle 40 min".
//!
//! - an interval is judged by `interval::judge` (every member read at both ends, the same
//!   members, no connection live or recently closed, CPU, bytes and calls under [`Bounds`]);
//! - only awake time counts: a sleep between two rescans adds nothing, and a wake starts a
//!   settle ([`Clock::settling`]) before anything is due;
//! - the clock lives in memory: a scheduler that starts measures afresh.

mod interval;
mod seen;

use std::collections::HashMap;
use std::time::Duration;

pub use interval::{judge, Bounds, Judged, NotIdle, Now, Rates, Read};
pub use seen::{observe_scan, Observation};

use crate::model::idle::{Idle, IdleState};
use crate::probe::Times;

/// A sleep shorter than this is a clock's jitter, not a suspend.
const SLEPT: Duration = Duration::from_secs(5);

/// How the clock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOptions {
    /// What an interval must stay under.
    pub bounds: Bounds,
    /// How long after a wake nothing is due. Why 10 min: after a wake, clients (a browser's
    /// tabs, a phone) come back over a while; a server idle only because they have not yet is
    /// not idle.
    pub wake_settle: Duration,
}

impl Default for ClockOptions {
    fn default() -> Self {
        Self {
            bounds: Bounds::default(),
            wake_settle: Duration::from_secs(600),
        }
    }
}

/// One resource's clock between rescans.
#[derive(Debug, Clone)]
struct Track {
    /// Its counters at the last rescan.
    read: Read,
    /// The awake time its idle stretch began at; `None` unless the last interval was idle.
    idle_since: Option<Duration>,
    /// What a card shows now.
    shown: Idle,
    /// The last interval's rates; `None` before the first, or when a counter was not read.
    rates: Option<Rates>,
    /// The last interval's verdict; `None` before the first.
    last: Option<Result<(), NotIdle>>,
}

/// The idle clocks of every resource a scheduler sees.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    opts: ClockOptions,
    tracks: HashMap<String, Track>,
    /// The last rescan's times.
    last: Option<Times>,
    /// Awake time until which a wake settles.
    settle_until: Option<Duration>,
}

impl Clock {
    /// A clock that has seen nothing yet.
    pub fn new(opts: ClockOptions) -> Self {
        Self {
            opts,
            ..Self::default()
        }
    }

    /// One rescan at `at`: each resource seen advances its clock; one not seen is forgotten
    /// (seen again, it starts measuring afresh).
    pub fn observe(&mut self, at: Times, seen: Vec<Observation>) {
        let len = self.last.map(|last| {
            let awake = at.awake.saturating_sub(last.awake);
            let slept = at
                .since_boot
                .saturating_sub(last.since_boot)
                .saturating_sub(awake);
            (awake, slept)
        });
        if let Some((_, slept)) = len {
            if slept > SLEPT {
                self.settle_until = Some(at.awake + self.opts.wake_settle);
            }
        }
        self.last = Some(at);
        let mut tracks = HashMap::with_capacity(seen.len());
        for o in seen {
            let before = self.tracks.remove(&o.id);
            let track = match (before, len) {
                (Some(before), Some((awake, _))) => self.advance(before, awake, at.awake, &o),
                _ => Track {
                    read: o.read,
                    idle_since: None,
                    shown: measuring(),
                    rates: None,
                    last: None,
                },
            };
            tracks.insert(o.id, track);
        }
        self.tracks = tracks;
    }

    /// A resource's track after one interval of `awake` length, ending at awake time `now`.
    fn advance(&self, before: Track, awake: Duration, now: Duration, o: &Observation) -> Track {
        let judged = judge(
            &self.opts.bounds,
            awake,
            &before.read,
            Now {
                read: &o.read,
                pollers: &o.pollers,
                connections: &o.connections,
            },
        );
        let (idle_since, shown) = match &judged.idle {
            Ok(()) => {
                // The stretch began where its first idle interval did.
                let since = before.idle_since.unwrap_or(now.saturating_sub(awake));
                // Rounded: an interval of 9.98 s reads "idle 10 s".
                let seconds = now.saturating_sub(since).as_secs_f64().round() as u64;
                (Some(since), idle(IdleState::Idle, seconds, None))
            }
            Err(why) => (None, idle(IdleState::Active, 0, Some(why.to_string()))),
        };
        Track {
            read: o.read.clone(),
            idle_since,
            shown,
            rates: judged.rates,
            last: Some(judged.idle),
        }
    }

    /// What the clock says of resource `id`; `None` when it was not seen at the last rescan.
    pub fn idle(&self, id: &str) -> Option<Idle> {
        self.tracks.get(id).map(|t| t.shown.clone())
    }

    /// The last interval's rates of resource `id`; `None` when it has none (seen once, gone,
    /// or a counter was not read).
    pub fn rates(&self, id: &str) -> Option<Rates> {
        self.tracks.get(id)?.rates
    }

    /// The last interval's verdict on resource `id`: idle, or why not; `None` before its first.
    pub fn last(&self, id: &str) -> Option<&Result<(), NotIdle>> {
        self.tracks.get(id)?.last.as_ref()
    }

    /// How much of the settle after a wake is left at the last rescan; `None` when none is.
    pub fn settling(&self) -> Option<Duration> {
        let now = self.last?.awake;
        self.settle_until
            .filter(|&until| until > now)
            .map(|until| until - now)
    }
}

fn measuring() -> Idle {
    idle(IdleState::Measuring, 0, None)
}

fn idle(state: IdleState, seconds: u64, why: Option<String>) -> Idle {
    Idle {
        state,
        seconds,
        why,
    }
}

#[cfg(test)]
mod tests;
