//! The files a process holds locked or open for writing (`Probe::writes`): one pass over
//! `/proc/<pid>/fd`, and for each fd that names a path, its `/proc/<pid>/fdinfo/<fd>`.
//!
//! Why `fdinfo` and not `/proc/locks` alone: `/proc/locks` lists every lock on the machine by
//! device and inode, so pairing a lock with a path would take a `stat` of every open file of
//! every member. Since Linux 4.1 each fd's `fdinfo` carries, after its `flags:` line, the
//! `/proc/locks` lines of the locks taken through that very open file (`lock:`: `flock`, POSIX
//! and OFD locks, read or write; `fs/locks.c` `show_fd_locks`), so one small read per fd gives
//! both facts. On an older kernel locks are not shown there: a file held only locked, and open
//! read-only, would be missed (its writers are still seen).
//!
//! Bounds: the fd folder is listed with one `getdents` buffer at a time and at most
//! [`MAX_FDS`] entries; each `fdinfo` is one read of at most [`FDINFO_BYTES`] (its `flags:`
//! line is the second, and one `lock:` line is all that is needed). Only fds whose link is an
//! absolute path outside `/dev` are read further (sockets, pipes, anonymous inodes and devices
//! hold no file: see [`file_target`]), and only those locked or open for writing are `stat`ed,
//! to keep regular files that still have a name.
//!
//! A process that is gone holds nothing; an fd closed mid-walk is skipped; any other failure
//! fails the whole read — never an empty list.
//!
//! The survey has walked the same fd folder a moment before, reading every link for the
//! sockets ([`super::fds`]); it keeps, per process, the fds whose links named a path
//! ([`may_be_file`]), and [`read_fds`] reads only those again (link and `fdinfo`), so a member
//! holding only devices, sockets and pipes — most servers — costs no read here at all.

use std::ffi::{CStr, CString, OsStr};
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use rustix::fd::OwnedFd;
use rustix::fs::{
    openat, readlinkat, statx, AtFlags, FileType, Mode, OFlags, RawDir, StatxFlags, CWD,
};
use rustix::io::Errno;

use super::fds::Walker;
use super::is_gone;
use crate::probe::{Hold, Pid, ProbeError, Written};

/// The `getdents` buffer, in bytes (as the socket walk's).
const DIRENTS: usize = 32 * 1024;
/// The most fds read of one process: past it the read fails rather than answer in part.
pub(super) const MAX_FDS: usize = 1 << 16;
/// One `fdinfo` read: the lines Pier needs come first.
const FDINFO_BYTES: usize = 4096;

/// What one `fdinfo` says that matters here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FdInfo {
    /// Opened `O_WRONLY` or `O_RDWR`.
    pub writable: bool,
    /// At least one `lock:` line.
    pub locked: bool,
    /// The `ino:` line (Linux ≥ 5.14), to tell that the fd still names the file `stat`ed.
    pub ino: Option<u64>,
}

impl FdInfo {
    /// How the file is held, when it is held in a way that counts.
    fn hold(self) -> Option<Hold> {
        match (self.locked, self.writable) {
            (true, _) => Some(Hold::Lock),
            (false, true) => Some(Hold::Write),
            (false, false) => None,
        }
    }
}

/// Parses an `fdinfo` file (`pos:`, `flags:` in octal, `mnt_id:`, `ino:`, `lock:` lines). `None`
/// when it has no `flags:` line: then nothing can be said of the fd.
pub(crate) fn parse_fdinfo(text: &[u8]) -> Option<FdInfo> {
    let mut flags = None;
    let mut locked = false;
    let mut ino = None;
    for line in text.split(|&b| b == b'\n') {
        let value = |key: &[u8]| {
            let rest = line.strip_prefix(key)?;
            std::str::from_utf8(rest).ok().map(str::trim)
        };
        if let Some(v) = value(b"flags:") {
            flags = u32::from_str_radix(v, 8).ok();
        } else if let Some(v) = value(b"ino:") {
            ino = v.parse().ok();
        } else if line.starts_with(b"lock:") {
            locked = true;
        }
    }
    // O_ACCMODE: 1 is O_WRONLY, 2 O_RDWR; an O_PATH fd has 0 and reads nothing.
    let accmode = flags? & 0o3;
    Some(FdInfo {
        writable: accmode == 1 || accmode == 2,
        locked,
        ino,
    })
}

/// `pid`'s regular files held locked or open for writing (see the module's paragraph).
pub(super) fn read(pid: Pid) -> Result<Vec<Written>, ProbeError> {
    let Some(fd_dir) = open_fd_dir(pid)? else {
        return Ok(Vec::new());
    };
    let mut infos = Infos::new(pid);
    let mut dirents = vec![MaybeUninit::<u8>::uninit(); DIRENTS];
    let mut entries = RawDir::new(&fd_dir, &mut dirents);
    let mut out = Vec::new();
    let mut seen = 0usize;
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) if gone(e) => return Ok(Vec::new()),
            Err(e) => return Err(ProbeError::read(format!("/proc/{pid}/fd"), e)),
        };
        let name = entry.file_name();
        let Some(fd) = fd_number(name) else {
            continue;
        };
        seen += 1;
        if seen > MAX_FDS {
            return Err(ProbeError::malformed(
                format!("/proc/{pid}/fd"),
                format!("more than {MAX_FDS} open files, not all read"),
            ));
        }
        match infos.one(fd, name, &fd_dir)? {
            Fd::Held(written) => out.push(written),
            Fd::Nothing => {}
            Fd::ProcessGone => return Ok(Vec::new()),
        }
    }
    Ok(out)
}

/// [`read`], looking only at `fds`: those whose links named a path when the survey walked
/// this same process (`Probe::writes_of`). Each link is read again, so an fd closed or
/// reused since answers for what it is now; an fd opened since the survey is not seen, as
/// one opened just after a whole walk would not be.
pub(super) fn read_fds(pid: Pid, fds: &[u32]) -> Result<Vec<Written>, ProbeError> {
    if fds.is_empty() {
        return Ok(Vec::new());
    }
    let Some(fd_dir) = open_fd_dir(pid)? else {
        return Ok(Vec::new());
    };
    let mut infos = Infos::new(pid);
    let mut out = Vec::new();
    for &fd in fds.iter().take(MAX_FDS) {
        let name = CString::new(fd.to_string()).expect("a number has no NUL");
        match infos.one(fd, &name, &fd_dir)? {
            Fd::Held(written) => out.push(written),
            Fd::Nothing => {}
            Fd::ProcessGone => return Ok(Vec::new()),
        }
    }
    Ok(out)
}

/// Whether an fd whose link reads `link` may hold a file: `false` for `socket:[…]`,
/// `pipe:[…]`, `anon_inode:…`, and for a device (under `/dev`, whose only regular files are in
/// `/dev/shm`: every process holds `/dev/null` or a terminal as its standard streams, and
/// reading their `fdinfo` would double a scan's cost for nothing).
pub(super) fn may_be_file(link: &[u8]) -> bool {
    let device = link.starts_with(b"/dev/") && !link.starts_with(b"/dev/shm/");
    link.first() == Some(&b'/') && !device
}

/// What one fd turned out to be.
enum Fd {
    Held(Written),
    /// Nothing that counts, or closed mid-read.
    Nothing,
    ProcessGone,
}

/// `/proc/<pid>/fd`, open; `None` when the process is gone.
fn open_fd_dir(pid: Pid) -> Result<Option<OwnedFd>, ProbeError> {
    match Walker::open(pid) {
        Ok(fd_dir) => Ok(Some(fd_dir)),
        Err(e) if is_gone(&e) => Ok(None),
        Err(e) => Err(ProbeError::read(format!("/proc/{pid}/fd"), e)),
    }
}

/// One process's `fdinfo` folder, opened at the first fd that needs it (most processes hold
/// no file but devices), and the buffer its files are read into.
struct Infos {
    pid: Pid,
    dir: Option<OwnedFd>,
    info: [u8; FDINFO_BYTES],
}

impl Infos {
    fn new(pid: Pid) -> Self {
        Self {
            pid,
            dir: None,
            info: [0; FDINFO_BYTES],
        }
    }

    /// The fd `fd`, named `name` in `fd_dir` (the process's open fd folder).
    fn one(&mut self, fd: u32, name: &CStr, fd_dir: &OwnedFd) -> Result<Fd, ProbeError> {
        let pid = self.pid;
        let at_fd = |e| ProbeError::read(format!("/proc/{pid}/fd/{fd}"), e);
        let Some(target) = file_target(name, fd_dir).map_err(at_fd)? else {
            return Ok(Fd::Nothing);
        };
        let dir = match &self.dir {
            Some(dir) => dir,
            None => match openat(
                CWD,
                format!("/proc/{pid}/fdinfo"),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(dir) => self.dir.insert(dir),
                Err(e) if gone(e) => return Ok(Fd::ProcessGone),
                Err(e) => return Err(ProbeError::read(format!("/proc/{pid}/fdinfo"), e)),
            },
        };
        let held = held(fd, name, target, fd_dir, dir, &mut self.info).map_err(at_fd)?;
        Ok(held.map_or(Fd::Nothing, Fd::Held))
    }
}

/// The path an fd's link names, when it may be a file ([`may_be_file`]); `None` too for an fd
/// closed mid-read.
fn file_target(name: &CStr, fd_dir: &impl rustix::fd::AsFd) -> Result<Option<Vec<u8>>, Errno> {
    let target = match readlinkat(fd_dir, name, Vec::new()) {
        Ok(target) => target.into_bytes(),
        Err(e) if gone(e) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(may_be_file(&target).then_some(target))
}

/// One fd whose link names `target`: `Some` when it holds a regular, still named file locked
/// or open for writing; `None` for anything else, and for an fd closed (or reused) mid-read.
fn held(
    fd: u32,
    name: &CStr,
    target: Vec<u8>,
    fd_dir: &impl rustix::fd::AsFd,
    info_dir: &impl rustix::fd::AsFd,
    info: &mut [u8; FDINFO_BYTES],
) -> Result<Option<Written>, Errno> {
    let file = match openat(
        info_dir,
        name,
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(file) => file,
        Err(e) if gone(e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let n = rustix::io::read(&file, &mut info[..])?;
    // A live fd's fdinfo always starts with `pos:` and `flags:`.
    let Some(parsed) = parse_fdinfo(&info[..n]) else {
        return Err(Errno::INVAL);
    };
    let Some(how) = parsed.hold() else {
        return Ok(None);
    };
    // The attributes the kernel already holds (`AT_STATX_DONT_SYNC`): a network or FUSE file
    // system is not asked again, so a hung server cannot hold the scan.
    let wanted = StatxFlags::TYPE | StatxFlags::NLINK | StatxFlags::INO;
    let st = match statx(fd_dir, name, AtFlags::STATX_DONT_SYNC, wanted) {
        Ok(st) => st,
        Err(e) if gone(e) => return Ok(None),
        Err(e) => return Err(e),
    };
    // A file that is no longer in any folder (its link count 0) is no one's data; a device,
    // a folder or a FIFO is not a file.
    let regular = FileType::from_raw_mode(st.stx_mode.into()) == FileType::RegularFile;
    if !regular || st.stx_nlink == 0 {
        return Ok(None);
    }
    // The fd was closed and reused between the reads: another file's flags.
    if parsed.ino.is_some_and(|ino| ino != st.stx_ino) {
        return Ok(None);
    }
    Ok(Some(Written {
        fd,
        path: PathBuf::from(OsStr::from_bytes(&target)),
        how,
    }))
}

/// An entry of the fd folder as its number (`.` and `..` are not fds).
pub(super) fn fd_number(name: &CStr) -> Option<u32> {
    std::str::from_utf8(name.to_bytes()).ok()?.parse().ok()
}

/// ENOENT and ESRCH: the fd or the process is gone.
fn gone(e: Errno) -> bool {
    e == Errno::NOENT || e == Errno::SRCH
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};

    /// A python3 child running `code` in `dir`, its stdout to `stdout` (or nothing), once it
    /// said "ready" on stderr; it ends when its stdin closes (the `Child` is dropped after
    /// `kill`).
    fn python(dir: &Path, code: &str, stdout: Option<&Path>) -> Child {
        let out = match stdout {
            Some(path) => Stdio::from(std::fs::File::create(path).unwrap()),
            None => Stdio::null(),
        };
        let script = format!(
            "import fcntl, os, sys\n{code}\nsys.stderr.write('ready\\n'); sys.stderr.flush()\nsys.stdin.read()\n"
        );
        let mut child = Command::new("python3")
            .args(["-c", &script])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n", "the child failed to start");
        child
    }

    fn end(mut child: Child) {
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// What `writes` says of the files under `dir` (the interpreter's own are elsewhere).
    fn under(pid: Pid, dir: &Path) -> Vec<(u32, PathBuf, Hold)> {
        let mut found: Vec<_> = read(pid)
            .expect("the child's fds are readable")
            .into_iter()
            .filter(|w| w.path.starts_with(dir))
            .map(|w| (w.fd, w.path, w.how))
            .collect();
        found.sort_by_key(|w| w.0);
        found
    }

    #[test]
    fn a_file_open_for_reading_and_writing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data.db");
        std::fs::write(&data, b"x").unwrap();
        std::fs::write(dir.path().join("read.txt"), b"x").unwrap();
        let child = python(
            dir.path(),
            "f = open('data.db', 'r+b')\ng = open('read.txt', 'rb')\nn = open('/dev/null', 'wb')",
            None,
        );
        let all = read(child.id()).unwrap();
        assert!(
            all.iter().all(|w| !w.path.starts_with("/dev")),
            "devices are no files: {all:?}"
        );
        let found = under(child.id(), dir.path());
        end(child);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((&found[0].1, found[0].2), (&data, Hold::Write));
        assert!(found[0].0 > 2);
    }

    #[test]
    fn a_lock_is_seen_on_a_file_open_only_for_reading_and_on_one_open_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["LOCK", "posix.db"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let child = python(
            dir.path(),
            "f = open('LOCK', 'rb')\nfcntl.flock(f, fcntl.LOCK_SH)\n\
             g = open('posix.db', 'r+b')\nfcntl.lockf(g, fcntl.LOCK_EX)",
            None,
        );
        let found = under(child.id(), dir.path());
        end(child);
        let holds: Vec<_> = found.iter().map(|(_, p, h)| (p.clone(), *h)).collect();
        assert_eq!(
            holds,
            vec![
                (dir.path().join("LOCK"), Hold::Lock),
                (dir.path().join("posix.db"), Hold::Lock)
            ]
        );
    }

    #[test]
    fn a_redirected_stdout_is_reported_as_fd_1_and_a_deleted_file_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("dev.log");
        let child = python(
            dir.path(),
            "t = open('scratch', 'wb')\nos.unlink('scratch')",
            Some(&log),
        );
        let found = under(child.id(), dir.path());
        end(child);
        assert_eq!(found, vec![(1, log, Hold::Write)]);
    }

    #[test]
    fn a_process_that_is_gone_holds_nothing() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(read(pid), Ok(Vec::new()));
    }

    /// A python3 child in `dir` that runs each line [`Stepped::run`] sends it.
    struct Stepped {
        child: Child,
        replies: BufReader<std::process::ChildStderr>,
    }

    impl Stepped {
        fn start(dir: &Path) -> Self {
            let script = "import os, socket, sys\ng = {'os': os, 'socket': socket}\n\
                          while True:\n    line = sys.stdin.readline()\n    \
                          if not line: break\n    exec(line, g)\n    \
                          sys.stderr.write('ok\\n'); sys.stderr.flush()\n";
            let mut child = Command::new("python3")
                .args(["-c", script])
                .current_dir(dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("python3 runs");
            let replies = BufReader::new(child.stderr.take().unwrap());
            Self { child, replies }
        }

        /// Runs one line of Python in the child, once it says it ran it.
        fn run(&mut self, line: &str) {
            use std::io::Write;
            let stdin = self.child.stdin.as_mut().unwrap();
            writeln!(stdin, "{line}").unwrap();
            stdin.flush().unwrap();
            let mut reply = String::new();
            self.replies.read_line(&mut reply).unwrap();
            assert_eq!(reply, "ok\n", "the child failed to run {line:?}");
        }
    }

    /// The paths and holds of `read` under `dir`.
    fn held_under(read: Result<Vec<Written>, ProbeError>, dir: &Path) -> Vec<(PathBuf, Hold)> {
        let mut found: Vec<_> = read
            .expect("the child's fds are readable")
            .into_iter()
            .filter(|w| w.path.starts_with(dir))
            .map(|w| (w.path, w.how))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// The survey keeps the fds whose links named a path; `writes_of` reads those again, and
    /// only for the process the survey walked: another identity on the pid, or a survey that
    /// did not walk it, gets the whole walk.
    #[test]
    fn after_a_survey_only_its_path_fds_are_read_again_and_only_for_that_process() {
        use crate::probe::{Identity, Probe};
        let dir = tempfile::tempdir().unwrap();
        for name in ["data.db", "later.db"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let (data, later) = (dir.path().join("data.db"), dir.path().join("later.db"));
        let mut child = Stepped::start(dir.path());
        child.run("f = open('data.db', 'r+b')");
        let pid = child.child.id();
        let probe = super::super::LinuxProbe::new();
        probe.survey_own(&|_| false).expect("the survey reads");
        let start_time = super::super::rows::stat(pid).unwrap().unwrap().1.start_time;
        let me = Identity { pid, start_time };

        let data_fd = read(pid)
            .unwrap()
            .iter()
            .find(|w| w.path == data)
            .unwrap()
            .fd;
        let kept = probe.surveyed.lock().unwrap()[&pid].fds.clone();
        assert_eq!(
            kept,
            vec![data_fd],
            "only the file: not its pipes nor /dev/null"
        );
        assert_eq!(
            held_under(probe.writes_of(me), dir.path()),
            vec![(data.clone(), Hold::Write)]
        );

        // The fd now holds a socket: its link, read again, says so.
        child.run("s = socket.socket(); os.dup2(s.fileno(), f.fileno())");
        assert_eq!(held_under(probe.writes_of(me), dir.path()), vec![]);

        child.run("h = open('later.db', 'r+b')");
        assert_eq!(
            held_under(probe.writes_of(me), dir.path()),
            vec![],
            "only the fds the survey saw are read again"
        );
        let other = Identity {
            pid,
            start_time: start_time + 1,
        };
        assert_eq!(
            held_under(probe.writes_of(other), dir.path()),
            vec![(later.clone(), Hold::Write)],
            "another identity: every fd is read"
        );
        probe.survey_own(&|_| false).expect("the survey reads");
        assert_eq!(
            held_under(probe.writes_of(me), dir.path()),
            vec![(later, Hold::Write)],
            "the next survey's fds"
        );
        end(child.child);
    }

    #[test]
    fn only_a_path_outside_dev_may_be_a_file() {
        assert!(may_be_file(b"/home/u/shop/data.db"));
        assert!(
            may_be_file(b"/dev/shm/sem.lock"),
            "shared memory files are files"
        );
        for no in [
            &b"/dev/null"[..],
            b"/dev/pts/3",
            b"socket:[123]",
            b"pipe:[123]",
            b"anon_inode:[eventfd]",
            b"",
        ] {
            assert!(!may_be_file(no), "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn fdinfo_gives_the_access_mode_and_the_locks() {
        let rdwr = b"pos:\t0\nflags:\t02100002\nmnt_id:\t27\nino:\t10010673\n";
        assert_eq!(
            parse_fdinfo(rdwr),
            Some(FdInfo {
                writable: true,
                locked: false,
                ino: Some(10010673)
            })
        );
        let wronly_append = b"pos:\t9\nflags:\t0102001\nmnt_id:\t27\n";
        assert!(parse_fdinfo(wronly_append).unwrap().writable);
        let locked_read =
            b"pos:\t0\nflags:\t02100000\nmnt_id:\t27\nino:\t5\nlock:\t1: FLOCK  ADVISORY  READ 1 fe:00:5 0 EOF\n";
        let parsed = parse_fdinfo(locked_read).unwrap();
        assert!(!parsed.writable && parsed.locked);
        assert_eq!(parsed.hold(), Some(Hold::Lock));
        // O_PATH (010000000) with O_RDONLY: nothing.
        let path_only = b"pos:\t0\nflags:\t012000000\nmnt_id:\t27\n";
        assert_eq!(parse_fdinfo(path_only).unwrap().hold(), None);
        assert_eq!(parse_fdinfo(b"pos:\t0\n"), None, "no flags line");
    }
}
