//! A container engine's client inside a dev tool's tree is never signalled (docs/design.md
//! §2.8): `docker run` attached stands for its container, and a SIGTERM to it would stop the
//! container — and with `--rm` remove it — outside the container rules. Real processes: the
//! vite fixture listening beside `docker run --rm …` in one orphaned `sh -c` tree, in a
//! project of the test's temp folder; scans are scoped to it (`--under`).
//!
//! The client is, always, a stand-in: a copy of this machine's Python installed as `docker` in
//! the test's folder and run as `docker run --rm -p 8080:80 img` — its argv is all the rule
//! reads, and its program is the test's own (a copy of `sleep` would refuse those words;
//! Python takes `run` as its script, a file in the project that waits for a signal, which it
//! would die of). Beside a test daemon (`scripts/docker.sh cargo test --test
//! engine_client_linux`, `PIER_DOCKER_HOST`) it is also the real Docker CLI running a real
//! container; without one that case says it skips.
//!
//! Each stop is checked by what it did not do: the client runs afterwards with the identity it
//! had (pid and start time), as does every other member.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

/// Installs the stand-in client: `<sandbox>/bin/docker`, a copy of this machine's Python, and
/// the script it takes for `run` in `project` (it waits for a signal; its lifetime is capped,
/// as the fixtures' are). Returns the program's path.
fn install_stand_in(sb: &Sandbox, project: &Path) -> String {
    let bin = sb.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let docker = bin.join("docker");
    fs::copy(fs::canonicalize(python()).unwrap(), &docker).unwrap();
    fs::write(
        project.join("run"),
        "import signal\nsignal.alarm(600)\nsignal.pause()\n",
    )
    .unwrap();
    docker.display().to_string()
}

/// The child of `parent` whose kernel name is `comm`, found in `/proc`.
fn child_named(parent: u32, comm: &str) -> Option<Started> {
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let name = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        (ppid_of(pid) == Some(parent) && name.trim_end() == comm).then_some(Started {
            pid,
            start_time: start_time_of(pid)?,
        })
    })
}

/// Starts `sh -c '<client> & ./node_modules/.bin/vite …; true'` as an orphan in a new project
/// `name` (made by `project`, which may install more), and returns the vite fixture's report
/// and the client (`sh`'s child named `docker`), each registered for clean-up.
fn start_tree(sb: &Sandbox, name: &str, client: impl FnOnce(&Path) -> String) -> (Value, Started) {
    let project = sb.project(name, VITE);
    let client = client(&project);
    let report = sb.report_path(name);
    let cmd = format!("{client} & ./{VITE} --report '{}'; true", report.display());
    sb.spawn_orphan(&project, &["sh", "-c", &cmd]);
    let vite = sb.report(name, |_| true);
    sb.own_parent(&vite);
    let sh = vite["ppid"].as_u64().unwrap() as u32;
    let docker = wait_for("the client to run", || child_named(sh, "docker"));
    sb.own(docker);
    (vite, docker)
}

/// Whether `p` still runs as the process it was.
fn still_runs(p: Started) -> bool {
    alive(p.pid) && start_time_of(p.pid) == Some(p.start_time)
}

/// The evidence of `kind` in a scan's resource.
fn evidence_value<'r>(r: &'r Value, kind: &str) -> Option<&'r Value> {
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind)
}

/// `pier stop --json ID` (and `extra`): the one resource's result.
fn stop(sb: &Sandbox, id: &str, extra: &[&str]) -> Value {
    let args = [&["stop", "--json", "--sample-ms", "100", id][..], extra].concat();
    let (_, doc) = exit_and_json(&sb.pier_exact(&args));
    doc["results"][0].clone()
}

/// The scan shows the client, not green, with the engine's command; `pier stop` and `pier stop
/// --force` are refused, and every member — the client first — runs on as itself.
fn check_never_signalled(
    sb: &Sandbox,
    vite: &Value,
    client: Started,
    command: &str,
    stop_cmd: &str,
) {
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, client.pid).expect("the client is a member of the tree");
    assert!(
        resource_with(&scan, pid(vite)).is_some_and(|(_, v)| v["id"] == r["id"]),
        "the client and the listener are one resource: {r:#}"
    );
    assert_ne!(r["level"], "green", "{r:#}");
    let e =
        evidence_value(&r, "engine_client").unwrap_or_else(|| panic!("no engine_client: {r:#}"));
    assert_eq!(e["level"], "yellow", "{e:#}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "pid {} ({command}) is a container engine's client: it stands for its container, \
             which Pier stops only through the engine",
            client.pid
        )),
        "{message}"
    );
    assert!(message.ends_with(&format!("`{stop_cmd}`")), "{message}");
    let members: Vec<Started> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| Started {
            pid: m["pid"].as_u64().unwrap() as u32,
            start_time: m["start_time"].as_u64().unwrap(),
        })
        .collect();
    let id = r["id"].as_str().unwrap();

    for extra in [&[][..], &common::ANYWAY_ALL[..]] {
        let result = stop(sb, id, extra);
        assert_eq!(result["result"], "refused", "{extra:?}: {result:#}");
        let reason = result["reason"].as_str().unwrap();
        assert!(
            reason.contains("container engine's client"),
            "{extra:?}: {reason}"
        );
        assert!(still_runs(client), "{extra:?}: the client was signalled");
        for m in &members {
            assert!(still_runs(*m), "{extra:?}: member {} was signalled", m.pid);
        }
    }
}

#[test]
fn a_docker_run_attached_in_a_dev_tree_makes_it_yellow_and_is_never_signalled_force_included() {
    if fixtures_cannot_be_orphans("engine client") {
        return;
    }
    let sb = Sandbox::new();
    let (vite, client) = start_tree(&sb, "app", |project| {
        format!(
            "'{}' run --rm -p 8080:80 img",
            install_stand_in(&sb, project)
        )
    });
    check_never_signalled(
        &sb,
        &vite,
        client,
        "docker run --rm -p 8080:80 img",
        "docker stop <container>",
    );
}

/// The Compose form, by the same stand-in: `docker compose -f dev.yml up` stands for the
/// project's containers, and names Compose's own stop.
#[test]
fn a_docker_compose_up_in_a_dev_tree_is_never_signalled() {
    if fixtures_cannot_be_orphans("engine client") {
        return;
    }
    let sb = Sandbox::new();
    let (_, client) = start_tree(&sb, "app", |project| {
        let docker = install_stand_in(&sb, project);
        // Python takes `compose` as its script here.
        fs::copy(project.join("run"), project.join("compose")).unwrap();
        format!("'{docker}' compose -f dev.yml up")
    });
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, client.pid).expect("the client is a member of the tree");
    let e =
        evidence_value(&r, "engine_client").unwrap_or_else(|| panic!("no engine_client: {r:#}"));
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("it stands for its Compose project's containers")
            && message.ends_with("`docker compose -f dev.yml stop`"),
        "{message}"
    );
    let id = r["id"].as_str().unwrap();
    let result = stop(&sb, id, &common::ANYWAY_ALL);
    assert_eq!(result["result"], "refused", "{result:#}");
    assert!(still_runs(client), "the client was signalled");
}

/// A detached `docker run -d` stands for nothing once it returns; while it runs it is no
/// client, so the tree stays what the rest of it is — here green, as the vite fixture alone.
#[test]
fn a_detached_docker_run_is_no_engine_client() {
    if fixtures_cannot_be_orphans("engine client") {
        return;
    }
    let sb = Sandbox::new();
    let (vite, client) = start_tree(&sb, "app", |project| {
        format!("'{}' run -d img", install_stand_in(&sb, project))
    });
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, client.pid).expect("the client is a member of the tree");
    assert!(evidence_value(&r, "engine_client").is_none(), "{r:#}");
    assert!(resource_with(&scan, pid(&vite)).is_some());
    assert_eq!(r["level"], "green", "{r:#}");
}

/// The test daemon's host, or `None` (said) without one.
fn daemon(test: &str) -> Option<String> {
    match std::env::var("PIER_DOCKER_HOST") {
        Ok(host) if !host.is_empty() => Some(host),
        _ => {
            eprintln!("{test}: skipped, no test Docker daemon (run through scripts/docker.sh)");
            None
        }
    }
}

/// A container of the test's, removed when dropped.
struct Removed {
    host: String,
    name: String,
}

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["-H", &self.host, "rm", "-f", &self.name])
            .output();
    }
}

fn running(host: &str, name: &str) -> bool {
    Command::new("docker")
        .args(["-H", host, "inspect", "-f", "{{.State.Running}}", name])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
}

/// The real Docker CLI, attached to a real container (busybox httpd, `--rm`, a published
/// port), beside the listener: the same refusals, and the container still runs after them.
#[test]
fn a_real_docker_run_attached_in_a_dev_tree_is_never_signalled_and_its_container_runs_on() {
    let Some(host) = daemon("real engine client") else {
        return;
    };
    if fixtures_cannot_be_orphans("real engine client") {
        return;
    }
    let sb = Sandbox::new();
    let name = format!("pier-t-client-{}", std::process::id());
    let _container = Removed {
        host: host.clone(),
        name: name.clone(),
    };
    let port = free_port();
    let (vite, client) = start_tree(&sb, "app", |_| {
        format!(
            "docker -H '{host}' run --rm --name {name} -p 127.0.0.1:{port}:8080 \
             pier-busybox:test busybox httpd -f -p 8080 -h /"
        )
    });
    wait_for_within("the container to run", Duration::from_secs(60), || {
        running(&host, &name).then_some(())
    });
    let command = format!(
        "docker -H {host} run --rm --name {name} -p 127.0.0.1:{port}:8080 pier-busybox:test \
         busybox httpd -f -p 8080 -h /"
    );
    // As the evidence shows it: cut at 60 characters.
    let shown: String = command.chars().take(60).collect();
    let shown = if command.chars().count() > 60 {
        format!("{}…", shown.trim_end())
    } else {
        command
    };
    check_never_signalled(
        &sb,
        &vite,
        client,
        &shown,
        &format!("docker -H {host} stop {name}"),
    );
    assert!(running(&host, &name), "the container was stopped");
}
