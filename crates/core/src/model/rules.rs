//! The user's automatic-stop rules (docs/design.md §5a) and what they say of one card. Plain
//! data; the file they are read from and the judge are `crate::auto::rules`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The rules as the file says them, checked: off unless a rule is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rules {
    /// The most automatic stops in any hour; a stop past it waits.
    pub cap_per_hour: u32,
    /// How long a resource waits after a rule's stop that did not stop it, in seconds.
    pub backoff_seconds: u64,
    /// The rules, in the file's order.
    pub rules: Vec<Rule>,
}

/// One rule: stop green resources idle on the clock for at least `idle_seconds`, among those
/// its filters name (every filter that is given must match).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Its name, as history and notifications say it ("idle 30 min").
    pub name: String,
    /// Awake seconds of idleness on the clock before it is due.
    pub idle_seconds: u64,
    /// Only under memory pressure, the largest first, until the pressure clears.
    pub pressure: bool,
    /// Only projects under these folders (absolute); empty: any.
    pub under: Vec<PathBuf>,
    /// Only these tool kinds (`"vite"`); empty: any.
    pub kinds: Vec<String>,
    /// Only resources listening on one of these ports; empty: any.
    pub ports: Vec<u16>,
}

/// The rules as a scheduler judges by them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RulesState {
    /// No rules file, or one with no rule: Pier stops nothing on its own (the default).
    Off,
    /// The rules to judge by.
    On(Rules),
    /// The file is there and could not be read or is not valid: rules off, and every card says
    /// so, with this sentence (it names the file and what is wrong).
    Unreadable(String),
}

/// What the rules say of one card, where a scheduler judged them (`"auto": {…}` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoNote {
    /// Due now, due later, or never and why.
    pub state: AutoState,
    /// The rule that would stop it; `null` when none applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Awake seconds until it is due, when it will be if nothing changes; `null` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_in_seconds: Option<u64>,
    /// Why not now, in words, with the way forward where there is one.
    pub why: String,
}

/// Where a card stands with the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoState {
    /// A rule stops it at this rescan.
    Due,
    /// A rule will stop it once it has been idle long enough (`due_in_seconds`).
    Waiting,
    /// No rule stops it now, for the reason `why` gives (off, paused, capped, backed off…).
    Held,
    /// No rule ever stops it as it is (not green, protected, a notebook kernel, no rule
    /// matches, started again today).
    Never,
}

/// The pause `pier auto --pause` sets: no rule acts until then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    /// Until when (seconds since the Unix epoch).
    pub until: u64,
    /// As the person asked it ("for 1 hour", "until tomorrow").
    pub asked: String,
}

/// Whether the machine's memory is under pressure, as the OS says it (Linux PSI, macOS's
/// memory pressure level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPressure {
    /// Under pressure: a pressure rule may act.
    pub under: bool,
    /// The reading, in words ("12% of the last 10 s stalled on memory").
    pub words: String,
}
