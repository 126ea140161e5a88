//! Containers' activity, from their engines' own statistics: one call per container, which
//! on Docker waits for two readings of its collector, about a second apart, and so measures
//! CPU use over that window (`control::Measured`). The scan asks for every container that
//! gets a card, all at once, beside its processes' sample; the stop's checkpoint (b) asks for
//! the one it stops.
//!
//! Disk I/O is not measured: the engine's block I/O counters come without an earlier reading
//! to compare with, so a container's activity is its CPU alone (the evidence says so).

use std::collections::HashMap;

use super::control::Measured;
use super::EngineRead;

/// Each container's activity, keyed by its full id; one that could not be measured says why.
pub type Samples = HashMap<String, Result<Measured, String>>;

/// What was used from one CPU reading to the next; `Err` when the counter went back (the
/// container was started again between them).
pub fn delta(before_ns: u64, after_ns: u64) -> Result<u64, String> {
    after_ns
        .checked_sub(before_ns)
        .ok_or_else(|| "its CPU counter went back: it was started again".to_owned())
}

/// The scan's sample: every container that gets a card (it publishes a port or runs on the
/// host's network), each engine asked over a connection of its own, its containers at once.
#[cfg(unix)]
pub fn of_reads(reads: &[EngineRead]) -> Samples {
    let mut out = Samples::new();
    for read in reads {
        let Ok(list) = &read.containers else {
            continue;
        };
        let ids: Vec<&str> = list
            .iter()
            .filter(|c| !c.ports.is_empty() || c.host_network)
            .map(|c| c.id.as_str())
            .collect();
        if ids.is_empty() {
            continue;
        }
        let measured = match super::api::Api::connect(&read.endpoint.host) {
            Ok(api) => api.activities(&ids),
            Err(why) => ids.iter().map(|_| Err(why.clone())).collect(),
        };
        out.extend(ids.iter().map(|id| (*id).to_owned()).zip(measured));
    }
    out
}

/// Without unix sockets no engine is asked, so nothing is measured.
#[cfg(not(unix))]
pub fn of_reads(_reads: &[EngineRead]) -> Samples {
    Samples::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delta_is_what_was_used_between_the_readings() {
        assert_eq!(delta(100, 350), Ok(250));
    }

    #[test]
    fn a_counter_that_went_back_is_a_new_run_not_an_idle_one() {
        assert!(delta(100, 50).unwrap_err().contains("started again"));
    }
}
