//! A debugging port in use is a live connection (docs/design.md §2, "Connections"), with real
//! components only: Debian's `chromedriver` started as an orphan in a temporary project, a
//! WebDriver session created over HTTP, so chromedriver starts headless Chromium with
//! `--remote-debugging-port=0` and holds connections to that port — one tree, a driver at work.
//! Scans are scoped to the test's folder; clean-up signals only the test's processes, by
//! identity.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use serde_json::Value;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// Skips when Debian's chromium and chromium-driver are not installed, or fixtures cannot be
/// orphans here.
fn cannot_run(test: &str) -> bool {
    if !Path::new(CHROMEDRIVER).exists() || !Path::new(CHROMIUM).exists() {
        eprintln!("{test}: skipped, needs chromium and chromium-driver");
        return true;
    }
    fixtures_cannot_be_orphans(test)
}

/// A driver and the browser it drives, as the test started them.
struct Driven {
    /// Kills the browser, whatever became of the session.
    _browser: BrowserOf,
    project: PathBuf,
    chromedriver: Started,
    chromium: Started,
    /// Chromium's debugging port, as chromedriver reports it.
    debugging_port: u16,
}

fn started(pid: u32) -> Started {
    Started {
        pid,
        start_time: start_time_of(pid).expect("it runs"),
    }
}

/// The process whose argv holds `marker` (this sandbox's own path) and no `--type=` (Chromium's
/// helpers carry the browser's flags and a type).
fn pid_with_arg(marker: &str) -> Option<u32> {
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = fs::read(e.path().join("cmdline")).ok()?;
        let mut args = cmdline.split(|&b| b == 0);
        (args.clone().any(|a| a == marker.as_bytes()) && !args.any(|a| a.starts_with(b"--type=")))
            .then_some(pid)
    })
}

/// Kills, when dropped, the browser started with this sandbox's profile, by identity: one the
/// test never got to register (a session that failed half-way) must not outlive it.
struct BrowserOf(String);

impl Drop for BrowserOf {
    fn drop(&mut self) {
        if let Some(p) = pid_with_arg(&self.0).and_then(|pid| {
            Some(Started {
                pid,
                start_time: start_time_of(pid)?,
            })
        }) {
            kill_by_identity(p);
        }
    }
}

/// One HTTP/1.1 request; the JSON body of the answer (by its `Content-Length`, or its chunks
/// joined), read as it arrives: chromedriver keeps the connection open.
fn http(port: u16, method: &str, path: &str, body: &str) -> Value {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("chromedriver answers");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        if let Some(body) = complete_body(&raw) {
            reset(s);
            return serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        }
        let n = s
            .read(&mut buf)
            .expect("chromedriver answers within a minute");
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&buf[..n]);
    }
}

/// The body of an HTTP answer once all of it is in `raw`.
fn complete_body(raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let head = head.to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        let mut body = String::new();
        let mut rest = rest;
        loop {
            let (size, tail) = rest.split_once("\r\n")?;
            let n = usize::from_str_radix(size.trim(), 16).ok()?;
            if n == 0 {
                return Some(body);
            }
            body.push_str(tail.get(..n)?);
            rest = tail.get(n..)?.strip_prefix("\r\n")?;
        }
    }
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))?
        .trim()
        .parse()
        .ok()?;
    (rest.len() >= length).then(|| rest[..length].to_owned())
}

/// chromedriver started as an orphan in a new project, and a session created through it: it
/// starts headless Chromium as its child, and drives it over its debugging port.
fn driven_browser(sb: &Sandbox) -> Driven {
    let project = sb.path().join("e2e");
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join("package.json"), "{}\n").unwrap();
    let log = sb.path().join("chromedriver.log");
    let out = sb.path().join("chromedriver.out");
    let cmd = format!(
        "exec {CHROMEDRIVER} --port=0 --log-path='{}' > '{}' 2>&1",
        log.display(),
        out.display()
    );
    sb.spawn_orphan(&project, &["sh", "-c", &cmd]);
    let port: u16 = wait_for("chromedriver's port", || {
        let said = fs::read_to_string(&out).ok()?;
        let (_, tail) = said.split_once("started successfully on port ")?;
        tail.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    });
    let marker = format!("--log-path={}", log.display());
    let chromedriver = started(wait_for("chromedriver's pid", || pid_with_arg(&marker)));
    sb.own(chromedriver);
    let data = sb.path().join("profile");
    let browser = BrowserOf(format!("--user-data-dir={}", data.display()));
    let session = serde_json::json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", format!("--user-data-dir={}", data.display())],
        },
    }}});
    let answer = http(port, "POST", "/session", &session.to_string());
    let caps = &answer["value"]["capabilities"];
    let chromium = started(caps["goog:processID"].as_u64().expect("{answer:#}") as u32);
    sb.own(chromium);
    let address = caps["goog:chromeOptions"]["debuggerAddress"]
        .as_str()
        .unwrap();
    let debugging_port = address.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(ppid_of(chromium.pid), Some(chromedriver.pid), "one tree");
    Driven {
        _browser: browser,
        project,
        chromedriver,
        chromium,
        debugging_port,
    }
}

/// The messages of the card's evidence.
fn messages(r: &Value) -> Vec<String> {
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

/// Kills chromedriver (by identity) and waits until Chromium is orphaned.
fn driver_gone(d: &Driven) {
    kill_by_identity(d.chromedriver);
    wait_for("chromedriver gone, chromium orphaned", || {
        (!alive(d.chromedriver.pid) && ppid_of(d.chromium.pid) != Some(d.chromedriver.pid))
            .then_some(())
    });
    assert!(alive(d.chromium.pid), "Chromium outlives its driver");
}

#[test]
fn a_driver_on_chromiums_debugging_port_in_the_same_tree_is_red_and_refused() {
    if cannot_run("debugging port") {
        return;
    }
    let sb = Sandbox::new();
    let d = driven_browser(&sb);
    let words = format!(
        "a client on its debugging port :{}: chromedriver (pid {}",
        d.debugging_port, d.chromedriver.pid
    );
    let card = wait_for(
        "the tree's card, with chromedriver on the debugging port",
        || {
            let (_, r) = resource_with(&sb.scan(&[]), d.chromium.pid)?;
            messages(&r)
                .iter()
                .any(|m| m.starts_with(&words))
                .then_some(r)
        },
    );
    assert_eq!(card["level"], "red", "{card:#}");
    assert_eq!(card["root"]["pid"], d.chromedriver.pid, "{card:#}");
    let driven = card["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["message"].as_str().unwrap().starts_with(&words))
        .unwrap();
    assert_eq!(driven["level"], "red", "{driven:#}");
    assert_eq!(driven["kind"], "live_connection", "{driven:#}");
    assert!(
        card["connections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["peer_pid"] == d.chromedriver.pid && c["internal"] == false),
        "the driver's connection is never internal: {card:#}"
    );

    let id = card["id"].as_str().unwrap();
    let out = sb.pier_exact(&["stop", id, "--json", "--sample-ms", "100"]);
    let (code, doc) = exit_and_json(&out);
    let r = &doc["results"][0];
    assert_eq!(r["result"], "refused", "{doc:#}");
    assert_eq!(code, 3, "{doc:#}");
    assert!(
        r["reason"].as_str().unwrap().contains(&words),
        "the refusal names the driver on the debugging port: {doc:#}"
    );
    assert_eq!(snapshots(&sb), 0, "refused before any record: nothing sent");
    assert!(alive(d.chromedriver.pid) && alive(d.chromium.pid));

    // The driver gone, its connections go with it: nothing of the debugging rule is left.
    driver_gone(&d);
    let orphan = wait_for("Chromium's own card, no client on its port", || {
        let (_, r) = resource_with(&sb.scan(&[]), d.chromium.pid)?;
        (r["root"]["pid"] == d.chromium.pid
            && !messages(&r).iter().any(|m| m.contains("debugging port")))
        .then_some(r)
    });
    assert!(
        orphan["connections"].as_array().unwrap().is_empty(),
        "{orphan:#}"
    );
    assert!(d.project.is_dir());
}

/// Once its driver is gone, a headless Chromium nobody drives is what reapers target: green
/// when idle, known as a headless browser. (Needs the kinds of agent residue in `kinds.rs`.)
#[test]
fn chromium_left_by_a_killed_driver_is_a_green_headless_browser_when_idle() {
    if cannot_run("left by a killed driver") {
        return;
    }
    let sb = Sandbox::new();
    let d = driven_browser(&sb);
    driver_gone(&d);
    let mut last = Value::Null;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut found = None;
    while found.is_none() && std::time::Instant::now() < deadline {
        if let Some((_, r)) = resource_with(&sb.scan(&[]), d.chromium.pid) {
            let green = r["kind"] == "headless-browser" && r["level"] == "green";
            last = r.clone();
            found = green.then_some(r);
        }
    }
    assert!(
        found.is_some(),
        "never a green headless browser; last card: kind {}, level {}, against {:?}: {:#?}",
        last["kind"],
        last["level"],
        against(&last),
        messages(&last)
    );
}
