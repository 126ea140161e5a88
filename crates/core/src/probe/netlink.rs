//! The `sock_diag` netlink messages the Linux probe exchanges with the kernel (what `ss` uses):
//! the dump request for TCP sockets in LISTEN, ESTABLISHED and SYN-RECV state — of one family,
//! or of both at once ([`dump_request_both`]) — and the decoder of the kernel's answer; and the
//! idle clock's dump of connections that have closed or are closing ([`ended_request_both`],
//! [`parse_ended_chunk`]), apart, so the scan's table never changes with it. Pure
//! functions over bytes, compiled everywhere, so every layout — and every truncated or hostile
//! buffer — is unit-tested without a kernel.
//!
//! Layouts (`linux/netlink.h`, `linux/inet_diag.h`, `linux/sock_diag.h`): a stream of messages,
//! each a 16-byte `nlmsghdr` (length, type, flags, seq, pid; host byte order) and a body padded
//! to 4 bytes. A socket is an `inet_diag_msg` of 72 bytes: family, state, timer, retrans, the
//! `inet_diag_sockid` (ports and addresses in network byte order), expires, queues, uid, inode.
//!
//! Why fail whole: a table Pier cannot read fully is a table it cannot trust, so any malformed
//! message is an error for the whole dump (the caller then reads `/proc/net/tcp*` instead).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::procfs::TcpRow;
use super::{Ended, TcpState};

/// `SOCK_DIAG_BY_FAMILY`: the request and answer type.
pub(super) const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `TCPDIAG_GETSOCK`: the older request and answer type (`inet_diag_req`).
const TCPDIAG_GETSOCK: u16 = 18;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
/// Set on a message when the dump was interrupted by a change and may be inconsistent.
const NLM_F_DUMP_INTR: u16 = 0x10;
pub(super) const HEADER: usize = 16;
const DIAG_MSG: usize = 72;
const IPPROTO_TCP: u8 = 6;
const TCP_ESTABLISHED: u8 = 1;
/// A server's half-open end. The kernel keeps it as a request socket (`TCP_NEW_SYN_RECV`
/// inside), dumps it when this state is asked for, and reports it as `TCP_SYN_RECV`.
const TCP_SYN_RECV: u8 = 3;
const TCP_LISTEN: u8 = 10;
const TCP_FIN_WAIT1: u8 = 4;
const TCP_FIN_WAIT2: u8 = 5;
const TCP_TIME_WAIT: u8 = 6;
const TCP_LAST_ACK: u8 = 9;
const TCP_CLOSING: u8 = 11;
/// The most closed connections an ended dump takes (64 bytes each in memory): past it the
/// dump fails rather than grow without bound on a machine serving the world (a loaded
/// server keeps up to `tcp_max_tw_buckets` TIME-WAIT rows; a developer's machine, a few
/// hundred).
pub const MAX_ENDED: usize = 65_536;

/// The address families a dump is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4 (`AF_INET`).
    V4,
    /// IPv6 (`AF_INET6`).
    V6,
}

impl Family {
    fn raw(self) -> u8 {
        match self {
            Family::V4 => 2,  // AF_INET
            Family::V6 => 10, // AF_INET6
        }
    }
}

/// The states a dump asks for: LISTEN, ESTABLISHED and SYN-RECV.
const STATES: u32 = (1 << TCP_ESTABLISHED) | (1 << TCP_SYN_RECV) | (1 << TCP_LISTEN);

/// The states an ended dump asks for: a connection closed or closing, whose two ends the
/// kernel still names (CLOSE itself is not kept). Not CLOSE-WAIT: its other end has left and
/// its holder has not closed it yet, which a server that never closes dead sockets keeps for
/// as long as it runs — a leftover, not a use (the client's own end, TIME-WAIT, shows the use).
const ENDED_STATES: u32 = (1 << TCP_FIN_WAIT1)
    | (1 << TCP_FIN_WAIT2)
    | (1 << TCP_TIME_WAIT)
    | (1 << TCP_LAST_ACK)
    | (1 << TCP_CLOSING);

/// A request's header: `len` bytes in all, of type `kind`, asking for a dump.
pub(super) fn request_header(len: usize, kind: u16, seq: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&(len as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out
}

/// The dump request for `family`'s TCP sockets in LISTEN, ESTABLISHED or SYN-RECV state: a
/// header and an `inet_diag_req_v2` whose socket id is zero (every socket).
pub fn dump_request(family: Family, seq: u32) -> Vec<u8> {
    request_v2(family, STATES, seq)
}

/// The dump request for `family`'s TCP connections that have closed or are closing.
pub fn ended_request(family: Family, seq: u32) -> Vec<u8> {
    request_v2(family, ENDED_STATES, seq)
}

/// An `inet_diag_req_v2` for `family`'s sockets in `states`.
fn request_v2(family: Family, states: u32, seq: u32) -> Vec<u8> {
    let len = HEADER + 56;
    let mut out = request_header(len, SOCK_DIAG_BY_FAMILY, seq);
    out.extend_from_slice(&[family.raw(), IPPROTO_TCP, 0, 0]);
    out.extend_from_slice(&states.to_ne_bytes());
    out.resize(len, 0);
    out
}

/// The same dump for IPv4 and IPv6 at once: a header and the older `inet_diag_req`
/// (`TCPDIAG_GETSOCK`: family, address lengths, extensions, a zero socket id, states, and no
/// bytecode), which the kernel answers for every family (`inet_diag_dump_compat`). Why: most
/// of a dump's cost is the kernel's walk over every bucket of its connection hash table
/// (262,144 buckets on a 24 GB machine, a cache miss every eight), made once per request —
/// once here instead of once per family.
pub fn dump_request_both(seq: u32) -> Vec<u8> {
    request_both(STATES, seq)
}

/// The ended dump for IPv4 and IPv6 at once, as [`dump_request_both`] asks.
pub fn ended_request_both(seq: u32) -> Vec<u8> {
    request_both(ENDED_STATES, seq)
}

/// An `inet_diag_req` for the sockets of every family in `states`.
fn request_both(states: u32, seq: u32) -> Vec<u8> {
    let len = HEADER + 60;
    let mut out = request_header(len, TCPDIAG_GETSOCK, seq);
    // AF_UNSPEC, no address lengths, no extensions; the socket id (48 bytes) matches all.
    out.resize(HEADER + 4 + 48, 0);
    out.extend_from_slice(&states.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out
}

/// What one buffer of the kernel's answer held: the table's rows, or the ended dump's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk<T = TcpRow> {
    /// Sockets; more buffers follow.
    More(Vec<T>),
    /// The last sockets: the dump is complete.
    Done(Vec<T>),
}

/// Why a dump cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DumpError {
    /// The kernel refused the request with this errno (e.g. `ENOENT` without the `tcp_diag`
    /// module, `EPERM` in a sandbox).
    #[error("the kernel refused the request (errno {0})")]
    Refused(i32),
    /// The dump changed while it was read; it may miss or repeat sockets.
    #[error("the dump was interrupted by a change")]
    Interrupted,
    /// The bytes do not have the documented layout.
    #[error("unexpected answer: {0}")]
    Malformed(String),
    /// The ended dump held more than [`MAX_ENDED`] connections: it was not read whole.
    #[error("more than {0} closed connections")]
    TooMany(usize),
}

/// Decodes one buffer received from the kernel for the request numbered `seq`.
pub fn parse_chunk(buf: &[u8], seq: u32) -> Result<Chunk, DumpError> {
    parse_messages(buf, seq, parse_diag_msg)
}

/// Decodes one buffer of the ended dump numbered `seq`: each connection's two ends.
pub fn parse_ended_chunk(buf: &[u8], seq: u32) -> Result<Chunk<Ended>, DumpError> {
    parse_messages(buf, seq, parse_ended_msg)
}

/// The messages of one buffer, each socket's body decoded by `decode` (`None`: a state
/// the request did not ask for, left out).
pub(super) fn parse_messages<T>(
    buf: &[u8],
    seq: u32,
    decode: fn(&[u8]) -> Result<Option<T>, DumpError>,
) -> Result<Chunk<T>, DumpError> {
    let bad = |what: String| DumpError::Malformed(what);
    let mut rows = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let header = buf
            .get(at..at + HEADER)
            .ok_or_else(|| bad(format!("a truncated header at byte {at}")))?;
        let len = u32_at(header, 0) as usize;
        let kind = u16::from_ne_bytes([header[4], header[5]]);
        let flags = u16::from_ne_bytes([header[6], header[7]]);
        if len < HEADER || at.checked_add(len).is_none_or(|end| end > buf.len()) {
            return Err(bad(format!("a message of length {len} at byte {at}")));
        }
        if u32_at(header, 8) != seq {
            return Err(bad(format!("an answer to request {}", u32_at(header, 8))));
        }
        if flags & NLM_F_DUMP_INTR != 0 {
            return Err(DumpError::Interrupted);
        }
        let body = &buf[at + HEADER..at + len];
        match kind {
            // A dump that failed part-way still ends with DONE, its body the negative errno
            // (e.g. ENOENT when `inet_diag` is loaded without `tcp_diag`): that is no table.
            NLMSG_DONE => {
                return match body
                    .get(..4)
                    .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                {
                    Some(errno) if errno < 0 => Err(DumpError::Refused(errno.saturating_neg())),
                    _ => Ok(Chunk::Done(rows)),
                }
            }
            NLMSG_ERROR => {
                let errno = body
                    .get(..4)
                    .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .ok_or_else(|| bad("a truncated error message".into()))?;
                return Err(DumpError::Refused(errno.saturating_neg()));
            }
            // The answer carries the request's type.
            SOCK_DIAG_BY_FAMILY | TCPDIAG_GETSOCK => {
                if let Some(row) = decode(body)? {
                    rows.push(row);
                }
            }
            other => return Err(bad(format!("a message of type {other}"))),
        }
        // Messages are padded to 4 bytes.
        at += (len + 3) & !3;
    }
    Ok(Chunk::More(rows))
}

/// One `inet_diag_msg`: `Ok(None)` for a state Pier does not read (the request asks only for
/// LISTEN, ESTABLISHED and SYN-RECV, so that never happens on a kernel that honours it).
fn parse_diag_msg(body: &[u8]) -> Result<Option<TcpRow>, DumpError> {
    let msg = diag_msg(body)?;
    let state = match msg[1] {
        TCP_ESTABLISHED => TcpState::Established,
        TCP_SYN_RECV => TcpState::SynRecv,
        TCP_LISTEN => TcpState::Listen,
        _ => return Ok(None),
    };
    let (local, remote) = ends(msg)?;
    Ok(Some(TcpRow {
        local,
        remote,
        state,
        inode: u64::from(u32_at(msg, 68)),
    }))
}

/// One `inet_diag_msg` of the ended dump: its two ends, when its state is one of a closed or
/// closing connection (`Ok(None)` for any other, which the request does not ask for).
fn parse_ended_msg(body: &[u8]) -> Result<Option<Ended>, DumpError> {
    let msg = diag_msg(body)?;
    if !is_ended(msg[1]) {
        return Ok(None);
    }
    let (local, remote) = ends(msg)?;
    Ok(Some(Ended { local, remote }))
}

/// Whether the kernel's TCP `state` is one of a closed or closing connection: why a row of
/// another state is dropped even if a kernel sent it, so a live connection never reads as
/// ended (and the idle clock's "served since" never rests on one).
fn is_ended(state: u8) -> bool {
    1u32.checked_shl(u32::from(state))
        .is_some_and(|bit| ENDED_STATES & bit != 0)
}

/// The `inet_diag_msg` at the start of a socket's body.
fn diag_msg(body: &[u8]) -> Result<&[u8], DumpError> {
    body.get(..DIAG_MSG)
        .ok_or_else(|| DumpError::Malformed(format!("a socket entry of {} bytes", body.len())))
}

/// The local and remote ends of an `inet_diag_msg`.
fn ends(msg: &[u8]) -> Result<(SocketAddr, SocketAddr), DumpError> {
    let bad = |what: String| DumpError::Malformed(what);
    let sport = u16::from_be_bytes([msg[4], msg[5]]);
    let dport = u16::from_be_bytes([msg[6], msg[7]]);
    let (src, dst) = (&msg[8..24], &msg[24..40]);
    let ip = |bytes: &[u8]| -> Result<IpAddr, DumpError> {
        match msg[0] {
            2 => Ok(IpAddr::V4(Ipv4Addr::new(
                bytes[0], bytes[1], bytes[2], bytes[3],
            ))),
            10 => {
                let mut b = [0u8; 16];
                b.copy_from_slice(bytes);
                Ok(IpAddr::V6(Ipv6Addr::from(b)))
            }
            other => Err(bad(format!("address family {other}"))),
        }
    };
    Ok((
        SocketAddr::new(ip(src)?, sport),
        SocketAddr::new(ip(dst)?, dport),
    ))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[cfg(test)]
mod tests;
