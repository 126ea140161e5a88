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

use serde_json::Value;

use super::kinds::basename;
use crate::model::managed::ManagedBy;
use crate::probe::{Pid, ProbeError, ProcessInfo};

#[cfg(test)]
mod tests;

/// A process's environment, as the kernel gave it (`KEY=value` strings).
#[derive(Clone, Copy)]
pub struct Env<'a>(pub &'a [Vec<u8>]);

impl<'a> Env<'a> {
    /// The value of `key`, when it is set and is UTF-8 (the names read here always are).
    pub fn get(&self, key: &str) -> Option<&'a str> {
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
    /// A manager Pier names but whose programs it cannot read (hivemind, runsv, …).
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
    /// The root's argv (overmind's script names its process).
    pub root_argv: &'a [Vec<u8>],
    /// The root's environment, or why it could not be read.
    pub env: Result<Env<'a>, &'a ProbeError>,
    /// The root's working directory, when read (overmind's socket is in its folder).
    pub root_cwd: Option<&'a Path>,
    /// Reads a small regular file the manager keeps (pm2's pid file, supervisord's config).
    pub read: &'a dyn Fn(&Path) -> Option<String>,
    /// Whether a path exists (a manager's socket).
    pub exists: &'a dyn Fn(&Path) -> bool,
}

/// Why a managed program's name could not be read: the note its card carries in its place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unnamed {
    /// The root's environment, where the manager puts the name, could not be read.
    #[error("its environment could not be read: {0}")]
    EnvironmentUnreadable(ProbeError),
    /// pm2's variables are missing.
    #[error("its environment has no pm2 app name (`name`, `pm_id`, `pm2_env`)")]
    NoPm2Name,
    /// The variable the manager names its programs by is missing.
    #[error("its environment has no {0}")]
    NoVariable(&'static str),
    /// overmind's script is not among the root's arguments, nor its `PS` in its environment.
    #[error("neither its script nor its environment names its process")]
    NoOvermindName,
}

/// The manager running a root, its program and how to stop it there. A program whose name
/// cannot be read is still run by that manager: named without it, with why.
pub fn under_manager(u: &UnderManager) -> ManagedBy {
    let manager = Manager::of(u.manager);
    // overmind's programs hang from its tmux server, not from overmind.
    let pid = (manager != Manager::Overmind).then_some(u.manager.identity.pid);
    let unnamed = |note: String| ManagedBy {
        manager: manager.name().to_owned(),
        pid,
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
    let named = match (&manager, u.env) {
        (Manager::Overmind, env) => overmind(u, env.ok()),
        (_, Err(why)) => Err(Unnamed::EnvironmentUnreadable(why.clone())),
        (Manager::Pm2, Ok(env)) => pm2(env, u.root, u.read),
        (Manager::Supervisord, Ok(env)) => supervisord(env, u),
        (Manager::Foreman, Ok(env)) => foreman(env, "PS", "foreman"),
        (Manager::Honcho, Ok(env)) => foreman(env, "HONCHO_PROCESS_NAME", "honcho"),
        (Manager::ProcessCompose, Ok(env)) => process_compose(env, u),
        (Manager::Other(_), _) => unreachable!("checked above"),
    };
    match named {
        Ok(mut m) => {
            m.manager = manager.name().to_owned();
            m.pid = pid;
            m
        }
        Err(why) => unnamed(why.to_string()),
    }
}

/// A named program and the words of its command. A name that starts with `-` would be read as
/// an option by any of the managers' commands: no command is given for it.
fn managed(program: &str, command: Option<Vec<String>>, source: &str) -> ManagedBy {
    let dash = program.starts_with('-');
    ManagedBy {
        manager: String::new(),
        pid: None,
        program: Some(program.to_owned()),
        stop_command: command.filter(|_| !dash).map(|w| w.join(" ")),
        source: source.into(),
        note: dash
            .then(|| "its name starts with `-`, which a command would take for an option".into()),
    }
}

/// pm2 gives each app its `pm2_env` fields as variables in fork mode (`name`, `pm_id`,
/// `pm_pid_path`, `PM2_HOME`), and as one JSON variable `pm2_env` in cluster mode
/// (`lib/God/ClusterMode.js`); the pid file pm2 writes in its home, holding the root's pid,
/// confirms them. The command names the app by its id: a name also matches every app of that
/// name, a namespace, `all` or a `/regex/` (`_operate` in pm2's `lib/API.js`). It talks to the
/// daemon of `PM2_HOME` (default `~/.pm2`): a daemon of another home is named in it, through
/// `env` so that every shell takes it.
fn pm2(env: Env, root: Pid, read: &dyn Fn(&Path) -> Option<String>) -> Result<ManagedBy, Unnamed> {
    let json: Option<Value> = env
        .get("pm2_env")
        .and_then(|j| serde_json::from_str(j).ok());
    let field = |key: &str| -> Option<String> {
        env.get(key)
            .map(str::to_owned)
            .or_else(|| match json.as_ref()?.get(key)? {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
    };
    let (Some(name), Some(id)) = (field("name"), field("pm_id")) else {
        return Err(Unnamed::NoPm2Name);
    };
    let pid_file = field("pm_pid_path").map(PathBuf::from);
    let home = field("PM2_HOME")
        .map(PathBuf::from)
        .or_else(|| Some(pid_file.as_ref()?.parent()?.parent()?.to_path_buf()));
    let default_home = env.get("HOME").map(|h| Path::new(h).join(".pm2"));
    let mut words = Vec::new();
    if let Some(home) = home.as_ref().filter(|h| Some(*h) != default_home.as_ref()) {
        words.push("env".to_owned());
        words.push(quote(&format!("PM2_HOME={}", home.to_string_lossy())));
    }
    words.extend(["pm2".to_owned(), "stop".to_owned(), quote(&id)]);
    let mut m = managed(&name, Some(words), "environment");
    match pid_file.as_deref().map(|f| (f, read(f))) {
        Some((_, Some(text))) if text.trim() == root.to_string() => {
            m.source = "environment and pm2's pid file".into();
        }
        Some((f, Some(text))) => {
            // Only a pid is worth repeating: the path came from the process's environment.
            let held = text.trim();
            let held =
                if !held.is_empty() && held.len() <= 10 && held.bytes().all(|b| b.is_ascii_digit())
                {
                    format!("pid {held}")
                } else {
                    "no pid".to_owned()
                };
            m.note = Some(format!(
                "pm2's pid file {} holds {held} (app id {id}), not this process",
                f.display()
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
/// of its own by its name, else `group:name` (`make_namespec`). It is pointed at the server
/// that runs the program by the URL the program was given (`-s`), and at supervisord's own
/// config (`-c`, from supervisord's argv) when that has a `[supervisorctl]` section, for any
/// credentials; with neither, no command (supervisorctl's own search could find another
/// supervisord).
fn supervisord(env: Env, u: &UnderManager) -> Result<ManagedBy, Unnamed> {
    let Some(process) = env.get("SUPERVISOR_PROCESS_NAME") else {
        return Err(Unnamed::NoVariable("SUPERVISOR_PROCESS_NAME"));
    };
    let group = env.get("SUPERVISOR_GROUP_NAME").unwrap_or(process);
    let program = if group == process {
        process.to_owned()
    } else {
        format!("{group}:{process}")
    };
    let config = config_option(&u.manager.argv).and_then(|c| {
        if c.is_absolute() {
            Some(c)
        } else {
            // Relative to supervisord's folder, or to nothing known.
            Some(u.manager_cwd?.join(c))
        }
    });
    let text = config.as_deref().and_then(u.read);
    let ctl = config
        .as_ref()
        .zip(text.as_deref())
        .filter(|(_, text)| has_section(text, "supervisorctl"));
    // The URL picks the server that runs it; the config, when it has its section, any
    // credentials.
    let url = env.get("SUPERVISOR_SERVER_URL");
    let mut target = Vec::new();
    if let Some((c, _)) = ctl {
        target.extend(["-c".to_owned(), quote(&c.to_string_lossy())]);
    }
    if let Some(url) = url {
        target.extend(["-s".to_owned(), quote(url)]);
    }
    let source = if ctl.is_some() {
        "environment and supervisord's config"
    } else {
        "environment"
    };
    let target = (!target.is_empty()).then_some(target);
    let words = target.map(|t| {
        let mut w = vec!["supervisorctl".to_owned()];
        w.extend(t);
        w.extend(["stop".to_owned(), quote(&program)]);
        w
    });
    let mut m = managed(&program, words, source);
    if m.stop_command.is_none() && m.note.is_none() {
        m.note = Some("neither its config nor its server's URL could be read".into());
    }
    if let (Some(c), Some(text)) = (&config, &text) {
        if declares(text, group) == Declared::No {
            let said = format!("its config {} declares no [program:{group}]", c.display());
            m.note = Some(match m.note.take() {
                Some(note) => format!("{note}; {said}"),
                None => said,
            });
        }
    }
    Ok(m)
}

/// supervisord's `-c FILE` / `--configuration FILE` from its argv (after `python3 …/supervisord`).
fn config_option(argv: &[Vec<u8>]) -> Option<PathBuf> {
    option_value(argv, &["-c", "--configuration"]).map(PathBuf::from)
}

/// The value of the first of `names` in `argv`: `-c X`, `-cX`, `--name X`, `--name=X`.
fn option_value(argv: &[Vec<u8>], names: &[&str]) -> Option<String> {
    let args: Vec<String> = argv
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        for name in names {
            if a == name {
                return it.next().cloned();
            }
            let glued = if name.starts_with("--") {
                a.strip_prefix(&format!("{name}="))
            } else {
                a.strip_prefix(name)
            };
            if let Some(v) = glued.filter(|v| !v.is_empty()) {
                return Some(v.to_owned());
            }
        }
    }
    None
}

/// The section headers of an INI text.
fn sections(config: &str) -> impl Iterator<Item = &str> {
    config.lines().filter_map(|line| {
        let line = line.trim();
        Some(line.strip_prefix('[')?.strip_suffix(']')?.trim())
    })
}

fn has_section(config: &str, name: &str) -> bool {
    sections(config).any(|s| s == name)
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
    let kinds = ["program", "fcgi-program", "eventlistener", "group"];
    let declared = sections(config).any(|section| {
        section
            .split_once(':')
            .is_some_and(|(kind, name)| kinds.contains(&kind.trim()) && name.trim() == group)
    });
    match (declared, has_section(config, "include")) {
        (true, _) => Declared::Yes,
        (false, true) => Declared::Maybe,
        (false, false) => Declared::No,
    }
}

/// overmind runs each process of a Procfile in a tmux window of its own server, through a
/// script `$TMPDIR/overmind-<session>-<id>/<name>` (start/command.go) whose folder is named as
/// the server's socket (`-L overmind-<session>-<id>`): the script the root runs names the
/// process. (The `PS` it exports is its child's, overmind 2.5+; the root's own, when set, is
/// the same name.) `overmind stop <name>` talks to the instance whose socket is
/// `./.overmind.sock` in the Procfile's folder (the process's own), or `OVERMIND_SOCKET`.
fn overmind(u: &UnderManager, env: Option<Env>) -> Result<ManagedBy, Unnamed> {
    let socket_name = option_value(&u.manager.argv, &["-L"]);
    let script = u.root_argv.iter().skip(1).find_map(|a| {
        let path = Path::new(std::str::from_utf8(a).ok()?);
        let folder = path.parent()?.file_name()?.to_str()?;
        let mine = socket_name
            .as_deref()
            .map_or(folder.starts_with("overmind-"), |s| s == folder);
        mine.then(|| path.file_name()?.to_str().map(str::to_owned))?
    });
    let name = script
        .or_else(|| env?.get("PS").map(str::to_owned))
        .ok_or(Unnamed::NoOvermindName)?;
    let socket = env
        .and_then(|e| e.get("OVERMIND_SOCKET"))
        .map(PathBuf::from)
        .or_else(|| {
            u.root_cwd
                .map(|c| c.join(".overmind.sock"))
                .filter(|s| (u.exists)(s))
        });
    let mut words = vec!["overmind".to_owned(), "stop".to_owned()];
    if let Some(s) = &socket {
        words.extend(["-s".to_owned(), quote(&s.to_string_lossy())]);
    }
    words.push(quote(&name));
    let mut m = managed(&name, Some(words), "overmind's script");
    let tmux = format!("in overmind's tmux server, pid {}", u.manager.identity.pid);
    m.note = Some(match (&socket, m.note.take()) {
        (_, Some(note)) => format!("{tmux}; {note}"),
        (None, None) => {
            format!("{tmux}; run the command in the Procfile's folder, where overmind's socket is")
        }
        (Some(_), None) => tmux,
    });
    Ok(m)
}

/// foreman gives each process `PS` (`web.1`), honcho `HONCHO_PROCESS_NAME`. Neither has a
/// command to stop one process, and both end all their processes when one of them exits.
fn foreman(env: Env, key: &'static str, manager: &str) -> Result<ManagedBy, Unnamed> {
    let name = env.get(key).ok_or(Unnamed::NoVariable(key))?;
    let mut m = managed(name, None, "environment");
    m.note = Some(format!(
        "{manager} has no command to stop one process: Ctrl-C in its terminal stops it and \
         everything it runs (and when one of its processes ends, it ends the others)"
    ));
    Ok(m)
}

/// process-compose gives each process `PC_PROC_NAME` (its name in the YAML; a replica's is
/// `<name>-<n>`, zero-padded, and `process-compose process list` names them). `process-compose
/// process stop <name>` talks to its API: the server's own `-p`/`--port` or
/// `-u`/`--unix-socket` (from its argv), else `PC_PORT_NUM` / `PC_SOCKET_PATH` (the server's,
/// passed down), else with `-U` the socket `process-compose-<server pid>.sock` in the temp
/// folder, else port 8080.
fn process_compose(env: Env, u: &UnderManager) -> Result<ManagedBy, Unnamed> {
    let name = env
        .get("PC_PROC_NAME")
        .ok_or(Unnamed::NoVariable("PC_PROC_NAME"))?;
    let argv = &u.manager.argv;
    let socket = option_value(argv, &["-u", "--unix-socket"])
        .or_else(|| env.get("PC_SOCKET_PATH").map(str::to_owned))
        .or_else(|| {
            let uds = argv.iter().any(|a| a == b"-U" || a == b"--use-uds");
            let tmp = env.get("TMPDIR").unwrap_or("/tmp");
            let path =
                Path::new(tmp).join(format!("process-compose-{}.sock", u.manager.identity.pid));
            (uds && (u.exists)(&path)).then(|| path.to_string_lossy().into_owned())
        });
    let port =
        option_value(argv, &["-p", "--port"]).or_else(|| env.get("PC_PORT_NUM").map(str::to_owned));
    let mut words = vec![
        "process-compose".to_owned(),
        "process".to_owned(),
        "stop".to_owned(),
    ];
    match (socket, port) {
        (Some(sock), _) => words.extend(["--unix-socket".to_owned(), quote(&sock)]),
        (None, Some(port)) => words.extend(["--port".to_owned(), quote(&port)]),
        (None, None) => {}
    }
    words.push(quote(name));
    let mut m = managed(name, Some(words), "environment");
    if env.get("PC_REPLICA_NUM").is_some_and(|n| n != "0") {
        m.note = Some(format!(
            "replica {} of {name}: `process-compose process list` names it",
            env.get("PC_REPLICA_NUM").unwrap_or_default()
        ));
    }
    Ok(m)
}

/// The systemd service a cgroup path is in: the deepest `.service` other than the per-user
/// manager itself (`user@1000.service`, where a desktop session's own apps live), and whether
/// it is a user unit (under a `user@N.service`). A scope (`session-2.scope`, `run-….scope`)
/// is not a service: nothing restarts it.
pub fn service_of(cgroup: &str) -> Option<(&str, bool)> {
    let parts: Vec<&str> = cgroup.split('/').collect();
    let at = parts
        .iter()
        .rposition(|c| c.ends_with(".service") && !c.starts_with("user@"))?;
    let user = parts[..at].iter().any(|c| c.starts_with("user@"));
    Some((parts[at], user))
}

/// A root in a systemd service's cgroup is that service's. systemd gives every process it
/// starts for a unit `INVOCATION_ID` (systemd.exec(5)), passed down to its children: with it,
/// the unit started the root, and stopping the unit stops it (`systemctl --user stop` for a
/// user unit, `systemctl stop` with sudo for a system unit). Without it, the root only landed
/// in the unit's cgroup (a cron job's or an ssh session's leftover where no session scope was
/// made): the unit's stop may not end it, so no command is given.
pub fn systemd_unit(cgroup: &str, env: Result<Env, &ProbeError>) -> Option<ManagedBy> {
    let (unit, user) = service_of(cgroup)?;
    let started = match env {
        Ok(env) => env
            .get("INVOCATION_ID")
            .is_some()
            .then_some(())
            .ok_or_else(|| {
                format!(
                    "it is in {unit}'s cgroup, but systemd did not start it for that unit (no \
                 INVOCATION_ID in its environment): stopping the unit may not end it"
                )
            }),
        Err(why) => Err(format!(
            "its environment could not be read to tell whether {unit} started it: {why}"
        )),
    };
    let systemctl: &[&str] = if user {
        &["systemctl", "--user"]
    } else {
        &["systemctl"]
    };
    let mut words: Vec<String> = systemctl.iter().map(|w| (*w).to_owned()).collect();
    words.extend(["stop".to_owned(), quote(unit)]);
    let mut m = managed(unit, started.is_ok().then_some(words), "cgroup");
    m.manager = "systemd".into();
    m.note = match started {
        Err(why) => Some(why),
        Ok(()) if !user => Some("a system unit: stopping it needs an administrator (sudo)".into()),
        Ok(()) => m.note.take(),
    };
    Some(m)
}

/// A launchd job's label, as launchd passes it down in `XPC_SERVICE_NAME` to the job's
/// processes. Terminal shells carry `0` and apps started from the Dock `application.<bundle
/// id>…`: neither is a job of the user's. `launchctl bootout gui/<uid>/<label>` unloads the
/// job (a `launchctl stop` would be answered by KeepAlive). The label is inherited by a job's
/// descendants too, so the root may be a process the job left behind rather than the job's
/// own: `launchctl print gui/<uid>/<label>` shows the job's pid. Written from launchd's
/// documentation and observed values; not run here (no Mac).
pub fn launchd_agent(env: Env, uid: u32) -> Option<ManagedBy> {
    let label = env.get("XPC_SERVICE_NAME")?;
    if label.is_empty() || label == "0" || label.starts_with("application.") {
        return None;
    }
    let words = vec![
        "launchctl".to_owned(),
        "bootout".to_owned(),
        quote(&format!("gui/{uid}/{label}")),
    ];
    let mut m = managed(label, Some(words), "environment");
    m.manager = "launchd".into();
    m.note = m.note.take().or_else(|| {
        Some(format!(
            "the launchd job it came from; `launchctl print gui/{uid}/{}` shows whether it is \
             the job's own process",
            quote(label)
        ))
    });
    Some(m)
}

/// `word` as one shell word: as is when it holds only characters no shell treats specially
/// (and does not start with `=` or `~`, which zsh and others expand), else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && !word.starts_with(['=', '~'])
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
