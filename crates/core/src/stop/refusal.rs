//! Why the checkpoint chain said no, as values: which checkpoint (the report's `checkpoint`)
//! and what it saw ([`Why`]). `Display` is the sentence the report's reason carries: what was
//! seen, in plain words, with no checkpoint label.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::diagnose::judge::Protection;
use crate::model::outcome::Checkpoint;
use crate::probe::Pid;

/// A stop refused by its checkpoint chain: nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{why}")]
pub struct Refusal {
    pub checkpoint: Checkpoint,
    pub why: Why,
}

/// Who holds the other end of a live connection, as far as Pier can see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// A process of the user's, with its kernel name.
    Process { pid: Pid, comm: String },
    /// A pid the tables name whose row was not read.
    Pid(Pid),
    /// Nobody Pier can see: another user, another machine, or not accepted yet.
    Unseen,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Peer::Process { pid, comm } => write!(f, "pid {pid}, {comm}"),
            Peer::Pid(pid) => write!(f, "pid {pid}"),
            Peer::Unseen => f.write_str("a process Pier cannot see"),
        }
    }
}

/// What a checkpoint saw that would not be green, or could not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Why {
    // (a), (c), (e): ports and connections.
    #[error("the ports and connections could not be checked: {0}")]
    SurveyFailed(String),
    #[error("pid {pid} could not be read, so its connections are unknown: {error}")]
    MemberUnreadable { pid: Pid, error: String },
    #[error(
        "pid {pid} could not be read, so it may be a member whose connections are unknown: {error}"
    )]
    ProcessUnreadable { pid: Pid, error: String },
    #[error("connection data could not be read: {0}")]
    TablesUnreadable(String),
    #[error("the connections of pid {pid} cannot be seen: {why}")]
    Blind { pid: Pid, why: String },
    #[error(
        "the open files of pid {pid} could not be read, so its connections are unknown: {why}"
    )]
    FdsUnreadable { pid: Pid, why: String },
    #[error(
        "the socket listening on {local} is also held by pid {} outside this resource, so \
         stopping it would not free the port",
        pids(outside)
    )]
    SharedListener {
        local: SocketAddr,
        outside: Vec<Pid>,
    },
    #[error("a client is connected: live connection {local} ← {peer} ({who})")]
    Connected {
        local: SocketAddr,
        peer: SocketAddr,
        who: Peer,
    },
    #[error("a client is waiting: {0} connection(s) not yet accepted")]
    Waiting(u32),

    // (b): activity.
    #[error("activity cannot be judged over an empty window")]
    EmptyWindow,
    #[error("the activity of pid {pid} could not be read: {error}")]
    ActivityUnreadable { pid: Pid, error: String },
    /// Busy, in the scan's own words (`rules::activity_evidence`): the figures, the window and
    /// the busiest member.
    #[error("{0}")]
    Busy(String),

    // (d), (e): the process tree and the members' identities.
    #[error("the process tree could not be checked: {0}")]
    TreeUnreadable(String),
    #[error("pid {pid} could not be read, so whether it joined the tree is unknown: {error}")]
    TreeProcessUnreadable { pid: Pid, error: String },
    #[error("the root process {pid} ({command}) exited during the checks")]
    RootExited { pid: Pid, command: String },
    #[error(
        "a new process joined the tree during the checks: pid {pid} ({comm}), child of pid {ppid}"
    )]
    Joined { pid: Pid, comm: String, ppid: Pid },
    #[error("never touched: pid {pid} is {why}")]
    Protected { pid: Pid, why: Protection },
    #[error("whether pid {pid} is still the same process could not be read: {why}")]
    IdentityUnknown { pid: Pid, why: String },
    #[error(
        "the executable of pid {pid} can no longer be read, so it cannot be shown to be the \
         same program"
    )]
    ExeUnreadable { pid: Pid },
    #[error("pid {pid} now runs {}, not {}: it exec'd another program", now.display(), was.display())]
    Execd {
        pid: Pid,
        now: PathBuf,
        was: PathBuf,
    },

    // The deadline from (a) to the first signal.
    #[error(
        "the checks took too long: more than {} s passed between the first look at its \
         connections and the first signal, so nothing was sent (the machine may be busy; try \
         again)",
        limit.as_secs_f64()
    )]
    Deadline { limit: Duration },
}

fn pids(list: &[Pid]) -> String {
    let each: Vec<String> = list.iter().map(Pid::to_string).collect();
    each.join(", ")
}

impl Why {
    /// This reason, as checkpoint `checkpoint` gives it.
    pub fn at(self, checkpoint: Checkpoint) -> Refusal {
        Refusal {
            checkpoint,
            why: self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentences are the ones the checkpoints wrote with `format!` before they were
    /// typed: a person (and every test of a reason) reads exactly what it read then.
    #[test]
    fn each_refusal_reads_as_the_sentence_it_always_did() {
        let local: SocketAddr = "127.0.0.1:5173".parse().unwrap();
        let peer: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let cases = [
            (
                Why::SurveyFailed("EIO".into()),
                "the ports and connections could not be checked: EIO",
            ),
            (
                Why::MemberUnreadable {
                    pid: 101,
                    error: "EIO".into(),
                },
                "pid 101 could not be read, so its connections are unknown: EIO",
            ),
            (
                Why::TablesUnreadable("EPERM".into()),
                "connection data could not be read: EPERM",
            ),
            (
                Why::Blind {
                    pid: 7,
                    why: "another network namespace".into(),
                },
                "the connections of pid 7 cannot be seen: another network namespace",
            ),
            (
                Why::FdsUnreadable {
                    pid: 7,
                    why: "EACCES".into(),
                },
                "the open files of pid 7 could not be read, so its connections are unknown: \
                 EACCES",
            ),
            (
                Why::Connected {
                    local,
                    peer,
                    who: Peer::Pid(300),
                },
                "a client is connected: live connection 127.0.0.1:5173 ← 127.0.0.1:40000 \
                 (pid 300)",
            ),
            (
                Why::Waiting(2),
                "a client is waiting: 2 connection(s) not yet accepted",
            ),
            (
                Why::EmptyWindow,
                "activity cannot be judged over an empty window",
            ),
            (
                Why::ActivityUnreadable {
                    pid: 7,
                    error: "EACCES".into(),
                },
                "the activity of pid 7 could not be read: EACCES",
            ),
            (
                Why::TreeUnreadable("EIO".into()),
                "the process tree could not be checked: EIO",
            ),
            (
                Why::IdentityUnknown {
                    pid: 7,
                    why: "no answer".into(),
                },
                "whether pid 7 is still the same process could not be read: no answer",
            ),
            (
                Why::ExeUnreadable { pid: 7 },
                "the executable of pid 7 can no longer be read, so it cannot be shown to be the \
                 same program",
            ),
            (
                Why::Execd {
                    pid: 7,
                    now: "/bin/bash".into(),
                    was: "/usr/bin/node".into(),
                },
                "pid 7 now runs /bin/bash, not /usr/bin/node: it exec'd another program",
            ),
            (
                Why::Deadline {
                    limit: Duration::from_secs(2),
                },
                "the checks took too long: more than 2 s passed between the first look at its \
                 connections and the first signal, so nothing was sent (the machine may be \
                 busy; try again)",
            ),
        ];
        for (why, words) in cases {
            assert_eq!(why.clone().at(Checkpoint::A).to_string(), words, "{why:?}");
        }
    }
}
