//! The real-tools suite, other ecosystems (docs/real-tools.md): Go (Hugo), Ruby (Jekyll,
//! Rails on Puma), PHP's built-in server, Rust (`cargo watch`), Deno, Python docs servers
//! (MkDocs, sphinx-autobuild) and the JS builders and watchers that are not frameworks
//! (Eleventy, esbuild, Parcel, `tsc --watch`), each started the way developers start it in a
//! fresh temporary project, and taken through the whole cycle by the harness: scan, client →
//! red, client gone → green, stop, restart, second restart — judged against `/proc`.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_more`.
//! Without `PIER_REAL_TOOLS` every case skips with one line saying so.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use real_tools::{run, Case, Client, Launch, Yellow};

/// `hugo server` (Go): one process; the page's livereload script holds a websocket on the
/// server's own port.
#[test]
fn hugo_server() {
    run(Case {
        name: "hugo server",
        project: "hugo",
        command: "hugo server --port {port} --bind 127.0.0.1",
        kind: "hugo-server",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `hugo server` typed into the live shell of a tmux session: not residue, yellow, and the
/// stop refuses, sending nothing.
#[test]
fn hugo_server_in_a_live_tmux_shell() {
    run(Case {
        name: "hugo server (tmux)",
        project: "hugo",
        command: "hugo server --port {port} --bind 127.0.0.1",
        kind: "hugo-server",
        launch: Launch::Tmux,
        ..Case::DEFAULT
    });
}

/// `jekyll serve --livereload` (Ruby): one process with two listeners, the site and the
/// livereload websocket (on a port of its own, passed as a free one); the page holds the
/// websocket.
#[test]
fn jekyll_serve_livereload() {
    run(Case {
        name: "jekyll serve --livereload",
        project: "jekyll",
        command:
            "jekyll serve --port {port} --host 127.0.0.1 --livereload --livereload-port {port2}",
        kind: "jekyll-serve",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `rails server` in a one-controller Rails app, served by Puma (Rails' default server): Puma
/// rewrites its argv to `puma 5.6.5 (tcp://127.0.0.1:P) [app]` in the very process that ran
/// `rails server`, so its kind comes from that title — and no command is left to restart it
/// with: it is yellow ("could not be restarted"), and only Force stops it.
#[test]
fn rails_server_puma() {
    run(Case {
        name: "rails server (puma)",
        project: "rails",
        command: "rails server -p {port} -b 127.0.0.1",
        kind: "puma",
        client: Client::Tcp,
        yellow: Some(Yellow {
            evidence: ("not_restartable", "could not be restarted"),
            restart_refused:
                "had rewritten its command line, so the command that started it is not known",
        }),
        ..Case::DEFAULT
    });
}

/// `php -S localhost:PORT -t public`: PHP's built-in server, one process, no live reload: a
/// held TCP connection is the client.
#[test]
fn php_builtin_server() {
    run(Case {
        name: "php -S",
        project: "php",
        command: "php -S localhost:{port} -t public",
        kind: "php-server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `composer run dev`, the project's dev script (`php -S`, with composer's process timeout
/// off, as Laravel's is): composer → `sh -c` → php. Composer runs scripts the way npm does, so
/// it belongs to the resource and the tree is orphaned.
#[test]
fn composer_run_dev() {
    run(Case {
        name: "composer run dev",
        project: "composer",
        command: "composer run dev",
        env: &[("COMPOSER_ALLOW_SUPERUSER", "1")],
        kind: "php-server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `PHP_CLI_SERVER_WORKERS=3 php -S …`: the built-in server forks workers that share the
/// listening socket — a tree of four, every one holding the port.
#[test]
fn php_builtin_server_with_workers() {
    run(Case {
        name: "php -S (3 workers)",
        project: "php",
        command: "php -S 127.0.0.1:{port} -t public",
        env: &[("PHP_CLI_SERVER_WORKERS", "3")],
        kind: "php-server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `cargo watch -x run` (Rust): cargo execs cargo-watch, which runs `sh -c 'cargo run; …'`,
/// and cargo run execs the tiny std-only server (its port from `PORT`). The project builds
/// into its own `target` (never the suite's, whatever `CARGO_TARGET_DIR` the test runs with).
#[test]
fn cargo_watch_run() {
    run(Case {
        name: "cargo watch -x run",
        project: "cargo-watch",
        cargo: Some("cargo-watch"),
        command: "cargo watch -x run",
        env: &[("PORT", "{port}"), ("CARGO_TARGET_DIR", "{project}/target")],
        kind: "cargo-watch",
        client: Client::Tcp,
        restart_wait: 60,
        ..Case::DEFAULT
    });
}

/// `mkdocs serve` from the project's docs venv (a console script: `python …/bin/mkdocs
/// serve`); its page's livereload long-polls the server.
#[test]
fn mkdocs_serve() {
    run(Case {
        name: "mkdocs serve",
        project: "mkdocs",
        venv: Some("more"),
        command: "mkdocs serve -a 127.0.0.1:{port}",
        kind: "mkdocs-serve",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `sphinx-autobuild docs _build/html` from the docs venv: one Python process (uvicorn inside)
/// that rebuilds with Sphinx on change; its page holds a reload websocket.
#[test]
fn sphinx_autobuild() {
    run(Case {
        name: "sphinx-autobuild",
        project: "sphinx-autobuild",
        venv: Some("more"),
        command: "sphinx-autobuild docs _build/html --host 127.0.0.1 --port {port}",
        kind: "sphinx-autobuild",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `npx @11ty/eleventy --serve`: `npm exec` (retitled) → `sh -c eleventy …` → node; the dev
/// server listens on `[::]` and its page holds a reload websocket.
#[test]
fn eleventy_serve() {
    run(Case {
        name: "npx @11ty/eleventy --serve",
        project: "eleventy",
        npm: Some("eleventy"),
        command: "npx @11ty/eleventy --serve --port {port}",
        kind: "eleventy",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `npm run dev -- --serve=…` with `esbuild --watch=forever --servedir`: npm → `sh -c` → the
/// Go binary; the page keeps esbuild's live-reload EventSource (`/esbuild`) open.
#[test]
fn esbuild_serve_watch() {
    run(Case {
        name: "esbuild --serve --watch",
        project: "esbuild",
        npm: Some("esbuild"),
        command: "npm run dev -- --serve=127.0.0.1:{port}",
        kind: "esbuild",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `npm run dev -- --port P --hmr-port P2` with `"dev": "parcel"`: two listeners on `[::]`,
/// the page's HMR websocket on the second.
#[test]
fn parcel_serve() {
    run(Case {
        name: "parcel",
        project: "parcel",
        npm: Some("parcel"),
        command: "npm run dev -- --port {port} --hmr-port {port2}",
        kind: "parcel",
        client: Client::Browser,
        ..Case::DEFAULT
    });
}

/// `npm run watch` with `"watch": "tsc --watch"` (TypeScript 7: a node shim → the native
/// compiler): a watcher with no port, so no client and no GET; the restart is ready at once.
#[test]
fn tsc_watch() {
    run(Case {
        name: "tsc --watch",
        project: "tsc-watch",
        npm: Some("typescript"),
        command: "npm run watch",
        kind: "tsc-watch",
        main_port: false,
        client: Client::None,
        http_path: None,
        ..Case::DEFAULT
    });
}

/// `deno task dev` (Deno from its npm package) running `deno run --watch main.ts`, a
/// `Deno.serve` on `PORT`: the task runner and its watching child.
#[test]
fn deno_task_dev() {
    run(Case {
        name: "deno task dev",
        project: "deno",
        npm: Some("deno"),
        command: "deno task dev",
        env: &[("PORT", "{port}"), ("DENO_NO_UPDATE_CHECK", "1")],
        kind: "deno-task",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}
