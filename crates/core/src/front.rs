//! The front door both binaries (`pier`, `pier-app`) come in by: [`System`], the one place
//! the engine is built for this machine (the probe, the signaller, the exit waiter, the state
//! folder), which the CLI's commands and the worker's [`crate::worker::SystemEngine`] both
//! use; the `--under` folders, resolved or refused as a [`DirError`]; logging; and
//! [`numbers`]: every number the command lines take, parsed into its range; with the `cli`
//! feature, `app_args`: the tray app's options. What is printed
//! and the exit codes are the binaries' own (`src/cli/exit.rs`, `crates/app/src/start.rs`).

#[cfg(feature = "cli")]
pub mod app_args;
pub mod numbers;

use std::path::PathBuf;

use crate::diagnose::project;
use crate::probe::{self, Probe};
use crate::signal::wait::{self, ExitWaiter};
use crate::signal::{self, Signaller};
use crate::stop::{StopOptions, Stopper};
use crate::store::{Store, StoreError};
use crate::words::path_for_terminal;

/// Pier's engine on this machine: the probe, the race-free signaller and the exit waiter for
/// the OS Pier was built for, over a state folder. They are put together here and nowhere
/// else, so a command and the app cannot wire them differently. (`pier scan` writes no state
/// and opens no state folder: it needs the probe alone, [`probe::system_probe`].)
pub struct System {
    /// Reads processes, sockets, identities and activity.
    pub probe: Box<dyn Probe + Send + Sync>,
    /// Sends a signal only to the process Pier judged.
    pub signaller: Box<dyn Signaller + Send + Sync>,
    /// Waits for signalled members to exit.
    pub waiter: Box<dyn ExitWaiter + Send + Sync>,
    /// The state folder, where the snapshots and other records live.
    pub store: Store,
}

impl System {
    /// This machine's probe, signaller and exit waiter, over `store`.
    pub fn new(store: Store) -> Self {
        Self {
            probe: probe::system_probe(),
            signaller: signal::system_signaller(),
            waiter: wait::system_waiter(),
            store,
        }
    }

    /// Over the state folder ([`Store::open`]: `PIER_STATE_DIR`, else the platform's).
    pub fn open() -> Result<Self, StoreError> {
        Store::open().map(Self::new)
    }

    /// Over the state folder opened for reading ([`Store::open_for_reading`]): `pier history`
    /// reads a folder it cannot write.
    pub fn open_for_reading() -> Result<Self, StoreError> {
        Store::open_for_reading().map(Self::new)
    }

    /// Restarts one stop record (or a target's newest), a process tree's or a container's,
    /// waiting up to `wait` for its server's ports.
    pub fn restart(
        &self,
        snapshot: &str,
        wait: std::time::Duration,
    ) -> crate::model::history::RestartReport {
        use crate::model::history::{RestartReport, RestartResult};
        use crate::model::target::{RecordName, TargetId, TargetKind};
        use crate::restart;
        let probe = self.probe.as_ref();
        let kind = match snapshot.parse::<RecordName>() {
            Ok(record) => Some(record.target.kind()),
            Err(_) => snapshot.parse::<TargetId>().ok().map(|id| id.kind()),
        };
        let refused =
            |why: String| RestartReport::not_started(snapshot, RestartResult::Refused, why);
        if kind == Some(TargetKind::Container) {
            // A container's stop record: the same container started again through its engine.
            return match restart::container::find(&self.store, snapshot) {
                Ok((name, _)) => {
                    let engines = &crate::containers::LiveEngines;
                    restart::container::restart(probe, &self.store, engines, &name, wait)
                }
                Err(why) => refused(why.to_string()),
            };
        }
        match restart::find(&self.store, snapshot) {
            Ok((name, _)) => restart::restart(probe, &self.store, &name, wait),
            Err(why) => refused(why.to_string()),
        }
    }

    /// A stop through this engine, judging project folders by their markers on disk and
    /// resources by the user's protect list, read now (`crate::config`): no caller can stop
    /// past the list by forgetting to read it.
    pub fn stopper(&self, opts: StopOptions) -> Stopper<'_> {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let opts = StopOptions {
            protect: crate::config::protect(),
            // One name per cleanup: the time it began and who made it.
            batch: Some(format!("{ms}-{}", std::process::id())),
            ..opts
        };
        Stopper {
            probe: self.probe.as_ref(),
            signaller: self.signaller.as_ref(),
            waiter: self.waiter.as_ref(),
            store: &self.store,
            marker_at: &project::marker_on_disk,
            interrupt: &crate::stop::interrupt::PROCESS,
            engines: &crate::containers::LiveEngines,
            opts,
        }
    }
}

/// A folder named on a command line (`--under DIR`, `--project PATH`) that is not one. The
/// sentence names the flag and the folder as given, shown as
/// [`crate::words::path_for_terminal`] writes it.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// It exists, and is not a folder.
    #[error("{flag} {}: not a folder", path_for_terminal(.path))]
    NotAFolder {
        /// The flag that named it.
        flag: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// Nothing is there.
    #[error("{flag} {}: no such folder", path_for_terminal(.path))]
    Missing {
        /// The flag that named it.
        flag: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// It is relative where only an absolute folder means one thing (`pier mcp`'s `under`: the
    /// server's working folder is not the agent's).
    #[error("{flag} {}: not an absolute path; name the folder from / (e.g. /home/me/code)", path_for_terminal(.path))]
    Relative {
        /// The flag (or tool argument) that named it.
        flag: &'static str,
        /// The path as given.
        path: PathBuf,
    },
    /// It could not be looked at (a folder above it is not searchable, say).
    #[error("{flag} {}: {source}", path_for_terminal(.path))]
    Unreadable {
        /// The flag that named it.
        flag: &'static str,
        /// The path as given.
        path: PathBuf,
        /// The OS's error.
        source: std::io::Error,
    },
}

/// `dir`, resolved (symbolic links too) as a folder named by `flag`.
pub fn resolve_dir(flag: &'static str, dir: &std::path::Path) -> Result<PathBuf, DirError> {
    let path = dir.to_path_buf();
    match dir.canonicalize() {
        Ok(resolved) if resolved.is_dir() => Ok(resolved),
        Ok(_) => Err(DirError::NotAFolder { flag, path }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(DirError::Missing { flag, path }),
        Err(source) => Err(DirError::Unreadable { flag, path, source }),
    }
}

/// `dir`, which must be absolute, resolved as [`resolve_dir`] does. Why absolute: an agent's
/// relative path is relative to a folder it cannot see (`pier mcp`'s own working folder).
pub fn resolve_absolute_dir(
    flag: &'static str,
    dir: &std::path::Path,
) -> Result<PathBuf, DirError> {
    if !dir.is_absolute() {
        let path = dir.to_path_buf();
        return Err(DirError::Relative { flag, path });
    }
    resolve_dir(flag, dir)
}

/// `--under` folders, resolved; the first that is not a folder is the error.
pub fn resolve_dirs(flag: &'static str, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, DirError> {
    dirs.iter().map(|dir| resolve_dir(flag, dir)).collect()
}

/// Logs go to `file` when given (the app's log in its state folder), else to stderr; `PIER_LOG`
/// overrides the `default` filter.
pub fn init_logging(file: Option<std::fs::File>, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PIER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match file {
        Some(file) => builder
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
            .try_init(),
        // Colour only on a terminal, and never with `NO_COLOR` set (found by trying:
        // `PIER_LOG=debug pier scan 2>log` wrote escape codes into the file).
        None => {
            use std::io::IsTerminal as _;
            let colour = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder
                .with_ansi(colour)
                .with_writer(std::io::stderr)
                .try_init()
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder is taken resolved; a file or nothing there is refused, each in a sentence
    /// that names the flag and the path as given.
    #[test]
    fn an_under_folder_is_a_folder_or_a_sentence_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "").unwrap();
        let missing = dir.path().join("gone");
        let resolved = resolve_dirs("--under", &[dir.path().to_path_buf()]).unwrap();
        assert_eq!(resolved, [dir.path().canonicalize().unwrap()]);
        let e = resolve_dirs("--under", &[dir.path().to_path_buf(), file.clone()]).unwrap_err();
        assert!(
            matches!(
                e,
                DirError::NotAFolder {
                    flag: "--under",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("--under {}: not a folder", file.display())
        );
        let e = resolve_dir("--project", &missing).unwrap_err();
        assert!(
            matches!(
                e,
                DirError::Missing {
                    flag: "--project",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!("--project {}: no such folder", missing.display())
        );
    }

    /// An agent's folder is absolute or refused, before anything is read; an absolute one is
    /// judged as any `--under` folder.
    #[test]
    fn an_agents_folder_is_absolute_or_a_sentence_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = resolve_absolute_dir("under", std::path::Path::new("code/shop")).unwrap_err();
        assert!(
            matches!(e, DirError::Relative { flag: "under", .. }),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "under code/shop: not an absolute path; name the folder from / (e.g. /home/me/code)"
        );
        assert_eq!(
            resolve_absolute_dir("under", dir.path()).unwrap(),
            dir.path().canonicalize().unwrap()
        );
        let gone = dir.path().join("gone");
        assert!(matches!(
            resolve_absolute_dir("under", &gone),
            Err(DirError::Missing { .. })
        ));
    }
}
