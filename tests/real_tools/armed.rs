//! "Stop when safe" against a real tool (docs/real-tools.md, "The idle clock"): started the
//! way developers start it, held red by a real client (a TCP connection the test holds), armed
//! with `pier stop --when-safe`; the client leaves, and `pier watch` fires the stop through the
//! chain once the card has stayed green for the settle. Judged against `/proc`: the report says
//! `stopped` and the tree is gone; `pier history` records the armed stop as who asked; then
//! `pier restart ID` (the undo) is ready and its port answers.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::batch::resource_of;
use super::watch::Watch;
use super::{cache, client, launch, lock, poll, truth, Case, Cleanup};
use crate::common::{self, Sandbox, Started};

/// Seconds between two rescans, and the settle before an armed stop fires.
const EVERY: u64 = 2;
const SETTLE: u64 = 4;

/// `pier scan --json` of the sandbox: the root's resource, its id and level.
fn card(sandbox: &Sandbox, root: Started) -> Result<(String, String), String> {
    let out = sandbox.pier(&["scan", "--json", "--sample-ms", "200"]);
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let r = resource_of(&doc, root).ok_or("not found yet")?;
    Ok((
        r["id"].as_str().unwrap_or_default().to_owned(),
        r["level"].as_str().unwrap_or_default().to_owned(),
    ))
}

/// The tree's listener on `port`, reached from this machine.
pub fn main_port(root: Started, port: u16) -> Result<SocketAddr, String> {
    truth::listeners(&truth::tree(root))
        .into_iter()
        .find(|l| l.port() == port)
        .map(truth::reach)
        .ok_or_else(|| format!("nothing of the tree listens on :{port} yet"))
}

/// Runs the armed cycle of `case` (a tool with a main port).
pub fn run_armed(case: Case) {
    let Some(cache) = cache(&case) else { return };
    if common::fixtures_cannot_be_orphans(case.name) {
        return;
    }
    let _lock = lock(&cache);
    let name = case.name;
    let sandbox = Sandbox::new();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sandbox.path().to_path_buf());
    let (project, ports, root) = launch::start_in(&case, &cache, sandbox.path());
    cleanup.roots.push(root);
    let tail = || {
        let log = std::fs::read_to_string(project.with_extension("log")).unwrap_or_default();
        log.lines().rev().take(10).collect::<Vec<_>>().join("\n")
    };
    let fail =
        |what: String| -> ! { panic!("{name}: {what}\n--- its output, last lines:\n{}", tail()) };

    // Held red by a real client.
    let main = poll(60, || main_port(root, ports[0])).unwrap_or_else(|e| fail(e));
    let held = client::tcp(main).unwrap_or_else(|e| fail(e));
    let id = poll(60, || match card(&sandbox, root)? {
        (id, level) if level == "red" => Ok(id),
        (_, level) => Err(format!("{level} with a client")),
    })
    .unwrap_or_else(|e| fail(format!("not red with a client: {e}")));
    let out = sandbox.pier(&["stop", "--when-safe", &id, "--json", "--sample-ms", "200"]);
    let armed: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    if out.status.code() != Some(0) || armed["results"][0]["result"] != "armed" {
        fail(format!("pier stop --when-safe {id}: {armed:#}"));
    }
    eprintln!(
        "{name}: red with a client, armed: {}",
        armed["results"][0]["waiting_for"]
    );

    let watch = Watch::start(&sandbox, EVERY, SETTLE);
    let waits = until(&watch, 30, |l| {
        let r = armed_in(l, &id)?;
        let w = r["armed"]["waiting_for"].to_string();
        w.contains("to leave").then_some(w)
    })
    .unwrap_or_else(|| fail("the arm never waited for the client".to_owned()));
    eprintln!("{name}: the watch holds the arm: waiting for {waits}");
    drop(held);
    let left = Instant::now();
    // Its normal close keeps the server used for a minute (TIME-WAIT), then the settle.
    let fired = until(&watch, 120, |l| {
        (l["event"] == "fired" && l["id"] == id.as_str()).then(|| l.clone())
    })
    .unwrap_or_else(|| fail("the armed stop did not fire within 120 s".to_owned()));
    check_fired(name, &fired, root, left);
    drop(watch);
    check_history(&sandbox, name);
    restart(&sandbox, &mut cleanup, &id, ports[0]).unwrap_or_else(|e| fail(e));
}

/// This arm's resource in a rescan line.
fn armed_in<'v>(line: &'v Value, id: &str) -> Option<&'v Value> {
    (line["event"] == "rescan")
        .then(|| line["resources"].as_array())
        .flatten()?
        .iter()
        .find(|r| r["id"] == id)
}

/// The first line within `secs` that `f` picks.
fn until<T>(watch: &Watch, secs: u64, mut f: impl FnMut(&Value) -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while let Some((_, line)) = watch.next(deadline) {
        if let Some(t) = f(&line) {
            return Some(t);
        }
    }
    None
}

/// The fired line: `stopped`, not before the settle, and the whole tree gone (from `/proc`).
fn check_fired(name: &str, line: &Value, root: Started, left: Instant) {
    let waited = left.elapsed();
    assert_eq!(line["report"]["result"], "stopped", "{name}: {line:#}");
    assert!(
        waited >= Duration::from_secs(SETTLE),
        "{name}: fired {:.1} s after the client left, before the settle",
        waited.as_secs_f64()
    );
    let tree = truth::tree(root);
    poll(20, || match tree.iter().find(|p| truth::runs(**p)) {
        Some(p) => Err(format!("pid {} ({}) runs", p.pid, truth::command(p.pid))),
        None => Ok(()),
    })
    .unwrap_or_else(|e| panic!("{name}: reported stopped, but {e}"));
    eprintln!(
        "{name}: fired {:.1} s after the client left: stopped, the tree gone",
        waited.as_secs_f64()
    );
}

/// `pier history --json`: the stop's record names the armed stop as who asked.
fn check_history(sandbox: &Sandbox, name: &str) {
    let out = sandbox.pier_exact(&["history", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        doc["snapshots"][0]["requested_by"]["kind"], "armed",
        "{name}: pier history: {doc:#}"
    );
}

/// `pier restart ID` (the undo): ready, and its port answers a `GET`.
fn restart(sandbox: &Sandbox, cleanup: &mut Cleanup, id: &str, port: u16) -> Result<(), String> {
    let out = sandbox.pier_exact(&["restart", id, "--json", "--wait", "60"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let new = match (doc["pid"].as_u64(), doc["start_time"].as_u64()) {
        (Some(pid), Some(start_time)) => Started {
            pid: pid as u32,
            start_time,
        },
        _ => return Err(format!("restart {id} names no new root: {doc:#}")),
    };
    cleanup.roots.push(new);
    if doc["result"] != "ready" {
        return Err(format!("restart {id}: {doc:#}"));
    }
    let main = poll(30, || main_port(new, port))?;
    let line = client::http_get(main, "/", Duration::from_secs(30))?;
    eprintln!("restart {id}: ready as pid {}, GET /: {line}", new.pid);
    Ok(())
}
