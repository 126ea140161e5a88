//! The real-tools suite, who brings a server back (docs/design.md §2.9, §3.6): real pm2 (from
//! npm, `PM2_HOME` in the test's folder) and real supervisord (from PyPI, its config and socket
//! in the test's folder) each run a known dev server (`python3 -m http.server`) in a project; the card names the manager, the
//! program and the command that stops it there, and stays yellow; `pier stop` refuses it and
//! sends nothing, nor does a stop anyway, which names the manager's command; that command, run
//! as the card wrote it, then stops it for good.
//! And a `while true` wrapper: the card names it as the resource's respawner, green; what it
//! restarts during the stop is attributed to it, and `pier stop` of the new id ends it.
//!
//! Runs with its tools installed: `scripts/real-tools.sh`, then
//! `PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_managers`. Without
//! `PIER_REAL_TOOLS` the pm2 and supervisord cases skip with one line saying so; the wrapper
//! needs nothing installed.
#![cfg(target_os = "linux")]

mod common;
mod real_tools;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{free_port, Sandbox, Started};
use real_tools::{poll, truth, Cleanup};
use serde_json::Value;

/// `$PIER_REAL_TOOLS`, or `None` with a line saying how to run the case.
fn tools(case: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PIER_REAL_TOOLS") else {
        eprintln!(
            "{case}: skipped, it runs with its tools installed: scripts/real-tools.sh, then \
             PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test real_tools_managers"
        );
        return None;
    };
    Some(PathBuf::from(dir))
}

/// What a manager case needs before it starts anything: the manager's own tools (`rel`, under
/// the cache, holding `program`), the one-case-at-a-time lock, the sandbox, and the clean-up
/// of everything that works in it. `None` (with a line) when the suite's tools are not set up.
fn setup(name: &str, rel: &str, program: &str) -> Option<(PathBuf, fs::File, Sandbox, Cleanup)> {
    let cache = tools(name)?;
    let bin = cache.join(rel);
    assert!(
        bin.join(program).exists(),
        "{name}: run scripts/real-tools.sh"
    );
    let lock = real_tools::lock(&cache);
    let sb = Sandbox::new();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sb.path().to_path_buf());
    Some((bin, lock, sb, cleanup))
}

/// The live process whose pid a manager wrote to `file`.
fn pid_in(file: &Path, what: &str) -> Started {
    poll(30, || {
        let pid: u32 = fs::read_to_string(file)
            .map_err(|e| e.to_string())?
            .trim()
            .parse()
            .map_err(|_| format!("{} holds no pid", file.display()))?;
        truth::identity(pid).ok_or(format!("{what} is not running"))
    })
    .unwrap()
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A project folder `name` in the sandbox (a `package.json` makes it one).
fn project(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.path().join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("package.json"), "{}\n").unwrap();
    dir
}

/// The live child of `parent` listening on 127.0.0.1:`port`, from `/proc`.
fn child_listening(parent: u32, port: u16) -> Option<Started> {
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    truth::children(parent)
        .into_iter()
        .find(|c| truth::listeners(&[*c]).contains(&addr))
}

/// The resource whose root is `root`, in a scan of the sandbox.
fn resource_of(sb: &Sandbox, root: u32) -> Option<Value> {
    common::resources(&sb.scan(&[]))
        .into_iter()
        .map(|(_, r)| r)
        .find(|r| r["root"]["pid"].as_u64() == Some(u64::from(root)))
}

/// `pier ARGS --json`: the exit code and the first result.
fn stop_json(sb: &Sandbox, args: &[&str]) -> (i32, Value) {
    let out = sb.pier_exact(&[&["stop", "--json"], args].concat());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "pier stop {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc["results"][0].clone())
}

/// What a managed case checks, the manager started and its program listening (`app`).
struct Managed<'a> {
    name: &'a str,
    sb: &'a Sandbox,
    /// The manager's process, the app's parent.
    manager: Started,
    app: Started,
    port: u16,
    /// `managed_by` as the card must show it: manager, program, command.
    expect: (&'a str, &'a str, String),
    /// Where the manager's own command-line tool is, for running the card's command.
    bin: PathBuf,
}

impl Managed<'_> {
    fn check(self) {
        let Managed {
            name,
            sb,
            manager,
            app,
            port,
            ..
        } = self;
        let (manager_name, program, command) = &self.expect;
        // The card: yellow, the manager named from its own data, with its command.
        let r = poll(30, || {
            let r = resource_of(sb, app.pid)
                .ok_or_else(|| "no resource holds the app yet".to_owned())?;
            (r["activity"].is_object() && !r["evidence"].to_string().contains("busy"))
                .then_some(r.clone())
                .ok_or(format!("not settled: {}", r["evidence"]))
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let m = &r["managed_by"];
        assert_eq!(r["level"], "yellow", "{name}: {r:#}");
        assert_eq!(m["manager"], *manager_name, "{name}: {m:#}");
        assert_eq!(m["pid"], manager.pid, "{name}: {m:#}");
        assert_eq!(m["program"], *program, "{name}: {m:#}");
        assert_eq!(m["stop_command"], command.as_str(), "{name}: {m:#}");
        // Its manager, and nothing else, argues against stopping it.
        let against: Vec<&Value> = r["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["level"] != "green")
            .collect();
        assert!(
            against.len() == 1 && against[0]["kind"] == "managed",
            "{name}: {r:#}"
        );
        let id = r["id"].as_str().unwrap().to_owned();
        eprintln!("{name}: the card says {}", m);

        // A plain stop refuses, and sends nothing.
        let (code, res) = stop_json(sb, &[&id]);
        assert_eq!(
            (code, res["result"].as_str()),
            (3, Some("refused")),
            "{name}: {res:#}"
        );
        assert!(truth::runs(app), "{name}: the refused stop touched the app");

        // Nor does a stop anyway, whatever is accepted: the manager's program is the manager's
        // to stop, and the refusal names its command.
        let mut anyway = vec![id.as_str()];
        anyway.extend(common::ANYWAY_ALL);
        let (code, res) = stop_json(sb, &anyway);
        assert_eq!(
            (code, res["result"].as_str()),
            (3, Some("refused")),
            "{name}: {res:#}"
        );
        let reason = res["reason"].as_str().unwrap();
        assert!(reason.starts_with("never touched"), "{name}: {reason}");
        assert!(reason.contains(command), "{name}: {reason}");
        assert!(truth::runs(app), "{name}: the stop anyway touched the app");

        // The card's command, run as written, stops it there for good.
        let ran = Command::new("sh")
            .arg("-c")
            .arg(command)
            .env("PATH", path_with(&self.bin))
            .current_dir(sb.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("sh runs");
        assert!(ran.success(), "{name}: `{command}` failed");
        poll(20, || {
            let left = truth::children(manager.pid);
            match child_listening(manager.pid, port) {
                Some(p) => Err(format!("pid {} listens still ({left:?})", p.pid)),
                None => Ok(()),
            }
        })
        .unwrap_or_else(|e| panic!("{name}: after `{command}`: {e}"));
        assert!(
            common::resources(&sb.scan(&[])).is_empty(),
            "{name}: a resource is left after `{command}`"
        );
        eprintln!("{name}: `{command}` stopped it for good");
    }
}

#[test]
fn pm2_runs_it_the_card_names_pm2_and_only_its_command_stops_it() {
    let name = "pm2";
    let Some((bin, _lock, sb, mut cleanup)) = setup(name, "npm/pm2/node_modules/.bin", "pm2")
    else {
        return;
    };
    let app_dir = project(&sb, "api");
    let home = sb.path().join("pm2-home");
    let port = free_port();
    let pm2 = |args: &[&str]| {
        Command::new(bin.join("pm2"))
            .args(args)
            .env("PM2_HOME", &home)
            .env("PATH", path_with(&bin))
            .current_dir(&app_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("pm2 runs")
    };
    // A command with spaces, as pm2's documentation starts any program (pm2 runs it through
    // `bash -c`, which execs it): a known dev tool, so only its manager makes it yellow.
    let command = format!(
        "{} -m http.server {port} --bind 127.0.0.1",
        common::python()
    );
    assert!(pm2(&["start", &command, "--name", "api"]).success());
    let god = pid_in(&home.join("pm2.pid"), "pm2's daemon");
    cleanup.roots.push(god);
    let app = poll(30, || {
        child_listening(god.pid, port).ok_or_else(|| "the app does not listen yet".to_owned())
    })
    .unwrap();
    Managed {
        name,
        sb: &sb,
        manager: god,
        app,
        port,
        expect: (
            "pm2",
            "api",
            format!("env PM2_HOME={} pm2 stop 0", home.display()),
        ),
        bin: bin.clone(),
    }
    .check();
    let _ = pm2(&["kill"]);
}

#[test]
fn supervisord_runs_it_the_card_names_supervisord_and_only_its_command_stops_it() {
    let name = "supervisord";
    let Some((bin, _lock, sb, mut cleanup)) = setup(name, "venv/supervisor/bin", "supervisord")
    else {
        return;
    };
    let web = project(&sb, "web");
    let port = free_port();
    let dir = sb.path().display().to_string();
    let conf = sb.path().join("supervisord.conf");
    fs::write(
        &conf,
        format!(
            "[unix_http_server]\nfile={dir}/supervisor.sock\n\
             [supervisord]\nlogfile={dir}/supervisord.log\npidfile={dir}/supervisord.pid\n\
             [rpcinterface:supervisor]\n\
             supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\
             [supervisorctl]\nserverurl=unix://{dir}/supervisor.sock\n\
             [program:web]\ncommand={} -m http.server {port} --bind 127.0.0.1\n\
             directory={}\nautorestart=true\nstartsecs=0\n",
            common::python(),
            web.display()
        ),
    )
    .unwrap();
    // As its documentation starts it: `supervisord -c FILE`, from the config's folder.
    let ok = Command::new(bin.join("supervisord"))
        .args(["-c", "supervisord.conf"])
        .current_dir(sb.path())
        .env("PATH", path_with(&bin))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("supervisord runs");
    assert!(ok.success(), "supervisord -c {} failed", conf.display());
    let supervisord = pid_in(&sb.path().join("supervisord.pid"), "supervisord");
    cleanup.roots.push(supervisord);
    let app = poll(30, || {
        child_listening(supervisord.pid, port)
            .ok_or_else(|| "the program does not listen yet".to_owned())
    })
    .unwrap();
    Managed {
        name,
        sb: &sb,
        manager: supervisord,
        app,
        port,
        expect: (
            "supervisord",
            "web",
            format!(
                "supervisorctl -c {} -s unix://{dir}/supervisor.sock stop web",
                conf.display()
            ),
        ),
        bin: bin.clone(),
    }
    .check();
    let _ = Command::new(bin.join("supervisorctl"))
        .args(["-c", &conf.to_string_lossy(), "shutdown"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// `sh -c 'while true; do python3 -m http.server P; done'`, left orphaned: the loop is part of
/// the resource, named as its respawner, and the resource is green. The stop signals the
/// server first (leaf to root); the loop starts a new one before its own signal unless Pier's
/// signal reaches it first (Pier reads the process table between the two levels, so the loop
/// nearly always wins). Either way the report is true: a replacement is attributed to the loop,
/// with the command that stops it, which does; or nothing runs.
#[test]
fn a_shell_loop_is_named_as_the_respawner_and_what_it_restarts_is_attributed_to_it() {
    let name = "while-true wrapper";
    if common::fixtures_cannot_be_orphans(name) {
        return;
    }
    let sb = Sandbox::new();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sb.path().to_path_buf());
    let dir = project(&sb, "site");
    let port = free_port();
    let script = format!(
        "while true; do {} -m http.server {port} --bind 127.0.0.1; done",
        common::python()
    );
    sb.spawn_orphan(&dir, &["sh", "-c", &script]);
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let (loop_sh, server) = poll(30, || {
        let sh = truth::working_in(&dir)
            .into_iter()
            .find(|p| truth::command(p.pid).contains("while true"))
            .ok_or_else(|| "the loop is not running yet".to_owned())?;
        let server = truth::tree(sh)
            .into_iter()
            .find(|p| truth::listeners(&[*p]).contains(&addr))
            .ok_or_else(|| "the server does not listen yet".to_owned())?;
        Ok::<_, String>((sh, server))
    })
    .unwrap();
    cleanup.roots.push(loop_sh);

    let r = poll(30, || {
        let r = resource_of(&sb, loop_sh.pid)
            .ok_or_else(|| "no resource holds the loop yet".to_owned())?;
        (r["level"] == "green")
            .then_some(r.clone())
            .ok_or(format!("not green yet: {}", r["evidence"]))
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let respawners = r["respawners"].as_array().unwrap();
    assert_eq!(respawners.len(), 1, "{name}: {r:#}");
    assert_eq!(respawners[0]["pid"], loop_sh.pid, "{name}: {r:#}");
    assert!(
        respawners[0]["how"].as_str().unwrap().contains("`while`"),
        "{name}: {r:#}"
    );
    assert!(common::evidence_kinds(&r).contains(&"respawner".to_owned()));
    let id = r["id"].as_str().unwrap().to_owned();

    let (_, res) = stop_json(&sb, &[&id]);
    assert!(
        !truth::runs(server) && !truth::runs(loop_sh),
        "{name}: {res:#}"
    );
    let listening_now = || {
        truth::working_in(&dir)
            .into_iter()
            .find(|p| truth::listeners(&[*p]).contains(&addr))
    };
    match res["result"].as_str() {
        Some("partially_stopped") => {
            let reason = res["reason"].as_str().unwrap();
            assert!(
                reason.contains(&format!("born during the stop to pid {}", loop_sh.pid)),
                "{name}: {reason}"
            );
            let new = poll(10, || {
                listening_now().ok_or_else(|| "the replacement does not listen".to_owned())
            })
            .unwrap();
            let new_id = resource_of(&sb, new.pid)
                .map(|r| r["id"].as_str().unwrap().to_owned())
                .or_else(|| {
                    // The replacement may be the root of a tree of its own launcher (pyenv).
                    common::resources(&sb.scan(&[]))
                        .into_iter()
                        .map(|(_, r)| r["id"].as_str().unwrap().to_owned())
                        .next()
                })
                .expect("the replacement is a resource");
            assert!(
                reason.contains(&format!("`pier stop {new_id}` stops it")),
                "{name}: {reason}"
            );
            eprintln!("{name}: the loop restarted the server; the report said: {reason}");
            let (code, res) = stop_json(&sb, &[&new_id]);
            assert_eq!(
                (code, res["result"].as_str()),
                (0, Some("stopped")),
                "{res:#}"
            );
        }
        Some("stopped") => {
            eprintln!("{name}: Pier's signal reached the loop before it restarted the server");
        }
        other => panic!("{name}: result {other:?}: {res:#}"),
    }
    poll(10, || match listening_now() {
        Some(p) => Err(format!("pid {} still listens", p.pid)),
        None => Ok(()),
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        truth::working_in(&dir).is_empty(),
        "{name}: something still works in the project"
    );
}
