//! Pure parsers for the Linux `/proc` formats Pier reads. No I/O here: each function takes the
//! bytes of one file and returns what it means, so every layout (and every hostile variant of
//! it) is unit-tested without a kernel.
//!
//! Why not the `procfs` crate: Pier needs argv and paths as raw bytes and the raw `starttime`
//! tick count, reads only a handful of fields on the hot path, and wants each failure per field.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::{Pid, TcpState};

/// The fields of `/proc/<pid>/stat` Pier uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Field 3, the state letter: `b'Z'` (zombie) or `b'X'` (dead) counts as gone. `b'X'`
    /// too for a process already released ([`parse_stat`]), whatever letter it printed.
    pub state: u8,
    /// Field 4: the parent's pid; 0 for a released process.
    pub ppid: u32,
    /// Field 6: the session id (the session leader's pid); 0 in none (a released process).
    pub session: u32,
    /// Field 7: the controlling terminal's device number; 0 when there is none.
    pub tty_nr: u32,
    /// utime + stime in clock ticks: every thread's CPU time, ended threads included.
    pub cpu_ticks: u64,
    /// Fields 16 and 17, cutime + cstime in clock ticks: the CPU time of the children it
    /// has waited for (and of theirs), so a short-lived child that came and went still counts.
    pub child_cpu_ticks: u64,
    /// Field 22: when the process started, in clock ticks since boot; the identity's start
    /// time.
    pub start_time: u64,
}

/// Parses `/proc/<pid>/stat`, returning `(comm, fields)`.
///
/// `comm` may hold spaces, `(` and `)` (a process can name itself `a) R 1 (b`), so the split is
/// after the **last** `)`: everything between the first `(` and the last `)` is the name.
pub fn parse_stat(bytes: &[u8]) -> Option<(String, Stat)> {
    let open = bytes.iter().position(|&b| b == b'(')?;
    let close = bytes.iter().rposition(|&b| b == b')')?;
    if close < open {
        return None;
    }
    let comm = String::from_utf8_lossy(&bytes[open + 1..close]).into_owned();
    let rest = std::str::from_utf8(bytes.get(close + 1..)?).ok()?;
    // Fields after comm, numbered from 3 (state) as in proc(5); only the first 22 are
    // needed, split without a list (a survey parses one line per process of the user's).
    let mut fields = [""; 20];
    let mut words = rest.split_ascii_whitespace();
    for slot in &mut fields {
        *slot = words.next()?;
    }
    let field = |n: usize| fields.get(n - 3).copied();
    let letter = *field(3)?.as_bytes().first()?;
    // A session of -1 means the process is already released: the kernel reads its state
    // letter first, then cannot lock it for the rest, and prints its defaults (parent 0,
    // group and session -1); a live process in no visible session prints 0. So it is dead,
    // whatever letter it printed. Found by the 10,000-round soak beside other runs: read as
    // "unexpected format", a neighbour's ending process was unreadable, and every resource on
    // the machine read red for a moment.
    let (state, session) = match field(6)?.parse::<i64>().ok()? {
        -1 => (b'X', 0),
        s => (letter, u32::try_from(s).ok()?),
    };
    let stat = Stat {
        state,
        ppid: field(4)?.parse().ok()?,
        session,
        // tty_nr is printed as a signed int; a device number is never negative in practice.
        tty_nr: field(7)?.parse::<i64>().ok()? as u32,
        cpu_ticks: field(14)?
            .parse::<u64>()
            .ok()?
            .saturating_add(field(15)?.parse().ok()?),
        child_cpu_ticks: field(16)?
            .parse::<u64>()
            .ok()?
            .saturating_add(field(17)?.parse().ok()?),
        start_time: field(22)?.parse().ok()?,
    };
    Some((comm, stat))
}

/// Splits `/proc/<pid>/cmdline` into argv. The kernel separates arguments with NUL and ends
/// with one; a process that rewrote its title may leave no trailing NUL.
pub fn parse_cmdline(bytes: &[u8]) -> Vec<Vec<u8>> {
    let body = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if body.is_empty() {
        return Vec::new();
    }
    body.split(|&b| b == 0).map(<[u8]>::to_vec).collect()
}

/// The pids in `/proc/<pid>/task/<tid>/children`: space-separated, ending in a space. `None`
/// when anything else is there.
pub fn parse_children(bytes: &[u8]) -> Option<Vec<Pid>> {
    std::str::from_utf8(bytes)
        .ok()?
        .split_ascii_whitespace()
        .map(|pid| pid.parse().ok())
        .collect()
}

/// The inode from a `/proc/<pid>/fd/N` link target of the form `socket:[12345]`.
pub fn parse_socket_link(target: &[u8]) -> Option<u64> {
    let inner = target.strip_prefix(b"socket:[")?.strip_suffix(b"]")?;
    std::str::from_utf8(inner).ok()?.parse().ok()
}

/// The first field of `/proc/<pid>/schedstat` (or a task's): time spent on a CPU, in ns.
pub fn parse_schedstat(bytes: &[u8]) -> Option<u64> {
    std::str::from_utf8(bytes)
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `read_bytes + write_bytes` from `/proc/<pid>/io`: bytes that reached the storage layer.
pub fn parse_io_bytes(bytes: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].trim().parse().ok()
    };
    Some(value("read_bytes:")?.saturating_add(value("write_bytes:")?))
}

/// What `/proc/<pid>/io` counts of a process's read and write calls, whatever they reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoCalls {
    /// `rchar + wchar`: bytes its read and write calls moved (files, pipes, terminals, and
    /// sockets read or written with read/write; not `recvfrom`/`sendto`/`sendfile`'s).
    pub bytes: u64,
    /// `syscr + syscw`: its read and write calls.
    pub calls: u64,
}

/// `rchar + wchar` and `syscr + syscw` from `/proc/<pid>/io`; `None` when one is missing.
pub fn parse_io_calls(bytes: &[u8]) -> Option<IoCalls> {
    let text = std::str::from_utf8(bytes).ok()?;
    let value = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].trim().parse().ok()
    };
    Some(IoCalls {
        bytes: value("rchar:")?.saturating_add(value("wchar:")?),
        calls: value("syscr:")?.saturating_add(value("syscw:")?),
    })
}

/// The cgroup path of a process from `/proc/<pid>/cgroup`: the unified (`0::`) line when there
/// is one, else the `name=systemd` line (where systemd puts its units on cgroup v1).
pub fn parse_cgroup(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let path_of = |line: &str| line.splitn(3, ':').nth(2).map(str::to_owned);
    let lines: Vec<&str> = text.lines().collect();
    let systemd = lines.iter().find(|l| l.contains(":name=systemd:"));
    let unified = lines.iter().find(|l| l.starts_with("0::"));
    match (systemd, unified) {
        (Some(s), _) if path_of(s).is_some_and(|p| p != "/") => path_of(s),
        (_, Some(u)) => path_of(u),
        (Some(s), None) => path_of(s),
        (None, None) => None,
    }
}

/// Where the CPU time of the cgroup `is_its` accepts is counted, from a process's
/// `/proc/<pid>/cgroup`, in the order to try. On each line, the path is cut just after its
/// shortest prefix `is_its` accepts (a container's own cgroup, whichever child of it the
/// process sits in: Docker-in-Docker's `init`, systemd's `init.scope`), and a line with no such
/// prefix is not this cgroup's. A cgroup v1 hierarchy holding `cpuacct` comes first
/// (`cpuacct.usage`, ns, under the hierarchy's mount, named as the line names its
/// controllers), then the unified hierarchy (`cpu.stat`'s `usage_usec`, µs), at
/// `/sys/fs/cgroup` (v2 alone) or `/sys/fs/cgroup/unified` (beside v1).
pub fn cgroup_cpu_files(
    bytes: &[u8],
    is_its: &dyn Fn(&str) -> bool,
) -> Vec<(std::path::PathBuf, CpuCounter)> {
    let text = String::from_utf8_lossy(bytes);
    let mut v1 = Vec::new();
    let mut v2 = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        // The kernel writes an absolute path, and controllers as lowercase names.
        let named =
            |c: &str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if !path.starts_with('/') || path.split('/').any(|c| c == ".." || c == ".") {
            continue;
        }
        let Some(own) = own_prefix(path, is_its) else {
            continue;
        };
        if controllers.split(',').all(named) && controllers.split(',').any(|c| c == "cpuacct") {
            let file = format!("/sys/fs/cgroup/{controllers}{own}/cpuacct.usage");
            v1.push((file.into(), CpuCounter::CpuacctUsageNs));
        } else if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let file = format!("{root}{own}/cpu.stat");
                v2.push((file.into(), CpuCounter::CpuStatUsec));
            }
        }
    }
    v1.extend(v2);
    v1
}

/// The shortest prefix of cgroup `path`, at a `/`, that `is_its` accepts.
fn own_prefix<'p>(path: &'p str, is_its: &dyn Fn(&str) -> bool) -> Option<&'p str> {
    let ends = path
        .match_indices('/')
        .map(|(i, _)| i)
        .skip(1)
        .chain(std::iter::once(path.len()));
    ends.map(|end| &path[..end]).find(|prefix| is_its(prefix))
}

/// Which counter a cgroup CPU file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuCounter {
    /// cgroup v1 `cpuacct.usage`: one number, ns.
    CpuacctUsageNs,
    /// cgroup v2 `cpu.stat`: `usage_usec N` among other lines.
    CpuStatUsec,
}

/// The CPU time in ns a cgroup CPU file of `kind` says.
pub fn parse_cgroup_cpu(bytes: &[u8], kind: CpuCounter) -> Option<u64> {
    let text = std::str::from_utf8(bytes).ok()?;
    match kind {
        CpuCounter::CpuacctUsageNs => text.trim().parse().ok(),
        CpuCounter::CpuStatUsec => text
            .lines()
            .find_map(|l| l.strip_prefix("usage_usec "))?
            .trim()
            .parse::<u64>()
            .ok()?
            .checked_mul(1000),
    }
}

/// The seconds since boot from `/proc/uptime`.
pub fn parse_uptime(bytes: &[u8]) -> Option<f64> {
    std::str::from_utf8(bytes)
        .ok()?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One row of `/proc/net/tcp` or `/proc/net/tcp6` that Pier cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpRow {
    /// This end's address and port (`local_address`).
    pub local: SocketAddr,
    /// The other end's (`rem_address`; the unspecified address and port 0 for a listener).
    pub remote: SocketAddr,
    /// Its state (`st`): only LISTEN, ESTABLISHED and SYN-RECV rows are kept.
    pub state: TcpState,
    /// 0 for a connection no process holds yet (completed but not accepted, or half-open).
    pub inode: u64,
}

/// The line of a TCP table that could not be parsed (counted from 1, the header's line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("line {0} is malformed")]
pub struct MalformedLine(pub usize);

/// Parses a whole `/proc/net/tcp` or `/proc/net/tcp6` file, keeping LISTEN, ESTABLISHED and
/// SYN-RECV rows (a server's half-open end, printed with inode 0). A malformed row is an error,
/// not a skipped line: a table Pier cannot read fully is a table it cannot trust.
pub fn parse_tcp_table(text: &str) -> Result<Vec<TcpRow>, MalformedLine> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let row = parse_tcp_line(line).ok_or(MalformedLine(n + 1))?;
        if let Some(row) = row {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// `Some(None)`: a well-formed row in a state Pier ignores.
fn parse_tcp_line(line: &str) -> Option<Option<TcpRow>> {
    let fields: Vec<&str> = line.split_ascii_whitespace().collect();
    let state = match u8::from_str_radix(fields.get(3)?, 16).ok()? {
        0x01 => TcpState::Established,
        0x03 => TcpState::SynRecv,
        0x0A => TcpState::Listen,
        _ => return Some(None),
    };
    Some(Some(TcpRow {
        local: parse_hex_endpoint(fields.get(1)?)?,
        remote: parse_hex_endpoint(fields.get(2)?)?,
        state,
        inode: fields.get(9)?.parse().ok()?,
    }))
}

/// `0100007F:1F90` → `127.0.0.1:8080`. The kernel prints each 32-bit word of the address as a
/// host-order integer, so the bytes come back with `to_ne_bytes`; the port is plain hex.
fn parse_hex_endpoint(text: &str) -> Option<SocketAddr> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let hex = addr.get(i * 8..i * 8 + 8)?;
        Some(u32::from_str_radix(hex, 16).ok()?.to_ne_bytes())
    };
    let ip = match addr.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &[u8] = b"4242 (vite) S 1 4242 4242 0 -1 4194560 100 0 0 0 3 1 5 2 20 0 1 0 987654 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

    #[test]
    fn children_are_the_pids_of_the_file_and_nothing_else() {
        assert_eq!(parse_children(b"4243 4250 "), Some(vec![4243, 4250]));
        assert_eq!(parse_children(b""), Some(vec![]));
        assert_eq!(parse_children(b"4243 x "), None);
        assert_eq!(parse_children(b"-1 "), None);
    }

    #[test]
    fn stat_reads_the_fields_pier_uses() {
        let (comm, stat) = parse_stat(STAT).unwrap();
        assert_eq!(comm, "vite");
        assert_eq!(
            stat,
            Stat {
                state: b'S',
                ppid: 1,
                session: 4242,
                tty_nr: 0,
                cpu_ticks: 4,
                child_cpu_ticks: 7,
                start_time: 987654
            }
        );
    }

    #[test]
    fn stat_keeps_the_start_time_when_comm_holds_spaces_and_parens() {
        // A name crafted to look like the next fields: a naive split reads ppid 9 and a wrong
        // start time.
        let hostile =
            b"77 (a) R 9 9 9 (b c) S 5 77 77 34816 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0\n";
        let (comm, stat) = parse_stat(hostile).unwrap();
        assert_eq!(comm, "a) R 9 9 9 (b c");
        assert_eq!(stat.ppid, 5);
        assert_eq!(stat.tty_nr, 34816);
        assert_eq!(stat.start_time, 555);
    }

    #[test]
    fn a_released_process_is_read_dead_in_no_session() {
        // As the kernel printed them beside the soak: dead, and a zombie being reaped.
        let dead = b"23471 (python3) X 0 -1 -1 0 -1 4227148 388 0 0 0 0 0 0 0 20 0 0 0 331469 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
        let (_, stat) = parse_stat(dead).unwrap();
        assert_eq!(
            (stat.state, stat.ppid, stat.session, stat.start_time),
            (b'X', 0, 0, 331469)
        );
        let zombie = b"32033 (sleep) Z 0 -1 -1 0 -1 4227084 296 0 0 0 0 0 0 0 20 0 0 0 352804 0\n";
        assert_eq!(parse_stat(zombie).unwrap().1.state, b'X');
        // The letter is read before the kernel finds the process released: it may say R.
        let running =
            b"23471 (python3) R 0 -1 -1 0 -1 4227148 388 0 0 0 0 0 0 0 20 0 0 0 331469 0\n";
        assert_eq!(parse_stat(running).unwrap().1.state, b'X');
        // A live process in no visible session (another pid namespace's) prints 0.
        let hidden = b"23471 (python3) S 0 0 0 0 -1 4227148 388 0 0 0 0 0 0 0 20 0 0 0 331469 0\n";
        assert_eq!(parse_stat(hidden).unwrap().1.state, b'S');
        assert_eq!(
            parse_stat(b"1 (x) S 1 1 -2 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5 0\n"),
            None
        );
    }

    #[test]
    fn stat_refuses_truncated_and_garbage_input() {
        assert_eq!(parse_stat(b""), None);
        assert_eq!(parse_stat(b"12 (x) S 1 2"), None);
        assert_eq!(parse_stat(b"12 )x( S 1 1 1 0"), None);
        assert_eq!(
            parse_stat(b"1 (x) S one 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"),
            None
        );
    }

    #[test]
    fn cmdline_keeps_bytes_and_empty_arguments() {
        assert_eq!(
            parse_cmdline(b"node\0vite\0\0\xff\0"),
            vec![b"node".to_vec(), b"vite".to_vec(), vec![], vec![0xff]]
        );
        assert_eq!(
            parse_cmdline(b"next-server (v14)"),
            vec![b"next-server (v14)".to_vec()]
        );
        assert!(parse_cmdline(b"").is_empty());
    }

    #[test]
    fn socket_links_give_their_inode_and_nothing_else_does() {
        assert_eq!(parse_socket_link(b"socket:[98765]"), Some(98765));
        assert_eq!(parse_socket_link(b"pipe:[98765]"), None);
        assert_eq!(parse_socket_link(b"/dev/null"), None);
        assert_eq!(parse_socket_link(b"socket:[]"), None);
    }

    #[test]
    fn schedstat_and_io_give_cpu_ns_and_disk_bytes() {
        assert_eq!(parse_schedstat(b"372371499 157671 17\n"), Some(372371499));
        assert_eq!(parse_schedstat(b""), None);
        let io = b"rchar: 9\nwchar: 9\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(parse_io_bytes(io), Some(12288));
        assert_eq!(parse_io_bytes(b"rchar: 9\n"), None);
    }

    /// The idle clock's I/O counters are every read and write call's, not the disk's: a
    /// server answering from its cache moves `rchar`/`wchar`, never `read_bytes`.
    #[test]
    fn io_calls_are_rchar_plus_wchar_and_syscr_plus_syscw() {
        let io = b"rchar: 9\nwchar: 7\nsyscr: 3\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            parse_io_calls(io),
            Some(IoCalls {
                bytes: 16,
                calls: 5
            })
        );
        assert_eq!(parse_io_calls(b"rchar: 9\nwchar: 7\nsyscr: 3\n"), None);
        assert_eq!(
            parse_io_calls(b"rchar: x\nwchar: 7\nsyscr: 3\nsyscw: 2\n"),
            None
        );
    }

    #[test]
    fn a_cgroup_s_cpu_counter_is_cpuacct_on_v1_then_cpu_stat_on_v2() {
        let id = "b3f798edf7f6";
        let its = |p: &str| p.rsplit('/').next().is_some_and(|last| last.contains(id));
        let hybrid = format!("2:cpuacct:/docker/{id}\n1:cpu:/docker/{id}\n0::/docker/{id}\n");
        let files = cgroup_cpu_files(hybrid.as_bytes(), &its);
        assert_eq!(
            files,
            vec![
                (
                    format!("/sys/fs/cgroup/cpuacct/docker/{id}/cpuacct.usage").into(),
                    CpuCounter::CpuacctUsageNs
                ),
                (
                    format!("/sys/fs/cgroup/docker/{id}/cpu.stat").into(),
                    CpuCounter::CpuStatUsec
                ),
                (
                    format!("/sys/fs/cgroup/unified/docker/{id}/cpu.stat").into(),
                    CpuCounter::CpuStatUsec
                ),
            ]
        );
        let joined = cgroup_cpu_files(
            format!("4:cpu,cpuacct:/system.slice/docker-{id}.scope\n").as_bytes(),
            &its,
        );
        assert_eq!(
            joined[0].0,
            std::path::PathBuf::from(format!(
                "/sys/fs/cgroup/cpu,cpuacct/system.slice/docker-{id}.scope/cpuacct.usage"
            ))
        );
    }

    /// The first process in a child of its container's cgroup (Docker-in-Docker's `init`,
    /// systemd's `init.scope`): the container's whole cgroup is counted, not the child's.
    #[test]
    fn a_process_in_a_child_cgroup_counts_its_whole_container() {
        let id = "b3f798edf7f6";
        let its = |p: &str| p.rsplit('/').next().is_some_and(|last| last.contains(id));
        for child in ["init", "init.scope"] {
            let line = format!("0::/system.slice/docker-{id}.scope/{child}\n");
            let files = cgroup_cpu_files(line.as_bytes(), &its);
            assert_eq!(
                files[0].0,
                std::path::PathBuf::from(format!(
                    "/sys/fs/cgroup/system.slice/docker-{id}.scope/cpu.stat"
                )),
                "{child}"
            );
        }
    }

    /// A line whose path is not this container's is never read, whatever another line says;
    /// and nothing built from a line leaves /sys/fs/cgroup.
    #[test]
    fn a_cgroup_line_not_its_own_or_not_the_kernel_s_is_never_read() {
        let id = "b3f798edf7f6";
        let its = |p: &str| p.rsplit('/').next().is_some_and(|last| last.contains(id));
        let other = "2:cpuacct:/user.slice\n0::/docker/b3f798edf7f6\n";
        let files = cgroup_cpu_files(other.as_bytes(), &its);
        assert!(
            files.iter().all(|(f, _)| f.to_string_lossy().contains(id)),
            "{files:?}"
        );
        for hostile in [
            "9:../../../tmp/x,cpuacct:/docker/b3f798edf7f6\n",
            "9:cpuacct:/docker/../b3f798edf7f6\n",
            "9:cpuacct:docker/b3f798edf7f6\n",
            "0::/./b3f798edf7f6\n",
            "garbage\n",
        ] {
            assert!(
                cgroup_cpu_files(hostile.as_bytes(), &its).is_empty(),
                "{hostile}"
            );
        }
        assert!(cgroup_cpu_files(b"0::/docker/other\n", &its).is_empty());
    }

    #[test]
    fn a_cgroup_cpu_counter_parses_as_the_kernel_writes_it() {
        assert_eq!(
            parse_cgroup_cpu(b"23366055\n", CpuCounter::CpuacctUsageNs),
            Some(23_366_055)
        );
        let stat = b"usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n";
        assert_eq!(
            parse_cgroup_cpu(stat, CpuCounter::CpuStatUsec),
            Some(1_500_000)
        );
        assert_eq!(
            parse_cgroup_cpu(b"user_usec 1\n", CpuCounter::CpuStatUsec),
            None
        );
        assert_eq!(parse_cgroup_cpu(b"-1", CpuCounter::CpuacctUsageNs), None);
    }

    #[test]
    fn cgroup_prefers_the_systemd_unit_path() {
        let v2 = b"0::/user.slice/user-1000.slice/user@1000.service/app.slice/vite.service\n";
        assert_eq!(
            parse_cgroup(v2).unwrap(),
            "/user.slice/user-1000.slice/user@1000.service/app.slice/vite.service"
        );
        let v1 = b"9:name=systemd:/user.slice/session-2.scope\n4:memory:/x\n0::/\n";
        assert_eq!(parse_cgroup(v1).unwrap(), "/user.slice/session-2.scope");
        let flat = b"9:name=systemd:/\n0::/\n";
        assert_eq!(parse_cgroup(flat).unwrap(), "/");
        assert_eq!(parse_cgroup(b""), None);
    }

    #[test]
    fn tcp_tables_decode_both_families_and_skip_other_states() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
                  0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n\
                  1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 0 1 0 20 4 30 10 -1\n\
                  2: 0100007F:D432 0100007F:1F91 06 00000000:00000000 00:00000000 00000000  1000        0 0 3 0\n\
                  3: 0100007F:1F90 0100007F:D433 03 00000000:00000000 01:00000064 00000000     0        0 0 0 0000000047d25f7a\n";
        let rows = parse_tcp_table(v4).unwrap();
        assert_eq!(rows.len(), 3, "TIME_WAIT left out");
        assert_eq!(rows[0].local, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(rows[0].state, TcpState::Listen);
        assert_eq!(rows[0].inode, 111);
        assert_eq!(rows[1].remote, "127.0.0.1:54321".parse().unwrap());
        assert_eq!(rows[1].inode, 0);
        // A request socket, as the kernel prints one (`get_openreq4`): the server's half-open end.
        assert_eq!(rows[2].state, TcpState::SynRecv);
        assert_eq!(rows[2].local, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(rows[2].remote, "127.0.0.1:54323".parse().unwrap());
        assert_eq!(rows[2].inode, 0);

        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
                  0: 00000000000000000000000001000000:1435 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0\n\
                  1: 0000000000000000FFFF00000100007F:1435 0000000000000000FFFF00000100007F:C000 01 00000000:00000000 00:00000000 00000000  1000        0 223 1 0\n";
        let rows = parse_tcp_table(v6).unwrap();
        assert_eq!(rows[0].local, "[::1]:5173".parse().unwrap());
        assert_eq!(rows[1].local, "[::ffff:127.0.0.1]:5173".parse().unwrap());
    }

    #[test]
    fn a_malformed_tcp_row_fails_the_whole_table() {
        let bad = "header\n 0: 0100007F 00000000:0000 0A\n";
        assert!(parse_tcp_table(bad).is_err());
        let bad_hex = "header\n 0: 0100ZZ7F:1F90 00000000:0000 0A 0:0 0:0 0 0 0 1\n";
        assert!(parse_tcp_table(bad_hex).is_err());
    }
}
