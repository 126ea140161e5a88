//! What the Python cases need beyond the harness: a running Jupyter kernel (started through the
//! server's REST API, ready when its ZMQ ports listen — with no client a kernel stays
//! "starting", so its state proves nothing), and a watch on the process tree during
//! `pier stop`, so the processes born during the stop (a uvicorn supervisor respawning the
//! worker the stop signalled) are known from `/proc`, not from Pier's report.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{self, Started};
use crate::real_tools::{poll, truth, verdict, Ctx};

/// The token the Jupyter case passes (`--IdentityProvider.token=`): a test value, not a secret.
pub const JUPYTER_TOKEN: &str = "pier-real-tools";

/// The Jupyter case's `prepare`: `POST /api/kernels` with the token, then wait until every port
/// of the kernel's connection file (in `JUPYTER_RUNTIME_DIR`, `{project}-runtime`) listens,
/// held by a process of the tree.
pub fn start_kernel(ctx: &Ctx) -> Result<String, String> {
    let server: SocketAddr = ([127, 0, 0, 1], ctx.ports[0]).into();
    // The server answers its API once it is up; the found step waits for the rest.
    let kernel = poll(90, || {
        let (status, body) = http(server, "POST", "/api/kernels", r#"{"name":"python3"}"#)?;
        if !status.contains(" 201 ") {
            return Err(format!("POST /api/kernels answered {status:?}: {body}"));
        }
        let v: Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        v["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or(format!("no kernel id in {body}"))
    })?;
    let file = ctx
        .project
        .with_file_name(format!("{}-runtime", file_name(&ctx.project)))
        .join(format!("kernel-{kernel}.json"));
    let ports = poll(60, || {
        let v: Value = serde_json::from_slice(
            &fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?,
        )
        .map_err(|e| format!("{}: {e}", file.display()))?;
        let ports: Vec<u16> = [
            "shell_port",
            "iopub_port",
            "stdin_port",
            "control_port",
            "hb_port",
        ]
        .iter()
        .filter_map(|k| v[k].as_u64().map(|p| p as u16))
        .collect();
        if ports.len() == 5 {
            Ok(ports)
        } else {
            Err(format!(
                "{} names {} ports, not 5",
                file.display(),
                ports.len()
            ))
        }
    })?;
    poll(60, || {
        let held = tree_listen_ports(ctx.root);
        let missing: Vec<u16> = ports
            .iter()
            .copied()
            .filter(|p| !held.contains(p))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "kernel {kernel}: ports {missing:?} do not listen yet"
            ))
        }
    })?;
    Ok(format!("kernel {kernel} listens on {ports:?}"))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// One HTTP/1.1 request with the Jupyter token; the status line and the body.
fn http(to: SocketAddr, method: &str, path: &str, body: &str) -> Result<(String, String), String> {
    let mut s =
        TcpStream::connect_timeout(&to, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost:{}\r\nAuthorization: token {JUPYTER_TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        to.port(),
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).map_err(|e| e.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default().to_owned();
    // A chunked body: its one chunk (the API answers small JSON documents).
    let body = match body.split_once("\r\n") {
        Some((size, rest))
            if head
                .to_ascii_lowercase()
                .contains("transfer-encoding: chunked")
                && usize::from_str_radix(size.trim(), 16).is_ok() =>
        {
            rest.split("\r\n").next().unwrap_or_default().to_owned()
        }
        _ => body.to_owned(),
    };
    Ok((status, body))
}

/// The Jupyter case's roles check: by `/proc` and the kernel's own connection file,
/// the kernel's listeners are a helper's — every tree process holding one is a kernel (a tree
/// process holding a port its connection file names) or a kernel's descendant — and the rest,
/// the server's port among them, are the server's. Pier must show exactly that: each kernel
/// listener with helper `"notebook kernel"`, each other one with none.
pub fn kernel_ports_are_the_helpers(ctx: &Ctx) -> Result<String, String> {
    poll(30, || {
        let Roles {
            server,
            kernel,
            kernels,
        } = roles_by_truth(ctx)?;
        let scan = ctx.scan()?;
        if roles_by_truth(ctx)?.server != server {
            return Err("the tree's listeners changed during the scan".into());
        }
        let (_, r) = common::resource_with(&scan, ctx.root.pid)
            .ok_or("no resource holds the root".to_owned())?;
        let mut pier_server = BTreeSet::new();
        let mut pier_kernel = BTreeSet::new();
        for p in r["ports"].as_array().into_iter().flatten() {
            let ip = p["address"].as_str().and_then(truth::parse_ip);
            let port = p["port"].as_u64().map(|n| n as u16);
            let (Some(ip), Some(port)) = (ip, port) else {
                return Err(format!("a port Pier shows cannot be read: {p}"));
            };
            let addr = SocketAddr::new(ip, port);
            match p["helper"].as_str() {
                None => pier_server.insert(addr),
                Some("notebook kernel") => pier_kernel.insert(addr),
                Some(other) => return Err(format!("{addr} is called the helper {other:?}")),
            };
        }
        let mut wrong = Vec::new();
        if pier_server != server {
            wrong.push(format!(
                "the server's ports are {server:?}, Pier's server ports {pier_server:?}"
            ));
        }
        if pier_kernel != kernel {
            wrong.push(format!(
                "the kernel's ports are {kernel:?}, Pier's notebook kernel ports {pier_kernel:?}"
            ));
        }
        let who: Vec<String> = kernels
            .iter()
            .map(|k| format!("pid {}: {}", k.pid, truth::command(k.pid)))
            .collect();
        verdict(
            format!(
                "server {server:?}, notebook kernel {kernel:?} ({})",
                who.join("; ")
            ),
            &wrong,
        )
    })
}

/// Whose each listener of a Jupyter tree is, by the truth.
struct Roles {
    server: BTreeSet<SocketAddr>,
    kernel: BTreeSet<SocketAddr>,
    /// The kernel processes: the tree's holders of a port a connection file names.
    kernels: Vec<Started>,
}

/// [`Roles`] from `/proc` and the connection files in the case's runtime folder.
fn roles_by_truth(ctx: &Ctx) -> Result<Roles, String> {
    let runtime = ctx
        .project
        .with_file_name(format!("{}-runtime", file_name(&ctx.project)));
    let mut named: BTreeSet<u16> = BTreeSet::new();
    for entry in fs::read_dir(&runtime).map_err(|e| format!("{}: {e}", runtime.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let is_kernel = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("kernel-") && n.ends_with(".json"));
        if !is_kernel {
            continue;
        }
        let v: Value = serde_json::from_slice(&fs::read(&path).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        for k in [
            "shell_port",
            "iopub_port",
            "stdin_port",
            "control_port",
            "hb_port",
        ] {
            named.extend(v[k].as_u64().map(|p| p as u16));
        }
    }
    let tree = truth::tree(ctx.root);
    let kernels: Vec<Started> = tree
        .iter()
        .copied()
        .filter(|m| {
            truth::listeners(&[*m])
                .iter()
                .any(|l| named.contains(&l.port()))
        })
        .collect();
    if kernels.is_empty() || kernels.contains(&ctx.root) {
        return Err(format!(
            "the kernel's ports {named:?} are held by {kernels:?}, not by a child of the root"
        ));
    }
    let kernel_side: Vec<Started> = tree
        .iter()
        .copied()
        .filter(|m| kernels.iter().any(|k| truth::tree(*k).contains(m)))
        .collect();
    let held: Vec<(Started, HashSet<u64>)> = tree
        .iter()
        .map(|m| (*m, truth::socket_inodes(&[*m])))
        .collect();
    let (mut server, mut kernel) = (BTreeSet::new(), BTreeSet::new());
    for s in truth::sockets().into_iter().filter(|s| s.listen) {
        let holders: Vec<Started> = held
            .iter()
            .filter(|(_, inodes)| inodes.contains(&s.inode))
            .map(|(m, _)| *m)
            .collect();
        if holders.is_empty() {
            continue;
        }
        if holders.iter().all(|h| kernel_side.contains(h)) {
            kernel.insert(s.local);
        } else {
            server.insert(s.local);
        }
    }
    let missing: Vec<u16> = named
        .iter()
        .copied()
        .filter(|p| !kernel.iter().any(|l| l.port() == *p))
        .collect();
    if !missing.is_empty() || !server.iter().any(|l| l.port() == ctx.ports[0]) {
        return Err(format!(
            "by the truth, the server listens on {server:?} and the kernel on {kernel:?}; \
             its connection file names {named:?}"
        ));
    }
    Ok(Roles {
        server,
        kernel,
        kernels,
    })
}

/// The ports the tree of `root` listens on.
fn tree_listen_ports(root: Started) -> Vec<u16> {
    truth::listeners(&truth::tree(root))
        .iter()
        .map(|a| a.port())
        .collect()
}

/// A process born inside the watched tree, as `/proc` showed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Birth {
    pub who: Started,
    /// Its parent when first seen.
    pub parent: u32,
}

/// Watches the tree of a set of processes from `/proc` every 5 ms, in a thread: every process
/// that appears in it and was not there at the start, followed by identity once seen (a
/// re-parented one stays in). The answer: the births, oldest first.
pub struct Watch {
    stop: Arc<AtomicBool>,
    births: Arc<Mutex<Vec<Birth>>>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Starts watching the descendants of `members` (the tree as the test saw it).
    pub fn start(members: &[Started]) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let births = Arc::new(Mutex::new(Vec::new()));
        let known: Vec<Started> = members.to_vec();
        let (s, b) = (stop.clone(), births.clone());
        let thread = std::thread::spawn(move || {
            let mut inside: Vec<Started> = known.clone();
            while !s.load(Ordering::Relaxed) {
                let all = truth::table();
                let mut grew = true;
                while grew {
                    grew = false;
                    for &(p, pp) in &all {
                        if inside.contains(&p) || !inside.iter().any(|i| i.pid == pp) {
                            continue;
                        }
                        inside.push(p);
                        b.lock().unwrap().push(Birth { who: p, parent: pp });
                        grew = true;
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        Watch {
            stop,
            births,
            thread: Some(thread),
        }
    }

    /// Stops watching; the births seen, oldest first.
    pub fn finish(&mut self) -> Vec<Birth> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.births.lock().unwrap().clone()
    }

    /// The births seen so far, while the watch goes on.
    pub fn so_far(&self) -> Vec<Birth> {
        self.births.lock().unwrap().clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Waits up to `secs` for every process of `list` to be gone; the ones still running.
pub fn wait_gone(list: &[Started], secs: u64) -> Vec<Started> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let left: Vec<Started> = list.iter().copied().filter(|p| truth::runs(*p)).collect();
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The supervisor's respawn, seen through a stop: `uvicorn --workers 2` started orphaned in a
/// fresh project, stopped once green with `/proc` watched throughout, and the report held to
/// what the watch saw. The stop signals the workers first (leaf to root); the supervisor
/// respawns them within half a second, while the resource tracker, which ignores SIGTERM,
/// holds the supervisor's own signal back for one grace. So at least one process is born
/// during the stop; the report must name every such newcomer with its parent and its true
/// fate, and the result may be `stopped` only when nothing of the tree runs.
pub fn uvicorn_respawn(cache: &Path) -> Result<String, String> {
    let _lock = lock(cache);
    let sandbox = common::Sandbox::new();
    let project = sandbox.path().join("uvicorn_workers");
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_tools/projects/uvicorn_workers"),
        &project,
    );
    let port = common::free_port();
    let path = format!(
        "{}:{}",
        cache.join("venv/python/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pidfile = sandbox.path().join("root.pid");
    let status = std::process::Command::new("setsid")
        .args(["-f", "sh", "-c"])
        .arg(format!(
            "echo $$ > \"$0\"; exec uvicorn main:app --workers 2 --port {port}"
        ))
        .arg(&pidfile)
        .current_dir(&project)
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("setsid: {e}"))?;
    if !status.success() {
        return Err("setsid -f sh -c uvicorn failed".into());
    }
    let root = poll(15, || {
        let pid: u32 = fs::read_to_string(&pidfile)
            .map_err(|e| e.to_string())?
            .trim()
            .parse()
            .map_err(|e| format!("{e}"))?;
        truth::identity(pid).ok_or("the root is gone".to_owned())
    })?;
    sandbox.own(root);
    let _cleanup = KillTree(root);
    // Green, with the whole tree (supervisor, tracker, two workers) as Pier's members.
    let (id, members) = poll(90, || {
        let tree = truth::tree(root);
        if tree.len() < 4 || !tree_listen_ports(root).contains(&port) {
            return Err(format!(
                "the tree is {} processes, not listening yet",
                tree.len()
            ));
        }
        let scan = sandbox.scan(&[]);
        let (_, r) = common::resource_with(&scan, root.pid).ok_or("no resource holds the root")?;
        if r["level"] != "green" {
            return Err(format!("level {}: {}", r["level"], r["evidence"]));
        }
        Ok((r["id"].as_str().unwrap_or_default().to_owned(), tree))
    })?;
    for p in &members {
        sandbox.own(*p);
    }
    let mut watch = Watch::start(&members);
    let out = sandbox.pier_exact(&["stop", &id, "--json", "--grace", "2"]);
    let births = watch.so_far();
    let running: Vec<(Birth, bool)> = births.iter().map(|b| (*b, truth::runs(b.who))).collect();
    let watch_births = watch.finish();
    for b in &watch_births {
        sandbox.own(b.who);
    }
    let doc: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "pier stop printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let res = &doc["results"][0];
    let result = res["result"].as_str().unwrap_or_default().to_owned();
    let seen: Vec<String> = running
        .iter()
        .map(|(b, alive)| {
            let fate = if *alive { "still_running" } else { "exited" };
            format!("pid {} (parent {}) {fate}", b.who.pid, b.parent)
        })
        .collect();
    let mut wrong = Vec::new();
    if births.is_empty() {
        wrong.push(format!(
            "no process was born during the stop (seen later: {}): uvicorn did not respawn a \
             worker, so this case tests nothing",
            watch_births.len()
        ));
    }
    let ident = |v: &Value| {
        Some(Started {
            pid: v["pid"].as_u64()? as u32,
            start_time: v["start_time"].as_u64()?,
        })
    };
    match res.get("newcomers").and_then(Value::as_array) {
        None => wrong.push(format!(
            "the report has no newcomers, but /proc saw {} born during the stop: {}",
            births.len(),
            seen.join(", ")
        )),
        Some(listed) => {
            for (b, alive) in &running {
                let fate = if *alive { "still_running" } else { "exited" };
                match listed.iter().find(|n| ident(n) == Some(b.who)) {
                    None => wrong.push(format!(
                        "newcomer pid {} (parent {}, {fate}) is not in the report",
                        b.who.pid, b.parent
                    )),
                    Some(n) if parent_pid(&n["parent"]) != Some(b.parent) => wrong.push(format!(
                        "newcomer pid {}: parent {} reported as {}",
                        b.who.pid, b.parent, n["parent"]
                    )),
                    Some(n) if n["fate"] != fate => wrong.push(format!(
                        "newcomer pid {}: fate {} reported, but it is {fate}",
                        b.who.pid, n["fate"]
                    )),
                    Some(_) => {}
                }
            }
            for n in listed {
                if !births.iter().any(|b| Some(b.who) == ident(n)) {
                    wrong.push(format!("the report names a newcomer /proc never saw: {n}"));
                }
            }
        }
    }
    let left = wait_gone(
        &[members.clone(), births.iter().map(|b| b.who).collect()].concat(),
        10,
    );
    if result == "stopped" && running.iter().any(|(_, a)| *a) {
        wrong.push("result stopped while a newcomer runs".into());
    }
    if !left.is_empty() {
        wrong.push(format!("still running 10 s after the stop: {left:?}"));
    }
    let summary = format!(
        "result {result} ({}); born during the stop: {}",
        res["reason"],
        seen.join(", ")
    );
    verdict(summary, &wrong)
}

/// A newcomer's parent as the report gives it: a pid, or an identity with one.
fn parent_pid(v: &Value) -> Option<u32> {
    v.as_u64().or_else(|| v["pid"].as_u64()).map(|p| p as u32)
}

/// The harness's lock: one case at a time on this machine.
fn lock(cache: &Path) -> fs::File {
    let file = fs::File::create(cache.join(".run.lock")).expect("the cache is writable");
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    file
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Kills the tree of the root (read at drop time) by identity.
struct KillTree(Started);

impl Drop for KillTree {
    fn drop(&mut self) {
        for p in truth::tree(self.0) {
            common::kill_by_identity(p);
        }
    }
}
