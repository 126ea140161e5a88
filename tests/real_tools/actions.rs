//! The action steps of a case: `pier stop` (and its refusal under a live launcher), `pier
//! restart`, a second restart. Each returns a one-line detail when it holds, or what Pier said
//! against the ground truth when it does not.

use std::time::Duration;

use serde_json::Value;

use super::steps::{described, ident, main_listener};
use super::verdict;
use super::{client, poll, truth, Ctx};
use crate::common::Started;

/// `pier ARGS --json` with the sandbox's state folder: the exit code and the document.
fn pier_json(c: &Ctx, args: &[&str]) -> Result<(i32, Value), String> {
    let out = c.sandbox.pier_exact(args);
    let doc = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "pier {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok((out.status.code().unwrap_or(-1), doc))
}

/// `pier stop :PORT --dry-run` (a watcher's: by its id): the port's one holder is this resource, it would be stopped,
/// every signal it names goes to a process of the tree (leaf first), and the tree runs on,
/// same identities, with no snapshot written.
pub fn dry_run_by_port(c: &mut Ctx) -> Result<String, String> {
    // A watcher listens nowhere: its dry run is by id.
    let port = match main_listener(c) {
        Ok(listener) => format!(":{}", listener.port()),
        Err(_) => c.id.clone(),
    };
    let tree = truth::tree(c.root);
    // The case's stop arguments are only ever a grace, which a dry run never waits. A dry run
    // samples activity as the stop does, so a tool busy again (Next compiling the page the
    // client step asked for) is let settle as before a stop.
    let args = ["stop", &port, "--dry-run", "--json"].map(String::from);
    let (code, doc) = stop_when_settled(c, &args, &tree)?;
    let mut wrong = Vec::new();
    if port.starts_with(':') && doc["ports"][0]["stops"] != c.id.as_str() {
        wrong.push(format!("{port} names {:#}, not {}", doc["ports"][0], c.id));
    }
    let res = &doc["results"][0];
    if res["result"] != "would_stop" || code != 0 {
        wrong.push(format!("exit {code}, {}: {}", res["result"], res["reason"]));
    }
    let planned: Vec<Option<Started>> = res["would_signal"]
        .as_array()
        .into_iter()
        .flatten()
        .map(ident)
        .collect();
    for p in &planned {
        match p {
            Some(p) if tree.contains(p) => {}
            other => wrong.push(format!("would signal {other:?}, not a process of the tree")),
        }
    }
    if planned.first().copied().flatten() == Some(c.root) && planned.len() > 1 {
        wrong.push("the root would be signalled first, not last".into());
    }
    let gone: Vec<String> = tree
        .iter()
        .filter(|p| !truth::runs(**p))
        .map(described)
        .collect();
    if !gone.is_empty() {
        wrong.push(format!("gone after a dry run: {}", gone.join(", ")));
    }
    let records = c.sandbox.path().join("state/records");
    let written = std::fs::read_dir(&records)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("snap-"))
        .count();
    if written > 0 {
        wrong.push(format!("{written} snapshot(s) written by a dry run"));
    }
    verdict(
        format!(
            "{port} would stop {} ({} signals planned)",
            c.id,
            planned.len()
        ),
        &wrong,
    )
}

pub fn stop(c: &mut Ctx) -> Result<String, String> {
    stop_with(c, &[])
}

/// A yellow case's stop: only a stop anyway stops it.
pub fn force_stop(c: &mut Ctx) -> Result<String, String> {
    stop_with(c, &crate::common::ANYWAY_ALL)
}

/// tmux: the server typed into a live shell is stopped anyway, its live parent set aside and
/// named; the shell it was typed into, the person's, runs on.
pub fn stop_anyway_in_tmux(c: &mut Ctx) -> Result<String, String> {
    let shell = truth::table()
        .into_iter()
        .find(|(p, _)| *p == c.root)
        .and_then(|(_, ppid)| truth::identity(ppid))
        .ok_or("the root's shell is not found")?;
    let stopped = stop_keeping(c, &["--anyway", "--accept", "not_orphaned"], &[shell])?;
    if !truth::runs(shell) {
        return Err(format!("the pane's shell (pid {}) was ended", shell.pid));
    }
    let (_, history) = pier_json(c, &["history", "--json"])?;
    let aside = &history["snapshots"][0]["set_aside"][0]["reason"];
    if aside != "not_orphaned" {
        return Err(format!(
            "the record names no live parent set aside: {history}"
        ));
    }
    Ok(format!(
        "{stopped}; the pane's shell (pid {}) runs on",
        shell.pid
    ))
}

fn stop_with(c: &mut Ctx, extra: &[&str]) -> Result<String, String> {
    stop_keeping(c, extra, &[])
}

/// [`stop_with`], where `keep` (the shell a server was typed into) works in the project and
/// must run on: no member, no stray.
fn stop_keeping(c: &mut Ctx, extra: &[&str], keep: &[Started]) -> Result<String, String> {
    let tree = truth::tree(c.root);
    let mut args = vec!["stop".to_owned(), c.id.clone(), "--json".to_owned()];
    args.extend(
        c.case
            .stop_args
            .iter()
            .chain(extra)
            .map(|a| (*a).to_owned()),
    );
    let (code, doc) = stop_when_settled(c, &args, &tree)?;
    let ended = truth::now_ticks();
    let runs_now: Vec<(Started, bool)> = tree.iter().map(|p| (*p, truth::runs(*p))).collect();
    let strays: Vec<Started> = truth::working_in(&c.project)
        .into_iter()
        .filter(|p| !tree.contains(p) && !keep.contains(p))
        .collect();
    let res = &doc["results"][0];
    let result = res["result"].as_str().unwrap_or_default();
    let mut wrong = Vec::new();
    let reported: Vec<(Started, String)> = res["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| Some((ident(m)?, m["outcome"].as_str()?.to_owned())))
        .collect();
    for (p, alive) in &runs_now {
        match reported.iter().find(|(q, _)| q == p) {
            None => wrong.push(format!("{} is not in the report", described(p))),
            Some((_, o)) if *alive && o != "still_running" => {
                wrong.push(format!("{} reported {o} but runs", described(p)))
            }
            Some((_, o)) if !*alive && o == "still_running" => {
                wrong.push(format!("{} reported still_running but is gone", p.pid))
            }
            Some(_) => {}
        }
    }
    let running: Vec<String> = runs_now
        .iter()
        .filter(|(_, alive)| *alive)
        .map(|(p, _)| p)
        .chain(&strays)
        .map(described)
        .collect();
    if result == "stopped" && !running.is_empty() {
        wrong.push(format!(
            "result stopped while these run (members, or not members of the tree): {}",
            running.join(", ")
        ));
    }
    if (code == 0) != (result == "stopped") {
        wrong.push(format!("exit code {code} with result {result}"));
    }
    // Processes born during the stop: once Pier reports them, each one still running must be
    // there, with that fate. One born after Pier ended, to a process the report says still
    // runs, cannot be: uvicorn's supervisor, told to stop while it waits up to 5 s on a slow
    // worker's health check, kills and respawns it before it reads its SIGTERM (seen under
    // load) — and the report said the supervisor still ran.
    if let Some(newcomers) = res.get("newcomers").and_then(Value::as_array) {
        let still_running: Vec<u64> = reported
            .iter()
            .filter(|(_, o)| o == "still_running")
            .map(|(p, _)| u64::from(p.pid))
            .chain(
                newcomers
                    .iter()
                    .filter(|n| n["fate"] == "still_running")
                    .filter_map(|n| n["pid"].as_u64()),
            )
            .collect();
        let table = truth::table();
        let born_after_to_a_runner = |s: &Started| {
            s.start_time > ended
                && table
                    .iter()
                    .find(|(p, _)| p == s)
                    .is_some_and(|(_, pp)| still_running.contains(&u64::from(*pp)))
        };
        for s in strays.iter().filter(|s| !born_after_to_a_runner(s)) {
            let listed = newcomers
                .iter()
                .any(|n| ident(n) == Some(*s) && n["fate"] == "still_running");
            if !listed {
                wrong.push(format!(
                    "{} runs after the stop, not a member, not a newcomer still_running",
                    described(s)
                ));
            }
        }
        for n in newcomers {
            let Some(p) = ident(n) else {
                wrong.push(format!("a newcomer without an identity: {n}"));
                continue;
            };
            match n["fate"].as_str() {
                Some("exited") if truth::runs(p) => wrong.push(format!(
                    "newcomer {} reported exited but runs",
                    described(&p)
                )),
                Some("still_running") if !strays.contains(&p) && !truth::runs(p) => wrong.push(
                    format!("newcomer {} reported still_running but is gone", p.pid),
                ),
                Some("exited" | "still_running") => {}
                _ => wrong.push(format!("newcomer {} with fate {}", p.pid, n["fate"])),
            }
        }
    }
    let grace: u64 = c
        .case
        .stop_args
        .windows(2)
        .find(|w| w[0] == "--grace")
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(5);
    let gone = poll(grace + 15, || {
        match tree.iter().find(|p| truth::runs(**p)) {
            Some(p) => Err(format!("{} still runs", described(p))),
            None => Ok(()),
        }
    });
    if let Err(e) = gone {
        wrong.push(e);
    }
    let outcomes: Vec<String> = reported
        .iter()
        .map(|(p, o)| format!("{}={o}", p.pid))
        .collect();
    let newcomers: Vec<String> = res["newcomers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| format!("{}={} ({})", n["pid"], n["fate"], n["how"]))
        .collect();
    let summary = format!(
        "result {result} ({}), {}; newcomers: [{}]",
        res["reason"],
        outcomes.join(" "),
        newcomers.join(", ")
    );
    verdict(summary, &wrong)
}

pub fn restart(c: &mut Ctx) -> Result<String, String> {
    let wait = c.case.restart_wait.to_string();
    let (code, doc) = pier_json(c, &["restart", &c.id, "--json", "--wait", &wait])?;
    if let Some(new) = ident(&doc) {
        c.cleanup.roots.push(new);
    }
    if code != 0 || doc["result"] != "ready" {
        return Err(format!(
            "exit code {code}, {} ({}); log: {}",
            doc["result"], doc["reason"], doc["log_tail"]
        ));
    }
    let reason = doc["reason"].as_str().unwrap_or_default();
    if c.case.launch == super::Launch::Tmux
        && !reason.contains("it runs in a session of its own now")
    {
        return Err(format!(
            "a restart of what was stopped anyway in tmux says {reason:?}"
        ));
    }
    let new = ident(&doc).ok_or("ready without a pid")?;
    if c.listeners.is_empty() {
        // A watcher with no port: ready means started; the tree runs.
        return if truth::runs(new) {
            Ok(format!("ready as pid {}, no port", new.pid))
        } else {
            Err(format!("ready, but pid {} no longer runs", new.pid))
        };
    }
    let main = main_listener(c)?;
    let now = truth::listeners(&truth::tree(new));
    if !now.contains(&main) {
        return Err(format!(
            "ready, but the new tree listens on {now:?}, not {main}"
        ));
    }
    let Some(path) = c.case.http_path else {
        return Ok(format!("ready as pid {}", new.pid));
    };
    let line = client::http_get(truth::reach(main), path, Duration::from_secs(60))?;
    Ok(format!("ready as pid {}, GET {path}: {line}", new.pid))
}

pub fn second_restart(c: &mut Ctx) -> Result<String, String> {
    restart_refused_saying(c, "already runs")
}

/// A real tool may be busy again when the stop (or its dry run) samples it (Next works on
/// after its page closed, seen under CI's load): a stop refused at its activity check is Pier's honest answer,
/// not what the step is about. Such a refusal must have sent nothing — the tree runs on, the
/// same identities — and then the tool is let settle (the idle step's poll) and the stop is
/// asked again, three times at most; the last answer is judged as any other.
fn stop_when_settled(
    c: &mut Ctx,
    args: &[String],
    tree: &[Started],
) -> Result<(i32, Value), String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut attempt = 1;
    loop {
        let (code, doc) = pier_json(c, &args)?;
        let res = &doc["results"][0];
        if attempt == 3 || res["result"] != "refused" || res["checkpoint"] != "b" {
            return Ok((code, doc));
        }
        if truth::tree(c.root) != tree {
            return Err(format!("refused as busy, yet the tree changed: {res}"));
        }
        eprintln!(
            "{}: the stop was refused as busy ({}), nothing sent; letting it settle",
            c.case.name, res["reason"]
        );
        super::steps::idle(c)?;
        attempt += 1;
    }
}

/// A yellow case's restart: refused (exit 3), the reason saying what [`Case::yellow`] said.
pub fn restart_refused(c: &mut Ctx) -> Result<String, String> {
    let expected = c.case.yellow.map_or("", |y| y.restart_refused);
    restart_refused_saying(c, expected)
}

/// `pier restart ID` is refused (exit 3), its reason holding `expected`.
fn restart_refused_saying(c: &mut Ctx, expected: &str) -> Result<String, String> {
    let (code, doc) = pier_json(c, &["restart", &c.id, "--json"])?;
    if let Some(new) = ident(&doc) {
        c.cleanup.roots.push(new);
    }
    let reason = doc["reason"].as_str().unwrap_or_default();
    if code == 3 && doc["result"] == "refused" && reason.contains(expected) {
        Ok(format!("refused: {reason}"))
    } else {
        Err(format!(
            "exit code {code}, {} ({reason:?}); expected refused, saying {expected:?}",
            doc["result"]
        ))
    }
}

pub fn stop_refused(c: &mut Ctx) -> Result<String, String> {
    stop_refused_with(c, &[])
}

/// A case that is never stopped (a data service): a stop anyway is refused as well.
pub fn force_refused(c: &mut Ctx) -> Result<String, String> {
    stop_refused_with(c, &crate::common::ANYWAY_ALL)
}

/// `pier stop ID --json EXTRA` refuses (exit 3), and the tree runs on, same identities.
fn stop_refused_with(c: &mut Ctx, extra: &[&str]) -> Result<String, String> {
    let tree = truth::tree(c.root);
    let mut args = vec!["stop", c.id.as_str(), "--json"];
    args.extend_from_slice(extra);
    let (code, doc) = pier_json(c, &args)?;
    let res = &doc["results"][0];
    let mut wrong = Vec::new();
    if code != 3 || res["result"] != "refused" {
        wrong.push(format!("exit code {code}, result {}", res["result"]));
    }
    if truth::tree(c.root) != tree {
        wrong.push("the tree changed".to_owned());
    }
    wrong.extend(
        tree.iter()
            .filter(|p| !truth::runs(**p))
            .map(|p| format!("{} is gone", p.pid)),
    );
    if wrong.is_empty() {
        Ok(format!("refused ({}), the tree runs on", res["reason"]))
    } else {
        Err(format!("{}; {res}", wrong.join("; ")))
    }
}
