//! Automatic-stop rules against real tools (docs/real-tools.md, "The idle clock"): several
//! tools started the way developers start them, each in its own project of one sandbox, with
//! `rules.toml` saying `idle = "3s"` and one `pier watch --json --every 1`. While a real client
//! asks each for its page in a loop (a whole request every half second, closed as curl closes
//! it), no rule stops any of them for [`HELD`] rescans; once the clients stop, each is stopped
//! by the rule (after its last request's closed connection has left the tables and its idle
//! time has passed), through the chain: the tree gone (from `/proc`), the record saying the
//! rule asked, and `pier restart ID` (the undo) ready, its port answering.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::armed::main_port;
use super::watch::{in_rescan, Watch};
use super::{cache, client, lock, poll, truth, Case, Cleanup};
use crate::common::{self, Sandbox, Started};

/// Rescans, with the clients asking, that must stop nothing.
const HELD: usize = 30;
/// The longest from the clients' end to a tool's stop: the last closed connection shows for
/// 60 s (TIME-WAIT), then the rule's 3 s, and some rescans.
const STOPPED_WITHIN: Duration = Duration::from_secs(120);

/// One tool of the run.
struct Tool<'c> {
    case: &'c Case,
    project: PathBuf,
    port: u16,
    root: Started,
    /// Where its main port answers (from `/proc`).
    main: SocketAddr,
    id: Option<String>,
}

/// Asks `to` for `/` in a loop until `stop`, each a whole request closed normally.
fn asker(to: SocketAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut answered = 0;
        while !stop.load(Ordering::Relaxed) {
            if client::whole_request(to, "/", Duration::from_secs(30)).is_ok() {
                answered += 1;
            }
            // The client's own pace, half a second between requests: not a synchronisation.
            std::thread::sleep(Duration::from_millis(500));
        }
        answered
    })
}

/// Runs the rule's cycle over `cases` (tools with a main port that answers `GET /`).
pub fn run_ruled(name: &str, cases: &[Case]) {
    let Some(cache) = cache(&cases[0]) else {
        return;
    };
    if common::fixtures_cannot_be_orphans(name) {
        return;
    }
    let _lock = lock(&cache);
    let sandbox = Sandbox::new();
    let config = sandbox.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let rules = "[[rule]]\nname = \"idle 3 s\"\nidle = \"3s\"\n";
    std::fs::write(config.join("rules.toml"), rules).unwrap();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sandbox.path().to_path_buf());
    let mut tools: Vec<Tool> = cases
        .iter()
        .map(|case| {
            let (project, ports, root) = super::launch::start_in(case, &cache, sandbox.path());
            cleanup.roots.push(root);
            let main = poll(90, || main_port(root, ports[0]))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            client::http_get(main, "/", Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            Tool {
                case,
                project,
                port: ports[0],
                root,
                main,
                id: None,
            }
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let askers: Vec<_> = tools.iter().map(|t| asker(t.main, stop.clone())).collect();
    let watch = Watch::start(&sandbox, 1, 2);
    held(&watch, &mut tools);
    stop.store(true, Ordering::Relaxed);
    for (t, a) in tools.iter().zip(askers) {
        eprintln!("{}: {} requests answered", t.case.name, a.join().unwrap());
    }
    let left = Instant::now();
    stopped(&watch, &tools, left);
    drop(watch);
    for t in &tools {
        undo(&sandbox, &mut cleanup, t);
    }
}

/// [`HELD`] rescans with the clients asking: no rule stops any tool, none is due.
fn held(watch: &Watch, tools: &mut [Tool]) {
    let deadline = Instant::now() + Duration::from_secs(HELD as u64 * 4 + 60);
    let mut rescans = 0;
    while rescans < HELD {
        let Some((_, line)) = watch.next(deadline) else {
            panic!("pier watch: {HELD} rescans did not come ({rescans} did)");
        };
        assert_ne!(
            line["event"], "ruled",
            "a rule stopped a tool with a client: {line:#}"
        );
        if line["event"] != "rescan" {
            continue;
        }
        rescans += 1;
        for t in tools.iter_mut() {
            let Some(r) = in_rescan(&line, &t.project) else {
                continue;
            };
            assert_ne!(
                r["auto"]["state"], "due",
                "{}: due with a client: {r:#}",
                t.case.name
            );
            t.id = r["id"].as_str().map(str::to_owned);
        }
    }
    for t in tools.iter() {
        assert!(t.id.is_some(), "{}: never in a rescan", t.case.name);
        eprintln!(
            "{}: {HELD} rescans with its client, not stopped",
            t.case.name
        );
    }
}

/// Each tool stopped by the rule once its client has left: `stopped`, its tree gone.
fn stopped(watch: &Watch, tools: &[Tool], left: Instant) {
    let deadline = left + STOPPED_WITHIN;
    let mut done = vec![false; tools.len()];
    while done.contains(&false) {
        let Some((_, line)) = watch.next(deadline) else {
            let late: Vec<&str> = (0..tools.len())
                .filter(|&i| !done[i])
                .map(|i| tools[i].case.name)
                .collect();
            panic!("not stopped by the rule within {STOPPED_WITHIN:?}: {late:?}");
        };
        if line["event"] != "ruled" {
            continue;
        }
        let i = tools
            .iter()
            .position(|t| t.id.as_deref() == line["id"].as_str())
            .unwrap_or_else(|| panic!("a rule stopped what is not a tool of the run: {line:#}"));
        check_ruled(&tools[i], &line, left);
        done[i] = true;
    }
}

fn check_ruled(t: &Tool, line: &Value, left: Instant) {
    let name = t.case.name;
    assert_eq!(line["report"]["result"], "stopped", "{name}: {line:#}");
    assert_eq!(line["rule"], "idle 3 s", "{name}: {line:#}");
    let tree = truth::tree(t.root);
    poll(20, || match tree.iter().find(|p| truth::runs(**p)) {
        Some(p) => Err(format!("pid {} ({}) runs", p.pid, truth::command(p.pid))),
        None => Ok(()),
    })
    .unwrap_or_else(|e| panic!("{name}: reported stopped, but {e}"));
    eprintln!(
        "{name}: stopped by the rule ({}) {:.1} s after its client left, the tree gone",
        line["because"],
        left.elapsed().as_secs_f64()
    );
}

/// The record names the rule; `pier restart ID` is ready and the port answers.
fn undo(sandbox: &Sandbox, cleanup: &mut Cleanup, t: &Tool) {
    let name = t.case.name;
    let id = t.id.as_deref().unwrap();
    let out = sandbox.pier_exact(&["history", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let entry = doc["snapshots"]
        .as_array()
        .and_then(|s| s.iter().find(|e| e["id"] == id))
        .unwrap_or_else(|| panic!("{name}: no record of its stop: {doc:#}"));
    assert_eq!(entry["requested_by"]["kind"], "rule", "{name}: {entry:#}");
    assert_eq!(
        entry["requested_by"]["name"], "idle 3 s",
        "{name}: {entry:#}"
    );
    let out = sandbox.pier_exact(&["restart", id, "--json", "--wait", "60"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let new = match (doc["pid"].as_u64(), doc["start_time"].as_u64()) {
        (Some(pid), Some(start_time)) => Started {
            pid: pid as u32,
            start_time,
        },
        _ => panic!("{name}: pier restart {id} names no new root: {doc:#}"),
    };
    cleanup.roots.push(new);
    assert_eq!(doc["result"], "ready", "{name}: pier restart {id}: {doc:#}");
    let main = poll(30, || main_port(new, t.port)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let line = client::http_get(main, "/", Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("{name}: restarted, but {e}"));
    eprintln!("{name}: pier restart {id}: ready, GET /: {line}");
}
