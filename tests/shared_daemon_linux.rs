//! Shared daemons are not residue while in use (issue 45, docs/design.md §2.4), against a real
//! one: Debian's gopls. Its forwarder (`gopls -remote=auto`, what editors run) starts the
//! shared daemon (`gopls serve -listen unix;<TMPDIR>/gopls-…-daemon.<user> -listen.timeout
//! 1m0s`) in a session of its own, and every later forwarder attaches to it over that unix
//! socket. With its forwarder killed the daemon is orphaned: green when idle with no client,
//! red while another forwarder is attached (the card names it, and a stop is refused), green
//! again once that client is gone. (watchman is not here: its server changes its folder to
//! `/`, so no scan scoped to the test's folder can see it; Debian's 4.9 also forks its server
//! from the first client, with that client's argv.)
//!
//! Everything lives in the test's temporary folder (`TMPDIR` places the daemon's socket
//! there); scans are scoped to it with `--under`, the stop names the daemon's id; only the processes the test
//! started are signalled: its forwarders through their handles, the daemon by its identity.
//! Runs with the real-tools suite (`scripts/real-tools.sh` installs `gopls` from
//! `tests/real_tools/apt/daemons.txt`); without `PIER_REAL_TOOLS` it skips with one line.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

/// A forwarder as an editor starts it: stdio to the editor (here: the test's pipe, kept open),
/// the shared daemon found or started through `TMPDIR`.
fn forwarder(dir: &Path, name: &str) -> Child {
    Command::new("gopls")
        .arg("-remote=auto")
        .arg(format!(
            "-logfile={}",
            dir.join(format!("{name}.log")).display()
        ))
        .env("TMPDIR", dir)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gopls runs")
}

/// Ends a forwarder the test started, through its handle (its pid cannot be reused before it
/// is reaped).
fn end(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The shared daemon `parent` started: its child running `gopls serve -listen …`.
fn daemon_of(parent: u32) -> Started {
    wait_for("the shared gopls daemon", || {
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let serves = argv.split(|&b| b == 0).any(|a| a == b"-listen");
            if ppid_of(pid) != Some(parent) || !serves {
                return None;
            }
            Some(Started {
                pid,
                start_time: start_time_of(pid)?,
            })
        })
    })
}

/// The daemon's card in a fresh scan, once `until` holds for it (each scan samples 100 ms).
fn card(sb: &Sandbox, daemon: u32, what: &str, until: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    let found = wait_within(what, Duration::from_secs(40), || {
        let (_, r) = resource_with(&sb.scan(&[]), daemon)?;
        let done = until(&r);
        last = r.clone();
        done.then_some(r)
    });
    found.unwrap_or_else(|| panic!("{what}: the last card was {last:#}"))
}

/// Polls `f` until it answers or `deadline` passes (`None` then: the caller says what it saw).
fn wait_within<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = std::time::Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if std::time::Instant::now() >= end {
            eprintln!("timed out waiting for {what}");
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn message_of(r: &Value, needle: &str) -> Option<(String, String)> {
    r["evidence"].as_array()?.iter().find_map(|e| {
        let m = e["message"].as_str()?;
        m.contains(needle)
            .then(|| (e["level"].as_str().unwrap().to_owned(), m.to_owned()))
    })
}

/// Whether the test may run: the real-tools suite's tools installed, and orphans possible.
fn runs(name: &str) -> bool {
    if std::env::var_os("PIER_REAL_TOOLS").is_none() {
        eprintln!(
            "{name}: skipped, the real-tools suite runs with its tools installed: \
             scripts/real-tools.sh, then PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test \
             --test shared_daemon_linux"
        );
        return false;
    }
    !fixtures_cannot_be_orphans(name)
}

/// The client's connection and the shared sentence on a card in use, naming `program` `pid`.
fn assert_in_use(used: &Value, program: &str, pid: u32) {
    assert_eq!(used["level"], "red", "{used:#}");
    let (level, live) = message_of(used, "live connection on unix socket").unwrap();
    assert_eq!(level, "red");
    assert!(
        live.contains(&format!("from {program} (")) && live.contains(&format!("pid {pid}")),
        "the connection names its client: {live}"
    );
    let (_, shared) = message_of(used, "shared and in use").unwrap();
    assert_eq!(
        shared,
        format!(
            "shared and in use: 1 client attached ({program} pid {pid}): not residue while in use"
        )
    );
}

#[test]
fn a_shared_gopls_daemon_is_red_while_a_forwarder_is_attached_and_green_once_it_is_gone() {
    if !runs("shared gopls daemon") {
        return;
    }
    let sb = Sandbox::new();
    let dir = sb.path().join("gopls");
    std::fs::create_dir_all(&dir).unwrap();

    // The first forwarder starts the daemon; killed, it leaves the daemon orphaned.
    let first = forwarder(&dir, "first");
    let starter = first.id();
    let daemon = daemon_of(starter);
    sb.own(daemon);
    end(first);
    wait_for("the daemon orphaned", || {
        (ppid_of(daemon.pid).is_some_and(|p| p != starter)).then_some(())
    });
    let idle = card(&sb, daemon.pid, "green with no client", |r| {
        r["level"] == "green"
    });
    assert_eq!(idle["kind"], "gopls-daemon", "{idle:#}");
    assert_eq!(
        message_of(&idle, "shared by no one")
            .map(|(_, m)| m)
            .as_deref(),
        Some("shared by no one now: no client attached")
    );

    // A second forwarder attaches over the daemon's unix socket: a live connection.
    let second = forwarder(&dir, "second");
    let client = second.id();
    let used = card(&sb, daemon.pid, "red with a forwarder attached", |r| {
        message_of(r, "live connection on unix socket").is_some()
    });
    assert_in_use(&used, "gopls", client);
    let (_, live) = message_of(&used, "live connection on unix socket").unwrap();
    assert!(
        live.contains("-daemon."),
        "the connection names the socket: {live}"
    );
    let id = used["id"].as_str().unwrap().to_owned();
    // A stop names its resource by id (`--under` limits only the stops that pick).
    let (code, doc) =
        exit_and_json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id.as_str()]));
    let result = &doc["results"][0];
    assert_eq!(
        (code, &result["result"]),
        (3, &Value::from("refused")),
        "{doc:#}"
    );
    assert!(
        result["reason"].as_str().unwrap().contains("unix socket"),
        "{result:#}"
    );
    assert!(alive(daemon.pid), "the refused stop sent nothing");

    // The client gone, the daemon is green again once idle.
    end(second);
    let after = card(&sb, daemon.pid, "green once the client is gone", |r| {
        r["level"] == "green"
    });
    assert!(message_of(&after, "live connection").is_none(), "{after:#}");

    // Green, it stops: the daemon gone. Its clients start a new one: no restart is offered.
    let (code, doc) =
        exit_and_json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id.as_str()]));
    assert_eq!(
        (code, &doc["results"][0]["result"]),
        (0, &Value::from("stopped")),
        "{doc:#}"
    );
    wait_for("the daemon gone", || (!alive(daemon.pid)).then_some(()));
    let (code, doc) = exit_and_json(&sb.pier_exact(&["restart", id.as_str(), "--json"]));
    assert_eq!(
        (code, &doc["result"]),
        (3, &Value::from("refused")),
        "{doc:#}"
    );
    assert!(
        doc["reason"]
            .as_str()
            .unwrap()
            .contains("started by its client"),
        "{doc:#}"
    );
}
