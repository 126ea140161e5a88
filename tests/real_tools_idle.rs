//! The real-tools suite, idle clock and "stop when safe" (docs/real-tools.md): Vite and Next
//! (`npm run dev`), uvicorn `--reload` and `hugo server` (Go), each started the way developers
//! start it in its own fresh project, watched by one `pier watch --every 2`: each reaches `idle`
//! within a bound, stays idle (its own timers under the bounds), one real request makes its next
//! interval active, and it is idle again (`real_tools/idle.rs`). Then Vite held red by a real
//! client, armed, fired by `pier watch` once the client left, recorded as the armed stop's, and
//! restarted (`real_tools/armed.rs`). Then a rule of 3 s idle (`rules.toml`) over Vite and
//! uvicorn `--reload`: a real client asking in a loop keeps each from being stopped, and once it
//! stops each is stopped by the rule, recorded as the rule's, and restarted
//! (`real_tools/ruled.rs`). Judged against `/proc`.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_idle`.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use real_tools::{Case, Client};

const UVICORN_RELOAD: Case = Case {
    name: "uvicorn --reload",
    project: "uvicorn_reload",
    venv: Some("python"),
    command: "uvicorn main:app --reload --port {port}",
    kind: "uvicorn",
    ..Case::DEFAULT
};

const VITE: Case = Case {
    name: "vite",
    project: "vite",
    npm: Some("vite"),
    command: "npm run dev",
    kind: "vite",
    client: Client::Tcp,
    ..Case::DEFAULT
};

#[test]
fn four_real_tools_left_alone_are_idle_and_one_request_makes_them_active() {
    real_tools::idle::run_idle(
        "idle",
        &[
            VITE,
            Case {
                name: "next dev",
                project: "next",
                npm: Some("next"),
                command: "npm run dev",
                env: &[("NEXT_TELEMETRY_DISABLED", "1")],
                kind: "next-dev",
                ..Case::DEFAULT
            },
            UVICORN_RELOAD,
            Case {
                name: "hugo server",
                project: "hugo",
                command: "hugo server --port {port} --bind 127.0.0.1",
                kind: "hugo-server",
                ..Case::DEFAULT
            },
        ],
    );
}

#[test]
fn vite_held_by_a_client_armed_then_stopped_by_pier_watch_once_it_leaves_and_restarted() {
    real_tools::armed::run_armed(VITE);
}

#[test]
fn vite_and_uvicorn_with_a_client_are_never_stopped_by_a_rule_and_idle_are_stopped_and_undone() {
    real_tools::ruled::run_ruled("rules", &[VITE, UVICORN_RELOAD]);
}
