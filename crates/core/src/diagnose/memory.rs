//! The members' memory (docs/design.md §2.11), read once per scan for every member of every
//! resource it keeps, and added to the cards once they are judged: memory argues for no level.
//!
//! Why threads: on Linux the kernel answers `smaps_rollup` by walking the process's page
//! tables, about half a millisecond for a 25 MB interpreter and more for a large one. So the
//! reads run on threads of their own (`scan`), beside the activity sample's wait, where they
//! cost no time, and beside the judgement of the resources; and they are spread over the
//! cores. They take the processes' memory lock for reading only: the members' CPU time, which
//! the sample measures, is not touched.

use std::collections::HashMap;

use crate::model::card::Project;
use crate::probe::{Memory, Pid, Probe};

/// Pids handed to one thread at least: below that, a thread costs more than it saves.
const PER_THREAD: usize = 8;

/// Every pid's memory, or why it could not be read.
pub(crate) type Read = HashMap<Pid, Result<Memory, String>>;

/// Reads the memory of `pids`, spread over up to four threads.
pub(crate) fn read(probe: &(dyn Probe + Sync), pids: &[Pid]) -> Read {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
        .min(pids.len().div_ceil(PER_THREAD))
        .max(1);
    let part = pids.len().div_ceil(threads).max(1);
    let one = |chunk: &[Pid]| -> Vec<(Pid, Result<Memory, String>)> {
        chunk.iter().map(|&pid| (pid, probe.memory(pid))).collect()
    };
    std::thread::scope(|scope| {
        let mut chunks = pids.chunks(part);
        // This thread reads the first chunk itself: one fewer to start.
        let mine = chunks.next().unwrap_or_default();
        let others: Vec<_> = chunks.map(|c| scope.spawn(move || one(c))).collect();
        let mut out: Read = one(mine).into_iter().collect();
        for h in others {
            out.extend(h.join().expect("a memory read never panics"));
        }
        out
    })
}

/// Each member's figure from `read` (`null` where it could not be read, or was not), and each
/// resource's, its members' added up (`Memory::total`).
pub(crate) fn fill<'p>(projects: impl IntoIterator<Item = &'p mut Project>, read: Read) {
    for r in projects.into_iter().flat_map(|p| &mut p.resources) {
        for m in &mut r.members {
            m.memory = match read.get(&m.pid) {
                Some(Ok(memory)) => Some(*memory),
                Some(Err(e)) => {
                    tracing::debug!("memory of pid {}: {e}", m.pid);
                    None
                }
                None => None,
            };
        }
        r.memory = Memory::total(r.members.iter().map(|m| m.memory));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::MemoryKind;
    use crate::probe::fake::FakeProbe;

    #[test]
    fn every_pid_is_read_once_whatever_the_number_of_threads() {
        let mut probe = FakeProbe::default();
        let pids: Vec<Pid> = (100..137).collect();
        for &pid in &pids {
            let memory = Memory {
                bytes: u64::from(pid),
                kind: MemoryKind::Proportional,
            };
            probe.memory.insert(pid, Ok(memory));
        }
        for n in [0, 1, 8, 9, 37] {
            let read = read(&probe, &pids[..n]);
            assert_eq!(read.len(), n);
            assert!(read
                .iter()
                .all(|(&pid, m)| m.as_ref().unwrap().bytes == u64::from(pid)));
        }
        let unscripted = read(&probe, &[7]);
        assert!(unscripted[&7].is_err());
    }
}
