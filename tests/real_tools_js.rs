//! The real-tools suite, JS tools (docs/real-tools.md): Vite, Next, webpack-dev-server and
//! nodemon, installed by scripts/real-tools.sh, each started the way developers start it and
//! taken through scan, client, stop and restart against the ground truth of /proc.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use real_tools::{run, Case, Client, Launch};

const VITE: Case = Case {
    name: "vite",
    project: "vite",
    npm: Some("vite"),
    command: "npm run dev",
    kind: "vite",
    client: Client::Browser,
    ..Case::DEFAULT
};

#[test]
fn vite_started_with_npm_run_dev() {
    run(VITE);
}

/// `npm run dev -- --host ::1`: the same project, an IPv6-only listener.
#[test]
fn vite_listening_on_ipv6_only() {
    run(Case {
        name: "vite-ipv6",
        command: "npm run dev -- --host ::1",
        ..VITE
    });
}

/// `npx vite` runs the project's own vite under `npm exec`.
#[test]
fn vite_started_with_npx() {
    run(Case {
        name: "vite-npx",
        command: "npx vite --port {port} --strictPort",
        ..VITE
    });
}

/// Typed into a live tmux shell: yellow (the launcher is alive), and the stop sends nothing.
#[test]
fn vite_inside_a_live_tmux_session_is_yellow_and_not_stopped() {
    run(Case {
        name: "vite-tmux",
        launch: Launch::Tmux,
        ..VITE
    });
}

/// `next dev` listens on `[::]` and spawns `next-server`, which rewrites its title.
#[test]
fn next_dev_started_with_npm_run_dev() {
    run(Case {
        name: "next",
        project: "next",
        npm: Some("next"),
        command: "npm run dev",
        env: &[("NEXT_TELEMETRY_DISABLED", "1")],
        kind: "next-dev",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// A project's own server, `"dev": "node server.js"`: no tool Pier knows is in any argv, so it is
/// known by how it was launched, its kind the listener's own name (`server`).
#[test]
fn a_plain_dev_script_started_with_npm_run_dev() {
    run(Case {
        name: "npm run dev (node server.js)",
        project: "node-dev",
        command: "npm run dev",
        kind: "server",
        ..Case::DEFAULT
    });
}

#[test]
fn webpack_serve_started_with_npm_run_dev() {
    run(Case {
        name: "webpack",
        project: "webpack",
        npm: Some("webpack"),
        command: "npm run dev",
        kind: "webpack",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `npx webpack-dev-server`: npm exec → `sh -c webpack-dev-server` → node, retitled
/// "webpack" by webpack-cli; the launcher's command names the tool.
#[test]
fn webpack_dev_server_started_with_npx() {
    run(Case {
        name: "webpack-dev-server (npx)",
        project: "webpack",
        npm: Some("webpack"),
        command: "npx webpack-dev-server",
        kind: "webpack-dev-server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

const NODEMON: Case = Case {
    name: "nodemon",
    project: "nodemon",
    npm: Some("nodemon"),
    command: "nodemon server.js {port}",
    kind: "nodemon",
    client: Client::Tcp,
    ..Case::DEFAULT
};

#[test]
fn nodemon_started_directly() {
    run(NODEMON);
}

/// The server traps SIGTERM and ignores it; nodemon takes it down itself once signalled. The
/// server outlived its grace and exited after its parent was signalled: `stopped`, and the
/// resource `stopped`.
#[test]
fn nodemon_with_a_server_that_ignores_sigterm() {
    run(Case {
        name: "nodemon-trap",
        project: "nodemon-trap",
        stop_args: &["--grace", "2"],
        ..NODEMON
    });
}
