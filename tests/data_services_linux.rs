//! Data services against real processes on Linux (docs/design.md §2, "Data services"): a server
//! that keeps a database open in its project, and a real `redis-server` when one is installed,
//! are yellow with `data_service` evidence, and neither `pier stop` nor `pier stop --anyway`
//! sends them anything. Fixtures are the test's own orphans in its own temp folder; clean-up
//! signals only the test's processes, by identity.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// `pier stop --json ID` (with `extra`); returns (exit code, the one result).
fn stop(sb: &Sandbox, id: &str, extra: &[&str]) -> (i32, Value) {
    let (code, doc) = exit_and_json(
        &sb.pier_exact(&[&["stop", "--json", "--sample-ms", "100", id], extra].concat()),
    );
    (code, doc["results"][0].clone())
}

/// Stops and forced stops of `id` are refused as a data service's, and `p` still runs as
/// itself: nothing was sent, and no snapshot was written.
fn refused_twice(sb: &Sandbox, id: &str, p: Started) {
    for extra in [&[][..], &common::ANYWAY_ALL[..]] {
        let (code, r) = stop(sb, id, extra);
        assert_eq!(r["result"], "refused", "{extra:?}: {r:#}");
        assert_eq!(code, 3, "{extra:?}");
        let reason = r["reason"].as_str().unwrap();
        assert!(reason.contains("data service"), "{extra:?}: {reason}");
        assert_eq!(
            start_time_of(p.pid),
            Some(p.start_time),
            "{extra:?}: it still runs as itself"
        );
        assert!(alive(p.pid), "{extra:?}: it was not killed");
    }
    let records = sb.path().join("state/records");
    let written = std::fs::read_dir(&records).map_or(0, |d| d.count());
    assert_eq!(written, 0, "no snapshot: the stop never began");
}

/// A project `name` under the sandbox with a `package.json`.
fn project(sb: &Sandbox, name: &str) -> std::path::PathBuf {
    let root = sb.path().join(name);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("package.json"), "{}\n").unwrap();
    root
}

/// The scanned resource holding `pid`, once its card shows `port` (a fresh process may be
/// scanned before it listens).
fn resource_listening(sb: &Sandbox, pid: u32, port: u16) -> Value {
    wait_for("the card with its port", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, pid)?;
        let ports = r["ports"].as_array()?;
        ports.iter().any(|p| p["port"] == port).then_some(r)
    })
}

#[test]
fn a_server_holding_its_database_open_in_the_project_is_a_data_service_never_stopped() {
    if fixtures_cannot_be_orphans("data service") {
        return;
    }
    let sb = Sandbox::new();
    let root = project(&sb, "shop");
    // Installed as a dev tool Pier knows: orphaned and idle, only its data argues against it.
    sb.install(&root.join(VITE), "dataserver.py");
    let report = sb.report_path("shop");
    let report_arg = report.to_string_lossy().into_owned();
    sb.spawn_orphan(&root, &[&format!("./{VITE}"), "--report", &report_arg]);
    let server = sb.report("shop", |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let data = server["data"].as_str().unwrap().to_owned();
    assert_eq!(Path::new(&data), root.join("data.db"));

    let r = resource_listening(&sb, pid(&server), port);
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert_eq!(r["kind"], "vite", "{r:#}");
    assert_eq!(against(&r), vec!["data_service"], "{r:#}");
    let (level, message) = evidence_of(&r, "data_service").unwrap();
    assert_eq!(level, "yellow");
    let expected = format!(
        "keeps its data in {} (it holds {data} open for writing); Pier never stops it",
        root.display()
    );
    assert!(message.contains(&expected), "{message}");

    let p = Started {
        pid: pid(&server),
        start_time: server["start_time"].as_u64().unwrap(),
    };
    refused_twice(&sb, r["id"].as_str().unwrap(), p);
    assert!(Path::new(&data).is_file());
}

#[test]
fn a_redis_server_run_in_the_project_is_known_by_name_and_named_with_its_own_shutdown() {
    let Some(redis) = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("redis: skipped, redis-server is not installed");
        return;
    };
    if fixtures_cannot_be_orphans("redis") {
        return;
    }
    let sb = Sandbox::new();
    let root = project(&sb, "cache");
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let port = free_port();
    let pidfile = sb.path().join("reports/redis.pid");
    let (port_arg, data_arg, pid_arg) = (
        port.to_string(),
        data.to_string_lossy().into_owned(),
        pidfile.to_string_lossy().into_owned(),
    );
    // No snapshots (`--save ''`): it holds no file, so only its name can tell.
    sb.spawn_orphan(
        &root,
        &[
            redis,
            "--port",
            &port_arg,
            "--bind",
            "127.0.0.1",
            "--dir",
            &data_arg,
            "--save",
            "",
            "--appendonly",
            "no",
            "--pidfile",
            &pid_arg,
        ],
    );
    let pid: u32 = wait_for("redis's pid file", || {
        std::fs::read_to_string(&pidfile).ok()?.trim().parse().ok()
    });
    let p = Started {
        pid,
        start_time: start_time_of(pid).expect("redis runs"),
    };
    sb.own(p);

    let r = resource_listening(&sb, pid, port);
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert_eq!(r["kind"], "redis-server", "a kind of its own: {r:#}");
    let (_, message) = evidence_of(&r, "data_service").expect("data_service evidence");
    let expected = format!(
        "data service: redis-server (pid {pid}) keeps its data in {}; Pier never stops it — \
         `redis-cli -p {port} shutdown` does",
        data.display()
    );
    assert_eq!(message, expected);

    refused_twice(&sb, r["id"].as_str().unwrap(), p);

    // The command the card names is the one that stops it.
    let cli = Path::new(redis).with_file_name("redis-cli");
    if cli.exists() {
        let out = Command::new(cli)
            .args(["-p", &port_arg, "shutdown"])
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success() || !alive(pid),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        wait_for("redis to shut down", || (!alive(pid)).then_some(()));
    }
}
