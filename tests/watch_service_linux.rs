//! `pier watch --unit` and `--install` (docs/design.md §5a): the unit names the running binary
//! as systemd reads it (checked by a real `systemd-analyze verify`, with the binary at a path
//! holding a space, `%` and `$`; one with a quote, which systemd refuses, is refused), the LaunchAgent is a plist Python's `plistlib` reads,
//! and the install writes where `XDG_CONFIG_HOME` says, keeps a different file without
//! `--force`, and never writes through a planted link.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// `pier` (at `exe`) `watch ARGS`, its config home in the sandbox.
fn watch(sb: &Sandbox, exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .arg("watch")
        .args(args)
        .env("XDG_CONFIG_HOME", sb.path().join("config"))
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .output()
        .expect("pier runs")
}

fn unit_path(sb: &Sandbox) -> PathBuf {
    sb.path().join("config/systemd/user/pier-watch.service")
}

#[test]
fn the_unit_names_the_running_binary_as_systemd_reads_it() {
    let sb = Sandbox::new();
    let odd = sb.path().join("my tools %h $HOME");
    std::fs::create_dir_all(&odd).unwrap();
    let exe = odd.join("pier");
    std::fs::hard_link(pier_bin(), &exe)
        .or_else(|_| std::fs::copy(pier_bin(), &exe).map(drop))
        .unwrap();
    let out = watch(&sb, &exe, &["--unit"]);
    assert!(out.status.success(), "{out:?}");
    let unit = String::from_utf8(out.stdout).unwrap();
    assert!(unit.contains("\nRestart=on-failure\n"), "{unit}");
    let file = sb.path().join("pier-watch.service");
    std::fs::write(&file, &unit).unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&file)
        .output();
    let said = verify
        .as_ref()
        .map(|v| String::from_utf8_lossy(&v.stderr).into_owned());
    match (&verify, &said) {
        (Ok(v), Ok(said)) if !said.contains("Failed to initialize manager") => {
            assert!(v.status.success(), "systemd-analyze verify: {said}\n{unit}");
            assert!(!said.contains("pier-watch.service"), "{said}\n{unit}");
        }
        _ => {
            eprintln!("NOT RUN: systemd-analyze verify ({said:?}); the ExecStart line is parsed");
            let exec = unit.lines().find_map(|l| l.strip_prefix("ExecStart="));
            assert!(exec.is_some_and(|e| e.ends_with("\" watch")), "{unit}");
        }
    }
}

#[test]
fn a_binary_whose_path_systemd_refuses_makes_no_unit() {
    let sb = Sandbox::new();
    let odd = sb.path().join("it's");
    std::fs::create_dir_all(&odd).unwrap();
    let exe = odd.join("pier");
    std::fs::hard_link(pier_bin(), &exe)
        .or_else(|_| std::fs::copy(pier_bin(), &exe).map(drop))
        .unwrap();
    let out = watch(&sb, &exe, &["--install"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("systemd cannot run it"));
    assert!(!unit_path(&sb).exists());
}

#[test]
fn the_launch_agent_is_a_plist_that_runs_pier_watch_at_load() {
    let plist = pier_core::auto::service::launch_agent("/Apps/R&D <x>/pier");
    let read = Command::new("python3")
        .args([
            "-c",
            "import plistlib,sys,json; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin.take().unwrap().write_all(plist.as_bytes())?;
            c.wait_with_output()
        })
        .expect("python3 runs");
    assert!(read.status.success(), "{plist}");
    let v: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(v["Label"], "dev.pier.watch");
    assert_eq!(
        v["ProgramArguments"],
        serde_json::json!(["/Apps/R&D <x>/pier", "watch"])
    );
    assert_eq!(v["RunAtLoad"], true);
    assert_eq!(v["KeepAlive"]["SuccessfulExit"], false);
}

#[test]
fn install_writes_where_xdg_config_home_says_and_keeps_a_different_file_without_force() {
    let sb = Sandbox::new();
    let out = watch(&sb, &pier_bin(), &["--install"]);
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "systemctl --user daemon-reload && systemctl --user enable --now pier-watch.service"
        ),
        "{said}"
    );
    let unit = std::fs::read_to_string(unit_path(&sb)).unwrap();
    let printed = watch(&sb, &pier_bin(), &["--unit"]);
    assert_eq!(
        unit.as_bytes(),
        printed.stdout,
        "--install writes what --unit prints"
    );

    std::fs::write(unit_path(&sb), "[Service]\nExecStart=/bin/true\n").unwrap();
    let out = watch(&sb, &pier_bin(), &["--install"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(
        std::fs::read_to_string(unit_path(&sb)).unwrap(),
        "[Service]\nExecStart=/bin/true\n"
    );
    let out = watch(&sb, &pier_bin(), &["--install", "--force"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(unit_path(&sb)).unwrap(), unit);
}

#[test]
fn install_never_writes_through_a_planted_link() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(unit_path(&sb).parent().unwrap()).unwrap();
    let target = sb.path().join("elsewhere.service");
    std::os::unix::fs::symlink(&target, unit_path(&sb)).unwrap();
    let out = watch(&sb, &pier_bin(), &["--install", "--force"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("a symbolic link"), "{said}");
    assert!(!target.exists(), "written through the link");
    assert!(unit_path(&sb).is_symlink(), "the link was replaced");
}
