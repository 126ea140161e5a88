//! What a stop and a restart ask of one engine about one container (docs/design.md §4a): its
//! state now, its CPU use over the engine's own window, a signal, a bounded wait for it to stop, a start.
//! Behind the [`Control`] trait, so the container's checkpoint chain (`stop/container.rs`) is
//! tested with a scripted engine as well as against a real dockerd; `api.rs` is the real one.
//!
//! Deliberately absent: the engine's own stop (`POST /containers/{id}/stop`, `docker stop`),
//! which sends SIGKILL once its timeout runs out. Pier sends the container's stop signal
//! through the engine's kill endpoint and waits at most the grace period; a container still
//! running then is reported `still_running`, never killed.

use std::time::Duration;

use super::error::{EngineError, Unmeasured};

/// One container as its engine describes it at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct State {
    /// The engine's full container id.
    pub id: String,
    /// Its name, without Docker's leading `/`.
    pub name: String,
    /// Whether it runs.
    pub running: bool,
    /// When its current (or last) run started, RFC 3339 as the engine wrote it: with the id,
    /// the identity of one run. A container started again has the same id and a new time.
    pub started_at: String,
    /// The signal its stop sends (`Config.StopSignal`, `SIGTERM` when the image sets none).
    pub stop_signal: String,
    /// Its restart policy when it has one; `None` for `no`.
    pub restart_policy: Option<String>,
    /// Removed by the engine once it stops.
    pub auto_remove: bool,
    /// The host pid of its first process while it runs (0 or none in a VM).
    pub pid: Option<u32>,
}

/// What a container used over a window its engine measured: Docker's statistics, asked
/// once, wait for two of its collector's readings (about a second apart) and give both, so
/// one call is one measurement, the window lying inside the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// CPU time used by all its processes over the window, in nanoseconds.
    pub cpu_ns: u64,
    /// The window between the two readings.
    pub window: Duration,
    /// Where the readings come from, for the evidence's source: the engine's statistics
    /// ([`BY_ENGINE`]), or the container's cgroup read on the host (`sample::ON_HOST`).
    pub by: &'static str,
}

/// What was used from one CPU reading to the next; `Err` when the counter went back (the
/// container was started again between them).
pub fn delta(before_ns: u64, after_ns: u64) -> Result<u64, Unmeasured> {
    after_ns
        .checked_sub(before_ns)
        .ok_or(Unmeasured::CounterWentBack)
}

/// Where a measurement asked of an engine comes from, in the evidence's words.
pub const BY_ENGINE: &str = "container engine";

/// One engine, for one container at a time. Every answer is `Err` with its kind when the
/// engine could not be asked; each such answer refuses a stop.
pub trait Control: Sync {
    /// The container now; `Ok(None)` when the engine has no such container (removed).
    fn state(&self, id: &str) -> Result<Option<State>, EngineError>;
    /// Its CPU use between two of the engine's readings (a second apart on Docker; only
    /// while it runs). `at_first` runs as soon as the first reading is in, before the second
    /// is taken: the stop's check (a) runs there, so the window follows it closely and the
    /// whole sample costs one interval of the engine's, not two.
    fn activity(&self, id: &str, at_first: &mut dyn FnMut()) -> Result<Measured, Unmeasured>;
    /// Sends `signal` (`"SIGTERM"`) to its first process, through the engine.
    fn signal(&self, id: &str, signal: &str) -> Result<(), Unsent>;
    /// Returns once it is not running, or once `limit` has passed, whichever is first; it
    /// blocks on the engine's own wait, never polls.
    fn wait_stopped(&self, id: &str, limit: Duration) -> Result<(), EngineError>;
    /// Starts it again (same container, same configuration), waiting up to `limit` for the
    /// engine's answer. `Err(Unsent::Unknown)`: no answer, so it may have started.
    fn start(&self, id: &str, limit: Duration) -> Result<(), Unsent>;
}

/// Why a request that acts (a signal, a start) did not surely act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsent {
    /// The engine answered no (no such container, not running, a signal it does not know):
    /// it did not act.
    Refused(String),
    /// No answer (a time-out, a connection lost after the request went out): it may have
    /// acted. Never read as "nothing was sent".
    Unknown(String),
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Refused(why) | Unsent::Unknown(why) => f.write_str(why),
        }
    }
}

/// Why a container's stop signal is not one Pier sends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unsendable {
    /// SIGKILL or SIGSTOP, named as Pier says it.
    #[error("its stop signal is {0}, which Pier never sends (`docker stop` would)")]
    Never(&'static str),
    /// One Pier does not know, as the engine wrote it.
    #[error(
        "its stop signal {0:?} is not one Pier sends (SIGTERM, SIGINT, SIGQUIT, SIGHUP, \
         SIGUSR1, SIGUSR2, SIGWINCH, SIGPWR)"
    )]
    Unknown(String),
}

/// Whether Pier may send `signal`, a container's stop signal as its image or `docker run
/// --stop-signal` set it: never SIGKILL (there is no automatic SIGKILL, docs/design.md §3) and
/// never SIGSTOP (it would freeze the container, not stop it); one Pier cannot name is refused
/// too. Engines write it as a name with or without `SIG`, or as a number (Linux numbering).
pub fn check_stop_signal(signal: &str) -> Result<(), Unsendable> {
    let name = signal.trim().to_ascii_uppercase();
    let name = name.strip_prefix("SIG").unwrap_or(&name);
    match name {
        "KILL" | "9" => return Err(Unsendable::Never("SIGKILL")),
        "STOP" | "19" => return Err(Unsendable::Never("SIGSTOP")),
        _ => {}
    }
    const KNOWN: &[&str] = &[
        "TERM", "INT", "QUIT", "HUP", "USR1", "USR2", "WINCH", "PWR", "15", "2", "3", "1", "10",
        "12", "28", "30",
    ];
    if KNOWN.contains(&name) {
        Ok(())
    } else {
        Err(Unsendable::Unknown(signal.to_owned()))
    }
}

pub use crate::model::container::parse_engine_time;

/// Why the container the engine names now is not the run that was judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OtherRun {
    /// The engine answers for the id with another container.
    #[error("the engine names another container ({now}) for {asked}")]
    AnotherContainer {
        /// The id it answered with.
        now: String,
        /// The id asked for.
        asked: String,
    },
    /// The same container, started again since it was judged.
    #[error(
        "container {name} was started again since it was judged (its run began at {now}, not \
         {judged})"
    )]
    StartedAgain {
        /// Its name.
        name: String,
        /// When its run now began.
        now: String,
        /// When the judged run began.
        judged: String,
    },
    /// It runs no more.
    #[error("container {name} is not running any more")]
    NotRunning {
        /// Its name.
        name: String,
    },
}

/// Whether `now` is the run that was judged: the same container, the same start, still
/// running. The id alone is not enough: `docker restart` (or a restart policy changed back)
/// keeps the id and starts a new run, which no check has seen.
pub fn check_run(now: &State, id: &str, started_at: &str) -> Result<(), OtherRun> {
    if now.id != id {
        return Err(OtherRun::AnotherContainer {
            now: now.id.clone(),
            asked: id.to_owned(),
        });
    }
    if now.started_at != started_at {
        return Err(OtherRun::StartedAgain {
            name: now.name.clone(),
            now: now.started_at.clone(),
            judged: started_at.to_owned(),
        });
    }
    if !now.running {
        return Err(OtherRun::NotRunning {
            name: now.name.clone(),
        });
    }
    Ok(())
}

/// Why the engine, not Pier, decides when a container ends.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Managed {
    /// A restart policy starts it again.
    #[error("container {name} has the restart policy {policy}: its engine would start it again")]
    RestartPolicy {
        /// Its name.
        name: String,
        /// The policy (`always`, `unless-stopped`, `on-failure`).
        policy: String,
    },
    /// Stopping it deletes it (`--rm`).
    #[error("container {name} is removed once it stops (--rm): it could not be started again")]
    AutoRemove {
        /// Its name.
        name: String,
    },
}

/// What keeps a container from being stopped by Pier however idle it is: the engine is its
/// manager (a restart policy starts it again), or stopping it deletes it (auto-remove), so no
/// snapshot could bring it back.
pub fn manager(now: &State) -> Option<Managed> {
    if let Some(policy) = &now.restart_policy {
        return Some(Managed::RestartPolicy {
            name: now.name.clone(),
            policy: policy.clone(),
        });
    }
    now.auto_remove.then(|| Managed::AutoRemove {
        name: now.name.clone(),
    })
}

/// The container engines of this machine as a stop and a restart reach them: every engine's
/// account at once (as a scan reads it), and one engine for one container's questions.
/// [`LiveEngines`] is the real one; the stop's tests script their own.
pub trait EngineAccess: Sync {
    /// What every engine found says now: its running containers, each inspected, each one's
    /// network namespace read.
    fn read(&self) -> Vec<super::EngineRead>;
    /// The engine at `host`, connected.
    fn connect(&self, host: &str) -> Result<Box<dyn Control>, EngineError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> State {
        State {
            id: "abc".into(),
            name: "web".into(),
            running: true,
            started_at: "2026-12-03T08:00:00.1Z".into(),
            stop_signal: "SIGTERM".into(),
            ..State::default()
        }
    }

    #[test]
    fn the_same_run_is_the_same_id_and_start_and_still_running() {
        assert_eq!(check_run(&run(), "abc", "2026-12-03T08:00:00.1Z"), Ok(()));
    }

    #[test]
    fn a_run_started_again_is_not_the_run_that_was_judged() {
        let again = State {
            started_at: "2026-12-03T08:00:05Z".into(),
            ..run()
        };
        let why = check_run(&again, "abc", "2026-12-03T08:00:00.1Z").unwrap_err();
        assert!(matches!(why, OtherRun::StartedAgain { .. }), "{why}");
    }

    #[test]
    fn a_stopped_container_or_another_id_is_not_the_run_either() {
        let stopped = State {
            running: false,
            ..run()
        };
        let t = "2026-12-03T08:00:00.1Z";
        assert!(matches!(
            check_run(&stopped, "abc", t),
            Err(OtherRun::NotRunning { .. })
        ));
        assert!(matches!(
            check_run(&run(), "abd", t),
            Err(OtherRun::AnotherContainer { .. })
        ));
    }

    #[test]
    fn sigkill_and_sigstop_are_never_a_stop_signal_pier_sends() {
        for never in ["SIGKILL", "KILL", "9", "sigkill", "SIGSTOP", "19"] {
            assert!(check_stop_signal(never).is_err(), "{never}");
        }
        for fine in [
            "SIGTERM", "TERM", "15", "SIGINT", "SIGQUIT", "SIGWINCH", "sigusr1",
        ] {
            assert_eq!(check_stop_signal(fine), Ok(()), "{fine}");
        }
        assert!(matches!(
            check_stop_signal("SIGBOGUS"),
            Err(Unsendable::Unknown(_))
        ));
        assert!(check_stop_signal("").is_err());
    }

    #[test]
    fn the_delta_is_what_was_used_between_the_readings() {
        assert_eq!(delta(100, 350), Ok(250));
    }

    #[test]
    fn a_counter_that_went_back_is_a_new_run_not_an_idle_one() {
        assert_eq!(delta(100, 50), Err(Unmeasured::CounterWentBack));
    }

    #[test]
    fn an_engine_time_with_an_offset_is_the_same_instant() {
        let z = parse_engine_time("2026-12-03T08:00:00.5Z").unwrap();
        assert_eq!(parse_engine_time("2026-12-03T09:00:00.5+01:00"), Some(z));
        assert_eq!(parse_engine_time("2026-12-03T03:30:00.5-04:30"), Some(z));
        assert_eq!(parse_engine_time("2026-12-03T09:00:00.5+25:00"), None);
        assert_eq!(parse_engine_time("0001-01-01T00:00:00Z"), None);
        assert_eq!(parse_engine_time("yesterday"), None);
        assert_eq!(parse_engine_time("2026-12-03T09:00:00é+01:00"), None);
        assert_eq!(parse_engine_time("é+01:00"), None);
        assert_eq!(parse_engine_time("ééé"), None);
    }

    #[test]
    fn a_restart_policy_or_auto_remove_makes_the_engine_its_manager() {
        assert_eq!(manager(&run()), None);
        let policy = State {
            restart_policy: Some("always".into()),
            ..run()
        };
        assert!(matches!(
            manager(&policy),
            Some(Managed::RestartPolicy { policy, .. }) if policy == "always"
        ));
        let rm = State {
            auto_remove: true,
            ..run()
        };
        assert!(matches!(manager(&rm), Some(Managed::AutoRemove { .. })));
    }

    /// Each kind's sentence, as the stop's refusal and the card's evidence say it.
    #[test]
    fn each_reason_a_container_is_not_stopped_reads_as_a_sentence() {
        let again = State {
            started_at: "2026-12-03T08:00:05Z".into(),
            ..run()
        };
        let said = |e: &dyn std::fmt::Display| e.to_string();
        assert_eq!(
            said(&check_run(&again, "abc", "2026-12-03T08:00:00.1Z").unwrap_err()),
            "container web was started again since it was judged (its run began at \
             2026-12-03T08:00:05Z, not 2026-12-03T08:00:00.1Z)"
        );
        assert_eq!(
            said(&check_run(&run(), "abd", "2026-12-03T08:00:00.1Z").unwrap_err()),
            "the engine names another container (abc) for abd"
        );
        let stopped = State {
            running: false,
            ..run()
        };
        assert_eq!(
            said(&check_run(&stopped, "abc", "2026-12-03T08:00:00.1Z").unwrap_err()),
            "container web is not running any more"
        );
        assert_eq!(
            said(&check_stop_signal("kill").unwrap_err()),
            "its stop signal is SIGKILL, which Pier never sends (`docker stop` would)"
        );
        assert_eq!(
            said(&check_stop_signal("SIGBOGUS").unwrap_err()),
            "its stop signal \"SIGBOGUS\" is not one Pier sends (SIGTERM, SIGINT, SIGQUIT, \
             SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGPWR)"
        );
        let policy = State {
            restart_policy: Some("always".into()),
            ..run()
        };
        assert_eq!(
            said(&manager(&policy).unwrap()),
            "container web has the restart policy always: its engine would start it again"
        );
        let rm = State {
            auto_remove: true,
            ..run()
        };
        assert_eq!(
            said(&manager(&rm).unwrap()),
            "container web is removed once it stops (--rm): it could not be started again"
        );
    }
}
