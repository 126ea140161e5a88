//! Why the checkpoint chain said no, as values: which checkpoint (the report's `checkpoint`)
//! and what it saw ([`Why`]). `Display` is the sentence the report's reason carries: what was
//! seen, in plain words, with no checkpoint label.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::diagnose::judge::Protection;
use crate::model::client::Client;
use crate::model::outcome::Checkpoint;
use crate::probe::Pid;
use crate::words;

/// A stop refused by its checkpoint chain: nothing was sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{why}")]
pub struct Refusal {
    /// The checkpoint that said no.
    pub checkpoint: Checkpoint,
    /// What it saw; its sentence is the refusal's.
    pub why: Why,
}

impl Why {
    /// The reason of the table (`model::reason`) this refusal is, where a stop anyway may set
    /// it aside: a client, or busy. Anything else a checkpoint sees is a change or unread.
    pub fn reason(&self) -> Option<crate::model::reason::Reason> {
        use crate::model::reason::Reason;
        match self {
            Why::Connected { .. } | Why::UnixConnected(_) | Why::Waiting(_) | Why::Driven(_) => {
                Some(Reason::LiveConnection)
            }
            Why::Busy(_) => Some(Reason::Busy),
            _ => None,
        }
    }

    /// The reason of the table this refusal is, whatever may set it aside: a client, busy, or
    /// what could not be read. A change in the tree (a root gone, a newcomer, an exec), a
    /// protected member, a container's answer and the deadline are none.
    pub fn table_reason(&self) -> Option<crate::model::reason::Reason> {
        use crate::model::reason::Reason;
        match self {
            Why::SurveyFailed(_)
            | Why::MemberUnreadable { .. }
            | Why::ProcessUnreadable { .. }
            | Why::TablesUnreadable(_)
            | Why::Blind { .. }
            | Why::FdsUnreadable { .. }
            | Why::SharedListener { .. }
            | Why::EmptyWindow
            | Why::ActivityUnreadable { .. }
            | Why::TreeUnreadable(_)
            | Why::TreeProcessUnreadable { .. }
            | Why::IdentityUnknown { .. }
            | Why::ExeUnreadable { .. } => Some(Reason::Unreadable),
            _ => self.reason(),
        }
    }
}

/// Who holds the other end of a live connection, as far as Pier can see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peer {
    /// A process Pier read: its program, command and what it likely is.
    Client(Box<Client>),
    /// A pid the tables name whose row was not read.
    Pid(Pid),
    /// Nobody Pier can see: another user, another machine, or not accepted yet.
    Unseen,
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let words = match self {
            Peer::Client(c) => words::client_of_connection(Some(c), Some(c.pid)),
            Peer::Pid(pid) => words::client_of_connection(None, Some(*pid)),
            Peer::Unseen => words::client_of_connection(None, None),
        };
        f.write_str(&words)
    }
}

/// What a checkpoint saw that would not be green, or could not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Why {
    /// A container's checkpoint: what its fresh card, its engine's counters or its engine's
    /// account of its run said (`stop/container.rs`), in words.
    #[error("{0}")]
    Container(String),
    // (a), (c), (e): ports and connections.
    /// The survey of processes and sockets failed as a whole, with the probe's error.
    #[error("the ports and connections could not be checked: {0}")]
    SurveyFailed(String),
    /// A member's process row could not be read.
    #[error("pid {pid} could not be read, so its connections are unknown: {error}")]
    MemberUnreadable {
        /// The member's pid that could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// A process of the user's (or of an owner that could not be read), not known to be a
    /// member, could not be read: its parent is unknown, so it may be one.
    #[error(
        "pid {pid} could not be read, so it may be a member whose connections are unknown: {error}"
    )]
    ProcessUnreadable {
        /// The pid that could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// The socket tables could not be read, with the probe's error.
    #[error("connection data could not be read: {0}")]
    TablesUnreadable(String),
    /// A member's connections the tables cannot show at all (Linux: another network namespace).
    #[error("the connections of pid {pid} cannot be seen: {why}")]
    Blind {
        /// The member whose connections cannot be seen.
        pid: Pid,
        /// Why, in the probe's words.
        why: String,
    },
    /// A member's open files could not be read, so which sockets it holds is unknown.
    #[error(
        "the open files of pid {pid} could not be read, so its connections are unknown: {why}"
    )]
    FdsUnreadable {
        /// The member whose open files could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        why: String,
    },
    /// A listener of the resource is also held by processes outside it.
    #[error(
        "the socket listening on {local} is also held by pid {} outside this resource, so \
         stopping it would not free the port",
        pids(outside)
    )]
    SharedListener {
        /// The address and port the shared socket listens on.
        local: SocketAddr,
        /// The pids outside the resource that also hold it.
        outside: Vec<Pid>,
    },
    /// A live connection on one of the resource's listeners: a client the stop would cut off.
    #[error("a client is connected: live connection {local} ← {peer} {who}")]
    Connected {
        /// The listener's end: the address and port the client connected to.
        local: SocketAddr,
        /// The client's address and port.
        peer: SocketAddr,
        /// Who holds the client's end.
        who: Peer,
    },
    /// A client attached over a unix socket to one of the resource's unix listeners, in the
    /// judge's words (`judge::unix_client_words`: the listener's name and the client).
    #[error("a client is connected: {0}")]
    UnixConnected(String),
    /// Connections completed but not yet accepted on the resource's listeners: how many.
    #[error("a client is waiting: {0} connection(s) not yet accepted")]
    Waiting(u32),
    /// A driver at work on a member's debugging port or pipe, in the judge's words (which say
    /// so).
    #[error("{0}")]
    Driven(String),

    // (b): activity.
    /// The activity window is zero long, so nothing can be measured over it.
    #[error("activity cannot be judged over an empty window")]
    EmptyWindow,
    /// A member's activity over the window could not be read.
    #[error("the activity of pid {pid} could not be read: {error}")]
    ActivityUnreadable {
        /// The member whose activity could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// Busy, in the scan's own words (`rules::activity_evidence`): the figures, the window and
    /// the busiest member.
    #[error("{0}")]
    Busy(String),

    // (d), (e): the process tree and the members' identities.
    /// The process list could not be read, with the probe's error.
    #[error("the process tree could not be checked: {0}")]
    TreeUnreadable(String),
    /// A process of the user's (or of an owner that could not be read) could not be read: its
    /// parent is unknown, so it may have joined the tree.
    #[error("pid {pid} could not be read, so whether it joined the tree is unknown: {error}")]
    TreeProcessUnreadable {
        /// The pid that could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// The snapshot's root is gone, a zombie, or its pid holds another process: the tree
    /// changed.
    #[error("the root process {pid} ({command}) exited during the checks")]
    RootExited {
        /// The root's pid, as the snapshot recorded it.
        pid: Pid,
        /// The root's command, short enough for a sentence, from the snapshot.
        command: String,
    },
    /// A process under the root that the snapshot does not list.
    #[error(
        "a new process joined the tree during the checks: pid {pid} ({comm}), child of pid {ppid}"
    )]
    Joined {
        /// The newcomer's pid.
        pid: Pid,
        /// Its kernel name (`comm`).
        comm: String,
        /// Its parent's pid.
        ppid: Pid,
    },
    /// A member Pier never signals, Force included (`judge::force_allowed`).
    #[error("never touched: pid {pid} is {why}")]
    Protected {
        /// The protected member's pid.
        pid: Pid,
        /// What it is: another user's process, init, Pier or an ancestor of Pier.
        why: Protection,
    },
    /// A fresh read of a member's identity gave no answer: it may or may not be the same
    /// process.
    #[error("whether pid {pid} is still the same process could not be read: {why}")]
    IdentityUnknown {
        /// The member whose identity could not be read.
        pid: Pid,
        /// Why, in the probe's words.
        why: String,
    },
    /// A member is still the same process, but its executable can no longer be read.
    #[error(
        "the executable of pid {pid} can no longer be read, so it cannot be shown to be the \
         same program"
    )]
    ExeUnreadable {
        /// The member whose executable could not be read.
        pid: Pid,
    },
    /// A member is still the same process but runs another executable than the snapshot's.
    #[error("pid {pid} now runs {}, not {}: it exec'd another program", now.display(), was.display())]
    Execd {
        /// The member's pid.
        pid: Pid,
        /// The executable it runs now.
        now: PathBuf,
        /// The executable the snapshot recorded.
        was: PathBuf,
    },

    // The deadline from (a) to the first signal.
    /// More time than allowed passed from check (a) to the first signal; nothing was sent.
    #[error(
        "the checks took too long: more than {} s passed between the first look at its \
         connections and the first signal, so nothing was sent (the machine may be busy; try \
         again)",
        limit.as_secs_f64()
    )]
    Deadline {
        /// The time allowed ([`super::StopOptions::deadline`]).
        limit: Duration,
    },
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
                "a client is connected: live connection 127.0.0.1:5173 ← 127.0.0.1:40000 from \
                 pid 300, whose program could not be read — it ends when that client \
                 disconnects",
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
