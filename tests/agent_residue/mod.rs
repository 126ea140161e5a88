//! The real parents of tests/agent_residue_linux.rs — an agent (the official MCP SDK's
//! `stdio_client`, tests/mcp/client.py), an editor speaking LSP (editor.py), a browser driver
//! (playwright-core, *_driver.js) — each started by the test, in a project of the test's
//! folder, and killed by identity when the case says so.
#![allow(dead_code)] // each case uses its own part

pub mod judge;

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{kill_by_identity, Sandbox, Started};
use crate::real_tools::{poll, truth};

/// `$PIER_REAL_TOOLS` with `need` (paths inside it) installed, or `None` with a line saying
/// how to run the case.
pub fn tools(case: &str, need: &[&str]) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PIER_REAL_TOOLS") else {
        eprintln!(
            "{case}: skipped, it runs real MCP servers, language servers and Chromium: \
             scripts/real-tools.sh, then PIER_REAL_TOOLS=~/.cache/pier-real-tools \
             cargo test --test agent_residue_linux"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    for n in need {
        assert!(
            dir.join(n).exists(),
            "{case}: {n} is not installed in {}: run scripts/real-tools.sh",
            dir.display()
        );
    }
    if crate::common::fixtures_cannot_be_orphans(case) {
        return None;
    }
    Some(dir)
}

/// A project `name` in the sandbox, with the npm tool's `node_modules` from the cache as a
/// hard-link copy (a plain copy across file systems), and `files` of tests/agent_residue/.
pub fn project(
    sb: &Sandbox,
    name: &str,
    cache: &Path,
    npm: Option<&str>,
    files: &[&str],
) -> PathBuf {
    let dir = sb.path().join(name);
    fs::create_dir_all(&dir).unwrap();
    if let Some(tool) = npm {
        let from = cache.join("npm").join(tool).join("node_modules");
        let copied = ["-al", "-a"].iter().any(|how| {
            let _ = fs::remove_dir_all(dir.join("node_modules"));
            Command::new("cp")
                .args([
                    how.as_ref(),
                    from.as_os_str(),
                    dir.join("node_modules").as_os_str(),
                ])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(copied, "{name}: could not copy {}", from.display());
    }
    for f in files {
        fs::copy(here().join(f), dir.join(f)).unwrap();
    }
    dir
}

/// tests/agent_residue/.
pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agent_residue")
}

/// A parent the test started (agent, editor or driver): its stdin held open, its stdout read a
/// line at a time. Dropping it kills it by identity and reaps it.
pub struct Parent {
    child: Child,
    pub who: Started,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

/// How long a parent may take to print its next line (npx, a first analysis, a browser start).
const LINE_DEADLINE: Duration = Duration::from_secs(90);

/// Its lines, read on a thread of their own, so a read has a deadline.
fn lines_of(out: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    rx
}

impl Parent {
    pub fn start(argv: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Parent {
        let mut child = Command::new(argv[0])
            .args(&argv[1..])
            .current_dir(cwd)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{argv:?} starts: {e}"));
        let who = truth::identity(child.id()).expect("the parent runs");
        let stdin = child.stdin.take();
        let lines = lines_of(child.stdout.take().unwrap());
        Parent {
            child,
            who,
            stdin,
            lines,
        }
    }

    /// The next JSON line it prints, within [`LINE_DEADLINE`].
    pub fn line(&mut self) -> Value {
        let l = self.lines.recv_timeout(LINE_DEADLINE).unwrap_or_else(|e| {
            panic!(
                "the parent {} printed no line ({e}): exited {:?}",
                self.who.pid,
                self.child.try_wait()
            )
        });
        serde_json::from_str(&l).unwrap_or_else(|_| {
            panic!(
                "the parent {} printed {l:?} (exited: {:?})",
                self.who.pid,
                self.child.try_wait()
            )
        })
    }

    pub fn say(&mut self, line: &str) {
        let w = self.stdin.as_mut().unwrap();
        writeln!(w, "{line}")
            .and_then(|()| w.flush())
            .expect("the parent reads");
    }

    /// Everything it started, itself excluded, root first.
    pub fn descendants(&self) -> Vec<Started> {
        truth::tree(self.who).into_iter().skip(1).collect()
    }

    /// SIGKILL by identity, as a crash or `kill -9` ends an agent; waits until it is reaped.
    pub fn kill(&mut self) {
        kill_by_identity(self.who);
        let _ = self.child.wait();
    }
}

impl Drop for Parent {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An agent: the official MCP SDK's stdio client (venv `mcp`) starting `server` in `cwd`, as
/// an agent does, then listing its tools. Answers the agent and the tool names.
pub fn agent(cache: &Path, cwd: &Path, server: &[&str]) -> (Parent, Vec<String>) {
    let python = cache.join("venv/mcp/bin/python");
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut argv = vec![
        python.to_str().unwrap(),
        client.to_str().unwrap(),
        "{}",
        "--",
    ];
    argv.extend(server);
    let mut a = Parent::start(&argv, cwd, &[]);
    a.say(r#"{"list": true}"#);
    let protocol = a.line();
    assert!(protocol["protocol"].is_string(), "no handshake: {protocol}");
    let tools = a.line()["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (a, tools)
}

/// An editor: editor.py starting `server` in `cwd` over stdio and opening `file` in it.
/// Answers the editor and the server's pid.
pub fn editor(
    cwd: &Path,
    file: &str,
    language: &str,
    pid_known: bool,
    server: &[&str],
) -> (Parent, u32) {
    let script = here().join("editor.py");
    let python = crate::common::python();
    let mut argv = vec![python.as_str(), script.to_str().unwrap()];
    if !pid_known {
        argv.push("--no-process-id");
    }
    argv.extend([".", file, language, "--"]);
    argv.extend(server);
    let mut e = Parent::start(&argv, cwd, &[]);
    let ready = e.line();
    let pid = ready["server"]
        .as_u64()
        .expect("the editor names its server") as u32;
    (e, pid)
}

/// What a second holder of the tree's stdio does (a wrapper, a leaked descriptor): opens the
/// other end of every pipe a member of `tree` holds — the write end of what it reads, the read
/// end of what it writes. While the files are open, none of them reads an end of file or
/// writes into a pipe without a reader.
pub fn hold_pipes(tree: &[Started]) -> Vec<File> {
    let mut seen = Vec::new();
    let mut held = Vec::new();
    for p in tree {
        let fds = fs::read_dir(format!("/proc/{}/fd", p.pid))
            .into_iter()
            .flatten()
            .flatten();
        for fd in fds {
            let Ok(link) = fs::read_link(fd.path()) else {
                continue;
            };
            let link = link.to_string_lossy().into_owned();
            let info = format!(
                "/proc/{}/fdinfo/{}",
                p.pid,
                fd.file_name().to_string_lossy()
            );
            let Some(reads) = access(&info) else { continue };
            if !link.starts_with("pipe:") || seen.contains(&(link.clone(), reads)) {
                continue;
            }
            let other = OpenOptions::new().write(reads).read(!reads).open(fd.path());
            if let Ok(f) = other {
                seen.push((link, reads));
                held.push(f);
            }
        }
    }
    assert!(!held.is_empty(), "no pipe held by the tree {tree:?}");
    held
}

/// Whether the descriptor of `fdinfo` was opened read-only (`Some(true)`) or write-only.
fn access(fdinfo: &str) -> Option<bool> {
    let text = fs::read_to_string(fdinfo).unwrap_or_default();
    let flags = text
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())?;
    match flags & 3 {
        0 => Some(true),
        1 => Some(false),
        _ => None,
    }
}

/// What `tree` does once its parent died, watched for `secs`: every member gone (`false`), or
/// its root re-parented to PID 1 and running through the whole watch (`true`). The watch is
/// the claim itself ("it stays"), not a wait for something else.
pub fn left_behind(tree: &[Started], secs: u64) -> bool {
    let root = tree[0];
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if !tree.iter().any(|p| truth::runs(*p)) {
            return false;
        }
        if Instant::now() >= end {
            let orphaned = crate::common::ppid_of(root.pid) == Some(1);
            assert!(
                orphaned && truth::runs(root),
                "the root {root:?} runs on, not orphaned"
            );
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every member of `tree` gone within `secs`.
pub fn gone(tree: &[Started], secs: u64) -> Result<(), String> {
    poll(secs, || match tree.iter().find(|p| truth::runs(**p)) {
        Some(p) => Err(format!("{} ({}) still runs", p.pid, truth::command(p.pid))),
        None => Ok(()),
    })
}
