//! The unix-socket table, read as pure functions over bytes (compiled everywhere, tested
//! without a kernel): Linux's `sock_diag` dump for `AF_UNIX` ([`dump_request`],
//! [`parse_chunk`]), and `/proc/net/unix` ([`parse_proc_net_unix`]) when netlink cannot be
//! used. Only stream and seqpacket sockets, listening or connected: what a client attaches
//! to a daemon over (docs/design.md §2.4).
//!
//! Layouts (`linux/unix_diag.h`): the request is a 24-byte `unix_diag_req` (family, protocol,
//! pad, `udiag_states`, `udiag_ino`, `udiag_show`, cookie); each answer a 16-byte
//! `unix_diag_msg` (family, type, state, pad, inode, cookie) and netlink attributes (`rtattr`:
//! length, type, value padded to 4): `UNIX_DIAG_NAME` (the bound name's bytes, an abstract
//! one opening with NUL), `UNIX_DIAG_PEER` (the peer's inode, 0 once the peer has closed),
//! `UNIX_DIAG_RQLEN` (for a listener, the connections waiting to be accepted).
//!
//! A malformed answer fails the whole dump, as the TCP dump does.

use super::netlink::{parse_messages, request_header, Chunk, DumpError, SOCK_DIAG_BY_FAMILY};
use super::UnixPeer;

const AF_UNIX: u8 = 1;
const SOCK_STREAM: u8 = 1;
const SOCK_SEQPACKET: u8 = 5;
/// The kernel's unix sockets reuse TCP's state numbers.
const ESTABLISHED: u8 = 1;
const LISTEN: u8 = 10;
const UDIAG_SHOW_NAME: u32 = 0x1;
const UDIAG_SHOW_PEER: u32 = 0x4;
const UDIAG_SHOW_RQLEN: u32 = 0x10;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_PEER: u16 = 2;
const UNIX_DIAG_RQLEN: u16 = 4;
const MSG: usize = 16;
/// The most unix sockets a dump takes (a desktop holds a few thousand): past it the dump
/// fails rather than grow without bound.
pub const MAX_UNIX: usize = 262_144;
/// `__SO_ACCEPTCON` in `/proc/net/unix`'s flags: the socket listens.
const PROC_ACCEPTCON: u32 = 0x1_0000;

/// One unix socket as the kernel's table gives it, before its holders are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixRow {
    /// Its inode (what `socket:[inode]` in a process's fds names).
    pub inode: u64,
    /// Its name ([`super::UnixSocket::name`]).
    pub name: Option<Vec<u8>>,
    /// It listens.
    pub listening: bool,
    /// Its peer, for a connected socket.
    pub peer: UnixPeer,
    /// For a listener, connections waiting to be accepted, when the table says.
    pub queued: Option<u32>,
}

/// The dump request for every unix socket listening or connected, with its name, its peer
/// and (a listener's) accept queue.
pub fn dump_request(seq: u32) -> Vec<u8> {
    let len = super::netlink::HEADER + 24;
    let mut out = request_header(len, SOCK_DIAG_BY_FAMILY, seq);
    out.extend_from_slice(&[AF_UNIX, 0, 0, 0]);
    let states: u32 = (1 << ESTABLISHED) | (1 << LISTEN);
    out.extend_from_slice(&states.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes()); // any inode
    let show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN;
    out.extend_from_slice(&show.to_ne_bytes());
    out.resize(len, 0); // cookie: any
    out
}

/// Decodes one buffer of the unix dump numbered `seq`.
pub fn parse_chunk(buf: &[u8], seq: u32) -> Result<Chunk<UnixRow>, DumpError> {
    parse_messages(buf, seq, parse_msg)
}

/// One `unix_diag_msg` and its attributes: `Ok(None)` for a datagram socket or a state the
/// request did not ask for.
fn parse_msg(body: &[u8]) -> Result<Option<UnixRow>, DumpError> {
    let bad = |what: String| DumpError::Malformed(what);
    let msg = body
        .get(..MSG)
        .ok_or_else(|| bad(format!("a unix socket entry of {} bytes", body.len())))?;
    if msg[0] != AF_UNIX {
        return Err(bad(format!("address family {} in the unix dump", msg[0])));
    }
    let listening = match (msg[1], msg[2]) {
        (SOCK_STREAM | SOCK_SEQPACKET, LISTEN) => true,
        (SOCK_STREAM | SOCK_SEQPACKET, ESTABLISHED) => false,
        _ => return Ok(None),
    };
    let mut row = UnixRow {
        inode: u64::from(u32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]])),
        name: None,
        listening,
        // No peer attribute: unknown, which counts (a connected socket always has one).
        peer: UnixPeer::Unknown,
        queued: None,
    };
    let mut rest = &body[MSG..];
    while !rest.is_empty() {
        let head = rest
            .get(..4)
            .ok_or_else(|| bad("a truncated attribute".into()))?;
        let len = usize::from(u16::from_ne_bytes([head[0], head[1]]));
        let kind = u16::from_ne_bytes([head[2], head[3]]);
        let value = rest
            .get(4..len.max(4))
            .filter(|_| len >= 4)
            .ok_or_else(|| bad(format!("an attribute of length {len}")))?;
        match kind {
            UNIX_DIAG_NAME => row.name = name_of(value),
            UNIX_DIAG_PEER => {
                let v: [u8; 4] = value
                    .get(..4)
                    .and_then(|v| v.try_into().ok())
                    .ok_or_else(|| bad("a short peer attribute".into()))?;
                row.peer = match u32::from_ne_bytes(v) {
                    0 => UnixPeer::Closed,
                    inode => UnixPeer::Socket(u64::from(inode)),
                };
            }
            UNIX_DIAG_RQLEN if listening => {
                let v: [u8; 4] = value
                    .get(..4)
                    .and_then(|v| v.try_into().ok())
                    .ok_or_else(|| bad("a short queue attribute".into()))?;
                row.queued = Some(u32::from_ne_bytes(v));
            }
            _ => {}
        }
        rest = rest.get((len + 3) & !3..).unwrap_or_default();
    }
    Ok(Some(row))
}

/// A bound name as a person writes it: a path without its trailing NULs, an abstract name
/// (a leading NUL) as `@…`; `None` when it is empty (an unnamed socket).
fn name_of(raw: &[u8]) -> Option<Vec<u8>> {
    match raw.split_first() {
        None => None,
        Some((0, abstract_name)) => Some([b"@", abstract_name].concat()),
        Some(_) => {
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            (end > 0).then(|| raw[..end].to_vec())
        }
    }
}

/// `/proc/net/unix`: the same rows without peers (the file does not say), so every
/// connection read from it is unattributed and counts. Lines: `Num: RefCount Protocol Flags
/// Type St Inode [Path]`, numbers in hex but the inode; a listener has `__SO_ACCEPTCON` in its
/// flags; an abstract name is shown with `@` for each NUL. A line of any other shape fails
/// the read.
pub fn parse_proc_net_unix(text: &str) -> Result<Vec<UnixRow>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("line {}: {line:?}", n + 1);
        let mut fields = line.split_ascii_whitespace();
        let mut next = || fields.next().ok_or_else(bad);
        let _slot = next()?;
        let hex = |s: &str| u32::from_str_radix(s, 16).map_err(|_| bad());
        let (_refs, _proto) = (next()?, next()?);
        let flags = hex(next()?)?;
        let kind = hex(next()?)?;
        let state = hex(next()?)?;
        let inode: u64 = next()?.parse().map_err(|_| bad())?;
        let listening = flags & PROC_ACCEPTCON != 0;
        let stream = kind == u32::from(SOCK_STREAM) || kind == u32::from(SOCK_SEQPACKET);
        // SS_CONNECTED is 3; a listener is SS_UNCONNECTED (1).
        if !stream || !(listening || state == 3) {
            continue;
        }
        let name = path_after_inode(line).map(|p| p.as_bytes().to_vec());
        rows.push(UnixRow {
            inode,
            name,
            listening,
            peer: UnixPeer::Unknown,
            queued: None,
        });
    }
    Ok(rows)
}

/// The path field of a `/proc/net/unix` line: everything after the inode and one space (a
/// path may hold spaces).
fn path_after_inode(line: &str) -> Option<&str> {
    let mut rest = line;
    for _ in 0..7 {
        rest = rest.trim_start_matches(' ');
        let end = rest.find(' ')?;
        rest = &rest[end..];
    }
    let path = rest.strip_prefix(' ')?;
    (!path.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests;
