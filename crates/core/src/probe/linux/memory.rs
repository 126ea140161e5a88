//! One process's memory (`Probe::memory`): its proportional set size from
//! `/proc/<pid>/smaps_rollup`, else its resident set size from `/proc/<pid>/statm`.
//!
//! Why the fallback: `smaps_rollup` answers only a reader allowed to ptrace-read the process
//! (another user's process, a non-dumpable one: EACCES) and exists since Linux 4.14, while
//! `statm` is readable by anyone. A figure read there is labelled `Resident`, never passed off
//! as proportional.
//!
//! Cost: to sum `Pss` the kernel walks the process's page tables under its mmap lock, so the
//! read takes time in proportion to what the process maps (`bench/scan.sh` measures it for a
//! scan). It is made only for the members of the resources a scan shows.

use std::path::Path;

use super::read_small;
use crate::probe::{Memory, MemoryKind, Pid, ProbeError};

/// `pid`'s memory, or why it could not be read (the process gone included).
pub(super) fn read(pid: Pid) -> Result<Memory, ProbeError> {
    let rollup = format!("/proc/{pid}/smaps_rollup");
    let refused = match read_small(Path::new(&rollup)) {
        Ok(text) => match parse_pss(&text) {
            Some(bytes) => {
                return Ok(Memory {
                    bytes,
                    kind: MemoryKind::Proportional,
                })
            }
            // A kernel thread, or a zombie: an empty file, no mappings to sum.
            None => ProbeError::malformed(rollup, "no Pss line"),
        },
        Err(e) => ProbeError::read(rollup, e),
    };
    let statm = format!("/proc/{pid}/statm");
    let page = rustix::param::page_size() as u64;
    let neither = |fallback| ProbeError::Neither {
        first: Box::new(refused.clone()),
        fallback: Box::new(fallback),
    };
    match read_small(Path::new(&statm)) {
        Ok(text) => parse_statm_resident(&text)
            .map(|pages| Memory {
                bytes: pages.saturating_mul(page),
                kind: MemoryKind::Resident,
            })
            .ok_or_else(|| neither(ProbeError::malformed(statm, "unexpected format"))),
        Err(e) => Err(neither(ProbeError::read(statm, e))),
    }
}

/// The `Pss:` line of `smaps_rollup`, in bytes (the kernel writes kB, of 1024 bytes). Only
/// that line: `Pss_Anon:`, `Pss_File:`, `Pss_Dirty:` and the rest are parts of it.
pub(crate) fn parse_pss(text: &[u8]) -> Option<u64> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let rest = line.strip_prefix(b"Pss:")?;
        let rest = std::str::from_utf8(rest).ok()?;
        let mut words = rest.split_whitespace();
        let kb: u64 = words.next()?.parse().ok()?;
        (words.next()? == "kB").then(|| kb.saturating_mul(1024))
    })
}

/// The resident pages of `statm`: its second number (`size resident shared text lib data dt`).
pub(crate) fn parse_statm_resident(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text)
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Linux 6.x writes it (`fs/proc/task_mmu.c`, `show_smaps_rollup`).
    const ROLLUP: &[u8] =
        b"562456dec000-7ffd951b3000 ---p 00000000 00:00 0                          [rollup]
Rss:                1692 kB
Pss:                 564 kB
Pss_Dirty:           116 kB
Pss_Anon:            116 kB
Pss_File:            448 kB
Pss_Shmem:             0 kB
Shared_Clean:       1484 kB
Private_Dirty:       116 kB
Swap:                  0 kB
SwapPss:               0 kB
";

    #[test]
    fn the_pss_line_gives_bytes_and_its_parts_are_not_taken_for_it() {
        assert_eq!(parse_pss(ROLLUP), Some(564 * 1024));
        // A kernel before 5.x: no Pss_* parts, the same Pss line.
        assert_eq!(parse_pss(b"Rss: 10 kB\nPss:    7 kB\n"), Some(7 * 1024));
        // Parts alone are no answer.
        assert_eq!(parse_pss(b"Pss_Anon: 116 kB\nSwapPss: 0 kB\n"), None);
    }

    #[test]
    fn a_rollup_without_a_whole_pss_line_gives_nothing() {
        assert_eq!(parse_pss(b""), None, "a kernel thread's or a zombie's");
        assert_eq!(parse_pss(b"Pss: 12\n"), None, "no unit");
        assert_eq!(parse_pss(b"Pss: 12 MB\n"), None, "not the kernel's unit");
        assert_eq!(parse_pss(b"Pss: lots kB\n"), None);
        assert_eq!(parse_pss(b"Pss: 12 k"), None, "cut short");
    }

    #[test]
    fn statm_gives_the_resident_pages() {
        assert_eq!(parse_statm_resident(b"765 440 412 5 0 123 0\n"), Some(440));
        assert_eq!(parse_statm_resident(b"765\n"), None);
        assert_eq!(parse_statm_resident(b"765 x 412\n"), None);
    }

    /// This process's own figure is proportional: it may read its own smaps_rollup.
    #[test]
    fn this_process_reads_as_proportional() {
        let me = read(std::process::id()).expect("its own memory reads");
        assert_eq!(me.kind, MemoryKind::Proportional);
        assert!(me.bytes > 0, "{me:?}");
    }

    #[test]
    fn a_pid_that_is_gone_is_an_error_naming_both_files() {
        // Above the kernel's largest pid_max (4194304): never a process.
        let Err(ProbeError::Neither { first, fallback }) = read(5_000_000) else {
            panic!("a pid that is gone reads as neither file");
        };
        let read_of = |e: &ProbeError, file: &str| matches!(e, ProbeError::Read { path, .. } if path.ends_with(file));
        assert!(read_of(&first, "/smaps_rollup"), "{first}");
        assert!(read_of(&fallback, "/statm"), "{fallback}");
    }
}
