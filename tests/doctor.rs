//! `pier doctor` on this machine, as a user runs it: the self-test passes here (Linux in CI;
//! macOS in the GitHub Actions job, the day it runs), its JSON and exit code agree, `--dump`
//! writes the test process's raw buffers with nothing of the caller's environment in them, and
//! a state folder Pier cannot use makes it exit 1 naming that check. Each run has its own
//! state and config folders; the only processes signalled are the doctor's own children.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A variable the caller has and the test process must not.
const SECRET: &str = "PIER_TEST_SECRET_TOKEN";

fn doctor(state: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pier"))
        .arg("doctor")
        .args(args)
        .env("PIER_STATE_DIR", state)
        .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
        .env("NO_COLOR", "1")
        .env(SECRET, "hunter2-5f0c")
        .output()
        .expect("pier runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report:#}"))
}

#[test]
fn every_check_passes_here_and_the_exit_code_says_ready() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(&dir.path().join("state"), &["--json"]);
    let report = json(&out);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["schema"], 1);
    assert_eq!(report["ready"], true, "{report:#}");
    for c in report["checks"].as_array().unwrap() {
        assert_eq!(c["status"], "ok", "{c:#}");
    }
    // The checks a stop needs are all there, in order.
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for needed in [
        "state_folder",
        "listener",
        "connection",
        "argv",
        "cwd",
        "start_time",
        "environment",
        "activity",
        "stale_identity",
        "signal",
        "exit_wait",
    ] {
        assert!(names.contains(&needed), "{needed} in {names:?}");
        assert_eq!(check(&report, needed)["needed"], true);
    }
    assert_eq!(report["signalling"]["race_free"], true, "{report:#}");
    let expected = if cfg!(target_os = "linux") {
        "pidfd"
    } else {
        "audit_token"
    };
    assert_eq!(report["signalling"]["name"], expected);
}

#[test]
fn the_text_names_each_check_and_ends_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(&dir.path().join("state"), &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("  ok       signal  "), "{text}");
    assert!(
        text.trim_end()
            .ends_with("Ready: everything a stop needs works on this machine."),
        "{text}"
    );
}

#[test]
fn a_dump_holds_the_test_process_buffers_and_nothing_of_the_callers_environment() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    let out = doctor(
        &dir.path().join("state"),
        &["--json", "--dump", dump.to_str().unwrap()],
    );
    let report = json(&out);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["dump"], dump.to_str().unwrap());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dump.join("manifest.json")).unwrap()).unwrap();
    let started = &manifest["started_with"];
    assert_eq!(
        started["env"],
        serde_json::json!(["PATH=/usr/bin:/bin", "LANG=C", "PIER_DOCTOR=child"])
    );
    let buffers = manifest["buffers"].as_array().unwrap();
    assert!(!buffers.is_empty());
    let mut written = 0;
    for b in buffers {
        let Some(file) = b["file"].as_str() else {
            continue;
        };
        let bytes = std::fs::read(dump.join(file)).unwrap();
        assert_eq!(b["bytes"], bytes.len());
        let secret = SECRET.as_bytes();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret),
            "{file} holds the caller's environment"
        );
        written += 1;
    }
    // The argv buffer (Linux cmdline, macOS KERN_PROCARGS2) holds the child's command.
    let argv_file = if cfg!(target_os = "linux") {
        "proc-cmdline.bin"
    } else {
        "kern-procargs2.bin"
    };
    let argv = std::fs::read(dump.join(argv_file)).unwrap();
    assert!(
        argv.windows(12).any(|w| w == b"doctor-child"),
        "{argv_file}: {argv:?}"
    );
    assert!(written >= 3, "{manifest:#}");
}

#[test]
fn a_state_folder_pier_cannot_use_is_a_failed_needed_check_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be.
    let state = dir.path().join("state");
    std::fs::write(&state, "not a folder").unwrap();
    let out = doctor(&state, &["--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report["ready"], false);
    let c = check(&report, "state_folder");
    assert_eq!(
        (c["status"].as_str(), c["needed"].as_bool()),
        (Some("failed"), Some(true)),
        "{c:#}"
    );
    // The rest still ran: the probe and the signaller are judged on their own.
    assert_eq!(check(&report, "signal")["status"], "ok", "{report:#}");

    let text = doctor(&state, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Not ready: state_folder"), "{text}");
}
