//! A client the server has not accepted is a client (docs/design.md §2.4). A server that defers
//! accepting (`TCP_DEFER_ACCEPT`) keeps a client that connected and sent nothing half-open —
//! SYN-RECV on the server's side — while the client's own side is ESTABLISHED to the listener.
//! The connection counts at either end, once: the scan shows the resource red with one live
//! connection, and a stop is refused. Real processes: the server (`fixtures/deferserver.py`,
//! installed as `node_modules/.bin/vite`, listening on 0.0.0.0) is the test's own orphan in its
//! own temp folder; the client is this test. Each test waits, with a deadline, until `ss` shows
//! the server's side SYN-RECV and the client's side ESTABLISHED, and checks after Pier has
//! looked that the server's side is still SYN-RECV: Pier judged inside that window.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::fs;
use std::net::TcpStream;
use std::process::Command;

use common::*;
use pier_core::probe::{LinuxProbe, Probe, TableSource, TcpState};
use serde_json::Value;

/// Starts the deferring server as `node_modules/.bin/vite` in a new project `name`, an orphan,
/// and waits for its report (registering it for the kill at drop).
fn start_deferring(sb: &Sandbox, name: &str) -> Value {
    let project = sb.path().join(name);
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join("package.json"), "{}\n").unwrap();
    sb.install(&project.join(VITE), "deferserver.py");
    let report = sb.report_path(name);
    sb.spawn_orphan(
        &project,
        &[&format!("./{VITE}"), "--report", report.to_str().unwrap()],
    );
    sb.report(name, |_| true)
}

fn port(report: &Value) -> u16 {
    report["port"].as_u64().unwrap() as u16
}

/// The state `ss` gives the TCP socket whose ends are `local` and `peer` (`None`: no such
/// socket).
fn ss_state(local: &str, peer: &str) -> Option<String> {
    let out = Command::new("ss")
        .args(["-Htan"])
        .output()
        .expect("ss runs");
    assert!(out.status.success(), "ss failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() >= 5 && f[3] == local && f[4] == peer).then(|| f[0].to_owned())
        })
}

/// Connects to the server at 127.0.0.1 and sends nothing; waits until the server's side is
/// SYN-RECV and the client's side ESTABLISHED. Returns the client (held open) and the two ends'
/// addresses as `ss` writes them: (the server's, the client's).
fn silent_client(server_port: u16) -> (TcpStream, String, String) {
    let client = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
    let server_end = format!("127.0.0.1:{server_port}");
    let client_end = client.local_addr().unwrap().to_string();
    wait_for(
        "the server's side SYN-RECV and the client's side ESTABLISHED",
        || {
            let server = ss_state(&server_end, &client_end)?;
            let client = ss_state(&client_end, &server_end)?;
            (server == "SYN-RECV" && client == "ESTAB").then_some(())
        },
    );
    (client, server_end, client_end)
}

/// Whether the server's side of the connection is still half-open: what Pier saw was the
/// deferred connection, not one the kernel completed meanwhile.
fn assert_still_half_open(server_end: &str, client_end: &str) {
    assert_eq!(
        ss_state(server_end, client_end).as_deref(),
        Some("SYN-RECV"),
        "the defer window outlasted Pier's look"
    );
}

/// `pier scan --json --under <sandbox>` with the socket tables read from `tables`
/// (`PIER_SOCKET_TABLES`: "sockdiag" is the default, "procfs" the fallback).
fn scan_with_tables(sb: &Sandbox, tables: &str) -> Value {
    let out = Command::new(pier_bin())
        .args(["scan", "--json", "--sample-ms", "100", "--under"])
        .arg(sb.path())
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("PIER_SOCKET_TABLES", tables)
        .env("NO_COLOR", "1")
        .output()
        .expect("pier runs");
    let (code, doc) = exit_and_json(&out);
    assert_eq!(code, 0, "{doc:#}");
    doc
}

#[test]
fn a_silent_client_of_a_server_that_defers_accepting_makes_it_red_with_one_connection() {
    if fixtures_cannot_be_orphans("defer accept scan") {
        return;
    }
    let sb = Sandbox::new();
    let server = start_deferring(&sb, "app");
    // Without the client it is green: the red below is the client's.
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the server is a candidate");
    assert_eq!(r["level"], "green", "{r:#}");

    let (_client, server_end, client_end) = silent_client(port(&server));
    for tables in ["sockdiag", "procfs"] {
        let scan = scan_with_tables(&sb, tables);
        let (_, r) = resource_with(&scan, pid(&server)).unwrap();
        assert_eq!(r["level"], "red", "{tables}: {r:#}");
        assert!(evidence_kinds(&r).contains(&"live_connection".to_owned()));
        let conns = r["connections"].as_array().unwrap();
        assert_eq!(
            conns.len(),
            1,
            "{tables}: one connection, seen at both ends: {r:#}"
        );
        assert_eq!(conns[0]["local"], server_end.as_str());
        assert_eq!(conns[0]["peer"], client_end.as_str());
        assert_eq!(
            conns[0]["peer_pid"],
            std::process::id(),
            "the client's end is this test's"
        );
        assert_eq!(conns[0]["internal"], false);
    }
    assert_still_half_open(&server_end, &client_end);
}

#[test]
fn a_stop_is_refused_while_a_silent_client_waits_on_a_server_that_defers_accepting() {
    if fixtures_cannot_be_orphans("defer accept stop") {
        return;
    }
    let sb = Sandbox::new();
    let server = start_deferring(&sb, "app");
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("the server is a candidate");
    assert_eq!(r["level"], "green", "{r:#}");
    let id = r["id"].as_str().unwrap().to_owned();

    let (_client, server_end, client_end) = silent_client(port(&server));
    let (code, doc) = exit_and_json(&sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]));
    let result = &doc["results"][0];
    assert_eq!(result["result"], "refused", "{doc:#}");
    assert_eq!(code, 3);
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("live connection"),
        "{result:#}"
    );
    assert!(alive(pid(&server)), "the server still runs");
    assert_still_half_open(&server_end, &client_end);
}

/// Both table sources list the server's half-open end (held by no process) beside the client's
/// established one: sock_diag asks the kernel for SYN-RECV, `/proc/net/tcp` prints it.
#[test]
fn both_table_sources_list_the_servers_half_open_end() {
    let sb = Sandbox::new();
    let server = start_deferring(&sb, "app");
    let (_client, server_end, client_end) = silent_client(port(&server));
    let ours = |source: TableSource| -> BTreeSet<String> {
        let probe = LinuxProbe::with_tables(source);
        let table = probe.survey(&|_| false).unwrap().sockets.unwrap();
        assert_eq!(probe.last_tables(), Some(source), "no silent fallback");
        table
            .sockets
            .iter()
            .filter(|s| s.local.port() == port(&server) || s.remote.port() == port(&server))
            .filter(|s| s.state != TcpState::Listen)
            .map(|s| format!("{} {} {:?} {:?}", s.local, s.remote, s.state, s.owners))
            .collect()
    };
    let diag = ours(TableSource::SockDiag);
    assert_eq!(diag, ours(TableSource::ProcNet));
    let want: BTreeSet<String> = [
        format!("{server_end} {client_end} SynRecv []"),
        format!(
            "{client_end} {server_end} Established [{}]",
            std::process::id()
        ),
    ]
    .into();
    assert_eq!(diag, want);
    assert_still_half_open(&server_end, &client_end);
}
