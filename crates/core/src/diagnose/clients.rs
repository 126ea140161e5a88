//! What program a connection's client is: its name and what it likely is (a browser, an HTTP
//! client, a test runner, …), so a card names `curl`, not a pid (docs/design.md §2, "every
//! reason names the next step"). The table is data, in one place; a program is matched by its
//! executable's file name, or for an interpreter by its script's, or by its kernel name —
//! never by a substring of the joined command line (`grep chrome` is no browser).

use super::kinds::{basename, program_and_args};
use crate::model::client::{Client, ClientKind};
use crate::probe::ProcessInfo;
use crate::words;

/// Programs by file name, and what each likely is.
const CLIENTS: &[(&str, ClientKind)] = &[
    ("chrome", ClientKind::Browser),
    ("chromium", ClientKind::Browser),
    ("chromium-browser", ClientKind::Browser),
    ("google-chrome", ClientKind::Browser),
    ("Google Chrome", ClientKind::Browser),
    ("Google Chrome Helper", ClientKind::Browser),
    ("Chromium Helper", ClientKind::Browser),
    ("firefox", ClientKind::Browser),
    ("firefox-esr", ClientKind::Browser),
    ("firefox-bin", ClientKind::Browser),
    ("Safari", ClientKind::Browser),
    ("safari", ClientKind::Browser),
    ("com.apple.WebKit.Networking", ClientKind::Browser),
    ("msedge", ClientKind::Browser),
    ("Microsoft Edge", ClientKind::Browser),
    ("Microsoft Edge Helper", ClientKind::Browser),
    ("brave", ClientKind::Browser),
    ("brave-browser", ClientKind::Browser),
    ("Brave Browser Helper", ClientKind::Browser),
    ("opera", ClientKind::Browser),
    ("vivaldi", ClientKind::Browser),
    ("curl", ClientKind::HttpClient),
    ("wget", ClientKind::HttpClient),
    ("http", ClientKind::HttpClient),
    ("https", ClientKind::HttpClient),
    ("httpie", ClientKind::HttpClient),
    ("xh", ClientKind::HttpClient),
    ("xhs", ClientKind::HttpClient),
    ("ab", ClientKind::HttpClient),
    ("hey", ClientKind::HttpClient),
    ("wrk", ClientKind::HttpClient),
    ("playwright", ClientKind::TestRunner),
    ("jest", ClientKind::TestRunner),
    ("vitest", ClientKind::TestRunner),
    ("pytest", ClientKind::TestRunner),
    ("py.test", ClientKind::TestRunner),
    ("cypress", ClientKind::TestRunner),
    ("Cypress", ClientKind::TestRunner),
    ("mocha", ClientKind::TestRunner),
    ("karma", ClientKind::TestRunner),
    ("rspec", ClientKind::TestRunner),
    ("phpunit", ClientKind::TestRunner),
    ("k6", ClientKind::TestRunner),
    ("locust", ClientKind::TestRunner),
    ("psql", ClientKind::DatabaseClient),
    ("pgcli", ClientKind::DatabaseClient),
    ("mysql", ClientKind::DatabaseClient),
    ("mycli", ClientKind::DatabaseClient),
    ("mariadb", ClientKind::DatabaseClient),
    ("mongosh", ClientKind::DatabaseClient),
    ("mongo", ClientKind::DatabaseClient),
    ("redis-cli", ClientKind::DatabaseClient),
    ("sqlite3", ClientKind::DatabaseClient),
    ("code", ClientKind::Editor),
    ("Code Helper", ClientKind::Editor),
    ("cursor", ClientKind::Editor),
    ("Cursor Helper", ClientKind::Editor),
    ("codium", ClientKind::Editor),
    ("nvim", ClientKind::Editor),
    ("vim", ClientKind::Editor),
    ("emacs", ClientKind::Editor),
    ("zed", ClientKind::Editor),
    ("idea", ClientKind::Editor),
    ("pycharm", ClientKind::Editor),
    ("webstorm", ClientKind::Editor),
    ("goland", ClientKind::Editor),
    ("rust-analyzer", ClientKind::Editor),
    ("typescript-language-server", ClientKind::Editor),
    ("tsserver", ClientKind::Editor),
    ("gopls", ClientKind::Editor),
    ("pier", ClientKind::Pier),
    ("pier-app", ClientKind::Pier),
];

/// A name as the table keys it: a script's `.js`/`.py`/`.mjs`/`.cjs` dropped, and a macOS
/// helper's role in brackets (`Google Chrome Helper (Renderer)`) dropped.
fn key(name: &str) -> &str {
    let name = name.split(" (").next().unwrap_or(name);
    [".js", ".mjs", ".cjs", ".py"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
}

/// What `name` (a program's or a script's file name) likely is.
fn kind_of(name: &str) -> Option<ClientKind> {
    let k = key(name);
    CLIENTS.iter().find(|(n, _)| *n == k).map(|(_, kind)| *kind)
}

/// The program `p` runs and what it likely is. Why the order: a script an interpreter runs is
/// the program (`python -m pytest`, `node …/vitest.mjs`); then the executable's file name;
/// then the kernel's name (a program that rewrote its argv keeps it). The first name the
/// table knows decides; with none, the script's or the executable's name is shown as an
/// unknown program.
pub fn program_of(p: &ProcessInfo) -> (String, ClientKind) {
    let script = program_and_args(&p.argv).map(|(program, _)| program);
    let exe = p.argv.first().map(|a| basename(a));
    let names: Vec<String> = [script, exe, Some(p.comm.clone())]
        .into_iter()
        .flatten()
        .filter(|n| !n.is_empty())
        .collect();
    for name in &names {
        if let Some(kind) = kind_of(name) {
            return (key(name).to_owned(), kind);
        }
    }
    let shown = names.first().cloned().unwrap_or_else(|| p.comm.clone());
    (shown, ClientKind::Unknown)
}

/// The client holding the other end of a connection (`peer_pid`), named from the process
/// table (`row`: a pid's row, `None` when it was not read) as user `uid` sees it.
pub fn client_at<'t>(
    peer_pid: Option<crate::probe::Pid>,
    row: impl Fn(crate::probe::Pid) -> Option<&'t ProcessInfo>,
    uid: u32,
) -> Option<Client> {
    peer_pid.and_then(row).map(|p| client_of(p, uid))
}

/// The client `p` is, as a card names it. Another user's process is named by its kernel name
/// only: its command line is that user's business (and may hold a secret).
pub fn client_of(p: &ProcessInfo, uid: u32) -> Client {
    let other_user = p.uid != uid;
    let (program, likely) = if other_user {
        (
            p.comm.clone(),
            kind_of(&p.comm).unwrap_or(ClientKind::Unknown),
        )
    } else {
        program_of(p)
    };
    let command = (!other_user && !p.argv.is_empty())
        .then(|| words::short_command(p.argv.iter().map(Vec::as_slice)));
    Client {
        pid: p.identity.pid,
        program,
        command,
        uid: p.uid,
        other_user,
        likely,
    }
}

#[cfg(test)]
mod tests;
