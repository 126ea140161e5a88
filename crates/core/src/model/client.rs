//! Who is at the other end: the program holding a live connection's client end, and the
//! program a resource's parent is (a shell in a tmux pane, an editor), as a card names them
//! so a person knows where to go next.

use serde::{Deserialize, Serialize};

/// What a client program likely is, read from its program's name (`diagnose::clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientKind {
    /// A web browser or one of its helper processes (chrome, firefox, safari, …).
    Browser,
    /// A command-line HTTP client (curl, wget, httpie, xh).
    HttpClient,
    /// A test runner (playwright, jest, vitest, pytest, cypress, …).
    TestRunner,
    /// A database's own client (psql, mysql, mongosh, redis-cli, …).
    DatabaseClient,
    /// An editor, an IDE or a language server.
    Editor,
    /// Pier itself (`pier`, the tray app).
    Pier,
    /// A program Pier has no name for.
    Unknown,
}

impl ClientKind {
    /// The words a sentence uses: "an HTTP client", "unknown program".
    pub fn describe(self) -> &'static str {
        match self {
            ClientKind::Browser => "a browser",
            ClientKind::HttpClient => "an HTTP client",
            ClientKind::TestRunner => "a test runner",
            ClientKind::DatabaseClient => "a database client",
            ClientKind::Editor => "an editor or language server",
            ClientKind::Pier => "Pier itself",
            ClientKind::Unknown => "unknown program",
        }
    }
}

/// The process holding a connection's client end, as the process table read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Client {
    /// Its process id.
    pub pid: u32,
    /// Its program: the executable's file name, or for an interpreter the script's
    /// (`curl`, `pytest`); another user's: its kernel name only.
    pub program: String,
    /// Its command line, short (`words::short_command`); `null` for another user's process.
    pub command: Option<String>,
    /// The uid it runs as.
    pub uid: u32,
    /// It is another user's process: only its program name is shown.
    pub other_user: bool,
    /// What it likely is.
    pub likely: ClientKind,
}

/// Where a resource's live parent is (the reason it is not orphaned), so a person can go
/// there and end it: the parent's program, its terminal, and its tmux pane or screen window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parent {
    /// The parent's program (its kernel name: `bash`, `code`).
    pub program: String,
    /// The parent's pid.
    pub pid: u32,
    /// What it is to Pier: `"interactive shell"`, `"terminal"`, `"editor"`, `"terminal
    /// multiplexer"`, `"process"`.
    pub role: String,
    /// Its controlling terminal (`/dev/pts/3`); `null` when it has none or it is not known.
    pub tty: Option<String>,
    /// The program that owns that terminal: the shell's own parent (`gnome-terminal-server`,
    /// `sshd`, `tmux: server`); `null` when not read.
    pub terminal: Option<String>,
    /// The tmux pane it runs in, from its environment; `null` outside tmux.
    pub tmux: Option<TmuxPane>,
    /// The GNU screen window it runs in, from its environment; `null` outside screen.
    pub screen: Option<ScreenWindow>,
}

/// A tmux pane: its id from the environment, and its place as its server names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TmuxPane {
    /// The session's name; `null` when the server was not asked or did not answer.
    pub session: Option<String>,
    /// The window's index; `null` as `session`.
    pub window: Option<u32>,
    /// The pane's index in its window; `null` as `session`.
    pub pane: Option<u32>,
    /// The pane's id (`TMUX_PANE`: `"%7"`).
    pub pane_id: String,
}

/// A GNU screen window, from the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenWindow {
    /// The session (`STY`: `"4242.dev"`).
    pub session: String,
    /// The window's number (`WINDOW`); `null` when unset.
    pub window: Option<String>,
}
