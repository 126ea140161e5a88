//! The scheduler lock (docs/design.md §5a): one scheduler per user at a time, so the app and
//! `pier watch` never both act. It is a file, `pier-scheduler.lock`, in the user's runtime
//! folder — `$XDG_RUNTIME_DIR` on Linux, `$TMPDIR` (per user, `/var/folders/…`) on macOS —
//! when that is an absolute path to a real folder of the user's, mode 0700, and then in the
//! state folder too ([`take`]); otherwise in the state folder alone, said why. Its file is opened as a planted file may be (no link followed, no
//! FIFO blocked on, a regular file of the user's after `fstat`), `flock`ed without waiting for
//! the life of the scheduler, and holds one line, "pid who", so a refusal names the holder.
//! The file is never removed: a free lock is a file nobody `flock`s, and the lock frees when
//! its holder ends, however it ends. Opened close-on-exec, so nothing a scheduler starts (a
//! restart) holds it.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

use crate::store::Store;
use crate::trust::folder::{Folder, FolderError};
use crate::trust::read::FileError;
use crate::trust::Me;

/// The lock's file name.
pub const FILE: &str = "pier-scheduler.lock";

/// The variable naming the user's runtime folder on this platform.
#[cfg(target_os = "macos")]
pub const RUNTIME_VAR: &str = "TMPDIR";
/// The variable naming the user's runtime folder on this platform.
#[cfg(not(target_os = "macos"))]
pub const RUNTIME_VAR: &str = "XDG_RUNTIME_DIR";

/// Who runs a scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The tray app's worker.
    App,
    /// `pier watch`.
    Watch,
}

impl Who {
    /// How a sentence names it, and how the lock's line spells it.
    pub fn words(self) -> &'static str {
        match self {
            Who::App => "the Pier app",
            Who::Watch => "pier watch",
        }
    }

    fn parse(s: &str) -> Option<Who> {
        [Who::App, Who::Watch].into_iter().find(|w| w.words() == s)
    }
}

/// The scheduler that holds the lock, as its line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The app or `pier watch`.
    pub who: Who,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (pid {})", self.who.words(), self.pid)
    }
}

/// The lock's line, "pid who"; `None` for anything else (a holder that had not written it yet,
/// a file someone else wrote).
fn parse_line(bytes: &[u8]) -> Option<Holder> {
    let line = std::str::from_utf8(bytes).ok()?.lines().next()?;
    let (pid, who) = line.split_once(' ')?;
    Some(Holder {
        pid: pid.parse().ok().filter(|&p| p > 0)?,
        who: Who::parse(who)?,
    })
}

/// Why the scheduler lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another scheduler holds it.
    #[error(
        "another scheduler runs: {} — automatic stops act there; stop it to act here",
        .holder.map_or_else(|| format!("its lock is {}", .path.display()), |h| h.to_string())
    )]
    Held {
        /// The lock's path.
        path: PathBuf,
        /// Who, when its line says.
        holder: Option<Holder>,
    },
    /// Something that is not the user's regular file is at the lock's path.
    #[error("{}: {source}; Pier does not use it as the scheduler lock", .path.display())]
    Planted {
        /// The lock's path.
        path: PathBuf,
        /// What it is.
        #[source]
        source: FileError,
    },
    /// The OS's answer while opening, locking or writing it.
    #[error("the scheduler lock {}: {source}", .path.display())]
    Io {
        /// The lock's path.
        path: PathBuf,
        /// The OS's answer.
        #[source]
        source: std::io::Error,
    },
}

/// Why the runtime folder was not used (the state folder was).
#[derive(Debug, thiserror::Error)]
pub enum NotRuntime {
    /// The variable is not set (or empty).
    #[error("{RUNTIME_VAR} is not set")]
    Unset,
    /// It is not an absolute path.
    #[error("{RUNTIME_VAR} ({}) is not an absolute path", .0.display())]
    Relative(PathBuf),
    /// It is not a real folder of the user's on a trusted path.
    #[error("{RUNTIME_VAR}: {0}")]
    Untrusted(FolderError),
    /// Others may read or enter it.
    #[error("{RUNTIME_VAR} ({}) has mode {:o}, not 0700", .path.display(), .mode)]
    Mode {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The scheduler lock, held until dropped.
#[derive(Debug)]
pub struct SchedulerLock {
    _file: File,
    path: PathBuf,
    /// The state folder's lock too, when this one is in the runtime folder ([`take`]).
    _state: Option<File>,
}

impl SchedulerLock {
    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a scheduler may act here: it holds the lock, or who does, or why it could not be
/// taken. Only `Here` fires anything (armed stops, rules); the others still measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acting {
    /// This scheduler holds the lock.
    Here,
    /// Another scheduler holds it; who, when its line says.
    Elsewhere(Option<Holder>),
    /// The lock could not be taken (a planted file, the OS's answer), in one sentence.
    Off(String),
}

impl Acting {
    /// Whether this scheduler fires what is due.
    pub fn fires(&self) -> bool {
        matches!(self, Acting::Here)
    }

    /// What the menu says when automatic stops act elsewhere or not at all; `None` when here.
    pub fn words(&self) -> Option<String> {
        match self {
            Acting::Here => None,
            Acting::Elsewhere(Some(h)) => Some(format!("Automatic stops run in {h}")),
            Acting::Elsewhere(None) => Some("Automatic stops run in another scheduler".into()),
            Acting::Off(why) => Some(format!("Automatic stops are off: {why}")),
        }
    }

    /// How a scheduler's attempt to take the lock came out.
    pub fn of(taken: &Result<SchedulerLock, LockError>) -> Acting {
        match taken {
            Ok(_) => Acting::Here,
            Err(LockError::Held { holder, .. }) => Acting::Elsewhere(*holder),
            Err(e) => Acting::Off(e.to_string()),
        }
    }
}

/// The runtime folder `value` names, held, if it passes every check.
pub fn runtime_folder(value: Option<OsString>, me: &Me) -> Result<Folder, NotRuntime> {
    let path = PathBuf::from(value.filter(|v| !v.is_empty()).ok_or(NotRuntime::Unset)?);
    if !path.is_absolute() {
        return Err(NotRuntime::Relative(path));
    }
    let folder = Folder::open(&path, me, false).map_err(NotRuntime::Untrusted)?;
    let mode = folder
        .entry()
        .map_err(|source| {
            NotRuntime::Untrusted(FolderError::Io {
                path: path.clone(),
                source,
            })
        })?
        .mode;
    if mode & 0o077 != 0 {
        return Err(NotRuntime::Mode { path, mode });
    }
    Ok(folder)
}

/// Where this user's scheduler lock lives: the runtime folder, or the state folder with why
/// not the runtime folder.
pub fn folder(store: &Store) -> (Folder, Option<NotRuntime>) {
    match runtime_folder(std::env::var_os(RUNTIME_VAR), Me::current()) {
        Ok(f) => (f, None),
        Err(why) => (store.held().clone(), Some(why)),
    }
}

/// Takes the scheduler lock in `folder` for `who`, without waiting.
pub fn take_in(folder: &Folder, who: Who) -> Result<SchedulerLock, LockError> {
    let path = folder.path().join(FILE);
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    let mut file = match folder.open_file(FILE, OFlags::RDWR | OFlags::CREATE) {
        Ok(f) => f,
        Err(FileError::Io(e)) => return Err(io(e)),
        Err(source) => {
            return Err(LockError::Planted {
                path: path.clone(),
                source,
            })
        }
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = holder_of(&mut file);
            return Err(LockError::Held { path, holder });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    let line = format!("{} {}\n", std::process::id(), who.words());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(line.as_bytes()))
        .map_err(io)?;
    Ok(SchedulerLock {
        _file: file,
        path,
        _state: None,
    })
}

/// Takes this user's scheduler lock for `who` ([`folder`]): in the runtime folder, and then in
/// the state folder as well; or, without a runtime folder, in the state folder alone, said
/// why. Why both: two schedulers that see different runtime folders (one started where
/// `XDG_RUNTIME_DIR` is unset, by `su` or cron) would each hold "the" lock and both act; the
/// state folder is the one thing every scheduler of this user's records shares.
pub fn take(store: &Store, who: Who) -> (Result<SchedulerLock, LockError>, Option<NotRuntime>) {
    let (folder, why) = folder(store);
    let taken = take_in(&folder, who).and_then(|mut lock| {
        if why.is_none() {
            lock._state = Some(take_in(store.held(), who)?._file);
        }
        Ok(lock)
    });
    (taken, why)
}

/// The holder a held lock's line names; `None` when it names none (yet).
fn holder_of(file: &mut File) -> Option<Holder> {
    let mut line = Vec::new();
    file.rewind().ok()?;
    file.take(128).read_to_end(&mut line).ok()?;
    parse_line(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal names the holder its line names, and only a line Pier writes.
    #[test]
    fn a_lock_line_names_its_holder_only_when_it_is_pier_s() {
        assert_eq!(
            parse_line(b"1234 pier watch\n"),
            Some(Holder {
                pid: 1234,
                who: Who::Watch
            })
        );
        assert_eq!(
            parse_line(b"77 the Pier app\n").map(|h| h.who),
            Some(Who::App)
        );
        assert_eq!(parse_line(b""), None, "not written yet");
        assert_eq!(parse_line(b"0 pier watch"), None);
        assert_eq!(parse_line(b"12 rm -rf"), None, "a line someone else wrote");
    }

    /// The refusal's sentence, as the issue says it.
    #[test]
    fn a_refusal_says_who_holds_the_lock_and_where_stops_act() {
        let e = LockError::Held {
            path: PathBuf::from("/run/user/1000/pier-scheduler.lock"),
            holder: Some(Holder {
                pid: 1234,
                who: Who::Watch,
            }),
        };
        assert_eq!(
            e.to_string(),
            "another scheduler runs: pier watch (pid 1234) — automatic stops act there; stop \
             it to act here"
        );
    }

    fn private(dir: &Path, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join("run");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    /// The runtime folder is used only when set, absolute, a real folder, and 0700.
    #[test]
    fn the_runtime_folder_is_refused_unless_absolute_real_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let me = Me::current();
        let good = private(dir.path(), 0o700);
        assert!(runtime_folder(Some(good.clone().into()), me).is_ok());
        assert!(matches!(runtime_folder(None, me), Err(NotRuntime::Unset)));
        assert!(matches!(
            runtime_folder(Some("run".into()), me),
            Err(NotRuntime::Relative(_))
        ));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        assert!(matches!(
            runtime_folder(Some(link.into()), me),
            Err(NotRuntime::Untrusted(FolderError::Link(_)))
        ));
        let open = private(dir.path(), 0o755);
        assert!(matches!(
            runtime_folder(Some(open.into()), me),
            Err(NotRuntime::Mode { mode: 0o755, .. })
        ));
    }

    /// Two takers in one folder: the second is refused with the first's line, and takes it
    /// once the first lets go.
    #[test]
    fn a_second_taker_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::open(&private(dir.path(), 0o700), Me::current(), false).unwrap();
        let first = take_in(&folder, Who::App).unwrap();
        match take_in(&folder, Who::Watch) {
            Err(LockError::Held { holder, .. }) => assert_eq!(
                holder,
                Some(Holder {
                    pid: std::process::id(),
                    who: Who::App
                })
            ),
            other => panic!("not refused: {other:?}"),
        }
        drop(first);
        take_in(&folder, Who::Watch).expect("free once let go");
    }

    /// A FIFO or a link at the lock's path is refused at once: never blocked on, never
    /// followed.
    #[test]
    fn a_planted_fifo_or_link_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let run = private(dir.path(), 0o700);
        let folder = Folder::open(&run, Me::current(), false).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(run.join(FILE))
            .status()
            .unwrap();
        assert!(made.success());
        assert!(matches!(
            take_in(&folder, Who::Watch),
            Err(LockError::Planted {
                source: FileError::NotRegular("a FIFO"),
                ..
            })
        ));
        std::fs::remove_file(run.join(FILE)).unwrap();
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, run.join(FILE)).unwrap();
        assert!(matches!(
            take_in(&folder, Who::Watch),
            Err(LockError::Planted {
                source: FileError::NotRegular("a symbolic link"),
                ..
            })
        ));
        assert!(!target.exists(), "the link was followed");
    }
}
