//! Whether a fresh card may be armed: an arm waits for something that can clear on its own, so
//! a card with nothing to wait for, or with a reason no arm waits out, is refused with the way
//! forward (docs/design.md §2's table, "armed stop waits").

use crate::diagnose::kinds::NOTEBOOK_KERNEL;
use crate::model::card::{Level, Resource};
use crate::model::reason::Reason;

/// What is asked to be armed: a resource's fresh card, or a container's card by its id.
#[derive(Debug, Clone, Copy)]
pub enum Armable<'a> {
    /// A resource, as a sampled scan shows it now.
    Resource(&'a Resource),
    /// A container card (`container-…`).
    Container(&'a str),
}

/// Why a card may not be armed; each sentence names the way forward.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArmRefusal {
    /// Green already: there is nothing to wait for.
    #[error("{kind} {id} is safe to stop now: `pier stop {id}` (an armed stop waits for something to clear, and nothing stands in the way)")]
    SafeNow {
        /// The resource's id.
        id: String,
        /// Its tool kind.
        kind: String,
    },
    /// A reason no armed stop waits out: it would never clear on its own.
    #[error("{id} cannot be armed: {} — {fact}; an armed stop waits only for a client, activity, a live parent or what could not be read to clear", reason.words())]
    NeverWaits {
        /// The resource's id.
        id: String,
        /// The reason.
        reason: Reason,
        /// The card's fact, with its next step (a manager's: its stop command).
        fact: String,
    },
    /// A container: its idleness is not measured.
    #[error("{id} is a container: its idleness is not measured, so it cannot be armed; stop it with `pier stop {id}` when it is green")]
    Container {
        /// The container card's id.
        id: String,
    },
    /// No card of that id in a fresh scan.
    #[error("no resource {id} now: its root process is gone or no longer a candidate (`pier scan` shows what runs)")]
    NotFound {
        /// The id asked.
        id: String,
    },
    /// A `:PORT` that no card, or more than one, listens on.
    #[error(":{port}: {held}; arm a resource by the id `pier scan :{port}` shows")]
    Port {
        /// The port asked.
        port: u16,
        /// What holds it, in words.
        held: String,
    },
    /// A live notebook kernel, not confirmed.
    #[error("{id} holds a live notebook kernel: stopping it loses the kernel's state (its variables, what it loaded), which a restart cannot bring back; to arm it anyway, confirm with --yes")]
    KernelState {
        /// The resource's id.
        id: String,
    },
}

/// Whether `card` may be armed. Why this order: a container is never measured; a reason no arm
/// waits out would keep it waiting until it expires; a green card needs no arm; and a kernel's
/// state is lost whatever the stop, so the person confirms that last (`kernel_state_lost`).
pub fn may_arm(card: Armable<'_>, kernel_state_lost: bool) -> Result<(), ArmRefusal> {
    let r = match card {
        Armable::Container(id) => return Err(ArmRefusal::Container { id: id.to_owned() }),
        Armable::Resource(r) => r,
    };
    if let Some((reason, fact)) = never_waited(r) {
        return Err(ArmRefusal::NeverWaits {
            id: r.id.clone(),
            reason,
            fact,
        });
    }
    if r.level == Level::Green && r.reasons.is_empty() {
        return Err(ArmRefusal::SafeNow {
            id: r.id.clone(),
            kind: r.kind.clone(),
        });
    }
    if holds_kernel(r) && !kernel_state_lost {
        return Err(ArmRefusal::KernelState { id: r.id.clone() });
    }
    Ok(())
}

/// The first reason on the card an armed stop never waits for, with its fact in the card's
/// words; a manager's names its stop command, which is the way to stop it.
pub(super) fn never_waited(r: &Resource) -> Option<(Reason, String)> {
    let reason = *r.reasons.iter().find(|x| !x.armed_waits())?;
    let manager = r.managed_by.as_ref().filter(|_| reason == Reason::Managed);
    let fact = match manager.and_then(|m| m.stop_command.as_ref().map(|c| (m, c))) {
        Some((m, command)) => format!("run by {}: stop it there with `{command}`", m.manager),
        None => facts(r, reason),
    };
    Some((reason, fact))
}

/// The card's evidence for `reason`, joined: each message already names its next step.
pub(super) fn facts(r: &Resource, reason: Reason) -> String {
    let each: Vec<&str> = r
        .evidence
        .iter()
        .filter(|e| Reason::of(e) == Some(reason))
        .map(|e| e.message.as_str())
        .collect();
    match each.is_empty() {
        true => reason.words().to_owned(),
        false => each.join("; "),
    }
}

/// A live notebook kernel among its listeners: its state dies with it.
pub fn holds_kernel(r: &Resource) -> bool {
    r.ports
        .iter()
        .any(|p| p.helper.as_deref() == Some(NOTEBOOK_KERNEL))
}
