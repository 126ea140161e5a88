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
//! - `restart {snapshot}` — restarts a stop this agent's client made.
