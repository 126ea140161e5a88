//! The real-tools suite, tools known by how they were launched (issue 38, docs/design.md §2):
//! real dev tools that Pier's table of kinds never names — Python app servers in reload mode
//! (Hypercorn, Granian, Gunicorn), a data app (Streamlit), a notebook editor (marimo), a Rust
//! tool installed with `cargo install` (mdBook), `go run` with Debian's Go, a monorepo task
//! runner (Turborepo over two workspaces), a test runner in watch mode (Vitest, no port),
//! Node's own watch mode, a package script with an unusual name (`npm run db:studio`), uvicorn's
//! polling reloader over a real `.venv`, and the two the contract keeps yellow: Puma started
//! directly (it writes its title over its argv, so no restart can replay it) and a database
//! from Debian (redis-server, its data in the project: a data service, never stopped). Each is
//! started the way its documentation says in a fresh temporary project and taken through the
//! whole cycle by the harness (`tests/real_tools/mod.rs`): scan, client → red, client gone →
//! green, stop, restart, second restart — judged against `/proc` and the socket tables.
//!
//! The acceptance is the rule, not these rows: a tool the table never heard of, launched one of
//! these ways, must come out right; its kind is the program's own name.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_launch`.
//! Without `PIER_REAL_TOOLS` every case skips with one line saying so.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use real_tools::{poll, run, Case, Client, Ctx, Yellow};

/// The Python app servers' venv (`tests/real_tools/python/servers.txt`), a held TCP
/// connection as the client.
const SERVERS: Case = Case {
    venv: Some("servers"),
    client: Client::Tcp,
    ..Case::DEFAULT
};

/// The data apps' venv (`tests/real_tools/python/dataapps.txt`), with `HOME` in the sandbox:
/// these tools keep their settings and caches under it, which must not land in the user's.
const DATA_APPS: Case = Case {
    venv: Some("dataapps"),
    env: &[
        ("HOME", "{project}-home"),
        ("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false"),
    ],
    client: Client::Tcp,
    ..Case::DEFAULT
};

/// `hypercorn main:app --reload` (a plain ASGI app, as Hypercorn's documentation writes one):
/// the reloading parent, `multiprocessing`'s resource tracker (which ignores SIGTERM and exits
/// when its parent goes: `--grace 2`) and the serving child, both holding the listener.
#[test]
fn hypercorn_reload() {
    run(Case {
        name: "hypercorn --reload",
        project: "hypercorn",
        command: "hypercorn main:app --reload --bind 127.0.0.1:{port}",
        kind: "hypercorn",
        stop_args: &["--grace", "2"],
        ..SERVERS
    });
}

/// `granian --interface asgi --reload main:app` (Rust-built, reloading through watchfiles): the
/// main process and its worker, which holds the listener.
#[test]
fn granian_reload() {
    run(Case {
        name: "granian --reload",
        project: "granian",
        command: "granian --interface asgi --reload --host 127.0.0.1 --port {port} main:app",
        kind: "granian",
        ..SERVERS
    });
}

/// `gunicorn --reload app:app`: the arbiter and its sync worker, which reloads on a change.
/// Gunicorn 27 opens a control socket under `HOME`, kept in the sandbox.
#[test]
fn gunicorn_reload() {
    run(Case {
        name: "gunicorn --reload",
        project: "gunicorn",
        command: "gunicorn --reload --bind 127.0.0.1:{port} app:app",
        env: &[("HOME", "{project}-home")],
        kind: "gunicorn",
        ..SERVERS
    });
}

/// `streamlit run app.py --server.headless true` from the project's own `.venv` (`pip install
/// streamlit` there, as its documentation sets a project up): one process serving the data
/// app. (`run` is no dev subcommand: a `streamlit` from outside the project is not known by
/// how it was launched.)
#[test]
fn streamlit_run() {
    run(Case {
        name: "streamlit run",
        project: "streamlit",
        venv: None,
        project_venv: Some("dataapps"),
        command: "streamlit run app.py --server.port {port} --server.address 127.0.0.1 \
                  --server.headless true",
        kind: "streamlit",
        http_path: Some("/_stcore/health"),
        ..DATA_APPS
    });
}

/// `marimo edit nb.py --headless --no-token`: the notebook editor's server, and
/// `multiprocessing`'s resource tracker (SIGTERM ignored: `--grace 2`).
#[test]
fn marimo_edit() {
    run(Case {
        name: "marimo edit",
        project: "marimo",
        command: "marimo edit --headless --host 127.0.0.1 --port {port} --no-token nb.py",
        kind: "marimo",
        stop_args: &["--grace", "2"],
        ..DATA_APPS
    });
}

/// `mdbook serve docs` (installed with `cargo install`, `tests/real_tools/cargo/mdbook.txt`):
/// a crate's user guide in `docs/`, served and rebuilt on change by one process.
#[test]
fn mdbook_serve() {
    run(Case {
        name: "mdbook serve",
        project: "mdbook",
        cargo: Some("mdbook"),
        command: "mdbook serve docs --hostname 127.0.0.1 --port {port}",
        kind: "mdbook",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `go run .` with Debian's Go, a std-only `net/http` server: `go` builds the program into a
/// temporary folder and runs it as its child, so the runner is the root; the kind is the
/// program's own name, the module's (`pierreal`). Go's caches and its build folder are kept in
/// the sandbox, beside the project.
#[test]
fn go_run() {
    run(Case {
        name: "go run .",
        project: "go-run",
        command: "go run .",
        env: &[
            ("PORT", "{port}"),
            ("GOCACHE", "{project}-gocache"),
            ("GOPATH", "{project}-gopath"),
            // Where `go run` builds the program: the sandbox, which goes with the test (a
            // `go run` ended by a signal leaves its build folder behind).
            ("GOTMPDIR", "{project}/.."),
        ],
        kind: "pierreal",
        client: Client::Tcp,
        restart_wait: 60,
        ..Case::DEFAULT
    });
}

/// `npx turbo run dev` in a monorepo of two workspaces, each with a plain `node server.js`
/// dev script: `npm exec` → `sh -c turbo` → the npm package's node shim → Turborepo's own
/// binary → one `npm run dev` per workspace → `sh -c` → node. One resource, in the monorepo's
/// root, with both workspaces' listeners; the kind is the servers' own name (`server.js`).
#[test]
fn turbo_run_dev() {
    run(Case {
        name: "npx turbo run dev",
        project: "turbo",
        npm: Some("turbo"),
        command: "npx turbo run dev",
        env: &[("TURBO_TELEMETRY_DISABLED", "1"), ("DO_NOT_TRACK", "1")],
        kind: "server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `npm run test:watch` with `"test:watch": "vitest watch"`: a test runner in watch mode, no
/// port (its watchdog child retitles itself `vitest-watchdog`); no client and no GET, the
/// restart is ready once it runs.
#[test]
fn vitest_watch() {
    run(Case {
        name: "vitest watch",
        project: "vitest",
        npm: Some("vitest"),
        command: "npm run test:watch",
        kind: "vitest",
        prepare: Some(vitest_waits),
        main_port: false,
        client: Client::None,
        http_path: None,
        ..Case::DEFAULT
    });
}

/// Vitest's first run is over (its test workers gone) once it says it waits for file changes:
/// the tree the found step reads is then the watcher's own.
fn vitest_waits(c: &Ctx) -> Result<String, String> {
    let log = c.project.with_extension("log");
    poll(60, || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("Waiting for file changes") {
            Ok("vitest waits for file changes".to_owned())
        } else {
            Err(format!(
                "vitest has not finished its first run: {}",
                c.log_tail()
            ))
        }
    })
}

/// `node --watch server.js`: Node's own watch mode runs the project's server as its child and
/// starts it again on a change, so the watching node is the root; the kind is the script's
/// name, as for any program an interpreter runs.
#[test]
fn node_watch() {
    run(Case {
        name: "node --watch",
        project: "node-watch",
        command: "node --watch server.js",
        env: &[("PORT", "{port}")],
        kind: "server",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `npm run db:studio` with `"db:studio": "sirv public --dev …"`: a tool the table never
/// names, started by a package script whose name is none of the usual ones.
#[test]
fn npm_run_db_studio() {
    run(Case {
        name: "npm run db:studio",
        project: "db-studio",
        npm: Some("sirv"),
        command: "npm run db:studio",
        kind: "sirv",
        client: Client::Tcp,
        ..Case::DEFAULT
    });
}

/// `uvicorn main:app --reload` from the project's own `.venv` (fastapi and uvicorn, no
/// watchfiles): uvicorn's StatReload polls every file of the project, the `.venv` among them,
/// at a tenth to a quarter of a core, while the server it runs is idle. The reloader's polling
/// is not the server's work: green.
#[test]
fn uvicorn_reload_polling() {
    run(Case {
        name: "uvicorn --reload (polling)",
        project: "uvicorn_polling",
        project_venv: Some("plain"),
        command: "uvicorn main:app --reload --host 127.0.0.1 --port {port}",
        kind: "uvicorn",
        client: Client::Tcp,
        stop_args: &["--grace", "2"],
        ..Case::DEFAULT
    });
}

/// `puma -b tcp://127.0.0.1:P config.ru` (Debian's Puma, no Rails): Puma writes its title
/// over its argv, so no command is left to restart it with: yellow, only Force stops it.
#[test]
fn puma_direct() {
    run(Case {
        name: "puma config.ru",
        project: "puma",
        command: "puma -b tcp://127.0.0.1:{port} config.ru",
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

/// `redis-server --dir ./data --appendonly yes` (Debian's, started by hand in the project, as a
/// child of the test — never the system's service): it keeps its append-only file open for
/// writing in the project. A data service: yellow, never stopped, not even by Force; nothing
/// was stopped, so there is nothing to restart.
#[test]
fn redis_server_in_project() {
    run(Case {
        name: "redis-server",
        project: "redis",
        command: "redis-server --port {port} --bind 127.0.0.1 --dir ./data --appendonly yes",
        kind: "redis-server",
        client: Client::Tcp,
        yellow: Some(Yellow {
            evidence: ("data_service", "keeps its data in"),
            restart_refused: "there is no snapshot",
        }),
        never_stopped: true,
        ..Case::DEFAULT
    });
}
