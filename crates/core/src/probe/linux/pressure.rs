//! Memory pressure on Linux (`Probe::memory_pressure`): the kernel's pressure stall
//! information (PSI) in `/proc/pressure/memory`, or a cgroup's `memory.pressure`
//! (`Documentation/accounting/psi.rst`). Each line says what share of recent wall time tasks
//! spent stalled on memory — reclaim, refaults of pages evicted too early, swap-in:
//!
//! ```text
//! some avg10=0.00 avg60=0.00 avg300=0.00 total=24675570
//! full avg10=0.00 avg60=0.00 avg300=0.00 total=14194536
//! ```
//!
//! A kernel without PSI says so in one of two ways: no file (built without `CONFIG_PSI`, or
//! booted `psi=0` for `/proc/pressure`), or EOPNOTSUPP at the read (a cgroup's file when PSI
//! is off). Both are `ProbeError::Unsupported`: pressure rules never act there.

use std::path::Path;

use crate::model::rules::MemoryPressure;
use crate::probe::ProbeError;
use crate::trust::read::{regular, FileError};

/// The machine's own reading.
pub const HOST: &str = "/proc/pressure/memory";

/// `some avg10` at or above this many percent is pressure. Why 10: a tenth of the last ten
/// seconds with a task waiting on memory is a machine that is short of it, while one that
/// only keeps a full page cache reads 0.00 (reclaiming clean cache without waiting is no
/// stall).
pub const UNDER_AT: f64 = 10.0;

/// The most a pressure file is read of: two lines of about 70 bytes.
const LIMIT: u64 = 4096;

/// EOPNOTSUPP: the file is there and PSI is off.
const EOPNOTSUPP: i32 = 95;

/// One line of a pressure file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    /// Percent of the last 10 s stalled (a decaying average).
    pub avg10: f64,
    /// Percent of the last 60 s.
    pub avg60: f64,
    /// Percent of the last 300 s.
    pub avg300: f64,
    /// Microseconds stalled since boot (a cgroup's file: since the cgroup was made).
    pub total_us: u64,
}

/// A pressure file: `some` task stalled, and (where the kernel writes it) `full`: every
/// non-idle task stalled at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Psi {
    /// Time at least one task was stalled.
    pub some: Stall,
    /// Time every non-idle task was stalled at once; `None` where the file has no such line.
    pub full: Option<Stall>,
}

/// The machine's memory pressure, judged from `/proc/pressure/memory`.
pub(super) fn read() -> Result<MemoryPressure, ProbeError> {
    read_at(Path::new(HOST)).map(|psi| judge(&psi))
}

/// The pressure file at `path` (the host's, or a cgroup's `memory.pressure`), read without
/// blocking and bounded. `Unsupported` where PSI is absent or off.
pub fn read_at(path: &Path) -> Result<Psi, ProbeError> {
    let shown = path.display().to_string();
    let bytes = regular(path, LIMIT).map_err(|e| match e {
        FileError::Io(e) if no_psi(&e) => ProbeError::Unsupported,
        FileError::Io(e) => ProbeError::io(shown.clone(), e),
        other => ProbeError::malformed(shown.clone(), other.to_string()),
    })?;
    parse(&bytes).ok_or_else(|| ProbeError::malformed(shown, "not a PSI pressure file"))
}

/// Why a read says PSI is not there: no file, or a file the kernel refuses to fill.
fn no_psi(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(EOPNOTSUPP)
}

/// Under pressure when `some avg10` reaches [`UNDER_AT`]: the last ten seconds, so a rule
/// acts on pressure now and stops acting soon after it clears.
pub fn judge(psi: &Psi) -> MemoryPressure {
    MemoryPressure {
        under: psi.some.avg10 >= UNDER_AT,
        words: crate::words::psi_memory(psi.some.avg10),
    }
}

/// A pressure file's text; `None` when its `some` line is missing or any line it has is not
/// as the kernel writes it. Keys the kernel may add later are passed over.
pub fn parse(text: &[u8]) -> Option<Psi> {
    let text = std::str::from_utf8(text).ok()?;
    let (mut some, mut full) = (None, None);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (kind, rest) = line.split_once(' ')?;
        let slot = match kind {
            "some" => &mut some,
            "full" => &mut full,
            _ => return None,
        };
        if slot.replace(stall(rest)?).is_some() {
            return None;
        }
    }
    Some(Psi { some: some?, full })
}

/// `avg10=… avg60=… avg300=… total=…`, each exactly once.
fn stall(fields: &str) -> Option<Stall> {
    let (mut a10, mut a60, mut a300, mut total) = (None, None, None, None);
    for field in fields.split_whitespace() {
        let (key, value) = field.split_once('=')?;
        let seen = match key {
            "avg10" => a10.replace(percent(value)?).is_some(),
            "avg60" => a60.replace(percent(value)?).is_some(),
            "avg300" => a300.replace(percent(value)?).is_some(),
            "total" => total.replace(value.parse::<u64>().ok()?).is_some(),
            _ => false,
        };
        if seen {
            return None;
        }
    }
    Some(Stall {
        avg10: a10?,
        avg60: a60?,
        avg300: a300?,
        total_us: total?,
    })
}

/// A share as the kernel writes it (`12.34`): digits and one point, 0 to 100. Rust's own
/// parse would take `inf`, `NaN` and `-1`, none of which a kernel writes.
fn percent(value: &str) -> Option<f64> {
    let (whole, frac) = value.split_once('.').unwrap_or((value, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) {
        return None;
    }
    value.parse::<f64>().ok().filter(|p| *p <= 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Linux 6.x writes `/proc/pressure/memory` (`kernel/sched/psi.c`, `psi_show`).
    const REAL: &[u8] = b"some avg10=12.34 avg60=3.02 avg300=0.71 total=24675570
full avg10=4.00 avg60=1.00 avg300=0.20 total=14194536
";

    fn with_some_avg10(avg10: f64) -> Psi {
        let mut psi = parse(REAL).expect("real text parses");
        psi.some.avg10 = avg10;
        psi
    }

    #[test]
    fn a_real_file_parses_whole() {
        let psi = parse(REAL).expect("parses");
        assert_eq!(
            psi.some,
            Stall {
                avg10: 12.34,
                avg60: 3.02,
                avg300: 0.71,
                total_us: 24_675_570
            }
        );
        assert_eq!(psi.full.map(|f| f.total_us), Some(14_194_536));
    }

    /// Older kernels' files for other resources have no `full` line; new keys are passed over.
    #[test]
    fn a_some_line_alone_or_with_new_keys_parses() {
        let psi = parse(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 new=7\n").unwrap();
        assert_eq!(psi.full, None);
        assert_eq!(psi.some.avg10, 0.0);
    }

    #[test]
    fn malformed_text_is_no_reading() {
        for bad in [
            &b""[..],
            b"full avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=1.00 avg60=1.00 total=1\n",
            b"some avg10=1.00 avg10=2.00 avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=nan avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=-1.00 avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=100.01 avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=1.00 avg60=1.00 avg300=1.00 total=-1\n",
            b"some avg10 avg60=1.00 avg300=1.00 total=1\n",
            b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\nsome avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
            b"part avg10=1.00 avg60=1.00 avg300=1.00 total=1\n",
            b"some\xff avg10=1.00\n",
        ] {
            assert_eq!(parse(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    /// The threshold is inclusive, and only `some avg10` decides (a long-past stall in
    /// `avg300` is no pressure now).
    #[test]
    fn under_from_some_avg10_at_the_threshold() {
        assert!(judge(&with_some_avg10(UNDER_AT)).under);
        assert!(!judge(&with_some_avg10(9.99)).under);
        let mut past = with_some_avg10(0.0);
        past.some.avg300 = 90.0;
        assert!(!judge(&past).under);
    }

    #[test]
    fn the_reading_says_its_share_in_words() {
        assert_eq!(
            judge(&with_some_avg10(12.34)).words,
            "memory pressure: 12.3% of the last 10 s stalled on memory (PSI)"
        );
    }

    /// No file is a kernel without PSI, told apart from a failed read.
    #[test]
    fn a_missing_file_is_unsupported_and_a_folder_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read_at(&dir.path().join("memory.pressure")),
            Err(ProbeError::Unsupported)
        );
        assert!(matches!(
            read_at(dir.path()),
            Err(ProbeError::Malformed { .. })
        ));
    }
}
