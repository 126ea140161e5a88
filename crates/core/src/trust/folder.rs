//! A folder of Pier's own (the state folder, its subfolders, the configuration folder), checked
//! once and then held open: every later open, rename, link and removal is relative to its
//! descriptor, so a folder swapped by path after the check is never written to
//! (docs/design.md §5). Files in it are opened as [`super::read`] says; new ones are created
//! with `O_EXCL|O_NOFOLLOW`, mode 0600.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::read::{self, FileError};
use super::{check_path_with, judge, walk, Entry, Kind, Me, Untrusted, Walk};

/// Why a folder could not be held.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// It, or a folder on its path, is one another user could change.
    #[error("{0}")]
    Untrusted(Untrusted),
    /// It is a symbolic link.
    #[error("{} is a symbolic link", .0.display())]
    Link(PathBuf),
    /// It is not a folder.
    #[error("{} is not a folder", .0.display())]
    NotFolder(PathBuf),
    /// The system made no folder there, though the folder above it is there (`/proc`).
    #[error("{} could not be made: the folder above it takes no new folders", .0.display())]
    NotMade(PathBuf),
    /// It could not be created or opened.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// The OS's answer.
        #[source]
        source: std::io::Error,
    },
}

/// A folder held open by its descriptor.
#[derive(Debug, Clone)]
pub struct Folder {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

fn io(path: &Path) -> impl Fn(Errno) -> FolderError + '_ {
    move |e| FolderError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Owner and mode of an open descriptor, its access list looked at.
fn entry_of(fd: &OwnedFd) -> std::io::Result<Entry> {
    let file = File::from(fd.try_clone()?);
    let mut e = Entry::of(&file.metadata()?);
    e.acl = e.mode & 0o020 != 0 && fd_has_acl(&file);
    Ok(e)
}

/// [`super::has_acl`] for an open descriptor.
#[cfg(target_os = "linux")]
fn fd_has_acl(fd: &impl AsFd) -> bool {
    !matches!(
        rustix::fs::fgetxattr_query(fd, "system.posix_acl_access"),
        Err(Errno::NODATA | Errno::NOTSUP)
    )
}

#[cfg(not(target_os = "linux"))]
fn fd_has_acl(_fd: &impl AsFd) -> bool {
    false
}

impl FolderError {
    /// Whether the folder is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FolderError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

impl Folder {
    /// Holds the folder at the absolute `path`, after checking it and every folder above it
    /// ([`super::check_path`]); a link at `path` itself is refused. With `create`, missing
    /// folders are made (it 0700) once the deepest existing one is checked. The folder's
    /// permissions are never changed.
    pub fn open(path: &Path, me: &Me, create: bool) -> Result<Folder, FolderError> {
        if create {
            make_missing(path, me)?;
        }
        let checked = match check_path_with(path, me, false) {
            Ok(c) => c,
            Err(Untrusted::Missing { path: gone }) => {
                return Err(FolderError::Io {
                    path: gone,
                    source: std::io::ErrorKind::NotFound.into(),
                })
            }
            Err(e) => return Err(FolderError::Untrusted(e)),
        };
        match checked.entry.kind {
            Kind::Dir => {}
            Kind::Link => return Err(FolderError::Link(path.to_path_buf())),
            Kind::File | Kind::Other => return Err(FolderError::NotFolder(path.to_path_buf())),
        }
        let fd = rustix::fs::open(&checked.resolved, dir_flags(), Mode::empty())
            .map_err(|e| opened(path, e))?;
        Self::held(fd, path.to_path_buf(), me)
    }

    /// The checked descriptor as a held folder: judged again once open, in case what was
    /// checked by path is not what was opened. Pier's own folder must be the user's itself,
    /// not merely root's: a folder of root's is not one the user's Pier can keep records in.
    fn held(fd: OwnedFd, path: PathBuf, me: &Me) -> Result<Folder, FolderError> {
        let e = entry_of(&fd).map_err(|source| FolderError::Io {
            path: path.clone(),
            source,
        })?;
        judge(&path, &e, None, me).map_err(FolderError::Untrusted)?;
        if e.uid != me.uid {
            return Err(FolderError::Untrusted(Untrusted::Owner {
                path,
                uid: e.uid,
            }));
        }
        Ok(Folder {
            fd: Arc::new(fd),
            path,
        })
    }

    /// The subfolder `name`, made (mode 0700) when missing and `create` says so, and judged
    /// as its parent was.
    pub fn sub(&self, name: &str, me: &Me, create: bool) -> Result<Folder, FolderError> {
        let path = self.path.join(name);
        if create {
            match rustix::fs::mkdirat(&*self.fd, name, Mode::from_raw_mode(0o700)) {
                Ok(()) => self.sync().map_err(|e| FolderError::Io {
                    path: self.path.clone(),
                    source: e,
                })?,
                Err(Errno::EXIST) => {}
                Err(e) => return Err(io(&path)(e)),
            }
        }
        let fd = rustix::fs::openat(&*self.fd, name, dir_flags(), Mode::empty())
            .map_err(|e| opened(&path, e))?;
        Self::held(fd, path, me)
    }

    /// Its path, for sentences.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its owner and mode, read from the held descriptor (not by path again).
    pub fn entry(&self) -> std::io::Result<Entry> {
        entry_of(&self.fd)
    }

    /// Opens `name` in it with `flags` (guarded: no link, no blocking), a regular file the
    /// user owns.
    pub fn open_file(&self, name: &str, flags: OFlags) -> Result<File, FileError> {
        let uid = rustix::process::geteuid().as_raw();
        read::open_at(Some(self.fd.as_fd()), Path::new(name), flags, Some(uid))
    }

    /// The file `name`, up to `limit` bytes; `None` when there is none.
    pub fn read(&self, name: &str, limit: u64) -> Result<Option<Vec<u8>>, FileError> {
        match self.open_file(name, OFlags::RDONLY) {
            Ok(file) => read::all(&file, limit).map(Some),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `name` opened for appending, created 0600 when missing.
    pub fn append(&self, name: &str) -> Result<File, FileError> {
        self.open_file(name, OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE)
    }

    /// A new temp file for `stem` (hidden, unique), made by [`Folder::create_new`]: a name
    /// someone planted is never opened, and another try takes another name.
    pub fn create_temp(&self, stem: &str) -> std::io::Result<(File, OsString)> {
        static TEMPS: AtomicU64 = AtomicU64::new(0);
        let mut last = std::io::ErrorKind::AlreadyExists.into();
        for _ in 0..16 {
            let nonce = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!(
                ".{stem}.{}.{}.{nonce:08x}.tmp",
                std::process::id(),
                TEMPS.fetch_add(1, Ordering::Relaxed)
            );
            match self.create_new(&name) {
                Ok(file) => return Ok((file, name.into())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// The new file `name`, created `O_EXCL|O_NOFOLLOW`, 0600, for writing: fails when
    /// anything — a file, a link — is already there.
    pub fn create_new(&self, name: &str) -> std::io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | read::guarded();
        let fd = rustix::fs::openat(&*self.fd, name, flags, Mode::from_raw_mode(0o600))?;
        Ok(File::from(fd))
    }

    /// Renames `from` over `to`, both in this folder.
    pub fn rename(&self, from: &OsStr, to: &str) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(&*self.fd, from, &*self.fd, to)?)
    }

    /// Links `from` as `to` in this folder: fails when `to` exists.
    pub fn link(&self, from: &OsStr, to: &str) -> std::io::Result<()> {
        Ok(rustix::fs::linkat(
            &*self.fd,
            from,
            &*self.fd,
            to,
            AtFlags::empty(),
        )?)
    }

    /// Whether `name` in it is still `file` (the same inode on the same device), looked at
    /// without following a link: `false` when it is gone or is another file now.
    pub fn still_names(&self, name: &str, file: &File) -> std::io::Result<bool> {
        let held = rustix::fs::fstat(file)?;
        match rustix::fs::statat(&*self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) => Ok(now.st_dev == held.st_dev && now.st_ino == held.st_ino),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// What `name` in it is, and whose, looked at without following a link: `None` when
    /// nothing is there.
    pub fn kind_of(&self, name: &str) -> std::io::Result<Option<(Kind, u32)>> {
        use rustix::fs::FileType;
        match rustix::fs::statat(&*self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                let kind = match FileType::from_raw_mode(st.st_mode) {
                    FileType::Symlink => Kind::Link,
                    FileType::Directory => Kind::Dir,
                    FileType::RegularFile => Kind::File,
                    _ => Kind::Other,
                };
                Ok(Some((kind, st.st_uid)))
            }
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the file `name`.
    pub fn unlink(&self, name: &OsStr) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&*self.fd, name, AtFlags::empty())?)
    }

    /// Flushes the folder itself, so renames, links and removals in it outlive a crash.
    pub fn sync(&self) -> std::io::Result<()> {
        Ok(rustix::fs::fsync(&*self.fd)?)
    }

    /// The names in it (`.` and `..` left out), as bytes may name them.
    pub fn names(&self) -> std::io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&*self.fd)? {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(&name).to_os_string());
            }
        }
        Ok(names)
    }
}

/// A folder's open failed: a link or a non-folder in its place says so.
fn opened(path: &Path, e: Errno) -> FolderError {
    match e {
        // With O_DIRECTORY, Linux answers a link with ENOTDIR rather than ELOOP.
        Errno::LOOP | Errno::NOTDIR
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            FolderError::Link(path.to_path_buf())
        }
        Errno::LOOP | Errno::NOTDIR => FolderError::NotFolder(path.to_path_buf()),
        e => io(path)(e),
    }
}

/// Makes the folders of `path` that are missing (`path` 0700, those above it 0755), once the
/// path to the deepest existing one is walked and judged as [`super::check_path`] would: a
/// link of another user's on the way is refused before anything is made. Each new folder is
/// made relative to its parent's descriptor.
fn make_missing(path: &Path, me: &Me) -> Result<(), FolderError> {
    let (parent, rest) = match walk(path, me, false, true) {
        Ok(Walk::Found(_)) => return Ok(()),
        Ok(Walk::Missing { parent, rest }) => (parent, rest),
        Err(e) => return Err(FolderError::Untrusted(e)),
    };
    if rest.iter().any(|p| p == "..") {
        return Err(FolderError::NotFolder(path.to_path_buf()));
    }
    let mut at = parent;
    let mut dir = rustix::fs::open(&at, dir_flags(), Mode::empty()).map_err(|e| opened(&at, e))?;
    for (i, name) in rest.iter().enumerate() {
        // The folder itself is private; a folder above it only needs to be no one else's.
        let mode = if i + 1 == rest.len() { 0o700 } else { 0o755 };
        match rustix::fs::mkdirat(&dir, name.as_os_str(), Mode::from_raw_mode(mode)) {
            Ok(()) => rustix::fs::fsync(&dir).map_err(io(&at))?,
            Err(Errno::EXIST) => {}
            // The folder above was just found: a system folder (`/proc`) that takes none.
            Err(Errno::NOENT) => return Err(FolderError::NotMade(at.join(name))),
            Err(e) => return Err(io(&at.join(name))(e)),
        }
        at = at.join(name);
        dir = rustix::fs::openat(&dir, name.as_os_str(), dir_flags(), Mode::empty())
            .map_err(|e| opened(&at, e))?;
        // Made by someone else first (in a sticky folder): nothing is made inside it.
        let e = entry_of(&dir).map_err(|source| FolderError::Io {
            path: at.clone(),
            source,
        })?;
        if e.uid != me.uid {
            return Err(FolderError::Untrusted(Untrusted::Owner {
                path: at,
                uid: e.uid,
            }));
        }
    }
    Ok(())
}
