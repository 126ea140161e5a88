//! One scheduler per user (docs/design.md §5a), with real `pier watch` processes: a second
//! watch refuses while the first runs and names it; the lock frees when its holder is killed;
//! a link, a FIFO, or another user's file planted at the lock's path is refused at once, never
//! followed nor blocked on. Each sandbox has its own state and runtime folders.
#![cfg(target_os = "linux")]

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::users::{finishes_within, Account};
use common::watch::{runtime, Watch};
use common::*;

/// `pier watch` for one rescan over the sandbox, with its runtime folder, bounded in time (a
/// lock open that blocked would hang it).
fn one_rescan(sb: &Sandbox) -> Output {
    let mut c = Command::new(pier_bin());
    c.args([
        "watch",
        "--json",
        "--every",
        "1",
        "--rescans",
        "1",
        "--under",
    ])
    .arg(sb.path())
    .env("PIER_STATE_DIR", sb.path().join("state"))
    .env("PIER_CONFIG_DIR", sb.path().join("config"))
    .env("XDG_RUNTIME_DIR", runtime(sb));
    finishes_within(c, Duration::from_secs(30), "pier watch --rescans 1")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first watch's first rescan: it holds the lock by then.
fn first_rescan(w: &Watch) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, v) = w.next(deadline).expect("the first watch rescans");
        if v["event"] == "rescan" {
            return;
        }
    }
}

#[test]
fn a_second_pier_watch_refuses_and_names_the_first_until_it_is_killed() {
    let sb = Sandbox::new();
    let mut first = Watch::start(&sb, 1, 60);
    first_rescan(&first);
    let out = one_rescan(&sb);
    assert_eq!(out.status.code(), Some(1), "refused: {}", stderr(&out));
    let said = format!(
        "pier: another scheduler runs: pier watch (pid {}) — automatic stops act there; stop \
         it to act here",
        first.pid()
    );
    assert_eq!(stderr(&out).trim_end(), said);
    assert!(out.stdout.is_empty(), "it never rescanned");
    let line = std::fs::read_to_string(runtime(&sb).join("pier-scheduler.lock")).unwrap();
    assert_eq!(line, format!("{} pier watch\n", first.pid()));
    // SIGKILL: no cleanup ran, and the lock is free all the same.
    first.kill();
    let out = one_rescan(&sb);
    assert!(out.status.success(), "free once killed: {}", stderr(&out));
}

/// A watch started where `XDG_RUNTIME_DIR` is unset (by `su`, cron) keeps its lock in the
/// state folder; one with a runtime folder takes that lock too, so the two never both act.
/// Found by the review: each held "the" lock in its own folder, and both ran.
#[test]
fn a_watch_without_a_runtime_folder_refuses_while_one_with_it_runs() {
    let sb = Sandbox::new();
    let first = Watch::start(&sb, 1, 60);
    first_rescan(&first);
    let mut c = Command::new(pier_bin());
    c.args([
        "watch",
        "--json",
        "--every",
        "1",
        "--rescans",
        "1",
        "--under",
    ])
    .arg(sb.path())
    .env("PIER_STATE_DIR", sb.path().join("state"))
    .env("PIER_CONFIG_DIR", sb.path().join("config"))
    .env_remove("XDG_RUNTIME_DIR");
    let out = finishes_within(
        c,
        Duration::from_secs(30),
        "pier watch without a runtime folder",
    );
    assert_eq!(out.status.code(), Some(1), "refused: {}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "another scheduler runs: pier watch (pid {})",
            first.pid()
        )),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "it never rescanned");
}

/// What a refusal of a planted lock path says.
fn refused_as(sb: &Sandbox, what: &str) {
    let out = one_rescan(sb);
    assert_eq!(out.status.code(), Some(1), "refused: {}", stderr(&out));
    assert!(
        stderr(&out).contains(what) && stderr(&out).contains("not use it as the scheduler lock"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "it never rescanned");
}

#[test]
fn a_planted_link_fifo_or_other_user_s_file_at_the_lock_path_is_refused() {
    let sb = Sandbox::new();
    let lock = runtime(&sb).join("pier-scheduler.lock");
    let target = sb.path().join("state").join("elsewhere");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    refused_as(&sb, "a symbolic link");
    assert!(!target.exists(), "the link was followed");

    std::fs::remove_file(&lock).unwrap();
    rustix::fs::mkfifoat(rustix::fs::CWD, &lock, rustix::fs::Mode::from(0o600)).unwrap();
    refused_as(&sb, "a FIFO");

    if !is_root() {
        eprintln!("NOT RUN: another user's file needs root to make the user");
        return;
    }
    std::fs::remove_file(&lock).unwrap();
    let other = Account::new("lock");
    std::fs::write(&lock, "1 pier watch\n").unwrap();
    other.own(&lock);
    refused_as(&sb, &format!("belongs to uid {}", other.uid));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap(),
        "1 pier watch\n",
        "another user's file was written"
    );
    let _ = Path::new(&lock);
}
