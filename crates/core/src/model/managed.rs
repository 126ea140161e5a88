//! Who brings a resource back: the process manager that runs its root on purpose, and the
//! respawners inside it (docs/design.md §2.9). Plain data, as the scan and the stop report
//! them.

use serde::{Deserialize, Serialize};

/// A manager that runs a resource's root on purpose and would start it again: pm2,
/// supervisord, overmind, foreman, process-compose, a systemd unit or a launchd agent. Pier
/// does not fight it: the resource stays yellow, and `stop_command` is how to stop it there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManagedBy {
    /// `"pm2"`, `"supervisord"`, `"overmind"`, `"foreman"`, `"process-compose"`, `"systemd"`
    /// or `"launchd"`; for another process manager, its name as the process table gives it.
    pub manager: String,
    /// The manager's process, when it is one Pier saw (the root's parent); `null` for systemd
    /// and launchd, which are named by the root's cgroup or label.
    pub pid: Option<u32>,
    /// The program's name there (`"api"`, `"web"`, `"x.service"`, a launchd label); `null`
    /// when the manager's data could not be read (`note` says why).
    pub program: Option<String>,
    /// The command that stops it there, for a person to run (`pm2 stop 0`); `null` when it is
    /// not known.
    pub stop_command: Option<String>,
    /// Where the names were read: `"environment"`, `"environment and pm2's pid file"`,
    /// `"cgroup"`.
    pub source: String,
    /// What could not be read or confirmed, in words; `null` when everything was.
    pub note: Option<String>,
}

impl ManagedBy {
    /// Whether the manager itself started the root, and would start it again: every process
    /// manager and launchd job; a systemd unit only when systemd started the root for it (the
    /// command is given then). A process that only landed in a unit's cgroup is not its.
    pub fn started_it(&self) -> bool {
        self.manager != "systemd" || self.stop_command.is_some()
    }

    /// "pm2 (pid 812) runs it as `api`", for evidence and reports.
    pub fn describe(&self) -> String {
        let who = match self.pid {
            Some(pid) => format!("{} (pid {pid})", self.manager),
            None => self.manager.clone(),
        };
        match &self.program {
            Some(program) => format!("{who} runs it as {program}"),
            None => format!("{who} runs it"),
        }
    }
}

/// A member that starts its child again when the child exits (nodemon, a reloader, a shell
/// loop). It is part of the resource and is stopped with it: it does not argue against
/// stopping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Respawner {
    /// The member's pid.
    pub pid: u32,
    /// Its command line for a person.
    pub command: String,
    /// What it is, in words: `"nodemon restarts its child"`, `"a shell loop (while)"`.
    pub how: String,
    /// When its own CPU is set aside as polling, not the server's work (docs/design.md §2.9):
    /// what would stop the polling (`"installing `watchfiles` …"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quieter: Option<String>,
}
