//! One reading of the process table shared by several consumers that run back to back: the
//! app's scan and the snapshot history judged right after it. The history's "restartable now?"
//! is advice (a restart re-checks everything when clicked), so a table read half a second
//! earlier serves it; nothing that acts ever sees a reused identity.

use std::cell::OnceCell;
use std::time::Duration;

use super::{
    ActivitySample, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessList, SocketTable,
    Survey, WantsArgv,
};

/// `inner`, except that `processes()` is read once and then answered from memory. A failed
/// read is not kept: the next caller reads again.
pub struct OnceTable<'p> {
    inner: &'p dyn Probe,
    table: OnceCell<ProcessList>,
}

impl<'p> OnceTable<'p> {
    /// Wraps `inner`; the table is read at the first `processes()` call, not now.
    pub fn new(inner: &'p dyn Probe) -> Self {
        Self {
            inner,
            table: OnceCell::new(),
        }
    }
}

impl Probe for OnceTable<'_> {
    fn current_uid(&self) -> u32 {
        self.inner.current_uid()
    }
    fn own_pid(&self) -> Pid {
        self.inner.own_pid()
    }
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        if let Some(table) = self.table.get() {
            return Ok(table.clone());
        }
        let table = self.inner.processes()?;
        Ok(self.table.get_or_init(|| table).clone())
    }
    /// A survey always reads afresh (its owners must match its tables); its process table is
    /// then the one later `processes()` calls answer with — argv left unread included, so
    /// the history's advice does not count such a process as a twin.
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let survey = self.inner.survey(wants_argv)?;
        let _ = self.table.set(survey.processes.clone());
        Ok(survey)
    }
    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.inner.details(pid)
    }
    fn children(
        &self,
        parents: &[super::Identity],
    ) -> Result<Vec<(super::Identity, super::ProcessInfo)>, ProbeError> {
        self.inner.children(parents)
    }
    fn argv(&self, identity: super::Identity) -> Option<Vec<Vec<u8>>> {
        self.inner.argv(identity)
    }
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, String> {
        self.inner.environment(pid)
    }
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        self.inner.sockets(owners_among)
    }
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        self.inner.activity(pids, window)
    }
    fn identity(&self, pid: Pid) -> IdentityRead {
        self.inner.identity(pid)
    }
    fn now(&self) -> Duration {
        self.inner.now()
    }
    fn boot_id(&self) -> Option<String> {
        self.inner.boot_id()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::probe::fake::{process, FakeProbe};

    /// A fake that counts its process-table reads and fails the first one when told to.
    struct Counting {
        fake: FakeProbe,
        reads: Cell<usize>,
        fail_first: bool,
    }

    impl Probe for Counting {
        fn current_uid(&self) -> u32 {
            self.fake.current_uid()
        }
        fn own_pid(&self) -> Pid {
            self.fake.own_pid()
        }
        fn processes(&self) -> Result<ProcessList, ProbeError> {
            self.reads.set(self.reads.get() + 1);
            if self.fail_first && self.reads.get() == 1 {
                return Err(ProbeError::Unsupported);
            }
            self.fake.processes()
        }
        fn details(&self, pid: Pid) -> Option<ProcessDetails> {
            self.fake.details(pid)
        }
        fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, String> {
            self.fake.environment(pid)
        }
        fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
            self.fake.sockets(owners_among)
        }
        fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
            self.fake.activity(pids, window)
        }
        fn identity(&self, pid: Pid) -> IdentityRead {
            self.fake.identity(pid)
        }
        fn now(&self) -> Duration {
            self.fake.now()
        }
        fn boot_id(&self) -> Option<String> {
            self.fake.boot_id()
        }
    }

    fn counting(fail_first: bool) -> Counting {
        Counting {
            fake: FakeProbe::default().with(process(10, 1, &["vite"]), "/w/app"),
            reads: Cell::new(0),
            fail_first,
        }
    }

    #[test]
    fn the_table_is_read_once_for_every_consumer() {
        let probe = counting(false);
        let once = OnceTable::new(&probe);
        let first = once.processes().unwrap();
        assert_eq!(once.processes().unwrap(), first);
        assert_eq!(probe.reads.get(), 1);
    }

    #[test]
    fn a_failed_read_is_not_kept() {
        let probe = counting(true);
        let once = OnceTable::new(&probe);
        assert!(once.processes().is_err());
        let again = once.processes().expect("read again");
        assert!(again.processes.iter().any(|p| p.identity.pid == 10));
        assert_eq!(probe.reads.get(), 2);
    }
}
