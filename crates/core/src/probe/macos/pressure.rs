//! Memory pressure on macOS (`Probe::memory_pressure`): `kern.memorystatus_vm_pressure_level`,
//! decoded by `probe/darwin/pressure.rs` (where the level's source is cited).
//!
//! NOT RUN: no Mac is available to this project; type-checked for `aarch64-apple-darwin`.

use std::ffi::c_void;

use crate::model::rules::MemoryPressure;
use crate::probe::darwin::pressure::{level, LEVEL_BYTES};
use crate::probe::ProbeError;

const NAME: &str = "kern.memorystatus_vm_pressure_level";

/// The machine's memory pressure level; `Unsupported` where the sysctl is not there (ENOENT),
/// an error where it answers something else than one known level.
pub(super) fn read() -> Result<MemoryPressure, ProbeError> {
    let mut value: u32 = 0;
    let mut len = LEVEL_BYTES;
    // SAFETY: the name is NUL-terminated; value is writable for len bytes (4, a u32).
    let rc = unsafe {
        libc::sysctlbyname(
            c"kern.memorystatus_vm_pressure_level".as_ptr(),
            (&mut value as *mut u32).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Err(ProbeError::Unsupported);
        }
        return Err(ProbeError::io(NAME, e));
    }
    if len != LEVEL_BYTES {
        return Err(ProbeError::malformed(
            NAME,
            format!("{len} bytes, not {LEVEL_BYTES}"),
        ));
    }
    level(value).ok_or_else(|| ProbeError::malformed(NAME, format!("unknown level {value}")))
}

/// The answer is a `uint32_t`, read into a `u32`.
const _: () = assert!(LEVEL_BYTES == std::mem::size_of::<u32>());
