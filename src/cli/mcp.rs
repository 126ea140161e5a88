//! `pier mcp`: Pier served to an agent over MCP on stdio (docs/design.md §7a, `pier-mcp`).
//! Here only what starts it: the options, the state folder, and who the client is — the
//! process that started `pier mcp` (`agent::own::client_of`) — and when this session began,
//! from which what the agent starts counts as its own. Stdout belongs to the protocol from
//! the first byte: nothing here prints to it, and a failure to start is one sentence on
//! stderr with the exit code of `cli`'s table.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::exit;
use pier_core::agent::own;
use pier_core::agent::{Client, Session, SessionOptions};
use pier_core::front::numbers;
use pier_core::probe::{Identity, ProcessList};
use pier_core::stop::interrupt;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Offer only the tools that change nothing: no plan, stop or restart.
    #[arg(long)]
    read_only: bool,
    /// The most resources this session may stop (1 to 1000).
    #[arg(long, value_name = "N", default_value = "10", value_parser = numbers::max_stops)]
    max_stops: usize,
    /// Milliseconds of CPU and I/O sampling behind the cards tool (0 to 10000; 0: not
    /// sampled). A stop always samples.
    #[arg(long, value_name = "N", default_value = "500", value_parser = numbers::scan_sample)]
    sample_ms: Duration,
}

/// Runs `pier mcp` until the client closes the connection.
pub fn run(args: McpArgs) -> ExitCode {
    if std::io::stdin().is_terminal() {
        eprintln!(
            "pier mcp speaks MCP on stdin and stdout: an agent's MCP client starts it \
             (docs/mcp.md). Ctrl-D ends it."
        );
    }
    // A signal ends a stop under way at its seams, then the server (docs/design.md §3.10).
    if let Err(e) = interrupt::catch() {
        tracing::warn!("{e}; an interruption may leave an unfinished snapshot");
    }
    let system = match exit::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let list = match system.probe.processes() {
        Ok(list) => list,
        Err(e) => return exit::failed(&e),
    };
    let client = client(&list, std::process::id());
    let opts = SessionOptions {
        read_only: args.read_only,
        max_stops: args.max_stops,
        sample: args.sample_ms,
        ..SessionOptions::default()
    };
    match pier_mcp::serve(Session::new(system, client, opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(pier_mcp::ServeError::Interrupted(signal)) => {
            let n = interrupt::number_of(signal).unwrap_or(15);
            ExitCode::from(128 + n as u8)
        }
        Err(e) => exit::failed(&e),
    }
}

/// Who the client is, as far as the process table tells before the handshake names it: its
/// process (none when `pier mcp` was started by a person's shell: then nothing is the
/// agent's own), and this server's own start time, after which what it starts is its own.
fn client(list: &ProcessList, server: u32) -> Client {
    let process = match own::client_of(list, server) {
        Ok(identity) => Some(identity),
        Err(why) => {
            tracing::info!("no agent's process: {why}; nothing will count as its own");
            None
        }
    };
    Client {
        name: pier_mcp::UNKNOWN_CLIENT.to_owned(),
        process,
        since: own_start(list, server).map_or(u64::MAX, |me| me.start_time),
    }
}

/// This process's row in `list`. Why `u64::MAX` without it: a session that cannot say when it
/// began claims nothing as its own.
fn own_start(list: &ProcessList, server: u32) -> Option<Identity> {
    list.processes
        .iter()
        .find(|p| p.identity.pid == server)
        .map(|p| p.identity)
}
