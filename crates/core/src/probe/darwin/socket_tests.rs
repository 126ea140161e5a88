//! `decode_socket_fdinfo` against buffers written the way XNU writes them.
//!
//! The fixture builder below follows the kernel's writer code, not the decoder: XNU
//! `bsd/kern/proc_info.c` `pid_socketinfo` zeroes a `struct socket_fdinfo` (so padding and
//! reserved words are 0), `fill_fileinfo` fills `pfi`, `bsd/kern/socket_info.c`
//! `fill_socketinfo` fills `psi` — `soi_kind = SOCKINFO_IN`, then `SOCKINFO_TCP` for a stream
//! socket with a TCP control block, the ports copied from the `inpcb` as network-order
//! `u_short`s widened to `int`, the addresses as the 16-byte `in4in6_addr` / `in6_addr` union
//! (an IPv4 address in its last 4 bytes, after 12 bytes of padding) — and all 792 bytes are
//! copied out. Every offset it writes at is an absolute number worked out from
//! `bsd/sys/proc_info.h` by hand, on purpose not the decoder's `socket_fdinfo::*` constants:
//! a wrong constant there then fails these tests instead of agreeing with itself.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::{decode_socket_fdinfo, socket_fdinfo, DecodeError, SocketRow};
use crate::probe::TcpState;

/// `INP_IPV4` / `INP_IPV6` (XNU `bsd/netinet/in_pcb.h`), copied into `insi_vflag`.
const INP_IPV4: u8 = 0x1;
const INP_IPV6: u8 = 0x2;
/// `SOCKINFO_IN`, `SOCKINFO_TCP`, `SOCKINFO_UN` (XNU `bsd/sys/proc_info.h`).
const SOCKINFO_IN: i32 = 1;
const SOCKINFO_TCP: i32 = 2;
const SOCKINFO_UN: i32 = 3;
/// `TSI_S_*` (XNU `bsd/sys/proc_info.h`).
const TSI_S_LISTEN: i32 = 1;
const TSI_S_SYN_SENT: i32 = 2;
const TSI_S_SYN_RECEIVED: i32 = 3;
const TSI_S_ESTABLISHED: i32 = 4;
const TSI_S_CLOSE_WAIT: i32 = 5;
const TSI_S_TIME_WAIT: i32 = 10;

/// The state of one socket that `fill_socketinfo` copies out, as the kernel holds it.
struct KernelSocket {
    /// `VM_KERNEL_ADDRHASH(so)`.
    handle: u64,
    /// `inp_vflag`.
    vflag: u8,
    local: SocketAddr,
    remote: SocketAddr,
    /// `tp->t_state`.
    state: i32,
    /// `so_qlen`, `so_incqlen`.
    qlen: i16,
    incqlen: i16,
}

fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// The 16 bytes of an `insi_laddr` / `insi_faddr` union as the kernel copies `inp_dependladdr`:
/// an `in6_addr`, or an `in4in6_addr` — `i46a_pad32[3]` (zero) then `i46a_addr4`.
fn in4in6(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V6(v6) => v6.octets(),
        IpAddr::V4(v4) => {
            let mut b = [0u8; 16];
            b[12..].copy_from_slice(&v4.octets());
            b
        }
    }
}

/// `inp_lport` / `inp_fport` is a `u_short` in network order; `insi_lport = inp->inp_lport`
/// widens its value to an `int`, stored in the machine's order.
fn widened_port(port: u16) -> [u8; 4] {
    i32::from(port.to_be()).to_ne_bytes()
}

/// What `pid_socketinfo` copies out for a TCP socket. Offsets from the start of
/// `struct socket_fdinfo`; `psi` starts at 24 and its `soi_proto` union at 264.
fn tcp_fdinfo(s: &KernelSocket) -> Vec<u8> {
    let mut b = vec![0u8; 792]; // bzero(&s, sizeof(struct socket_fdinfo))
                                // fill_fileinfo: pfi.fi_openflags (FREAD|FWRITE), pfi.fi_type (DTYPE_SOCKET).
    put(&mut b, 0, &3u32.to_ne_bytes());
    put(&mut b, 16, &2i32.to_ne_bytes());
    // fill_common_sockinfo. psi.soi_stat (24..160) stays zero for a socket.
    put(&mut b, 160, &s.handle.to_ne_bytes()); // soi_so
    put(&mut b, 168, &0x5eed_0000_0000_1234u64.to_ne_bytes()); // soi_pcb
    put(&mut b, 176, &1i32.to_ne_bytes()); // soi_type = SOCK_STREAM
    put(&mut b, 180, &6i32.to_ne_bytes()); // soi_protocol = IPPROTO_TCP
    let family: i32 = if s.vflag & INP_IPV6 != 0 { 30 } else { 2 }; // AF_INET6 / AF_INET
    put(&mut b, 184, &family.to_ne_bytes()); // soi_family
    put(&mut b, 188, &0x0104i16.to_ne_bytes()); // soi_options (SO_REUSEADDR|SO_ACCEPTCONN)
    put(&mut b, 192, &0x0080i16.to_ne_bytes()); // soi_state
    put(&mut b, 194, &s.qlen.to_ne_bytes()); // soi_qlen
    put(&mut b, 196, &s.incqlen.to_ne_bytes()); // soi_incqlen
    put(&mut b, 198, &128i16.to_ne_bytes()); // soi_qlimit
    put(&mut b, 208, &131_072u32.to_ne_bytes()); // soi_rcv.sbi_cc .. (a struct sockbuf_info)
    put(&mut b, 232, &131_072u32.to_ne_bytes()); // soi_snd.sbi_cc
    put(&mut b, 256, &SOCKINFO_TCP.to_ne_bytes()); // soi_kind; 260 rfu_1 stays zero
                                                   // soi_proto.pri_tcp.tcpsi_ini (struct in_sockinfo), from the inpcb.
    put(&mut b, 264, &widened_port(s.remote.port())); // insi_fport
    put(&mut b, 268, &widened_port(s.local.port())); // insi_lport
    put(&mut b, 272, &77u64.to_ne_bytes()); // insi_gencnt
    put(&mut b, 280, &0x0080_0000u32.to_ne_bytes()); // insi_flags
    b[288] = s.vflag; // insi_vflag
    b[289] = 64; // insi_ip_ttl; 290..292 padding, 292 rfu_1: zero
    put(&mut b, 296, &in4in6(s.remote.ip())); // insi_faddr
    put(&mut b, 312, &in4in6(s.local.ip())); // insi_laddr
    b[328] = 0x10; // insi_v4.in4_tos
    put(&mut b, 336, &(-1i32).to_ne_bytes()); // insi_v6.in6_cksum
    put(&mut b, 342, &(-1i16).to_ne_bytes()); // insi_v6.in6_hops
                                              // The TCP part, from the tcpcb.
    put(&mut b, 344, &s.state.to_ne_bytes()); // tcpsi_state
    put(&mut b, 348, &[0x11; 16]); // tcpsi_timer[TSI_T_NTIMERS]
    put(&mut b, 364, &16_344i32.to_ne_bytes()); // tcpsi_mss
    put(&mut b, 368, &0x1e0u32.to_ne_bytes()); // tcpsi_flags; 372 rfu_1 stays zero
    put(&mut b, 376, &0xfeed_0000_0000_5678u64.to_ne_bytes()); // tcpsi_tp
    b
}

fn listener(local: &str, qlen: i16, incqlen: i16) -> KernelSocket {
    let local: SocketAddr = local.parse().unwrap();
    let vflag = if local.is_ipv4() { INP_IPV4 } else { INP_IPV6 };
    let unspecified = match local.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    KernelSocket {
        handle: 0x8a3f_19c2_0b4e_7701,
        vflag,
        local,
        remote: SocketAddr::new(unspecified, 0),
        state: TSI_S_LISTEN,
        qlen,
        incqlen,
    }
}

fn connection(local: &str, remote: &str) -> KernelSocket {
    let local: SocketAddr = local.parse().unwrap();
    KernelSocket {
        handle: 0x1c00_ffee_0000_0042,
        vflag: if local.is_ipv4() { INP_IPV4 } else { INP_IPV6 },
        local,
        remote: remote.parse().unwrap(),
        state: TSI_S_ESTABLISHED,
        qlen: 0,
        incqlen: 0,
    }
}

#[test]
fn an_ipv4_listener_gives_its_address_port_handle_and_whole_queue() {
    // Three connections queued, one of them still half-open: all three are clients waiting.
    let s = listener("127.0.0.1:5173", 3, 1);
    assert_eq!(
        decode_socket_fdinfo(&tcp_fdinfo(&s)),
        Ok(Some(SocketRow {
            handle: 0x8a3f_19c2_0b4e_7701,
            local: "127.0.0.1:5173".parse().unwrap(),
            remote: "0.0.0.0:0".parse().unwrap(),
            state: TcpState::Listen,
            queued: Some(3),
        }))
    );
}

#[test]
fn an_ipv6_connection_gives_both_ends_and_no_queue() {
    let s = connection("[::1]:8000", "[::1]:51234");
    assert_eq!(
        decode_socket_fdinfo(&tcp_fdinfo(&s)),
        Ok(Some(SocketRow {
            handle: 0x1c00_ffee_0000_0042,
            local: "[::1]:8000".parse().unwrap(),
            remote: "[::1]:51234".parse().unwrap(),
            state: TcpState::Established,
            queued: None,
        }))
    );
}

#[test]
fn a_dual_stack_listener_is_the_ipv6_wildcard() {
    // tcp6_usr_bind (XNU bsd/netinet/tcp_usrreq.c): `::` without IPV6_V6ONLY sets
    // INP_IPV4 as well as INP_IPV6.
    let mut s = listener("[::]:3000", 0, 0);
    s.vflag = INP_IPV4 | INP_IPV6;
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.local, "[::]:3000".parse().unwrap());
    assert_eq!(row.remote, "[::]:0".parse().unwrap());
    assert_eq!(row.queued, Some(0));
}

#[test]
fn an_ipv4_client_accepted_by_a_dual_stack_listener_reads_as_ipv4() {
    // tcp_input (XNU bsd/netinet/tcp_input.c) turns the accepted pcb into INP_IPV4 only,
    // the addresses in the last 4 bytes of their unions.
    let s = connection("127.0.0.1:3000", "127.0.0.1:60001");
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.local, "127.0.0.1:3000".parse().unwrap());
    assert_eq!(row.remote, "127.0.0.1:60001".parse().unwrap());
}

#[test]
fn a_queue_of_only_half_open_connections_counts_and_a_negative_one_is_zero() {
    // A client the server has not completed the handshake with is a client all the same.
    let s = listener("127.0.0.1:5173", 1, 1);
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.queued, Some(1));
    // No kernel writes a negative count (a corrupt record): none, not a huge one.
    let s = listener("127.0.0.1:5173", i16::MIN, 0);
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.queued, Some(0));
    // soi_incqlen does not shorten the queue, whatever it says.
    let s = listener("127.0.0.1:5173", i16::MAX, i16::MIN);
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.queued, Some(i16::MAX as u32));
}

#[test]
fn udp_and_unix_sockets_are_not_rows() {
    // fill_socketinfo stops at SOCKINFO_IN for a datagram socket: pri_in, no TCP part.
    let mut udp = tcp_fdinfo(&connection("127.0.0.1:5353", "0.0.0.0:0"));
    udp[256..260].copy_from_slice(&SOCKINFO_IN.to_ne_bytes());
    udp[176..180].copy_from_slice(&2i32.to_ne_bytes()); // SOCK_DGRAM
    udp[180..184].copy_from_slice(&17i32.to_ne_bytes()); // IPPROTO_UDP
    udp[344..384].fill(0);
    assert_eq!(decode_socket_fdinfo(&udp), Ok(None));

    // A unix socket: soi_proto holds pri_un (struct un_sockinfo) — unsi_conn_so,
    // unsi_conn_pcb, then the bound sockaddr_un — nothing that reads as ports.
    let mut unix = vec![0u8; 792];
    put(&mut unix, 160, &0xabcd_u64.to_ne_bytes()); // soi_so
    put(&mut unix, 176, &1i32.to_ne_bytes()); // soi_type = SOCK_STREAM
    put(&mut unix, 184, &1i32.to_ne_bytes()); // soi_family = AF_UNIX
    put(&mut unix, 256, &SOCKINFO_UN.to_ne_bytes()); // soi_kind
    put(&mut unix, 264, &0x1234_5678_9abc_def0u64.to_ne_bytes()); // unsi_conn_so
    unix[280] = 13; // unsi_addr.ua_sun.sun_len: 2 + the path's length
    unix[281] = 1; // sun_family = AF_UNIX
    put(&mut unix, 282, b"/tmp/x.sock"); // sun_path
    put(&mut unix, 344, &TSI_S_LISTEN.to_ne_bytes()); // bytes of sun_path's tail, not a state
    assert_eq!(decode_socket_fdinfo(&unix), Ok(None));
}

#[test]
fn a_servers_half_open_end_is_a_syn_recv_row_with_no_queue() {
    let mut s = connection("127.0.0.1:8000", "127.0.0.1:51000");
    s.state = TSI_S_SYN_RECEIVED;
    let row = decode_socket_fdinfo(&tcp_fdinfo(&s)).unwrap().unwrap();
    assert_eq!(row.state, TcpState::SynRecv);
    assert_eq!(row.local, "127.0.0.1:8000".parse().unwrap());
    assert_eq!(row.remote, "127.0.0.1:51000".parse().unwrap());
    assert_eq!(row.queued, None);
}

#[test]
fn tcp_sockets_in_other_states_are_not_rows() {
    for state in [
        0,
        TSI_S_SYN_SENT,
        TSI_S_CLOSE_WAIT,
        TSI_S_TIME_WAIT,
        11,
        -1,
        99,
    ] {
        let mut s = connection("127.0.0.1:8000", "127.0.0.1:51000");
        s.state = state;
        assert_eq!(
            decode_socket_fdinfo(&tcp_fdinfo(&s)),
            Ok(None),
            "tcpsi_state {state}"
        );
    }
}

#[test]
fn a_tcp_socket_of_no_known_family_is_not_a_row() {
    let mut s = connection("127.0.0.1:8000", "127.0.0.1:51000");
    s.vflag = 0;
    assert_eq!(decode_socket_fdinfo(&tcp_fdinfo(&s)), Ok(None));
}

#[test]
fn a_truncated_or_oversized_buffer_is_an_error_never_a_panic() {
    let full = tcp_fdinfo(&listener("127.0.0.1:5173", 2, 0));
    // Cut before pfi ends, inside soi_so, right at soi_kind, inside the ports, before
    // tcpsi_state, and one byte short.
    for len in [0, 1, 23, 24, 163, 256, 260, 266, 300, 344, 347, 791] {
        let err = decode_socket_fdinfo(&full[..len]).unwrap_err();
        assert_eq!(err, DecodeError::SocketInfoSize(len));
    }
    let err = DecodeError::SocketInfoSize(24).to_string();
    assert!(err.contains("24 bytes") && err.contains("792"), "{err}");
    let mut long = full.clone();
    long.push(0);
    assert!(decode_socket_fdinfo(&long).is_err(), "a different struct");
    assert!(decode_socket_fdinfo(&full).is_ok());
}

#[test]
fn only_the_named_fields_are_read() {
    // The same socket over a buffer whose every other byte is garbage, padding and reserved
    // words included, decodes the same: nothing else is read.
    let s = listener("127.0.0.1:5173", 3, 1);
    let zeroed = tcp_fdinfo(&s);
    let mut noisy = vec![0xEE; 792];
    for (at, len) in [
        (160, 8),  // soi_so
        (194, 4),  // soi_qlen, soi_incqlen
        (256, 4),  // soi_kind
        (264, 8),  // insi_fport, insi_lport
        (288, 1),  // insi_vflag
        (296, 32), // insi_faddr, insi_laddr
        (344, 4),  // tcpsi_state
    ] {
        noisy[at..at + len].copy_from_slice(&zeroed[at..at + len]);
    }
    assert_eq!(decode_socket_fdinfo(&noisy), decode_socket_fdinfo(&zeroed));
}

#[test]
fn the_offsets_are_the_headers() {
    // Worked out from XNU bsd/sys/proc_info.h by hand; darwin_layout.rs checks the same
    // numbers against the libproc crate's structs on every macOS type-check.
    assert_eq!(socket_fdinfo::SIZE, 792);
    assert_eq!(socket_fdinfo::SOI_SO, 160);
    assert_eq!(socket_fdinfo::SOI_QLEN, 194);
    assert_eq!(socket_fdinfo::SOI_INCQLEN, 196);
    assert_eq!(socket_fdinfo::SOI_KIND, 256);
    assert_eq!(socket_fdinfo::INSI_FPORT, 264);
    assert_eq!(socket_fdinfo::INSI_LPORT, 268);
    assert_eq!(socket_fdinfo::INSI_VFLAG, 288);
    assert_eq!(socket_fdinfo::INSI_FADDR, 296);
    assert_eq!(socket_fdinfo::INSI_LADDR, 312);
    assert_eq!(socket_fdinfo::TCPSI_STATE, 344);
}
