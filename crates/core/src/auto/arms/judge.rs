//! The judge of an armed stop at each rescan, as pure functions of what the tick saw: fire,
//! wait (what for, in words a card shows), or drop (why, typed). Fire only when nothing is
//! left to wait for; every fact that cannot be read keeps it waiting, never fires it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::refuse::{facts, never_waited};
use crate::model::arm::{Arm, Armed};
use crate::model::card::{Level, Resource};
use crate::model::idle::{Idle, IdleState};
use crate::model::outcome::{Checkpoint, ResourceResult, StopReport};
use crate::model::reason::Reason;
use crate::probe::IdentityRead;
use crate::words;

/// What one rescan saw of an armed resource.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Now, on the wall clock (the arm's times are seconds since the Unix epoch).
    pub now: SystemTime,
    /// This boot's id, when it could be read.
    pub boot_id: Option<&'a str>,
    /// Its fresh card, when the resource is still in the scan (by id). Its own level decides:
    /// the chain stops one resource, whatever else its project holds.
    pub card: Option<&'a Resource>,
    /// A fresh identity read of the arm's root pid, when the card is not in the scan.
    pub identity: Option<&'a IdentityRead>,
    /// Its idle clock.
    pub idle: Option<&'a Idle>,
    /// How long it has been green without a break (the tick tracks it); `None`: not green.
    pub green_for: Option<Duration>,
    /// How long it must stay green before it fires.
    pub settle: Duration,
    /// What is left of the settle after a wake, while the machine settles.
    pub wake_left: Option<Duration>,
}

/// What the tick does with an arm at this rescan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run the whole chain now, as `RequestedBy::Armed`.
    Fire,
    /// Keep waiting, for these (in words: `Armed::waiting_for`).
    Wait(Vec<String>),
    /// Remove the arm, for this reason.
    Drop(Dropped),
}

/// Why an arm is dropped unfired; one sentence each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Dropped {
    /// Another boot (or no boot recorded on a machine that has one): its ids mean nothing now.
    #[error("the machine restarted since it was armed, so the process it named is gone")]
    Rebooted,
    /// Its expiry passed.
    #[error(
        "it lapsed unfired: no app or `pier watch` found it safe in time (arm it again with a \
         longer --within, and keep one running)"
    )]
    Expired,
    /// Its root is gone.
    #[error("it ended on its own")]
    Ended,
    /// Its root's pid runs another process or program now.
    #[error("pid {pid} runs another process or program now: the armed one ended")]
    IdentityChanged {
        /// The root's pid.
        pid: u32,
    },
    /// A reason an armed stop never waits for is on the card now.
    #[error("{} now ({fact}): an armed stop never waits for that", reason.words())]
    NeverWaits {
        /// The reason.
        reason: Reason,
        /// The card's fact, with its next step.
        fact: String,
    },
    /// The fired stop was refused, or failed, for what no arm waits out.
    #[error("the armed stop did not stop it: {0}")]
    Refused(String),
}

/// What becomes of an arm once its stop ran ([`after_stop`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterFire {
    /// Signals went out: the arm did its work; remove it.
    Fired,
    /// Refused for what an armed stop waits out (a client came back between the tick and the
    /// checkpoints): keep it.
    KeepWaiting,
    /// Refused or failed for anything else: remove it, saying why.
    Drop(Dropped),
}

/// The verdict on `arm` from what a rescan `seen`. Why this order: an arm that can never fire
/// again (another boot, expired, gone, another process, a reason it never waits for) goes
/// first; then everything it still waits for is named, so the card says all of it at once.
pub fn judge(arm: &Arm, seen: &Seen) -> Verdict {
    if let Some(dropped) = dropped(arm, seen) {
        return Verdict::Drop(dropped);
    }
    let mut waits = Vec::new();
    if arm.boot_id.is_some() && seen.boot_id.is_none() {
        // Fail closed: the same boot cannot be shown.
        waits.push("this boot's id to be readable".to_owned());
    }
    match seen.card {
        Some(r) => waits.extend(card_waits(r, seen)),
        None => waits.push(absent_wait(seen.identity)),
    }
    match waits.is_empty() {
        true => Verdict::Fire,
        false => Verdict::Wait(waits),
    }
}

/// Why `arm` can never fire again, if it cannot.
fn dropped(arm: &Arm, seen: &Seen) -> Option<Dropped> {
    if rebooted(arm.boot_id.as_deref(), seen.boot_id) {
        return Some(Dropped::Rebooted);
    }
    if secs(seen.now) >= arm.expires_at {
        return Some(Dropped::Expired);
    }
    let Some(r) = seen.card else {
        return match seen.identity {
            Some(IdentityRead::Gone) => Some(Dropped::Ended),
            Some(IdentityRead::Alive { identity, .. }) if *identity != arm.root => {
                Some(Dropped::IdentityChanged { pid: arm.root.pid })
            }
            _ => None,
        };
    };
    if r.root != arm.root || execed(arm, r) {
        return Some(Dropped::IdentityChanged { pid: arm.root.pid });
    }
    never_waited(r).map(|(reason, fact)| Dropped::NeverWaits { reason, fact })
}

/// Whether the root runs another program than when it was armed: an exec keeps the pid and
/// start time, so only the executable tells (docs/design.md §1). Unread on either side is not
/// a change; the chain's own checks judge the process again.
fn execed(arm: &Arm, r: &Resource) -> bool {
    let now = r.members.iter().find(|m| m.identity() == arm.root);
    match (&arm.exe, now.and_then(|m| m.exe.as_ref())) {
        (Some(was), Some(now)) => was != now,
        _ => false,
    }
}

/// Whether this is another boot than the arm's. Why an arm with no boot id is dropped on a
/// machine that has one: nothing shows its ids are this boot's.
fn rebooted(armed: Option<&str>, now: Option<&str>) -> bool {
    match (armed, now) {
        (Some(a), Some(b)) => a != b,
        (None, Some(_)) => true,
        _ => false,
    }
}

/// Seconds since the Unix epoch (0 before it: a clock that wrong expires nothing early).
fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What an arm whose card is not in the scan waits for, its root still there or unread.
fn absent_wait(identity: Option<&IdentityRead>) -> String {
    match identity {
        Some(IdentityRead::Unknown(why)) => format!("its root's identity to be readable ({why})"),
        Some(_) => "its card to show again (its root runs, but no scan finds it)".to_owned(),
        None => "a fresh read of its root".to_owned(),
    }
}

/// What a present card still waits for: its reasons to clear, a quiet interval, the settle
/// green, the settle after a wake.
fn card_waits(r: &Resource, seen: &Seen) -> Vec<String> {
    let mut waits = waiting_for(r);
    let green = r.level == Level::Green && r.reasons.is_empty();
    if r.level != Level::Green && r.reasons.is_empty() {
        waits.push("its card to be green".to_owned());
    }
    // A green card the scheduler has not counted green: busy over its last interval, or not
    // yet measured over one (a rescan without a sample has only its clock to tell).
    if green && seen.green_for.is_none() {
        waits.push(idle_wait(seen.idle));
    }
    let left = seen
        .settle
        .saturating_sub(seen.green_for.unwrap_or_default());
    if green && !left.is_zero() {
        waits.push(format!("green for {} s more", ceil_secs(left)));
    }
    if let Some(left) = seen.wake_left.filter(|d| !d.is_zero()) {
        let min = ceil_secs(left).div_ceil(60);
        waits.push(format!("the settle after wake ({min} min left)"));
    }
    waits
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// What a card's reasons wait for, in words (what `pier stop --when-safe` says it waits for).
pub fn waiting_for(r: &Resource) -> Vec<String> {
    r.reasons.iter().map(|&x| reason_wait(r, x)).collect()
}

/// The quiet interval a green card waits for, with the clock's words on the last one.
fn idle_wait(idle: Option<&Idle>) -> String {
    match idle {
        Some(Idle {
            state: IdleState::Active,
            why: Some(why),
            ..
        }) => format!("a quiet interval ({why})"),
        Some(Idle {
            state: IdleState::Active,
            ..
        }) => "a quiet interval (the last was not quiet)".to_owned(),
        Some(_) => "a quiet interval (the idle clock is measuring)".to_owned(),
        None => "a quiet interval (the idle clock has not measured one)".to_owned(),
    }
}

/// What one reason on the card waits for, in words: who to leave, what to stop, what to exit.
fn reason_wait(r: &Resource, reason: Reason) -> String {
    match reason {
        Reason::LiveConnection => clients_wait(r),
        Reason::Busy => format!("its activity to stop ({})", facts(r, reason)),
        Reason::NotOrphaned => match &r.parent {
            Some(p) => {
                let place = words::parent_place(p);
                let place = match place.is_empty() {
                    true => String::new(),
                    false => format!(" {place}"),
                };
                format!("its parent {} (pid {}){place} to exit", p.program, p.pid)
            }
            None => format!("its parent to exit ({})", facts(r, reason)),
        },
        _ => format!(
            "what could not be read to be readable ({})",
            facts(r, reason)
        ),
    }
}

/// "the client on :5173 (firefox) to leave", one per port and program; the card's fact when no
/// connection names a port (clients not yet accepted).
fn clients_wait(r: &Resource) -> String {
    let mut each: Vec<String> = Vec::new();
    for c in r.connections.iter().filter(|c| !c.internal) {
        let port = c.local.rsplit_once(':').map_or("?", |(_, p)| p);
        let line = match &c.client {
            Some(client) => format!("the client on :{port} ({}) to leave", client.program),
            None => format!("the client on :{port} to leave"),
        };
        if !each.contains(&line) {
            each.push(line);
        }
    }
    match each.is_empty() {
        true => format!(
            "its clients to leave ({})",
            facts(r, Reason::LiveConnection)
        ),
        false => each.join(", "),
    }
}

/// The arm as its card shows it: when it lapses, and what it waits for now (a drop's sentence,
/// the one time it is shown; nothing when it fires).
pub fn armed_view(arm: &Arm, verdict: &Verdict) -> Armed {
    Armed {
        expires_at: arm.expires_at,
        waiting_for: match verdict {
            Verdict::Fire => Vec::new(),
            Verdict::Wait(waits) => waits.clone(),
            Verdict::Drop(d) => vec![d.to_string()],
        },
    }
}

/// What a fired stop's report means for its arm. Why a refusal for a client, activity, a
/// parent or an unread fact keeps it: the arm was set to wait for exactly those, and one came
/// back between the tick and the checkpoints. The deadline and an interruption are the
/// machine's, not the resource's: it waits too. Anything else ends it, with the stop's words.
pub fn after_stop(report: &StopReport) -> AfterFire {
    match report.result {
        ResourceResult::Stopped
        | ResourceResult::PartiallyStopped
        | ResourceResult::NotStopped
        | ResourceResult::WouldStop => AfterFire::Fired,
        ResourceResult::Refused if refused_for_a_wait(report) => AfterFire::KeepWaiting,
        ResourceResult::Refused | ResourceResult::Failed => {
            AfterFire::Drop(Dropped::Refused(report.reason.clone()))
        }
    }
}

/// Whether a refusal is for what an armed stop waits out.
fn refused_for_a_wait(report: &StopReport) -> bool {
    let fresh_waits = report
        .fresh
        .as_ref()
        .is_some_and(|f| !f.reasons.is_empty() && f.reasons.iter().all(|r| r.armed_waits()));
    report.refused_for.is_some_and(Reason::armed_waits)
        || fresh_waits
        || report.checkpoint == Some(Checkpoint::Deadline)
        || report.interrupted.is_some()
}
