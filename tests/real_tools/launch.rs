//! The temporary project (fixture files with their placeholders filled, the tool from the
//! cache), the launch the way a developer does it (orphaned, or typed into a live tmux shell),
//! and the clean-up of everything the case started, by identity.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{truth, Case, Launch};
use crate::common::{self, Started};

/// `{port}`, `{port2}`, `{port3}` and `{project}` in `text`, filled.
pub fn fill(text: &str, ports: &[u16; 3], project: &Path) -> String {
    text.replace("{port}", &ports[0].to_string())
        .replace("{port2}", &ports[1].to_string())
        .replace("{port3}", &ports[2].to_string())
        .replace("{project}", &project.to_string_lossy())
}

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/real_tools/projects")
        .join(name)
}

/// Copies the case's fixture files into `project`, placeholders filled.
pub fn copy_fixture(from: &Path, to: &Path, ports: &[u16; 3], project: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_fixture(&entry.path(), &dest, ports, project);
        } else {
            let text = fs::read_to_string(entry.path()).unwrap();
            fs::write(&dest, fill(&text, ports, project)).unwrap();
        }
    }
}

/// The project folder of `case` inside `sandbox`: its fixture files, and the npm tool's
/// `node_modules` from the cache as a hard-link copy, or a plain copy across file systems (the
/// tools write caches into it, which must not land in the shared cache, and a symlink would
/// make Node resolve every module outside the project).
pub fn project(case: &Case, cache: &Path, sandbox: &Path, ports: &[u16; 3]) -> PathBuf {
    let project = sandbox.join(case.project);
    copy_fixture(&fixture_dir(case.project), &project, ports, &project);
    if let Some(tool) = case.npm {
        let from = cache.join("npm").join(tool).join("node_modules");
        let to = project.join("node_modules");
        let copied = ["-al", "-a"].iter().any(|how| {
            let _ = fs::remove_dir_all(&to);
            Command::new("cp")
                .arg(how)
                .arg(&from)
                .arg(&to)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        assert!(copied, "{}: could not copy {}", case.name, from.display());
    }
    if let Some(group) = case.project_venv {
        // A hard-link copy, for the same reasons; a symlink to the shared venv would leave
        // nothing in the project for a reloader to watch.
        let from = cache.join("venv").join(group);
        let ok = Command::new("cp")
            .arg("-al")
            .arg(&from)
            .arg(project.join(".venv"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{}: could not copy {}", case.name, from.display());
    }
    project
}

/// The `PATH` the developer's shell would have: the tool's own bin folders first.
pub fn path_for(case: &Case, cache: &Path, project: &Path) -> String {
    let mut dirs = Vec::new();
    if case.npm.is_some() {
        dirs.push(project.join("node_modules/.bin"));
    }
    if case.project_venv.is_some() {
        dirs.push(project.join(".venv/bin"));
    }
    if let Some(group) = case.venv {
        dirs.push(cache.join("venv").join(group).join("bin"));
    }
    if let Some(tool) = case.cargo {
        dirs.push(cache.join("cargo").join(tool).join("bin"));
    }
    let mut path: Vec<String> = dirs
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    path.push(std::env::var("PATH").unwrap_or_default());
    path.join(":")
}

/// What the case started: its root, anything else it registered, its folder and its tmux.
pub struct Launched {
    pub root: Started,
    /// The tmux server's private socket, for the tmux launch.
    pub tmux: Option<PathBuf>,
}

/// Starts `command` in `project` the way the case says, and returns its root.
pub fn start(case: &Case, project: &Path, command: &str, env: &[(String, String)]) -> Launched {
    match case.launch {
        Launch::Orphan => orphan(project, command, env),
        Launch::Tmux => tmux(project, command, env),
    }
}

/// One case of a batch started in its own project of `sandbox`: its project, its ports and its
/// root.
pub fn start_in(case: &Case, cache: &Path, sandbox: &Path) -> (PathBuf, [u16; 3], Started) {
    let ports = [
        common::free_port(),
        common::free_port(),
        common::free_port(),
    ];
    let project = project(case, cache, sandbox, &ports);
    let mut env = vec![("PATH".to_owned(), path_for(case, cache, &project))];
    for (k, v) in case.env {
        env.push(((*k).to_owned(), fill(v, &ports, &project)));
    }
    let command = fill(case.command, &ports, &project);
    let root = start(case, &project, &command, &env).root;
    eprintln!("{}: started `{command}` (root pid {})", case.name, root.pid);
    (project, ports, root)
}

/// `setsid -f sh -c 'echo $$ > pidfile; exec COMMAND'`: sh forks away from the test, its
/// parent exits and it is re-parented to PID 1; `exec` keeps its pid for the command.
fn orphan(project: &Path, command: &str, env: &[(String, String)]) -> Launched {
    let pidfile = project.with_extension("root.pid");
    let log = fs::File::create(project.with_extension("log")).unwrap();
    let status = Command::new("setsid")
        .args([
            "-f",
            "sh",
            "-c",
            &format!("echo $$ > \"$0\"; exec {command}"),
        ])
        .arg(&pidfile)
        .current_dir(project)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .expect("setsid runs");
    assert!(status.success(), "setsid -f sh -c {command:?} failed");
    let root = common::wait_for("the root's pid file", || {
        let pid: u32 = fs::read_to_string(&pidfile).ok()?.trim().parse().ok()?;
        truth::identity(pid)
    });
    Launched { root, tmux: None }
}

fn tmux_cmd(socket: &Path) -> Command {
    let mut c = Command::new("tmux");
    c.arg("-S").arg(socket).arg("-f").arg("/dev/null");
    c
}

/// A private tmux server (`-S socket`), one session in `project`, and `command` typed into
/// its interactive shell (bash without rc files: nothing else runs under it); the root is
/// the shell's child.
fn tmux(project: &Path, command: &str, env: &[(String, String)]) -> Launched {
    let socket = project.with_extension("tmux");
    let ok = tmux_cmd(&socket)
        .args([
            "new-session",
            "-d",
            "-s",
            "pier",
            "-x",
            "200",
            "-y",
            "50",
            "-c",
        ])
        .arg(project)
        .args(["bash", "--noprofile", "--norc", "-i"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .status()
        .expect("tmux runs");
    assert!(ok.success(), "tmux new-session failed");
    let pane = tmux_cmd(&socket)
        .args(["display-message", "-p", "-t", "pier", "#{pane_pid}"])
        .output()
        .expect("tmux runs");
    let shell: u32 = String::from_utf8_lossy(&pane.stdout)
        .trim()
        .parse()
        .unwrap();
    let ok = tmux_cmd(&socket)
        .args(["send-keys", "-t", "pier", command, "Enter"])
        .status()
        .expect("tmux runs");
    assert!(ok.success(), "tmux send-keys failed");
    let root = common::wait_for("the command typed into tmux", || {
        truth::children(shell).into_iter().next()
    });
    Launched {
        root,
        tmux: Some(socket),
    }
}

/// Everything a case started, killed by identity when dropped: the trees under its roots (read
/// at the end), single processes, every process working inside its folder, and its tmux server
/// through the private socket.
#[derive(Default)]
pub struct Cleanup {
    pub roots: Vec<Started>,
    pub singles: Vec<Started>,
    pub folder: Option<PathBuf>,
    pub tmux: Option<PathBuf>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let mut all: Vec<Started> = self.singles.clone();
        for r in &self.roots {
            all.extend(truth::tree(*r));
        }
        if let Some(dir) = &self.folder {
            all.extend(truth::working_in(dir));
        }
        for p in &all {
            common::kill_by_identity(*p);
        }
        if let Some(socket) = &self.tmux {
            let _ = tmux_cmd(socket).arg("kill-server").status();
        }
        let end = Instant::now() + Duration::from_secs(5);
        while all.iter().any(|p| truth::runs(*p)) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
