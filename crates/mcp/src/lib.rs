//! `pier mcp`: Pier served to agents over MCP on stdio (docs/design.md §7a). The protocol is
//! here, on `rmcp`; what an agent may see and do is `pier_core::agent`'s. Stdout carries only
//! protocol frames; logs go to stderr.
//!
//! The tools, an allow-list (read-only ones marked so; `--read-only` lists only those):
//! - `cards {under?: [folder], ports?: [port]}` — read-only: the cards, masked, with the way
//!   forward for every card that is not green and the ids the agent started itself;
//! - `who_holds_port {port}` — read-only: who holds a TCP port and whether a plan would stop it;
//! - `plan_stop {ids?: [id], ports?: [port], mine?: bool}` — read-only: a plan (id, what would
//!   stop, what would not and why); `mine` plans every resource the agent started itself;
//! - `carry_out {plan}` — destructive: asks the person where the client can (elicitation),
//!   then carries the plan out through the full chain;
//! - `history {}` — read-only: the stop records, masked;
//! - `restart {snapshot}` — restarts a stop this session made.
//!
//! Modules: `input` (what each tool takes, checked as the CLI checks it), `server` (the tools
//! and the handler), `confirm` (asking the person: inline on 2026-07-28, a request before),
//! `reply` (structured content and a short text; a refusal as a tool error).

mod confirm;
mod input;
mod reply;
mod server;

use pier_core::agent::Session;
use rmcp::ServiceExt as _;

pub use server::{client_name, Pier, UNKNOWN_CLIENT, WRITES};

/// Why `pier mcp` stopped serving before its client closed the connection.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not be made.
    #[error("could not start the MCP server: {0}")]
    Runtime(std::io::Error),
    /// The client's first messages were not a handshake (or the connection failed in it).
    #[error("the MCP client's handshake failed: {0}")]
    Handshake(String),
    /// The connection failed while serving.
    #[error("the MCP connection failed: {0}")]
    Connection(String),
    /// SIGINT, SIGTERM or SIGHUP: a stop under way ended at its next seam first.
    #[error("interrupted by {0}")]
    Interrupted(&'static str),
}

/// Serves `session` over stdio until the client closes it. Stdout carries only protocol
/// frames; logs go wherever `tracing` was set to write (stderr for `pier mcp`).
pub fn serve(session: Session) -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let pier = Pier::new(session);
    let session = pier.session();
    let served = runtime.block_on(async {
        tokio::select! {
            done = until_closed(pier) => done,
            signal = interrupted() => Err(ServeError::Interrupted(signal)),
        }
    });
    // A stop under way sees the same flag and ends at its next seam, recorded (docs/design.md
    // §3.10): wait for it, but not for stdin's reader, which blocks until the client writes.
    drop(session.lock());
    runtime.shutdown_background();
    served
}

/// Serves until the client closes the connection.
async fn until_closed(pier: Pier) -> Result<(), ServeError> {
    let running = pier
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Handshake(e.to_string()))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| ServeError::Connection(e.to_string()))
}

/// The interruption `pier mcp` caught (`stop::interrupt::catch`), once raised.
async fn interrupted() -> &'static str {
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
    loop {
        tick.tick().await;
        if let Some(signal) = pier_core::stop::interrupt::PROCESS.raised() {
            return signal;
        }
    }
}
