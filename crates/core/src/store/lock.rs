//! Locks in the state folder's `locks` subfolder: one file per name, `flock`ed, so the app and
//! every CLI call exclude each other (a stop per resource, a read-modify-write per record).
//!
//! A lock's file does not outlive its last holder: the holder removes it while it still holds
//! the `flock`, and every taker, once its `flock` succeeds, checks that the name still names the
//! file it locked (the same inode, looked at without following a link, relative to the held
//! `locks` folder). If not — removed, or made again by someone else — it lets go and takes the
//! name afresh. So two takers of one name never both hold it, and a file goes with its holder
//! (docs/decisions.md, "Lock files are removed by their holder") — except the app's `app.lock`,
//! held for the app's life, and one whose holder was killed (`pier restart` on SIGTERM): both are
//! reused, and a prune removes them once free. A folder opened for reading never removes
//! anything.

use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use rustix::fs::OFlags;

use super::{cannot_write, check_name, file_io, Store, StoreError};
use crate::trust::folder::Folder;
use crate::trust::read::FileError;
use crate::trust::Kind;

/// An exclusive lock on one name, held until dropped (across processes: `flock`); its file is
/// removed as it is let go, when the folder can be written.
#[derive(Debug)]
pub struct Lock {
    /// `None` for a lock of a folder that cannot be written, whose lock file does not exist:
    /// nobody can hold it, since holding it needs the file.
    held: Option<Held>,
}

#[derive(Debug)]
struct Held {
    file: File,
    /// The folder and file name to remove on letting go; `None` when Pier may not write there.
    remove: Option<(Folder, String)>,
}

impl Drop for Lock {
    /// Removes the file while the `flock` is still held (the file closes after this), and only
    /// if the name still names it: a file someone else put there is theirs.
    fn drop(&mut self) {
        if let Some(Held {
            file,
            remove: Some((locks, name)),
        }) = &self.held
        {
            if locks.still_names(name, file).unwrap_or(false) {
                let _ = locks.unlink(name.as_ref());
            }
        }
    }
}

/// How a taker waits for a lock another holds.
pub(super) enum Wait<'a> {
    /// In `flock` itself.
    Block,
    /// Not at all.
    Try,
    /// Trying every so often, until `give_up` says so.
    Poll(Duration, &'a dyn Fn() -> bool),
}

/// A lock file opened, not yet locked.
struct Opened {
    file: File,
    name: String,
    path: PathBuf,
    /// Opened for writing: the taker may remove it when it lets go.
    writable: bool,
}

impl Store {
    /// The lock called `name`, taken as `wait` says: `None` when it was not (held by another,
    /// and `wait` gave up). A file that its last holder removed, or replaced, while this taker
    /// waited on it is let go, and the name taken again (the module's docs say why).
    pub(super) fn take(&self, name: &str, wait: Wait) -> Result<Option<Lock>, StoreError> {
        loop {
            let Some(opened) = self.lock_file(name)? else {
                return Ok(Some(Lock { held: None }));
            };
            let failed = |source| StoreError::Lock {
                path: opened.path.clone(),
                source,
            };
            if !flock(&opened.file, &wait).map_err(failed)? {
                return Ok(None);
            }
            let Some(locks) = &self.locks else {
                return Ok(Some(Lock { held: None }));
            };
            if !locks
                .still_names(&opened.name, &opened.file)
                .map_err(failed)?
            {
                continue;
            }
            let remove = (opened.writable && self.writes).then(|| (locks.clone(), opened.name));
            return Ok(Some(Lock {
                held: Some(Held {
                    file: opened.file,
                    remove,
                }),
            }));
        }
    }

    /// The lock file called `name`, opened (created 0600 if new). In a folder that cannot be
    /// written it is opened read-only (`flock` needs no write access); `None` when it does not
    /// exist there.
    fn lock_file(&self, name: &str) -> Result<Option<Opened>, StoreError> {
        check_name(name)?;
        let file = format!("{name}.lock");
        let path = self.dir.join("locks").join(&file);
        let Some(locks) = &self.locks else {
            return Ok(None);
        };
        let failed = |e: FileError, path: PathBuf| StoreError::Lock {
            path,
            source: file_io(e),
        };
        let opened = |f, writable| {
            Some(Opened {
                file: f,
                name: file.clone(),
                path: path.clone(),
                writable,
            })
        };
        let flags = match self.writes {
            true => OFlags::RDWR | OFlags::CREATE,
            false => OFlags::RDONLY,
        };
        match locks.open_file(&file, flags) {
            Ok(f) => Ok(opened(f, self.writes)),
            Err(e) if !self.writes && e.is_not_found() => Ok(None),
            Err(FileError::Io(e)) if cannot_write(&e) => {
                match locks.open_file(&file, OFlags::RDONLY) {
                    Ok(f) => Ok(opened(f, false)),
                    Err(e) if e.is_not_found() => Ok(None),
                    Err(e) => Err(failed(e, path.clone())),
                }
            }
            Err(e) => Err(failed(e, path.clone())),
        }
    }

    /// Removes every lock file nobody holds (`pier history --prune`), each taken without
    /// waiting and let go as any lock is, so a lock being taken is never removed from under its
    /// taker. An entry that is not a lock file of the user's ([`prunable`]), or that cannot be
    /// taken, is left as it is and the prune goes on. A folder opened for reading removes none.
    pub fn remove_free_locks(&self) -> Result<FreeLocks, StoreError> {
        let mut out = FreeLocks::default();
        let Some(locks) = self.locks.as_ref().filter(|_| self.writes) else {
            return Ok(out);
        };
        let names = locks.names().map_err(|source| StoreError::Read {
            path: self.dir.join("locks"),
            source,
        })?;
        let me = rustix::process::geteuid().as_raw();
        for name in names.iter().filter_map(|n| n.to_str()) {
            let Some(stem) = name.strip_suffix(".lock").filter(|s| check_name(s).is_ok()) else {
                continue;
            };
            match locks.kind_of(name) {
                Ok(None) => continue,
                Ok(Some((kind, uid))) if prunable(kind, uid, me) => {}
                _ => {
                    out.left += 1;
                    continue;
                }
            }
            match self.try_lock(stem) {
                Ok(Some(lock)) => {
                    out.removed +=
                        usize::from(lock.held.as_ref().is_some_and(|h| h.remove.is_some()));
                }
                Ok(None) => {}
                Err(_) => out.left += 1,
            }
        }
        Ok(out)
    }
}

/// What [`Store::remove_free_locks`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FreeLocks {
    /// Lock files nobody held, removed.
    pub removed: usize,
    /// Entries named as lock files that are not the user's regular files (a folder, a link, a
    /// FIFO, another user's) or could not be taken: left as they are.
    pub left: usize,
}

/// Whether an entry of the `locks` folder, of `kind` and owned by `uid`, is one a prune may
/// take and remove, Pier running as `me`. Why only a regular file of the user's: a link is
/// never followed (it may lead out of the folder), and a folder, FIFO or another user's file
/// is not a lock Pier made — it is not Pier's to remove, nor to stop the prune of the rest.
fn prunable(kind: Kind, uid: u32, me: u32) -> bool {
    kind == Kind::File && uid == me
}

/// Takes `file`'s `flock` as `wait` says: `false` when it did not.
fn flock(file: &File, wait: &Wait) -> std::io::Result<bool> {
    use std::fs::TryLockError;
    if let Wait::Block = wait {
        return file.lock().map(|()| true);
    }
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
        match wait {
            Wait::Poll(every, give_up) if !give_up() => std::thread::sleep(*every),
            _ => return Ok(false),
        }
    }
}

#[cfg(test)]
mod tests;
