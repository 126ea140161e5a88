//! The state folder when it cannot be used as it should: full, read-only, a symbolic link, or
//! another user's. Each gives a sentence, and no process is signalled without its snapshot on
//! disk. The full and read-only folders are mounts (root only): elsewhere those tests say
//! "skipped".
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// A mount, undone at drop.
struct Mount(PathBuf);

impl Mount {
    fn new(args: &[&str], at: &Path) -> Option<Mount> {
        let ok = Command::new("mount")
            .args(args)
            .arg(at)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Mount(at.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

/// `at` bind-mounted onto itself, read-only.
fn read_only(at: &Path) -> Option<Mount> {
    Mount::new(&["--bind", at.to_str().unwrap()], at).and_then(|bind| {
        let ro = Command::new("mount")
            .args(["-o", "remount,bind,ro"])
            .arg(at)
            .output()
            .is_ok_and(|o| o.status.success());
        ro.then_some(bind)
    })
}

fn id_of(sb: &Sandbox, server: &Value) -> String {
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(server)).expect("the fixture is found");
    r["id"].as_str().unwrap().to_owned()
}

/// The fixture runs as it did: same pid, same start time.
fn untouched(server: &Value) -> bool {
    start_time_of(pid(server)) == server["start_time"].as_u64()
}

#[test]
fn a_full_state_folder_means_no_signal_and_says_why() {
    if fixtures_cannot_be_orphans("a_full_state_folder_means_no_signal_and_says_why") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let id = id_of(&sb, &server);
    let state = sb.path().join("state");
    let Some(_mount) = Mount::new(
        &["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"],
        &state,
    ) else {
        eprintln!("skipped: cannot mount a small tmpfs here");
        return;
    };
    for sub in ["records", "locks"] {
        std::fs::create_dir(state.join(sub)).unwrap();
    }
    let mut fill = std::fs::File::create(state.join("fill")).unwrap();
    while fill.write_all(&[0u8; 4096]).is_ok() {}
    drop(fill);

    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("stop prints JSON");
    let r = &doc["results"][0];
    assert_eq!(r["result"], "failed", "{doc:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("the recovery snapshot could not be written, so nothing was signalled"),
        "{doc:#}"
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(untouched(&server), "no signal without a snapshot");
}

#[test]
fn a_read_only_state_folder_is_a_sentence_and_no_signal() {
    if fixtures_cannot_be_orphans("a_read_only_state_folder_is_a_sentence_and_no_signal") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let id = id_of(&sb, &server);
    let state = sb.path().join("state");
    let Some(_bind) = read_only(&state) else {
        eprintln!("skipped: cannot mount the state folder read-only here");
        return;
    };

    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("state folder") && err.to_lowercase().contains("read-only file system"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(untouched(&server), "no signal without a snapshot");
}

#[test]
fn a_state_folder_that_is_a_symbolic_link_is_refused_with_a_sentence() {
    let sb = Sandbox::new();
    let real = sb.path().join("elsewhere");
    std::fs::create_dir(&real).unwrap();
    let link = sb.path().join("state-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["history", "--json"])
        .env("PIER_STATE_DIR", &link)
        .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert!(
        std::fs::read_dir(&real).unwrap().next().is_none(),
        "nothing was written through the link"
    );
}

fn history_entry(sb: &Sandbox, id: &str) -> (Value, std::process::Output) {
    let out = sb.pier_exact(&["history", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let entry = doc["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no snapshot of {id}: {doc:#}"));
    (entry, out)
}

fn on_disk(state: &Path, entry: &Value) -> Value {
    let name = entry["snapshot"].as_str().unwrap();
    let bytes = std::fs::read(state.join(format!("records/{name}.json"))).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Found by trying hostile conditions: when the disk filled mid-stop, `pier stop` printed
/// "STOPPED", exited 3, and left a snapshot that stayed unfinished (and unrestartable) after
/// space came back. Now the outcome is reconciled by the next read that can write it: shown
/// while the folder is full or read-only, written once it is not.
#[test]
fn a_disk_that_fills_mid_stop_is_reconciled_once_space_comes_back() {
    if fixtures_cannot_be_orphans("a_disk_that_fills_mid_stop_is_reconciled_once_space_comes_back")
    {
        return;
    }
    let sb = Sandbox::new();
    let state = sb.path().join("state");
    let Some(_mount) = Mount::new(
        &["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs"],
        &state,
    ) else {
        eprintln!("skipped: cannot mount a small tmpfs here");
        return;
    };
    let fill = state.join("fill");
    let server = sb.start_vite("app", &["--on-term-fill", fill.to_str().unwrap()], |_| true);
    let id = id_of(&sb, &server);

    let out = sb.pier_exact(&["stop", "-v", "--sample-ms", "100", &id]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!untouched(&server), "it was stopped: {text}{err}");
    assert_eq!(
        out.status.code(),
        Some(4),
        "stopped, not recorded: {text}{err}"
    );
    assert!(text.contains(&format!("{id}  STOPPED  ")), "{text}");
    assert!(
        text.contains("    not recorded: its outcome could not be written to its snapshot (")
            && text.contains("free some space in ")
            && text.contains("the next `pier history` writes it"),
        "the sentence says what to do: {text}"
    );
    assert!(
        text.contains("\n1 of 1 stopped; about ")
            && text.ends_with(" MB freed; 1 outcome(s) not recorded yet\n"),
        "{text}"
    );

    // Still full: the reconciled view is shown, and not written.
    let (entry, out) = history_entry(&sb, &id);
    assert!(out.status.success());
    assert_eq!(entry["result"], "stopped", "{entry:#}");
    assert!(!entry["reconciled_at"].is_null(), "{entry:#}");
    assert!(
        entry["not_written"]
            .as_str()
            .unwrap()
            .contains("No space left"),
        "{entry:#}"
    );
    assert_eq!(on_disk(&state, &entry)["result"], Value::Null);
    assert_eq!(on_disk(&state, &entry)["signals_may_follow"], true);

    // Space back, but the folder read-only: shown again, still not written.
    std::fs::remove_file(&fill).unwrap();
    let remount = |how: &str| {
        Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(&state)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    assert!(remount("ro"), "remount read-only");
    let (entry, out) = history_entry(&sb, &id);
    assert!(remount("rw"), "remount read-write");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(entry["result"], "stopped", "{entry:#}");
    assert!(
        entry["not_written"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{entry:#}"
    );
    assert_eq!(on_disk(&state, &entry)["result"], Value::Null);

    // Writable: written, restartable, and the same on the next read.
    let (entry, _) = history_entry(&sb, &id);
    assert_eq!(entry["not_written"], Value::Null, "{entry:#}");
    assert_eq!(entry["result"], "stopped");
    assert_eq!(entry["restartable"], true, "{entry:#}");
    let record = on_disk(&state, &entry);
    assert_eq!(record["result"], "stopped", "{record:#}");
    assert!(!record["reconciled_at"].is_null());
    let text = String::from_utf8_lossy(&sb.pier_exact(&["history"]).stdout).into_owned();
    assert!(
        text.contains("    reconciled ") && text.contains("every member was gone"),
        "{text}"
    );
}

/// Found by trying hostile conditions: `pier history` failed on a read-only state folder,
/// which it only needs to read.
#[test]
fn a_read_only_state_folder_is_read_by_history() {
    let sb = Sandbox::new();
    let state = sb.path().join("state");
    let Some(_bind) = read_only(&state) else {
        eprintln!("skipped: cannot mount the state folder read-only here");
        return;
    };
    let out = sb.pier_exact(&["history"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "No snapshots.\n");
    assert!(
        std::fs::read_dir(&state).unwrap().next().is_none(),
        "nothing was created"
    );
}
