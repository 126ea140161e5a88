//! Judging one resource: gather its facts, ask each rule (the judge's, `judge.rs`, among them),
//! keep every piece of evidence.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::judge::{self, Finding};
use super::kinds::chain::{How, Recognised};
use super::kinds::launch::Seen;
use super::kinds::Role;
use super::rules::{self, ActivityFacts, Parentage, Thresholds};
use super::tree::ProcessTable;
use super::{helpers, kinds, managers, respawners, Draft, Facts};
use crate::model::card::{Connection, Evidence, EvidenceKind, Member, Port, Resource};
use crate::model::managed::{ManagedBy, Respawner};
use crate::model::Identity;
use crate::probe::{ActivitySample, Pid, Probe, ProbeError, ProcessInfo};
use crate::words;

/// One resource's card: its members, ports and connections, and every piece of evidence, in
/// the order a card lists them — what could not be read, what it is, whether it can come
/// back, what may never be stopped, its network, its parentage, its respawners, its activity.
pub(crate) fn resource(
    facts: &mut Facts,
    draft: &Draft,
    sample: Option<&ActivitySample>,
    thresholds: Thresholds,
) -> Resource {
    let (members, mut evidence) = members(facts, &draft.members);
    // A process whose row could not be read may be a member: its parent is unknown.
    evidence.extend(facts.unreadable.iter().map(Finding::evidence));
    let member_pids: HashSet<Pid> = members.iter().map(|m| m.pid).collect();
    let lineage = Lineage::of(facts, draft.root);
    let (parentage, parent) = lineage.parentage_and_place(facts);
    let helpers = helpers::helpers_among(&facts.table, &draft.members);
    let net = network(facts, &member_pids, &helpers);
    let tree = tree_of(&facts.table, &draft.members);
    let mut known = what_it_is(facts, draft, (&tree, &members), &net.ports, &lineage.root);
    evidence.append(&mut known.evidence);
    let pollers = respawners::pollers(&tree, &net.holders);
    evidence.extend(life_and_restart(
        facts.probe,
        &known,
        (&tree, &members),
        &pollers,
    ));
    evidence.extend(protected(facts, &draft.members));
    evidence.extend(net.evidence);
    evidence.extend(super::shared::use_evidence(
        known.kind.as_deref(),
        net.attached.as_deref(),
    ));
    evidence.push(parentage);
    let respawners = respawners(&tree, &members, &pollers);
    evidence.extend(respawners.iter().map(respawner_evidence));
    let (activity_evidence, activity) = rules::activity_with_pollers(
        &activity_facts(sample, &members, &tree),
        thresholds,
        &pollers,
    );
    evidence.push(activity_evidence);
    let root = &lineage.root;
    Resource {
        id: format!("{}-{}", root.identity.pid, root.identity.start_time),
        level: rules::level_of(&evidence),
        kind: known.kind.unwrap_or_else(|| "unknown".to_owned()),
        root: lineage.identity(),
        ports: net.ports,
        members,
        connections: net.connections,
        age_seconds: root.age_seconds,
        activity,
        // Memory argues nothing: it is filled in once read (`memory::fill`).
        memory: None,
        // Named again once the card is final (`name_reasons`).
        reasons: crate::model::reason::reasons_of(&evidence)
            .into_iter()
            .collect(),
        evidence,
        managed_by: lineage.managed,
        respawners,
        parent,
        idle: None,
        armed: None,
        auto: None,
    }
}

/// Whether `root`, a draft's root, is orphaned as its card's parentage judges it
/// (`rules::orphan_evidence`): the candidate rule of a portless tree its client started.
pub(super) fn is_orphaned(facts: &mut Facts, root: Pid) -> bool {
    let lineage = Lineage::of(facts, root);
    rules::orphan_evidence(&lineage.parentage(facts, None)).kind == EvidenceKind::Orphaned
}

/// The processes of `members` still in the table.
fn tree_of<'t>(table: &'t ProcessTable, members: &[Pid]) -> Vec<&'t ProcessInfo> {
    members.iter().filter_map(|&m| table.get(m)).collect()
}

/// A respawner's evidence (`rules::respawner_evidence`).
fn respawner_evidence(r: &Respawner) -> Evidence {
    rules::respawner_evidence(r.pid, &r.command, &r.how)
}

/// The root of a resource, what it hangs from, and who runs it on purpose.
struct Lineage {
    root: ProcessInfo,
    cgroup: Option<Result<String, ProbeError>>,
    parent: Option<(ProcessInfo, Role)>,
    managed: Option<ManagedBy>,
}

impl Lineage {
    /// The lineage of `root`, a draft's root (which comes from the table).
    fn of(facts: &mut Facts, root: Pid) -> Self {
        let root = facts
            .table
            .get(root)
            .expect("a draft's root comes from the table")
            .clone();
        let cgroup = facts
            .details(root.identity.pid)
            .and_then(|d| d.cgroup.clone());
        let parent = facts
            .table
            .parent(root.identity.pid)
            .map(|(p, role)| (p.clone(), role));
        let managed = managed_by(facts.probe, &root, parent.as_ref(), cgroup.as_ref());
        Self {
            root,
            cgroup,
            parent,
            managed,
        }
    }

    /// The root's identity, as a card names it.
    fn identity(&self) -> Identity {
        Identity {
            pid: self.root.identity.pid,
            start_time: self.root.identity.start_time,
        }
    }

    /// What `rules::orphan_evidence` judges.
    fn parentage<'a>(
        &'a self,
        facts: &Facts,
        place: Option<&'a crate::model::client::Parent>,
    ) -> Parentage<'a> {
        Parentage {
            root: &self.root,
            parent: self.parent.as_ref().map(|(p, role)| (p, role.clone())),
            session_leader_alive: facts.table.is_alive(self.root.session),
            cgroup: self.cgroup.as_ref(),
            managed: self.managed.as_ref(),
            place,
        }
    }

    /// Its parentage's evidence (`rules::orphan_evidence`), and where its live parent is: the
    /// card's only while a live parent is its reason.
    fn parentage_and_place(
        &self,
        facts: &mut Facts,
    ) -> (Evidence, Option<crate::model::client::Parent>) {
        let place = self.place(facts);
        let parentage = rules::orphan_evidence(&self.parentage(facts, place.as_ref()));
        let parent = place.filter(|_| parentage.kind == EvidenceKind::NotOrphaned);
        (parentage, parent)
    }

    /// Where a live parent is (`place::read`): read only for a parent that holds the root —
    /// not init or a subreaper, not a manager's program (its manager's command is its step).
    fn place(&self, facts: &mut Facts) -> Option<crate::model::client::Parent> {
        let (parent, role) = self.parent.as_ref()?;
        if self.managed.is_some() || matches!(role, Role::Init | Role::Subreaper) {
            return None;
        }
        let who = (&self.root, parent, role);
        let tables = (&facts.table, &mut facts.tmux);
        Some(super::place::read(facts.probe, tables, who, facts.uid))
    }
}

/// What the tree's life and its restart say: one known only by how it was launched, or by the
/// words of its name, must have lived quietly (`rules::quiet_life`); one that is no data
/// service must be restartable (`rules::restart_evidence`, which reads the environment of its
/// restart target) — unless its kind is one its client starts, which no snapshot restarts.
fn life_and_restart(
    probe: &dyn Probe,
    known: &Known,
    (tree, members): (&[&ProcessInfo], &[Member]),
    pollers: &[rules::Poller],
) -> Vec<Evidence> {
    let mut evidence = Vec::new();
    if let Some(by) = known.quiet_by {
        evidence.push(rules::quiet_life(&lives(tree, members, pollers), by));
    }
    if !known.never_stopped && crate::restart::offered(known.kind.as_deref()) {
        evidence.extend(rules::restart_evidence(tree, &|pid| {
            probe.environment(pid).map(drop)
        }));
    }
    evidence
}

/// What a tree is, and the evidence for it.
struct Known {
    /// The kind its members' commands name (or how it was launched), else a data service's.
    kind: Option<String>,
    /// Known only by how it was launched or by its name's words: its life must have been
    /// quiet (`rules::quiet_life`).
    quiet_by: Option<rules::KnownBy>,
    /// A data service: never stopped, Force included.
    never_stopped: bool,
    /// The kind's evidence, then the data rule's.
    evidence: Vec<Evidence>,
}

/// What the tree is: the kind its members' commands name, or how it was launched inside its
/// project (`by_launch`); a data service (`data.rs`) names a tree nothing else names, in place
/// of "unknown". Files are read only inside a project: scans stay fast.
fn what_it_is(
    facts: &Facts,
    draft: &Draft,
    (tree, members): (&[&ProcessInfo], &[Member]),
    ports: &[Port],
    root: &ProcessInfo,
) -> Known {
    // The process the evidence names: the one that serves (a helper's port only if there is
    // no other), else the root.
    let serving = ports
        .iter()
        .find(|p| p.is_server())
        .or(ports.first())
        .and_then(|p| facts.table.get(p.pid));
    let listener = serving.unwrap_or(root);
    let recognised = kinds::chain::recognise(tree).or_else(|| {
        let project = draft.project.as_ref()?;
        let listeners: Vec<Pid> = ports.iter().map(|p| p.pid).collect();
        by_launch(
            facts.probe,
            tree,
            members,
            &project.path,
            (serving, &listeners),
        )
    });
    let name = recognised
        .as_ref()
        .and_then(|r| facts.table.get(r.pid))
        .and_then(|p| kinds::agent_name(&p.argv));
    let mut evidence = vec![rules::kind_evidence(
        recognised.as_ref(),
        listener,
        name.as_deref(),
    )];
    let project = draft.project.as_ref().map(|p| p.path.as_path());
    let data = super::data::read_and_judge(facts.probe, tree, members, ports, project);
    let data_kind = data
        .as_ref()
        .and_then(|d| d.kind.clone())
        .filter(|_| recognised.is_none());
    if data_kind.is_some() {
        evidence.retain(|e| e.kind != EvidenceKind::UnknownKind);
    }
    // A data service is never stopped, Force included: whether a restart could replay it
    // (Redis writes its title over its argv) is then beside the point.
    let never_stopped = data
        .as_ref()
        .is_some_and(|d| d.evidence.kind == EvidenceKind::DataService);
    evidence.extend(data.map(|d| d.evidence));
    let quiet_by = quiet_by(facts, recognised.as_ref());
    Known {
        kind: recognised.map(|r| r.kind).or(data_kind),
        quiet_by,
        never_stopped,
        evidence,
    }
}

/// Whether a tree known as `recognised` must have lived quietly, and why: known only by how
/// it was launched, or only by the words of its name — a person's own job may say `mcp` too.
fn quiet_by(facts: &Facts, recognised: Option<&Recognised>) -> Option<rules::KnownBy> {
    let r = recognised?;
    match &r.how {
        How::Launch(_) => Some(rules::KnownBy::Launch),
        How::Argv => facts
            .table
            .get(r.pid)
            .filter(|p| kinds::known_by_words(&p.argv))
            .map(|_| rules::KnownBy::Words),
        _ => None,
    }
}

/// The kind of a tree the table does not know, by how it was launched in `project`
/// (`kinds::launch`): its members with the executable and folder read for them, and a
/// production setting looked for in their environments (read only for a tree so known).
fn by_launch(
    probe: &dyn Probe,
    tree: &[&ProcessInfo],
    members: &[Member],
    project: &Path,
    serving: (Option<&ProcessInfo>, &[Pid]),
) -> Option<Recognised> {
    let paths: Vec<(Option<PathBuf>, Option<PathBuf>)> = tree
        .iter()
        .map(|p| {
            let m = members.iter().find(|m| m.pid == p.identity.pid);
            let path = |s: Option<&String>| s.map(PathBuf::from);
            (
                path(m.and_then(|m| m.exe.as_ref())),
                path(m.and_then(|m| m.cwd.as_ref())),
            )
        })
        .collect();
    let uid = probe.current_uid();
    let owns = |path: &Path| kinds::launch::owned_by(uid, path);
    let seen: Vec<Seen> = tree
        .iter()
        .zip(&paths)
        .map(|(p, (exe, cwd))| Seen {
            p,
            exe: exe.as_deref(),
            cwd: cwd.as_deref(),
            owns: Some(&owns),
        })
        .collect();
    // An environment that cannot be read cannot show it is not production's.
    let production = |pid: Pid| {
        probe
            .environment(pid)
            .map_or(true, |env| kinds::launch::production_environment(&env))
    };
    kinds::chain::by_launch(&seen, project, serving, &production)
}

/// Each member's CPU time over its life, for `rules::quiet_life`.
fn lives(tree: &[&ProcessInfo], members: &[Member], pollers: &[rules::Poller]) -> Vec<rules::Life> {
    tree.iter()
        .filter_map(|p| {
            let m = members.iter().find(|m| m.pid == p.identity.pid)?;
            Some(rules::Life {
                pid: p.identity.pid,
                command: member_command(m),
                cpu_ns: p.cpu_ns,
                age_seconds: p.age_seconds,
                polls: pollers.iter().any(|q| q.pid == p.identity.pid),
            })
        })
        .collect()
}

/// Who runs the root on purpose (`managers.rs`): its parent, when that is a live process
/// manager (its program named from the root's environment and the manager's files); else,
/// when init or a subreaper adopted it, its systemd service (the cgroup) or, on an OS without
/// cgroups (macOS), its launchd agent (the label in its environment). The stop's rescan asks
/// it too, of a replacement.
pub(crate) fn managed_by(
    probe: &dyn Probe,
    root: &ProcessInfo,
    parent: Option<&(ProcessInfo, Role)>,
    cgroup: Option<&Result<String, ProbeError>>,
) -> Option<ManagedBy> {
    let (parent, role) = parent?;
    let overmind = *role == Role::Multiplexer && managers::is_overminds_tmux(parent);
    let cwd = |pid| probe.details(pid).and_then(|d| d.cwd.ok());
    match role {
        _ if overmind || *role == Role::ProcessManager => {
            let manager_cwd = cwd(parent.identity.pid);
            let root_cwd = cwd(root.identity.pid);
            let env = probe.environment(root.identity.pid);
            Some(managers::under_manager(&managers::UnderManager {
                manager: parent,
                manager_cwd: manager_cwd.as_deref(),
                root: root.identity.pid,
                root_argv: &root.argv,
                env: env.as_deref().map(managers::Env),
                root_cwd: root_cwd.as_deref(),
                read: &read_small_text,
                exists: &|p: &Path| p.exists(),
            }))
        }
        Role::Init | Role::Subreaper => match cgroup {
            Some(Ok(cgroup)) => {
                managers::service_of(cgroup)?;
                let env = probe.environment(root.identity.pid);
                let env = env.as_deref().map(managers::Env);
                managers::systemd_unit(cgroup, env)
            }
            Some(Err(_)) => None,
            None => {
                let env = probe.environment(root.identity.pid).ok()?;
                managers::launchd_agent(managers::Env(&env), probe.current_uid())
            }
        },
        _ => None,
    }
}

/// A small regular file a manager keeps (a pid file, a config), or a shell's script: its first
/// 256 KiB. The paths come from other processes' environments and argv, so a read must never
/// wait or read Pier's own: it is read as `trust::read::head_following` reads (links resolved, a
/// regular file only, without blocking), never under `/dev` or `/proc` (`bash /dev/stdin`
/// would be Pier's stdin).
pub(crate) fn read_small_text(path: &Path) -> Option<String> {
    let path = std::fs::canonicalize(path).ok()?;
    if path.starts_with("/dev") || path.starts_with("/proc") {
        return None;
    }
    let bytes = crate::trust::read::head_following(&path, 256 * 1024).ok()?;
    String::from_utf8(bytes).ok()
}

/// The members that start their child again (`respawners.rs`), each with its command line; a
/// shell's script is read from the shell's working directory.
fn respawners(
    tree: &[&ProcessInfo],
    members: &[Member],
    pollers: &[rules::Poller],
) -> Vec<Respawner> {
    let script = |p: &ProcessInfo, path: &str| {
        let cwd = members
            .iter()
            .find(|m| m.pid == p.identity.pid)?
            .cwd
            .as_deref()?;
        read_small_text(&Path::new(cwd).join(path))
    };
    respawners::among(tree, &script)
        .into_iter()
        .filter_map(|found| {
            let m = members.iter().find(|m| m.pid == found.pid)?;
            let quieter = pollers.iter().find(|q| q.pid == found.pid);
            Some(Respawner {
                pid: found.pid,
                command: member_command(m),
                how: found.how,
                quieter: quieter.map(|q| q.quieter.clone()),
            })
        })
        .collect()
}

/// The members as shown, and red evidence for any whose identity (exe) cannot be read.
/// A member that vanished since the table was read is left out: it is gone.
fn members(facts: &mut Facts, pids: &[Pid]) -> (Vec<Member>, Vec<Evidence>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for &pid in pids {
        let Some(info) = facts.table.get(pid).cloned() else {
            continue;
        };
        let Some(details) = facts.details(pid).cloned() else {
            continue;
        };
        if let Err(e) = &details.exe {
            problems.push(rules::exe_unreadable(pid, e));
        }
        out.push(Member {
            pid,
            start_time: info.identity.start_time,
            ppid: info.ppid,
            uid: info.uid,
            argv: info
                .argv
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect(),
            command: info.comm.clone(),
            exe: details.exe.ok().map(|p| p.to_string_lossy().into_owned()),
            cwd: details.cwd.ok().map(|p| p.to_string_lossy().into_owned()),
            // Read beside the judgement, and filled in after it (`memory::fill`).
            memory: None,
        });
    }
    (out, problems)
}

/// What Force may never touch (`judge::force_allowed`): PID 1, Pier, Pier's ancestors and
/// another user's process must never be part of what gets stopped (red); nor a container
/// engine's client that stands for containers, named with the engine's command (yellow).
fn protected(facts: &Facts, pids: &[Pid]) -> Vec<Evidence> {
    let guard = judge::Guard {
        uid: facts.uid,
        pier: facts.probe.own_pid(),
        pier_ancestors: &facts.pier_ancestors,
    };
    pids.iter()
        .filter_map(|&pid| facts.table.get(pid))
        .filter_map(|p| {
            let why = judge::force_allowed(p, &guard).err()?;
            if let judge::Protection::EngineClient(_) = why {
                let client = crate::containers::processes::engine_client(&p.argv);
                return Some(rules::engine_client_evidence(p, client.as_ref()));
            }
            Some(rules::protected_evidence(p.identity.pid, &why.to_string()))
        })
        .collect()
}

/// Ports (each the server's or a helper's), connections and their evidence, from the scan's
/// socket table. Every listener counts for the connections, a helper's too.
fn network(facts: &Facts, members: &HashSet<Pid>, helpers: &HashMap<Pid, &'static str>) -> Net {
    let row = |pid| facts.table.get(pid);
    let judged = judge::network(
        facts.sockets.as_ref(),
        &facts.index,
        members,
        row,
        facts.uid,
    );
    let mut ports: Vec<Port> = Vec::new();
    let mut holders = Vec::new();
    for s in &judged.listeners {
        let inside: Vec<Pid> = s
            .owners
            .iter()
            .copied()
            .filter(|o| members.contains(o))
            .collect();
        holders.push(inside.clone());
        ports.push(Port {
            port: s.local.port(),
            address: s.local.ip().to_string(),
            pid: inside[0],
            helper: helpers::listener_helper(&inside, helpers).map(str::to_owned),
        });
    }
    ports.sort_by(|a, b| (a.port, &a.address).cmp(&(b.port, &b.address)));
    ports.dedup();
    // What the table could not show and the shared listeners, then the ports, then what is on
    // them.
    let (unseen, on_ports): (Vec<&Finding>, Vec<&Finding>) =
        judged.findings.iter().partition(|f| {
            !matches!(
                f,
                Finding::Connection(_)
                    | Finding::Queued(_)
                    | Finding::Driven(_)
                    | Finding::UnixClient(_)
            )
        });
    let mut evidence: Vec<Evidence> = unseen.into_iter().map(Finding::evidence).collect();
    evidence.extend(
        ports
            .iter()
            .map(|p| rules::listening_evidence(&p.address, p.port, p.helper.as_deref())),
    );
    evidence.extend(on_ports.into_iter().map(Finding::evidence));
    let connections = judged
        .conns
        .iter()
        .map(super::connections::Conn::shown)
        .collect();
    Net {
        ports,
        holders,
        connections,
        attached: (!super::shared::clients_unseen(&judged.findings))
            .then(|| super::shared::attached(&judged.conns, &judged.unix)),
        evidence,
    }
}

/// A resource's network as its card shows it.
struct Net {
    /// Its listeners, each the server's or a helper's, by port and address.
    ports: Vec<Port>,
    /// The members holding each listener, in the judge's order of listeners.
    holders: Vec<Vec<Pid>>,
    /// The connections on them.
    connections: Vec<Connection>,
    /// The clients attached to it, TCP and unix, one per process (`shared::attached`);
    /// `None` when some cannot be seen (`shared::clients_unseen`).
    attached: Option<Vec<String>>,
    /// What the tables could not show and the shared listeners, then the ports, then what is
    /// on them.
    evidence: Vec<Evidence>,
}

/// The members' share of the scan's sample, each named by its command line, with its life as
/// the table read it (`tree`).
fn activity_facts(
    sample: Option<&ActivitySample>,
    members: &[Member],
    tree: &[&ProcessInfo],
) -> ActivityFacts {
    let Some(sample) = sample else {
        return ActivityFacts::NotSampled;
    };
    let name = |pid| members.iter().find(|m| m.pid == pid).map(member_command);
    match judge::measured(sample, name) {
        Ok(mut measured) => {
            judge::with_lives(&mut measured, |pid| {
                let p = tree.iter().find(|p| p.identity.pid == pid)?;
                judge::LifeSpent::of(p)
            });
            ActivityFacts::Measured(measured, sample.window)
        }
        Err((pid, e)) => ActivityFacts::Unreadable(format!("pid {pid}: {e}")),
    }
}

/// A member's short command line; the kernel's name when its argv is empty.
fn member_command(m: &Member) -> String {
    let shown = words::short_command(m.argv.iter().map(|a| a.as_bytes()));
    if shown.is_empty() {
        m.command.clone()
    } else {
        shown
    }
}
