//! What the idle clock says of one resource (docs/design.md §5a): idleness measured over the
//! awake time between rescans, not in one short sample. Plain data; the clock is `crate::idle`.

use serde::{Deserialize, Serialize};

/// One resource's idle clock, as a card shows it (`"idle": {…}` in the JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Idle {
    /// Where the clock stands.
    pub state: IdleState,
    /// Awake seconds since its idle stretch began (0 unless `state` is `idle`): "idle 40 min"
    /// means nothing was served and nothing ran for 40 minutes of awake time.
    pub seconds: u64,
    /// Why the last interval was not idle, in words (`"1.8% CPU over 30 s (more than 1%)"`,
    /// `"a connection on :5173"`); `null` when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Where a resource's idle clock stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleState {
    /// Seen at one rescan only: no interval measured yet.
    Measuring,
    /// Every interval since `seconds` ago was idle.
    Idle,
    /// The last interval was not idle (`why` says what happened).
    Active,
}
