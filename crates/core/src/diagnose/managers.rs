//! Who runs a resource's root on purpose, and how to stop it there (docs/design.md §2.9): a
//! process manager that is the root's live parent (pm2, supervisord, overmind, foreman,
//! process-compose), a systemd unit (the root's cgroup) or a launchd agent (its label). Pier
//! does not fight a manager: the resource stays yellow, and the card names the manager, the
//! program and the command that stops it there.
//!
//! The names come from the manager's own data — the variables it gives the programs it
//! starts, the files it keeps, the cgroup systemd puts a unit in, the label launchd passes
//! down — never from a guess at a command line. Each reader is a pure function over what was
//! read; `evaluate.rs` does the reading.

use std::path::{Path, PathBuf};

use crate::model::managed::ManagedBy;
use crate::probe::{Pid, ProcessInfo};

#[cfg(test)]
mod tests;

/// A process's environment, as the kernel gave it (`KEY=value` strings).
#[derive(Clone, Copy)]
pub struct Env<'a>(pub &'a [Vec<u8>]);

impl Env<'_> {
    /// The value of `key`, when it is set and is UTF-8 (the names read here always are).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find_map(|kv| {
            let rest = kv.strip_prefix(key.as_bytes())?.strip_prefix(b"=")?;
            std::str::from_utf8(rest).ok()
        })
    }
}

/// Which process manager a process is, by the name the process table gives it (the role
/// table already called it one: `kinds::Role::ProcessManager`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manager {
    /// pm2's God daemon, whose title is `PM2 v5.4.3: God Daemon (<PM2_HOME>)`.
    Pm2,
    /// supervisord (`python3 …/supervisord`, whose kernel name is `supervisord`).
    Supervisord,
    /// overmind, which runs a Procfile's processes in tmux.
    Overmind,
    /// foreman, which runs a Procfile's processes.
    Foreman,
    /// process-compose, which runs a `process-compose.yaml`'s processes.
    ProcessCompose,
    /// honcho, foreman's Python port.
    Honcho,
    /// A manager Pier names but whose programs it cannot read (honcho, hivemind, runsv, …).
    Other(String),
}

impl Manager {
    /// The manager process `p` is, when its role is `ProcessManager`; overmind, whose
    /// processes run in a tmux server of its own, is known by that server's socket name
    /// (`tmux -C -L overmind-<session>-<id> …`, the argv its first client gave it).
    pub fn of(p: &ProcessInfo) -> Manager {
        let arg0 = p.argv.first().map(|a| basename(a)).unwrap_or_default();
        // supervisord runs as `python3 …/supervisord`: its comm is the script's name.
        let names = [p.comm.as_str(), arg0.as_str()];
        let is = |n: &str| names.contains(&n);
        if p.comm.starts_with("PM2") || arg0.starts_with("PM2") {
            Manager::Pm2
        } else if is("supervisord") {
            Manager::Supervisord
        } else if is("overmind") || is_overminds_tmux(p) {
            Manager::Overmind
        } else if is("foreman") {
            Manager::Foreman
        } else if is("process-compose") {
            Manager::ProcessCompose
        } else if is("honcho") {
            Manager::Honcho
        } else {
            Manager::Other(p.comm.clone())
        }
    }

    fn name(&self) -> &str {
        match self {
            Manager::Pm2 => "pm2",
            Manager::Supervisord => "supervisord",
            Manager::Overmind => "overmind",
            Manager::Foreman => "foreman",
            Manager::ProcessCompose => "process-compose",
            Manager::Honcho => "honcho",
            Manager::Other(name) => name,
        }
    }

    /// Whether its programs' names are read from their environment.
    pub fn reads_environment(&self) -> bool {
        !matches!(self, Manager::Other(_))
    }
}

/// A tmux server overmind started: its argv (its first client's) names a socket
/// `-L overmind-…`.
pub fn is_overminds_tmux(p: &ProcessInfo) -> bool {
    p.comm.starts_with("tmux")
        && p.argv
            .windows(2)
            .any(|w| w[0] == b"-L" && w[1].starts_with(b"overmind-"))
}

/// What was read of a root whose parent is a live process manager.
pub struct UnderManager<'a> {
    /// The manager's process (the root's parent).
    pub manager: &'a ProcessInfo,
    /// The manager's working directory, when read (supervisord's `-c` may be relative).
    pub manager_cwd: Option<&'a Path>,
    /// The root's pid.
    pub root: Pid,
    /// The root's environment, or why it could not be read.
    pub env: Result<Env<'a>, &'a str>,
    /// The root's working directory, when read (overmind's socket is in its folder).
    pub root_cwd: Option<&'a Path>,
    /// Reads a small file the manager keeps (pm2's pid file, supervisord's config).
    pub read: &'a dyn Fn(&Path) -> Option<String>,
    /// Whether a path exists (a manager's socket).
    pub exists: &'a dyn Fn(&Path) -> bool,
}

/// The manager running a root, its program and how to stop it there. A program whose name
/// cannot be read is still run by that manager: named without it, with why.
pub fn under_manager(u: &UnderManager) -> ManagedBy {
    let manager = Manager::of(u.manager);
    let unnamed = |note: String| ManagedBy {
        manager: manager.name().to_owned(),
        pid: Some(u.manager.identity.pid),
        program: None,
        stop_command: None,
        source: "process table".into(),
        note: Some(note),
    };
    if !manager.reads_environment() {
        return unnamed(format!(
            "Pier does not know where {} keeps its programs' names",
            manager.name()
        ));
    }
    let env = match u.env {
        Ok(env) => env,
        Err(why) => return unnamed(format!("its environment could not be read: {why}")),
    };
    let named = match manager {
        Manager::Pm2 => pm2(env, u.root, u.read),
        Manager::Supervisord => supervisord(env, u.manager, u.manager_cwd, u.read),
        Manager::Overmind => overmind(env, u.root_cwd, u.exists),
        Manager::Foreman => foreman(env, "PS", "foreman", u.manager.identity.pid),
        Manager::Honcho => foreman(env, "HONCHO_PROCESS_NAME", "honcho", u.manager.identity.pid),
        Manager::ProcessCompose => process_compose(env, u.manager.identity.pid, u.exists),
        Manager::Other(_) => unreachable!("checked above"),
    };
    match named {
        Ok(mut m) => {
            m.manager = manager.name().to_owned();
            m.pid = Some(u.manager.identity.pid);
            if is_overminds_tmux(u.manager) {
                // The parent is overmind's tmux server, not overmind.
                m.pid = None;
                let tmux = format!("in overmind's tmux server, pid {}", u.manager.identity.pid);
                m.note = Some(match m.note.take() {
                    Some(note) => format!("{tmux}; {note}"),
                    None => tmux,
                });
            }
            m
        }
        Err(why) => unnamed(why),
    }
}

fn managed(program: String, stop_command: String, source: &str) -> ManagedBy {
    ManagedBy {
        manager: String::new(),
        pid: None,
        program: Some(program),
        stop_command: Some(stop_command),
        source: source.into(),
        note: None,
    }
}

/// pm2 gives each app `name`, `pm_id` and `pm_pid_path` (the pid file it writes in its
/// `PM2_HOME`, `<home>/pids/<name>-<id>.pid`); the pid file holding the root's pid confirms
/// them. `pm2 stop <name>` talks to the daemon of `PM2_HOME` (default `~/.pm2`), so a
/// daemon of another home is named in the command.
fn pm2(env: Env, root: Pid, read: &dyn Fn(&Path) -> Option<String>) -> Result<ManagedBy, String> {
    let (Some(name), Some(id)) = (env.get("name"), env.get("pm_id")) else {
        return Err("its environment has no pm2 app name (`name`, `pm_id`)".into());
    };
    let pid_file = env.get("pm_pid_path").map(PathBuf::from);
    let home = env
        .get("PM2_HOME")
        .map(PathBuf::from)
        .or_else(|| Some(pid_file.as_ref()?.parent()?.parent()?.to_path_buf()));
    let default_home = env.get("HOME").map(|h| Path::new(h).join(".pm2"));
    let mut command = String::new();
    if let Some(home) = home.as_ref().filter(|h| Some(*h) != default_home.as_ref()) {
        command.push_str(&format!("PM2_HOME={} ", quote(&home.to_string_lossy())));
    }
    // A name stands for every instance of the app: with several, the id names this one.
    let several = env.get("instances").is_some_and(|n| n != "1");
    let target = if several { id } else { name };
    command.push_str(&format!("pm2 stop {}", quote(target)));
    let mut m = managed(name.to_owned(), command, "environment");
    match pid_file.as_deref().map(|f| (f, read(f))) {
        Some((_, Some(text))) if text.trim() == root.to_string() => {
            m.source = "environment and pm2's pid file".into();
        }
        Some((f, Some(text))) => {
            m.note = Some(format!(
                "pm2's pid file {} holds {} (app id {id}), not this process",
                f.display(),
                text.trim()
            ))
        }
        Some((f, None)) => {
            m.note = Some(format!("pm2's pid file {} could not be read", f.display()))
        }
        None => m.note = Some("its environment names no pm2 pid file".into()),
    }
    Ok(m)
}

/// supervisord gives each program `SUPERVISOR_PROCESS_NAME`, `SUPERVISOR_GROUP_NAME` and
/// `SUPERVISOR_SERVER_URL` (supervisor/process.py). supervisorctl names a process of a group
/// of its own by its name, else `group:name`; it finds the server through supervisord's own
/// config (`-c`, from supervisord's argv), else through the URL.
fn supervisord(
    env: Env,
    manager: &ProcessInfo,
    cwd: Option<&Path>,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Result<ManagedBy, String> {
    let Some(process) = env.get("SUPERVISOR_PROCESS_NAME") else {
        return Err("its environment has no SUPERVISOR_PROCESS_NAME".into());
    };
    let group = env.get("SUPERVISOR_GROUP_NAME").unwrap_or(process);
    let program = if group == process {
        process.to_owned()
    } else {
        format!("{group}:{process}")
    };
    let config = config_option(&manager.argv).map(|c| match cwd {
        Some(cwd) => cwd.join(c),
        None => c,
    });
    let text = config.as_deref().and_then(read);
    let (target, source, note) = match (&config, &text) {
        (Some(c), Some(text)) => {
            let note = match declares(text, group) {
                Declared::Yes => None,
                Declared::No => Some(format!(
                    "its config {} declares no [program:{group}]",
                    c.display()
                )),
                Declared::Maybe => None,
            };
            (
                format!("-c {}", quote(&c.to_string_lossy())),
                "environment and supervisord's config",
                note,
            )
        }
        _ => match env.get("SUPERVISOR_SERVER_URL") {
            Some(url) => (format!("-s {}", quote(url)), "environment", None),
            None => (String::new(), "environment", None),
        },
    };
    let command = ["supervisorctl", &target, "stop", &quote(&program)]
        .iter()
        .filter(|w| !w.is_empty())
        .copied()
        .collect::<Vec<&str>>()
        .join(" ");
    let mut m = managed(program, command, source);
    m.note = note;
    Ok(m)
}

/// supervisord's `-c FILE` / `--configuration FILE` from its argv (after `python3 …/supervisord`).
fn config_option(argv: &[Vec<u8>]) -> Option<PathBuf> {
    let args: Vec<String> = argv
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-c" || a == "--configuration" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("--configuration=") {
            return Some(PathBuf::from(v));
        }
        if let Some(v) = a.strip_prefix("-c").filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// Whether a supervisord config declares the group: `[program:x]`, `[fcgi-program:x]`,
/// `[eventlistener:x]` or `[group:x]`. With an `[include]`, another file may: unknown.
#[derive(Debug, PartialEq, Eq)]
enum Declared {
    Yes,
    No,
    Maybe,
}

fn declares(config: &str, group: &str) -> Declared {
    let mut include = false;
    for line in config.lines().map(str::trim) {
        let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            continue;
        };
        let section = section.trim();
        if section == "include" {
            include = true;
        }
        if let Some((kind, name)) = section.split_once(':') {
            let kinds = ["program", "fcgi-program", "eventlistener", "group"];
            if kinds.contains(&kind.trim()) && name.trim() == group {
                return Declared::Yes;
            }
        }
    }
    if include {
        Declared::Maybe
    } else {
        Declared::No
    }
}

/// overmind runs each process of a Procfile in a tmux window of its own server, through a
/// script that exports `PS` (its name, `web` or `web#2`; overmind 2.5+). `overmind stop
/// <name>` talks to the instance whose socket is `./.overmind.sock` in the Procfile's folder
/// (the process's own), or `OVERMIND_SOCKET`.
fn overmind(
    env: Env,
    cwd: Option<&Path>,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ManagedBy, String> {
    let name = env
        .get("PS")
        .ok_or("its environment has no PS (overmind 2.5 and later set it)")?;
    let socket = env
        .get("OVERMIND_SOCKET")
        .map(PathBuf::from)
        .or_else(|| cwd.map(|c| c.join(".overmind.sock")).filter(|s| exists(s)));
    let mut m = managed(name.to_owned(), String::new(), "environment");
    m.stop_command = Some(match &socket {
        Some(s) => format!(
            "overmind stop -s {} {}",
            quote(&s.to_string_lossy()),
            quote(name)
        ),
        None => {
            m.note = Some("run it in the Procfile's folder, where overmind's socket is".into());
            format!("overmind stop {}", quote(name))
        }
    });
    Ok(m)
}

/// foreman gives each process `PS` (`web.1`), honcho `HONCHO_PROCESS_NAME`. Neither has a
/// command to stop one process: their processes stop together, with the manager.
fn foreman(env: Env, key: &str, manager: &str, pid: Pid) -> Result<ManagedBy, String> {
    let name = env
        .get(key)
        .ok_or_else(|| format!("its environment has no {key}"))?;
    let mut m = managed(name.to_owned(), String::new(), "environment");
    m.stop_command = None;
    m.note = Some(format!(
        "{manager} has no command to stop one process: Ctrl-C in its terminal (or `kill -INT \
         {pid}`) stops {manager} and everything it runs"
    ));
    Ok(m)
}

/// process-compose gives each process `PC_PROC_NAME` (its name in the YAML; a replica's is
/// `<name>-<n>`, and `process-compose process list` names them). `process-compose process
/// stop <name>` talks to its API: `PC_PORT_NUM` on localhost (8080 by default), or the unix
/// socket of `PC_SOCKET_PATH`, whose default is `process-compose-<server pid>.sock` in the
/// temp folder.
fn process_compose(
    env: Env,
    server: Pid,
    exists: &dyn Fn(&Path) -> bool,
) -> Result<ManagedBy, String> {
    let name = env
        .get("PC_PROC_NAME")
        .ok_or("its environment has no PC_PROC_NAME")?;
    let tmp = env.get("TMPDIR").unwrap_or("/tmp");
    let default_socket = Path::new(tmp).join(format!("process-compose-{server}.sock"));
    let target = match (env.get("PC_SOCKET_PATH"), env.get("PC_PORT_NUM")) {
        (Some(sock), _) => format!("--unix-socket {} ", quote(sock)),
        (None, _) if exists(&default_socket) => format!(
            "--unix-socket {} ",
            quote(&default_socket.to_string_lossy())
        ),
        (None, Some(port)) => format!("--port {} ", quote(port)),
        (None, None) => String::new(),
    };
    let mut m = managed(
        name.to_owned(),
        format!("process-compose process stop {target}{}", quote(name)),
        "environment",
    );
    if env.get("PC_REPLICA_NUM").is_some_and(|n| n != "0") {
        m.note = Some(format!(
            "replica {} of {name}: `process-compose process list` names it",
            env.get("PC_REPLICA_NUM").unwrap_or_default()
        ));
    }
    Ok(m)
}

/// A systemd unit the manager runs on purpose: the deepest `.service` of the cgroup path,
/// other than the per-user manager itself (`user@1000.service`, where a desktop session's
/// own apps live). Under a `user@N.service` it is a user unit (`systemctl --user`); otherwise
/// a system unit. A scope (`session-2.scope`, `run-….scope`) is not a service: nothing
/// restarts it.
pub fn systemd_unit(cgroup: &str) -> Option<ManagedBy> {
    let parts: Vec<&str> = cgroup.split('/').collect();
    let at = parts
        .iter()
        .rposition(|c| c.ends_with(".service") && !c.starts_with("user@"))?;
    let unit = parts[at];
    let user = parts[..at].iter().any(|c| c.starts_with("user@"));
    let systemctl = if user {
        "systemctl --user"
    } else {
        "systemctl"
    };
    let mut m = managed(
        unit.to_owned(),
        format!("{systemctl} stop {}", quote(unit)),
        "cgroup",
    );
    m.manager = "systemd".into();
    if !user {
        m.note = Some("a system unit: stopping it needs an administrator (sudo)".into());
    }
    Some(m)
}

/// A launchd job's label, as launchd passes it down in `XPC_SERVICE_NAME`. Terminal shells
/// carry `0` and apps started from the Dock `application.<bundle id>…`: neither is a job of
/// the user's. `launchctl bootout gui/<uid>/<label>` unloads it (a `launchctl stop` would be
/// answered by KeepAlive). Written from launchd's documentation; not run here (no Mac).
pub fn launchd_agent(env: Env, uid: u32) -> Option<ManagedBy> {
    let label = env.get("XPC_SERVICE_NAME")?;
    if label.is_empty() || label == "0" || label.starts_with("application.") {
        return None;
    }
    let mut m = managed(
        label.to_owned(),
        format!("launchctl bootout gui/{uid}/{}", quote(label)),
        "environment",
    );
    m.manager = "launchd".into();
    Some(m)
}

/// `word` as one shell word: as is when it holds only characters no shell treats specially,
/// else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn basename(arg: &[u8]) -> String {
    let name = arg.rsplit(|&b| b == b'/').next().unwrap_or(arg);
    String::from_utf8_lossy(name).into_owned()
}
