//! `pier mcp`'s safety against real processes, driven step by step by the official Python
//! SDK's stdio client (tests/mcp/client.py, reading one step a line) — which is also the
//! agent: what it starts (`spawn`, `spawn_pty`) is its own child, so "what the agent started
//! itself" is judged on a real tree. Between two calls the test changes the world: a client
//! connects, a port opens. Every scan is scoped to the test's folder; the test signals only
//! what it started, by identity. Without `PIER_REAL_TOOLS` each test says so and passes.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::mcp::sdk_python;
use common::*;
use pier_core::agent::AgentError;
use serde_json::{json, Value};

/// The name the client gives, recorded as who asked.
const AGENT: &str = "e2e-agent";

/// How long one step may take (a stop samples and waits; a restart waits for its port).
const STEP: Duration = Duration::from_secs(60);

/// The MCP client, as the agent: `pier mcp ARGS` under it, one step a line.
struct Agent<'s> {
    sb: &'s Sandbox,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl<'s> Agent<'s> {
    /// Starts the client (the person says yes when asked) and waits for the handshake, and
    /// then for the clock to pass `pier mcp`'s start: what the agent starts after is its own.
    fn start(sb: &'s Sandbox, python: &Path, args: &[&str]) -> Self {
        let driver = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
        let script = json!({"name": AGENT, "elicit": "accept"});
        let mut child = Command::new(python)
            .arg(driver)
            .arg(script.to_string())
            .arg("--")
            .arg(pier_bin())
            .args(["mcp", "--sample-ms", "100"])
            .args(args)
            .env("PIER_STATE_DIR", sb.path().join("state"))
            .env("PIER_CONFIG_DIR", sb.path().join("config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the MCP client runs");
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut agent = Agent {
            sb,
            stdin: child.stdin.take(),
            child,
            lines,
        };
        let hello = agent.next_line();
        assert!(hello["protocol"].is_string(), "{hello}");
        agent.after_server_start();
        agent
    }

    fn next_line(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(STEP)
            .unwrap_or_else(|e| panic!("the client answered nothing ({e})"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Waits until the kernel clock has passed `pier mcp`'s start time: a process started in
    /// the same tick is not the session's (`own::started_after`).
    fn after_server_start(&self) {
        let me = self.child.id();
        let server = wait_for("pier mcp under the client", || {
            std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                (ppid_of(pid) == Some(me)).then_some(pid)
            })
        });
        let began = start_time_of(server).expect("pier mcp runs");
        let hz = rustix::param::clock_ticks_per_second();
        wait_for("a tick after pier mcp began", || {
            let up = std::fs::read_to_string("/proc/uptime").ok()?;
            let secs: f64 = up.split(' ').next()?.parse().ok()?;
            ((secs * hz as f64) as u64 > began + 1).then_some(())
        });
    }

    fn step(&mut self, step: Value) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{step}").unwrap();
        stdin.flush().unwrap();
        self.next_line()
    }

    /// Calls `tool`; its line (`is_error`, `text`, `structured`, `asked`).
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let done = self.step(json!({"call": tool, "args": args}));
        assert!(done.get("error").is_none(), "{tool}: {done}");
        done
    }

    /// The agent starts `argv` in `cwd` (with `env` added), its child; registered for the
    /// kill at the end.
    fn spawn(&mut self, argv: &[&str], cwd: &Path, env: Value) -> u32 {
        let done = self.step(json!({"spawn": argv, "cwd": cwd, "env": env}));
        self.owned(&done)
    }

    /// The agent opens a person's terminal (an interactive bash on a pty) in `cwd` and types
    /// `line` into it; the bash's pid.
    fn spawn_pty(&mut self, line: &str, cwd: &Path) -> u32 {
        let done = self.step(json!({"spawn_pty": line, "cwd": cwd}));
        self.owned(&done)
    }

    fn owned(&self, done: &Value) -> u32 {
        let pid = pid(done);
        let start_time = start_time_of(pid).expect("it runs");
        self.sb.own(Started { pid, start_time });
        pid
    }

    /// The cards of the test's folder.
    fn cards(&mut self) -> Value {
        let under = self.sb.path().to_str().unwrap().to_owned();
        self.call("cards", json!({"under": [under]}))
    }

    /// Polls the cards until the card with member `pid` satisfies `until`; the reply and card.
    fn card_until(&mut self, pid: u32, until: impl Fn(&Value) -> bool) -> (Value, Value) {
        let end = Instant::now() + DEADLINE;
        loop {
            let reply = self.cards();
            if let Some((_, r)) = resource_with(&reply["structured"]["scan"], pid) {
                if until(&r) {
                    return (reply, r);
                }
            }
            assert!(Instant::now() < end, "the card of {pid}: {reply}");
        }
    }
}

impl Drop for Agent<'_> {
    /// Ends the session (the client closes `pier mcp` at the end of its stdin).
    fn drop(&mut self) {
        drop(self.stdin.take());
        let end = Instant::now() + DEADLINE;
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > end {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A project `name` with the dev-server fixture as vite; the shell line that runs it on
/// `port` (0: any) with `extra`, reporting to the sandbox's report `name`.
fn vite_line(sb: &Sandbox, name: &str, port: u16, extra: &str) -> (PathBuf, String) {
    let project = sb.project(name, VITE);
    let report = sb.report_path(name);
    let line = format!(
        "./{VITE} --report {} --port {port} {extra}",
        report.display()
    );
    (project, line)
}

/// A green server the test started (an orphan under `sh`), and its card id.
fn green_server(sb: &Sandbox, name: &str, extra: &[&str]) -> (Value, String) {
    let server = sb.start_vite(name, extra, |_| true);
    wait_for("the server green", || {
        let scan = sb.scan(&[]);
        let (_, r) = resource_with(&scan, pid(&server))?;
        (r["level"] == "green").then_some(())
    });
    let id = id_of(&server);
    (server, id)
}

fn text(line: &Value) -> &str {
    line["text"].as_str().unwrap()
}

/// The plan id of a `plan_stop` reply that planned exactly `id`.
fn planned(reply: &Value, id: &str) -> String {
    let stops = reply["structured"]["stops"].as_array().unwrap();
    assert_eq!(stops.len(), 1, "{reply}");
    assert_eq!(stops[0]["id"], id, "{reply}");
    reply["structured"]["plan"].as_str().unwrap().to_owned()
}

/// The one refusal of a `plan_stop` reply that planned nothing, for `id`.
fn refused_in_plan<'a>(reply: &'a Value, id: &str) -> &'a Value {
    let s = &reply["structured"];
    assert!(s["plan"].is_null(), "{reply}");
    let refused = s["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{reply}");
    assert_eq!(refused[0]["id"], id, "{reply}");
    &refused[0]
}

/// A way forward an agent is told never offers a stop anyway or Force.
fn offers_no_force(next: &str) {
    let lower = next.to_lowercase();
    for word in ["anyway", "force", "--accept"] {
        assert!(!lower.contains(word), "offers {word}: {next}");
    }
}

/// SIGUSR1 through a pidfd, only if `p` is still the process the test started.
fn usr1_by_identity(p: Started) {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    let fd = pidfd_open(Pid::from_raw(p.pid as i32).unwrap(), PidfdFlags::empty()).unwrap();
    assert_eq!(
        start_time_of(p.pid),
        Some(p.start_time),
        "not ours any more"
    );
    pidfd_send_signal(&fd, Signal::USR1).unwrap();
}

fn identity(report: &Value) -> Started {
    Started {
        pid: pid(report),
        start_time: report["start_time"].as_u64().unwrap(),
    }
}

/// A green server is planned; then a client connects and holds its connection: carrying the
/// plan out runs the chain again, which refuses (red now), says why, and signals nothing.
#[test]
fn a_plan_is_refused_when_a_client_connected_after_it_was_made() {
    let Some(py) = sdk_python("changed: client") else {
        return;
    };
    if fixtures_cannot_be_orphans("changed: client") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id) = green_server(&sb, "app", &[]);
    let mut agent = Agent::start(&sb, &py, &[]);
    let plan = planned(&agent.call("plan_stop", json!({"ids": [&id]})), &id);

    let port = server["port"].as_u64().unwrap() as u16;
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sb.report("app", |r| r["accepted"].as_u64() >= Some(1));
    let done = agent.call("carry_out", json!({"plan": plan}));
    assert_eq!(done["is_error"], false, "{done}");
    let report = &done["structured"]["reports"][0];
    assert_eq!(report["result"], "refused", "{done}");
    assert!(report["members"].as_array().unwrap().is_empty(), "{done}");
    let why = report["reason"].as_str().unwrap();
    assert!(why.contains("red"), "the reply says why: {why}");
    assert!(text(&done).contains("refused"), "{done}");
    assert!(alive(pid(&server)), "the server was stopped");
    assert_eq!(snapshots(&sb), 0, "a refused stop wrote a snapshot");
}

/// A green server is planned; then it opens a second port: what the plan was bound to changed,
/// so carrying it out refuses before the chain, naming the ports, and signals nothing.
#[test]
fn a_plan_is_refused_when_the_server_opened_a_port_after_it_was_made() {
    let Some(py) = sdk_python("changed: port") else {
        return;
    };
    if fixtures_cannot_be_orphans("changed: port") {
        return;
    }
    let sb = Sandbox::new();
    let (server, id) = green_server(&sb, "app", &["--listen-on-usr1"]);
    let mut agent = Agent::start(&sb, &py, &[]);
    let plan = planned(&agent.call("plan_stop", json!({"ids": [&id]})), &id);

    usr1_by_identity(identity(&server));
    let again = sb.report("app", |r| r["second_port"].is_u64());
    let second = again["second_port"].as_u64().unwrap();
    agent.card_until(pid(&server), |r| {
        r["ports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["port"] == second)
    });
    let done = agent.call("carry_out", json!({"plan": plan}));
    let report = &done["structured"]["reports"][0];
    assert_eq!(report["result"], "refused", "{done}");
    let why = report["reason"].as_str().unwrap();
    assert!(
        why.contains("its ports changed") && why.contains(&second.to_string()),
        "{why}"
    );
    assert!(why.contains("nothing was signalled"), "{why}");
    assert!(alive(pid(&server)), "the server was stopped");
    assert_eq!(snapshots(&sb), 0, "a refused stop wrote a snapshot");
}

/// A red card (a live client holds a connection) and a protected one are refused by
/// `plan_stop` whatever is asked, each with a way forward that is never a stop anyway or
/// Force; `cards` says the same.
#[test]
fn a_red_or_protected_card_is_refused_with_a_way_forward_that_offers_no_force() {
    let Some(py) = sdk_python("red") else {
        return;
    };
    if fixtures_cannot_be_orphans("red") {
        return;
    }
    let sb = Sandbox::new();
    let (busy, busy_id) = green_server(&sb, "busy", &[]);
    let (kept, kept_id) = green_server(&sb, "kept", &[]);
    let kept_port = kept["port"].as_u64().unwrap().to_string();
    let said = sb.pier_exact(&["protect", "add", "--port", &kept_port]);
    assert!(said.status.success(), "{said:?}");
    let port = busy["port"].as_u64().unwrap() as u16;
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();

    let mut agent = Agent::start(&sb, &py, &[]);
    let (cards, _) = agent.card_until(pid(&busy), |r| r["level"] == "red");
    let steps = cards["structured"]["next_steps"].as_array().unwrap();
    for (id, pid, words) in [
        (&busy_id, pid(&busy), "client"),
        (&kept_id, pid(&kept), "protect"),
    ] {
        let step = steps.iter().find(|s| s["id"] == id.as_str());
        let step = step.unwrap_or_else(|| panic!("no next step for {id}: {cards}"));
        offers_no_force(step["next"].as_str().unwrap());
        let reply = agent.call("plan_stop", json!({"ids": [id]}));
        let refused = refused_in_plan(&reply, id);
        assert_ne!(refused["level"], "green", "{reply}");
        let next = refused["next"].as_str().unwrap();
        offers_no_force(next);
        assert!(next.contains(words), "{next}");
        assert!(alive(pid), "{id} was stopped");
    }
    assert_eq!(snapshots(&sb), 0);
}

/// The history entry of the stop of `id`, as the agent's `history` tool lists it.
fn history_of(agent: &mut Agent, id: &str) -> Value {
    let history = agent.call("history", json!({}));
    let entries = history["structured"]["entries"].as_array().unwrap();
    let entry = entries.iter().find(|e| e["id"] == id);
    entry
        .unwrap_or_else(|| panic!("no record of {id}: {history}"))
        .clone()
}

/// What the agent started through a launcher (`sh -c '…; true'`, so its live parent makes it
/// yellow) is its own: listed in `mine`, planned with `mine` setting aside only that its parent
/// runs, stopped once the person says yes, recorded as the agent's, and restarted by it. What
/// it typed into a person's interactive shell on a pty is not its own: refused, and left
/// running. A stop a person made is not the agent's to restart.
#[test]
fn the_agent_stops_and_restarts_what_it_started_but_not_what_a_persons_shell_runs() {
    let Some(py) = sdk_python("own") else {
        return;
    };
    if fixtures_cannot_be_orphans("own") {
        return;
    }
    let sb = Sandbox::new();
    let (person, person_id) = green_server(&sb, "person", &[]);
    let mut agent = Agent::start(&sb, &py, &[]);
    let (project, line) = vite_line(&sb, "mine", free_port(), "");
    agent.spawn(&["sh", "-c", &format!("{line}; true")], &project, json!({}));
    let server = sb.report("mine", |_| true);
    let (typed_project, typed_line) = vite_line(&sb, "typed", 0, "");
    let bash = agent.spawn_pty(&format!("{typed_line} &"), &typed_project);
    let typed = sb.report("typed", |_| true);
    assert_eq!(typed["ppid"], bash, "typed into the person's bash");

    let (_, typed_card) = agent.card_until(pid(&typed), |_| true);
    let (cards, card) = agent.card_until(pid(&server), |_| true);
    let (id, typed_id) = (
        card["id"].as_str().unwrap(),
        typed_card["id"].as_str().unwrap(),
    );
    assert_eq!(card["level"], "yellow", "its parent runs: {card}");
    assert_eq!(cards["structured"]["mine"], json!([id]), "{cards}");

    let reply = agent.call("plan_stop", json!({"ids": [typed_id]}));
    let refused = refused_in_plan(&reply, typed_id);
    assert_eq!(refused["level"], "yellow", "{reply}");
    let next = refused["next"].as_str().unwrap();
    assert!(next.contains("interactive shell"), "{next}");
    offers_no_force(next);

    let reply = agent.call("plan_stop", json!({"mine": true}));
    let plan = planned(&reply, id);
    let stop = &reply["structured"]["stops"][0];
    assert_eq!(stop["own"], true, "{reply}");
    assert_eq!(stop["sets_aside"][0]["reason"], "not_orphaned", "{reply}");
    assert_eq!(stop["sets_aside"].as_array().unwrap().len(), 1, "{reply}");
    let done = agent.call("carry_out", json!({"plan": plan}));
    assert_eq!(done["asked"].as_array().unwrap().len(), 1, "{done}");
    assert_eq!(
        done["structured"]["reports"][0]["result"], "stopped",
        "{done}"
    );
    wait_for("the agent's server gone", || {
        (!alive(pid(&server))).then_some(())
    });
    assert!(alive(pid(&typed)), "the person's server was stopped");

    let entry = history_of(&mut agent, id);
    assert_eq!(
        entry["requested_by"],
        json!({"kind": "agent", "client": AGENT}),
        "{entry}"
    );
    let snapshot = entry["snapshot"].as_str().unwrap();
    let back = agent.call("restart", json!({"snapshot": snapshot}));
    assert_eq!(back["structured"]["report"]["result"], "ready", "{back}");
    let again = sb.report("mine", |r| r["pid"] != server["pid"]);
    sb.own_parent(&again);

    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &person_id]);
    let (code, stopped) = exit_and_json(&out);
    assert_eq!(code, 0, "{stopped}");
    wait_for("the person's stop", || (!alive(pid(&person))).then_some(()));
    let theirs = history_of(&mut agent, &person_id);
    let snapshot = theirs["snapshot"].as_str().unwrap();
    let refused = agent.call("restart", json!({"snapshot": snapshot}));
    assert_eq!(refused["structured"]["refused"], "not_yours", "{refused}");
    assert_eq!(
        text(&refused),
        AgentError::NotYours(snapshot.into()).to_string()
    );
}

/// A server started with secrets in its argv (after a flag named like a key, and as a token
/// variable on its launcher's command line) and in its environment: no reply of any tool
/// carries one, in its text or its structured content.
#[test]
fn no_reply_carries_a_secret_of_the_argv_or_the_environment() {
    const KEY: &str = "sk-abcdefghijklmnopqrstuvwxyz123";
    const TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const ENV: &str = "s3cr3t-value-xyz";
    let Some(py) = sdk_python("secrets") else {
        return;
    };
    let sb = Sandbox::new();
    let mut agent = Agent::start(&sb, &py, &[]);
    let port = free_port();
    let (project, line) = vite_line(&sb, "app", port, &format!("--api-key {KEY}"));
    let launcher = format!("GITHUB_TOKEN={TOKEN} {line}; true");
    let env = json!({"SECRET_ENV_VALUE": ENV});
    agent.spawn(&["sh", "-c", &launcher], &project, env);
    let server = sb.report("app", |_| true);
    let environ = std::fs::read(format!("/proc/{}/environ", pid(&server))).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        environ.contains(ENV) && environ.contains(TOKEN),
        "the secrets are there"
    );
    assert!(server["argv"].to_string().contains(KEY));

    let (cards, _) = agent.card_until(pid(&server), |_| true);
    let mut replies = vec![cards];
    replies.push(agent.call("who_holds_port", json!({"port": port})));
    let planned = agent.call("plan_stop", json!({"mine": true}));
    let plan = planned["structured"]["plan"].clone();
    replies.push(planned);
    replies.push(agent.call("carry_out", json!({"plan": plan})));
    let history = agent.call("history", json!({}));
    let snapshot = history["structured"]["entries"][0]["snapshot"].clone();
    replies.push(history);
    replies.push(agent.call("restart", json!({"snapshot": snapshot})));
    let again = sb.report("app", |r| r["pid"] != server["pid"]);
    sb.own_parent(&again);
    for reply in &replies {
        assert_eq!(reply["is_error"], false, "{reply}");
        let all = reply.to_string();
        for secret in [KEY, TOKEN, ENV] {
            assert!(!all.contains(secret), "{secret} left in {all}");
        }
    }
    let stopped = &replies[3]["structured"]["reports"][0]["result"];
    assert_eq!(stopped, "stopped", "the stop and the restart were told of");
}

/// `--max-stops 1`: the first plan carried out stops one; a second plan made before it is
/// refused with the cap's sentence, and a plan made after refuses its target with it.
#[test]
fn a_session_stops_no_more_than_its_cap() {
    let Some(py) = sdk_python("cap") else {
        return;
    };
    if fixtures_cannot_be_orphans("cap") {
        return;
    }
    let sb = Sandbox::new();
    let (first, first_id) = green_server(&sb, "first", &[]);
    let (second, second_id) = green_server(&sb, "second", &[]);
    let mut agent = Agent::start(&sb, &py, &["--max-stops", "1"]);
    let one = planned(
        &agent.call("plan_stop", json!({"ids": [&first_id]})),
        &first_id,
    );
    let two = planned(
        &agent.call("plan_stop", json!({"ids": [&second_id]})),
        &second_id,
    );
    let done = agent.call("carry_out", json!({"plan": one}));
    assert_eq!(
        done["structured"]["reports"][0]["result"], "stopped",
        "{done}"
    );
    assert_eq!(done["structured"]["stops_left"], 0, "{done}");
    wait_for("the first gone", || (!alive(pid(&first))).then_some(()));

    let cap = AgentError::Cap(1).to_string();
    let refused = agent.call("carry_out", json!({"plan": two}));
    assert_eq!(refused["structured"]["refused"], "cap", "{refused}");
    let asked = refused["asked"].as_array().unwrap();
    assert!(
        asked.is_empty(),
        "the person is not asked about a plan the cap refuses"
    );
    assert_eq!(text(&refused), cap);
    let reply = agent.call("plan_stop", json!({"ids": [&second_id]}));
    assert_eq!(refused_in_plan(&reply, &second_id)["next"], cap.as_str());
    assert!(alive(pid(&second)), "a stop beyond the cap");
}
