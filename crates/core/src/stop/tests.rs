//! The checkpoint chain against a scripted probe, signaller and waiter: one test per abort path
//! of docs/design.md §3, each outcome and each result. A hook changes the world at an exact call
//! (e.g. "on the second socket read", which is check (a)).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use super::interrupt::Interrupt;
use super::*;
use crate::model::outcome::*;
use crate::model::shown::{Shown, ShownMember};
use crate::probe::fake::{process, FakeProbe, Shared};
use crate::probe::{
    ActivityDelta, ActivitySample, IdentityRead, Pid, Probe, ProbeError, ProcessDetails,
    ProcessList, SocketTable,
};
use crate::signal::wait::ExitWaiter;
use crate::signal::{
    signal_verified, Expected, PinError, SendError, Sig, SignalOps, SignalOutcome, Signaller,
};
use crate::store::Store;

const APP: &str = "/home/u/app";

type Hook = Box<dyn FnMut(&'static str, usize, &mut FakeProbe) + Send>;

/// The fake probe behind a hook that runs before every call, with the call's name and number.
struct Scripted {
    inner: Shared<FakeProbe>,
    calls: Shared<HashMap<&'static str, usize>>,
    hook: Shared<Hook>,
}

impl Scripted {
    fn new(
        fake: FakeProbe,
        hook: impl FnMut(&'static str, usize, &mut FakeProbe) + Send + 'static,
    ) -> Self {
        Self {
            inner: Shared::new(fake),
            calls: Shared::new(HashMap::new()),
            hook: Shared::new(Box::new(hook)),
        }
    }

    fn tick(&self, name: &'static str) {
        let n = {
            let mut calls = self.calls.borrow_mut();
            let n = calls.entry(name).or_default();
            *n += 1;
            *n
        };
        (self.hook.borrow_mut())(name, n, &mut self.inner.borrow_mut());
    }

    fn alive(&self, pid: Pid) -> bool {
        self.inner
            .borrow()
            .processes
            .iter()
            .any(|p| p.identity.pid == pid && !p.zombie)
    }
}

impl Probe for Scripted {
    fn current_uid(&self) -> u32 {
        self.inner.borrow().current_uid()
    }
    fn own_pid(&self) -> Pid {
        self.inner.borrow().own_pid()
    }
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        self.tick("processes");
        self.inner.borrow().processes()
    }
    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.inner.borrow().details(pid)
    }
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        // An unscripted environment is recognisable in a snapshot; a withheld one fails.
        let given = self.inner.borrow().environment(pid)?;
        Ok(if given.is_empty() {
            vec![format!("PID={pid}").into_bytes()]
        } else {
            given
        })
    }
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        self.tick("sockets");
        self.inner.borrow().sockets(owners_among)
    }
    fn memory(&self, pid: Pid) -> Result<crate::probe::Memory, ProbeError> {
        self.inner.borrow().memory(pid)
    }
    fn writes(&self, pid: Pid) -> Result<Vec<crate::probe::Written>, ProbeError> {
        self.inner.borrow().writes(pid)
    }
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        self.tick("activity");
        self.inner.borrow().activity(pids, window)
    }
    fn identity(&self, pid: Pid) -> IdentityRead {
        self.tick("identity");
        self.inner.borrow().identity(pid)
    }
    fn now(&self) -> Duration {
        self.inner.borrow().now()
    }
    fn boot_id(&self) -> Option<String> {
        self.inner.borrow().boot_id()
    }
}

/// Signals "kill" the fake process (unless it ignores SIGTERM) and are recorded in order.
struct FakeOps<'a> {
    probe: &'a Scripted,
    sent: Shared<Vec<Pid>>,
    /// The pids sent SIGKILL, which no process outlives.
    killed: Shared<Vec<Pid>>,
    ignores_term: HashSet<Pid>,
    refuses: HashSet<Pid>,
    /// A newcomer takes this pid right after it is pinned (a reuse inside the window).
    reused_on_pin: Shared<Option<Pid>>,
    /// This member exec's another program right after it is pinned.
    exec_on_pin: Shared<Option<Pid>>,
    /// What the world does right after a signal to this pid went out (a supervisor respawns,
    /// a helper ends with its parent).
    after_send: Shared<HashMap<Pid, AfterSend>>,
    /// The stop's interruption flag (a test raises it where a Ctrl-C would land).
    interrupt: &'a Interrupt,
}

/// The flag of every test that is not about interruption: never raised.
static NEVER: Interrupt = Interrupt::new();

/// No container engine on the machine: the process stops' tests ask none.
struct NoEngines;

impl crate::containers::control::EngineAccess for NoEngines {
    fn read(&self) -> Vec<crate::containers::EngineRead> {
        Vec::new()
    }
    fn connect(
        &self,
        host: &str,
    ) -> Result<Box<dyn crate::containers::control::Control>, crate::containers::EngineError> {
        let host = host.to_owned();
        Err(crate::containers::EngineError::NotUnix { host })
    }
}

static NO_ENGINES: NoEngines = NoEngines;

type AfterSend = Box<dyn FnMut(&mut FakeProbe) + Send>;

impl FakeOps<'_> {
    fn after_send(&self, pid: Pid, f: impl FnMut(&mut FakeProbe) + Send + 'static) {
        self.after_send.borrow_mut().insert(pid, Box::new(f));
    }
}

impl SignalOps for FakeOps<'_> {
    type Pin = Pid;
    fn pin(&self, pid: Pid) -> Result<Pid, PinError> {
        if !self.probe.alive(pid) {
            return Err(PinError::Gone);
        }
        if self.reused_on_pin.get() == Some(pid) {
            self.probe
                .inner
                .borrow_mut()
                .process_mut(pid)
                .identity
                .start_time += 1;
        }
        if self.exec_on_pin.get() == Some(pid) {
            let mut inner = self.probe.inner.borrow_mut();
            inner.details.get_mut(&pid).unwrap().exe = Ok("/bin/bash".into());
        }
        Ok(pid)
    }
    fn send(&self, pin: &Pid, sig: Sig) -> Result<(), SendError> {
        if self.refuses.contains(pin) {
            return Err(SendError::Other("EPERM".into()));
        }
        self.sent.borrow_mut().push(*pin);
        if sig == Sig::Kill {
            self.killed.borrow_mut().push(*pin);
        }
        if sig == Sig::Kill || !self.ignores_term.contains(pin) {
            self.probe
                .inner
                .borrow_mut()
                .processes
                .retain(|p| p.identity.pid != *pin);
        }
        if let Some(f) = self.after_send.borrow_mut().get_mut(pin) {
            f(&mut self.probe.inner.borrow_mut());
        }
        Ok(())
    }
}

impl Signaller for FakeOps<'_> {
    fn signal(&self, expected: &Expected, sig: Sig) -> SignalOutcome {
        signal_verified(self, &|pid| self.probe.identity(pid), expected, sig)
    }
}

fn fake_ops(probe: &Scripted) -> FakeOps<'_> {
    FakeOps {
        probe,
        sent: Shared::new(Vec::new()),
        killed: Shared::new(Vec::new()),
        ignores_term: HashSet::new(),
        refuses: HashSet::new(),
        reused_on_pin: Shared::new(None),
        exec_on_pin: Shared::new(None),
        after_send: Shared::new(HashMap::new()),
        interrupt: &NEVER,
    }
}

fn stopper<'a>(
    probe: &'a Scripted,
    ops: &'a FakeOps<'a>,
    waiter: &'a FakeWaiter<'a>,
    store: &'a Store,
    opts: StopOptions,
) -> Stopper<'a> {
    Stopper {
        probe,
        signaller: ops,
        waiter,
        store,
        marker_at: &markers,
        interrupt: ops.interrupt,
        engines: &NO_ENGINES,
        opts,
    }
}

/// Exited = no longer in the fake table (by identity).
struct FakeWaiter<'a> {
    probe: &'a Scripted,
    /// What the world does during the n-th wait that watches a pid.
    in_wait: Shared<HashMap<(Pid, usize), AfterSend>>,
    waits_of: Shared<HashMap<Pid, usize>>,
}

impl<'a> FakeWaiter<'a> {
    fn new(probe: &'a Scripted) -> Self {
        Self {
            probe,
            in_wait: Shared::new(HashMap::new()),
            waits_of: Shared::new(HashMap::new()),
        }
    }

    /// During the `n`-th wait that watches `pid`, `f` changes the world.
    fn during(&self, pid: Pid, n: usize, f: impl FnMut(&mut FakeProbe) + Send + 'static) {
        self.in_wait.borrow_mut().insert((pid, n), Box::new(f));
    }

    /// `pid` ends during the `n`-th wait that watches it.
    fn ends_in_wait(&self, pid: Pid, n: usize) {
        self.during(pid, n, move |p| {
            p.processes.retain(|x| x.identity.pid != pid)
        });
    }
}

impl ExitWaiter for FakeWaiter<'_> {
    fn wait_for_exit(&self, members: &[Expected], _timeout: Duration) -> Vec<bool> {
        for e in members {
            let n = {
                let mut waits = self.waits_of.borrow_mut();
                let n = waits.entry(e.identity.pid).or_default();
                *n += 1;
                *n
            };
            if let Some(f) = self.in_wait.borrow_mut().get_mut(&(e.identity.pid, n)) {
                f(&mut self.probe.inner.borrow_mut());
            }
        }
        let inner = self.probe.inner.borrow();
        members
            .iter()
            .map(|e| {
                !inner
                    .processes
                    .iter()
                    .any(|p| p.identity == e.identity && !p.zombie)
            })
            .collect()
    }
}

fn markers(dir: &Path) -> Option<&'static str> {
    (dir == Path::new(APP) || dir == Path::new(batch::API)).then_some("package.json")
}

/// `sh -c vite` (100) → vite (101) listening on 5173 → esbuild (102): a green, orphaned tree.
fn tree() -> FakeProbe {
    FakeProbe::default()
        .with(process(100, 1, &["sh", "-c", "vite"]), APP)
        .with(
            process(101, 100, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .with(
            process(102, 101, &["/home/u/app/node_modules/esbuild/bin/esbuild"]),
            APP,
        )
        .listen("127.0.0.1:5173", 101)
}

const ID: &str = "100-1000";

struct World {
    probe: Scripted,
    store_dir: tempfile::TempDir,
}

fn world(hook: impl FnMut(&'static str, usize, &mut FakeProbe) + Send + 'static) -> World {
    World {
        probe: Scripted::new(tree(), hook),
        store_dir: tempfile::tempdir().unwrap(),
    }
}

fn opts() -> StopOptions {
    StopOptions {
        grace: Duration::from_millis(10),
        sample: Duration::from_millis(100),
        home: Some("/home/u".into()),
        ..StopOptions::default()
    }
}

/// Runs one stop; returns the report and the pids signalled, in order.
fn run_with(w: &World, o: StopOptions, tune: impl FnOnce(&mut FakeOps)) -> (StopReport, Vec<Pid>) {
    run_waiting(w, o, tune, |_| {})
}

/// [`run_with`], with the waiter tuned too.
fn run_waiting(
    w: &World,
    o: StopOptions,
    tune: impl FnOnce(&mut FakeOps),
    tune_waiter: impl FnOnce(&FakeWaiter),
) -> (StopReport, Vec<Pid>) {
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let mut ops = fake_ops(&w.probe);
    tune(&mut ops);
    let waiter = FakeWaiter::new(&w.probe);
    tune_waiter(&waiter);
    let stopper = stopper(&w.probe, &ops, &waiter, &store, o);
    let report = stopper.stop(ID, None);
    let sent = ops.sent.borrow().clone();
    (report, sent)
}

/// vite (101) used 90 ms of CPU over the 100 ms sample: busy.
fn vite_busy(p: &mut FakeProbe) {
    p.activity.insert(
        101,
        Ok(ActivityDelta {
            cpu_ns: 90_000_000,
            io_bytes: 0,
        }),
    );
}

/// A stop anyway of [`ID`] that confirmed every reason a person may set aside.
fn anyway() -> StopOptions {
    let mut o = opts();
    let all = crate::model::reason::ALL.into_iter();
    o.anyway
        .confirm(ID, all.filter(|r| r.person_may_skip()).collect());
    o
}

fn run(w: &World) -> (StopReport, Vec<Pid>) {
    run_with(w, opts(), |_| {})
}

fn outcome(r: &StopReport, pid: Pid) -> MemberOutcome {
    r.members.iter().find(|m| m.pid == pid).unwrap().outcome
}

fn client_on_5173(p: &mut FakeProbe) {
    let s = p.sockets.get_or_insert_with(Vec::new);
    s.push(crate::probe::Socket {
        local: "127.0.0.1:5173".parse().unwrap(),
        remote: "127.0.0.1:40000".parse().unwrap(),
        state: crate::probe::TcpState::Established,
        owners: vec![],
        queued: None,
    });
}

#[test]
fn a_green_tree_is_stopped_children_before_parents() {
    let w = world(|_, _, _| {});
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100], "leaf to root");
    for pid in [100, 101, 102] {
        assert_eq!(outcome(&r, pid), MemberOutcome::Stopped);
    }
    assert!(r.timings.is_some());
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let snap: crate::model::snapshot::Snapshot =
        store.get(r.snapshot.as_deref().unwrap()).unwrap().unwrap();
    assert_eq!(snap.signalled, Some(true));
    assert_eq!(snap.result, Some(ResourceResult::Stopped));
    assert_eq!(snap.members.len(), 3);
}

/// What a stop freed is what its re-diagnosis read of the members it ended, recorded in the
/// snapshot before any signal: all of them for a whole stop, none of a member still running,
/// nothing for a refusal.
#[test]
fn a_stop_reports_the_memory_of_the_members_it_ended_as_recorded_before_it() {
    use crate::model::memory::{Memory, MemoryKind};
    let pss = |bytes| Memory {
        bytes,
        kind: MemoryKind::Proportional,
    };
    let scripted = |p: &mut FakeProbe| {
        for (pid, bytes) in [(100, 1_000_000), (101, 30_000_000), (102, 8_000_000)] {
            p.memory.insert(pid, Ok(pss(bytes)));
        }
    };
    let w = world(|_, _, _| {});
    scripted(&mut w.probe.inner.borrow_mut());
    let (r, _) = run(&w);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(r.freed, Some(pss(39_000_000)));
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let snap: crate::model::snapshot::Snapshot =
        store.get(r.snapshot.as_deref().unwrap()).unwrap().unwrap();
    assert_eq!(snap.members[1].memory, Some(pss(30_000_000)));

    let w = world(|_, _, _| {});
    scripted(&mut w.probe.inner.borrow_mut());
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.ignores_term.insert(102);
    });
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert_eq!(r.freed, Some(pss(31_000_000)), "esbuild still runs");

    let w = world(|call, n, p| {
        if call == "sockets" && n == 2 {
            client_on_5173(p);
        }
    });
    scripted(&mut w.probe.inner.borrow_mut());
    let (r, _) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert_eq!(r.freed, None);
}

/// Socket reads: 1 = re-diagnosis, 2 = check (a), 3 = check (c), 4 = check (e).
fn connection_at(read: usize) -> (StopReport, Vec<Pid>) {
    let w = world(move |call, n, p| {
        if call == "sockets" && n == read {
            client_on_5173(p);
        }
    });
    run(&w)
}

#[test]
fn a_connection_appearing_at_a_c_or_e_refuses_with_zero_signals() {
    for (read, check) in [(2, Checkpoint::A), (3, Checkpoint::C), (4, Checkpoint::E)] {
        let (r, sent) = connection_at(read);
        assert_eq!(r.result, ResourceResult::Refused, "{check:?}: {r:#?}");
        assert_eq!(r.checkpoint, Some(check), "{r:#?}");
        assert_eq!(
            r.reason,
            "a client is connected: live connection 127.0.0.1:5173 ← 127.0.0.1:40000 from a \
             process Pier cannot see (another user's, another machine's, or one not yet \
             accepted) — it ends when that client disconnects; `pier stop --anyway 100-1000` \
             sends SIGTERM anyway, setting aside live_connection",
            "in words, with no checkpoint label"
        );
        assert!(sent.is_empty(), "{check:?}: nothing sent");
    }
}

/// An agent is never offered a stop anyway (docs/design.md §7a): its refusal says why, and
/// nothing past it.
#[test]
fn an_agents_refusal_never_offers_a_stop_anyway() {
    let w = world(move |call, n, p| {
        if call == "sockets" && n == 2 {
            client_on_5173(p);
        }
    });
    let o = StopOptions {
        requested_by: crate::model::request::RequestedBy::Agent {
            client: "claude-code".into(),
        },
        ..opts()
    };
    let (r, sent) = run_with(&w, o, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(
        r.reason.starts_with("a client is connected"),
        "{}",
        r.reason
    );
    assert!(!r.reason.contains("--anyway"), "{}", r.reason);
    assert!(sent.is_empty());
}

/// A member whose row cannot be read at check (c) was not walked: its sockets are unknown.
#[test]
fn a_member_unreadable_at_a_network_check_refuses() {
    let w = world(|call, n, p| {
        if call == "sockets" && n == 2 {
            p.processes.retain(|q| q.identity.pid != 101);
            p.unreadable_processes
                .push(crate::probe::UnreadableProcess {
                    pid: 101,
                    uid: Some(crate::probe::fake::USER),
                    error: "scripted: EIO".into(),
                });
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(
        r.reason.contains("pid 101 could not be read"),
        "{}",
        r.reason
    );
    assert!(sent.is_empty());
}

#[test]
fn a_failing_connection_source_refuses() {
    let w = world(|call, n, p| {
        if call == "sockets" && n == 2 {
            p.sockets = None;
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(r.reason.contains("could not be read"), "{}", r.reason);
    assert!(sent.is_empty());
}

#[test]
fn activity_above_the_threshold_refuses() {
    let w = world(|call, _, p| {
        if call == "activity" {
            p.activity.insert(
                101,
                Ok(ActivityDelta {
                    cpu_ns: 90_000_000,
                    io_bytes: 0,
                }),
            );
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert_eq!(r.checkpoint, Some(Checkpoint::B));
    // 90 ms of CPU over the 100 ms window, all of it in vite.
    assert_eq!(
        r.reason,
        "busy over 100 ms: 90.0% CPU (more than 5%), 0 B/s disk I/O; the busiest member is \
         pid 101 (node vite), at 90.0% CPU: it has used 0.0% of a core over its 60 s life: \
         this looks like a burst, waiting may help; `pier stop --anyway 100-1000` sends \
         SIGTERM anyway, setting aside busy",
        "what was seen, in plain words, and whether waiting helps"
    );
    assert!(sent.is_empty());
}

#[test]
fn a_new_child_appearing_refuses() {
    let w = world(|call, _, p| {
        if call == "activity" {
            p.processes.push(process(103, 101, &["node", "worker.js"]));
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert_eq!(r.checkpoint, Some(Checkpoint::D));
    assert_eq!(
        r.reason,
        "a new process joined the tree during the checks: pid 103 (node), child of pid 101"
    );
    assert!(sent.is_empty());
}

#[test]
fn a_member_that_re_execs_refuses() {
    // Same pid, same start time, another program.
    let w = world(|call, _, p| {
        if call == "activity" {
            p.details.get_mut(&101).unwrap().exe = Ok("/usr/bin/python3".into());
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(r.reason.contains("exec"), "{}", r.reason);
    assert!(sent.is_empty());
}

#[test]
fn a_pid_that_changes_hands_between_its_check_and_its_signal_is_skipped() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| ops.reused_on_pin.set(Some(101)));
    assert_eq!(outcome(&r, 101), MemberOutcome::Skipped);
    assert!(!sent.contains(&101), "nothing sent to the newcomer");
    assert!(w.probe.alive(101), "the newcomer still runs");
}

#[test]
fn a_snapshot_that_cannot_be_written_means_zero_signals() {
    let w = world(|_, _, _| {});
    let store = Store::open_at(w.store_dir.path()).unwrap();
    // Even root cannot write into a folder that is a file.
    std::fs::remove_dir_all(store.folder().join("records")).unwrap();
    std::fs::write(store.folder().join("records"), b"").unwrap();
    let ops = fake_ops(&w.probe);
    let waiter = FakeWaiter::new(&w.probe);
    let stopper = stopper(&w.probe, &ops, &waiter, &store, opts());
    let r = stopper.stop(ID, None);
    assert_eq!(r.result, ResourceResult::Failed, "{r:#?}");
    assert!(r.reason.contains("snapshot"), "{}", r.reason);
    assert!(ops.sent.borrow().is_empty());
}

#[test]
fn more_than_two_seconds_from_check_a_to_the_first_signal_means_zero_signals() {
    // The fake clock advances by the sample window: no sleeping.
    let w = world(|_, _, _| {});
    let mut o = opts();
    o.sample = Duration::from_millis(2_100);
    let (r, sent) = run_with(&w, o, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::Deadline), "{r:#?}");
    assert!(r.reason.contains("first signal"), "{}", r.reason);
    assert!(sent.is_empty());
}

#[test]
fn an_identity_that_gives_no_answer_never_authorises_a_signal() {
    // At check (d): refused.
    let w = world(|call, _, p| {
        if call == "activity" {
            p.identity_unknown.insert(102);
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(sent.is_empty());
    // Only at the signal itself (identity reads 1–6 are checks (d) and (e) of three
    // members): that member fails, nothing is sent to it.
    let w = world(|call, n, p| {
        if call == "identity" && n > 6 {
            p.identity_unknown.insert(102);
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(outcome(&r, 102), MemberOutcome::Failed, "{r:#?}");
    assert!(!sent.contains(&102));
    assert_eq!(r.result, ResourceResult::PartiallyStopped);
}

#[test]
fn a_member_alive_after_the_grace_period_is_still_running_and_the_stop_partial() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.ignores_term.insert(101);
    });
    assert_eq!(outcome(&r, 101), MemberOutcome::StillRunning);
    assert_eq!(r.result, ResourceResult::PartiallyStopped);
}

#[test]
fn a_refused_signal_is_failed_and_the_stop_partial() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.refuses.insert(102);
    });
    assert_eq!(outcome(&r, 102), MemberOutcome::Failed);
    assert_eq!(r.result, ResourceResult::PartiallyStopped);
}

#[test]
fn a_parent_that_ends_when_its_child_does_is_exited_not_stopped() {
    // `sh -c` exits on its own once vite is gone.
    let w2 = World {
        probe: Scripted::new(tree(), |call, n, p| {
            // Once vite's signal went out and it was removed, sh follows by itself.
            if call == "identity" && n > 0 && !p.processes.iter().any(|x| x.identity.pid == 101) {
                p.processes.retain(|x| x.identity.pid != 100);
            }
        }),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r2, sent2) = run_with(&w2, opts(), |_| {});
    assert_eq!(outcome(&r2, 100), MemberOutcome::Exited, "{r2:#?}");
    assert_eq!(sent2, vec![102, 101]);
    assert_eq!(r2.result, ResourceResult::Stopped);
}

/// Found by the stop soak: a member the last check saw gone, whose turn comes after another
/// member's signal, was reported `exited` ("after the first signal"), which it was not.
#[test]
fn a_member_already_gone_at_the_last_check_is_skipped_even_after_the_first_signal() {
    // Identity reads 1–3 are check (d), 4–6 check (e); vite (101) ends just before (e).
    let w = world(|call, n, p| {
        if call == "identity" && n == 4 {
            p.processes.retain(|x| x.identity.pid != 101);
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(sent, vec![102, 100], "{r:#?}");
    assert_eq!(outcome(&r, 101), MemberOutcome::Skipped, "{r:#?}");
    assert_eq!(outcome(&r, 102), MemberOutcome::Stopped);
    assert_eq!(r.result, ResourceResult::Stopped);
}
#[test]
fn a_resource_that_is_no_longer_green_is_refused_with_its_fresh_state() {
    let mut shell = process(50, 1, &["-zsh"]);
    shell.tty_nr = 34816;
    let mut fake = tree();
    fake.processes.push(shell);
    fake.process_mut(100).ppid = 50;
    let w = World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(r.fresh.is_some(), "the fresh state comes back");
    assert!(sent.is_empty());
    let store = Store::open_at(w.store_dir.path()).unwrap();
    assert!(
        store
            .list::<crate::model::snapshot::Snapshot>("snap-")
            .unwrap()
            .records
            .is_empty(),
        "no snapshot"
    );
}

#[test]
fn what_was_shown_must_still_hold() {
    let w = world(|_, _, _| {});
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let ops = fake_ops(&w.probe);
    let waiter = FakeWaiter::new(&w.probe);
    let stopper = stopper(&w.probe, &ops, &waiter, &store, opts());
    let shown = Shown {
        project_level: crate::model::card::Level::Green,
        members: vec![ShownMember {
            identity: crate::probe::Identity {
                pid: 100,
                start_time: 1000,
            },
            exe: Some("/bin/sh".into()),
        }],
        container_run: None,
    };
    let r = stopper.stop(ID, Some(&shown));
    assert_eq!(
        r.result,
        ResourceResult::Refused,
        "two members were not shown"
    );
    assert!(ops.sent.borrow().is_empty());
}

#[test]
fn a_new_candidate_in_the_project_after_the_stop_makes_it_partial() {
    // The watcher respawns vite as soon as it is gone.
    let w = World {
        probe: Scripted::new(tree(), |call, _, p| {
            let gone = !p.processes.iter().any(|x| x.identity.pid == 100);
            let respawned = p.processes.iter().any(|x| x.identity.pid == 200);
            if call == "processes" && gone && !respawned {
                *p = std::mem::take(p).with(process(200, 1, &["vite"]), APP);
            }
        }),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run(&w);
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(r.reason.contains("appeared"), "{}", r.reason);
}

#[test]
fn a_twin_whose_folder_cannot_be_confirmed_makes_it_partial() {
    let w = World {
        probe: Scripted::new(tree(), |call, _, p| {
            let gone = !p.processes.iter().any(|x| x.identity.pid == 101);
            let twin = p.processes.iter().any(|x| x.identity.pid == 300);
            if call == "processes" && gone && !twin {
                *p = std::mem::take(p).with(
                    process(300, 1, &["node", "/home/u/app/node_modules/.bin/vite"]),
                    "/elsewhere",
                );
                p.details.get_mut(&300).unwrap().cwd = Err("permission denied".into());
            }
        }),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, _) = run(&w);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(r.reason.contains("same command"), "{}", r.reason);
}

#[test]
fn an_exec_between_the_diagnosis_and_the_snapshot_is_refused() {
    // Process reads: 1 = re-diagnosis, 2 = the snapshot's.
    let w = world(|call, n, p| {
        if call == "processes" && n == 2 {
            p.details.get_mut(&101).unwrap().exe = Ok("/usr/lib/postgresql/bin/postgres".into());
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.contains("exec"), "{}", r.reason);
    assert!(sent.is_empty());
}

#[test]
fn a_root_that_exits_during_the_checks_is_a_changed_tree() {
    // Its children would hang from init, where a new one could not be seen.
    let w = world(|call, _, p| {
        if call == "activity" {
            p.processes.retain(|x| x.identity.pid != 100);
        }
    });
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(
        r.reason.contains("root process 100 (sh -c vite) exited"),
        "{}",
        r.reason
    );
    assert!(sent.is_empty());
}

#[test]
fn a_member_skipped_because_it_exec_d_and_still_runs_makes_the_stop_partial() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| ops.exec_on_pin.set(Some(102)));
    assert_eq!(outcome(&r, 102), MemberOutcome::Skipped);
    assert!(!sent.contains(&102));
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason.contains("pid 102 (") && r.reason.contains("was not signalled ("),
        "{}",
        r.reason
    );
}

/// Found by the stop soak: a root that exec'd after its check (so it was rightly skipped) and
/// then exited was reported "skipped and still runs", `partially_stopped`: the outcome was
/// read when the last level's wait ended, not when the stop did.
#[test]
fn a_member_skipped_because_it_exec_d_that_ends_before_the_stop_does_leaves_it_complete() {
    let w = world(|_, _, _| {});
    // sh (100) exec's when it is pinned, then ends in the second wait that watches it (the
    // first is its settle wait, before its turn; the second is the stop's last look).
    let (r, sent) = run_waiting(
        &w,
        opts(),
        |ops| ops.exec_on_pin.set(Some(100)),
        |waiter| waiter.ends_in_wait(100, 2),
    );
    assert_eq!(sent, vec![102, 101], "{r:#?}");
    assert_eq!(outcome(&r, 100), MemberOutcome::Skipped);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

/// Found in review: a member skipped while alive (it exec'd) whose identity can no longer be
/// read at the end was taken for gone, and the stop for complete.
#[test]
fn a_skipped_member_whose_identity_has_no_answer_at_the_end_makes_the_stop_partial() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.exec_on_pin.set(Some(102));
        ops.after_send(101, |p| {
            p.identity_unknown.insert(102);
        });
    });
    assert_eq!(sent, vec![101, 100], "{r:#?}");
    assert_eq!(outcome(&r, 102), MemberOutcome::Skipped);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason
            .contains("was not signalled, and whether it still runs could not be read"),
        "{}",
        r.reason
    );
}

/// Found by trying uvicorn `--reload`: Python's `multiprocessing.resource_tracker` ignores
/// SIGTERM, outlives its grace, and exits as soon as its parent is signalled. It was reported
/// `still_running` and the stop `partially_stopped` although nothing ran.
#[test]
fn a_member_that_outlives_its_grace_and_ends_after_its_parent_s_signal_is_stopped() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.ignores_term.insert(102);
        ops.after_send(101, |p| p.processes.retain(|x| x.identity.pid != 102));
    });
    assert_eq!(sent, vec![102, 101, 100]);
    let m = r.members.iter().find(|m| m.pid == 102).unwrap();
    assert_eq!(m.outcome, MemberOutcome::Stopped, "{r:#?}");
    assert_eq!(
        m.detail,
        "outlived its grace, exited after its parent was signalled"
    );
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

#[test]
fn a_member_that_outlives_its_grace_and_ends_before_its_parent_s_signal_says_so() {
    let w = world(|_, _, _| {});
    // esbuild (102) ignores SIGTERM; its waits: its own level's, then the look before vite's
    // (101) signal, during which it ends.
    let (r, sent) = run_waiting(
        &w,
        opts(),
        |ops| {
            ops.ignores_term.insert(102);
        },
        |waiter| waiter.ends_in_wait(102, 2),
    );
    assert_eq!(sent, vec![102, 101, 100]);
    let m = r.members.iter().find(|m| m.pid == 102).unwrap();
    assert_eq!(m.outcome, MemberOutcome::Stopped, "{r:#?}");
    assert_eq!(
        m.detail,
        "outlived its grace, exited before its parent was signalled"
    );
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

/// A member that never ends keeps the stop's last wait watching it; a child it forks during
/// that wait is seen by the look after it, and named still running.
#[test]
fn a_child_born_during_the_stop_s_last_wait_is_named_still_running() {
    let w = world(|_, _, _| {});
    // esbuild's (102) waits: its level's, the looks before 101 and 100, then the last one.
    let (r, sent) = run_waiting(
        &w,
        opts(),
        |ops| {
            ops.ignores_term.insert(102);
        },
        |waiter| {
            waiter.during(102, 4, |p| {
                *p = std::mem::take(p).with(process(104, 102, &["esbuild-helper"]), APP);
            })
        },
    );
    assert_eq!(sent, vec![102, 101, 100], "the newcomer is never signalled");
    assert_eq!(outcome(&r, 102), MemberOutcome::StillRunning, "{r:#?}");
    assert_eq!(r.newcomers.len(), 1, "{r:#?}");
    let n = &r.newcomers[0];
    assert_eq!((n.pid, n.parent), (104, 102));
    assert_eq!(n.fate, NewcomerFate::StillRunning);
    assert_eq!(
        n.detail,
        "born during the stop's last wait, never signalled; running"
    );
    assert_eq!(r.result, ResourceResult::PartiallyStopped);
}

/// esbuild (103) as a supervisor's replacement for 102: born to vite (101) right after 102's
/// signal.
fn respawn_after_102(ops: &FakeOps) {
    ops.after_send(102, |p| {
        *p = std::mem::take(p).with(
            process(103, 101, &["/home/u/app/node_modules/esbuild/bin/esbuild"]),
            APP,
        );
    });
}

/// Found by trying uvicorn `--workers 2`: the supervisor respawns the worker Pier signalled;
/// the new worker served the port for seconds and was never named.
#[test]
fn a_respawned_child_is_named_never_signalled_and_makes_the_stop_partial_while_it_runs() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| respawn_after_102(ops));
    assert_eq!(sent, vec![102, 101, 100], "the newcomer is never signalled");
    assert_eq!(r.newcomers.len(), 1, "{r:#?}");
    let n = &r.newcomers[0];
    assert_eq!((n.pid, n.parent), (103, 101));
    assert_eq!(n.how, "child of member pid 101");
    assert_eq!(n.fate, NewcomerFate::StillRunning);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason
            .contains("pid 103 (child of member pid 101, /home/u/app/node_modules/esbuild/bin/esbuild) was born during the stop and still runs"),
        "{}",
        r.reason
    );
}

/// A shell loop (`while true; do vite; done`) restarts vite (103) the moment Pier's signal
/// ends it, and Pier's signal then ends the loop, which leaves the new vite to init: the
/// report names the loop as who started it, and how to stop the new one.
#[test]
fn a_replacement_a_stopped_respawner_started_is_attributed_to_it() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.after_send(101, |p| {
            *p = std::mem::take(p)
                .with(
                    process(103, 100, &["node", "/home/u/app/node_modules/.bin/vite"]),
                    APP,
                )
                .listen("127.0.0.1:5173", 103);
        });
        ops.after_send(100, |p| p.process_mut(103).ppid = 1);
    });
    assert_eq!(
        sent,
        vec![102, 101, 100],
        "the replacement is never signalled"
    );
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason.contains(
            "a new vite appeared in the project (id 103-1030): born during the stop to pid 100 \
             (sh -c vite), which Pier stopped"
        ) && r.reason.contains("`pier stop 103-1030` stops it"),
        "{}",
        r.reason
    );
}

/// pm2's God daemon (60) running `node server.js` (100) on 127.0.0.1:3000 in the project, as
/// real pm2 5.4.3 names its app in its environment.
fn pm2_world() -> World {
    let mut god = process(60, 1, &["PM2 v5.4.3: God Daemon (/home/u/.pm2)"]);
    god.comm = "PM2 v5.4.3: God".into();
    let mut fake = FakeProbe::default()
        .with(god, "/home/u")
        .with(pm2_app(100), APP)
        .listen("127.0.0.1:3000", 100);
    pm2_env(&mut fake, 100);
    World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    }
}

fn pm2_app(pid: Pid) -> crate::probe::ProcessInfo {
    process(pid, 60, &["node", "/home/u/app/server.js"])
}

fn pm2_env(p: &mut FakeProbe, pid: Pid) {
    let vars = ["name=api", "pm_id=0", "instances=1", "HOME=/home/u"];
    p.environments
        .insert(pid, vars.iter().map(|v| v.as_bytes().to_vec()).collect());
}

/// A manager's program is never stopped anyway, whatever is confirmed: the manager would
/// start it again, and the refusal names the command that stops it there.
#[test]
fn a_stop_anyway_of_a_managers_program_is_refused_naming_its_command() {
    let w = pm2_world();
    let mut o = opts();
    o.anyway
        .confirm(ID, crate::model::reason::ALL.into_iter().collect());
    let store = Store::open_at(w.store_dir.path()).unwrap();
    let ops = fake_ops(&w.probe);
    let waiter = FakeWaiter::new(&w.probe);
    let r = stopper(&w.probe, &ops, &waiter, &store, o).stop(ID, None);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.starts_with("never touched: pm2"), "{}", r.reason);
    assert!(r.reason.contains("`pm2 stop 0`"), "{}", r.reason);
    assert!(ops.sent.borrow().is_empty());
}

/// A process running a stopped member's exact command in the project that ran already at
/// check (e) — a second vite of the same project, a resource of its own — is no replacement.
#[test]
fn a_twin_that_ran_before_the_stop_is_no_replacement() {
    let w = world(|_, _, _| {});
    {
        let mut p = w.probe.inner.borrow_mut();
        *p = std::mem::take(&mut *p).with(
            process(200, 1, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        );
    }
    let (r, sent) = run(&w);
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

/// Without a manager nothing is waited for: a stop of a green tree ends at once.
#[test]
fn a_stop_with_no_manager_waits_for_no_respawn() {
    let w = world(|_, _, _| {});
    let (r, _) = run_waiting(
        &w,
        opts(),
        |_| {},
        |waiter| {
            waiter.during(1, 1, |_| panic!("init was waited on"));
        },
    );
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

#[test]
fn a_respawned_child_that_ends_with_its_parent_is_named_and_the_stop_complete() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        respawn_after_102(ops);
        ops.after_send(101, |p| p.processes.retain(|x| x.identity.pid != 103));
    });
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.newcomers.len(), 1, "{r:#?}");
    assert_eq!(r.newcomers[0].fate, NewcomerFate::Exited);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
}

#[test]
fn a_stranger_listening_on_a_recorded_port_after_the_signals_is_a_newcomer() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.after_send(100, |p| {
            *p = std::mem::take(p)
                .with(process(300, 1, &["node", "other-server.js"]), "/tmp")
                .listen("127.0.0.1:5173", 300);
        });
    });
    assert_eq!(r.newcomers.len(), 1, "{r:#?}");
    assert_eq!(r.newcomers[0].pid, 300);
    assert_eq!(
        r.newcomers[0].how,
        "listens on 127.0.0.1:5173, a port of the resource"
    );
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
}

#[test]
fn a_stopped_pid_taken_by_any_new_process_makes_the_stop_partial() {
    let w = world(|call, _, p| {
        let all_gone = !p
            .processes
            .iter()
            .any(|x| [100, 101, 102].contains(&x.identity.pid));
        if call == "processes" && all_gone {
            let mut cat = process(101, 1, &["cat"]);
            cat.identity.start_time = 99_999;
            *p = std::mem::take(p).with(cat, "/tmp");
        }
    });
    let (r, _) = run(&w);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason.contains("pid 101 now belongs to a new process"),
        "{}",
        r.reason
    );
}

#[test]
fn a_stop_anyway_never_touches_pier_its_ancestors_or_another_users_process() {
    let o = anyway();
    // Pier runs inside the tree.
    let mut fake = tree();
    fake = fake.with(
        process(crate::probe::fake::PIER_PID, 102, &["pier", "stop"]),
        APP,
    );
    let w = World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run_with(&w, o.clone(), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.contains("never touched"), "{}", r.reason);
    assert!(sent.is_empty());
    // A member run by another user.
    let mut fake = tree();
    fake.process_mut(102).uid = 0;
    let w = World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run_with(&w, o.clone(), |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
    // A member that is a container engine's own process, run as the user (rootless Docker).
    let mut fake = tree();
    fake.process_mut(102).comm = "rootlessport".into();
    let w = World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run_with(&w, o, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(
        r.reason,
        "never touched: pid 102 is the container engine's own process (rootlessport)"
    );
    assert!(sent.is_empty());
}

#[test]
fn a_stop_anyway_sets_busy_aside_but_still_refuses_a_changed_identity() {
    let o = anyway();
    // Yellow (busy), yet stopped anyway: with SIGTERM, busy named as set aside.
    let w = world(|_, _, p| vite_busy(p));
    let (r, sent) = run_with(&w, o.clone(), |_| {});
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100]);
    assert_eq!(r.set_aside.len(), 1, "{r:#?}");
    assert_eq!(r.set_aside[0].reason, crate::model::reason::Reason::Busy);
    // A re-exec is still refused under a stop anyway.
    let w = world(|call, n, p| {
        if call == "identity" && n == 1 {
            p.details.get_mut(&101).unwrap().exe = Ok("/bin/bash".into());
        }
    });
    let (r, sent) = run_with(&w, o, |_| {});
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
}

use proptest::strategy::Strategy as _;

proptest::proptest! {
    // The space is small (3 members × up to 9 reads = 24 cases): 128 draws cover it.
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Whichever member loses its answer, from any identity read up to the one right before
    /// its own signal (reads 1–6 are checks (d) and (e); then 102, 101 and 100 are read before
    /// their signals, leaf to root): it is never signalled, and the resource is never reported
    /// stopped.
    #[test]
    fn a_member_whose_identity_has_no_answer_is_never_signalled(
        (member, from) in proptest::sample::select(vec![(100u32, 9usize), (101, 8), (102, 7)])
            .prop_flat_map(|(member, last)| (proptest::strategy::Just(member), 1..=last)),
    ) {
        let w = world(move |call, n, p| {
            if call == "identity" && n >= from {
                p.identity_unknown.insert(member);
            }
        });
        let (r, sent) = run(&w);
        proptest::prop_assert!(!sent.contains(&member), "{:?} {:#?}", sent, r);
        proptest::prop_assert_ne!(r.result, ResourceResult::Stopped);
    }
}

mod batch;
mod container;
mod dry_run;
mod environment;
mod honest;
mod interrupted;
mod judge;
mod past_no;
mod words;
