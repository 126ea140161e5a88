//! A folder of Pier's (the state folder, the configuration folder) that the machine's setup
//! keeps Pier from using: a file in its place or on its path, a folder the user may not make or
//! look into, a read-only disk, a link, another user's, one others can write. These are the
//! user's to fix, so each is one sentence, made here: what the path is, and what to do — which
//! depends on where the path came from (the variable the user set, or the default).

use std::path::{Path, PathBuf};

use super::folder::FolderError;
use super::Untrusted;

/// Which of Pier's folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The state folder (`PIER_STATE_DIR`).
    State,
    /// The configuration folder (`PIER_CONFIG_DIR`), which holds the protect list.
    Config,
}

/// Where the folder's path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// The user's variable (`PIER_STATE_DIR`, `PIER_CONFIG_DIR`).
    Variable,
    /// The platform's default.
    Default,
}

impl Which {
    /// The variable that names it.
    pub fn variable(self) -> &'static str {
        match self {
            Which::State => "PIER_STATE_DIR",
            Which::Config => "PIER_CONFIG_DIR",
        }
    }

    /// Where the variable, when set, names it from.
    pub fn named(self) -> Named {
        match std::env::var_os(self.variable()) {
            Some(_) => Named::Variable,
            None => Named::Default,
        }
    }

    /// What others who could write the folder could do: why an unsafe one is not used.
    fn at_stake(self) -> &'static str {
        match self {
            Which::State => "it would hold secrets and what a restart runs",
            Which::Config => "others could change what Pier must never stop",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Which::State => "Pier's state folder",
            Which::Config => "Pier's configuration folder",
        }
    }
}

/// What is wrong with the path, and where on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `at` — the folder, a subfolder of it, or a folder on its path — is a file (or a FIFO,
    /// a device): not a folder.
    NotFolder {
        /// The entry.
        at: PathBuf,
        /// A regular file, as opposed to something else (a device, a FIFO, a socket).
        file: bool,
        /// The user's own.
        yours: bool,
    },
    /// The path goes through a symbolic link loop, or more links than the system follows.
    Links {
        /// The path.
        at: PathBuf,
    },
    /// The path, or a name on it, is longer than the system allows.
    TooLong {
        /// The path, as far as it was looked at.
        at: PathBuf,
    },
    /// `at` is missing and the system makes no folder there, though its parent is there (a
    /// system folder, as `/proc`).
    NotMade {
        /// The folder that could not be made.
        at: PathBuf,
    },
    /// `at` is missing and the user may not make it (its parent is not the user's to write).
    CannotMake {
        /// The folder that could not be made.
        at: PathBuf,
    },
    /// The user may not open or look into `at`.
    CannotOpen {
        /// The folder.
        at: PathBuf,
    },
    /// `at` is on a read-only file system.
    ReadOnly {
        /// The folder.
        at: PathBuf,
    },
    /// `at` is a symbolic link, which Pier does not follow for its own folders.
    Link {
        /// The link.
        at: PathBuf,
    },
    /// `at`, the folder or one of its subfolders, belongs to another user.
    Foreign {
        /// The folder.
        at: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// Another user could change it, or a folder on its path.
    Unsafe(Untrusted),
}

/// One of Pier's folders that the setup keeps Pier from using; its sentence says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} {}{} {}", .which.name(), .folder.display(), self.from(), self.fix())]
pub struct SetupError {
    /// Which folder.
    pub which: Which,
    /// Where its path came from.
    pub named: Named,
    /// The folder, as named.
    pub folder: PathBuf,
    /// What is wrong.
    pub problem: Problem,
}

impl Problem {
    /// `at` is not a folder: a file, or something else, as it is now, and whose.
    pub fn not_folder(at: PathBuf) -> Problem {
        use std::os::unix::fs::MetadataExt;
        let m = at.symlink_metadata().ok();
        let file = m.as_ref().is_some_and(|m| m.is_file());
        let yours = m.is_some_and(|m| m.uid() == super::Me::current().uid);
        Problem::NotFolder { at, file, yours }
    }

    /// What a folder error says about the setup; `Err` for what is not the setup's (an I/O
    /// error the OS did not explain). `folder` is the folder that was asked for: another user's
    /// folder above it is unsafe, not "theirs to move".
    pub fn of(folder: &Path, e: FolderError) -> Result<Problem, FolderError> {
        use std::io::ErrorKind;
        Ok(match e {
            FolderError::Link(at) => Problem::Link { at },
            FolderError::NotMade(at) => Problem::NotMade { at },
            FolderError::Untrusted(Untrusted::Links { path: at }) => Problem::Links { at },
            FolderError::Untrusted(Untrusted::TooLong { path: at }) => Problem::TooLong { at },
            FolderError::NotFolder(at)
            | FolderError::Untrusted(Untrusted::NotFolder { path: at }) => Problem::not_folder(at),
            FolderError::Untrusted(Untrusted::Closed { path: at }) => Problem::CannotOpen { at },
            FolderError::Untrusted(Untrusted::Owner { path: at, uid })
                if at.starts_with(folder) =>
            {
                Problem::Foreign { at, uid }
            }
            FolderError::Untrusted(
                why @ (Untrusted::Unreadable { .. } | Untrusted::Missing { .. }),
            ) => return Err(FolderError::Untrusted(why)),
            FolderError::Untrusted(why) => Problem::Unsafe(why),
            FolderError::Io { path: at, source } => match source.kind() {
                ErrorKind::PermissionDenied if at.symlink_metadata().is_ok() => {
                    Problem::CannotOpen { at }
                }
                ErrorKind::PermissionDenied => Problem::CannotMake { at },
                ErrorKind::ReadOnlyFilesystem => Problem::ReadOnly { at },
                _ if source.raw_os_error() == Some(ELOOP) => Problem::Links { at },
                _ if super::is_too_long(&source) => Problem::TooLong { at },
                _ => return Err(FolderError::Io { path: at, source }),
            },
        })
    }
}

impl SetupError {
    /// Whether it only says the folder cannot be written (a reader may still read it).
    pub fn cannot_write(&self) -> bool {
        matches!(
            self.problem,
            Problem::CannotMake { .. } | Problem::ReadOnly { .. }
        )
    }

    /// " (PIER_STATE_DIR)" when the user's variable named it.
    fn from(&self) -> String {
        match self.named {
            Named::Variable => format!(" ({})", self.which.variable()),
            Named::Default => String::new(),
        }
    }

    /// What the path is, and what to do, after the folder's name.
    fn fix(&self) -> String {
        let other = self.other();
        let is = |at: &Path| self.is(at);
        match &self.problem {
            Problem::NotFolder { at, file, yours } => self.not_folder(at, *file, *yours),
            Problem::CannotMake { at } => format!(
                "{}is missing, and you may not make folders in {}; make it yourself, or {other}",
                is(at),
                at.parent().unwrap_or(at).display()
            ),
            Problem::NotMade { at } => format!(
                "cannot be made: {} takes no new folders (a system folder); {other}",
                at.parent().unwrap_or(at).display()
            ),
            Problem::CannotOpen { at } => {
                format!("cannot be used: you may not open {}; {other}", at.display())
            }
            Problem::ReadOnly { at } => format!(
                "cannot be written: {} is on a read-only file system; {other} on a writable disk",
                at.display()
            ),
            Problem::Link { at } => format!(
                "{}is a symbolic link, which Pier does not follow for a folder that holds \
                 secrets; {other} (the real folder itself)",
                is(at)
            ),
            Problem::Links { .. } => format!(
                "goes through a symbolic link loop, or more links than the system follows; \
                 {other}"
            ),
            Problem::TooLong { .. } => format!(
                "is too long a path: a name on it, or the whole, is longer than the system \
                 allows; {other}, with a shorter path"
            ),
            Problem::Foreign { at, uid } => format!(
                "{}belongs to uid {uid}, not to you; move {} away, or {other}",
                is(at),
                self.it(at)
            ),
            Problem::Unsafe(why) => format!(
                "is not safe: {why}; {}, so Pier changed nothing in it: remove the others' \
                 write access, or {other}",
                self.which.at_stake()
            ),
        }
    }

    /// "point PIER_STATE_DIR at a folder of your own", or "set …" for the default.
    fn other(&self) -> String {
        let var = self.which.variable();
        match self.named {
            Named::Variable => format!("point {var} at a folder of your own"),
            Named::Default => format!("set {var} to a folder of your own"),
        }
    }

    /// Nothing for the folder itself, else "cannot be used: <the entry> " before what it is.
    fn is(&self, at: &Path) -> String {
        match at == self.folder {
            true => String::new(),
            false => format!("cannot be used: {} ", at.display()),
        }
    }

    /// "it" for the folder itself, else the entry's path.
    fn it(&self, at: &Path) -> String {
        match at == self.folder {
            true => "it".to_owned(),
            false => at.display().to_string(),
        }
    }

    /// `at`, the folder or a part of its path, is not a folder: a file, or a device, a FIFO.
    fn not_folder(&self, at: &Path, file: bool, yours: bool) -> String {
        let (other, is) = (self.other(), self.is(at));
        match (file, yours, may_move(file, yours, self.named)) {
            (_, _, true) => format!(
                "{is}is a file, not a folder; move {} away, or {other}",
                self.it(at)
            ),
            (true, true, false) => format!("{is}is a file, not a folder; {other}"),
            (true, false, _) => format!("{is}is a file, not a folder, and not yours; {other}"),
            (false, _, _) => format!("{is}is not a folder; {other}"),
        }
    }
}

const ELOOP: i32 = rustix::io::Errno::LOOP.raw_os_error();

/// Whether a sentence may tell the user to move `at`, which is in the way of a folder. Why:
/// only a regular file of the user's is theirs to move; a device, a FIFO or another user's
/// file is the system's or someone else's (moving `/dev/null` away breaks the machine). And
/// only on the default path: a path the user's variable named is the variable's mistake, and
/// the file on it is theirs to keep (`PIER_STATE_DIR=~/.bashrc/pier` must not say "move
/// ~/.bashrc away").
fn may_move(file: bool, yours: bool, named: Named) -> bool {
    file && yours && named == Named::Default
}

#[cfg(test)]
mod tests;
