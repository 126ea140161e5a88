//! Why a check failed, or why the self-test's own processes could not be had, as kinds; each
//! sentence is made here, once, and is the failed check's `detail` in the report.

use std::path::PathBuf;

use crate::probe::{Pid, ProbeError};
use crate::signal::SignalOutcome;
use crate::store::StoreError;

/// What a failed check found.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
    /// The probe could not read it (the probe's sentence).
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The state folder, as a stop would open it.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A file or folder of the doctor's own could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The `--dump` manifest could not be made.
    #[error("{0}")]
    Manifest(#[from] serde_json::Error),
    /// No record can be written in the state folder.
    #[error("a record cannot be written in {}: {source}", .records.display())]
    NoRecord {
        /// Its `records` folder.
        records: PathBuf,
        /// The store's error.
        #[source]
        source: StoreError,
    },
    /// The private folder for the test processes could not be made.
    #[error("a folder for the test process could not be made in {}: {source}", .path.display())]
    NoFolder {
        /// The folder.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The folder was made and cannot be resolved.
    #[error("the test process's folder {} could not be resolved: {source}", .path.display())]
    FolderUnresolved {
        /// The folder.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// A test process could not be started.
    #[error("{} could not be started: {source}", .program.display())]
    NotStarted {
        /// Its program.
        program: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The zombie check's test process could not be started.
    #[error("the test process could not be started: {0}")]
    EndingNotStarted(#[source] std::io::Error),
    /// The test process's stdout is not the doctor's to read.
    #[error("its stdout was not piped")]
    NoStdout,
    /// The test process did not say it was listening.
    #[error("pid {pid} did not say it was listening within 10 s (it said {line:?})")]
    NotListening {
        /// Its pid.
        pid: Pid,
        /// What it said instead.
        line: String,
    },
    /// The test process's stdin is no longer the doctor's.
    #[error("the test process's stdin is closed")]
    StdinClosed,
    /// The test process stopped reading its stdin.
    #[error("the test process stopped listening to its stdin: {0}")]
    StdinGone(#[source] std::io::Error),
    /// The process table could not be read.
    #[error("the process table could not be read: {0}")]
    NoTable(#[source] ProbeError),
    /// The test process is not in the user's process table.
    #[error("pid {0} is not in the user's process table")]
    NotInTable(Pid),
    /// The test process reads as another's child, or another user's.
    #[error(
        "pid {pid} reads as the child of {ppid} and user {uid}, not of {me} and user {my_uid}"
    )]
    NotOurs {
        /// Its pid.
        pid: Pid,
        /// Its parent, as read.
        ppid: Pid,
        /// Its user, as read.
        uid: u32,
        /// The doctor's pid.
        me: Pid,
        /// The doctor's user.
        my_uid: u32,
    },
    /// Its command line read back as another.
    #[error("read {read}, started as {started}")]
    OtherArgv {
        /// As read.
        read: String,
        /// As started.
        started: String,
    },
    /// Its start time read back differently the second time.
    #[error("two reads disagree: {first} then {second}")]
    Disagree {
        /// The first read.
        first: u64,
        /// The second.
        second: u64,
    },
    /// The test process reads as gone.
    #[error("pid {0} reads as gone")]
    Gone(Pid),
    /// Its identity could not be read (the probe's words).
    #[error("{0}")]
    Unknown(String),
    /// Its working folder read back as another.
    #[error("read {}, started in {}", .read.display(), .started.display())]
    OtherCwd {
        /// As read.
        read: PathBuf,
        /// As started.
        started: PathBuf,
    },
    /// Its executable read back as another.
    #[error("read {}, started {}", .read.display(), .started.display())]
    OtherExe {
        /// As read.
        read: PathBuf,
        /// As started.
        started: PathBuf,
    },
    /// Its environment read back as another.
    #[error("read {read:?}, started with {started:?}")]
    OtherEnv {
        /// As read.
        read: Vec<String>,
        /// As started.
        started: Vec<String>,
    },
    /// The socket tables could not be read, or the table they are attributed by.
    #[error(transparent)]
    Sockets(#[from] SocketsUnread),
    /// No socket of the test process's is the one it opened.
    #[error("no such socket of pid {pid} among the {read} read")]
    NoSocket {
        /// Its pid.
        pid: Pid,
        /// How many sockets were read.
        read: usize,
    },
    /// The activity sample left the test process out.
    #[error("pid {0} is missing from the sample")]
    NotSampled(Pid),
    /// A spinning process read as nearly idle.
    #[error(
        "a process spinning on one core read as {cpu_ms} ms of CPU in {window_ms} ms: too \
         little to be right"
    )]
    TooLittleCpu {
        /// CPU read, in ms.
        cpu_ms: u64,
        /// The window, in ms.
        window_ms: u64,
    },
    /// A process on one core read as using more.
    #[error(
        "a process spinning on one core read as {cpu_ms} ms of CPU in {window_ms} ms: more \
         than one core can give"
    )]
    TooMuchCpu {
        /// CPU read, in ms.
        cpu_ms: u64,
        /// The window, in ms.
        window_ms: u64,
    },
    /// This system cannot say whether memory is under pressure.
    #[error("not readable (no PSI, or no pressure level): pressure rules never act")]
    NoPressure,
    /// Its memory read as nothing.
    #[error("read as 0 bytes")]
    NoMemory,
    /// An ended, unreaped child never read as a zombie.
    #[error("pid {0} never read as a zombie in 5 s")]
    NoZombie(Pid),
    /// The system shell could not be started.
    #[error("/bin/sh could not be started: {0}")]
    NoShell(#[source] std::io::Error),
    /// The system shell never read back as itself.
    #[error("pid {0} never read as /bin/sh -c 'read line' in 5 s")]
    ShellUnseen(Pid),
    /// The test process ended after a signal that was refused.
    #[error("the test process ended after a signal that had to be refused")]
    EndedAfterRefusal,
    /// A signal to a stale identity went on.
    #[error("a signal to a stale identity was not refused: {}", outcome_words(.0))]
    StaleNotRefused(SignalOutcome),
    /// SIGTERM did not reach the test process.
    #[error("SIGTERM to pid {pid}: {}", outcome_words(.outcome))]
    NotSent {
        /// Its pid.
        pid: Pid,
        /// What the signaller did instead.
        outcome: SignalOutcome,
    },
    /// The exit waiter did not see it end.
    #[error("not seen to end within 5 s")]
    NotEnded,
}

/// Why the socket tables a check looks in are not there. Kept apart from [`Fault`] so that
/// each socket check can say it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SocketsUnread {
    /// The process table, which owners are attributed by, could not be read.
    #[error("the process table could not be read")]
    NoTable,
    /// The socket tables could not be read.
    #[error("the socket tables could not be read: {0}")]
    NoSockets(#[source] ProbeError),
}

/// A signal's outcome as the end of a sentence.
fn outcome_words(o: &SignalOutcome) -> String {
    match o {
        SignalOutcome::Sent => "it was sent".to_owned(),
        SignalOutcome::Gone => "the process read as gone".to_owned(),
        SignalOutcome::Mismatch(why) => format!("refused: {why}"),
        SignalOutcome::Failed(why) => format!("it failed: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_check_reads_as_its_detail() {
        assert_eq!(
            Fault::NotOurs {
                pid: 7,
                ppid: 1,
                uid: 0,
                me: 6,
                my_uid: 1000
            }
            .to_string(),
            "pid 7 reads as the child of 1 and user 0, not of 6 and user 1000"
        );
        assert_eq!(
            Fault::TooLittleCpu {
                cpu_ms: 2,
                window_ms: 300
            }
            .to_string(),
            "a process spinning on one core read as 2 ms of CPU in 300 ms: too little to be right"
        );
        assert_eq!(
            Fault::NotSent {
                pid: 7,
                outcome: SignalOutcome::Failed("EPERM".into())
            }
            .to_string(),
            "SIGTERM to pid 7: it failed: EPERM"
        );
        assert_eq!(
            Fault::from(SocketsUnread::NoTable).to_string(),
            "the process table could not be read"
        );
    }
}
