//! A unix socket from the `struct socket_fdinfo` that `proc_pidfdinfo(PROC_PIDFDSOCKETINFO)`
//! writes (NOT RUN on a Mac: written from XNU's `bsd/sys/proc_info.h` and `bsd/kern/
//! socket_info.c` `fill_socketinfo`, the offsets pinned against libproc's mirror in
//! `darwin_layout.rs`). For a `PF_UNIX` socket the kernel sets `soi_kind = SOCKINFO_UN` and
//! fills `pri_un`: `unsi_conn_so`, the hashed handle of the connected socket (the same hash
//! as every socket's own `soi_so`, so the two ends name each other), and `unsi_addr`, the
//! bound `sockaddr_un` copied `sun_len` bytes long — which an accepted socket carries from
//! its listener (`unp_connect` copies the listener's `unp_addr`). A listener has
//! `SO_ACCEPTCONN` in `soi_options`, and its accept queue in `soi_qlen`.

use super::socket_fdinfo as at;
use super::{field, DecodeError};
use crate::probe::unix::UnixRow;
use crate::probe::UnixPeer;

/// `SOCKINFO_UN` (XNU `bsd/sys/proc_info.h`).
pub const SOCKINFO_UN: i32 = 3;
/// `SO_ACCEPTCONN` (XNU `bsd/sys/socket.h`): the socket listens.
pub const SO_ACCEPTCONN: i16 = 0x0002;
/// `SOCK_STREAM`, `SOCK_SEQPACKET` (XNU `bsd/sys/socket.h`).
const SOCK_STREAM: i32 = 1;
const SOCK_SEQPACKET: i32 = 5;
/// `psi.soi_type` (`int`), after `soi_stat` (136), `soi_so` and `soi_pcb`.
pub const SOI_TYPE: usize = at::PSI + 152;
/// `psi.soi_options` (`short`), after `soi_type`, `soi_protocol` and `soi_family`.
pub const SOI_OPTIONS: usize = at::PSI + 164;
/// `pri_un.unsi_conn_so` (`uint64_t`), at the union's start.
pub const UNSI_CONN_SO: usize = at::SOI_PROTO;
/// `pri_un.unsi_addr` (a `sockaddr_un` in a `SOCK_MAXADDRLEN` union), after `unsi_conn_so`
/// and `unsi_conn_pcb`: `sun_len`, `sun_family`, then `sun_path[104]`.
pub const UNSI_ADDR: usize = at::SOI_PROTO + 16;
/// `sizeof(sun_path)`.
const SUN_PATH: usize = 104;

const _: () = assert!(UNSI_ADDR + 2 + SUN_PATH <= at::SIZE);

/// Decodes a unix socket's `struct socket_fdinfo`: `Ok(None)` for any other socket, a
/// datagram one, or one neither listening nor ever connected — an error for a buffer of any
/// other size than the struct's. `inode` of the row is the socket's handle (`soi_so`).
pub fn decode_unix_fdinfo(buf: &[u8]) -> Result<Option<UnixRow>, DecodeError> {
    if buf.len() != at::SIZE {
        return Err(DecodeError::SocketInfoSize(buf.len()));
    }
    if i32::from_ne_bytes(field(buf, at::SOI_KIND)?) != SOCKINFO_UN {
        return Ok(None);
    }
    let kind = i32::from_ne_bytes(field(buf, SOI_TYPE)?);
    if kind != SOCK_STREAM && kind != SOCK_SEQPACKET {
        return Ok(None);
    }
    let listening = i16::from_ne_bytes(field(buf, SOI_OPTIONS)?) & SO_ACCEPTCONN != 0;
    let conn = u64::from_ne_bytes(field(buf, UNSI_CONN_SO)?);
    let [sun_len, _family] = field(buf, UNSI_ADDR)?;
    let path_len = usize::from(sun_len).saturating_sub(2).min(SUN_PATH);
    let path = &buf[UNSI_ADDR + 2..UNSI_ADDR + 2 + path_len];
    let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
    let name = (end > 0).then(|| path[..end].to_vec());
    let (peer, queued) = if listening {
        let qlen = i16::from_ne_bytes(field(buf, at::SOI_QLEN)?);
        (UnixPeer::Unknown, Some(u32::try_from(qlen).unwrap_or(0)))
    } else if conn == 0 {
        // Not connected, or its peer has closed: nobody is attached through it.
        (UnixPeer::Closed, None)
    } else {
        (UnixPeer::Socket(conn), None)
    };
    Ok(Some(UnixRow {
        inode: u64::from_ne_bytes(field(buf, at::SOI_SO)?),
        name,
        listening,
        peer,
        queued,
    }))
}

#[cfg(test)]
mod tests {
    //! Buffers written as `fill_socketinfo` writes them, at absolute offsets worked out from
    //! the header by hand (not the constants above): `pfi` is 24 bytes, `soi_so` at 160,
    //! `soi_type` at 176, `soi_options` at 188, `soi_qlen` at 194, `soi_kind` at 256, the
    //! union at 264: `unsi_conn_so` at 264, `unsi_addr` at 280.
    use super::*;

    fn socket(so: u64, kind: i32, options: i16, qlen: i16, conn: u64, path: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 792];
        b[160..168].copy_from_slice(&so.to_ne_bytes());
        b[176..180].copy_from_slice(&kind.to_ne_bytes());
        b[188..190].copy_from_slice(&options.to_ne_bytes());
        b[194..196].copy_from_slice(&qlen.to_ne_bytes());
        b[256..260].copy_from_slice(&3i32.to_ne_bytes());
        b[264..272].copy_from_slice(&conn.to_ne_bytes());
        if !path.is_empty() {
            b[280] = (2 + path.len() + 1) as u8; // sun_len counts the NUL a bind copies
            b[281] = 1; // AF_UNIX
            b[282..282 + path.len()].copy_from_slice(path);
        }
        b
    }

    #[test]
    fn a_listener_its_accepted_end_and_a_client_decode_with_names_and_peers() {
        let l = decode_unix_fdinfo(&socket(0xa, 1, 0x2, 3, 0, b"/tmp/d.sock"))
            .unwrap()
            .unwrap();
        assert_eq!((l.inode, l.listening, l.queued), (0xa, true, Some(3)));
        assert_eq!(l.name.as_deref(), Some(&b"/tmp/d.sock"[..]));
        let s = decode_unix_fdinfo(&socket(0xb, 1, 0, 0, 0xc, b"/tmp/d.sock"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (s.listening, s.peer, s.name.is_some()),
            (false, UnixPeer::Socket(0xc), true)
        );
        let c = decode_unix_fdinfo(&socket(0xc, 5, 0, 0, 0xb, b""))
            .unwrap()
            .unwrap();
        assert_eq!((c.name, c.peer), (None, UnixPeer::Socket(0xb)));
        let gone = decode_unix_fdinfo(&socket(0xb, 1, 0, 0, 0, b"/tmp/d.sock"))
            .unwrap()
            .unwrap();
        assert_eq!(gone.peer, UnixPeer::Closed);
    }

    #[test]
    fn other_sockets_and_other_sizes_are_none_or_errors() {
        // A datagram socket; a TCP one.
        assert_eq!(
            decode_unix_fdinfo(&socket(1, 2, 0, 0, 0, b"/x")).unwrap(),
            None
        );
        let mut tcp = socket(1, 1, 0, 0, 0, b"");
        tcp[256..260].copy_from_slice(&2i32.to_ne_bytes());
        assert_eq!(decode_unix_fdinfo(&tcp).unwrap(), None);
        assert!(decode_unix_fdinfo(&[0u8; 100]).is_err());
        // A sun_len past the path's room reads no further than sun_path.
        let mut long = socket(1, 1, 0x2, 0, 0, b"/x");
        long[280] = 255;
        let row = decode_unix_fdinfo(&long).unwrap().unwrap();
        assert_eq!(row.name.as_deref(), Some(&b"/x"[..]));
    }
}
