//! The soak's hook: Pier's real Linux probe, signaller and exit waiter, each call first counted
//! and given to the round, which makes a planned event happen right there. Every call is
//! passed on unchanged, so the stop under test is the real one; the hook only chooses *when*
//! the world changes: at the boundary between two of Pier's reads or signals.

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
    /// Call number `n` (from 0) is about to be made.
    fn before(&self, call: Call);
    /// The signaller answered a request.
    fn on_signal(&self, expected: &Expected, outcome: &SignalOutcome);
    /// The waiter answered: what it said of each member.
    fn after_wait(&self, members: &[Expected], exited: &[bool]);
}

/// Pier's real interfaces behind the hook.
pub struct Hooked<'a> {
    pub probe: &'a dyn Probe,
    pub signaller: &'a dyn Signaller,
    pub waiter: &'a dyn ExitWaiter,
    pub tick: &'a dyn Tick,
}

impl Probe for Hooked<'_> {
    fn current_uid(&self) -> u32 {
        self.tick.before(Call::Uid);
        self.probe.current_uid()
    }
    fn own_pid(&self) -> Pid {
        self.tick.before(Call::OwnPid);
        self.probe.own_pid()
    }
    fn processes(&self) -> Result<ProcessList, ProbeError> {
        self.tick.before(Call::Processes);
        self.probe.processes()
    }
    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.tick.before(Call::Details);
        self.probe.details(pid)
    }
    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, String> {
        self.tick.before(Call::Environment);
        self.probe.environment(pid)
    }
    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        self.tick.before(Call::Sockets);
        self.probe.sockets(owners_among)
    }
    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        self.tick.before(Call::Children);
        self.probe.children(parents)
    }
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        self.tick.before(Call::Survey);
        self.probe.survey(wants_argv)
    }
    fn argv(&self, identity: Identity) -> Option<Vec<Vec<u8>>> {
        self.tick.before(Call::Argv);
        self.probe.argv(identity)
    }
    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        self.tick.before(Call::Activity);
        self.probe.activity(pids, window)
    }
    fn identity(&self, pid: Pid) -> IdentityRead {
        self.tick.before(Call::Identity(pid));
        self.probe.identity(pid)
    }
    fn now(&self) -> Duration {
        self.tick.before(Call::Now);
        self.probe.now()
    }
    fn boot_id(&self) -> Option<String> {
        self.tick.before(Call::BootId);
        self.probe.boot_id()
    }
}

impl Signaller for Hooked<'_> {
    fn signal(&self, expected: &Expected, sig: Sig) -> SignalOutcome {
        self.tick.before(Call::Signal(expected.identity.pid));
        let outcome = self.signaller.signal(expected, sig);
        self.tick.on_signal(expected, &outcome);
        outcome
    }
}

impl ExitWaiter for Hooked<'_> {
    fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool> {
        self.tick.before(Call::Wait);
        let exited = self.waiter.wait_for_exit(members, timeout);
        self.tick.after_wait(members, &exited);
        exited
    }
}
