//! One agent's session: the allow-list of what it may ask (docs/design.md §7a), each a method
//! that blocks (a stop samples activity and waits for exits; callers run it off their
//! protocol's thread).

mod carry;
mod planning;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::diagnose::port::PortAnswer;
use crate::diagnose::{self, project, ScanOptions};
use crate::front::System;
use crate::model::agent::AgentAction;
use crate::model::card::{Level, Resource, Scan};
use crate::model::request::RequestedBy;
use crate::model::target::{RecordName, TargetId, TargetKind};
use crate::probe::{Identity, ProcessList};

use super::journal;
use super::next::{self, next_step};
use super::own::{self, NotOwn};
use super::plan::{Plans, LIFETIME};
use super::reply::{Cards, Declined, HistoryReply, NextStep, PlanReply, Restarted};
use super::{mask, AgentError};
use planning::{holders_of, keep_ports};

/// How a session behaves (`pier mcp`'s options).
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Offer no plan, stop or restart.
    pub read_only: bool,
    /// The most resources the session may stop.
    pub max_stops: usize,
    /// The activity sample of the `cards` tool and of a plan (the stop always samples).
    pub sample: Duration,
    /// How long a restart waits for the server's ports.
    pub restart_wait: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            read_only: false,
            max_stops: 10,
            sample: Duration::from_millis(500),
            restart_wait: Duration::from_secs(15),
        }
    }
}

/// The MCP client, as the session knows it.
#[derive(Debug, Clone, Default)]
pub struct Client {
    /// The name the client gave (`clientInfo.name`); recorded as who asked.
    pub name: String,
    /// Its process, when `pier mcp` was started by an agent (`own::client_of`); `None`: nothing
    /// is the agent's own.
    pub process: Option<Identity>,
    /// `pier mcp`'s own start time: roots started later are this session's.
    pub since: u64,
}

/// One agent's session over one engine.
pub struct Session {
    /// The engine: probe, signaller, waiter, state folder.
    pub system: System,
    /// Who is asking.
    pub client: Client,
    /// How it behaves.
    pub opts: SessionOptions,
    plans: Plans,
    stopped: usize,
    /// The records of this session's stops: all it may restart.
    stopped_here: BTreeSet<String>,
}

impl Session {
    /// A session over `system` for `client`.
    pub fn new(system: System, client: Client, opts: SessionOptions) -> Self {
        Self {
            system,
            client,
            opts,
            plans: Plans::default(),
            stopped: 0,
            stopped_here: BTreeSet::new(),
        }
    }

    /// The cards, scoped to `under` (folders, already resolved; empty: everything) and `ports`
    /// (empty: every port).
    pub fn cards(&self, under: &[PathBuf], ports: &[u16]) -> Result<Cards, AgentError> {
        let mut scan = self.scan(under.to_vec(), !ports.is_empty(), self.opts.sample)?;
        if !ports.is_empty() {
            keep_ports(&mut scan, ports);
        }
        let list = self.ancestry(&scan)?;
        let (mut mine, mut next_steps) = (Vec::new(), Vec::new());
        for r in scan.projects.iter().flat_map(|p| &p.resources) {
            let own = self.own(&list, r);
            if own.is_ok() {
                mine.push(r.id.clone());
            }
            if r.level != Level::Green {
                next_steps.push(NextStep {
                    id: r.id.clone(),
                    level: r.level,
                    next: next_step(r, &own),
                });
            }
        }
        let containers = scan.projects.iter().flat_map(|p| &p.containers);
        next_steps.extend(
            containers
                .filter(|c| c.level != Level::Green)
                .map(next::container_step),
        );
        trim_titles(&mut scan);
        mask::scan(&mut scan);
        Ok(Cards {
            scan,
            mine,
            next_steps,
        })
    }

    /// Who holds `port`, and whether a plan would stop it, in the agent's words: nothing a
    /// person's command line would do (`pier stop`), which an agent must not reach past.
    pub fn port(&self, port: u16) -> Result<PortAnswer, AgentError> {
        let scan = self.scan(Vec::new(), true, self.opts.sample)?;
        let list = self.ancestry(&scan)?;
        let mut answer = diagnose::port::answer(&scan, port);
        if !answer.is_free() {
            let holder = planning::find_holder(&scan, port);
            let own = holder.map(|r| self.own(&list, r));
            (answer.reason, answer.hint) =
                next::port_words(&answer, holder, own.as_ref(), self.opts.read_only);
        }
        mask::port(&mut answer);
        Ok(answer)
    }

    /// A plan to stop `ids` and the holders of `ports`, and (with `mine`) every resource the
    /// agent started itself. Read-only: nothing is signalled or written.
    pub fn plan(
        &mut self,
        ids: &[String],
        ports: &[u16],
        mine: bool,
    ) -> Result<PlanReply, AgentError> {
        self.writable()?;
        for id in ids {
            id.parse::<TargetId>()
                .map_err(|_| AgentError::BadId(id.clone()))?;
        }
        let scan = self.scan(Vec::new(), !ports.is_empty(), self.opts.sample)?;
        let list = self.ancestry(&scan)?;
        let mut wanted: Vec<String> = ids.to_vec();
        let mut refused = Vec::new();
        for &port in ports {
            let holders = holders_of(&scan, port);
            if holders.is_empty() {
                refused.push(next::nothing_on(port));
            }
            wanted.extend(holders);
        }
        if mine {
            wanted.extend(self.mine(&scan, &list));
        }
        let mut seen = BTreeSet::new();
        wanted.retain(|id| seen.insert(id.clone()));
        let mut planned = Vec::new();
        let mut stops = Vec::new();
        let left = self.stops_left();
        for id in &wanted {
            match self.plan_one(&scan, &list, id) {
                Ok(_) if planned.len() >= left => refused.push(NextStep {
                    id: id.clone(),
                    level: Level::Green,
                    next: AgentError::Cap(self.opts.max_stops).to_string(),
                }),
                Ok((p, stop)) => {
                    planned.push(p);
                    stops.push(stop);
                }
                Err(step) => refused.push(step),
            }
        }
        let (plan, question) = match planned.is_empty() {
            true => (None, None),
            false => (
                Some(self.plans.make(planned, Instant::now())?),
                Some(next::question(&self.client.name, &stops)),
            ),
        };
        Ok(PlanReply {
            plan,
            expires_in_seconds: LIFETIME.as_secs(),
            stops,
            refused,
            question,
        })
    }

    /// The question the person is asked before plan `id` is carried out (`None`: no such
    /// open plan, or one the cap refuses: carrying it out says why).
    pub fn question(&self, id: &str) -> Option<String> {
        let plan = self.plans.peek(id, Instant::now())?;
        // A plan the cap refuses is refused before the person is asked about it.
        if plan.targets.len() > self.stops_left() {
            return None;
        }
        let what: Vec<String> = plan.targets.iter().map(|t| t.words.clone()).collect();
        Some(next::question_of(&self.client.name, &what))
    }

    /// Marks plan `id` used without carrying it out: the person declined. It is on the record,
    /// with the client's name.
    pub fn decline(&mut self, id: &str) -> Result<Declined, AgentError> {
        let plan = self.plans.take(id, Instant::now())?;
        let results = journal::declined(plan.targets.iter().map(|t| t.id.clone()));
        let record_error = self.journal(AgentAction::Declined, Some(id), None, results);
        Ok(Declined {
            plan: plan.id,
            record_error,
        })
    }

    /// The history of stops, masked.
    pub fn history(&self) -> Result<HistoryReply, AgentError> {
        let (mut entries, damaged) =
            crate::restart::history(self.system.probe.as_ref(), &self.system.store)
                .map_err(|e| AgentError::Failed(e.to_string()))?;
        for e in &mut entries {
            mask::history_entry(e);
        }
        Ok(HistoryReply { entries, damaged })
    }

    /// Restarts `snapshot` (a record's name, as `history` gives it), if this agent's client
    /// stopped it. Every answer, a refusal included, is on the record with the client's name.
    pub fn restart(&mut self, snapshot: &str) -> Result<Restarted, AgentError> {
        self.writable()?;
        let restart = AgentAction::Restart;
        if let Err(e) = self.may_restart(snapshot) {
            return Err(self.refused(restart, None, vec![snapshot.to_owned()], e));
        }
        let mut report = self.system.restart(snapshot, self.opts.restart_wait);
        mask::restart_report(&mut report);
        let record_error = self.journal(restart, None, None, vec![journal::of_restart(&report)]);
        Ok(Restarted {
            report,
            record_error,
        })
    }

    /// Whether `snapshot` is a stop this session made. Why not any stop by a client of the same
    /// name: a client's name is its own word, and another session could take it.
    fn may_restart(&self, snapshot: &str) -> Result<(), AgentError> {
        if !self.stopped_here.contains(snapshot) {
            return Err(AgentError::NotYours(snapshot.to_owned()));
        }
        let record: RecordName = snapshot
            .parse()
            .map_err(|_| AgentError::NotYours(snapshot.to_owned()))?;
        let store = &self.system.store;
        let by = match record.target.kind() {
            TargetKind::Tree => crate::restart::find(store, snapshot).map(|(_, s)| s.requested_by),
            TargetKind::Container => {
                crate::restart::container::find(store, snapshot).map(|(_, s)| s.requested_by)
            }
        }
        .map_err(|e| AgentError::Failed(e.to_string()))?;
        let me = RequestedBy::Agent {
            client: self.client.name.clone(),
        };
        match by == me {
            true => Ok(()),
            false => Err(AgentError::NotYours(snapshot.to_owned())),
        }
    }

    fn writable(&self) -> Result<(), AgentError> {
        match self.opts.read_only {
            true => Err(AgentError::ReadOnly),
            false => Ok(()),
        }
    }

    fn stops_left(&self) -> usize {
        self.opts.max_stops.saturating_sub(self.stopped)
    }

    fn scan(
        &self,
        under: Vec<PathBuf>,
        others: bool,
        sample: Duration,
    ) -> Result<Scan, AgentError> {
        let opts = ScanOptions {
            sample,
            under,
            include_others: others,
            engines: diagnose::Engines::Ask,
            protect: crate::config::protect(),
            ..ScanOptions::default()
        };
        diagnose::scan(self.system.probe.as_ref(), &opts, &project::marker_on_disk)
            .map_err(|e| AgentError::Failed(e.to_string()))
    }

    /// The process table own-detection walks, read only when a card could be the agent's own
    /// (an agent's session, and a root started after it began): most answers need no second
    /// read of the table (`bench/mcp.sh`).
    fn ancestry(&self, scan: &Scan) -> Result<ProcessList, AgentError> {
        let since = self.client.since;
        let roots = scan.projects.iter().flat_map(|p| &p.resources);
        let mut later = roots.filter(|r| r.root.start_time > since);
        if self.client.process.is_none() || later.next().is_none() {
            return Ok(ProcessList::default());
        }
        self.system
            .probe
            .processes()
            .map_err(|e| AgentError::Failed(e.to_string()))
    }

    /// Whether the agent started `r` itself (`own::judge`), and if not why.
    fn own(&self, list: &ProcessList, r: &Resource) -> Result<(), NotOwn> {
        let client = self.client.process.ok_or(NotOwn::NotDescended)?;
        if r.root.start_time <= self.client.since {
            return Err(NotOwn::Before);
        }
        own::judge(list, r.root, client, self.client.since)
    }
}

/// Every member's argv without the empty words a rewritten title leaves after it (npm pads
/// its title over the whole old argv): an agent pays for each byte it is told.
fn trim_titles(scan: &mut Scan) {
    let members = scan
        .projects
        .iter_mut()
        .flat_map(|p| &mut p.resources)
        .flat_map(|r| &mut r.members);
    for m in members {
        while m.argv.len() > 1 && m.argv.last().is_some_and(|a| a.is_empty()) {
            m.argv.pop();
        }
    }
}
