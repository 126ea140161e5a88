//! One process's children, without reading the whole process table: each thread lists the
//! children it forked in `/proc/<pid>/task/<tid>/children` (a kernel built with
//! `CONFIG_PROC_CHILDREN`, as Debian's, Ubuntu's and Fedora's are). What a stop glances at
//! every few milliseconds while it waits (`stop/newcomers.rs`), so it must cost little.

use std::fs;

use super::is_gone;
use super::rows::{self, Clock, Row};
use crate::probe::procfs::parse_children;
use crate::probe::{Identity, ProbeError, ProcessInfo};

/// What the children files of one process answered.
pub enum Read {
    Children(Vec<ProcessInfo>),
    /// This kernel lists no children (or the files say something else): read the table.
    Unsupported,
    /// A list, or a child it names, could not be read: the children are not known.
    Failed(ProbeError),
}

/// The children of `parent`: each listed pid's row, kept when the row names `parent` as its
/// parent, and only when `parent` still runs as itself after the lists and the rows are read —
/// a pid reused between the reads is not its parent's child. None when `parent` is gone.
/// Fails rather than answering less: a scan completes its trees from these lists
/// (`diagnose/complete.rs`), and reads the whole table instead when they fail.
pub fn of(parent: Identity, clock: Clock) -> Read {
    let task_dir = format!("/proc/{}/task", parent.pid);
    let tasks = match fs::read_dir(&task_dir) {
        Ok(tasks) => tasks,
        Err(e) if is_gone(&e) => return Read::Children(Vec::new()),
        Err(e) => return Read::Failed(ProbeError::read(task_dir, e)),
    };
    let mut pids = Vec::new();
    for task in tasks {
        let task = match task {
            Ok(task) => task,
            Err(e) => return Read::Failed(ProbeError::read(task_dir, e)),
        };
        let path = task.path().join("children");
        // Read to the end: the list is made one pid at a time, and a read can stop short of
        // the next pid with more to come (found with 900 children: 819 in the first read).
        match fs::read(&path) {
            Ok(bytes) => match parse_children(&bytes) {
                Some(found) => pids.extend(found),
                None => return Read::Unsupported,
            },
            // The thread ended after the listing.
            Err(e) if is_gone(&e) && !task.path().exists() => {}
            Err(e) if is_gone(&e) => return Read::Unsupported,
            Err(e) => return Read::Failed(ProbeError::read(path.display().to_string(), e)),
        }
    }
    if !still_itself(parent) {
        return Read::Children(Vec::new());
    }
    pids.sort_unstable();
    pids.dedup();
    let mut children = Vec::new();
    for pid in pids {
        match rows::read_row(pid, clock) {
            Row::Read(info) if info.ppid == parent.pid => children.push(info),
            Row::Read(_) | Row::Gone | Row::Sighted(_) => {}
            Row::Unreadable(u) => return Read::Failed(ProbeError::Partial(u.error)),
        }
    }
    // Once more after the rows: a row naming this pid as its parent is then this parent's.
    if !still_itself(parent) {
        return Read::Children(Vec::new());
    }
    Read::Children(children)
}

/// Whether `parent` runs as that identity now (not a zombie, not another process on its pid).
fn still_itself(parent: Identity) -> bool {
    matches!(rows::stat(parent.pid),
        Ok(Some((_, s))) if s.start_time == parent.start_time && !matches!(s.state, b'Z' | b'X'))
}
