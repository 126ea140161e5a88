//! The real-tools suite, Python group: Jupyter with a running kernel, uvicorn (reloader and
//! workers), `fastapi dev`, Django's runserver and Flask's debug server, each started orphaned
//! the way a developer starts it, from the venvs `scripts/real-tools.sh` builds
//! (`tests/real_tools/python/python.txt`, `fastapi.txt`), and taken through the whole cycle by
//! the harness (`tests/real_tools/mod.rs`). Run with `scripts/real-tools.sh &&
//! PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_python`.
#![cfg(target_os = "linux")]

mod common;
#[path = "real_tools/python_support.rs"]
mod python_support;
mod real_tools;

use real_tools::{run, Case, Client};

/// What every case of this group shares: the group's venv on `PATH`, a held TCP connection as
/// the client.
const PY: Case = Case {
    venv: Some("python"),
    client: Client::Tcp,
    ..Case::DEFAULT
};

/// The jupyter environment: every folder Jupyter and IPython write kept in the sandbox, beside
/// the project (the runtime folder holds the kernel's connection file).
const JUPYTER_ENV: &[(&str, &str)] = &[
    ("JUPYTER_RUNTIME_DIR", "{project}-runtime"),
    ("JUPYTER_CONFIG_DIR", "{project}-config"),
    ("JUPYTER_DATA_DIR", "{project}-data"),
    ("IPYTHONDIR", "{project}-ipython"),
];

/// `jupyter lab` with a running kernel: the kernel's ZMQ listeners belong to the tree, and its
/// connections to the server are internal. They are the kernel's, a helper's, not the
/// server's ([`python_support::kernel_ports_are_the_helpers`] holds Pier to `/proc`): the
/// restart waits for the server's port only, since a restarted server has no kernel until a
/// notebook opens. Its kernel restarter is off: jupyter_client 8's `shutdown_all` raises
/// `InvalidStateError` on a kernel the restarter is starting again — which it does when the
/// stop's first SIGTERM (leaf first) ends the kernel — and the server then never exits (seen
/// on loaded machines: Pier's `partially_stopped` was true). The grace covers its own shutdown
/// of its kernels.
#[test]
fn jupyter() {
    run(Case {
        name: "jupyter",
        project: "jupyter",
        command: "jupyter lab --no-browser --allow-root --port {port} \
                  --IdentityProvider.token=pier-real-tools --KernelManager.autorestart=False",
        env: JUPYTER_ENV,
        kind: "jupyter",
        http_path: Some("/api"),
        prepare: Some(python_support::start_kernel),
        roles: Some(python_support::kernel_ports_are_the_helpers),
        restart_wait: 10,
        stop_args: &["--grace", "10"],
        ..PY
    });
}

/// `uvicorn --reload`: the WatchFiles reloader, `multiprocessing.resource_tracker` (which
/// ignores SIGTERM and exits when its parent goes: one grace, so `--grace 2`) and the server.
#[test]
fn uvicorn_reload() {
    run(Case {
        name: "uvicorn_reload",
        project: "uvicorn_reload",
        command: "uvicorn main:app --reload --port {port}",
        kind: "uvicorn",
        stop_args: &["--grace", "2"],
        ..PY
    });
}

/// `uvicorn --workers 2`: the supervisor, the resource tracker and two workers sharing the
/// listener; then the respawn the stop provokes, held to the truth
/// ([`python_support::uvicorn_respawn`]).
#[test]
fn uvicorn_workers() {
    let cycle = std::panic::catch_unwind(|| {
        run(Case {
            name: "uvicorn_workers",
            project: "uvicorn_workers",
            command: "uvicorn main:app --workers 2 --port {port}",
            kind: "uvicorn",
            // The resource tracker ignores SIGTERM, so the workers' level waits its whole grace,
            // and meanwhile the supervisor respawns them and health-checks each new one for up
            // to 5 s (`timeout_worker_healthcheck`) before it reads a SIGTERM of its own. With 2 s
            // that check could still hold its SIGTERM when its turn came (seen in CI): the stop
            // was then honestly partial and the restart refused. 12 s lets it end first.
            stop_args: &["--grace", "12"],
            ..PY
        })
    });
    let Some(cache) = std::env::var_os("PIER_REAL_TOOLS") else {
        return;
    };
    if common::fixtures_cannot_be_orphans("uvicorn_workers") {
        return;
    }
    let respawn = python_support::uvicorn_respawn(std::path::Path::new(&cache));
    match &respawn {
        Ok(detail) => eprintln!("uvicorn_workers: respawn during the stop ok: {detail}"),
        Err(e) => eprintln!("uvicorn_workers: respawn during the stop failed: {e}"),
    }
    if let Err(panic) = cycle {
        std::panic::resume_unwind(panic);
    }
    if let Err(e) = respawn {
        panic!("uvicorn_workers: respawn during the stop failed: {e}");
    }
}

/// `fastapi dev main.py`, the way FastAPI's documentation starts an app (`fastapi[standard]`,
/// its own venv): uvicorn with its reloader underneath, run by the `fastapi` script.
#[test]
fn fastapi_dev() {
    run(Case {
        name: "fastapi_dev",
        project: "fastapi_dev",
        venv: Some("fastapi"),
        command: "fastapi dev main.py --port {port}",
        kind: "fastapi-dev",
        stop_args: &["--grace", "2"],
        ..PY
    });
}

/// `python manage.py runserver PORT`: the autoreloader parent and the serving child.
#[test]
fn django_runserver() {
    run(Case {
        name: "django_runserver",
        project: "django_runserver",
        command: "python manage.py runserver {port}",
        kind: "django-runserver",
        ..PY
    });
}

/// `python manage.py runserver -6 PORT`: the same on `[::1]` only, an IPv6-only listener.
#[test]
fn django_runserver_ipv6() {
    run(Case {
        name: "django_runserver_ipv6",
        project: "django_runserver",
        command: "python manage.py runserver -6 {port}",
        kind: "django-runserver",
        ..PY
    });
}

/// `flask --app app run --debug`: the reloader parent and the serving child, as Flask's own
/// documentation starts it.
#[test]
fn flask_debug() {
    run(Case {
        name: "flask_debug",
        project: "flask_debug",
        command: "flask --app app run --debug --port {port}",
        kind: "flask-run",
        ..PY
    });
}
