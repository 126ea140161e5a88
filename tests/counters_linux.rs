//! The idle clock's reads on Linux against real processes and sockets (docs/design.md §5a):
//! cumulative counters that rise with work (a reaped child's included), that belong to one
//! identity only, the two clocks, and the closed connections a served request leaves behind.
//! Run with `--nocapture` to see the figures each measures.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use pier_core::probe::{Cumulative, Ended, Identity, IdentityRead, LinuxProbe, Probe, ProbeError};

fn identity(probe: &LinuxProbe, pid: u32) -> Identity {
    match probe.identity(pid) {
        IdentityRead::Alive { identity, .. } => identity,
        other => panic!("pid {pid}: {other:?}"),
    }
}

fn counters(probe: &LinuxProbe, who: Identity) -> Result<Cumulative, ProbeError> {
    let mut read = probe.counters(&[who]);
    assert_eq!(read.len(), 1);
    let (asked, answer) = read.pop().unwrap();
    assert_eq!(asked, who);
    answer
}

/// A child run by this test: killed and reaped when dropped.
struct Owned(Child);

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The next line `out` prints, read with a deadline.
fn line(out: &mut BufReader<ChildStdout>) -> String {
    let mut text = String::new();
    out.read_line(&mut text).expect("the child prints");
    assert!(!text.is_empty(), "the child ended before it printed");
    text
}

#[test]
fn a_busy_process_s_cpu_time_rises() {
    let probe = LinuxProbe::new();
    let child = Owned(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let who = identity(&probe, child.0.id());
    let first = counters(&probe, who).unwrap();
    common::wait_for("100 ms of CPU", || {
        let now = counters(&probe, who).unwrap();
        (now.cpu_ns >= first.cpu_ns + 100_000_000).then_some(())
    });
}

/// A process that forks a child, lets it work for 300 ms of CPU and waits for it: after the
/// reap its cumulative CPU holds the child's time, which no live thread of its own does.
#[test]
fn a_reaped_child_s_cpu_time_counts_for_its_parent() {
    let probe = LinuxProbe::new();
    let script = "import os, sys, time\n\
        sys.stdin.readline()\n\
        pid = os.fork()\n\
        if pid == 0:\n\
        \x20   t = time.process_time()\n\
        \x20   while time.process_time() - t < 0.3: pass\n\
        \x20   os._exit(0)\n\
        os.waitpid(pid, 0)\n\
        print('reaped', flush=True)\n\
        sys.stdin.readline()\n";
    let mut child = Owned(
        Command::new(common::python())
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let who = identity(&probe, child.0.id());
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let before = counters(&probe, who).unwrap();
    let own_before = own_cpu_ticks(who.pid);
    writeln!(child.0.stdin.as_mut().unwrap(), "go").unwrap();
    assert_eq!(line(&mut out), "reaped\n");
    let after = counters(&probe, who).unwrap();
    let own = own_cpu_ticks(who.pid) - own_before;
    let grew = after.cpu_ns - before.cpu_ns;
    eprintln!("parent's cpu_ns grew by {grew} ns; its own threads by {own} ticks");
    assert!(grew >= 280_000_000, "the child's 300 ms: {grew} ns");
    assert!(own < 10, "the parent itself stayed idle ({own} ticks)");
}

/// utime + stime of `pid` alone (its children's left out), in ticks.
fn own_cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).unwrap();
    pier_core::probe::procfs::parse_stat(&stat)
        .unwrap()
        .1
        .cpu_ticks
}

#[test]
fn counters_are_gone_for_an_ended_process_and_for_another_start_time() {
    let probe = LinuxProbe::new();
    let mut child = Command::new("sleep").arg("600").spawn().unwrap();
    let who = identity(&probe, child.id());
    assert!(counters(&probe, who).is_ok());
    let reused = Identity {
        pid: who.pid,
        start_time: who.start_time + 1,
    };
    assert_eq!(counters(&probe, reused), Err(ProbeError::Gone(who.pid)));
    child.kill().unwrap();
    // Killed, not yet reaped: a zombie has ended.
    common::wait_for("the zombie", || (!common::alive(who.pid)).then_some(()));
    assert_eq!(counters(&probe, who), Err(ProbeError::Gone(who.pid)));
    child.wait().unwrap();
    assert_eq!(counters(&probe, who), Err(ProbeError::Gone(who.pid)));
}

#[test]
fn the_awake_clock_never_runs_ahead_of_the_boot_clock_and_both_advance() {
    let probe = LinuxProbe::new();
    let first = probe.times();
    assert!(first.awake <= first.since_boot, "{first:?}");
    let later = common::wait_for("both clocks to move 10 ms", || {
        let t = probe.times();
        (t.awake >= first.awake + Duration::from_millis(10)).then_some(t)
    });
    assert!(later.awake <= later.since_boot, "{later:?}");
    assert!(later.since_boot >= first.since_boot + Duration::from_millis(10));
}

/// A server started by this test, its port read from what it prints first.
struct Server {
    child: Owned,
    port: u16,
}

/// `python3 -m http.server` on a port of its choosing, serving a 1 KiB page.
fn python_server(dir: &std::path::Path) -> Option<Server> {
    std::fs::write(dir.join("index.html"), "x".repeat(1024)).unwrap();
    let mut child = Owned(
        Command::new(common::python())
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?,
    );
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
    let text = line(&mut out);
    let port = text
        .split(" port ")
        .nth(1)?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    Some(Server { child, port })
}

/// A tiny node http server, when node is installed.
fn node_server() -> Option<Server> {
    let script = "require('http').createServer((q, s) => s.end('x'.repeat(1024)))\
        .listen(0, '127.0.0.1', function () { console.log(this.address().port) })";
    let mut child = Owned(
        Command::new("node")
            .args(["-e", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?,
    );
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let port = line(&mut out).trim().parse().ok()?;
    Some(Server { child, port })
}

/// One HTTP/1.0 request, read to its end: the server closes first.
fn one_request(port: u16) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    answer.len()
}

/// The three counters' change from `a` to `b`.
fn delta(a: Cumulative, b: Cumulative) -> (u64, u64, u64) {
    (
        b.cpu_ns - a.cpu_ns,
        b.io_bytes - a.io_bytes,
        b.syscalls - a.syscalls,
    )
}

/// Counters over an idle second, then over one request, printed for the clock's bounds.
fn measure(probe: &LinuxProbe, name: &str, server: &Server) -> (u64, u64, u64) {
    let who = identity(probe, server.child.0.id());
    let start = counters(probe, who).unwrap();
    // A measured window of one second, not a wait for something to happen.
    std::thread::sleep(Duration::from_secs(1));
    let quiet = counters(probe, who).unwrap();
    let bytes = one_request(server.port);
    // The server's last write returned before the client saw the end of the answer.
    let served = counters(probe, who).unwrap();
    let idle = delta(start, quiet);
    let request = delta(quiet, served);
    eprintln!(
        "{name}: idle 1 s: cpu {} ns, io {} B, syscalls {}; one request ({bytes} B answered): \
         cpu {} ns, io {} B, syscalls {}",
        idle.0, idle.1, idle.2, request.0, request.1, request.2
    );
    request
}

/// The ended rows naming `port` at either end, polled until one is TIME-WAIT's or closing's.
fn ended_for(probe: &LinuxProbe, port: u16) -> Vec<Ended> {
    common::wait_for("a closed connection of the server's port", || {
        let rows: Vec<Ended> = probe
            .ended_connections()
            .expect("sock_diag answers on this machine")
            .into_iter()
            .filter(|e| e.local.port() == port || e.remote.port() == port)
            .collect();
        (!rows.is_empty()).then_some(rows)
    })
}

/// One request to a real server leaves a closed connection naming the server's port in the
/// kernel's table after both processes let go of it; the scan's live tables do not hold it.
#[test]
fn a_served_request_leaves_a_closed_connection_naming_the_server_s_port() {
    let probe = LinuxProbe::new();
    let dir = tempfile::tempdir().unwrap();
    let server = python_server(dir.path()).expect("python3 -m http.server starts");
    let server_end: SocketAddr = ([127, 0, 0, 1], server.port).into();
    let before: Vec<Ended> = probe
        .ended_connections()
        .unwrap()
        .into_iter()
        .filter(|e| e.local == server_end || e.remote == server_end)
        .collect();
    assert!(before.is_empty(), "nothing served yet: {before:?}");
    let request = measure(&probe, "python3 -m http.server", &server);
    let rows = ended_for(&probe, server.port);
    eprintln!("ended rows: {rows:?}");
    assert!(
        rows.iter().any(|e| e.local == server_end),
        "the server closed first: its end waits in TIME-WAIT, {rows:?}"
    );
    // Python sends with send/sendall and reads the request with recv_into: what
    // `rchar`/`wchar` count is its read of the page, not its sockets' traffic.
    assert!(request.1 >= 1024, "the page it read: {request:?}");
    let live = probe.sockets(&[]).unwrap();
    assert!(
        !live
            .sockets
            .iter()
            .any(|s| s.local == server_end && s.remote == rows[0].remote),
        "a closed connection is not in the scan's tables"
    );
}

/// The same figures for node, whose sockets are read and written with read/write (libuv):
/// `rchar`/`wchar` count its traffic.
#[test]
fn node_s_served_request_moves_its_io_counters() {
    let probe = LinuxProbe::new();
    let Some(server) = node_server() else {
        eprintln!("node_s_served_request_moves_its_io_counters: skipped, no node");
        return;
    };
    let request = measure(&probe, "node http", &server);
    assert!(request.1 >= 1024 && request.2 >= 2, "{request:?}");
    assert!(!ended_for(&probe, server.port).is_empty());
}

/// The figures the idle clock's bounds are chosen from: a real Vite (`npm run dev`, from the
/// real-tools cache) left idle for 30 s, then served one request; each process's counters.
/// `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test counters_linux -- --ignored
/// --nocapture`.
#[test]
#[ignore = "a 30 s measurement of a real Vite; needs PIER_REAL_TOOLS"]
fn idle_vite_figures() {
    let Some(cache) = std::env::var_os("PIER_REAL_TOOLS").map(std::path::PathBuf::from) else {
        eprintln!("idle_vite_figures: set PIER_REAL_TOOLS");
        return;
    };
    let probe = LinuxProbe::new();
    let port = common::free_port();
    let dir = vite_project(&cache, port);
    let npm = Owned(
        Command::new("npm")
            .args(["run", "dev"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let tree = Tree::of(&probe, npm.0.id(), port);
    // Startup's work out of the way: the first answer, then a quiet moment.
    one_request(port);
    // Figures, not synchronisation: five quiet seconds before the measured windows.
    std::thread::sleep(Duration::from_secs(5));
    // Intervals of 10 s (three, or `PIER_FIGURES_INTERVALS`), then one request: each process's change over each.
    let mut reads = vec![tree.read(&probe)];
    let intervals = std::env::var("PIER_FIGURES_INTERVALS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    for _ in 0..intervals {
        std::thread::sleep(Duration::from_secs(10));
        reads.push(tree.read(&probe));
    }
    let bytes = one_request(port);
    reads.push(tree.read(&probe));
    let ended = ended_for(&probe, port);
    eprintln!(
        "vite on port {port}; one request answered {bytes} B; ended rows {}",
        ended.len()
    );
    print_figures(&tree, &reads);
    tree.kill();
}

/// Each member's change over each interval, as a table.
fn print_figures(tree: &Tree, reads: &[Vec<Result<Cumulative, ProbeError>>]) {
    let intervals = reads.len() - 2;
    let idle: Vec<String> = (0..intervals)
        .map(|i| format!("idle {}-{} s", i * 10, i * 10 + 10))
        .collect();
    eprintln!("cpu µs / io B / syscalls per process:");
    eprintln!("| process | {} | one request |", idle.join(" | "));
    eprintln!("|{}", " --- |".repeat(intervals + 2));
    for (i, (name, who)) in tree.members.iter().enumerate() {
        let cells: Vec<String> = reads
            .windows(2)
            .map(|w| match (&w[0][i], &w[1][i]) {
                (Ok(a), Ok(b)) => {
                    let d = delta(*a, *b);
                    format!("{} / {} / {}", d.0 / 1000, d.1, d.2)
                }
                _ => "unread".to_owned(),
            })
            .collect();
        eprintln!("| {name} {} | {} |", who.pid, cells.join(" | "));
    }
}

/// The real-tools Vite project in a temporary folder, to serve on `port`, its `node_modules`
/// a hard-link copy of the cache's.
fn vite_project(cache: &std::path::Path, port: u16) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_tools/projects/vite");
    for file in ["index.html", "main.js", "package.json"] {
        let text = std::fs::read_to_string(fixture.join(file)).unwrap();
        std::fs::write(
            dir.path().join(file),
            text.replace("{port}", &port.to_string()),
        )
        .unwrap();
    }
    let copied = Command::new("cp")
        .arg("-al")
        .arg(cache.join("npm/vite/node_modules"))
        .arg(dir.path().join("node_modules"))
        .status()
        .unwrap();
    assert!(copied.success());
    dir
}

/// A process started by a test and its descendants, once its port answers.
struct Tree {
    members: Vec<(String, Identity)>,
}

impl Tree {
    fn of(probe: &LinuxProbe, root: u32, port: u16) -> Self {
        common::wait_for("the server's port", || {
            TcpStream::connect(("127.0.0.1", port)).ok()
        });
        let table = probe.processes().unwrap().processes;
        let mut members: Vec<(String, Identity)> = Vec::new();
        let mut pids = vec![root];
        while let Some(pid) = pids.pop() {
            if let Some(p) = table.iter().find(|p| p.identity.pid == pid) {
                members.push((p.comm.clone(), p.identity));
            }
            pids.extend(
                table
                    .iter()
                    .filter(|p| p.ppid == pid)
                    .map(|p| p.identity.pid),
            );
        }
        Tree { members }
    }

    fn read(&self, probe: &LinuxProbe) -> Vec<Result<Cumulative, ProbeError>> {
        let ids: Vec<Identity> = self.members.iter().map(|(_, id)| *id).collect();
        probe.counters(&ids).into_iter().map(|(_, r)| r).collect()
    }

    /// Each member killed by identity, leaves first (the root is also its `Owned`'s).
    fn kill(self) {
        for (_, who) in self.members.into_iter().rev() {
            common::kill_by_identity(common::Started {
                pid: who.pid,
                start_time: who.start_time,
            });
        }
    }
}
