//! The real-tools suite, JS tools (docs/real-tools.md): Vite, Next, webpack-dev-server and
//! nodemon, installed by scripts/real-tools.sh, each started the way developers start it and
//! taken through scan, client, stop and restart against the ground truth of /proc.

mod common;
mod real_tools;

use real_tools::{run, Case, Client, Expect, Launch, Step};

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

#[test]
fn vite_listening_on_ipv6_only() {
    run(Case {
        name: "vite-ipv6",
        project: "vite-ipv6",
        ..VITE
    });
}
