//! Why a stop ended before its checks with nothing sent, besides a checkpoint's refusal
//! (`refusal.rs`): its record could not be written or marked (no record, no signal), or a
//! member changed while its snapshot was taken. Kinds a caller can match; each sentence made
//! here once, the report's reason.

use crate::model::outcome::ResourceResult;
use crate::probe::{Pid, ProbeError};

/// Why a tree's snapshot was not taken: a member changed (refused), or it could not be written
/// (failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotTaken {
    /// A member is not what was diagnosed.
    #[error(transparent)]
    Changed(#[from] Changed),
    /// The snapshot could not be written.
    #[error(transparent)]
    Unrecorded(#[from] Unrecorded),
}

impl NotTaken {
    /// The stop's result: refused for a change, failed for a write.
    pub fn result(&self) -> ResourceResult {
        match self {
            Self::Changed(_) => ResourceResult::Refused,
            Self::Unrecorded(_) => ResourceResult::Failed,
        }
    }
}

/// A record that could not be written: the stop failed, and nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unrecorded {
    /// A tree's recovery snapshot, in the store's words.
    #[error("the recovery snapshot could not be written, so nothing was signalled: {0}")]
    Snapshot(String),
    /// A container's stop record, in the store's words.
    #[error("the recovery record could not be written, so nothing was signalled: {0}")]
    Record(String),
    /// The "signals may follow" mark in a tree's snapshot.
    #[error(
        "the \"signals may follow\" mark could not be written to the snapshot, so nothing was \
         signalled: {0}"
    )]
    SnapshotMark(String),
    /// The "signals may follow" mark in a container's record.
    #[error(
        "the \"signals may follow\" mark could not be written to the record, so nothing was \
         signalled: {0}"
    )]
    RecordMark(String),
}

/// A member that is not what was diagnosed when its snapshot is taken: the stop is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Changed {
    /// The process table could not be read again.
    #[error("the process table could not be re-read: {0}")]
    TableUnread(ProbeError),
    /// Its pid holds another process now.
    #[error("pid {0} changed while its snapshot was taken")]
    Replaced(Pid),
    /// It exited.
    #[error("pid {0} exited while its snapshot was taken")]
    Exited(Pid),
    /// Its executable could not be read.
    #[error("the executable of pid {pid} could not be read: {error}")]
    ExeUnread {
        /// The member.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// It runs another program than the one diagnosed.
    #[error("pid {pid} runs {exe} now, not what was diagnosed: it exec'd")]
    Execd {
        /// The member.
        pid: Pid,
        /// What it runs now.
        exe: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_says_its_sentence() {
        assert_eq!(
            Unrecorded::SnapshotMark("disk full".into()).to_string(),
            "the \"signals may follow\" mark could not be written to the snapshot, so nothing was \
             signalled: disk full"
        );
        assert_eq!(
            Changed::Execd {
                pid: 7,
                exe: "/bin/sh".into()
            }
            .to_string(),
            "pid 7 runs /bin/sh now, not what was diagnosed: it exec'd"
        );
    }
}
