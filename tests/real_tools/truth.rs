//! Ground truth, read from `/proc` and never from Pier: process trees by parent pid, working
//! folders, and TCP sockets (`/proc/net/tcp{,6}`) matched to a tree through its fd tables.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::common::Started;

/// One process row: identity, parent, and whether it is a zombie.
struct Row {
    who: Started,
    ppid: u32,
    zombie: bool,
}

fn row(pid: u32) -> Option<Row> {
    let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
    let (_, s) = pier_core::probe::procfs::parse_stat(&stat)?;
    Some(Row {
        who: Started {
            pid,
            start_time: s.start_time,
        },
        ppid: s.ppid,
        zombie: s.state == b'Z',
    })
}

fn rows() -> Vec<Row> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter_map(row)
        .collect()
}

/// The identity `pid` has now, if it runs.
pub fn identity(pid: u32) -> Option<Started> {
    row(pid).filter(|r| !r.zombie).map(|r| r.who)
}

/// Now, in the unit of a start time (clock ticks since boot, from `/proc/uptime`): a process
/// whose start time is later was born after this read.
pub fn now_ticks() -> u64 {
    let uptime = std::fs::read_to_string("/proc/uptime").expect("/proc/uptime is readable");
    let secs: f64 = uptime
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("/proc/uptime starts with the seconds since boot");
    (secs * rustix::param::clock_ticks_per_second() as f64) as u64
}

/// Whether this very process (pid and start time) still runs; a zombie does not.
pub fn runs(p: Started) -> bool {
    identity(p.pid) == Some(p)
}

/// Every live process: its identity and its parent pid.
pub fn table() -> Vec<(Started, u32)> {
    rows()
        .into_iter()
        .filter(|r| !r.zombie)
        .map(|r| (r.who, r.ppid))
        .collect()
}

/// `root` and every live descendant (walking parent pids), root first; empty when `root` is gone.
pub fn tree(root: Started) -> Vec<Started> {
    if !runs(root) {
        return Vec::new();
    }
    let all = rows();
    let mut children: HashMap<u32, Vec<Started>> = HashMap::new();
    for r in all.iter().filter(|r| !r.zombie) {
        children.entry(r.ppid).or_default().push(r.who);
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i].pid) {
            out.extend(kids.iter().copied());
        }
        i += 1;
    }
    out
}

/// The live children of `pid`.
pub fn children(pid: u32) -> Vec<Started> {
    rows()
        .into_iter()
        .filter(|r| r.ppid == pid && !r.zombie)
        .map(|r| r.who)
        .collect()
}

pub fn cwd(pid: u32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// `argv` of `pid`, joined with spaces (for messages only).
pub fn command(pid: u32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw)
        .trim_end_matches('\0')
        .replace('\0', " ")
}

/// Every live process working inside `dir` (other than this test).
pub fn working_in(dir: &Path) -> Vec<Started> {
    let me = std::process::id();
    rows()
        .into_iter()
        .filter(|r| !r.zombie && r.who.pid != me)
        .filter(|r| cwd(r.who.pid).is_some_and(|c| c.starts_with(dir)))
        .map(|r| r.who)
        .collect()
}

/// One TCP socket of the system's tables.
#[derive(Debug, Clone, Copy)]
pub struct Sock {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub listen: bool,
    pub established: bool,
    pub inode: u64,
}

/// `/proc/net/tcp{,6}`: addresses are the kernel's words in host byte order, as hex.
pub fn sockets() -> Vec<Sock> {
    let mut out = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let text = fs::read_to_string(file).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 {
                continue;
            }
            let (Some(local), Some(remote)) = (endpoint(f[1], v6), endpoint(f[2], v6)) else {
                continue;
            };
            out.push(Sock {
                local,
                remote,
                listen: f[3] == "0A",
                established: f[3] == "01",
                inode: f[9].parse().unwrap_or(0),
            });
        }
    }
    out
}

fn endpoint(hex: &str, v6: bool) -> Option<SocketAddr> {
    let (addr, port) = hex.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| u32::from_str_radix(addr.get(i * 8..i * 8 + 8)?, 16).ok();
    let ip = if v6 {
        let mut bytes = [0u8; 16];
        for i in 0..4 {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?.to_le_bytes());
        }
        IpAddr::V6(Ipv6Addr::from(bytes))
    } else {
        IpAddr::V4(Ipv4Addr::from(word(0)?.to_le_bytes()))
    };
    Some(SocketAddr::new(ip, port))
}

/// The socket inodes held open by `pids`.
pub fn socket_inodes(pids: &[Started]) -> HashSet<u64> {
    let mut out = HashSet::new();
    for p in pids {
        let Ok(dir) = fs::read_dir(format!("/proc/{}/fd", p.pid)) else {
            continue;
        };
        for link in dir.filter_map(|e| fs::read_link(e.ok()?.path()).ok()) {
            let link = link.to_string_lossy().into_owned();
            if let Some(n) = link
                .strip_prefix("socket:[")
                .and_then(|l| l.strip_suffix(']'))
            {
                out.extend(n.parse::<u64>().ok());
            }
        }
    }
    out
}

/// Every listening address held by a process of `pids`.
pub fn listeners(pids: &[Started]) -> BTreeSet<SocketAddr> {
    let inodes = socket_inodes(pids);
    sockets()
        .into_iter()
        .filter(|s| s.listen && inodes.contains(&s.inode))
        .map(|s| s.local)
        .collect()
}

/// Whether a listener on `listen` accepts a connection addressed to `to` (a wildcard serves
/// its family; `[::]` serves IPv4 too, as a dual-stack socket).
pub fn serves(listen: SocketAddr, to: SocketAddr) -> bool {
    let mapped = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    listen.port() == to.port()
        && (listen.ip() == to.ip()
            || mapped(listen.ip()) == mapped(to.ip())
            || listen.ip().is_unspecified()
                && (listen.is_ipv6() || to.is_ipv4() || mapped(to.ip()).is_ipv4()))
}

/// The client ends (local addresses) of the established connections from `client` to one of
/// `servers` listeners.
pub fn client_ends(client: &[Started], servers: &BTreeSet<SocketAddr>) -> BTreeSet<SocketAddr> {
    let inodes = socket_inodes(client);
    sockets()
        .into_iter()
        .filter(|s| s.established && inodes.contains(&s.inode))
        .filter(|s| servers.iter().any(|l| serves(*l, s.remote)))
        .map(|s| s.local)
        .collect()
}

/// Where a client on this machine reaches `listen` (a wildcard means its family's loopback).
pub fn reach(listen: SocketAddr) -> SocketAddr {
    match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, listen.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, listen.port()).into(),
        _ => listen,
    }
}

/// An address as Pier prints it (`127.0.0.1`, `::1`, maybe bracketed), parsed.
pub fn parse_ip(text: &str) -> Option<IpAddr> {
    text.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// What processes have used so far, summed: CPU (`utime + stime` of `/proc/<pid>/stat`, every
/// thread's, in ns at the clock tick's resolution), and the bytes and
/// calls of their read and write calls (`/proc/<pid>/io`: `rchar + wchar`, `syscr + syscw`) —
/// the counters of the idle clock, read here without Pier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Used {
    pub cpu_ns: u64,
    pub io_bytes: u64,
    pub calls: u64,
}

/// `pids`' counters now; a process that ended adds nothing.
pub fn used(pids: &[Started]) -> Used {
    use pier_core::probe::procfs::{parse_io_calls, parse_stat};
    let tick_ns = 1_000_000_000 / rustix::param::clock_ticks_per_second();
    let mut sum = Used::default();
    for p in pids.iter().filter(|p| runs(**p)) {
        let read = |file: &str| fs::read(format!("/proc/{}/{file}", p.pid)).unwrap_or_default();
        if let Some((_, stat)) = parse_stat(&read("stat")) {
            sum.cpu_ns += stat.cpu_ticks * tick_ns;
        }
        if let Some(io) = parse_io_calls(&read("io")) {
            sum.io_bytes += io.bytes;
            sum.calls += io.calls;
        }
    }
    sum
}
