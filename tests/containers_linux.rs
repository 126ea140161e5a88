//! Containers against a real Docker daemon (docs/design.md §2.8): Debian's dockerd, started by
//! `scripts/docker.sh` on a private socket (`PIER_DOCKER_HOST`), and busybox httpd in the
//! image imported from the busybox-static package. Each test runs its own containers, named
//! for it, labelled as Compose labels them with a working folder in the test's temp folder, so
//! every scan is scoped to that folder (`--under`); each removes its containers at the end.
//!
//! Run through the test command (`scripts/test.sh`), or alone, as root:
//! `scripts/docker.sh cargo test --test containers_linux`. Without `PIER_DOCKER_HOST` every
//! case skips with one line saying so.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{alive, free_port, start_time_of, wait_for, Sandbox};
use serde_json::Value;

/// The test daemon, or `None` (said) when the tests run without one.
fn daemon(test: &str) -> Option<String> {
    match std::env::var("PIER_DOCKER_HOST") {
        Ok(host) if !host.is_empty() => Some(host),
        _ => {
            eprintln!("{test}: skipped, no test Docker daemon (run through scripts/docker.sh)");
            None
        }
    }
}

fn docker(host: &str, args: &[&str]) -> String {
    let out = Command::new("docker")
        .arg("-H")
        .arg(host)
        .args(args)
        .output()
        .expect("docker runs");
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A container of the test's, removed when dropped.
struct Running {
    host: String,
    name: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["-H", &self.host, "rm", "-f", &self.name])
            .output();
    }
}

/// Container `name` running `command` in the test image, published on 127.0.0.1:`port` → 8080,
/// as a Compose service of the project in `folder`; `extra`: more `docker run` options.
fn published(
    host: &str,
    name: &str,
    (folder, port): (&Path, u16),
    extra: &[&str],
    command: &[&str],
) -> Running {
    let publish = format!("127.0.0.1:{port}:8080");
    let dir = format!(
        "com.docker.compose.project.working_dir={}",
        folder.display()
    );
    let mut args = vec![
        "run",
        "-d",
        "--name",
        name,
        "--label",
        "com.docker.compose.project=pier-tests",
        "--label",
        "com.docker.compose.service=web",
        "--label",
        &dir,
        "-p",
        &publish,
    ];
    args.extend_from_slice(extra);
    args.push("pier-busybox:test");
    args.extend_from_slice(command);
    docker(host, &args);
    Running {
        host: host.to_owned(),
        name: name.to_owned(),
    }
}

/// busybox httpd as the container's first process (which ignores SIGTERM: PID 1 has no
/// default action for it), published on 127.0.0.1:`port`.
fn httpd(host: &str, name: &str, folder: &Path, port: u16, extra: &[&str]) -> Running {
    let command = ["busybox", "httpd", "-f", "-p", "8080"];
    published(host, name, (folder, port), extra, &command)
}

/// What each test starts from: the test daemon's host, a sandbox holding a project folder for
/// its containers, and a port that was free a moment ago.
struct World {
    host: String,
    sb: Sandbox,
    shop: PathBuf,
    port: u16,
}

/// The test's world, or `None` (said) without a test daemon.
fn world(test: &str) -> Option<World> {
    let host = daemon(test)?;
    let sb = Sandbox::new();
    let shop = project(&sb);
    Some(World {
        host,
        sb,
        shop,
        port: free_port(),
    })
}

/// A project folder for the containers, inside the sandbox.
fn project(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("shop");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("package.json"), "{}\n").unwrap();
    dir
}

/// `pier scan --json --sample-ms 0 --under <sandbox>` asking the test daemon, run by `as_user`
/// (`setpriv` options) when given.
fn scan(sb: &Sandbox, host: &str, extra: &[&str], as_user: Option<&[String]>) -> Value {
    let out = pier(
        sb,
        host,
        &[&["scan", "--json", "--sample-ms", "0"], extra].concat(),
        as_user,
    );
    assert!(
        out.status.success(),
        "pier scan: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn pier(sb: &Sandbox, host: &str, args: &[&str], as_user: Option<&[String]>) -> Output {
    let mut cmd = match as_user {
        Some(setpriv) => {
            let mut c = Command::new("setpriv");
            c.args(setpriv).arg("--").arg(common::pier_bin());
            c
        }
        None => Command::new(common::pier_bin()),
    };
    cmd.args(args)
        .arg("--under")
        .arg(sb.path())
        .env("DOCKER_HOST", host)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("NO_COLOR", "1")
        .output()
        .expect("pier runs")
}

/// The card of container `name`, with its project.
fn card(scan: &Value, name: &str) -> Option<(Value, Value)> {
    scan["projects"].as_array()?.iter().find_map(|p| {
        let c = p["containers"]
            .as_array()?
            .iter()
            .find(|c| c["name"] == name)?;
        Some((p.clone(), c.clone()))
    })
}

/// Scans (as root, scoped to the sandbox) until the card of `name` satisfies `until`, and
/// returns it.
fn card_when(
    sb: &Sandbox,
    host: &str,
    name: &str,
    what: &str,
    until: impl Fn(&Value) -> bool,
) -> Value {
    wait_for(what, || {
        let (_, c) = card(&scan(sb, host, &[], None), name)?;
        until(&c).then_some(c)
    })
}

/// The id of container `name`'s card, once it is green.
fn green_card_id(sb: &Sandbox, host: &str, name: &str) -> String {
    let c = card_when(sb, host, name, "a green card", |c| c["level"] == "green");
    c["id"].as_str().unwrap().to_owned()
}

fn live(card: &Value) -> Vec<String> {
    card["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "live_connection")
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

/// The docker-proxy holding 127.0.0.1:`port`, by its argv.
fn docker_proxy(port: u16) -> Option<u32> {
    let want = format!("-host-port\0{port}\0");
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let argv = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let text = String::from_utf8_lossy(&argv);
        (text.starts_with("/usr/sbin/docker-proxy\0") && text.contains(&want)).then_some(pid)
    })
}

#[test]
fn a_published_port_is_its_container_s_card_and_docker_proxy_no_resource_of_its_own() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("published port")
    else {
        return;
    };
    let _web = httpd(&host, "pier-t-published", &shop, port, &[]);
    let scan = wait_for("the container's card", || {
        let s = scan(&sb, &host, &["--all"], None);
        card(&s, "pier-t-published").map(|_| s)
    });
    let (place, c) = card(&scan, "pier-t-published").unwrap();
    assert_eq!(place["path"], shop.to_str().unwrap(), "{scan:#}");
    assert_eq!(c["image"], "pier-busybox:test");
    assert_eq!(c["engine"], "Docker");
    assert_eq!(c["compose_project"], "pier-tests");
    assert_eq!(c["compose_service"], "web");
    assert_eq!(c["ports"][0]["port"], port);
    assert_eq!(c["ports"][0]["address"], "127.0.0.1");
    assert_eq!(c["ports"][0]["container_port"], 8080);
    assert!(c["age_seconds"].as_u64().is_some(), "{c:#}");
    assert!(live(&c).is_empty(), "{c:#}");
    // No client, its namespace read, no restart policy, activity not sampled: green.
    assert_eq!(c["level"], "green", "{c:#}");
    let kinds: Vec<&str> = c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["container", "activity_not_sampled"], "{c:#}");
    assert_eq!(scan["engines"][0]["host"], host);
    assert!(scan["engines"][0]["error"].is_null(), "{scan:#}");

    // docker-proxy, asked for by its identity in a stop anyway: it is no resource, so the stop
    // is refused before anything is judged (that no signal ever touches an engine's process
    // inside a resource is `force_allowed`'s, pinned by the unit tests), and it still serves.
    let proxy = docker_proxy(port).expect("docker-proxy holds the published port");
    let id = format!("{proxy}-{}", start_time_of(proxy).unwrap());
    let mut args = vec!["stop", "--json", &id];
    args.extend(common::ANYWAY_ALL);
    let out = sb.pier_exact(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
    let reason = doc["results"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("no longer a candidate"), "{doc:#}");
    assert!(alive(proxy));
    let _served = TcpStream::connect(("127.0.0.1", port)).expect("the port still answers");
}

#[test]
fn a_client_of_the_published_port_makes_it_red_until_it_goes() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("client on the published port")
    else {
        return;
    };
    let _web = httpd(&host, "pier-t-client", &shop, port, &[]);
    card_when(&sb, &host, "pier-t-client", "the card", |_| true);
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let from = client.local_addr().unwrap();
    let me = std::process::id();
    let c = card_when(
        &sb,
        &host,
        "pier-t-client",
        "the client's connection",
        |c| c["level"] == "red",
    );
    // The client is this test's own process, named by its program and pid.
    let expected = format!("live connection 127.0.0.1:{port} ← {from} from ");
    let said = |what: &str| live(&c).iter().any(|m| m.contains(what));
    assert!(said(&format!("pid {me}: `")), "{c:#}");
    assert!(said(&expected), "{c:#}");
    drop(client);
    card_when(&sb, &host, "pier-t-client", "the connection's end", |c| {
        c["level"] != "red"
    });
}

/// Another container's client goes bridge to container, never through a host listener: it is
/// read inside the container's own network namespace.
#[test]
fn a_client_in_another_container_makes_it_red() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("client in another container")
    else {
        return;
    };
    let _web = httpd(&host, "pier-t-served", &shop, port, &[]);
    card_when(&sb, &host, "pier-t-served", "the card", |_| true);
    let ip = docker(
        &host,
        &[
            "inspect",
            "-f",
            "{{.NetworkSettings.IPAddress}}",
            "pier-t-served",
        ],
    );
    let hold = format!("sleep 600 | busybox nc {ip} 8080");
    docker(
        &host,
        &[
            "run",
            "-d",
            "--name",
            "pier-t-peer",
            "pier-busybox:test",
            "busybox",
            "sh",
            "-c",
            &hold,
        ],
    );
    let peer = Running {
        host: host.clone(),
        name: "pier-t-peer".into(),
    };
    let peer_ip = docker(
        &host,
        &[
            "inspect",
            "-f",
            "{{.NetworkSettings.IPAddress}}",
            "pier-t-peer",
        ],
    );
    let c = card_when(
        &sb,
        &host,
        "pier-t-served",
        "the other container's connection",
        |c| c["level"] == "red",
    );
    let from = format!("live connection {ip}:8080 ← {peer_ip}:");
    assert!(live(&c).iter().any(|m| m.starts_with(&from)), "{c:#}");
    drop(peer);
    card_when(
        &sb,
        &host,
        "pier-t-served",
        "the other container's end",
        |c| c["level"] != "red",
    );
}

#[test]
fn a_restart_policy_makes_the_engine_its_manager() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("restart policy")
    else {
        return;
    };
    let _web = httpd(
        &host,
        "pier-t-policy",
        &shop,
        port,
        &["--restart", "unless-stopped"],
    );
    let c = card_when(&sb, &host, "pier-t-policy", "the card", |_| true);
    assert_eq!(c["restart_policy"], "unless-stopped");
    let managed: Vec<&str> = c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "engine_managed")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(
        managed[0]
            .starts_with("restart policy unless-stopped: Docker starts it again when it ends"),
        "{managed:#?}"
    );
}

/// Pier as users run it: a normal user, in the `docker` group, who cannot see docker-proxy,
/// still gets the port attributed to its container, connections included; without the group,
/// the engine's refusal is said and the port is an unattributed listener that may be a
/// container's.
#[test]
fn run_by_a_normal_user_the_port_is_still_the_container_s() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("normal user")
    else {
        return;
    };
    let nobody = 65534;
    std::os::unix::fs::chown(sb.path().join("state"), Some(nobody), Some(nobody)).unwrap();
    let socket = fs::metadata(host.trim_start_matches("unix://")).unwrap();
    let group = std::os::unix::fs::MetadataExt::gid(&socket);
    let user = |groups: &str| -> Vec<String> {
        vec![
            format!("--reuid={nobody}"),
            format!("--regid={nobody}"),
            groups.to_owned(),
        ]
    };
    let in_group = user(&format!("--groups={group}"));
    let outside = user("--clear-groups");
    let _web = httpd(&host, "pier-t-user", &shop, port, &[]);
    let (s, c) = wait_for("the card, as a user", || {
        let s = scan(&sb, &host, &["--all"], Some(&in_group));
        card(&s, "pier-t-user").map(|(_, c)| (s.clone(), c))
    });
    assert_eq!(c["ports"][0]["port"], port, "{c:#}");
    assert_eq!(c["level"], "green", "{c:#}");
    // docker-proxy is root's, invisible to the user: its listener, ownerless, would be listed
    // whatever `--under` says — but it is the container's.
    let others = s["other_listeners"].as_array().unwrap();
    assert!(others.iter().all(|l| l["port"] != port), "{others:#?}");
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    wait_for("the client, as a user", || {
        let (_, c) = card(&scan(&sb, &host, &[], Some(&in_group)), "pier-t-user")?;
        (c["level"] == "red").then_some(())
    });
    drop(client);

    let s = scan(&sb, &host, &["--all"], Some(&outside));
    assert!(card(&s, "pier-t-user").is_none(), "{s:#}");
    let error = s["engines"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("Permission denied"), "{s:#}");
    let listener = s["other_listeners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["port"] == port)
        .cloned()
        .unwrap_or_else(|| panic!("{s:#}"));
    assert!(listener["pid"].is_null(), "{listener:#}");
    let reason = listener["reason"].as_str().unwrap();
    assert!(reason.contains("may be a container's port"), "{reason}");
}

/// A container on the host's network, with the project bind-mounted at its own path and worked
/// in: to Pier as root, its busybox httpd is a process of root's listening inside a project.
/// It is its container's (its cgroup says so), never a resource of its own, and its listener is
/// the container's port.
#[test]
fn a_host_network_container_s_process_in_a_project_is_its_container_s() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("host network")
    else {
        return;
    };
    let mount = format!("{0}:{0}", shop.display());
    let shop_dir = shop.display().to_string();
    let listen = port.to_string();
    let dir = format!("com.docker.compose.project.working_dir={shop_dir}");
    docker(
        &host,
        &[
            "run",
            "-d",
            "--name",
            "pier-t-hostnet",
            "--network",
            "host",
            "-v",
            &mount,
            "-w",
            &shop_dir,
            "--label",
            "com.docker.compose.project=pier-tests",
            "--label",
            &dir,
            "pier-busybox:test",
            "busybox",
            "httpd",
            "-f",
            "-p",
            &listen,
        ],
    );
    let _running = Running {
        host: host.clone(),
        name: "pier-t-hostnet".into(),
    };
    let httpd: u32 = docker(
        &host,
        &["inspect", "-f", "{{.State.Pid}}", "pier-t-hostnet"],
    )
    .parse()
    .unwrap();
    let scan = wait_for("the host-network container's port", || {
        let s = scan(&sb, &host, &["--all"], None);
        let (_, c) = card(&s, "pier-t-hostnet")?;
        (c["ports"].as_array()?.len() == 1).then_some(s)
    });
    let (_, c) = card(&scan, "pier-t-hostnet").unwrap();
    assert_eq!(c["ports"][0]["port"], port, "{c:#}");
    assert!(
        common::resource_with(&scan, httpd).is_none(),
        "the container's process is a resource: {scan:#}"
    );
    let others = scan["other_listeners"].as_array().unwrap();
    assert!(others.iter().all(|l| l["port"] != port), "{others:#?}");
}

/// A container whose first process ends on SIGTERM, as most servers' do: busybox sh trapping
/// it, with httpd serving beside it after `delay` seconds, published on 127.0.0.1:`port`.
fn polite_after(host: &str, name: &str, folder: &Path, port: u16, delay: u32) -> Running {
    let script = format!("trap 'exit 0' TERM; sleep {delay}; busybox httpd -f -p 8080 & wait");
    let command = ["busybox", "sh", "-c", &script];
    published(host, name, (folder, port), &[], &command)
}

fn polite(host: &str, name: &str, folder: &Path, port: u16) -> Running {
    polite_after(host, name, folder, port, 0)
}

/// `pier ARGS --json` (no `--under`: `pier stop ID` and `pier restart` take none), as JSON.
fn pier_json(sb: &Sandbox, host: &str, args: &[&str]) -> Value {
    pier_json_as(sb, host, args, None)
}

/// The same, run by `as_user` (`setpriv` options) when given.
fn pier_json_as(sb: &Sandbox, host: &str, args: &[&str], as_user: Option<&[String]>) -> Value {
    let mut cmd = match as_user {
        Some(setpriv) => {
            let mut c = Command::new("setpriv");
            c.args(setpriv).arg("--").arg(common::pier_bin());
            c
        }
        None => Command::new(common::pier_bin()),
    };
    let out = cmd
        .args(args)
        .arg("--json")
        .env("DOCKER_HOST", host)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .expect("pier runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "pier {args:?}: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn inspect(host: &str, name: &str, format: &str) -> String {
    docker(host, &["inspect", "-f", format, name])
}

/// Whether the engine says container `name` runs.
fn is_running(host: &str, name: &str) -> bool {
    inspect(host, name, "{{.State.Running}}") == "true"
}

/// The whole path a user takes: a green card, `pier stop` through the engine (its stop
/// signal, a record first), the container stopped — not removed — and `pier restart` starting
/// the same container again, its port answering; a second restart is refused.
#[test]
fn an_idle_container_is_stopped_through_its_engine_and_started_again() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("stop and restart")
    else {
        return;
    };
    let _web = polite(&host, "pier-t-stop", &shop, port);
    let id = inspect(&host, "pier-t-stop", "{{.Id}}");
    let run = inspect(&host, "pier-t-stop", "{{.State.StartedAt}}");
    let c = card_when(&sb, &host, "pier-t-stop", "a green card", |c| {
        c["level"] == "green"
    });
    assert_eq!(c["container_id"], id.as_str());
    // Sampled, as `pier scan` runs by default: its engine's statistics say it idles.
    let sampled = pier(&sb, &host, &["scan", "--json"], None);
    let sampled: Value = serde_json::from_slice(&sampled.stdout).unwrap();
    let (_, c) = card(&sampled, "pier-t-stop").unwrap();
    assert_eq!(c["level"], "green", "{c:#}");
    assert!(c["activity"]["window_ms"].as_u64().unwrap() >= 500, "{c:#}");

    let card_id = c["id"].as_str().unwrap().to_owned();
    // A dry run asks the engine every check and sends nothing, by id and by its port.
    let dry = pier_json(&sb, &host, &["stop", "--dry-run", &card_id]);
    assert_eq!(dry["results"][0]["result"], "would_stop", "{dry:#}");
    assert_eq!(dry["results"][0]["would_signal"][0]["signal"], "SIGTERM");
    let at = format!(":{port}");
    let dry = pier_json(&sb, &host, &["stop", "--dry-run", &at]);
    assert_eq!(dry["ports"][0]["stops"], card_id.as_str(), "{dry:#}");
    assert_eq!(dry["results"][0]["result"], "would_stop", "{dry:#}");
    assert!(is_running(&host, "pier-t-stop"));
    assert_eq!(inspect(&host, "pier-t-stop", "{{.State.StartedAt}}"), run);
    let doc = pier_json(&sb, &host, &["stop", &card_id]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "stopped", "{doc:#}");
    assert_eq!(r["kind"], "container pier-t-stop", "{doc:#}");
    assert_eq!(r["container"]["outcome"], "stopped", "{doc:#}");
    assert_eq!(r["container"]["signal"], "SIGTERM", "{doc:#}");
    assert!(r["members"].as_array().unwrap().is_empty(), "{doc:#}");
    let first_signal = r["timings"]["a_to_first_signal_ms"].as_f64().unwrap();
    assert!(first_signal <= 2000.0, "{doc:#}");
    let record = r["snapshot"].as_str().unwrap().to_owned();
    assert!(record.starts_with("ctr-"), "{record}");
    assert!(!is_running(&host, "pier-t-stop"));
    assert_eq!(inspect(&host, "pier-t-stop", "{{.State.ExitCode}}"), "0");

    let history = pier_json(&sb, &host, &["history"]);
    let entry = history["snapshots"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["snapshot"] == record.as_str()).cloned())
        .unwrap_or_else(|| panic!("{history:#}"));
    assert_eq!(entry["restartable"], true, "{entry:#}");

    let again = pier_json(&sb, &host, &["restart", &card_id]);
    assert_eq!(again["result"], "ready", "{again:#}");
    assert_eq!(
        inspect(&host, "pier-t-stop", "{{.Id}}"),
        id,
        "the same container"
    );
    assert!(is_running(&host, "pier-t-stop"));
    assert_ne!(inspect(&host, "pier-t-stop", "{{.State.StartedAt}}"), run);
    wait_for("the port to answer again", || {
        TcpStream::connect(("127.0.0.1", port)).ok()
    });
    let twice = pier_json(&sb, &host, &["restart", &record]);
    assert_eq!(twice["result"], "refused", "{twice:#}");
    assert!(
        twice["reason"].as_str().unwrap().contains("already runs"),
        "{twice:#}"
    );
}

/// busybox httpd as the container's first process ignores SIGTERM: after its grace it still
/// runs, and the report says so — Pier never sends the engine's SIGKILL (`docker stop` would
/// have). Its record is then not offered for restart.
#[test]
fn a_container_that_ignores_its_stop_signal_is_still_running_never_killed() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("ignores SIGTERM")
    else {
        return;
    };
    let _web = httpd(&host, "pier-t-stubborn", &shop, port, &[]);
    let run = inspect(&host, "pier-t-stubborn", "{{.State.StartedAt}}");
    let card_id = green_card_id(&sb, &host, "pier-t-stubborn");
    let doc = pier_json(&sb, &host, &["stop", "--grace", "1", &card_id]);
    let r = &doc["results"][0];
    assert_eq!(
        r["result"], "not_stopped",
        "its one run did not end: {doc:#}"
    );
    assert_eq!(r["container"]["outcome"], "still_running", "{doc:#}");
    assert!(is_running(&host, "pier-t-stubborn"));
    assert_eq!(
        inspect(&host, "pier-t-stubborn", "{{.State.StartedAt}}"),
        run
    );
    let again = pier_json(&sb, &host, &["restart", &card_id]);
    assert_eq!(again["result"], "refused", "{again:#}");
}

/// A client on the published port: the card is red, and a stop asked for by id is refused
/// with nothing sent; the container serves on.
#[test]
fn a_stop_of_a_container_with_a_client_is_refused_and_sends_nothing() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("stop with a client")
    else {
        return;
    };
    let _web = polite(&host, "pier-t-served-stop", &shop, port);
    let card_id = green_card_id(&sb, &host, "pier-t-served-stop");
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    card_when(&sb, &host, "pier-t-served-stop", "the client", |c| {
        c["level"] == "red"
    });
    let doc = pier_json(&sb, &host, &["stop", &card_id]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "refused", "{doc:#}");
    assert!(r["container"].is_null(), "{doc:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("live connection"),
        "{doc:#}"
    );
    assert!(is_running(&host, "pier-t-served-stop"));
}

/// A restart policy keeps the card yellow, and `pier stop --all-green` leaves it alone,
/// saying why; asked for by id, the stop is refused.
#[test]
fn a_container_with_a_restart_policy_is_left_alone() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("restart policy, stop")
    else {
        return;
    };
    let _web = httpd(
        &host,
        "pier-t-policy-stop",
        &shop,
        port,
        &["--restart", "always"],
    );
    let c = card_when(&sb, &host, "pier-t-policy-stop", "the card", |_| true);
    let card_id = c["id"].as_str().unwrap().to_owned();
    let out = pier(&sb, &host, &["stop", "--json", "--all-green"], None);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["results"].as_array().unwrap().is_empty(), "{doc:#}");
    assert_eq!(doc["left_alone"][0]["id"], card_id.as_str(), "{doc:#}");
    assert!(doc["left_alone"][0]["pid"].is_null(), "{doc:#}");
    let doc = pier_json(&sb, &host, &["stop", &card_id]);
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
    assert!(is_running(&host, "pier-t-policy-stop"));
}

/// As users run Pier: a normal user in the engine's socket group stops a container and
/// starts it again, its record in a state folder of its own.
#[test]
fn a_normal_user_in_the_docker_group_stops_and_restarts_a_container() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("normal user, stop")
    else {
        return;
    };
    let nobody = 65534;
    std::os::unix::fs::chown(sb.path().join("state"), Some(nobody), Some(nobody)).unwrap();
    let socket = fs::metadata(host.trim_start_matches("unix://")).unwrap();
    let group = std::os::unix::fs::MetadataExt::gid(&socket);
    let user = vec![
        format!("--reuid={nobody}"),
        format!("--regid={nobody}"),
        format!("--groups={group}"),
    ];
    let _web = polite(&host, "pier-t-user-stop", &shop, port);
    let c = wait_for("a green card, as a user", || {
        let (_, c) = card(&scan(&sb, &host, &[], Some(&user)), "pier-t-user-stop")?;
        (c["level"] == "green").then_some(c)
    });
    let card_id = c["id"].as_str().unwrap().to_owned();
    let doc = pier_json_as(&sb, &host, &["stop", &card_id], Some(&user));
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");
    assert!(!is_running(&host, "pier-t-user-stop"));
    let again = pier_json_as(&sb, &host, &["restart", &card_id], Some(&user));
    assert_eq!(again["result"], "ready", "{again:#}");
    assert!(is_running(&host, "pier-t-user-stop"));
}

/// The app's path (the worker's engine, as "Clean up safely" drives it): a stop handed what
/// the card showed is refused when the container was started again since, with nothing sent,
/// and goes through when the card shown is the one that runs.
#[test]
fn the_app_s_clean_up_stops_the_run_its_card_showed_and_no_other() {
    use pier_core::model::shown::Shown;
    use pier_core::store::Store;
    use pier_core::worker::{Engine, StopTarget, SystemEngine};
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("the app's stop")
    else {
        return;
    };
    // The engine asks the engines this process's environment names; every test here names the
    // same daemon, so setting it is the same for all of them.
    std::env::set_var("DOCKER_HOST", &host);
    // And the protect list: a folder with none in it, never the developer's own.
    std::env::set_var("PIER_CONFIG_DIR", "/nonexistent/pier-test-config");
    let _web = polite(&host, "pier-t-app", &shop, port);
    let engine = SystemEngine::new(
        Store::open_at(sb.path().join("state")).unwrap(),
        vec![sb.path().canonicalize().unwrap()],
        std::time::Duration::from_millis(100),
        PathBuf::from(env!("CARGO_BIN_EXE_pier")),
    );
    let shown_card = || {
        wait_for("the card, green, in the app's scan", || {
            let scan = engine.refresh(1).scan.ok()?;
            scan.projects.iter().find_map(|p| {
                let c = p.containers.iter().find(|c| c.name == "pier-t-app")?;
                (c.level == pier_core::model::card::Level::Green).then(|| StopTarget {
                    project: p.path.clone(),
                    id: c.id.parse().expect("a card's id"),
                    shown: Shown::of_container(p.level, c),
                })
            })
        })
    };
    let stale = shown_card();
    docker(&host, &["restart", "-t", "1", "pier-t-app"]);
    let run = inspect(&host, "pier-t-app", "{{.State.StartedAt}}");
    let r = engine
        .stop(std::slice::from_ref(&stale), &mut |_| {})
        .remove(0);
    assert_eq!(
        r.result,
        pier_core::model::outcome::ResourceResult::Refused,
        "{r:#?}"
    );
    assert!(
        r.reason.contains("started again since it was shown"),
        "{r:#?}"
    );
    assert_eq!(inspect(&host, "pier-t-app", "{{.State.StartedAt}}"), run);

    let fresh = shown_card();
    let r = engine.stop(&[fresh], &mut |_| {}).remove(0);
    assert_eq!(
        r.result,
        pier_core::model::outcome::ResourceResult::Stopped,
        "{r:#?}"
    );
    assert!(!is_running(&host, "pier-t-app"));
}

/// An engine that cannot be asked when the stop runs: the card cannot be re-diagnosed, so the
/// stop is refused, nothing is sent, and the container serves on.
#[test]
fn a_stop_whose_engine_cannot_be_asked_is_refused_and_sends_nothing() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("engine unreachable at the stop")
    else {
        return;
    };
    let _web = polite(&host, "pier-t-unasked", &shop, port);
    let card_id = green_card_id(&sb, &host, "pier-t-unasked");
    let nowhere = format!("unix://{}", sb.path().join("no-engine.sock").display());
    let doc = pier_json(&sb, &nowhere, &["stop", &card_id]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "refused", "{doc:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the fresh diagnosis failed: Docker at")
            && reason.contains("could not be asked"),
        "{doc:#}"
    );
    assert!(is_running(&host, "pier-t-unasked"));
    let _served = TcpStream::connect(("127.0.0.1", port)).expect("it still serves");
}

/// Whether the server inside container `name` listens on 8080, as its own netstat says.
fn serves_inside(host: &str, name: &str) -> bool {
    Command::new("docker")
        .args(["-H", host, "exec", name, "busybox", "netstat", "-tln"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(":8080 "))
}

/// A restarted container is ready when its server listens inside it, not when the engine's
/// proxy does (which it does at once): a server that takes a second to start is waited for.
#[test]
fn a_restarted_container_is_ready_when_its_server_listens_inside_it() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("restart readiness")
    else {
        return;
    };
    let _running = polite_after(&host, "pier-t-slow", &shop, port, 1);
    wait_for("the server inside", || {
        serves_inside(&host, "pier-t-slow").then_some(())
    });
    let card_id = green_card_id(&sb, &host, "pier-t-slow");
    let doc = pier_json(&sb, &host, &["stop", &card_id]);
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");
    let again = pier_json(&sb, &host, &["restart", &card_id]);
    assert_eq!(again["result"], "ready", "{again:#}");
    assert!(
        serves_inside(&host, "pier-t-slow"),
        "ready before its server listened: {again:#}"
    );
}

/// `docker run --stop-signal KILL`: its stop would be a SIGKILL, which Pier never sends; the
/// card is yellow and names the engine's own command, and a stop asked for by id is refused.
#[test]
fn a_container_whose_stop_signal_is_sigkill_is_never_stopped_by_pier() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("stop signal KILL")
    else {
        return;
    };
    let _web = httpd(
        &host,
        "pier-t-killsig",
        &shop,
        port,
        &["--stop-signal", "KILL"],
    );
    let c = card_when(&sb, &host, "pier-t-killsig", "the card", |_| true);
    assert_eq!(c["level"], "yellow", "{c:#}");
    let said: Vec<&str> = c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.starts_with("its stop signal is SIGKILL, which Pier never sends")),
        "{c:#}"
    );
    let card_id = c["id"].as_str().unwrap().to_owned();
    let doc = pier_json(&sb, &host, &["stop", &card_id]);
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
    assert!(is_running(&host, "pier-t-killsig"));
}

/// A container at work (a shell spinning on a core): yellow in a sampled scan, by its CPU
/// time, and a stop asked for by id is refused at the activity check by its engine's own
/// statistics, with nothing sent.
#[test]
fn a_busy_container_is_yellow_and_its_stop_is_refused_at_the_activity_check() {
    let Some(World {
        host,
        sb,
        shop,
        port,
    }) = world("busy container")
    else {
        return;
    };
    let spin = ["busybox", "sh", "-c", "while :; do :; done"];
    let _web = published(&host, "pier-t-busy", (&shop, port), &[], &spin);
    let id = card_when(&sb, &host, "pier-t-busy", "the card", |_| true)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let sampled = pier(&sb, &host, &["scan", "--json"], None);
    let sampled: Value = serde_json::from_slice(&sampled.stdout).unwrap();
    let (_, c) = card(&sampled, "pier-t-busy").unwrap();
    assert_eq!(c["level"], "yellow", "{c:#}");
    assert!(
        c["activity"]["cpu_percent"].as_f64().unwrap() > 50.0,
        "{c:#}"
    );
    let doc = pier_json(&sb, &host, &["stop", &id]);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "refused", "{doc:#}");
    assert_eq!(r["checkpoint"], "b", "{doc:#}");
    assert!(is_running(&host, "pier-t-busy"));
}
