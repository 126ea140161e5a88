//! Reads of the process table shared by several consumers.
//!
//! [`OnceTable`]: one reading for consumers that run back to back: the app's scan and the
//! snapshot history judged right after it. The history's "restartable now?" is advice (a
//! restart re-checks everything when clicked), so a table read half a second earlier serves
//! it; nothing that acts ever sees a reused identity.
//!
//! [`Coalesced`]: one reading for consumers that run at the same time — the looks for newcomers
//! of a batch's resources, each on its own thread (`stop/batch.rs`). A call is answered only by
//! a read that *began after it was asked*, never by an older one still in flight, so every
//! answer is as fresh as the caller's own read would have been; calls that wait for the same
//! next read share it.

use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::{
    ActivitySample, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessList, SocketTable,
    Survey, WantsArgv,
};

/// Every `Probe` method but `processes`, `survey` and `survey_own`, answered by `self.$to`.
macro_rules! forward_the_rest {
    ($to:ident) => {
        fn current_uid(&self) -> u32 {
            self.$to.current_uid()
        }
        fn own_pid(&self) -> Pid {
            self.$to.own_pid()
        }
        fn details(&self, pid: Pid) -> Option<ProcessDetails> {
            self.$to.details(pid)
        }
        fn children(
            &self,
            parents: &[crate::probe::Identity],
        ) -> Result<Vec<(crate::probe::Identity, crate::probe::ProcessInfo)>, ProbeError> {
            self.$to.children(parents)
        }
        fn argv(&self, identity: crate::probe::Identity) -> Option<Vec<Vec<u8>>> {
            self.$to.argv(identity)
        }
        fn rows(&self, pids: &[Pid]) -> ProcessList {
            self.$to.rows(pids)
        }
        fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
            self.$to.environment(pid)
        }
        fn environment_head(&self, pid: Pid, max: usize) -> Result<Vec<Vec<u8>>, ProbeError> {
            self.$to.environment_head(pid, max)
        }
        fn listening_ports(&self) -> Result<Vec<u16>, ProbeError> {
            self.$to.listening_ports()
        }
        fn tmux_pane(
            &self,
            q: &$crate::probe::tmux::TmuxQuery,
        ) -> Option<$crate::probe::tmux::PaneName> {
            self.$to.tmux_pane(q)
        }
        fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
            self.$to.sockets(owners_among)
        }
        fn memory(&self, pid: Pid) -> Result<crate::probe::Memory, ProbeError> {
            self.$to.memory(pid)
        }
        fn writes(&self, pid: Pid) -> Result<Vec<crate::probe::Written>, ProbeError> {
            self.$to.writes(pid)
        }
        fn writes_of(
            &self,
            identity: crate::probe::Identity,
        ) -> Result<Vec<crate::probe::Written>, ProbeError> {
            self.$to.writes_of(identity)
        }
        fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
            self.$to.activity(pids, window)
        }
        fn identity(&self, pid: Pid) -> IdentityRead {
            self.$to.identity(pid)
        }
        fn now(&self) -> Duration {
            self.$to.now()
        }
        fn boot_id(&self) -> Option<String> {
            self.$to.boot_id()
        }
        fn counters(
            &self,
            members: &[crate::probe::Identity],
        ) -> Vec<(
            crate::probe::Identity,
            Result<crate::probe::Cumulative, ProbeError>,
        )> {
            self.$to.counters(members)
        }
        fn times(&self) -> crate::probe::Times {
            self.$to.times()
        }
        fn ended_connections(&self) -> Result<Vec<crate::probe::Ended>, ProbeError> {
            self.$to.ended_connections()
        }
        fn memory_pressure(&self) -> Result<crate::model::rules::MemoryPressure, ProbeError> {
            self.$to.memory_pressure()
        }
    };
}

/// `inner`, except that `processes()` is read once and then answered from memory. A failed
/// read is not kept: the next caller reads again.
pub struct OnceTable<'p> {
    inner: &'p (dyn Probe + Sync),
    table: OnceLock<ProcessList>,
}

impl<'p> OnceTable<'p> {
    /// Wraps `inner`; the table is read at the first `processes()` call, not now.
    pub fn new(inner: &'p (dyn Probe + Sync)) -> Self {
        Self {
            inner,
            table: OnceLock::new(),
        }
    }
}

impl Probe for OnceTable<'_> {
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
    /// The same for a survey of the user's own: the table kept holds the user's rows only
    /// (the rest sighted), which is all the history looks at (a twin is a process of the
    /// user's). A consumer that needs everyone's rows must not share this table.
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let survey = self.inner.survey_own(wants_argv)?;
        let _ = self.table.set(survey.processes.clone());
        Ok(survey)
    }
    forward_the_rest!(inner);
}

/// `inner`, except that concurrent `processes()` calls share reads: each waits for the next read
/// to begin after it was asked, and every call waiting for that read gets its answer.
pub struct Coalesced<'p> {
    inner: &'p (dyn Probe + Sync),
    state: Mutex<Reads>,
    read: Condvar,
}

/// The reads so far: how many began and ended, whether one is in flight, and the last answer.
#[derive(Default)]
struct Reads {
    /// Calls inside `processes()` now (for the tests).
    callers: usize,
    begun: u64,
    ended: u64,
    reading: bool,
    last: Option<Arc<Result<ProcessList, ProbeError>>>,
}

impl<'p> Coalesced<'p> {
    /// How many calls are inside `processes()` now.
    #[cfg(test)]
    fn callers(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .callers
    }

    /// Wraps `inner`.
    pub fn new(inner: &'p (dyn Probe + Sync)) -> Self {
        Self {
            inner,
            state: Mutex::new(Reads::default()),
            read: Condvar::new(),
        }
    }
}

impl Probe for Coalesced<'_> {
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        let lock = || self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut reads = lock();
        reads.callers += 1;
        // The first read to begin from now on is the oldest that may answer this call.
        let wanted = reads.begun + 1;
        let answer = loop {
            if reads.ended >= wanted {
                break reads.last.clone().expect("an ended read left its answer");
            }
            if reads.reading {
                reads = self
                    .read
                    .wait(reads)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            reads.reading = true;
            reads.begun += 1;
            let number = reads.begun;
            drop(reads);
            // A read that panics still ends, with an error for the calls waiting on it (they
            // would wait for ever), and its own caller gets the panic.
            let read =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.inner.processes()));
            let (answer, panic) = match read {
                Ok(answer) => (answer, None),
                Err(panic) => {
                    let why = crate::words::of_panic(panic.as_ref());
                    (Err(ProbeError::Panicked(why)), Some(panic))
                }
            };
            reads = lock();
            reads.last = Some(Arc::new(answer));
            reads.ended = number;
            reads.reading = false;
            self.read.notify_all();
            if let Some(panic) = panic {
                reads.callers -= 1;
                drop(reads);
                std::panic::resume_unwind(panic);
            }
        };
        reads.callers -= 1;
        drop(reads);
        match &*answer {
            Ok(list) => Ok(list.clone()),
            Err(why) => Err(why.clone()),
        }
    }
    /// A survey reads its tables and processes together, afresh.
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.inner.survey(wants_argv)
    }
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.inner.survey_own(wants_argv)
    }
    forward_the_rest!(inner);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::probe::fake::{process, FakeProbe};

    /// A fake that counts its process-table reads and fails the first one when told to.
    struct Counting {
        fake: FakeProbe,
        reads: AtomicUsize,
        fail_first: bool,
    }

    impl Probe for Counting {
        fn processes(&self) -> Result<ProcessList, ProbeError> {
            let read = self.reads.fetch_add(1, Ordering::Relaxed) + 1;
            if self.fail_first && read == 1 {
                return Err(ProbeError::Unsupported);
            }
            self.fake.processes()
        }
        forward_the_rest!(fake);
    }

    fn counting(fail_first: bool) -> Counting {
        Counting {
            fake: FakeProbe::default().with(process(10, 1, &["vite"]), "/w/app"),
            reads: AtomicUsize::new(0),
            fail_first,
        }
    }

    #[test]
    fn the_table_is_read_once_for_every_consumer() {
        let probe = counting(false);
        let once = OnceTable::new(&probe);
        let first = once.processes().unwrap();
        assert_eq!(once.processes().unwrap(), first);
        assert_eq!(probe.reads.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_failed_read_is_not_kept() {
        let probe = counting(true);
        let once = OnceTable::new(&probe);
        assert!(once.processes().is_err());
        let again = once.processes().expect("read again");
        assert!(again.processes.iter().any(|p| p.identity.pid == 10));
        assert_eq!(probe.reads.load(Ordering::Relaxed), 2);
    }

    /// A fake whose `n`-th table read holds `n` processes and waits until the test allows it.
    struct Gated {
        fake: FakeProbe,
        begun: std::sync::atomic::AtomicUsize,
        allowed: Mutex<usize>,
        moved: Condvar,
    }

    impl Gated {
        fn allow(&self, reads: usize) {
            *self.allowed.lock().unwrap() = reads;
            self.moved.notify_all();
        }
        fn begun(&self) -> usize {
            self.begun.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    impl Probe for Gated {
        fn processes(&self) -> Result<ProcessList, ProbeError> {
            let n = self.begun.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let mut allowed = self.allowed.lock().unwrap();
            while *allowed < n {
                allowed = self.moved.wait(allowed).unwrap();
            }
            let mut list = self.fake.processes()?;
            list.processes = (1..=n as u32).map(|pid| process(pid, 0, &["x"])).collect();
            Ok(list)
        }
        fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
            self.fake.survey(wants_argv)
        }
        forward_the_rest!(fake);
    }

    /// Polls `done` (every millisecond, for at most 10 s).
    fn until(what: &str, done: impl Fn() -> bool) {
        let end = std::time::Instant::now() + Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < end, "timed out: {what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Seven looks asked while a read is in flight never get that older read's answer, and
    /// share the one next read.
    #[test]
    fn concurrent_reads_share_the_next_read_never_an_older_one() {
        let gated = Gated {
            fake: FakeProbe::default(),
            begun: Default::default(),
            allowed: Mutex::new(0),
            moved: Condvar::new(),
        };
        let shared = Coalesced::new(&gated);
        let size = |shared: &Coalesced| shared.processes().unwrap().processes.len();
        std::thread::scope(|s| {
            let first = s.spawn(|| size(&shared));
            until("the first read to begin", || gated.begun() == 1);
            let later: Vec<_> = (0..7).map(|_| s.spawn(|| size(&shared))).collect();
            until("all eight calls to be in", || shared.callers() == 8);
            gated.allow(1);
            until("the next read to begin", || gated.begun() == 2);
            gated.allow(usize::MAX);
            assert_eq!(first.join().unwrap(), 1);
            for l in later {
                assert_eq!(
                    l.join().unwrap(),
                    2,
                    "answered by the read after they asked"
                );
            }
        });
        assert_eq!(gated.begun(), 2, "the seven shared one read");
    }

    /// Found in review: a read that panicked left the calls waiting on it waiting for ever
    /// (and the batch with every lock held). They get an error; its own caller, the panic.
    #[test]
    fn a_read_that_panics_ends_the_wait_of_every_call_on_it() {
        struct Panics {
            fake: FakeProbe,
            first: std::sync::atomic::AtomicBool,
            entered: std::sync::atomic::AtomicBool,
            go: Mutex<bool>,
            moved: Condvar,
        }
        impl Probe for Panics {
            fn processes(&self) -> Result<ProcessList, ProbeError> {
                if self.first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                    self.entered
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                    let mut go = self.go.lock().unwrap();
                    while !*go {
                        go = self.moved.wait(go).unwrap();
                    }
                    panic!("a scripted panic in the read");
                }
                self.fake.processes()
            }
            fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
                self.fake.survey(wants_argv)
            }
            forward_the_rest!(fake);
        }
        let inner = Panics {
            fake: FakeProbe::default(),
            first: true.into(),
            entered: false.into(),
            go: Mutex::new(false),
            moved: Condvar::new(),
        };
        let shared = Coalesced::new(&inner);
        std::thread::scope(|s| {
            let leader = s.spawn(|| shared.processes().map(drop));
            until("the first read to begin", || {
                inner.entered.load(std::sync::atomic::Ordering::SeqCst)
            });
            let waiting = s.spawn(|| shared.processes().map(drop));
            until("the second call to wait on it", || shared.callers() == 2);
            *inner.go.lock().unwrap() = true;
            inner.moved.notify_all();
            assert!(
                leader.join().is_err(),
                "the reader's own caller gets the panic"
            );
            // The waiting call wanted a read begun after it asked: the next one, which works.
            assert!(waiting.join().unwrap().is_ok());
        });
        assert_eq!(shared.callers(), 0);
    }
}
