//! The command line refuses what it cannot honour, in one sentence and exit 2, before it reads,
//! locks or writes anything: a stop's sample that cannot fit its deadline, a flag where it
//! would be ignored or would mean too much, a `--project` that is no project's folder, a
//! `PIER_STATE_DIR` that is empty or relative. And a record of a newer Pier says so. Each test
//! is scoped to its own temp folder; no process is started or signalled.
#![cfg(target_os = "linux")]

mod common;

use std::process::{Command, Output};

use common::*;
use pier_core::front::numbers;
use pier_core::model::snapshot::Snapshot;
use pier_core::store::Versioned;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2, nothing on stdout, and exactly `sentence` (one line) on stderr.
fn refused_with(out: &Output, sentence: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(err, format!("pier: {sentence}\n"));
}

/// Whether the sandbox's state folder was ever opened (opening creates `records` and `locks`).
fn state_opened(sb: &Sandbox) -> bool {
    let state = sb.path().join("state");
    state.join("records").exists() || state.join("locks").exists()
}

/// Found by trying: `pier stop --sample-ms 2500 ID` wrote a snapshot, then was always refused
/// at the 2 s deadline.
#[test]
fn a_stop_sample_that_cannot_fit_the_deadline_is_refused_before_anything_is_written() {
    let sb = Sandbox::new();
    for sample in ["2500", "1001", "0"] {
        let out = sb.pier_exact(&["stop", "--sample-ms", sample, "17824-71008"]);
        refused_with(&out, &numbers::stop_sample(sample).unwrap_err());
        assert!(stderr(&out).contains("must fit in 2 s"));
    }
    let out = sb.pier_exact(&["stop", "--grace", "1e300", "17824-71008"]);
    refused_with(&out, &numbers::grace("1e300").unwrap_err());
    assert!(
        !state_opened(&sb),
        "no snapshot, no lock, not even the folder"
    );
}

/// Found by trying: clap drops a `requires` whose target conflicts with an argument given, so
/// `pier stop ID --under DIR` ignored `--under`, and `--force --all-green` passed.
#[test]
fn under_and_force_where_they_would_be_ignored_or_mean_too_much_are_usage_errors() {
    let sb = Sandbox::new();
    let dir = sb.path().to_str().unwrap();
    let under = "--under limits --all-green only; with resource ids or --project it would be \
                 ignored (give --all-green --under DIR, or leave --under out)";
    refused_with(
        &sb.pier_exact(&["stop", "17824-71008", "--under", dir]),
        under,
    );
    refused_with(
        &sb.pier_exact(&["stop", "--project", dir, "--under", dir]),
        under,
    );
    let force = "--force stops only resources named by id (as `pier scan` shows them), never a \
                 whole project or every green resource, because it skips the level, connection \
                 and activity checks";
    refused_with(
        &sb.pier_exact(&["stop", "--force", "--all-green", "--under", dir]),
        force,
    );
    refused_with(
        &sb.pier_exact(&["stop", "--force", "--project", dir]),
        force,
    );
    assert!(!state_opened(&sb));
}

/// Found by trying: `pier stop --project <a folder that is no project>` said "Nothing to
/// stop." and exited 0.
#[test]
fn a_project_flag_that_names_no_projects_folder_says_so() {
    let sb = Sandbox::new();
    let project = sb.project("shop", VITE); // a package.json, nothing running
    let plain = sb.path().join("notes");
    std::fs::create_dir(&plain).unwrap();
    let inside = project.join("src");
    std::fs::create_dir(&inside).unwrap();
    let run = |p: &std::path::Path| sb.pier_exact(&["stop", "--project", p.to_str().unwrap()]);

    let out = run(&plain);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!(
            "pier: --project {}: not a project folder (neither it nor a folder above it holds \
             a project marker: .git, package.json,",
            plain.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    refused_with(
        &run(&inside),
        &format!(
            "--project {}: not a project's own folder but a folder inside the project {} (give \
             --project {})",
            inside.display(),
            project.display(),
            project.display()
        ),
    );

    let out = run(&project);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Nothing to stop.\n\n0 of 0 stopped\n"
    );

    refused_with(
        &run(&sb.path().join("gone")),
        &format!(
            "--project {}: no such folder",
            sb.path().join("gone").display()
        ),
    );
}

/// Found by trying: a relative `PIER_STATE_DIR` failed its first run after creating the
/// folder, and an empty one silently meant the default folder.
#[test]
fn pier_state_dir_must_be_an_absolute_path() {
    let sb = Sandbox::new();
    let history = |value: &str| {
        Command::new(pier_bin())
            .arg("history")
            .env("PIER_STATE_DIR", value)
            .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
            .current_dir(sb.path())
            .output()
            .expect("pier runs")
    };
    refused_with(
        &history("relative-state"),
        "PIER_STATE_DIR is \"relative-state\", a relative path: Pier's state must be one folder \
         wherever Pier runs (the app, its login item, every terminal), so give an absolute path",
    );
    assert!(
        !sb.path().join("relative-state").exists(),
        "nothing created"
    );
    refused_with(
        &history(""),
        "PIER_STATE_DIR is set but empty: give it an absolute path, or unset it for the default \
         state folder",
    );
    let out = history(sb.path().join("state").to_str().unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "No snapshots yet.\n");
}

/// Found by trying: a snapshot of a newer schema whose fields had changed was listed as
/// "missing field `id`".
#[test]
fn a_record_of_a_newer_pier_is_listed_as_such_and_kept() {
    let sb = Sandbox::new();
    let records = sb.path().join("state/records");
    std::fs::create_dir_all(&records).unwrap();
    let newer = Snapshot::SCHEMA + 1;
    let path = records.join("snap-17824-71008-1764590000000.json");
    let body = format!(r#"{{"schema": {newer}, "resource": {{"root": 17824}}}}"#);
    std::fs::write(&path, &body).unwrap();
    let out = sb.pier_exact(&["history"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "unreadable: the record {} was written by a newer Pier (schema {newer}; this Pier \
             reads up to {}); it was kept as it is\n",
            path.display(),
            Snapshot::SCHEMA
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), body, "kept");
}

/// `pier --help` says what a user looks for there: the exit codes, the environment variables
/// Pier reads, and examples.
#[test]
fn the_help_names_exit_codes_environment_and_examples() {
    let out = Command::new(pier_bin())
        .arg("--help")
        .output()
        .expect("pier runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for words in [
        "Exit codes:",
        "128+N",
        "PIER_STATE_DIR",
        "PIER_LOG",
        "NO_COLOR",
        "DOCKER_HOST",
        "Examples:",
        "pier stop 17824-71008",
    ] {
        assert!(text.contains(words), "{words:?} is not in:\n{text}");
    }
}
