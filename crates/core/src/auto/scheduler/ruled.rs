//! The rules at one rescan (docs/design.md §5a): each card judged (`rules::judge`), its note
//! shown, and the due ones stopped through the whole chain, each asked for by its rule.

use super::{Event, Scheduler};
use crate::auto::pause;
use crate::auto::rules::judge::{self, Card, Due, Gates, Judged};
use crate::front::System;
use crate::model::card::{Resource, Scan};
use crate::model::history::HistoryEntry;
use crate::model::memory::Memory;
use crate::model::outcome::ResourceResult;
use crate::model::rules::{AutoNote, AutoState, MemoryPressure, Rules, RulesState};
use crate::model::shown::Shown;
use crate::model::target::{record_prefix_of, TargetKind};
use crate::model::RequestedBy;
use crate::stop::StopOptions;

/// An hour, the cap's window.
const HOUR: u64 = 3600;

/// How long the history read for the rules serves when the records folder seems unchanged.
const HISTORY_FOR: std::time::Duration = std::time::Duration::from_secs(300);

/// The stops' records as last seen ([`stop_records`]), when, and the history read then.
#[derive(Debug, Clone)]
pub(super) struct HistoryCache {
    seen: Seen,
    read_at: std::time::Instant,
    entries: Vec<HistoryEntry>,
}

/// What the rules' judge needs that is read once per rescan.
struct Read {
    pause: Option<crate::model::rules::Pause>,
    pressure: Option<MemoryPressure>,
    history: Vec<HistoryEntry>,
    /// A sentence when something the rules rest on could not be read: nothing is due then.
    unread: Option<String>,
}

impl Scheduler {
    /// The rules at this rescan, `scan` (already [`measure`](Scheduler::measure)d): every
    /// card's note filled in (`Resource::auto`); with `act`, the due ones stopped, each as a
    /// batch of one asked for by its rule. `act` is false for a preview (`pier auto`) and for
    /// a scheduler without the lock: nothing is sent.
    pub fn rules(
        &mut self,
        system: &System,
        scan: &mut Scan,
        rules: &RulesState,
        stop: &StopOptions,
        act: bool,
    ) -> Vec<Event> {
        self.pressure = None;
        let rules = match rules {
            RulesState::Off => return Vec::new(),
            RulesState::Unreadable(why) => {
                off_on_every_card(scan, why);
                return Vec::new();
            }
            RulesState::On(rules) => rules,
        };
        let now = pause::now();
        let read = self.read(system, now, any_green(scan));
        self.pressure = read.pressure.clone();
        let (cap_left, cap_frees_at) = cap(rules, &read.history, now);
        let gates = Gates {
            rules,
            now,
            pause: read.pause.as_ref(),
            settling: self.settling(),
            pressure: read.pressure.as_ref(),
            cap_left,
            cap_frees_at,
        };
        let due = self.judge_each(&gates, scan, &read);
        if let Some(why) = &read.unread {
            hold_due(scan, &due, why);
            return Vec::new();
        }
        let chosen = self.choose(system, scan, rules, due, cap_left);
        match act {
            true => self.stop_chosen(system, rules, chosen, stop, now),
            false => Vec::new(),
        }
    }

    /// The pause, the pressure (kept for the view too: `Scheduler::pressure`) and the history (only when a
    /// card is green: nothing else can be due, so nothing else needs the cap or who started
    /// what again), read.
    fn read(&mut self, system: &System, now: u64, green: bool) -> Read {
        let mut unread = None;
        let pause = pause::read(&system.store, now).unwrap_or_else(|e| {
            unread = Some(format!("the pause could not be read: {e}"));
            None
        });
        let pressure = system.probe.memory_pressure().ok();
        let history = match green.then(|| self.history(system)) {
            None => Vec::new(),
            Some(Ok(entries)) => entries,
            Some(Err(e)) => {
                // Why nothing is due then: the cap and "started again today" rest on it.
                unread = Some(format!("the history could not be read: {e}"));
                Vec::new()
            }
        };
        Read {
            pause,
            pressure,
            history,
            unread,
        }
    }

    /// The history, read again only when a stop's record changed since the last read (one was
    /// written, finished, restarted from or pruned). Why: reading it judges every record
    /// against the process table — a second scan's cost at every rescan, for entries that
    /// change only when something is stopped or restarted. Read again after [`HISTORY_FOR`]
    /// anyway: two changes within one tick of the file system's clock leave one time.
    fn history(&mut self, system: &System) -> Result<Vec<HistoryEntry>, crate::store::StoreError> {
        let seen = stop_records(&system.store.folder().join("records"));
        if let Some(c) = &self.history {
            if seen == c.seen && c.read_at.elapsed() < HISTORY_FOR {
                return Ok(c.entries.clone());
            }
        }
        let (entries, _) = crate::restart::history(system.probe.as_ref(), &system.store)?;
        self.history = Some(HistoryCache {
            seen,
            read_at: std::time::Instant::now(),
            entries: entries.clone(),
        });
        Ok(entries)
    }

    /// Each card judged and its note set; the due ones, by project and resource index.
    fn judge_each(
        &self,
        gates: &Gates,
        scan: &mut Scan,
        read: &Read,
    ) -> Vec<(usize, usize, Judged)> {
        let mut due = Vec::new();
        for (pi, p) in scan.projects.iter_mut().enumerate() {
            for (ri, r) in p.resources.iter_mut().enumerate() {
                let card = Card {
                    r,
                    project: &p.path,
                    backoff_until: self.backoff.get(&r.id).copied(),
                    started_again: judge::started_again(r, &p.path, &read.history, gates.now),
                };
                let judged = judge::judge(gates, &card);
                r.auto = Some(judged.note.clone());
                if judged.due.is_some() {
                    due.push((pi, ri, judged));
                }
            }
        }
        due
    }

    /// Which of the due to stop now (`judge::pick`); the others are held, saying why.
    fn choose(
        &self,
        system: &System,
        scan: &mut Scan,
        rules: &Rules,
        due: Vec<(usize, usize, Judged)>,
        cap_left: u32,
    ) -> Vec<(Resource, String, Shown, usize)> {
        let picks: Vec<Due> = due
            .iter()
            .map(|(pi, ri, j)| {
                let rule = j.due.expect("due");
                let r = &scan.projects[*pi].resources[*ri];
                Due {
                    rule,
                    pressure: rules.rules[rule].pressure,
                    memory: rules.rules[rule]
                        .pressure
                        .then(|| memory_of(system, r))
                        .flatten(),
                }
            })
            .collect();
        let chosen = judge::pick(&picks, cap_left);
        let mut out = Vec::new();
        for (i, (pi, ri, j)) in due.into_iter().enumerate() {
            let p = &mut scan.projects[pi];
            let level = p.level;
            let r = &mut p.resources[ri];
            if chosen.contains(&i) {
                out.push((
                    r.clone(),
                    p.path.clone(),
                    Shown::of(level, r),
                    j.due.expect("due"),
                ));
            } else {
                r.auto = Some(held(&j.note, later(&picks[i], cap_left)));
            }
        }
        out
    }

    /// Stops each chosen card as a batch of one, asked for by its rule; any end but stopped
    /// ([`backs_off`]) backs the resource off for the rules' back-off.
    fn stop_chosen(
        &mut self,
        system: &System,
        rules: &Rules,
        chosen: Vec<(Resource, String, Shown, usize)>,
        stop: &StopOptions,
        now: u64,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        for (r, project, shown, rule) in chosen {
            let name = rules.rules[rule].name.clone();
            let because = judge::because(&Card {
                r: &r,
                project: &project,
                backoff_until: None,
                started_again: None,
            });
            let stopper = system.stopper(StopOptions {
                requested_by: RequestedBy::Rule {
                    name: name.clone(),
                    because: Some(because.clone()),
                },
                anyway: Default::default(),
                dry_run: false,
                ..stop.clone()
            });
            let reports = stopper.stop_all(&[(r.id.as_str(), Some(&shown))], &mut |_| {});
            for report in reports {
                if backs_off(report.result) {
                    // Each member too: one that outlived its root is a card of its own next.
                    let ids = report
                        .members
                        .iter()
                        .map(|m| format!("{}-{}", m.pid, m.start_time));
                    for id in std::iter::once(r.id.clone()).chain(ids) {
                        self.backoff.insert(id, now + rules.backoff_seconds);
                    }
                }
                self.green_since.remove(&r.id);
                events.push(Event::Ruled {
                    rule: name.clone(),
                    because: because.clone(),
                    project: project.clone(),
                    report: Box::new(report),
                });
            }
        }
        self.backoff.retain(|_, &mut until| until > now);
        if !events.is_empty() {
            // A stop wrote records: the cap and "started again" read them afresh next time.
            self.history = None;
        }
        events
    }
}

/// Whether a rule's stop with `result` backs the resource off. Why every result but stopped: a
/// refusal (a client at the last moment), a failure (a snapshot that cannot be written) or a
/// server that outlives SIGTERM would be asked again at the very next rescan, each time a
/// notification, a record and (once signalled) one of the hour's cap spent on one resource.
fn backs_off(result: ResourceResult) -> bool {
    result != ResourceResult::Stopped
}

/// Record file names, each with its change time.
type Seen = Vec<(std::ffi::OsString, Option<std::time::SystemTime>)>;

/// The stops' records in `records` (snapshots and container records, not arms, the pause or
/// the view, which change at every rescan), each with its change time; empty when none or
/// unreadable (the history read then says why).
fn stop_records(records: &std::path::Path) -> Seen {
    let Ok(dir) = std::fs::read_dir(records) else {
        return Vec::new();
    };
    let mut seen: Vec<_> = dir
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            [TargetKind::Tree, TargetKind::Container]
                .iter()
                .any(|&k| name.starts_with(record_prefix_of(k)))
        })
        .map(|e| (e.file_name(), e.metadata().and_then(|m| m.modified()).ok()))
        .collect();
    seen.sort();
    seen
}

/// Whether any card is green: only a green card can be due.
fn any_green(scan: &Scan) -> bool {
    scan.projects
        .iter()
        .flat_map(|p| &p.resources)
        .any(|r| r.level == crate::model::card::Level::Green && r.reasons.is_empty())
}

/// Every card says the rules are off, and why: the file that cannot be read is named.
pub fn off_on_every_card(scan: &mut Scan, why: &str) {
    for r in scan.projects.iter_mut().flat_map(|p| &mut p.resources) {
        r.auto = Some(AutoNote {
            state: AutoState::Held,
            rule: None,
            due_in_seconds: None,
            why: format!("automatic stops are off: {why}"),
        });
    }
}

/// The due cards held for `why` (something the rules rest on could not be read).
fn hold_due(scan: &mut Scan, due: &[(usize, usize, Judged)], why: &str) {
    for (pi, ri, j) in due {
        scan.projects[*pi].resources[*ri].auto = Some(held(&j.note, why.to_owned()));
    }
}

/// `note`, held for `why`.
fn held(note: &AutoNote, why: String) -> AutoNote {
    AutoNote {
        state: AutoState::Held,
        why,
        ..note.clone()
    }
}

/// Why a due card was not chosen this rescan.
fn later(d: &Due, cap_left: u32) -> String {
    match d.pressure {
        true if cap_left > 0 => "under memory pressure, the largest is stopped first".to_owned(),
        _ => "the cap of automatic stops per hour is reached".to_owned(),
    }
}

/// About what stopping `r` frees: its members' memory added up, read now (a clock rescan
/// reads none); `None` when one could not be read.
fn memory_of(system: &System, r: &Resource) -> Option<u64> {
    let each = r.members.iter().map(|m| system.probe.memory(m.pid).ok());
    Memory::total(each).map(|m| m.bytes)
}

/// The stops left under the cap in the last hour, and when the next frees up: counted from
/// the history, so a scheduler started again counts what the last one did.
fn cap(rules: &Rules, history: &[HistoryEntry], now: u64) -> (u32, Option<u64>) {
    let mut times: Vec<u64> = history
        .iter()
        .filter(|e| matches!(e.requested_by, RequestedBy::Rule { .. }))
        // A stop refused before its first signal stopped nothing: it does not count.
        .filter(|e| e.signalled != Some(false))
        .filter_map(|e| judge::unix(&e.stopped_at))
        .filter(|&t| t + HOUR > now)
        .collect();
    times.sort_unstable();
    let used = u32::try_from(times.len()).unwrap_or(u32::MAX);
    let left = rules.cap_per_hour.saturating_sub(used);
    // The stop whose hour ends next makes room: the oldest of the last `cap` of them.
    let oldest = times.len().saturating_sub(rules.cap_per_hour as usize);
    let frees = (left == 0)
        .then(|| times.get(oldest).map(|t| t + HOUR))
        .flatten();
    (left, frees)
}
