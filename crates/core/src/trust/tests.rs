use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use super::folder::{Folder, FolderError};
use super::read::{self, FileError};
use super::*;

const ME: Me = Me {
    uid: 1000,
    private_gid: Some(1000),
    admin_gid: None,
};

fn dir(uid: u32, gid: u32, mode: u32) -> Entry {
    Entry {
        uid,
        gid,
        mode,
        kind: Kind::Dir,
        acl: false,
    }
}

fn judged(e: Entry, next: Option<Entry>) -> Result<(), Untrusted> {
    judge(Path::new("/x"), &e, next.as_ref(), &ME)
}

#[test]
fn the_users_and_roots_folders_are_trusted_anyone_elses_never() {
    assert_eq!(judged(dir(1000, 1000, 0o700), None), Ok(()));
    assert_eq!(judged(dir(0, 0, 0o755), None), Ok(()));
    assert_eq!(
        judged(dir(1001, 1001, 0o700), None),
        Err(Untrusted::Owner {
            path: "/x".into(),
            uid: 1001
        }),
        "another user's folder, however private"
    );
}

#[test]
fn a_folder_others_can_write_is_trusted_only_when_sticky_and_shielding_the_users_entry() {
    let tmp = dir(0, 0, 0o1777);
    assert_eq!(judged(tmp, Some(dir(1000, 1000, 0o700))), Ok(()));
    assert_eq!(judged(tmp, Some(dir(0, 0, 0o700))), Ok(()), "root's entry");
    assert!(
        matches!(
            judged(tmp, Some(dir(1001, 1001, 0o700))),
            Err(Untrusted::Others { .. })
        ),
        "another user's entry in /tmp: they may swap it"
    );
    assert!(
        matches!(judged(tmp, None), Err(Untrusted::Others { .. })),
        "/tmp itself as the folder: anyone may plant in it"
    );
    assert!(
        matches!(
            judged(dir(0, 0, 0o777), Some(dir(1000, 1000, 0o700))),
            Err(Untrusted::Others { .. })
        ),
        "without the sticky bit anyone may rename the user's entry"
    );
}

#[test]
fn a_group_write_is_trusted_only_for_the_users_private_group() {
    assert_eq!(judged(dir(1000, 1000, 0o770), None), Ok(()));
    assert_eq!(
        judged(dir(1000, 27, 0o770), None),
        Err(Untrusted::Group {
            path: "/x".into(),
            gid: 27
        })
    );
    let shared = Me {
        uid: 1000,
        private_gid: None,
        admin_gid: None,
    };
    assert!(judge(Path::new("/x"), &dir(1000, 1000, 0o770), None, &shared).is_err());
    // macOS's admin group, whose members may all become root, writes as root does: Homebrew
    // makes its folders so.
    let mac = Me {
        admin_gid: Some(80),
        ..shared
    };
    assert_eq!(
        judge(Path::new("/x"), &dir(1000, 80, 0o775), None, &mac),
        Ok(())
    );
    assert!(judge(Path::new("/x"), &dir(1000, 81, 0o775), None, &mac).is_err());
}

/// With an access list the group bits are its mask: a named user may write what reads 0770.
#[test]
fn an_access_list_that_may_let_others_write_is_never_trusted() {
    let acl = Entry {
        acl: true,
        ..dir(1000, 1000, 0o770)
    };
    assert_eq!(judged(acl, None), Err(Untrusted::Acl { path: "/x".into() }));
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("shared");
    std::fs::create_dir(&p).unwrap();
    chmod(&p, 0o770);
    // system.posix_acl_access: version 2, then (tag, perm, id) for the owner, user 65534,
    // the owning group, the mask and others.
    let mut blob = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (0x01u16, 7u16, u32::MAX),
        (0x02, 7, 65534),
        (0x04, 7, u32::MAX),
        (0x10, 7, u32::MAX),
        (0x20, 5, u32::MAX),
    ] {
        blob.extend(tag.to_le_bytes());
        blob.extend(perm.to_le_bytes());
        blob.extend(id.to_le_bytes());
    }
    let flags = rustix::fs::XattrFlags::empty();
    if rustix::fs::setxattr(&p, "system.posix_acl_access", &blob, flags).is_err() {
        eprintln!("skipped: this file system takes no access lists");
        return;
    }
    let e = Entry::at(&p).unwrap();
    assert!(e.acl);
    let mine = Me {
        uid: e.uid,
        private_gid: Some(e.gid),
        admin_gid: None,
    };
    assert!(matches!(check_path(&p, &mine), Err(Untrusted::Acl { .. })));
}

#[test]
fn a_links_mode_means_nothing_but_its_owner_does() {
    let link = |uid| Entry {
        uid,
        gid: uid,
        mode: 0o777,
        kind: Kind::Link,
        acl: false,
    };
    assert_eq!(judged(link(1000), None), Ok(()));
    assert!(judged(link(1001), None).is_err());
}

#[test]
fn a_private_group_is_named_as_the_user_and_has_no_one_else() {
    let passwd = b"root:x:0:0::/root:/bin/sh\nme:x:1000:1000::/home/me:/bin/sh\n\
                   you:x:1001:1001::/home/you:/bin/sh\nstaffer:x:1002:100::/:/bin/sh\n";
    let group = b"root:x:0:\nme:x:1000:\nyou:x:1001:me\nusers:x:100:me,you\n";
    assert_eq!(private_group(1000, passwd, group), Some(1000));
    assert_eq!(private_group(1001, passwd, group), None, "another member");
    assert_eq!(private_group(1002, passwd, group), None, "not its name");
    assert_eq!(private_group(4242, passwd, group), None, "unknown");
    let shared_primary = b"me:x:1000:1000::/:/bin/sh\nother:x:1003:1000::/:/bin/sh\n";
    assert_eq!(
        private_group(1000, shared_primary, b"me:x:1000:\n"),
        None,
        "another user's primary group too"
    );
}

/// The real user, for walks over real folders (tests run as root here, but not always).
fn me() -> Me {
    Me {
        uid: rustix::process::geteuid().as_raw(),
        private_gid: None,
        admin_gid: None,
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_walk_judges_every_folder_and_follows_links_to_their_targets() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    let app = root.join("app");
    std::fs::create_dir_all(app.join("bin")).unwrap();
    std::fs::write(app.join("bin/tool"), "").unwrap();
    let checked = check_path(&app.join("bin/tool"), &me()).unwrap();
    assert_eq!(checked.resolved, app.join("bin/tool"));
    assert_eq!(checked.entry.kind, Kind::File);

    // A link into a folder others may write: its target is judged, not the link.
    let open = root.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::write(open.join("evil"), "").unwrap();
    symlink("../../open/evil", app.join("bin/linked")).unwrap();
    assert_eq!(
        check_path(&app.join("bin/linked"), &me()).unwrap().resolved,
        open.join("evil")
    );
    chmod(&open, 0o777);
    assert_eq!(
        check_path(&app.join("bin/linked"), &me()),
        Err(Untrusted::Others { path: open.clone() })
    );
    // Not following the last link judges the link itself.
    assert_eq!(
        check_path_with(&app.join("bin/linked"), &me(), false)
            .unwrap()
            .entry
            .kind,
        Kind::Link
    );
    // A file others may write is refused at the end of the walk.
    chmod(&open, 0o755);
    chmod(&open.join("evil"), 0o666);
    assert!(matches!(
        check_path(&app.join("bin/linked"), &me()),
        Err(Untrusted::Others { .. })
    ));
    assert!(matches!(
        check_path(&app.join("gone/x"), &me()),
        Err(Untrusted::Missing { .. })
    ));
    symlink("loop", root.join("loop")).unwrap();
    assert!(matches!(
        check_path(&root.join("loop"), &me()),
        Err(Untrusted::Links { .. })
    ));
}

#[test]
fn only_regular_files_are_read_and_only_up_to_their_bound() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("f");
    std::fs::write(&file, "0123456789").unwrap();
    assert_eq!(read::regular(&file, 10).unwrap(), b"0123456789");
    assert!(matches!(
        read::regular(&file, 9),
        Err(FileError::TooLarge(9))
    ));
    symlink("/dev/zero", t.path().join("zero")).unwrap();
    assert!(matches!(
        read::regular(&t.path().join("zero"), 10),
        Err(FileError::NotRegular("a symbolic link"))
    ));
    let fifo = t.path().join("fifo");
    crate::trust::tests::mkfifo(&fifo);
    // Would block for ever without O_NONBLOCK: nobody writes the FIFO.
    assert!(matches!(
        within_10_s(move || read::regular(&fifo, 10)),
        Err(FileError::NotRegular("a FIFO"))
    ));
}

#[test]
fn a_held_folder_is_made_private_when_new_and_never_changed_when_found() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("a/b/state");
    let f = Folder::open(&state, &me(), true).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&state), 0o700);
    assert_eq!(
        mode(&t.path().join("a")) & 0o022,
        0,
        "a folder above it: no one else's to write"
    );
    f.sub("records", &me(), true).unwrap();
    assert_eq!(mode(&state.join("records")), 0o700);

    // Found writable by others: refused, and left as it was (sticky bit and all).
    chmod(&state, 0o1777);
    assert!(matches!(
        Folder::open(&state, &me(), true),
        Err(FolderError::Untrusted(Untrusted::Others { .. }))
    ));
    assert_eq!(mode(&state), 0o1777, "never changed");
    chmod(&state, 0o700);
    chmod(&state.join("records"), 0o777);
    assert!(matches!(
        Folder::open(&state, &me(), true)
            .unwrap()
            .sub("records", &me(), true),
        Err(FolderError::Untrusted(Untrusted::Others { .. }))
    ));

    // A link in the folder's place, or in a subfolder's, is refused.
    symlink(&state, t.path().join("link")).unwrap();
    assert!(matches!(
        Folder::open(&t.path().join("link"), &me(), true),
        Err(FolderError::Link(_))
    ));
    std::fs::create_dir(t.path().join("elsewhere")).unwrap();
    symlink(t.path().join("elsewhere"), state.join("logs")).unwrap();
    assert!(matches!(
        Folder::open(&state, &me(), true)
            .unwrap()
            .sub("logs", &me(), true),
        Err(FolderError::Link(_))
    ));
}

#[test]
fn a_held_folder_is_worked_in_by_descriptor_after_its_path_is_swapped() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = Folder::open(&state, &me(), true).unwrap();
    std::fs::rename(&state, t.path().join("moved")).unwrap();
    std::fs::create_dir(&state).unwrap();
    let (mut tmp, name) = f.create_temp("rec").unwrap();
    std::io::Write::write_all(&mut tmp, b"secret").unwrap();
    f.rename(&name, "rec.json").unwrap();
    assert_eq!(
        std::fs::read(t.path().join("moved/rec.json")).unwrap(),
        b"secret"
    );
    assert!(std::fs::read_dir(&state).unwrap().next().is_none());
    assert_eq!(
        f.names().unwrap(),
        vec![std::ffi::OsString::from("rec.json")]
    );
}

/// A FIFO at `path`, made by the system's `mkfifo` (rustix has no `mknodat` on macOS).
pub(crate) fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// A walk that may end early stops at the first missing part, with the deepest folder judged
/// as holding the user's entry to come; an entry of another user's is named as what is wrong.
#[test]
fn a_walk_names_the_missing_rest_and_blames_another_users_entry() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    let sticky = root.join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    assert_eq!(
        walk(&sticky.join("a/b"), &me(), false, true),
        Ok(Walk::Missing {
            parent: sticky.clone(),
            rest: vec!["a".into(), "b".into()]
        })
    );
    assert!(walk(&sticky.join("a"), &me(), false, false).is_err());
    // Handing a link to another user needs root; elsewhere this part says so and stops.
    let theirs = sticky.join("theirs");
    symlink(&root, &theirs).unwrap();
    if std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).is_err() {
        eprintln!("skipped: only root can hand a link to another user");
        return;
    }
    assert_eq!(
        walk(&theirs.join("state"), &me(), false, true),
        Err(Untrusted::Owner {
            path: theirs.clone(),
            uid: 65534
        })
    );
    // Nothing is made through it.
    assert!(Folder::open(&theirs.join("state"), &me(), true).is_err());
    assert!(
        !root.join("state").exists(),
        "made nothing through the link"
    );
}

/// `f` run on a thread of its own, failing the test if it takes longer than 10 s: what it
/// reads could make an open wait for ever.
pub(crate) fn within_10_s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("hung: still waiting after 10 s")
}

/// A name planted in the folder — a link to a file of the user's elsewhere — is never opened
/// for a new file: the write would go where the link leads.
#[test]
fn a_new_file_is_never_made_through_a_planted_name() {
    let t = tempfile::tempdir().unwrap();
    let f = Folder::open(&t.path().join("state"), &me(), true).unwrap();
    let elsewhere = t.path().join("elsewhere");
    std::fs::write(&elsewhere, "keep").unwrap();
    symlink(&elsewhere, t.path().join("state/.x.tmp")).unwrap();
    let made = f.create_new(".x.tmp");
    assert_eq!(
        made.map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::AlreadyExists
    );
    std::fs::write(t.path().join("state/.y.tmp"), "planted").unwrap();
    assert!(f.create_new(".y.tmp").is_err(), "nor a file already there");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
    let mode = std::fs::metadata(t.path().join("state"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    let (_, name) = f.create_temp("rec").unwrap();
    let made = t.path().join("state").join(&name);
    assert_eq!(
        std::fs::metadata(made).unwrap().permissions().mode() & 0o777,
        0o600
    );
}
