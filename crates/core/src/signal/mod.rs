//! The OS half of a stop (docs/design.md §3.4): the signaller, which sends a signal to a
//! process only if it is still the process Pier judged, with no window in which its pid can
//! change hands; and the exit waiter ([`wait`]), which waits for the signalled to exit.
//!
//! The policy is one function over three per-platform operations ([`SignalOps`]): *pin* the
//! process (Linux: a pidfd; macOS 14.2+: an audit token, which carries the pid version), *re-read*
//! its identity after pinning (start time and executable must match what was recorded), then
//! *send* through the pin. The kernel refuses a send through a stale pin, so a newcomer that
//! took the pid is never reached. "Could not read" never authorises a signal.
//!
//! Backends: `linux.rs` (pidfd: the pin, the send and the exit wait), `macos.rs` (audit token,
//! with the documented `kill(2)` fallback before macOS 14.2; kqueue for the exit wait). The
//! backends are chosen in [`system_signaller`] and [`wait::system_waiter`].

use std::path::PathBuf;

use crate::probe::{Identity, IdentityRead, Pid, Probe};

pub mod wait;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;

/// The signals Pier sends: SIGTERM by default, SIGKILL only on an explicit force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    /// SIGTERM: asks the process to exit.
    Term,
    /// SIGKILL: ends it at once (Force only).
    Kill,
}

/// What the process must still be for the signal to go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Its pid and start time, as recorded.
    pub identity: Identity,
    /// The executable it ran when recorded: a process that runs another one now has exec'd.
    pub exe: PathBuf,
}

/// What happened, honestly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalOutcome {
    /// The signal was delivered to the expected process.
    Sent,
    /// No signal: the process had already exited (or only its zombie was left).
    Gone,
    /// No signal: the pid now holds a different process, or the same one after an exec.
    Mismatch(String),
    /// No signal: a check or the send itself failed (e.g. EPERM).
    Failed(String),
}

/// Why pinning failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinError {
    /// No process holds the pid: it already exited.
    Gone,
    /// The pin could not be made, with the OS's error; the process may still run.
    Failed(String),
}

/// Why a send through a pin failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The pinned process is gone — or, on macOS, its pid version changed (an exec).
    NoSuchProcess,
    /// Any other failure of the send (e.g. EPERM), with the OS's error.
    Other(String),
}

/// The per-platform operations under the policy.
pub trait SignalOps {
    /// A handle on one process that a send can go through (a pidfd, an audit token, or, before
    /// macOS 14.2, the bare pid).
    type Pin;
    /// Pins the process that holds `pid` now.
    fn pin(&self, pid: Pid) -> Result<Self::Pin, PinError>;
    /// Sends `sig` through `pin`; [`SendError::NoSuchProcess`] when the pinned process is gone.
    fn send(&self, pin: &Self::Pin, sig: Sig) -> Result<(), SendError>;
}

/// Sends `sig` to `expected` through a platform's signaller.
pub trait Signaller {
    /// Sends `sig` only if `expected` still holds its pid, and says what happened.
    fn signal(&self, expected: &Expected, sig: Sig) -> SignalOutcome;
}

/// How often a send refused as "no such process" is retried from the pin: each retry means
/// the process exec'd in between (macOS bumps the pid version), and is re-verified in full.
const MAX_RETRIES: usize = 3;

/// Pin → re-read → compare → send, retried (bounded) when the send says the pin went stale.
pub fn signal_verified<O: SignalOps>(
    ops: &O,
    read: &dyn Fn(Pid) -> IdentityRead,
    expected: &Expected,
    sig: Sig,
) -> SignalOutcome {
    let pid = expected.identity.pid;
    for _ in 0..MAX_RETRIES {
        let pin = match ops.pin(pid) {
            Ok(pin) => pin,
            Err(PinError::Gone) => return SignalOutcome::Gone,
            // A zombie may refuse to be pinned (macOS task ports): gone is the honest answer.
            Err(PinError::Failed(_)) if read(pid) == IdentityRead::Gone => {
                return SignalOutcome::Gone
            }
            Err(PinError::Failed(e)) => return SignalOutcome::Failed(e),
        };
        match read(pid) {
            IdentityRead::Gone => return SignalOutcome::Gone,
            IdentityRead::Unknown(e) => {
                return SignalOutcome::Failed(format!(
                    "the identity of pid {pid} could not be re-read: {e}"
                ))
            }
            IdentityRead::Alive { identity, exe } => {
                if let Some(why) = mismatch(expected, identity, exe.as_ref()) {
                    return SignalOutcome::Mismatch(why);
                }
            }
        }
        match ops.send(&pin, sig) {
            Ok(()) => return SignalOutcome::Sent,
            Err(SendError::NoSuchProcess) => continue,
            Err(SendError::Other(e)) => return SignalOutcome::Failed(e),
        }
    }
    SignalOutcome::Failed(format!(
        "pid {pid} kept changing under the signal ({MAX_RETRIES} tries); nothing was sent"
    ))
}

/// Why a fresh read is not the expected process, if it is not. An unreadable exe is a
/// mismatch: it cannot be shown to be the same program.
fn mismatch(expected: &Expected, identity: Identity, exe: Option<&PathBuf>) -> Option<String> {
    if identity != expected.identity {
        return Some(format!(
            "pid {} has start time {} now, not {}: another process has the pid",
            identity.pid, identity.start_time, expected.identity.start_time
        ));
    }
    match exe {
        Some(exe) if *exe == expected.exe => None,
        Some(exe) => Some(format!(
            "pid {} runs {} now, not {}: it exec'd",
            identity.pid,
            exe.display(),
            expected.exe.display()
        )),
        None => Some(format!(
            "the executable of pid {} could not be read",
            identity.pid
        )),
    }
}

/// A platform's ops plus the probe that re-reads identities.
pub struct Verified<O, P> {
    /// The platform's pin and send.
    pub ops: O,
    /// Reads each identity afresh after the pin.
    pub probe: P,
}

impl<O: SignalOps, P: Probe> Signaller for Verified<O, P> {
    fn signal(&self, expected: &Expected, sig: Sig) -> SignalOutcome {
        signal_verified(&self.ops, &|pid| self.probe.identity(pid), expected, sig)
    }
}

/// The signaller for the OS Pier was built for. The one place a backend is chosen.
pub fn system_signaller() -> Box<dyn Signaller + Send + Sync> {
    #[cfg(target_os = "linux")]
    {
        Box::new(Verified {
            ops: linux::PidfdOps,
            probe: crate::probe::LinuxProbe::new(),
        })
    }
    #[cfg(target_os = "macos")]
    {
        macos::signaller()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Box::new(Unsupported)
    }
}

/// How [`system_signaller`] reaches a process on this machine (`pier doctor` shows it).
pub fn system_path() -> crate::model::doctor::SignalPath {
    #[cfg(target_os = "linux")]
    {
        linux::path()
    }
    #[cfg(target_os = "macos")]
    {
        macos::path()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        crate::model::doctor::SignalPath {
            name: "none".into(),
            race_free: false,
            detail: "Pier cannot signal on this operating system".into(),
        }
    }
}

/// Every other OS: never signals.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
struct Unsupported;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
impl Signaller for Unsupported {
    fn signal(&self, _expected: &Expected, _sig: Sig) -> SignalOutcome {
        SignalOutcome::Failed("Pier cannot signal processes on this operating system".into())
    }
}

#[cfg(test)]
mod tests;
