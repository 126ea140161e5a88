//! The rows a survey of the user's own processes left unread, read when the diagnosis needs
//! them (`Probe::survey_own`; docs/decisions.md, "What a scan reads").
//!
//! A scan reads in full only the user's processes: everyone else's are sighted, at one `stat`
//! each (Linux), or not even listed (macOS). The rules still see every process they look at,
//! because the diagnosis reads the few it needs, by pid, before it asks a rule:
//! - the ancestors of each candidate and of Pier: the launch chain is climbed through them,
//!   a root's parent decides "orphaned", and Pier's ancestors are never stopped;
//! - a root's session leader: whether it still runs is part of "orphaned";
//! - the children of every member, whoever runs them: a member run by another user is red,
//!   and a tree must not end at a process nobody read.
//!
//! Where the OS cannot list one process's children (Linux without `CONFIG_PROC_CHILDREN`),
//! every sighted process is read instead: slower, never less.

use std::collections::HashSet;

use super::{judge, Facts};
use crate::probe::Pid;

impl Facts<'_> {
    /// Reads the rows of the sighted processes among `pids` into the table. A pid read once
    /// is not read again, whatever it answered.
    pub(crate) fn read_sighted(&mut self, pids: &[Pid]) {
        let wanted: Vec<Pid> = pids
            .iter()
            .copied()
            .filter(|pid| self.sighted.remove(pid))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let list = self.probe.rows(&wanted);
        for p in list.processes {
            self.table.add(p);
        }
        // Another user's, in all likelihood (it was sighted as such); the judge decides.
        self.unreadable
            .extend(judge::unreadable_of(&list.unreadable, self.uid));
    }

    /// Puts every ancestor of `pid` in the table, nearest first, as far as PID 1 or a pid
    /// that is gone.
    pub(crate) fn complete_lineage(&mut self, pid: Pid) {
        let mut seen = HashSet::from([pid]);
        let mut cur = pid;
        while let Some(p) = self.table.get(cur) {
            let parent = p.ppid;
            if parent == 0 || !seen.insert(parent) {
                break;
            }
            self.read_sighted(&[parent]);
            cur = parent;
        }
    }

    /// Puts every descendant of `roots` in the table, whoever runs it: the children of each
    /// member are listed (each member once), the sighted ones among them added, and their
    /// children listed in turn.
    pub(crate) fn complete_trees(&mut self, roots: &[Pid]) {
        let mut listed: HashSet<Pid> = HashSet::new();
        while !self.sighted.is_empty() {
            let parents: Vec<_> = roots
                .iter()
                .flat_map(|&root| self.table.members(root))
                .filter(|&pid| listed.insert(pid))
                .filter_map(|pid| self.table.get(pid).map(|p| p.identity))
                .collect();
            if parents.is_empty() {
                return;
            }
            match self.probe.children(&parents) {
                Ok(pairs) => {
                    // Each child comes as a whole row, argv included: what `rows` would read.
                    for (_, child) in pairs {
                        if self.sighted.remove(&child.identity.pid) {
                            self.table.add(child);
                        }
                    }
                }
                Err(_) => {
                    // No lists of children here: every sighted process, once.
                    let all: Vec<Pid> = self.sighted.iter().copied().collect();
                    self.read_sighted(&all);
                    return;
                }
            }
        }
    }
}
