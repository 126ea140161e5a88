//! Waiting for signalled members to exit, bounded by the grace period and woken by the exits
//! themselves, never by a busy loop (docs/design.md §3.4): Linux polls pidfds (`linux.rs`,
//! beside the pidfd pin), macOS waits on a kqueue `EVFILT_PROC`/`NOTE_EXIT` (`macos.rs`,
//! beside the audit token). A stop's waits also wake every few milliseconds to glance for
//! newcomers ([`ExitWaiter::wait_glancing`]). The backend is chosen in [`system_waiter`].

use std::time::Duration;

use super::Expected;

/// Waits until each of `members` has exited (a zombie counts) or `timeout` passes; returns,
/// for each, whether it had exited.
pub trait ExitWaiter {
    /// Waits for `members` as the trait says: one `bool` each, in their order, `true` when it
    /// exited.
    fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool>;

    /// [`wait_for_exit`](ExitWaiter::wait_for_exit), calling `glance` about every `every`
    /// while it waits, and once at its end: a stop looks for newcomers all through a wait, or
    /// one born and gone within it is never seen (`stop/newcomers.rs`). A glance that returns
    /// `false` ends the wait at once (an interruption: `stop/interrupt.rs`). The default
    /// glances once, after the wait.
    fn wait_glancing(
        &self,
        members: &[Expected],
        timeout: Duration,
        every: Duration,
        glance: &mut dyn FnMut() -> bool,
    ) -> Vec<bool> {
        let _ = every;
        let exited = self.wait_for_exit(members, timeout);
        glance();
        exited
    }
}

/// The waiter for the OS Pier was built for. The one place a backend is chosen.
pub fn system_waiter() -> Box<dyn ExitWaiter + Send + Sync> {
    #[cfg(target_os = "linux")]
    {
        Box::new(super::linux::PidfdWaiter)
    }
    #[cfg(target_os = "macos")]
    {
        Box::<super::macos::KqueueWaiter>::default()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Box::new(Never)
    }
}

/// Every other OS: nothing is known to exit.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
struct Never;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
impl ExitWaiter for Never {
    fn wait_for_exit(&self, members: &[Expected], _timeout: Duration) -> Vec<bool> {
        vec![false; members.len()]
    }
}
