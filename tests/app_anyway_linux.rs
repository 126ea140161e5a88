//! The app's "Send SIGTERM anyway" against real processes, as the worker's engine runs it: a
//! server whose parent still runs (this test) is refused by an ordinary stop, and a stop
//! anyway confirming what its card showed sends it SIGTERM and names what it set aside.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use pier_core::model::card::{Level, Project, Resource};
use pier_core::model::outcome::ResourceResult;
use pier_core::model::reason::{Anyway, Reason};
use pier_core::model::shown::Shown;
use pier_core::store::Store;
use pier_core::worker::{stop_summary, ActionKey, Engine, StopTarget, SystemEngine};

fn engine(sb: &Sandbox) -> SystemEngine {
    // The protect list: a folder with none in it, never the developer's own.
    std::env::set_var("PIER_CONFIG_DIR", "/nonexistent/pier-test-config");
    SystemEngine::new(
        Store::open_at(sb.path().join("state")).unwrap(),
        vec![sb.path().canonicalize().unwrap()],
        Duration::from_millis(100),
        PathBuf::from(env!("CARGO_BIN_EXE_pier")),
    )
}

/// The card holding `pid` in the engine's scan, once `until` holds of its resource.
fn card(engine: &SystemEngine, pid: u32, until: impl Fn(&Resource) -> bool) -> (Project, Resource) {
    wait_for("the server's card", || {
        let scan = engine.refresh(1).scan.ok()?;
        scan.projects.into_iter().find_map(|p| {
            let r = p.resources.iter().find(|r| r.root.pid == pid)?.clone();
            until(&r).then_some((p, r))
        })
    })
}

#[test]
fn the_app_s_stop_anyway_of_a_server_under_a_live_parent_sends_sigterm_and_names_it() {
    let sb = Sandbox::new();
    let project = sb.project("api", VITE);
    // A child of this test: its parent still runs, so it is not orphaned (yellow).
    let mut server = Command::new(project.join(VITE))
        .arg("--report")
        .arg(sb.report_path("api"))
        .current_dir(&project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fixture starts");
    sb.report("api", |_| true);
    let engine = engine(&sb);
    // Once it is idle: its one reason is its live parent.
    let (p, r) = card(&engine, server.id(), |r| r.reasons == [Reason::NotOrphaned]);
    assert_eq!(p.level, Level::Yellow, "{r:#?}");
    let target = StopTarget {
        project: p.path.clone(),
        id: r.id.parse().unwrap(),
        shown: Shown::of(p.level, &r),
    };

    let refused = engine.stop(std::slice::from_ref(&target), &mut |_| {});
    assert_eq!(refused[0].result, ResourceResult::Refused, "{refused:#?}");
    assert!(alive(server.id()), "an ordinary stop sent nothing");

    let mut anyway = Anyway::default();
    anyway.confirm(&r.id, r.reasons.iter().copied().collect());
    let mut heard = Vec::new();
    let reports = engine.stop_with(&[target], &anyway, &mut |r| heard.push(r.clone()));
    assert_eq!(heard, reports, "each report is heard as it ends");
    let report = &reports[0];
    assert_eq!(report.result, ResourceResult::Stopped, "{report:#?}");
    let aside: Vec<Reason> = report.set_aside.iter().map(|s| s.reason).collect();
    assert_eq!(aside, [Reason::NotOrphaned]);
    let status = server.wait().expect("the fixture is reaped");
    assert_eq!(
        status.signal(),
        Some(15),
        "it ended on SIGTERM, not SIGKILL"
    );

    let line = stop_summary(
        ActionKey::Project(p.path.clone()),
        &[(p.path.clone(), Ok(report.clone()))],
    );
    // "api: stopped anyway (1 process, about 10.5 MB freed), set aside: not_orphaned"
    assert!(
        line.summary.starts_with("api: stopped anyway (1 process")
            && line.summary.ends_with("), set aside: not_orphaned"),
        "{}",
        line.summary
    );
}
