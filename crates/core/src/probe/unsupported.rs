//! The probe for an OS Pier cannot read yet. Every answer is "unsupported" or "unknown", which
//! every caller treats as *block*: nothing is ever judged safe from a probe that cannot see.

use std::time::{Duration, Instant};

use super::ProcessList;
use super::{
    ActivitySample, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessInfo, SocketTable,
};

pub struct UnsupportedProbe {
    epoch: Instant,
}

impl UnsupportedProbe {
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
        }
    }
}

impl Probe for UnsupportedProbe {
    fn current_uid(&self) -> u32 {
        u32::MAX
    }

    fn own_pid(&self) -> Pid {
        std::process::id()
    }

    fn processes(&self) -> Result<ProcessList, ProbeError> {
        Err(ProbeError::Unsupported)
    }

    fn details(&self, _pid: Pid) -> Option<ProcessDetails> {
        None
    }

    fn environment(&self, _pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        Err(ProbeError::Unsupported)
    }

    fn tmux_pane(&self, _q: &super::tmux::TmuxQuery) -> Option<super::tmux::PaneName> {
        None
    }

    fn sockets(&self, _owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        Err(ProbeError::Unsupported)
    }

    fn memory(&self, _pid: Pid) -> Result<super::Memory, ProbeError> {
        Err(ProbeError::Unsupported)
    }

    fn activity(&self, _pids: &[Pid], window: Duration) -> ActivitySample {
        ActivitySample {
            window,
            per_pid: Vec::new(),
        }
    }

    fn identity(&self, _pid: Pid) -> IdentityRead {
        IdentityRead::Unknown(ProbeError::Unsupported.to_string())
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn boot_id(&self) -> Option<String> {
        None
    }
}
