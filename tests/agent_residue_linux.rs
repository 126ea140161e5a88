//! Agent residue with real components (issue 45, docs/real-tools.md "Agent residue"): real MCP
//! servers from npm and PyPI started over stdio by a real agent (the official MCP SDK's
//! `stdio_client`), real language servers started by a real editor (LSP over stdio), and
//! Debian's Chromium driven by playwright-core — each parent then killed (SIGKILL, by identity).
//!
//! Under a live agent or editor a server has no card. Once the parent is killed, what the server
//! does is read from `/proc`: it exits by itself (the servers watch their stdin's end of file,
//! the language servers their editor's pid too) and Pier shows nothing; or it stays, orphaned —
//! here when a second writer holds its pipe open, and for a language server whose editor gave
//! no pid — and its card is of its kind, green when idle, stopped whole by `pier stop ID` with
//! true outcomes, and `pier restart ID` is refused with a sentence (its client starts it).
//! Chromium driven through its pipe is red while its driver lives, and exits with it; Chromium
//! on a debugging port is red while its driver is connected, and stays once the driver is
//! killed: green when idle, stopped whole.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test agent_residue_linux`.
#![cfg(target_os = "linux")]

mod agent_residue;
mod common;
mod real_tools;

use std::path::Path;

use agent_residue::{agent, editor, hold_pipes, judge, left_behind, project, tools, Parent};
use common::{Sandbox, Started};
use real_tools::truth;

/// How long a server is watched after its parent died: they exit within 2 s (facts).
const WATCH: u64 = 6;
/// How long a card may take to settle (idle needs a few quiet samples).
const SETTLE: u64 = 60;

/// How a server is left: by its killed parent alone, or with a second writer on its pipes.
#[derive(Clone, Copy, PartialEq)]
enum Left {
    Alone,
    Held,
}

/// The steps after the parent started `tree`: no card while it lives; killed; then either the
/// tree exits by itself and Pier shows nothing, or it stays and is residue of `kind`.
fn left_by_killed_parent(name: &str, sb: &Sandbox, mut parent: Parent, kind: &str, left: Left) {
    let tree = parent.descendants();
    assert!(!tree.is_empty(), "{name}: the parent started nothing");
    tree.iter().for_each(|p| sb.own(*p));
    let mut all = vec![parent.who];
    all.extend(&tree);
    step(
        name,
        "no card under its live parent",
        judge::no_card(sb, &all),
    );
    let held = (left == Left::Held).then(|| hold_pipes(&tree));
    parent.kill();
    let stays = left_behind(&tree, WATCH);
    eprintln!(
        "{name}: its parent killed, the server {} (pipes held: {})",
        if stays {
            "stays, orphaned"
        } else {
            "exits by itself"
        },
        held.is_some()
    );
    if left == Left::Held {
        assert!(
            stays,
            "{name}: with its pipes held open the server should stay"
        );
    }
    if !stays {
        step(name, "gone", agent_residue::gone(&tree, 1));
        step(name, "Pier shows nothing", judge::nothing(sb));
        return;
    }
    let id = residue(name, sb, &tree, kind);
    step(name, "restart refused", judge::restart_refused(sb, &id));
}

/// An orphaned, idle tree: its card (kind, green), then `pier stop ID`. Answers the id.
fn residue(name: &str, sb: &Sandbox, tree: &[Started], kind: &str) -> String {
    let id = step(
        name,
        "green card",
        judge::judged(sb, tree, kind, "green", SETTLE),
    );
    step(name, "stop", judge::stop(sb, &id, tree));
    id
}

/// A step's result: its detail printed, or the test failed naming the step.
fn step<T: std::fmt::Debug>(name: &str, what: &str, r: Result<T, String>) -> T {
    match r {
        Ok(v) => {
            eprintln!("{name}: {what}: ok {v:?}");
            v
        }
        Err(e) => panic!("{name}: {what}: {e}"),
    }
}

// --- MCP servers, started by an agent -----------------------------------------------------------

fn mcp_from_npm(name: &str, left: Left) {
    let Some(cache) = tools(
        name,
        &["npm/mcp-servers/node_modules", "venv/mcp/bin/python"],
    ) else {
        return;
    };
    let _lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let dir = project(&sb, "agent", &cache, Some("mcp-servers"), &[]);
    let (a, listed) = agent(
        &cache,
        &dir,
        &["npx", "-y", "@modelcontextprotocol/server-everything"],
    );
    assert!(
        listed.iter().any(|t| t == "echo"),
        "{name}: tools {listed:?}"
    );
    left_by_killed_parent(name, &sb, a, "mcp-server", left);
}

fn mcp_from_pypi(name: &str, left: Left) {
    let need = [
        "venv/mcp-servers/bin/mcp-server-time",
        "venv/mcp/bin/python",
    ];
    let Some(cache) = tools(name, &need) else {
        return;
    };
    let _lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let dir = project(&sb, "agent", &cache, None, &[]);
    let server = cache.join(need[0]);
    let (a, listed) = agent(&cache, &dir, &[server.to_str().unwrap()]);
    assert!(
        listed.iter().any(|t| t == "get_current_time"),
        "{name}: tools {listed:?}"
    );
    left_by_killed_parent(name, &sb, a, "mcp-server", left);
}

#[test]
fn npm_mcp_server_left_by_a_killed_agent() {
    mcp_from_npm("npm_mcp_server_left_by_a_killed_agent", Left::Alone);
}

#[test]
fn npm_mcp_server_held_open_after_its_agent_is_residue() {
    mcp_from_npm(
        "npm_mcp_server_held_open_after_its_agent_is_residue",
        Left::Held,
    );
}

#[test]
fn pypi_mcp_server_left_by_a_killed_agent() {
    mcp_from_pypi("pypi_mcp_server_left_by_a_killed_agent", Left::Alone);
}

#[test]
fn pypi_mcp_server_held_open_after_its_agent_is_residue() {
    mcp_from_pypi(
        "pypi_mcp_server_held_open_after_its_agent_is_residue",
        Left::Held,
    );
}

/// Still attached: a filesystem server under its live agent, across several scans, and after
/// a call; never a card. Closing the agent's session ends it, and nothing is left.
#[test]
fn mcp_server_under_a_live_agent_has_no_card() {
    let name = "mcp_server_under_a_live_agent_has_no_card";
    let Some(cache) = tools(
        name,
        &["npm/mcp-servers/node_modules", "venv/mcp/bin/python"],
    ) else {
        return;
    };
    let _lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let dir = project(&sb, "agent", &cache, Some("mcp-servers"), &[]);
    let bin = dir.join("node_modules/.bin/mcp-server-filesystem");
    let (mut a, listed) = agent(
        &cache,
        &dir,
        &["node", bin.to_str().unwrap(), dir.to_str().unwrap()],
    );
    assert!(
        listed.iter().any(|t| t == "list_directory"),
        "{name}: tools {listed:?}"
    );
    let tree = truth::tree(a.who);
    tree.iter().for_each(|p| sb.own(*p));
    for _ in 0..3 {
        step(
            name,
            "no card under its live agent",
            judge::no_card(&sb, &tree),
        );
        let path = dir.to_str().unwrap();
        a.say(&format!(
            r#"{{"call": "list_directory", "args": {{"path": "{path}"}}}}"#
        ));
        let answer = a.line();
        assert_eq!(answer["is_error"], false, "{name}: {answer}");
    }
}

// --- language servers, started by an editor ----------------------------------------------------

struct Lsp {
    bin: &'static str,
    file: &'static str,
    text: &'static str,
    language: &'static str,
}

const TSLS: Lsp = Lsp {
    bin: "typescript-language-server",
    file: "index.ts",
    text: "export const answer: number = 42;\n",
    language: "typescript",
};

const PYRIGHT: Lsp = Lsp {
    bin: "pyright-langserver",
    file: "main.py",
    text: "answer: int = 42\n",
    language: "python",
};

/// An editor opens a file of `lsp`'s language with the server over stdio; `pid_known`: the
/// editor names itself in `initialize` (`processId`), as editors do.
fn language_server(name: &str, lsp: &Lsp, pid_known: bool, left: Left) {
    let Some(cache) = tools(name, &["npm/language-servers/node_modules"]) else {
        return;
    };
    let _lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let dir = project(&sb, "editor", &cache, Some("language-servers"), &[]);
    std::fs::write(dir.join(lsp.file), lsp.text).unwrap();
    std::fs::write(
        dir.join("tsconfig.json"),
        "{\"compilerOptions\": {\"strict\": true}}\n",
    )
    .unwrap();
    let bin = format!("node_modules/.bin/{}", lsp.bin);
    let (e, _server) = editor(
        &dir,
        lsp.file,
        lsp.language,
        pid_known,
        &["node", &bin, "--stdio"],
    );
    left_by_killed_parent(name, &sb, e, "language-server", left);
}

#[test]
fn typescript_language_server_left_by_a_killed_editor() {
    let name = "typescript_language_server_left_by_a_killed_editor";
    language_server(name, &TSLS, true, Left::Alone);
}

#[test]
fn pyright_left_by_a_killed_editor() {
    language_server(
        "pyright_left_by_a_killed_editor",
        &PYRIGHT,
        true,
        Left::Alone,
    );
}

#[test]
fn typescript_language_server_without_its_editor_pid_held_open_is_residue() {
    let name = "typescript_language_server_without_its_editor_pid_held_open_is_residue";
    language_server(name, &TSLS, false, Left::Held);
}

#[test]
fn pyright_without_its_editor_pid_held_open_is_residue() {
    let name = "pyright_without_its_editor_pid_held_open_is_residue";
    language_server(name, &PYRIGHT, false, Left::Held);
}

// --- Chromium driven by playwright-core ---------------------------------------------------------

/// The Chromium the driver started: its child whose program is Chromium, and that one's tree.
fn browser_of(driver: &Parent) -> Vec<Started> {
    let root = truth::children(driver.who.pid)
        .into_iter()
        .find(|c| truth::command(c.pid).starts_with("/usr/lib/chromium/chromium"))
        .expect("the driver started Chromium");
    truth::tree(root)
}

fn driven(name: &str, script: &str) -> Option<(Sandbox, Parent, Vec<Started>, std::fs::File)> {
    let cache = tools(name, &["npm/playwright/node_modules"])?;
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "{name}: run scripts/real-tools.sh (chromium)"
    );
    let lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let dir = project(&sb, "e2e", &cache, Some("playwright"), &[script]);
    let mut driver = Parent::start(&["node", script], &dir, &[]);
    let ready = driver.line();
    let browser = browser_of(&driver);
    browser.iter().for_each(|p| sb.own(*p));
    eprintln!(
        "{name}: driving ({ready}), Chromium {} with {} processes",
        browser[0].pid,
        browser.len()
    );
    Some((sb, driver, browser, lock))
}

/// Playwright's own way: the pipe. Red while the driver drives; once the driver is killed,
/// Chromium's fate is read from `/proc` (it exits: facts), and what stays is judged.
#[test]
fn playwright_through_the_pipe_is_red_while_driven() {
    let name = "playwright_through_the_pipe_is_red_while_driven";
    let Some((sb, mut driver, browser, _lock)) = driven(name, "pipe_driver.js") else {
        return;
    };
    step(
        name,
        "red while driven",
        judge::judged(&sb, &browser, "headless-browser", "red", SETTLE),
    );
    driver.kill();
    if left_behind(&browser, WATCH) {
        eprintln!("{name}: Chromium stays after its driver");
        residue(name, &sb, &browser, "headless-browser");
    } else {
        eprintln!("{name}: Chromium exits with its driver");
        step(name, "Pier shows nothing", judge::nothing(&sb));
    }
}

/// Puppeteer's way: a debugging port, the driver a TCP client of it. Red while connected; the
/// driver killed, Chromium stays orphaned with its port and no client: green, stopped whole.
#[test]
fn chromium_on_a_debugging_port_is_red_with_its_driver_and_residue_after() {
    let name = "chromium_on_a_debugging_port_is_red_with_its_driver_and_residue_after";
    let Some((sb, mut driver, browser, _lock)) = driven(name, "port_driver.js") else {
        return;
    };
    step(
        name,
        "red while connected",
        judge::judged(&sb, &browser, "headless-browser", "red", SETTLE),
    );
    driver.kill();
    assert!(
        left_behind(&browser, WATCH),
        "{name}: Chromium exited with its driver"
    );
    let live: Vec<Started> = browser
        .iter()
        .copied()
        .filter(|p| truth::runs(*p))
        .collect();
    residue(name, &sb, &live, "headless-browser");
}
