//! Why a record cannot be found or restarted: kinds a caller can match, each sentence made here
//! once (`pier restart`'s reason, `pier history`'s `why_not`).

use std::path::PathBuf;

use crate::containers::EngineError;
use crate::probe::{Pid, ProbeError};

/// A record a user named that cannot be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFound {
    /// No tree's snapshot of that name.
    #[error("there is no snapshot {0}")]
    Snapshot(String),
    /// No snapshot of that tree.
    #[error("there is no snapshot for {0}")]
    SnapshotFor(String),
    /// No container's stop record of that name.
    #[error("there is no record {0}")]
    Record(String),
    /// No stop record of that container.
    #[error("there is no stop record for {0}")]
    RecordFor(String),
    /// The state folder could not be read, in the store's words.
    #[error("{0}")]
    Store(String),
}

/// Who holds a port a restart needs, from the socket and process tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortHolder {
    /// A process of the user's: its pid, program and short command.
    Own {
        /// Its pid.
        pid: Pid,
        /// Its program (`clients::program_of`).
        program: String,
        /// Its command line, short.
        command: String,
    },
    /// Another user's process: its pid, uid and kernel name.
    OtherUser {
        /// Its pid.
        pid: Pid,
        /// Its owner.
        uid: u32,
        /// Its kernel name.
        program: String,
    },
    /// No process Pier can read holds it (another user's, unreadable, or gone since).
    Unseen,
}

/// " by python3 (pid 4242: `python3 -m http.server 8000`): `pier stop :8000` stops it if it is
/// a card Pier may stop, …": who holds the port, and the next step for each kind of holder.
fn holder_words(endpoint: &str, holder: Option<&PortHolder>) -> String {
    let port = endpoint.rsplit(':').next().unwrap_or(endpoint);
    match holder {
        None => String::new(),
        Some(PortHolder::Own {
            pid,
            program,
            command,
        }) => format!(
            " by {program} (pid {pid}: `{command}`): `pier stop :{port}` stops it if Pier \
             finds it safe, or says whose command does"
        ),
        Some(PortHolder::OtherUser { pid, uid, program }) => format!(
            " by another user's process (uid {uid}, {program}, pid {pid}): only that user can \
             free it"
        ),
        Some(PortHolder::Unseen) => format!(
            " by a process Pier cannot see (another user's, or one it cannot read): `sudo lsof \
             -i :{port}` names it"
        ),
    }
}

/// Why a stopped target cannot be started again now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRestartable {
    /// The snapshot has no member that is the root.
    #[error("the root was not recorded")]
    RootNotRecorded,
    /// The member to restart rewrote its command line, and no other brings the tree back.
    #[error("pid {0} had rewritten its command line, so the command that started it is not known")]
    CommandLost(Pid),
    /// Several members rewrote theirs.
    #[error(
        "pid {0} had rewritten its command line and ran several processes: no one command of \
         theirs brings the whole tree back"
    )]
    SeveralCommands(Pid),
    /// The stop left part of it running.
    #[error("the stop was partial: part of it may still run")]
    Partial,
    /// The stop's signals ended nothing: it still runs.
    #[error("the stop ended nothing: it still ran when the stop ended")]
    NotStopped,
    /// The stop sent nothing.
    #[error("nothing was stopped, so there is nothing to restart")]
    NothingStopped,
    /// The stop's outcome was never written.
    #[error("the stop never finished recording its outcome")]
    NeverRecorded,
    /// Its kind is started by its client on demand (`Family::started_by_its_client`).
    #[error(
        "{family} ({kind}) is started by its client — the agent, editor or test run — when it \
         needs one, and from a snapshot it would have no one to talk to: start that agent, \
         editor or test run again and it starts a new one"
    )]
    StartedByItsClient {
        /// The kind the snapshot recorded.
        kind: String,
        /// Its family in words ("a headless browser").
        family: &'static str,
    },
    /// A process manager ran it: the manager starts it again.
    #[error("{manager} ran it{}: start it again with {manager}, not outside its manager", as_program(.program))]
    Managers {
        /// The manager's name.
        manager: String,
        /// The program's name in the manager, if known.
        program: Option<String>,
    },
    /// The environment was not recorded.
    #[error("the environment was not recorded")]
    NoEnvironment,
    /// The folder was not recorded.
    #[error("the folder was not recorded")]
    NoFolder,
    /// The recorded folder is gone.
    #[error("the folder {} is gone", .0.display())]
    FolderGone(PathBuf),
    /// The recorded command is empty.
    #[error("the recorded command is empty")]
    EmptyCommand,
    /// The program, named with a folder, is gone.
    #[error("the program {} is gone", .0.display())]
    ProgramGone(PathBuf),
    /// The program has no folder and there is no PATH to find it in.
    #[error("{0} has no folder and the recorded environment has no PATH")]
    NoPath(String),
    /// The program is not in the recorded PATH.
    #[error("the program {0} is not in the recorded PATH any more")]
    NotInPath(String),
    /// The program could not be read.
    #[error("{} could not be read: {error}", .program.display())]
    Unreadable {
        /// The program.
        program: PathBuf,
        /// Why, in the system's words.
        error: String,
    },
    /// The program is not one Pier runs without a shell.
    #[error("{} is not a program Pier can run without a shell", .0.display())]
    NeedsAShell(PathBuf),
    /// The program found is not the one that ran.
    #[error("{} is not the program that ran ({})", .program.display(), .recorded.display())]
    NotTheProgram {
        /// The program found now.
        program: PathBuf,
        /// The executable recorded.
        recorded: PathBuf,
    },
    /// Another user's folder, program or file (`trust.rs`).
    #[error(transparent)]
    Untrusted(#[from] super::trust::NotYours),
    /// The same command runs in the project already.
    #[error("the same command already runs in {project} (pid {pid})")]
    AlreadyRuns {
        /// The project's folder.
        project: String,
        /// The process running it.
        pid: Pid,
    },
    /// A process runs the same command, and whether in the project cannot be read.
    #[error("pid {pid} runs the same command and its folder cannot be read: {error}")]
    TwinUnknown {
        /// That process.
        pid: Pid,
        /// Why, in the probe's words.
        error: String,
    },
    /// The processes could not be read.
    #[error("running processes could not be checked: {0}")]
    ProcessesUnread(ProbeError),
    /// The socket table could not be read.
    #[error("the ports could not be checked: {0}")]
    PortsUnread(ProbeError),
    /// A recorded address is not an address.
    #[error("the recorded address {0} could not be read")]
    BadAddress(String),
    /// A recorded server port is held, and by whom when that was looked for.
    #[error("port {endpoint} is taken{}", holder_words(endpoint, holder.as_ref()))]
    PortTaken {
        /// The recorded address and port (`127.0.0.1:5173`).
        endpoint: String,
        /// Who holds it; `None` when it was not looked for (a container's ports).
        holder: Option<PortHolder>,
    },
    /// A container's stop has not finished.
    #[error("the stop has not finished (Pier ended during it)")]
    ContainerUnfinished,
    /// A container's stop sent nothing.
    #[error("the stop sent nothing: the container was never stopped")]
    ContainerNeverStopped,
    /// A container's stop was not complete.
    #[error("the stop was {0}, not complete")]
    ContainerIncomplete(&'static str),
    /// The container was removed since.
    #[error("container {0} was removed since its stop, so it cannot be started again")]
    ContainerRemoved(String),
    /// The container runs already.
    #[error("container {name} already runs (its run began at {started_at})")]
    ContainerRuns {
        /// Its name.
        name: String,
        /// When its run began.
        started_at: String,
    },
    /// Its engine could not be asked.
    #[error(transparent)]
    Engine(EngineError),
}

/// Why a restart's program was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotLaunched {
    /// The log could not be given to both of its outputs.
    #[error("the restart's log could not be opened twice: {0}")]
    Log(String),
    /// The system refused to start it.
    #[error("{} could not be started: {error}", .program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why, in the system's words.
        error: String,
    },
}

/// Why a restart could not be written to its record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRecorded {
    /// Its start time could not be read, so it cannot be named.
    #[error("its start time could not be read")]
    NoStartTime,
    /// The store said no, in its words.
    #[error("{0}")]
    Store(String),
}

fn as_program(program: &Option<String>) -> String {
    program
        .as_deref()
        .map(|p| format!(" as {p}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One sentence per kind a person sees most: the rest are written beside them.
    #[test]
    fn each_kind_says_its_sentence() {
        let m = NotRestartable::Managers {
            manager: "pm2".into(),
            program: Some("web".into()),
        };
        assert_eq!(
            m.to_string(),
            "pm2 ran it as web: start it again with pm2, not outside its manager"
        );
        let m = NotRestartable::Managers {
            manager: "supervisord".into(),
            program: None,
        };
        assert_eq!(
            m.to_string(),
            "supervisord ran it: start it again with supervisord, not outside its manager"
        );
        assert_eq!(
            NotRestartable::PortTaken {
                endpoint: "127.0.0.1:5173".into(),
                holder: None
            }
            .to_string(),
            "port 127.0.0.1:5173 is taken"
        );
        let taken = |holder| NotRestartable::PortTaken {
            endpoint: "[::1]:5173".into(),
            holder: Some(holder),
        };
        assert_eq!(
            taken(PortHolder::Own {
                pid: 42,
                program: "python3".into(),
                command: "python3 -m http.server 5173".into()
            })
            .to_string(),
            "port [::1]:5173 is taken by python3 (pid 42: `python3 -m http.server 5173`): `pier \
             stop :5173` stops it if Pier finds it safe, or says whose command does"
        );
        assert_eq!(
            taken(PortHolder::OtherUser {
                pid: 42,
                uid: 0,
                program: "nginx".into()
            })
            .to_string(),
            "port [::1]:5173 is taken by another user's process (uid 0, nginx, pid 42): only that \
             user can free it"
        );
        assert_eq!(
            taken(PortHolder::Unseen).to_string(),
            "port [::1]:5173 is taken by a process Pier cannot see (another user's, or one it \
             cannot read): `sudo lsof -i :5173` names it"
        );
        assert_eq!(
            NotFound::SnapshotFor("1-2".into()).to_string(),
            "there is no snapshot for 1-2"
        );
    }
}
