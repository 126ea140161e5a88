//! The worker against a scripted engine: the generation rule, results before their follow-up
//! scans, and a clean end.

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::*;
use crate::model::card::Scan;
use crate::model::history::{RestartReport, RestartResult};
use crate::model::outcome::{ResourceResult, StopReport};
use crate::model::reason::{Anyway, Reason, SetAside};
use crate::model::shown::Shown;

/// A target the scripted engine panics on.
const PANICS: &str = "666-1";
/// A target whose stop waits at the gate.
const SLOW: &str = "777-1";

/// A gate a scan of one generation waits at until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

/// Scans return an empty scan stamped with their generation; `slow` generations wait at the
/// gate. Stops and restarts answer at once; each stop's confirmations are kept in `anyway`.
struct Scripted {
    slow: u64,
    gate: Gate,
    anyway: Mutex<Vec<Anyway>>,
    /// The refresh of this generation fires an armed stop of `ARMED` in /w/web.
    fires: Mutex<u64>,
    /// Each arm asked for: the id and whether the kernel's loss was confirmed.
    arms: Mutex<Vec<(String, bool)>>,
}

/// The resource the scripted engine arms; any other is not in its fresh scan.
const ARMED: &str = "10-100";

impl Engine for Scripted {
    fn refresh(&self, generation: u64) -> Refreshed {
        if generation == self.slow {
            self.gate.wait();
        }
        let scan = Scan {
            schema: 1,
            generation,
            scanned_at: String::new(),
            sample_ms: 0,
            projects: vec![],
            other_listeners: None,
            engines: vec![],
        };
        let armed = match *self.fires.lock().unwrap() == generation {
            true => vec![fired_report()],
            false => vec![],
        };
        Refreshed {
            scan: Ok(scan),
            history: Ok(History::default()),
            armed,
            acting: crate::auto::lock::Acting::Here,
            auto: None,
        }
    }
    fn pause(
        &self,
        asked: crate::auto::pause::For,
    ) -> Result<crate::model::rules::Pause, crate::store::StoreError> {
        Ok(asked.at(0))
    }
    fn resume(&self) -> Result<bool, crate::store::StoreError> {
        Ok(true)
    }
    fn arm(
        &self,
        target: &StopTarget,
        kernel_state_lost: bool,
    ) -> Result<crate::model::arm::Armed, crate::auto::arms::ArmError> {
        let id = target.id.to_string();
        self.arms
            .lock()
            .unwrap()
            .push((id.clone(), kernel_state_lost));
        if id != ARMED {
            return Err(crate::auto::arms::ArmRefusal::NotFound { id }.into());
        }
        Ok(crate::model::arm::Armed {
            expires_at: 0,
            waiting_for: vec!["the client on :5173 (curl) to leave".into()],
        })
    }
    fn disarm(
        &self,
        id: &TargetId,
    ) -> Result<Option<crate::model::arm::Arm>, crate::store::StoreError> {
        assert_eq!(id.to_string(), ARMED);
        Ok(None)
    }
    fn stop_with(
        &self,
        targets: &[StopTarget],
        anyway: &Anyway,
        done: &mut dyn FnMut(&StopReport),
    ) -> Vec<StopReport> {
        self.anyway.lock().unwrap().push(anyway.clone());
        targets
            .iter()
            .map(|t| {
                let r = self.stop_one(&t.id.to_string(), anyway);
                done(&r);
                r
            })
            .collect()
    }
    fn restart(&self, snapshot: &RecordName) -> RestartReport {
        RestartReport {
            snapshot: snapshot.to_string(),
            result: RestartResult::Ready,
            reason: "listening again as pid 9".into(),
            pid: Some(9),
            start_time: None,
            log: None,
            log_tail: vec![],
            helper_ports: vec![],
            program: None,
            folder: None,
            code_env: vec![],
            exited: None,
        }
    }
}

/// What the engine's scheduler makes of an armed stop that fired at a refresh.
fn fired_report() -> ActionReport {
    let arm = crate::model::arm::Arm {
        schema: 1,
        id: ARMED.into(),
        root: crate::model::Identity {
            pid: 10,
            start_time: 100,
        },
        boot_id: None,
        project: "/w/web".into(),
        kind: "vite".into(),
        reasons: vec![Reason::LiveConnection],
        armed_at: 0,
        expires_at: 0,
        armed_by: crate::model::RequestedBy::App,
        kernel_state_lost: false,
        exe: None,
    };
    let report = StopReport::new(ARMED, ResourceResult::Stopped, "every member is gone");
    armed_event_summary(&crate::auto::scheduler::Event::Fired {
        arm,
        report: Box::new(report),
        kept: false,
    })
    .expect("a fired stop is a result")
}

impl Scripted {
    /// Refused, but for a stop anyway of `id`: stopped, setting aside what was confirmed.
    fn stop_one(&self, id: &str, anyway: &Anyway) -> StopReport {
        assert_ne!(id, PANICS, "a scripted bug in the engine");
        if id == SLOW {
            self.gate.wait();
        }
        let Some(confirmed) = anyway.confirmed(id) else {
            return StopReport::new(id, ResourceResult::Refused, "a client is connected");
        };
        StopReport {
            set_aside: confirmed
                .iter()
                .map(|&reason| SetAside {
                    reason,
                    fact: "its parent bash still runs".into(),
                })
                .collect(),
            ..StopReport::new(id, ResourceResult::Stopped, "every member is gone")
        }
    }
}

/// A worker over the scripted engine, with its updates on a channel.
fn start_opts(slow: u64, opts: WorkerOptions) -> (Arc<Scripted>, Worker, mpsc::Receiver<Update>) {
    let engine = Arc::new(Scripted {
        slow,
        gate: Gate::default(),
        anyway: Mutex::default(),
        fires: Mutex::new(0),
        arms: Mutex::default(),
    });
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let sink: Sink = Arc::new(move |u| {
        let _ = tx.lock().unwrap().send(u);
    });
    let worker = Worker::spawn(engine.clone(), opts, sink).unwrap();
    (engine, worker, rx)
}

fn start_with(
    slow: u64,
    period: Option<Duration>,
) -> (Arc<Scripted>, Worker, mpsc::Receiver<Update>) {
    start_opts(
        slow,
        WorkerOptions {
            period,
            signals: false,
            drain: Duration::from_secs(5),
        },
    )
}

fn start(slow: u64) -> (Arc<Scripted>, Worker, mpsc::Receiver<Update>) {
    start_with(slow, None)
}

fn next(rx: &mpsc::Receiver<Update>) -> Update {
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the worker answers within 10 s")
}

fn generation_of(u: &Update) -> Option<u64> {
    match u {
        Update::Scanned { generation, .. } => Some(*generation),
        _ => None,
    }
}

#[test]
fn a_slow_older_scan_never_replaces_a_newer_result() {
    // Generation 1 (the start-up scan) hangs; a refresh (generation 2) finishes first.
    let (engine, worker, rx) = start(1);
    assert!(worker.send(Command::Scan));
    let newer = next(&rx);
    assert_eq!(generation_of(&newer), Some(2));
    engine.gate.open();
    let older = next(&rx);
    assert_eq!(
        generation_of(&older),
        Some(1),
        "the slow scan still arrives"
    );
    // What the app does with the two: `pier-app`'s state tests
    // (`a_slow_older_scan_never_replaces_a_newer_one_on_screen`).
    worker.shutdown();
}

#[test]
fn an_action_result_is_delivered_then_a_newer_scan_follows() {
    let (_engine, worker, rx) = start(0);
    assert_eq!(generation_of(&next(&rx)), Some(1));
    let key = ActionKey::Project("/w/shop".into());
    worker.send(Command::Stop {
        key: key.clone(),
        targets: vec![StopTarget {
            project: "/w/shop".into(),
            id: "10-100".parse().unwrap(),
            shown: Shown {
                project_level: crate::model::card::Level::Green,
                members: vec![],
                container_run: None,
            },
        }],
    });
    let Update::CardDone {
        key: of,
        project,
        tone,
    } = next(&rx)
    else {
        panic!("the card is marked as soon as its resources have ended");
    };
    assert_eq!(
        (of, project.as_str(), tone),
        (key.clone(), "/w/shop", Tone::Refused)
    );
    let Update::ActionDone { report, settled_by } = next(&rx) else {
        panic!("then the result");
    };
    assert_eq!(settled_by, 2, "settled by the scan that follows");
    assert_eq!(report.key, key);
    assert_eq!(report.summary, "shop: refused — a client is connected");
    assert_eq!(generation_of(&next(&rx)), Some(2), "then a fresh scan");

    worker.send(Command::Restart {
        snapshot: "snap-1-1-1".parse().unwrap(),
        label: "shop · vite".into(),
    });
    let Update::ActionDone { report, .. } = next(&rx) else {
        panic!("the restart's result");
    };
    assert_eq!(report.tone, Tone::Done);
    assert_eq!(generation_of(&next(&rx)), Some(3));
    worker.shutdown();
}

#[test]
fn periodic_scans_come_with_rising_generations() {
    let (_engine, worker, rx) = start_with(0, Some(Duration::from_millis(20)));
    let gens: Vec<u64> = (0..4).filter_map(|_| generation_of(&next(&rx))).collect();
    assert_eq!(gens, [1, 2, 3, 4]);
    worker.shutdown();
}

#[test]
fn shutdown_joins_the_worker_thread() {
    let (_engine, worker, rx) = start(0);
    next(&rx);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        worker.shutdown();
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("shutdown returns once the worker ends");
    // With the worker gone its sink is dropped: the channel disconnects.
    assert!(matches!(
        rx.recv_timeout(Duration::from_secs(10)),
        Err(mpsc::RecvTimeoutError::Disconnected)
    ));
}

/// A panic in one resource's signals is the batch's to contain (`stop/batch.rs`,
/// `a_panic_in_one_resources_signals_leaves_the_rest_of_the_batch_to_end`); one anywhere else
/// in the engine still ends in a result naming every resource — what already ended as it
/// ended, the rest as unknown — and the follow-up scan.
#[test]
fn a_batch_that_panics_still_delivers_a_result_for_each_resource() {
    let (_engine, worker, rx) = start(0);
    assert_eq!(generation_of(&next(&rx)), Some(1));
    let target = |id: &str, project: &str| StopTarget {
        project: project.into(),
        id: id.parse().unwrap(),
        shown: Shown {
            project_level: crate::model::card::Level::Green,
            members: vec![],
            container_run: None,
        },
    };
    worker.send(Command::Stop {
        key: ActionKey::AllSafe,
        targets: vec![target("20-1", "/w/b"), target(PANICS, "/w/a")],
    });
    assert!(
        matches!(next(&rx), Update::CardDone { .. }),
        "b ended first"
    );
    let Update::ActionDone { report, settled_by } = next(&rx) else {
        panic!("a result, not silence");
    };
    assert_eq!(report.tone, Tone::Failed);
    assert!(
        report
            .summary
            .contains("a: outcome unknown — Pier hit an internal error"),
        "{}",
        report.summary
    );
    assert!(
        report
            .summary
            .contains("b: refused — a client is connected"),
        "what already ended is kept: {}",
        report.summary
    );
    assert_eq!(generation_of(&next(&rx)), Some(settled_by));
    worker.shutdown();
}

#[test]
fn quit_waits_for_an_action_in_flight_and_delivers_its_result() {
    // The stop of "slow" waits at the gate; scans get no time at all to drain.
    let (engine, worker, rx) = start_opts(
        0,
        WorkerOptions {
            period: None,
            signals: false,
            drain: Duration::ZERO,
        },
    );
    assert_eq!(generation_of(&next(&rx)), Some(1));
    worker.send(Command::Stop {
        key: ActionKey::Project("/w/slow".into()),
        targets: vec![StopTarget {
            project: "/w/slow".into(),
            id: SLOW.parse().unwrap(),
            shown: Shown {
                project_level: crate::model::card::Level::Green,
                members: vec![],
                container_run: None,
            },
        }],
    });
    let quitting = std::thread::spawn(move || worker.shutdown());
    engine.gate.open();
    quitting.join().unwrap();
    let results: Vec<Update> = rx.try_iter().collect();
    assert!(
        results
            .iter()
            .any(|u| matches!(u, Update::ActionDone { report, .. } if report.key == ActionKey::Project("/w/slow".into()))),
        "the stop's result was delivered before the worker ended"
    );
}

/// "Send SIGTERM anyway" in the app: the command reaches the engine's stop as a stop anyway of
/// that one resource, confirming exactly the reasons it carries; an ordinary stop confirms
/// nothing. The result names what was set aside.
#[test]
fn a_stop_anyway_reaches_the_engine_with_its_confirmed_reasons() {
    let (engine, worker, rx) = start(0);
    assert_eq!(generation_of(&next(&rx)), Some(1));
    let key = ActionKey::Project("/w/api".into());
    let target = StopTarget {
        project: "/w/api".into(),
        id: "20-100".parse().unwrap(),
        shown: Shown {
            project_level: crate::model::card::Level::Yellow,
            members: vec![],
            container_run: None,
        },
    };
    let reasons = BTreeSet::from([Reason::NotOrphaned]);
    worker.send(Command::StopAnyway {
        key: key.clone(),
        target: target.clone(),
        reasons: reasons.clone(),
    });
    assert!(matches!(next(&rx), Update::CardDone { .. }));
    let Update::ActionDone { report, .. } = next(&rx) else {
        panic!("the result");
    };
    assert_eq!(report.key, key);
    assert_eq!(report.tone, Tone::Done);
    assert_eq!(
        report.summary,
        "api: stopped anyway (0 processes), set aside: not_orphaned"
    );
    assert_eq!(generation_of(&next(&rx)), Some(2), "then a fresh scan");
    worker.send(Command::Stop {
        key,
        targets: vec![target],
    });
    assert!(matches!(next(&rx), Update::CardDone { .. }));
    let Update::ActionDone { report, .. } = next(&rx) else {
        panic!("the ordinary stop's result");
    };
    assert_eq!(report.summary, "api: refused — a client is connected");
    worker.shutdown();
    let heard = engine.anyway.lock().unwrap().clone();
    let mut confirmed = Anyway::default();
    confirmed.confirm("20-100", reasons);
    assert_eq!(heard, [confirmed, Anyway::default()]);
}

fn target(id: &str, project: &str) -> StopTarget {
    StopTarget {
        project: project.into(),
        id: id.parse().unwrap(),
        shown: Shown {
            project_level: crate::model::card::Level::Red,
            members: vec![],
            container_run: None,
        },
    }
}

/// "Stop when safe" in the app: the command reaches the engine's arm with the confirmation it
/// carries; its result is delivered, then a fresh scan (the card then shows the arm). A
/// refusal is a result too.
#[test]
fn arming_delivers_its_result_then_a_fresh_scan() {
    let (engine, worker, rx) = start(0);
    assert_eq!(generation_of(&next(&rx)), Some(1));
    let key = ActionKey::Project("/w/web".into());
    worker.send(Command::Arm {
        key: key.clone(),
        target: target(ARMED, "/w/web"),
        kernel_state_lost: true,
    });
    let Update::ActionDone { report, settled_by } = next(&rx) else {
        panic!("the arm's result");
    };
    assert_eq!(report.key, key);
    assert_eq!(report.tone, Tone::Done);
    assert_eq!(
        report.summary,
        "web: armed — stops when safe, waiting for the client on :5173 (curl) to leave"
    );
    assert_eq!(
        generation_of(&next(&rx)),
        Some(settled_by),
        "then a fresh scan"
    );

    worker.send(Command::Arm {
        key: ActionKey::Project("/w/api".into()),
        target: target("20-100", "/w/api"),
        kernel_state_lost: false,
    });
    let Update::ActionDone { report, .. } = next(&rx) else {
        panic!("the refusal's result");
    };
    assert_eq!(report.tone, Tone::Refused);
    assert!(report
        .summary
        .starts_with("api: not armed — no resource 20-100 now"));
    assert_eq!(generation_of(&next(&rx)), Some(3));

    worker.send(Command::Disarm {
        key: key.clone(),
        id: ARMED.parse().unwrap(),
    });
    let Update::ActionDone { report, .. } = next(&rx) else {
        panic!("the cancel's result");
    };
    assert_eq!(report.key, key);
    assert!(report.summary.starts_with("web: no armed stop to cancel"));
    assert_eq!(generation_of(&next(&rx)), Some(4));
    worker.shutdown();
    assert_eq!(
        *engine.arms.lock().unwrap(),
        [(ARMED.to_owned(), true), ("20-100".to_owned(), false)]
    );
}

/// An armed stop that fires at a refresh is a result as a click's is: the scan it fired at,
/// then the result settled by the next generation, then that fresh scan.
#[test]
fn an_armed_stop_fired_at_a_refresh_is_delivered_then_a_fresh_scan_follows() {
    let (engine, worker, rx) = start(0);
    assert_eq!(generation_of(&next(&rx)), Some(1));
    *engine.fires.lock().unwrap() = 2;
    worker.send(Command::Scan);
    assert_eq!(generation_of(&next(&rx)), Some(2), "the scan it fired at");
    let Update::ActionDone { report, settled_by } = next(&rx) else {
        panic!("the fired stop's result");
    };
    assert_eq!(report.key, ActionKey::Project("/w/web".into()));
    assert_eq!(
        report.summary,
        "web: stopped by your armed stop (0 processes) · Restart in Recently stopped"
    );
    assert_eq!(settled_by, 3);
    assert_eq!(generation_of(&next(&rx)), Some(3), "then a fresh scan");
    worker.shutdown();
    assert!(
        rx.try_iter()
            .all(|u| generation_of(&u).is_some() || matches!(u, Update::Quit)),
        "one result per fired stop, no more"
    );
}
