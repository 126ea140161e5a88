//! The deadline of a stop's first signal (docs/design.md §3): the driver's (`batch.rs`), asked by
//! each kind of target right before it sends.

use std::time::Duration;

/// At most `limit` from check (a), at `t0` on the probe's monotonic clock, to the first signal.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadline {
    pub(super) t0: Duration,
    pub(super) limit: Duration,
}

impl Deadline {
    /// How long since check (a), at `now`.
    pub(super) fn since(&self, now: Duration) -> Duration {
        now.saturating_sub(self.t0)
    }

    /// How long it took, when that is more than the limit: then no first signal may go out.
    pub(super) fn passed(&self, now: Duration) -> Option<Duration> {
        let took = self.since(now);
        (took > self.limit).then_some(took)
    }
}
