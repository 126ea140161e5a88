//! The checkpoints of docs/design.md §3.3, each a fresh read through the probe that answers
//! "go on" or "stop here, because …" ([`Why`]). Any read that fails says stop.
//!
//! The checkpoints judge nothing themselves: they ask the scan's own rules (`diagnose::judge`,
//! `rules::activity_evidence`) over what they read, and refuse on anything the scan would not
//! call green — so a checkpoint is never more lenient than the scan.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::anyway;
use super::refusal::{Peer, Why};
use crate::diagnose::connections::SocketIndex;
use crate::diagnose::judge::{self, Finding};
use crate::diagnose::rules::{self, ActivityFacts, Thresholds};
use crate::diagnose::tree::ProcessTable;
use crate::model::card::Level;
use crate::model::reason::{Reason, SetAside};
use crate::model::snapshot::Snapshot;
use crate::probe::{Identity, IdentityRead, Pid, Probe, ProcessList, Survey};
use crate::signal::Expected;

/// (a), (c), (e) for every resource still in the chain (`docs/design.md` §3.3, ARCHITECTURE.md
/// "Batches"): one survey, read after each of them reached this check, and each resource's own
/// members judged against it. Every source readable, and the judge's network rules find nothing
/// that is not green: no process of the user's unreadable (it may be a member: the scan makes
/// every resource red), no member hidden from the tables, no listener shared outside, no live or
/// waiting connection. One answer per resource, in order.
///
/// A stop anyway passes each resource's confirmed reasons (`Skip`): a finding that is one of
/// them, and that a person may set aside, is set aside and named instead of refusing.
pub fn network(probe: &dyn Probe, resources: &[(&HashSet<Pid>, Skip)]) -> Vec<Passed<()>> {
    // Beyond the socket holders', only the members' argv plays a part: the debugging rules.
    match probe.survey(&|_| false) {
        Ok(mut survey) => {
            read_members_argv(probe, &mut survey, resources);
            network_in(probe.current_uid(), &survey, resources)
        }
        Err(e) => vec![Err(Why::SurveyFailed(e.to_string())); resources.len()],
    }
}

/// Reads the argv a survey left unread of the members of `resources`: the judge tells a
/// debugging port or pipe by it (`diagnose::debugging`). A member gone since keeps none.
fn read_members_argv(probe: &dyn Probe, survey: &mut Survey, resources: &[(&HashSet<Pid>, Skip)]) {
    for p in &mut survey.processes.processes {
        let pid = p.identity.pid;
        if p.argv_unread && resources.iter().any(|(members, _)| members.contains(&pid)) {
            p.argv = probe.argv(p.identity).unwrap_or_default();
            p.argv_unread = false;
        }
    }
}

/// What a stop anyway of a resource confirmed (`None`: an ordinary stop sets nothing aside).
pub type Skip<'a> = Option<&'a BTreeSet<Reason>>;

/// A check passed, with what it saw and the facts a stop anyway set aside there; or why not.
pub type Passed<T> = Result<(T, Vec<SetAside>), Why>;

/// The network check of each of `resources` against one survey.
fn network_in(uid: u32, survey: &Survey, resources: &[(&HashSet<Pid>, Skip)]) -> Vec<Passed<()>> {
    let unreadable = judge::unreadable_of(&survey.processes.unreadable, uid);
    let index = match &survey.sockets {
        Ok(t) => SocketIndex::new(&t.sockets),
        Err(_) => SocketIndex::default(),
    };
    let tables = survey.sockets.as_ref().map_err(ToString::to_string);
    resources
        .iter()
        .map(|&(members, skip)| {
            // A member first: its own words say which member could not be walked.
            let first = unreadable
                .iter()
                .find(|f| {
                    matches!(f, Finding::ProcessUnreadable { pid, .. } if members.contains(pid))
                })
                .or(unreadable.first());
            if let Some(f) = first {
                return Err(against(f, members));
            }
            let processes = &survey.processes.processes;
            let row = |pid| processes.iter().find(|p| p.identity.pid == pid);
            let judged = judge::network(tables.clone(), &index, members, row, uid);
            let mut aside = Vec::new();
            for f in judged.findings.iter().filter(|f| f.level() != Level::Green) {
                let evidence = f.evidence();
                match Reason::of(&evidence) {
                    Some(r) if anyway::skips(skip, r) => aside.push(SetAside {
                        reason: r,
                        fact: evidence.message,
                    }),
                    _ => return Err(against(f, members)),
                }
            }
            Ok(((), aside))
        })
        .collect()
}

/// A finding that is not green, as a network checkpoint words it.
pub(crate) fn against(f: &Finding, members: &HashSet<Pid>) -> Why {
    match f.clone() {
        Finding::ProcessUnreadable { pid, error } if members.contains(&pid) => {
            Why::MemberUnreadable { pid, error }
        }
        Finding::ProcessUnreadable { pid, error } => Why::ProcessUnreadable { pid, error },
        Finding::TablesUnreadable(e) => Why::TablesUnreadable(e),
        Finding::Blind { pid, why } => Why::Blind { pid, why },
        Finding::FdsUnreadable { pid, why } => Why::FdsUnreadable { pid, why },
        Finding::SharedListener { local, outside } => Why::SharedListener { local, outside },
        Finding::Connection(c) => {
            let who = match (c.client, c.peer_pid) {
                (Some(client), _) => Peer::Client(Box::new(client)),
                (None, Some(pid)) => Peer::Pid(pid),
                (None, None) => Peer::Unseen,
            };
            Why::Connected {
                local: c.local,
                peer: c.peer,
                who,
            }
        }
        Finding::Queued(n) => Why::Waiting(n),
        driven @ Finding::Driven(_) => Why::Driven(driven.evidence().message),
        Finding::UnixClient(c) => Why::UnixConnected(judge::unix_client_words(&c)),
    }
}

/// (b) for every resource still in the chain: one sample over all their members at once (a
/// sample is per process, so each resource's figures are what its own window would have read),
/// each resource's own members judged by the scan's own activity rule, so a refusal names what
/// was seen in the same words as the card: the figures, the window and the busiest member. The
/// scan may go unsampled (`--sample-ms 0`); a stop never does. Each snapshot comes with the
/// respawners whose polling its re-diagnosis set aside (`rules::activity_with_pollers`).
pub fn activity(
    probe: &dyn Probe,
    snapshots: &[(&Snapshot, &[rules::Poller], Skip)],
    window: std::time::Duration,
    t: Thresholds,
) -> Vec<Passed<()>> {
    if window.is_zero() {
        return vec![Err(Why::EmptyWindow); snapshots.len()];
    }
    let pids: Vec<Pid> = snapshots
        .iter()
        .flat_map(|(s, _, _)| s.members.iter().map(|m| m.identity.pid))
        .collect();
    let sample = probe.activity(&pids, window);
    // Read only when one is busy: a refusal names whether waiting helps, from the busiest
    // member's life (`rules::waiting_helps`); a green resource needs no more reads.
    let rows = std::cell::OnceCell::new();
    let life = |pid: Pid| {
        let rows = rows.get_or_init(|| probe.rows(&pids));
        let p = rows.processes.iter().find(|p| p.identity.pid == pid)?;
        judge::LifeSpent::of(p)
    };
    snapshots
        .iter()
        .map(|&(snapshot, pollers, skip)| {
            let ours = |pid: Pid| {
                let member = snapshot.members.iter().any(|m| m.identity.pid == pid);
                member.then(|| snapshot.short_command_of(pid))
            };
            let mut measured =
                judge::measured(&sample, ours).map_err(|(pid, e)| Why::ActivityUnreadable {
                    pid,
                    error: e.to_owned(),
                })?;
            let judge = |measured: Vec<judge::MemberActivity>| {
                let facts = ActivityFacts::Measured(measured, window);
                rules::activity_with_pollers(&facts, t, pollers).0
            };
            if judge(measured.clone()).level == Level::Green {
                return Ok(((), Vec::new()));
            }
            judge::with_lives(&mut measured, life);
            let busy = judge(measured).message;
            match anyway::skips(skip, Reason::Busy) {
                true => Ok((
                    (),
                    vec![SetAside {
                        reason: Reason::Busy,
                        fact: busy,
                    }],
                )),
                false => Err(Why::Busy(busy)),
            }
        })
        .collect()
}

/// What each member must still be: its identity and executable from the snapshot.
pub fn expected(snapshot: &Snapshot) -> Vec<Expected> {
    snapshot
        .members
        .iter()
        .map(|m| Expected {
            identity: m.identity,
            exe: PathBuf::from(OsStr::from_bytes(&m.exe.0)),
        })
        .collect()
}

/// What a passing tree check saw.
#[derive(Debug, Clone, Default)]
pub struct TreeCheck {
    /// The members found gone (or whose pid now holds another process): they get no signal,
    /// and their outcome is `skipped`, since they were gone before the first signal.
    pub gone: Vec<Identity>,
    /// Every identity in the process table it read: after check (e), nothing here is a
    /// newcomer.
    pub present: Vec<Identity>,
}

/// (d) and (e) for every resource still in the chain: one read of the process table, and for
/// each resource: the tree under its root holds no member its snapshot lacks, no process of the
/// user's is unreadable (it may be a new member: its parent is unknown), no member is one Force
/// may not touch (`judge::force_allowed`), and every member still alive is the same process
/// (start time and executable, read afresh per member). Force runs this check too.
pub fn tree(probe: &dyn Probe, snapshots: &[&Snapshot]) -> Vec<Result<TreeCheck, Why>> {
    match probe.processes() {
        Ok(list) => tree_in(probe, list, snapshots),
        Err(e) => vec![Err(Why::TreeUnreadable(e.to_string())); snapshots.len()],
    }
}

/// (e) for every resource still in the chain: one survey, each resource's network judged on it
/// and then its tree judged on the survey's own process table, read in the same call — so the
/// last look before the first signal is one read of the machine, not two. A process born
/// after that table is absent from it: a newcomer, never signalled (`newcomers.rs`).
pub fn last_look(
    probe: &dyn Probe,
    resources: &[(&HashSet<Pid>, &Snapshot, Skip)],
) -> Vec<Passed<TreeCheck>> {
    // An engine client's argv is read (`containers::processes`): without it, it may stand for
    // a container, which refuses the stop (`judge::force_allowed`).
    let survey = match probe.survey(&crate::containers::processes::is_client_program) {
        Ok(survey) => survey,
        Err(e) => return vec![Err(Why::SurveyFailed(e.to_string())); resources.len()],
    };
    let sets: Vec<(&HashSet<Pid>, Skip)> = resources.iter().map(|(m, _, k)| (*m, *k)).collect();
    let network = network_in(probe.current_uid(), &survey, &sets);
    let snapshots: Vec<&Snapshot> = resources.iter().map(|(_, s, _)| *s).collect();
    let trees = tree_in(probe, survey.processes, &snapshots);
    network
        .into_iter()
        .zip(trees)
        .map(|(net, tree)| {
            let aside = net?.1;
            Ok((tree?, aside))
        })
        .collect()
}

/// The tree check of each of `snapshots` against the table `list`.
fn tree_in(
    probe: &dyn Probe,
    list: ProcessList,
    snapshots: &[&Snapshot],
) -> Vec<Result<TreeCheck, Why>> {
    let uid = probe.current_uid();
    if let Some(Finding::ProcessUnreadable { pid, error }) =
        judge::unreadable_of(&list.unreadable, uid)
            .into_iter()
            .next()
    {
        return vec![Err(Why::TreeProcessUnreadable { pid, error }); snapshots.len()];
    }
    let present: Vec<Identity> = list.processes.iter().map(|p| p.identity).collect();
    let table = ProcessTable::new(list.processes);
    let pier = probe.own_pid();
    let ancestors = table.ancestors(pier).into_iter().collect();
    let guard = judge::Guard {
        uid,
        pier,
        pier_ancestors: &ancestors,
    };
    snapshots
        .iter()
        .map(|snapshot| {
            tree_of(probe, &table, &guard, snapshot).map(|gone| TreeCheck {
                gone,
                present: present.clone(),
            })
        })
        .collect()
}

/// One resource's tree check against the table: the members found gone, or why it is refused.
fn tree_of(
    probe: &dyn Probe,
    table: &ProcessTable,
    guard: &judge::Guard,
    snapshot: &Snapshot,
) -> Result<Vec<Identity>, Why> {
    let root = snapshot.root.pid;
    let recorded: BTreeSet<Identity> = snapshot.members.iter().map(|m| m.identity).collect();
    let root_alive = table
        .get(root)
        .is_some_and(|p| p.identity.start_time == snapshot.root.start_time && !p.zombie);
    if !root_alive {
        // Its children now hang elsewhere, where new ones could not be seen: the tree changed.
        return Err(Why::RootExited {
            pid: root,
            command: snapshot.short_command_of(root),
        });
    }
    let members = table.members(root);
    for &pid in &members {
        let p = table.get(pid).expect("members come from the table");
        if !recorded.contains(&p.identity) {
            return Err(Why::Joined {
                pid,
                comm: p.comm.clone(),
                ppid: p.ppid,
            });
        }
    }
    for &pid in &members {
        let p = table.get(pid).expect("members come from the table");
        judge::force_allowed(p, guard).map_err(|why| Why::Protected { pid, why })?;
    }
    let mut gone = Vec::new();
    for e in expected(snapshot) {
        let pid = e.identity.pid;
        match probe.identity(pid) {
            IdentityRead::Gone => gone.push(e.identity),
            IdentityRead::Unknown(why) => return Err(Why::IdentityUnknown { pid, why }),
            IdentityRead::Alive { identity, .. } if identity != e.identity => gone.push(e.identity),
            IdentityRead::Alive { exe: None, .. } => return Err(Why::ExeUnreadable { pid }),
            IdentityRead::Alive { exe: Some(exe), .. } if exe != e.exe => {
                return Err(Why::Execd {
                    pid,
                    now: exe,
                    was: e.exe,
                })
            }
            IdentityRead::Alive { .. } => {}
        }
    }
    Ok(gone)
}

/// Leaf-to-root order: members grouped by depth under the root, deepest first.
pub fn levels(snapshot: &Snapshot) -> Vec<Vec<Expected>> {
    let expected = expected(snapshot);
    let depth = |pid: Pid| -> usize {
        let mut d = 0;
        let mut cur = pid;
        while cur != snapshot.root.pid && d <= snapshot.members.len() {
            let Some(m) = snapshot.members.iter().find(|m| m.identity.pid == cur) else {
                break;
            };
            cur = m.ppid;
            d += 1;
        }
        d
    };
    let max = expected
        .iter()
        .map(|e| depth(e.identity.pid))
        .max()
        .unwrap_or(0);
    (0..=max)
        .rev()
        .map(|level| {
            expected
                .iter()
                .filter(|e| depth(e.identity.pid) == level)
                .cloned()
                .collect()
        })
        .filter(|l: &Vec<Expected>| !l.is_empty())
        .collect()
}
