//! macOS's memory pressure level as `sysctl kern.memorystatus_vm_pressure_level` answers it.
//!
//! Source: XNU `bsd/kern/kern_memorystatus_notify.c` (earlier `kern_memorystatus.c`),
//! `sysctl_memorystatus_vm_pressure_level`: a `uint32_t`, the kernel's level converted by
//! `convert_internal_pressure_level_to_dispatch_level` to the dispatch levels of
//! `bsd/sys/event.h` (`NOTE_MEMORYSTATUS_PRESSURE_NORMAL` 0x1, `_WARN` 0x2, `_CRITICAL` 0x4) —
//! what `DISPATCH_MEMORYPRESSURE_*` and Activity Monitor's graph show. On macOS any user may
//! read it (the privilege check is for other Apple platforms only).

use crate::model::rules::MemoryPressure;

/// The size of the sysctl's answer: a `uint32_t`, `"I"` in its declaration.
pub const LEVEL_BYTES: usize = 4;
/// `NOTE_MEMORYSTATUS_PRESSURE_NORMAL`.
pub const NORMAL: u32 = 0x1;
/// `NOTE_MEMORYSTATUS_PRESSURE_WARN`: the system is compressing and swapping.
pub const WARN: u32 = 0x2;
/// `NOTE_MEMORYSTATUS_PRESSURE_CRITICAL`: the system is about to end processes for memory.
pub const CRITICAL: u32 = 0x4;

/// The level as a reading; `None` for a value the kernel does not write. Under at warn or
/// worse: at warn macOS itself asks applications to give memory back, the moment a pressure
/// rule is for.
pub fn level(raw: u32) -> Option<MemoryPressure> {
    let (under, name) = match raw {
        NORMAL => (false, "normal"),
        WARN => (true, "warn"),
        CRITICAL => (true, "critical"),
        _ => return None,
    };
    Some(MemoryPressure {
        under,
        words: crate::words::pressure_level(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_at_warn_or_worse_and_only_known_levels_read() {
        assert_eq!(level(NORMAL).map(|p| p.under), Some(false));
        assert_eq!(level(WARN).map(|p| p.under), Some(true));
        assert_eq!(level(CRITICAL).map(|p| p.under), Some(true));
        for unknown in [0, 3, 8, u32::MAX] {
            assert_eq!(level(unknown), None, "{unknown}");
        }
        assert_eq!(
            level(WARN).unwrap().words,
            "memory pressure: warn (macOS's memory pressure level)"
        );
    }
}
