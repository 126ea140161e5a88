//! What the app knows, as plain data: the newest scan it accepted, the snapshot history, the
//! actions in flight and their results. The worker's updates are applied here, and the menu is
//! a pure function of this ([`super::spec`]).

use std::collections::BTreeMap;

use pier_core::auto::lock::Acting;
use pier_core::model::card::{Level, Project, Scan};
use pier_core::model::doctor::DoctorReport;
use pier_core::model::history::{History, HistoryEntry};
use pier_core::model::target::RecordName;
use pier_core::worker::{ActionKey, ActionReport, Latest, RefreshError, Tone, Update};

use super::login::LoginError;

/// How many action results the menu keeps.
const RESULTS_KEPT: usize = 3;

#[derive(Debug, Clone)]
pub struct UiState {
    latest: Latest,
    /// `None` until the first scan comes in.
    pub scan: Option<Result<Scan, RefreshError>>,
    pub history: Option<Result<History, RefreshError>>,
    /// Actions in flight, with the word the menu shows ("stopping…"), and the scan generation
    /// that settles a finished one.
    pub running: BTreeMap<ActionKey, Running>,
    /// Cards whose resources have all ended while the rest of their batch runs: by project
    /// path, the action and how they ended. Dropped with the action's running entry.
    pub marks: BTreeMap<String, (ActionKey, Tone)>,
    /// The newest results first.
    pub results: Vec<ActionReport>,
    /// Whether Pier starts at login, or why that cannot be read.
    pub start_at_login: Result<bool, LoginError>,
    /// The self-test run at start (`pier doctor`'s checks); `None` until it ends.
    pub self_test: Option<DoctorReport>,
    /// A restart clicked once that replays an environment changing what code runs: the next
    /// click on it acts (issue 37, docs/design.md §4).
    pub armed: Option<Armed>,
    /// Whether automatic stops act in this app, or where; `None` until the first refresh.
    pub acting: Option<Acting>,

    /// The automatic-stop rules and their pause, as the last refresh read them; `None` until
    /// one did.
    pub auto: Option<pier_core::worker::AutoStatus>,
}

/// A restart waiting for its confirming click: the snapshot, and the entries the menu named
/// (`HistoryEntry::code_env`). Only the same snapshot naming the same entries is confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Armed {
    pub snapshot: RecordName,
    pub code_env: Vec<String>,
}

/// Why no stop is offered: the self-test has not vouched for this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoStop {
    /// It has not answered yet.
    #[error("Pier is still checking this machine (pier doctor's checks); nothing was stopped")]
    Checking,
    /// Something a stop needs does not work here.
    #[error(
        "Pier cannot work on this machine (see its menu, or run `pier doctor`); nothing was \
         stopped"
    )]
    NotReady,
}

/// An action in flight, or finished but not yet followed by its scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub doing: &'static str,
    /// Set once the action has finished: the card keeps its "busy" state until a scan of this
    /// generation (or newer) is shown, so it never offers the old card's action again.
    pub settled_by: Option<u64>,
}

/// What applying an update did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The state changed; render it.
    Changed,
    /// A scan older than the one shown: dropped.
    Stale,
    /// Nothing changed (the same word on who acts as before).
    Same,
    /// An action finished (the state changed too); tell the user.
    Finished(ActionReport),
    /// Quit was asked for (a signal).
    Quit,
}

impl UiState {
    pub fn new(start_at_login: Result<bool, LoginError>) -> Self {
        Self {
            latest: Latest::default(),
            scan: None,
            history: None,
            running: BTreeMap::new(),
            marks: BTreeMap::new(),
            results: Vec::new(),
            start_at_login,
            self_test: None,
            armed: None,
            acting: None,

            auto: None,
        }
    }

    /// Applies one update from the worker.
    pub fn apply(&mut self, update: Update) -> Applied {
        match update {
            Update::Scanned {
                generation,
                scan,
                history,
            } => {
                if !self.latest.offer(generation) {
                    return Applied::Stale;
                }
                self.scan = Some(scan);
                self.history = Some(history);
                self.running
                    .retain(|_, r| r.settled_by.is_none_or(|g| g > generation));
                self.drop_stale_marks();
                Applied::Changed
            }
            Update::Acting(acting) => {
                if self.acting.as_ref() == Some(&acting) {
                    return Applied::Same;
                }
                self.acting = Some(acting);
                Applied::Changed
            }
            Update::CardDone { key, project, tone } => {
                if self.running.contains_key(&key) {
                    self.marks.insert(project, (key, tone));
                }
                Applied::Changed
            }
            Update::ActionDone { report, settled_by } => {
                let settled = settled_by <= self.generation();
                if settled {
                    self.running.remove(&report.key);
                } else {
                    self.running.insert(
                        report.key.clone(),
                        Running {
                            doing: "updating…",
                            settled_by: Some(settled_by),
                        },
                    );
                }
                self.drop_stale_marks();
                self.results.insert(0, report.clone());
                self.results.truncate(RESULTS_KEPT);
                Applied::Finished(report)
            }
            Update::Auto(status) => {
                self.auto = Some(status);
                Applied::Changed
            }
            Update::SelfTested(report) => {
                self.self_test = Some(*report);
                Applied::Changed
            }
            Update::Quit => Applied::Quit,
        }
    }

    /// A card's mark lasts as long as its action's running entry.
    fn drop_stale_marks(&mut self) {
        let running = &self.running;
        self.marks.retain(|_, (key, _)| running.contains_key(key));
    }

    /// How a card's resources ended in the batch that still runs, if they have.
    pub fn card_mark(&self, project: &str) -> Option<Tone> {
        self.marks.get(project).map(|(_, tone)| *tone)
    }

    /// Asks for a second click on the restart of `snapshot`, which replays `code_env`.
    pub fn arm(&mut self, snapshot: RecordName, code_env: Vec<String>) {
        self.armed = Some(Armed { snapshot, code_env });
    }

    /// Whether the restart of `e` was clicked once with what it replays now, and the next
    /// click confirms it. A history that names other entries since asks again.
    pub fn is_armed(&self, e: &HistoryEntry) -> bool {
        self.armed
            .as_ref()
            .is_some_and(|a| a.snapshot.to_string() == e.snapshot && a.code_env == e.code_env)
    }

    /// Marks an action as running; false if it (or a batch covering it) already runs. A
    /// restart that begins uses up its confirmation.
    pub fn begin(&mut self, key: ActionKey, doing: &'static str) -> bool {
        if self.is_running(&key) {
            return false;
        }
        if let ActionKey::Snapshot(s) = &key {
            if self.armed.as_ref().is_some_and(|a| &a.snapshot == s) {
                self.armed = None;
            }
        }
        self.running.insert(
            key,
            Running {
                doing,
                settled_by: None,
            },
        );
        true
    }

    /// Whether `key` runs now. A project counts as running while "Clean up all safe" runs,
    /// and the batch while any project's clean-up runs: one stop per card at a time.
    pub fn is_running(&self, key: &ActionKey) -> bool {
        let projects_busy = || {
            self.running
                .keys()
                .any(|k| matches!(k, ActionKey::Project(_) | ActionKey::AllSafe))
        };
        match key {
            ActionKey::Project(_) => {
                self.running.contains_key(key) || self.running.contains_key(&ActionKey::AllSafe)
            }
            ActionKey::AllSafe => projects_busy(),
            ActionKey::Snapshot(_) | ActionKey::Auto => self.running.contains_key(key),
        }
    }

    /// The word shown on a busy card or snapshot.
    pub fn doing(&self, key: &ActionKey) -> Option<&'static str> {
        let word = |k: &ActionKey| self.running.get(k).map(|r| r.doing);
        word(key).or_else(|| {
            matches!(key, ActionKey::Project(_))
                .then(|| word(&ActionKey::AllSafe))
                .flatten()
        })
    }

    /// The generation of the scan shown.
    pub fn generation(&self) -> u64 {
        self.latest.get()
    }

    /// The projects of the scan shown (none before the first scan or after a failed one).
    /// None while the self-test says something a stop needs does not work: nothing is offered
    /// that Pier cannot check.
    pub fn projects(&self) -> &[Project] {
        match &self.scan {
            Some(Ok(scan)) if self.not_ready().is_none() => &scan.projects,
            _ => &[],
        }
    }

    /// Whether a stop may be offered: only once the self-test has answered that everything a
    /// stop needs works here. Before its answer, and after a failure, the reason.
    pub fn may_stop(&self) -> Result<(), NoStop> {
        match &self.self_test {
            None => Err(NoStop::Checking),
            Some(r) if !r.ready => Err(NoStop::NotReady),
            Some(_) => Ok(()),
        }
    }

    /// A state whose self-test passed, for tests of everything else.
    #[cfg(test)]
    pub fn checked(start_at_login: Result<bool, LoginError>) -> Self {
        use pier_core::model::doctor::{SignalPath, DOCTOR_SCHEMA};
        let mut s = Self::new(start_at_login);
        s.self_test = Some(DoctorReport {
            schema: DOCTOR_SCHEMA,
            version: String::new(),
            os: String::new(),
            signalling: SignalPath {
                name: "pidfd".into(),
                race_free: true,
                detail: String::new(),
            },
            checks: Vec::new(),
            ready: true,
            dump: None,
        });
        s
    }

    /// The self-test's report when something a stop needs does not work on this machine.
    pub fn not_ready(&self) -> Option<&DoctorReport> {
        self.self_test.as_ref().filter(|r| !r.ready)
    }

    /// The projects safe to stop.
    pub fn safe(&self) -> impl Iterator<Item = &Project> {
        self.projects().iter().filter(|p| p.level == Level::Green)
    }

    /// The newest result of `key`, if any.
    pub fn last_result(&self, key: &ActionKey) -> Option<&ActionReport> {
        self.results.iter().find(|r| &r.key == key)
    }
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::card::Scan;
    use pier_core::model::history::History;
    use pier_core::worker::Update;

    fn scanned(generation: u64) -> Update {
        Update::Scanned {
            generation,
            scan: Ok(Scan {
                schema: 1,
                generation,
                scanned_at: String::new(),
                sample_ms: 0,
                projects: vec![],
                other_listeners: None,
                engines: Vec::new(),
            }),
            history: Ok(History::default()),
        }
    }

    /// The worker delivers a slow older scan after a newer one (the worker's tests,
    /// `a_slow_older_scan_never_replaces_a_newer_result`); the app keeps the newer on screen.
    #[test]
    fn a_slow_older_scan_never_replaces_a_newer_one_on_screen() {
        let (newer, older) = (scanned(2), scanned(1));
        let mut ui = UiState::checked(Ok(false));
        assert_eq!(ui.apply(newer), Applied::Changed);
        assert_eq!(ui.apply(older), Applied::Stale);
        assert_eq!(ui.generation(), 2);
        let Some(Ok(shown)) = &ui.scan else {
            panic!("a scan is shown")
        };
        assert_eq!(shown.generation, 2, "the newer scan stays on screen");
    }
}
