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

use super::flow::{abandoned, refused, report, Stopper};
use super::refusal::{Refusal, Why};
use crate::containers::control::{self, Control, State, Unsent};
use crate::containers::sample;
use crate::diagnose::{self, rules, Engines};
use crate::model::card::{Level, Project};
use crate::model::container::Container;
use crate::model::outcome::{
    Checkpoint, ContainerOutcome, MemberOutcome, PlannedSignal, ResourceResult, StopReport, Timings,
};
use crate::model::shown::Shown;
use crate::model::snapshot::{ContainerSnapshot, SnapshotProject};

/// The prefix of a container card's id, and so of a container's stop.
pub const CARD_PREFIX: &str = "container-";

/// The record name of a container's stop: `ctr-<12 hex digits>-<unix ms>`.
pub const RECORD_PREFIX: &str = "ctr-";

/// Whether `id` names a container's card (`container-<hex>`).
pub fn is_container_id(id: &str) -> bool {
    id.strip_prefix(CARD_PREFIX)
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

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

/// What the container did over its engine's window, judged as the scan judges it: CPU above
/// the threshold, or not measured, refuses.
fn busy(
    name: &str,
    measured: Result<control::Measured, String>,
    t: rules::Thresholds,
) -> Option<String> {
    let (evidence, _) = rules::container_activity(name, Some(measured), t);
    (evidence.level != Level::Green).then(|| format!("container {name}: {}", evidence.message))
}

/// One container's stop as it goes: what its steps share.
struct Run<'s> {
    id: &'s str,
    container_id: String,
    name: String,
    started_at: String,
    engine: Box<dyn Control>,
}

type Step<T> = Result<T, Box<StopReport>>;

impl Stopper<'_> {
    /// Stops the container of card `id` through its engine (the module's steps). `shown`:
    /// what the user was shown, if anything.
    pub(super) fn stop_container(&self, id: &str, shown: Option<&Shown>) -> StopReport {
        let _lock = match self.lock(id) {
            Ok(lock) => lock,
            Err(report) => return *report,
        };
        match self.container_chain(id, shown) {
            Ok(report) => report,
            Err(report) => *report,
        }
    }

    fn container_chain(&self, id: &str, shown: Option<&Shown>) -> Step<StopReport> {
        let no = |why: String| Box::new(report(id, ResourceResult::Refused, why));
        if self.opts.force {
            return Err(no(
                "Force is for processes: a container is stopped only through its engine, after \
                 every check"
                    .into(),
            ));
        }
        let (project, card) = self.container_rediagnose(id, shown)?;
        // Every report from here on names what it is and where, as the card did.
        let labelled = |mut r: StopReport| {
            r.kind = Some(format!("container {}", card.name));
            r.project = Some(project.path.clone());
            r
        };
        self.container_checked(id, &project, &card)
            .map(labelled)
            .map_err(|r| Box::new(labelled(*r)))
    }

    /// The rest of the chain once the re-diagnosis found the card green.
    fn container_checked(&self, id: &str, project: &Project, card: &Container) -> Step<StopReport> {
        let no = |why: String| Box::new(report(id, ResourceResult::Refused, why));
        let started_at = card.started_at.clone().ok_or_else(|| {
            no(format!(
                "{} gave no start time for container {}, so its run cannot be told from \
                 another",
                card.engine, card.name
            ))
        })?;
        let engine = self.engines.connect(&card.engine_host).map_err(no)?;
        let run = Run {
            id,
            container_id: card.container_id.clone(),
            name: card.name.clone(),
            started_at,
            engine,
        };
        // Part of the re-diagnosis: the engine's own account of the run, before any record.
        let state = run.identity(Checkpoint::A).map_err(|r| no(r.to_string()))?;
        if self.opts.dry_run {
            return Ok(self.container_dry_run(&run, &card.engine, &state.stop_signal));
        }
        let (name, record) = self.put_container_record(project, card, &run, &state)?;
        let with_record = |mut r: Box<StopReport>| {
            r.snapshot = Some(name.clone());
            r.record_error = self.record_container(&name, &record, &r);
            r
        };
        let (t0, window_ms) = self
            .container_checks(&run, Some((&name, &record)))
            .map_err(with_record)?;
        let mut out = self.container_signal(&run, &state.stop_signal, (t0, window_ms));
        self.container_rescan(card, &mut out);
        out.snapshot = Some(name.clone());
        out.record_error = self.record_container(&name, &record, &out);
        Ok(out)
    }

    /// Step 1: a fresh scan with the engines asked must show the card green, as shown.
    fn container_rediagnose(&self, id: &str, shown: Option<&Shown>) -> Step<(Project, Container)> {
        let no = |why: String| Box::new(report(id, ResourceResult::Refused, why));
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
    fn fresh_container(&self, id: &str) -> Result<Option<(Project, Container)>, String> {
        let opts = diagnose::ScanOptions {
            engines: Engines::Given(self.engines.read(), sample::Samples::new()),
            ..self.scan_options(Vec::new())
        };
        let scan = diagnose::scan(self.probe, &opts, self.marker_at).map_err(|e| e.to_string())?;
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
            None if !unasked.is_empty() => Err(unasked.join("; ")),
            found => Ok(found),
        }
    }

    /// Step 2: the recovery record, before any signal.
    fn put_container_record(
        &self,
        project: &Project,
        card: &Container,
        run: &Run,
        state: &State,
    ) -> Step<(String, ContainerSnapshot)> {
        let record = ContainerSnapshot {
            schema: 1,
            id: card.id.clone(),
            container_id: run.container_id.clone(),
            name: card.name.clone(),
            image: card.image.clone(),
            engine: card.engine.clone(),
            engine_host: card.engine_host.clone(),
            started_at: run.started_at.clone(),
            stop_signal: state.stop_signal.clone(),
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
        };
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let hex = card.id.trim_start_matches(CARD_PREFIX);
        let name = format!("{RECORD_PREFIX}{hex}-{ms}");
        self.store.put(&name, &record).map_err(|e| {
            Box::new(report(
                run.id,
                ResourceResult::Failed,
                format!("the recovery record could not be written, so nothing was signalled: {e}"),
            ))
        })?;
        Ok((name, record))
    }

    /// Step 3, checks (a) to (e) and the deadline; returns when (a) ran, and the activity
    /// window the engine measured, in milliseconds.
    /// `record`: the stop record and its name, marked "signals may follow" before (e); `None`
    /// for a dry run, which writes none.
    fn container_checks(
        &self,
        run: &Run,
        record: Option<(&str, &ContainerSnapshot)>,
    ) -> Step<(Duration, u64)> {
        let at = |r: Refusal| Box::new(refused(run.id, r));
        // (a) runs as the engine's first reading comes in, (b) ends with its second: the
        // engine's own interval (about a second on Docker), not `opts.sample`.
        let mut t0 = None;
        let mut checked_a = Err(refusal(Checkpoint::A, "check (a) did not run".into()));
        let measured = run.engine.activity(&run.container_id, &mut || {
            t0 = Some(self.probe.now());
            checked_a = self.container_network(run, Checkpoint::A);
        });
        let Some(t0) = t0 else {
            let why = measured.err().unwrap_or_default();
            return Err(at(refusal(
                Checkpoint::B,
                format!(
                    "container {}: its activity could not be read: {why}",
                    run.name
                ),
            )));
        };
        checked_a.map_err(at)?;
        let window_ms = measured.as_ref().map_or(0, |m| m.window.as_millis() as u64);
        if let Some(why) = busy(&run.name, measured, self.opts.thresholds) {
            return Err(at(refusal(Checkpoint::B, why)));
        }
        self.container_network(run, Checkpoint::C).map_err(at)?;
        run.identity(Checkpoint::D).map_err(at)?;
        if let Some(signal) = self.interrupt.raised() {
            return Err(Box::new(abandoned(run.id, signal, "during its checks")));
        }
        let Some((name, record)) = record else {
            self.container_network(run, Checkpoint::E).map_err(at)?;
            run.identity(Checkpoint::E).map_err(at)?;
            return Ok((t0, window_ms));
        };
        self.store
            .update::<ContainerSnapshot, _>(name, record.run(), |s| {
                s.signals_may_follow = Some(true);
            })
            .map_err(|e| {
                Box::new(report(
                    run.id,
                    ResourceResult::Failed,
                    format!(
                        "the \"signals may follow\" mark could not be written to the record, so \
                         nothing was signalled: {e}"
                    ),
                ))
            })?;
        self.container_network(run, Checkpoint::E).map_err(at)?;
        run.identity(Checkpoint::E).map_err(at)?;
        Ok((t0, window_ms))
    }

    /// The run once more, then the deadline and an interruption, at the moment of the signal
    /// (`t0`: when check (a) ran).
    fn container_last_look(&self, run: &Run, t0: Duration) -> Step<()> {
        let last = run.identity(Checkpoint::E).and_then(|_| {
            let took = self.probe.now().saturating_sub(t0);
            if took <= self.opts.deadline {
                return Ok(());
            }
            Err(refusal(
                Checkpoint::Deadline,
                format!(
                    "the checks took {} ms, more than the {} ms allowed from the first check to \
                     the signal",
                    took.as_millis(),
                    self.opts.deadline.as_millis()
                ),
            ))
        });
        if let Err(r) = last {
            return Err(Box::new(refused(run.id, r)));
        }
        if let Some(interrupted) = self.interrupt.raised() {
            return Err(Box::new(abandoned(
                run.id,
                interrupted,
                "during its checks",
            )));
        }
        Ok(())
    }

    /// A dry run of a container's stop: every check, no record, and what its engine would be
    /// asked to send, where the signal would go out.
    fn container_dry_run(&self, run: &Run, engine: &str, signal: &str) -> StopReport {
        let checked = self
            .container_checks(run, None)
            .and_then(|(t0, _)| self.container_last_look(run, t0));
        if let Err(r) = checked {
            return *r;
        }
        StopReport {
            would_signal: vec![PlannedSignal {
                pid: None,
                start_time: None,
                command: format!("container {}", run.name),
                signal: signal.to_owned(),
                order: 1,
            }],
            ..report(
                run.id,
                ResourceResult::WouldStop,
                format!(
                    "every check passed; --dry-run: nothing was sent or written (its engine, \
                     {}, would be asked to send {signal} to container {})",
                    engine, run.name
                ),
            )
        }
    }

    /// Checks (a), (c), (e): the fresh card, judged as the scan judges it.
    fn container_network(&self, run: &Run, at: Checkpoint) -> Result<(), Refusal> {
        let (_, card) = self
            .fresh_container(run.id)
            .map_err(|e| refusal(at, format!("the fresh diagnosis failed: {e}")))?
            .ok_or_else(|| {
                refusal(
                    at,
                    format!("container {} is no longer running with its ports", run.name),
                )
            })?;
        if card.started_at.as_deref() != Some(run.started_at.as_str()) {
            return Err(refusal(
                at,
                format!("container {} was started again during the checks", run.name),
            ));
        }
        not_green(&card).map_or(Ok(()), |why| Err(refusal(at, why)))
    }

    /// Steps 4 and 5: the run once more, its stop signal through the engine, the bounded
    /// wait, and what is true then. `t0`: when check (a) ran; `window_ms`: the activity
    /// window the engine measured at (b).
    fn container_signal(
        &self,
        run: &Run,
        signal: &str,
        (t0, window_ms): (Duration, u64),
    ) -> StopReport {
        let outcome = |outcome, detail: String, sent| ContainerOutcome {
            container_id: run.container_id.clone(),
            name: run.name.clone(),
            signal: signal.to_owned(),
            sent,
            outcome,
            detail,
        };
        if let Err(r) = self.container_last_look(run, t0) {
            return *r;
        }
        let unconfirmed = match run.engine.signal(&run.container_id, signal) {
            Ok(()) => None,
            Err(Unsent::Refused(why)) => {
                let why = format!("the engine refused {signal}: {why}");
                return StopReport {
                    container: Some(outcome(MemberOutcome::Failed, why.clone(), Some(false))),
                    ..report(
                        run.id,
                        ResourceResult::Refused,
                        format!("no signal was sent: {why}"),
                    )
                };
            }
            // It may have gone out: what is true after the wait says what it did.
            Err(Unsent::Unknown(why)) => Some(why),
        };
        let sent = self.probe.now().saturating_sub(t0);
        let grace = self.opts.grace;
        let waited = run.engine.wait_stopped(&run.container_id, grace);
        let after = run.engine.state(&run.container_id);
        let asked = match &unconfirmed {
            None => format!("{signal} was sent"),
            Some(_) => format!("{signal} was asked of its engine (no answer)"),
        };
        let (member, result, mut reason) = ending(run, (signal, &asked), grace, waited.and(after));
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
                sample_ms: window_ms,
            }),
            interrupted: self.interrupt.raised().map(str::to_owned),
            ..report(run.id, result, reason)
        }
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

    /// Step 7: the outcome added to the record, on behalf of the run it names; why not, if
    /// it could not be.
    fn record_container(
        &self,
        name: &str,
        record: &ContainerSnapshot,
        out: &StopReport,
    ) -> Option<String> {
        // Sent, not sent, or unknown (the engine did not confirm it).
        let signalled = match &out.container {
            Some(c) => c.sent,
            None => Some(false),
        };
        self.store
            .update::<ContainerSnapshot, _>(name, record.run(), |s| {
                s.signalled = signalled;
                s.outcome = out.container.clone();
                s.result = Some(out.result);
                s.reason = Some(out.reason.clone());
            })
            .err()
            .map(|e| format!("its outcome could not be written to its record: {e}"))
    }
}

impl Run<'_> {
    /// The run as the engine says it is now: the one judged, with no manager.
    fn identity(&self, at: Checkpoint) -> Result<State, Refusal> {
        let now = self
            .engine
            .state(&self.container_id)
            .map_err(|e| refusal(at, e))?
            .ok_or_else(|| refusal(at, format!("container {} was removed", self.name)))?;
        control::same_run(&now, &self.container_id, &self.started_at)
            .map_err(|e| refusal(at, e))?;
        if let Some(why) = control::engine_manages(&now) {
            return Err(refusal(at, why));
        }
        control::sendable_stop_signal(&now.stop_signal)
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
    after: Result<Option<State>, String>,
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
        Ok(Some(now)) if now.started_at == run.started_at => (
            MemberOutcome::StillRunning,
            ResourceResult::PartiallyStopped,
            format!(
                "container {name} still runs {} s after {signal} (Pier never sends the engine's \
                 SIGKILL; `docker kill {name}` would)",
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
