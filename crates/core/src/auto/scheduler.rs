//! The scheduler (docs/design.md §5a): each rescan it advances the idle clock, shows it on the
//! cards, and fires the armed stops that are due, each through the whole chain as a click's
//! stop. The app's worker runs one at every refresh; `pier watch` runs one in the foreground.

use std::collections::HashMap;
use std::time::Duration;

use crate::diagnose::rules::Thresholds;
use crate::idle::{observe_scan, Clock, ClockOptions};
use crate::model::card::{Level, Resource, Scan};
use crate::probe::Probe;

/// How a scheduler runs.
#[derive(Debug, Clone, Copy)]
pub struct SchedulerOptions {
    /// The idle clock's bounds and settle after a wake.
    pub clock: ClockOptions,
    /// How long a card must stay green before its armed stop fires. Why 60 s: a client that
    /// just left (a reload, a tab switched back) comes back within it.
    pub settle: Duration,
    /// Busy, for a rescan without a sample: the scan's own thresholds, over the last interval.
    pub thresholds: Thresholds,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        Self {
            clock: ClockOptions::default(),
            settle: Duration::from_secs(60),
            thresholds: Thresholds::default(),
        }
    }
}

/// One scheduler's memory between rescans: the idle clock, and since when each card has been
/// green without a break.
#[derive(Debug, Clone, Default)]
pub struct Scheduler {
    opts: SchedulerOptions,
    clock: Clock,
    /// Awake time each resource's card turned green at.
    green_since: HashMap<String, Duration>,
    /// Awake time of the last rescan.
    now: Duration,
}

impl Scheduler {
    /// A scheduler that has seen nothing yet.
    pub fn new(opts: SchedulerOptions) -> Self {
        Self {
            opts,
            clock: Clock::new(opts.clock),
            ..Self::default()
        }
    }

    /// The options it runs with.
    pub fn options(&self) -> &SchedulerOptions {
        &self.opts
    }

    /// Advances the clock by one rescan, `scan`, made just now: reads its members' counters,
    /// fills each card's `idle`, and notes which cards are green.
    pub fn measure(&mut self, probe: &dyn Probe, scan: &mut Scan) {
        let times = probe.times();
        let seen = observe_scan(scan, probe);
        self.clock.observe(times, seen);
        self.now = times.awake;
        let sampled = scan.sample_ms > 0;
        let mut green = HashMap::new();
        for p in &mut scan.projects {
            for r in &mut p.resources {
                r.idle = self.clock.idle(&r.id);
                if self.is_green(r, sampled) {
                    let since = self.green_since.get(&r.id).copied().unwrap_or(times.awake);
                    green.insert(r.id.clone(), since);
                }
            }
        }
        self.green_since = green;
    }

    /// Whether a card is green for an armed stop: no reason against it, and not busy over the
    /// last interval when the rescan took no sample (its level then says nothing of activity).
    fn is_green(&self, r: &Resource, sampled: bool) -> bool {
        if r.level != Level::Green || !r.reasons.is_empty() {
            return false;
        }
        sampled
            || self.clock.rates(&r.id).is_some_and(|rates| {
                rates.cpu_percent <= self.opts.thresholds.cpu_percent
                    && rates.io_bytes_per_second <= self.opts.thresholds.io_bytes_per_second
            })
    }

    /// How long resource `id`'s card has been green without a break, as of the last rescan.
    pub fn green_for(&self, id: &str) -> Option<Duration> {
        self.green_since
            .get(id)
            .map(|&since| self.now.saturating_sub(since))
    }

    /// How much of the settle after a wake is left; `None` when none is.
    pub fn settling(&self) -> Option<Duration> {
        self.clock.settling()
    }
}
