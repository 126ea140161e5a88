//! A container's stop (docs/design.md §4a): the checkpoint chain of a resource, with the
//! container's engine where the kernel was. Under the card's stop lock:
//!
//! 1. re-diagnose: a fresh scan with the engines asked must show the card green (at no sample)
//!    and, when the caller says what it showed, the same project level and the same run;
//!    the engine must name the same run (container id and start time) with no restart policy
//!    and no auto-remove;
//! 2. the recovery record (`ctr-…`), before any signal: no record, no signal;
//! 3. (a) the fresh card's connections (host and namespace), run as the engine's first
//!    statistics reading comes in, (b) its CPU between that reading and the next (the engine's
//!    own interval, about a second on Docker; disk I/O is not in its statistics), (c)
//!    connections again, (d) the run's identity
//!    from the engine, the "signals may follow" mark, (e) connections and identity once more;
//!    at most 2 s from (a) to the signal, on the probe's clock;
//! 4. right before the signal, the run once more; then its stop signal through the engine's
//!    kill endpoint — never the engine's own stop, which SIGKILLs after its timeout;
//! 5. a bounded wait (the grace period) on the engine's own wait, then its state: gone or not
//!    running is `stopped`, the same run still running is `still_running`;
//! 6. a rescan: the container running again, or a recorded port held by anyone, makes it
//!    `partially_stopped`, naming who;
//! 7. the outcome, added to the record on behalf of the run it names.
//!
//! What remains between the last look and the signal: the engine's kill names the container,
//! not the run, so a `docker restart` by someone else in the milliseconds between the last
//! inspection and the kill would receive the signal. No engine API pins a run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::failure::Unrecorded;
use super::flow::{abandoned, refused, Stopper};
use super::refusal::{Refusal, Why};
use super::target::{Answer, Deadline, Ended, Signalled, Target};
use crate::containers::control::{self, Control, State, Unsent};
use crate::containers::error::{EngineError, Unmeasured};
use crate::containers::sample;
use crate::diagnose::{self, rules, Engines};
use crate::model::card::{Level, Project};
use crate::model::container::Container;
use crate::model::outcome::{
    Checkpoint, ContainerOutcome, MemberOutcome, PlannedSignal, ResourceResult, StopReport, Timings,
};
use crate::model::shown::Shown;
use crate::model::snapshot::{ContainerSnapshot, SnapshotProject};
use crate::model::target::TargetId;

/// Why a fresh container card may not be stopped: whatever keeps it from green (at no
/// sample: its activity is checkpoint (b)'s), in the card's own words. The one judge of the
/// container's checks (a), (c) and (e), as the scan's rules are the resources'.
pub fn not_green(c: &Container) -> Option<String> {
    if c.level == Level::Green {
        return None;
    }
    Some(format!(
        "container {} is {} now: {}",
        c.name,
        c.level.as_str(),
        crate::words::reasons(&c.evidence, c.level)
    ))
}

/// Why the fresh diagnosis of a container's stop gave no answer to use.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unscanned {
    /// The scan itself failed.
    #[error(transparent)]
    Scan(#[from] diagnose::ScanError),
    /// No card found, and engines that did not answer (their words): it may be theirs.
    #[error("{}", .0.join("; "))]
    Unasked(Vec<String>),
}

/// What the container did over its engine's window, judged as the scan judges it: CPU above
/// the threshold, or not measured, refuses.
fn busy(
    name: &str,
    measured: Result<control::Measured, impl std::fmt::Display>,
    t: rules::Thresholds,
) -> Option<String> {
    let (evidence, _) = rules::container_activity(name, Some(measured), t);
    (evidence.level != Level::Green).then(|| format!("container {name}: {}", evidence.message))
}

/// A container run in the chain: what its steps share.
pub(super) struct Run<'s> {
    id: &'s str,
    container_id: String,
    name: String,
    started_at: String,
    engine: Box<dyn Control>,
    project: Project,
    card: Container,
    /// Its stop signal, as its engine named it at the re-diagnosis.
    stop_signal: String,
    /// Its record and that record's name (empty on a dry run, which writes none).
    record: Option<ContainerSnapshot>,
    name_of_record: String,
    /// When its check (a) ran: as its engine's first reading came in.
    t0: Option<Duration>,
    /// What its engine measured over (b)'s window, once (a) ran.
    measured: Option<Result<control::Measured, Unmeasured>>,
    /// That window, in milliseconds.
    window_ms: u64,
}

/// A container as the re-diagnosis found it: its run, not yet recorded.
pub(super) type FreshRun<'s> = Run<'s>;

impl<'s> Target<'s> for Run<'s> {
    type Fresh = FreshRun<'s>;
    type Seen = ();
    const SHOWS_STEPS: bool = false;
    const BEFORE_START: &'static str = "before its stop began";
    const DURING_CHECKS: &'static str = "during its checks";

    fn rediagnose(
        s: &Stopper,
        asked: &[(&'s str, Option<&Shown>)],
    ) -> ((), Vec<Answer<Self::Fresh>>) {
        let answers = asked
            .iter()
            .map(|&(id, shown)| s.container_run(id, shown))
            .collect();
        ((), answers)
    }

    fn record(s: &Stopper, fresh: Vec<Self::Fresh>) -> Vec<Answer<Self>> {
        fresh
            .into_iter()
            .map(|mut run| {
                if !s.opts.dry_run {
                    let (name, record) = s.put_container_record(&run).map_err(|mut r| {
                        run.label(&mut r);
                        r
                    })?;
                    (run.name_of_record, run.record) = (name, Some(record));
                }
                Ok(run)
            })
            .collect()
    }

    fn look(s: &Stopper, at: Checkpoint, group: &mut [&mut Self]) -> Vec<Result<(), Refusal>> {
        group.iter_mut().map(|run| run.look(s, at)).collect()
    }

    fn mark(&self, s: &Stopper) -> Result<(), Unrecorded> {
        let record = self
            .record
            .as_ref()
            .expect("a stop past its record has one");
        s.store
            .update::<ContainerSnapshot, _>(&self.name_of_record, record.run(), |r| {
                r.signals_may_follow = Some(true);
            })
            .map(drop)
            .map_err(|e| Unrecorded::RecordMark(e.to_string()))
    }

    fn checked_at(&self) -> Option<Duration> {
        self.t0
    }

    /// What its engine would be asked to send, where the signal would go out.
    fn plan(&self, s: &Stopper, deadline: Deadline) -> StopReport {
        if let Err(r) = self.last_look(s, deadline) {
            return *r;
        }
        let signal = &self.stop_signal;
        StopReport {
            would_signal: vec![PlannedSignal {
                pid: None,
                start_time: None,
                command: format!("container {}", self.name),
                signal: signal.clone(),
                order: 1,
            }],
            ..StopReport::new(
                self.id,
                ResourceResult::WouldStop,
                format!(
                    "every check passed; --dry-run: nothing was sent or written (its engine, \
                     {}, would be asked to send {signal} to container {})",
                    self.card.engine, self.name
                ),
            )
        }
    }

    fn send(&self, s: &Stopper, deadline: Deadline) -> Signalled {
        (self.signal(s, deadline), None)
    }

    fn rescan(s: &Stopper, ended: Vec<(&Self, Signalled)>, _: &Ended<()>) -> Vec<StopReport> {
        ended
            .into_iter()
            .map(|(run, (mut r, _))| {
                s.container_rescan(&run.card, &mut r);
                r
            })
            .collect()
    }

    fn id(&self) -> &str {
        self.id
    }

    fn project(&self) -> &str {
        &self.project.path
    }

    /// What it is and where, as the card did.
    fn label(&self, r: &mut StopReport) {
        r.kind = Some(format!("container {}", self.card.name));
        r.project = Some(self.project.path.clone());
    }

    fn record_name(&self) -> &str {
        &self.name_of_record
    }

    /// The published ports a stopped container freed.
    fn close(&self, r: &mut StopReport) {
        if r.result == ResourceResult::Stopped {
            let published = self.card.ports.iter().map(|p| p.port);
            r.freed_ports = super::tree::port_numbers(published);
        }
    }

    /// Step 7: the outcome added to the record, on behalf of the run it names.
    fn record_outcome(&self, s: &Stopper, out: &StopReport) -> Option<String> {
        let record = self.record.as_ref()?;
        // Sent, not sent, or unknown (the engine did not confirm it).
        let signalled = match &out.container {
            Some(c) => c.sent,
            None => Some(false),
        };
        s.store
            .update::<ContainerSnapshot, _>(&self.name_of_record, record.run(), |r| {
                r.signalled = signalled;
                r.outcome = out.container.clone();
                r.result = Some(out.result);
                r.reason = Some(out.reason.clone());
            })
            .err()
            .map(|e| format!("its outcome could not be written to its record: {e}"))
    }
}

type Step<T> = Result<T, Box<StopReport>>;

impl Stopper<'_> {
    /// Step 1 for the card `id`: refused under Force; then a fresh scan with the engines asked
    /// must show it green, as shown, and its engine must name the same run. `shown`: what the
    /// user was shown, if anything.
    fn container_run<'s>(&self, id: &'s str, shown: Option<&Shown>) -> Step<Run<'s>> {
        let no = |why: String| Box::new(StopReport::new(id, ResourceResult::Refused, why));
        if self.opts.anyway.confirmed(id).is_some() {
            return Err(no(
                "a stop anyway is for process trees: a container is stopped only through its \
                 engine, after every check"
                    .into(),
            ));
        }
        let (project, card) = self.container_rediagnose(id, shown)?;
        // Every report from here on names what it is and where, as the card did.
        let no_run = |why: String| {
            let mut r = StopReport::new(id, ResourceResult::Refused, why);
            r.kind = Some(format!("container {}", card.name));
            r.project = Some(project.path.clone());
            Box::new(r)
        };
        let started_at = card.started_at.clone().ok_or_else(|| {
            no_run(format!(
                "{} gave no start time for container {}, so its run cannot be told from \
                 another",
                card.engine, card.name
            ))
        })?;
        let engine = self
            .engines
            .connect(&card.engine_host)
            .map_err(|e| no_run(e.to_string()))?;
        let mut run = Run {
            id,
            container_id: card.container_id.clone(),
            name: card.name.clone(),
            started_at,
            engine,
            project,
            card,
            stop_signal: String::new(),
            record: None,
            name_of_record: String::new(),
            t0: None,
            measured: None,
            window_ms: 0,
        };
        // Part of the re-diagnosis: the engine's own account of the run, before any record.
        match run.identity(Checkpoint::A) {
            Ok(state) => run.stop_signal = state.stop_signal,
            Err(r) => {
                let mut r = StopReport::new(id, ResourceResult::Refused, r.to_string());
                run.label(&mut r);
                return Err(Box::new(r));
            }
        }
        Ok(run)
    }
    /// Step 1: a fresh scan with the engines asked must show the card green, as shown.
    fn container_rediagnose(&self, id: &str, shown: Option<&Shown>) -> Step<(Project, Container)> {
        let no = |why: String| Box::new(StopReport::new(id, ResourceResult::Refused, why));
        let (project, card) = self
            .fresh_container(id)
            .map_err(|e| no(format!("the fresh diagnosis failed: {e}")))?
            .ok_or_else(|| {
                no(format!(
                    "no container card {id} now: it is not running, or publishes no port"
                ))
            })?;
        if let Some(why) = not_green(&card) {
            return Err(no(why));
        }
        if let Some(shown) = shown {
            if shown.project_level != project.level {
                return Err(no(format!(
                    "the project is {} now, not {} as shown",
                    project.level.as_str(),
                    shown.project_level.as_str()
                )));
            }
            if shown.container_run != card.started_at {
                return Err(no(format!(
                    "container {} was started again since it was shown",
                    card.name
                )));
            }
        }
        Ok((project, card))
    }

    /// The card `id` in a fresh scan of the machine with every engine asked, at no sample,
    /// with its project; `None` when no running container has it.
    fn fresh_container(&self, id: &str) -> Result<Option<(Project, Container)>, Unscanned> {
        let opts = diagnose::ScanOptions {
            engines: Engines::Given(self.engines.read(), sample::Samples::new()),
            ..self.scan_options(Vec::new())
        };
        let scan = diagnose::scan(self.probe, &opts, self.marker_at)?;
        let unasked: Vec<String> = scan
            .engines
            .iter()
            .filter_map(|e| e.error.clone())
            .collect();
        let found = scan.projects.into_iter().find_map(|p| {
            let c = p.containers.iter().find(|c| c.id == id).cloned()?;
            Some((p, c))
        });
        match found {
            // Not found, and an engine did not answer: it may be that engine's.
            None if !unasked.is_empty() => Err(Unscanned::Unasked(unasked)),
            found => Ok(found),
        }
    }

    /// Step 2: the recovery record, before any signal: its name and the record.
    fn put_container_record(&self, run: &Run) -> Step<(String, ContainerSnapshot)> {
        let (project, card) = (&run.project, &run.card);
        let record = ContainerSnapshot {
            schema: crate::model::SCHEMA_VERSION,
            id: card.id.clone(),
            container_id: run.container_id.clone(),
            name: card.name.clone(),
            image: card.image.clone(),
            engine: card.engine.clone(),
            engine_host: card.engine_host.clone(),
            started_at: run.started_at.clone(),
            stop_signal: run.stop_signal.clone(),
            created_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            project: SnapshotProject {
                name: project.name.clone(),
                path: project.path.clone(),
                marker: project.marker.clone(),
            },
            ports: card.ports.clone(),
            evidence: card.evidence.clone(),
            signalled: None,
            signals_may_follow: Some(false),
            reconciled_at: None,
            outcome: None,
            result: None,
            reason: None,
            restarts: Vec::new(),
            batch: self.opts.batch.clone(),
            requested_by: self.opts.requested_by.clone(),
        };
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let not_written = |e: &dyn std::fmt::Display| {
            let why = Unrecorded::Record(e.to_string());
            Box::new(StopReport::new(
                run.id,
                ResourceResult::Failed,
                why.to_string(),
            ))
        };
        let target: TargetId = card.id.parse().map_err(|e| not_written(&e))?;
        let name = target.record(ms).to_string();
        self.store
            .put(&name, &record)
            .map_err(|e| not_written(&e))?;
        Ok((name, record))
    }

    /// Step 6: after a stop, the container must not run again, and no one may hold a recorded
    /// port; either lowers the result to `partially_stopped`, naming who.
    fn container_rescan(&self, card: &Container, out: &mut StopReport) {
        if out.result != ResourceResult::Stopped {
            return;
        }
        let opts = diagnose::ScanOptions {
            include_others: true,
            engines: Engines::Given(self.engines.read(), sample::Samples::new()),
            ..self.scan_options(Vec::new())
        };
        let found = match diagnose::scan(self.probe, &opts, self.marker_at) {
            Ok(scan) => replacement(&scan, card).or_else(|| {
                // Its engine, had it not answered, may be running it again (another engine
                // cannot: a replacement of its would hold a port, which the scan shows).
                let unasked: Vec<String> = scan
                    .engines
                    .iter()
                    .filter(|e| e.host == card.engine_host)
                    .filter_map(|e| e.error.clone())
                    .collect();
                (!unasked.is_empty())
                    .then(|| format!("a replacement cannot be ruled out: {}", unasked.join("; ")))
            }),
            Err(e) => Some(format!(
                "the rescan failed, so a replacement cannot be ruled out: {e}"
            )),
        };
        if let Some(why) = found {
            out.result = ResourceResult::PartiallyStopped;
            out.reason = format!("{}; but {why}", out.reason);
        }
    }
}

impl Run<'_> {
    /// Checkpoint `at`: (a) as its engine's first statistics reading comes in, (b) its CPU
    /// between that reading and the next (the engine's own interval, about a second on
    /// Docker, not `opts.sample`), (c) and (e) its fresh card, (d) and (e) its run.
    fn look(&mut self, s: &Stopper, at: Checkpoint) -> Result<(), Refusal> {
        match at {
            Checkpoint::A => self.look_a(s),
            Checkpoint::B => {
                let t = s.opts.thresholds;
                let busy = match self.measured.take() {
                    Some(measured) => busy(&self.name, measured, t),
                    None => busy(&self.name, Err::<control::Measured, &str>(""), t),
                };
                match busy {
                    Some(why) => Err(refusal(Checkpoint::B, why)),
                    None => Ok(()),
                }
            }
            Checkpoint::C => self.network(s, Checkpoint::C),
            Checkpoint::D => self.identity(Checkpoint::D).map(drop),
            Checkpoint::E | Checkpoint::Deadline => {
                self.network(s, Checkpoint::E)?;
                self.identity(Checkpoint::E).map(drop)
            }
        }
    }

    /// (a), run as the engine's first reading comes in; (b)'s measure is kept for (b).
    fn look_a(&mut self, s: &Stopper) -> Result<(), Refusal> {
        let mut t0 = None;
        let mut checked_a = Err(refusal(Checkpoint::A, "check (a) did not run".into()));
        let measured = self.engine.activity(&self.container_id, &mut || {
            t0 = Some(s.probe.now());
            checked_a = self.network(s, Checkpoint::A);
        });
        let Some(t0) = t0 else {
            let why = measured.err().map(|e| e.to_string()).unwrap_or_default();
            return Err(refusal(
                Checkpoint::B,
                format!(
                    "container {}: its activity could not be read: {why}",
                    self.name
                ),
            ));
        };
        checked_a?;
        self.t0 = Some(t0);
        self.window_ms = measured.as_ref().map_or(0, |m| m.window.as_millis() as u64);
        self.measured = Some(measured);
        Ok(())
    }

    /// Checks (a), (c), (e): the fresh card, judged as the scan judges it.
    fn network(&self, s: &Stopper, at: Checkpoint) -> Result<(), Refusal> {
        let (_, card) = s
            .fresh_container(self.id)
            .map_err(|e| refusal(at, format!("the fresh diagnosis failed: {e}")))?
            .ok_or_else(|| {
                refusal(
                    at,
                    format!(
                        "container {} is no longer running with its ports",
                        self.name
                    ),
                )
            })?;
        if card.started_at.as_deref() != Some(self.started_at.as_str()) {
            return Err(refusal(
                at,
                format!(
                    "container {} was started again during the checks",
                    self.name
                ),
            ));
        }
        not_green(&card).map_or(Ok(()), |why| Err(refusal(at, why)))
    }

    /// The run once more, then the deadline and an interruption, at the moment of the signal.
    fn last_look(&self, s: &Stopper, deadline: Deadline) -> Step<()> {
        let last = self.identity(Checkpoint::E).and_then(|_| {
            let Some(took) = deadline.passed(s.probe.now()) else {
                return Ok(());
            };
            Err(refusal(
                Checkpoint::Deadline,
                format!(
                    "the checks took {} ms, more than the {} ms allowed from the first check to \
                     the signal",
                    took.as_millis(),
                    deadline.limit.as_millis()
                ),
            ))
        });
        if let Err(r) = last {
            return Err(Box::new(refused(self.id, r, &s.opts)));
        }
        if let Some(interrupted) = s.interrupt.raised() {
            return Err(Box::new(abandoned(
                self.id,
                interrupted,
                "during its checks",
            )));
        }
        Ok(())
    }

    /// Steps 4 and 5: the run once more, its stop signal through the engine, the bounded
    /// wait, and what is true then.
    fn signal(&self, s: &Stopper, deadline: Deadline) -> StopReport {
        let signal = self.stop_signal.as_str();
        let outcome = |outcome, detail: String, sent| ContainerOutcome {
            container_id: self.container_id.clone(),
            name: self.name.clone(),
            signal: signal.to_owned(),
            sent,
            outcome,
            detail,
        };
        if let Err(r) = self.last_look(s, deadline) {
            return *r;
        }
        let unconfirmed = match self.engine.signal(&self.container_id, signal) {
            Ok(()) => None,
            Err(Unsent::Refused(why)) => {
                let why = format!("the engine refused {signal}: {why}");
                return StopReport {
                    container: Some(outcome(MemberOutcome::Failed, why.clone(), Some(false))),
                    ..StopReport::new(
                        self.id,
                        ResourceResult::Refused,
                        format!("no signal was sent: {why}"),
                    )
                };
            }
            // It may have gone out: what is true after the wait says what it did.
            Err(Unsent::Unknown(why)) => Some(why),
        };
        let sent = deadline.since(s.probe.now());
        let grace = s.opts.grace;
        let waited = self.engine.wait_stopped(&self.container_id, grace);
        let after = self.engine.state(&self.container_id);
        let asked = match &unconfirmed {
            None => format!("{signal} was sent"),
            Some(_) => format!("{signal} was asked of its engine (no answer)"),
        };
        let (member, result, mut reason) = ending(self, (signal, &asked), grace, waited.and(after));
        if let Some(why) = &unconfirmed {
            reason = format!("the engine did not confirm {signal} ({why}); {reason}");
        }
        let ms = sent.as_secs_f64() * 1e3;
        StopReport {
            container: Some(outcome(
                member,
                reason.clone(),
                unconfirmed.is_none().then_some(true),
            )),
            timings: Some(Timings {
                a_to_first_signal_ms: ms,
                a_to_last_signal_ms: ms,
                sample_ms: self.window_ms,
            }),
            interrupted: s.interrupt.raised().map(str::to_owned),
            ..StopReport::new(self.id, result, reason)
        }
    }

    /// The run as the engine says it is now: the one judged, with no manager.
    fn identity(&self, at: Checkpoint) -> Result<State, Refusal> {
        let now = self
            .engine
            .state(&self.container_id)
            .map_err(|e| refusal(at, e.to_string()))?
            .ok_or_else(|| refusal(at, format!("container {} was removed", self.name)))?;
        control::check_run(&now, &self.container_id, &self.started_at)
            .map_err(|e| refusal(at, e.to_string()))?;
        if let Some(why) = control::manager(&now) {
            return Err(refusal(at, why.to_string()));
        }
        control::check_stop_signal(&now.stop_signal)
            .map_err(|why| refusal(at, format!("container {}: {why}", self.name)))?;
        Ok(now)
    }
}

/// What is true after the wait: the container's outcome, the result, the reason.
/// `asked`: the signal, and whether it went out in words (`"SIGTERM was sent"`).
fn ending(
    run: &Run,
    (signal, asked): (&str, &str),
    grace: Duration,
    after: Result<Option<State>, EngineError>,
) -> (MemberOutcome, ResourceResult, String) {
    let name = &run.name;
    match after {
        Err(e) => (
            MemberOutcome::Failed,
            ResourceResult::PartiallyStopped,
            format!("{asked}, but whether container {name} stopped is unknown: {e}"),
        ),
        Ok(None) => (
            MemberOutcome::Stopped,
            ResourceResult::Stopped,
            format!("container {name} is gone after {signal} (its engine removed it)"),
        ),
        Ok(Some(now)) if !now.running => (
            MemberOutcome::Stopped,
            ResourceResult::Stopped,
            format!("container {name} stopped after {signal}"),
        ),
        // Its one run, signalled, did not end: nothing stopped (docs/design.md §3.7).
        Ok(Some(now)) if now.started_at == run.started_at => (
            MemberOutcome::StillRunning,
            ResourceResult::NotStopped,
            format!(
                "{} (waited {} s; Pier never sends the engine's SIGKILL, `docker kill {name}` \
                 would)",
                super::ending::still_runs_after(&[format!("container {name}")], signal),
                grace.as_secs_f64()
            ),
        ),
        Ok(Some(now)) => (
            MemberOutcome::Stopped,
            ResourceResult::PartiallyStopped,
            format!(
                "container {name} stopped after {signal}, and was started again (its new run \
                 began at {})",
                now.started_at
            ),
        ),
    }
}

/// What the rescan found in place of the stopped container: the container itself running
/// again, or a listener (a card's, or anyone's) on one of its recorded ports.
fn replacement(scan: &crate::model::card::Scan, stopped: &Container) -> Option<String> {
    let ports: Vec<u16> = stopped.ports.iter().map(|p| p.port).collect();
    for p in &scan.projects {
        for c in &p.containers {
            if c.id == stopped.id {
                return Some(format!("container {} runs again", c.name));
            }
            if let Some(port) = c.ports.iter().find(|q| ports.contains(&q.port)) {
                return Some(format!(
                    "port {} is published again, by container {}",
                    port.port, c.name
                ));
            }
        }
        for r in &p.resources {
            if let Some(port) = r.ports.iter().find(|q| ports.contains(&q.port)) {
                return Some(format!(
                    "port {} listens again, held by pid {} ({})",
                    port.port, r.root.pid, r.kind
                ));
            }
        }
    }
    let others = scan.other_listeners.iter().flatten();
    others
        .filter(|l| ports.contains(&l.port))
        .map(|l| {
            let who = l.pid.map_or("a process Pier cannot see".to_owned(), |pid| {
                format!("pid {pid}")
            });
            format!("port {} listens again, held by {who}", l.port)
        })
        .next()
}

fn refusal(checkpoint: Checkpoint, why: String) -> Refusal {
    Refusal {
        checkpoint,
        why: Why::Container(why),
    }
}
