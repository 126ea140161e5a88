//! `pier doctor`'s report: each check of the self-test, whether a stop needs it, and what it
//! found (the `pier doctor --json` document, docs/doctor-json.md).

use serde::{Deserialize, Serialize};

/// The version of the `pier doctor --json` document.
pub const DOCTOR_SCHEMA: u32 = 1;

/// What one check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It works.
    Ok,
    /// It does not work.
    Failed,
    /// It could not be tried, because a check it depends on failed.
    Skipped,
}

/// One check of the self-test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// A short name: `listener`, `argv`, `signal`, … (docs/doctor-json.md lists them).
    pub name: String,
    /// What was checked, in a few words.
    pub what: String,
    /// Whether a stop needs it. A failed needed check makes `pier doctor` exit 1, and the app
    /// shows it instead of its cards.
    pub needed: bool,
    /// Whether it works.
    pub status: Status,
    /// What was found: the value read, or why it failed.
    pub detail: String,
    /// Whether its failure is the machine's setup (a state folder another user could change,
    /// no `HOME`), which `detail` says how to fix, rather than a fault of Pier's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup: bool,
}

/// How signals reach a process on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalPath {
    /// `pidfd`, `audit_token`, `kill` (the fallback) or `none`.
    pub name: String,
    /// Whether a signal can only ever reach the process that was checked (no pid-reuse window).
    pub race_free: bool,
    /// The calls used, and for a fallback why.
    pub detail: String,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorReport {
    /// [`DOCTOR_SCHEMA`].
    pub schema: u32,
    /// Pier's version.
    pub version: String,
    /// The operating system and architecture Pier was built for (`macos aarch64`).
    pub os: String,
    /// How a stop signals on this machine.
    pub signalling: SignalPath,
    /// Every check, in the order run.
    pub checks: Vec<Check>,
    /// Whether everything a stop needs works: no needed check failed or was skipped.
    pub ready: bool,
    /// Where `--dump` wrote the raw buffers, if it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dump: Option<String>,
}

impl DoctorReport {
    /// The report of a self-test that could not run at all (it panicked): not ready, so
    /// nothing is offered on its word.
    pub fn not_run(why: String) -> Self {
        Self {
            schema: DOCTOR_SCHEMA,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            signalling: SignalPath {
                name: "none".into(),
                race_free: false,
                detail: "not checked: the self-test could not run".into(),
            },
            checks: vec![Check {
                name: "self_test".into(),
                what: "the self-test runs".into(),
                needed: true,
                status: Status::Failed,
                detail: why,
                setup: false,
            }],
            ready: false,
            dump: None,
        }
    }

    /// The needed checks that did not pass, in order.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks
            .iter()
            .filter(|c| c.needed && c.status != Status::Ok)
    }
}
