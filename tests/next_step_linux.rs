//! Every reason names the next step (issue 40 §2), against real processes: a server in a real
//! tmux pane names the pane and "Ctrl-C"; a real `curl` holding a connection is named as curl;
//! a busy server says whether waiting helps; a restart refused for a taken port names the
//! python listener holding it.
#![cfg(target_os = "linux")]

mod common;

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::*;
use serde_json::Value;

/// Runs `tmux -S socket args…` with no config, and its stdout.
fn tmux(socket: &Path, args: &[&str]) -> String {
    let out = Command::new("/usr/bin/tmux")
        .arg("-S")
        .arg(socket)
        .args(["-f", "/dev/null"])
        .args(args)
        .env("SHELL", "/bin/bash")
        .stdin(Stdio::null())
        .output()
        .expect("tmux runs");
    assert!(out.status.success(), "tmux {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The `not_orphaned` evidence of a card, in words.
fn not_orphaned(r: &Value) -> String {
    evidence_of(r, "not_orphaned").expect("not orphaned").1
}

#[test]
fn a_server_in_a_tmux_pane_names_the_session_window_and_pane_and_ctrl_c() {
    if !Path::new("/usr/bin/tmux").exists() {
        eprintln!("skipped: no /usr/bin/tmux");
        return;
    }
    let sb = Sandbox::new();
    let project = sb.project("app", VITE);
    // A private server: its own socket in the test's folder, session "dev", a second pane.
    let socket = real_tmux(&sb);
    tmux(&socket, &["split-window", "-t", "dev:0"]);
    let pane_id = tmux(
        &socket,
        &["display-message", "-p", "-t", "dev:0.1", "#{pane_id}"],
    );
    let pane_id = pane_id.trim();
    let report = sb.report_path("app");
    let cmd = format!(
        "cd '{}' && ./{VITE} --report '{}'",
        project.display(),
        report.display()
    );
    tmux(&socket, &["send-keys", "-t", "dev:0.1", &cmd, "Enter"]);
    let fixture = sb.report("app", |_| true);

    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&fixture)).expect("the card");
    let parent = &r["parent"];
    assert_eq!(parent["tmux"]["session"], "dev", "{parent:#}");
    assert_eq!(parent["tmux"]["window"], 0, "{parent:#}");
    assert_eq!(parent["tmux"]["pane"], 1, "{parent:#}");
    assert_eq!(parent["tmux"]["pane_id"], pane_id, "{parent:#}");
    assert_eq!(parent["role"], "interactive shell", "{parent:#}");
    assert!(
        parent["tty"].as_str().unwrap().starts_with("/dev/pts/"),
        "{parent:#}"
    );
    let words = not_orphaned(&r);
    assert!(
        words.ends_with(&format!(
            "in tmux pane dev:0.1 ({pane_id}): press Ctrl-C in tmux pane dev:0.1 to stop it there"
        )),
        "{words}"
    );
    let text = sb.pier(&["scan", "--sample-ms", "100"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("press Ctrl-C in tmux pane dev:0.1"), "{text}");
}

/// A real curl held on a connection to a fixture that accepts and never answers.
fn curl_to(port: u64) -> Child {
    Command::new("curl")
        .args(["-s", "--max-time", "60"])
        .arg(format!("http://127.0.0.1:{port}/slow"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("curl runs")
}

#[test]
fn a_live_client_is_named_by_its_program_and_command_on_the_card_and_at_the_stop() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let mut curl = curl_to(server["port"].as_u64().unwrap());
    sb.report("app", |r| r["accepted"].as_u64() >= Some(1));

    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the card");
    let conn = r["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["internal"] == false)
        .expect("a live connection")
        .clone();
    let client = &conn["client"];
    assert_eq!(client["program"], "curl", "{conn:#}");
    assert_eq!(client["likely"], "http_client", "{conn:#}");
    assert_eq!(client["pid"], curl.id(), "{conn:#}");
    assert!(
        client["command"]
            .as_str()
            .unwrap()
            .starts_with("curl -s --max-time 60 http"),
        "{conn:#}"
    );
    let (_, words) = evidence_of(&r, "live_connection").unwrap();
    let named = format!("from curl (an HTTP client, pid {}: `curl -s", curl.id());
    assert!(words.contains(&named), "{words}");
    assert!(
        words.ends_with("— it ends when that client disconnects"),
        "{words}"
    );
    let text = sb.pier(&["scan", "--sample-ms", "100"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains(&named));

    let id = r["id"].as_str().unwrap();
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id]);
    let (_, doc) = exit_and_json(&out);
    let reason = doc["results"][0]["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains(&named), "{reason}");
    assert!(alive(pid(&server)));
    curl.kill().unwrap();
    curl.wait().unwrap();
}

#[test]
fn a_busy_server_says_which_member_how_much_and_whether_waiting_helps() {
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &["--busy"], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the card");
    let busiest = &r["activity"]["busiest"];
    assert_eq!(busiest["pid"], pid(&server), "{busiest:#}");
    // Its life, read (a young one's says little: the words say so).
    assert!(busiest["life_cpu_percent"].is_f64(), "{busiest:#}");
    assert!(busiest["age_seconds"].is_u64(), "{busiest:#}");
    let (_, words) = evidence_of(&r, "activity").unwrap();
    // A process a few seconds old: its life says nothing yet.
    assert!(
        words.contains("and may still be starting up: waiting may help"),
        "{words}"
    );
    let id = r["id"].as_str().unwrap();
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", id]);
    let (_, doc) = exit_and_json(&out);
    let reason = doc["results"][0]["reason"].as_str().unwrap().to_owned();
    assert!(reason.contains("waiting may help"), "{reason}");
}

/// A python listener on `port`, started by the test and ready when it says so.
fn python_listener(port: u16) -> Child {
    let code = "import socket,sys,time\n\
                s=socket.socket()\n\
                s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
                s.bind(('127.0.0.1',int(sys.argv[1])))\n\
                s.listen()\n\
                print('ok',flush=True)\n\
                time.sleep(600)";
    let mut child = Command::new(python())
        .args(["-c", code, &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ok");
    child
}

#[test]
fn a_restart_refused_for_a_taken_port_names_the_process_holding_it() {
    if fixtures_cannot_be_orphans("a_restart_refused_for_a_taken_port") {
        return;
    }
    let sb = Sandbox::new();
    let port = free_port();
    let server = sb.start_vite("app", &["--port", &port.to_string()], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the card");
    let id = r["id"].as_str().unwrap();
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", "--grace", "2", id]);
    let (_, doc) = exit_and_json(&out);
    let snapshot = doc["results"][0]["snapshot"].as_str().unwrap().to_owned();
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");

    let mut holder = python_listener(port);
    let out = sb.pier_exact(&["restart", "--json", &snapshot]);
    let (code, doc) = exit_and_json(&out);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(code, 3, "{doc:#}");
    let reason = doc["reason"].as_str().unwrap();
    let program = python().rsplit('/').next().unwrap().to_owned();
    assert!(
        reason.contains(&format!(
            "port 127.0.0.1:{port} is taken by {program} (pid {}: `{program} -c",
            holder.id()
        )),
        "{reason}"
    );
    assert!(reason.contains(&format!("`pier stop :{port}`")), "{reason}");
}

/// A planted "tmux", compiled (what Pier runs is the server's own executable, and a script's
/// is its interpreter): `tmux serve NAME` is a process the kernel names NAME (tmux names its
/// server `tmux: server`) until killed; any other call is a client Pier asked, which records
/// that it ran (the pid of the child it leaves) in `asked.log` beside itself, leaves that
/// child holding its stdout for 30 s, answers `dev:0.0` and exits 0.
const FAKE_TMUX: &str = r#"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "serve") == 0) {
        alarm(600);
        prctl(PR_SET_NAME, argv[2]);
        for (;;) pause();
    }
    char log[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", log, sizeof log - 16);
    if (n <= 0) return 2;
    log[n] = 0;
    strcpy(strrchr(log, '/') + 1, "asked.log");
    pid_t held = fork();
    if (held == 0) { sleep(30); _exit(0); }
    FILE *f = fopen(log, "a");
    if (f) { fprintf(f, "%d\n", held); fclose(f); }
    printf("dev:0.0\n");
    return 0;
}
"#;

/// [`FAKE_TMUX`] built as `<sandbox>/bin/tmux` (a folder of the user's that others cannot
/// write); `None` without a C compiler or tmux.
fn plant_tmux(sb: &Sandbox) -> Option<std::path::PathBuf> {
    if !Path::new("/usr/bin/tmux").exists() || Command::new("cc").arg("--version").output().is_err()
    {
        eprintln!("skipped: no /usr/bin/tmux or cc");
        return None;
    }
    let bin = sb.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let src = sb.path().join("tmux.c");
    std::fs::write(&src, FAKE_TMUX).unwrap();
    let exe = bin.join("tmux");
    let out = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(out.status.success(), "cc: {out:?}");
    Some(exe)
}

/// The planted tmux as a server, ended (by its handle) and reaped when dropped.
struct FakeServer(Child);

impl FakeServer {
    /// Starts the planted tmux as a process the kernel names `name`.
    fn start(exe: &Path, name: &str) -> Self {
        Self::start_as(exe, name, None)
    }

    /// [`FakeServer::start`], run as user `uid` when given (the tests run as root).
    fn start_as(exe: &Path, name: &str, uid: Option<u32>) -> Self {
        use std::os::unix::process::CommandExt as _;
        let mut command = Command::new(exe);
        command.args(["serve", name]).stdin(Stdio::null());
        if let Some(uid) = uid {
            command.uid(uid).gid(uid);
        }
        let child = command.spawn().unwrap();
        let server = Self(child);
        let pid = server.pid();
        wait_for("the fake server's name", || {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (comm.trim_end() == name).then_some(())
        });
        server
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private real tmux server with session "dev", owned by the sandbox; its socket.
fn real_tmux(sb: &Sandbox) -> std::path::PathBuf {
    let socket = sb.path().join("tmux.sock");
    tmux(
        &socket,
        &["new-session", "-d", "-s", "dev", "-x", "120", "-y", "30"],
    );
    let server: u32 = tmux(&socket, &["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .unwrap();
    sb.own(Started {
        pid: server,
        start_time: start_time_of(server).unwrap(),
    });
    socket
}

/// Makes the shell of real pane `target` one whose environment names `fake` (server pid)
/// at `fake_socket` and pane `pane_id`, then runs the dev-server fixture of project `name` in
/// it; the fixture's report.
fn run_in_pane(
    sb: &Sandbox,
    (socket, target): (&Path, &str),
    (fake_socket, fake, pane_id): (&Path, u32, &str),
    name: &str,
) -> Value {
    let env = format!(
        "exec env TMUX='{},{fake},0' TMUX_PANE={pane_id} bash --norc --noprofile",
        fake_socket.display()
    );
    tmux(socket, &["send-keys", "-t", target, &env, "Enter"]);
    let project = sb.project(name, VITE);
    let cmd = format!(
        "cd '{}' && ./{VITE} --report '{}'",
        project.display(),
        sb.report_path(name).display()
    );
    tmux(socket, &["send-keys", "-t", target, &cmd, "Enter"]);
    sb.report(name, |_| true)
}

/// The card's tmux pane, and its not-orphaned words.
fn pane_of(scan: &Value, fixture: &Value) -> (Value, String) {
    let (_, r) = resource_with(scan, pid(fixture)).expect("the card");
    (r["parent"]["tmux"].clone(), not_orphaned(&r))
}

#[test]
fn a_tmux_that_holds_its_stdout_open_costs_the_scan_one_deadline_and_the_pane_is_named_by_id() {
    let sb = Sandbox::new();
    let Some(exe) = plant_tmux(&sb) else {
        return;
    };
    let fake_socket = sb.path().join("fake.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&fake_socket).unwrap();
    let fake = FakeServer::start(&exe, "tmux: server");
    let socket = real_tmux(&sb);
    tmux(&socket, &["split-window", "-t", "dev:0"]);
    let first = run_in_pane(
        &sb,
        (&socket, "dev:0.0"),
        (&fake_socket, fake.pid(), "%5"),
        "app",
    );
    let second = run_in_pane(
        &sb,
        (&socket, "dev:0.1"),
        (&fake_socket, fake.pid(), "%6"),
        "app2",
    );

    let started = std::time::Instant::now();
    let scan = sb.scan(&[]);
    let took = started.elapsed();
    // A safety bound, not a benchmark: a scan that waited on the held pipe takes 30 s.
    assert!(
        took < std::time::Duration::from_secs(5),
        "the scan took {took:?}"
    );
    for (fixture, pane_id) in [(&first, "%5"), (&second, "%6")] {
        let (tmux, words) = pane_of(&scan, fixture);
        assert_eq!(tmux["pane_id"], pane_id, "{tmux:#}");
        assert!(tmux["session"].is_null(), "{tmux:#}");
        assert!(
            words.ends_with(&format!(
                "in tmux pane {pane_id}: press Ctrl-C in tmux pane {pane_id} to stop it there"
            )),
            "{words}"
        );
    }
    // Asked once: one server, and it gave no answer; the child it left was killed with it.
    let log = std::fs::read_to_string(exe.with_file_name("asked.log")).unwrap();
    let held: Vec<u32> = log.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(held.len(), 1, "{log}");
    wait_for("the held child's end", || (!alive(held[0])).then_some(()));
}

/// Clock ticks since boot, as `/proc/<pid>/stat` counts a start time.
fn ticks_now() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").unwrap();
    let secs: f64 = uptime.split_whitespace().next().unwrap().parse().unwrap();
    (secs * rustix::param::clock_ticks_per_second() as f64) as u64
}

#[test]
fn a_pid_in_tmux_that_is_not_a_tmux_server_or_is_younger_than_the_shell_is_never_run() {
    let sb = Sandbox::new();
    let Some(exe) = plant_tmux(&sb) else {
        return;
    };
    let fake_socket = sb.path().join("fake.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&fake_socket).unwrap();
    // Any program of the user's a stale TMUX may name: the kernel does not call it tmux's.
    let editor = FakeServer::start(&exe, "vim");
    let socket = real_tmux(&sb);
    let shell: u32 = tmux(
        &socket,
        &["display-message", "-p", "-t", "dev:0.0", "#{pane_pid}"],
    )
    .trim()
    .parse()
    .unwrap();
    let shell_started = start_time_of(shell).unwrap();
    wait_for("a clock tick", || {
        (ticks_now() > shell_started + 1).then_some(())
    });
    // Named as tmux's server, but started after the shell whose TMUX names it: a reused pid.
    let younger = FakeServer::start(&exe, "tmux: server");
    assert!(start_time_of(younger.pid()).unwrap() > shell_started);
    tmux(&socket, &["split-window", "-t", "dev:0"]);
    let first = run_in_pane(
        &sb,
        (&socket, "dev:0.0"),
        (&fake_socket, younger.pid(), "%5"),
        "app",
    );
    let second = run_in_pane(
        &sb,
        (&socket, "dev:0.1"),
        (&fake_socket, editor.pid(), "%6"),
        "app2",
    );

    let scan = sb.scan(&[]);
    for (fixture, pane_id) in [(&first, "%5"), (&second, "%6")] {
        let (tmux, _) = pane_of(&scan, fixture);
        assert_eq!(tmux["pane_id"], pane_id, "{tmux:#}");
        assert!(tmux["session"].is_null(), "{tmux:#}");
    }
    assert!(
        !exe.with_file_name("asked.log").exists(),
        "the planted program was run"
    );
}

/// Another user's process named as tmux's server, older than the shell whose `TMUX` names it:
/// its answers are that user's to make up, and its program is never run by the user's scan.
#[test]
fn another_users_tmux_server_is_never_asked() {
    use std::os::unix::fs::PermissionsExt as _;
    if needs_root("another user's tmux server") {
        return;
    }
    let sb = Sandbox::new();
    let Some(exe) = plant_tmux(&sb) else {
        return;
    };
    // Where the other user can run it: root's, readable by all, writable by none but root.
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let theirs = shared.path().join("tmux");
    std::fs::copy(&exe, &theirs).unwrap();
    let fake_socket = sb.path().join("fake.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&fake_socket).unwrap();
    let other = FakeServer::start_as(&theirs, "tmux: server", Some(65534));
    let socket = real_tmux(&sb);
    let app = run_in_pane(
        &sb,
        (&socket, "dev:0.0"),
        (&fake_socket, other.pid(), "%5"),
        "app",
    );
    let scan = sb.scan(&[]);
    let (tmux, _) = pane_of(&scan, &app);
    assert_eq!(tmux["pane_id"], "%5", "{tmux:#}");
    assert!(tmux["session"].is_null(), "{tmux:#}");
    assert!(
        !theirs.with_file_name("asked.log").exists(),
        "another user's server was asked"
    );
}

#[test]
fn a_shells_environment_is_read_only_as_far_as_the_bound_and_only_whole_entries() {
    use pier_core::diagnose::place::ENV_READ_MAX;
    use pier_core::probe::{LinuxProbe, Probe as _};
    // Ten 30 KiB entries (300 KiB), then TMUX: past the bound.
    let pads: Vec<String> = (0..10)
        .map(|i| format!("A_PAD{i}={}", "x".repeat(30 * 1024)))
        .collect();
    let mut cmd = Command::new("sleep");
    cmd.arg("60").env_clear().stdin(Stdio::null());
    for p in &pads {
        let (k, v) = p.split_once('=').unwrap();
        cmd.env(k, v);
    }
    let mut child = cmd
        .env("TMUX", "/s,1,0")
        .env("TMUX_PANE", "%1")
        .spawn()
        .unwrap();
    let probe = LinuxProbe::new();
    let whole = probe.environment(child.id()).unwrap();
    let head = probe.environment_head(child.id(), ENV_READ_MAX).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let as_text = |e: Vec<Vec<u8>>| -> Vec<String> {
        e.into_iter()
            .map(|e| String::from_utf8(e).unwrap())
            .collect()
    };
    let (whole, head) = (as_text(whole), as_text(head));
    assert_eq!(whole.len(), 12, "the whole environment, TMUX last");
    assert!(whole[10].starts_with("TMUX="));
    let keys: Vec<&str> = head.iter().map(|e| e.split('=').next().unwrap()).collect();
    assert!(
        head == pads[..8],
        "not the 8 whole entries within 256 KiB: {keys:?}"
    );
    assert!(head.iter().map(|e| e.len() + 1).sum::<usize>() <= ENV_READ_MAX);
}
