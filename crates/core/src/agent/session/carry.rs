//! Carrying a plan out: taken once, checked for what changed since, then the whole chain
//! (docs/design.md §3) with what the plan saw as what was shown; every outcome on the record.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::model::agent::{AgentAction, AgentResult};
use crate::model::outcome::{ResourceResult, StopReport};
use crate::model::reason::{Anyway, Reason};
use crate::model::request::RequestedBy;
use crate::model::shown::Shown;
use crate::stop::StopOptions;

use super::super::plan::Plan;
use super::super::reply::CarriedOut;
use super::super::{journal, mask, AgentError};
use super::Session;

impl Session {
    /// Carries plan `id` out through the full chain again, refusing what changed since. Every
    /// outcome, a refusal included, is on the record with the client's name.
    pub fn carry_out(&mut self, id: &str) -> Result<CarriedOut, AgentError> {
        self.writable()?;
        let stop = AgentAction::Stop;
        let plan = match self.plans.take(id, Instant::now()) {
            Ok(plan) => plan,
            Err(e) => return Err(self.refused(stop, Some(id), Vec::new(), e)),
        };
        let left = self.stops_left();
        if left == 0 || plan.targets.len() > left {
            let ids = plan.targets.iter().map(|t| t.id.clone()).collect();
            return Err(self.refused(stop, Some(id), ids, AgentError::Cap(self.opts.max_stops)));
        }
        let mut reports = match self.chain(&plan) {
            Ok(reports) => reports,
            Err(e) => {
                let ids = plan.targets.iter().map(|t| t.id.clone()).collect();
                return Err(self.refused(stop, Some(id), ids, e));
            }
        };
        self.stopped += reports
            .iter()
            .filter(|r| r.result != ResourceResult::Refused)
            .count();
        // What this session may restart: its own stops, by their records' names.
        self.stopped_here
            .extend(reports.iter().filter_map(|r| r.snapshot.clone()));
        for r in &mut reports {
            mask::stop_report(r);
        }
        let results = reports.iter().map(journal::of_stop).collect();
        let record_error = self.journal(stop, Some(id), None, results);
        Ok(CarriedOut {
            plan: plan.id,
            reports,
            stops_left: self.stops_left(),
            record_error,
        })
    }

    /// `plan`'s targets through the chain: what changed since the plan is refused before it,
    /// the rest stopped as a person's click would be (the agent's own with its live parent set
    /// aside). Unmasked.
    fn chain(&self, plan: &Plan) -> Result<Vec<StopReport>, AgentError> {
        let scan = self.scan(Vec::new(), false, Duration::ZERO)?;
        let list = self.ancestry(&scan)?;
        let mut reports = Vec::new();
        let mut go = Vec::new();
        for t in &plan.targets {
            match self.changed(&scan, &list, t) {
                Some(why) => reports.push(StopReport::new(
                    &t.id,
                    ResourceResult::Refused,
                    why.to_string(),
                )),
                None => go.push(t),
            }
        }
        let mut anyway = Anyway::default();
        for t in go.iter().filter(|t| t.own) {
            anyway.confirm(&t.id, BTreeSet::from([Reason::NotOrphaned]));
        }
        let opts = StopOptions {
            requested_by: RequestedBy::Agent {
                client: self.client.name.clone(),
            },
            anyway,
            ..StopOptions::default()
        };
        let targets: Vec<(&str, Option<&Shown>)> =
            go.iter().map(|t| (t.id.as_str(), Some(&t.shown))).collect();
        let stopper = self.system.stopper(opts);
        reports.extend(stopper.stop_all(&targets, &mut |_| {}));
        Ok(reports)
    }

    /// Puts a request on the record with the client's name; why it could not be, for the
    /// reply. Why a failed write does not fail the request: what was done is done, and the
    /// reply must say what it was — and that it is not on the record.
    pub(super) fn journal(
        &self,
        action: AgentAction,
        plan: Option<&str>,
        refused: Option<&AgentError>,
        results: Vec<AgentResult>,
    ) -> Option<String> {
        let request = journal::Request {
            client: &self.client.name,
            action,
            plan,
            refused,
            results,
        };
        match journal::record(&self.system.store, request) {
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("an agent's request was not recorded: {e}");
                Some(e.to_string())
            }
        }
    }

    /// Records a refused request and hands its error back: as a whole (no `ids`), or for each
    /// target it named. A record that cannot be written is logged: the refusal stands.
    pub(super) fn refused(
        &self,
        action: AgentAction,
        plan: Option<&str>,
        ids: Vec<String>,
        e: AgentError,
    ) -> AgentError {
        let result = match e {
            AgentError::Failed(_) => "failed",
            _ => "refused",
        };
        let results: Vec<AgentResult> = ids
            .into_iter()
            .map(|id| AgentResult {
                id,
                result: result.into(),
                reason: e.to_string(),
                snapshot: None,
                respawns: Vec::new(),
            })
            .collect();
        let whole = results.is_empty().then_some(&e);
        self.journal(action, plan, whole, results);
        e
    }
}
