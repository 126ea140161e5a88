//! The guards of "known by how it was launched" (docs/design.md §2, issue 38 item 9), against
//! real processes: a tree the table never heard of is a dev tool when its launch says so, and
//! each way that widening could turn into a wrong kill is closed. Each case starts a real
//! tree as the developer would — `make dev`, `npm run …`, a tool from `node_modules/.bin`,
//! typed into a live tmux shell, under pm2, as another user — orphaned in a project of the
//! test's own temporary folder, and asserts what `pier scan --json --under DIR` says; where a
//! card is yellow, `pier stop ID` refuses and sends nothing (every member runs on as itself).
//!
//! Must not be green: a busy job under `make dev` (its life share), a `make tunnel` target
//! running a system program with a dev word, an npm script named `serve:prod` or run with
//! `NODE_ENV=production`, a portless `--watch=false` or one-shot `migrate dev`, a tree with a
//! client, one under a live interactive shell or a process manager; another user's tree is no
//! candidate, and another user's `package.json` in a shared folder makes no project. And the
//! positive path: `npm run db:studio`, orphaned and idle, is green, stops whole and restarts.
//!
//! Clean-up signals only the test's processes, by identity: each sandbox's processes are found
//! by their working folder inside it; tmux and pm2 are told to end through their own private
//! socket and home; another user's go with their account.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::users::Account;
use common::*;
use serde_json::Value;

/// A tiny dev server: `http` on 127.0.0.1:`$PORT`, answering every request. It does nothing at
/// start but listen, so its life is quiet at once.
const SERVER_JS: &str = "const http = require('http');\n\
    http.createServer((_, res) => res.end('ok\\n'))\n\
    .listen(Number(process.env.PORT), '127.0.0.1');\n";

/// A portless program that only waits (a watcher's shape, with nothing to watch).
const WAIT_JS: &str = "setInterval(() => {}, 1 << 30);\n";

/// A job that listens and works: busy 90% of each second, then a short sleep, so any short
/// sample may fall in a pause; with `--idle`, it only listens.
const BUSY_PY: &str = "import socket, sys, time\n\
    s = socket.socket()\n\
    s.bind(('127.0.0.1', int(sys.argv[1])))\n\
    s.listen()\n\
    while sys.argv[2:] != ['--idle']:\n\
    \x20   end = time.monotonic() + 0.9\n\
    \x20   while time.monotonic() < end:\n\
    \x20       pass\n\
    \x20   time.sleep(0.1)\n\
    while True:\n\
    \x20   time.sleep(3600)\n";

/// A one-shot tool installed in the project (`prisma migrate dev`'s shape): it waits a while,
/// holding no port.
const ONE_SHOT: &str = "#!/usr/bin/env node\nsetTimeout(() => {}, 60000);\n";

/// npm's own chatter off: no update check reaching for the network.
const NPM_QUIET: &[(&str, &str)] = &[
    ("npm_config_update_notifier", "false"),
    ("npm_config_fund", "false"),
    ("npm_config_audit", "false"),
];

/// Kills, by identity, every process working inside the sandbox's folder when dropped: every
/// process a case starts there is the case's own (the folder is new and the test's), including
/// what a restart or a manager started after the case last looked. Declared after the
/// sandbox, so it runs before the folder goes.
struct Reaper(PathBuf);

impl Reaper {
    fn of(sb: &Sandbox) -> Reaper {
        Reaper(sb.path().canonicalize().unwrap())
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        let end = Instant::now() + Duration::from_secs(5);
        loop {
            let left = working_in(&self.0);
            if left.is_empty() || Instant::now() > end {
                break;
            }
            left.into_iter().for_each(kill_by_identity);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Every live process whose working folder is `dir` or below it.
fn working_in(dir: &Path) -> Vec<Started> {
    pids()
        .into_iter()
        .filter(|&pid| fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(dir)))
        .filter(|&pid| alive(pid))
        .filter_map(identity)
        .collect()
}

fn pids() -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

fn identity(pid: u32) -> Option<Started> {
    Some(Started {
        pid,
        start_time: start_time_of(pid)?,
    })
}

/// `root` and its live descendants, from `/proc`.
fn tree(root: Started) -> Vec<Started> {
    if start_time_of(root.pid) != Some(root.start_time) {
        return Vec::new();
    }
    let table: Vec<(u32, u32)> = pids()
        .into_iter()
        .filter_map(|pid| Some((pid, ppid_of(pid)?)))
        .collect();
    let mut out = vec![root.pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            table
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out.into_iter()
        .filter(|&p| alive(p))
        .filter_map(identity)
        .collect()
}

/// The pid listening on `port` (TCP, any address), as `ss` tells it.
fn listener(port: u16) -> Option<u32> {
    let out = Command::new("ss")
        .args(["-Htlnp", &format!("sport = :{port}")])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text.find("pid=")? + 4;
    text[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Waits for a listener on `port` and returns it.
fn listening(port: u16) -> Started {
    wait_for(&format!("a listener on port {port}"), || {
        identity(listener(port)?)
    })
}

/// A project folder `name` in the sandbox: `.git` and a `package.json` with `scripts`, the
/// dev server and the waiting program beside them.
fn project(sb: &Sandbox, name: &str, scripts: &[(&str, &str)]) -> PathBuf {
    let dir = sb.path().join(name);
    fs::create_dir_all(dir.join(".git")).unwrap();
    write_package(&dir, scripts);
    fs::write(dir.join("server.js"), SERVER_JS).unwrap();
    fs::write(dir.join("wait.js"), WAIT_JS).unwrap();
    dir
}

fn write_package(dir: &Path, scripts: &[(&str, &str)]) {
    let scripts: serde_json::Map<String, Value> = scripts
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect();
    let package = serde_json::json!({ "name": "app", "version": "1.0.0", "scripts": scripts });
    fs::write(dir.join("package.json"), package.to_string()).unwrap();
}

/// Starts `argv` in `cwd` with `env`, orphaned: `sh` (forked away by `setsid -f`, whose parent
/// exits) writes its pid, then execs the command, which keeps it. Registered for clean-up.
fn orphan(sb: &Sandbox, cwd: &Path, argv: &[&str], env: &[(&str, &str)]) -> Started {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let pidfile = sb.path().join("reports").join(format!("root-{n}.pid"));
    let status = Command::new("setsid")
        .args(["-f", "sh", "-c", "echo $$ > \"$0\"; exec \"$@\""])
        .arg(&pidfile)
        .args(argv)
        .current_dir(cwd)
        .envs(NPM_QUIET.iter().copied())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("setsid runs");
    assert!(status.success(), "setsid -f {argv:?} failed");
    let root = wait_for(&format!("{argv:?} to start"), || {
        let pid: u32 = fs::read_to_string(&pidfile).ok()?.trim().parse().ok()?;
        // The pid is written before the exec: wait until it runs the command.
        let argv0 = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        (!argv0.starts_with(b"sh\0")).then_some(())?;
        identity(pid)
    });
    sb.own(root);
    root
}

/// Registers every process of the tree under `root` for clean-up.
fn own_tree(sb: &Sandbox, root: Started) {
    tree(root).into_iter().for_each(|p| sb.own(p));
}

/// `pier scan --json --under <sandbox>` with these sample milliseconds.
fn scan(sb: &Sandbox, sample_ms: &str) -> Value {
    let out = sb.pier(&["scan", "--json", "--sample-ms", sample_ms]);
    let (code, doc) = exit_and_json(&out);
    assert_eq!(code, 0, "pier scan: {doc:#}");
    doc
}

/// Scans (100 ms samples) until the resource holding `pid` satisfies `until`, and returns it;
/// at the deadline, fails naming `what` and the card last seen.
fn card_until(sb: &Sandbox, pid: u32, what: &str, until: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + DEADLINE;
    loop {
        let found = resource_with(&scan(sb, "100"), pid).map(|(_, r)| r);
        if let Some(r) = found.as_ref().filter(|r| until(r)) {
            return r.clone();
        }
        assert!(
            Instant::now() < end,
            "{what}: timed out; last card: {found:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether `r`'s life is shown quiet (or not judged: a table kind's).
fn life_settled(r: &Value) -> bool {
    evidence_of(r, "life_activity").is_none_or(|(level, _)| level == "green")
}

/// The members of a card, by identity.
fn members(r: &Value) -> Vec<Started> {
    r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| Started {
            pid: m["pid"].as_u64().unwrap() as u32,
            start_time: m["start_time"].as_u64().unwrap(),
        })
        .collect()
}

/// `pier stop ID` refuses the card `r`, and sends nothing: every member runs on as itself.
fn stop_refuses(sb: &Sandbox, r: &Value) {
    let id = r["id"].as_str().unwrap();
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id]);
    let (code, doc) = exit_and_json(&out);
    let result = &doc["results"][0];
    assert_eq!(
        (code, result["result"].as_str()),
        (3, Some("refused")),
        "{doc:#}"
    );
    for m in members(r) {
        assert!(
            alive(m.pid) && start_time_of(m.pid) == Some(m.start_time),
            "pid {} was touched by a refused stop: {doc:#}",
            m.pid
        );
    }
}

/// The sandbox's folder, reachable by other users (a temp folder is 0700).
fn open_to_others(sb: &Sandbox) {
    fs::set_permissions(sb.path(), fs::Permissions::from_mode(0o755)).unwrap();
}

fn mkdir(path: &Path, mode: u32) -> PathBuf {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    path.to_path_buf()
}

/// A `Makefile` project: `make dev` runs the busy job, `make tunnel` runs `tunnel`.
fn make_project(sb: &Sandbox, name: &str, tunnel: &str) -> PathBuf {
    let dir = sb.path().join(name);
    fs::create_dir_all(dir.join(".git")).unwrap();
    fs::write(dir.join("busy.py"), BUSY_PY).unwrap();
    let makefile = format!(
        "PY := {}\ndev:\n\t$(PY) busy.py $(PORT) $(MODE)\ntunnel:\n\t{tunnel}\n",
        python()
    );
    fs::write(dir.join("Makefile"), makefile).unwrap();
    dir
}

/// CPU time `pid` has used, in clock ticks (utime + stime).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Case 1: a job under `make dev` that has worked most of its life is never green, even when
/// no sample sees it work (an unsampled scan judges its life alone); the same program idle
/// under `make dev` is green at once.
#[test]
fn a_busy_job_under_make_dev_is_yellow_by_its_life_and_the_same_idle_is_green() {
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = make_project(&sb, "job", "true");
    let port = free_port().to_string();
    let root = orphan(&sb, &dir, &["make", "dev"], &[("PORT", &port)]);
    let job = listening(port.parse().unwrap());
    own_tree(&sb, root);
    // A second of work behind it: 100 ticks a second on Linux.
    wait_for("the job's first second of CPU", || {
        (cpu_ticks(job.pid)? >= 100).then_some(())
    });
    let unsampled = scan(&sb, "0");
    let (_, r) = resource_with(&unsampled, job.pid).expect("the job is a candidate");
    assert_eq!(r["kind"], "busy", "known by `make dev`: {r:#}");
    assert!(
        evidence_of(&r, "tool_kind").is_some_and(|(_, m)| m.contains("`make dev`")),
        "{r:#}"
    );
    assert_eq!(r["level"], "yellow", "{r:#}");
    let (level, why) = evidence_of(&r, "life_activity").expect("its life is judged");
    assert_eq!(level, "yellow", "{why}");
    assert!(why.contains("busy over its life"), "{why}");
    assert_eq!(against(&r), ["life_activity"], "its life alone: {r:#}");
    // Sampled: yellow whether the sample fell in its work or in a pause.
    let (_, r) = resource_with(&scan(&sb, "100"), job.pid).expect("found");
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert!(
        against(&r)
            .iter()
            .all(|k| k == "life_activity" || k == "activity"),
        "{r:#}"
    );
    stop_refuses(&sb, &r);
    tree(root).into_iter().for_each(kill_by_identity);

    if fixtures_cannot_be_orphans("the idle job under make dev") {
        return;
    }
    let port = free_port().to_string();
    let root = orphan(
        &sb,
        &dir,
        &["make", "dev"],
        &[("PORT", &port), ("MODE", "--idle")],
    );
    let idle = listening(port.parse().unwrap());
    own_tree(&sb, root);
    let (_, r) = resource_with(&scan(&sb, "100"), idle.pid).expect("found");
    assert_eq!(
        r["level"], "green",
        "a server that did little at start: {r:#}"
    );
    assert_eq!(
        evidence_of(&r, "life_activity").map(|e| e.0).as_deref(),
        Some("green")
    );
}

/// Case 2: a `make tunnel` target running a system program that carries a dev word (here
/// busybox's `nc -ll -e /bin/cat --watch`): a target that does not say dev, and a system
/// program's word is no sign — unknown, yellow.
#[test]
fn a_make_tunnel_target_running_a_system_program_with_a_dev_word_is_unknown() {
    let Some(busybox) = ["/usr/bin/busybox", "/bin/busybox"]
        .into_iter()
        .find(|b| Path::new(b).exists())
    else {
        eprintln!("a_make_tunnel_target…: skipped, no busybox (a system program that listens)");
        return;
    };
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let port = free_port();
    let dir = make_project(
        &sb,
        "ops",
        &format!("{busybox} nc -ll -p $(PORT) -e /bin/cat --watch"),
    );
    let root = orphan(
        &sb,
        &dir,
        &["make", "tunnel"],
        &[("PORT", &port.to_string())],
    );
    let nc = listening(port);
    own_tree(&sb, root);
    let (_, r) = resource_with(&scan(&sb, "100"), nc.pid).expect("it listens in a project");
    assert_eq!(
        (r["kind"].as_str(), r["level"].as_str()),
        (Some("unknown"), Some("yellow")),
        "{r:#}"
    );
    assert_eq!(against(&r), ["unknown_kind"], "{r:#}");
    assert!(evidence_of(&r, "tool_kind").is_none(), "{r:#}");
    stop_refuses(&sb, &r);
}

/// Case 3: a production name or setting is never dev: `npm run serve:prod`, and `npm run serve`
/// with `NODE_ENV=production` in its environment, are unknown and yellow.
#[test]
fn an_npm_script_named_serve_prod_or_run_with_node_env_production_is_unknown() {
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(
        &sb,
        "shop",
        &[
            ("serve:prod", "node server.js"),
            ("serve", "node server.js"),
        ],
    );
    let (p1, p2) = (free_port(), free_port());
    let prod_name = orphan(
        &sb,
        &dir,
        &["npm", "run", "serve:prod"],
        &[("PORT", &p1.to_string())],
    );
    let prod_env = orphan(
        &sb,
        &dir,
        &["npm", "run", "serve"],
        &[("PORT", &p2.to_string()), ("NODE_ENV", "production")],
    );
    let (s1, s2) = (listening(p1), listening(p2));
    own_tree(&sb, prod_name);
    own_tree(&sb, prod_env);
    let doc = scan(&sb, "100");
    for (server, what) in [(s1, "serve:prod"), (s2, "NODE_ENV=production")] {
        let (_, r) = resource_with(&doc, server.pid).expect("it listens in a project");
        assert_eq!(
            (r["kind"].as_str(), r["level"].as_str()),
            (Some("unknown"), Some("yellow")),
            "{what}: {r:#}"
        );
        assert_eq!(against(&r), ["unknown_kind"], "{what}: {r:#}");
        stop_refuses(&sb, &r);
    }
}

/// Case 4: a portless program is a candidate only by a watch word that is not negated:
/// `node wait.js --watch=false` is no card, `node wait.js --watch` is one.
#[test]
fn a_portless_watch_false_is_no_card_and_watch_is_one() {
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "lib", &[]);
    let off = orphan(&sb, &dir, &["node", "wait.js", "--watch=false"], &[]);
    let on = orphan(&sb, &dir, &["node", "wait.js", "--watch"], &[]);
    let doc = scan(&sb, "100");
    assert!(
        resource_with(&doc, off.pid).is_none(),
        "--watch=false is no watcher: {doc:#}"
    );
    let (project, r) = resource_with(&doc, on.pid).expect("a portless watcher in a project");
    assert_eq!(r["kind"], "wait", "{r:#}");
    assert_eq!(r["ports"].as_array().unwrap().len(), 0, "{r:#}");
    assert_eq!(
        Some(project["path"].as_str().unwrap()),
        dir.canonicalize().unwrap().to_str()
    );
    assert!(
        evidence_of(&r, "tool_kind").is_some_and(|(_, m)| m.contains("--watch")),
        "{r:#}"
    );
}

/// Case 5: a portless one-shot from the project's own toolchain
/// (`node_modules/.bin/dbtool migrate dev`) is never residue: no card.
#[test]
fn a_portless_one_shot_migrate_dev_from_node_modules_bin_is_no_card() {
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "api", &[]);
    let tool = dir.join("node_modules/.bin/dbtool");
    fs::create_dir_all(tool.parent().unwrap()).unwrap();
    fs::write(&tool, ONE_SHOT).unwrap();
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();
    let job = orphan(
        &sb,
        &dir,
        &["./node_modules/.bin/dbtool", "migrate", "dev"],
        &[],
    );
    let doc = scan(&sb, "100");
    assert!(alive(job.pid), "the one-shot still runs");
    assert!(resource_with(&doc, job.pid).is_none(), "{doc:#}");
    assert!(
        doc["projects"].as_array().unwrap().is_empty(),
        "nothing else either: {doc:#}"
    );
}

/// Case 6: a tree known by launch with a client is red; once the client is gone, green.
#[test]
fn a_tree_known_by_launch_with_a_client_is_red_and_green_once_it_goes() {
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "studio", &[("db:studio", "node server.js")]);
    let port = free_port();
    let root = orphan(
        &sb,
        &dir,
        &["npm", "run", "db:studio"],
        &[("PORT", &port.to_string())],
    );
    let server = listening(port);
    own_tree(&sb, root);
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let r = card_until(&sb, server.pid, "red with the client", |r| {
        r["level"] == "red"
    });
    assert_eq!(r["kind"], "server", "known by launch: {r:#}");
    assert!(
        evidence_kinds(&r).contains(&"live_connection".to_owned()),
        "{r:#}"
    );
    let ends: Vec<u64> = r["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["peer_pid"].as_u64())
        .collect();
    assert_eq!(
        ends,
        [u64::from(std::process::id())],
        "the client is this test: {r:#}"
    );
    drop(client);
    if fixtures_cannot_be_orphans("the studio once its client is gone") {
        return;
    }
    let r = card_until(&sb, server.pid, "green once the client is gone", |r| {
        r["level"] == "green"
    });
    assert!(!evidence_kinds(&r).contains(&"live_connection".to_owned()));
}

/// A private tmux server (`-S` a socket in the sandbox), ended when dropped.
struct Tmux(PathBuf);

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.0).args(["-f", "/dev/null"]);
        c
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .cmd()
            .arg("kill-server")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Case 7: the same tree typed into a live tmux shell is not orphaned: yellow for that alone,
/// and `pier stop` refuses.
#[test]
fn a_tree_known_by_launch_typed_into_a_live_tmux_shell_is_yellow_not_orphaned() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("a_tree_known_by_launch_typed_into_a_live_tmux_shell…: skipped, no tmux");
        return;
    }
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "studio", &[("db:studio", "node server.js")]);
    let tmux = Tmux(sb.path().join("tmux.sock"));
    let ok = tmux
        .cmd()
        .args([
            "new-session",
            "-d",
            "-s",
            "pier",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
        ])
        .arg(&dir)
        .args(["bash", "--noprofile", "--norc", "-i"])
        .envs(NPM_QUIET.iter().copied())
        .stdin(Stdio::null())
        .status()
        .expect("tmux runs");
    assert!(ok.success(), "tmux new-session failed");
    let port = free_port();
    let typed = format!("PORT={port} npm run db:studio");
    let ok = tmux
        .cmd()
        .args(["send-keys", "-t", "pier", &typed, "Enter"])
        .status()
        .expect("tmux runs");
    assert!(ok.success(), "tmux send-keys failed");
    let server = listening(port);
    let r = card_until(&sb, server.pid, "its start-up behind it", |r| {
        life_settled(r) && r["activity"].is_object()
    });
    assert_eq!(r["kind"], "server", "known by launch: {r:#}");
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert_eq!(against(&r), ["not_orphaned"], "the live shell alone: {r:#}");
    let (_, why) = evidence_of(&r, "not_orphaned").unwrap();
    assert!(why.contains("interactive shell"), "{why}");
    stop_refuses(&sb, &r);
}

/// Case 8: the same tree run by pm2 (from the real-tools cache) is yellow, managed by pm2,
/// and `pier stop` refuses. Skips with one line without `PIER_REAL_TOOLS`.
#[test]
fn a_tree_known_by_launch_under_pm2_is_yellow_managed() {
    let Some(cache) = std::env::var_os("PIER_REAL_TOOLS") else {
        eprintln!(
            "a_tree_known_by_launch_under_pm2…: skipped, it runs with PIER_REAL_TOOLS set \
             (scripts/real-tools.sh)"
        );
        return;
    };
    let bin = PathBuf::from(cache).join("npm/pm2/node_modules/.bin");
    assert!(bin.join("pm2").exists(), "run scripts/real-tools.sh");
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "studio", &[("db:studio", "node server.js")]);
    let home = sb.path().join("pm2-home");
    let port = free_port();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pm2 = |args: &[&str]| {
        Command::new(bin.join("pm2"))
            .args(args)
            .env("PM2_HOME", &home)
            .env("PATH", &path)
            .env("PORT", port.to_string())
            .envs(NPM_QUIET.iter().copied())
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("pm2 runs")
    };
    /// `pm2 kill` when the case ends, however it ends.
    struct Kill<F: Fn(&[&str]) -> std::process::ExitStatus>(F);
    impl<F: Fn(&[&str]) -> std::process::ExitStatus> Drop for Kill<F> {
        fn drop(&mut self) {
            (self.0)(&["kill"]);
        }
    }
    assert!(pm2(&["start", "npm", "--name", "studio", "--", "run", "db:studio"]).success());
    let _kill = Kill(pm2);
    let server = listening(port);
    let god: u32 = fs::read_to_string(home.join("pm2.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let r = card_until(&sb, server.pid, "its start-up behind it", |r| {
        life_settled(r) && r["activity"].is_object()
    });
    assert_eq!(r["kind"], "server", "known by launch: {r:#}");
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert_eq!(against(&r), ["managed"], "its manager alone: {r:#}");
    assert_eq!(r["managed_by"]["manager"], "pm2", "{r:#}");
    assert_eq!(r["managed_by"]["pid"], god, "{r:#}");
    stop_refuses(&sb, &r);
}

/// Case 9: another user's `npm run db:studio` is no candidate for root's scan of the same
/// folder: in their own project, and in a checkout of root's they work in (a project to root,
/// so only "never another user's" keeps it out).
#[test]
fn another_users_npm_run_db_studio_is_no_candidate() {
    if needs_root("another_users_npm_run_db_studio_is_no_candidate") {
        return;
    }
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    open_to_others(&sb);
    let other = Account::new("l");
    let home = sb.path().join("home");
    other.folder(&home, 0o755);
    let theirs = project(&sb, "theirs", &[("db:studio", "node server.js")]);
    other.own(&theirs);
    let checkout = project(&sb, "checkout", &[("db:studio", "node server.js")]);
    let mut servers = Vec::new();
    for dir in [&theirs, &checkout] {
        let port = free_port();
        let ok = other
            .run("setsid", &home)
            .args(["-f", "npm", "run", "db:studio"])
            .current_dir(dir)
            .env("PORT", port.to_string())
            .envs(NPM_QUIET.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("setpriv runs");
        assert!(ok.success(), "npm run db:studio as {}", other.name);
        let server = listening(port);
        let status = fs::read_to_string(format!("/proc/{}/status", server.pid)).unwrap();
        assert!(
            status
                .lines()
                .any(|l| l.starts_with("Uid:") && l.contains(&format!("\t{}\t", other.uid))),
            "the server is theirs: {status}"
        );
        servers.push(server);
    }
    let doc = scan(&sb, "100");
    for server in servers {
        assert!(
            start_time_of(server.pid) == Some(server.start_time),
            "it ran throughout the scan"
        );
        assert!(resource_with(&doc, server.pid).is_none(), "{doc:#}");
    }
    assert!(
        doc["projects"].as_array().unwrap().is_empty(),
        "no card for anything of theirs: {doc:#}"
    );
}

/// Case 10: another user's `package.json` makes no project of a folder of root's: in a shared
/// sticky folder (1777, like `/tmp`) or in root's own 0755 folder, root's listener there,
/// which carries a dev flag (`node server.js --dev`), is not known by launch — never green.
/// Nor does root's own `package.json` in a folder anyone may write (0777, not sticky: anyone
/// could swap the marker for theirs).
#[test]
fn another_users_package_json_above_a_folder_makes_no_project() {
    if needs_root("another_users_package_json_above_a_folder_makes_no_project") {
        return;
    }
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    open_to_others(&sb);
    let attacker = Account::new("m");
    let shared = mkdir(&sb.path().join("shared"), 0o1777);
    let lab = mkdir(&sb.path().join("lab"), 0o755);
    let open = mkdir(&sb.path().join("open"), 0o777);
    let mut servers = Vec::new();
    for above in [&shared, &lab, &open] {
        write_package(above, &[("db:studio", "node server.js")]);
        if above != &open {
            attacker.own(&above.join("package.json"));
        }
        let work = mkdir(&above.join("work"), 0o755);
        fs::write(work.join("server.js"), SERVER_JS).unwrap();
        let port = free_port();
        orphan(
            &sb,
            &work,
            &["node", "server.js", "--dev"],
            &[("PORT", &port.to_string())],
        );
        servers.push((above.clone(), listening(port)));
    }
    let doc = scan(&sb, "100");
    for (above, server) in &servers {
        let card = resource_with(&doc, server.pid);
        assert!(
            card.as_ref().is_none_or(|(_, r)| r["level"] != "green"),
            "{}: {card:#?}",
            above.display()
        );
        assert!(
            doc["projects"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| !Path::new(p["path"].as_str().unwrap()).starts_with(above)),
            "{} is no project: {doc:#}",
            above.display()
        );
    }
}

/// The positive path: `npm run db:studio` → `node server.js`, orphaned and idle, is green,
/// kind `server`, known by its launch; `pier stop` ends every pid, and `pier restart` brings
/// it back listening on its port.
#[test]
fn npm_run_db_studio_orphaned_and_idle_is_green_stops_whole_and_restarts() {
    if fixtures_cannot_be_orphans("npm_run_db_studio_orphaned_and_idle_is_green…") {
        return;
    }
    let sb = Sandbox::new();
    let _reaper = Reaper::of(&sb);
    let dir = project(&sb, "studio", &[("db:studio", "node server.js")]);
    let port = free_port();
    let root = orphan(
        &sb,
        &dir,
        &["npm", "run", "db:studio"],
        &[("PORT", &port.to_string())],
    );
    let server = listening(port);
    own_tree(&sb, root);
    let r = card_until(&sb, server.pid, "green after its start-up", |r| {
        r["level"] == "green"
    });
    assert_eq!(r["kind"], "server", "{r:#}");
    assert_eq!(r["root"]["pid"], root.pid, "npm is the root: {r:#}");
    let (_, why) = evidence_of(&r, "tool_kind").unwrap();
    assert!(
        why.contains("launched by `npm run db:studio` in this project"),
        "{why}"
    );
    let pids = members(&r);
    assert!(pids.len() >= 2, "npm and the server at least: {r:#}");

    let id = r["id"].as_str().unwrap();
    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id]));
    let result = &doc["results"][0];
    assert_eq!(
        (code, result["result"].as_str()),
        (0, Some("stopped")),
        "{doc:#}"
    );
    for p in &pids {
        assert!(
            !alive(p.pid),
            "pid {} runs on after the stop: {doc:#}",
            p.pid
        );
    }
    assert_eq!(listener(port), None, "the port is free");

    let snapshot = result["snapshot"].as_str().unwrap();
    let (code, back) = exit_and_json(&sb.pier_exact(&["restart", "--json", snapshot]));
    let again = Started {
        pid: back["pid"].as_u64().unwrap_or_default() as u32,
        start_time: back["start_time"].as_u64().unwrap_or_default(),
    };
    sb.own(again);
    own_tree(&sb, again);
    assert_eq!(
        (code, back["result"].as_str()),
        (0, Some("ready")),
        "{back:#}"
    );
    let listens = listening(port);
    assert!(
        tree(again).contains(&listens),
        "the restarted tree listens on {port}: {back:#}"
    );
}
