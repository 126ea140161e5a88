//! What the rules say of one card at one rescan (docs/design.md §5a): due, waiting for its idle
//! time, held (paused, capped, backed off, settling after a wake), or never as it is. Pure: the
//! scheduler gathers the facts, [`judge`] decides, [`pick`] chooses among the due.

use std::time::Duration;

use crate::auto::arms::holds_kernel;
use crate::model::card::{Level, Resource};
use crate::model::history::HistoryEntry;
use crate::model::idle::IdleState;
use crate::model::rules::{AutoNote, AutoState, MemoryPressure, Pause, Rule, Rules};
use crate::words::{duration_seconds, utc_minute};

/// How long a resource someone started again is left alone. Why a day: a person who undid an
/// automatic stop (or started the server again by hand) wants it; a rule must not fight them.
pub const STARTED_AGAIN_FOR: u64 = 24 * 3600;

/// What holds for every card at one rescan.
#[derive(Debug, Clone, Copy)]
pub struct Gates<'a> {
    /// The rules (on).
    pub rules: &'a Rules,
    /// Now, seconds since the Unix epoch.
    pub now: u64,
    /// The pause in force, if any (its `until` is later than `now`).
    pub pause: Option<&'a Pause>,
    /// What is left of the settle after a wake.
    pub settling: Option<Duration>,
    /// The memory pressure reading; `None` when it could not be read (a pressure rule never
    /// acts then).
    pub pressure: Option<&'a MemoryPressure>,
    /// Automatic stops left in this hour under the cap.
    pub cap_left: u32,
    /// When the next stop frees up under the cap (seconds since the Unix epoch), when capped.
    pub cap_frees_at: Option<u64>,
}

/// What the scheduler knows of one card beyond the card itself.
#[derive(Debug, Clone, Copy)]
pub struct Card<'a> {
    /// The card.
    pub r: &'a Resource,
    /// Its project's folder.
    pub project: &'a str,
    /// Until when it is backed off after a refused stop (seconds since the Unix epoch).
    pub backoff_until: Option<u64>,
    /// When someone started it again after a stop of the same command within the last day
    /// ([`started_again`]).
    pub started_again: Option<u64>,
}

/// The rules' answer for one card: the note it shows, and the rule that stops it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// What the card shows.
    pub note: AutoNote,
    /// The index of the rule that makes it due now; `None` unless `note.state` is `due`.
    pub due: Option<usize>,
}

/// What the rules say of `c`. Why this order: what the card is (not green, a kernel, started
/// again) never changes by waiting, so it is said first; then which rule names it and how long
/// it has been idle; last what holds every card back for a while (pause, settle, back-off, cap).
pub fn judge(g: &Gates, c: &Card) -> Judged {
    if let Some(why) = never(c) {
        return note(AutoState::Never, None, None, why);
    }
    if let Some(why) = started_again_lately(c, g.now) {
        return note(AutoState::Held, None, None, why);
    }
    let matching: Vec<(usize, &Rule)> = g
        .rules
        .rules
        .iter()
        .enumerate()
        .filter(|(_, rule)| names(rule, c))
        .collect();
    if matching.is_empty() {
        let why = "no automatic-stop rule names it (rules.toml: under, kinds, ports)".to_owned();
        return note(AutoState::Never, None, None, why);
    }
    let (i, rule, left) = soonest(&matching, c, g.pressure);
    let name = Some(rule.name.clone());
    if let Some(left) = left {
        // Unmeasured (no scheduler's clock): when it will be due is not known.
        let due_in = c.r.idle.is_some().then_some(left);
        return note(AutoState::Waiting, name, due_in, waiting(rule, c, g));
    }
    match held(g, c) {
        Some(why) => note(AutoState::Held, name, None, why),
        None => Judged {
            due: Some(i),
            ..note(AutoState::Due, name, None, because(c))
        },
    }
}

/// Why no rule ever stops `c` as it is: rules act only on green, never on a kernel's state.
fn never(c: &Card) -> Option<String> {
    // Why: green is the only level every checkpoint agrees on; yellow and red need a person.
    if c.r.level != Level::Green || !c.r.reasons.is_empty() {
        return Some("not green: automatic-stop rules act only on green cards".to_owned());
    }
    // Why: a live kernel's variables die with it, and no snapshot brings them back.
    if holds_kernel(c.r) {
        return Some(
            "holds a live notebook kernel, whose state a restart cannot bring back".into(),
        );
    }
    None
}

/// Why no rule stops `c` for a day: a person started it again after a stop (never fight the
/// undo, nor a command typed again).
fn started_again_lately(c: &Card, now: u64) -> Option<String> {
    let again = c.started_again?;
    Some(format!(
        "started again at {}: rules leave it alone until {}",
        utc_minute(again),
        utc_minute(again + STARTED_AGAIN_FOR)
    ))
    .filter(|_| now < again + STARTED_AGAIN_FOR)
}

/// Whether `rule`'s filters name `c`: every filter given must match.
fn names(rule: &Rule, c: &Card) -> bool {
    let under = rule.under.is_empty()
        || rule
            .under
            .iter()
            .any(|f| std::path::Path::new(c.project).starts_with(f));
    let kind = rule.kinds.is_empty() || rule.kinds.contains(&c.r.kind);
    let port = rule.ports.is_empty() || c.r.server_ports().any(|p| rule.ports.contains(&p.port));
    under && kind && port
}

/// Of the rules that name `c`, the one due soonest: its index, the rule, and the awake seconds
/// left (`None`: due now). A pressure rule is due only under pressure.
fn soonest<'r>(
    matching: &[(usize, &'r Rule)],
    c: &Card,
    pressure: Option<&MemoryPressure>,
) -> (usize, &'r Rule, Option<u64>) {
    let idle =
        c.r.idle
            .as_ref()
            .filter(|i| i.state == IdleState::Idle)
            .map_or(0, |i| i.seconds);
    let under = pressure.is_some_and(|p| p.under);
    let left = |rule: &Rule| -> (u8, u64) {
        let left = rule.idle_seconds.saturating_sub(idle);
        // A pressure rule without pressure is never due: it sorts after every other.
        match (rule.pressure && !under, left) {
            (true, left) => (2, left),
            (false, 0) => (0, 0),
            (false, left) => (1, left),
        }
    };
    let (i, rule) = *matching
        .iter()
        .min_by_key(|(_, rule)| left(rule))
        .expect("matching is not empty");
    let soon = match left(rule) {
        (0, _) => None,
        (_, left) => Some(left),
    };
    (i, rule, soon)
}

/// Why a rule that names `c` is not due yet, in words.
fn waiting(rule: &Rule, c: &Card, g: &Gates) -> String {
    let idle = duration_seconds(rule.idle_seconds);
    let pressure = match (rule.pressure, g.pressure) {
        (false, _) => String::new(),
        (true, Some(p)) if p.under => String::new(),
        (true, Some(p)) => format!(", and only under memory pressure ({})", p.words),
        (true, None) => ", and only under memory pressure, which cannot be read here".to_owned(),
    };
    let now = match c.r.idle.as_ref() {
        None => "not measured yet".to_owned(),
        Some(i) if i.state == IdleState::Measuring => "measuring".to_owned(),
        Some(i) => crate::words::idle(i),
    };
    format!("due once idle {idle}{pressure}; now {now}")
}

/// What holds every card back for a while, if anything.
fn held(g: &Gates, c: &Card) -> Option<String> {
    if let Some(p) = g.pause {
        return Some(format!(
            "rules are paused until {}: `pier auto --resume` ends the pause",
            utc_minute(p.until)
        ));
    }
    if let Some(left) = g.settling {
        return Some(format!(
            "the machine woke up: nothing is due for {} more",
            duration_seconds(left.as_secs())
        ));
    }
    if let Some(until) = c.backoff_until.filter(|&u| u > g.now) {
        return Some(format!(
            "a rule's stop did not stop it (refused, failed or outlived SIGTERM): it waits until {}",
            utc_minute(until)
        ));
    }
    if g.cap_left == 0 {
        let at = g
            .cap_frees_at
            .map_or_else(String::new, |t| format!("; the next at {}", utc_minute(t)));
        let n = g.rules.cap_per_hour;
        let stops = if n == 1 { "stop" } else { "stops" };
        return Some(format!(
            "{n} automatic {stops} in the last hour, the cap{at}"
        ));
    }
    None
}

/// What made `c` due, as history and the notification say it: "idle 42 min".
pub fn because(c: &Card) -> String {
    let idle = c.r.idle.as_ref().map_or(0, |i| i.seconds);
    format!("idle {}", duration_seconds(idle))
}

fn note(state: AutoState, rule: Option<String>, due_in: Option<u64>, why: String) -> Judged {
    Judged {
        note: AutoNote {
            state,
            rule,
            due_in_seconds: due_in,
            why,
        },
        due: None,
    }
}

/// When `r` (in `project`) was started again after a stop of the same command within the last
/// day, from `entries` (`pier history`): restarted from a snapshot (a restart's pid is its
/// root), or by hand (the same project and command, started after that stop). `None` otherwise.
pub fn started_again(
    r: &Resource,
    project: &str,
    entries: &[HistoryEntry],
    now: u64,
) -> Option<u64> {
    let started = now.saturating_sub(r.age_seconds?);
    let argv = &r.members.first()?.argv;
    let recent = |at: &str| unix(at).filter(|&t| t + STARTED_AGAIN_FOR > now);
    entries
        .iter()
        .filter(|e| e.project == project)
        .filter_map(|e| {
            let stopped = recent(&e.stopped_at)?;
            let restarted = e
                .restarts
                .iter()
                .filter(|x| x.pid == Some(r.root.pid))
                .find_map(|x| recent(&x.at));
            let by_hand = (e.root_command == *argv && started >= stopped).then_some(started);
            restarted
                .or(by_hand)
                .filter(|&t| t + STARTED_AGAIN_FOR > now)
        })
        .max()
}

/// An RFC 3339 time as seconds since the Unix epoch.
pub(crate) fn unix(at: &str) -> Option<u64> {
    let t = humantime::parse_rfc3339_weak(at).ok()?;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// One due card, as [`pick`] chooses among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The rule's index.
    pub rule: usize,
    /// Whether the rule acts only under pressure.
    pub pressure: bool,
    /// About what stopping it frees, in bytes, when read.
    pub memory: Option<u64>,
}

/// Which of the due cards to stop at this rescan (their indices in `due`), at most `cap_left`:
/// every idle rule's, oldest rule first; and under pressure one more, the largest (a card whose
/// memory is unread last). Why one at a time under pressure: the next rescan reads the pressure
/// again, and stops nothing more once it has cleared.
pub fn pick(due: &[Due], cap_left: u32) -> Vec<usize> {
    let mut chosen: Vec<usize> = (0..due.len()).filter(|&i| !due[i].pressure).collect();
    let largest = (0..due.len())
        .filter(|&i| due[i].pressure)
        .max_by_key(|&i| due[i].memory.map_or((0, 0), |m| (1, m)));
    chosen.extend(largest);
    chosen.truncate(cap_left as usize);
    chosen
}
