//! An armed stop ("stop when safe", docs/design.md §5a): the record that asks Pier to run the
//! whole stop chain on one resource the moment its card is green and has stayed green for a
//! settle, within an expiry. Plain data; what judges and fires it is `crate::auto`.

use serde::{Deserialize, Serialize};

use super::reason::Reason;
use super::{Identity, RequestedBy};

/// The schema this build writes for an arm record.
pub const ARM_SCHEMA: u32 = 1;

/// One armed stop, kept as the record `arm-<root pid>-<root start time>` in the state folder:
/// it survives an app restart, and is dropped when its resource's identity changes, the
/// machine reboots, or it expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    /// [`ARM_SCHEMA`].
    pub schema: u32,
    /// The resource's id, `<root pid>-<root start time>`.
    pub id: String,
    /// The resource's root: the arm speaks for this identity only.
    pub root: Identity,
    /// The boot the identity belongs to; another boot drops the arm.
    pub boot_id: Option<String>,
    /// The project folder the card was in, which names it to a person.
    pub project: String,
    /// The tool kind the card showed (`"vite"`).
    pub kind: String,
    /// The reasons the card showed against a stop when it was armed: what it waits out.
    pub reasons: Vec<Reason>,
    /// When it was armed (seconds since the Unix epoch).
    pub armed_at: u64,
    /// When it lapses unfired (seconds since the Unix epoch).
    pub expires_at: u64,
    /// Who armed it: a person at the CLI or in the app.
    pub armed_by: RequestedBy,
    /// The person was told that a live notebook kernel's state is lost, and armed it anyway.
    #[serde(default)]
    pub kernel_state_lost: bool,
    /// The root's executable when it was armed: the start time survives an exec, so another
    /// program in the same process is another resource (docs/design.md §1).
    #[serde(default)]
    pub exe: Option<String>,
}

/// An arm as a card shows it (`"armed": {…}` in the JSON): when it lapses, and what it waits
/// for now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Armed {
    /// When it lapses unfired (seconds since the Unix epoch).
    pub expires_at: u64,
    /// What it waits for, in words (`"the client on :5173 (firefox) to leave"`, `"green for
    /// 60 s more"`); empty when it fires at the next rescan.
    pub waiting_for: Vec<String>,
}
