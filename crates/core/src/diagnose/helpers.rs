//! Whose listener it is: the server's own, or a helper's. A helper is a process the
//! server starts to do work for it — a notebook kernel — named by [`kinds::helper_of`].
//!
//! The rule: a listener is a helper's when every member of the resource holding it is a helper,
//! or a descendant of a helper within the resource; every other listener is the server's.
//!
//! The split is for display and readiness only. A helper's ports are chosen afresh at each start
//! (a kernel's random ZMQ ports), and a restarted server has no helper until something asks for
//! one, so they are no address to open and nothing a restart can wait for. Every listener still
//! counts for connections, the stop's checkpoints and its rescan: a client on a kernel's port is
//! a client of the resource.

use std::collections::{HashMap, HashSet};

use super::kinds;
use super::tree::ProcessTable;
use crate::probe::Pid;

/// Every member that is a helper, or descends from one within `members`, with the nearest
/// helper at or above it.
///
/// Why the walk stops at the resource's edge: a member's ancestors outside the resource (the
/// terminal, init) say nothing about what the member is to the server.
pub fn helpers_among(table: &ProcessTable, members: &[Pid]) -> HashMap<Pid, &'static str> {
    let inside: HashSet<Pid> = members.iter().copied().collect();
    let own: HashMap<Pid, &'static str> = members
        .iter()
        .filter_map(|&pid| Some((pid, kinds::helper_of(&table.get(pid)?.argv)?)))
        .collect();
    let mut out = HashMap::new();
    for &pid in members {
        let mut seen = HashSet::new();
        let mut cur = pid;
        while inside.contains(&cur) && seen.insert(cur) {
            if let Some(&helper) = own.get(&cur) {
                out.insert(pid, helper);
                break;
            }
            let Some(p) = table.get(cur) else { break };
            cur = p.ppid;
        }
    }
    out
}

/// The helper whose listener this is, given the members holding it (`owners`, members only);
/// `None`: the server's.
///
/// Why "every" holder: a server's listener inherited by a helper it forked is still the
/// server's — the server serves on it, and a restart must wait for it.
pub fn listener_helper(
    owners: &[Pid],
    helpers: &HashMap<Pid, &'static str>,
) -> Option<&'static str> {
    let first = helpers.get(owners.first()?)?;
    owners
        .iter()
        .all(|o| helpers.contains_key(o))
        .then_some(*first)
}

#[cfg(test)]
mod tests;
