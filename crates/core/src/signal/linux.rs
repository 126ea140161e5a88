//! Linux: pin with a pidfd (`pidfd_open`, Linux 5.3+), send with `pidfd_send_signal`. A pidfd
//! refers to one process for its whole life: once it has exited, a send gives ESRCH, and a
//! newcomer that reuses the pid can never be reached through it.

use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::process::{pidfd_open, pidfd_send_signal, Pid as RawPid, PidfdFlags, Signal};

use super::{PinError, SendError, Sig, SignalOps};
use crate::probe::Pid;

pub struct PidfdOps;

impl SignalOps for PidfdOps {
    type Pin = OwnedFd;

    fn pin(&self, pid: Pid) -> Result<OwnedFd, PinError> {
        let raw = i32::try_from(pid)
            .ok()
            .and_then(RawPid::from_raw)
            .ok_or_else(|| PinError::Failed(format!("{pid} is not a valid pid")))?;
        match pidfd_open(raw, PidfdFlags::empty()) {
            Ok(fd) => Ok(fd),
            Err(Errno::SRCH) => Err(PinError::Gone),
            Err(e) => Err(PinError::Failed(format!("pidfd_open({pid}): {e}"))),
        }
    }

    fn send(&self, pin: &OwnedFd, sig: Sig) -> Result<(), SendError> {
        let signal = match sig {
            Sig::Term => Signal::TERM,
            Sig::Kill => Signal::KILL,
        };
        match pidfd_send_signal(pin, signal) {
            Ok(()) => Ok(()),
            Err(Errno::SRCH) => Err(SendError::NoSuchProcess),
            Err(e) => Err(SendError::Other(format!("pidfd_send_signal: {e}"))),
        }
    }
}
