//! Kinds from the launch chain through the whole diagnosis (`kinds/chain.rs`): what the card says
//! for a retitled tool, a dev script and a tree with no command left.

use super::tests::{has, only, run, APP};
use crate::diagnose::kinds::chain::tests::titled;
use crate::model::card::{EvidenceKind, Level, Resource};
use crate::probe::fake::{process, FakeProbe};

fn message(r: &Resource, kind: EvidenceKind) -> String {
    r.evidence
        .iter()
        .find(|e| e.kind == kind)
        .map(|e| e.message.clone())
        .unwrap_or_else(|| panic!("no {kind:?} evidence: {r:#?}"))
}

#[test]
fn webpack_retitled_under_npm_is_known_from_its_launcher_and_green() {
    // `"dev": "webpack serve"`: npm → sh -c 'webpack serve' → node, retitled "webpack".
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "webpack serve"]), APP)
        .with(titled(12, 11, "webpack"), APP)
        .listen("127.0.0.1:8080", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!((r.kind.as_str(), r.root.pid), ("webpack", 10), "{r:#?}");
    assert_eq!(r.level, Level::Green, "{r:#?}");
    let why = message(r, EvidenceKind::ToolKind);
    assert!(why.contains("pid 11: webpack serve"), "{why}");
    assert!(!has(r, EvidenceKind::NotRestartable), "sh -c is a command");
}

#[test]
fn a_plain_dev_script_is_known_and_the_evidence_names_the_listener() {
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "node server.js"]), APP)
        .with(process(12, 11, &["node", "server.js"]), APP)
        .listen("127.0.0.1:3000", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.kind, "server", "{r:#?}");
    assert_eq!(r.level, Level::Green, "{r:#?}");
    let why = message(r, EvidenceKind::ToolKind);
    assert!(
        why.contains(
            "launched by `npm run dev` in this project (pid 10); node (pid 12) is the server"
        ),
        "{why}"
    );
    assert!(message(r, EvidenceKind::LifeActivity).starts_with("quiet over its life"));
}

#[test]
fn a_start_script_stays_unknown_and_names_the_listener_not_its_launcher() {
    let probe = FakeProbe::default()
        .with(titled(10, 1, "npm start"), APP)
        .with(process(11, 10, &["sh", "-c", "node server.js"]), APP)
        .with(process(12, 11, &["node", "server.js"]), APP)
        .listen("127.0.0.1:3000", 12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!((r.kind.as_str(), r.level), ("unknown", Level::Yellow));
    let why = message(r, EvidenceKind::UnknownKind);
    assert!(why.starts_with("node (pid 12) listens"), "{why}");
}

#[test]
fn a_tree_with_no_command_left_is_known_but_yellow() {
    // `rails server`: Puma writes its title over the argv of the process that ran it.
    let probe = FakeProbe::default()
        .with(
            titled(10, 1, "puma 5.6.5 (tcp://127.0.0.1:3000) [app]"),
            APP,
        )
        .listen("127.0.0.1:3000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.kind, "puma", "{r:#?}");
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(why.contains("could not be restarted"), "{why}");
    assert!(
        why.contains("puma 5.6.5 (tcp://127.0.0.1:3000) [app]\")"),
        "{why}"
    );
}

#[test]
fn puma_with_a_watcher_child_is_not_restartable_and_not_the_watchers_kind_green() {
    // tailwindcss-rails' Puma plugin: the watcher runs under Puma, whose argv is a title.
    let probe = FakeProbe::default()
        .with(
            titled(10, 1, "puma 5.6.5 (tcp://127.0.0.1:3000) [app]"),
            APP,
        )
        .with(
            process(
                11,
                10,
                &["/home/u/app/bin/tailwindcss", "-i", "app.css", "-w"],
            ),
            APP,
        )
        .listen("127.0.0.1:3000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(why.contains("pid 10 rewrote its command line"), "{why}");
}

#[test]
fn a_dev_script_outside_the_listeners_tree_makes_nothing_known() {
    let probe = FakeProbe::default()
        .with(process(10, 1, &["python3", "app.py"]), APP)
        .with(process(11, 10, &["npm", "run", "watch"]), APP)
        .with(process(12, 11, &["sh", "-c", "node build.js --watch"]), APP)
        .listen("127.0.0.1:8000", 10);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("unknown", Level::Yellow),
        "{r:#?}"
    );
}

#[test]
fn a_withheld_environment_makes_the_command_it_would_replay_not_restartable() {
    // macOS withholds the environment of a code-signing-restricted process: a restart would
    // replay an empty one, so the card is yellow and says so.
    let mut probe = FakeProbe::default()
        .with(titled(10, 1, "npm run dev"), APP)
        .with(process(11, 10, &["sh", "-c", "vite"]), APP)
        .with(
            process(12, 11, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("127.0.0.1:5173", 12);
    probe.environment_withheld.insert(11);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("vite", Level::Yellow),
        "{r:#?}"
    );
    let why = message(r, EvidenceKind::NotRestartable);
    assert!(
        why.starts_with("could not be restarted: the environment of pid 11"),
        "{why}"
    );
    assert!(why.contains("only Force stops it"), "{why}");

    // Only the process a restart replays matters: the listener's own environment is not read
    // back, so withholding it changes nothing.
    probe.environment_withheld.clear();
    probe.environment_withheld.insert(12);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert!(!has(r, EvidenceKind::NotRestartable));
}

/// An orphaned tree in `APP` that only its launch makes known: `npm run db:studio` → `node
/// studio.js`, listening.
fn studio() -> FakeProbe {
    FakeProbe::default()
        .with(process(10, 1, &["npm", "run", "db:studio"]), APP)
        .with(process(11, 10, &["sh", "-c", "node studio.js"]), APP)
        .with(process(12, 11, &["node", "studio.js"]), APP)
        .listen("127.0.0.1:5555", 12)
}

#[test]
fn a_tree_known_only_by_launch_is_green_only_with_a_quiet_life() {
    let scan = run(&studio());
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("studio", Level::Green),
        "{r:#?}"
    );
    let why = message(r, EvidenceKind::ToolKind);
    assert!(
        why.contains("launched by `npm run db:studio` in this project"),
        "{why}"
    );
    // A job: 50 s of CPU over its 60 s — a long run that paused during the sample.
    let mut busy = studio();
    busy.process_mut(12).cpu_ns = Some(50_000_000_000);
    let scan = run(&busy);
    let r = only(&scan);
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    let why = message(r, EvidenceKind::LifeActivity);
    assert!(
        why.contains("pid 12 (node studio.js) has used 83% of a core"),
        "{why}"
    );
    // Just under the bound: still quiet.
    let mut quiet = studio();
    quiet.process_mut(12).cpu_ns = Some(5_900_000_000);
    assert_eq!(only(&run(&quiet)).level, Level::Green);
    // Unread: no quiet life can be shown.
    let mut unread = studio();
    unread.process_mut(11).cpu_ns = None;
    let scan = run(&unread);
    let r = only(&scan);
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    assert!(message(r, EvidenceKind::LifeActivity).contains("could not be read"));
}

#[test]
fn a_table_kind_needs_no_quiet_life() {
    let mut probe = FakeProbe::default()
        .with(
            process(10, 1, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("127.0.0.1:5173", 10);
    probe.process_mut(10).cpu_ns = Some(50_000_000_000);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert!(!has(r, EvidenceKind::LifeActivity));
}

#[test]
fn a_production_setting_keeps_a_launch_unknown() {
    let mut probe = studio();
    probe
        .environments
        .insert(12, vec![b"NODE_ENV=production".to_vec()]);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.kind.as_str(), r.level),
        ("unknown", Level::Yellow),
        "{r:#?}"
    );
}

#[test]
fn nothing_outside_a_project_is_known_by_launch() {
    let probe = FakeProbe::default()
        .with(process(10, 1, &["npm", "run", "db:studio"]), "/srv/x")
        .with(process(12, 10, &["node", "studio.js"]), "/srv/x")
        .listen("127.0.0.1:5555", 12);
    let scan = super::scan(&probe, &super::tests::opts(), &super::tests::markers).unwrap();
    assert!(scan.projects.is_empty(), "{scan:#?}");
}

#[test]
fn a_runtimes_watch_mode_is_the_root_of_its_server() {
    // `node --watch server.js` runs the server as its child and starts it again on a change.
    let probe = FakeProbe::default()
        .with(process(10, 1, &["node", "--watch", "server.js"]), APP)
        .with(process(11, 10, &["/usr/bin/node", "server.js"]), APP)
        .listen("127.0.0.1:3000", 11);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!((r.root.pid, r.level), (10, Level::Green), "{r:#?}");
    assert_eq!(r.kind, "server");
    assert!(has(r, EvidenceKind::Respawner), "{r:#?}");
    // A reload arbiter by its flag, which no table names and which holds no watch word.
    let venv = "/home/u/app/.venv/bin";
    let probe = FakeProbe::default()
        .with(
            process(
                10,
                1,
                &[
                    &format!("{venv}/python"),
                    &format!("{venv}/hypercorn"),
                    "--reload",
                    "m:app",
                ],
            ),
            APP,
        )
        .with(
            process(
                11,
                10,
                &[
                    &format!("{venv}/python"),
                    "-c",
                    "from multiprocessing.spawn import spawn_main",
                ],
            ),
            APP,
        )
        .listen("127.0.0.1:8000", 11);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.root.pid, r.kind.as_str(), r.level),
        (10, "hypercorn", Level::Green),
        "{r:#?}"
    );
    assert!(has(r, EvidenceKind::Respawner), "{r:#?}");
}

#[test]
fn go_run_is_the_root_and_the_kind_is_the_programs_own_name() {
    let probe = FakeProbe::default()
        .with(process(10, 1, &["go", "run", "."]), APP)
        .with(process(11, 10, &["/tmp/go-build123/b001/exe/shop"]), APP)
        .listen("127.0.0.1:8080", 11);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(
        (r.root.pid, r.kind.as_str(), r.level),
        (10, "shop", Level::Green),
        "{r:#?}"
    );
    assert!(message(r, EvidenceKind::ToolKind).contains("`go run`"));
}

#[test]
fn a_monorepo_runner_is_the_root_of_every_workspaces_server() {
    let probe = FakeProbe::default()
        .with(process(10, 1, &["turbo", "run", "dev"]), APP)
        .with(
            process(11, 10, &["npm", "run", "dev"]),
            "/home/u/app/apps/web",
        )
        .with(
            process(12, 11, &["node", "server.js"]),
            "/home/u/app/apps/web",
        )
        .with(
            process(13, 10, &["npm", "run", "dev"]),
            "/home/u/app/apps/api",
        )
        .with(process(14, 13, &["node", "api.js"]), "/home/u/app/apps/api")
        .listen("127.0.0.1:3000", 12)
        .listen("127.0.0.1:3001", 14);
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.root.pid, 10, "{r:#?}");
    assert_eq!(r.ports.len(), 2, "{r:#?}");
    assert_eq!(scan.projects[0].path, APP);
    assert_eq!(r.level, Level::Green, "{r:#?}");
}

#[test]
fn a_portless_watcher_is_a_candidate_only_by_a_watch_word() {
    let watcher = |argv: &[&str]| {
        let probe = FakeProbe::default().with(process(10, 1, argv), APP);
        run(&probe).projects.len()
    };
    assert_eq!(
        watcher(&["node", "/home/u/app/node_modules/.bin/vitest", "--watch"]),
        1
    );
    assert_eq!(
        watcher(&["node", "/home/u/app/node_modules/.bin/vitest", "run"]),
        0
    );
    assert_eq!(
        watcher(&[
            "node",
            "/home/u/app/node_modules/.bin/vitest",
            "--watch=false"
        ]),
        0
    );
    assert_eq!(watcher(&["python3", "train.py"]), 0);
    // Outside a project: never.
    let probe = FakeProbe::default().with(
        process(10, 1, &["node", "/opt/t/vitest.mjs", "--watch"]),
        "/srv",
    );
    assert!(run(&probe).projects.is_empty());
}

#[test]
fn a_reloaders_polling_is_not_the_servers_work() {
    use crate::probe::ActivityDelta;
    let reload = |parent_ms: u64, child_ms: u64| {
        let mut probe = FakeProbe::default()
            .with(
                process(
                    10,
                    1,
                    &[
                        "/home/u/app/.venv/bin/python",
                        "/home/u/app/.venv/bin/uvicorn",
                        "main:app",
                        "--reload",
                    ],
                ),
                APP,
            )
            .with(
                process(
                    11,
                    10,
                    &[
                        "/home/u/app/.venv/bin/python",
                        "-c",
                        "from multiprocessing.spawn import spawn_main",
                    ],
                ),
                APP,
            )
            .listen("127.0.0.1:8000", 11);
        for (pid, ms) in [(10, parent_ms), (11, child_ms)] {
            probe.activity.insert(
                pid,
                Ok(ActivityDelta {
                    cpu_ns: ms * 1_000_000,
                    io_bytes: 0,
                }),
            );
        }
        run(&probe)
    };
    // 20 ms of the 100 ms window: 20 % of a core, all of it the reloader's.
    let scan = reload(20, 0);
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    let why = message(r, EvidenceKind::Activity);
    assert!(
        why.contains("apart from its reloader's own polling"),
        "{why}"
    );
    assert!(why.contains("watchfiles"), "{why}");
    // The server busy too: busy.
    let scan = reload(20, 20);
    assert_eq!(only(&scan).level, Level::Yellow);
}

#[test]
fn a_respawner_that_serves_by_itself_is_the_server_and_its_work_counts() {
    use crate::probe::ActivityDelta;
    // `python3 app.py --reload` listens itself and runs an idle child: its CPU is the server's.
    let mut probe = FakeProbe::default()
        .with(process(10, 1, &["python3", "app.py", "--reload"]), APP)
        .with(process(11, 10, &["sleep", "1000"]), APP)
        .listen("127.0.0.1:4201", 10);
    probe.activity.insert(
        10,
        Ok(ActivityDelta {
            cpu_ns: 90_000_000,
            io_bytes: 0,
        }),
    );
    let scan = run(&probe);
    let r = only(&scan);
    assert_eq!(r.level, Level::Yellow, "{r:#?}");
    assert!(
        message(r, EvidenceKind::Activity).starts_with("busy"),
        "{r:#?}"
    );
}
