//! The scheduler (docs/design.md §5a): each rescan it advances the idle clock, shows it on the
//! cards, and fires the armed stops that are due, each through the whole chain as a click's
//! stop. The app's worker runs one at every refresh; `pier watch` runs one in the foreground.

mod ruled;

pub use ruled::off_on_every_card;

use std::collections::HashMap;
use std::time::Duration;

use std::time::SystemTime;

use super::arms::{self, AfterFire, Dropped, Seen, Verdict};
use crate::diagnose::rules::Thresholds;
use crate::diagnose::{self, project, Engines, ScanError, ScanOptions};
use crate::front::System;
use crate::idle::{observe_scan, Clock, ClockOptions};
use crate::model::arm::Arm;
use crate::model::card::{Level, Resource, Scan};
use crate::model::outcome::StopReport;
use crate::model::rules::RulesState;
use crate::model::shown::Shown;
use crate::model::RequestedBy;
use crate::probe::Probe;
use crate::stop::StopOptions;
use crate::store::StoreError;

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
    /// Until when (seconds since the Unix epoch) each resource whose rule's stop was refused
    /// waits before a rule may stop it again.
    backoff: HashMap<String, u64>,
    /// The history the rules last read, and the records folder's change time it was read at.
    history: Option<ruled::HistoryCache>,
    /// The memory pressure the rules read at the last rescan; `None` when they are not on or
    /// it could not be read.
    pressure: Option<crate::model::rules::MemoryPressure>,
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

    /// Whether a card is green for an armed stop over the last interval, not only at this
    /// rescan: no reason against it; nothing but its own activity kept the interval from idle
    /// (a client that came and went between two rescans, a process that came or went, an
    /// unread counter: `NotIdle::only_activity`); and, when the rescan took no sample (its
    /// level then says nothing of activity), the interval under the busy thresholds.
    fn is_green(&self, r: &Resource, sampled: bool) -> bool {
        if r.level != Level::Green || !r.reasons.is_empty() {
            return false;
        }
        let unused = match self.clock.last(&r.id) {
            Some(Ok(())) => true,
            Some(Err(why)) => why.only_activity(),
            None => false,
        };
        unused
            && (sampled
                || self.clock.rates(&r.id).is_some_and(|rates| {
                    rates.cpu_percent <= self.opts.thresholds.cpu_percent
                        && rates.io_bytes_per_second <= self.opts.thresholds.io_bytes_per_second
                }))
    }

    /// How long resource `id`'s card has been green without a break, as of the last rescan.
    pub fn green_for(&self, id: &str) -> Option<Duration> {
        self.green_since
            .get(id)
            .map(|&since| self.now.saturating_sub(since))
    }

    /// The memory pressure the rules read at the last rescan (the view shows it).
    pub fn pressure(&self) -> Option<&crate::model::rules::MemoryPressure> {
        self.pressure.as_ref()
    }

    /// How much of the settle after a wake is left; `None` when none is.
    pub fn settling(&self) -> Option<Duration> {
        self.clock.settling()
    }
}

/// What the armed stops came to at one rescan.
#[derive(Debug)]
pub enum Event {
    /// An armed stop ran through the chain; `kept` when it was refused for what the arm waits
    /// out, and the arm waits on.
    Fired {
        /// The arm.
        arm: Arm,
        /// The stop's report, as `pier stop --json` gives it.
        report: Box<StopReport>,
        /// The arm waits on (refused for what it waits out).
        kept: bool,
    },
    /// An arm was dropped unfired, or after a stop that ended it otherwise.
    Dropped {
        /// The arm.
        arm: Arm,
        /// Why, in one sentence.
        why: Dropped,
    },
    /// A rule stopped a resource through the chain (whatever the chain's answer).
    Ruled {
        /// The rule's name.
        rule: String,
        /// What made it due ("idle 42 min").
        because: String,
        /// The card's project.
        project: String,
        /// The stop's report, as `pier stop --json` gives it.
        report: Box<StopReport>,
    },
    /// The arm records could not be read, or one could not be removed.
    Unreadable(StoreError),
}

impl Scheduler {
    /// The armed stops at this rescan, `scan` (already [`measure`](Scheduler::measure)d): each
    /// judged ([`arms::judge`]); a card that waits shows what for; the due ones are stopped as
    /// one batch through the whole chain, asked for by [`RequestedBy::Armed`]; the dropped and
    /// the finished are removed.
    pub fn fire_armed(
        &mut self,
        system: &System,
        scan: &mut Scan,
        stop: &StopOptions,
    ) -> Vec<Event> {
        let listing = match arms::list(&system.store) {
            Ok(listing) => listing,
            Err(e) => return vec![Event::Unreadable(e)],
        };
        let mut events: Vec<Event> = listing.damaged.into_iter().map(Event::Unreadable).collect();
        let boot = system.probe.boot_id();
        let now = SystemTime::now();
        let mut due: Vec<(Arm, Shown, crate::store::Lock)> = Vec::new();
        for (_, arm) in listing.records {
            let found = find(scan, &arm.id);
            let identity = found.is_none().then(|| system.probe.identity(arm.root.pid));
            let verdict = {
                let card = found.as_ref().map(|(r, _)| &**r);
                arms::judge(
                    &arm,
                    &Seen {
                        now,
                        boot_id: boot.as_deref(),
                        card,
                        identity: identity.as_ref(),
                        idle: card.and_then(|r| r.idle.as_ref()),
                        green_for: self.green_for(&arm.id),
                        settle: self.opts.settle,
                        wake_left: self.settling(),
                    },
                )
            };
            // Firing or dropping acts on the record: only under its claim (one scheduler).
            let claimed = |events: &mut Vec<Event>| claim(system, &arm, events);
            match verdict {
                Verdict::Fire => {
                    if let Some(lock) = claimed(&mut events) {
                        let (r, level) = found.expect("a card fires only when it is there");
                        due.push((arm, Shown::of(level, r), lock));
                    }
                }
                Verdict::Wait(_) => {
                    if let Some((r, _)) = found {
                        r.armed = Some(arms::armed_view(&arm, &verdict));
                    }
                }
                Verdict::Drop(why) => {
                    if let Some(_lock) = claimed(&mut events) {
                        events.push(drop_arm(system, arm, why));
                    }
                }
            }
        }
        events.extend(self.fire(system, due, stop));
        events
    }

    /// Stops every due arm's resource as one batch, and ends or keeps each arm by its report.
    fn fire(
        &mut self,
        system: &System,
        due: Vec<(Arm, Shown, crate::store::Lock)>,
        stop: &StopOptions,
    ) -> Vec<Event> {
        if due.is_empty() {
            return Vec::new();
        }
        let stopper = system.stopper(StopOptions {
            requested_by: RequestedBy::Armed,
            anyway: Default::default(),
            dry_run: false,
            ..stop.clone()
        });
        let targets: Vec<(&str, Option<&Shown>)> = due
            .iter()
            .map(|(a, s, _)| (a.id.as_str(), Some(s)))
            .collect();
        let reports = stopper.stop_all(&targets, &mut |_| {});
        let mut events = Vec::new();
        for (arm, _, _claim) in &due {
            let Some(report) = reports.iter().find(|r| r.id == arm.id) else {
                continue;
            };
            // Green again from scratch: the next firing waits a whole settle.
            self.green_since.remove(&arm.id);
            let kept = match arms::after_stop(report) {
                AfterFire::KeepWaiting => true,
                AfterFire::Fired | AfterFire::Drop(_) => {
                    if let Err(e) = arms::remove(&system.store, arm) {
                        events.push(Event::Unreadable(e));
                    }
                    false
                }
            };
            events.push(Event::Fired {
                arm: arm.clone(),
                report: Box::new(report.clone()),
                kept,
            });
        }
        events
    }
}

impl Scheduler {
    /// What the scheduler does at one rescan `scan`, already [`measure`](Scheduler::measure)d:
    /// with `act`, the armed stops ([`fire_armed`](Scheduler::fire_armed)); then the rules,
    /// which stop what is due only with `act` ([`rules`](Scheduler::rules)). `act` is false
    /// for a scheduler that does not hold the lock: it shows, and sends nothing.
    pub fn tick(
        &mut self,
        system: &System,
        scan: &mut Scan,
        stop: &StopOptions,
        rules: &RulesState,
        act: bool,
    ) -> Vec<Event> {
        let mut events = match act {
            true => self.fire_armed(system, scan, stop),
            false => Vec::new(),
        };
        events.extend(self.rules(system, scan, rules, stop, act));
        events
    }

    /// One rescan made for the clock alone, as `pier watch` makes it every `--every`: a scan
    /// of `opts` without a sample window, memory or container engines ([`clock_scan`]), then
    /// [`measure`](Scheduler::measure) and [`tick`](Scheduler::tick). The scan, measured, and
    /// what its armed stops and rules came to.
    pub fn rescan(
        &mut self,
        system: &System,
        opts: &ScanOptions,
        stop: &StopOptions,
        rules: &RulesState,
        act: bool,
    ) -> Result<(Scan, Vec<Event>), ScanError> {
        let opts = clock_scan(opts.clone());
        let mut scan = diagnose::scan(system.probe.as_ref(), &opts, &project::marker_on_disk)?;
        self.measure(system.probe.as_ref(), &mut scan);
        let events = self.tick(system, &mut scan, stop, rules, act);
        Ok((scan, events))
    }
}

/// `opts` as a rescan for the clock alone scans. Why: the clock measures over the interval
/// between two rescans, so a sample window adds nothing but time; nobody sees memory or a
/// container's card there. What is left is what the clock costs (`examples/clock_cost.rs`).
pub fn clock_scan(opts: ScanOptions) -> ScanOptions {
    ScanOptions {
        sample: Duration::ZERO,
        memory: false,
        engines: Engines::NotAsked,
        ..opts
    }
}

/// The claim on `arm` (`arms::claim`); `None` when another scheduler has it, or it could not
/// be taken (said as an event).
fn claim(system: &System, arm: &Arm, events: &mut Vec<Event>) -> Option<crate::store::Lock> {
    arms::claim(&system.store, arm).unwrap_or_else(|e| {
        events.push(Event::Unreadable(e));
        None
    })
}

/// Removes a dropped arm; the event says why (or that it could not be removed).
fn drop_arm(system: &System, arm: Arm, why: Dropped) -> Event {
    match arms::remove(&system.store, &arm) {
        Ok(()) => Event::Dropped { arm, why },
        Err(e) => Event::Unreadable(e),
    }
}

/// Resource `id`'s card in `scan`, with its project's level.
fn find<'s>(scan: &'s mut Scan, id: &str) -> Option<(&'s mut Resource, Level)> {
    scan.projects.iter_mut().find_map(|p| {
        let level = p.level;
        p.resources
            .iter_mut()
            .find(|r| r.id == id)
            .map(|r| (r, level))
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A rescan for the clock alone takes no sample, reads no memory and asks no engine, and
    /// keeps the rest of what it was asked (its folders, its generation).
    #[test]
    fn a_clock_rescan_scans_without_a_sample_memory_or_engines() {
        let asked = ScanOptions {
            generation: 7,
            under: vec![PathBuf::from("/projects")],
            engines: Engines::Ask,
            ..ScanOptions::default()
        };
        let opts = clock_scan(asked);
        assert_eq!(opts.sample, Duration::ZERO);
        assert!(!opts.memory, "nobody reads memory at a clock's rescan");
        assert!(matches!(opts.engines, Engines::NotAsked));
        assert_eq!(opts.generation, 7);
        assert_eq!(opts.under, vec![PathBuf::from("/projects")]);
    }

    fn scan_of(r: &Resource, sample_ms: u64) -> Scan {
        use crate::model::examples;
        Scan {
            schema: crate::model::SCHEMA_VERSION,
            generation: 1,
            scanned_at: String::new(),
            sample_ms,
            projects: vec![examples::project("/p/web", r.level, vec![r.clone()])],
            other_listeners: None,
            engines: Vec::new(),
        }
    }

    /// Green at each rescan is not enough: a client that came and went between two rescans
    /// (its connection closed since) means the card was in use, and the settle starts again.
    /// Found by the review: a server polled every 3 s was stopped between two requests.
    #[test]
    fn a_client_that_came_and_went_between_rescans_starts_the_settle_again() {
        use crate::model::examples;
        use crate::probe::fake::FakeProbe;
        use crate::probe::{Cumulative, Ended};
        let probe = FakeProbe::default();
        let r = examples::resource("10-100", Level::Green, 5173);
        let quiet = Cumulative {
            cpu_ns: 0,
            io_bytes: 0,
            syscalls: 0,
        };
        probe.set_counters(r.root, Ok(quiet));
        let mut s = Scheduler::new(SchedulerOptions::default());
        let at = |secs: u64, s: &mut Scheduler| {
            probe.set_times(Duration::from_secs(secs), Duration::from_secs(secs));
            s.measure(&probe, &mut scan_of(&r, 500));
            s.green_for("10-100")
        };
        assert_eq!(at(30, &mut s), None, "no interval measured yet");
        assert_eq!(at(60, &mut s), Some(Duration::ZERO));
        assert_eq!(at(90, &mut s), Some(Duration::from_secs(30)));
        probe.set_ended(vec![Ended {
            local: "127.0.0.1:40000".parse().unwrap(),
            remote: "127.0.0.1:5173".parse().unwrap(),
        }]);
        assert_eq!(at(120, &mut s), None, "served since the last rescan");
        probe.set_ended(Vec::new());
        assert_eq!(
            at(150, &mut s),
            Some(Duration::ZERO),
            "the settle starts again"
        );
    }
}
