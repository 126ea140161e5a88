//! Containers' activity: their CPU time, as their engines' statistics report it.
//!
//! - The scan reads it from where the engine reads it, the container's cgroup counter on the
//!   host (`probe::cgroup_cpu_ns`), at the start and the end of the scan's own window, beside
//!   its processes' sample; where the host cannot read it (an engine in a VM, a cgroup that
//!   cannot be found), it asks the engine's statistics, all containers at once: one call each,
//!   which on Docker waits for two readings of its collector, a second apart (1 to 2 s).
//! - The stop's checkpoint (b) asks the engine (`stop/container.rs`).
//!
//! Disk I/O is not measured: the engine's block I/O counters come without an earlier reading
//! to compare with, so a container's activity is its CPU alone (the evidence says so).

use std::collections::HashMap;
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

use super::control::{delta, Measured};
use super::{EngineRead, Unmeasured};

/// Each container's activity, keyed by its full id; one that could not be measured says why.
pub type Samples = HashMap<String, Result<Measured, Unmeasured>>;

/// The scan's sample over `window`: every container that gets a card (it publishes a port or
/// runs on the host's network) by its cgroup counter on the host where it can be read, the
/// rest by their engines' statistics (each engine over a connection of its own, its
/// containers at once), side by side.
#[cfg(unix)]
pub fn of_reads(reads: &[EngineRead], window: Duration) -> Samples {
    let carded = |c: &&super::ContainerFacts| !c.ports.is_empty() || c.host_network;
    let mut on_host = Vec::new();
    let mut by_engine: Vec<(&str, Vec<&str>)> = Vec::new();
    for read in reads {
        let Ok(list) = &read.containers else {
            continue;
        };
        let mut ids = Vec::new();
        for c in list.iter().filter(carded) {
            match c
                .pid
                .and_then(|pid| host_counter(pid, &c.id).ok().map(|read| (pid, read)))
            {
                Some((pid, read)) => on_host.push((c.id.as_str(), pid, read, Instant::now())),
                None => ids.push(c.id.as_str()),
            }
        }
        if !ids.is_empty() {
            by_engine.push((read.endpoint.host.as_str(), ids));
        }
    }
    std::thread::scope(|scope| {
        let asked = scope.spawn(|| {
            let mut out = Samples::new();
            for (host, ids) in &by_engine {
                let measured = match super::api::Api::connect(host) {
                    Ok(api) => api.activities(ids),
                    Err(why) => ids.iter().map(|_| Err(why.clone().into())).collect(),
                };
                out.extend(ids.iter().map(|id| (*id).to_owned()).zip(measured));
            }
            out
        });
        let mut out = Samples::new();
        if let Some(&(.., started)) = on_host.first() {
            // The window itself: what is measured is what the containers do during it.
            std::thread::sleep(window.saturating_sub(started.elapsed()));
        }
        for (id, pid, before, at) in on_host {
            let measured = host_counter(pid, id).and_then(|after| {
                if after.start_time != before.start_time {
                    return Err(Unmeasured::FirstProcessChanged { pid });
                }
                Ok(Measured {
                    cpu_ns: delta(before.cpu_ns, after.cpu_ns)?,
                    window: at.elapsed(),
                    by: ON_HOST,
                })
            });
            out.insert(id.to_owned(), measured);
        }
        out.extend(asked.join().expect("an engine's statistics never panic"));
        out
    })
}

/// Where a measurement read on the host comes from, in the evidence's words.
pub const ON_HOST: &str = "its cgroup on the host";

/// Container `id`'s CPU counter on the host, read through its first process `pid`, which
/// must be its own (its cgroup names it) before and after the read.
#[cfg(unix)]
fn host_counter(pid: u32, id: &str) -> Result<crate::probe::CgroupCpu, Unmeasured> {
    let is_its = |cgroup: &str| super::processes::container_of_cgroup(cgroup) == Some(id);
    crate::probe::cgroup_cpu_ns(pid, &is_its).map_err(Unmeasured::HostCounter)
}

/// Without unix sockets no engine is asked, so nothing is measured.
#[cfg(not(unix))]
pub fn of_reads(_reads: &[EngineRead], _window: Duration) -> Samples {
    Samples::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_an_activity_was_not_measured_reads_as_a_sentence() {
        assert_eq!(
            Unmeasured::CounterWentBack.to_string(),
            "its CPU counter went back: it was started again"
        );
        assert_eq!(
            Unmeasured::NoTwoReadings.to_string(),
            "the engine's statistics hold no two CPU readings"
        );
        assert_eq!(
            Unmeasured::FirstProcessChanged { pid: 7 }.to_string(),
            "its first process (pid 7) changed during the sample"
        );
    }
}
