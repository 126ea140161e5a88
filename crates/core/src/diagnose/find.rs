//! Finding the resources: candidates → roots → resources (docs/design.md §2).
//!
//! A candidate is a process of the user's that a known tool kind names, that listens inside a
//! project, or that watches by its words inside a project — never a container engine's
//! process, nor a container's. Its root is the top of its launch chain; a resource is a root
//! and its live descendants, and a root inside another resource's tree is part of that one.
//! Each resource is placed in its project's folder (or its root's working directory) and kept
//! only under the scan's `--under` folders.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{kinds, project, Draft, Facts, MarkerLookup, ScanOptions};
use crate::probe::{Pid, ProbeError, ProcessInfo, SocketTable, TcpState};

/// Candidates → roots → resources, kept only when they fall under `opts.under`. `member` hears
/// each pid as soon as it is known to be in a resource (a root when found, then every member
/// once the trees are cut), before the `opts.under` cut: reads that take long can start then.
pub(super) fn find_resources(
    facts: &mut Facts,
    own: &[Pid],
    opts: &ScanOptions,
    marker_at: MarkerLookup,
    member: &mut dyn FnMut(Pid),
) -> Vec<Draft> {
    let listeners = listener_owners(&facts.sockets);
    let found = (opts.home.as_deref(), marker_at);
    let roots = roots(facts, own, &listeners, found, member);
    drafts(facts, &roots, member)
        .into_iter()
        .filter_map(|d| {
            residue_now(facts, &d, &listeners)
                .then(|| placed(facts, d, opts, marker_at))
                .flatten()
        })
        .collect()
}

/// A portless tree its client starts and talks to over stdio or a pipe (an MCP server, a
/// headless browser, a language server: `Family::started_by_its_client`) is residue only
/// once that client is gone: a candidate only while its root is orphaned, as a card's
/// parentage judges it (`evaluate::is_orphaned`). One that listens follows the usual rules,
/// and so does one driven through its debugging pipe: a driver at work is shown, red.
fn residue_now(facts: &mut Facts, d: &Draft, listeners: &HashSet<Pid>) -> bool {
    if d.members.iter().any(|m| listeners.contains(m)) {
        return true;
    }
    let tree: Vec<&ProcessInfo> = d
        .members
        .iter()
        .filter_map(|&m| facts.table.get(m))
        .collect();
    if tree
        .iter()
        .any(|p| super::debugging::driven_by_pipe(&p.argv))
    {
        return true;
    }
    let by_its_client = kinds::chain::recognise(&tree)
        .is_some_and(|r| kinds::family(&r.kind).started_by_its_client());
    !by_its_client || super::evaluate::is_orphaned(facts, d.root)
}

/// The roots of the candidates among `own` (`listeners` hold a listening socket), sorted,
/// each once; `member` hears each as found.
fn roots(
    facts: &mut Facts,
    own: &[Pid],
    listeners: &HashSet<Pid>,
    (home, marker_at): (Option<&Path>, MarkerLookup),
    member: &mut dyn FnMut(Pid),
) -> Vec<Pid> {
    let mut roots = Vec::new();
    for &pid in own {
        let listens = listeners.contains(&pid);
        if is_candidate(facts, pid, listens, home, marker_at) {
            facts.fill_lineage(pid);
            let root = facts.table.find_root(pid, facts.uid);
            member(root);
            roots.push(root);
        }
    }
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// Every holder of a listening socket (none when the tables could not be read).
fn listener_owners(sockets: &Result<SocketTable, ProbeError>) -> HashSet<Pid> {
    match sockets {
        Ok(t) => t
            .sockets
            .iter()
            .filter(|s| s.state == TcpState::Listen)
            .flat_map(|s| s.owners.iter().copied())
            .collect(),
        Err(_) => HashSet::new(),
    }
}

/// Whether `pid` (which `listens`, or not) is a candidate: a known kind, a listener inside a
/// project, or a watcher by its words inside a project; never a container's process.
fn is_candidate(
    facts: &mut Facts,
    pid: Pid,
    listens: bool,
    home: Option<&Path>,
    marker_at: MarkerLookup,
) -> bool {
    let Some(p) = facts.table.get(pid) else {
        return false;
    };
    // A container engine's process is never a candidate: the ports it holds are its
    // containers', shown on their cards (`containers.rs`).
    if crate::containers::processes::engine_program(&p.comm, &p.argv).is_some() {
        return false;
    }
    let known = kinds::classify(&p.argv).is_some();
    // A portless tree is a candidate only when the table or a watch word knows it
    // (`launch::watches`): a portless one-shot is never residue.
    let watch_word = !known && !listens && kinds::launch::mentions_watch(&p.argv);
    let in_project = |facts: &mut Facts| {
        facts
            .cwd(pid)
            .is_some_and(|cwd| project::find_project(&cwd, home, marker_at).is_some())
    };
    let listens_in_project = !known && listens && in_project(facts);
    let watches = watch_word && facts.watches(pid) && in_project(facts);
    // A container's process (its cgroup names it) is its engine's to stop: it is on its
    // container's card, never a candidate of its own.
    (known || listens_in_project || watches) && facts.container_of(pid).is_none()
}

/// The resources of `roots`: each root with its tree, read whole first, and its session
/// leader; a root inside another's tree left out. `member` hears every member, whose argv
/// is then read.
fn drafts(facts: &mut Facts, roots: &[Pid], member: &mut dyn FnMut(Pid)) -> Vec<Draft> {
    // Before the trees are cut: every member, whoever runs it, and each root's session
    // leader (whether it runs is part of "orphaned").
    facts.complete_trees(roots);
    let leaders: Vec<Pid> = roots
        .iter()
        .filter_map(|&root| Some(facts.table.get(root)?.session))
        .collect();
    facts.read_sighted(&leaders);

    let mut drafts: Vec<Draft> = roots
        .iter()
        .map(|&root| Draft {
            root,
            members: facts.table.members(root),
            project: None,
            place: PathBuf::new(),
        })
        .collect();
    // A root that lies inside another resource's tree is part of that resource.
    let nested: HashSet<Pid> = drafts
        .iter()
        .flat_map(|d| d.members[1..].iter().copied())
        .collect();
    drafts.retain(|d| !nested.contains(&d.root));
    for pid in drafts.iter().flat_map(|d| d.members.clone()) {
        member(pid);
        facts.fill_argv(pid);
    }
    drafts
}

/// `d` with its project and place (the project's folder, else its root's working directory),
/// when that place is under `opts.under`.
fn placed(
    facts: &mut Facts,
    mut d: Draft,
    opts: &ScanOptions,
    marker_at: MarkerLookup,
) -> Option<Draft> {
    let home = opts.home.as_deref();
    let cwd = facts.cwd(d.root);
    d.project = cwd
        .as_deref()
        .and_then(|c| project::find_project(c, home, marker_at));
    d.place = match (&d.project, cwd) {
        (Some(p), _) => p.path.clone(),
        (None, Some(cwd)) => cwd,
        (None, None) => PathBuf::from("(working directory unreadable)"),
    };
    project::is_under(&d.place, &opts.under).then_some(d)
}
