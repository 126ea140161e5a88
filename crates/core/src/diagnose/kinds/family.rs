//! What a kind is to a person: a dev server or watcher, or the residue an agent, an editor or a
//! test run leaves behind (docs/design.md §2, "Agent residue").

use super::agent;

/// The family of a tool kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// A dev server, watcher or helper (the table of `kinds.rs`, or known by launch).
    Dev,
    /// An MCP server an agent started (over stdio, or listening).
    McpServer,
    /// A headless browser (Chromium, Chrome, Firefox, …).
    Browser,
    /// A browser's driver (chromedriver, geckodriver, Playwright's driver).
    Driver,
    /// A language server an editor started.
    LanguageServer,
    /// A daemon orphaned by design and shared by several editors, agents or builds (a language
    /// server's shared daemon, a build server).
    SharedDaemon,
}

/// The kinds of every family but [`Family::Dev`]: one row each.
const FAMILIES: &[(&str, Family)] = &[
    (agent::MCP_SERVER, Family::McpServer),
    (agent::HEADLESS_BROWSER, Family::Browser),
    (agent::BROWSER_DRIVER, Family::Driver),
    (agent::LANGUAGE_SERVER, Family::LanguageServer),
    // Shared daemons (`kinds.rs` and `kinds/daemons.rs`).
    ("gopls-daemon", Family::SharedDaemon),
    ("watchman-server", Family::SharedDaemon),
    ("gradle-daemon", Family::SharedDaemon),
    ("kotlin-daemon", Family::SharedDaemon),
    ("bazel-server", Family::SharedDaemon),
    ("nx-daemon", Family::SharedDaemon),
    ("turbo-daemon", Family::SharedDaemon),
    ("eslint_d", Family::SharedDaemon),
    ("prettierd", Family::SharedDaemon),
    ("msbuild-node", Family::SharedDaemon),
    ("vbcscompiler", Family::SharedDaemon),
];

/// The family of `kind` (a kind the table names, or `"unknown"`).
pub fn family(kind: &str) -> Family {
    FAMILIES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(Family::Dev, |(_, f)| *f)
}

impl Family {
    /// Started on demand by a client that talks to it (over stdio, a pipe or its socket), which
    /// starts it again when it needs it: a snapshot never restarts it, and when it holds no
    /// port it is a candidate only while orphaned.
    pub fn started_by_its_client(self) -> bool {
        !matches!(self, Family::Dev)
    }

    /// The family in a person's words ("an MCP server").
    pub fn describe(self) -> &'static str {
        match self {
            Family::Dev => "a dev tool",
            Family::McpServer => "an MCP server",
            Family::Browser => "a headless browser",
            Family::Driver => "a browser driver",
            Family::LanguageServer => "a language server",
            Family::SharedDaemon => "a shared daemon",
        }
    }
}
