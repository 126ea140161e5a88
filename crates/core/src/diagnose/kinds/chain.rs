//! A resource's kind from its launch chain (docs/decisions.md, "The resource's kind"): for a tool
//! that rewrote its own title, and for a package manager's dev script.
//!
//! Everything here reads argv structure — a title split into words, a wrapper shell's
//! `-c` command split into words, a package manager's `run <script>` — and never searches the
//! joined command line. The kind of a whole tree is decided by [`recognise`], in this order:
//!
//! 1. a member's own argv names a tool (`node …/vite.js`);
//! 2. a member is a wrapper shell whose command is one plain command naming a tool
//!    (`sh -c 'webpack serve'`, which npm runs for `"dev": "webpack serve"`, while webpack-cli
//!    sets `process.title = "webpack"` and its own argv loses `serve`);
//! 3. a member's title is one a tool is known to give itself (Puma's
//!    `puma 5.6.5 (tcp://127.0.0.1:3000) [app]`, written over the argv of `rails server`) —
//!    only in a tree with no command left: a title is a weaker sign than a command (it does not
//!    tell `rails server` from a production `puma`), and such a tree is never green anyway
//!    (it cannot be restarted);
//! 4. otherwise, inside a project, how it was launched (`launch.rs`): a script, a target, the
//!    project's own toolchain, a build tool's run, a dev subcommand or flag.

use super::launch::{self, Launch, Seen};
use super::{basename, classify, is_titled_launcher};
use crate::probe::{Pid, ProcessInfo};
pub use crate::words::argv::is_title;

/// Titles tools write over their argv: the first word of the title, then a version, names the
/// kind. Puma does it in the very process that ran `rails server`.
const TITLES: &[(&str, &str)] = &[("puma", "puma")];

/// How a kind was recognised, for the evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// From the member's own argv.
    Argv,
    /// From the command of the wrapper shell that started the tool.
    Launcher {
        /// The shell's command, as words joined by spaces (`webpack serve`).
        command: String,
    },
    /// From the title the process gave itself.
    Title {
        /// The title's words joined by spaces, padding dropped
        /// (`puma 5.6.5 (tcp://127.0.0.1:3000) [app]`).
        title: String,
    },
    /// Known by how it was launched (`launch.rs`), inside a project: only a quiet life lets
    /// it be green (`rules::quiet_life`).
    Launch(Launch),
}

/// A tree's kind, the member it was read from, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    /// The kind the card shows (`"vite"`; known by launch, the program's own name).
    pub kind: String,
    /// The member it was read from.
    pub pid: Pid,
    /// How it was read, for the evidence's words and source.
    pub how: How,
}

/// The kind that the tree `members` (root first) is, if the table (through a member's argv,
/// its launcher's command or its title) knows it.
pub fn recognise(members: &[&ProcessInfo]) -> Option<Recognised> {
    let found = |kind: &str, p: &ProcessInfo, how| Recognised {
        kind: kind.to_owned(),
        pid: p.identity.pid,
        how,
    };
    let own = members
        .iter()
        .find_map(|p| classify(&p.argv).map(|k| found(k, p, How::Argv)));
    own.or_else(|| {
        members.iter().find_map(|p| {
            let words = shell_command(&p.argv)?;
            let kind = classify(&words)?;
            let command = lossy_words(&words);
            Some(found(kind, p, How::Launcher { command }))
        })
    })
    .or_else(|| {
        let nodes = nodes(members);
        restart_target(&nodes, 0).is_err().then_some(())?;
        members.iter().find_map(|p| {
            let kind = title_kind(&p.argv)?;
            let title = lossy_words(&title_words(&p.argv)?);
            Some(found(kind, p, How::Title { title }))
        })
    })
}

/// A tree the table does not know, known by how it was launched in `project` (`launch.rs`):
/// its kind is the program's own name — the first listener's (`listener`), else the member
/// that made it known.
///
/// Only the launch chain of a listener counts (`listeners`: the members that hold one): a
/// listening `python app.py` is not known by the `npm run watch` it runs as a child. A tree
/// with no listener is judged by every member.
pub fn by_launch(
    members: &[Seen],
    project: &std::path::Path,
    (listener, listeners): (Option<&ProcessInfo>, &[Pid]),
    production: &dyn Fn(Pid) -> bool,
) -> Option<Recognised> {
    let rows: Vec<&ProcessInfo> = members.iter().map(|m| m.p).collect();
    let chain: Vec<Seen> = members
        .iter()
        .filter(|m| listeners.is_empty() || leads_to_a_listener(&rows, m.p.identity.pid, listeners))
        .copied()
        .collect();
    let (pid, how) = launch::known(&chain, project, production)?;
    // The listener's program, else the one that made it known (a reloader's inline worker
    // names none).
    let known = members
        .iter()
        .find(|m| m.p.identity.pid == pid)
        .map(|m| m.p);
    // A portless tree is named by its watcher (`vitest --watch` under `npm run test:watch`).
    let watcher = listeners
        .is_empty()
        .then(|| members.iter().map(|m| m.p).find(|p| launch::watcher(p)))
        .flatten();
    let kind = [listener, watcher, known]
        .into_iter()
        .flatten()
        .find_map(launch::kind_name)
        .unwrap_or_else(|| "unknown".to_owned());
    Some(Recognised {
        kind,
        pid,
        how: How::Launch(how),
    })
}

/// Whether `pid` is, or is an ancestor within `members` of, one of `listeners`.
fn leads_to_a_listener(members: &[&ProcessInfo], pid: Pid, listeners: &[Pid]) -> bool {
    let parent = |p: Pid| members.iter().find(|m| m.identity.pid == p).map(|m| m.ppid);
    listeners.iter().any(|&l| {
        let mut cur = Some(l);
        // A tree has no cycles; the bound only guards against a table that does.
        for _ in 0..=members.len() {
            match cur {
                Some(c) if c == pid => return true,
                Some(c) => cur = parent(c),
                None => return false,
            }
        }
        false
    })
}

/// One process of a tree, as the restart rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// Its process id.
    pub pid: Pid,
    /// Its parent's pid: how the rule finds its children.
    pub ppid: Pid,
    /// What its argv is to a restart.
    pub argv: ArgvIs,
}

/// What a process's argv is to a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgvIs {
    /// Its command: replaying it runs the process again.
    Command,
    /// A launcher's title ("npm run dev"): the launcher started what runs below it.
    LauncherTitle,
    /// Any other title (Puma's, a server's `process.title`): the command is lost.
    Title,
}

impl ArgvIs {
    /// What `argv` is: a command, a launcher's title ([`is_titled_launcher`]) or another
    /// title ([`is_title`]).
    pub fn of<A: AsRef<[u8]>>(argv: &[A]) -> ArgvIs {
        if !is_title(argv) {
            ArgvIs::Command
        } else if argv
            .first()
            .is_some_and(|t| is_titled_launcher(&String::from_utf8_lossy(t.as_ref())))
        {
            ArgvIs::LauncherTitle
        } else {
            ArgvIs::Title
        }
    }
}

fn nodes(members: &[&ProcessInfo]) -> Vec<Node> {
    members
        .iter()
        .map(|p| Node {
            pid: p.identity.pid,
            ppid: p.ppid,
            argv: ArgvIs::of(&p.argv),
        })
        .collect()
}

/// Why no member of a tree can bring it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTarget {
    /// The member at this index wrote a title over its argv, and it is no launcher's.
    Lost(usize),
    /// The member at this index is a launcher that retitled itself and runs several
    /// processes: replaying one of them would bring back only part of the tree.
    Several(usize),
}

/// The member a restart replays (an index into `nodes`): the root, or — when the root is a
/// launcher that wrote a title over its argv (npm's "npm run dev") — its only child, and so on
/// down, until a member whose argv is still its command (npm's `sh -c`). That member is an
/// ancestor of every member but the retitled launchers above it, so replaying it brings the
/// whole tree back. Any other title (Puma's, over the argv of `rails server`) is the server
/// itself, whose command is lost: replaying a child of it (Puma's tailwind watcher) would
/// bring back the wrong thing.
pub fn restart_target(nodes: &[Node], root: usize) -> Result<usize, NoTarget> {
    let mut cur = root;
    for _ in 0..nodes.len() {
        let node = nodes[cur];
        match node.argv {
            ArgvIs::Command => return Ok(cur),
            ArgvIs::Title => return Err(NoTarget::Lost(cur)),
            ArgvIs::LauncherTitle => {}
        }
        let mut children = (0..nodes.len()).filter(|&i| nodes[i].ppid == node.pid && i != cur);
        match (children.next(), children.next()) {
            (Some(only), None) => cur = only,
            (None, _) => return Err(NoTarget::Lost(cur)),
            (Some(_), Some(_)) => return Err(NoTarget::Several(cur)),
        }
    }
    Err(NoTarget::Lost(cur))
}

/// [`restart_target`] over a tree as the scan read it, root first.
pub fn tree_restart_target(members: &[&ProcessInfo]) -> Result<usize, NoTarget> {
    if members.is_empty() {
        return Err(NoTarget::Lost(0));
    }
    restart_target(&nodes(members), 0)
}

/// The words of a title (`"npm run dev"` → `npm`, `run`, `dev`), without its padding.
pub(crate) fn title_words(argv: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if !is_title(argv) {
        return None;
    }
    let words: Vec<Vec<u8>> = argv
        .iter()
        .flat_map(|a| a.split(|b| b.is_ascii_whitespace()))
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    (!words.is_empty()).then_some(words)
}

/// `puma 5.6.5 (tcp://…) [app]`: a known title word, then a version.
fn title_kind(argv: &[Vec<u8>]) -> Option<&'static str> {
    let words = title_words(argv)?;
    let version = words.get(1)?;
    let is_version = version.first().is_some_and(u8::is_ascii_digit)
        && version.iter().all(|b| b.is_ascii_digit() || *b == b'.');
    let first = String::from_utf8_lossy(&words[0]);
    TITLES
        .iter()
        .find(|(word, _)| *word == first && is_version)
        .map(|(_, kind)| *kind)
}

/// The words of the one plain command a wrapper shell runs: `sh -c 'webpack serve'` →
/// `webpack`, `serve` (npm exec quotes each word: `sh -c "'webpack-dev-server'"`). Leading
/// variable assignments (`NODE_ENV=development next dev`) and `exec` / `env` / `cross-env` /
/// `npx` are passed over. Anything else a shell would interpret — `$`, `;`, `&&`, pipes,
/// redirections, globs, double quotes, backslashes — makes it no plain command: `None`.
fn shell_command(argv: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    // Shells whose quoting is POSIX's (fish, nu, pwsh, csh quote otherwise).
    const POSIX: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];
    if !POSIX.contains(&basename(argv.first()?).as_str()) {
        return None;
    }
    // Shell flags may come before `-c` (`sh -e -c …`), never arguments; an interactive shell
    // (`-i`) expands aliases, so its words are not the command.
    let c = argv[1..].iter().position(|a| a.as_slice() == b"-c")? + 1;
    if !argv[1..c]
        .iter()
        .all(|a| a.starts_with(b"-") && (a.starts_with(b"--") || !a.contains(&b'i')))
    {
        return None;
    }
    let words = plain_words(argv.get(c + 1)?)?;
    const PASSED_OVER: &[&[u8]] = &[b"exec", b"env", b"cross-env", b"npx", b"bunx", b"pnpx"];
    let first = words
        .iter()
        .position(|w| !is_assignment(w) && !PASSED_OVER.contains(&w.as_slice()))?;
    Some(words[first..].to_vec())
}

/// The leading variable assignments of the plain command a wrapper shell runs
/// (`sh -c 'NODE_ENV=production node server.js'` → `NODE_ENV=production`); none for anything
/// else.
pub(crate) fn shell_assignments(argv: &[Vec<u8>]) -> Vec<Vec<u8>> {
    const POSIX: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    if !POSIX.contains(&basename(first).as_str()) {
        return Vec::new();
    }
    let Some(c) = argv.iter().position(|a| a.as_slice() == b"-c") else {
        return Vec::new();
    };
    let words = argv
        .get(c + 1)
        .and_then(|s| plain_words(s))
        .unwrap_or_default();
    words
        .into_iter()
        .skip_while(|w| !is_assignment(w))
        .take_while(|w| is_assignment(w))
        .collect()
}

/// A script's words, when it is plain words (letters, digits, `_-./:=@%+,`) and single-quoted
/// parts, which a shell takes literally; `None` for anything a shell would interpret.
fn plain_words(script: &[u8]) -> Option<Vec<Vec<u8>>> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b);
    let mut words = Vec::new();
    let mut word: Option<Vec<u8>> = None;
    let mut bytes = script.iter().copied();
    while let Some(b) = bytes.next() {
        match b {
            b' ' | b'\t' => words.extend(word.take()),
            b'\'' => {
                let w = word.get_or_insert_with(Vec::new);
                loop {
                    match bytes.next()? {
                        b'\'' => break,
                        q => w.push(q),
                    }
                }
            }
            _ if plain(b) => word.get_or_insert_with(Vec::new).push(b),
            _ => return None,
        }
    }
    words.extend(word);
    Some(words)
}

/// `NAME=value`, as a shell reads a word before the command.
fn is_assignment(word: &[u8]) -> bool {
    let Some(eq) = word.iter().position(|b| *b == b'=') else {
        return false;
    };
    let name = &word[..eq];
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

fn lossy_words(words: &[Vec<u8>]) -> String {
    words
        .iter()
        .map(|w| String::from_utf8_lossy(w))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
pub(crate) mod tests;
