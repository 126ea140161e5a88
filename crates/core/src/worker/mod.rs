//! The worker: a tokio runtime on its own thread that owns the engine ([`SystemEngine`], over
//! the [`crate::front::System`]: probe, signaller, exit waiter, state folder). The UI sends it
//! typed [`Command`]s and gets whole [`Update`]s back through a sink (the event-loop proxy in
//! the app, a channel in tests); the UI thread never waits on it. What went wrong comes back
//! typed too (`error.rs`).
//!
//! Invariants (docs/design.md §6):
//! - every scan is stamped with a generation taken when it *starts*; the UI keeps the newest
//!   generation it has shown and drops an older one ([`Latest`]), so a slow scan that ends
//!   after a newer one never replaces it;
//! - every action's result is delivered, and every action is followed by a fresh scan;
//! - engine calls block (sample windows, grace periods), so each runs on tokio's blocking pool
//!   and never on the runtime's own thread; timers live here, not in the UI's event loop;
//! - SIGINT and SIGTERM become [`Update::Quit`]: the UI ends cleanly and joins this thread, and
//!   a stop in flight ends at its next seam, as an interrupted `pier stop` does.

mod armed;
mod auto;
mod engine;
mod error;
mod summary;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::model::card::Scan;
use crate::model::history::History;
use crate::model::outcome::StopReport;
use crate::model::reason::{Anyway, Reason};
use crate::model::shown::Shown;
use crate::model::target::{RecordName, TargetId};

pub use armed::{arm_summary, armed_event_summary, disarm_summary};
pub use auto::{pause_summary, resume_summary, AutoStatus};
pub use engine::{Engine, Refreshed, SystemEngine};
pub use error::{NoReport, Panicked, RefreshError};
pub use summary::{
    card_tone, notification_text, project_name, restart_summary, snapshot_label, stop_summary,
    StopOutcome, Tone,
};

/// What the UI asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Scan now (a click on the icon, Refresh).
    Scan,
    /// Stop these resources, each with what the card showed, as one action.
    Stop {
        /// The action the result belongs to: one project, or all safe ones.
        key: ActionKey,
        /// The resources to stop, as one batch.
        targets: Vec<StopTarget>,
    },
    /// Stop one resource anyway (docs/design.md §3): SIGTERM through the whole chain, setting
    /// aside only `reasons`, the ones its card showed and the person confirmed, where the table
    /// lets a person (`model::reason`); a new reason, or one never set aside, refuses.
    StopAnyway {
        /// The action the result belongs to: the resource's project.
        key: ActionKey,
        /// The resource, with what its card showed.
        target: StopTarget,
        /// The reasons the card showed against it, confirmed.
        reasons: BTreeSet<Reason>,
    },
    /// Arm a stop of one resource ("stop when safe", docs/design.md §5a): judged on its fresh
    /// card; the chain runs at a refresh once it is green and has stayed green for a settle.
    Arm {
        /// The action the result belongs to: the resource's project.
        key: ActionKey,
        /// The resource, with what its card showed.
        target: StopTarget,
        /// The person was told a live notebook kernel's state is lost, and armed it anyway.
        kernel_state_lost: bool,
    },
    /// Cancel the armed stop of one resource.
    Disarm {
        /// The action the result belongs to: the resource's project.
        key: ActionKey,
        /// The resource's id.
        id: TargetId,
    },
    /// Pause the automatic-stop rules (`auto::pause`), replacing any pause before it.
    Pause {
        /// For how long.
        asked: crate::auto::pause::For,
    },
    /// End the pause of the automatic-stop rules.
    Resume,
    /// Restart one snapshot; `label` names it in the result line.
    Restart {
        /// The snapshot's record name in the state folder.
        snapshot: RecordName,
        /// How the menu names the snapshot.
        label: String,
    },
    /// End: finish what is running, then return.
    Quit,
}

/// One resource to stop and what the user was shown of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopTarget {
    /// The path of the resource's project, which names it in the result line.
    pub project: String,
    /// The resource's id (its root's identity, or a container card's id).
    pub id: TargetId,
    /// What its card showed: the stop refuses if the resource has changed since.
    pub shown: Shown,
}

impl StopTarget {
    /// Whether `r` is this target's report.
    fn reported_in(&self, r: &StopReport) -> bool {
        r.id == self.id.to_string()
    }
}

/// Which action a result belongs to; the menu marks that card or snapshot while it runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionKey {
    /// "Clean up safely" on one project (its path).
    Project(String),
    /// "Clean up all safe".
    AllSafe,
    /// "Restart" of one snapshot (its record name).
    Snapshot(RecordName),
    /// "Pause" or "Resume" of the automatic stops.
    Auto,
}

/// The whole answer of one action, for the menu and the notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionReport {
    /// The action this is the result of.
    pub key: ActionKey,
    /// How it went, for the menu and the notification.
    pub tone: Tone,
    /// One line: "shop: stopped (3 processes)", "api: refused — a client is connected".
    pub summary: String,
    /// The undo an automatic stop offers in its notification; `None` for everything else (a
    /// click's stop has its Restart in the menu already).
    pub restart: Option<Undo>,
}

/// The Restart an automatic stop's notification offers: its snapshot, named as the menu does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undo {
    /// The snapshot the stop wrote.
    pub snapshot: RecordName,
    /// How the restart's result line names it.
    pub label: String,
}

impl Undo {
    /// The command that restarts it, for a notification that cannot show a button.
    pub fn command(&self) -> Command {
        Command::Restart {
            snapshot: self.snapshot.clone(),
            label: self.label.clone(),
        }
    }
}

/// What the worker sends back.
#[derive(Debug, Clone)]
pub enum Update {
    /// A scan finished (or failed), with the snapshot history read right after it.
    Scanned {
        /// The generation taken when the scan started.
        generation: u64,
        /// The scan, or why it could not be made.
        scan: Result<Scan, RefreshError>,
        /// The snapshot history, or why it could not be read.
        history: Result<History, RefreshError>,
    },
    /// An action finished; the scan of generation `settled_by` follows, and until it is shown
    /// the card still shows the state from before the action.
    ActionDone {
        /// The action's result.
        report: ActionReport,
        /// The generation of the scan that follows the action.
        settled_by: u64,
    },
    /// Every resource of one card in a running stop has ended: the menu marks the card while
    /// the rest of the batch runs. The action's result still comes as [`Update::ActionDone`].
    CardDone {
        /// The action the card's stop belongs to.
        key: ActionKey,
        /// The card's project path.
        project: String,
        /// How the card's resources ended.
        tone: Tone,
    },
    /// Whether the engine's scheduler fires what is due, or who does: sent after a scan when
    /// it changed (at first the UI takes it that the app acts).
    Acting(crate::auto::lock::Acting),

    /// The automatic-stop rules and their pause, as the refresh just delivered read them.
    Auto(AutoStatus),
    /// The self-test the engine runs when the worker starts (`pier doctor`'s checks) ended.
    SelfTested(Box<crate::model::doctor::DoctorReport>),
    /// SIGINT or SIGTERM arrived: the UI should quit.
    Quit,
}

/// The UI's half of the generation rule: the newest generation shown so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latest(u64);

impl Latest {
    /// Whether a scan of `generation` may be shown. A generation older than the one shown
    /// loses: it started before, so it may miss what an action since changed.
    pub fn offer(&mut self, generation: u64) -> bool {
        if generation <= self.0 {
            return false;
        }
        self.0 = generation;
        true
    }

    /// The newest generation shown so far; 0 before the first.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// Where updates go; the app passes its event-loop proxy.
pub type Sink = Arc<dyn Fn(Update) + Send + Sync>;

/// The running worker. Dropping it without [`Worker::shutdown`] leaves the thread running.
pub struct Worker {
    commands: mpsc::UnboundedSender<Command>,
    thread: Option<JoinHandle<()>>,
}

/// How the worker runs.
#[derive(Debug, Clone, Copy)]
pub struct WorkerOptions {
    /// Periodic refresh; `None` scans only when asked.
    pub period: Option<Duration>,
    /// Turn SIGINT and SIGTERM into [`Update::Quit`] (the app does; tests do not).
    pub signals: bool,
    /// How long Quit waits for scans in flight (actions in flight are always waited for:
    /// each is bounded by its own deadlines, and cutting one off would leave it unrecorded).
    pub drain: Duration,
}

impl Worker {
    /// Starts the worker thread; it scans once at once, then on command and on the period.
    pub fn spawn(
        engine: Arc<dyn Engine>,
        opts: WorkerOptions,
        sink: Sink,
    ) -> std::io::Result<Worker> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("pier-engine")
            .build()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("pier-worker".into())
            .spawn(move || {
                runtime.block_on(run(engine, opts, sink, rx));
                runtime.shutdown_timeout(opts.drain);
            })?;
        Ok(Worker {
            commands: tx,
            thread: Some(thread),
        })
    }

    /// Queues a command; false when the worker has ended.
    pub fn send(&self, command: Command) -> bool {
        self.commands.send(command).is_ok()
    }

    /// Asks the worker to end and waits for its thread.
    pub fn shutdown(mut self) {
        let _ = self.commands.send(Command::Quit);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the worker thread panicked");
            }
        }
    }
}

/// Shared between the loop and its tasks.
struct Shared {
    engine: Arc<dyn Engine>,
    sink: Sink,
    generation: AtomicU64,
    periodic_in_flight: AtomicBool,
    /// Who acts, as last sent to the UI (at first: here, as the UI assumes).
    acting: std::sync::Mutex<crate::auto::lock::Acting>,
}

async fn run(
    engine: Arc<dyn Engine>,
    opts: WorkerOptions,
    sink: Sink,
    mut rx: mpsc::UnboundedReceiver<Command>,
) {
    let shared = Arc::new(Shared {
        engine,
        sink,
        generation: AtomicU64::new(0),
        periodic_in_flight: AtomicBool::new(false),
        acting: std::sync::Mutex::new(crate::auto::lock::Acting::Here),
    });
    let mut quit = quit_signals(opts.signals);
    let mut ticks = opts.period.map(|p| {
        let mut t = tokio::time::interval_at(tokio::time::Instant::now() + p, p);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        t
    });
    // Actions in flight: Quit waits for every one to finish and deliver its result.
    let mut actions = tokio::task::JoinSet::new();
    spawn_self_test(&shared);
    spawn_scan(&shared, false);
    loop {
        tokio::select! {
            command = rx.recv() => match command {
                None | Some(Command::Quit) => break,
                Some(Command::Scan) => spawn_scan(&shared, false),
                Some(Command::Stop { key, targets }) => {
                    spawn_stop(&shared, &mut actions, key, targets, Anyway::default());
                }
                Some(Command::StopAnyway { key, target, reasons }) => {
                    let mut anyway = Anyway::default();
                    anyway.confirm(&target.id.to_string(), reasons);
                    spawn_stop(&shared, &mut actions, key, vec![target], anyway);
                }
                Some(Command::Restart { snapshot, label }) => {
                    spawn_restart(&shared, &mut actions, snapshot, label);
                }
                Some(Command::Arm { key, target, kernel_state_lost }) => {
                    spawn_arm(&shared, &mut actions, key, target, kernel_state_lost);
                }
                Some(Command::Disarm { key, id }) => spawn_disarm(&shared, &mut actions, key, id),
                Some(Command::Pause { asked }) => spawn_auto(&shared, &mut actions, Some(asked)),
                Some(Command::Resume) => spawn_auto(&shared, &mut actions, None),
            },
            Some(_) = actions.join_next(), if !actions.is_empty() => {}
            () = tick(&mut ticks) => {
                // A periodic scan never piles up behind a slow one.
                if !shared.periodic_in_flight.swap(true, Ordering::SeqCst) {
                    spawn_scan(&shared, true);
                }
            }
            signal = quit.recv() => {
                // A stop in flight ends at its next seam (docs/design.md §3.10), so the UI's
                // join of this thread is not held up by the rest of its levels.
                crate::stop::interrupt::PROCESS.raise(signal);
                (shared.sink)(Update::Quit)
            }
        }
    }
    while actions.join_next().await.is_some() {}
}

async fn tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

fn next_generation(shared: &Shared) -> u64 {
    shared.generation.fetch_add(1, Ordering::SeqCst) + 1
}

/// Runs the engine's self-test, beside the first scan, and reports it if there is one.
fn spawn_self_test(shared: &Arc<Shared>) {
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        let report = match guarded("the self-test", || shared.engine.self_test()) {
            Ok(Some(report)) => report,
            Ok(None) => return,
            // A self-test that could not run vouches for nothing: not ready.
            Err(why) => crate::model::doctor::DoctorReport::not_run(why.to_string()),
        };
        (shared.sink)(Update::SelfTested(Box::new(report)));
    });
}

/// Starts a scan under the next generation, taken now.
fn spawn_scan(shared: &Arc<Shared>, periodic: bool) {
    let generation = next_generation(shared);
    scan_as(shared, generation, periodic);
}

/// Clears the periodic flag when a periodic scan ends, even by a panic: a stuck flag would
/// stop every later periodic refresh.
struct PeriodicDone<'a>(&'a AtomicBool);

impl Drop for PeriodicDone<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

fn scan_as(shared: &Arc<Shared>, generation: u64, periodic: bool) {
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        let _done = periodic.then(|| PeriodicDone(&shared.periodic_in_flight));
        let refreshed = shared.engine.refresh(generation);
        (shared.sink)(Update::Scanned {
            generation,
            scan: refreshed.scan,
            history: refreshed.history,
        });
        acting_changed(&shared, refreshed.acting);

        if let Some(auto) = refreshed.auto {
            (shared.sink)(Update::Auto(auto));
        }
        armed_results(&shared, refreshed.armed);
    });
}

/// Sends who acts when it changed since it was last sent: the menu's line comes and goes with
/// the lock, not at every refresh.
fn acting_changed(shared: &Shared, acting: crate::auto::lock::Acting) {
    let mut last = shared
        .acting
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if *last != acting {
        *last = acting.clone();
        (shared.sink)(Update::Acting(acting));
    }
}

/// What the armed stops came to at a refresh: each result delivered as a click's is, then one
/// fresh scan that settles them all (docs/design.md §6), since a fired stop changed the cards.
fn armed_results(shared: &Arc<Shared>, reports: Vec<ActionReport>) {
    if reports.is_empty() {
        return;
    }
    let generation = next_generation(shared);
    for report in reports {
        tracing::info!("{}", crate::words::for_terminal(&report.summary));
        (shared.sink)(Update::ActionDone {
            report,
            settled_by: generation,
        });
    }
    scan_as(shared, generation, false);
}

/// Runs `f`; a panic becomes `Err` with its message (logged), so one bad item never takes the
/// batch or the result line down with it.
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, Panicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let why = crate::words::of_panic(panic.as_ref());
        tracing::error!("{what}: {}", crate::words::for_terminal(&why));
        Panicked(why)
    })
}

type Actions = tokio::task::JoinSet<()>;

/// Stops `targets` as one batch, a stop anyway of those `anyway` names.
fn spawn_stop(
    shared: &Arc<Shared>,
    actions: &mut Actions,
    key: ActionKey,
    targets: Vec<StopTarget>,
    anyway: Anyway,
) {
    let task = Arc::clone(shared);
    let done_key = key.clone();
    let done = tokio::task::spawn_blocking(move || {
        // One batch: a refusal never holds back the rest, and each card is marked as soon as
        // its resources have ended.
        let mut left: HashMap<&str, Vec<&StopTarget>> = HashMap::new();
        for t in &targets {
            left.entry(t.project.as_str()).or_default().push(t);
        }
        let mut ended: HashMap<String, Vec<StopReport>> = HashMap::new();
        let batch = guarded("stopping a batch", || {
            task.engine.stop_with(&targets, &anyway, &mut |r| {
                let Some(t) = targets.iter().find(|t| t.reported_in(r)) else {
                    return;
                };
                let card = ended.entry(t.project.clone()).or_default();
                card.push(r.clone());
                if card.len() == left.get(t.project.as_str()).map_or(0, Vec::len) {
                    let tone = card_tone(&card.iter().collect::<Vec<_>>());
                    (task.sink)(Update::CardDone {
                        key: key.clone(),
                        project: t.project.clone(),
                        tone,
                    });
                }
            })
        });
        // A report already final stays what it is, even when the batch then failed.
        let heard: Vec<StopReport> = ended.into_values().flatten().collect();
        let (reports, why) = match batch {
            Ok(reports) => (reports, NoReport::Missing),
            Err(panicked) => (heard, NoReport::from(panicked)),
        };
        let reports: Vec<(String, StopOutcome)> = targets
            .iter()
            .map(|t| {
                let r = reports.iter().find(|r| t.reported_in(r)).cloned();
                (t.project.clone(), r.ok_or_else(|| why.clone()))
            })
            .collect();
        stop_summary(key, &reports)
    });
    follow_with_scan(shared, actions, done_key, done);
}

fn spawn_restart(shared: &Arc<Shared>, actions: &mut Actions, snapshot: RecordName, label: String) {
    let task = Arc::clone(shared);
    let key = ActionKey::Snapshot(snapshot.clone());
    let done_key = key.clone();
    let done = tokio::task::spawn_blocking(move || {
        match guarded(&format!("restarting {snapshot}"), || {
            task.engine.restart(&snapshot)
        }) {
            Ok(report) => restart_summary(key, &label, &report),
            Err(why) => ActionReport {
                key,
                tone: Tone::Failed,
                summary: format!("{label}: restart failed — {why}"),
                restart: None,
            },
        }
    });
    follow_with_scan(shared, actions, done_key, done);
}

/// "Stop when safe" on one resource: armed on its fresh card, or why not.
fn spawn_arm(
    shared: &Arc<Shared>,
    actions: &mut Actions,
    key: ActionKey,
    target: StopTarget,
    kernel_state_lost: bool,
) {
    let task = Arc::clone(shared);
    let done_key = key.clone();
    let done = tokio::task::spawn_blocking(move || {
        match guarded("arming a stop", || {
            task.engine.arm(&target, kernel_state_lost)
        }) {
            Ok(result) => arm_summary(key, &result),
            Err(why) => failed(key, &why),
        }
    });
    follow_with_scan(shared, actions, done_key, done);
}

/// "Cancel armed stop" on one resource.
fn spawn_disarm(shared: &Arc<Shared>, actions: &mut Actions, key: ActionKey, id: TargetId) {
    let task = Arc::clone(shared);
    let done_key = key.clone();
    let done = tokio::task::spawn_blocking(move || {
        match guarded("cancelling an armed stop", || task.engine.disarm(&id)) {
            Ok(result) => disarm_summary(key, &result),
            Err(why) => failed(key, &why),
        }
    });
    follow_with_scan(shared, actions, done_key, done);
}

/// "Pause for …" (`asked`) or "Resume" (`None`) of the automatic stops.
fn spawn_auto(shared: &Arc<Shared>, actions: &mut Actions, asked: Option<crate::auto::pause::For>) {
    let task = Arc::clone(shared);
    let done = tokio::task::spawn_blocking(move || {
        let key = ActionKey::Auto;
        let summary = match asked {
            Some(asked) => guarded("pausing the rules", || {
                pause_summary(&task.engine.pause(asked))
            }),
            None => guarded("resuming the rules", || {
                resume_summary(&task.engine.resume())
            }),
        };
        summary.unwrap_or_else(|why| failed(key, &why))
    });
    follow_with_scan(shared, actions, ActionKey::Auto, done);
}

/// The result of an action whose engine call panicked.
fn failed(key: ActionKey, why: &Panicked) -> ActionReport {
    ActionReport {
        key,
        tone: Tone::Failed,
        summary: why.to_string(),
        restart: None,
    }
}

/// Delivers an action's result with the generation of the scan that follows it, then starts
/// that scan (docs/design.md §6). A result is always delivered, even when the task died.
fn follow_with_scan(
    shared: &Arc<Shared>,
    actions: &mut Actions,
    key: ActionKey,
    done: tokio::task::JoinHandle<ActionReport>,
) {
    let shared = Arc::clone(shared);
    actions.spawn(async move {
        let report = done.await.unwrap_or_else(|e| {
            tracing::error!("an action task ended abnormally: {e}");
            ActionReport {
                key,
                tone: Tone::Failed,
                summary: Panicked(e.to_string()).to_string(),
                restart: None,
            }
        });
        // Logged here, so a result that lands while the app quits is still on record.
        tracing::info!("{}", crate::words::for_terminal(&report.summary));
        let generation = next_generation(&shared);
        (shared.sink)(Update::ActionDone {
            report,
            settled_by: generation,
        });
        scan_as(&shared, generation, false);
    });
}

/// SIGINT and SIGTERM as one stream; never fires when `enabled` is false or they cannot be
/// caught (then the default action, ending the process, stays in place).
struct QuitSignals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl QuitSignals {
    /// The next SIGINT or SIGTERM, as its number.
    async fn recv(&mut self) -> i32 {
        match &mut self.0 {
            Some((int, term)) => {
                tokio::select! {
                    _ = int.recv() => rustix::process::Signal::INT.as_raw(),
                    _ = term.recv() => rustix::process::Signal::TERM.as_raw(),
                }
            }
            None => std::future::pending().await,
        }
    }
}

fn quit_signals(enabled: bool) -> QuitSignals {
    use tokio::signal::unix::{signal, SignalKind};
    if !enabled {
        return QuitSignals(None);
    }
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(int), Ok(term)) => QuitSignals(Some((int, term))),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("SIGINT/SIGTERM cannot be caught ({e}); they end Pier at once");
            QuitSignals(None)
        }
    }
}

#[cfg(test)]
mod tests;
