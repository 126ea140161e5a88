//! Newcomers (ARCHITECTURE.md, "Newcomers"): processes born during a stop that belong to it — absent at
//! check (e), and, when seen, a descendant of a member (or of a newcomer), or a listener on one
//! of the resource's recorded ports, or an orphan (its parent init or a subreaper) working in
//! the project's folder. A supervisor that respawns the worker Pier just signalled
//! (uvicorn `--workers`, nodemon) makes one.
//!
//! The checkpoint chain never verified a newcomer, so it is **never signalled**: it is only
//! named in the report, with its parent and its fate read after a bounded wait. One that still
//! runs when the stop ends makes the result `partially_stopped`.
//!
//! Descent is judged on the parent's *identity* in the same read, never on a bare parent pid,
//! and a newcomer once seen is followed by its identity: re-parented to init after its parent
//! exited, it is still ours. The looks read the whole table: right before each level's signals
//! once a signal has gone out (so a parent's replacement for the child it just lost still hangs
//! under it), at the end, and once more after the stop's last wait (`ending.rs`). Between them,
//! all through every wait, a glance every [`GLANCE`] reads only the lineage's children
//! (`Probe::children`): a respawned worker that its supervisor ends again as it shuts down is
//! born and gone within one wait. What neither sees under its parent: a process born and gone,
//! or re-parented, within one glance interval or between a wait and the next look. Such a one
//! is still found when it listens on a recorded port or works in the project's folder; one
//! that does neither is missed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::diagnose::kinds::{role, Role};
use crate::model::outcome::TieKind;
use crate::probe::{Identity, Pid, ProcessInfo, ProcessList, SocketTable, TcpState};
use crate::words::whole_command;

/// How often a stop's waits glance at the lineage's children ([`Watch::look_at_children`]).
/// A worker a supervisor respawns and then ends as it shuts down lives for tens of
/// milliseconds (uvicorn `--workers`, seen in CI): a look only before each level and at the
/// end missed one. A glance reads a few small files per member, so this costs little.
pub const GLANCE: Duration = Duration::from_millis(10);

/// How a newcomer was tied to the resource. A child's parent is [`Seen::parent`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tie {
    /// Its parent, when it was first seen, was a member.
    ChildOfMember,
    /// Its parent, when it was first seen, was a newcomer.
    ChildOfNewcomer,
    /// It listens on this address, one of the resource's recorded ports.
    Listens(String),
    /// Init (or a subreaper) adopted it and it works inside the project: a child the dying
    /// tree left behind that no look saw under its parent (Next's telemetry flush, spawned
    /// detached by `next dev` as it exits).
    OrphanInProject,
}

impl Tie {
    /// The tie as the report's `tie` field names it.
    pub fn kind(&self) -> TieKind {
        match self {
            Tie::ChildOfMember => TieKind::ChildOfMember,
            Tie::ChildOfNewcomer => TieKind::ChildOfNewcomer,
            Tie::Listens(_) => TieKind::Listens,
            Tie::OrphanInProject => TieKind::OrphanInProject,
        }
    }
}

/// One newcomer as first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its pid and start time.
    pub identity: Identity,
    /// Its parent pid when first seen.
    pub parent: Pid,
    /// How it was tied to the resource.
    pub tie: Tie,
    /// Its command line as read then (argv, else the kernel's name).
    pub command: String,
}

impl Seen {
    /// How it is tied to the resource, in words, for the report.
    pub fn how(&self) -> String {
        match &self.tie {
            Tie::ChildOfMember => format!("child of member pid {}", self.parent),
            Tie::ChildOfNewcomer => format!("child of newcomer pid {}", self.parent),
            Tie::Listens(addr) => format!("listens on {addr}, a port of the resource"),
            Tie::OrphanInProject => "orphaned, working in the project".into(),
        }
    }
}

/// What the stop has seen born so far.
#[derive(Debug, Default)]
pub struct Watch {
    /// Every identity the process table held at check (e): none of them is a newcomer.
    baseline: HashSet<Identity>,
    /// The members, then every newcomer found by descent: a child of one of these is ours.
    lineage: HashSet<Identity>,
    seen: Vec<Seen>,
}

impl Watch {
    /// `baseline`: every identity present at check (e); `members`: the resource's members.
    pub fn new(
        baseline: impl IntoIterator<Item = Identity>,
        members: impl IntoIterator<Item = Identity>,
    ) -> Self {
        let members: HashSet<Identity> = members.into_iter().collect();
        Self {
            baseline: baseline.into_iter().collect(),
            lineage: members,
            seen: Vec::new(),
        }
    }

    /// The tie of a child of `parent` (absent at check (e)), if `parent` is the lineage's.
    fn tie_under(&self, parent: &Identity) -> Option<Tie> {
        if !self.lineage.contains(parent) {
            return None;
        }
        // A newcomer is never in the baseline: a parent of the lineage that is, is a member.
        Some(if self.baseline.contains(parent) {
            Tie::ChildOfMember
        } else {
            Tie::ChildOfNewcomer
        })
    }

    /// Every identity present at check (e), for what comes after the stop (the rescan).
    pub fn into_baseline(self) -> HashSet<Identity> {
        self.baseline
    }

    /// Every newcomer found so far, in the order found.
    pub fn seen(&self) -> &[Seen] {
        &self.seen
    }

    fn known(&self, id: &Identity) -> bool {
        self.baseline.contains(id) || self.seen.iter().any(|s| s.identity == *id)
    }

    /// Looks at one read of the process table: every live process absent at check (e) whose
    /// parent (by identity, in this same read) is a member or a newcomer is one, whoever runs
    /// it: a member's `sudo` runs as root, and what it starts is still the stop's newcomer
    /// (never signalled either way). Parents come before children however the table is
    /// ordered (repeated to a fixed point).
    pub fn look(&mut self, list: &ProcessList) {
        let by_pid: HashMap<Pid, &ProcessInfo> =
            list.processes.iter().map(|p| (p.identity.pid, p)).collect();
        loop {
            let mut found = Vec::new();
            for p in list.processes.iter().filter(|p| !p.zombie) {
                if self.known(&p.identity) || found.iter().any(|s: &Seen| s.identity == p.identity)
                {
                    continue;
                }
                let Some(parent) = by_pid.get(&p.ppid) else {
                    continue;
                };
                let Some(tie) = self.tie_under(&parent.identity) else {
                    continue;
                };
                found.push(Seen {
                    identity: p.identity,
                    parent: p.ppid,
                    tie,
                    command: command_line(p),
                });
            }
            if found.is_empty() {
                return;
            }
            for s in found {
                self.lineage.insert(s.identity);
                self.seen.push(s);
            }
        }
    }

    /// The members and the newcomers found by descent: whose children a glance reads.
    pub fn lineage(&self) -> Vec<Identity> {
        self.lineage.iter().copied().collect()
    }

    /// Looks at a glance's `(parent, child)` pairs ([`Probe::children`](crate::probe::Probe::children)):
    /// a live child, absent at check (e), of a parent of the lineage is a newcomer, whoever
    /// runs it, judged as [`Watch::look`] judges. Returns the newcomers it found, whose own children
    /// the next glance reads.
    pub fn look_at_children(&mut self, pairs: &[(Identity, ProcessInfo)]) -> Vec<Identity> {
        let mut found = Vec::new();
        for (parent, p) in pairs {
            if p.zombie || self.known(&p.identity) {
                continue;
            }
            let Some(tie) = self.tie_under(parent) else {
                continue;
            };
            self.lineage.insert(p.identity);
            self.seen.push(Seen {
                identity: p.identity,
                parent: parent.pid,
                tie,
                command: command_line(p),
            });
            found.push(p.identity);
        }
        found
    }

    /// Forgets the newcomers seen from index `from` on that fail `keep` (a later read by bare
    /// pid found a process that no longer runs as itself).
    pub fn keep_from(&mut self, from: usize, keep: impl Fn(Identity) -> bool) {
        let new = self.seen.split_off(from.min(self.seen.len()));
        for s in new {
            if keep(s.identity) {
                self.seen.push(s);
            } else {
                self.lineage.remove(&s.identity);
            }
        }
    }

    /// The processes of `uid` in `list`, absent at check (e) and not yet newcomers, whose
    /// parent (in the same read) is init or a subreaper: their folders say whether they are
    /// orphans of the stop ([`Watch::look_at_orphans`]).
    pub fn orphans(&self, list: &ProcessList, uid: u32) -> Vec<Pid> {
        let by_pid: HashMap<Pid, &ProcessInfo> =
            list.processes.iter().map(|p| (p.identity.pid, p)).collect();
        list.processes
            .iter()
            .filter(|p| p.uid == uid && !p.zombie && !self.known(&p.identity))
            .filter(|p| {
                by_pid
                    .get(&p.ppid)
                    .is_some_and(|parent| matches!(role(parent), Role::Init | Role::Subreaper))
            })
            .map(|p| p.identity.pid)
            .collect()
    }

    /// `cwds`: the folders of (some of) [`Watch::orphans`] of the same `list`. One working
    /// inside `project` is a newcomer.
    pub fn look_at_orphans(&mut self, list: &ProcessList, cwds: &[(Pid, PathBuf)], project: &Path) {
        for (pid, _) in cwds.iter().filter(|(_, cwd)| cwd.starts_with(project)) {
            let Some(p) = list.processes.iter().find(|p| p.identity.pid == *pid) else {
                continue;
            };
            if self.known(&p.identity) {
                continue;
            }
            self.lineage.insert(p.identity);
            self.seen.push(Seen {
                identity: p.identity,
                parent: p.ppid,
                tie: Tie::OrphanInProject,
                command: command_line(p),
            });
        }
    }

    /// The processes of `uid` in `list` that a listener check must walk: live, absent at
    /// check (e), and not already newcomers.
    pub fn unknown_pids(&self, list: &ProcessList, uid: u32) -> Vec<Pid> {
        list.processes
            .iter()
            .filter(|p| p.uid == uid && !p.zombie && !self.known(&p.identity))
            .map(|p| p.identity.pid)
            .collect()
    }

    /// Looks at the socket table (owners among [`Watch::unknown_pids`] of the same `list`):
    /// a listener on one of `ports` held by a process absent at check (e) is a newcomer.
    pub fn look_at_listeners(
        &mut self,
        list: &ProcessList,
        table: &SocketTable,
        ports: &[u16],
        uid: u32,
    ) {
        let unknown: HashSet<Pid> = self.unknown_pids(list, uid).into_iter().collect();
        for s in table
            .sockets
            .iter()
            .filter(|s| s.state == TcpState::Listen && ports.contains(&s.local.port()))
        {
            for owner in s.owners.iter().filter(|o| unknown.contains(o)) {
                let Some(p) = list.processes.iter().find(|p| p.identity.pid == *owner) else {
                    continue;
                };
                if self.known(&p.identity) {
                    continue;
                }
                self.seen.push(Seen {
                    identity: p.identity,
                    parent: p.ppid,
                    tie: Tie::Listens(s.local.to_string()),
                    command: command_line(p),
                });
            }
        }
    }
}

/// A process's command line for a person; the kernel's name when argv was not read.
fn command_line(p: &ProcessInfo) -> String {
    if p.argv.is_empty() {
        whole_command([p.comm.as_bytes()])
    } else {
        whole_command(p.argv.iter().map(Vec::as_slice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fake::{process, FakeProbe, USER};
    use crate::probe::Probe;

    fn id(pid: Pid) -> Identity {
        Identity {
            pid,
            start_time: u64::from(pid) * 10,
        }
    }

    /// A table: 100 (member) → 101 (member); whatever `more` adds.
    fn table(fake: &FakeProbe) -> ProcessList {
        fake.processes().unwrap()
    }

    fn base() -> FakeProbe {
        FakeProbe::default()
            .with(process(100, 1, &["uvicorn", "main:app"]), "/p")
            .with(process(101, 100, &["python", "-c", "worker"]), "/p")
    }

    /// Everything in `fake` was there at check (e); its processes but init are members.
    fn watch(fake: &FakeProbe) -> Watch {
        let ids: Vec<Identity> = fake.processes.iter().map(|p| p.identity).collect();
        let members: Vec<Identity> = ids.iter().copied().filter(|i| i.pid != 1).collect();
        Watch::new(ids, members)
    }

    #[test]
    fn a_child_born_to_a_member_after_check_e_is_a_newcomer_named_with_its_parent() {
        let before = base();
        let mut w = watch(&before);
        let list = table(&base().with(process(102, 100, &["python", "-c", "worker"]), "/p"));
        w.look(&list);
        assert_eq!(w.seen().len(), 1);
        assert_eq!(w.seen()[0].identity.pid, 102);
        assert_eq!(w.seen()[0].tie, Tie::ChildOfMember);
        assert_eq!(w.seen()[0].how(), "child of member pid 100");
        assert_eq!(w.seen()[0].command, "python -c worker");
    }

    #[test]
    fn a_process_present_at_check_e_is_never_a_newcomer() {
        // 102 existed at check (e) outside the tree, and is now a child of a member.
        let at_e = base().with(process(102, 1, &["other"]), "/p");
        let mut w = Watch::new(
            at_e.processes.iter().map(|p| p.identity),
            [id(100), id(101)],
        );
        w.look(&table(&base().with(process(102, 100, &["other"]), "/p")));
        assert!(w.seen().is_empty());
    }

    #[test]
    fn descent_is_judged_on_the_parent_s_identity_not_its_pid() {
        let mut w = watch(&base());
        // Pid 100 now holds another process (another start time): its child is not ours.
        let mut reused = process(100, 1, &["other"]);
        reused.identity.start_time += 7;
        let list = table(
            &FakeProbe::default()
                .with(reused, "/p")
                .with(process(103, 100, &["child"]), "/p"),
        );
        w.look(&list);
        assert!(w.seen().is_empty());
    }

    #[test]
    fn a_grandchild_is_found_whatever_the_order_and_followed_after_re_parenting() {
        let mut w = watch(&base());
        // The grandchild comes first in the table.
        let list = table(
            &base()
                .with(process(105, 104, &["grandchild"]), "/p")
                .with(process(104, 101, &["child"]), "/p"),
        );
        w.look(&list);
        let ties: Vec<(Pid, String)> = w.seen().iter().map(|s| (s.identity.pid, s.how())).collect();
        assert!(
            ties.contains(&(104, "child of member pid 101".into())),
            "{ties:?}"
        );
        assert!(
            ties.contains(&(105, "child of newcomer pid 104".into())),
            "{ties:?}"
        );
        // Later its parents are gone and init adopted it: still one newcomer, not two.
        w.look(&table(
            &FakeProbe::default().with(process(105, 1, &["grandchild"]), "/p"),
        ));
        assert_eq!(w.seen().len(), 2);
    }

    #[test]
    fn a_newcomer_dropped_by_a_later_identity_check_is_forgotten_with_its_lineage() {
        let mut w = watch(&base());
        w.look(&table(&base().with(process(102, 100, &["worker"]), "/p")));
        let from = w.seen().len();
        w.look(&table(&base().with(process(103, 101, &["worker"]), "/p")));
        assert_eq!(w.seen().len(), 2);
        // 103's pid now answers with another start time: it is not ours.
        w.keep_from(from, |id| id.pid != 103);
        let pids: Vec<Pid> = w.seen().iter().map(|s| s.identity.pid).collect();
        assert_eq!(
            pids,
            vec![102],
            "earlier ones are kept whatever `keep` says"
        );
        // Later 103 hangs from init: a child of it is not a child of a newcomer.
        let later = base()
            .with(process(103, 1, &["worker"]), "/p")
            .with(process(105, 103, &["grandchild"]), "/p");
        w.look(&table(&later));
        assert_eq!(w.seen().len(), 1, "{:?}", w.seen());
    }

    /// A zombie is gone; a setuid helper a member started runs as another user, and is the
    /// stop's newcomer all the same (reported, never signalled), as is what it starts.
    #[test]
    fn a_zombie_is_no_newcomer_and_another_user_s_child_is_one() {
        let mut w = watch(&base());
        let mut theirs = process(106, 100, &["setuid-helper"]);
        theirs.uid = USER + 1;
        let mut zombie = process(107, 100, &["worker"]);
        zombie.zombie = true;
        let below = process(108, 106, &["node"]);
        let later = base()
            .with(theirs, "/p")
            .with(zombie, "/p")
            .with(below, "/p");
        w.look(&table(&later));
        let seen: Vec<Pid> = w.seen().iter().map(|s| s.identity.pid).collect();
        assert_eq!(seen, vec![106, 108]);
    }

    #[test]
    fn an_orphan_born_in_the_project_is_a_newcomer_and_one_elsewhere_or_with_a_live_parent_is_not()
    {
        let mut w = watch(&base());
        let list = table(
            &base()
                .with(process(300, 1, &["node", "detached-flush.js"]), "/p/app")
                .with(process(301, 1, &["node", "elsewhere.js"]), "/q")
                .with(process(302, 100, &["child"]), "/p")
                .with(process(303, 999, &["git", "status"]), "/p"),
        );
        // 302 is a member's child (a descendant, found by `look`); 303's parent is not init.
        assert_eq!(w.orphans(&list, USER), vec![300, 301]);
        let cwds = [(300, PathBuf::from("/p/app")), (301, PathBuf::from("/q"))];
        w.look_at_orphans(&list, &cwds, Path::new("/p"));
        assert_eq!(w.seen().len(), 1);
        assert_eq!(w.seen()[0].identity.pid, 300);
        assert_eq!(w.seen()[0].tie, Tie::OrphanInProject);
        // Seen once, never twice.
        w.look_at_orphans(&list, &cwds, Path::new("/p"));
        assert_eq!(w.seen().len(), 1);
    }

    #[test]
    fn a_stranger_listening_on_a_recorded_port_is_a_newcomer_and_other_ports_are_not() {
        let mut w = watch(&base());
        let fake = base()
            .with(
                process(200, 1, &["python", "-m", "http.server", "8000"]),
                "/q",
            )
            .listen("127.0.0.1:8000", 200)
            .with(
                process(201, 1, &["python", "-m", "http.server", "9000"]),
                "/q",
            )
            .listen("127.0.0.1:9000", 201);
        let list = table(&fake);
        assert_eq!(w.unknown_pids(&list, USER), vec![200, 201]);
        let sockets = fake.sockets(&[200, 201]).unwrap();
        w.look_at_listeners(&list, &sockets, &[8000], USER);
        assert_eq!(w.seen().len(), 1);
        assert_eq!(w.seen()[0].identity.pid, 200);
        assert_eq!(w.seen()[0].tie, Tie::Listens("127.0.0.1:8000".into()));
    }
}

#[cfg(test)]
#[path = "newcomers/glance_tests.rs"]
mod glance_tests;
