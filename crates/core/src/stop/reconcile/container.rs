//! An unfinished container stop (Pier ended between its record and its outcome), reconciled
//! on a later read as a resource's is (`reconcile.rs`): under the card's stop lock taken
//! without waiting, on behalf of the run the record names, written when the folder allows.
//!
//! - without the "signals may follow" mark nothing was sent: no stop;
//! - with it, the run's fate decides, asked of its engine: gone (not running, started again
//!   since, or removed) is a complete stop; the same run still running makes it partial; an
//!   engine that cannot be asked leaves it unfinished.

use std::time::SystemTime;

pub use super::Settled;
use super::{Fate, Unsettled};
use crate::containers::control::Control;
use crate::containers::EngineError;
use crate::model::outcome::{ContainerOutcome, MemberOutcome, ResourceResult};
use crate::model::snapshot::ContainerSnapshot;
use crate::store::Store;

/// The reconciled record: unfinished `s` with a result from the mark and the run's `fate`
/// (unused without the mark); `at` is now (RFC 3339).
pub fn settle(s: &ContainerSnapshot, fate: Fate, at: &str) -> ContainerSnapshot {
    debug_assert!(s.result.is_none(), "only an unfinished stop is reconciled");
    let mut r = s.clone();
    r.reconciled_at = Some(at.to_owned());
    let outcome = |outcome, detail: &str| ContainerOutcome {
        container_id: s.container_id.clone(),
        name: s.name.clone(),
        signal: s.stop_signal.clone(),
        sent: (outcome == MemberOutcome::Skipped).then_some(false),
        outcome,
        detail: detail.to_owned(),
    };
    if s.signals_may_follow != Some(true) {
        r.signalled = Some(false);
        r.result = Some(ResourceResult::Refused);
        r.reason = Some(
            "Pier ended before this stop's signal (its \"signals may follow\" mark was never \
             written): nothing was sent"
                .into(),
        );
        r.outcome = Some(outcome(
            MemberOutcome::Skipped,
            "not signalled: Pier ended before the signal",
        ));
        return r;
    }
    // Whether the signal went out is not known; only the run's fate is.
    r.signalled = None;
    let how = "Pier ended during this stop, after its \"signals may follow\" mark";
    let (member, result, reason) = match fate {
        Fate::Gone => (
            MemberOutcome::Stopped,
            ResourceResult::Stopped,
            format!("{how}; when it was reconciled, its run had ended"),
        ),
        // Its one run still runs: nothing ended.
        Fate::Running => (
            MemberOutcome::StillRunning,
            ResourceResult::NotStopped,
            format!(
                "{how}; when it was reconciled, container {} still ran",
                s.name
            ),
        ),
    };
    r.outcome = Some(outcome(member, "as found when the stop was reconciled"));
    (r.result, r.reason) = (Some(result), Some(reason));
    r
}

/// The fate of the run `s` names, asked of its engine.
fn fate(engine: &dyn Control, s: &ContainerSnapshot) -> Result<Fate, EngineError> {
    Ok(match engine.state(&s.container_id)? {
        Some(now) if now.running && now.started_at == s.started_at => Fate::Running,
        _ => Fate::Gone,
    })
}

/// Reconciles the unfinished record `name` under the card's stop lock; `engine`: its engine,
/// or why it could not be reached.
pub fn reconcile(
    store: &Store,
    engine: Result<&dyn Control, &EngineError>,
    name: &str,
    s: &ContainerSnapshot,
) -> Settled<ContainerSnapshot> {
    let (_lock, s) = match super::locked_fresh::<ContainerSnapshot>(store, &s.id, name) {
        Ok(found) => found,
        Err(why) => return Settled::Left(why),
    };
    if s.result.is_some() {
        return Settled::Written(s);
    }
    let fate = if s.signals_may_follow == Some(true) {
        match engine.map_err(Clone::clone).and_then(|e| fate(e, &s)) {
            Ok(fate) => fate,
            Err(why) => return Settled::Left(Unsettled::NotYet(why.to_string())),
        }
    } else {
        Fate::Gone
    };
    let at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let settled = settle(&s, fate, &at);
    let written = store.update::<ContainerSnapshot, _>(name, s.run(), |r| {
        r.signalled = settled.signalled;
        r.outcome = settled.outcome.clone();
        r.result = settled.result;
        r.reason = settled.reason.clone();
        r.reconciled_at = settled.reconciled_at.clone();
    });
    super::written(written, settled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::snapshot::SnapshotProject;

    fn unfinished(mark: bool) -> ContainerSnapshot {
        ContainerSnapshot {
            schema: crate::model::SCHEMA_VERSION,
            id: "container-fe7ae5f85c8a".into(),
            container_id: "fe7ae5f85c8a".repeat(5) + "abcd",
            name: "web".into(),
            image: "busybox".into(),
            engine: "Docker".into(),
            engine_host: "unix:///var/run/docker.sock".into(),
            started_at: "2026-12-03T06:08:14.144822442Z".into(),
            stop_signal: "SIGTERM".into(),
            created_at: "2026-12-03T07:00:00Z".into(),
            project: SnapshotProject {
                name: "shop".into(),
                path: "/w/shop".into(),
                marker: Some("package.json".into()),
            },
            ports: Vec::new(),
            evidence: Vec::new(),
            signalled: None,
            signals_may_follow: Some(mark),
            reconciled_at: None,
            outcome: None,
            result: None,
            reason: None,
            restarts: Vec::new(),
            batch: None,
            requested_by: Default::default(),
        }
    }

    #[test]
    fn without_the_mark_nothing_was_sent_whatever_the_run_does() {
        let r = settle(&unfinished(false), Fate::Running, "2026-12-03T08:00:00Z");
        assert_eq!(r.signalled, Some(false));
        assert_eq!(r.result, Some(ResourceResult::Refused));
        assert_eq!(r.outcome.unwrap().outcome, MemberOutcome::Skipped);
    }

    #[test]
    fn with_the_mark_a_run_that_ended_is_a_stop_and_one_that_runs_is_not_stopped() {
        let gone = settle(&unfinished(true), Fate::Gone, "2026-12-03T08:00:00Z");
        assert_eq!(gone.result, Some(ResourceResult::Stopped));
        assert_eq!(gone.signalled, None, "whether it was sent is not known");
        assert_eq!(gone.reconciled_at.as_deref(), Some("2026-12-03T08:00:00Z"));
        let runs = settle(&unfinished(true), Fate::Running, "2026-12-03T08:00:00Z");
        assert_eq!(runs.result, Some(ResourceResult::NotStopped));
        assert_eq!(runs.outcome.unwrap().outcome, MemberOutcome::StillRunning);
    }

    #[test]
    fn an_engine_that_cannot_be_asked_leaves_it_unfinished_and_unwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_at(dir.path()).unwrap();
        let s = unfinished(true);
        store.put("ctr-fe7ae5f85c8a-1", &s).unwrap();
        let none = crate::containers::EngineError::NoUnixSockets;
        let r = reconcile(&store, Err(&none), "ctr-fe7ae5f85c8a-1", &s);
        assert!(
            matches!(&r, Settled::Left(Unsettled::NotYet(why)) if *why == none.to_string()),
            "{r:?}"
        );
        let on_disk = store
            .get::<ContainerSnapshot>("ctr-fe7ae5f85c8a-1")
            .unwrap();
        assert_eq!(on_disk.unwrap().result, None);
        // Without the mark no engine is needed: written as no stop.
        let s = unfinished(false);
        store.put("ctr-fe7ae5f85c8a-2", &s).unwrap();
        let r = reconcile(&store, Err(&none), "ctr-fe7ae5f85c8a-2", &s);
        assert!(
            matches!(&r, Settled::Written(w) if w.result == Some(ResourceResult::Refused)),
            "{r:?}"
        );
    }
}
