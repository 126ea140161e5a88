//! A plan's targets: found in a fresh scan, judged (green, or the agent's own with only its
//! live parent against it), described for the person's question; and what changed since.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::card::{Level, Project, Resource, Scan};
use crate::model::container::Container;
use crate::model::reason::{self, SetAside};
use crate::model::shown::Shown;
use crate::probe::ProcessList;

use super::super::mask;
use super::super::next::{self, Changed};
use super::super::plan::Planned;
use super::super::reply::{NextStep, PlannedStop};
use super::Session;

/// A resource (or a container's card) of a scan, found by id, with its project.
pub(super) struct Found<'s> {
    project: &'s Project,
    resource: Option<&'s Resource>,
    container: Option<&'s Container>,
    shown: Shown,
    ports: BTreeSet<u16>,
}

impl Session {
    /// The ids of every resource the agent started itself.
    pub(super) fn mine(&self, scan: &Scan, list: &ProcessList) -> Vec<String> {
        scan.projects
            .iter()
            .flat_map(|p| &p.resources)
            .filter(|r| self.own(list, r).is_ok())
            .map(|r| r.id.clone())
            .collect()
    }

    /// One target of a plan, or why the plan leaves it out and the way forward.
    pub(super) fn plan_one(
        &self,
        scan: &Scan,
        list: &ProcessList,
        id: &str,
    ) -> Result<(Planned, PlannedStop), NextStep> {
        let found = find(scan, id).ok_or_else(|| next::gone(id))?;
        if let Some(c) = found.container.filter(|c| c.level != Level::Green) {
            return Err(next::container_step(c));
        }
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
                        next: next::next_step(r, &own),
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
            argv: argv_of(found.resource),
            reasons,
            own,
            words: next::describe(&stop),
        };
        Ok((planned, stop))
    }

    /// What changed for `t` since its plan; `None`: nothing the plan relied on. (Members,
    /// identities and the level are the chain's to compare: the plan is what it was shown.)
    pub(super) fn changed(&self, scan: &Scan, list: &ProcessList, t: &Planned) -> Option<Changed> {
        let Some(found) = find(scan, &t.id) else {
            return Some(Changed::Gone);
        };
        if found.ports != t.ports {
            return Some(Changed::Ports(t.ports.clone(), found.ports));
        }
        // Why the argv: a member that re-ran the same program with other arguments keeps its
        // identity and executable, yet is not what was planned.
        if argv_of(found.resource) != t.argv {
            return Some(Changed::Argv);
        }
        let own = found.resource.is_some_and(|r| self.own(list, r).is_ok());
        if t.own && !own {
            return Some(Changed::NotOwn);
        }
        None
    }
}

/// Each member's argv, by pid, as the plan saw it.
fn argv_of(r: Option<&Resource>) -> BTreeMap<u32, Vec<String>> {
    r.map(|r| r.members.iter().map(|m| (m.pid, m.argv.clone())).collect())
        .unwrap_or_default()
}

/// What a stop of the agent's own sets aside: its live parent's fact.
fn aside(r: &Resource) -> Vec<SetAside> {
    crate::stop::anyway::aside(&r.evidence)
}

/// The resource or container card `id` in `scan`.
pub(super) fn find<'s>(scan: &'s Scan, id: &str) -> Option<Found<'s>> {
    for p in &scan.projects {
        if let Some(r) = p.resources.iter().find(|r| r.id == id) {
            return Some(Found {
                project: p,
                resource: Some(r),
                container: None,
                shown: Shown::of(p.level, r),
                ports: r.ports.iter().map(|x| x.port).collect(),
            });
        }
        if let Some(c) = p.containers.iter().find(|c| c.id == id) {
            return Some(Found {
                project: p,
                resource: None,
                container: Some(c),
                shown: Shown::of_container(p.level, c),
                ports: c.ports.iter().map(|x| x.port).collect(),
            });
        }
    }
    None
}

/// The ids of every card (resource or container) that listens on `port`.
pub(super) fn holders_of(scan: &Scan, port: u16) -> Vec<String> {
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
pub(super) fn keep_ports(scan: &mut Scan, ports: &[u16]) {
    for p in &mut scan.projects {
        p.resources
            .retain(|r| r.ports.iter().any(|x| ports.contains(&x.port)));
        p.containers
            .retain(|c| c.ports.iter().any(|x| ports.contains(&x.port)));
    }
    scan.projects
        .retain(|p| !p.resources.is_empty() || !p.containers.is_empty());
}

/// One target as the plan tells it, members masked before they are joined (a line cut
/// short could not be masked whole).
fn planned_stop(id: &str, f: &Found, own: bool, sets_aside: Vec<SetAside>) -> PlannedStop {
    let members = f
        .resource
        .map(|r| {
            r.members
                .iter()
                .map(|m| {
                    let argv = mask::argv(&m.argv);
                    format!("{}: {}", m.pid, crate::words::command_of_strings(&argv))
                })
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

/// The one resource that holds `port`, when exactly one card does.
pub(super) fn find_holder(scan: &Scan, port: u16) -> Option<&Resource> {
    let mut all = scan.projects.iter().flat_map(|p| &p.resources);
    let holds = |r: &&Resource| r.ports.iter().any(|x| x.port == port);
    let first = all.find(holds)?;
    match all.any(|r| holds(&r)) {
        true => None,
        false => Some(first),
    }
}
