//! The signalling policy against scripted operations: every "no" and "don't know" sends nothing.

use std::cell::{Cell, RefCell};

use super::*;

const EXE: &str = "/usr/bin/node";

fn expected() -> Expected {
    Expected {
        identity: Identity {
            pid: 42,
            start_time: 1000,
        },
        exe: EXE.into(),
    }
}

fn alive(start_time: u64, exe: &str) -> IdentityRead {
    IdentityRead::Alive {
        identity: Identity {
            pid: 42,
            start_time,
        },
        exe: Some(exe.into()),
    }
}

/// Scripted pins and sends; records every send.
#[derive(Default)]
struct Script {
    pins: RefCell<Vec<Result<u32, PinError>>>,
    sends: RefCell<Vec<Result<(), SendError>>>,
    sent: Cell<usize>,
}

impl SignalOps for Script {
    type Pin = u32;
    fn pin(&self, _pid: Pid) -> Result<u32, PinError> {
        self.pins.borrow_mut().remove(0)
    }
    fn send(&self, _pin: &u32, _sig: Sig) -> Result<(), SendError> {
        self.sent.set(self.sent.get() + 1);
        self.sends.borrow_mut().remove(0)
    }
}

fn run(script: &Script, reads: Vec<IdentityRead>) -> SignalOutcome {
    let reads = RefCell::new(reads);
    signal_verified(
        script,
        &|_| reads.borrow_mut().remove(0),
        &expected(),
        Sig::Term,
    )
}

#[test]
fn the_expected_process_is_signalled_once() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        sends: RefCell::new(vec![Ok(())]),
        ..Default::default()
    };
    assert_eq!(run(&s, vec![alive(1000, EXE)]), SignalOutcome::Sent);
    assert_eq!(s.sent.get(), 1);
}

#[test]
fn a_reused_pid_is_never_signalled() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        ..Default::default()
    };
    assert!(matches!(
        run(&s, vec![alive(2000, EXE)]),
        SignalOutcome::Mismatch(_)
    ));
    assert_eq!(s.sent.get(), 0);
}

#[test]
fn a_process_that_exec_d_another_program_is_not_signalled() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        ..Default::default()
    };
    assert!(matches!(
        run(&s, vec![alive(1000, "/bin/bash")]),
        SignalOutcome::Mismatch(_)
    ));
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        ..Default::default()
    };
    let no_exe = IdentityRead::Alive {
        identity: expected().identity,
        exe: None,
    };
    assert!(matches!(run(&s, vec![no_exe]), SignalOutcome::Mismatch(_)));
    assert_eq!(s.sent.get(), 0);
}

#[test]
fn an_identity_that_gives_no_answer_never_authorises_a_signal() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        ..Default::default()
    };
    assert!(matches!(
        run(&s, vec![IdentityRead::Unknown("EPERM".into())]),
        SignalOutcome::Failed(_)
    ));
    assert_eq!(s.sent.get(), 0);
}

#[test]
fn gone_before_the_pin_or_the_read_is_gone_with_nothing_sent() {
    let s = Script {
        pins: RefCell::new(vec![Err(PinError::Gone)]),
        ..Default::default()
    };
    assert_eq!(run(&s, vec![]), SignalOutcome::Gone);
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        ..Default::default()
    };
    assert_eq!(run(&s, vec![IdentityRead::Gone]), SignalOutcome::Gone);
    assert_eq!(s.sent.get(), 0);
}

#[test]
fn a_stale_pin_is_re_verified_from_the_start() {
    // macOS: the send says ESRCH because an exec bumped the pid version; the retry pins
    // again, sees the new executable, and refuses.
    let s = Script {
        pins: RefCell::new(vec![Ok(1), Ok(2)]),
        sends: RefCell::new(vec![Err(SendError::NoSuchProcess)]),
        ..Default::default()
    };
    let out = run(&s, vec![alive(1000, EXE), alive(1000, "/bin/other")]);
    assert!(matches!(out, SignalOutcome::Mismatch(_)), "{out:?}");
    assert_eq!(s.sent.get(), 1, "only the refused send");

    // The process exited between the read and the send: the retry finds it gone.
    let s = Script {
        pins: RefCell::new(vec![Ok(1), Err(PinError::Gone)]),
        sends: RefCell::new(vec![Err(SendError::NoSuchProcess)]),
        ..Default::default()
    };
    assert_eq!(run(&s, vec![alive(1000, EXE)]), SignalOutcome::Gone);
}

#[test]
fn retries_are_bounded() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1), Ok(2), Ok(3)]),
        sends: RefCell::new(vec![Err(SendError::NoSuchProcess); 3]),
        ..Default::default()
    };
    let out = run(
        &s,
        vec![alive(1000, EXE), alive(1000, EXE), alive(1000, EXE)],
    );
    assert!(matches!(out, SignalOutcome::Failed(_)));
    assert_eq!(s.sent.get(), 3);
}

#[test]
fn a_refused_send_is_a_failure_not_a_stop() {
    let s = Script {
        pins: RefCell::new(vec![Ok(1)]),
        sends: RefCell::new(vec![Err(SendError::Other("EPERM".into()))]),
        ..Default::default()
    };
    assert_eq!(
        run(&s, vec![alive(1000, EXE)]),
        SignalOutcome::Failed("EPERM".into())
    );
}

#[test]
fn a_pin_refused_for_a_process_that_is_gone_is_gone_and_otherwise_a_failure() {
    let s = Script {
        pins: RefCell::new(vec![Err(PinError::Failed("kr 5".into()))]),
        ..Default::default()
    };
    assert_eq!(run(&s, vec![IdentityRead::Gone]), SignalOutcome::Gone);
    let s = Script {
        pins: RefCell::new(vec![Err(PinError::Failed("kr 5".into()))]),
        ..Default::default()
    };
    assert_eq!(
        run(&s, vec![alive(1000, EXE)]),
        SignalOutcome::Failed("kr 5".into())
    );
    assert_eq!(s.sent.get(), 0);
}
