//! Agent residue through the whole diagnosis (docs/design.md §2, "Agent residue"): a portless
//! tree its client started is a candidate only once orphaned; one that listens follows the
//! usual rules.

use super::tests::{has, only, run, APP};
use crate::diagnose::kinds::chain::tests::titled;
use crate::model::card::{EvidenceKind, Level, Resource};
use crate::probe::fake::{process, FakeProbe};
use crate::probe::{Pid, ProcessInfo};

fn message(r: &Resource, kind: EvidenceKind) -> String {
    r.evidence
        .iter()
        .find(|e| e.kind == kind)
        .map(|e| e.message.clone())
        .unwrap_or_else(|| panic!("no {kind:?} evidence: {r:#?}"))
}

/// `npx -y @modelcontextprotocol/server-everything` as an agent starts it over stdio under
/// `parent`: npm retitles itself, runs the package's bin through `sh -c`.
fn mcp_server(parent: Pid) -> FakeProbe {
    FakeProbe::default()
        .with(
            titled(
                100,
                parent,
                "npm exec @modelcontextprotocol/server-everything",
            ),
            APP,
        )
        .with(
            process(101, 100, &["sh", "-c", "mcp-server-everything"]),
            APP,
        )
        .with(
            process(
                102,
                101,
                &[
                    "node",
                    "/home/u/.npm/_npx/1/node_modules/.bin/mcp-server-everything",
                ],
            ),
            APP,
        )
}

/// The agent: a live process of no role Pier knows, as Claude Code's `node …/claude` is.
fn agent() -> ProcessInfo {
    process(50, 1, &["node", "/home/u/.local/bin/claude"])
}

#[test]
fn an_orphaned_portless_mcp_server_has_a_card_that_names_it() {
    let scan = run(&mcp_server(1));
    let r = only(&scan);
    assert_eq!((r.kind.as_str(), r.root.pid), ("mcp-server", 100), "{r:#?}");
    assert!(has(r, EvidenceKind::Orphaned), "{r:#?}");
    assert_eq!(
        r.level,
        Level::Green,
        "every rule of a green card, unchanged: {r:#?}"
    );
    let said = message(r, EvidenceKind::ToolKind);
    assert_eq!(
        said,
        "an MCP server: @modelcontextprotocol/server-everything (pid 100); its agent, editor or \
         test run starts a new one when it needs one"
    );
}

#[test]
fn a_portless_mcp_server_under_its_live_agent_has_no_card() {
    let probe = mcp_server(50).with(agent(), "/home/u");
    let scan = run(&probe);
    assert!(scan.projects.is_empty(), "{scan:#?}");
}

#[test]
fn a_listening_mcp_server_under_its_live_agent_follows_the_usual_rules() {
    let probe = mcp_server(50)
        .with(agent(), "/home/u")
        .listen("127.0.0.1:3001", 102);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.kind, "mcp-server");
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    assert!(has(r, EvidenceKind::NotOrphaned));
}

#[test]
fn a_language_server_is_residue_only_once_its_editor_is_gone() {
    let server = |parent| {
        process(
            100,
            parent,
            &[
                "node",
                "/home/u/.local/bin/typescript-language-server",
                "--stdio",
            ],
        )
    };
    let editor = process(50, 1, &["nvim", "src/main.ts"]);
    let live = FakeProbe::default()
        .with(editor, APP)
        .with(server(50), APP)
        .with(
            process(
                101,
                100,
                &["node", "/p/node_modules/typescript/lib/tsserver.js"],
            ),
            APP,
        );
    assert!(run(&live).projects.is_empty(), "under a live editor");

    let gone = FakeProbe::default().with(server(1), APP);
    let scan = run(&gone);
    let r = only(&scan);
    assert_eq!(r.kind, "language-server");
    assert_eq!(
        message(r, EvidenceKind::ToolKind),
        "a language server: typescript-language-server (pid 100); its agent, editor or test run \
         starts a new one when it needs one"
    );
    assert_eq!(r.level, Level::Green, "{r:#?}");
}

#[test]
fn a_portless_headless_browser_is_residue_only_once_its_test_run_is_gone_unless_driven() {
    let browser = |parent, flag: &str| {
        let chrome = "/r/ms-playwright/chromium-1140/chrome-linux/chrome";
        FakeProbe::default()
            .with(process(100, parent, &[chrome, "--headless", flag]), APP)
            .with(process(101, 100, &[chrome, "--type=renderer"]), APP)
    };
    let test_run = || process(50, 1, &["node", "/home/u/app/test.js"]);
    let live = browser(50, "--dump-dom").with(test_run(), APP);
    assert!(run(&live).projects.is_empty(), "under its live test run");

    // Driven through its pipe, it is at work: shown, red, never green.
    let driven = browser(50, "--remote-debugging-pipe").with(test_run(), APP);
    let scan = run(&driven);
    let r = only(&scan);
    assert_eq!(r.level, Level::Red, "{r:#?}");

    let scan = run(&browser(1, "--remote-debugging-port=0"));
    let r = only(&scan);
    assert_eq!(r.kind, "headless-browser");
    assert_eq!(r.members.len(), 2, "its helpers are its members");
    assert!(message(r, EvidenceKind::ToolKind).starts_with("a headless browser: chrome"));
}

/// Found in CI: under a desktop session Chromium writes its command line over its argv as one
/// string. Its restart command is then lost — which does not matter for a kind no snapshot
/// restarts: orphaned and idle, it is green, and driven through its pipe, it is red.
#[test]
fn a_browser_that_wrote_its_command_line_is_judged_by_its_words_and_needs_no_restart() {
    let chrome =
        "/usr/lib/chromium/chromium --headless --remote-debugging-port=0 --user-data-dir=/tmp/p";
    // The kernel's name for it stays the file it ran.
    let browser = |ppid, title: &str| ProcessInfo {
        comm: "chromium".into(),
        ..titled(100, ppid, title)
    };
    let orphan = FakeProbe::default().with(browser(1, chrome), APP);
    let scan = run(&orphan);
    let r = only(&scan);
    assert_eq!(r.kind, "headless-browser");
    assert_eq!(r.level, Level::Green, "{r:#?}");

    let piped = FakeProbe::default()
        .with(process(50, 1, &["node", "/home/u/app/test.js"]), APP)
        .with(
            browser(50, &format!("{chrome} --remote-debugging-pipe")),
            APP,
        );
    let scan = run(&piped);
    assert_eq!(only(&scan).level, Level::Red);
}

/// A shared daemon whose clients cannot be seen (its unix table unreadable) never says no
/// client is attached: it is red for the table, and says nothing of its use.
#[test]
fn a_shared_daemon_whose_clients_cannot_be_seen_does_not_say_none_is_attached() {
    let daemon = |unix: Result<Vec<crate::probe::UnixSocket>, String>| {
        let mut p = FakeProbe::default().with(
            process(100, 1, &["gopls", "serve", "-listen", "unix;/tmp/g.sock"]),
            APP,
        );
        p.unix = unix;
        p
    };
    let none = "shared by no one now";
    let scan = run(&daemon(Ok(Vec::new())));
    let r = only(&scan);
    assert_eq!(r.kind, "gopls-daemon");
    assert!(
        r.evidence.iter().any(|e| e.message.starts_with(none)),
        "{r:#?}"
    );

    let scan = run(&daemon(Err("EPERM".into())));
    let r = only(&scan);
    assert_eq!(r.level, Level::Red, "{r:#?}");
    assert!(
        !r.evidence.iter().any(|e| e.message.starts_with(none)),
        "{r:#?}"
    );
}

/// Found by review: a person's own long job may carry the words in its name. Known only by
/// its name's words, a tree must have lived quietly, as one known by its launch must; a busy
/// life keeps it yellow.
#[test]
fn a_tree_known_only_by_the_words_of_its_name_is_green_only_with_a_quiet_life() {
    let job = |cpu_ns| {
        let mut p = process(
            100,
            1,
            &[
                "python3",
                "/home/u/app/mcp_server_eval.py",
                "--epochs",
                "100",
            ],
        );
        (p.age_seconds, p.cpu_ns) = (Some(3600), Some(cpu_ns));
        FakeProbe::default().with(p, APP)
    };
    let busy = run(&job(3_000_000_000_000));
    let r = only(&busy);
    assert_eq!((r.kind.as_str(), r.level), ("mcp-server", Level::Yellow));
    assert!(
        message(r, EvidenceKind::LifeActivity)
            .starts_with("known only by the words of its name, and busy over its life"),
        "{r:#?}"
    );
    let quiet = run(&job(1_000_000_000));
    assert_eq!(only(&quiet).level, Level::Green, "{quiet:#?}");
}
