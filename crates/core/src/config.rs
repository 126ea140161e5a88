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
use crate::trust::{check_path, read, Me, Untrusted};

/// The protect list's file name in the configuration folder.
pub const PROTECT_FILE: &str = "protect.toml";

/// What `pier protect` writes above the list: the file is the user's to read and edit.
const HEADER: &str = "\
# Pier never offers what this list names: never green, never in a batch, never stopped (not
# even with --force). Managed by `pier protect`; edits by hand are read, comments are not kept.
";

/// The configuration folder (the module's docs say which).
pub fn folder() -> Result<PathBuf, String> {
    folder_from(&|k| std::env::var_os(k), cfg!(target_os = "macos"))
}

/// [`folder`] over any environment: `PIER_CONFIG_DIR` must be absolute when set; an empty or
/// relative `XDG_CONFIG_HOME` is ignored, as the XDG spec says.
fn folder_from(env: &dyn Fn(&str) -> Option<OsString>, macos: bool) -> Result<PathBuf, String> {
    if let Some(dir) = env("PIER_CONFIG_DIR").map(PathBuf::from) {
        if dir.is_absolute() {
            return Ok(dir);
        }
        return Err(format!(
            "PIER_CONFIG_DIR must be an absolute path, not {:?}",
            dir.display().to_string()
        ));
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
    dir.ok_or_else(|| "no configuration folder: neither PIER_CONFIG_DIR nor HOME is set".into())
}

/// The protect list's path.
pub fn protect_path() -> Result<PathBuf, String> {
    folder().map(|f| f.join(PROTECT_FILE))
}

/// The protect list as a scan judges by it: read, or unreadable with the reason.
pub fn protect() -> Protect {
    match protect_path() {
        Ok(path) => read_protect(&path),
        Err(why) => Protect::Unreadable(why),
    }
}

/// Where the file at `path` really is: its links followed, every step judged as one only the
/// user (or root) controls (`trust::check_path`; people keep dotfiles as links). `Ok(None)`
/// when nothing is there; a link to nothing is an error, not an empty list.
fn resolve(path: &Path) -> Result<Option<PathBuf>, String> {
    let me = Me::current();
    match check_path(path, me) {
        // The file itself must be the user's own, as every file of Pier's is.
        Ok(checked) if checked.entry.uid != me.uid => Err(format!(
            "{} belongs to uid {}, not to you",
            checked.resolved.display(),
            checked.entry.uid
        )),
        Ok(checked) => Ok(Some(checked.resolved)),
        Err(Untrusted::Missing { .. }) if path.symlink_metadata().is_err() => Ok(None),
        Err(e @ Untrusted::Unreadable { .. }) => Err(e.to_string()),
        Err(e) => Err(format!("it is not safe: {e}")),
    }
}

/// Reads the list at `path`: a missing file (or folder) is an empty list; anything else that
/// fails is [`Protect::Unreadable`], with a sentence naming the file. Another user may have
/// planted the file or its folder (docs/design.md §5): it, and every folder and link on its
/// way, must be one only the user controls ([`resolve`]), and what it resolves to a regular
/// file, read without blocking, at most [`read::CONFIG`] bytes.
pub fn read_protect(path: &Path) -> Protect {
    let unreadable = |why: String| {
        Protect::Unreadable(format!(
            "the protect list {} could not be read: {why}",
            path.display()
        ))
    };
    let real = match resolve(path) {
        Ok(Some(real)) => real,
        Ok(None) => return Protect::default(),
        Err(why) => return unreadable(why),
    };
    let text = match read::regular(&real, read::CONFIG) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => return unreadable("it is not UTF-8 text".into()),
        },
        Err(e) if e.is_not_found() => return Protect::default(),
        Err(e) => return unreadable(e.to_string()),
    };
    match parse(&text) {
        // Folders as a scan sees them: resolved (a symlink, macOS's /tmp), where they exist.
        Ok(mut list) => {
            for p in &mut list.projects {
                if let Ok(real) = p.canonicalize() {
                    *p = real;
                }
            }
            Protect::List(list)
        }
        Err(why) => Protect::Unreadable(format!(
            "the protect list {} is not valid: {why}",
            path.display()
        )),
    }
}

/// The list from the file's text. Projects must be absolute folders: a relative one would
/// name a different folder from every working directory.
pub fn parse(text: &str) -> Result<ProtectList, String> {
    let list: ProtectList = toml::from_str(text).map_err(|e| {
        let what: Vec<&str> = e.message().lines().map(str::trim).collect();
        let what = what.join(", ");
        match e.span() {
            Some(span) => {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                format!("line {line}: {what}")
            }
            None => what,
        }
    })?;
    if let Some(p) = list.projects.iter().find(|p| !p.is_absolute()) {
        return Err(format!(
            "project {:?} is not an absolute path",
            p.display().to_string()
        ));
    }
    if list.ports.contains(&0) {
        return Err("port 0 is no port".into());
    }
    Ok(list)
}

/// Writes `list` to `path` whole (a new temp file, `O_EXCL`, then a rename), creating the
/// folder (mode 0700) when missing. A reader sees the old list or the new one, never half of
/// one; a folder another user could change is refused, with nothing written.
pub fn write_protect(path: &Path, list: &ProtectList) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| {
        format!(
            "the protect list {} could not be written: {e}",
            path.display()
        )
    };
    // A list kept as a link is written where the link leads, so the link stays.
    let real = resolve(path).map_err(|e| fail(&e))?;
    let path = real.as_deref().unwrap_or(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return Err(fail(&"it names no file in a folder"));
    };
    let dir = match resolve(dir).map_err(|e| fail(&e))? {
        Some(real) => real,
        None => dir.to_path_buf(),
    };
    let folder = Folder::open(&dir, Me::current(), true).map_err(|e| fail(&e))?;
    let body = toml::to_string(list).map_err(|e| e.to_string())?;
    let (mut f, tmp) = folder.create_temp(name).map_err(|e| fail(&e))?;
    let written = f
        .write_all(format!("{HEADER}{body}").as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| folder.rename(&tmp, name))
        .and_then(|()| folder.sync());
    if written.is_err() {
        let _ = folder.unlink(&tmp);
    }
    written.map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests;
