//! The Linux probe: `/proc` for processes, identities and activity, `/proc/net/tcp{,6}` for the
//! socket tables, `/proc/<pid>/fd` links for socket ownership.
//!
//! Error policy: a process that vanishes between two reads is left out (ENOENT/ESRCH mean
//! gone); any other failure is carried to the caller as text in the field it spoiled.

use std::collections::HashMap;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::procfs::{self as parse, TcpRow};
use super::{
    ActivitySample, Identity, IdentityRead, Pid, Probe, ProbeError, ProcessDetails, ProcessInfo,
    Socket, SocketTable,
};
use super::{Counters, ProcessList, UnreadableProcess};

pub struct LinuxProbe {
    ticks_per_second: u64,
    uid: u32,
    pid: Pid,
}

impl LinuxProbe {
    pub fn new() -> Self {
        Self {
            ticks_per_second: rustix::param::clock_ticks_per_second().max(1),
            uid: rustix::process::geteuid().as_raw(),
            pid: std::process::id(),
        }
    }

    /// The rows of `pids`, and the processes that exist but could not be read.
    fn read_rows(&self, pids: &[Pid], uptime: Option<f64>) -> ProcessList {
        let mut out = ProcessList::default();
        for &pid in pids {
            match self.read_process(pid, uptime) {
                Ok(Some(info)) => out.processes.push(info),
                Ok(None) => {}
                Err(error) => out.unreadable.push(UnreadableProcess {
                    pid,
                    uid: fs::metadata(format!("/proc/{pid}"))
                        .ok()
                        .map(|m| std::os::unix::fs::MetadataExt::uid(&m)),
                    error,
                }),
            }
        }
        out
    }

    /// One row: `Ok(None)` when the process is gone, `Err` when it exists but cannot be read.
    fn read_process(&self, pid: Pid, uptime: Option<f64>) -> Result<Option<ProcessInfo>, String> {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let read = |name: &str| match read_small(&dir.join(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if is_gone(&e) => Ok(None),
            Err(e) => Err(format!("{}/{name}: {e}", dir.display())),
        };
        let Some(stat_bytes) = read("stat")? else {
            return Ok(None);
        };
        let (comm, stat) = parse::parse_stat(&stat_bytes)
            .ok_or_else(|| format!("{}/stat: unexpected format", dir.display()))?;
        // The folder's owner is the process's effective uid, one cheap stat away. Only when it
        // is not ours is the (costly) status read for the real uid: a non-dumpable process of
        // ours shows a root-owned folder.
        let owner = match fs::metadata(&dir) {
            Ok(m) => std::os::unix::fs::MetadataExt::uid(&m),
            Err(e) if is_gone(&e) => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        let uid = if owner == self.uid {
            owner
        } else {
            let Some(status) = read("status")? else {
                return Ok(None);
            };
            parse::parse_status_uid(&status)
                .ok_or_else(|| format!("{}/status: no Uid line", dir.display()))?
        };
        // Unreadable argv (a hidepid mount) only means "never a candidate".
        let argv = match read("cmdline") {
            Ok(Some(bytes)) => parse::parse_cmdline(&bytes),
            Ok(None) => return Ok(None),
            Err(_) => Vec::new(),
        };
        let age_seconds = uptime.map(|up| {
            let started = stat.start_time as f64 / self.ticks_per_second as f64;
            (up - started).max(0.0) as u64
        });
        Ok(Some(ProcessInfo {
            identity: Identity {
                pid,
                start_time: stat.start_time,
            },
            ppid: stat.ppid,
            uid,
            session: stat.session,
            tty_nr: stat.tty_nr,
            comm,
            argv,
            zombie: stat.state == b'Z' || stat.state == b'X',
            age_seconds,
        }))
    }

    fn read_tcp_tables(&self) -> Result<Vec<TcpRow>, ProbeError> {
        let mut rows = Vec::new();
        for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = match fs::read_to_string(path) {
                Ok(text) => text,
                // A kernel built without IPv6 has no tcp6 table; that is "no IPv6 sockets".
                Err(e) if e.kind() == ErrorKind::NotFound && path.ends_with('6') => continue,
                Err(source) => {
                    return Err(ProbeError::Io {
                        path: path.into(),
                        source,
                    })
                }
            };
            let parsed = parse::parse_tcp_table(&text).map_err(|what| ProbeError::Parse {
                path: path.into(),
                what,
            })?;
            rows.extend(parsed);
        }
        Ok(rows)
    }

    /// Socket inode → owner pids over the given pids, and the pids whose fd table was
    /// unreadable or whose sockets live in another network namespace (`blind`). The walk of
    /// `/proc/<pid>/fd`, which is most of a scan's cost, is spread over the machine's cores.
    fn socket_owners(&self, pids: &[Pid], out: &mut SocketTable) -> HashMap<u64, Vec<Pid>> {
        let own_ns = fs::read_link("/proc/self/ns/net").ok();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let chunk = pids.len().div_ceil(threads).max(64);
        let parts: Vec<FdWalk> = std::thread::scope(|scope| {
            let handles: Vec<_> = pids
                .chunks(chunk)
                .map(|part| scope.spawn(|| walk_fds(part, own_ns.as_deref())))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("an fd walk never panics"))
                .collect()
        });
        let mut owners: HashMap<u64, Vec<Pid>> = HashMap::new();
        for part in parts {
            for (inode, pid) in part.sockets {
                owners.entry(inode).or_default().push(pid);
            }
            out.unreadable.extend(part.unreadable);
            out.blind.extend(part.blind);
        }
        for list in owners.values_mut() {
            list.sort_unstable();
            list.dedup();
        }
        owners
    }

    /// CPU ns summed over the threads of `pid`, and its storage I/O bytes.
    /// Precise CPU ns over the live threads (`task/*/schedstat`), coarse CPU over all of them
    /// (`stat` utime + stime), and storage I/O bytes. Any failed read is an error, never 0.
    fn counters(&self, pid: Pid) -> Option<Result<Counters, String>> {
        let stat_path = format!("/proc/{pid}/stat");
        let ticks = match read_small(Path::new(&stat_path)) {
            Ok(bytes) => match parse::parse_stat(&bytes) {
                Some((_, stat)) => stat.cpu_ticks,
                None => return Some(Err(format!("{stat_path}: unexpected format"))),
            },
            Err(e) if is_gone(&e) => return None,
            Err(e) => return Some(Err(format!("{stat_path}: {e}"))),
        };
        let task_dir = format!("/proc/{pid}/task");
        let tasks = match fs::read_dir(&task_dir) {
            Ok(tasks) => tasks,
            Err(e) if is_gone(&e) => return None,
            Err(e) => return Some(Err(format!("{task_dir}: {e}"))),
        };
        let mut threads = Vec::new();
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<u32>().ok())
            else {
                continue;
            };
            let path = task.path().join("schedstat");
            match read_small(&path).map(|b| parse::parse_schedstat(&b)) {
                Ok(Some(ns)) => threads.push((tid, ns)),
                Ok(None) => return Some(Err(format!("{}: unexpected format", path.display()))),
                // A thread that ended mid-walk: the coarse total still holds its time.
                Err(e) if is_gone(&e) => {}
                Err(e) => return Some(Err(format!("{}: {e}", path.display()))),
            }
        }
        let io_path = format!("/proc/{pid}/io");
        let io = match read_small(Path::new(&io_path)) {
            Ok(bytes) => parse::parse_io_bytes(&bytes),
            Err(e) if is_gone(&e) => return None,
            Err(e) => return Some(Err(format!("{io_path}: {e}"))),
        };
        threads.sort_unstable();
        let ns_per_tick = 1_000_000_000 / self.ticks_per_second;
        Some(
            io.map(|io_bytes| Counters {
                per_thread_ns: Some(threads),
                cpu_total_ns: ticks.saturating_mul(ns_per_tick),
                io_bytes,
            })
            .ok_or_else(|| format!("{io_path}: unexpected format")),
        )
    }
}

/// Reads a small `/proc` file whole. `fs::read` sizes its buffer from the file's length, which
/// `/proc` reports as 0, and then grows it from 32 bytes in many reads; one 4 KiB read (and one
/// more to see the end) is what these files need.
fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = fs::File::open(path)?;
    let mut out = Vec::with_capacity(4096);
    let mut buf = [0u8; 4096];
    loop {
        let n = file.read(&mut buf)?;
        out.extend_from_slice(&buf[..n]);
        // These files are generated whole on the first read: a short read is the end, which
        // saves the extra read that would only return 0.
        if n < buf.len() {
            return Ok(out);
        }
    }
}

/// What one thread's share of the fd walk found.
#[derive(Default)]
struct FdWalk {
    sockets: Vec<(u64, Pid)>,
    unreadable: Vec<(Pid, String)>,
    blind: Vec<(Pid, String)>,
}

/// Walks `/proc/<pid>/fd` of `pids`, reading each link relative to the open fd folder.
fn walk_fds(pids: &[Pid], own_ns: Option<&Path>) -> FdWalk {
    let mut found = FdWalk::default();
    let mut sockets = Vec::new();
    for &pid in pids {
        let dir = format!("/proc/{pid}/fd");
        sockets.clear();
        match walk_one(pid, &dir, &mut sockets) {
            Ok(()) => {}
            Err(e) if is_gone(&e) => continue,
            Err(e) => found.unreadable.push((pid, format!("{dir}: {e}"))),
        }
        if sockets.is_empty() {
            continue;
        }
        // Only a process that holds sockets needs its network namespace checked.
        let ns_path = format!("/proc/{pid}/ns/net");
        match (fs::read_link(&ns_path), own_ns) {
            (Ok(ns), Some(own)) if ns != own => {
                let why = format!(
                    "its sockets are in another network namespace ({})",
                    ns.display()
                );
                found.blind.push((pid, why));
            }
            (Ok(_), Some(_)) => found.sockets.append(&mut sockets),
            (Err(e), _) if is_gone(&e) => {}
            (Err(e), _) => found.unreadable.push((pid, format!("{ns_path}: {e}"))),
            (Ok(_), None) => found
                .unreadable
                .push((pid, "Pier's own network namespace is unreadable".into())),
        }
    }
    found
}

/// One fd folder: `readlinkat` relative to the open folder (no path walk per fd). An fd closed
/// mid-walk is skipped; any other failure fails the whole folder — never "no sockets".
fn walk_one(pid: Pid, dir: &str, sockets: &mut Vec<(u64, Pid)>) -> std::io::Result<()> {
    use rustix::fs::{openat, readlinkat, Dir, Mode, OFlags, CWD};
    let fd = openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // `Dir::new` takes the fd as it is (`read_from` would open the folder a second time).
    let mut entries = Dir::new(fd)?;
    let mut names = Vec::new();
    while let Some(entry) = entries.read() {
        let entry = entry?;
        if entry.file_name().to_bytes().first() != Some(&b'.') {
            names.push(entry.file_name().to_owned());
        }
    }
    let fd = entries.fd()?;
    let mut buf = Vec::with_capacity(64);
    for name in names {
        match readlinkat(fd, name.as_c_str(), std::mem::take(&mut buf)) {
            Ok(target) => {
                if let Some(inode) = parse::parse_socket_link(target.as_bytes()) {
                    sockets.push((inode, pid));
                }
                buf = target.into_bytes_with_nul();
                buf.clear();
            }
            Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl Default for LinuxProbe {
    fn default() -> Self {
        Self::new()
    }
}

/// ENOENT and ESRCH: the process (or its fd) is gone, which is an answer, not a failure.
fn is_gone(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(3)
}

fn read_link_field(path: &Path) -> Result<PathBuf, String> {
    fs::read_link(path).map_err(|e| format!("{}: {e}", path.display()))
}

impl Probe for LinuxProbe {
    fn current_uid(&self) -> u32 {
        self.uid
    }

    fn own_pid(&self) -> Pid {
        self.pid
    }

    fn processes(&self) -> Result<ProcessList, ProbeError> {
        let uptime = read_small(Path::new("/proc/uptime"))
            .ok()
            .and_then(|b| parse::parse_uptime(&b));
        let entries = fs::read_dir("/proc").map_err(|source| ProbeError::Io {
            path: "/proc".into(),
            source,
        })?;
        let pids: Vec<Pid> = entries
            .flatten()
            .filter_map(|e| {
                std::str::from_utf8(e.file_name().as_bytes())
                    .ok()?
                    .parse()
                    .ok()
            })
            .collect();
        // Reading every row is most of a scan after the fd walk: spread it over the cores.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let chunk = pids.len().div_ceil(threads).max(128);
        let parts: Vec<ProcessList> = std::thread::scope(|scope| {
            let handles: Vec<_> = pids
                .chunks(chunk)
                .map(|part| scope.spawn(move || self.read_rows(part, uptime)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("reading rows never panics"))
                .collect()
        });
        let mut out = ProcessList::default();
        for part in parts {
            out.processes.extend(part.processes);
            out.unreadable.extend(part.unreadable);
        }
        Ok(out)
    }

    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let exe = match fs::read_link(dir.join("exe")) {
            Ok(exe) => Ok(exe),
            Err(e) if is_gone(&e) && !dir.exists() => return None,
            Err(e) => Err(format!("{}/exe: {e}", dir.display())),
        };
        let cgroup = read_small(&dir.join("cgroup"))
            .map_err(|e| format!("{}/cgroup: {e}", dir.display()))
            .and_then(|b| parse::parse_cgroup(&b).ok_or_else(|| "empty cgroup file".to_owned()));
        Some(ProcessDetails {
            exe,
            cwd: read_link_field(&dir.join("cwd")),
            cgroup: Some(cgroup),
        })
    }

    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, String> {
        let path = format!("/proc/{pid}/environ");
        read_small(Path::new(&path))
            .map(|bytes| parse::parse_cmdline(&bytes))
            .map_err(|e| format!("{path}: {e}"))
    }

    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        let rows = self.read_tcp_tables()?;
        let mut table = SocketTable::default();
        let owners = self.socket_owners(owners_among, &mut table);
        table.sockets = rows
            .into_iter()
            .map(|row| Socket {
                local: row.local,
                remote: row.remote,
                state: row.state,
                owners: match row.inode {
                    0 => Vec::new(),
                    inode => owners.get(&inode).cloned().unwrap_or_default(),
                },
                queued: None,
            })
            .collect();
        Ok(table)
    }

    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        super::sample_counters(pids, window, |pid| self.counters(pid))
    }

    fn identity(&self, pid: Pid) -> IdentityRead {
        let dir = PathBuf::from(format!("/proc/{pid}"));
        let bytes = match read_small(&dir.join("stat")) {
            Ok(bytes) => bytes,
            Err(e) if is_gone(&e) => return IdentityRead::Gone,
            Err(e) => return IdentityRead::Unknown(format!("{}/stat: {e}", dir.display())),
        };
        let Some((_, stat)) = parse::parse_stat(&bytes) else {
            return IdentityRead::Unknown(format!("{}/stat: unexpected format", dir.display()));
        };
        if stat.state == b'Z' || stat.state == b'X' {
            return IdentityRead::Gone;
        }
        IdentityRead::Alive {
            identity: Identity {
                pid,
                start_time: stat.start_time,
            },
            exe: fs::read_link(dir.join("exe")).ok(),
        }
    }

    /// CLOCK_BOOTTIME: unlike `Instant`, it keeps counting while the machine sleeps, so a
    /// laptop that suspends between two checkpoints shows the time that really passed.
    fn now(&self) -> Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    }

    fn boot_id(&self) -> Option<String> {
        fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .ok()
            .map(|s| s.trim().to_owned())
    }
}
