//! Interruption is a state, not a loss (docs/design.md §3.10): SIGINT, SIGTERM or SIGHUP during
//! a stop only raise a flag, and the stop reads it at its seams.
//!
//! - Before the "signals may follow" mark is on disk, the stop is abandoned: nothing was sent,
//!   and its snapshot says so (it is never listed as a stop).
//! - After it, no further level is signalled, the waits end early, and the outcome recorded is
//!   what is true then (a `partially_stopped` is a true result too).
//!
//! The handler does one thing a signal handler may do: store the signal's number in an atomic.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that interrupt a stop: Ctrl-C, a polite kill, a closed terminal.
const CAUGHT: [(i32, &str); 3] = [
    (rustix::process::Signal::INT.as_raw(), "SIGINT"),
    (rustix::process::Signal::TERM.as_raw(), "SIGTERM"),
    (rustix::process::Signal::HUP.as_raw(), "SIGHUP"),
];

/// Whether, and by which signal, the stop was asked to end. The first signal is kept.
#[derive(Debug, Default)]
pub struct Interrupt {
    signal: AtomicI32,
}

/// The process's own flag, raised by the handlers [`catch`] installs.
pub static PROCESS: Interrupt = Interrupt::new();

impl Interrupt {
    /// A flag nobody has raised.
    pub const fn new() -> Self {
        Self {
            signal: AtomicI32::new(0),
        }
    }

    /// Raises the flag for `signal` (a raw signal number), unless one was raised already.
    pub fn raise(&self, signal: i32) {
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The signal's name (`"SIGINT"`) once the flag is up.
    pub fn raised(&self) -> Option<&'static str> {
        let raw = self.signal.load(Ordering::SeqCst);
        if raw == 0 {
            return None;
        }
        Some(
            CAUGHT
                .iter()
                .find(|(n, _)| *n == raw)
                .map_or("a signal", |(_, name)| name),
        )
    }
}

/// The number of a signal [`Interrupt::raised`] named (`"SIGINT"` → 2), for an exit code of
/// 128 + it.
pub fn number_of(name: &str) -> Option<i32> {
    CAUGHT.iter().find(|(_, n)| *n == name).map(|(raw, _)| *raw)
}

/// A signal whose handler could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("{name} could not be caught: {error}")]
pub struct Uncaught {
    /// The signal (`"SIGINT"`).
    pub name: &'static str,
    /// Why, in the system's words.
    pub error: std::io::Error,
}

/// Installs the handlers that raise [`PROCESS`] on SIGINT, SIGTERM and SIGHUP, in place of
/// dying. Why all three: Ctrl-C, `kill`, and a terminal window closed mid-stop must all leave a
/// true record behind.
pub fn catch() -> Result<(), Uncaught> {
    for (number, name) in CAUGHT {
        // SAFETY: the action only stores into an atomic, which is async-signal-safe; it takes
        // no lock and allocates nothing.
        let registered =
            unsafe { signal_hook_registry::register(number, move || PROCESS.raise(number)) };
        registered.map_err(|error| Uncaught { name, error })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_kept_and_named() {
        let flag = Interrupt::new();
        assert_eq!(flag.raised(), None);
        flag.raise(rustix::process::Signal::HUP.as_raw());
        flag.raise(rustix::process::Signal::INT.as_raw());
        assert_eq!(flag.raised(), Some("SIGHUP"));
        assert_eq!(
            flag.raised().and_then(number_of),
            Some(rustix::process::Signal::HUP.as_raw())
        );
    }
}
