//! `pier stop` against real processes on Linux. Fixtures are the test's own orphans in its own
//! temp folder; stops name their ids; clean-up signals only the test's processes by identity.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn id_of(sb: &Sandbox, server: &Value) -> String {
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(server)).expect("the fixture is found");
    r["id"].as_str().unwrap().to_owned()
}

/// `pier stop --json ID` with a short sample; returns (exit code, document).
fn stop(sb: &Sandbox, id: &str, extra: &[&str]) -> (i32, Value) {
    exit_and_json(&sb.pier_exact(&[&["stop", "--json", "--sample-ms", "100", id], extra].concat()))
}

fn outcome_of(result: &Value, pid: u32) -> String {
    result["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pid"] == pid)
        .unwrap_or_else(|| panic!("no outcome for {pid}: {result:#}"))["outcome"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn an_orphaned_sh_server_child_tree_is_stopped_leaf_to_root_with_a_private_snapshot() {
    if fixtures_cannot_be_orphans("stop tree") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--child"], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let sh = server["ppid"].as_u64().unwrap() as u32;
    let child = server["children"][0].as_u64().unwrap() as u32;
    let id = id_of(&sb, &server);

    let (code, doc) = stop(&sb, &id, &[]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "stopped", "{doc:#}");
    assert_eq!(code, 0);
    assert_eq!(outcome_of(r, child), "stopped");
    assert_eq!(outcome_of(r, pid(&server)), "stopped");
    assert_eq!(
        outcome_of(r, sh),
        "exited",
        "sh ends on its own when its child does"
    );
    // Leaf to root: the child's line comes before its parent's.
    let order: Vec<u64> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(
        order,
        vec![u64::from(child), u64::from(pid(&server)), u64::from(sh)]
    );
    wait_for("the port to be free", || {
        TcpStream::connect(("127.0.0.1", port))
            .is_err()
            .then_some(())
    });

    let name = r["snapshot"].as_str().unwrap();
    let path = sb.path().join("state/records").join(format!("{name}.json"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "snapshots hold environments");
    let snap: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(snap["result"], "stopped");
    assert_eq!(snap["signalled"], true);
    assert_eq!(snap["members"].as_array().unwrap().len(), 3);
    assert_eq!(snap["members"][0]["argv"][0], "sh");
    assert!(snap["members"][0]["env"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
    assert!(snap["boot_id"].as_str().is_some_and(|b| !b.is_empty()));
}

/// A stop says about how much it freed: the memory its members held as its re-diagnosis read
/// it, which the snapshot records before the first signal.
#[test]
fn a_stop_of_a_server_holding_50_mib_says_it_freed_about_that_much() {
    if fixtures_cannot_be_orphans("stop freed") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--hold-mb", "50"], |_| true);
    let id = id_of(&sb, &server);
    let (code, doc) = stop(&sb, &id, &[]);
    let r = &doc["results"][0];
    assert_eq!(
        (code, &r["result"]),
        (0, &Value::from("stopped")),
        "{doc:#}"
    );
    assert_eq!(r["freed"]["kind"], "proportional", "{r:#}");
    let freed = r["freed"]["bytes"].as_u64().unwrap();
    assert!(freed >= 50 << 20, "{r:#}");
    let name = r["snapshot"].as_str().unwrap();
    let record = sb.path().join(format!("state/records/{name}.json"));
    let snap: Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    let recorded: u64 = snap["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["memory"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(recorded, freed, "every member ended: {snap:#}");
}

#[test]
fn a_server_that_ignores_sigterm_ends_still_running_and_is_never_killed() {
    if fixtures_cannot_be_orphans("stop ignore-term") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--ignore-term"], |_| true);
    let id = id_of(&sb, &server);
    let (code, doc) = stop(&sb, &id, &["--grace", "0.5"]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "partially_stopped", "{doc:#}");
    assert_eq!(code, 3);
    assert_eq!(outcome_of(r, pid(&server)), "still_running");
    assert!(alive(pid(&server)), "no automatic SIGKILL");
}

/// Found by trying uvicorn `--reload`: Python's `multiprocessing.resource_tracker` ignores
/// SIGTERM, outlives its grace, and ends as soon as its parent is signalled. The stop said
/// `still_running` / `partially_stopped` although nothing ran, and restart was refused forever.
#[test]
fn a_helper_that_outlives_its_grace_and_ends_with_its_parent_is_stopped_and_the_stop_complete() {
    if fixtures_cannot_be_orphans("stop tracker") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--tracker"], |_| true);
    let tracker = server["children"][0].as_u64().unwrap() as u32;
    let id = id_of(&sb, &server);
    let (code, doc) = stop(&sb, &id, &["--grace", "0.5"]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "stopped", "{doc:#}");
    assert_eq!(code, 0);
    assert_eq!(outcome_of(r, tracker), "stopped");
    let detail = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pid"] == tracker)
        .unwrap()["detail"]
        .clone();
    assert_eq!(
        detail, "outlived its grace, exited after its parent was signalled",
        "{r:#}"
    );
    assert!(!alive(tracker) && !alive(pid(&server)));
}

/// Found by trying uvicorn `--workers 2`: the supervisor respawns the worker Pier signalled;
/// the new worker served the port for seconds and was never named in the report.
#[test]
fn a_worker_respawned_during_the_stop_is_named_never_signalled_and_the_stop_partial() {
    if fixtures_cannot_be_orphans("stop respawn") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--respawn"], |_| true);
    let id = id_of(&sb, &server);
    let (code, doc) = stop(&sb, &id, &["--grace", "0.5"]);
    // The replacement, as the supervisor itself recorded it.
    let report = sb.report("app", |r| {
        r["respawned"].as_array().is_some_and(|a| !a.is_empty())
    });
    let (new_pid, new_start) = (
        report["respawned"][0][0].as_u64().unwrap() as u32,
        report["respawned"][0][1].as_u64().unwrap(),
    );
    sb.own(Started {
        pid: new_pid,
        start_time: new_start,
    });
    let r = &doc["results"][0];
    assert_eq!(r["result"], "partially_stopped", "{doc:#}");
    assert_eq!(code, 3);
    let newcomers = r["newcomers"].as_array().unwrap();
    assert_eq!(newcomers.len(), 1, "{r:#}");
    let n = &newcomers[0];
    assert_eq!(
        (n["pid"].as_u64(), n["start_time"].as_u64()),
        (Some(u64::from(new_pid)), Some(new_start))
    );
    // Seen under its parent before the parent's signal, or (if it came later than that look)
    // on the listener it shares, at the last look.
    let how = n["how"].as_str().unwrap();
    if how.starts_with("child of") {
        assert_eq!(how, format!("child of member pid {}", pid(&server)));
        assert_eq!(n["parent"], pid(&server));
    } else {
        assert!(how.starts_with("listens on 127.0.0.1:"), "{n:#}");
    }
    assert_eq!(n["fate"], "still_running");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {new_pid} ({how}")),
        "{r:#}"
    );
    assert!(alive(new_pid), "a newcomer is never signalled");
}

/// Found in CI with uvicorn `--workers 2`: a child born and gone within one wait (a respawned
/// worker its supervisor ended again as it shut down) was never in the report, since Pier
/// looked only before each level and at the end. The tracker holds the leaf level's wait open
/// for its whole grace; the child is born after the worker's signal and gone long before the
/// next look, so only a glance during the wait sees it.
#[test]
fn a_child_born_and_gone_within_a_wait_is_named_with_its_parent_and_fate() {
    if fixtures_cannot_be_orphans("stop flicker") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--tracker", "--flicker"], |_| true);
    let id = id_of(&sb, &server);
    let (code, doc) = stop(&sb, &id, &["--grace", "2"]);
    let report = sb.report("app", |r| {
        r["flickered"].as_array().is_some_and(|a| !a.is_empty())
    });
    let (brief, brief_start) = (
        report["flickered"][0][0].as_u64().unwrap(),
        report["flickered"][0][1].as_u64().unwrap(),
    );
    let r = &doc["results"][0];
    assert_eq!(r["result"], "stopped", "{doc:#}");
    assert_eq!(code, 0);
    let newcomers = r["newcomers"].as_array().expect("a newcomers list");
    let n = newcomers
        .iter()
        .find(|n| n["pid"] == brief && n["start_time"] == brief_start)
        .unwrap_or_else(|| panic!("pid {brief}, born and gone in the wait, is not named: {r:#}"));
    assert_eq!(
        n["how"],
        format!("child of member pid {}", pid(&server)),
        "{n:#}"
    );
    assert_eq!(n["parent"], pid(&server), "{n:#}");
    assert_eq!(n["fate"], "exited", "{n:#}");
    assert!(!alive(pid(&server)));
}

#[test]
fn a_client_that_connects_after_the_scan_gets_the_stop_refused() {
    if fixtures_cannot_be_orphans("stop refused") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let id = id_of(&sb, &server);
    let _client =
        TcpStream::connect(("127.0.0.1", server["port"].as_u64().unwrap() as u16)).unwrap();
    let (code, doc) = stop(&sb, &id, &[]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "refused", "{doc:#}");
    assert_eq!(code, 3);
    assert!(
        r["reason"].as_str().unwrap().contains("live connection"),
        "{r:#}"
    );
    assert!(alive(pid(&server)), "the server still runs");
}

#[test]
fn two_stops_of_one_resource_at_once_signal_it_once_and_both_say_so() {
    if fixtures_cannot_be_orphans("stop twice") {
        return;
    }
    let sb = Sandbox::new();
    let log = sb.path().join("terms.log");
    let log_arg = format!("'{}'", log.display());
    let server = sb.start_vite("app", &["--term-log", &log_arg], |_| true);
    let id = id_of(&sb, &server);
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_pier"))
            .args(["stop", "--json", "--sample-ms", "100", "--grace", "2", &id])
            .env("PIER_STATE_DIR", sb.path().join("state"))
            .env("PIER_CONFIG_DIR", sb.path().join("config"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let docs: Vec<Value> = [a, b]
        .into_iter()
        .map(|c| serde_json::from_slice(&c.wait_with_output().unwrap().stdout).unwrap())
        .collect();
    let mut results: Vec<String> = docs
        .iter()
        .map(|d| d["results"][0]["result"].as_str().unwrap().to_owned())
        .collect();
    results.sort();
    assert_eq!(results, vec!["refused", "stopped"], "{docs:#?}");
    let terms = std::fs::read_to_string(&log).unwrap();
    assert_eq!(terms.lines().count(), 1, "one SIGTERM, not two: {terms}");
    // Repeated SIGTERMs can merge into one delivery, so count the senders too: exactly one
    // stop sent anything.
    let senders = docs
        .iter()
        .filter(|d| !d["results"][0]["timings"].is_null())
        .count();
    assert_eq!(senders, 1, "{docs:#?}");
}

#[test]
fn a_newcomer_that_took_the_scanned_servers_pid_is_never_signalled() {
    if needs_root("stop pid reuse") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    sb.spawn_orphan(&project, &[VITE, "--report", report.to_str().unwrap()]);
    let server = sb.report("app", |_| true);
    let id = id_of(&sb, &server);
    let old = Started {
        pid: pid(&server),
        start_time: server["start_time"].as_u64().unwrap(),
    };
    kill_by_identity(old);
    wait_for("the scanned server to be reaped", || {
        (!std::path::Path::new(&format!("/proc/{}", old.pid)).exists()).then_some(())
    });
    let newcomer = (0..20).find_map(|_| {
        std::fs::write("/proc/sys/kernel/ns_last_pid", (old.pid - 1).to_string()).ok()?;
        let mut child = Command::new("sleep").arg("600").spawn().unwrap();
        if child.id() == old.pid {
            Some(child)
        } else {
            child.kill().ok();
            child.wait().ok();
            None
        }
    });
    let mut newcomer = newcomer.expect("root can steer the next pid");
    let (code, doc) = stop(&sb, &id, &[]);
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
    assert_eq!(code, 3);
    assert!(
        newcomer.try_wait().unwrap().is_none(),
        "the newcomer still runs"
    );
    newcomer.kill().unwrap();
    newcomer.wait().unwrap();
}

#[test]
fn a_damaged_record_is_reported_and_left_as_it_is() {
    let sb = Sandbox::new();
    let records = sb.path().join("state/records");
    std::fs::create_dir_all(&records).unwrap();
    let bad = records.join("snap-1-1-1.json");
    std::fs::write(&bad, b"{ not json").unwrap();
    let out = sb.pier_exact(&["stop", "--json", "1-1"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "refused");
    let damaged = doc["damaged_records"].as_array().unwrap();
    assert_eq!(damaged.len(), 1, "{doc:#}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept as it is"));
    assert_eq!(std::fs::read(&bad).unwrap(), b"{ not json");
}

#[test]
fn a_stop_waits_for_the_lock_another_stop_of_the_same_resource_holds() {
    if fixtures_cannot_be_orphans("stop lock") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let id = id_of(&sb, &server);
    // This test plays the other stop: it holds the resource's lock.
    let store = pier_core::store::Store::open_at(sb.path().join("state")).unwrap();
    let lock = store.lock(&format!("stop-{id}")).unwrap();
    let lock_file = sb.path().join(format!("state/locks/stop-{id}.lock"));
    let inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&lock_file).unwrap());
    let child = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["stop", "--json", "--sample-ms", "100", &id])
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The waiting stop holds the lock file open and sleeps between tries (a blocking `flock`
    // could not be interrupted), with no snapshot written: it is waiting, not signalling.
    let records = sb.path().join("state/records");
    wait_for("the second stop to wait on the lock", || {
        waits_on_lock(child.id(), inode, &records).then_some(())
    });
    assert!(
        alive(pid(&server)),
        "nothing is signalled while the lock is held"
    );
    drop(lock);
    let out = child.wait_with_output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");
}
