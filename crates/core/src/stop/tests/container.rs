//! A container's checkpoint chain against a scripted engine (`containers::control`): what
//! each check refuses with nothing sent, the one signal it sends (the container's own stop
//! signal, never SIGKILL), and the outcome after the wait. Against a real dockerd:
//! `tests/containers_linux.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::containers::control::{Control, EngineAccess, Measured, State, Unsent};
use crate::containers::{ContainerFacts, Endpoint, EngineError, EngineRead, Published, Unmeasured};
use crate::model::outcome::{Checkpoint, MemberOutcome, ResourceResult};
use crate::model::snapshot::ContainerSnapshot;
use crate::probe::fake::{process, FakeProbe};
use crate::probe::{Socket, TcpState};

const HOST: &str = "unix:///var/run/docker.sock";
const CID: &str = "fe7ae5f85c8ac8f8b745dc570885ffbb28e2789e9b94a40e4b6755992f2dc3dd";
const CARD: &str = "container-fe7ae5f85c8a";
const RUN: &str = "2026-12-03T06:08:14.144822442Z";

/// The interruption flag of the one test that raises it (`interrupt_at_state`).
static INTERRUPT: Interrupt = Interrupt::new();

/// What the scripted engine says and does; `reads` and `states` count their calls (1-based).
#[derive(Default)]
pub(super) struct Script {
    reads: usize,
    states: usize,
    /// A client inside the container's namespace from this read on (1: the re-diagnosis,
    /// 2: (a), 3: (c), 4: (e), 5: the rescan).
    client_from_read: Option<usize>,
    /// A new run from this state look on (1: before the record, 2: (d), 3: (e), 4: right
    /// before the signal).
    restarted_from_state: Option<usize>,
    /// A restart policy from this state look on.
    policy_from_state: Option<usize>,
    /// CPU time over the engine's one-second window.
    cpu_ns: u64,
    /// Whether the container ends when signalled.
    obeys: bool,
    /// Someone else listens on its port once it has stopped.
    port_taken_after: bool,
    /// Its stop signal, as the engine reports it (SIGINT unless a test says otherwise).
    stop_signal: Option<String>,
    /// How the engine answers the signal (`None`: it takes it).
    signal_answer: Option<Unsent>,
    /// An interruption raised at this state look.
    interrupt_at_state: Option<usize>,
    /// The state folder's records, and what befalls them: its folder turned into a file at
    /// the first state look (before the record is written), or the record removed during the
    /// activity sample (before the mark).
    records: Option<std::path::PathBuf>,
    records_unwritable: bool,
    record_lost_in_sample: bool,
    running: bool,
    sent: Vec<String>,
}

pub(super) struct FakeEngine(Arc<Mutex<Script>>);

impl FakeEngine {
    pub(super) fn new(change: impl FnOnce(&mut Script)) -> Self {
        let mut s = Script {
            obeys: true,
            running: true,
            ..Script::default()
        };
        change(&mut s);
        Self(Arc::new(Mutex::new(s)))
    }

    fn sent(&self) -> Vec<String> {
        self.0.lock().unwrap().sent.clone()
    }
}

fn facts(client: bool) -> ContainerFacts {
    let mut inside = vec![Socket {
        local: "[::]:8080".parse().unwrap(),
        remote: "[::]:0".parse().unwrap(),
        state: TcpState::Listen,
        owners: Vec::new(),
        queued: None,
    }];
    if client {
        inside.push(Socket {
            local: "172.30.0.2:8080".parse().unwrap(),
            remote: "172.30.0.3:40000".parse().unwrap(),
            state: TcpState::Established,
            owners: Vec::new(),
            queued: None,
        });
    }
    ContainerFacts {
        id: CID.into(),
        name: "web".into(),
        image: "busybox".into(),
        started_at: Some(RUN.into()),
        ports: vec![Published {
            host_ip: "127.0.0.1".parse().unwrap(),
            host_port: 18080,
            container_port: 8080,
        }],
        pid: Some(600),
        addresses: vec!["172.30.0.2".parse().unwrap()],
        namespace: Some(Ok(inside)),
        ..ContainerFacts::default()
    }
}

impl EngineAccess for FakeEngine {
    fn read(&self) -> Vec<EngineRead> {
        let mut s = self.0.lock().unwrap();
        s.reads += 1;
        let client = s.client_from_read.is_some_and(|n| s.reads >= n);
        let containers = if s.running {
            vec![facts(client)]
        } else {
            vec![]
        };
        vec![EngineRead {
            endpoint: Endpoint {
                engine: "Docker",
                host: HOST.into(),
                origin: "default place".into(),
            },
            containers: Ok(containers),
        }]
    }

    fn connect(&self, host: &str) -> Result<Box<dyn Control>, EngineError> {
        assert_eq!(host, HOST);
        Ok(Box::new(Handle(Arc::clone(&self.0))))
    }
}

/// The engine as a `Control`: the test's script, shared.
struct Handle(Arc<Mutex<Script>>);

impl Handle {
    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.0.lock().unwrap()
    }
}

impl Control for Handle {
    fn state(&self, id: &str) -> Result<Option<State>, EngineError> {
        assert_eq!(id, CID);
        let mut s = self.script();
        s.states += 1;
        let n = s.states;
        if s.interrupt_at_state == Some(n) {
            INTERRUPT.raise(2);
        }
        if let (1, true, Some(records)) = (n, s.records_unwritable, &s.records) {
            std::fs::remove_dir_all(records).unwrap();
            std::fs::write(records, b"not a folder").unwrap();
        }
        let again = s.restarted_from_state.is_some_and(|from| n >= from);
        let policy = s.policy_from_state.is_some_and(|from| n >= from);
        Ok(Some(State {
            id: CID.into(),
            name: "web".into(),
            running: s.running,
            started_at: if again {
                "2026-12-03T07:00:00Z".into()
            } else {
                RUN.into()
            },
            stop_signal: s.stop_signal.clone().unwrap_or_else(|| "SIGINT".into()),
            restart_policy: policy.then(|| "always".into()),
            auto_remove: false,
            pid: Some(600),
        }))
    }

    fn activity(&self, _id: &str, at_first: &mut dyn FnMut()) -> Result<Measured, Unmeasured> {
        at_first();
        let lost = {
            let s = self.script();
            s.records.clone().filter(|_| s.record_lost_in_sample)
        };
        for e in lost
            .iter()
            .flat_map(|r| std::fs::read_dir(r).unwrap().flatten())
        {
            std::fs::remove_file(e.path()).unwrap();
        }
        Ok(Measured {
            cpu_ns: self.script().cpu_ns,
            window: Duration::from_secs(1),
            by: crate::containers::control::BY_ENGINE,
        })
    }

    fn signal(&self, _id: &str, signal: &str) -> Result<(), Unsent> {
        let mut s = self.script();
        if let Some(Unsent::Refused(why)) = &s.signal_answer {
            return Err(Unsent::Refused(why.clone()));
        }
        s.sent.push(signal.to_owned());
        if s.obeys {
            s.running = false;
        }
        s.signal_answer.clone().map_or(Ok(()), Err)
    }

    fn wait_stopped(&self, _id: &str, _limit: Duration) -> Result<(), EngineError> {
        Ok(())
    }

    fn start(&self, _id: &str, _limit: Duration) -> Result<(), Unsent> {
        Err(Unsent::Refused("not in these tests".into()))
    }
}

/// Stops the card through `engine`, on a host where docker-proxy holds its published port.
fn stop_with(engine: &FakeEngine) -> (StopReport, Store, tempfile::TempDir) {
    stop_in(engine, opts(), |_, _, _| {})
}

/// The same with `opts`, and `hook` run at every read of the probe (as `Scripted` runs it).
fn stop_in(
    engine: &FakeEngine,
    opts: StopOptions,
    mut hook: impl FnMut(&'static str, usize, &mut FakeProbe) + Send + 'static,
) -> (StopReport, Store, tempfile::TempDir) {
    let mut proxy = process(500, 1, &["/usr/sbin/docker-proxy", "-proto", "tcp"]);
    proxy.uid = 0;
    let host = FakeProbe::default()
        .with(proxy, "/")
        .listen("127.0.0.1:18080", 500);
    // The engine's proxy holds the port while the container runs.
    let script = Arc::clone(&engine.0);
    let probe = Scripted::new(host, move |name, n, fake| {
        let s = script.lock().unwrap();
        if !s.running && !s.port_taken_after {
            fake.sockets = Some(Vec::new());
        }
        drop(s);
        hook(name, n, fake);
    });
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    engine.0.lock().unwrap().records = Some(dir.path().join("records"));
    let ops = fake_ops(&probe);
    let waiter = FakeWaiter::new(&probe);
    let interrupts = engine.0.lock().unwrap().interrupt_at_state.is_some();
    let stopper = Stopper {
        engines: engine,
        interrupt: if interrupts { &INTERRUPT } else { &NEVER },
        ..stopper(&probe, &ops, &waiter, &store, opts)
    };
    let r = stopper.stop(CARD, None);
    (r, store, dir)
}

/// A dry run of the container's stop: its report, and how many stop records it left.
pub(super) fn dry_run_of_a_container(engine: &FakeEngine) -> (StopReport, usize) {
    let o = StopOptions {
        dry_run: true,
        ..opts()
    };
    let (r, store, _dir) = stop_in(engine, o, |_, _, _| {});
    assert!(engine.sent().is_empty(), "nothing sent");
    let n = store
        .list::<ContainerSnapshot>("ctr-")
        .unwrap()
        .records
        .len();
    (r, n)
}

fn record(store: &Store) -> ContainerSnapshot {
    let listing = store.list::<ContainerSnapshot>("ctr-").unwrap();
    assert_eq!(listing.records.len(), 1, "one record");
    listing.records[0].1.clone()
}

#[test]
fn an_idle_container_gets_its_own_stop_signal_once_through_its_engine() {
    let engine = FakeEngine::new(|_| {});
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(engine.sent(), ["SIGINT"], "its image's stop signal, once");
    let c = r.container.as_ref().unwrap();
    assert_eq!(c.outcome, MemberOutcome::Stopped);
    let rec = record(&store);
    assert_eq!(rec.signals_may_follow, Some(true));
    assert_eq!(rec.signalled, Some(true));
    assert_eq!(rec.result, Some(ResourceResult::Stopped));
    assert_eq!(rec.started_at, RUN);
}

#[test]
fn a_client_that_appears_at_check_c_refuses_with_nothing_sent() {
    let engine = FakeEngine::new(|s| s.client_from_read = Some(3));
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::C), "{r:#?}");
    assert!(r.reason.contains("live connection"), "{}", r.reason);
    assert!(engine.sent().is_empty());
    assert_eq!(record(&store).signalled, Some(false));
}

#[test]
fn a_client_at_the_last_check_refuses_after_the_mark_with_nothing_sent() {
    let engine = FakeEngine::new(|s| s.client_from_read = Some(4));
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.checkpoint, Some(Checkpoint::E), "{r:#?}");
    assert!(engine.sent().is_empty());
    let rec = record(&store);
    assert_eq!(
        (rec.signals_may_follow, rec.signalled),
        (Some(true), Some(false))
    );
}

#[test]
fn a_run_started_again_right_before_the_signal_gets_none() {
    let engine = FakeEngine::new(|s| s.restarted_from_state = Some(4));
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::E), "{r:#?}");
    assert_eq!(
        engine.0.lock().unwrap().states,
        4,
        "caught at the last look"
    );
    assert!(r.container.is_none(), "nothing was sent: {r:#?}");
    assert!(r.reason.contains("was started again"), "{}", r.reason);
    assert!(engine.sent().is_empty());
}

#[test]
fn a_restart_policy_the_engine_reports_at_check_d_refuses() {
    let engine = FakeEngine::new(|s| s.policy_from_state = Some(2));
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.checkpoint, Some(Checkpoint::D), "{r:#?}");
    assert!(r.reason.contains("restart policy always"), "{}", r.reason);
    assert!(engine.sent().is_empty());
}

#[test]
fn a_busy_container_is_refused_at_check_b() {
    // 300 ms of CPU over the engine's second: 30% of one core.
    let engine = FakeEngine::new(|s| s.cpu_ns = 300_000_000);
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.checkpoint, Some(Checkpoint::B), "{r:#?}");
    assert!(r.reason.contains("30.0% CPU"), "{}", r.reason);
    assert!(engine.sent().is_empty());
}

#[test]
fn a_container_that_outlives_its_grace_is_still_running_and_gets_no_second_signal() {
    let engine = FakeEngine::new(|s| s.obeys = false);
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::NotStopped, "{r:#?}");
    assert!(r.reason.contains("still runs after SIGINT"), "{}", r.reason);
    assert_eq!(
        r.container.as_ref().unwrap().outcome,
        MemberOutcome::StillRunning
    );
    assert_eq!(engine.sent(), ["SIGINT"], "no SIGKILL, no second signal");
    assert_eq!(record(&store).result, Some(ResourceResult::NotStopped));
}

#[test]
fn a_stop_anyway_is_refused_for_a_container() {
    let engine = FakeEngine::new(|_| {});
    let mut anyway = opts();
    anyway
        .anyway
        .confirm(CARD, crate::model::reason::ALL.into_iter().collect());
    let (r, _store, _dir) = stop_in(&engine, anyway, |_, _, _| {});
    assert_eq!(r.result, ResourceResult::Refused);
    assert!(
        r.reason.starts_with("a stop anyway is for process trees"),
        "{}",
        r.reason
    );
    assert!(engine.sent().is_empty());
}

/// The rescan finds the port held again: the stop was not clean.
#[test]
fn a_port_held_again_after_the_stop_makes_it_partial_naming_who() {
    let engine = FakeEngine::new(|s| s.port_taken_after = true);
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::PartiallyStopped, "{r:#?}");
    assert!(
        r.reason.contains("port 18080 listens again"),
        "{}",
        r.reason
    );
}

/// More than 2 s from (a) to the signal (the clock jumps during check (e)'s read): refused
/// at the deadline, with nothing sent.
#[test]
fn a_signal_later_than_two_seconds_after_check_a_is_never_sent() {
    let engine = FakeEngine::new(|_| {});
    // Process-table reads: 1 the re-diagnosis, 2 (a), 3 (c), 4 (e).
    let (r, _store, _dir) = stop_in(&engine, opts(), |name, n, fake| {
        if name == "processes" && n == 4 {
            *fake.clock.borrow_mut() += Duration::from_millis(2100);
        }
    });
    assert_eq!(r.checkpoint, Some(Checkpoint::Deadline), "{r:#?}");
    assert!(r.reason.contains("more than the 2000 ms"), "{}", r.reason);
    assert!(engine.sent().is_empty());
}

/// An image may name SIGKILL as its stop signal (`--stop-signal KILL`): Pier never sends it.
#[test]
fn a_stop_signal_of_sigkill_is_never_sent() {
    let engine = FakeEngine::new(|s| s.stop_signal = Some("SIGKILL".into()));
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(r.reason.contains("never sends"), "{}", r.reason);
    assert!(engine.sent().is_empty());
}

/// The engine says no to the signal: nothing was sent, and the report and record say so.
#[test]
fn a_signal_the_engine_refuses_is_reported_and_recorded_as_not_sent() {
    let engine = FakeEngine::new(|s| {
        s.signal_answer = Some(Unsent::Refused("the engine said: is not running".into()));
    });
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    let c = r.container.as_ref().unwrap();
    assert_eq!((c.outcome, c.sent), (MemberOutcome::Failed, Some(false)));
    assert_eq!(record(&store).signalled, Some(false));
}

/// No answer to the signal (a time-out): it may have gone out, so it is never "not sent";
/// what is true after the wait decides, and the record keeps "unknown".
#[test]
fn a_signal_without_an_answer_is_judged_by_what_is_true_after_the_wait() {
    let engine = FakeEngine::new(|s| {
        s.signal_answer = Some(Unsent::Unknown(
            "the engine gave no answer: timed out".into(),
        ));
    });
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert!(
        r.reason.starts_with("the engine did not confirm SIGINT"),
        "{}",
        r.reason
    );
    let c = r.container.as_ref().unwrap();
    assert_eq!((c.outcome, c.sent), (MemberOutcome::Stopped, None));
    let rec = record(&store);
    assert_eq!(
        (rec.signalled, rec.result),
        (None, Some(ResourceResult::Stopped))
    );
}

/// Ctrl-C during the last look at the run: the signal is not sent, after the mark.
#[test]
fn an_interruption_right_before_the_signal_sends_nothing() {
    let engine = FakeEngine::new(|s| s.interrupt_at_state = Some(4));
    let (r, store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.interrupted.as_deref(), Some("SIGINT"));
    assert!(engine.sent().is_empty());
    let rec = record(&store);
    assert_eq!(
        (rec.signals_may_follow, rec.signalled),
        (Some(true), Some(false))
    );
}

/// No recovery record, no signal: a state folder that cannot take the record fails the stop
/// before any check, with nothing sent.
#[test]
fn a_record_that_cannot_be_written_means_no_signal() {
    let engine = FakeEngine::new(|s| s.records_unwritable = true);
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Failed, "{r:#?}");
    assert!(
        r.reason
            .starts_with("the recovery record could not be written, so nothing was signalled"),
        "{}",
        r.reason
    );
    assert!(engine.sent().is_empty());
}

/// No "signals may follow" mark, no signal: a record gone before the mark fails the stop,
/// with nothing sent.
#[test]
fn a_mark_that_cannot_be_written_means_no_signal() {
    let engine = FakeEngine::new(|s| s.record_lost_in_sample = true);
    let (r, _store, _dir) = stop_with(&engine);
    assert_eq!(r.result, ResourceResult::Failed, "{r:#?}");
    assert!(
        r.reason
            .contains("\"signals may follow\" mark could not be written"),
        "{}",
        r.reason
    );
    assert!(engine.sent().is_empty());
}
