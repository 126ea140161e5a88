//! What an agent started itself, against real process trees: the test plays the MCP client (a
//! python3 process that starts what it is told, as an agent does), and judges what it started
//! through launchers, through a person's interactive shell in a pty, before the session, and
//! outside it.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use common::{kill_by_identity, ppid_of, python, start_time_of, wait_for, Started};
use pier_core::agent::own::{client_of, judge, NoClient, NotOwn};
use pier_core::probe::{system_probe, Identity, ProcessList};

/// The "agent": starts each argv it reads (one JSON list a line), with no stdin or stdout of
/// its own, and answers the child's pid.
const CLIENT: &str = r#"
import json, subprocess, sys
for line in sys.stdin:
    p = subprocess.Popen(json.loads(line), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(p.pid, flush=True)
"#;

/// A person's terminal: an interactive bash on a pty, into which the line in argv[1] is typed.
const PTY: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
os.write(fd, (sys.argv[1] + "\n").encode())
while True:
    try:
        if not os.read(fd, 4096):
            break
    except OSError:
        break
"#;

/// The test's client, and every process the test started, killed by identity when it ends.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    started: Vec<Started>,
}

impl Agent {
    fn new() -> Self {
        let mut child = Command::new(python())
            .args(["-c", CLIENT])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut agent = Agent {
            started: Vec::new(),
            child,
            stdin,
            stdout,
        };
        let me = agent.identity();
        agent.own(me);
        agent
    }

    fn identity(&self) -> Identity {
        let pid = self.child.id();
        Identity {
            pid,
            start_time: start_time_of(pid).expect("the client runs"),
        }
    }

    /// Owns the person's bash too, the parent of what was typed into it.
    fn own_with_parent(&mut self, id: Identity) {
        let bash = ppid_of(id.pid).expect("its parent");
        self.own(Identity {
            pid: bash,
            start_time: start_time_of(bash).expect("its parent runs"),
        });
        self.own(id);
    }

    fn own(&mut self, id: Identity) {
        self.started.push(Started {
            pid: id.pid,
            start_time: id.start_time,
        });
    }

    /// Has the client start `argv`; its pid.
    fn start(&mut self, argv: &[&str]) -> u32 {
        writeln!(self.stdin, "{}", serde_json::to_string(argv).unwrap()).unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let pid: u32 = line.trim().parse().expect("a pid");
        let start_time = start_time_of(pid).expect("it runs");
        self.own(Identity { pid, start_time });
        pid
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        for p in self.started.iter().rev() {
            kill_by_identity(*p);
        }
        let _ = self.child.wait();
    }
}

/// Clock ticks since boot, the unit of a start time.
fn uptime_ticks() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").expect("/proc/uptime");
    let seconds: f64 = uptime.split(' ').next().unwrap().parse().unwrap();
    (seconds * rustix::param::clock_ticks_per_second() as f64) as u64
}

fn table() -> ProcessList {
    system_probe().processes().expect("the process table reads")
}

/// The server whose `--directory` is `dir`, once it runs (after any `exec`).
fn server_in(dir: &Path) -> Identity {
    let dir = dir.to_str().unwrap().as_bytes();
    wait_for("the server to run", || {
        table()
            .processes
            .into_iter()
            .find(|p| p.argv.iter().any(|a| a == dir) && p.argv.len() > 3)
            .map(|p| p.identity)
    })
}

/// `python3 -m http.server 0 --bind 127.0.0.1 --directory DIR`, as a shell line.
fn server_line(dir: &Path) -> String {
    format!(
        "{} -m http.server 0 --bind 127.0.0.1 --directory {}",
        python(),
        dir.display()
    )
}

fn folder(root: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    let dir = root.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn what_the_agent_started_is_its_own_only_through_launchers_after_its_session() {
    let tmp = tempfile::tempdir().unwrap();
    let mut agent = Agent::new();
    let client = agent.identity();

    // (iii) Started before the session: the session begins at its start time.
    let before = folder(&tmp, "before");
    agent.start(&["sh", "-c", &format!("exec {}", server_line(&before))]);
    let early = server_in(&before);
    agent.own(early);
    let since = early.start_time;
    // Start times count clock ticks, and two processes started within one tick share one:
    // what the agent starts next must start after the session's tick.
    wait_for("the clock to pass the session's tick", || {
        (uptime_ticks() > since + 1).then_some(())
    });

    // (i) Through `sh -c 'exec …'`, and through a shell that stays (`sh -c '…; true'`).
    let exec = folder(&tmp, "exec");
    agent.start(&["sh", "-c", &format!("exec {}", server_line(&exec))]);
    let by_exec = server_in(&exec);
    agent.own(by_exec);
    let chained = folder(&tmp, "chain");
    agent.start(&["sh", "-c", &format!("{}; true", server_line(&chained))]);
    let by_chain = server_in(&chained);
    agent.own(by_chain);

    // (ii) Typed into a person's interactive bash on a pty, under the same client.
    let typed = folder(&tmp, "typed");
    agent.start(&[&python(), "-c", PTY, &format!("{} &", server_line(&typed))]);
    let by_person = server_in(&typed);
    agent.own_with_parent(by_person);

    // (iv) Not under the client: the test's own child.
    let outside = folder(&tmp, "outside");
    let mut stray = Command::new("sh")
        .args(["-c", &format!("exec {}", server_line(&outside))])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let not_under = server_in(&outside);
    agent.own(not_under);

    let list = table();
    for root in [by_exec, by_chain, by_person, not_under] {
        assert!(
            root.start_time > since,
            "started after the session: {root:?}"
        );
    }
    assert_eq!(judge(&list, by_exec, client, since), Ok(()));
    assert_eq!(judge(&list, by_chain, client, since), Ok(()));
    match judge(&list, by_person, client, since) {
        Err(NotOwn::ThroughPerson(who)) => assert!(who.contains("interactive shell"), "{who}"),
        other => panic!("typed into a person's bash: {other:?}"),
    }
    assert_eq!(judge(&list, early, client, since), Err(NotOwn::Before));
    assert_eq!(
        judge(&list, not_under, client, since),
        Err(NotOwn::NotDescended)
    );
    drop(agent);
    let _ = stray.wait();
}

#[test]
fn the_client_is_found_above_launchers_and_refused_under_a_persons_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let mut agent = Agent::new();
    let client = agent.identity();

    // A stand-in for `pier mcp`, started as clients do: `sh -c 'env … pier mcp'`.
    let marker = folder(&tmp, "mcp");
    agent.start(&[
        "sh",
        "-c",
        &format!("env RUST_LOG=info {} ; true", server_line(&marker)),
    ]);
    let server = server_in(&marker);
    agent.own(server);
    assert_eq!(client_of(&table(), server.pid), Ok(client));

    let typed = folder(&tmp, "typed");
    agent.start(&[&python(), "-c", PTY, &format!("{} &", server_line(&typed))]);
    let by_person = server_in(&typed);
    agent.own_with_parent(by_person);
    match client_of(&table(), by_person.pid) {
        Err(NoClient::Person(who)) => assert!(who.contains("interactive shell"), "{who}"),
        other => panic!("started from a person's bash: {other:?}"),
    }
}
