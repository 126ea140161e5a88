//! The Linux probe's single-process reads against a real child of the test.
#![cfg(target_os = "linux")]

mod common;

use std::process::{Command, Stdio};

use pier::probe::{IdentityRead, LinuxProbe, Probe};

#[test]
fn environment_and_identity_of_a_real_process_are_read_exactly() {
    let mut child = Command::new("sleep")
        .arg("600")
        .env_clear()
        .env("PIER_TEST", "a b=c")
        .env("EMPTY", "")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let probe = LinuxProbe::new();
    let mut env = probe.environment(pid).unwrap();
    env.sort();
    assert_eq!(env, vec![b"EMPTY=".to_vec(), b"PIER_TEST=a b=c".to_vec()]);
    match probe.identity(pid) {
        IdentityRead::Alive { identity, exe } => {
            assert_eq!(identity.start_time, common::start_time_of(pid).unwrap());
            assert_eq!(exe, std::fs::read_link(format!("/proc/{pid}/exe")).ok());
        }
        other => panic!("{other:?}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(probe.identity(pid), IdentityRead::Gone);
    assert!(
        probe.environment(pid).is_err(),
        "a gone process has no environment"
    );
}
