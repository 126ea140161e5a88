//! Batches against the real `pier stop` (docs/decisions.md, "Batches"): a resource whose lock
//! another stop holds is refused at once while the rest of the batch is stopped, and on a
//! terminal each resource's lines are printed as soon as it has ended, under a status line that
//! a pipe never sees.
#![cfg(target_os = "linux")]

mod common;

use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn runs(server: &Value) -> bool {
    start_time_of(pid(server)) == server["start_time"].as_u64() && alive(pid(server))
}

/// Waits, bounded by the kit's deadline, for `child` to end (killing it if it does not: a
/// batch that waited for a held lock would never end); its output.
fn ended(mut child: std::process::Child) -> std::process::Output {
    let end = std::time::Instant::now() + DEADLINE;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "pier stop did not end within {DEADLINE:?}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_resource_whose_lock_another_stop_holds_is_refused_at_once_and_the_rest_stopped() {
    if fixtures_cannot_be_orphans("batch lock held") {
        return;
    }
    let sb = Sandbox::new();
    let servers: Vec<Value> = ["a", "b", "c"]
        .iter()
        .map(|name| sb.start_vite(name, &[], |_| true))
        .collect();
    // Another stop of b runs: it holds b's lock (for as long as this test wants).
    let locks = sb.path().join("state/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let held =
        std::fs::File::create(locks.join(format!("stop-{}.lock", id_of(&servers[1])))).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let child = Command::new(pier_bin())
        .args([
            "stop",
            "--json",
            "--all-green",
            "--sample-ms",
            "50",
            "--under",
        ])
        .arg(sb.path())
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = ended(child);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    let result_of = |s: &Value| {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id_of(s))
            .unwrap_or_else(|| panic!("a result for {}: {doc:#}", id_of(s)))
            .clone()
    };
    let b = result_of(&servers[1]);
    assert_eq!(b["result"], "refused", "{doc:#}");
    assert_eq!(
        b["reason"],
        "its stop lock is held (by another stop of it, or by a read of its history settling its \
         last stop: `pier history`, `pier restart`, the app), so this batch left it alone: \
         nothing was sent"
    );
    assert!(runs(&servers[1]), "b was left to the other stop");
    for s in [&servers[0], &servers[2]] {
        assert_eq!(result_of(s)["result"], "stopped", "{doc:#}");
        assert!(!runs(s), "stopped");
    }
    assert_eq!(out.status.code(), Some(3), "not every resource was stopped");
    drop(held);
}

#[test]
fn on_a_terminal_each_resource_is_printed_as_it_ends_and_a_pipe_sees_no_status() {
    if fixtures_cannot_be_orphans("batch progress") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let stale = format!(
        "{}-{}",
        server["ppid"].as_u64().unwrap(),
        server["ppid_start_time"].as_u64().unwrap() + 1
    );
    let id = id_of(&server);
    let pier = pier_bin();
    let state = sb.path().join("state");

    // Piped: one answer at the end, in the order asked, and nothing on stderr but warnings.
    let piped = Command::new(&pier)
        .args(["stop", "--sample-ms", "50", &stale, &id])
        .env("PIER_STATE_DIR", &state)
        .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&piped.stdout);
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains('\x1b') && !stderr.contains("re-diagnosing"),
        "{stderr:?}"
    );
    let (refused, stopped) = (
        text.find(&format!("{stale}  REFUSED")),
        text.find(&format!("pier restart {id}\n")),
    );
    assert!(refused.is_some() && refused < stopped, "{text}");

    // On a terminal (`script` gives the stop a pty for stdout and stderr alike): the refusal is
    // printed as soon as it is final, before the batch goes on to its snapshots, under a
    // status line rewritten in place.
    let again = sb.start_vite("app2", &[], |_| true);
    let id = id_of(&again);
    let line = format!(
        "PIER_STATE_DIR='{}' PIER_CONFIG_DIR=/nonexistent/pier-test-config NO_COLOR=1 '{}' stop \
         --sample-ms 50 {stale} {id}",
        state.display(),
        pier.display()
    );
    let tty = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&tty.stdout);
    let at = |s: &str| seen.find(s).unwrap_or_else(|| panic!("{s:?} in {seen:?}"));
    let status = at("\r\x1b[Kpier: looking at each resource again (2 resources)…");
    let refusal = at(&format!("{stale}  REFUSED"));
    let snapshots = at("\r\x1b[Kpier: writing recovery snapshots (1 resource)…");
    let sampling = at("pier: sampling activity for 50 ms (1 resource)…");
    let stop = at(&format!("pier restart {id}"));
    let summary = at("1 of 2 stopped");
    assert!(
        status < refusal && refusal < snapshots && snapshots < sampling && sampling < stop,
        "{seen:?}"
    );
    assert!(stop < summary, "{seen:?}");
    assert!(!runs(&again));

    // Issue 41: a dry run's status line said "writing recovery snapshots…" and named the
    // checkpoints by letter. It writes nothing, and says so in plain words.
    let third = sb.start_vite("app3", &[], |_| true);
    let line = format!(
        "PIER_STATE_DIR='{}' PIER_CONFIG_DIR=/nonexistent/pier-test-config NO_COLOR=1 '{}' stop \
         --dry-run --sample-ms 50 {}",
        state.display(),
        pier.display(),
        id_of(&third)
    );
    let tty = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&tty.stdout);
    assert!(
        seen.contains("pier: reading each process as its recovery snapshot would"),
        "{seen:?}"
    );
    assert!(seen.contains("would stop vite in "), "{seen:?}");
    assert!(
        !seen.contains("writing") && !seen.contains("(a)") && !seen.contains("(e)"),
        "{seen:?}"
    );
    assert!(runs(&third), "a dry run sends nothing");
}
