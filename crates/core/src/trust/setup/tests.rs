//! What a setup sentence tells the user to do depends on where the folder's path came from.

use super::*;

fn said(which: Which, named: Named, folder: &str, problem: Problem) -> String {
    SetupError {
        which,
        named,
        folder: folder.into(),
        problem,
    }
    .to_string()
}

#[test]
fn the_users_variable_is_named_as_what_to_point_elsewhere_the_default_as_what_to_set() {
    let file = || Problem::NotFolder {
        at: "/home/u/.local/state/pier".into(),
        file: true,
        yours: true,
    };
    assert_eq!(
        said(
            Which::State,
            Named::Default,
            "/home/u/.local/state/pier",
            file()
        ),
        "Pier's state folder /home/u/.local/state/pier is a file, not a folder; move it away, \
         or set PIER_STATE_DIR to a folder of your own"
    );
    assert_eq!(
        said(
            Which::State,
            Named::Variable,
            "/home/u/.local/state/pier",
            file()
        ),
        "Pier's state folder /home/u/.local/state/pier (PIER_STATE_DIR) is a file, not a \
         folder; point PIER_STATE_DIR at a folder of your own"
    );
    let above = Problem::NotFolder {
        at: "/home/u/.config".into(),
        file: true,
        yours: true,
    };
    assert_eq!(
        said(Which::Config, Named::Default, "/home/u/.config/pier", above),
        "Pier's configuration folder /home/u/.config/pier cannot be used: /home/u/.config is \
         a file, not a folder; move /home/u/.config away, or set PIER_CONFIG_DIR to a folder \
         of your own"
    );
    let denied = Problem::CannotMake {
        at: "/srv/pier".into(),
    };
    assert_eq!(
        said(Which::State, Named::Variable, "/srv/pier", denied),
        "Pier's state folder /srv/pier (PIER_STATE_DIR) is missing, and you may not make \
         folders in /srv; make it yourself, or point PIER_STATE_DIR at a folder of your own"
    );
}

/// A part of the path that is not a folder is moved away only when it is a regular file of the
/// user's: a device (`/dev/null`), a FIFO or another user's file is "not a folder", and the
/// sentence never tells the user to move it.
#[test]
fn only_a_file_of_the_users_is_one_to_move_away() {
    let not_folder = |file, yours| Problem::NotFolder {
        at: "/dev/null".into(),
        file,
        yours,
    };
    assert_eq!(
        said(
            Which::State,
            Named::Variable,
            "/dev/null/x",
            not_folder(false, false)
        ),
        "Pier's state folder /dev/null/x (PIER_STATE_DIR) cannot be used: /dev/null is not a \
         folder; point PIER_STATE_DIR at a folder of your own"
    );
    assert_eq!(
        said(
            Which::Config,
            Named::Default,
            "/dev/null/x",
            not_folder(true, false)
        ),
        "Pier's configuration folder /dev/null/x cannot be used: /dev/null is a file, not a \
         folder, and not yours; set PIER_CONFIG_DIR to a folder of your own"
    );
    assert!(super::may_move(true, true, Named::Default));
    assert!(!super::may_move(true, false, Named::Default));
    assert!(!super::may_move(false, true, Named::Default));
    assert!(!super::may_move(true, true, Named::Variable));
}

/// A path the user's variable named is the variable's mistake: a file of the user's on it
/// (`PIER_STATE_DIR=~/notes.txt/pier`, or `~/.bashrc/pier`) is theirs to keep, never one to
/// move away; only the default path's may be moved.
#[test]
fn a_file_on_a_path_the_variable_named_is_never_one_to_move() {
    let notes = || Problem::NotFolder {
        at: "/home/u/.bashrc".into(),
        file: true,
        yours: true,
    };
    assert_eq!(
        said(
            Which::State,
            Named::Variable,
            "/home/u/.bashrc/pier",
            notes()
        ),
        "Pier's state folder /home/u/.bashrc/pier (PIER_STATE_DIR) cannot be used: \
         /home/u/.bashrc is a file, not a folder; point PIER_STATE_DIR at a folder of your own"
    );
    assert_eq!(
        said(
            Which::Config,
            Named::Variable,
            "/home/u/.bashrc/pier",
            notes()
        ),
        "Pier's configuration folder /home/u/.bashrc/pier (PIER_CONFIG_DIR) cannot be used: \
         /home/u/.bashrc is a file, not a folder; point PIER_CONFIG_DIR at a folder of your own"
    );
}

/// An unsafe folder's reason is the folder's: the state folder would hold secrets and what a
/// restart runs; the configuration folder holds neither, but what Pier must never stop.
#[test]
fn an_unsafe_folder_says_what_others_could_do_with_that_folder() {
    let others = || {
        Problem::Unsafe(Untrusted::Others {
            path: "/tmp/w".into(),
        })
    };
    assert_eq!(
        said(Which::Config, Named::Variable, "/tmp/w/cfg", others()),
        "Pier's configuration folder /tmp/w/cfg (PIER_CONFIG_DIR) is not safe: /tmp/w can be \
         written by other users; others could change what Pier must never stop, so Pier \
         changed nothing in it: remove the others' write access, or point PIER_CONFIG_DIR at \
         a folder of your own"
    );
    assert_eq!(
        said(Which::State, Named::Variable, "/tmp/w/st", others()),
        "Pier's state folder /tmp/w/st (PIER_STATE_DIR) is not safe: /tmp/w can be written by \
         other users; it would hold secrets and what a restart runs, so Pier changed nothing \
         in it: remove the others' write access, or point PIER_STATE_DIR at a folder of your \
         own"
    );
}

/// A link loop, a path too long and a folder the system will not make are each their own
/// sentence, with the variable named — not "not safe", not the OS's words.
#[test]
fn a_link_loop_a_path_too_long_and_a_system_folder_are_each_their_own_sentence() {
    let links = Problem::Links {
        at: "/tmp/x/loop/state".into(),
    };
    assert_eq!(
        said(Which::State, Named::Variable, "/tmp/x/loop/state", links),
        "Pier's state folder /tmp/x/loop/state (PIER_STATE_DIR) goes through a symbolic link \
         loop, or more links than the system follows; point PIER_STATE_DIR at a folder of your \
         own"
    );
    let long = Problem::TooLong {
        at: "/tmp/a".into(),
    };
    assert_eq!(
        said(Which::Config, Named::Variable, "/tmp/a", long),
        "Pier's configuration folder /tmp/a (PIER_CONFIG_DIR) is too long a path: a name on \
         it, or the whole, is longer than the system allows; point PIER_CONFIG_DIR at a folder \
         of your own, with a shorter path"
    );
    let proc = Problem::NotMade {
        at: "/proc/1/state".into(),
    };
    assert_eq!(
        said(Which::State, Named::Variable, "/proc/1/state", proc),
        "Pier's state folder /proc/1/state (PIER_STATE_DIR) cannot be made: /proc/1 takes no \
         new folders (a system folder); point PIER_STATE_DIR at a folder of your own"
    );
}

/// The folder errors behind them, as the OS gives them on this machine: a real link loop, a
/// real name too long, a real device on the path.
#[test]
fn real_loops_long_names_and_devices_are_read_as_what_they_are() {
    use crate::trust::folder::Folder;
    use crate::trust::Me;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
    let problem = |path: std::path::PathBuf| {
        let e = Folder::open(&path, Me::current(), true).unwrap_err();
        Problem::of(&path, e).unwrap()
    };
    assert!(
        matches!(problem(root.join("loop/state")), Problem::Links { .. }),
        "a loop"
    );
    let long = root.join("a".repeat(300));
    assert!(matches!(problem(long), Problem::TooLong { .. }), "too long");
    assert!(
        matches!(
            problem("/dev/null/x".into()),
            Problem::NotFolder { file: false, .. }
        ),
        "a device"
    );
    #[cfg(target_os = "linux")]
    assert!(
        matches!(problem("/proc/1/state".into()), Problem::NotMade { .. }),
        "a system folder"
    );
}
