//! The engine of Pier, with no GUI dependency: the CLI (`pier`, the workspace's root package)
//! and the tray app (`pier-app`, `crates/app`) are built on it.
//!
//! Pier finds dev residue — dev servers, watchers and helpers left running after the terminal
//! or editor that started them is gone — and judges each one green, yellow or red with evidence.
//!
//! The pipeline, one module per stage (see `ARCHITECTURE.md`):
//! - [`model`]: the ground floor: the data every stage reads and writes (identity, cards,
//!   shown state, snapshot, outcomes, history), depending on nothing above it;
//! - [`probe`]: everything read from the OS, behind the [`probe::Probe`] trait;
//! - [`containers`]: what the container engines say of the ports they publish, through their
//!   API, and their own processes, which are never signalled;
//! - [`diagnose`]: candidates → resources → projects → levels with evidence;
//! - [`signal`]: the OS half of a stop: the race-free signaller (pin, re-verify, send) and the
//!   bounded exit waiter (pidfd, kqueue);
//! - [`stop`]: the checkpoint chain, leaf-to-root signals, honest outcomes;
//! - [`restart`]: bring a stopped resource back from its snapshot, without a shell;
//! - [`store`]: the state folder: atomic, private, lock-guarded, ownership-gated records;
//! - [`trust`]: who else could change a file or folder: the rule for the state and config
//!   folders, project markers and what a restart runs; folders held by descriptor;
//! - [`idle`]: the idle clock: idleness measured over the awake time between rescans;
//! - [`worker`]: the tokio thread that owns the engine; typed commands in, whole results out,
//!   scans stamped with their generation;
//! - [`doctor`]: `pier doctor`, a self-test of the probe, the signaller and the state folder
//!   against a test process of its own, on the user's machine;
//! - [`agent`]: an agent's session over MCP: plans, what it started itself, masks;
//! - [`auto`]: acting when it is safe: the scheduler (idle clock) and armed stops;
//! - [`config`]: the configuration folder and the user's protect list in it;
//! - [`front`]: what both binaries come in by: the engine built for this machine
//!   ([`front::System`]), `--under` folders, the command lines' numbers, logging;
//! - [`words`]: how a command, a rate or a level's reasons read for a person.

#![deny(missing_docs)]

pub mod agent;
pub mod auto;
pub mod config;
pub mod containers;
pub mod diagnose;
pub mod doctor;
pub mod front;
pub mod idle;
pub mod model;
pub mod probe;
pub mod restart;
pub mod signal;
pub mod stop;
pub mod store;
pub mod trust;
pub mod words;
pub mod worker;
