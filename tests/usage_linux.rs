//! The command line refuses what it cannot honour, in one sentence and exit 2, before it reads,
//! locks or writes anything: a stop's sample that cannot fit its deadline, a flag where it
//! would be ignored or would mean too much, a `--project` that is no project's folder, a
//! `PIER_STATE_DIR` that is empty or relative. And a record of a newer Pier says so. It says
//! what a user looks for: the help's exit codes and examples, the shell completions and man
//! pages, and a schema in every JSON document. Each test is scoped to its own temp folder; no
//! process is started or signalled.
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
        refused_with(&out, &numbers::stop_sample(sample).unwrap_err().to_string());
        assert!(stderr(&out).contains("must fit in 2 s"));
    }
    let out = sb.pier_exact(&["stop", "--grace", "1e300", "17824-71008"]);
    refused_with(&out, &numbers::grace("1e300").unwrap_err().to_string());
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
    let under = "--under limits --all-green and --when-safe only; with resource ids or \
                 --project it would be ignored (give --all-green --under DIR, or leave --under \
                 out)";
    refused_with(
        &sb.pier_exact(&["stop", "17824-71008", "--under", dir]),
        under,
    );
    refused_with(
        &sb.pier_exact(&["stop", "--project", dir, "--under", dir]),
        under,
    );
    let force = "--force follows one stop of a resource named by id (as `pier stop` reported \
                 it), never a whole project or every green resource";
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
    assert_eq!(String::from_utf8_lossy(&out.stdout), "No snapshots.\n");
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

/// Each command's `--help` ends with examples, and `pier stop` / `pier restart` with their own
/// exit codes.
#[test]
fn each_command_s_help_has_examples() {
    for command in [
        "scan",
        "stop",
        "armed",
        "history",
        "restart",
        "protect",
        "auto",
        "watch",
        "mcp",
        "completions",
        "man",
    ] {
        let out = Command::new(pier_bin())
            .args([command, "--help"])
            .output()
            .expect("pier runs");
        assert_eq!(out.status.code(), Some(0), "{command}");
        let text = String::from_utf8_lossy(&out.stdout);
        let examples = text
            .split_once("\nExamples:\n")
            .map(|(_, examples)| examples)
            .unwrap_or_else(|| panic!("no examples in `pier {command} --help`:\n{text}"));
        assert!(
            examples.contains(&format!("  pier {command} ")),
            "{command}: {examples}"
        );
        if matches!(command, "stop" | "restart") {
            assert!(text.contains("\nExit codes:\n  0 "), "{command}: {text}");
        }
    }
}

/// `bash`, as a new user's shell runs the script: sourced, then asked to complete.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    // _pier is called as bash calls it: the command, the word being completed, the one before.
    let line = format!(
        "source {script}; complete -p pier >&2; COMP_WORDS=({words}); COMP_CWORD={cword}; \
         _pier pier {cur} {prev}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script = script.display(),
        words = words.join(" "),
        cword = words.len() - 1,
        cur = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &line])
        .output()
        .expect("bash runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("-F _pier") && stderr(&out).trim_end().ends_with(" pier"),
        "the script registers a completion for pier: {}",
        stderr(&out)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `pier completions SHELL` prints a script that completes Pier's commands and their options;
/// the bash one is sourced and asked, as a shell would.
#[test]
fn completions_complete_pier_s_commands_and_options() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = sb.pier_exact(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = String::from_utf8_lossy(&out.stdout);
        for command in ["scan", "stop", "history", "restart", "app", "--all-green"] {
            assert!(script.contains(command), "{shell}: no {command}");
        }
    }
    let script = sb.path().join("pier.bash");
    std::fs::write(&script, sb.pier_exact(&["completions", "bash"]).stdout).unwrap();
    assert_eq!(bash_completes(&script, &["pier", "st"]), ["stop"]);
    assert_eq!(bash_completes(&script, &["pier", "h"]), ["history", "help"]);
    assert_eq!(
        bash_completes(&script, &["pier", "stop", "--all-g"]),
        ["--all-green"]
    );
    assert_eq!(
        bash_completes(&script, &["pier", "scan", "--cpu"]),
        ["--cpu-threshold"]
    );
    // `pier app` hands its arguments to pier-app: its own options are offered.
    assert_eq!(
        bash_completes(&script, &["pier", "app", "--re"]),
        ["--refresh"]
    );
}

/// A shell Pier has no script for is a usage error naming the ones it has.
#[test]
fn completions_for_an_unknown_shell_are_a_usage_error() {
    let sb = Sandbox::new();
    let out = sb.pier_exact(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
    assert!(
        err.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{err}"
    );
    let out = sb.pier_exact(&["completions"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `pier man` prints pier.1: a roff page that opens with its `.TH` header and names every
/// command's page; `pier man COMMAND` prints that command's, and `--dir` writes them all.
#[test]
fn man_prints_the_pages_of_pier_and_of_each_command() {
    let sb = Sandbox::new();
    let out = sb.pier_exact(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.starts_with(".TH PIER 1 "), "{page}");
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH OPTIONS",
        ".SH \"EXIT STATUS\"",
    ] {
        assert!(page.contains(section), "{section}: {page}");
    }
    let commands = [
        "app",
        "scan",
        "stop",
        "armed",
        "history",
        "restart",
        "protect",
        "auto",
        "watch",
        "mcp",
        "doctor",
        "completions",
        "man",
    ];
    for command in commands {
        assert!(page.contains(&format!("pier\\-{command}(1)")), "{command}");
    }
    let stop = sb.pier_exact(&["man", "stop"]);
    let stop = String::from_utf8_lossy(&stop.stdout);
    assert!(stop.starts_with(".TH PIER-STOP 1 "), "{stop}");
    assert!(stop.contains("\\-\\-all\\-green") && stop.contains(".SH EXAMPLES"));

    let dir = sb.path().join("man/man1");
    let out = sb.pier_exact(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut written = vec!["pier.1".to_owned()];
    written.extend(commands.iter().map(|c| format!("pier-{c}.1")));
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.rsplit('/').next().unwrap().to_owned())
        .collect();
    assert_eq!(listed, written);
    for name in &written {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.starts_with(".TH PIER"), "{name}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("pier.1")).unwrap(), page);
}

/// Every JSON document Pier prints says its schema (docs/*-json.md). These need no process:
/// a scan of an empty folder, an empty history, and a stop and a restart of an id no process
/// can have (pids end below 2^22), which are refused.
#[test]
fn every_json_document_says_its_schema() {
    let sb = Sandbox::new();
    let nobody = "4294967295-1";
    for (args, code) in [
        (&["scan", "--json", "--sample-ms", "0"][..], 0),
        (&["history", "--json"], 0),
        (&["stop", "--json", nobody], 3),
        (&["restart", "--json", nobody], 3),
    ] {
        let out = if args[0] == "scan" {
            sb.pier(args)
        } else {
            sb.pier_exact(args)
        };
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let doc: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(doc["schema"], 1, "{args:?}: {doc:#}");
    }
}
