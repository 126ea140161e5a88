//! Pier's configuration folder and the protect list it holds (docs/design.md §2.10).
//!
//! The folder: `PIER_CONFIG_DIR` when set (an absolute path), else the platform's — macOS
//! `~/Library/Application Support/Pier`, Linux `$XDG_CONFIG_HOME/pier` (`~/.config/pier`).
//! The list is `protect.toml` there, written by `pier protect` and readable by hand:
//!
//! ```toml
//! projects = ["/home/me/code/payments"]
//! ports = [5432]
//! containers = ["db"]
//! ```
//!
//! A missing file is an empty list. A file that cannot be read or parsed protects everything
//! ([`Protect::Unreadable`]): Pier cannot tell what it would have named, so it offers nothing
//! until the file is fixed.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::model::protect::{Protect, ProtectList};
use crate::trust::folder::Folder;
use crate::trust::setup::{Problem, SetupError, Which};
use crate::trust::{check_path, read, Me, Untrusted};

/// The protect list's file name in the configuration folder.
pub const PROTECT_FILE: &str = "protect.toml";

/// What `pier protect` writes above the list: the file is the user's to read and edit.
const HEADER: &str = "\
# Pier never offers what this list names: never green, never in a batch, never stopped (not
# even with --force). Managed by `pier protect`; edits by hand are read, comments are not kept.
";

/// Why the configuration folder cannot be named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigDirError {
    /// `PIER_CONFIG_DIR` is not an absolute path.
    #[error("PIER_CONFIG_DIR must be an absolute path, not {:?}", .0.display().to_string())]
    RelativeConfigDir(PathBuf),
    /// Nothing to name it from.
    #[error("no configuration folder: neither PIER_CONFIG_DIR nor HOME is set")]
    NoFolder,
}

/// Why the protect list could not be read, is not valid, or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ProtectError {
    /// It could not be read: the list is unreadable, and protects everything.
    #[error("the protect list {} could not be read: {why}", .path.display())]
    Unreadable {
        /// The list's file, as named.
        path: PathBuf,
        /// Why.
        why: Unreadable,
    },
    /// It was read and is not a list.
    #[error("the protect list {} is not valid: {why}", .path.display())]
    Invalid {
        /// The list's file, as named.
        path: PathBuf,
        /// What is wrong with it.
        why: Invalid,
    },
    /// It could not be written; nothing was.
    #[error("the protect list {} could not be written: {why}", .path.display())]
    Unwritable {
        /// The list's file, as named.
        path: PathBuf,
        /// Why.
        why: Unwritable,
    },
    /// The configuration folder is not one Pier can use as the machine is set up (a file in
    /// its place or on its path, a folder the user may not make or open): what it is and what
    /// to do.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The list could not be put in TOML.
    #[error("{0}")]
    Toml(#[from] toml::ser::Error),
}

/// Why the file at a path is not one Pier reads or writes the list in ([`resolve`]).
#[derive(Debug, thiserror::Error)]
pub enum Unresolved {
    /// The file is another user's.
    #[error("{} belongs to uid {uid}, not to you", .path.display())]
    Foreign {
        /// The file, its links followed.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// Something on its way could not be looked at.
    #[error(transparent)]
    Unchecked(Untrusted),
    /// Another user could change it, or a folder on its way.
    #[error("it is not safe: {0}")]
    Unsafe(Untrusted),
}

/// Why the list's file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    /// Not where it may be read from.
    #[error(transparent)]
    Unresolved(#[from] Unresolved),
    /// Not text.
    #[error("it is not UTF-8 text")]
    NotUtf8,
    /// The file itself (not regular, too large, the OS's error).
    #[error(transparent)]
    File(#[from] read::FileError),
}

/// What is wrong with a list's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// Not TOML, or not the list's fields: the parser's words, on one line.
    #[error("{}{what}", .line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Toml {
        /// The line it is on, when the parser says.
        line: Option<usize>,
        /// The parser's message.
        what: String,
    },
    /// A project that is not an absolute folder.
    #[error("project {:?} is not an absolute path", .0.display().to_string())]
    RelativeProject(PathBuf),
    /// Port 0.
    #[error("port 0 is no port")]
    PortZero,
}

/// Why the list could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Unwritable {
    /// Not where it may be written.
    #[error(transparent)]
    Unresolved(#[from] Unresolved),
    /// The path ends in no file name.
    #[error("it names no file in a folder")]
    NoFile,
    /// Its folder could not be held.
    #[error(transparent)]
    Folder(#[from] crate::trust::folder::FolderError),
    /// The OS's error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The configuration folder (the module's docs say which).
pub fn folder() -> Result<PathBuf, ConfigDirError> {
    folder_from(&|k| std::env::var_os(k), cfg!(target_os = "macos"))
}

/// [`folder`] over any environment: `PIER_CONFIG_DIR` must be absolute when set; an empty or
/// relative `XDG_CONFIG_HOME` is ignored, as the XDG spec says.
fn folder_from(
    env: &dyn Fn(&str) -> Option<OsString>,
    macos: bool,
) -> Result<PathBuf, ConfigDirError> {
    if let Some(dir) = env("PIER_CONFIG_DIR").map(PathBuf::from) {
        if dir.is_absolute() {
            return Ok(dir);
        }
        return Err(ConfigDirError::RelativeConfigDir(dir));
    }
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    let dir = if macos {
        home.map(|h| h.join("Library/Application Support/Pier"))
    } else {
        var("XDG_CONFIG_HOME")
            .filter(|d| d.is_absolute())
            .map(|d| d.join("pier"))
            .or_else(|| home.map(|h| h.join(".config/pier")))
    };
    dir.ok_or(ConfigDirError::NoFolder)
}

/// The protect list's path.
pub fn protect_path() -> Result<PathBuf, ConfigDirError> {
    folder().map(|f| f.join(PROTECT_FILE))
}

/// The protect list as a scan judges by it: read, or unreadable with the reason.
pub fn protect() -> Protect {
    match protect_path() {
        Ok(path) => read_protect(&path),
        Err(why) => Protect::Unreadable(why.to_string()),
    }
}

/// Where the file at `path` really is: its links followed, every step judged as one only the
/// user (or root) controls (`trust::check_path`; people keep dotfiles as links). `Ok(None)`
/// when nothing is there; a link to nothing is an error, not an empty list.
fn resolve(path: &Path) -> Result<Option<PathBuf>, Unresolved> {
    let me = Me::current();
    match check_path(path, me) {
        // The file itself must be the user's own, as every file of Pier's is.
        Ok(checked) if checked.entry.uid != me.uid => Err(Unresolved::Foreign {
            path: checked.resolved,
            uid: checked.entry.uid,
        }),
        Ok(checked) => Ok(Some(checked.resolved)),
        Err(Untrusted::Missing { .. }) if path.symlink_metadata().is_err() => Ok(None),
        Err(
            e @ (Untrusted::Unreadable { .. }
            | Untrusted::NotFolder { .. }
            | Untrusted::Links { .. }
            | Untrusted::TooLong { .. }
            | Untrusted::Closed { .. }),
        ) => Err(Unresolved::Unchecked(e)),
        Err(e) => Err(Unresolved::Unsafe(e)),
    }
}

/// The configuration folder's setup, when that is why the list at `list` could not be reached:
/// a file on its path, a folder the user may not look into, a link loop, a path too long.
/// Anything else is the list's own.
fn setup(list: &Path, why: Unresolved) -> Result<ProtectError, Unresolved> {
    let problem = match why {
        Unresolved::Unchecked(Untrusted::NotFolder { path }) => Problem::not_folder(path),
        Unresolved::Unchecked(Untrusted::Closed { path }) => Problem::CannotOpen { at: path },
        Unresolved::Unchecked(Untrusted::Links { path }) => Problem::Links { at: path },
        Unresolved::Unchecked(Untrusted::TooLong { path }) => Problem::TooLong { at: path },
        why => return Err(why),
    };
    Ok(ProtectError::Setup(config_setup(
        list.parent().unwrap_or(list),
        problem,
    )))
}

/// The configuration folder `folder`'s `problem`, named as the user named the folder.
fn config_setup(folder: &Path, problem: Problem) -> SetupError {
    SetupError {
        which: Which::Config,
        named: Which::Config.named(),
        folder: folder.to_path_buf(),
        problem,
    }
}

/// Reads the list at `path`: a missing file (or folder) is an empty list; anything else that
/// fails is [`Protect::Unreadable`], with a sentence naming the file ([`read_list`]).
pub fn read_protect(path: &Path) -> Protect {
    match read_list(path) {
        Ok(list) => Protect::List(list),
        Err(why) => Protect::Unreadable(why.to_string()),
    }
}

/// The list at `path`, or why it is unreadable: a missing file (or folder) is an empty list
/// ([`read_text`]).
pub fn read_list(path: &Path) -> Result<ProtectList, ProtectError> {
    let Some(text) = read_text(path)? else {
        return Ok(ProtectList::default());
    };
    let mut list = parse(&text).map_err(|why| ProtectError::Invalid {
        path: path.to_path_buf(),
        why,
    })?;
    // Folders as a scan sees them: resolved (a symlink, macOS's /tmp), where they exist.
    for p in &mut list.projects {
        if let Ok(real) = p.canonicalize() {
            *p = real;
        }
    }
    Ok(list)
}

/// The text of the configuration file at `path` (the protect list, the rules); `None` when
/// it or its folder is missing. Another user may have planted the file or its folder
/// (docs/design.md §5): it, and every folder and link on its way, must be one only the user
/// controls ([`resolve`]), and what it resolves to a regular file, read without blocking, at
/// most [`read::CONFIG`] bytes.
pub fn read_text(path: &Path) -> Result<Option<String>, ProtectError> {
    let unreadable = |why: Unreadable| ProtectError::Unreadable {
        path: path.to_path_buf(),
        why,
    };
    let real = match resolve(path) {
        Ok(Some(real)) => real,
        Ok(None) => return Ok(None),
        Err(why) => return Err(setup(path, why).unwrap_or_else(|why| unreadable(why.into()))),
    };
    match read::regular(&real, read::CONFIG) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| unreadable(Unreadable::NotUtf8)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(unreadable(e.into())),
    }
}

/// Where a TOML file's error is (its line, when the parser says) and what it is, on one line:
/// how the protect list and the rules file say a parse error.
pub(crate) fn toml_error(text: &str, e: &toml::de::Error) -> (Option<usize>, String) {
    let what: Vec<&str> = e.message().lines().map(str::trim).collect();
    let line = e
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    (line, what.join(", "))
}

/// The list from the file's text. Projects must be absolute folders: a relative one would
/// name a different folder from every working directory.
pub fn parse(text: &str) -> Result<ProtectList, Invalid> {
    let list: ProtectList = toml::from_str(text).map_err(|e| {
        let (line, what) = toml_error(text, &e);
        Invalid::Toml { line, what }
    })?;
    if let Some(p) = list.projects.iter().find(|p| !p.is_absolute()) {
        return Err(Invalid::RelativeProject(p.clone()));
    }
    if list.ports.contains(&0) {
        return Err(Invalid::PortZero);
    }
    Ok(list)
}

/// Writes `list` to `path` whole (a new temp file, `O_EXCL`, then a rename), creating the
/// folder (mode 0700) when missing. A reader sees the old list or the new one, never half of
/// one; a folder another user could change is refused, with nothing written.
pub fn write_protect(path: &Path, list: &ProtectList) -> Result<(), ProtectError> {
    let fail = |why: Unwritable| ProtectError::Unwritable {
        path: path.to_path_buf(),
        why,
    };
    let unresolved = |e| setup(path, e).unwrap_or_else(|e| fail(e.into()));
    // A list kept as a link is written where the link leads, so the link stays.
    let real = resolve(path).map_err(unresolved)?;
    let path = real.as_deref().unwrap_or(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err(fail(Unwritable::NoFile));
    };
    let dir = match resolve(dir).map_err(unresolved)? {
        Some(real) => real,
        None => dir.to_path_buf(),
    };
    let folder =
        Folder::open(&dir, Me::current(), true).map_err(|e| match Problem::of(&dir, e) {
            Ok(problem) => ProtectError::Setup(config_setup(&dir, problem)),
            Err(e) => fail(e.into()),
        })?;
    let body = toml::to_string(list)?;
    let (mut f, tmp) = folder.create_temp(name).map_err(|e| fail(e.into()))?;
    let written = f
        .write_all(format!("{HEADER}{body}").as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| folder.rename(&tmp, name))
        .and_then(|()| folder.sync());
    if written.is_err() {
        let _ = folder.unlink(&tmp);
    }
    written.map_err(|e| fail(e.into()))
}

#[cfg(test)]
mod tests;
