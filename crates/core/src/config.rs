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

/// Reads the list at `path`: a missing file is an empty list; anything else that fails is
/// [`Protect::Unreadable`], with a sentence naming the file.
pub fn read_protect(path: &Path) -> Protect {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Protect::default(),
        Err(e) => {
            return Protect::Unreadable(format!(
                "the protect list {} could not be read: {e}",
                path.display()
            ))
        }
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

/// Writes `list` to `path` whole (a temp file, then a rename), creating the folder (mode
/// 0700). A reader sees the old list or the new one, never half of one.
pub fn write_protect(path: &Path, list: &ProtectList) -> Result<(), String> {
    let fail = |e: std::io::Error| {
        format!(
            "the protect list {} could not be written: {e}",
            path.display()
        )
    };
    let dir = path
        .parent()
        .ok_or_else(|| "the protect list has no folder".to_owned())?;
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(dir)
        .map_err(fail)?;
    let body = toml::to_string(list).map_err(|e| e.to_string())?;
    let tmp = dir.join(format!(".{PROTECT_FILE}.{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(fail)?;
    f.write_all(format!("{HEADER}{body}").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests;
