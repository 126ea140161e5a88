//! An agent's session over MCP (docs/design.md §7a): the same engine and front door as the
//! CLI, and nothing an agent can talk its way past. The protocol is `pier-mcp`'s
//! (`crates/mcp`); what an agent may see and do is here, with no protocol in it:
//! - [`plan`]: a stop is a plan first, single-use, bound to the session, short-lived;
//! - [`own`]: what the agent started itself (the one reason it may set aside: a live parent);
//! - [`mask`]: what is never told (an environment, argv values that look like secrets);
//! - [`Session`]: the allow-list — cards, who holds a port, plan, carry out, history, restart
//!   of what it stopped itself. Nothing here changes the protect list, rules, arms or records.

pub mod error;
pub mod mask;
pub mod next;
pub mod own;
pub mod plan;
pub mod reply;
mod session;

pub use error::AgentError;
pub use session::{Client, Session, SessionOptions};
