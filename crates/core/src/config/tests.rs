use super::*;

fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| (*v).into())
    }
}

#[test]
fn the_folder_is_pier_config_dir_else_the_platforms() {
    let f = |pairs, macos| folder_from(&env(pairs), macos);
    assert_eq!(
        f(&[("PIER_CONFIG_DIR", "/t/c"), ("HOME", "/h")], false).unwrap(),
        Path::new("/t/c")
    );
    assert!(matches!(
        f(&[("PIER_CONFIG_DIR", "rel")], false),
        Err(ConfigDirError::RelativeConfigDir(_))
    ));
    assert_eq!(
        f(&[("HOME", "/h")], false).unwrap(),
        Path::new("/h/.config/pier")
    );
    assert_eq!(
        f(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")], false).unwrap(),
        Path::new("/x/pier")
    );
    assert_eq!(
        f(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "x")], false).unwrap(),
        Path::new("/h/.config/pier"),
        "a relative XDG_CONFIG_HOME is ignored"
    );
    assert_eq!(
        f(&[("HOME", "/Users/me")], true).unwrap(),
        Path::new("/Users/me/Library/Application Support/Pier")
    );
    assert!(f(&[], false).is_err());
}

#[test]
fn a_list_is_read_back_as_written_and_a_missing_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conf/protect.toml");
    assert_eq!(read_protect(&path), Protect::default());
    let list = ProtectList {
        projects: vec!["/home/me/pay".into()],
        ports: vec![5432, 6379],
        containers: vec!["db".into()],
    };
    write_protect(&path, &list).unwrap();
    assert_eq!(read_protect(&path), Protect::List(list));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# Pier never offers"), "{text}");
    assert!(text.contains("ports = [5432, 6379]"), "{text}");
}

/// Bad input is a sentence, and protects everything: Pier cannot tell what it named.
#[test]
fn a_list_that_cannot_be_parsed_is_unreadable_with_a_sentence() {
    for (text, said) in [
        ("ports = [\"x\"]", "invalid type"),
        ("ports = [70000]", "invalid value"),
        ("prots = [1]", "unknown field"),
    ] {
        match parse(text) {
            Err(Invalid::Toml { what, .. }) => assert!(what.contains(said), "{text}: {what}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert_eq!(
        parse("projects = [\"rel/dir\"]"),
        Err(Invalid::RelativeProject("rel/dir".into()))
    );
    assert_eq!(parse("ports = [0]"), Err(Invalid::PortZero));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("protect.toml");
    std::fs::write(&path, "ports = [").unwrap();
    match read_protect(&path) {
        Protect::Unreadable(why) => {
            let start = format!("the protect list {} is not valid: line 1: ", path.display());
            assert!(why.starts_with(&start) && !why.contains('\n'), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(parse("").unwrap(), ProtectList::default());
}

/// A listed folder names a card by whole components, through its project or any member's
/// working folder; then a port, then a container's name.
#[test]
fn the_list_names_a_card_by_folder_port_or_container_name() {
    let list = ProtectList {
        projects: vec!["/mono/services/pay".into()],
        ports: vec![5432],
        containers: vec!["db".into()],
    };
    let names = |places: &[&str], ports: &[u16], c: Option<&str>| {
        let places: Vec<&Path> = places.iter().map(Path::new).collect();
        list.names(&places, ports, c).map(|(what, _)| what)
    };
    assert_eq!(
        names(&["/mono/services/payments"], &[], None),
        None,
        "whole components"
    );
    assert_eq!(
        names(&["/mono", "/mono/services/pay/api"], &[], None).as_deref(),
        Some("project /mono/services/pay"),
        "a member working inside the listed folder of a monorepo"
    );
    assert_eq!(
        names(&["/x"], &[3000, 5432], None).as_deref(),
        Some("port 5432")
    );
    assert_eq!(
        names(&["/x"], &[], Some("db")).as_deref(),
        Some("container db")
    );
    assert_eq!(names(&["/x"], &[], Some("db2")), None);
}

/// A list kept as a link (dotfiles) is read and written where it leads, and the link stays;
/// one leading into a folder others can write, a FIFO, or a file too large protects
/// everything, with the reason, and never hangs.
#[test]
fn a_list_is_read_through_the_users_links_and_never_from_what_others_could_plant() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let dotfiles = dir.path().join("dotfiles");
    std::fs::create_dir(&dotfiles).unwrap();
    let conf = dir.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    let path = conf.join("protect.toml");
    std::fs::write(dotfiles.join("protect.toml"), "ports = [5432]\n").unwrap();
    symlink(dotfiles.join("protect.toml"), &path).unwrap();
    let list = ProtectList {
        ports: vec![5432, 6379],
        ..ProtectList::default()
    };
    assert!(matches!(read_protect(&path), Protect::List(l) if l.ports == [5432]));
    write_protect(&path, &list).unwrap();
    assert!(path.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(read_protect(&path), Protect::List(list));

    let unreadable = |path: std::path::PathBuf| {
        crate::trust::tests::within_10_s(move || match read_list(&path) {
            Err(ProtectError::Unreadable { why, .. }) => why,
            other => panic!("{other:?}"),
        })
    };
    std::fs::set_permissions(&dotfiles, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(matches!(
        unreadable(path.clone()),
        Unreadable::Unresolved(Unresolved::Unsafe(Untrusted::Others { .. }))
    ));
    std::fs::set_permissions(&dotfiles, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(&path).unwrap();
    crate::trust::tests::mkfifo(&path);
    let fifo = path.clone();
    match crate::trust::tests::within_10_s(move || read_protect(&fifo)) {
        Protect::Unreadable(why) => assert_eq!(
            why,
            format!(
                "the protect list {} could not be read: it is a FIFO, not a regular file",
                path.display()
            )
        ),
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(&path).unwrap();
    std::fs::File::create(&path)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    assert!(matches!(
        unreadable(path.clone()),
        Unreadable::File(read::FileError::TooLarge(_))
    ));
    std::fs::remove_file(&path).unwrap();
    symlink(dir.path().join("nothing"), &path).unwrap();
    assert!(
        !unreadable(path).to_string().is_empty(),
        "a link to nothing is no empty list"
    );
}

/// Each kind's sentence, as `pier protect` and the scan's protect line say it.
#[test]
fn each_reason_the_list_cannot_be_had_reads_as_a_sentence() {
    assert_eq!(
        ConfigDirError::RelativeConfigDir("rel".into()).to_string(),
        "PIER_CONFIG_DIR must be an absolute path, not \"rel\""
    );
    assert_eq!(
        ConfigDirError::NoFolder.to_string(),
        "no configuration folder: neither PIER_CONFIG_DIR nor HOME is set"
    );
    assert_eq!(
        Invalid::RelativeProject("rel/dir".into()).to_string(),
        "project \"rel/dir\" is not an absolute path"
    );
    assert_eq!(Invalid::PortZero.to_string(), "port 0 is no port");
    let unsafe_list = ProtectError::Unreadable {
        path: "/c/protect.toml".into(),
        why: Unresolved::Unsafe(Untrusted::Others { path: "/c".into() }).into(),
    };
    assert_eq!(
        unsafe_list.to_string(),
        "the protect list /c/protect.toml could not be read: it is not safe: /c can be \
         written by other users"
    );
    let unwritable = ProtectError::Unwritable {
        path: "/".into(),
        why: Unwritable::NoFile,
    };
    assert_eq!(
        unwritable.to_string(),
        "the protect list / could not be written: it names no file in a folder"
    );
}
