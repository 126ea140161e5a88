//! The real-tools harness (docs/real-tools.md): one [`Case`] per real dev tool, started the way
//! developers start it in a fresh temporary project, and [`run`], which takes it through the
//! whole cycle — scan, client → red, client gone → green, stop, restart, a second restart —
//! judging every step against ground truth read from `/proc` ([`truth`]), never from Pier.
//!
//! A step that fails today for a known, filed reason is listed in [`Case::expect`]: it
//! must fail (if it passes, the test fails saying so), the reason is printed, and the case ends
//! there, cleanly. Everything the case started is killed by identity at the end ([`Cleanup`]).
#![allow(dead_code)] // each test binary uses its own part of the harness

mod actions;
pub mod armed;
pub mod batch;
mod client;
pub mod idle;
mod launch;
pub mod ruled;
mod steps;
pub mod truth;
mod watch;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{self, Sandbox, Started};
pub use launch::Cleanup;

/// How the developer started the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// From a terminal that is gone: `setsid -f sh -c 'echo $$ > pidfile; exec COMMAND'`, so
    /// the root's parent is PID 1. Expected: green, then the whole cycle.
    Orphan,
    /// Typed into the interactive shell of a live tmux session (a private server). Expected:
    /// yellow (a live launcher), and `pier stop` refuses, sending nothing.
    Tmux,
}

/// The client that makes the resource red.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Headless Chromium on `http://localhost:{port}{http_path}`: the page's HMR websocket.
    Browser,
    /// A TCP connection held by the test, on the main port.
    Tcp,
    /// No client step (a tool without a port).
    None,
}

/// The steps of a case, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// [`Case::prepare`], when the case has one (e.g. start a notebook kernel).
    Prepare,
    /// The scan finds the tree: its root, project, every member and every listening port
    /// (each the server's, unless the case has [`Case::roles`]).
    Found,
    /// [`Case::roles`], when the case has one: which ports are a helper's, against the truth.
    Roles,
    /// The resource's kind is [`Case::kind`].
    Kind,
    /// Settled: green (tmux: yellow, not orphaned) with "idle" evidence.
    Idle,
    /// With the client connected: red, with the live connection.
    Client,
    /// Client gone: green again (a [`Case::yellow`] case: yellow again).
    ClientGone,
    /// `pier stop :PORT --dry-run` on the main listener's port (a watcher's by id): the port
    /// names this resource,
    /// every check passes, each signal it would send goes to a process of the tree, and
    /// nothing is sent or written.
    DryRunByPort,
    /// `pier stop ID`: every pid of the tree gone, every reported outcome true.
    Stop,
    /// tmux, or [`Case::yellow`]: `pier stop ID` refuses and the tree runs on, same identities.
    StopRefused,
    /// [`Case::yellow`]: `pier stop ID --anyway` stops it, every reported outcome true.
    ForceStop,
    /// [`Case::never_stopped`]: `pier stop ID --anyway` refuses too, and the tree runs on.
    ForceRefused,
    /// tmux: `pier stop ID --anyway --accept not_orphaned` stops it, every reported outcome
    /// true, the reason named as set aside; the pane's shell runs on.
    StopAnyway,
    /// [`Case::yellow`]: `pier restart ID` is refused with its reason.
    RestartRefused,
    /// `pier restart ID` is ready and the server answers HTTP.
    Restart,
    /// A second `pier restart ID` is refused: it already runs.
    SecondRestart,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A case expected yellow (with "idle" and "orphaned") for one piece of evidence: a client makes
/// it red and yellow again when it goes, `pier stop` refuses, `--force` stops it (or, for a
/// case [`Case::never_stopped`], refuses too), and the restart is refused.
#[derive(Debug, Clone, Copy)]
pub struct Yellow {
    /// The evidence kind (`"not_restartable"`) and words its message holds.
    pub evidence: (&'static str, &'static str),
    /// Words the refused restart's reason holds.
    pub restart_refused: &'static str,
}

/// A step known to fail today, with why.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub step: Step,
    pub why: &'static str,
}

/// A case's own step before the found step: a detail, or what went wrong.
pub type Prepare = fn(&Ctx) -> Result<String, String>;

/// A case's own check of the scan, after the found step: a detail, or what Pier said against
/// the truth.
pub type Check = fn(&Ctx) -> Result<String, String>;

/// A step of the plan.
type StepFn = fn(&mut Ctx) -> Result<String, String>;

/// One real tool, started one way. Fields with a default: see [`Case::DEFAULT`].
#[derive(Clone, Copy)]
pub struct Case {
    /// Shown in messages.
    pub name: &'static str,
    /// The fixture folder `tests/real_tools/projects/<project>`, copied into the temporary
    /// project of that name; `{port}`, `{port2}`, `{port3}` (free ports) and `{project}` (its
    /// path) are filled in every file, in `command` and in `env`.
    pub project: &'static str,
    /// `node_modules` from `$PIER_REAL_TOOLS/npm/<tool>`, and its `.bin` on `PATH`.
    pub npm: Option<&'static str>,
    /// `$PIER_REAL_TOOLS/venv/<group>/bin` on `PATH`.
    pub venv: Option<&'static str>,
    /// The venv `$PIER_REAL_TOOLS/venv/<group>` copied into the project as a real `.venv`
    /// folder (a hard-link copy, as `python -m venv .venv` would leave one), its `bin` on
    /// `PATH`: the project's own toolchain folder, which a reloader also watches.
    pub project_venv: Option<&'static str>,
    /// `$PIER_REAL_TOOLS/cargo/<tool>/bin` on `PATH`.
    pub cargo: Option<&'static str>,
    /// What the developer types in the project, e.g. `npm run dev`.
    pub command: &'static str,
    /// Extra environment of the command.
    pub env: &'static [(&'static str, &'static str)],
    pub launch: Launch,
    /// The expected `kind`.
    pub kind: &'static str,
    /// Whether the tool listens on `{port}` (the found step waits for it; the restart's GET
    /// goes there).
    pub main_port: bool,
    pub client: Client,
    /// The page of the browser client and of the GET after the restart; `None`: no GET.
    pub http_path: Option<&'static str>,
    /// Extra arguments of `pier stop` (e.g. `--grace 2`).
    pub stop_args: &'static [&'static str],
    /// `pier restart --wait` seconds.
    pub restart_wait: u32,
    /// Run after the start, before the found step; it must wait for what it needs itself.
    pub prepare: Option<Prepare>,
    /// Expected yellow for a reason of its own: see [`Yellow`].
    pub yellow: Option<Yellow>,
    /// With [`Case::yellow`]: a reason no person may set aside (a data service, whose data
    /// lives in the project): `--force` is refused too and the tree runs on, and the restart
    /// is refused (nothing was stopped).
    pub never_stopped: bool,
    /// For a tool with helpers (a notebook kernel): checks, against the truth, which of the
    /// tree's listeners Pier calls a helper's. `None`: the tool has no helper, and the found
    /// step requires every port to be the server's.
    pub roles: Option<Check>,
    pub expect: &'static [Expect],
}

impl Case {
    pub const DEFAULT: Case = Case {
        name: "",
        project: "",
        npm: None,
        venv: None,
        project_venv: None,
        cargo: None,
        command: "",
        env: &[],
        launch: Launch::Orphan,
        kind: "",
        main_port: true,
        client: Client::Tcp,
        http_path: Some("/"),
        stop_args: &[],
        restart_wait: 30,
        prepare: None,
        yellow: None,
        never_stopped: false,
        roles: None,
        expect: &[],
    };
}

/// What a running case knows, for [`Case::prepare`] and the steps.
pub struct Ctx {
    /// First, so that it drops first: the processes die before the folder goes.
    pub cleanup: Cleanup,
    /// The client of the client steps, while it is connected.
    pub client: Option<client::Connected>,
    pub case: Case,
    pub sandbox: Sandbox,
    pub project: PathBuf,
    pub ports: [u16; 3],
    pub root: Started,
    /// The resource id Pier gave the tree (set by the found step).
    pub id: String,
    /// The tree's listeners, from the socket tables (set by the found step).
    pub listeners: std::collections::BTreeSet<std::net::SocketAddr>,
}

impl Ctx {
    /// `pier scan --json --sample-ms 200 --under <sandbox>`.
    pub fn scan(&self) -> Result<serde_json::Value, String> {
        let out = self.sandbox.pier(&["scan", "--json", "--sample-ms", "200"]);
        if !out.status.success() {
            return Err(format!(
                "pier scan failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("pier scan printed no JSON: {e}"))
    }

    /// The last lines of the tool's output, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.project.with_extension("log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }
}

/// Polls `f` every 100 ms until it answers, or gives its last complaint after `secs`.
pub fn poll<T>(secs: u64, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if Instant::now() >= end => return Err(format!("after {secs} s: {e}")),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The cache the installer fills, or `None` (with one line saying how to run the suite) when
/// `PIER_REAL_TOOLS` is unset.
fn cache(case: &Case) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PIER_REAL_TOOLS") else {
        eprintln!(
            "{}: skipped, the real-tools suite runs with its tools installed: \
             scripts/real-tools.sh, then PIER_REAL_TOOLS=~/.cache/pier-real-tools \
             cargo test --test real_tools_js (or _python, _more, _launch, _batch, _idle)",
            case.name
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    let need = |what: &str, path: PathBuf| {
        assert!(
            path.exists(),
            "{}: {what} is not installed in {} ({} is missing): run scripts/real-tools.sh",
            case.name,
            dir.display(),
            path.display()
        )
    };
    if let Some(t) = case.npm {
        need(t, dir.join("npm").join(t).join("node_modules"));
    }
    for g in case.venv.iter().chain(&case.project_venv) {
        need(g, dir.join("venv").join(g).join("bin/python"));
    }
    if let Some(t) = case.cargo {
        need(t, dir.join("cargo").join(t).join("bin"));
    }
    let on_path = |p: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .any(|d| d.join(p).exists())
    };
    for (program, wanted) in [
        ("chromium", case.client == Client::Browser),
        ("tmux", case.launch == Launch::Tmux),
    ] {
        assert!(
            !wanted || on_path(program),
            "{}: {program} is not installed: run scripts/real-tools.sh (its apt list)",
            case.name
        );
    }
    Some(dir)
}

/// One case at a time on this machine, across test binaries (a busy neighbour would make a
/// tool look busy): an exclusive lock on a file in the cache, held while the case runs.
pub fn lock(cache: &Path) -> std::fs::File {
    let file = std::fs::File::create(cache.join(".run.lock")).expect("the cache is writable");
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    file
}

/// Takes `case` through every step (see [`Step`]), failing the test on the first step that
/// goes wrong, unless that step is expected to fail.
pub fn run(case: Case) {
    let Some(cache) = cache(&case) else { return };
    if common::fixtures_cannot_be_orphans(case.name) {
        return;
    }
    let _lock = lock(&cache);
    let began = Instant::now();
    let sandbox = Sandbox::new();
    let ports = [
        common::free_port(),
        common::free_port(),
        common::free_port(),
    ];
    let project = launch::project(&case, &cache, sandbox.path(), &ports);
    let mut env = vec![("PATH".to_owned(), launch::path_for(&case, &cache, &project))];
    for (k, v) in case.env {
        env.push(((*k).to_owned(), launch::fill(v, &ports, &project)));
    }
    let command = launch::fill(case.command, &ports, &project);
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sandbox.path().to_path_buf());
    let started = launch::start(&case, &project, &command, &env);
    let mut ctx = Ctx {
        cleanup,
        client: None,
        case,
        sandbox,
        project,
        ports,
        root: started.root,
        id: String::new(),
        listeners: Default::default(),
    };
    ctx.cleanup.roots.push(started.root);
    ctx.cleanup.tmux = started.tmux;
    eprintln!(
        "{}: started `{command}` (root pid {})",
        case.name, started.root.pid
    );

    let mut plan: Vec<(Step, StepFn)> = Vec::new();
    if case.prepare.is_some() {
        plan.push((Step::Prepare, |c| (c.case.prepare.unwrap())(c)));
    }
    plan.push((Step::Found, steps::found as StepFn));
    if case.roles.is_some() {
        plan.push((Step::Roles, |c| (c.case.roles.unwrap())(c)));
    }
    plan.extend([
        (Step::Kind, steps::kind as StepFn),
        (Step::Idle, steps::idle),
    ]);
    if case.launch != Launch::Tmux && case.client != Client::None {
        plan.push((Step::Client, steps::client));
        plan.push((Step::ClientGone, steps::client_gone));
    }
    if case.launch == Launch::Tmux {
        plan.extend([
            (Step::StopRefused, actions::stop_refused as StepFn),
            (Step::StopAnyway, actions::stop_anyway_in_tmux),
            (Step::Restart, actions::restart),
        ]);
    } else if case.yellow.is_some() && case.never_stopped {
        plan.extend([
            (Step::StopRefused, actions::stop_refused as StepFn),
            (Step::ForceRefused, actions::force_refused),
            (Step::RestartRefused, actions::restart_refused),
        ]);
    } else if case.yellow.is_some() {
        plan.extend([
            (Step::StopRefused, actions::stop_refused as StepFn),
            (Step::ForceStop, actions::force_stop),
            (Step::RestartRefused, actions::restart_refused),
        ]);
    } else {
        plan.extend([
            (Step::DryRunByPort, actions::dry_run_by_port as StepFn),
            (Step::Stop, actions::stop),
            (Step::Restart, actions::restart),
            (Step::SecondRestart, actions::second_restart),
        ]);
    }
    for (step, f) in plan {
        let expected = case.expect.iter().find(|e| e.step == step);
        match (f(&mut ctx), expected) {
            (Ok(detail), None) => eprintln!("{}: {step} ok: {detail}", case.name),
            (Ok(detail), Some(e)) => panic!(
                "{}: {step} now passes: remove the expectation ({}); {detail}",
                case.name, e.why
            ),
            (Err(msg), Some(e)) => {
                eprintln!(
                    "{}: {step} fails as expected: {}\n  {msg}",
                    case.name, e.why
                );
                eprintln!(
                    "{}: ended in {:.1} s",
                    case.name,
                    began.elapsed().as_secs_f64()
                );
                return;
            }
            (Err(msg), None) => panic!(
                "{}: {step} failed after {:.1} s: {msg}\n--- the tool's output, last lines:\n{}",
                case.name,
                began.elapsed().as_secs_f64(),
                ctx.log_tail()
            ),
        }
    }
    eprintln!(
        "{}: passed in {:.1} s",
        case.name,
        began.elapsed().as_secs_f64()
    );
}

/// A step's answer: `summary` when nothing was found `wrong`, else both.
pub fn verdict(summary: String, wrong: &[String]) -> Result<String, String> {
    if wrong.is_empty() {
        Ok(summary)
    } else {
        Err(format!(
            "{summary}; against the truth: {}",
            wrong.join("; ")
        ))
    }
}
