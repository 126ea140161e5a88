//! The state folder (docs/design.md §5): where snapshots and other records live, and how they are
//! written so that none is ever lost or half-written.
//!
//! Invariants:
//! - One folder: `PIER_STATE_DIR` when set (an absolute path; empty or relative is refused),
//!   else macOS `~/Library/Application Support/Pier`, Linux `$XDG_STATE_HOME/pier`
//!   (`~/.local/state/pier`). Mode 0700; records 0600 (snapshots hold environments, which
//!   carry secrets).
//! - A write goes to a temp file in the same folder, is fsynced, renamed over the record, and
//!   the folder is fsynced: a crash leaves the old record or the new one, never a mix.
//! - A record that fails to parse is reported and kept: never deleted, never overwritten.
//! - A record is changed only on behalf of the identity it names ([`Owned`]): an update for
//!   identity P never touches a record that now belongs to a newer identity.
//! - Read-modify-write runs under an exclusive file lock, so the app and the CLI can run at once.
//!
//! Records carry their schema version in the JSON (`"schema": N`); a reader accepts unknown
//! fields and refuses (reports, keeps) a schema newer than it knows.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::probe::Identity;

#[cfg(test)]
mod tests;

/// Why the store could not do what was asked. Each says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No folder can be named: neither `PIER_STATE_DIR` nor `HOME` is set (nor, on Linux,
    /// `XDG_STATE_HOME`).
    #[error("Pier's state folder could not be found: set PIER_STATE_DIR or HOME")]
    NoFolder,
    /// `PIER_STATE_DIR` is set but empty: it no longer silently means the default folder.
    #[error("PIER_STATE_DIR is set but empty: give it an absolute path, or unset it for the default state folder")]
    EmptyStateDir,
    /// `PIER_STATE_DIR` is a relative path, which would name another folder from every working
    /// directory (docs/design.md §5.1).
    #[error("PIER_STATE_DIR is {0:?}, a relative path: Pier's state must be one folder wherever Pier runs (the app, its login item, every terminal), so give an absolute path")]
    RelativeStateDir(PathBuf),
    /// The state folder, or its `records` or `locks` subfolder, could not be created or made
    /// private (mode 0700).
    #[error("Pier's state folder {path} could not be prepared: {source}")]
    Folder {
        /// The folder that could not be prepared.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// A record could not be written, or a new one's name is already taken.
    #[error("the record {path} could not be written: {source}")]
    Write {
        /// The record's file.
        path: PathBuf,
        /// The OS's error (`AlreadyExists` when a record of that name exists).
        #[source]
        source: std::io::Error,
    },
    /// A record or the records folder could not be read, or the record to update is not there.
    #[error("the record {path} could not be read: {source}")]
    Read {
        /// The file or folder that could not be read.
        path: PathBuf,
        /// The OS's error (`NotFound` when the record to update is not there).
        #[source]
        source: std::io::Error,
    },
    /// A record that does not parse as its type. It is kept as it is, never overwritten.
    #[error("the record {path} is damaged ({why}); it was kept as it is, for you to look at")]
    Damaged {
        /// The record's file.
        path: PathBuf,
        /// What is wrong with it: the parser's error.
        why: String,
    },
    /// A record whose schema is newer than this build reads, whatever else it holds. It is
    /// kept as it is, never overwritten.
    #[error("the record {path} was written by a newer Pier (schema {schema}; this Pier reads up to {reads}); it was kept as it is")]
    Newer {
        /// The record's file.
        path: PathBuf,
        /// The schema it carries.
        schema: u64,
        /// The newest schema this build reads.
        reads: u32,
    },
    /// An update on behalf of an identity the record does not name, or one that would hand
    /// the record to another identity: the record is left alone.
    #[error("the record {path} now belongs to pid {} started at {}, not to pid {} started at {}; it was left alone", .holder.pid, .holder.start_time, .asked.pid, .asked.start_time)]
    NotOwner {
        /// The record's file.
        path: PathBuf,
        /// The identity the record names.
        holder: Identity,
        /// The identity the update was asked on behalf of, or would have handed it to.
        asked: Identity,
    },
    /// A lock file could not be opened or locked.
    #[error("the lock {path} could not be taken: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// A record or lock name that is empty, starts with `.`, or holds a character other than
    /// letters, digits, `-`, `_` and `.`: names become file names.
    #[error("{0:?} is not a valid record name (letters, digits, '-', '_' and '.' only)")]
    BadName(String),
    /// The state folder, or one of its subfolders, is a symbolic link.
    #[error("Pier's state folder {path} is a symbolic link; snapshots hold secrets, so Pier keeps them only in a real folder: point PIER_STATE_DIR at the folder itself")]
    SymlinkFolder {
        /// The link.
        path: PathBuf,
    },
    /// The state folder, or one of its subfolders, belongs to another user.
    #[error("Pier's state folder {path} belongs to uid {uid}, not to you; Pier keeps your snapshots only in a folder of yours")]
    ForeignFolder {
        /// The folder.
        path: PathBuf,
        /// Its owner's uid.
        uid: u32,
    },
    /// A record file belongs to another user: it is neither read nor changed.
    #[error("the record {path} belongs to uid {uid}, not to you; Pier neither trusts nor changes it, and left it as it is")]
    ForeignRecord {
        /// The record's file.
        path: PathBuf,
        /// Its owner's uid.
        uid: u32,
    },
}

/// A record that says which process it speaks for.
pub trait Owned {
    /// The identity the record speaks for; only an update on its behalf may change the record
    /// (a snapshot's is its root).
    fn owner(&self) -> Identity;
}

/// A record's schema version, as every record carries it.
pub trait Versioned {
    /// The newest schema this build reads and writes.
    const SCHEMA: u32;
    /// The schema this record carries (its `"schema"` field).
    fn schema(&self) -> u32;
}

/// What a listing found: the records that parsed, and the ones that did not (kept on disk).
#[derive(Debug)]
pub struct Listing<T> {
    /// The records that parsed, each with its name, by name.
    pub records: Vec<(String, T)>,
    /// Why each of the others could not be read (damaged, unreadable, another user's); they
    /// stay on disk as they are.
    pub damaged: Vec<StoreError>,
}

/// An exclusive lock on one name, held until dropped (across processes: `flock`).
#[derive(Debug)]
pub struct Lock {
    /// `None` for a lock of a folder that cannot be written, whose lock file does not exist:
    /// nobody can hold it, since holding it needs the file.
    _file: Option<File>,
}

/// Whether an error says the folder cannot be written (read-only, or not ours to write).
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// The state folder.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// The folder this platform keeps state in, `PIER_STATE_DIR` first.
pub fn default_folder() -> Result<PathBuf, StoreError> {
    folder_from(&|k| std::env::var_os(k), cfg!(target_os = "macos"))
}

/// [`default_folder`] over any environment. `PIER_STATE_DIR` must be an absolute path when set
/// (empty or relative is refused, with a sentence); other empty values count as unset, and a
/// relative `XDG_STATE_HOME` is ignored, as the XDG spec says.
fn folder_from(env: &dyn Fn(&str) -> Option<OsString>, macos: bool) -> Result<PathBuf, StoreError> {
    match env("PIER_STATE_DIR").map(PathBuf::from) {
        Some(dir) if dir.as_os_str().is_empty() => return Err(StoreError::EmptyStateDir),
        Some(dir) if dir.is_relative() => return Err(StoreError::RelativeStateDir(dir)),
        Some(dir) => return Ok(dir),
        None => {}
    }
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    let dir = if macos {
        home.map(|h| h.join("Library/Application Support/Pier"))
    } else {
        var("XDG_STATE_HOME")
            .filter(|s| s.is_absolute())
            .map(|s| s.join("pier"))
            .or_else(|| home.map(|h| h.join(".local/state/pier")))
    };
    dir.ok_or(StoreError::NoFolder)
}

/// Names become file names: nothing that could climb out of the folder or hide a file.
fn check_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::BadName(name.to_owned()))
    }
}

impl Store {
    /// Opens the platform's state folder (creating it, mode 0700).
    pub fn open() -> Result<Self, StoreError> {
        Self::open_at(default_folder()?)
    }

    /// Opens `dir` as the state folder (creating it, mode 0700), with its `records` and
    /// `locks` subfolders.
    ///
    /// The folder must be a real folder of the user's: a symbolic link, or a folder another
    /// user owns, could hand the snapshots' secrets (and the argv a restart runs) to someone
    /// else.
    pub fn open_at(dir: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let dir = dir.into();
        for sub in [dir.clone(), dir.join("records"), dir.join("locks")] {
            real_and_ours(&sub)?;
            let existed = sub.is_dir();
            let prepared = fs::create_dir_all(&sub)
                .and_then(|()| make_private(&sub))
                // A new folder is only durable once its parent is synced (a relative
                // one-part path's parent is "", the working directory).
                .and_then(|()| match (existed, sub.parent()) {
                    (false, Some(parent)) if parent.as_os_str().is_empty() => {
                        File::open(".")?.sync_all()
                    }
                    (false, Some(parent)) => File::open(parent)?.sync_all(),
                    _ => Ok(()),
                });
            prepared.map_err(|source| StoreError::Folder {
                path: sub.clone(),
                source,
            })?;
        }
        Ok(Self { dir })
    }

    /// [`Store::open`] for a reader (`pier history`): a state folder that cannot be written —
    /// a read-only mount, a folder the user made read-only — is read as it is, with nothing
    /// created or changed in it. Writes to it then fail, each with its own sentence.
    pub fn open_for_reading() -> Result<Self, StoreError> {
        let dir = default_folder()?;
        match Self::open_at(&dir) {
            Err(StoreError::Folder { source, .. }) if cannot_write(&source) && dir.is_dir() => {
                for sub in [dir.clone(), dir.join("records"), dir.join("locks")] {
                    real_and_ours(&sub)?;
                }
                Ok(Self { dir })
            }
            opened => opened,
        }
    }

    /// The state folder's path (a restart's log goes in its `logs` subfolder).
    pub fn folder(&self) -> &Path {
        &self.dir
    }

    fn record_path(&self, name: &str) -> Result<PathBuf, StoreError> {
        check_name(name)?;
        Ok(self.dir.join("records").join(format!("{name}.json")))
    }

    /// The lock file called `name`, opened (created 0600 if new), and its path.
    fn lock_file(&self, name: &str) -> Result<(File, PathBuf), StoreError> {
        check_name(name)?;
        let path = self.dir.join("locks").join(format!("{name}.lock"));
        match OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(file) => Ok((file, path)),
            Err(source) => Err(StoreError::Lock { path, source }),
        }
    }

    /// Takes the exclusive lock called `name`, waiting for another holder to let go.
    pub fn lock(&self, name: &str) -> Result<Lock, StoreError> {
        let (file, path) = self.lock_file(name)?;
        match file.lock() {
            Ok(()) => Ok(Lock { _file: Some(file) }),
            Err(source) => Err(StoreError::Lock { path, source }),
        }
    }

    /// Like [`Store::lock`], but polling every `every` rather than blocking in `flock` (which
    /// the kernel restarts after a signal handler, so a blocked process could not be
    /// interrupted): `None` once `give_up` says so. The lock file stays open while it waits.
    pub fn lock_polling(
        &self,
        name: &str,
        every: std::time::Duration,
        give_up: &dyn Fn() -> bool,
    ) -> Result<Option<Lock>, StoreError> {
        let (file, path) = self.lock_file(name)?;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(Lock { _file: Some(file) })),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(source)) => {
                    return Err(StoreError::Lock { path, source })
                }
            }
            if give_up() {
                return Ok(None);
            }
            std::thread::sleep(every);
        }
    }

    /// Like [`Store::lock`], but without waiting: `None` when another process holds it. In a
    /// folder that cannot be written, the lock file is opened read-only (`flock` needs no
    /// write access), and a lock whose file does not exist is free.
    pub fn try_lock(&self, name: &str) -> Result<Option<Lock>, StoreError> {
        let (file, path) = match self.lock_file(name) {
            Ok(opened) => opened,
            Err(StoreError::Lock { path, source }) if cannot_write(&source) => {
                match File::open(&path) {
                    Ok(file) => (file, path),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        return Ok(Some(Lock { _file: None }))
                    }
                    Err(source) => return Err(StoreError::Lock { path, source }),
                }
            }
            Err(e) => return Err(e),
        };
        match file.try_lock() {
            Ok(()) => Ok(Some(Lock { _file: Some(file) })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(source)) => Err(StoreError::Lock { path, source }),
        }
    }

    /// Writes a new record. An existing record — damaged or not — is never replaced: the
    /// new one is linked into place, which fails if the name is taken.
    pub fn put<T: Serialize + Versioned>(&self, name: &str, record: &T) -> Result<(), StoreError> {
        let path = self.record_path(name)?;
        if path.exists() {
            self.get_raw_check(&path)?;
        }
        self.write_new(&path, record)
    }

    /// Why an existing record blocks a `put`: damaged, or simply there.
    fn get_raw_check(&self, path: &Path) -> Result<(), StoreError> {
        let bytes = fs::read(path).map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(_) => Err(StoreError::Write {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "a record of that name exists",
                ),
            }),
            Err(e) => Err(StoreError::Damaged {
                path: path.to_path_buf(),
                why: e.to_string(),
            }),
        }
    }

    /// Reads one record: `None` when there is none. A record another user owns is refused
    /// (and kept): whoever wrote it could have put any argv in it for a restart to run.
    pub fn get<T: DeserializeOwned + Versioned>(
        &self,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        use std::io::Read;
        let path = self.record_path(name)?;
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Read { path, source }),
        };
        let read = |source| StoreError::Read {
            path: path.clone(),
            source,
        };
        let uid = file.metadata().map_err(read)?.uid();
        if uid != euid() {
            return Err(StoreError::ForeignRecord { path, uid });
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(read)?;
        parse(&path, &bytes).map(Some)
    }

    /// Changes the record `name` under its lock, only on behalf of the identity it names.
    /// Returns the record as written.
    pub fn update<T, F>(
        &self,
        name: &str,
        on_behalf_of: Identity,
        change: F,
    ) -> Result<T, StoreError>
    where
        T: Serialize + DeserializeOwned + Versioned + Owned,
        F: FnOnce(&mut T),
    {
        let (_lock, path, mut record) = self.owned::<T>(name, on_behalf_of)?;
        let holder = record.owner();
        change(&mut record);
        // A change may not hand the record to another identity either.
        if record.owner() != holder {
            return Err(StoreError::NotOwner {
                path,
                holder,
                asked: record.owner(),
            });
        }
        self.write_atomically(&path, &record)?;
        Ok(record)
    }

    /// Removes the record `name` under its lock, only on behalf of the identity it names: a
    /// record that is damaged, written by a newer Pier or another user's is refused, and kept.
    /// The folder is synced, so the removal outlives a crash.
    pub fn remove<T>(&self, name: &str, on_behalf_of: Identity) -> Result<(), StoreError>
    where
        T: DeserializeOwned + Versioned + Owned,
    {
        let (_lock, path, _) = self.owned::<T>(name, on_behalf_of)?;
        let folder = path.parent().expect("records live in a folder").to_owned();
        fs::remove_file(&path).map_err(|source| StoreError::Write {
            path: path.clone(),
            source,
        })?;
        // Removed: a folder that cannot be synced only leaves the removal to the kernel's
        // own flush, which is no reason to call the record kept.
        if let Err(e) = File::open(&folder).and_then(|f| f.sync_all()) {
            tracing::warn!("{} removed, its folder not synced: {e}", path.display());
        }
        Ok(())
    }

    /// The record `name` under its record lock, read, when it names `on_behalf_of`: the lock,
    /// its path and the record. Missing, damaged, another user's or another identity's: an
    /// error, and the record is kept.
    fn owned<T>(&self, name: &str, on_behalf_of: Identity) -> Result<(Lock, PathBuf, T), StoreError>
    where
        T: DeserializeOwned + Versioned + Owned,
    {
        let lock = self.lock(&format!("record-{name}"))?;
        let path = self.record_path(name)?;
        let record: T = self.get(name)?.ok_or_else(|| StoreError::Read {
            path: path.clone(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such record"),
        })?;
        let holder = record.owner();
        if holder != on_behalf_of {
            return Err(StoreError::NotOwner {
                path,
                holder,
                asked: on_behalf_of,
            });
        }
        Ok((lock, path, record))
    }

    /// Every record whose name starts with `prefix`, newest name last; damaged ones reported.
    pub fn list<T: DeserializeOwned + Versioned>(
        &self,
        prefix: &str,
    ) -> Result<Listing<T>, StoreError> {
        let folder = self.dir.join("records");
        let entries = match fs::read_dir(&folder) {
            // A folder opened for reading that was never written to has no records yet.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Listing {
                    records: Vec::new(),
                    damaged: Vec::new(),
                })
            }
            read => read.map_err(|source| StoreError::Read {
                path: folder.clone(),
                source,
            })?,
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
            .filter(|n| n.starts_with(prefix) && check_name(n).is_ok())
            .collect();
        names.sort();
        let mut listing = Listing {
            records: Vec::new(),
            damaged: Vec::new(),
        };
        for name in names {
            match self.get::<T>(&name) {
                Ok(Some(record)) => listing.records.push((name, record)),
                Ok(None) => {} // removed since the listing
                Err(e) => listing.damaged.push(e),
            }
        }
        Ok(listing)
    }

    /// Like [`Store::write_atomically`], but the temp file is hard-linked into place, so the
    /// write fails rather than replace a record that appeared meanwhile.
    fn write_new<T: Serialize>(&self, path: &Path, record: &T) -> Result<(), StoreError> {
        self.write_with(path, record, |tmp, path| {
            let linked = fs::hard_link(tmp, path);
            let _ = fs::remove_file(tmp);
            linked
        })
    }

    /// temp file in the same folder → write → fsync → rename → fsync the folder.
    fn write_atomically<T: Serialize>(&self, path: &Path, record: &T) -> Result<(), StoreError> {
        self.write_with(path, record, |tmp, path| fs::rename(tmp, path))
    }

    fn write_with<T: Serialize>(
        &self,
        path: &Path,
        record: &T,
        place: impl FnOnce(&Path, &Path) -> std::io::Result<()>,
    ) -> Result<(), StoreError> {
        let failed = |source| StoreError::Write {
            path: path.to_path_buf(),
            source,
        };
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| failed(e.into()))?;
        let folder = path.parent().expect("records live in a folder");
        // Unique per process and per write, so concurrent writers never share a temp file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let tmp = folder.join(format!(
            ".{}.{}.{}.tmp",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("record"),
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(&bytes)?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            place(&tmp, path)?;
            File::open(folder)?.sync_all()
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written.map_err(failed)
    }
}

/// A folder of the state folder's must be a real folder of the user's, when it exists: a
/// symbolic link, or a folder another user owns, could hand the snapshots' secrets (and the
/// argv a restart runs) to someone else.
fn real_and_ours(sub: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(sub) {
        Ok(m) if m.file_type().is_symlink() => Err(StoreError::SymlinkFolder {
            path: sub.to_path_buf(),
        }),
        Ok(m) if m.uid() != euid() => Err(StoreError::ForeignFolder {
            path: sub.to_path_buf(),
            uid: m.uid(),
        }),
        _ => Ok(()),
    }
}

/// Takes group and other permissions away from `dir`. Why not always 0700: a folder the user
/// made read-only (0500) stays read-only, and a read-only mount that is private already is
/// not an error; `pier history` reads it.
fn make_private(dir: &Path) -> std::io::Result<()> {
    let mode = fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 == 0 {
        return Ok(());
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700))
}

/// The uid Pier runs as: the owner its folders and records must have.
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Parses a record, refusing schemas newer than this build knows. The schema is read first,
/// on its own: a newer Pier may have renamed or dropped any other field, and its record must
/// read as "written by a newer Pier", not as "missing field `id`".
fn parse<T: DeserializeOwned + Versioned>(path: &Path, bytes: &[u8]) -> Result<T, StoreError> {
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: u64,
    }
    let newer = |schema: u64| StoreError::Newer {
        path: path.to_path_buf(),
        schema,
        reads: T::SCHEMA,
    };
    if let Ok(Schema { schema }) = serde_json::from_slice::<Schema>(bytes) {
        if schema > u64::from(T::SCHEMA) {
            return Err(newer(schema));
        }
    }
    // A record that parses as `T` has a numeric schema, which the read above has judged.
    serde_json::from_slice(bytes).map_err(|e| StoreError::Damaged {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}
