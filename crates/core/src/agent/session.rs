//! One agent's session: the allow-list of what it may ask (docs/design.md §7a), each a method
//! that blocks (a stop samples activity and waits for exits; callers run it off their
//! protocol's thread).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::diagnose::port::PortAnswer;
use crate::diagnose::{self, project, ScanOptions};
use crate::front::System;
use crate::model::card::{Level, Project, Resource, Scan};
use crate::model::reason::{self, Anyway, Reason, SetAside};
use crate::model::request::RequestedBy;
use crate::model::shown::Shown;
use crate::model::target::{RecordName, TargetId, TargetKind};
use crate::probe::{Identity, ProcessList};
use crate::stop::StopOptions;

use super::next::next_step;
use super::own::{self, NotOwn};
use super::plan::{Planned, Plans, LIFETIME};
use super::reply::{Cards, CarriedOut, HistoryReply, NextStep, PlanReply, PlannedStop, Restarted};
use super::{mask, AgentError};

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
}

/// A resource (or a container's card) of a scan, found by id, with its project.
struct Found<'s> {
    project: &'s Project,
    resource: Option<&'s Resource>,
    shown: Shown,
    ports: BTreeSet<u16>,
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
        }
    }

    /// The cards, scoped to `under` (folders, already resolved; empty: everything) and `ports`
    /// (empty: every port).
    pub fn cards(&self, under: &[PathBuf], ports: &[u16]) -> Result<Cards, AgentError> {
        let mut scan = self.scan(under.to_vec(), !ports.is_empty(), self.opts.sample)?;
        if !ports.is_empty() {
            keep_ports(&mut scan, ports);
        }
        let list = self.processes()?;
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
        mask::scan(&mut scan);
        Ok(Cards {
            scan,
            mine,
            next_steps,
        })
    }

    /// Who holds `port`, and whether a plan would stop it; the way forward is the agent's.
    pub fn port(&self, port: u16) -> Result<PortAnswer, AgentError> {
        let scan = self.scan(Vec::new(), true, self.opts.sample)?;
        let list = self.processes()?;
        let mut answer = diagnose::port::answer(&scan, port);
        answer.hint = scan
            .projects
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.ports.iter().any(|x| x.port == port) && r.level != Level::Green)
            .map(|r| next_step(r, &self.own(&list, r)));
        if answer.stops.is_some() {
            answer.hint = Some("`plan_stop` with this port plans its stop".into());
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
        let list = self.processes()?;
        let mut wanted: Vec<String> = ids.to_vec();
        let mut refused = Vec::new();
        for &port in ports {
            let holders = holders_of(&scan, port);
            if holders.is_empty() {
                refused.push(nothing_on(port));
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
        let question = question(&self.client.name, &stops);
        let plan = match planned.is_empty() {
            true => None,
            false => Some(self.plans.make(planned, Instant::now())?),
        };
        for s in &mut stops {
            s.members = s.members.iter().map(|m| mask::line(m)).collect();
        }
        Ok(PlanReply {
            plan,
            expires_in_seconds: LIFETIME.as_secs(),
            stops,
            refused,
            question,
        })
    }

    /// The question the person is asked before plan `id` is carried out (`None`: no such
    /// open plan).
    pub fn question(&self, id: &str) -> Option<String> {
        let plan = self.plans.peek(id)?;
        let what: Vec<String> = plan.targets.iter().map(|t| t.words.clone()).collect();
        Some(question_of(&self.client.name, &what))
    }

    /// Marks plan `id` used without carrying it out: the person declined.
    pub fn decline(&mut self, id: &str) -> Result<(), AgentError> {
        self.plans.take(id, Instant::now()).map(|_| ())
    }

    /// Carries plan `id` out through the full chain again, refusing what changed since.
    pub fn carry_out(&mut self, id: &str) -> Result<CarriedOut, AgentError> {
        self.writable()?;
        let plan = self.plans.take(id, Instant::now())?;
        let left = self.stops_left();
        if left == 0 || plan.targets.len() > left {
            return Err(AgentError::Cap(self.opts.max_stops));
        }
        let scan = self.scan(Vec::new(), false, Duration::ZERO)?;
        let list = self.processes()?;
        let mut reports = Vec::new();
        let mut go = Vec::new();
        for t in &plan.targets {
            match self.changed(&scan, &list, t) {
                Some(why) => reports.push(crate::model::outcome::StopReport::new(
                    &t.id,
                    crate::model::outcome::ResourceResult::Refused,
                    format!("refused: {why} since the plan was made; nothing was signalled"),
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
        self.stopped += reports
            .iter()
            .filter(|r| r.result != crate::model::outcome::ResourceResult::Refused)
            .count();
        for r in &mut reports {
            mask::stop_report(r);
        }
        Ok(CarriedOut {
            plan: plan.id,
            reports,
            stops_left: self.stops_left(),
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
    /// stopped it.
    pub fn restart(&mut self, snapshot: &str) -> Result<Restarted, AgentError> {
        self.writable()?;
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
        if by != me {
            return Err(AgentError::NotYours(snapshot.to_owned()));
        }
        let mut report = self.system.restart(snapshot, self.opts.restart_wait);
        mask::restart_report(&mut report);
        Ok(Restarted { report })
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

    fn processes(&self) -> Result<ProcessList, AgentError> {
        self.system
            .probe
            .processes()
            .map_err(|e| AgentError::Failed(e.to_string()))
    }

    /// Whether the agent started `r` itself (`own::judge`), and if not why.
    fn own(&self, list: &ProcessList, r: &Resource) -> Result<(), NotOwn> {
        let client = self.client.process.ok_or(NotOwn::NotDescended)?;
        own::judge(list, r.root, client, self.client.since)
    }

    /// The ids of every resource the agent started itself.
    fn mine(&self, scan: &Scan, list: &ProcessList) -> Vec<String> {
        scan.projects
            .iter()
            .flat_map(|p| &p.resources)
            .filter(|r| self.own(list, r).is_ok())
            .map(|r| r.id.clone())
            .collect()
    }

    /// One target of a plan, or why the plan leaves it out and the way forward.
    fn plan_one(
        &self,
        scan: &Scan,
        list: &ProcessList,
        id: &str,
    ) -> Result<(Planned, PlannedStop), NextStep> {
        let found = find(scan, id).ok_or_else(|| gone(id))?;
        let (own, reasons, sets_aside) = match found.resource {
            Some(r) => {
                let own = self.own(list, r);
                let reasons = match r.level {
                    Level::Green => BTreeSet::new(),
                    _ => reason::reasons_of(&r.evidence),
                };
                let waived = own.is_ok() && reasons.iter().all(|x| x.agent_own_waives());
                if !reasons.is_empty() && !waived {
                    return Err(NextStep {
                        id: id.to_owned(),
                        level: r.level,
                        next: next_step(r, &own),
                    });
                }
                (own.is_ok() && !reasons.is_empty(), reasons, aside(r))
            }
            None => (false, BTreeSet::new(), Vec::new()),
        };
        let stop = planned_stop(id, &found, own, sets_aside);
        let planned = Planned {
            id: id.to_owned(),
            shown: found.shown.clone(),
            ports: found.ports.clone(),
            reasons,
            own,
            words: describe(&stop),
        };
        Ok((planned, stop))
    }

    /// What changed for `t` since its plan, in words; `None`: nothing the plan relied on.
    fn changed(&self, scan: &Scan, list: &ProcessList, t: &Planned) -> Option<String> {
        let Some(found) = find(scan, &t.id) else {
            return Some("it is gone".into());
        };
        if found.ports != t.ports {
            return Some(format!(
                "its ports changed (planned {:?}, now {:?})",
                t.ports, found.ports
            ));
        }
        let own = found.resource.is_some_and(|r| self.own(list, r).is_ok());
        if t.own && !own {
            return Some("it is no longer one the agent started itself".into());
        }
        None
    }
}

/// What a stop anyway of the agent's own sets aside: its live parent's fact.
fn aside(r: &Resource) -> Vec<SetAside> {
    crate::stop::anyway::aside(&r.evidence)
}

/// The resource or container card `id` in `scan`.
fn find<'s>(scan: &'s Scan, id: &str) -> Option<Found<'s>> {
    for p in &scan.projects {
        if let Some(r) = p.resources.iter().find(|r| r.id == id) {
            return Some(Found {
                project: p,
                resource: Some(r),
                shown: Shown::of(p.level, r),
                ports: r.ports.iter().map(|x| x.port).collect(),
            });
        }
        if let Some(c) = p.containers.iter().find(|c| c.id == id) {
            return Some(Found {
                project: p,
                resource: None,
                shown: Shown::of_container(p.level, c),
                ports: c.ports.iter().map(|x| x.port).collect(),
            });
        }
    }
    None
}

/// The ids of every card (resource or container) that listens on `port`.
fn holders_of(scan: &Scan, port: u16) -> Vec<String> {
    let mut ids = Vec::new();
    for p in &scan.projects {
        let rs = p
            .resources
            .iter()
            .filter(|r| r.ports.iter().any(|x| x.port == port));
        ids.extend(rs.map(|r| r.id.clone()));
        let cs = p
            .containers
            .iter()
            .filter(|c| c.ports.iter().any(|x| x.port == port));
        ids.extend(cs.map(|c| c.id.clone()));
    }
    ids
}

/// Only the resources and containers that listen on one of `ports`; empty projects dropped.
fn keep_ports(scan: &mut Scan, ports: &[u16]) {
    for p in &mut scan.projects {
        p.resources
            .retain(|r| r.ports.iter().any(|x| ports.contains(&x.port)));
        p.containers
            .retain(|c| c.ports.iter().any(|x| ports.contains(&x.port)));
    }
    scan.projects
        .retain(|p| !p.resources.is_empty() || !p.containers.is_empty());
}

fn gone(id: &str) -> NextStep {
    NextStep {
        id: id.to_owned(),
        level: Level::Red,
        next: "no such resource now (it may have exited, or it is another user's): look again \
               with `cards`"
            .into(),
    }
}

fn nothing_on(port: u16) -> NextStep {
    NextStep {
        id: format!(":{port}"),
        level: Level::Green,
        next: format!(
            "no card listens on TCP port {port}: `who_holds_port` says what does, if anything"
        ),
    }
}

fn planned_stop(id: &str, f: &Found, own: bool, sets_aside: Vec<SetAside>) -> PlannedStop {
    let members = f
        .resource
        .map(|r| {
            r.members
                .iter()
                .map(|m| format!("{}: {}", m.pid, crate::words::command_of_strings(&m.argv)))
                .collect()
        })
        .unwrap_or_default();
    PlannedStop {
        id: id.to_owned(),
        kind: f.resource.map(|r| r.kind.clone()),
        project: f.project.path.clone(),
        ports: f.ports.iter().copied().collect(),
        members,
        own,
        sets_aside: if own { sets_aside } else { Vec::new() },
    }
}

/// One target in the words of the person's question: `vite in /src/shop (:5173; pids 10, 11)`.
fn describe(s: &PlannedStop) -> String {
    let pids: Vec<String> = s
        .members
        .iter()
        .filter_map(|m| m.split(':').next().map(str::to_owned))
        .collect();
    let ports: Vec<String> = s.ports.iter().map(|p| format!(":{p}")).collect();
    let kind = s.kind.clone().unwrap_or_else(|| "container".into());
    let mut what = format!("{kind} in {}", s.project);
    match (ports.is_empty(), pids.is_empty()) {
        (false, false) => what += &format!(" ({}; pids {})", ports.join(" "), pids.join(", ")),
        (false, true) => what += &format!(" ({})", ports.join(" ")),
        (true, false) => what += &format!(" (pids {})", pids.join(", ")),
        (true, true) => {}
    }
    if s.own {
        what += ", which the agent started itself";
    }
    what
}

fn question(client: &str, stops: &[PlannedStop]) -> String {
    let what: Vec<String> = stops.iter().map(describe).collect();
    question_of(client, &what)
}

/// The one question a person is asked before an agent's stop.
fn question_of(client: &str, what: &[String]) -> String {
    format!(
        "The agent {client:?} asks Pier to stop {}. Pier checks again that it is safe and keeps \
         a snapshot to restart it. Stop it?",
        what.join("; ")
    )
}
