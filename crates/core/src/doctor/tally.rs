//! The checks as they are run: each recorded once, in order; once a needed check fails, the
//! ones that depend on it are recorded as skipped rather than left out.

use std::fmt::Display;

use crate::model::doctor::{Check, Status};

/// Every check `doctor::run` may record, in order, with what it checks and whether a stop
/// needs it: what a skipped one is recorded as.
const ALL: &[(&str, &str, bool)] = &[
    (
        "state_folder",
        "the state folder is private and writable",
        true,
    ),
    // Not needed: a list that cannot be read protects everything, so a stop stays safe, and
    // the app would otherwise refuse to start until reopened after the fix (every card says it).
    (
        "config_folder",
        "the protect list reads (one that cannot be read protects everything: Pier offers \
         nothing)",
        false,
    ),
    // Not needed: without it only the pressure rules never act.
    (
        "memory_pressure",
        "memory pressure reads (Linux PSI, macOS's pressure level)",
        false,
    ),
    ("child", "a test process starts and listens", true),
    (
        "process_table",
        "the scan's process table lists the test process as the user's",
        true,
    ),
    ("argv", "its command line reads back exactly", true),
    (
        "start_time",
        "its start time is read, and is the same on a second read",
        true,
    ),
    ("cwd", "its working folder reads back", true),
    ("executable", "its executable reads back", true),
    (
        "environment",
        "its environment reads back, as a restart would replay it",
        true,
    ),
    (
        "listener",
        "its listening port is found, and who holds it",
        true,
    ),
    ("connection", "its connection is found, both ends", true),
    ("activity", "its CPU use is measured", true),
    (
        "memory",
        "its memory is read (what a cleanup would free)",
        false,
    ),
    (
        "zombie",
        "an ended, unreaped process reads as a zombie",
        false,
    ),
    (
        "shell_environment",
        "a system shell's environment reads back (`npm run dev` restarts through `sh -c`)",
        false,
    ),
    (
        "stale_identity",
        "a signal to a process that is no longer the one checked is refused",
        true,
    ),
    (
        "signal",
        "the signaller pins the test process and signals it",
        true,
    ),
    ("exit_wait", "the exit waiter sees it end", true),
];

/// What check `name` checks and whether a stop needs it.
fn described(name: &str) -> (&'static str, bool) {
    ALL.iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, what, needed)| (*what, *needed))
        .unwrap_or(("", true))
}

#[derive(Default)]
pub(super) struct Tally {
    pub(super) checks: Vec<Check>,
}

impl Tally {
    /// Records check `name` (one of [`ALL`]) as passed with `Ok(detail)`, failed with `Err`,
    /// whose sentence is the detail.
    pub(super) fn record<E: Display>(&mut self, name: &'static str, found: Result<String, E>) {
        let (what, needed) = described(name);
        let (status, detail) = match found {
            Ok(d) => (Status::Ok, d),
            Err(e) => (Status::Failed, e.to_string()),
        };
        self.checks.push(Check {
            name: name.to_owned(),
            what: what.to_owned(),
            needed,
            status,
            detail,
            setup: false,
        });
    }

    /// Records check `name` as failed by the machine's setup, with what to do in `detail`.
    pub(super) fn setup_fault(&mut self, name: &'static str, detail: impl Display) {
        self.record(name, Err(detail));
        if let Some(c) = self.checks.last_mut() {
            c.setup = true;
        }
    }

    /// Records check `name` as passed, with what it found.
    pub(super) fn pass(&mut self, name: &'static str, detail: String) {
        self.record(name, Ok::<_, &str>(detail));
    }

    /// Records check `name` as failed, with why.
    pub(super) fn fail(&mut self, name: &'static str, detail: impl Display) {
        self.record(name, Err(detail));
    }

    /// Records every check of [`ALL`] not yet recorded as skipped, in [`ALL`]'s order.
    pub(super) fn skip_rest(&mut self) {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Failed && c.needed)
            .map(|c| c.name.clone())
            .collect();
        let why = if failed.is_empty() {
            "not run".to_owned()
        } else {
            format!("not run: {} failed", failed.join(", "))
        };
        for (name, what, needed) in ALL {
            if !self.checks.iter().any(|c| c.name == *name) {
                self.checks.push(Check {
                    name: (*name).to_owned(),
                    what: (*what).to_owned(),
                    needed: *needed,
                    status: Status::Skipped,
                    detail: why.clone(),
                    setup: false,
                });
            }
        }
        let order = |c: &Check| {
            ALL.iter()
                .position(|(n, _, _)| *n == c.name)
                .unwrap_or(ALL.len())
        };
        self.checks.sort_by_key(order);
    }

    /// No needed check failed or was skipped.
    pub(super) fn ready(&self) -> bool {
        self.checks
            .iter()
            .all(|c| !c.needed || c.status == Status::Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_needed_check_skips_the_rest_and_the_machine_is_not_ready() {
        let mut t = Tally::default();
        t.record("state_folder", Ok::<_, String>("ok".into()));
        t.fail("child", "no");
        t.skip_rest();
        assert_eq!(t.checks.len(), ALL.len());
        let table = t.checks.iter().find(|c| c.name == "process_table").unwrap();
        assert_eq!(table.status, Status::Skipped);
        assert_eq!(table.detail, "not run: child failed");
        assert!(!t.ready());
    }

    #[test]
    fn a_failed_check_a_stop_does_not_need_leaves_it_ready() {
        let mut t = Tally::default();
        for (name, _, _) in ALL {
            let found: Result<String, &str> = if *name == "zombie" {
                Err("no")
            } else {
                Ok("ok".into())
            };
            t.record(name, found);
        }
        t.skip_rest();
        assert!(t.ready());
        assert_eq!(t.checks.len(), ALL.len());
    }
}
