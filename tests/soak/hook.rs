//! The soak's hook: Pier's real Linux probe, signaller and exit waiter, each call first counted
//! and given to the round, which makes a planned event happen right there. Every call is
//! passed on unchanged, so the stop under test is the real one; the hook only chooses *when*
//! the world changes: at the boundary between two of Pier's reads or signals.
//!
//! A batch signals from a thread per resource, so the hook lets one call through at a time
//! ([`Tick::serial`]): each call — its events, then the call itself — runs alone, and the trace
//! is the one order in which they happened. A wait holds the turn only to be recorded: the
//! time it spends waiting, other threads' calls go on.

use std::time::Duration;

use pier_core::probe::{
    ActivitySample, Identity, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessInfo,
    ProcessList, SocketTable, Survey, WantsArgv,
};
use pier_core::signal::wait::ExitWaiter;
use pier_core::signal::{Expected, Sig, SignalOutcome, Signaller};

/// One call into Pier's OS interfaces, as the trace records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Survey,
    Processes,
    Details,
    Environment,
    Sockets,
    Argv,
    Memory,
    Writes,
    Activity,
    Identity(Pid),
    Now,
    BootId,
    Uid,
    OwnPid,
    /// A request to signal this pid (what came of it is in [`Hooked::on_signal`]).
    Signal(Pid),
    Wait,
    /// A glance at the lineage's children (once after each wait: the hooked waiter glances
    /// after it, through the real probe's children lists).
    Children,
}

/// What the hook tells before each call, and after each signal.
pub trait Tick {
    /// The turn: held across a call's events and the call itself.
    fn serial(&self) -> std::sync::MutexGuard<'_, ()>;
    /// Call number `n` (from 0) is about to be made.
    fn before(&self, call: Call);
    /// The signaller answered a request.
    fn on_signal(&self, expected: &Expected, outcome: &SignalOutcome);
    /// The waiter answered: what it said of each member.
    fn after_wait(&self, members: &[Expected], exited: &[bool], ended_ns: u64);
    /// A read of the process table (a survey's or on its own) answered, still in its turn.
    fn after_read(&self, call: Call);
}

/// Pier's real interfaces behind the hook.
pub struct Hooked<'a> {
    pub probe: &'a (dyn Probe + Sync),
    pub signaller: &'a (dyn Signaller + Sync),
    pub waiter: &'a (dyn ExitWaiter + Sync),
    pub tick: &'a (dyn Tick + Sync),
}

impl Hooked<'_> {
    /// `call`'s events, then `f`, in one turn.
    fn turn<T>(&self, call: Call, f: impl FnOnce() -> T) -> T {
        let _turn = self.tick.serial();
        self.tick.before(call);
        let answer = f();
        if matches!(call, Call::Survey | Call::Processes) {
            self.tick.after_read(call);
        }
        answer
    }
}

impl Probe for Hooked<'_> {
    fn current_uid(&self) -> u32 {
        self.turn(Call::Uid, || self.probe.current_uid())
    }
    fn own_pid(&self) -> Pid {
        self.turn(Call::OwnPid, || self.probe.own_pid())
    }
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        self.turn(Call::Processes, || self.probe.processes())
    }
    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.turn(Call::Details, || self.probe.details(pid))
    }
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        self.turn(Call::Environment, || self.probe.environment(pid))
    }
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        self.turn(Call::Sockets, || self.probe.sockets(owners_among))
    }
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        self.turn(Call::Children, || self.probe.children(parents))
    }
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.turn(Call::Survey, || self.probe.survey(wants_argv))
    }
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.turn(Call::Survey, || self.probe.survey_own(wants_argv))
    }
    fn rows(&self, pids: &[Pid]) -> ProcessList {
        self.turn(Call::Processes, || self.probe.rows(pids))
    }
    fn argv(&self, identity: Identity) -> Option<Vec<Vec<u8>>> {
        self.turn(Call::Argv, || self.probe.argv(identity))
    }
    fn memory(&self, pid: Pid) -> Result<pier_core::probe::Memory, ProbeError> {
        self.turn(Call::Memory, || self.probe.memory(pid))
    }
    fn writes(&self, pid: Pid) -> Result<Vec<pier_core::probe::Written>, ProbeError> {
        self.turn(Call::Writes, || self.probe.writes(pid))
    }
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        self.turn(Call::Activity, || self.probe.activity(pids, window))
    }
    fn identity(&self, pid: Pid) -> IdentityRead {
        self.turn(Call::Identity(pid), || self.probe.identity(pid))
    }
    fn now(&self) -> Duration {
        self.turn(Call::Now, || self.probe.now())
    }
    fn boot_id(&self) -> Option<String> {
        self.turn(Call::BootId, || self.probe.boot_id())
    }
}

impl Signaller for Hooked<'_> {
    fn signal(&self, expected: &Expected, sig: Sig) -> SignalOutcome {
        self.turn(Call::Signal(expected.identity.pid), || {
            let outcome = self.signaller.signal(expected, sig);
            self.tick.on_signal(expected, &outcome);
            outcome
        })
    }
}

impl ExitWaiter for Hooked<'_> {
    fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool> {
        self.turn(Call::Wait, || ());
        let exited = self.waiter.wait_for_exit(members, timeout);
        // Before waiting for this thread's turn: the moment the wait ended.
        let ended_ns = super::monotonic_ns();
        let _turn = self.tick.serial();
        self.tick.after_wait(members, &exited, ended_ns);
        exited
    }
}
