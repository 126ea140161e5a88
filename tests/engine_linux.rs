//! The app's engine (what the worker calls) against real processes: a stop is handed what the
//! card showed and refuses when it changed; a restart runs through `pier restart`, so the new
//! tree is not the app's child.
#![cfg(target_os = "linux")]

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;
use pier_core::model::card::Level;
use pier_core::model::history::RestartResult;
use pier_core::model::outcome::{ResourceResult, StopReport};
use pier_core::model::shown::{shown_members, Shown, ShownMember};
use pier_core::store::Store;
use pier_core::worker::{Engine, StopTarget, SystemEngine};

fn engine(sb: &Sandbox) -> SystemEngine {
    // The engine reads the protect list from this process's environment: a folder with none
    // in it, the same for every test here (never the developer's own list).
    std::env::set_var("PIER_CONFIG_DIR", "/nonexistent/pier-test-config");
    SystemEngine::new(
        Store::open_at(sb.path().join("state")).unwrap(),
        vec![sb.path().canonicalize().unwrap()],
        Duration::from_millis(100),
        PathBuf::from(env!("CARGO_BIN_EXE_pier")),
    )
}

/// The resource holding `pid` in the engine's scan: (id, project level, member identities).
fn shown(engine: &SystemEngine, pid: u32) -> (String, Level, Vec<ShownMember>) {
    let scan = engine.refresh(1).scan.expect("the scan runs");
    scan.projects
        .iter()
        .find_map(|p| {
            let r = p
                .resources
                .iter()
                .find(|r| r.members.iter().any(|m| m.pid == pid))?;
            Some((r.id.clone(), p.level, shown_members(r)))
        })
        .expect("the fixture is in the scan")
}

/// The app's stop of one card with one resource: a batch of one, its report heard once.
fn stop_one(engine: &SystemEngine, id: &str, shown: Shown) -> StopReport {
    let target = StopTarget {
        project: String::new(),
        id: id.parse().expect("a card's id"),
        shown,
    };
    let mut heard = Vec::new();
    let mut reports = engine.stop(&[target], &mut |r| heard.push(r.clone()));
    assert_eq!(heard, reports, "each report is heard as it ends");
    reports.pop().expect("one report")
}

#[test]
fn a_stop_is_refused_when_the_members_differ_from_what_the_card_showed() {
    if fixtures_cannot_be_orphans("engine stop shown") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("shop", &[], |_| true);
    let engine = engine(&sb);
    let (id, level, mut members) = shown(&engine, pid(&server));
    assert_eq!(level, Level::Green);

    let stop_as = |project_level: Level, members: &[ShownMember]| {
        stop_one(
            &engine,
            &id,
            Shown {
                project_level,
                members: members.to_vec(),
                container_run: None,
            },
        )
    };

    // The card showed one member with another start time: not the process that runs now.
    members[0].identity.start_time += 1;
    let report = stop_as(level, &members);
    assert_eq!(report.result, ResourceResult::Refused, "{report:#?}");
    assert!(
        report.reason.contains("changed since they were shown"),
        "{}",
        report.reason
    );
    assert!(alive(pid(&server)), "nothing was signalled");
    members[0].identity.start_time -= 1;

    // A card that showed another executable for the same pid and start time: it exec'd since.
    let shown_exe = members[0].exe.clone();
    members[0].exe = Some("/usr/bin/something-else".into());
    let report = stop_as(level, &members);
    assert_eq!(report.result, ResourceResult::Refused, "{report:#?}");
    assert!(report.reason.contains("exec'd"), "{}", report.reason);
    assert!(alive(pid(&server)));
    members[0].exe = shown_exe;

    // A card that showed the project as yellow is refused too, though it is green now.
    let report = stop_as(Level::Yellow, &members);
    assert_eq!(report.result, ResourceResult::Refused, "{report:#?}");
    assert!(alive(pid(&server)));

    // What the card really showed: stopped.
    let report = stop_as(level, &members);
    assert_eq!(report.result, ResourceResult::Stopped, "{report:#?}");
    assert!(!alive(pid(&server)));
}

#[test]
fn a_restart_from_the_engine_leaves_the_new_tree_adopted_not_a_child_of_pier() {
    if fixtures_cannot_be_orphans("engine restart") {
        return;
    }
    let sb = Sandbox::new();
    let port = free_port();
    let server = sb.start_vite("shop", &["--port", &port.to_string()], |_| true);
    let engine = engine(&sb);
    let (id, level, members) = shown(&engine, pid(&server));
    let stopped = stop_one(
        &engine,
        &id,
        Shown {
            project_level: level,
            members,
            container_run: None,
        },
    );
    assert_eq!(stopped.result, ResourceResult::Stopped, "{stopped:#?}");

    let snapshot = stopped.snapshot.expect("a snapshot");
    let report = engine.restart(&snapshot.parse().expect("a record name"));
    assert_eq!(report.result, RestartResult::Ready, "{report:#?}");
    let again = sb.report("shop", |r| r["pid"] != server["pid"]);
    let root = report.pid.expect("the new root's pid");
    assert_ne!(
        ppid_of(root),
        Some(std::process::id()),
        "the restarted root is adopted, not this process's child"
    );
    assert!(alive(pid(&again)));
}
