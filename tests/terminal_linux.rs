//! Names from the system never act on the terminal: a real dev server in a project folder
//! named with escape sequences, with a newline, or with bytes that are not UTF-8, then `pier
//! scan`, `pier stop`, `pier history` and `pier restart` as text (every name escaped, each
//! card line whole) and as JSON (the exact name). Fixtures are the test's own, in its temp folder; every scan
//! and stop is scoped to it or names the fixture's id.
#![cfg(target_os = "linux")]

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

/// Clears the screen, retitles the window, rings the bell.
const HOSTILE: &str = "app\x1b[2J\x1b]0;pwned\x07";
const HOSTILE_SHOWN: &str = "app\\e[2J\\e]0;pwned\\x07";

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("Pier prints UTF-8")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            stdout(out),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// No byte that a terminal acts on: every control character but the line ends, and no C1.
fn assert_inert(text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && (c.is_control() || ('\u{80}'..='\u{9f}').contains(&c)))
        .collect();
    assert!(bad.is_empty(), "raw {bad:?} in {text:?}");
}

/// The fixture dev server started as an orphan in `project` by its absolute path (so the
/// folder's name is in its argv too), its report written under the plain name `report`.
fn start_in(sb: &Sandbox, project: &Path, report: &str) -> Value {
    let tool = project.join(VITE);
    let report_path = sb.report_path(report);
    sb.spawn_orphan(
        project,
        &[
            tool.to_str().unwrap(),
            "--report",
            report_path.to_str().unwrap(),
        ],
    );
    sb.report(report, |_| true)
}

/// The scan's card header for the project at `path`: `name  path  LEVEL`, whole on one line.
fn card_line<'a>(text: &'a str, name: &str, path: &str) -> &'a str {
    let start = format!("{name}  {path}  ");
    text.lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no card line {start:?} in:\n{text}"))
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}

#[test]
fn a_folder_named_with_escape_sequences_is_escaped_in_scan_stop_history_and_restart_text_and_exact_in_json(
) {
    if fixtures_cannot_be_orphans("terminal escapes") {
        return;
    }
    let sb = Sandbox::new();
    let project = canonical(&sb.project(HOSTILE, VITE));
    let server = start_in(&sb, &project, "esc");
    let exact_path = project.to_str().unwrap();
    let shown_path = exact_path.replace(HOSTILE, HOSTILE_SHOWN);

    let scan = sb.scan(&[]);
    let (p, r) = resource_with(&scan, pid(&server)).expect("the fixture is found");
    assert_eq!(p["name"], HOSTILE, "the JSON carries the exact name");
    assert_eq!(p["path"], exact_path);
    assert_eq!(
        r["members"][0]["argv"][1],
        project.join(VITE).to_str().unwrap()
    );
    assert_eq!(r["members"][0]["cwd"], exact_path);
    let id = r["id"].as_str().unwrap().to_owned();

    let text = stdout(&sb.pier(&["scan", "--sample-ms", "0"]));
    assert_inert(&text);
    let line = card_line(&text, HOSTILE_SHOWN, &shown_path);
    assert_eq!(line, format!("{HOSTILE_SHOWN}  {shown_path}  GREEN"));

    // The stop's result line names the project's folder.
    let out = sb.pier_exact(&["stop", "--sample-ms", "100", &id]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_inert(&text);
    let result = text
        .lines()
        .find(|l| l.starts_with("stopped vite in "))
        .unwrap_or_else(|| panic!("no result line: {text}"));
    assert!(
        result.starts_with(&format!("stopped vite in {shown_path} (1 process)")),
        "{result:?}"
    );
    assert!(!alive(pid(&server)));

    let text = stdout(&sb.pier_exact(&["history"]));
    assert_inert(&text);
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(&format!("  STOPPED  vite in {shown_path}  ")),
        "{first:?}"
    );
    let h = json(&sb.pier_exact(&["history", "--json"]));
    assert_eq!(h["snapshots"][0]["project"], exact_path, "{h:#}");
    assert_eq!(
        h["snapshots"][0]["root_command"][1],
        project.join(VITE).to_str().unwrap()
    );

    // With its folder moved away, the restart refuses, naming the folder.
    let snapshot = h["snapshots"][0]["snapshot"].as_str().unwrap().to_owned();
    std::fs::rename(&project, sb.path().join("moved")).unwrap();
    let out = sb.pier_exact(&["restart", &snapshot]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert_inert(&text);
    assert_eq!(
        text.lines().next().unwrap_or_default(),
        format!("{snapshot}  REFUSED  the folder {shown_path} is gone")
    );
    assert!(
        text.contains(&format!(" in {shown_path}\n")),
        "what it would run, escaped: {text}"
    );
    let report = json(&sb.pier_exact(&["restart", "--json", &snapshot]));
    assert_eq!(
        report["reason"],
        format!("the folder {exact_path} is gone"),
        "{report:#}"
    );
    let text = stdout(&sb.pier_exact(&["history"]));
    assert_inert(&text);
    assert!(
        text.contains(&format!(
            ": cannot be restarted: the folder {shown_path} is gone\n"
        )),
        "{text}"
    );
}

#[test]
fn a_newline_in_a_folder_name_keeps_each_card_stop_and_history_line_whole() {
    if fixtures_cannot_be_orphans("terminal newline") {
        return;
    }
    let sb = Sandbox::new();
    let name = "two\nlines";
    let project = canonical(&sb.project(name, VITE));
    let server = start_in(&sb, &project, "nl");
    let exact_path = project.to_str().unwrap();
    let shown_path = exact_path.replace(name, "two\\nlines");

    let text = stdout(&sb.pier(&["scan", "--sample-ms", "0"]));
    assert_eq!(
        card_line(&text, "two\\nlines", &shown_path),
        format!("two\\nlines  {shown_path}  GREEN")
    );
    assert!(
        !text.lines().any(|l| l.starts_with("lines")),
        "no card line broken in two: {text}"
    );
    let scan = sb.scan(&[]);
    let (p, r) = resource_with(&scan, pid(&server)).expect("the fixture is found");
    assert_eq!(p["name"], name);
    assert_eq!(p["path"], exact_path);
    let id = r["id"].as_str().unwrap().to_owned();

    // As JSON, the stop's member command carries the newline as it is.
    let doc = json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]));
    let r = &doc["results"][0];
    assert_eq!(r["result"], "stopped", "{doc:#}");
    let command = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["pid"] == pid(&server))
        .unwrap()["command"]
        .as_str()
        .unwrap();
    assert!(command.contains(&format!("{exact_path}/")), "{command:?}");

    let text = stdout(&sb.pier_exact(&["history"]));
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(&format!(" in {shown_path}  ports ")),
        "{text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("lines")), "{text}");
    let h = json(&sb.pier_exact(&["history", "--json"]));
    assert_eq!(h["snapshots"][0]["project"], exact_path);
}

/// Linux paths are bytes. The scan carries text, so a byte that is not UTF-8 reaches its JSON
/// and its cards as U+FFFD (documented in docs/scan-json.md), and never as itself: a lone
/// 0x9B is CSI to a terminal that reads 8-bit controls. An argument Pier shows from its bytes
/// (a `--under` folder) shows them as `\xNN`.
#[test]
fn a_folder_name_that_is_not_utf8_never_reaches_the_terminal_as_raw_bytes() {
    if fixtures_cannot_be_orphans("terminal bytes") {
        return;
    }
    let sb = Sandbox::new();
    let name = OsStr::from_bytes(b"bad\xff\x9bname");
    let project = sb.path().join(name);
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("package.json"), "{}\n").unwrap();
    sb.install(&project.join(VITE), "devserver.py");
    let report = sb.report_path("bytes");
    sb.spawn_orphan(
        &project,
        &[
            "./node_modules/.bin/vite",
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let server = sb.report("bytes", |_| true);

    let scan = sb.scan(&[]);
    let (p, _) = resource_with(&scan, pid(&server)).expect("the fixture is found");
    assert_eq!(p["name"], "bad\u{fffd}\u{fffd}name", "{p:#}");
    let out = sb.pier(&["scan", "--sample-ms", "0"]);
    let text = stdout(&out);
    assert_inert(&text);
    assert!(
        text.lines()
            .any(|l| l.starts_with("bad\u{fffd}\u{fffd}name  ")),
        "{text}"
    );

    let missing = sb.path().join(OsStr::from_bytes(b"gone\xff\x1b[2J"));
    let out = std::process::Command::new(pier_bin())
        .arg("scan")
        .arg("--under")
        .arg(&missing)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).expect("UTF-8 on stderr too");
    assert!(err.contains("gone\\xff\\e[2J: no such folder"), "{err:?}");
}
