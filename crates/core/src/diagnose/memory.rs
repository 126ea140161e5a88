//! The members' memory (docs/design.md §2.11), read once per scan for every member of every
//! resource it keeps, and added to the cards once they are judged: memory argues for no level.
//!
//! Why threads: on Linux the kernel answers `smaps_rollup` by walking the process's page
//! tables, about a quarter of a millisecond for a 12 MB interpreter and more for a large one:
//! with 60 servers, more than the rest of the judgement. So the reads run on threads of their
//! own ([`Reader`]), spread over the cores, from the moment the scan knows a member: the roots
//! as the candidates are found (`find_resources`, while one core would be idle), the rest once
//! the trees are cut; then beside the activity sample's wait, where they cost no time, and
//! beside the judgement. They take the processes' memory lock for reading only: the members'
//! CPU time, which the sample measures, is not touched.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};

use crate::model::card::Project;
use crate::probe::{Memory, Pid, Probe, ProbeError};

/// Pids handed in per reading thread: a second thread starts only past this many, since below
/// it a thread costs more than it saves.
const PER_THREAD: usize = 8;

/// Every pid's memory, or why it could not be read.
pub(crate) type Read = HashMap<Pid, Result<Memory, ProbeError>>;

/// One reading thread's answers.
type Part = Vec<(Pid, Result<Memory, ProbeError>)>;

/// Reads the memory of the pids handed to [`send`](Reader::send), each once, on up to four
/// threads of `scope` started as the pids come; [`finish`](Reader::finish) waits for the last.
pub(crate) struct Reader<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    probe: &'env (dyn Probe + Sync),
    /// `None` once finished: the threads end when the queue is closed and empty.
    queue: Option<Sender<Pid>>,
    next: Arc<Mutex<Receiver<Pid>>>,
    threads: Vec<ScopedJoinHandle<'scope, Part>>,
    most_threads: usize,
    sent: HashSet<Pid>,
}

impl<'scope, 'env> Reader<'scope, 'env> {
    pub(crate) fn new(scope: &'scope Scope<'scope, 'env>, probe: &'env (dyn Probe + Sync)) -> Self {
        let (queue, next) = channel();
        Self {
            scope,
            probe,
            queue: Some(queue),
            next: Arc::new(Mutex::new(next)),
            threads: Vec::new(),
            most_threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(4),
            sent: HashSet::new(),
        }
    }

    /// Queues `pid`, unless it was queued before.
    pub(crate) fn send(&mut self, pid: Pid) {
        let Some(queue) = &self.queue else {
            return;
        };
        if !self.sent.insert(pid) {
            return;
        }
        // The threads are waiting on this queue until it closes: a send cannot fail.
        let _ = queue.send(pid);
        if self.threads.len() < threads_for(self.sent.len(), self.most_threads) {
            let (probe, next) = (self.probe, Arc::clone(&self.next));
            self.threads
                .push(self.scope.spawn(move || drain(probe, &next)));
        }
    }

    /// Every pid sent, read.
    pub(crate) fn finish(mut self) -> Read {
        self.queue = None;
        let mut out = Read::with_capacity(self.sent.len());
        for h in self.threads.drain(..) {
            out.extend(h.join().expect("a memory read never panics"));
        }
        out
    }
}

/// The threads wanted once `sent` pids were handed in: one per [`PER_THREAD`] begun, at most
/// `most`.
fn threads_for(sent: usize, most: usize) -> usize {
    sent.div_ceil(PER_THREAD).min(most)
}

/// One reading thread: the next pid of the queue until it is closed and empty.
fn drain(probe: &(dyn Probe + Sync), next: &Mutex<Receiver<Pid>>) -> Part {
    let mut out = Part::new();
    loop {
        // The lock is held only to take one pid; the read itself runs unlocked.
        let pid = next.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(pid) = pid else {
            return out;
        };
        out.push((pid, probe.memory(pid)));
    }
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

    fn read(probe: &FakeProbe, pids: &[Pid]) -> Read {
        std::thread::scope(|scope| {
            let mut reader = Reader::new(scope, probe);
            // Twice each, as a root is handed in when found and again with its tree.
            for &pid in pids.iter().chain(pids) {
                reader.send(pid);
            }
            reader.finish()
        })
    }

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

    #[test]
    fn a_thread_starts_per_eight_pids_begun_up_to_the_most() {
        assert_eq!(threads_for(0, 4), 0, "nothing to read, no thread");
        assert_eq!(threads_for(1, 4), 1);
        assert_eq!(threads_for(8, 4), 1);
        assert_eq!(threads_for(9, 4), 2);
        assert_eq!(threads_for(60, 2), 2, "no more than the cores");
        assert_eq!(threads_for(1000, 4), 4);
    }
}
