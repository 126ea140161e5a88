//! The process tree: who is whose parent, where a tool's launch chain begins (its root), and
//! which processes make up a resource (the root and all its live descendants).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::kinds::{self, Role};
use crate::probe::{Pid, ProcessInfo};

/// The process table indexed by pid and by parent.
pub struct ProcessTable {
    by_pid: HashMap<Pid, ProcessInfo>,
    children: HashMap<Pid, Vec<Pid>>,
}

impl ProcessTable {
    /// Indexes one reading of the process table.
    pub fn new(processes: Vec<ProcessInfo>) -> Self {
        let mut children: HashMap<Pid, Vec<Pid>> = HashMap::new();
        for p in &processes {
            children.entry(p.ppid).or_default().push(p.identity.pid);
        }
        for list in children.values_mut() {
            list.sort_unstable();
        }
        let by_pid = processes.into_iter().map(|p| (p.identity.pid, p)).collect();
        Self { by_pid, children }
    }

    /// Adds a row read after the table (a process the survey only sighted); a pid already
    /// in the table keeps the row it has.
    pub fn add(&mut self, p: ProcessInfo) {
        let pid = p.identity.pid;
        if self.by_pid.contains_key(&pid) {
            return;
        }
        let siblings = self.children.entry(p.ppid).or_default();
        if let Err(at) = siblings.binary_search(&pid) {
            siblings.insert(at, pid);
        }
        self.by_pid.insert(pid, p);
    }

    /// The row of `pid`, if the table has one.
    pub fn get(&self, pid: Pid) -> Option<&ProcessInfo> {
        self.by_pid.get(&pid)
    }

    /// Puts in the argv a survey left unread (read since, for the same identity).
    pub fn set_argv(&mut self, pid: Pid, argv: Vec<Vec<u8>>) {
        if let Some(p) = self.by_pid.get_mut(&pid) {
            p.argv = argv;
            p.argv_unread = false;
        }
    }

    /// Alive: present and not a zombie.
    pub fn is_alive(&self, pid: Pid) -> bool {
        self.get(pid).is_some_and(|p| !p.zombie)
    }

    /// Every row, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &ProcessInfo> {
        self.by_pid.values()
    }

    /// Pier's ancestors (not Pier itself), nearest first.
    pub fn ancestors(&self, pid: Pid) -> Vec<Pid> {
        let mut out = Vec::new();
        let mut seen = HashSet::from([pid]);
        let mut cur = pid;
        while let Some(p) = self.get(cur) {
            if p.ppid == 0 || !seen.insert(p.ppid) {
                break;
            }
            out.push(p.ppid);
            cur = p.ppid;
        }
        out
    }

    /// The root of the resource holding `pid`: climb while the parent is part of the tool's own
    /// launch chain (a launcher like `sh -c` or `npm run`, or another dev tool like `nodemon`),
    /// belongs to the same user, and is not PID 1. Stops below shells, terminals, editors,
    /// multiplexers, process managers, subreapers and anything unknown.
    pub fn find_root(&self, pid: Pid, uid: u32) -> Pid {
        let mut cur = pid;
        let mut seen = HashSet::from([pid]);
        while let Some(p) = self.get(cur) {
            let Some(parent) = self.get(p.ppid) else {
                break;
            };
            let climbs = parent.identity.pid != 1
                && parent.uid == uid
                && !parent.zombie
                && kinds::role(parent).is_launch_chain();
            if !climbs || !seen.insert(parent.identity.pid) {
                break;
            }
            cur = parent.identity.pid;
        }
        cur
    }

    /// The root and its live descendants, root first, then breadth first.
    pub fn members(&self, root: Pid) -> Vec<Pid> {
        let mut out = vec![root];
        let mut seen = BTreeSet::from([root]);
        let mut i = 0;
        while i < out.len() {
            for &child in self.children.get(&out[i]).map(Vec::as_slice).unwrap_or(&[]) {
                if self.is_alive(child) && seen.insert(child) {
                    out.push(child);
                }
            }
            i += 1;
        }
        out
    }

    /// The parent of `pid` and what it is, when the parent can be read.
    pub fn parent(&self, pid: Pid) -> Option<(&ProcessInfo, Role)> {
        let parent = self.get(self.get(pid)?.ppid)?;
        Some((parent, kinds::role(parent)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fake::{process, USER};

    fn table(ps: Vec<ProcessInfo>) -> ProcessTable {
        ProcessTable::new(ps)
    }

    #[test]
    fn the_root_is_the_top_of_the_launch_chain() {
        let mut shell = process(10, 1, &["-bash"]);
        shell.tty_nr = 34816;
        let t = table(vec![
            process(1, 0, &["/sbin/init"]),
            shell,
            process(20, 10, &["npm", "run", "dev"]),
            process(21, 20, &["sh", "-c", "vite"]),
            process(22, 21, &["node", "/p/node_modules/.bin/vite"]),
            process(
                23,
                22,
                &["/p/node_modules/esbuild/bin/esbuild", "--service"],
            ),
        ]);
        assert_eq!(
            t.find_root(22, USER),
            20,
            "npm and sh -c belong to the resource"
        );
        assert_eq!(t.find_root(23, USER), 20);
        assert_eq!(t.members(20), vec![20, 21, 22, 23]);
    }

    #[test]
    fn the_walk_stops_at_init_other_users_and_unknown_parents() {
        let mut other = process(30, 1, &["sh", "-c", "vite"]);
        other.uid = 0;
        let t = table(vec![
            process(1, 0, &["/sbin/init"]),
            other,
            process(31, 30, &["vite"]),
            process(40, 1, &["python3", "orchestrate.py"]),
            process(41, 40, &["vite"]),
            process(50, 1, &["sh", "-c", "vite"]),
        ]);
        assert_eq!(
            t.find_root(31, USER),
            31,
            "another user's launcher is not ours"
        );
        assert_eq!(
            t.find_root(41, USER),
            41,
            "an unknown parent is not a launcher"
        );
        assert_eq!(
            t.find_root(50, USER),
            50,
            "PID 1 is never part of a resource"
        );
    }

    #[test]
    fn zombies_are_not_members_and_cycles_do_not_hang() {
        let mut z = process(61, 60, &["node"]);
        z.zombie = true;
        let t = table(vec![
            process(60, 1, &["vite"]),
            z,
            process(62, 60, &["esbuild"]),
        ]);
        assert_eq!(t.members(60), vec![60, 62]);
        // A pid that is its own grandparent (a torn read) must not loop forever.
        let t = table(vec![
            process(70, 71, &["sh", "-c", "x"]),
            process(71, 70, &["sh", "-c", "y"]),
        ]);
        assert!([70, 71].contains(&t.find_root(70, USER)));
        assert_eq!(t.ancestors(70), vec![71]);
    }
}
