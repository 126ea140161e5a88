//! Why a read of the OS failed, as a type: [`ProbeError`], the one error every probe answer
//! carries — a whole call's (`Probe::processes`, `Probe::sockets`) and one process's field's
//! (its executable, its memory, its open files) alike.
//!
//! The sentence of each kind is made here, once, in its `#[error]`. A field's error is quoted
//! word for word in the evidence that names it ("the executable of pid 7 could not be read:
//! /proc/7/exe: Permission denied (os error 13)"), so those sentences are the path and the
//! OS's words, nothing more. Errors are plain data (cloned into shared answers, compared in
//! tests), so the OS's error is kept behind an [`OsError`].

use std::fmt;
use std::io;
use std::sync::Arc;

use super::Pid;

/// An error the OS gave, shared: the `io::Error` itself, which is neither `Clone` nor `Eq`.
#[derive(Debug, Clone)]
pub struct OsError(Arc<io::Error>);

impl OsError {
    /// The error of the OS's error number `code` (an `errno` a macOS call set).
    pub fn from_raw(code: i32) -> Self {
        Self::from(io::Error::from_raw_os_error(code))
    }

    /// What kind of failure it was (`PermissionDenied`, `NotFound`, …).
    pub fn kind(&self) -> io::ErrorKind {
        self.0.kind()
    }

    /// The OS's error number, when it gave one.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.0.raw_os_error()
    }
}

impl From<io::Error> for OsError {
    fn from(e: io::Error) -> Self {
        Self(Arc::new(e))
    }
}

#[cfg(unix)]
impl From<rustix::io::Errno> for OsError {
    fn from(e: rustix::io::Errno) -> Self {
        Self::from(io::Error::from(e))
    }
}

/// Two OS errors are the same answer when they say the same thing.
impl PartialEq for OsError {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind()
            && self.raw_os_error() == other.raw_os_error()
            && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for OsError {}

impl fmt::Display for OsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for OsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Why a probe read failed. Whatever the kind, the caller fails closed on it: a failed read
/// is never "nothing there".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// What a whole answer rests on could not be read (`/proc`, a TCP table,
    /// `proc_listallpids`).
    #[error("could not read {path}: {source}")]
    Io {
        /// What was read: a path, or on macOS the call's name.
        path: String,
        /// The OS's error.
        #[source]
        source: OsError,
    },
    /// A table was read but not understood: one malformed row spoils the whole table.
    #[error("could not understand {path}: {what}")]
    Parse {
        /// The file that was read (`/proc/net/tcp6`).
        path: String,
        /// What was wrong with it (`line 7 is malformed`).
        what: String,
    },
    /// One of a process's files could not be read: `/proc/7/exe: Permission denied (os error
    /// 13)`.
    #[error("{path}: {source}")]
    Read {
        /// The file (Linux), or on macOS the call and what it read (`exe of pid 7`).
        path: String,
        /// The OS's error.
        #[source]
        source: OsError,
    },
    /// One of a process's files was read but did not say what it must: `/proc/7/stat:
    /// unexpected format`.
    #[error("{path}: {what}")]
    Malformed {
        /// The file, or what was read (`pid 7`).
        path: String,
        /// What was wrong with it.
        what: String,
    },
    /// A figure read from a first source and then a fallback: neither answered
    /// (`smaps_rollup`, then `statm`).
    #[error("{fallback} (and {first})")]
    Neither {
        /// Why the first source did not answer.
        first: Box<ProbeError>,
        /// Why the fallback did not.
        fallback: Box<ProbeError>,
    },
    /// The kernel's sock_diag dump could not be used (the tables are then read from
    /// `/proc/net`).
    #[error(transparent)]
    Dump(#[from] super::netlink::DumpError),
    /// A buffer the macOS kernel wrote did not have its documented layout.
    #[error(transparent)]
    Decode(#[from] super::darwin::DecodeError),
    /// macOS gave no trustworthy environment (`Probe::environment`).
    #[error(transparent)]
    Environment(#[from] super::darwin::EnvGap),
    /// A read of `what` failed because of `error`: "PROC_PIDTBSDINFO: pid 7 is gone".
    #[error("{what}: {error}")]
    Reading {
        /// What was read (a macOS call's name).
        what: String,
        /// Why it failed.
        error: Box<ProbeError>,
    },
    /// A process's arguments do not fit in `ARG_MAX` (macOS `KERN_PROCARGS2`): the kernel
    /// would give only their tail.
    #[error("the arguments of pid {0} are larger than ARG_MAX")]
    ArgumentsTooLarge(Pid),
    /// macOS's Mach timebase (`hw.tbfrequency`) could not be read: no CPU time can be told.
    #[error("hw.tbfrequency could not be read")]
    NoTimebase,
    /// The cgroup file of a process named no cgroup.
    #[error("empty cgroup file")]
    NoCgroup,
    /// This system cannot show which files a process holds (`Probe::writes`).
    #[error("the open files of pid {0} cannot be read on this system")]
    OpenFilesUnsupported(Pid),
    /// The process an engine named for a container is not the container's: its cgroup is
    /// another's (`probe::namespace_sockets`).
    #[error("pid {pid} is not this container's process (its cgroup is {cgroup})")]
    NotTheContainers {
        /// The process.
        pid: Pid,
        /// Its cgroup.
        cgroup: String,
    },
    /// The process an engine named for a container has no cgroup that names the container
    /// (`probe::cgroup_cpu_ns`).
    #[error("pid {0} is not this container's process (no cgroup of its names it)")]
    NoContainerCgroup(Pid),
    /// The process changed (another start time, another cgroup) while its cgroup's counter
    /// was read (`probe::cgroup_cpu_ns`).
    #[error("pid {0} changed while its cgroup's CPU time was read")]
    ChangedWhileRead(Pid),
    /// The process is gone: it has nothing left to read.
    #[error("pid {0} is gone")]
    Gone(Pid),
    /// A read failed in a way of its own, said in its own words (a list of children that
    /// could not be read, a container's process that changed while it was read).
    #[error("{0}")]
    Partial(String),
    /// The read of the process table hit an internal error of Pier's (a panic, with what it
    /// said): the callers that shared the read are told so (`reuse::Coalesced`).
    #[error("the process table could not be read: Pier hit an internal error ({0})")]
    Panicked(String),
    /// Pier cannot read this on this system: every read fails, so every checkpoint blocks.
    #[error("Pier cannot read processes and sockets on this operating system yet")]
    Unsupported,
    /// An answer a test scripted ([`super::fake::FakeProbe`]), in the test's words.
    #[cfg(any(test, feature = "test-support"))]
    #[error("{0}")]
    Scripted(String),
}

impl ProbeError {
    /// `path` could not be read (a whole answer's source).
    pub fn io(path: impl Into<String>, source: impl Into<OsError>) -> Self {
        ProbeError::Io {
            path: path.into(),
            source: source.into(),
        }
    }

    /// One of a process's files, `path`, could not be read.
    pub fn read(path: impl Into<String>, source: impl Into<OsError>) -> Self {
        ProbeError::Read {
            path: path.into(),
            source: source.into(),
        }
    }

    /// One of a process's files, `path`, did not say what it must.
    pub fn malformed(path: impl Into<String>, what: impl Into<String>) -> Self {
        ProbeError::Malformed {
            path: path.into(),
            what: what.into(),
        }
    }
}

/// A test's scripted failure: `Err("permission denied".into())`.
#[cfg(any(test, feature = "test-support"))]
impl From<&str> for ProbeError {
    fn from(why: &str) -> Self {
        ProbeError::Scripted(why.to_owned())
    }
}

/// A test's scripted failure, made with `format!`.
#[cfg(any(test, feature = "test-support"))]
impl From<String> for ProbeError {
    fn from(why: String) -> Self {
        ProbeError::Scripted(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field's error is quoted in evidence as the path and the OS's words, as before it
    /// was a type; a whole answer's says what could not be read.
    #[test]
    fn each_kind_says_its_sentence() {
        let denied = || OsError::from_raw(13);
        assert_eq!(
            ProbeError::read("/proc/7/exe", denied()).to_string(),
            "/proc/7/exe: Permission denied (os error 13)"
        );
        assert_eq!(
            ProbeError::io("/proc", denied()).to_string(),
            "could not read /proc: Permission denied (os error 13)"
        );
        assert_eq!(
            ProbeError::malformed("/proc/7/stat", "unexpected format").to_string(),
            "/proc/7/stat: unexpected format"
        );
        let neither = ProbeError::Neither {
            first: Box::new(ProbeError::malformed("/proc/7/smaps_rollup", "no Pss line")),
            fallback: Box::new(ProbeError::read("/proc/7/statm", denied())),
        };
        assert_eq!(
            neither.to_string(),
            "/proc/7/statm: Permission denied (os error 13) (and /proc/7/smaps_rollup: no Pss \
             line)"
        );
        assert_eq!(ProbeError::Gone(7).to_string(), "pid 7 is gone");
        assert_eq!(ProbeError::NoCgroup.to_string(), "empty cgroup file");
    }

    /// rustix's errors read as the standard library's, so a read through either says the
    /// same words.
    #[test]
    fn an_errno_reads_as_the_os_error_it_is() {
        let from_rustix = OsError::from(rustix::io::Errno::ACCESS);
        assert_eq!(from_rustix, OsError::from_raw(13));
        assert_eq!(from_rustix.to_string(), "Permission denied (os error 13)");
        // As the probe's sentences quoted rustix's own words before they were a type.
        assert_eq!(
            rustix::io::Errno::ACCESS.to_string(),
            from_rustix.to_string()
        );
        assert_eq!(from_rustix.kind(), io::ErrorKind::PermissionDenied);
    }
}
