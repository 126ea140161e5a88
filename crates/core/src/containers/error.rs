//! What can go wrong in asking the container engines, as kinds a caller can match; each
//! sentence is made here, once. The engine's or the OS's own words travel as text inside a
//! kind (`why`): they are its message, not Pier's.

use std::path::PathBuf;

use crate::probe::ProbeError;

/// Why an engine could not be asked, or gave no answer to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A setting names an engine Pier does not ask (`endpoints::find`).
    #[error(transparent)]
    Unusable(#[from] UnusableSetting),
    /// A host that is not a unix socket, asked for directly.
    #[error("{host} is not a unix socket: Pier speaks only to engines on this machine")]
    NotUnix {
        /// The host as given.
        host: String,
    },
    /// The engine client's runtime could not be started.
    #[error("Pier could not start the engine client: {why}")]
    Client {
        /// The OS's words.
        why: String,
    },
    /// The engine's socket could not be reached, or the engine answered with an error.
    #[error("{who} at {host} could not be asked: {why}{}", hint(.why))]
    Unreachable {
        /// The engine as the sentence names it: `Docker`, `Podman`, or `the engine`.
        who: &'static str,
        /// Its host (`unix:///var/run/docker.sock`).
        host: String,
        /// The engine's own message, or the innermost cause of the failure.
        why: String,
    },
    /// One inspection's task of a scan's read failed.
    #[error("an engine inspection failed: {why}")]
    Inspection {
        /// The runtime's words.
        why: String,
    },
    /// A statistics call ended with no answer.
    #[error("the engine at {host} gave no statistics")]
    NoStatistics {
        /// The engine's host.
        host: String,
    },
    /// A statistics stream ended before its second reading.
    #[error("the engine at {host} ended its statistics")]
    StatisticsEnded {
        /// The engine's host.
        host: String,
    },
    /// A statistics stream gave no reading in time.
    #[error("the engine at {host} gave no statistics within {secs} s")]
    StatisticsLate {
        /// The engine's host.
        host: String,
        /// How long it was given.
        secs: u64,
    },
    /// Engines are read over unix sockets, which this platform has not.
    #[error("container engines are read over unix sockets only")]
    NoUnixSockets,
    /// An engine asked for by host on a platform without unix sockets.
    #[error("{host} could not be asked: container engines are reached over unix sockets only")]
    NoUnixSocketsFor {
        /// The host asked for.
        host: String,
    },
}

/// What a person can do about the usual failures: a socket they may not open (not in its
/// group), or one nobody listens on.
fn hint(why: &str) -> &'static str {
    if why.contains("Permission denied") {
        " (is this user in the socket's group, usually `docker`?)"
    } else if why.contains("No such file") || why.contains("Connection refused") {
        " (is the engine running?)"
    } else {
        ""
    }
}

/// Why a setting that names an engine is not one Pier asks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnusableSetting {
    /// `DOCKER_HOST` or a context names an engine over TCP or SSH.
    #[error(
        "{origin} is {host}: Pier asks container engines over a unix socket only (an engine \
         over TCP or SSH may be another machine's, whose ports are not this one's); set \
         DOCKER_HOST to the engine's socket (unix://…) for Pier"
    )]
    NotUnix {
        /// Where the setting comes from (`DOCKER_HOST`, `docker context NAME`).
        origin: String,
        /// The host it names.
        host: String,
    },
    /// A current context, and no folder to read it from.
    #[error(
        "the docker context {name} is current, and there is no Docker config folder to read \
         it from (HOME and DOCKER_CONFIG are unset)"
    )]
    NoConfigFolder {
        /// The context's name.
        name: String,
    },
    /// The current context names no Docker endpoint.
    #[error("the docker context {name} names no Docker endpoint ({})", .meta.display())]
    NoEndpoint {
        /// The context's name.
        name: String,
        /// Its `meta.json`.
        meta: PathBuf,
    },
    /// No context of the current one's name.
    #[error(
        "the docker context {name} is current, and {} holds no context of that name",
        .folder.display()
    )]
    NoSuchContext {
        /// The context's name.
        name: String,
        /// The contexts' folder that was read.
        folder: PathBuf,
    },
}

/// Why a container's activity was not measured: never read as "idle".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unmeasured {
    /// Its engine could not be asked.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// An answer without two CPU readings (a one-shot one).
    #[error("the engine's statistics hold no two CPU readings")]
    NoTwoReadings,
    /// An answer whose readings are not apart in time.
    #[error("the engine's statistics hold no window between two readings")]
    NoWindow,
    /// The counter went back between the readings.
    #[error("its CPU counter went back: it was started again")]
    CounterWentBack,
    /// Its first process is another one after the window.
    #[error("its first process (pid {pid}) changed during the sample")]
    FirstProcessChanged {
        /// The pid read through.
        pid: u32,
    },
    /// Its cgroup's counter could not be read on the host.
    #[error(transparent)]
    HostCounter(ProbeError),
    /// No answer was asked for it.
    #[error("its engine's statistics were not read")]
    NotRead,
}

/// Why a container's own network namespace was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceUnread {
    /// Its first process is not on this machine: the engine runs in a VM.
    #[error("its network namespace is not on this machine (a VM)")]
    InVm,
    /// The probe could not read it.
    #[error(transparent)]
    Probe(ProbeError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_engine_says_what_a_person_can_do() {
        let e = |why: &str| EngineError::Unreachable {
            who: "Docker",
            host: "unix:///var/run/docker.sock".into(),
            why: why.into(),
        };
        assert_eq!(
            e("Permission denied (os error 13)").to_string(),
            "Docker at unix:///var/run/docker.sock could not be asked: Permission denied (os \
             error 13) (is this user in the socket's group, usually `docker`?)"
        );
        assert!(e("Connection refused")
            .to_string()
            .ends_with(" (is the engine running?)"));
        assert!(e("bad request").to_string().ends_with("asked: bad request"));
    }

    #[test]
    fn a_setting_pier_does_not_ask_says_why_and_what_to_set() {
        let tcp = UnusableSetting::NotUnix {
            origin: "DOCKER_HOST".into(),
            host: "tcp://10.0.0.5:2376".into(),
        };
        assert_eq!(
            tcp.to_string(),
            "DOCKER_HOST is tcp://10.0.0.5:2376: Pier asks container engines over a unix \
             socket only (an engine over TCP or SSH may be another machine's, whose ports are \
             not this one's); set DOCKER_HOST to the engine's socket (unix://…) for Pier"
        );
        let gone = UnusableSetting::NoSuchContext {
            name: "gone".into(),
            folder: PathBuf::from("/h/.docker/contexts/meta"),
        };
        assert_eq!(
            gone.to_string(),
            "the docker context gone is current, and /h/.docker/contexts/meta holds no context \
             of that name"
        );
    }
}
