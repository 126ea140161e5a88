//! The engine the worker owns: scan, history, stop and restart behind one trait, so the worker's
//! rules (generations, follow-up scans) are tested with a scripted engine and the app runs on
//! the real one, [`SystemEngine`], over this machine's [`System`].

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use crate::diagnose::{self, project, ScanOptions};
use crate::front::System;
use crate::model::card::{Resource, Scan};
use crate::model::history::{History, RestartReport, RestartResult};
use crate::model::outcome::StopReport;
use crate::model::reason::Anyway;
use crate::model::rules::{Pause, RulesState};
use crate::model::shown::Shown;
use crate::model::target::RecordName;
use crate::probe::reuse::OnceTable;
use crate::restart;
use crate::stop::{Progress, StopOptions};
use crate::store::{Store, StoreError};

use super::{armed, ActionReport, RefreshError, StopTarget};
use crate::auto::arms::{self, ArmAsk, ArmError, ArmRefusal, DEFAULT_WITHIN};
use crate::auto::lock::{self, Acting, SchedulerLock, Who};
use crate::auto::scheduler::{Scheduler, SchedulerOptions};
use crate::model::arm::{Arm, Armed};
use crate::model::target::TargetId;
use crate::trust::folder::Folder;

/// What the worker can ask of Pier. Each call may block; the worker runs them off its loop.
pub trait Engine: Send + Sync + 'static {
    /// A scan stamped `generation`, and the snapshot history judged right after it.
    fn refresh(&self, generation: u64) -> Refreshed;
    /// Stops `targets` as one batch (`stop/batch.rs`): each is refused if it is no longer
    /// what its card showed. `done` hears of each report as soon as it is final; the reports
    /// come back in the order of `targets`.
    fn stop(&self, targets: &[StopTarget], done: &mut dyn FnMut(&StopReport)) -> Vec<StopReport> {
        self.stop_with(targets, &Anyway::default(), done)
    }
    /// As [`Engine::stop`], and a stop anyway of each target `anyway` names: it sets aside only
    /// the reasons confirmed for it, where the table lets a person (`stop::anyway`).
    fn stop_with(
        &self,
        targets: &[StopTarget],
        anyway: &Anyway,
        done: &mut dyn FnMut(&StopReport),
    ) -> Vec<StopReport>;
    /// Restarts the snapshot with record name `snapshot`.
    fn restart(&self, snapshot: &RecordName) -> RestartReport;
    /// Arms a stop of `target`'s resource ("stop when safe"), judged on its fresh card, never
    /// on the menu's copy alone; `kernel_state_lost`: the person was told a live notebook
    /// kernel's state is lost. What it waits for, or why not.
    fn arm(&self, target: &StopTarget, kernel_state_lost: bool) -> Result<Armed, ArmError>;
    /// Cancels the armed stop of resource `id`: the arm removed, or `None` when none waits.
    fn disarm(&self, id: &TargetId) -> Result<Option<Arm>, StoreError>;
    /// Pauses the automatic-stop rules (`auto::pause`): the pause as set.
    fn pause(&self, asked: crate::auto::pause::For) -> Result<Pause, StoreError>;
    /// Ends their pause: `false` when there was none.
    fn resume(&self) -> Result<bool, StoreError>;
    /// `pier doctor`'s checks on this machine, run once as the worker starts; `None`: this
    /// engine has none to run.
    fn self_test(&self) -> Option<crate::model::doctor::DoctorReport> {
        None
    }
}

/// What a refresh found: the scan, and the snapshot history, each or why not; and what the
/// armed stops came to at this rescan (fired, dropped), each as a click's result would be.
#[derive(Debug)]
pub struct Refreshed {
    /// The scan, or why not.
    pub scan: Result<Scan, RefreshError>,
    /// The snapshot history read right after it, or why not.
    pub history: Result<History, RefreshError>,
    /// One result per armed stop that fired or was dropped at this rescan.
    pub armed: Vec<ActionReport>,
    /// Whether this scheduler holds the scheduler lock (and so fired what was due), or who
    /// does.
    pub acting: Acting,
    /// The automatic-stop rules and their pause, as this refresh read them; `None`: not read.
    pub auto: Option<super::AutoStatus>,
}

/// The real engine: this machine's [`System`] (probe, signaller, exit waiter, state folder).
pub struct SystemEngine {
    system: System,
    scan: ScanOptions,
    stop: StopOptions,
    /// The `pier` binary, which runs each restart (see [`Engine::restart`] below).
    exe: PathBuf,
    /// The idle clock and the armed stops: every refresh is one of its rescans.
    scheduler: std::sync::Mutex<Scheduler>,
    /// The scheduler lock once taken, held for the engine's life; tried at each refresh
    /// until then.
    lock: std::sync::Mutex<Option<SchedulerLock>>,
    /// Where the lock is tried; `None`: the user's runtime folder, or the state folder.
    lock_at: Option<Folder>,
    /// How often the worker refreshes, as the scheduler's view says it (`auto::view`).
    every: Duration,
}

impl SystemEngine {
    /// `under`: the folders the app is limited to (empty: everything of the user's).
    /// `exe`: the `pier` binary restarts run through.
    pub fn new(store: Store, under: Vec<PathBuf>, sample: Duration, exe: PathBuf) -> Self {
        Self {
            system: System::new(store),
            scan: ScanOptions {
                sample,
                under,
                engines: diagnose::Engines::Ask,
                ..ScanOptions::default()
            },
            stop: StopOptions::default(),
            exe,
            scheduler: std::sync::Mutex::new(Scheduler::new(SchedulerOptions::default())),
            lock: std::sync::Mutex::new(None),
            lock_at: None,
            every: Duration::from_secs(30),
        }
    }

    /// The same engine, refreshed by its worker every `every`.
    pub fn with_refresh(self, every: Duration) -> Self {
        Self { every, ..self }
    }

    /// The same engine with its scheduler lock tried in `folder` (a test's own).
    pub fn with_lock_folder(self, folder: Folder) -> Self {
        Self {
            lock_at: Some(folder),
            ..self
        }
    }

    /// Whether this engine's scheduler may fire: the scheduler lock taken (once, then held),
    /// or who holds it. Why at every refresh: the app acts once `pier watch` ends.
    fn acting(&self) -> Acting {
        let mut held = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.is_some() {
            return Acting::Here;
        }
        let taken = match &self.lock_at {
            Some(folder) => lock::take_in(folder, Who::App),
            None => {
                let (taken, why) = lock::take(&self.system.store, Who::App);
                if let Some(why) = why {
                    tracing::debug!("the scheduler lock is in the state folder: {why}");
                }
                taken
            }
        };
        let acting = Acting::of(&taken);
        *held = taken.ok();
        acting
    }

    /// The same engine with a scheduler of its own options (a test's short settle).
    pub fn with_scheduler(self, opts: SchedulerOptions) -> Self {
        Self {
            scheduler: std::sync::Mutex::new(Scheduler::new(opts)),
            ..self
        }
    }

    /// The resource `id`'s card in a fresh sampled scan (as `pier stop --when-safe` judges),
    /// with its project's path.
    fn fresh_card(&self, id: &str) -> Result<(String, Resource), ArmError> {
        let probe = OnceTable::new(self.system.probe.as_ref());
        let opts = ScanOptions {
            protect: crate::config::protect(),
            ..self.scan.clone()
        };
        let scan = diagnose::scan(&probe, &opts, &project::marker_on_disk)?;
        scan.projects
            .into_iter()
            .find_map(|p| {
                let r = p.resources.into_iter().find(|r| r.id == id)?;
                Some((p.path, r))
            })
            .ok_or_else(|| ArmRefusal::NotFound { id: id.to_owned() }.into())
    }

    /// A refresh without the idle clock and the armed stops: the scan and the history alone,
    /// as a refresh cost before the clock (`examples/clock_cost.rs` measures what it adds).
    pub fn refresh_without_clock(&self, generation: u64) -> Refreshed {
        self.refresh_with(generation, false)
    }

    /// The scan, then (with `clock`) the idle clock and the armed stops, then the history. The
    /// three share one read of the process table ([`OnceTable`]): an app refresh costs one
    /// process-table walk, as a CLI scan does, not two. The history comes last: it holds the
    /// snapshots of the stops an arm just ran.
    fn refresh_with(&self, generation: u64, clock: bool) -> Refreshed {
        let probe = OnceTable::new(self.system.probe.as_ref());
        let opts = ScanOptions {
            generation,
            // Read at every refresh: `pier protect` takes effect at the app's next scan.
            protect: crate::config::protect(),
            ..self.scan.clone()
        };
        let mut scan = diagnose::scan(&probe, &opts, &project::marker_on_disk);
        let acting = self.acting();
        // Read only with the clock: a refresh without it costs what it did before the rules.
        let rules = clock.then(crate::auto::rules::read);
        let armed = match (&mut scan, &rules) {
            (Ok(scan), Some(rules)) => self.tick(&probe, scan, rules, &acting),
            _ => Vec::new(),
        };
        let auto = rules.map(|rules| {
            // A pause that cannot be read: every card says so (`Scheduler::rules`).
            let now = crate::auto::pause::now();
            let paused = crate::auto::pause::read(&self.system.store, now).unwrap_or(None);
            super::AutoStatus { rules, paused }
        });
        Refreshed {
            scan: scan.map_err(Into::into),
            history: self.history(&probe),
            armed,
            acting,
            auto,
        }
    }

    /// One rescan of the idle clock on `scan`: the rules' notes shown, and the armed stops and
    /// rules it makes due fired when this scheduler holds the lock (`acting`); without it, it
    /// measures and fires nothing. Everything a scheduler fires goes behind that one check.
    fn tick(
        &self,
        probe: &OnceTable,
        scan: &mut Scan,
        rules: &RulesState,
        acting: &Acting,
    ) -> Vec<ActionReport> {
        // A panic in another refresh leaves the clock as it was: it is still whole. The lock
        // is held while due arms fire, so two refreshes never fire one arm twice.
        let mut scheduler = self
            .scheduler
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        scheduler.measure(probe, scan);
        let stop = self.stop_options(&Anyway::default());
        let events = scheduler.tick(&self.system, scan, &stop, rules, acting.fires());
        // What `pier auto` shows while the app runs: only the scheduler that acts says it.
        if acting.fires() {
            let app = crate::auto::lock::Who::App;
            crate::auto::view::write_or_log(
                &self.system,
                app,
                self.every,
                scan,
                scheduler.pressure(),
            );
        }
        events
            .iter()
            .filter_map(armed::armed_event_summary)
            .collect()
    }

    /// The snapshot history; the records whose stop can never be restarted expire here too
    /// (§5.5).
    fn history(&self, probe: &OnceTable) -> Result<History, RefreshError> {
        restart::history(probe, &self.system.store)
            .map(|(mut entries, damaged)| {
                let expired = restart::prune::Prune::Expired(std::time::SystemTime::now());
                let gone = restart::prune::prune(
                    &self.system.store,
                    &*self.system.probe,
                    &entries,
                    expired,
                )
                .removed;
                entries.retain(|e| !gone.contains(&e.snapshot));
                // An agent's requests expire by the same week (`agent::journal`).
                crate::agent::journal::expire(&self.system.store, std::time::SystemTime::now());
                History { entries, damaged }
            })
            .map_err(|e| RefreshError::History(e.to_string()))
    }

    /// How the app's stops run: judged by the scan's thresholds, asked for by the app (a
    /// click), and a stop anyway of what `anyway` names.
    fn stop_options(&self, anyway: &Anyway) -> StopOptions {
        StopOptions {
            thresholds: self.scan.thresholds,
            requested_by: crate::model::RequestedBy::App,
            anyway: anyway.clone(),
            ..self.stop.clone()
        }
    }
}

impl Engine for SystemEngine {
    fn refresh(&self, generation: u64) -> Refreshed {
        self.refresh_with(generation, true)
    }
    fn pause(&self, asked: crate::auto::pause::For) -> Result<Pause, StoreError> {
        let p = asked.at(crate::auto::pause::now());
        crate::auto::pause::set(&self.system.store, &p).map(|()| p)
    }
    fn resume(&self) -> Result<bool, StoreError> {
        crate::auto::pause::clear(&self.system.store)
    }

    fn arm(&self, target: &StopTarget, kernel_state_lost: bool) -> Result<Armed, ArmError> {
        let id = target.id.to_string();
        if let TargetId::Container(_) = target.id {
            return Err(ArmRefusal::Container { id }.into());
        }
        let (project, r) = self.fresh_card(&id)?;
        let ask = ArmAsk {
            project: &project,
            within: DEFAULT_WITHIN,
            armed_by: crate::model::RequestedBy::App,
            kernel_state_lost,
        };
        let arm = arms::arm_card(&self.system.store, self.system.probe.as_ref(), &r, &ask)?;
        Ok(Armed {
            expires_at: arm.expires_at,
            waiting_for: arms::waiting_for(&r),
        })
    }

    fn disarm(&self, id: &TargetId) -> Result<Option<Arm>, StoreError> {
        arms::cancel(&self.system.store, &id.to_string())
    }

    fn stop_with(
        &self,
        targets: &[StopTarget],
        anyway: &Anyway,
        done: &mut dyn FnMut(&StopReport),
    ) -> Vec<StopReport> {
        let stopper = self.system.stopper(self.stop_options(anyway));
        let ids: Vec<String> = targets.iter().map(|t| t.id.to_string()).collect();
        let targets: Vec<(&str, Option<&Shown>)> = ids
            .iter()
            .zip(targets)
            .map(|(id, t)| (id.as_str(), Some(&t.shown)))
            .collect();
        stopper.stop_all(&targets, &mut |p| {
            if let Progress::Done(r) = p {
                done(r);
            }
        })
    }

    /// The same checks as `pier doctor`, with the `pier` binary beside the app as the test
    /// process: a machine where the probe or the signaller does not work shows that in the
    /// menu, not an empty list (design §7.7).
    fn self_test(&self) -> Option<crate::model::doctor::DoctorReport> {
        Some(crate::doctor::run(&crate::doctor::Options {
            pier: self.exe.clone(),
            dump: None,
            sample: crate::doctor::SAMPLE,
            state: Some(self.system.store.folder().to_path_buf()),
        }))
    }

    /// Runs `pier restart SNAPSHOT --json` as a child and reads its report. The restarted tree's
    /// parent is that short-lived process, so when it ends the tree is adopted by init or the
    /// subreaper, as it was before the stop. Started by the app itself, the tree would be the
    /// app's child for life: not orphaned, and never residue again.
    fn restart(&self, snapshot: &RecordName) -> RestartReport {
        let snapshot = snapshot.to_string();
        // Outside this scheduler's cgroup: stopping its service never stops what it restarted.
        let escape = restart::escape::plan();
        let child = restart::escape::command(&self.exe, &escape)
            .args(["restart", "--json", "--", &snapshot])
            .env("PIER_STATE_DIR", self.system.store.folder())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let output = child.and_then(|child| {
            restart::escape::settle(&escape, child.id());
            child.wait_with_output()
        });
        match output {
            Ok(out) => serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
                let said = String::from_utf8_lossy(&out.stderr);
                failed(
                    &snapshot,
                    format!(
                        "`pier restart` ended with {} and no report: {}",
                        out.status,
                        said.trim()
                    ),
                )
            }),
            Err(e) => failed(
                &snapshot,
                format!("{} could not be started: {e}", self.exe.display()),
            ),
        }
    }
}

fn failed(snapshot: &str, reason: String) -> RestartReport {
    RestartReport::not_started(snapshot, RestartResult::Failed, reason)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::model::reason::Reason;
    use crate::model::RequestedBy;

    /// The app's stop anyway reaches the stopper: the options every app stop runs with carry
    /// the person's confirmation, and say the app asked.
    #[test]
    fn the_app_s_stops_carry_its_stop_anyway_to_the_stopper() {
        let dir = tempfile::tempdir().unwrap();
        let engine = SystemEngine::new(
            Store::open_at(dir.path().join("state")).unwrap(),
            vec![dir.path().to_path_buf()],
            Duration::from_millis(100),
            PathBuf::from("/nonexistent/pier"),
        );
        let mut anyway = Anyway::default();
        anyway.confirm("10-100", BTreeSet::from([Reason::NotOrphaned]));
        let opts = engine.stop_options(&anyway);
        assert_eq!(opts.anyway, anyway);
        assert_eq!(opts.requested_by, RequestedBy::App);
        let ordinary = engine.stop_options(&Anyway::default());
        assert!(
            ordinary.anyway.is_empty(),
            "an ordinary stop sets nothing aside"
        );
    }

    /// The app acts only while it holds the scheduler lock: while `pier watch` holds it the
    /// app's refresh says who does, and once that one lets go the next refresh takes it and
    /// keeps it.
    #[test]
    fn the_app_acts_only_once_it_takes_the_scheduler_lock_and_then_keeps_it() {
        use crate::auto::lock::{take_in, Holder, LockError};
        use crate::trust::Me;
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let folder = Folder::open(&run, Me::current(), false).unwrap();
        let engine = SystemEngine::new(
            Store::open_at(dir.path().join("state")).unwrap(),
            vec![dir.path().to_path_buf()],
            Duration::from_millis(0),
            PathBuf::from("/nonexistent/pier"),
        )
        .with_lock_folder(folder.clone());
        let watch = take_in(&folder, Who::Watch).unwrap();
        let pier_watch = Holder {
            pid: std::process::id(),
            who: Who::Watch,
        };
        assert_eq!(engine.acting(), Acting::Elsewhere(Some(pier_watch)));
        assert_eq!(
            engine.refresh(1).acting,
            Acting::Elsewhere(Some(pier_watch))
        );
        drop(watch);
        assert_eq!(engine.refresh(2).acting, Acting::Here);
        assert!(
            matches!(take_in(&folder, Who::Watch), Err(LockError::Held { .. })),
            "the app holds it now"
        );
        assert_eq!(engine.acting(), Acting::Here, "and keeps it");
    }
}
