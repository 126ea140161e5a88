//! A batch of real tools (docs/decisions.md, "Batches"): several tools started the way developers
//! start them, each in its own project of one sandbox, and one `pier stop --all-green` over them
//! all, as "Clean up all safe" runs it — judged against `/proc`, never Pier: every result
//! `stopped`, every process of every tree gone, nothing left working in any project; then each
//! snapshot restarts, ready.

use serde_json::Value;

use super::{cache, launch, lock, poll, truth, Case, Cleanup};
use crate::common::{self, Sandbox, Started};

/// The resource `root` is a member of in a scan, and its level.
pub fn resource_of(doc: &Value, root: Started) -> Option<&Value> {
    doc["projects"]
        .as_array()?
        .iter()
        .flat_map(|p| p["resources"].as_array().into_iter().flatten())
        .find(|r| {
            r["members"].as_array().into_iter().flatten().any(|m| {
                m["pid"].as_u64() == Some(u64::from(root.pid))
                    && m["start_time"].as_u64() == Some(root.start_time)
            })
        })
}

/// Starts every case, waits until each is green, stops them in one batch and restarts each.
pub fn run_batch(name: &str, cases: &[Case]) {
    let mut dirs = Vec::new();
    for case in cases {
        let Some(dir) = cache(case) else { return };
        dirs.push(dir);
    }
    if common::fixtures_cannot_be_orphans(name) {
        return;
    }
    let cache = &dirs[0];
    let _lock = lock(cache);
    let sandbox = Sandbox::new();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sandbox.path().to_path_buf());
    let mut started = Vec::new();
    for case in cases {
        let (project, _, root) = launch::start_in(case, cache, sandbox.path());
        cleanup.roots.push(root);
        started.push((case, project, root));
    }
    let tails = || {
        started
            .iter()
            .map(|(c, p, _)| {
                let log = std::fs::read_to_string(p.with_extension("log")).unwrap_or_default();
                let lines: Vec<&str> = log.lines().collect();
                format!(
                    "--- {}:\n{}",
                    c.name,
                    lines[lines.len().saturating_sub(8)..].join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };

    // Every tool green (started, listening, settled), with its own kind: green over a window
    // as long as the stop's, twice in a row with the same trees — a reloader listens before
    // its worker has started, and that start is work the stop's sample would see.
    let before = std::cell::RefCell::new(Vec::new());
    let trees = poll(120, || {
        let out = sandbox.pier(&["scan", "--json", "--sample-ms", "500"]);
        let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        let mut trees = Vec::new();
        for (case, _, root) in &started {
            let r =
                resource_of(&doc, *root).ok_or_else(|| format!("{}: not found yet", case.name))?;
            if r["level"] != "green" || r["kind"] != case.kind {
                return Err(format!("{}: {} {}", case.name, r["kind"], r["level"]));
            }
            trees.push((
                r["id"].as_str().unwrap_or_default().to_owned(),
                truth::tree(*root),
            ));
        }
        if before.replace(trees.clone()) != trees {
            return Err("the trees changed since the last scan".to_owned());
        }
        Ok(trees)
    })
    .unwrap_or_else(|e| {
        panic!(
            "{name}: the tools did not all settle green: {e}\n{}",
            tails()
        )
    });
    let members: usize = trees.iter().map(|(_, t)| t.len()).sum();
    eprintln!(
        "{name}: {} resources green, {members} processes",
        trees.len()
    );

    let out = sandbox.pier(&["stop", "--json", "--all-green", "--grace", "5"]);
    // What runs the moment the stop returned: what its reports must agree with.
    let running_then: Vec<Started> = trees
        .iter()
        .flat_map(|(_, t)| t.iter().copied())
        .chain(started.iter().flat_map(|(_, p, _)| truth::working_in(p)))
        .filter(|p| truth::runs(*p))
        .collect();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: pier stop printed no JSON ({e})"));
    let mut wrong = Vec::new();
    for r in doc["results"].as_array().into_iter().flatten() {
        for m in r["members"].as_array().into_iter().flatten() {
            let (Some(pid), Some(start_time)) = (m["pid"].as_u64(), m["start_time"].as_u64())
            else {
                continue;
            };
            let p = Started {
                pid: pid as u32,
                start_time,
            };
            let runs = running_then.contains(&p);
            if runs != (m["outcome"] == "still_running") {
                wrong.push(format!(
                    "pid {pid} reported {} but runs: {runs}",
                    m["outcome"]
                ));
            }
        }
    }
    if doc["results"]
        .as_array()
        .is_some_and(|rs| rs.iter().all(|r| r["result"] == "stopped"))
        && !running_then.is_empty()
    {
        let left: Vec<String> = running_then
            .iter()
            .map(|p| format!("pid {} ({})", p.pid, truth::command(p.pid)))
            .collect();
        wrong.push(format!(
            "every result stopped while these ran: {}",
            left.join(", ")
        ));
    }
    for (id, _) in &trees {
        let r = doc["results"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["id"] == id.as_str());
        match r {
            Some(r) if r["result"] == "stopped" => {}
            Some(r) => wrong.push(format!("{id}: {} ({})", r["result"], r["reason"])),
            None => wrong.push(format!("{id}: no result")),
        }
    }
    if out.status.code() != Some(0) {
        wrong.push(format!("exit code {:?}", out.status.code()));
    }
    let gone = poll(20, || {
        let left: Vec<String> = trees
            .iter()
            .flat_map(|(_, t)| t.iter())
            .chain(
                started
                    .iter()
                    .flat_map(|(_, p, _)| truth::working_in(p))
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .filter(|p| truth::runs(**p))
            .map(|p| format!("pid {} ({})", p.pid, truth::command(p.pid)))
            .collect();
        if left.is_empty() {
            Ok(())
        } else {
            Err(left.join(", "))
        }
    });
    if let Err(e) = gone {
        wrong.push(format!("still running after the stop: {e}"));
    }
    assert!(
        wrong.is_empty(),
        "{name}: the batch against the truth: {}\n{doc:#}\n{}",
        wrong.join("; "),
        tails()
    );
    eprintln!("{name}: one batch stopped every resource, every tree gone");

    // A batch's complete stops are restartable, each from its own snapshot.
    for r in doc["results"].as_array().into_iter().flatten() {
        let snapshot = r["snapshot"].as_str().unwrap_or_default();
        let out = sandbox.pier_exact(&["restart", snapshot, "--json", "--wait", "60"]);
        let again: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        assert_eq!(
            again["result"],
            "ready",
            "{name}: restart of {snapshot}: {again:#}\n{}",
            tails()
        );
        let root = match (again["pid"].as_u64(), again["start_time"].as_u64()) {
            (Some(pid), Some(start_time)) => Started {
                pid: pid as u32,
                start_time,
            },
            _ => panic!("{name}: restart of {snapshot} names no new root: {again:#}"),
        };
        cleanup.roots.push(root);
        assert!(
            truth::runs(root),
            "{name}: the restarted root {} does not run",
            root.pid
        );
    }
    eprintln!("{name}: every snapshot restarted, ready");
}
