//! The app's "Stop when safe" against a real server, as the worker's engine runs it: a client
//! the test holds keeps the server red; the app arms it on its fresh card and can cancel it;
//! armed again, the card shows what it waits for and nothing fires while the client stays;
//! once the client leaves, a refresh fires the whole chain and says "by your armed stop".
#![cfg(target_os = "linux")]

mod common;

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use common::*;
use pier_core::auto::scheduler::SchedulerOptions;
use pier_core::model::card::Resource;
use pier_core::model::shown::Shown;
use pier_core::store::Store;
use pier_core::worker::{ActionReport, Engine, StopTarget, SystemEngine};

/// The app's engine over the sandbox, with a settle of one second.
fn engine(sb: &Sandbox) -> SystemEngine {
    // The protect list: a folder with none in it, never the developer's own.
    std::env::set_var("PIER_CONFIG_DIR", "/nonexistent/pier-test-config");
    SystemEngine::new(
        Store::open_at(sb.path().join("state")).unwrap(),
        vec![sb.path().canonicalize().unwrap()],
        Duration::from_millis(100),
        PathBuf::from(env!("CARGO_BIN_EXE_pier")),
    )
    .with_scheduler(SchedulerOptions {
        settle: Duration::from_secs(1),
        ..SchedulerOptions::default()
    })
    // The sandbox's own scheduler lock: never one a running app or pier watch holds.
    .with_lock_folder(
        pier_core::trust::folder::Folder::open(
            &common::watch::runtime(sb),
            pier_core::trust::Me::current(),
            false,
        )
        .unwrap(),
    )
}

/// Refreshes until the resource holding `pid` satisfies `until`: its card, and the armed
/// results of that refresh.
fn refresh_until(
    engine: &SystemEngine,
    pid: u32,
    until: impl Fn(&Resource) -> bool,
) -> (Resource, Vec<ActionReport>) {
    wait_for("the server's card", || {
        let refreshed = engine.refresh(1);
        let scan = refreshed.scan.expect("the scan runs");
        let r = scan
            .projects
            .into_iter()
            .flat_map(|p| p.resources)
            .find(|r| r.members.iter().any(|m| m.pid == pid))?;
        until(&r).then_some((r, refreshed.armed))
    })
}

#[test]
fn the_app_arms_a_server_held_by_a_client_cancels_it_and_an_arm_fires_once_the_client_leaves() {
    if fixtures_cannot_be_orphans("app armed stop") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let engine = engine(&sb);
    let (r, _) = refresh_until(&engine, pid(&server), |r| !r.reasons.is_empty());
    let target = StopTarget {
        project: String::new(),
        id: r.id.parse().unwrap(),
        shown: Shown::of(r.level, &r),
    };

    let armed = engine.arm(&target, false).expect("armed");
    assert!(
        armed
            .waiting_for
            .iter()
            .any(|w| w.contains(&format!(":{port}"))),
        "{armed:?}"
    );
    let cancelled = engine.disarm(&target.id).expect("the state folder works");
    assert_eq!(cancelled.map(|a| a.id), Some(r.id.clone()));
    let (r, fired) = refresh_until(&engine, pid(&server), |_| true);
    assert_eq!((r.armed, fired), (None, vec![]), "cancelled: nothing waits");

    engine.arm(&target, false).expect("armed again");
    let (r, fired) = refresh_until(&engine, pid(&server), |r| r.armed.is_some());
    let waits = &r.armed.unwrap().waiting_for;
    assert!(waits[0].contains(&format!(":{port}")), "{waits:?}");
    assert!(fired.is_empty(), "a client holds it: {fired:?}");
    assert!(alive(pid(&server)));

    // Gone with a reset: a normal close would keep the server used for a minute.
    reset(client);
    let fired = wait_for("the armed stop to fire", || {
        let refreshed = engine.refresh(1);
        (!refreshed.armed.is_empty()).then_some(refreshed.armed)
    });
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(
        fired[0]
            .summary
            .starts_with("web: stopped by your armed stop ("),
        "{}",
        fired[0].summary
    );
    wait_for("the server to end", || (!alive(pid(&server))).then_some(()));
    assert_eq!(
        engine.disarm(&target.id).unwrap(),
        None,
        "a fired arm is gone"
    );
}

/// Without the scheduler lock the app measures but fires nothing: while `pier watch` (played
/// by a lock of its own in the sandbox's runtime folder) holds it, an armed server whose client
/// left stays up through refreshes well past the settle; once the lock is let go, the app's
/// next refreshes take it and fire.
#[test]
fn without_the_scheduler_lock_the_app_fires_no_armed_stop_until_it_takes_the_lock() {
    use pier_core::auto::lock::{take_in, Acting, Who};
    if fixtures_cannot_be_orphans("app armed stop without the lock") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("web", &[], |_| true);
    let port = server["port"].as_u64().unwrap() as u16;
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let run = pier_core::trust::folder::Folder::open(
        &common::watch::runtime(&sb),
        pier_core::trust::Me::current(),
        false,
    )
    .unwrap();
    let watch = take_in(&run, Who::Watch).unwrap();
    let engine = engine(&sb);
    let (r, _) = refresh_until(&engine, pid(&server), |r| !r.reasons.is_empty());
    let target = StopTarget {
        project: String::new(),
        id: r.id.parse().unwrap(),
        shown: Shown::of(r.level, &r),
    };
    engine.arm(&target, false).expect("armed");
    reset(client);
    // A window of refreshes, 8 s of them, far past the 1 s settle: nothing fires.
    let end = std::time::Instant::now() + Duration::from_secs(8);
    while std::time::Instant::now() < end {
        let refreshed = engine.refresh(1);
        assert!(matches!(refreshed.acting, Acting::Elsewhere(Some(_))));
        assert!(refreshed.armed.is_empty(), "fired without the lock");
    }
    assert!(alive(pid(&server)), "stopped without the lock");
    drop(watch);
    let fired = wait_for("the armed stop to fire once the app holds the lock", || {
        let refreshed = engine.refresh(1);
        (!refreshed.armed.is_empty()).then_some(refreshed.armed)
    });
    assert!(fired[0]
        .summary
        .starts_with("web: stopped by your armed stop ("));
}
