//! Respawners inside a resource (docs/design.md §2.9): a member that starts its child again
//! when the child exits — nodemon, a reloader's parent, a worker supervisor, a shell loop
//! (`while true; do node server.js; done`). It is part of the resource: the stop signals it
//! too, leaf to root, so it does not argue against stopping; the card names it, so a
//! replacement born during the stop is no surprise.
//!
//! Pure functions over the tree as read; the text of a shell's script is read by the caller.

use super::kinds::{self, Role};
use crate::probe::{Pid, ProcessInfo};
use crate::words;

#[cfg(test)]
mod tests;

/// A member that restarts its child, and how, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The member's pid.
    pub pid: Pid,
    /// What it does, in words (`"nodemon restarts its child when a file changes"`).
    pub how: String,
}

/// What the caller reads for a shell member that runs a script (`bash run.sh`): the script's
/// text, or `None` when it cannot be read.
pub type ScriptText<'a> = &'a dyn Fn(&ProcessInfo, &str) -> Option<String>;

/// The respawners among `tree` (the resource's members): each member with a child in the
/// tree that is a known respawning tool (`kinds::respawns`) or a shell running a loop.
pub fn among(tree: &[&ProcessInfo], script: ScriptText) -> Vec<Found> {
    let has_child = |pid: Pid| tree.iter().any(|c| c.ppid == pid && c.identity.pid != pid);
    tree.iter()
        .filter(|p| has_child(p.identity.pid))
        .filter_map(|p| {
            let how = tool(p).or_else(|| shell_loop_of(p, script))?;
            Some(Found {
                pid: p.identity.pid,
                how,
            })
        })
        .collect()
}

/// A dev tool that restarts the process it runs (nodemon, a reloader, a worker supervisor):
/// one the table names, or a reloader or watcher by its flag (`hypercorn --reload`, `node
/// --watch`), whatever its name.
fn tool(p: &ProcessInfo) -> Option<String> {
    if let Some(kind) = kinds::classify(&p.argv) {
        if let Some(what) = kinds::respawns(kind) {
            return Some(format!("{kind} {what}"));
        }
    }
    let (program, word) = kinds::launch::reloader(p)?;
    Some(format!(
        "`{program} {word}` restarts its child when a file changes"
    ))
}

/// Whether `pid` descends from `ancestor` within `tree` (bounded: a table has no cycles, the
/// bound guards against one that does).
fn descends_from(tree: &[&ProcessInfo], pid: Pid, ancestor: Pid) -> bool {
    let parent = |p: Pid| tree.iter().find(|m| m.identity.pid == p).map(|m| m.ppid);
    let mut cur = parent(pid);
    for _ in 0..=tree.len() {
        match cur {
            Some(c) if c == ancestor => return true,
            Some(c) => cur = parent(c),
            None => return false,
        }
    }
    false
}

/// What would stop a reloader's polling, by the tool's own file-watching backend; a tool not
/// listed is pointed at its own option.
const QUIETER: &[(&str, &str)] = &[
    (
        "uvicorn",
        "installing `watchfiles` beside uvicorn (it then waits for file events)",
    ),
    (
        "fastapi-dev",
        "installing `watchfiles` beside uvicorn (it then waits for file events)",
    ),
    (
        "flask-run",
        "installing `watchdog` (the reloader then waits for file events)",
    ),
    (
        "django-runserver",
        "installing `pywatchman` with watchman running",
    ),
];

/// The respawners of a tree whose own CPU is their polling or supervising, not the server's
/// work (`rules::activity_with_pollers`, `rules::quiet_life`), each with what would stop it.
/// `listeners`: each listener's holders among the members. A respawner counts only when the
/// server it runs is below it — a descendant holds a listener — and it serves nothing alone:
/// every listener it holds, a descendant holds too (uvicorn's reloader passes its socket to
/// the worker). One that serves by itself (`bun --hot`, an app with a `--reload` flag and an
/// idle child) is the server, and its CPU is the server's work. A shell loop does not poll.
pub fn pollers(
    tree: &[&ProcessInfo],
    listeners: &[Vec<Pid>],
) -> Vec<crate::diagnose::rules::Poller> {
    among(tree, &|_, _| None)
        .into_iter()
        .filter_map(|f| {
            let p = tree.iter().find(|p| p.identity.pid == f.pid)?;
            if kinds::role(p) == Role::Wrapper && kinds::is_shell(p) {
                return None;
            }
            let below = |holders: &Vec<Pid>| {
                holders
                    .iter()
                    .any(|&h| h != f.pid && descends_from(tree, h, f.pid))
            };
            let runs_the_server = listeners.iter().any(below);
            let serves_alone = listeners
                .iter()
                .any(|holders| holders.contains(&f.pid) && !below(holders));
            if !runs_the_server || serves_alone {
                return None;
            }
            let kind = kinds::classify(&p.argv);
            let quieter = QUIETER.iter().find(|(k, _)| Some(*k) == kind).map_or(
                "an event-based file watcher instead of polling (its own option)",
                |(_, q)| q,
            );
            Some(crate::diagnose::rules::Poller {
                pid: f.pid,
                quieter: quieter.to_owned(),
            })
        })
        .collect()
}

/// A shell (a launcher, `kinds::Role::Wrapper`) whose `-c` command or script holds a loop.
fn shell_loop_of(p: &ProcessInfo, script: ScriptText) -> Option<String> {
    if kinds::role(p) != Role::Wrapper || !kinds::is_shell(p) {
        return None;
    }
    let (command, script_path) = shell_operands(&p.argv);
    if let Some(text) = command {
        let keyword = loop_keyword(&text)?;
        return Some(format!("a shell loop (`{keyword}`) in its -c command"));
    }
    let path = script_path?;
    let text = script(p, &path)?;
    let keyword = loop_keyword(&text)?;
    Some(format!(
        "a shell loop (`{keyword}`) in its script {}",
        words::command_for_a_person([path.as_bytes()])
    ))
}

/// What a shell runs: the command of `-c` (also in a cluster, `-lc`), or else its script, the
/// first operand — past options, and past the value of `-o` / `-O` (`bash -o pipefail x.sh`),
/// `--rcfile`, `--init-file`. With `-s` it reads its commands from stdin: neither.
fn shell_operands(argv: &[Vec<u8>]) -> (Option<String>, Option<String>) {
    let mut args = argv
        .iter()
        .skip(1)
        .map(|a| String::from_utf8_lossy(a).into_owned());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--" => return (None, args.next()),
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => {
                args.next();
            }
            _ if a.starts_with("--") => {}
            _ if a.starts_with('-') => {
                if a.contains('c') {
                    return (args.next(), None);
                }
                if a.contains('s') {
                    // Commands from stdin: the operands are its arguments, not a script.
                    return (None, None);
                }
            }
            _ if a.starts_with('+') => {}
            _ => return (None, Some(a)),
        }
    }
    (None, None)
}

/// The loop keyword (`while`, `until`) of a shell text, at a command's start: the text's
/// first word, or the first after `;`, `&`, `|`, `(`, `{`, a newline, `do`, `then`, `else` or
/// `!`. Comments and quoted text are skipped. A `for` loop ends by itself, so it is not one.
pub fn loop_keyword(text: &str) -> Option<&'static str> {
    let mut at_start = true;
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    // Ends the word being read: a keyword where a command starts, else whether the next
    // word starts one (after `do`, `then`, `else`, `!`).
    let end = |word: &mut String, at_start: &mut bool| -> Option<&'static str> {
        if word.is_empty() {
            return None;
        }
        let found = match word.as_str() {
            "while" if *at_start => Some("while"),
            "until" if *at_start => Some("until"),
            _ => None,
        };
        *at_start = matches!(word.as_str(), "do" | "then" | "else" | "!");
        word.clear();
        found
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                // A quoted string is one word's text, never a keyword.
                word.push('x');
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                }
            }
            '#' if word.is_empty() => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        break;
                    }
                }
                at_start = true;
            }
            ';' | '&' | '|' | '(' | ')' | '{' | '}' | '\n' => {
                if let Some(k) = end(&mut word, &mut at_start) {
                    return Some(k);
                }
                at_start = true;
            }
            c if c.is_whitespace() => {
                if let Some(k) = end(&mut word, &mut at_start) {
                    return Some(k);
                }
            }
            c => word.push(c),
        }
    }
    end(&mut word, &mut at_start)
}
