//! Every number Pier's command lines take, parsed into its real range: one small pure parser
//! per kind of number, in the shape clap's `value_parser` takes (`fn(&str) -> Result<T,
//! BadNumber>`), so `pier` and `pier-app` refuse a value out of range before anything is read,
//! locked or written, in one sentence that names the flag, the value as given and the range
//! ([`BadNumber`]'s, made in one place).
//!
//! Why bounds and not just "a number": `--grace 1e300` used to panic in
//! `Duration::from_secs_f64`, `pier scan --sample-ms 99999999999` sampled for three years in
//! silence, and `pier stop --sample-ms 2500` could only ever be refused at its deadline, after
//! writing a snapshot. A range keeps each number to what it means.
//!
//! | flag | command | range |
//! | --- | --- | --- |
//! | `--grace SECS` | `pier stop` | 0 to 600 s ([`grace`]) |
//! | `--sample-ms N` | `pier stop` | 1 to 1000 ms ([`stop_sample`]) |
//! | `--sample-ms N` | `pier scan`, `pier app` | 0 to 10000 ms ([`scan_sample`]) |
//! | `--cpu-threshold PCT` | `pier scan`, `pier stop` | 0 to 10000 % of one core ([`cpu_percent`]) |
//! | `--io-threshold BYTES` | `pier scan`, `pier stop` | 0 to 10^12 B/s ([`io_bytes_per_second`]) |
//! | `--refresh SECS` | `pier app` | 0 (off), or 1 to 86400 s ([`refresh`]) |
//! | `--wait SECS` | `pier restart` | 0 to 3600 s ([`restart_wait`]) |
//! | `--every SECS` | `pier watch` | 1 to 60 s ([`watch_every`]) |
//! | `--settle SECS` | `pier watch` | 1 to 3600 s ([`settle`]) |
//! | `--rescans N` | `pier watch` | 1 to 1000000 ([`rescans`]) |
//! | `--within DURATION` | `pier stop --when-safe` | 1 min to 7 days ([`within`]) |
//! | `--max-stops N` | `pier mcp` | 1 to 1000 ([`max_stops`]) |

use std::time::Duration;

/// The most `--grace` may give each level of a tree, in seconds. Why ten minutes: a stop holds
/// its resource's lock through every grace wait, and the app's Quit waits for actions in flight;
/// the slowest shutdown seen in testing (uvicorn's supervisor) needs 12 s.
pub const GRACE_MAX_SECS: u64 = 600;

/// The longest activity sample of a scan, in milliseconds. Why ten seconds: a scan holds the
/// terminal (or the app's refresh) for the whole window, and 500 ms already tells a busy
/// server from an idle one.
pub const SCAN_SAMPLE_MAX_MS: u64 = 10_000;

/// The longest activity sample of a stop, in milliseconds. Why one second: check (b) runs
/// inside the 2 s allowed from check (a) to the first signal (`docs/design.md` §3.3), beside
/// three network checks and a tree check; a longer sample leaves them too little room, and one
/// of 2 s or more could only ever be refused at the deadline, with a snapshot already written.
pub const STOP_SAMPLE_MAX_MS: u64 = 1_000;

/// The highest `--cpu-threshold`, in percent of one core. Why: a tree cannot be busier than
/// the machine's cores, and a hundred cores is more than a dev machine has; above it the rule
/// would be switched off in silence (a scan's `--sample-ms 0` says so instead).
pub const CPU_MAX_PERCENT: f64 = 10_000.0;

/// The highest `--io-threshold`, in bytes per second: 1 TB/s, more than any disk does, for the
/// same reason as [`CPU_MAX_PERCENT`].
pub const IO_MAX_BYTES_PER_SECOND: f64 = 1e12;

/// The longest `--refresh`, in seconds: a day.
pub const REFRESH_MAX_SECS: u64 = 86_400;

/// The longest `pier restart --wait`, in seconds: an hour (docs/design.md §4.3).
pub const RESTART_WAIT_MAX_SECS: u64 = 3_600;

/// The longest time between two of `pier watch`'s rescans, in seconds: the idle clock counts
/// no longer interval (`idle::Bounds::longest`).
pub const WATCH_EVERY_MAX_SECS: u64 = 60;

/// The longest settle an armed stop waits green, in seconds: an hour.
pub const SETTLE_MAX_SECS: u64 = 3_600;
/// The shortest `pier stop --when-safe --within`, in seconds: a minute. Why: an arm fires only
/// after its card stayed green for a settle, at a rescan; a shorter expiry could lapse before
/// any rescan saw it.
pub const WITHIN_MIN_SECS: u64 = 60;

/// The longest `--within`, in seconds: a week. Why: an arm is a person's request about one
/// running process; a longer one outlives what they remember asking.
pub const WITHIN_MAX_SECS: u64 = 7 * 86_400;

/// The most `pier mcp --max-stops` allows. Why a thousand: the cap is a brake on an agent
/// that loops; a session that needs more is a person's cleanup, which `pier stop` does.
pub const MAX_STOPS_MAX: usize = 1_000;

/// Which number a command line refused: each names its flag and its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// `pier stop --grace SECS` ([`grace`]).
    Grace,
    /// `pier stop --sample-ms N` ([`stop_sample`]).
    StopSample,
    /// `pier scan --sample-ms N`, `pier app --sample-ms N` ([`scan_sample`]).
    ScanSample,
    /// `--cpu-threshold PCT` ([`cpu_percent`]).
    CpuPercent,
    /// `--io-threshold BYTES` ([`io_bytes_per_second`]).
    IoBytesPerSecond,
    /// `pier app --refresh SECS` ([`refresh`]).
    Refresh,
    /// `pier restart --wait SECS` ([`restart_wait`]).
    RestartWait,
    /// `pier watch --every SECS` ([`watch_every`]).
    WatchEvery,
    /// `pier watch --settle SECS` ([`settle`]).
    Settle,
    /// `pier watch --rescans N` ([`rescans`]).
    Rescans,
    /// `pier stop --when-safe --within DURATION` ([`within`]).
    Within,
    /// `pier mcp --max-stops N` ([`max_stops`]).
    MaxStops,
}

impl Number {
    /// The flag that takes it.
    pub fn flag(self) -> &'static str {
        match self {
            Self::Grace => "--grace",
            Self::StopSample | Self::ScanSample => "--sample-ms",
            Self::CpuPercent => "--cpu-threshold",
            Self::IoBytesPerSecond => "--io-threshold",
            Self::Refresh => "--refresh",
            Self::RestartWait => "--wait",
            Self::WatchEvery => "--every",
            Self::Settle => "--settle",
            Self::Rescans => "--rescans",
            Self::Within => "--within",
            Self::MaxStops => "--max-stops",
        }
    }

    /// The refusal of `text` as this number.
    fn refused(self, text: &str) -> BadNumber {
        BadNumber {
            number: self,
            text: text.to_owned(),
        }
    }

    /// What it must be, in words.
    fn wanted(self) -> String {
        match self {
            Self::Grace => format!(
                "must be a number of seconds from 0 to {GRACE_MAX_SECS}, the time each level of \
                 the tree gets to exit after its signal"
            ),
            Self::StopSample => format!(
                "a stop samples activity for 1 to {STOP_SAMPLE_MAX_MS} ms, because it always \
                 samples and every check from the first one to the first signal must fit in 2 s"
            ),
            Self::ScanSample => format!(
                "must be a whole number of milliseconds from 0 (not sampled) to \
                 {SCAN_SAMPLE_MAX_MS}"
            ),
            Self::CpuPercent => {
                "must be a percentage of one core from 0 to 10000 (a hundred cores)".to_owned()
            }
            Self::IoBytesPerSecond => {
                "must be a number of bytes per second from 0 to 1000000000000 (1 TB/s)".to_owned()
            }
            Self::Refresh => format!(
                "must be 0 (refresh only when asked) or a number of seconds from 1 to \
                 {REFRESH_MAX_SECS} (a day)"
            ),
            Self::RestartWait => {
                format!("must be a number of seconds from 0 to {RESTART_WAIT_MAX_SECS} (an hour)")
            }
            Self::WatchEvery => format!(
                "must be a number of seconds from 1 to {WATCH_EVERY_MAX_SECS} (the idle clock \
                 counts no interval longer than that)"
            ),
            Self::Settle => {
                format!("must be a number of seconds from 1 to {SETTLE_MAX_SECS} (an hour)")
            }
            Self::Rescans => "must be a whole number of rescans from 1 to 1000000".to_owned(),
            Self::Within => "must be a duration from 1 min to 7 days, such as 30min, 8h or 2days \
                             (a plain number is seconds), the time an armed stop waits to be \
                             safe"
                .to_owned(),
            Self::MaxStops => format!(
                "must be a whole number of stops from 1 to {MAX_STOPS_MAX}, the most one agent's \
                 session may stop"
            ),
        }
    }
}

/// A value a command line's number refused, as given: the sentence names the flag, the value
/// and what it must be (`--grace 1e300: must be a number of seconds from 0 to 600, …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", refuse(.number.flag(), .text, &.number.wanted()))]
pub struct BadNumber {
    /// Which number it was.
    pub number: Number,
    /// The value as typed.
    pub text: String,
}

/// `pier stop --grace SECS`: how long each level of a tree gets to exit after its signal.
pub fn grace(text: &str) -> Result<Duration, BadNumber> {
    seconds(text, GRACE_MAX_SECS).ok_or_else(|| Number::Grace.refused(text))
}

/// `pier stop --sample-ms N`: a stop always samples (check (b) is what sees a busy server),
/// and the sample must fit in the 2 s deadline with the other checks ([`STOP_SAMPLE_MAX_MS`]).
pub fn stop_sample(text: &str) -> Result<Duration, BadNumber> {
    millis(text, 1, STOP_SAMPLE_MAX_MS).ok_or_else(|| Number::StopSample.refused(text))
}

/// `pier scan --sample-ms N` and `pier app --sample-ms N`: 0 means "not sampled".
pub fn scan_sample(text: &str) -> Result<Duration, BadNumber> {
    millis(text, 0, SCAN_SAMPLE_MAX_MS).ok_or_else(|| Number::ScanSample.refused(text))
}

/// `--cpu-threshold PCT`: busy above PCT percent of one core.
pub fn cpu_percent(text: &str) -> Result<f64, BadNumber> {
    decimal(text, CPU_MAX_PERCENT).ok_or_else(|| Number::CpuPercent.refused(text))
}

/// `--io-threshold BYTES`: busy above BYTES per second of disk I/O.
pub fn io_bytes_per_second(text: &str) -> Result<f64, BadNumber> {
    decimal(text, IO_MAX_BYTES_PER_SECOND).ok_or_else(|| Number::IoBytesPerSecond.refused(text))
}

/// `pier app --refresh SECS`: 0 turns periodic scans off. Why at least 1 s otherwise: each
/// refresh walks the whole process table and samples for its window, and a shorter period
/// would have the app scanning without a pause.
pub fn refresh(text: &str) -> Result<Duration, BadNumber> {
    // Judged as typed, not as a duration: 1e-10 s would round to 0, and 1e-400 parses as 0,
    // and 0 means "off". A zero must be typed as one: no digit but 0 before any exponent.
    let typed_zero = !text
        .split(['e', 'E'])
        .next()
        .unwrap_or_default()
        .chars()
        .any(|c| matches!(c, '1'..='9'));
    decimal(text, REFRESH_MAX_SECS as f64)
        .filter(|&v| (v == 0.0 && typed_zero) || v >= 1.0)
        .and_then(|v| Duration::try_from_secs_f64(v).ok())
        .ok_or_else(|| Number::Refresh.refused(text))
}

/// `pier restart --wait SECS`: how long to wait for the server's ports to listen again.
pub fn restart_wait(text: &str) -> Result<Duration, BadNumber> {
    seconds(text, RESTART_WAIT_MAX_SECS).ok_or_else(|| Number::RestartWait.refused(text))
}

/// `pier watch --every SECS`: the time between two rescans ([`WATCH_EVERY_MAX_SECS`]).
pub fn watch_every(text: &str) -> Result<Duration, BadNumber> {
    seconds(text, WATCH_EVERY_MAX_SECS)
        .filter(|d| *d >= Duration::from_secs(1))
        .ok_or_else(|| Number::WatchEvery.refused(text))
}

/// `pier watch --settle SECS`: how long a card stays green before its armed stop fires.
pub fn settle(text: &str) -> Result<Duration, BadNumber> {
    seconds(text, SETTLE_MAX_SECS)
        .filter(|d| *d >= Duration::from_secs(1))
        .ok_or_else(|| Number::Settle.refused(text))
}

/// `pier watch --rescans N`: how many rescans before it ends.
pub fn rescans(text: &str) -> Result<u64, BadNumber> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (1..=1_000_000).contains(n))
        .ok_or_else(|| Number::Rescans.refused(text))
}

/// `pier stop --when-safe --within DURATION`: how long an armed stop waits to be safe before
/// it lapses unfired ([`WITHIN_MIN_SECS`] to [`WITHIN_MAX_SECS`]).
pub fn within(text: &str) -> Result<Duration, BadNumber> {
    let d = match decimal(text, WITHIN_MAX_SECS as f64) {
        Some(v) => Duration::try_from_secs_f64(v).ok(),
        None => humantime::parse_duration(text.trim()).ok(),
    };
    d.filter(|d| (WITHIN_MIN_SECS..=WITHIN_MAX_SECS).contains(&d.as_secs()))
        .filter(|d| d.as_secs() < WITHIN_MAX_SECS || d.subsec_nanos() == 0)
        .ok_or_else(|| Number::Within.refused(text))
}

/// `pier mcp --max-stops N`: the most resources one agent's session may stop.
pub fn max_stops(text: &str) -> Result<usize, BadNumber> {
    text.parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_STOPS_MAX).contains(n))
        .ok_or_else(|| Number::MaxStops.refused(text))
}

/// A decimal number from 0 to `max` (Rust's float syntax: `5`, `0.5`, `1e3`); never NaN or
/// infinite, and never `-0` (read as 0).
fn decimal(text: &str, max: f64) -> Option<f64> {
    let v: f64 = text.parse().ok()?;
    (v.is_finite() && (0.0..=max).contains(&v)).then_some(v + 0.0)
}

/// A number of seconds from 0 to `max` as a duration, which cannot overflow once bounded.
fn seconds(text: &str, max: u64) -> Option<Duration> {
    decimal(text, max as f64).and_then(|v| Duration::try_from_secs_f64(v).ok())
}

/// A whole number of milliseconds from `min` to `max`.
fn millis(text: &str, min: u64, max: u64) -> Option<Duration> {
    let n: u64 = text.parse().ok()?;
    (min..=max).contains(&n).then(|| Duration::from_millis(n))
}

/// The sentence for a refused value: the flag, the value as given (quoted when it would not
/// read plainly: empty, spaced, or holding control characters) and what it must be.
fn refuse(flag: &str, text: &str, wanted: &str) -> String {
    let plain = !text.is_empty()
        && !text.chars().any(char::is_whitespace)
        && matches!(
            crate::words::for_terminal(text),
            std::borrow::Cow::Borrowed(_)
        );
    if plain {
        format!("{flag} {text}: {wanted}")
    } else {
        // Quoted, and escaped as every shown text is: a typed bidi override stays visible.
        format!("{flag} \"{}\": {wanted}", crate::words::for_terminal(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_rescans_every_1_to_60_s_and_settles_1_s_to_an_hour() {
        assert_eq!(watch_every("30"), Ok(Duration::from_secs(30)));
        assert_eq!(watch_every("1"), Ok(Duration::from_secs(1)));
        for bad in ["0", "0.5", "61", "-1", "x", "1e300"] {
            assert!(watch_every(bad).is_err(), "{bad}");
        }
        assert_eq!(settle("60"), Ok(Duration::from_secs(60)));
        assert_eq!(rescans("3"), Ok(3));
        assert_eq!(
            rescans("0").unwrap_err().to_string(),
            "--rescans 0: must be a whole number of rescans from 1 to 1000000"
        );
        assert!(settle("0").is_err() && settle("3601").is_err());
        assert_eq!(
            watch_every("90").unwrap_err().to_string(),
            "--every 90: must be a number of seconds from 1 to 60 (the idle clock counts no \
             interval longer than that)"
        );
    }

    #[test]
    fn an_agents_session_stops_1_to_1000() {
        assert_eq!(max_stops("10"), Ok(10));
        assert_eq!(max_stops("1000"), Ok(1000));
        for bad in ["0", "1001", "-1", "1.5", "x", ""] {
            assert!(max_stops(bad).is_err(), "{bad}");
        }
        assert_eq!(
            max_stops("0").unwrap_err().to_string(),
            "--max-stops 0: must be a whole number of stops from 1 to 1000, the most one \
             agent's session may stop"
        );
    }

    #[test]
    fn an_arms_expiry_is_a_minute_to_a_week_with_units_or_plain_seconds() {
        assert_eq!(within("8h"), Ok(Duration::from_secs(8 * 3600)));
        assert_eq!(within("30min"), Ok(Duration::from_secs(1800)));
        assert_eq!(within("60"), Ok(Duration::from_secs(60)));
        assert_eq!(within("7days"), Ok(Duration::from_secs(WITHIN_MAX_SECS)));
        for bad in ["59s", "59", "8days", "1e300", "-1h", "soon", "NaN"] {
            let e = within(bad).unwrap_err();
            assert_eq!(e.number, Number::Within, "{bad}");
            assert!(e.to_string().starts_with(&format!("--within {bad}")), "{e}");
        }
    }

    /// Found by trying: `pier stop --grace 1e300 ID` panicked with a stack trace (exit 101).
    #[test]
    fn a_grace_is_zero_to_ten_minutes_and_never_overflows() {
        assert_eq!(grace("5"), Ok(Duration::from_secs(5)));
        assert_eq!(grace("0"), Ok(Duration::ZERO));
        assert_eq!(grace("-0"), Ok(Duration::ZERO));
        assert_eq!(grace("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(grace("600"), Ok(Duration::from_secs(600)));
        for bad in [
            "1e300", "600.001", "-1", "NaN", "inf", "-inf", "", "5s", " 5", "0x10",
        ] {
            let why = grace(bad).unwrap_err().to_string();
            assert!(why.starts_with("--grace "), "{why}");
            assert!(why.contains("from 0 to 600"), "{why}");
        }
        assert_eq!(
            grace("1e300").unwrap_err().to_string(),
            "--grace 1e300: must be a number of seconds from 0 to 600, the time each level of \
             the tree gets to exit after its signal"
        );
    }

    /// Found by trying: `pier stop --sample-ms 2500 ID` wrote a snapshot and was then always
    /// refused at the 2 s deadline.
    #[test]
    fn a_stops_sample_leaves_room_for_the_other_checks_in_its_deadline() {
        assert_eq!(stop_sample("1"), Ok(Duration::from_millis(1)));
        assert_eq!(stop_sample("1000"), Ok(Duration::from_millis(1000)));
        for bad in ["0", "1001", "2500", "-5", "1.5", "1e3"] {
            assert!(stop_sample(bad).is_err(), "{bad}");
        }
        assert_eq!(
            stop_sample("2500").unwrap_err().to_string(),
            "--sample-ms 2500: a stop samples activity for 1 to 1000 ms, because it always \
             samples and every check from the first one to the first signal must fit in 2 s"
        );
        let deadline = crate::stop::StopOptions::default().deadline;
        assert!(
            Duration::from_millis(STOP_SAMPLE_MAX_MS) * 2 <= deadline,
            "the longest sample leaves at least half the deadline to the other checks"
        );
    }

    /// Found by trying: `pier scan --sample-ms 99999999999` hung in silence.
    #[test]
    fn a_scans_sample_is_none_to_ten_seconds() {
        assert_eq!(scan_sample("0"), Ok(Duration::ZERO));
        assert_eq!(scan_sample("10000"), Ok(Duration::from_secs(10)));
        for bad in [
            "10001",
            "99999999999",
            "18446744073709551616",
            "-1",
            "abc",
            "",
        ] {
            assert!(scan_sample(bad).is_err(), "{bad}");
        }
        assert_eq!(
            scan_sample("").unwrap_err().to_string(),
            "--sample-ms \"\": must be a whole number of milliseconds from 0 (not sampled) to \
             10000"
        );
    }

    #[test]
    fn thresholds_are_finite_from_zero_to_more_than_any_machine() {
        assert_eq!(cpu_percent("5"), Ok(5.0));
        assert_eq!(cpu_percent("0"), Ok(0.0));
        assert_eq!(cpu_percent("10000"), Ok(10_000.0));
        assert_eq!(io_bytes_per_second("1e6"), Ok(1e6));
        assert_eq!(io_bytes_per_second("1e12"), Ok(1e12));
        for bad in ["-1", "NaN", "inf", "1e400", "10000.5", "five"] {
            assert!(cpu_percent(bad).is_err(), "{bad}");
        }
        for bad in ["-1", "NaN", "inf", "1.1e12"] {
            assert!(io_bytes_per_second(bad).is_err(), "{bad}");
        }
    }

    /// Found by trying: `pier-app --refresh 1e20` said the value must be "zero or more".
    #[test]
    fn a_refresh_is_off_or_one_second_to_a_day() {
        assert_eq!(refresh("0"), Ok(Duration::ZERO));
        assert_eq!(refresh("1"), Ok(Duration::from_secs(1)));
        assert_eq!(refresh("30"), Ok(Duration::from_secs(30)));
        assert_eq!(refresh("86400"), Ok(Duration::from_secs(86_400)));
        assert_eq!(refresh("0.0e5"), Ok(Duration::ZERO));
        for bad in ["0.5", "1e-10", "1e-400", "1e20", "86401", "-1", "NaN"] {
            assert!(refresh(bad).is_err(), "{bad}: not silently off");
        }
        assert_eq!(
            refresh("1e20").unwrap_err().to_string(),
            "--refresh 1e20: must be 0 (refresh only when asked) or a number of seconds from 1 \
             to 86400 (a day)"
        );
    }

    #[test]
    fn a_restarts_wait_is_zero_to_an_hour() {
        assert_eq!(restart_wait("15"), Ok(Duration::from_secs(15)));
        assert_eq!(restart_wait("3600"), Ok(Duration::from_secs(3600)));
        for bad in ["3600.5", "1e300", "-1", "inf"] {
            assert!(restart_wait(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_value_that_would_not_read_plainly_is_quoted() {
        assert_eq!(
            refuse("--grace", "1 2", "x"),
            "--grace \"1 2\": x",
            "a space would read as two values"
        );
        assert_eq!(
            refuse("--grace", "\u{1b}[31m", "x"),
            "--grace \"\\e[31m\": x"
        );
        assert_eq!(
            refuse("--grace", "5\u{202e}", "x"),
            "--grace \"5\\u{202e}\": x",
            "a bidi override stays visible"
        );
        assert_eq!(refuse("--grace", "abc", "x"), "--grace abc: x");
    }
}
