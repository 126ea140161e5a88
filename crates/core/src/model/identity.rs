//! Who a process is: its pid and its start time, the one identity type of the whole engine.

use serde::{Deserialize, Serialize};

/// A process id as the kernel numbers it.
pub type Pid = u32;

/// A process's identity: its pid and the start time exactly as the kernel records it
/// (Linux: clock ticks since boot, `/proc/<pid>/stat` field 22; macOS: µs since the epoch).
/// A pid alone never identifies a process; the pair does (until an `exec`, which keeps both:
/// callers that act also compare the executable, `docs/design.md` §1). In JSON it is
/// `{"pid": N, "start_time": N}`, as the card's root, the snapshot's root and every outcome
/// have always written it.
///
/// A process in a container will also be known by its container (its id and start time):
/// that identity is a field beside this one, never a change of this one's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Identity {
    /// The process id; once the process is gone, the kernel may give it to another.
    pub pid: Pid,
    /// When the process started, the kernel's raw value (see above): what tells it from a
    /// later process given the same pid.
    pub start_time: u64,
}
