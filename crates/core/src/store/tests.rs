//! The store against real files in a temp folder.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde::{Deserialize, Serialize};

use super::*;
use crate::trust::Untrusted;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rec {
    schema: u32,
    pid: u32,
    start_time: u64,
    count: u32,
}

impl Versioned for Rec {
    const SCHEMA: u32 = 1;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Rec {
    fn owner(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

fn rec(pid: u32, start_time: u64) -> Rec {
    Rec {
        schema: 1,
        pid,
        start_time,
        count: 0,
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path().join("state")).unwrap();
    (dir, store)
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_record_round_trips_private_and_without_temp_files() {
    let (_d, s) = store();
    s.put("snap-1", &rec(10, 100)).unwrap();
    assert_eq!(s.get::<Rec>("snap-1").unwrap(), Some(rec(10, 100)));
    assert_eq!(mode(s.folder()), 0o700);
    assert_eq!(mode(&s.folder().join("records")), 0o700);
    assert_eq!(mode(&s.folder().join("records/snap-1.json")), 0o600);
    let names: Vec<_> = fs::read_dir(s.folder().join("records"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["snap-1.json"], "no temp file left behind");
    assert_eq!(s.get::<Rec>("missing").unwrap(), None);
}

#[test]
fn a_damaged_record_is_reported_and_kept_never_overwritten() {
    let (_d, s) = store();
    let path = s.folder().join("records/snap-2.json");
    fs::write(&path, b"{\"schema\": 1, \"pid\": ").unwrap();
    assert!(matches!(
        s.get::<Rec>("snap-2"),
        Err(StoreError::Damaged { .. })
    ));
    assert!(matches!(
        s.put("snap-2", &rec(1, 1)),
        Err(StoreError::Damaged { .. })
    ));
    assert!(matches!(
        s.update::<Rec, _>("snap-2", rec(1, 1).owner(), |r| r.count += 1),
        Err(StoreError::Damaged { .. })
    ));
    s.put("snap-3", &rec(3, 3)).unwrap();
    s.put("snap-9", &rec(9, 9)).unwrap();
    assert!(
        s.put("snap-9", &rec(8, 8)).is_err(),
        "an existing record is never replaced"
    );
    assert_eq!(s.get::<Rec>("snap-9").unwrap().unwrap().pid, 9);
    let listing = s.list::<Rec>("snap-").unwrap();
    assert_eq!(listing.records.len(), 2);
    assert_eq!(listing.damaged.len(), 1);
    assert!(matches!(listing.damaged[0], StoreError::Damaged { .. }));
    assert_eq!(
        fs::read(&path).unwrap(),
        b"{\"schema\": 1, \"pid\": ",
        "bytes unchanged"
    );
}

#[test]
fn a_newer_schema_is_refused_and_unknown_fields_are_tolerated() {
    let (_d, s) = store();
    let dir = s.folder().join("records");
    fs::write(
        dir.join("a.json"),
        br#"{"schema": 2, "pid": 1, "start_time": 1, "count": 0}"#,
    )
    .unwrap();
    fs::write(
        dir.join("b.json"),
        br#"{"schema": 1, "pid": 1, "start_time": 1, "count": 0, "later": true}"#,
    )
    .unwrap();
    assert!(matches!(
        s.get::<Rec>("a"),
        Err(StoreError::Newer {
            schema: 2,
            reads: 1,
            ..
        })
    ));
    assert_eq!(s.get::<Rec>("b").unwrap().unwrap().pid, 1);
}

/// Found by trying: a record of a newer schema that no longer has this Pier's fields read as
/// "missing field `pid`", which says nothing of why; its schema is read first, on its own.
#[test]
fn a_newer_record_without_todays_fields_says_it_was_written_by_a_newer_pier() {
    let (_d, s) = store();
    let dir = s.folder().join("records");
    let newer = br#"{"schema": 7, "owner": {"pid": 1, "start_time": 1}}"#;
    fs::write(dir.join("a.json"), newer).unwrap();
    let e = s.get::<Rec>("a").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the record {} was written by a newer Pier (schema 7; this Pier reads up to 1); it \
             was kept as it is",
            dir.join("a.json").display()
        )
    );
    let listing = s.list::<Rec>("").unwrap();
    assert!(listing.records.is_empty());
    assert!(matches!(
        listing.damaged[..],
        [StoreError::Newer { schema: 7, .. }]
    ));
    assert_eq!(
        fs::read(dir.join("a.json")).unwrap(),
        newer,
        "kept as it is"
    );
    // A schema too big for any build, or one that is not a number, is still no panic: the
    // first is newer, the second is damaged.
    fs::write(dir.join("b.json"), br#"{"schema": 18446744073709551615}"#).unwrap();
    assert!(matches!(s.get::<Rec>("b"), Err(StoreError::Newer { .. })));
    fs::write(dir.join("c.json"), br#"{"schema": "two", "pid": 1}"#).unwrap();
    assert!(matches!(s.get::<Rec>("c"), Err(StoreError::Damaged { .. })));
}

#[test]
fn an_update_for_another_identity_leaves_the_record_alone() {
    let (_d, s) = store();
    s.put("snap-4", &rec(42, 2000)).unwrap();
    let before = fs::read(s.folder().join("records/snap-4.json")).unwrap();
    // An exit callback for the old process that had pid 42 must not touch the newer one's.
    let stale = Identity {
        pid: 42,
        start_time: 1000,
    };
    let out = s.update::<Rec, _>("snap-4", stale, |r| r.count = 99);
    assert!(matches!(out, Err(StoreError::NotOwner { .. })), "{out:?}");
    assert_eq!(
        fs::read(s.folder().join("records/snap-4.json")).unwrap(),
        before
    );
    // A change may not hand the record to someone else either.
    let owner = rec(42, 2000).owner();
    assert!(s
        .update::<Rec, _>("snap-4", owner, |r| r.start_time = 7)
        .is_err());
    assert_eq!(
        s.update::<Rec, _>("snap-4", owner, |r| r.count += 1)
            .unwrap()
            .count,
        1
    );
}

#[test]
fn concurrent_updates_under_the_lock_lose_nothing() {
    let (_d, s) = store();
    s.put("counter", &rec(1, 1)).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    s.update::<Rec, _>("counter", rec(1, 1).owner(), |r| r.count += 1)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.get::<Rec>("counter").unwrap().unwrap().count, 200);
}

#[test]
fn names_cannot_leave_the_folder() {
    let (_d, s) = store();
    for bad in ["", "../x", ".hidden", "a/b", "snap 1"] {
        assert!(
            matches!(s.put(bad, &rec(1, 1)), Err(StoreError::BadName(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn the_folder_is_pier_state_dir_first_then_the_platform_default() {
    let env = |pairs: &[(&str, &str)]| {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k: &str| map.get(k).cloned()
    };
    let e = env(&[("PIER_STATE_DIR", "/t/s"), ("HOME", "/h")]);
    assert_eq!(folder_from(&e, false).unwrap(), Path::new("/t/s"));
    let e = env(&[("HOME", "/h"), ("XDG_STATE_HOME", "/x")]);
    assert_eq!(folder_from(&e, false).unwrap(), Path::new("/x/pier"));
    let e = env(&[("HOME", "/h"), ("XDG_STATE_HOME", "")]);
    assert_eq!(
        folder_from(&e, false).unwrap(),
        Path::new("/h/.local/state/pier")
    );
    assert_eq!(
        folder_from(&e, true).unwrap(),
        Path::new("/h/Library/Application Support/Pier")
    );
    assert!(matches!(
        folder_from(&env(&[]), false),
        Err(StoreError::NoFolder)
    ));
    // The XDG spec: a relative XDG_STATE_HOME is invalid and ignored.
    let e = env(&[("HOME", "/h"), ("XDG_STATE_HOME", "x")]);
    assert_eq!(
        folder_from(&e, false).unwrap(),
        Path::new("/h/.local/state/pier")
    );
}

/// Found by trying: `PIER_STATE_DIR=` silently meant the default folder, and a relative one
/// failed its first run after creating the folder (and would name another folder from every
/// working directory). Both are refused, with a sentence.
#[test]
fn pier_state_dir_is_an_absolute_path_or_a_sentence_says_why_not() {
    let env = |v: &'static str| move |k: &str| (k == "PIER_STATE_DIR").then(|| OsString::from(v));
    assert!(matches!(
        folder_from(&env(""), false),
        Err(StoreError::EmptyStateDir)
    ));
    assert_eq!(
        StoreError::EmptyStateDir.to_string(),
        "PIER_STATE_DIR is set but empty: give it an absolute path, or unset it for the default \
         state folder"
    );
    for relative in ["state", "./state", "a/b", ".."] {
        match folder_from(&env(relative), false) {
            Err(e @ StoreError::RelativeStateDir(_)) => assert_eq!(
                e.to_string(),
                format!(
                    "PIER_STATE_DIR is {relative:?}, a relative path: Pier's state must be one \
                     folder wherever Pier runs (the app, its login item, every terminal), so \
                     give an absolute path"
                )
            ),
            other => panic!("{relative}: {other:?}"),
        }
    }
    assert_eq!(folder_from(&env("/s"), false).unwrap(), Path::new("/s"));
}

/// The first open of a relative one-part folder used to fail syncing its parent, "".
#[test]
fn a_relative_folder_opens_the_first_time() {
    let dir = tempfile::tempdir().unwrap();
    let opened = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "store::tests::open_relative_child", "--ignored"])
        .current_dir(dir.path())
        .env("PIER_TEST_RELATIVE_OPEN", "1")
        .output()
        .unwrap();
    assert!(opened.status.success(), "{opened:?}");
    assert!(dir.path().join("rel/records").is_dir());
}

/// Run by [`a_relative_folder_opens_the_first_time`] in a temp folder of its own (the working
/// directory is the process's, so the test's own process must not change it).
#[test]
#[ignore = "run by a_relative_folder_opens_the_first_time"]
fn open_relative_child() {
    // Run by hand (`--ignored`) it would write into the crate's folder.
    if std::env::var_os("PIER_TEST_RELATIVE_OPEN").is_none() {
        return;
    }
    Store::open_at("rel").expect("a relative folder opens the first time");
}

#[test]
fn try_lock_says_none_while_another_holder_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path().join("state")).unwrap();
    let first = store.try_lock("app").unwrap().expect("free at first");
    assert!(
        store.try_lock("app").unwrap().is_none(),
        "a second holder must be told no"
    );
    drop(first);
    assert!(store.try_lock("app").unwrap().is_some(), "free again");
}

/// A record another user wrote into the folder is never trusted: whoever wrote it could have
/// put any argv in it for a restart to run. It is reported and kept. (Needs root to hand a
/// file to another user; elsewhere the test says so and stops.)
#[test]
fn a_record_owned_by_another_user_is_refused_and_kept() {
    let (_dir, s) = store();
    s.put("snap-1", &rec(1, 10)).unwrap();
    let path = s.folder().join("records/snap-1.json");
    if std::os::unix::fs::chown(&path, Some(65534), None).is_err() {
        eprintln!("skipped: only root can hand a file to another user");
        return;
    }
    match s.get::<Rec>("snap-1") {
        Err(StoreError::ForeignRecord { uid: 65534, .. }) => {}
        other => panic!("{other:?}"),
    }
    let listing = s.list::<Rec>("snap-").unwrap();
    assert!(listing.records.is_empty());
    assert_eq!(listing.damaged.len(), 1);
    assert!(matches!(
        listing.damaged[0],
        StoreError::ForeignRecord { uid: 65534, .. }
    ));
    let owner = Identity {
        pid: 1,
        start_time: 10,
    };
    assert!(s
        .update("snap-1", owner, |r: &mut Rec| r.count += 1)
        .is_err());
    assert!(path.exists(), "kept as it is");
}

#[test]
fn a_state_folder_that_is_a_link_or_another_users_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(matches!(
        Store::open_at(&link),
        Err(StoreError::Setup(SetupError {
            problem: Problem::Link { .. },
            ..
        }))
    ));
    // A records folder that is a link is refused too.
    let outer = dir.path().join("outer");
    fs::create_dir(&outer).unwrap();
    std::os::unix::fs::symlink(&real, outer.join("records")).unwrap();
    assert!(matches!(
        Store::open_at(&outer),
        Err(StoreError::Setup(SetupError {
            problem: Problem::Link { .. },
            ..
        }))
    ));
    let theirs = dir.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    if std::os::unix::fs::chown(&theirs, Some(65534), None).is_ok() {
        assert!(matches!(
            Store::open_at(&theirs),
            Err(StoreError::Setup(SetupError {
                problem: Problem::Foreign { uid: 65534, .. },
                ..
            }))
        ));
    }
}

/// What another user may plant in the folder is never read, followed or blocked on: a FIFO
/// named like a record (an open would wait for a writer for ever), a link to `/dev/zero` (a
/// read would never end) and a sparse record of 8 GB are each reported, and kept.
#[test]
fn a_fifo_a_link_or_a_huge_file_in_a_records_place_is_reported_and_kept() {
    let (_dir, s) = store();
    let records = s.folder().join("records");
    crate::trust::tests::mkfifo(&records.join("snap-fifo.json"));
    std::os::unix::fs::symlink("/dev/zero", records.join("snap-zero.json")).unwrap();
    let huge = fs::File::create(records.join("snap-huge.json")).unwrap();
    huge.set_len(8 << 30).unwrap();
    s.put("snap-ok", &rec(1, 1)).unwrap();
    let held = s.clone();
    assert!(matches!(
        crate::trust::tests::within_10_s(move || held.get::<Rec>("snap-fifo")),
        Err(StoreError::NotAFile { what: "a FIFO", .. })
    ));
    assert!(matches!(
        s.get::<Rec>("snap-zero"),
        Err(StoreError::NotAFile {
            what: "a symbolic link",
            ..
        })
    ));
    assert!(matches!(
        s.get::<Rec>("snap-huge"),
        Err(StoreError::Damaged { .. })
    ));
    let listing = s.list::<Rec>("snap-").unwrap();
    assert_eq!(listing.records.len(), 1);
    assert_eq!(listing.damaged.len(), 3, "{:?}", listing.damaged);
    assert!(
        s.put("snap-zero", &rec(2, 2)).is_err(),
        "never written through"
    );
    assert!(fs::symlink_metadata(records.join("snap-zero.json"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A state folder others may write is refused with a sentence and left as it is — never made
/// 0700 behind the user's back, sticky bit and all (as root with `PIER_STATE_DIR=/tmp` that
/// would break the machine for every user) — and so is a subfolder, `logs/` included.
#[test]
fn a_state_folder_others_can_write_is_refused_and_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    fs::create_dir(&state).unwrap();
    fs::set_permissions(&state, fs::Permissions::from_mode(0o1777)).unwrap();
    match Store::open_at(&state) {
        Err(StoreError::Setup(SetupError {
            problem: Problem::Unsafe(Untrusted::Others { .. }),
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(mode(&state), 0o777);
    assert_eq!(
        fs::metadata(&state).unwrap().permissions().mode() & 0o1000,
        0o1000,
        "the sticky bit is kept"
    );
    assert!(!state.join("records").exists(), "nothing created in it");

    fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
    let s = Store::open_at(&state).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, state.join("logs")).unwrap();
    assert!(matches!(
        s.open_log("snap-x.log"),
        Err(StoreError::Setup(SetupError {
            problem: Problem::Link { .. },
            ..
        }))
    ));
    assert_eq!(
        mode(&elsewhere),
        0o755,
        "a linked folder is never made 0700"
    );
    assert!(fs::read_dir(&elsewhere).unwrap().next().is_none());
}

/// Once open, the folder is held: a folder swapped in by path afterwards is never written to.
#[test]
fn records_go_to_the_folder_that_was_checked_even_after_its_path_is_swapped() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let s = Store::open_at(&state).unwrap();
    fs::rename(&state, dir.path().join("held")).unwrap();
    fs::create_dir_all(state.join("records")).unwrap();
    s.put("snap-1", &rec(1, 1)).unwrap();
    assert!(dir.path().join("held/records/snap-1.json").is_file());
    assert!(fs::read_dir(state.join("records"))
        .unwrap()
        .next()
        .is_none());
}

/// Each kind a test above matches, as the sentence a person reads.
#[test]
fn each_store_error_reads_as_a_sentence() {
    let damaged = StoreError::Damaged {
        path: "/s/records/snap-1.json".into(),
        why: "EOF while parsing".into(),
    };
    assert_eq!(
        damaged.to_string(),
        "the record /s/records/snap-1.json is damaged (EOF while parsing); it was kept as it \
         is, for you to look at"
    );
    let foreign = StoreError::ForeignRecord {
        path: "/s/records/snap-1.json".into(),
        uid: 65534,
    };
    assert_eq!(
        foreign.to_string(),
        "the record /s/records/snap-1.json belongs to uid 65534, not to you; Pier neither \
         trusts nor changes it, and left it as it is"
    );
    let open = StoreError::Setup(SetupError {
        which: Which::State,
        named: Named::Variable,
        folder: "/tmp/s".into(),
        problem: Problem::Unsafe(Untrusted::Others {
            path: "/tmp/s".into(),
        }),
    });
    assert_eq!(
        open.to_string(),
        "Pier's state folder /tmp/s (PIER_STATE_DIR) is not safe: /tmp/s can be written by \
         other users; it would hold secrets and what a restart runs, so Pier changed nothing \
         in it: remove the others' write access, or point PIER_STATE_DIR at a folder of your \
         own"
    );
}

/// What the setup gets wrong is the user's to fix: one sentence that says what the path is —
/// a file where a folder goes, or a file on its path — and what to do, never the OS's "Not a
/// directory (os error 20)" or "File exists (os error 17)"; and `pier doctor` calls it the
/// setup's.
#[test]
fn a_file_where_a_state_folder_goes_or_on_its_path_is_one_sentence_of_the_setups() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    fs::write(&file, b"").unwrap();
    let said = |e: StoreError| {
        let text = e.to_string();
        assert!(e.is_setup(), "{text}");
        assert!(!text.contains("os error"), "{text}");
        assert!(text.contains("PIER_STATE_DIR"), "{text}");
        text
    };
    // The path was named (as by PIER_STATE_DIR): the file on it is the user's to keep, so the
    // sentence points the variable elsewhere and never says to move the file away.
    let text = said(Store::open_at(&file).unwrap_err());
    assert!(
        text.contains(") is a file, not a folder; point PIER_STATE_DIR at a folder"),
        "{text}"
    );
    assert!(!text.contains("move"), "{text}");
    let text = said(Store::open_at(file.join("sub")).unwrap_err());
    assert!(
        text.contains(&format!(
            "cannot be used: {} is a file, not a folder; point PIER_STATE_DIR at",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains("move"), "{text}");
    // A subfolder that is a file: `records`, `locks` when opening, `logs` at a restart.
    for sub in ["records", "locks"] {
        let state = dir.path().join(format!("with-{sub}"));
        fs::create_dir(&state).unwrap();
        fs::write(state.join(sub), b"").unwrap();
        let text = said(Store::open_at(&state).unwrap_err());
        assert!(
            text.contains(&format!("{sub} is a file, not a folder")),
            "{text}"
        );
    }
    let state = dir.path().join("with-logs");
    let s = Store::open_at(&state).unwrap();
    fs::write(state.join("logs"), b"").unwrap();
    let text = said(s.open_log("snap-1.log").unwrap_err());
    assert!(text.contains("logs is a file, not a folder"), "{text}");
}
