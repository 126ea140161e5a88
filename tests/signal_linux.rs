//! The Linux signaller against real processes: it signals the process it was given, and only
//! that one. Every process here is a child of the test, signalled by identity.
#![cfg(target_os = "linux")]

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use common::{start_time_of, wait_for};
use pier_core::probe::Identity;
use pier_core::signal::{system_signaller, Expected, Sig, SignalOutcome};

fn sleeper() -> Child {
    Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .expect("sleep starts")
}

fn expected_of(child: &Child) -> Expected {
    let pid = child.id();
    Expected {
        identity: Identity {
            pid,
            start_time: start_time_of(pid).unwrap(),
        },
        exe: std::fs::read_link(format!("/proc/{pid}/exe")).unwrap(),
    }
}

fn state_of(pid: u32) -> Option<u8> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

#[test]
fn the_expected_process_gets_the_signal() {
    let mut child = sleeper();
    let out = system_signaller().signal(&expected_of(&child), Sig::Term);
    assert_eq!(out, SignalOutcome::Sent);
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc_sigterm()), "it died of SIGTERM");
}

fn libc_sigterm() -> i32 {
    rustix::process::Signal::TERM.as_raw()
}

#[test]
fn a_different_start_time_is_never_signalled() {
    let mut child = sleeper();
    let mut wrong = expected_of(&child);
    wrong.identity.start_time += 1;
    let out = system_signaller().signal(&wrong, Sig::Kill);
    assert!(matches!(out, SignalOutcome::Mismatch(_)), "{out:?}");
    assert!(child.try_wait().unwrap().is_none(), "still running");
    assert_eq!(
        system_signaller().signal(&expected_of(&child), Sig::Kill),
        SignalOutcome::Sent
    );
    child.wait().unwrap();
}

#[test]
fn a_different_executable_is_never_signalled() {
    let mut child = sleeper();
    let mut wrong = expected_of(&child);
    wrong.exe = PathBuf::from("/usr/bin/not-sleep");
    let out = system_signaller().signal(&wrong, Sig::Kill);
    assert!(matches!(out, SignalOutcome::Mismatch(_)), "{out:?}");
    assert!(child.try_wait().unwrap().is_none(), "still running");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn an_exited_process_and_a_zombie_are_gone() {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    let expected = Expected {
        identity: Identity {
            pid,
            start_time: wait_for("a start time", || start_time_of(pid)),
        },
        exe: PathBuf::from("/usr/bin/true"),
    };
    // Not reaped yet: the zombie must count as gone, with nothing sent.
    wait_for("the zombie", || (state_of(pid) == Some(b'Z')).then_some(()));
    assert_eq!(
        system_signaller().signal(&expected, Sig::Term),
        SignalOutcome::Gone
    );
    child.wait().unwrap();
    assert_eq!(
        system_signaller().signal(&expected, Sig::Term),
        SignalOutcome::Gone
    );
}

/// Clock ticks since boot, the unit of start times.
fn boot_ticks() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap();
    let secs: f64 = uptime.split_whitespace().next().unwrap().parse().unwrap();
    (secs * rustix::param::clock_ticks_per_second() as f64) as u64
}

/// Asks the kernel to hand out `pid` next (root, initial PID namespace only).
fn next_pid_is(pid: u32) -> bool {
    std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).is_ok()
}

#[test]
fn a_newcomer_that_reuses_the_pid_is_never_signalled() {
    let mut old = sleeper();
    let judged = expected_of(&old);
    // Start times count clock ticks (10 ms): a process judged by a scan has run for at least
    // a tick, so let the clock move past its start before the pid is reused.
    wait_for("the next clock tick", || {
        (boot_ticks() > judged.identity.start_time + 1).then_some(())
    });
    old.kill().unwrap();
    old.wait().unwrap();
    // Give the pid to a new process; retry if something else took it first.
    let newcomer = (0..20).find_map(|_| {
        if !next_pid_is(judged.identity.pid) {
            return None;
        }
        let child = sleeper();
        if child.id() == judged.identity.pid {
            Some(child)
        } else {
            let mut child = child;
            child.kill().ok();
            child.wait().ok();
            None
        }
    });
    let Some(mut newcomer) = newcomer else {
        // Not root, or not the initial PID namespace: ns_last_pid cannot be written.
        eprintln!("skipped: cannot steer pid allocation here (needs root)");
        assert!(
            !rustix::process::geteuid().is_root(),
            "root must be able to steer pids"
        );
        return;
    };
    let out = system_signaller().signal(&judged, Sig::Kill);
    assert!(matches!(out, SignalOutcome::Mismatch(_)), "{out:?}");
    assert!(
        newcomer.try_wait().unwrap().is_none(),
        "the newcomer still runs"
    );
    newcomer.kill().unwrap();
    newcomer.wait().unwrap();
}
