//! What an agent started itself (docs/design.md §7a, the table of §2): a root started after
//! the session began, descended from the MCP client's own process through non-interactive
//! launchers only — never through an interactive shell, a terminal, a multiplexer or an
//! editor, which are the person's. Only for those may "its parent still runs" be set aside.

use crate::probe::{Identity, ProcessList};

/// The MCP client's process, found from the server's own: its nearest ancestor that is not a
/// non-interactive launcher (`sh -c`, `npx`, `env`), which a client may start the server
/// through.
pub fn client_of(list: &ProcessList, server_pid: u32) -> Result<Identity, NoClient> {
    todo!("{} {server_pid}", list.processes.len())
}

/// Why the client could not be found, or is not an agent Pier may grant anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoClient {
    /// The server's parent chain could not be read.
    #[error("the process that started `pier mcp` could not be read")]
    Unread,
    /// The server was started by a person's shell, terminal or editor, not by an agent.
    #[error("`pier mcp` was started by {0}, which is a person's, not an agent's")]
    Person(String),
}

/// Whether the resource rooted at `root` is the agent's own: started after `since` (the
/// session's start, in the kernel's start-time units) and descended from `client` through
/// non-interactive launchers only.
pub fn judge(
    list: &ProcessList,
    root: Identity,
    client: Identity,
    since: u64,
) -> Result<(), NotOwn> {
    todo!("{} {root:?} {client:?} {since}", list.processes.len())
}

/// Why a resource is not the agent's own, in words made here once.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOwn {
    /// Started before the session did.
    #[error("it was running before this agent's session began")]
    Before,
    /// Its ancestry does not reach the client.
    #[error("it does not descend from this agent's process")]
    NotDescended,
    /// It descends through a person's shell, terminal, multiplexer or editor.
    #[error("it was started through {0}, which is the person's, not the agent's")]
    ThroughPerson(String),
    /// Its ancestry could not be read.
    #[error("its ancestry could not be read")]
    Unread,
}
