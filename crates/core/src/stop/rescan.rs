//! Step 6 (`docs/design.md` §3.6): after a project's resources have ended, one rescan for all
//! of them, and for each resource that sent a signal, why its project may hold a replacement —
//! a new resource, a member's pid holding another process, a member still running, or a
//! stopped member's exact argv running where its folder cannot be confirmed. A new resource
//! that holds a process another resource of the batch claims — one of its members, or a
//! newcomer its looks saw born to it (a child of its member or of its newcomer) — is that
//! resource's alone: two resources of one project never blame each other's newcomers or
//! members. One that no resource claims so is blamed on every resource of the project that
//! sent a signal (which of them left it cannot be told).

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use super::flow::Stopper;
use crate::diagnose::evaluate;
use crate::diagnose::judge::{self, TwinPlace};
use crate::diagnose::kinds::{self, Role};
use crate::diagnose::tree::ProcessTable;
use crate::diagnose::{self};
use crate::model::card::{Project, Resource, Scan};
use crate::model::managed::ManagedBy;
use crate::model::outcome::{NewcomerReport, TieKind};
use crate::model::snapshot::{Snapshot, SnapshotMember};
use crate::probe::{Identity, Pid, ProbeError, ProcessInfo, ProcessList};
use crate::words;

/// A resource that sent signals and has ended, as the rescan judges it.
pub(super) struct Ended<'e> {
    /// Its project, as the re-diagnosis saw it.
    pub(super) project: &'e Project,
    /// Its snapshot: the members that were stopped.
    pub(super) snapshot: &'e Snapshot,
    /// The processes its looks saw born during the stop: who gave birth to a replacement.
    pub(super) newcomers: &'e [NewcomerReport],
    /// Every identity its check (e) saw (`None` when it has none to give): what ran then is no
    /// replacement.
    pub(super) present: Option<&'e HashSet<Identity>>,
    /// Its members its report names `still_running` already: the rescan does not name them
    /// again.
    pub(super) outlived: HashSet<Identity>,
}

/// The newcomers a resource's looks saw born to it — a child of its member, or a child of such
/// a newcomer, and so on — by its id: what it claims. One seen only as an orphan in the
/// project, or on a port, or born to such a one, was not seen born to it, and is nobody's alone.
pub(super) fn claimed(id: &str, newcomers: &[NewcomerReport]) -> (String, HashSet<Identity>) {
    let mut born: HashSet<Identity> = newcomers
        .iter()
        .filter(|n| n.tie == TieKind::ChildOfMember)
        .map(NewcomerReport::identity)
        .collect();
    loop {
        let parents: HashSet<Pid> = born.iter().map(|i| i.pid).collect();
        let more: Vec<Identity> = newcomers
            .iter()
            .filter(|n| n.tie == TieKind::ChildOfNewcomer && parents.contains(&n.parent))
            .map(NewcomerReport::identity)
            .filter(|i| !born.contains(i))
            .collect();
        if more.is_empty() {
            break;
        }
        born.extend(more);
    }
    (id.to_owned(), born)
}

/// What the rescans of a batch know of it.
pub(super) struct Batch<'b> {
    /// The id of every resource the batch's re-diagnosis saw: none of them is new.
    pub(super) known: &'b BTreeSet<String>,
    /// Every member of every resource the batch signals: none of them is another's
    /// replacement. Found by the soak: resource A's rescan read B's root, which runs A's exact
    /// argv, in the process table; B's own thread signalled it; its folder could then no longer
    /// be read (it was exiting), and A was called partial for a twin "whose folder cannot be
    /// confirmed".
    pub(super) members: &'b HashSet<Identity>,
    /// What each resource of the batch ended so far claims ([`claimed`]).
    pub(super) claims: &'b [(String, HashSet<Identity>)],
}

/// For each of `ended`, in order: why the rescan finds a replacement, if it does.
pub(super) fn replacements(
    stopper: &Stopper,
    ended: &[Ended],
    batch: &Batch,
) -> Vec<Option<String>> {
    let mut under: Vec<PathBuf> = ended
        .iter()
        .map(|e| e.project.path.clone().into())
        .collect();
    under.sort();
    under.dedup();
    let opts = stopper.scan_options(under);
    let scan = match diagnose::scan(stopper.probe, &opts, stopper.marker_at) {
        Ok(scan) => scan,
        Err(e) => {
            let why = format!("the project could not be rescanned: {e}");
            return vec![Some(why); ended.len()];
        }
    };
    let list = stopper.probe.processes();
    let table = list
        .as_ref()
        .ok()
        .map(|l| ProcessTable::new(l.processes.clone()));
    ended
        .iter()
        .map(|e| {
            in_project(&scan, table.as_ref(), e, batch)
                .or_else(|| argv_twin(stopper, &list, table.as_ref(), e, batch.members))
        })
        .collect()
}

/// What the rescan of `e`'s project (its folder and the folders under it) finds against it.
fn in_project(
    scan: &Scan,
    table: Option<&ProcessTable>,
    e: &Ended,
    batch: &Batch,
) -> Option<String> {
    let stopped: HashSet<Identity> = e.snapshot.members.iter().map(|m| m.identity).collect();
    let stopped_pids: HashSet<Pid> = stopped.iter().map(|i| i.pid).collect();
    // Another resource's members: one re-parented when its parent was signalled is the root
    // of a new tree, and that resource's, not `e`'s.
    let others: HashSet<Identity> = batch.members.difference(&stopped).copied().collect();
    let inside = |p: &&Project| Path::new(&p.path).starts_with(&e.project.path);
    for r in scan
        .projects
        .iter()
        .filter(inside)
        .flat_map(|p| &p.resources)
    {
        let holds = |ids: &HashSet<Identity>| r.identities().iter().any(|i| ids.contains(i));
        if e.outlived.contains(&r.root) {
            // A member that outlived its signal, adopted when its parent ended: the root of a
            // tree of its own now, which the report names as still running, not as new.
            continue;
        }
        if !batch.known.contains(r.id.as_str()) {
            let claims = |mine: bool| {
                batch
                    .claims
                    .iter()
                    .any(|(id, born)| (*id == e.snapshot.id) == mine && holds(born))
            };
            let ours = holds(&stopped) || claims(true);
            let another = holds(&others) || claims(false);
            if ours || !another {
                return Some(appeared(r, table, e));
            }
        }
        if let Some(m) = r
            .members
            .iter()
            .find(|m| stopped_pids.contains(&m.pid) && !stopped.contains(&m.identity()))
        {
            return Some(format!(
                "pid {} now belongs to a new process ({})",
                m.pid, m.command
            ));
        }
        if r.id == e.snapshot.id {
            let running = |m: &&crate::model::card::Member| {
                stopped.contains(&m.identity()) && !e.outlived.contains(&m.identity())
            };
            if let Some(m) = r.members.iter().find(running) {
                return Some(format!("pid {} still runs", m.pid));
            }
        }
    }
    None
}

/// A new resource in the project, `e`'s: what it is, and who started it.
fn appeared(r: &Resource, table: Option<&ProcessTable>, e: &Ended) -> String {
    let what = match r.kind.as_str() {
        "unknown" => "listener of an unknown kind",
        kind => kind,
    };
    let who = Started {
        pid: r.root.pid,
        tree: &r.identities(),
        managed: r.managed_by.as_ref(),
        id: Some(&r.id),
    };
    format!(
        "a new {what} appeared in the project (id {}): {}",
        r.id,
        who.words(table, e)
    )
}

/// A process running a stopped member's exact argv (`judge::argv_twin`): in the project, and
/// absent at check (e) (born during the stop, or since), it is a replacement — the
/// stopped server back already, started by whoever names it ([`Started`]); one whose working
/// directory cannot be read may be one, and cannot be ruled out. `list`: the process table,
/// read once for the rescan (`table`, indexed); `members`: the batch's members, never twins.
fn argv_twin(
    stopper: &Stopper,
    list: &Result<ProcessList, ProbeError>,
    table: Option<&ProcessTable>,
    e: &Ended,
    members: &HashSet<Identity>,
) -> Option<String> {
    let list = match list {
        Ok(list) => list,
        Err(e) => return Some(format!("the process table could not be re-read: {e}")),
    };
    let snapshot = e.snapshot;
    let stopped: HashSet<Identity> = snapshot.members.iter().map(|m| m.identity).collect();
    let recorded: Vec<Vec<&[u8]>> = snapshot
        .members
        .iter()
        .map(|m| m.argv.iter().map(|a| a.0.as_slice()).collect())
        .collect();
    let project = Path::new(&snapshot.project.path);
    let probe = stopper.probe;
    let uid = probe.current_uid();
    for p in list.processes.iter().filter(|p| p.uid == uid && !p.zombie) {
        if stopped.contains(&p.identity) || members.contains(&p.identity) {
            continue;
        }
        if snapshot
            .members
            .iter()
            .any(|m| m.identity.pid == p.identity.pid)
        {
            return Some(format!(
                "pid {} now belongs to a new process ({})",
                p.identity.pid, p.comm
            ));
        }
        let cwd_of = |pid| probe.details(pid).map(|d| d.cwd);
        let born_during = e.newcomers.iter().any(|n| n.identity() == p.identity);
        // One that ran already at check (e) is another server of the same command.
        let new = born_during || e.present.is_some_and(|ids| !ids.contains(&p.identity));
        match judge::argv_twin(p, uid, &recorded, project, cwd_of) {
            _ if !new => {}
            Some(TwinPlace::Unknown(why)) => {
                return Some(format!(
                    "pid {} runs the same command and its folder cannot be confirmed ({why})",
                    p.identity.pid
                ))
            }
            Some(TwinPlace::InProject) => return Some(again(stopper, p, table, e)),
            _ => {}
        }
    }
    None
}

/// A stopped member's command running in the project again, as process `p`: who started it.
fn again(stopper: &Stopper, p: &ProcessInfo, table: Option<&ProcessTable>, e: &Ended) -> String {
    let probe = stopper.probe;
    let parent = table.and_then(|t| t.parent(p.identity.pid));
    let parent = parent.map(|(pp, role)| (pp.clone(), role));
    let cgroup = probe.details(p.identity.pid).and_then(|d| d.cgroup);
    let managed = evaluate::managed_by(probe, p, parent.as_ref(), cgroup.as_ref());
    let who = Started {
        pid: p.identity.pid,
        tree: &[p.identity],
        managed: managed.as_ref(),
        id: None,
    };
    format!(
        "pid {} runs the same command in the project again ({}): {}",
        p.identity.pid,
        words::short_command(p.argv.iter().map(Vec::as_slice)),
        who.words(table, e)
    )
}

/// A replacement, as the rescan found it: its (root) pid, the identities of its tree, the
/// manager that runs it (when the diagnosis names one) and its resource id (when it is a
/// candidate).
struct Started<'a> {
    pid: Pid,
    tree: &'a [Identity],
    managed: Option<&'a ManagedBy>,
    id: Option<&'a str>,
}

impl Started<'_> {
    /// Who started it, and what would stop it for good (docs/design.md §3.6): the manager that
    /// runs it; else the stopped member its looks saw give birth to it during the stop (a
    /// respawner, which restarted it before its own signal); else its parent chain as the
    /// process table has it now, up to init.
    fn words(&self, table: Option<&ProcessTable>, e: &Ended) -> String {
        let stop = match self.id {
            Some(id) => format!("`pier stop {id}` stops it"),
            None => "a scan shows it".into(),
        };
        if let Some(m) = self.managed {
            return match &m.stop_command {
                Some(command) => format!(
                    "{}, and started it again: `{command}` stops it for good",
                    m.describe()
                ),
                None => format!("{}, and started it again: stop it there", m.describe()),
            };
        }
        if let Some(member) = born_to_member(self.tree, e) {
            let command = words::short_command(member.argv.iter().map(|a| a.0.as_slice()));
            return format!(
                "born during the stop to pid {} ({command}), which Pier stopped: it restarted it \
                 before its own signal; it now runs on its own: {stop}",
                member.identity.pid
            );
        }
        let chain = table.map(|t| parent_chain(t, self.pid)).unwrap_or_default();
        if chain.is_empty() {
            return format!("who started it cannot be read; {stop}");
        }
        format!("started under {}; {stop}", chain.join(" ← "))
    }
}

/// The stopped member a replacement was seen born to: one of its members is a newcomer whose
/// parent, followed through the newcomers, was a member of the stopped resource.
fn born_to_member<'s>(tree: &[Identity], e: &'s Ended) -> Option<&'s SnapshotMember> {
    let ids: HashSet<Identity> = tree.iter().copied().collect();
    for n in e.newcomers.iter().filter(|n| ids.contains(&n.identity())) {
        let mut parent = n.parent;
        let mut seen = HashSet::new();
        while seen.insert(parent) {
            if let Some(m) = e.snapshot.members.iter().find(|m| m.identity.pid == parent) {
                return Some(m);
            }
            match e.newcomers.iter().find(|o| o.pid == parent) {
                Some(o) => parent = o.parent,
                None => break,
            }
        }
    }
    None
}

/// `pid`'s ancestors as "sh (pid 5)", nearest first, up to and with the first that holds
/// sessions, manages processes or is init.
fn parent_chain(table: &ProcessTable, pid: Pid) -> Vec<String> {
    let mut out = Vec::new();
    for a in table.ancestors(pid) {
        let Some(p) = table.get(a) else { break };
        let role = kinds::role(p);
        out.push(format!("{} (pid {a}, {})", p.comm, role.describe()));
        if !matches!(role, Role::Wrapper | Role::Tool(_) | Role::Other) {
            break;
        }
    }
    out
}
