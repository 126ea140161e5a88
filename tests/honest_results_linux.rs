//! Results never contradict (issue 40), against real processes on Linux: a server that ignores
//! SIGTERM is `not_stopped`, never "partially stopped"; a stop refused by its own activity
//! sample says so on every line (`pier stop :PORT`, `--all-green`) and its record keeps no
//! environment; a stop that left a slow server shutting down is read as stopped, and restarted,
//! once it is gone. Fixtures are the test's own orphans in its own temp folder; clean-up
//! signals only the test's processes, by identity.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(out), String::from_utf8_lossy(&out.stderr)))
}

/// The fixture run directly (no `sh` above it) as `node_modules/.bin/vite` in a new project
/// `name`, an orphan with `extra` arguments: a resource of one process. Its report, with the
/// process registered for clean-up.
fn start_alone(sb: &Sandbox, name: &str, extra: &[&str]) -> Value {
    let project = sb.project(name, VITE);
    let report = sb.report_path(name);
    let program = format!("./{VITE}");
    let argv = [
        &[program.as_str(), "--report", report.to_str().unwrap()],
        extra,
    ]
    .concat();
    sb.spawn_orphan(&project, &argv);
    sb.report(name, |_| true)
}

/// Its id, from a scan with no sample (as the stop's own selection sees it).
fn id_of(sb: &Sandbox, server: &Value) -> String {
    let scan = json(&sb.pier(&["scan", "--json", "--sample-ms", "0"]));
    let (_, r) = resource_with(&scan, pid(server)).expect("the fixture is found");
    r["id"].as_str().unwrap().to_owned()
}

fn record(sb: &Sandbox, name: &str) -> Value {
    let path = sb.path().join(format!("state/records/{name}.json"));
    serde_json::from_slice(&std::fs::read(Path::new(&path)).unwrap()).unwrap()
}

#[test]
fn a_server_that_ignores_sigterm_is_not_stopped_never_partially_stopped() {
    if fixtures_cannot_be_orphans("not stopped") {
        return;
    }
    let sb = Sandbox::new();
    let server = start_alone(&sb, "app", &["--ignore-term"]);
    let id = id_of(&sb, &server);
    let args = ["stop", "--json", "--sample-ms", "100", "--grace", "1", &id];
    let (code, doc) = exit_and_json(&sb.pier_exact(&args));
    let r = &doc["results"][0];
    assert_eq!(r["result"], "not_stopped", "{doc:#}");
    assert_eq!(
        code, 3,
        "as any stop that did not stop what it was asked to"
    );
    assert_eq!(r["members"][0]["outcome"], "still_running", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("pid {} (", pid(&server)))
            && reason.ends_with(
                "still runs after SIGTERM; wait and look again, or stop it where it runs"
            ),
        "{reason}"
    );
    assert!(alive(pid(&server)));

    // In words: never "partially".
    let out = sb.pier_exact(&["stop", "--sample-ms", "100", "--grace", "1", &id]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3));
    assert!(shown.contains("  NOT STOPPED  "), "{shown}");
    assert!(!shown.to_lowercase().contains("partially"), "{shown}");

    let h = json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(entry["result"], "not_stopped", "{entry:#}");
    assert_eq!(entry["restartable"], false, "{entry:#}");
    assert!(
        alive(pid(&server)),
        "the test kills its own fixture at the end"
    );
}

/// `pier stop :PORT` and `--all-green` choose from a scan without the activity sample; the
/// stop's own check (b) finds the server busy. No line may call it green or safe to stop, and
/// the record of that attempt, which sent nothing, keeps no environment.
#[test]
fn a_busy_server_asked_by_its_port_is_refused_on_every_line_and_its_record_keeps_no_environment() {
    if fixtures_cannot_be_orphans("busy by port") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--busy"], |_| true);
    let at = format!(":{}", server["port"]);

    // By default one line: the refusal, its reason and its next step (issue 41).
    let out = sb.pier_exact(&["stop", "--sample-ms", "100", &at]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(
        shown.contains("  REFUSED  vite in ") && shown.contains("`pier stop --anyway "),
        "{shown}"
    );
    assert!(
        !shown.contains("green") && !shown.contains("safely"),
        "{shown}"
    );

    let out = sb.pier_exact(&["stop", "-v", "--sample-ms", "100", &at]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(!shown.contains("green"), "{shown}");
    assert!(!shown.contains("safely"), "{shown}");
    let first = shown.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{at}  vite (pid "))
            && first.ends_with("stopping it, if the stop's own checks pass"),
        "{shown}"
    );
    assert!(
        shown.contains("  REFUSED  ") && shown.contains(": busy over 100 ms: "),
        "{shown}"
    );
    assert!(shown.ends_with("\n0 of 1 stopped (1 refused)\n"), "{shown}");

    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &at]));
    assert_eq!(code, 3);
    let reason = doc["ports"][0]["reason"].as_str().unwrap();
    assert!(
        !reason.contains("green") && !reason.contains("safely"),
        "{doc:#}"
    );
    let r = &doc["results"][0];
    assert_eq!(
        (&r["result"], &r["checkpoint"]),
        (&Value::from("refused"), &Value::from("b")),
        "{doc:#}"
    );

    // The record of an attempt that sent nothing keeps no environment.
    let snap = record(&sb, r["snapshot"].as_str().unwrap());
    assert_eq!(snap["signalled"], false, "{snap:#}");
    let members = snap["members"].as_array().unwrap();
    assert!(!members.is_empty());
    assert!(members.iter().all(|m| m["env"].is_null()), "{snap:#}");

    // `--all-green` says what the stop's checks found, not what its selection's scan did.
    let out = sb.pier(&["stop", "-v", "--all-green", "--sample-ms", "100"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(shown.ends_with("\n0 of 1 stopped (1 refused)\n"), "{shown}");
    assert!(alive(pid(&server)));
}

/// The case: a server that takes 4 s to shut down, stopped with a grace of 1 s, is not
/// stopped when the stop ends; once it is gone, its record reads as stopped, says it was
/// reconciled, and restarts it.
#[test]
fn a_slow_server_not_stopped_in_its_grace_is_read_as_stopped_and_restarted_once_it_is_gone() {
    if fixtures_cannot_be_orphans("reconciled later") {
        return;
    }
    let sb = Sandbox::new();
    let port = free_port().to_string();
    let server = start_alone(&sb, "app", &["--port", &port, "--slow-term", "4"]);
    let id = id_of(&sb, &server);
    let args = ["stop", "--json", "--sample-ms", "100", "--grace", "1", &id];
    let (code, doc) = exit_and_json(&sb.pier_exact(&args));
    let r = &doc["results"][0];
    assert!(
        ["not_stopped", "partially_stopped"].contains(&r["result"].as_str().unwrap()),
        "still shutting down when the stop ended: {doc:#}"
    );
    assert_eq!(code, 3);
    let name = r["snapshot"].as_str().unwrap().to_owned();
    let h = json(&sb.pier_exact(&["history", "--json"]));
    if alive(pid(&server)) {
        assert_eq!(h["snapshots"][0]["restartable"], false, "{h:#}");
    }

    wait_for("the slow server to finish its shutdown", || {
        (!alive(pid(&server))).then_some(())
    });
    let h = json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(entry["snapshot"], name.as_str());
    assert_eq!(entry["result"], "stopped", "{entry:#}");
    assert!(entry["reconciled_at"].is_string(), "{entry:#}");
    let reason = entry["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "read again, every member and newcomer is gone and the project's rescan is clean"
        ),
        "{reason}"
    );
    assert_eq!(entry["restartable"], true, "{entry:#}");
    let on_disk = record(&sb, &name);
    assert_eq!(on_disk["result"], "stopped", "written, not only shown");
    assert!(
        on_disk["members"][0]["env"].is_array(),
        "kept for the restart"
    );

    let out = sb.pier_exact(&["restart", "--json", "--wait", "10", &name]);
    let (code, restarted) = exit_and_json(&out);
    assert_eq!(restarted["result"], "ready", "{restarted:#}");
    assert_eq!(code, 0);
    sb.own(Started {
        pid: restarted["pid"].as_u64().unwrap() as u32,
        start_time: restarted["start_time"].as_u64().unwrap(),
    });
    let again = sb.report("app", |r| {
        r["pid"].as_u64() != Some(u64::from(pid(&server)))
    });
    assert_eq!(again["argv"], server["argv"]);
}

/// The case: Ctrl-C reaches `pier stop` while it waits out the grace of a server that
/// takes 4 s to shut down. The stop says it was interrupted and is not `stopped`; once the
/// server has finished, the record reads as stopped, reconciled, and can be restarted.
#[test]
fn a_stop_interrupted_in_its_grace_wait_reads_as_stopped_once_the_server_has_finished() {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    if fixtures_cannot_be_orphans("interrupted in its grace") {
        return;
    }
    let sb = Sandbox::new();
    let log = sb.path().join("term.log");
    let server = start_alone(
        &sb,
        "app",
        &["--slow-term", "4", "--term-log", log.to_str().unwrap()],
    );
    let id = id_of(&sb, &server);
    let stop = std::process::Command::new(pier_bin())
        .args(["stop", "--json", "--grace", "20", &id])
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the server's SIGTERM", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains("TERM"))
    });
    // Ctrl-C to our own child, unreaped, through a pidfd: it can be no other process.
    let child = Pid::from_raw(stop.id() as i32).unwrap();
    let fd = pidfd_open(child, PidfdFlags::empty()).unwrap();
    pidfd_send_signal(&fd, Signal::INT).unwrap();
    let out = stop.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let r = &json(&out)["results"][0];
    assert_eq!(r["interrupted"], "SIGINT", "{r:#}");
    assert_ne!(r["result"], "stopped", "{r:#}");
    wait_for("the slow server to finish its shutdown", || {
        (!alive(pid(&server))).then_some(())
    });
    let h = json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(entry["result"], "stopped", "{entry:#}");
    assert!(entry["reconciled_at"].is_string(), "{entry:#}");
    assert_eq!(entry["restartable"], true, "{entry:#}");
}

/// The rescan that lets a stop read as stopped later must be clean: the same command running
/// in the project again (started by anyone) keeps the record as it was.
#[test]
fn a_stop_whose_command_runs_again_in_the_project_is_not_read_as_stopped() {
    if fixtures_cannot_be_orphans("reconciled twin") {
        return;
    }
    let sb = Sandbox::new();
    let port = free_port().to_string();
    let server = start_alone(&sb, "app", &["--port", &port, "--slow-term", "2"]);
    let id = id_of(&sb, &server);
    let args = [
        "stop",
        "--json",
        "--sample-ms",
        "100",
        "--grace",
        "0.5",
        &id,
    ];
    let (_, doc) = exit_and_json(&sb.pier_exact(&args));
    let result = doc["results"][0]["result"].clone();
    assert_ne!(result, "stopped", "{doc:#}");
    wait_for("the slow server to finish its shutdown", || {
        (!alive(pid(&server))).then_some(())
    });
    // The same argv, in the project, started after the stop.
    let project = sb.path().join("app");
    let argv: Vec<String> = server["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    sb.spawn_orphan(&project, &argv);
    let twin = sb.report("app", |r| {
        r["pid"].as_u64() != Some(u64::from(pid(&server)))
    });

    let h = json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(entry["result"], result, "{entry:#}");
    assert!(entry["reconciled_at"].is_null(), "{entry:#}");
    assert_eq!(entry["restartable"], false, "{entry:#}");
    assert!(alive(pid(&twin)));
}
