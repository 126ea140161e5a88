//! The TCP tables. Netlink `sock_diag` first, as `ss` does: one round trip for both address
//! families (else one per family), filtered to LISTEN, ESTABLISHED and SYN-RECV in the kernel.
//! `/proc/net/tcp{,6}` when sock_diag cannot be used (a sandbox that forbids netlink, a kernel
//! without `tcp_diag`, an answer Pier cannot decode), or when `PIER_SOCKET_TABLES=procfs` asks
//! for it. Both give the same rows: the kernel's sockets in those three states, an unaccepted
//! connection and a server's half-open end with inode 0.
//!
//! Apart from them, [`ended`]: the connections that have closed or are closing, for the idle
//! clock, by sock_diag only (a separate dump, so the scan's tables never change with it).

use std::fs;
use std::io::ErrorKind;
use std::time::Duration;

use rustix::net::{
    netlink, recv, sendto, socket_with, sockopt, AddressFamily, RecvFlags, SendFlags, SocketFlags,
    SocketType,
};

use crate::probe::netlink::{
    dump_request, dump_request_both, ended_request, ended_request_both, parse_chunk,
    parse_ended_chunk, Chunk, DumpError, Family, MAX_ENDED,
};
use crate::probe::procfs::{self as parse, TcpRow};
use crate::probe::unix::{self, UnixRow, MAX_UNIX};
use crate::probe::{Ended, ProbeError};

/// A decoder of one buffer of a dump's answer.
type Decode<T> = fn(&[u8], u32) -> Result<Chunk<T>, DumpError>;

/// Where the TCP tables come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// sock_diag, falling back to `/proc/net` when it fails.
    SockDiag,
    /// `/proc/net/tcp{,6}` only.
    ProcNet,
}

impl Source {
    /// `PIER_SOCKET_TABLES=procfs` chooses the `/proc/net` tables; anything else, sock_diag.
    pub fn from_env() -> Self {
        match std::env::var_os("PIER_SOCKET_TABLES") {
            Some(v) if v == "procfs" => Source::ProcNet,
            _ => Source::SockDiag,
        }
    }
}

/// Every LISTEN, ESTABLISHED and SYN-RECV TCP socket of Pier's network namespace, IPv4 and
/// IPv6, and the source that gave them.
pub fn read(source: Source) -> Result<(Vec<TcpRow>, Source), ProbeError> {
    if source == Source::SockDiag {
        match sock_diag() {
            Ok(rows) => return Ok((rows, Source::SockDiag)),
            Err(why) => tracing::debug!("sock_diag unavailable, reading /proc/net: {why}"),
        }
    }
    proc_net().map(|rows| (rows, Source::ProcNet))
}

/// Every socket in one dump of both families: a dump walks the kernel's whole connection hash
/// table (milliseconds on a machine with much memory, whatever the few sockets in it), and
/// this walks it once ([`dump_request_both`]). Else one dump per family. IPv4's rows come
/// first either way, each family's in the kernel's order, as a dump per family gives them.
fn sock_diag() -> Result<Vec<TcpRow>, ProbeError> {
    match dump(&dump_request_both(3), 3, parse_chunk, usize::MAX) {
        Ok(mut rows) => {
            // A stable sort: each family keeps the kernel's order.
            rows.sort_by_key(|r| r.local.is_ipv6());
            Ok(rows)
        }
        Err(why) => {
            tracing::debug!("the dump of both families failed, one per family: {why}");
            per_family()
        }
    }
}

/// One dump per family, each over a netlink socket of its own, the two at once, so on two
/// cores the tables take the time of one walk. A socket times out rather than waiting
/// forever for a kernel that never answers.
fn per_family() -> Result<Vec<TcpRow>, ProbeError> {
    let (v4, v6) = std::thread::scope(|scope| {
        let v6 = scope.spawn(|| dump(&dump_request(Family::V6, 2), 2, parse_chunk, usize::MAX));
        let v4 = dump(&dump_request(Family::V4, 1), 1, parse_chunk, usize::MAX);
        let v6 = v6.join().unwrap_or_else(|_| {
            Err(ProbeError::Partial(
                "the IPv6 dump hit an internal error".to_owned(),
            ))
        });
        (v4, v6)
    });
    let mut rows = v4?;
    rows.extend(v6?);
    Ok(rows)
}

/// Every stream and seqpacket unix socket listening or connected, with its name and peer:
/// one sock_diag dump (at most [`MAX_UNIX`] rows), else `/proc/net/unix` (no peers: every
/// connection read from it counts), as `source` says.
pub fn unix(source: Source) -> Result<Vec<UnixRow>, ProbeError> {
    if source == Source::SockDiag {
        match dump(&unix::dump_request(7), 7, unix::parse_chunk, MAX_UNIX) {
            Ok(rows) => return Ok(rows),
            Err(why) => {
                tracing::debug!("unix sock_diag unavailable, reading /proc/net/unix: {why}")
            }
        }
    }
    let path = "/proc/net/unix";
    let text = read_bounded(path, MAX_UNIX * UNIX_LINE).map_err(|e| ProbeError::io(path, e))?;
    unix::parse_proc_net_unix(&text).map_err(|what| ProbeError::Parse {
        path: path.into(),
        what,
    })
}

/// The longest `/proc/net/unix` line: its fields and a 108-byte path (`sun_path`).
const UNIX_LINE: usize = 200;

/// `path` read whole, or an error past `limit` bytes: every user's sockets are in it, so
/// another user decides its size, and a table cut short could hide a client.
fn read_bounded(path: &str, limit: usize) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    fs::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_string(&mut text)?;
    if text.len() > limit {
        return Err(std::io::Error::other(format!("longer than {limit} bytes")));
    }
    Ok(text)
}

/// Every TCP connection of Pier's network namespace that has closed or is closing, IPv4 and
/// IPv6: one dump of both families, else one per family (one after the other: this read is
/// the clock's, not a checkpoint's). At most [`MAX_ENDED`] rows, else an error: a table cut
/// short could miss the one connection that says a server was used.
pub fn ended() -> Result<Vec<Ended>, ProbeError> {
    match dump(&ended_request_both(5), 5, parse_ended_chunk, MAX_ENDED) {
        Ok(rows) => Ok(rows),
        Err(ProbeError::Dump(DumpError::TooMany(n))) => Err(DumpError::TooMany(n).into()),
        Err(why) => {
            tracing::debug!("the ended dump of both families failed, one per family: {why}");
            let mut rows = dump(
                &ended_request(Family::V4, 6),
                6,
                parse_ended_chunk,
                MAX_ENDED,
            )?;
            rows.extend(dump(
                &ended_request(Family::V6, 7),
                7,
                parse_ended_chunk,
                MAX_ENDED,
            )?);
            if rows.len() > MAX_ENDED {
                return Err(DumpError::TooMany(MAX_ENDED).into());
            }
            Ok(rows)
        }
    }
}

/// The sock_diag dump `request` (numbered `seq`) asks for, each buffer read by `decode`, at
/// most `max` rows (more is [`DumpError::TooMany`]).
fn dump<T>(request: &[u8], seq: u32, decode: Decode<T>, max: usize) -> Result<Vec<T>, ProbeError> {
    let fd = socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(netlink::SOCK_DIAG),
    )
    .map_err(|e| ProbeError::read("netlink socket", e))?;
    sockopt::set_socket_timeout(&fd, sockopt::Timeout::Recv, Some(Duration::from_secs(2)))
        .map_err(|e| ProbeError::read("netlink timeout", e))?;
    let kernel = netlink::SocketAddrNetlink::new(0, 0);
    let mut rows = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    sendto(&fd, request, SendFlags::empty(), &kernel)
        .map_err(|e| ProbeError::read("netlink request", e))?;
    loop {
        let (n, whole) = recv(&fd, &mut buf[..], RecvFlags::TRUNC)
            .map_err(|e| ProbeError::read("netlink answer", e))?;
        if whole > n {
            return Err(ProbeError::malformed(
                "netlink answer",
                format!("{whole} bytes did not fit"),
            ));
        }
        let (part, done) = match decode(&buf[..n], seq)? {
            Chunk::More(part) => (part, false),
            Chunk::Done(part) => (part, true),
        };
        if rows.len().saturating_add(part.len()) > max {
            return Err(DumpError::TooMany(max).into());
        }
        rows.extend(part);
        if done {
            return Ok(rows);
        }
    }
}

fn proc_net() -> Result<Vec<TcpRow>, ProbeError> {
    proc_net_in("/proc/net")
}

/// The TCP tables of the network namespace process `pid` lives in (a container's), which any
/// user may read: `/proc/<pid>/net` shows that process's namespace.
pub fn namespace_of(pid: u32) -> Result<Vec<TcpRow>, ProbeError> {
    proc_net_in(&format!("/proc/{pid}/net"))
}

fn proc_net_in(folder: &str) -> Result<Vec<TcpRow>, ProbeError> {
    let mut rows = Vec::new();
    for path in [format!("{folder}/tcp"), format!("{folder}/tcp6")] {
        let path = path.as_str();
        let text = match read_table(path) {
            Ok(text) => text,
            // A kernel built without IPv6 has no tcp6 table; that is "no IPv6 sockets".
            Err(e) if e.kind() == ErrorKind::NotFound && path.ends_with('6') => continue,
            Err(source) => return Err(ProbeError::io(path, source)),
        };
        let parsed = parse::parse_tcp_table(&text).map_err(|e| ProbeError::Parse {
            path: path.into(),
            what: e.to_string(),
        })?;
        rows.extend(parsed);
    }
    Ok(rows)
}

/// One `/proc/net/tcp{,6}` file. The read that finds the end walks the kernel's whole
/// connection hash table again (about 2 ms on a machine with much memory), and
/// `read_to_string` starts with a 32-byte buffer: a container's two-line table cost five
/// reads. Here one read takes what the kernel's sequence buffer holds (a page or more), and a
/// read that stops well short of a page is the end: the kernel ends a read early only at the
/// end of the table, when the caller's buffer is full (64 KiB here), or when the next row would
/// not fit in its own buffer — so an answer shorter than a page less two rows had no next row.
fn read_table(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    /// A page, less two of the longest rows (tcp6's, about 180 bytes).
    const NO_ROOM_LEFT: usize = 4096 - 2 * 200;
    let mut file = fs::File::open(path)?;
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut chunk)?;
        out.extend_from_slice(&chunk[..n]);
        if n < NO_ROOM_LEFT {
            break;
        }
    }
    String::from_utf8(out).map_err(|e| std::io::Error::new(ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::net::{TcpListener, TcpStream};

    fn key(r: &TcpRow) -> String {
        format!("{} {} {:?} {}", r.local, r.remote, r.state, r.inode)
    }

    /// The two sources agree on this test's own sockets: a listener, an accepted connection
    /// (both ends) and one still waiting in the accept queue (inode 0).
    #[test]
    fn sock_diag_and_proc_net_give_the_same_rows() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _accepted = listener.accept().unwrap();
        let _waiting = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let ours = |rows: Vec<TcpRow>| -> BTreeSet<String> {
            rows.iter()
                .filter(|r| r.local.port() == port || r.remote.port() == port)
                .map(key)
                .collect()
        };
        let diag = ours(sock_diag().expect("sock_diag works on this machine"));
        let proc = ours(proc_net().unwrap());
        assert_eq!(diag, proc);
        let per_family = ours(per_family().expect("sock_diag works on this machine"));
        assert_eq!(diag, per_family);
        // listener, the accepted pair, the waiting pair (its server end has inode 0)
        assert_eq!(diag.len(), 5, "{diag:#?}");
        assert!(diag.iter().any(|k| k.ends_with("Established 0")));
    }

    /// A unix listener, its accepted end and the client's end, from the kernel: the accepted
    /// end carries the listener's name, and each connected end names the other as its peer
    /// (sock_diag); `/proc/net/unix` gives the same rows without peers.
    /// Another user decides how long `/proc/net/unix` is: past the bound, the read fails (and
    /// every resource with it), never cut short.
    #[test]
    fn a_table_past_its_bound_is_an_error_not_a_shorter_table() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("unix");
        std::fs::write(&file, "x".repeat(101)).unwrap();
        let path = file.to_str().unwrap();
        assert_eq!(read_bounded(path, 101).unwrap().len(), 101);
        assert!(read_bounded(path, 100).is_err());
    }

    #[test]
    fn the_unix_dump_ties_an_accepted_connection_to_its_listener_and_its_client() {
        use crate::probe::UnixPeer;
        use std::os::unix::net::{UnixListener, UnixStream};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        let (server, _) = listener.accept().unwrap();
        use std::os::fd::AsRawFd;
        let inode = |fd: i32| {
            let link = fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
            let link = link.to_string_lossy().into_owned();
            link.trim_start_matches("socket:[")
                .trim_end_matches(']')
                .parse::<u64>()
                .unwrap()
        };
        let (l, s, c) = (
            inode(listener.as_raw_fd()),
            inode(server.as_raw_fd()),
            inode(client.as_raw_fd()),
        );
        let name = Some(path.as_os_str().as_encoded_bytes().to_vec());
        let rows = unix(Source::SockDiag).unwrap();
        let row = |i| rows.iter().find(|r| r.inode == i).cloned().unwrap();
        assert!(row(l).listening && row(l).name == name);
        assert_eq!(
            (row(s).name, row(s).peer),
            (name.clone(), UnixPeer::Socket(c))
        );
        assert_eq!((row(c).name, row(c).peer), (None, UnixPeer::Socket(s)));
        let rows = unix(Source::ProcNet).unwrap();
        let row = |i| rows.iter().find(|r| r.inode == i).cloned().unwrap();
        assert!(row(l).listening && row(l).name == name);
        assert_eq!((row(s).name, row(s).peer), (name, UnixPeer::Unknown));
        // The client's end gone: the server's end says its peer has closed.
        drop(client);
        let rows = unix(Source::SockDiag).unwrap();
        let server_end = rows.iter().find(|r| r.inode == s).unwrap();
        assert_eq!(server_end.peer, UnixPeer::Closed);
    }

    /// The one dump of both families holds what the two dumps per family hold, in their
    /// order once IPv4's rows are put first.
    #[test]
    fn one_dump_of_both_families_gives_the_rows_of_one_per_family() {
        let Ok(v6) = TcpListener::bind("[::1]:0") else {
            return; // no IPv6 on this machine
        };
        let v4 = TcpListener::bind("127.0.0.1:0").unwrap();
        let ports = [
            v4.local_addr().unwrap().port(),
            v6.local_addr().unwrap().port(),
        ];
        let ours = |rows: Vec<TcpRow>| -> Vec<String> {
            rows.iter()
                .filter(|r| ports.contains(&r.local.port()))
                .map(key)
                .collect()
        };
        let mut both = dump(&dump_request_both(3), 3, parse_chunk, usize::MAX)
            .expect("the older request is answered");
        both.sort_by_key(|r| r.local.is_ipv6());
        let both = ours(both);
        assert_eq!(both, ours(per_family().unwrap()));
        assert_eq!(both.len(), 2, "{both:#?}");
        assert!(both[0].starts_with("127.0.0.1:") && both[1].starts_with("[::1]:"));
    }
}
