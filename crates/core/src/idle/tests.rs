//! The clock with an injected time source and injected counters: deterministic.

use std::time::Duration;

use super::*;
use crate::model::Identity;
use crate::probe::Cumulative;

const ROOT: Identity = Identity {
    pid: 10,
    start_time: 100,
};
const CHILD: Identity = Identity {
    pid: 11,
    start_time: 101,
};

fn at(awake: u64, since_boot: u64) -> Times {
    Times {
        awake: Duration::from_secs(awake),
        since_boot: Duration::from_secs(since_boot),
    }
}

fn c(cpu_ms: u64, io_bytes: u64, syscalls: u64) -> Cumulative {
    Cumulative {
        cpu_ns: cpu_ms * 1_000_000,
        io_bytes,
        syscalls,
    }
}

/// One resource with `members` read as given.
fn seen(members: &[(Identity, Result<Cumulative, String>)]) -> Vec<Observation> {
    vec![Observation {
        id: "10-100".into(),
        read: members.iter().cloned().collect(),
        pollers: Vec::new(),
        connections: Vec::new(),
    }]
}

fn quiet(n: u64) -> Vec<Observation> {
    // 30 ms of CPU, 240 bytes and 30 calls per 30 s: what an idle Node server spends.
    seen(&[(ROOT, Ok(c(30 * n, 240 * n, 30 * n)))])
}

fn state(clock: &Clock) -> (IdleState, u64) {
    let i = clock.idle("10-100").expect("seen");
    (i.state, i.seconds)
}

/// A clock fed `n` quiet rescans 30 s apart, awake all along.
fn quiet_for(n: u64) -> Clock {
    let mut clock = Clock::new(ClockOptions::default());
    for k in 0..n {
        clock.observe(at(1000 + 30 * k, 5000 + 30 * k), quiet(k));
    }
    clock
}

#[test]
fn idle_is_measured_after_exactly_one_interval_and_grows_with_each() {
    assert_eq!(state(&quiet_for(1)), (IdleState::Measuring, 0));
    assert_eq!(state(&quiet_for(2)), (IdleState::Idle, 30));
    assert_eq!(state(&quiet_for(81)), (IdleState::Idle, 40 * 60));
}

#[test]
fn sleep_does_not_advance_the_clock_and_a_wake_settles() {
    let mut clock = quiet_for(3);
    assert_eq!(state(&clock), (IdleState::Idle, 60));
    assert_eq!(clock.settling(), None);
    // Eight hours asleep between two rescans 30 s of awake time apart.
    clock.observe(at(1090, 5060 + 8 * 3600 + 30), quiet(3));
    assert_eq!(
        state(&clock),
        (IdleState::Idle, 90),
        "only awake time counts"
    );
    assert_eq!(clock.settling(), Some(Duration::from_secs(600)));
    clock.observe(at(1090 + 30, 5060 + 8 * 3600 + 60), quiet(4));
    assert_eq!(clock.settling(), Some(Duration::from_secs(570)));
    clock.observe(at(1090 + 600, 5060 + 8 * 3600 + 630), quiet(5));
    assert_eq!(clock.settling(), None, "the settle ends after 10 min awake");
}

#[test]
fn one_busy_interval_resets_the_clock() {
    let mut clock = quiet_for(10);
    // 600 ms of CPU in 30 s: 2%.
    clock.observe(at(1300, 5300), seen(&[(ROOT, Ok(c(270 + 600, 2400, 300)))]));
    let i = clock.idle("10-100").unwrap();
    assert_eq!((i.state, i.seconds), (IdleState::Active, 0));
    assert_eq!(
        i.why.as_deref(),
        Some("2.0% CPU over 30 s (more than 1.0%)")
    );
    clock.observe(at(1330, 5330), seen(&[(ROOT, Ok(c(870 + 30, 2640, 330)))]));
    assert_eq!(state(&clock), (IdleState::Idle, 30), "it starts again");
}

#[test]
fn one_connection_resets_the_clock() {
    let mut clock = quiet_for(10);
    let mut o = quiet(10);
    o[0].connections = vec!["a connection on :5173 closed within the last minute".into()];
    clock.observe(at(1300, 5300), o);
    let i = clock.idle("10-100").unwrap();
    assert_eq!(i.state, IdleState::Active);
    assert_eq!(
        i.why.as_deref(),
        Some("a connection on :5173 closed within the last minute")
    );
}

#[test]
fn an_unreadable_counter_is_never_idle() {
    let mut clock = quiet_for(2);
    clock.observe(
        at(1060, 5060),
        seen(&[(ROOT, Err("permission denied".into()))]),
    );
    assert_eq!(state(&clock).0, IdleState::Active);
    // Unread at the start of the interval is as bad as at its end.
    clock.observe(at(1090, 5090), quiet(3));
    assert_eq!(state(&clock).0, IdleState::Active);
    clock.observe(at(1120, 5120), quiet(4));
    assert_eq!(state(&clock), (IdleState::Idle, 30));
}

#[test]
fn a_newcomer_or_a_member_that_ended_is_not_idle() {
    let mut clock = quiet_for(2);
    clock.observe(
        at(1060, 5060),
        seen(&[(ROOT, Ok(c(60, 480, 60))), (CHILD, Ok(c(0, 0, 0)))]),
    );
    let i = clock.idle("10-100").unwrap();
    assert_eq!(i.why.as_deref(), Some("pid 11 started"));
    clock.observe(at(1090, 5090), quiet(3));
    let i = clock.idle("10-100").unwrap();
    assert_eq!(i.why.as_deref(), Some("pid 11 ended"));
}

#[test]
fn each_bound_holds_on_its_own() {
    let b = Bounds::default();
    let s30 = Duration::from_secs(30);
    let read = |x: Cumulative| -> Read { [(ROOT, Ok(x))].into_iter().collect() };
    let check = |later: Cumulative| {
        let now = read(later);
        judge_idle(
            &b,
            s30,
            &read(c(0, 0, 0)),
            Now {
                read: &now,
                pollers: &[],
                connections: &[],
            },
        )
    };
    // Exactly at each bound is idle; one more is not.
    assert_eq!(check(c(300, 30 * 1024, 300)), Ok(()));
    assert!(matches!(check(c(301, 0, 0)), Err(NotIdle::Cpu { .. })));
    assert!(matches!(
        check(c(0, 30 * 1024 + 1, 0)),
        Err(NotIdle::Io { .. })
    ));
    assert!(matches!(check(c(0, 0, 301)), Err(NotIdle::Calls { .. })));
    let long = judge_idle(
        &b,
        Duration::from_secs(61),
        &read(c(0, 0, 0)),
        Now {
            read: &read(c(0, 0, 0)),
            pollers: &[],
            connections: &[],
        },
    );
    assert!(matches!(long, Err(NotIdle::TooLong(..))));
}

#[test]
fn a_counter_that_went_back_is_not_idle() {
    let mut clock = quiet_for(3);
    clock.observe(at(1090, 5090), seen(&[(ROOT, Ok(c(90, 720, 10)))]));
    let i = clock.idle("10-100").unwrap();
    assert_eq!(
        i.why.as_deref(),
        Some("pid 10's counters went back (a thread ended, or a count wrapped)")
    );
}

#[test]
fn a_respawners_polling_cpu_is_set_aside_but_not_its_io() {
    let b = Bounds::default();
    let s30 = Duration::from_secs(30);
    let before: Read = [(ROOT, Ok(c(0, 0, 0))), (CHILD, Ok(c(0, 0, 0)))]
        .into_iter()
        .collect();
    let now: Read = [(ROOT, Ok(c(900, 0, 0))), (CHILD, Ok(c(10, 0, 0)))]
        .into_iter()
        .collect();
    let with = |pollers: &[Identity]| {
        judge_idle(
            &b,
            s30,
            &before,
            Now {
                read: &now,
                pollers,
                connections: &[],
            },
        )
    };
    assert!(with(&[]).is_err());
    assert_eq!(with(&[ROOT]), Ok(()));
    let loud: Read = [(ROOT, Ok(c(900, 1 << 20, 0))), (CHILD, Ok(c(10, 0, 0)))]
        .into_iter()
        .collect();
    let io = judge_idle(
        &b,
        s30,
        &before,
        Now {
            read: &loud,
            pollers: &[ROOT],
            connections: &[],
        },
    );
    assert!(matches!(io, Err(NotIdle::Io { .. })));
}

fn judge_idle(b: &Bounds, len: Duration, before: &Read, now: Now) -> Result<(), NotIdle> {
    judge(b, len, before, now).idle
}

#[test]
fn the_last_intervals_rates_are_kept_for_a_scheduler_without_a_sample() {
    let mut clock = quiet_for(2);
    let r = clock.rates("10-100").unwrap();
    assert!((r.cpu_percent - 0.1).abs() < 1e-9, "{r:?}");
    assert!((r.io_bytes_per_second - 8.0).abs() < 1e-9, "{r:?}");
    clock.observe(at(1060, 5060), seen(&[(ROOT, Err("gone".into()))]));
    assert_eq!(clock.rates("10-100"), None, "an unread counter has no rate");
}

#[test]
fn a_resource_not_seen_at_a_rescan_measures_afresh() {
    let mut clock = quiet_for(5);
    clock.observe(at(1150, 5150), Vec::new());
    assert_eq!(clock.idle("10-100"), None);
    clock.observe(at(1180, 5180), quiet(6));
    assert_eq!(state(&clock), (IdleState::Measuring, 0));
}

mod closed {
    use crate::model::card::Port;
    use crate::probe::Ended;

    use super::super::seen::served;

    fn port(address: &str, port: u16) -> Port {
        Port {
            port,
            address: address.into(),
            pid: 1,
            helper: None,
        }
    }

    fn ended(local: &str, remote: &str) -> Ended {
        Ended {
            local: local.parse().unwrap(),
            remote: remote.parse().unwrap(),
        }
    }

    #[test]
    fn a_closed_connection_counts_from_either_end_on_this_machine() {
        let p = port("127.0.0.1", 5173);
        assert!(served(&p, &ended("127.0.0.1:5173", "127.0.0.1:40000")));
        assert!(served(&p, &ended("127.0.0.1:40000", "127.0.0.1:5173")));
        assert!(!served(&p, &ended("127.0.0.1:5174", "127.0.0.1:40000")));
        // A wildcard listener: this machine's clients reach it at their own address.
        let any = port("::", 5173);
        assert!(served(
            &any,
            &ended("[::ffff:10.0.0.2]:5173", "10.0.0.9:40000")
        ));
        assert!(served(&any, &ended("10.0.0.2:40000", "10.0.0.2:5173")));
        assert!(served(&any, &ended("[::1]:40000", "[::1]:5173")));
        // A connection out of this machine to another one's port 5173 is not this listener's.
        assert!(!served(&any, &ended("10.0.0.2:40000", "10.0.0.9:5173")));
        assert!(!served(&p, &ended("10.0.0.2:40000", "10.0.0.9:5173")));
    }
}
