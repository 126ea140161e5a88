//! Pier finds dev residue — dev servers, watchers and helpers left running after the terminal
//! or editor that started them is gone — and judges each one green, yellow or red with evidence.
//!
//! The pipeline, one module per stage (see `ARCHITECTURE.md`):
//! - [`probe`]: everything read from the OS, behind the [`probe::Probe`] trait;
//! - [`diagnose`]: candidates → resources → projects → levels with evidence;
//! - [`signal`]: the race-free signaller (pin, re-verify, send) the stop flow uses;
//! - [`stop`]: the checkpoint chain, leaf-to-root signals, honest outcomes;
//! - [`restart`]: bring a stopped resource back from its snapshot, without a shell;
//! - [`store`]: the state folder: atomic, private, lock-guarded, ownership-gated records;
//! - [`worker`]: the tokio thread that owns the engine; typed commands in, whole results out,
//!   scans stamped with their generation;
//! - [`ui`]: the tray app: state → menu spec → muda menu, clicks → commands;
//! - [`cli`]: `pier scan`, `pier stop`, `pier history`, `pier restart`, as text or JSON, and
//!   `pier` / `pier app` for the tray app;
//! - [`words`]: how a command, a rate or a level's reasons read for a person.

pub mod cli;
pub mod diagnose;
pub mod probe;
pub mod restart;
pub mod signal;
pub mod stop;
pub mod store;
pub mod ui;
pub mod words;
pub mod worker;
