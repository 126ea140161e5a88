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
    let socket = sb.path().join("tmux.sock");
    // A private server: its own socket in the test's folder, session "dev", a second pane.
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
