//! [`Control`] over an engine's API on its unix socket, with `bollard`: inspect, statistics
//! (two readings of the engine's, about a second apart, in one answer), kill with a named
//! signal, wait until not running, start.
//!
//! Run here against Debian's Docker 20.10 (API 1.41). Measured here: a statistics call takes
//! about a second whether one-shot or not (the engine's collector reads every second), so one
//! call that carries two readings is the cheapest measurement. Podman's
//! compatible API, Docker Desktop's and OrbStack's sockets are the same calls, from their
//! documentation, not run.
//!
//! Each call runs on a current-thread runtime of the [`Api`]'s own, on the calling thread: a
//! stop runs on its own thread (or on the worker's blocking pool), never on an async one.

use std::time::Duration;

use bollard::models::{ContainerInspectResponse, ContainerStatsResponse};
use bollard::query_parameters::{
    InspectContainerOptions, KillContainerOptions, StartContainerOptions, StatsOptions,
    WaitContainerOptions,
};
use bollard::{ClientVersion, Docker};
use futures_util::StreamExt as _;

use super::control::{parse_engine_time, Control, Measured, State, Unsent, BY_ENGINE};
use super::engine::{client_runtime, words};
use super::error::{EngineError, Unmeasured};

/// How long one question to the engine may take (a wait takes its own limit).
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// One engine, spoken to in the version it answers to.
pub struct Api {
    runtime: tokio::runtime::Runtime,
    docker: Docker,
    host: String,
}

impl Api {
    /// Connects to the engine at `host` (`unix:///var/run/docker.sock`) and agrees on an API
    /// version with it. Only unix sockets.
    pub fn connect(host: &str) -> Result<Self, EngineError> {
        if !host.starts_with("unix://") {
            return Err(EngineError::NotUnix {
                host: host.to_owned(),
            });
        }
        let runtime = client_runtime()?;
        let start = ClientVersion {
            major_version: 1,
            minor_version: 41,
        };
        let said = |e: bollard::errors::Error| unreachable(host, &e);
        let docker =
            Docker::connect_with_unix(host, ASK_TIMEOUT.as_secs(), &start).map_err(said)?;
        let docker = runtime.block_on(docker.negotiate_version()).map_err(said)?;
        Ok(Self {
            runtime,
            docker,
            host: host.to_owned(),
        })
    }

    fn said(&self, e: &bollard::errors::Error) -> EngineError {
        unreachable(&self.host, e)
    }

    fn unsent(&self, e: &bollard::errors::Error) -> Unsent {
        unsent(&self.host, e)
    }

    /// Each container's CPU use over a window of the engine's (`control::Measured`), all
    /// asked at once: one statistics call each, which waits for two of the engine's readings.
    pub fn activities(&self, ids: &[&str]) -> Vec<Result<Measured, Unmeasured>> {
        // Not one-shot: that answers with one reading, and nothing to compare it with.
        let options = || StatsOptions {
            stream: false,
            one_shot: false,
        };
        // Two collector readings, a second apart, and the answer's way back.
        let docker = self.docker.clone().with_timeout(ASK_TIMEOUT + ASK_TIMEOUT);
        self.runtime.block_on(async {
            let asks = ids.iter().map(|id| {
                let docker = docker.clone();
                let id = (*id).to_owned();
                async move {
                    let mut stats = docker.stats(&id, Some(options()));
                    stats.next().await
                }
            });
            futures_util::future::join_all(asks)
                .await
                .into_iter()
                .map(|answer| match answer {
                    Some(Ok(stats)) => measured(&stats),
                    Some(Err(e)) => Err(self.said(&e).into()),
                    None => Err(EngineError::NoStatistics {
                        host: self.host.clone(),
                    }
                    .into()),
                })
                .collect()
        })
    }
}

fn unreachable(host: &str, e: &bollard::errors::Error) -> EngineError {
    EngineError::Unreachable {
        who: "the engine",
        host: host.to_owned(),
        why: words(e),
    }
}

fn not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

impl Api {
    /// The container now; `Ok(None)` when the engine has no such container.
    pub fn inspect(&self, id: &str) -> Result<Option<State>, EngineError> {
        let asked = self.runtime.block_on(
            self.docker
                .inspect_container(id, None::<InspectContainerOptions>),
        );
        match asked {
            Ok(inspected) => Ok(Some(state_of(inspected))),
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(self.said(&e)),
        }
    }

    /// Its CPU use between two of the engine's readings ([`Control::activity`]).
    pub fn measure(&self, id: &str, at_first: &mut dyn FnMut()) -> Result<Measured, Unmeasured> {
        // A stream: each reading comes as the engine's collector takes it, the second one
        // carrying the first as its earlier reading.
        let options = StatsOptions {
            stream: true,
            one_shot: false,
        };
        let docker = self.docker.clone().with_timeout(ASK_TIMEOUT + ASK_TIMEOUT);
        self.runtime.block_on(async {
            let mut stats = Box::pin(docker.stats(id, Some(options)));
            next_reading(&mut stats, &self.host).await?;
            at_first();
            measured(&next_reading(&mut stats, &self.host).await?)
        })
    }

    /// Returns once it is not running, or once `limit` has passed ([`Control::wait_stopped`]).
    pub fn wait_until_stopped(&self, id: &str, limit: Duration) -> Result<(), EngineError> {
        // The engine answers the wait when the container stops; the limit ends it first.
        let docker = self.docker.clone().with_timeout(limit + ASK_TIMEOUT);
        let options = WaitContainerOptions {
            condition: "not-running".to_owned(),
        };
        let waited = self.runtime.block_on(async {
            let mut wait = docker.wait_container(id, Some(options));
            tokio::time::timeout(limit, wait.next()).await
        });
        match waited {
            // Still running at the limit: the caller reads its state.
            Err(_elapsed) => Ok(()),
            // It stopped (a non-zero exit status is bollard's error, and still a stop), or the
            // engine lost it: either way, its state says what is true.
            Ok(Some(Ok(_)))
            | Ok(None)
            | Ok(Some(Err(bollard::errors::Error::DockerContainerWaitError { .. }))) => Ok(()),
            Ok(Some(Err(e))) if not_found(&e) => Ok(()),
            Ok(Some(Err(e))) => Err(self.said(&e)),
        }
    }
}

/// The [`Control`] a stop and a restart use.
impl Control for Api {
    fn state(&self, id: &str) -> Result<Option<State>, EngineError> {
        self.inspect(id)
    }

    fn activity(&self, id: &str, at_first: &mut dyn FnMut()) -> Result<Measured, Unmeasured> {
        self.measure(id, at_first)
    }

    fn signal(&self, id: &str, signal: &str) -> Result<(), Unsent> {
        // Named every time: bollard's default for this call is SIGKILL.
        let options = KillContainerOptions {
            signal: signal.to_owned(),
        };
        self.runtime
            .block_on(self.docker.kill_container(id, Some(options)))
            .map_err(|e| self.unsent(&e))
    }

    fn wait_stopped(&self, id: &str, limit: Duration) -> Result<(), EngineError> {
        self.wait_until_stopped(id, limit)
    }

    fn start(&self, id: &str, limit: Duration) -> Result<(), Unsent> {
        // A start sets up the container's network and storage: it may take more than a
        // question's two seconds.
        let docker = self.docker.clone().with_timeout(limit.max(ASK_TIMEOUT));
        self.runtime
            .block_on(docker.start_container(id, None::<StartContainerOptions>))
            .map_err(|e| self.unsent(&e))
    }
}

/// The next reading of a statistics stream, [`ASK_TIMEOUT`] at most.
async fn next_reading<S>(stats: &mut S, host: &str) -> Result<ContainerStatsResponse, EngineError>
where
    S: futures_util::Stream<Item = Result<ContainerStatsResponse, bollard::errors::Error>> + Unpin,
{
    let host = host.to_owned();
    match tokio::time::timeout(ASK_TIMEOUT, stats.next()).await {
        Ok(Some(Ok(frame))) => Ok(frame),
        Ok(Some(Err(e))) => Err(unreachable(&host, &e)),
        Ok(None) => Err(EngineError::StatisticsEnded { host }),
        Err(_) => Err(EngineError::StatisticsLate {
            host,
            secs: ASK_TIMEOUT.as_secs(),
        }),
    }
}

/// A request that acts, failed: refused when the engine answered no (a 4xx: no such
/// container, not running, a bad signal), unknown otherwise — no answer, or a server error
/// (a 5xx: containerd timed out after the request, a VM's forwarder failed), after which
/// it may have acted.
fn unsent(host: &str, e: &bollard::errors::Error) -> Unsent {
    match e {
        bollard::errors::Error::DockerResponseServerError {
            status_code,
            message,
        } if (400..500).contains(status_code) => {
            Unsent::Refused(format!("the engine at {host} said: {message}"))
        }
        other => Unsent::Unknown(format!(
            "the engine at {host} did not say whether it acted: {}",
            words(other)
        )),
    }
}

/// The state of a container from its inspection.
pub fn state_of(inspected: ContainerInspectResponse) -> State {
    let state = inspected.state.unwrap_or_default();
    let host_config = inspected.host_config;
    State {
        id: inspected.id.unwrap_or_default(),
        name: inspected
            .name
            .unwrap_or_default()
            .trim_start_matches('/')
            .to_owned(),
        running: state.running == Some(true),
        started_at: state.started_at.unwrap_or_default(),
        stop_signal: inspected
            .config
            .and_then(|c| c.stop_signal)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "SIGTERM".to_owned()),
        // As the scan reads it (`engine::facts`).
        restart_policy: super::engine::policy_of(host_config.as_ref()),
        auto_remove: host_config.and_then(|h| h.auto_remove).unwrap_or(false),
        pid: state
            .pid
            .and_then(|p| u32::try_from(p).ok())
            .filter(|&p| p > 0),
    }
}

/// CPU use over the window between an answer's two readings (`cpu_stats` at `read`,
/// `precpu_stats` at `preread`). An answer without both, or whose earlier reading is not
/// earlier, measured nothing.
pub fn measured(stats: &ContainerStatsResponse) -> Result<Measured, Unmeasured> {
    let total = |c: Option<&bollard::models::ContainerCpuStats>| {
        c.and_then(|c| c.cpu_usage.as_ref())
            .and_then(|u| u.total_usage)
    };
    let (Some(after), Some(before)) = (
        total(stats.cpu_stats.as_ref()),
        total(stats.precpu_stats.as_ref()),
    ) else {
        return Err(Unmeasured::NoTwoReadings);
    };
    let at = |t: Option<&bollard::models::BollardDate>| t.and_then(|t| parse_engine_time(t));
    let window = match (at(stats.preread.as_ref()), at(stats.read.as_ref())) {
        (Some(pre), Some(read)) => read.duration_since(pre).ok(),
        _ => None,
    }
    .filter(|w| !w.is_zero())
    .ok_or(Unmeasured::NoWindow)?;
    Ok(Measured {
        cpu_ns: super::control::delta(before, after)?,
        window,
        by: BY_ENGINE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Docker 20.10's statistics (not one-shot) on cgroup v2, cut to what is read.
    const STATS: &str = r#"{
      "read": "2026-12-03T08:35:11.653525648Z", "preread": "2026-12-03T08:35:10.648489088Z",
      "cpu_stats": {"cpu_usage": {"total_usage": 24077000}, "online_cpus": 2},
      "precpu_stats": {"cpu_usage": {"total_usage": 14077000}}
    }"#;

    #[test]
    fn activity_is_the_cpu_used_between_the_answer_s_two_readings() {
        let stats: ContainerStatsResponse = serde_json::from_str(STATS).unwrap();
        assert_eq!(
            measured(&stats),
            Ok(Measured {
                cpu_ns: 10_000_000,
                window: Duration::from_nanos(1_005_036_560),
                by: BY_ENGINE,
            })
        );
    }

    /// A one-shot answer: no earlier reading, so nothing measured (never "idle").
    #[test]
    fn an_answer_with_one_reading_measured_nothing() {
        let stats: ContainerStatsResponse = serde_json::from_str(
            r#"{"read": "2026-12-03T08:35:12.657225232Z", "preread": "0001-01-01T00:00:00Z",
                "cpu_stats": {"cpu_usage": {"total_usage": 24077000}},
                "precpu_stats": {"cpu_usage": {}}}"#,
        )
        .unwrap();
        assert_eq!(measured(&stats), Err(Unmeasured::NoTwoReadings));
        let stats: ContainerStatsResponse = serde_json::from_str(
            r#"{"read": "2026-12-03T08:35:12.657225232Z", "preread": "0001-01-01T00:00:00Z",
                "cpu_stats": {"cpu_usage": {"total_usage": 24077000}},
                "precpu_stats": {"cpu_usage": {"total_usage": 0}}}"#,
        )
        .unwrap();
        assert!(measured(&stats).is_err());
    }

    #[test]
    fn an_engine_that_answered_no_did_not_act_and_any_other_failure_may_have() {
        let answered = |status_code| bollard::errors::Error::DockerResponseServerError {
            status_code,
            message: "m".into(),
        };
        for no in [400, 404, 409] {
            assert!(
                matches!(unsent("h", &answered(no)), Unsent::Refused(_)),
                "{no}"
            );
        }
        for maybe in [500, 502, 503] {
            assert!(
                matches!(unsent("h", &answered(maybe)), Unsent::Unknown(_)),
                "{maybe}"
            );
        }
        let timed_out = bollard::errors::Error::RequestTimeoutError;
        assert!(matches!(unsent("h", &timed_out), Unsent::Unknown(_)));
    }

    #[test]
    fn no_stop_signal_is_sigterm_and_no_host_configuration_an_unknown_policy() {
        let inspected: ContainerInspectResponse = serde_json::from_str(
            r#"{"Id": "abc", "Name": "/web", "Config": {"StopSignal": ""},
                "State": {"Running": true, "Pid": 42, "StartedAt": "2026-12-03T09:00:00Z"}}"#,
        )
        .unwrap();
        let s = state_of(inspected);
        assert_eq!(s.stop_signal, "SIGTERM");
        assert_eq!(s.name, "web");
        assert_eq!(s.pid, Some(42));
        assert!(s.running);
        assert_eq!(
            s.restart_policy.as_deref(),
            Some(super::super::engine::UNKNOWN_POLICY)
        );
    }

    #[test]
    fn an_image_s_stop_signal_is_kept() {
        let inspected: ContainerInspectResponse = serde_json::from_str(
            r#"{"Id": "abc", "Config": {"StopSignal": "SIGINT"},
                "HostConfig": {"RestartPolicy": {"Name": "no"}, "AutoRemove": false},
                "State": {"Running": false, "Pid": 0, "StartedAt": "2026-12-03T09:00:00Z"}}"#,
        )
        .unwrap();
        let s = state_of(inspected);
        assert_eq!(s.stop_signal, "SIGINT");
        assert_eq!(s.restart_policy, None);
        assert_eq!(s.pid, None);
        assert!(!s.running);
    }
}
