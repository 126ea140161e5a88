//! Debugging ports and pipes, read from a process's argv as structure (docs/design.md §2,
//! "Connections"): a browser's `--remote-debugging-port`, `--marionette`, a runtime's
//! `--inspect` family, and a browser driven over `--remote-debugging-pipe`. A client on one is
//! a driver at work, even from inside the same tree.
//!
//! Over-matching only makes a resource redder: when the port cannot be known, every listener
//! of that process is taken for its debugging port.

use std::collections::HashSet;
use std::net::SocketAddr;

use super::connections::Conn;
use crate::model::client::Client;
use crate::probe::{Pid, ProcessInfo, Socket};

/// A driver at work on a member, from inside the tree or outside it: what the judge finds
/// (`judge::Finding::Driven`), always red.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Driven {
    /// A connection on a member's debugging port (never internal), with that port.
    Port(Conn, u16),
    /// A member running on a debugging pipe ([`driven_by_pipe`]), and the process that started
    /// it, which holds the pipe's other end.
    Pipe {
        /// The member on the pipe.
        pid: Pid,
        /// Its parent; 1 or 0 when it has none left (the pipe is held by whoever inherited it).
        parent: Pid,
        /// The parent's program, when its row was read.
        driver: Option<Client>,
    },
}

/// The listeners among `listeners` that are a debugging port of a member holding them, by that
/// member's argv (`row`, the member's row with its argv read).
pub fn debugging_listeners<'r>(
    listeners: &[&Socket],
    members: &HashSet<Pid>,
    row: impl Fn(Pid) -> Option<&'r ProcessInfo>,
) -> Vec<SocketAddr> {
    listeners
        .iter()
        .filter(|s| {
            s.owners
                .iter()
                .filter(|o| members.contains(o))
                .filter_map(|&o| row(o))
                .any(|p| is_debugging_listener(&p.argv, s.local.port()))
        })
        .map(|s| s.local)
        .collect()
}

/// The members on a debugging pipe, each once: a member whose parent is on the same pipe flag
/// is that browser's own child. In pid order.
pub fn piped<'r>(
    members: &HashSet<Pid>,
    row: impl Fn(Pid) -> Option<&'r ProcessInfo>,
    uid: u32,
) -> Vec<Driven> {
    let mut pids: Vec<Pid> = members.iter().copied().collect();
    pids.sort_unstable();
    pids.into_iter()
        .filter_map(|pid| row(pid).filter(|p| !p.zombie && driven_by_pipe(&p.argv)))
        .filter(|p| !row(p.ppid).is_some_and(|parent| driven_by_pipe(&parent.argv)))
        .map(|p| Driven::Pipe {
            pid: p.identity.pid,
            parent: p.ppid,
            driver: row(p.ppid)
                .filter(|_| p.ppid > 1)
                .map(|parent| super::clients::client_of(parent, uid)),
        })
        .collect()
}

/// Which of a process's listeners is its debugging port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugPort {
    /// This port.
    Port(u16),
    /// Any of its listeners: the port is chosen at run time (`=0`) or cannot be read.
    Any,
}

/// Runtimes whose own flags come before the script: `--inspect` is theirs, not the script's.
/// Their inspector's default port.
const RUNTIMES: &[(&str, u16)] = &[
    ("node", 9229),
    ("nodejs", 9229),
    ("deno", 9229),
    ("bun", 6499),
];

/// Subcommands a runtime takes before its flags (`deno run --inspect x.ts`, `bun run …`).
const SUBCOMMANDS: &[&str] = &["run", "test", "serve", "bench", "x", "exec"];

/// The debugging port `argv` opens, if any. Why argv structure: a runtime's `--inspect` counts
/// only among its own flags, before the script (`node app.js --inspect` passes it to the
/// script); a browser's flags are all its own.
pub fn port_of(argv: &[Vec<u8>]) -> Option<DebugPort> {
    // Chromium writes its command line over its argv as one string in some sessions (a
    // desktop's), its helpers always: read its words.
    let words = super::kinds::chain::title_words(argv);
    let argv = words.as_deref().unwrap_or(argv);
    let (arg0, rest) = argv.split_first()?;
    let name = basename(arg0);
    match RUNTIMES.iter().find(|(r, _)| is_runtime(&name, r)) {
        Some(&(_, default)) => runtime_port(runtime_flags(rest), default),
        None => browser_port(rest),
    }
}

/// Whether a listener on `port` held by a process running `argv` is its debugging port.
pub fn is_debugging_listener(argv: &[Vec<u8>], port: u16) -> bool {
    match port_of(argv) {
        Some(DebugPort::Any) => true,
        Some(DebugPort::Port(p)) => p == port,
        None => false,
    }
}

/// Whether `argv` is a browser driven through a debugging pipe (Chromium's
/// `--remote-debugging-pipe`, Playwright's Firefox `-juggler-pipe` and WebKit
/// `--inspector-pipe`): its driver holds the pipe's other end. Why no more is needed: Chromium
/// exits when that end closes (Debian chromium 156: "Connection terminated while reading from
/// pipe", gone within half a second), so a browser still running is still driven.
pub fn driven_by_pipe(argv: &[Vec<u8>]) -> bool {
    let words = super::kinds::chain::title_words(argv);
    let argv = words.as_deref().unwrap_or(argv);
    let Some((arg0, rest)) = argv.split_first() else {
        return false;
    };
    let name = basename(arg0);
    !RUNTIMES.iter().any(|(r, _)| is_runtime(&name, r))
        && rest.iter().any(|a| {
            let a = String::from_utf8_lossy(a);
            let flag = a.split('=').next().unwrap_or_default();
            matches!(
                flag,
                "--remote-debugging-pipe" | "-juggler-pipe" | "--juggler-pipe" | "--inspector-pipe"
            )
        })
}

/// `node`, `node22`, `nodejs`: the runtime `r` by its program's name.
fn is_runtime(name: &str, r: &str) -> bool {
    name.strip_prefix(r)
        .is_some_and(|tail| tail.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn basename(arg: &[u8]) -> String {
    let s = String::from_utf8_lossy(arg);
    s.rsplit('/').next().unwrap_or_default().to_owned()
}

/// A runtime's own flags: from after its name to the script (the first argument that is not a
/// flag, past one subcommand), or `--`.
fn runtime_flags(rest: &[Vec<u8>]) -> Vec<String> {
    let mut flags = Vec::new();
    let mut args = rest.iter().map(|a| String::from_utf8_lossy(a).into_owned());
    let mut subcommand_seen = false;
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        if !a.starts_with('-') {
            if !subcommand_seen && flags.is_empty() && SUBCOMMANDS.contains(&a.as_str()) {
                subcommand_seen = true;
                continue;
            }
            break;
        }
        if super::kinds::VALUE_FLAGS.contains(&a.as_str()) {
            let value = args.next().unwrap_or_default();
            flags.push(format!("{a}={value}"));
            continue;
        }
        flags.push(a);
    }
    flags
}

/// The inspector's port among a runtime's flags: `--inspect-port` wins over the port of
/// `--inspect[-brk|-wait][=[host:]port]`; a bare one listens on the runtime's default.
fn runtime_port(flags: Vec<String>, default: u16) -> Option<DebugPort> {
    let mut inspecting = None;
    let mut explicit = None;
    for f in &flags {
        let (name, value) = match f.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (f.as_str(), None),
        };
        match name {
            "--inspect" | "--inspect-brk" | "--inspect-wait" => {
                inspecting = Some(value.map_or(DebugPort::Port(default), host_port));
            }
            "--inspect-port" | "--debug-port" => {
                explicit = Some(value.map_or(DebugPort::Any, host_port))
            }
            _ => {}
        }
    }
    inspecting.map(|p| explicit.unwrap_or(p))
}

/// `[host:]port`; a port of 0 or one that does not read is any listener.
fn host_port(value: &str) -> DebugPort {
    let port = value.rsplit(':').next().unwrap_or(value);
    match port.parse::<u16>() {
        Ok(0) | Err(_) => DebugPort::Any,
        Ok(p) => DebugPort::Port(p),
    }
}

/// A browser's debugging port: `--remote-debugging-port=N` or `--remote-debugging-port N`
/// (Firefox), `--marionette` (any), `-start-debugger-server` (any).
fn browser_port(rest: &[Vec<u8>]) -> Option<DebugPort> {
    let args: Vec<String> = rest
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        let bare = a.trim_start_matches('-');
        if !a.starts_with('-') {
            continue;
        }
        let (name, value) = match bare.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (bare, None),
        };
        match name {
            "remote-debugging-port" => {
                let value =
                    value.or_else(|| args.get(i + 1).filter(|v| !v.starts_with('-')).cloned());
                found = Some(value.as_deref().map_or(DebugPort::Any, host_port));
            }
            "marionette" | "start-debugger-server" => found = Some(DebugPort::Any),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests;
