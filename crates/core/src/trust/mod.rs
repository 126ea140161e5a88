//! Who else could change a file or a folder (docs/design.md §1 "project", §4, §5): the one rule
//! behind the state and configuration folders, project markers and what a restart runs.
//!
//! Anything Pier reads from disk or runs may have been planted by another user of the machine.
//! Pier trusts an entry only when nobody but the user and root could have put it there or could
//! change it: it and every folder on its path from `/` are owned by the user or root, and none
//! is writable by group or others — except a sticky folder (`/tmp`) whose next entry on the path
//! is the user's or root's (nobody else may rename or remove it), and a group that is the user's
//! private group. It is modelled on OpenSSH's `safe_path`, with those two exceptions.
//!
//! - [`judge`]: the rule, a pure function of one entry's owner and mode;
//! - [`check_path`]: every entry on a path, links followed as the kernel follows them;
//! - [`read`]: regular files only, never blocking, bounded;
//! - [`folder`]: a folder held open, worked in relative to its descriptor.

pub mod folder;
pub mod read;
pub mod setup;

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

#[cfg(test)]
pub(crate) mod tests;

/// Whom Pier works for: its effective uid, and that user's private group, if it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Me {
    /// The effective uid.
    pub uid: u32,
    /// The user's own group (named as the user, no other member): a folder writable by it is
    /// writable by the user alone. `None` when there is none or it cannot be told.
    pub private_gid: Option<u32>,
    /// A group whose members may all become root (macOS's `admin`, which Homebrew's folders
    /// are writable by): its write is root's (docs/decisions.md).
    pub admin_gid: Option<u32>,
}

impl Me {
    /// The user Pier runs as, read once.
    pub fn current() -> &'static Me {
        static ME: OnceLock<Me> = OnceLock::new();
        ME.get_or_init(|| {
            let uid = rustix::process::geteuid().as_raw();
            let file = |p| read::regular(Path::new(p), read::SYSTEM_FILE).ok();
            let private_gid = match (file("/etc/passwd"), file("/etc/group")) {
                (Some(passwd), Some(group)) => private_group(uid, &passwd, &group),
                _ => None,
            };
            // NOT RUN: macOS's `admin` group is gid 80 (its members may `sudo`).
            let admin_gid = cfg!(target_os = "macos").then_some(80);
            Me {
                uid,
                private_gid,
                admin_gid,
            }
        })
    }

    /// Whether `uid` is the user or root: the owners Pier trusts.
    pub fn trusts(&self, uid: u32) -> bool {
        uid == self.uid || uid == 0
    }
}

/// `uid`'s private group, read from `/etc/passwd` and `/etc/group`: its primary group (as the
/// account has it, whatever `newgrp` made the process's), named as the user, listing no other
/// member, and no other user's primary group. Why so strict: a group-writable folder is safe
/// only when the group is the user alone (the "user private group" of Debian and Red Hat);
/// anything that cannot be told (an account only a directory service knows) counts as shared.
pub fn private_group(uid: u32, passwd: &[u8], group: &[u8]) -> Option<u32> {
    let lines = |b: &'_ [u8]| -> Vec<Vec<String>> {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('+') && !l.starts_with('-'))
            .map(|l| l.split(':').map(str::to_owned).collect())
            .collect()
    };
    let users = lines(passwd);
    let user = users
        .iter()
        .find(|u| u.len() >= 4 && u[2].parse() == Ok(uid))?;
    let (name, gid) = (user[0].clone(), user[3].parse::<u32>().ok()?);
    let shared = users
        .iter()
        .any(|u| u.len() >= 4 && u[3].parse() == Ok(gid) && u[2].parse() != Ok(uid));
    let groups = lines(group);
    let mut same = groups
        .iter()
        .filter(|g| g.len() >= 3 && g[2].parse() == Ok(gid));
    let g = same.next()?;
    let members_ok = g
        .get(3)
        .is_none_or(|m| m.split(',').all(|m| m.is_empty() || m == name));
    (!shared && same.next().is_none() && g[0] == name && members_ok).then_some(gid)
}

/// What kind of entry a path names, as `lstat` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A folder.
    Dir,
    /// A regular file.
    File,
    /// A symbolic link (its mode means nothing).
    Link,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// One entry's owner, group and mode, as `lstat` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its owner.
    pub uid: u32,
    /// Its group.
    pub gid: u32,
    /// Its permission bits, the sticky bit included (`0o1777` for `/tmp`).
    pub mode: u32,
    /// What it is.
    pub kind: Kind,
    /// It carries an access list (a POSIX ACL) whose mask lets someone write: the group bits
    /// of its mode are then the mask, not the group's rights, and a named user may write it.
    pub acl: bool,
}

impl Entry {
    /// The entry at `path`, as `lstat` sees it, with its access list looked at.
    pub fn at(path: &Path) -> std::io::Result<Self> {
        let mut e = Self::of(&std::fs::symlink_metadata(path)?);
        e.acl = e.kind != Kind::Link && e.mode & 0o020 != 0 && has_acl(path);
        Ok(e)
    }

    /// The entry `m` describes (its access list not looked at).
    pub fn of(m: &std::fs::Metadata) -> Self {
        let t = m.file_type();
        let kind = if t.is_symlink() {
            Kind::Link
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        Entry {
            uid: m.uid(),
            gid: m.gid(),
            mode: m.mode() & 0o7777,
            kind,
            acl: false,
        }
    }
}

/// Whether `path` carries a POSIX access ACL (Linux). Anything but "none" counts as one: an
/// ACL that cannot be read cannot be shown to let no one else write.
#[cfg(target_os = "linux")]
pub(crate) fn has_acl(path: &Path) -> bool {
    !matches!(
        rustix::fs::lgetxattr_query(path, "system.posix_acl_access"),
        Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP)
    )
}

/// macOS keeps extended ACLs apart from the mode (`acl_get_link_np`); they are not read yet
/// (SECURITY.md, "Not yet backed").
#[cfg(not(target_os = "linux"))]
pub(crate) fn has_acl(_path: &Path) -> bool {
    false
}

/// Why an entry is not one only the user controls. Each reads as the end of a sentence that
/// names what it was for ("the state folder …: ", "it cannot be restarted: ").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    /// Owned by another user (not root).
    #[error("{} belongs to uid {uid}, not to you", .path.display())]
    Owner {
        /// The entry.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// Writable by every user, and not a sticky folder shielding the user's entry.
    #[error("{} can be written by other users", .path.display())]
    Others {
        /// The entry.
        path: PathBuf,
    },
    /// Writable by a group other than the user's private group.
    #[error("{} can be written by its group (gid {gid})", .path.display())]
    Group {
        /// The entry.
        path: PathBuf,
        /// The group.
        gid: u32,
    },
    /// An access list (ACL) may let other users write it.
    #[error("{} has an access list (ACL) that may let other users write it", .path.display())]
    Acl {
        /// The entry.
        path: PathBuf,
    },
    /// Not there.
    #[error("{} is missing", .path.display())]
    Missing {
        /// The first part of the path that is not there.
        path: PathBuf,
    },
    /// More links than the kernel itself would follow.
    #[error("{} goes through too many symbolic links", .path.display())]
    Links {
        /// The path.
        path: PathBuf,
    },
    /// A name on the path, or the whole path, is longer than the system allows.
    #[error(
        "{} is too long a path: a name on it, or the whole, is longer than the system allows",
        .path.display()
    )]
    TooLong {
        /// The path.
        path: PathBuf,
    },
    /// A part of the path that is not a folder (a file, a FIFO) with more of the path below it.
    #[error("{} is not a folder", .path.display())]
    NotFolder {
        /// The part that is not a folder.
        path: PathBuf,
    },
    /// A folder on the path the user may not look into (no search permission).
    #[error("you may not look into {}", .path.display())]
    Closed {
        /// The folder.
        path: PathBuf,
    },
    /// Could not be read (an I/O error).
    #[error("{} could not be checked: {why}", .path.display())]
    Unreadable {
        /// The entry.
        path: PathBuf,
        /// The OS's answer.
        why: String,
    },
}

impl Untrusted {
    /// The entry it is about.
    pub fn path(&self) -> &Path {
        match self {
            Untrusted::Owner { path, .. }
            | Untrusted::Others { path }
            | Untrusted::Group { path, .. }
            | Untrusted::Acl { path }
            | Untrusted::Missing { path }
            | Untrusted::Links { path }
            | Untrusted::TooLong { path }
            | Untrusted::NotFolder { path }
            | Untrusted::Closed { path }
            | Untrusted::Unreadable { path, .. } => path,
        }
    }
}

/// The rule for one entry at `path`: owned by the user or root, and writable by nobody else.
/// `next` is the entry under it on the path being walked, if any: a sticky folder lets only
/// an entry's owner rename or remove it, so it shields an entry of the user's or root's.
pub fn judge(path: &Path, e: &Entry, next: Option<&Entry>, me: &Me) -> Result<(), Untrusted> {
    if !me.trusts(e.uid) {
        return Err(Untrusted::Owner {
            path: path.to_path_buf(),
            uid: e.uid,
        });
    }
    if e.kind == Kind::Link {
        return Ok(());
    }
    let sticky_shields =
        e.kind == Kind::Dir && e.mode & 0o1000 != 0 && next.is_some_and(|n| me.trusts(n.uid));
    if e.mode & 0o002 != 0 && !sticky_shields {
        return Err(Untrusted::Others {
            path: path.to_path_buf(),
        });
    }
    let groups_own = [me.private_gid, me.admin_gid].contains(&Some(e.gid));
    if e.mode & 0o020 != 0 && !sticky_shields && !groups_own {
        return Err(Untrusted::Group {
            path: path.to_path_buf(),
            gid: e.gid,
        });
    }
    if e.acl && !sticky_shields {
        return Err(Untrusted::Acl {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// An entry [`check_path`] found trustworthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The path with every link resolved.
    pub resolved: PathBuf,
    /// The entry there (a link only when `follow_last` was false and the path ends in one).
    pub entry: Entry,
}

/// The most links one walk follows, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// How a walk that may end early ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Walk {
    /// Everything on the path exists and was judged.
    Found(Checked),
    /// `parent` (links resolved, judged as a folder a new entry of the user's may be made in)
    /// exists, and `rest` of the path below it does not.
    Missing {
        /// The deepest folder that exists.
        parent: PathBuf,
        /// The parts below it, in order.
        rest: Vec<OsString>,
    },
}

/// Walks the absolute `path` from `/`, following symbolic links as the kernel would, and
/// judges every folder passed through and the entry at the end ([`judge`]); with
/// `follow_last` false a link at the end is judged as a link, not followed. A relative path is
/// refused as unreadable: a caller joins it to the folder it is relative to.
pub fn check_path_with(path: &Path, me: &Me, follow_last: bool) -> Result<Checked, Untrusted> {
    match walk(path, me, follow_last, false)? {
        Walk::Found(checked) => Ok(checked),
        Walk::Missing { parent, rest } => Err(Untrusted::Missing {
            path: parent.join(rest.first().map_or_else(Default::default, Clone::clone)),
        }),
    }
}

/// [`check_path_with`] following every link.
pub fn check_path(path: &Path, me: &Me) -> Result<Checked, Untrusted> {
    check_path_with(path, me, true)
}

/// The walk of [`check_path_with`]; with `missing_ok`, a path whose end does not exist yet
/// is [`Walk::Missing`] rather than an error, its deepest folder judged as holding an entry of
/// the user's to come (a sticky folder shields it).
pub fn walk(path: &Path, me: &Me, follow_last: bool, missing_ok: bool) -> Result<Walk, Untrusted> {
    if !path.is_absolute() {
        return Err(Untrusted::Unreadable {
            path: path.to_path_buf(),
            why: "not an absolute path".into(),
        });
    }
    let mut pending: Vec<OsString> = parts(path);
    pending.reverse();
    let mut cur = PathBuf::from("/");
    let mut cur_e = present(&cur)?;
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            cur.pop();
            cur_e = present(&cur)?;
            continue;
        }
        // Nothing is below a file: say what it is, not the OS's "not a directory".
        if matches!(cur_e.kind, Kind::File | Kind::Other) {
            return Err(Untrusted::NotFolder { path: cur });
        }
        let next = cur.join(&part);
        let Some(next_e) = lstat(&next)? else {
            if !missing_ok {
                return Err(gone(&next));
            }
            pending.push(part);
            return missing(cur, &cur_e, pending, me);
        };
        // Another user's entry is named as what is wrong, rather than the sticky folder
        // holding it.
        if !me.trusts(next_e.uid) {
            return Err(Untrusted::Owner {
                path: next,
                uid: next_e.uid,
            });
        }
        judge(&cur, &cur_e, Some(&next_e), me)?;
        if next_e.kind == Kind::Link && (follow_last || !pending.is_empty()) {
            links += 1;
            if links > MAX_LINKS {
                return Err(Untrusted::Links {
                    path: path.to_path_buf(),
                });
            }
            let target = link_target(&next)?;
            if target.is_absolute() {
                cur = PathBuf::from("/");
                cur_e = present(&cur)?;
            }
            pending.extend(parts(&target).into_iter().rev());
            continue;
        }
        (cur, cur_e) = (next, next_e);
    }
    judge(&cur, &cur_e, None, me)?;
    Ok(Walk::Found(Checked {
        resolved: cur,
        entry: cur_e,
    }))
}

/// The entry at `p` as `lstat` gives it; `None` when nothing is there.
fn lstat(p: &Path) -> Result<Option<Entry>, Untrusted> {
    match Entry::at(p) {
        Ok(e) => Ok(Some(e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(Untrusted::Closed {
            path: p.parent().unwrap_or(p).to_path_buf(),
        }),
        Err(e) if is_too_long(&e) => Err(Untrusted::TooLong {
            path: p.to_path_buf(),
        }),
        Err(e) => Err(Untrusted::Unreadable {
            path: p.to_path_buf(),
            why: e.to_string(),
        }),
    }
}

/// Whether the OS refused a path as too long (`ENAMETOOLONG`): the user's to shorten, not an
/// error to report.
pub fn is_too_long(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(rustix::io::Errno::NAMETOOLONG.raw_os_error())
}

/// Where the link at `link` points.
fn link_target(link: &Path) -> Result<PathBuf, Untrusted> {
    std::fs::read_link(link).map_err(|e| Untrusted::Unreadable {
        path: link.to_path_buf(),
        why: e.to_string(),
    })
}

/// The entry at `p`, which must be there.
fn present(p: &Path) -> Result<Entry, Untrusted> {
    lstat(p)?.ok_or_else(|| gone(p))
}

fn gone(p: &Path) -> Untrusted {
    Untrusted::Missing {
        path: p.to_path_buf(),
    }
}

/// The end of a walk whose next part, first of `rest` (in reverse), is not there: `parent`,
/// the deepest folder, judged as holding an entry of the user's to come (a sticky folder
/// shields it).
fn missing(
    parent: PathBuf,
    parent_e: &Entry,
    mut rest: Vec<OsString>,
    me: &Me,
) -> Result<Walk, Untrusted> {
    let mine = Entry {
        uid: me.uid,
        gid: 0,
        mode: 0o700,
        kind: Kind::Dir,
        acl: false,
    };
    judge(&parent, parent_e, Some(&mine), me)?;
    rest.reverse();
    Ok(Walk::Missing { parent, rest })
}

/// The names of a path's parts, `..` kept, `.` and the root dropped.
fn parts(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}
