//! The state folder (docs/design.md §5): where snapshots and other records live, and how they are
//! written so that none is ever lost or half-written.
//!
//! Invariants:
//! - One folder: `PIER_STATE_DIR` when set (an absolute path; empty or relative is refused),
//!   else macOS `~/Library/Application Support/Pier`, Linux `$XDG_STATE_HOME/pier`
//!   (`~/.local/state/pier`). Created 0700, records 0600 (snapshots hold environments, which
//!   carry secrets). Another user could plant or swap anything in it (docs/design.md §5): the
//!   folder and its subfolders must be ones only the user can change (`trust`), are held by
//!   descriptor once checked, and every file in it is opened as `trust::read` says — regular,
//!   the user's, never a link, never blocking, bounded.
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
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::probe::Identity;
use crate::trust::folder::{Folder, FolderError};
use crate::trust::read::{self, FileError};
use crate::trust::setup::{Named, Problem, SetupError, Which};
use crate::trust::Me;

mod lock;
#[cfg(test)]
mod tests;

use lock::Wait;
pub use lock::{FreeLocks, Lock};

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
    /// A restart log could not be opened or removed.
    #[error("the restart log {path} could not be opened or removed: {source}")]
    Log {
        /// The log file.
        path: PathBuf,
        /// The OS's error.
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
    /// The state folder, one of its subfolders or a folder on its path is not one Pier can
    /// use as the machine is set up (a file in its place, a link, another user's, one others
    /// can write, one the user may not make): its sentence says what it is and what to do.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A record, lock or log that is not a regular file (a link, a FIFO, a device): never
    /// opened for reading or writing, and left as it is.
    #[error("{} is {what}, not a file Pier wrote; it was left as it is", .path.display())]
    NotAFile {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        what: &'static str,
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

impl StoreError {
    /// Whether it is the machine's setup that stands in the way — which folder, whose, who
    /// else may write it — rather than a record or a fault of Pier's: its sentence says what
    /// to do (`pier doctor` says so).
    pub fn is_setup(&self) -> bool {
        if let StoreError::Write { source, .. } = self {
            // A folder the user may not write, or a read-only disk.
            return cannot_write(source);
        }
        matches!(
            self,
            StoreError::NoFolder
                | StoreError::EmptyStateDir
                | StoreError::RelativeStateDir(_)
                | StoreError::Folder { .. }
                | StoreError::Setup(_)
        )
    }
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

/// Whether an error says the folder cannot be written (read-only, or not ours to write).
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// The state folder, held open.
#[derive(Debug, Clone)]
pub struct Store {
    /// Its path, for sentences.
    dir: PathBuf,
    /// Where its path came from, for what a sentence says to do.
    named: Named,
    root: Folder,
    /// `None` only in a folder opened for reading that has none yet.
    records: Option<Folder>,
    /// `None` only in a folder opened for reading that has none yet: every lock is free.
    locks: Option<Folder>,
    /// False for a folder opened for reading that cannot be written: nothing is created or
    /// removed in it, lock files included.
    writes: bool,
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
        Self::open_named(default_folder()?, Which::State.named())
    }

    /// Opens `dir` as the state folder, with its `records` and `locks` subfolders (each
    /// created, mode 0700, when missing), and holds them by descriptor.
    ///
    /// Each must be a real folder of the user's that no other user can write, on a path no
    /// other user can change (`trust`): a link, another user's folder or one others can write
    /// could hand the snapshots' secrets, and the argv a restart runs, to someone else. A
    /// folder Pier did not create is never changed: a refused one is named, with what to do.
    pub fn open_at(dir: impl Into<PathBuf>) -> Result<Self, StoreError> {
        Self::open_named(dir, Named::Variable)
    }

    /// [`Store::open_at`], its path named as `named` says (for what a sentence says to do).
    fn open_named(dir: impl Into<PathBuf>, named: Named) -> Result<Self, StoreError> {
        let dir = absolute(dir.into())?;
        let me = Me::current();
        let failed = |e| folder_error(&dir, named, e);
        let root = Folder::open(&dir, me, true).map_err(failed)?;
        let sub = |name| root.sub(name, me, true).map_err(failed);
        let (records, locks) = (sub("records")?, sub("locks")?);
        Ok(Self {
            named,
            dir,
            root,
            records: Some(records),
            locks: Some(locks),
            writes: true,
        })
    }

    /// [`Store::open`] for a reader (`pier history`): a state folder that cannot be written —
    /// a read-only mount, a folder the user made read-only — is read as it is, with nothing
    /// created or changed in it. Writes to it then fail, each with its own sentence.
    pub fn open_for_reading() -> Result<Self, StoreError> {
        let dir = absolute(default_folder()?)?;
        let named = Which::State.named();
        match Self::open_named(&dir, named) {
            Err(StoreError::Setup(e)) if e.cannot_write() && dir.is_dir() => {
                let me = Me::current();
                let failed = |e| folder_error(&dir, named, e);
                let root = Folder::open(&dir, me, false).map_err(failed)?;
                let sub = |name| match root.sub(name, me, false) {
                    Ok(f) => Ok(Some(f)),
                    Err(e) if e.is_not_found() => Ok(None),
                    Err(e) => Err(failed(e)),
                };
                let (records, locks) = (sub("records")?, sub("locks")?);
                Ok(Self {
                    named,
                    dir,
                    root,
                    records,
                    locks,
                    writes: false,
                })
            }
            opened => opened,
        }
    }

    /// The state folder's path, for sentences: every read and write goes through the folder
    /// held open.
    pub fn folder(&self) -> &Path {
        &self.dir
    }

    /// The state folder itself, held open (checked when the store was opened).
    pub fn held(&self) -> &Folder {
        &self.root
    }

    /// The records folder, or why a write cannot go there (a read-only folder without one).
    fn records(&self) -> Result<&Folder, StoreError> {
        self.records.as_ref().ok_or_else(|| StoreError::Write {
            path: self.dir.join("records"),
            source: std::io::ErrorKind::ReadOnlyFilesystem.into(),
        })
    }

    /// The file name of record `name`, and its path for sentences.
    fn record_file(&self, name: &str) -> Result<(String, PathBuf), StoreError> {
        check_name(name)?;
        let file = format!("{name}.json");
        let path = self.dir.join("records").join(&file);
        Ok((file, path))
    }

    /// Takes the exclusive lock called `name`, waiting for another holder to let go.
    pub fn lock(&self, name: &str) -> Result<Lock, StoreError> {
        // A blocking take only ends holding the lock, or with an error.
        self.take(name, Wait::Block)?
            .ok_or_else(|| StoreError::Lock {
                path: self.dir.join("locks").join(format!("{name}.lock")),
                source: std::io::ErrorKind::WouldBlock.into(),
            })
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
        self.take(name, Wait::Poll(every, give_up))
    }

    /// Like [`Store::lock`], but without waiting: `None` when another process holds it. In a
    /// folder that cannot be written, a lock whose file does not exist is free.
    pub fn try_lock(&self, name: &str) -> Result<Option<Lock>, StoreError> {
        self.take(name, Wait::Try)
    }

    /// Writes a new record. An existing record — damaged or not — is never replaced: the
    /// new one is linked into place, which fails if the name is taken.
    pub fn put<T: Serialize + Versioned>(&self, name: &str, record: &T) -> Result<(), StoreError> {
        let (file, path) = self.record_file(name)?;
        match self.read_raw(&file, &path)? {
            None => self.write_with(&file, &path, record, Place::New),
            Some(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(_) => Err(StoreError::Write {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "a record of that name exists",
                    ),
                }),
                Err(e) => Err(StoreError::Damaged {
                    path,
                    why: e.to_string(),
                }),
            },
        }
    }

    /// The bytes of record file `file` (`None` when there is none): a regular file the user
    /// owns, opened without following a link or blocking, and at most [`read::RECORD`] bytes.
    fn read_raw(&self, file: &str, path: &Path) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(records) = &self.records else {
            return Ok(None);
        };
        records.read(file, read::RECORD).map_err(|e| match e {
            FileError::Foreign(uid) => StoreError::ForeignRecord {
                path: path.to_path_buf(),
                uid,
            },
            FileError::NotRegular(what) => StoreError::NotAFile {
                path: path.to_path_buf(),
                what,
            },
            FileError::TooLarge(_) => StoreError::Damaged {
                path: path.to_path_buf(),
                why: e.to_string(),
            },
            FileError::Io(source) => StoreError::Read {
                path: path.to_path_buf(),
                source,
            },
        })
    }

    /// Reads one record: `None` when there is none. A record another user owns is refused
    /// (and kept): whoever wrote it could have put any argv in it for a restart to run.
    pub fn get<T: DeserializeOwned + Versioned>(
        &self,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        let (file, path) = self.record_file(name)?;
        match self.read_raw(&file, &path)? {
            Some(bytes) => parse(&path, &bytes).map(Some),
            None => Ok(None),
        }
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
        let (_lock, mut record) = self.owned::<T>(name, on_behalf_of)?;
        let (file, path) = self.record_file(name)?;
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
        self.write_with(&file, &path, &record, Place::Over)?;
        Ok(record)
    }

    /// Writes `record` as `name`: new, or over the one there on behalf of the identity it names
    /// (a record that stands for the user, not a process: the pause, the scheduler's view).
    pub fn put_or_update<T>(&self, name: &str, record: &T) -> Result<(), StoreError>
    where
        T: Serialize + DeserializeOwned + Versioned + Owned + Clone,
    {
        match self.get::<T>(name)? {
            None => self.put(name, record),
            Some(_) => self
                .update::<T, _>(name, record.owner(), |r| *r = record.clone())
                .map(|_| ()),
        }
    }

    /// Removes the record `name` under its lock, only on behalf of the identity it names: a
    /// record that is damaged, written by a newer Pier or another user's is refused, and kept.
    /// The folder is synced, so the removal outlives a crash.
    pub fn remove<T>(&self, name: &str, on_behalf_of: Identity) -> Result<(), StoreError>
    where
        T: DeserializeOwned + Versioned + Owned,
    {
        let (_lock, _) = self.owned::<T>(name, on_behalf_of)?;
        let (file, path) = self.record_file(name)?;
        let records = self.records()?;
        records
            .unlink(file.as_ref())
            .map_err(|source| StoreError::Write {
                path: path.clone(),
                source,
            })?;
        // Removed: a folder that cannot be synced only leaves the removal to the kernel's
        // own flush, which is no reason to call the record kept.
        if let Err(e) = records.sync() {
            tracing::warn!("{} removed, its folder not synced: {e}", path.display());
        }
        Ok(())
    }

    /// The record `name` under its record lock, read, when it names `on_behalf_of`: the lock
    /// and the record. Missing, damaged, another user's or another identity's: an error, and
    /// the record is kept.
    fn owned<T>(&self, name: &str, on_behalf_of: Identity) -> Result<(Lock, T), StoreError>
    where
        T: DeserializeOwned + Versioned + Owned,
    {
        let lock = self.lock(&format!("record-{name}"))?;
        let (_, path) = self.record_file(name)?;
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
        Ok((lock, record))
    }

    /// Every record whose name starts with `prefix`, newest name last; damaged ones reported.
    pub fn list<T: DeserializeOwned + Versioned>(
        &self,
        prefix: &str,
    ) -> Result<Listing<T>, StoreError> {
        let mut listing = Listing {
            records: Vec::new(),
            damaged: Vec::new(),
        };
        // A folder opened for reading that was never written to has no records yet.
        let Some(records) = &self.records else {
            return Ok(listing);
        };
        let names = records.names().map_err(|source| StoreError::Read {
            path: self.dir.join("records"),
            source,
        })?;
        let mut names: Vec<String> = names
            .into_iter()
            .filter_map(|n| n.into_string().ok())
            .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
            .filter(|n| n.starts_with(prefix) && check_name(n).is_ok())
            .collect();
        names.sort();
        for name in names {
            match self.get::<T>(&name) {
                Ok(Some(record)) => listing.records.push((name, record)),
                Ok(None) => {} // removed since the listing
                Err(e) => listing.damaged.push(e),
            }
        }
        Ok(listing)
    }

    /// A new temp file in the records folder → write → fsync → placed (a new record is
    /// hard-linked into place, so the write fails rather than replace one that appeared
    /// meanwhile; an update is renamed over it) → fsync the folder.
    fn write_with<T: Serialize>(
        &self,
        file: &str,
        path: &Path,
        record: &T,
        place: Place,
    ) -> Result<(), StoreError> {
        let failed = |source| StoreError::Write {
            path: path.to_path_buf(),
            source,
        };
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| failed(e.into()))?;
        let records = self.records()?;
        let (mut tmp, tmp_name) = records.create_temp(file).map_err(failed)?;
        let written = (|| {
            tmp.write_all(&bytes)?;
            tmp.write_all(b"\n")?;
            tmp.sync_all()?;
            match place {
                Place::New => {
                    let linked = records.link(&tmp_name, file);
                    let _ = records.unlink(&tmp_name);
                    linked?;
                }
                Place::Over => records.rename(&tmp_name, file)?,
            }
            records.sync()
        })();
        if written.is_err() {
            let _ = records.unlink(&tmp_name);
        }
        written.map_err(failed)
    }

    /// Whether a record can be written where records go: a scratch file is created, written,
    /// synced and removed (`pier doctor`).
    pub fn try_write(&self) -> Result<(), StoreError> {
        let records = self.records()?;
        let path = self.dir.join("records");
        let failed = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        let (mut f, name) = records.create_temp("doctor").map_err(failed)?;
        let written = f.write_all(b"{}\n").and_then(|()| f.sync_all());
        let _ = records.unlink(&name);
        written.map_err(failed)
    }

    /// The restart log `file` in the `logs` subfolder (created 0700, checked as the others
    /// are), opened for appending (created 0600): a regular file of the user's, never a link.
    pub fn open_log(&self, file: &str) -> Result<(File, PathBuf), StoreError> {
        check_name(file)?;
        let path = self.dir.join("logs").join(file);
        let logs = self
            .root
            .sub("logs", Me::current(), true)
            .map_err(|e| folder_error(&self.dir, self.named, e))?;
        let log = logs.append(file).map_err(|e| match e {
            FileError::NotRegular(what) => StoreError::NotAFile {
                path: path.clone(),
                what,
            },
            e => StoreError::Log {
                path: path.clone(),
                source: file_io(e),
            },
        })?;
        Ok((log, path))
    }

    /// The last [`read::LOG_TAIL`] bytes of restart log `file` from byte `from` on; empty when
    /// it cannot be read.
    pub fn log_tail(&self, file: &str, from: u64) -> Vec<u8> {
        // Read-only: the log `open_log` gives is opened for appending only, and a read of it
        // failed, so every tail came back empty.
        let opened = check_name(file).ok().and_then(|()| {
            let logs = self.root.sub("logs", Me::current(), false).ok()?;
            logs.open_file(file, rustix::fs::OFlags::RDONLY).ok()
        });
        let Some(log) = opened else {
            return Vec::new();
        };
        let len = log.metadata().map_or(0, |m| m.len());
        let bytes = read::tail(&log, read::LOG_TAIL).unwrap_or_default();
        let skip = from.saturating_sub(len.saturating_sub(bytes.len() as u64));
        bytes[usize::try_from(skip).unwrap_or(usize::MAX).min(bytes.len())..].to_vec()
    }

    /// Removes restart log `file`, if there is one (a missing `logs` folder has none).
    pub fn remove_log(&self, file: &str) -> Result<(), StoreError> {
        check_name(file)?;
        let path = self.dir.join("logs").join(file);
        let logs = match self.root.sub("logs", Me::current(), false) {
            Ok(logs) => logs,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(folder_error(&self.dir, self.named, e)),
        };
        match logs.unlink(file.as_ref()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(StoreError::Log { path, source: e })
            }
            _ => Ok(()),
        }
    }

    /// `file` in the state folder itself (the app's log), opened for appending, created 0600.
    pub fn append_file(&self, file: &str) -> Result<File, StoreError> {
        check_name(file)?;
        self.root.append(file).map_err(|e| StoreError::Write {
            path: self.dir.join(file),
            source: file_io(e),
        })
    }
}

/// How a written temp file takes its record's name.
#[derive(Clone, Copy)]
enum Place {
    /// Hard-linked: fails if the name is taken.
    New,
    /// Renamed over the record.
    Over,
}

/// A relative folder named from the working directory, made absolute once.
fn absolute(dir: PathBuf) -> Result<PathBuf, StoreError> {
    std::path::absolute(&dir).map_err(|source| StoreError::Folder { path: dir, source })
}

/// A folder of the state folder `root`'s (it, a subfolder, a folder on its path) that could
/// not be held, as the store says it: the setup's, with what to do, or the OS's error.
fn folder_error(root: &Path, named: Named, e: FolderError) -> StoreError {
    let os = |at: PathBuf, source: std::io::Error| StoreError::Folder {
        path: root.to_path_buf(),
        source: match at == root {
            true => source,
            false => std::io::Error::new(source.kind(), format!("{}: {source}", at.display())),
        },
    };
    match Problem::of(root, e) {
        Ok(problem) => StoreError::Setup(SetupError {
            which: Which::State,
            named,
            folder: root.to_path_buf(),
            problem,
        }),
        Err(FolderError::Io { path, source }) => os(path, source),
        Err(other) => os(root.to_path_buf(), std::io::Error::other(other.to_string())),
    }
}

/// A file error as the OS error a store error carries.
fn file_io(e: FileError) -> std::io::Error {
    match e {
        FileError::Io(e) => e,
        other => std::io::Error::other(other.to_string()),
    }
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
