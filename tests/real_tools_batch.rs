//! The real-tools suite, as one batch (docs/real-tools.md): Vite (`npm run dev`), uvicorn
//! `--reload`, `hugo server` and `tsc --watch` (`npm run watch`), each started the way
//! developers start it in its own fresh project, then stopped together by one `pier stop
//! --all-green`, as "Clean up all safe" stops them, and restarted one by one
//! (`real_tools/batch.rs`), judged against `/proc`.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_batch`.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use real_tools::{Case, Client};

#[test]
fn four_real_tools_stopped_as_one_batch_then_restarted() {
    real_tools::batch::run_batch(
        "batch",
        &[
            Case {
                name: "vite",
                project: "vite",
                npm: Some("vite"),
                command: "npm run dev",
                kind: "vite",
                client: Client::None,
                ..Case::DEFAULT
            },
            Case {
                name: "uvicorn --reload",
                project: "uvicorn_reload",
                venv: Some("python"),
                command: "uvicorn main:app --reload --port {port}",
                kind: "uvicorn",
                client: Client::None,
                ..Case::DEFAULT
            },
            Case {
                name: "hugo server",
                project: "hugo",
                command: "hugo server --port {port} --bind 127.0.0.1",
                kind: "hugo-server",
                client: Client::None,
                ..Case::DEFAULT
            },
            Case {
                name: "tsc --watch",
                project: "tsc-watch",
                npm: Some("typescript"),
                command: "npm run watch",
                kind: "tsc-watch",
                main_port: false,
                client: Client::None,
                http_path: None,
                ..Case::DEFAULT
            },
        ],
    );
}
