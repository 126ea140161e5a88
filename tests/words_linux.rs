//! The words Pier prints, against real processes on Linux: a refusal says what was seen, a
//! stop that sent no signal is never listed as a stop, a batch names what it left alone, a
//! malformed id is a usage error, and a rewritten title's padding never reaches a person.
//! Fixtures are the test's own, in its temp folder; every scan and batch is scoped to it.
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(out), String::from_utf8_lossy(&out.stderr)))
}

/// `pier scan --json --sample-ms 0` scoped to the sandbox.
fn scan_unsampled(sb: &Sandbox) -> Value {
    json(&sb.pier(&["scan", "--json", "--sample-ms", "0"]))
}

fn id_in(scan: &Value, server: &Value) -> String {
    let (_, r) = resource_with(scan, pid(server)).expect("the fixture is found");
    r["id"].as_str().unwrap().to_owned()
}

/// Found by trying real tools: a stop refused at its activity check (no signal sent) said
/// "check (b): busy: …", and `pier history` then listed it as "stopped … refused … cannot be
/// restarted".
#[test]
fn a_stop_refused_as_busy_names_the_busy_process_and_history_never_calls_it_a_stop() {
    if fixtures_cannot_be_orphans("words busy") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--busy"], |_| true);
    // Unsampled, it is green, as the stop's own re-diagnosis sees it: check (b) must say no.
    let id = id_in(&scan_unsampled(&sb), &server);
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]);
    assert_eq!(out.status.code(), Some(3));
    let r = &json(&out)["results"][0];
    assert_eq!(r["result"], "refused", "{r:#}");
    assert_eq!(r["checkpoint"], "b", "{r:#}");
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.starts_with("busy over 100 ms: "), "{reason}");
    // The program and its script by file name, then the arguments.
    let python = python();
    let busiest = format!(
        "the busiest member is pid {} ({} vite --report ",
        pid(&server),
        python.rsplit('/').next().unwrap()
    );
    assert!(reason.contains(&busiest), "{reason}");
    assert!(!reason.contains("check ("), "no internal label: {reason}");
    assert!(alive(pid(&server)));

    // The scan's card says the same of it.
    let (_, card) = resource_with(&sb.scan(&[]), pid(&server)).unwrap();
    let activity = card["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "activity")
        .unwrap();
    assert_eq!(activity["level"], "yellow", "{card:#}");
    let message = activity["message"].as_str().unwrap();
    assert!(
        message.starts_with("busy over 100 ms: ") && message.contains(&busiest),
        "{message}"
    );
    assert_eq!(card["activity"]["busiest"]["pid"], pid(&server), "{card:#}");

    let history = sb.pier_exact(&["history"]);
    let lines = text(&history);
    let first = lines.lines().next().unwrap();
    assert!(
        first.contains("  NOT STOPPED  ")
            && first.contains(&format!(": refused because {reason}; no signal was sent")),
        "{lines}"
    );
    assert!(
        !lines
            .replace("NOT STOPPED", "")
            .to_lowercase()
            .contains("stopped"),
        "nothing reads as a stop: {lines}"
    );
    assert!(!lines.contains("restart"), "{lines}");
    let h = json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(
        (&entry["signalled"], &entry["result"], &entry["restartable"]),
        (
            &Value::Bool(false),
            &Value::from("refused"),
            &Value::Bool(false)
        ),
        "{entry:#}"
    );
    assert_eq!(entry["reason"], reason);
    // The record is kept, as it was written.
    let name = entry["snapshot"].as_str().unwrap();
    assert!(sb
        .path()
        .join(format!("state/records/{name}.json"))
        .exists());
}

/// Found by trying real tools: `pier stop --all-green --under DIR` said "Nothing to stop" and
/// named none of the yellow and red resources it left alone.
#[test]
fn a_batch_under_a_folder_names_each_resource_it_left_alone_and_why() {
    if fixtures_cannot_be_orphans("words batch") {
        return;
    }
    let sb = Sandbox::new();
    let green = sb.start_vite("web", &[], |_| true);
    let watched = sb.start_vite("api", &[], |_| true);
    let port = watched["port"].as_u64().unwrap() as u16;
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sb.report("api", |r| r["accepted"].as_u64() == Some(1));
    // Held by a live parent (this test): yellow. `setsid` (no fork: the child is no group
    // leader) makes the server lead its own session, so the rule "its terminal session is gone"
    // cannot apply: in CI this test's own session leader may be gone, which made it green.
    let docs = sb.project("docs", VITE);
    let mut held = Command::new("setsid")
        .arg(docs.join(VITE))
        .args(["--report", sb.report_path("docs").to_str().unwrap()])
        .current_dir(&docs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let yellow = sb.report("docs", |_| true);

    let out = sb.pier(&["stop", "--all-green", "--sample-ms", "100"]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(!alive(pid(&green)), "the green one is stopped: {shown}");
    assert!(shown.contains("\nLeft alone (not green):\n"), "{shown}");
    // A batch names a resource by its root: `sh` for a fixture started through it.
    let (api_root, docs_root) = (watched["ppid"].as_u64().unwrap(), u64::from(pid(&yellow)));
    let line = |root: u64, project: &str| {
        let start = format!("    vite (pid {root}, id {root}-");
        shown
            .lines()
            .find(|l| l.starts_with(&start))
            .unwrap_or_else(|| panic!("no line for {project}: {shown}"))
            .to_owned()
    };
    let api = line(api_root, "api");
    let api_folder = sb.path().join("api").canonicalize().unwrap();
    assert!(
        api.contains(&format!(
            " in {} — red: live connection ",
            api_folder.display()
        )),
        "{api}"
    );
    let docs_line = line(docs_root, "docs");
    assert!(
        docs_line.contains(" — yellow: parent ") && docs_line.contains(" is a live "),
        "{docs_line}"
    );
    // Then about what the stop freed, the stopped tree's memory as read before the stop.
    assert!(
        shown.contains("\n1 of 1 stopped, 2 left alone; about ") && shown.ends_with(" MB freed\n"),
        "{shown}"
    );

    let doc = json(&sb.pier(&["stop", "--json", "--all-green", "--sample-ms", "100"]));
    assert_eq!(doc["results"], Value::Array(vec![]), "{doc:#}");
    let mut levels: Vec<(u64, String)> = doc["left_alone"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["pid"].as_u64().unwrap(),
                l["level"].as_str().unwrap().into(),
            )
        })
        .collect();
    levels.sort();
    let mut want = vec![
        (api_root, "red".to_owned()),
        (docs_root, "yellow".to_owned()),
    ];
    want.sort();
    assert_eq!(levels, want, "{doc:#}");
    assert!(alive(pid(&watched)) && alive(pid(&yellow)));
    kill_by_identity(Started {
        pid: pid(&yellow),
        start_time: yellow["start_time"].as_u64().unwrap(),
    });
    held.wait().unwrap();
}

/// Found by trying real tools: `pier stop 12x` answered "refused: no resource 12x now" and
/// exited 3, as if a resource had been looked for.
#[test]
fn a_malformed_id_is_a_usage_error_that_says_what_an_id_looks_like() {
    let sb = Sandbox::new();
    for args in [
        &["stop", "12x"][..],
        &["stop", "--force", "12x"],
        &["stop", "17824-71008", "017824-71008"],
        &["restart", "12x"],
        &["restart", "12"],
        &["restart", "snap-12x-1-1"],
    ] {
        let out = sb.pier_exact(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            err.contains("a resource id is <root pid>-<root start time>, two whole numbers"),
            "{args:?}: {err}"
        );
    }
    // Nothing was read, locked or written.
    assert!(!sb.path().join("state/locks").exists());
    // A well-formed id of nothing is a refusal, as before.
    let out = sb.pier_exact(&["stop", "4000000000-1"]);
    assert_eq!(out.status.code(), Some(3));
}

/// Found by trying Next 16: `next-server (v16.4.6)` rewrites its title over its argv, which
/// `/proc` then splits into the title and dozens of empty arguments (or one ending in spaces);
/// the stop and history printed that padding, cut at 60 characters.
#[test]
fn a_padded_title_is_trimmed_in_text_and_kept_exactly_in_json_and_the_snapshot() {
    if fixtures_cannot_be_orphans("words title") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("next", "vite");
    let spaces = " ".repeat(50);
    let mut argv = vec!["./vite", "--report", "../reports/next.json"];
    argv.extend(std::iter::repeat_n("", 30));
    argv.push(&spaces);
    sb.spawn_orphan(&project, &argv);
    let server = sb.report("next", |_| true);
    let python = python();
    let exact: Vec<String> = std::iter::once(python.as_str())
        .chain(argv.iter().copied())
        .map(str::to_owned)
        .collect();
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).unwrap();
    assert_eq!(r["members"][0]["argv"], Value::from(exact.clone()));
    let id = r["id"].as_str().unwrap().to_owned();

    let out = sb.pier_exact(&["stop", "-v", "--sample-ms", "100", &id]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // On screen the program and the script go by their file names (the JSON keeps them).
    let program = std::path::Path::new(&python)
        .file_name()
        .unwrap()
        .to_string_lossy();
    let trimmed = format!("{program} vite --report ../reports/next.json");
    let member = shown
        .lines()
        .find(|l| l.starts_with(&format!("    pid {}", pid(&server))))
        .unwrap();
    assert!(
        member.ends_with(&format!(" {trimmed}  exited after SIGTERM")),
        "{member:?}"
    );

    let h = json(&sb.pier_exact(&["history", "--json"]));
    assert_eq!(
        h["snapshots"][0]["root_command"],
        Value::from(exact.clone())
    );
    let name = h["snapshots"][0]["snapshot"].as_str().unwrap();
    let record = std::fs::read(sb.path().join(format!("state/records/{name}.json"))).unwrap();
    let record: Value = serde_json::from_slice(&record).unwrap();
    assert_eq!(record["members"][0]["argv"], Value::from(exact));
    // The history names the command by program and script (as the reasons do), padding
    // dropped too.
    let history = text(&sb.pier_exact(&["history"]));
    assert_eq!(
        history.lines().nth(1),
        Some("    python3 vite --report ../reports/next.json")
    );
}

/// The CLI builds without GTK, so `pier` may stand alone, without the app beside it (as `cargo
/// install --path .` leaves it): then `pier` alone (and `pier app`, `pier --under DIR`) says in
/// one short line how to get the app; `pier app --help` and a wrong value of the app's options
/// answer without it; and `pier scan` still works.
#[test]
fn pier_without_the_app_beside_it_says_how_to_get_it_and_scans_on() {
    let sb = Sandbox::new();
    let alone = sb.path().join("bin");
    std::fs::create_dir(&alone).unwrap();
    let pier = alone.join("pier");
    std::fs::copy(pier_bin(), &pier).unwrap();
    let run = |args: &[&str]| {
        run_copied(
            Command::new(&pier)
                .args(args)
                .env("PIER_STATE_DIR", sb.path().join("state"))
                .env("PIER_CONFIG_DIR", sb.path().join("config")),
        )
    };
    for alone in [&[][..], &["app"], &["--under", "/"]] {
        let out = run(alone);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{alone:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{alone:?}: one line: {err}");
        assert!(err.len() < 160, "one short line: {err}");
        for needed in [
            "the tray app is not installed",
            "cargo install --locked --path crates/app",
            "`pier --help`",
        ] {
            assert!(err.contains(needed), "{needed:?} in {err}");
        }
    }
    let help = run(&["app", "--help"]);
    assert_eq!(help.status.code(), Some(0), "{:?}", help);
    let help = String::from_utf8_lossy(&help.stdout);
    for option in [
        "--under <DIR>",
        "--refresh <SECS>",
        "--sample-ms <N>",
        "Examples:",
    ] {
        assert!(help.contains(option), "{help}");
    }
    let wrong = run(&["app", "--refresh", "1e20"]);
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(2), "{err}");
    assert!(err.contains("--refresh 1e20: must be"), "{err}");
    let scan = run(&[
        "scan",
        "--json",
        "--sample-ms",
        "0",
        "--under",
        &sb.path().to_string_lossy(),
    ]);
    assert!(
        scan.status.success(),
        "{}",
        String::from_utf8_lossy(&scan.stderr)
    );
}

/// Runs a binary this test just copied. Another test thread forking at that moment may hold the
/// copy's write descriptor open in its child until that child execs, and until then the kernel
/// refuses to run the copy (ETXTBSY, seen in CI): ask again, with a deadline.
fn run_copied(cmd: &mut Command) -> std::process::Output {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(26) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            out => return out.expect("the copied pier runs"),
        }
    }
}
