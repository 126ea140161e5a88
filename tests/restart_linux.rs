//! `pier restart` and `pier history` against real processes on Linux: stop a fixture, bring it
//! back from its snapshot, and check it came back exactly — or was refused, with the reason.
#![cfg(target_os = "linux")]

mod common;
#[path = "restart/kernel.rs"]
mod kernel;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

/// A secret in every fixture's environment: it must reach the snapshot and the restarted
/// program, and nothing Pier prints or logs.
const SECRET: &str = "pier-test-secret-5b0e17c2";

/// Starts `argv` in `cwd` as an orphan with `PIER_TEST_VAR=hello` and [`SECRET`] in its
/// environment.
fn spawn_with_var(cwd: &Path, argv: &[&str]) {
    spawn_with_env(cwd, argv, &[]);
}

/// [`spawn_with_var`], with `env` set too.
fn spawn_with_env(cwd: &Path, argv: &[&str], env: &[(&str, &str)]) {
    let status = Command::new("setsid")
        .arg("-f")
        .args(argv)
        .current_dir(cwd)
        .env("PIER_TEST_VAR", "hello")
        .env("PIER_TEST_TOKEN", SECRET)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

/// The fixture started directly (no `sh`) in a new project on a free port, with `extra`
/// arguments; returns the project folder and the fixture's report.
fn started(sb: &Sandbox, extra: &[&str]) -> (PathBuf, Value) {
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let port = free_port().to_string();
    let mut argv = vec![VITE, "--report", report.to_str().unwrap(), "--port", &port];
    argv.extend_from_slice(extra);
    spawn_with_var(&project, &argv);
    (project, sb.report("app", |_| true))
}

/// Stops the resource holding `server` and returns its snapshot name.
fn stop(sb: &Sandbox, server: &Value, extra: &[&str]) -> (String, Value) {
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(server)).expect("found");
    let id = r["id"].as_str().unwrap().to_owned();
    let out = sb.pier_exact(&[&["stop", "--json", "--sample-ms", "100", &id], extra].concat());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let result = doc["results"][0].clone();
    (
        result["snapshot"].as_str().unwrap_or_default().to_owned(),
        result,
    )
}

fn restart(sb: &Sandbox, snapshot: &str) -> (i32, Value) {
    // A variable of Pier's own must never reach the restarted program.
    let out = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["restart", "--json", "--wait", "10", snapshot])
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("PIER_LEAK", "1")
        .output()
        .unwrap();
    exit_and_json(&out)
}

/// Waits for a report from a process other than `old`, and registers what it names.
fn new_report(sb: &Sandbox, name: &str, old: u32) -> Value {
    let r = sb.report(name, |r| r["pid"].as_u64() != Some(u64::from(old)));
    sb.own_parent(&r);
    r
}

#[test]
fn a_stopped_server_comes_back_as_it_was_in_its_own_session_with_its_output_logged() {
    if fixtures_cannot_be_orphans("restart") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let port = free_port();
    let report = sb.report_path("app");
    let cmd = format!(
        "./{VITE} --report '{}' --port {port}; true",
        report.display()
    );
    spawn_with_var(&project, &["sh", "-c", &cmd]);
    let before = sb.report("app", |_| true);
    sb.own_parent(&before);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");

    let (code, r) = restart(&sb, &name);
    assert_eq!(r["result"], "ready", "{r:#}");
    assert_eq!(r["schema"], 1, "the document says its schema: {r:#}");
    assert_eq!(code, 0);
    let root = r["pid"].as_u64().unwrap() as u32;
    sb.own(Started {
        pid: root,
        start_time: r["start_time"].as_u64().unwrap(),
    });
    let after = new_report(&sb, "app", pid(&before));
    assert_eq!(after["argv"], before["argv"], "the same argv");
    assert_eq!(after["cwd"], before["cwd"], "the same folder");
    assert_eq!(after["test_var"], "hello", "the recorded environment");
    assert_eq!(
        after["leak"],
        Value::Null,
        "and only the recorded environment"
    );
    let cmdline = std::fs::read(format!("/proc/{root}/cmdline")).unwrap();
    let root_argv: Vec<&[u8]> = cmdline
        .strip_suffix(&[0])
        .unwrap()
        .split(|&b| b == 0)
        .collect();
    assert_eq!(
        root_argv,
        vec![&b"sh"[..], b"-c", cmd.as_bytes()],
        "sh -c replayed as recorded, arg0 kept"
    );
    assert_eq!(
        after["ppid"].as_u64(),
        Some(u64::from(root)),
        "under the replayed sh -c"
    );
    assert_eq!(
        after["sid"].as_u64(),
        Some(u64::from(root)),
        "a session of its own"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "listening again"
    );
    // `pier restart` has exited; the server runs on.
    assert!(std::path::Path::new(&format!("/proc/{}", pid(&after))).exists());
    let log = std::fs::read_to_string(r["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains(&format!("devserver {} listening on {port}", pid(&after))),
        "{log}"
    );
    let history = sb.pier_exact(&["history", "--json"]);
    let h: Value = serde_json::from_slice(&history.stdout).unwrap();
    let entry = &h["snapshots"][0];
    assert_eq!(entry["restartable"], false, "it runs again: {entry:#}");
    // Found by the real-tools suite: this said "port … is taken", true but not the reason.
    assert!(
        entry["why_not"].as_str().unwrap().contains("already runs"),
        "{entry:#}"
    );
    let (code, again) = restart(&sb, &name);
    assert_eq!(
        (code, &again["result"]),
        (3, &Value::from("refused")),
        "{again:#}"
    );
    assert!(
        again["reason"].as_str().unwrap().contains("already runs"),
        "{again:#}"
    );
}

#[test]
fn argv_with_spaces_quotes_semicolons_and_substitutions_reaches_the_program_literally() {
    if fixtures_cannot_be_orphans("restart argv") {
        return;
    }
    let sb = Sandbox::new();
    let tricky = [
        "a b",
        "it's \"quoted\"",
        "x;y",
        "$(touch pwned)",
        "`touch pwned2`",
        "*",
    ];
    let notes: Vec<&str> = tricky.iter().flat_map(|t| ["--note", t]).collect();
    let (project, before) = started(&sb, &notes);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    let (_, r) = restart(&sb, &name);
    assert_eq!(r["result"], "ready", "{r:#}");
    let after = new_report(&sb, "app", pid(&before));
    assert_eq!(after["argv"], before["argv"]);
    for t in tricky {
        assert!(
            after["argv"].as_array().unwrap().iter().any(|a| a == t),
            "{t} arrives as it was"
        );
    }
    assert!(
        !project.join("pwned").exists() && !project.join("pwned2").exists(),
        "no shell ran"
    );
}

/// A stopped fixture whose snapshot is then made unrestartable by `spoil`.
fn refused_after(
    spoil: impl FnOnce(&Sandbox, &PathBuf, u16),
    extra: &[&str],
    use_py_copy: bool,
) -> (i32, Value, Sandbox) {
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let port = free_port();
    let port_s = port.to_string();
    let mut argv = vec![
        VITE,
        "--report",
        report.to_str().unwrap(),
        "--port",
        &port_s,
    ];
    argv.extend_from_slice(extra);
    let py = project.join("bin/python3");
    if use_py_copy {
        // The program is a copy of python inside the project, named relative to it.
        std::fs::create_dir_all(py.parent().unwrap()).unwrap();
        std::fs::copy(python(), &py).unwrap();
        argv.insert(0, "bin/python3");
    }
    spawn_with_var(&project, &argv);
    let before = sb.report("app", |_| true);
    let (name, _) = stop(&sb, &before, &["--grace", "0.3"]);
    spoil(&sb, &project, port);
    let (code, r) = restart(&sb, &name);
    (code, r, sb)
}

#[test]
fn a_recorded_port_held_by_someone_else_is_refused() {
    if fixtures_cannot_be_orphans("a_recorded_port_held_by_someone_else_is_refused") {
        return;
    }
    let (code, r, _sb) = refused_after(
        |_, _, port| {
            let held = TcpListener::bind(("127.0.0.1", port)).unwrap();
            std::mem::forget(held); // held by this test until it ends
        },
        &[],
        false,
    );
    assert_eq!(r["result"], "refused", "{r:#}");
    assert_eq!(code, 3);
    assert!(r["reason"].as_str().unwrap().contains("is taken"), "{r:#}");
}

#[test]
fn a_removed_folder_is_refused() {
    if fixtures_cannot_be_orphans("a_removed_folder_is_refused") {
        return;
    }
    let (_, r, _sb) = refused_after(
        |_, project, _| {
            std::fs::rename(project, project.with_file_name("moved")).unwrap();
        },
        &[],
        false,
    );
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(r["reason"].as_str().unwrap().contains("is gone"), "{r:#}");
}

#[test]
fn a_removed_program_is_refused() {
    if fixtures_cannot_be_orphans("a_removed_program_is_refused") {
        return;
    }
    let (_, r, _sb) = refused_after(
        |_, project, _| {
            std::fs::remove_file(project.join("bin/python3")).unwrap();
        },
        &[],
        true,
    );
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("bin/python3"),
        "{r:#}"
    );
}

#[test]
fn a_stop_that_ended_nothing_is_refused() {
    if fixtures_cannot_be_orphans("a_stop_that_ended_nothing_is_refused") {
        return;
    }
    // The server ignores SIGTERM, and its `sh` waits for it: nothing ended (`not_stopped`).
    let (_, r, _sb) = refused_after(|_, _, _| {}, &["--ignore-term"], false);
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("the stop ended nothing"),
        "{r:#}"
    );
}

#[test]
fn the_same_command_already_running_is_refused() {
    if fixtures_cannot_be_orphans("restart twin") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let argv = [VITE, "--report", report.to_str().unwrap(), "--no-listen"];
    spawn_with_var(&project, &argv);
    let before = sb.report("app", |_| true);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    spawn_with_var(&project, &argv);
    new_report(&sb, "app", pid(&before));
    let (_, r) = restart(&sb, &name);
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("already runs"),
        "{r:#}"
    );
}

#[test]
fn a_corrupted_snapshot_is_listed_as_unreadable_refused_and_kept() {
    let sb = Sandbox::new();
    let records = sb.path().join("state/records");
    std::fs::create_dir_all(&records).unwrap();
    let bad = records.join("snap-7-7-7.json");
    std::fs::write(&bad, b"\x00 garbage").unwrap();
    let out = sb.pier_exact(&["history", "--json"]);
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unreadable = h["unreadable"].as_array().unwrap();
    assert_eq!(unreadable.len(), 1);
    assert!(
        unreadable[0].as_str().unwrap().contains("snap-7-7-7.json"),
        "{h:#}"
    );
    let (code, r) = restart(&sb, "snap-7-7-7");
    assert_eq!(r["result"], "refused", "{r:#}");
    assert_eq!(code, 3);
    assert_eq!(std::fs::read(&bad).unwrap(), b"\x00 garbage");
}

#[test]
fn a_program_the_kernel_would_not_run_itself_is_refused_and_no_shell_runs_it() {
    // The recorded binary was replaced by a shebang-less file: execvp would hand it to /bin/sh.
    if fixtures_cannot_be_orphans("restart shebang-less") {
        return;
    }
    let (_, r, sb) = refused_after(
        |_, project, _| {
            let py = project.join("bin/python3");
            std::fs::write(&py, "touch pwned\n").unwrap();
        },
        &[],
        true,
    );
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(
        r["reason"].as_str().unwrap().contains("without a shell"),
        "{r:#}"
    );
    assert!(!sb.path().join("app/pwned").exists());
}

/// Issue 41: a restart whose command exited read as "not ready in time" in history. The
/// restart and its record say it exited, with its status and the last lines of its output.
#[test]
fn a_server_that_exits_before_listening_says_it_exited_with_its_status_and_output() {
    if fixtures_cannot_be_orphans("restart exit") {
        return;
    }
    let sb = Sandbox::new();
    let (project, before) = started(&sb, &[]);
    let (name, _) = stop(&sb, &before, &[]);
    let lines: String = (1..=8).map(|n| format!("line {n}\n")).collect();
    let crash = format!("{lines}Error: boom, the config is broken\n");
    std::fs::write(project.join(".pier-test-exit"), crash).unwrap();
    let (code, r) = restart(&sb, &name);
    assert_eq!(
        (code, &r["result"]),
        (3, &Value::from("not_ready")),
        "{r:#}"
    );
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("which exited with status 3 before listening"),
        "{r:#}"
    );
    assert!(!reason.contains("the log is empty"), "{r:#}");
    assert_eq!(r["exited"]["status"], 3, "{r:#}");
    let tail = r["exited"]["log_tail"].as_str().unwrap();
    assert!(
        tail.ends_with("line 8\nError: boom, the config is broken"),
        "{r:#}"
    );
    assert!(!tail.contains("line 4"), "a few last lines: {tail}");
    let text = sb.pier_exact(&["history"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("exited with status 3 before listening"),
        "{text}"
    );
    assert!(
        text.contains("| Error: boom, the config is broken"),
        "{text}"
    );
    assert!(!text.contains("not ready in time"), "{text}");
    let h = sb.pier_exact(&["history", "--json"]);
    let h: Value = serde_json::from_slice(&h.stdout).unwrap();
    let recorded = &h["snapshots"][0]["restarts"][0];
    assert_eq!(recorded["exited"]["status"], 3, "{recorded:#}");
    assert_eq!(recorded["exited"]["log_tail"], tail, "{recorded:#}");
}

/// Issue 41: the command of a real project redirected its own output, so the log Pier named
/// was empty with nothing saying so. The restart and history say where the output is not.
#[test]
fn a_crashed_restart_whose_command_sends_its_output_elsewhere_says_its_log_is_empty() {
    if fixtures_cannot_be_orphans("restart exit elsewhere") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let port = free_port();
    let cmd = format!(
        "./{VITE} --report '{}' --port {port} >own.log 2>&1",
        report.display()
    );
    spawn_with_var(&project, &["sh", "-c", &cmd]);
    let before = sb.report("app", |_| true);
    sb.own_parent(&before);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    assert_eq!(
        stopped["freed_ports"],
        serde_json::json!([port]),
        "{stopped:#}"
    );
    std::fs::write(project.join(".pier-test-exit"), "Error: boom\n").unwrap();
    let (code, r) = restart(&sb, &name);
    assert_eq!(
        (code, &r["result"]),
        (3, &Value::from("not_ready")),
        "{r:#}"
    );
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "exited with status 3 before listening; the log is empty: the command \
             sends its output elsewhere"
        ),
        "{r:#}"
    );
    assert_eq!(r["exited"]["log_tail"], "", "{r:#}");
    let own = std::fs::read_to_string(project.join("own.log")).unwrap();
    assert!(
        own.contains("Error: boom"),
        "the output went to the project's file: {own}"
    );
    let text = sb.pier_exact(&["history"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("exited with status 3 before listening"),
        "{text}"
    );
    assert!(
        text.contains("the log is empty: the command sends its output"),
        "{text}"
    );
}

#[test]
fn an_ipv6_server_is_ready_once_it_listens_on_its_recorded_address() {
    if fixtures_cannot_be_orphans("restart ipv6") {
        return;
    }
    let sb = Sandbox::new();
    let (_, before) = started(&sb, &["--host", "::1"]);
    let (name, _) = stop(&sb, &before, &[]);
    let (_, r) = restart(&sb, &name);
    assert_eq!(r["result"], "ready", "{r:#}");
    new_report(&sb, "app", pid(&before));
}

#[test]
fn a_root_that_rewrote_its_title_is_not_execd_its_command_child_is() {
    // Like npm: the root's argv[0] is "npm run dev", which is a title, not a command.
    if fixtures_cannot_be_orphans("restart retitled") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let report = sb.report_path("app");
    let port = free_port();
    let inner = format!(
        "./{VITE} --report '{}' --port {port}; true",
        report.display()
    );
    let outer = format!("exec -a 'npm run dev' sh -c \"{inner}\"");
    spawn_with_var(&project, &["bash", "-c", &outer]);
    let before = sb.report("app", |_| true);
    sb.own_parent(&before);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    let (_, r) = restart(&sb, &name);
    assert_eq!(r["result"], "ready", "{r:#}");
    let after = new_report(&sb, "app", pid(&before));
    assert_eq!(after["argv"], before["argv"]);
    assert_eq!(
        after["pid"].as_u64(),
        r["pid"].as_u64(),
        "the command child itself was exec'd"
    );
    sb.own(Started {
        pid: pid(&after),
        start_time: after["start_time"].as_u64().unwrap(),
    });
}

#[test]
fn another_program_further_down_path_is_not_taken_for_the_one_that_ran() {
    // The server ran a python3 found first in PATH (a project-local one, like a venv's);
    // once that is gone, /usr/bin/python3 must not stand in for it.
    if fixtures_cannot_be_orphans("restart path") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let bin = project.join("venv-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(python(), bin.join("python3")).unwrap();
    let report = sb.report_path("app");
    let port = free_port().to_string();
    // No version-manager shims in this PATH: a `#!` launcher is trusted as the user's own.
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let argv = [
        "python3",
        VITE,
        "--report",
        report.to_str().unwrap(),
        "--port",
        &port,
    ];
    spawn_with_env(&project, &argv, &[("PATH", &path)]);
    let before = sb.report("app", |_| true);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    std::fs::remove_file(bin.join("python3")).unwrap();
    let (_, r) = restart(&sb, &name);
    assert_eq!(r["result"], "refused", "{r:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("not the program that ran"),
        "{r:#}"
    );
}

/// SECURITY.md: environments are recorded (the snapshot, 0600) and replayed, and never printed
/// or logged, at any log level, by scan, stop, history or restart.
#[test]
fn the_environment_is_recorded_and_replayed_but_never_printed_or_logged() {
    if fixtures_cannot_be_orphans("restart secrets") {
        return;
    }
    let sb = Sandbox::new();
    let (_, before) = started(&sb, &[]);
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_pier"))
            .args(args)
            .env("PIER_STATE_DIR", sb.path().join("state"))
            .env("PIER_CONFIG_DIR", sb.path().join("config"))
            .env("PIER_LOG", "trace")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !text.contains(SECRET),
            "pier {args:?} printed the secret:\n{text}"
        );
        (out, text)
    };
    let under = sb.path().to_str().unwrap();
    run(&["scan", "--under", under, "--sample-ms", "50"]);
    let (scan, _) = run(&[
        "scan",
        "--json",
        "--all",
        "--under",
        under,
        "--sample-ms",
        "50",
    ]);
    let scan: Value = serde_json::from_slice(&scan.stdout).unwrap();
    let (_, r) = resource_with(&scan, pid(&before)).expect("found");
    let id = r["id"].as_str().unwrap();
    let (stop, log) = run(&["stop", "--json", "--sample-ms", "100", id]);
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "logs were on:\n{log}"
    );
    let doc: Value = serde_json::from_slice(&stop.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");
    let name = doc["results"][0]["snapshot"].as_str().unwrap().to_owned();
    run(&["history"]);
    run(&["history", "--json"]);
    let (restart, _) = run(&["restart", "--json", "--wait", "10", &name]);
    let r: Value = serde_json::from_slice(&restart.stdout).unwrap();
    assert_eq!(r["result"], "ready", "{r:#}");
    sb.own(Started {
        pid: r["pid"].as_u64().unwrap() as u32,
        start_time: r["start_time"].as_u64().unwrap(),
    });
    new_report(&sb, "app", pid(&before));

    // The secret is where it must be: the snapshot, and the restarted program.
    let environ = std::fs::read(format!("/proc/{}/environ", r["pid"])).unwrap();
    assert!(
        String::from_utf8_lossy(&environ).contains(SECRET),
        "the restarted program has its environment back"
    );
    let mut holders = Vec::new();
    for entry in walk(&sb.path().join("state")) {
        if String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).contains(SECRET) {
            holders.push(entry);
        }
    }
    let snapshot = sb.path().join(format!("state/records/{name}.json"));
    assert_eq!(
        holders,
        vec![snapshot],
        "only the snapshot holds the secret"
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Two users and a shared sticky folder (as `/tmp`) in a sandbox the victim can reach; Pier
/// runs as the victim, with a state, config and home folder of its own (0700). Dropped, the
/// sandbox's processes end first, then the accounts (and any process of theirs) go.
struct TwoUsers {
    sb: Sandbox,
    victim: common::users::Account,
    attacker: common::users::Account,
    /// The victim's `PIER_STATE_DIR`, `PIER_CONFIG_DIR` and `HOME`.
    state: PathBuf,
    config: PathBuf,
    home: PathBuf,
    /// `<sandbox>/shared`, mode 1777.
    shared: PathBuf,
    /// What the other user's script leaves if it ever runs as the victim.
    mark: PathBuf,
}

impl TwoUsers {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let sb = Sandbox::new();
        let (victim, attacker) = (
            common::users::Account::new("v"),
            common::users::Account::new("a"),
        );
        // The sandbox is root's and 0700: open it for reading, as a home folder is.
        std::fs::set_permissions(sb.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let at = |name: &str| sb.path().join(name);
        let (state, config, home) = (at("victim-state"), at("victim-config"), at("victim-home"));
        for folder in [&state, &config, &home] {
            victim.folder(folder, 0o700);
        }
        victim.own(&at("reports"));
        let shared = at("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        let mark = at("reports/ran-as-the-victim");
        TwoUsers {
            sb,
            victim,
            attacker,
            state,
            config,
            home,
            shared,
            mark,
        }
    }

    /// `pier args…` as the victim.
    fn pier(&self, args: &[&str]) -> std::process::Output {
        self.victim
            .run(pier_bin(), &self.home)
            .args(args)
            .env("PIER_STATE_DIR", &self.state)
            .env("PIER_CONFIG_DIR", &self.config)
            .env("NO_COLOR", "1")
            .output()
            .expect("pier runs")
    }

    /// The fixture started by the victim as an orphan, `argv` then its report and a free
    /// port, in `cwd`; its report.
    fn start(&self, cwd: &Path, argv: &[&str]) -> Value {
        let (report, port) = (self.sb.report_path("app"), free_port().to_string());
        let started = self
            .victim
            .run("setsid", &self.home)
            .arg("-f")
            .args(argv)
            .args(["--report", report.to_str().unwrap(), "--port", &port])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(started.success());
        self.sb.report("app", |_| true)
    }

    /// The fixture started by the victim as an orphan through `sh -c '<set> <py> <script> … ;
    /// true'`, as a package manager's script starts it, in `cwd`; its report.
    fn start_sh(&self, cwd: &Path, set: &str, script: &Path) -> Value {
        let (report, port) = (self.sb.report_path("app"), free_port());
        let cmd = format!(
            "{set} {} {} --report {} --port {port}; true",
            python(),
            script.display(),
            report.display()
        );
        let started = self
            .victim
            .run("setsid", &self.home)
            .args(["-f", "sh", "-c", &cmd])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(started.success());
        let r = self.sb.report("app", |_| true);
        self.sb.own_parent(&r);
        r
    }

    /// The victim's stop of the resource holding `server`: its snapshot.
    fn stop(&self, server: &Value) -> String {
        let under = self.sb.path().to_str().unwrap();
        let scan = self.pier(&["scan", "--json", "--sample-ms", "100", "--under", under]);
        let (_, scan) = exit_and_json(&scan);
        let (_, r) = resource_with(&scan, pid(server)).expect("the victim's server is found");
        let id = r["id"].as_str().unwrap();
        let (_, doc) = exit_and_json(&self.pier(&["stop", "--json", "--sample-ms", "100", id]));
        let stopped = &doc["results"][0];
        assert_eq!(stopped["result"], "stopped", "{stopped:#}");
        stopped["snapshot"].as_str().unwrap().to_owned()
    }

    /// The other user's script at `path` (its folders made as needed, from `top` down, all
    /// theirs): it leaves the mark if it runs.
    fn plant(&self, top: &Path, path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // Python: the kernel ran the victim's script through its `#!` line, so the recorded
        // argv is `python3 <script> …`, and a restart hands the script at that path to python.
        let body = format!(
            "#!{}\nopen('{}', 'w').close()\n",
            python(),
            self.mark.display()
        );
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.attacker.own(top);
    }

    /// The victim's restart of `name` is refused with `why`, which history says too, and the
    /// other user's script never ran.
    fn refused(&self, name: &str, why: &str) {
        let (code, r) = exit_and_json(&self.pier(&["restart", "--json", "--wait", "5", name]));
        assert!(
            !self.mark.exists(),
            "the other user's script ran as the victim: {r:#}"
        );
        assert_eq!((code, &r["result"]), (3, &Value::from("refused")), "{r:#}");
        assert_eq!(r["reason"], why, "{r:#}");
        let (_, h) = exit_and_json(&self.pier(&["history", "--json"]));
        let entry = h["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["snapshot"] == name)
            .unwrap_or_else(|| panic!("{h:#}"));
        assert_eq!(entry["restartable"], false, "{entry:#}");
        assert_eq!(entry["why_not"], why, "{entry:#}");
        assert!(!self.mark.exists());
    }
}

/// Issue 37, point 1: the victim's project lives in a shared sticky folder (as `/tmp`). The
/// victim stops its server and deletes the folder; another user makes the same path again, with
/// their own script where the victim's was. The victim's `pier restart` must refuse, naming the
/// folder's owner, and never run that script; `pier history` says why.
#[test]
fn a_project_another_user_recreated_at_the_recorded_path_is_refused_and_their_script_never_runs() {
    let test = "restart foreign folder";
    if needs_root(test) || fixtures_cannot_be_orphans(test) {
        return;
    }
    let two = TwoUsers::new();
    let project = two.shared.join("app");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), "{}\n").unwrap();
    two.sb.install(&project.join(VITE), "devserver.py");
    two.victim.own(&project);
    let server = two.start(&project, &[VITE]);
    let name = two.stop(&server);
    std::fs::remove_dir_all(&project).unwrap();
    two.plant(&project, &project.join(VITE));
    two.refused(
        &name,
        &format!(
            "the folder {} belongs to uid {}, not to you: a restart runs only what you control",
            project.display(),
            two.attacker.uid
        ),
    );
}

/// Issue 37, point 1, the script an interpreter loads: the victim's project is its own, but
/// its server is `python3 <shared>/tools/…/vite`; the victim deletes the tools, and the other
/// user puts their own script at that path. Refused, naming the file's owner; it never runs.
#[test]
fn a_script_another_user_put_at_a_path_the_argv_names_is_refused_and_never_runs() {
    a_script_put_back_by_another_user_is_refused("restart foreign script", |two, cwd, script| {
        two.start(cwd, &[&python(), script.to_str().unwrap()])
    });
}

/// [`a_script_another_user_put_at_a_path_the_argv_names_is_refused_and_never_runs`] with the
/// server started by `start(two, project, script)`.
fn a_script_put_back_by_another_user_is_refused(
    test: &str,
    start: impl Fn(&TwoUsers, &Path, &Path) -> Value,
) {
    if needs_root(test) || fixtures_cannot_be_orphans(test) {
        return;
    }
    let two = TwoUsers::new();
    let project = two.sb.path().join("app");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), "{}\n").unwrap();
    two.victim.own(&project);
    let tools = two.shared.join("tools");
    let script = tools.join(VITE);
    two.sb.install(&script, "devserver.py");
    two.victim.own(&tools);
    let server = start(&two, &project, &script);
    let name = two.stop(&server);
    std::fs::remove_dir_all(&tools).unwrap();
    two.plant(&tools, &script);
    two.refused(
        &name,
        &format!(
            "the file {} is not yours alone ({} belongs to uid {}, not to you): a restart runs \
             only what you control",
            script.display(),
            tools.display(),
            two.attacker.uid
        ),
    );
}

/// Issue 37, point 9: a recorded environment that changes what code runs — `LD_PRELOAD`, and a
/// `PATH` led by a folder others can write — is named, with the program and its folder, in
/// `pier history` (text and JSON) and in `pier restart`'s answer; the rest of it never is.
#[test]
fn an_environment_that_changes_what_code_runs_is_named_in_history_and_by_the_restart() {
    if fixtures_cannot_be_orphans("restart code env") {
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    let open = sb.path().join("open-bin");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let preload = "LD_PRELOAD=/nonexistent/pier-test-preload.so";
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", open.display());
    let (report, port) = (sb.report_path("app"), free_port().to_string());
    let argv = [VITE, "--report", report.to_str().unwrap(), "--port", &port];
    let env = [
        ("LD_PRELOAD", preload.split_once('=').unwrap().1),
        ("PATH", &path),
    ];
    spawn_with_env(&project, &argv, &env);
    let before = sb.report("app", |_| true);
    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    // The kernel ran the script through its `#!` line: python is argv[0], the script argv[1].
    let runs = format!("runs {} in {}", python(), project.display());
    let led = format!("PATH={path}");

    let text = String::from_utf8(sb.pier_exact(&["history"]).stdout).unwrap();
    assert!(text.contains(&format!("\n    {runs}\n")), "{text}");
    let with = text
        .lines()
        .find(|l| l.starts_with("    with "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(with.contains(preload) && with.contains(&led), "{with}");
    assert!(with.ends_with(" (changes what code runs)"), "{with}");
    assert!(!text.contains(SECRET), "{text}");
    let (_, h) = exit_and_json(&sb.pier_exact(&["history", "--json"]));
    let entry = &h["snapshots"][0];
    assert_eq!(entry["program"], python(), "{entry:#}");
    assert_eq!(entry["folder"], project.to_str().unwrap(), "{entry:#}");
    let code_env: Vec<&str> = entry["code_env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        code_env.contains(&preload) && code_env.contains(&led.as_str()),
        "{entry:#}"
    );
    assert!(code_env.iter().all(|e| !e.contains(SECRET)), "{entry:#}");

    let out = sb.pier_exact(&["restart", "--wait", "10", &name]);
    let text = String::from_utf8(out.stdout).unwrap();
    new_report(&sb, "app", pid(&before));
    assert!(text.contains("  READY  "), "{text}");
    assert!(text.contains(&format!("\n    {runs}\n")), "{text}");
    assert!(
        text.contains(&format!("\n{with}\n")),
        "the same line as history's: {text}"
    );
}

/// The same through a shell's command string, as `npm run dev` records it (`sh -c '… ; true'`):
/// the script the string names is judged too (found by playing the other user: only whole
/// arguments were).
#[test]
fn a_script_another_user_put_where_a_shells_command_string_names_it_is_refused() {
    a_script_put_back_by_another_user_is_refused(
        "restart foreign script in sh -c",
        |two, cwd, script| two.start_sh(cwd, "", script),
    );
}

/// A module folder a shell's command string puts first (`PYTHONPATH=<shared>/lib python3 …`),
/// gone after the stop and made again by the other user: refused, naming its owner (found by
/// playing the other user: the words of a variable's value were not judged).
#[test]
fn a_module_folder_another_user_made_again_is_refused() {
    let test = "restart foreign module folder";
    if needs_root(test) || fixtures_cannot_be_orphans(test) {
        return;
    }
    let two = TwoUsers::new();
    let project = two.sb.path().join("app");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), "{}\n").unwrap();
    two.sb.install(&project.join(VITE), "devserver.py");
    two.victim.own(&project);
    let lib = two.shared.join("lib");
    two.victim.folder(&lib, 0o755);
    let set = format!("PYTHONPATH={}:{}", project.display(), lib.display());
    let server = two.start_sh(&project, &set, &project.join(VITE));
    let name = two.stop(&server);
    std::fs::remove_dir_all(&lib).unwrap();
    two.plant(&lib, &lib.join("http/__init__.py"));
    two.refused(
        &name,
        &format!(
            "the folder {} belongs to uid {}, not to you: a restart runs only what you control",
            lib.display(),
            two.attacker.uid
        ),
    );
}
