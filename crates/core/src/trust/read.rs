//! Reading a file another user may have planted: regular files only, opened without following
//! a link and without blocking (a FIFO would hang the open, deaf to Ctrl-C), checked with
//! `fstat` once open, and read up to a bound (a link to `/dev/zero` or a sparse 8 GB file
//! would be read until memory ran out).

use std::fs::File;
use std::io::Read as _;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// The most a record is read of: far above any real one (an environment of 200 KB).
pub const RECORD: u64 = 16 << 20;
/// The most a configuration file (the protect list, a tool's config) is read of.
pub const CONFIG: u64 = 1 << 20;
/// The most a system file (`/etc/passwd`, `/etc/group`) is read of.
pub const SYSTEM_FILE: u64 = 8 << 20;
/// The most of a log's end a restart shows lines from.
pub const LOG_TAIL: u64 = 64 << 10;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A link, a FIFO, a folder, a device or a socket where a regular file belongs.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Owned by someone other than the user it must belong to.
    #[error("it belongs to uid {0}, not to you")]
    Foreign(u32),
    /// Larger than the bound for its kind.
    #[error("it is larger than {} MB, far more than Pier ever writes", .0 >> 20)]
    TooLarge(u64),
    /// The OS's answer.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl FileError {
    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The flags every open of a file that may be planted takes.
pub(crate) fn guarded() -> OFlags {
    OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY
}

/// Opens `name` (relative to `dir`, or a path when `dir` is `None`) with `flags` added to the
/// guarded ones, and checks that it is a regular file owned by `owner` when given.
pub(crate) fn open_at(
    dir: Option<BorrowedFd<'_>>,
    name: &Path,
    flags: OFlags,
    owner: Option<u32>,
) -> Result<File, FileError> {
    let flags = flags | guarded();
    let opened = match dir {
        Some(dir) => rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600)),
        None => rustix::fs::open(name, flags, Mode::from_raw_mode(0o600)),
    };
    let fd = match opened {
        Ok(fd) => fd,
        // O_NOFOLLOW on a link.
        Err(rustix::io::Errno::LOOP) => return Err(FileError::NotRegular("a symbolic link")),
        // O_NONBLOCK|O_WRONLY on a FIFO nobody reads, or any open of a socket.
        Err(rustix::io::Errno::NXIO) => {
            let st = rustix::fs::statat(
                dir.unwrap_or(rustix::fs::CWD),
                name,
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            );
            let socket = st.is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode as _) == rustix::fs::FileType::Socket
            });
            return Err(FileError::NotRegular(if socket {
                "a socket"
            } else {
                "a FIFO"
            }));
        }
        Err(rustix::io::Errno::ISDIR) => return Err(FileError::NotRegular("a folder")),
        Err(e) => return Err(FileError::Io(e.into())),
    };
    let file = File::from(fd);
    let m = file.metadata()?;
    let t = m.file_type();
    if !t.is_file() {
        use std::os::unix::fs::FileTypeExt as _;
        return Err(FileError::NotRegular(if t.is_fifo() {
            "a FIFO"
        } else if t.is_dir() {
            "a folder"
        } else if t.is_socket() {
            "a socket"
        } else {
            "a device"
        }));
    }
    match owner {
        Some(uid) if m.uid() != uid => Err(FileError::Foreign(m.uid())),
        _ => Ok(file),
    }
}

/// The whole of an opened file, refused when it holds more than `limit` bytes.
pub(crate) fn all(file: &File, limit: u64) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge(limit));
    }
    Ok(bytes)
}

/// The regular file at `path` (not a link), whoever owns it, up to `limit` bytes.
pub fn regular(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    all(&open_at(None, path, OFlags::RDONLY, None)?, limit)
}

/// The regular file at `path` or where its links lead, whoever owns it, up to `limit` bytes:
/// for a file of another tool's that the user may keep as a link (`~/.docker/config.json`).
pub fn following(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let path = std::fs::canonicalize(path)?;
    regular(&path, limit)
}

/// The first `limit` bytes of the regular file at `path` or where its links lead, whoever
/// owns it: for a file another process names (a manager's pid file, a shell's script).
pub fn head_following(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let file = open_at(None, &std::fs::canonicalize(path)?, OFlags::RDONLY, None)?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The last `limit` bytes of an opened file (all of a smaller one).
pub(crate) fn tail(file: &File, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Seek as _, SeekFrom};
    let len = file.metadata()?.len();
    let mut f = file;
    f.seek(SeekFrom::Start(len.saturating_sub(limit)))?;
    let mut bytes = Vec::new();
    f.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}
