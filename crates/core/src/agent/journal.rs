//! Every action an agent asked for, on the record (docs/design.md §7a): one
//! `agent-<ms>-<pid>-<n>` record per request, with the client's name and each target's honest
//! result — a refusal before the chain and a decline too, which no snapshot shows. Written
//! through the store (atomic, private); read by `pier history`; gone a week after it was
//! written, as a snapshot that can never be restarted is (`restart::prune::EXPIRY`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::model::agent::{AgentAction, AgentLine, AgentRequest, AgentResult};
use crate::model::history::{RestartReport, RestartResult};
use crate::model::outcome::{NewcomerFate, StopReport};
use crate::restart::prune::EXPIRY;
use crate::store::{Owned, Store, StoreError, Versioned};

use super::AgentError;

/// What every agent record's name starts with: no other listing (`snap-`, `ctr-`, `arm-`)
/// reads it.
pub const PREFIX: &str = "agent-";

impl Versioned for AgentRequest {
    const SCHEMA: u32 = AgentRequest::SCHEMA;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for AgentRequest {
    /// A record of what was asked, not of a process: it speaks for the user.
    fn owner(&self) -> crate::model::Identity {
        crate::auto::NOBODY
    }
}

/// One request: who asked, what, and for what — the results, or why the request as a whole
/// was refused.
pub struct Request<'a> {
    /// The MCP client's name.
    pub client: &'a str,
    /// What it asked for.
    pub action: AgentAction,
    /// The plan, for a stop or a decline.
    pub plan: Option<&'a str>,
    /// Why the request as a whole was refused, before any target.
    pub refused: Option<&'a AgentError>,
    /// One result per target.
    pub results: Vec<AgentResult>,
}

/// Writes `request` as a new record; its name, or why it could not be written.
pub fn record(store: &Store, request: Request) -> Result<String, StoreError> {
    static N: AtomicU64 = AtomicU64::new(0);
    let now = SystemTime::now();
    let ms = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let record = AgentRequest {
        schema: AgentRequest::SCHEMA,
        client: request.client.to_owned(),
        at: humantime::format_rfc3339_seconds(now).to_string(),
        action: request.action,
        plan: request.plan.map(str::to_owned),
        refused: request.refused.map(ToString::to_string),
        results: request.results,
    };
    // Unique per process by the counter, across processes by the pid: `put` never replaces.
    let n = N.fetch_add(1, Ordering::Relaxed);
    let name = format!("{PREFIX}{ms}-{}-{n}", std::process::id());
    store.put(&name, &record)?;
    Ok(name)
}

/// A stop's report as a target's result; what came back during the stop and still ran is
/// named.
pub fn of_stop(r: &StopReport) -> AgentResult {
    AgentResult {
        id: r.id.clone(),
        result: r.result.as_str().to_owned(),
        reason: r.reason.clone(),
        snapshot: r.snapshot.clone(),
        respawns: r
            .newcomers
            .iter()
            .filter(|n| n.fate == NewcomerFate::StillRunning)
            .map(|n| format!("pid {}: {}", n.pid, n.command))
            .collect(),
    }
}

/// A restart's report as a target's result. Why `snapshot` only once started: a started
/// restart is recorded in its snapshot (and `pier history` shows it there); a refused one
/// is only here.
pub fn of_restart(r: &RestartReport) -> AgentResult {
    let started = matches!(r.result, RestartResult::Ready | RestartResult::NotReady);
    AgentResult {
        id: r.snapshot.clone(),
        result: serde_json::to_value(r.result)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        reason: r.reason.clone(),
        snapshot: started.then(|| r.snapshot.clone()),
        respawns: Vec::new(),
    }
}

/// Every target's `result` as declined by the person.
pub fn declined(ids: impl IntoIterator<Item = String>) -> Vec<AgentResult> {
    let reason = AgentError::Declined.to_string();
    ids.into_iter()
        .map(|id| AgentResult {
            id,
            result: "declined".into(),
            reason: reason.clone(),
            snapshot: None,
            respawns: Vec::new(),
        })
        .collect()
}

/// The requests' lines that no snapshot shows, newest first, and the records that could not
/// be read (kept).
pub fn unshown(store: &Store) -> Result<(Vec<AgentLine>, Vec<String>), StoreError> {
    let listing = store.list::<AgentRequest>(PREFIX)?;
    let mut lines = Vec::new();
    for (name, r) in listing.records.iter().rev() {
        lines.extend(lines_of(name, r));
    }
    let damaged = listing.damaged.iter().map(ToString::to_string).collect();
    Ok((lines, damaged))
}

/// `r`'s lines that no snapshot shows: the whole request's refusal, or each such target.
fn lines_of(name: &str, r: &AgentRequest) -> Vec<AgentLine> {
    let line = |id: Option<&str>, result: &str, reason: &str, respawns: &[String]| AgentLine {
        record: name.to_owned(),
        at: r.at.clone(),
        client: r.client.clone(),
        action: r.action,
        plan: r.plan.clone(),
        id: id.map(str::to_owned),
        result: result.to_owned(),
        reason: reason.to_owned(),
        respawns: respawns.to_vec(),
    };
    if let Some(why) = &r.refused {
        return vec![line(None, "refused", why, &[])];
    }
    r.results
        .iter()
        .filter(|x| x.snapshot.is_none())
        .map(|x| line(Some(&x.id), &x.result, &x.reason, &x.respawns))
        .collect()
}

/// Removes the records older than [`EXPIRY`] at `now`; their names. Why the same week as a
/// snapshot that can never be restarted: neither brings anything back, and both are kept long
/// enough to read what happened. A record that cannot be read is kept, as every store keeps one.
pub fn expire(store: &Store, now: SystemTime) -> Vec<String> {
    let Ok(listing) = store.list::<AgentRequest>(PREFIX) else {
        return Vec::new();
    };
    let mut gone = Vec::new();
    for (name, r) in listing.records {
        let old = humantime::parse_rfc3339(&r.at)
            .ok()
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|age| age > EXPIRY);
        if !old {
            continue;
        }
        match store.remove::<AgentRequest>(&name, crate::auto::NOBODY) {
            Ok(()) => gone.push(name),
            Err(e) => tracing::warn!("{name} not expired: {e}"),
        }
    }
    gone
}

#[cfg(test)]
mod tests;
