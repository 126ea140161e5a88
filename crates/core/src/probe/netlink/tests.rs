use super::*;

/// One `inet_diag_msg` as the kernel lays it out.
fn diag(family: u8, state: u8, local: SocketAddr, remote: SocketAddr, inode: u32) -> Vec<u8> {
    let mut m = vec![family, state, 0, 0];
    m.extend_from_slice(&local.port().to_be_bytes());
    m.extend_from_slice(&remote.port().to_be_bytes());
    for addr in [local, remote] {
        let mut b = [0u8; 16];
        match addr.ip() {
            IpAddr::V4(v4) => b[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => b.copy_from_slice(&v6.octets()),
        }
        m.extend_from_slice(&b);
    }
    m.extend_from_slice(&[0; 12]); // interface, cookie
    m.extend_from_slice(&[0; 12]); // expires, rqueue, wqueue
    m.extend_from_slice(&1000u32.to_ne_bytes()); // uid
    m.extend_from_slice(&inode.to_ne_bytes());
    assert_eq!(m.len(), DIAG_MSG);
    m
}

fn message(kind: u16, flags: u16, seq: u32, body: &[u8]) -> Vec<u8> {
    let len = HEADER + body.len();
    let mut out = (len as u32).to_ne_bytes().to_vec();
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(body);
    out.resize((out.len() + 3) & !3, 0);
    out
}

fn a(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn sample(seq: u32) -> Vec<u8> {
    let mut buf = message(
        SOCK_DIAG_BY_FAMILY,
        2,
        seq,
        &diag(2, 10, a("127.0.0.1:5173"), a("0.0.0.0:0"), 4242),
    );
    buf.extend(message(
        SOCK_DIAG_BY_FAMILY,
        2,
        seq,
        &diag(2, 1, a("127.0.0.1:5173"), a("127.0.0.1:40000"), 0),
    ));
    buf
}

#[test]
fn the_request_asks_for_every_tcp_socket_in_listen_established_or_syn_recv_state() {
    let req = dump_request(Family::V6, 7);
    assert_eq!(req.len(), 72);
    assert_eq!(u32_at(&req, 0), 72);
    assert_eq!(u16::from_ne_bytes([req[4], req[5]]), 20);
    assert_eq!(u16::from_ne_bytes([req[6], req[7]]), 0x301);
    assert_eq!(u32_at(&req, 8), 7);
    assert_eq!(&req[16..20], &[10, 6, 0, 0]);
    assert_eq!(u32_at(&req, 20), (1 << 1) | (1 << 3) | (1 << 10));
    assert!(
        req[24..].iter().all(|&b| b == 0),
        "the socket id matches all"
    );
}

#[test]
fn the_request_for_both_families_is_the_older_one_with_no_family() {
    let req = dump_request_both(9);
    assert_eq!(req.len(), 76);
    assert_eq!(u32_at(&req, 0), 76);
    assert_eq!(u16::from_ne_bytes([req[4], req[5]]), 18, "TCPDIAG_GETSOCK");
    assert_eq!(u16::from_ne_bytes([req[6], req[7]]), 0x301);
    assert_eq!(u32_at(&req, 8), 9);
    assert_eq!(
        &req[16..20],
        &[0, 0, 0, 0],
        "AF_UNSPEC, no lengths, no extensions"
    );
    assert!(
        req[20..68].iter().all(|&b| b == 0),
        "the socket id matches all"
    );
    assert_eq!(u32_at(&req, 68), (1 << 1) | (1 << 3) | (1 << 10));
    assert_eq!(u32_at(&req, 72), 0, "no bytecode");
}

#[test]
fn an_answer_to_the_older_request_decodes_as_the_newer() {
    let mut buf = message(
        TCPDIAG_GETSOCK,
        2,
        4,
        &diag(10, 10, a("[::1]:8000"), a("[::]:0"), 77),
    );
    buf.extend(message(NLMSG_DONE, 2, 4, &0i32.to_ne_bytes()));
    match parse_chunk(&buf, 4).unwrap() {
        Chunk::Done(rows) => {
            assert_eq!(rows.len(), 1);
            assert_eq!((rows[0].local, rows[0].inode), (a("[::1]:8000"), 77));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sockets_decode_with_ports_in_network_order_and_inode_zero_for_unaccepted() {
    let rows = match parse_chunk(&sample(3), 3).unwrap() {
        Chunk::More(rows) => rows,
        other => panic!("{other:?}"),
    };
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].local, a("127.0.0.1:5173"));
    assert_eq!(rows[0].state, TcpState::Listen);
    assert_eq!(rows[0].inode, 4242);
    assert_eq!(rows[1].remote, a("127.0.0.1:40000"));
    assert_eq!(rows[1].state, TcpState::Established);
    assert_eq!(
        rows[1].inode, 0,
        "a connection not yet accepted has no inode"
    );
}

#[test]
fn ipv6_and_mapped_ipv4_addresses_keep_every_byte() {
    let body = diag(
        10,
        1,
        a("[::ffff:127.0.0.1]:8080"),
        a("[2001:db8::1]:50000"),
        9,
    );
    let buf = message(SOCK_DIAG_BY_FAMILY, 2, 1, &body);
    let Chunk::More(rows) = parse_chunk(&buf, 1).unwrap() else {
        panic!("not a plain chunk");
    };
    assert_eq!(rows[0].local, a("[::ffff:127.0.0.1]:8080"));
    assert_eq!(rows[0].remote, a("[2001:db8::1]:50000"));
}

#[test]
fn done_ends_the_dump_and_keeps_the_rows_before_it() {
    let mut buf = sample(5);
    buf.extend(message(NLMSG_DONE, 2, 5, &0i32.to_ne_bytes()));
    match parse_chunk(&buf, 5).unwrap() {
        Chunk::Done(rows) => assert_eq!(rows.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dump_that_ends_with_an_error_is_no_table() {
    // DONE carrying -ENOENT (no tcp_diag), after rows already sent: never "these rows".
    let mut buf = sample(5);
    buf.extend(message(NLMSG_DONE, 2, 5, &(-2i32).to_ne_bytes()));
    assert_eq!(parse_chunk(&buf, 5), Err(DumpError::Refused(2)));
    let alone = message(NLMSG_DONE, 2, 5, &(-90i32).to_ne_bytes());
    assert_eq!(parse_chunk(&alone, 5), Err(DumpError::Refused(90)));
}

#[test]
fn a_servers_half_open_end_decodes_as_syn_recv_with_no_inode() {
    // A request socket (a client held in SYN-RECV by TCP_DEFER_ACCEPT): state 3, inode 0.
    let body = diag(2, 3, a("127.0.0.1:5173"), a("127.0.0.1:40000"), 0);
    let buf = message(SOCK_DIAG_BY_FAMILY, 2, 1, &body);
    let Chunk::More(rows) = parse_chunk(&buf, 1).unwrap() else {
        panic!("one more buffer expected");
    };
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].state, TcpState::SynRecv);
    assert_eq!(rows[0].local, a("127.0.0.1:5173"));
    assert_eq!(rows[0].remote, a("127.0.0.1:40000"));
    assert_eq!(rows[0].inode, 0);
}

#[test]
fn states_pier_does_not_read_are_skipped() {
    // TIME_WAIT (6): a kernel that ignored the state filter must not add rows.
    let body = diag(2, 6, a("127.0.0.1:1"), a("127.0.0.1:2"), 1);
    let buf = message(SOCK_DIAG_BY_FAMILY, 2, 1, &body);
    assert_eq!(parse_chunk(&buf, 1).unwrap(), Chunk::More(vec![]));
}

#[test]
fn a_refusal_carries_the_kernels_errno() {
    let mut body = (-2i32).to_ne_bytes().to_vec();
    body.extend_from_slice(&[0; 16]);
    let buf = message(NLMSG_ERROR, 0, 9, &body);
    assert_eq!(parse_chunk(&buf, 9), Err(DumpError::Refused(2)));
    let truncated = message(NLMSG_ERROR, 0, 9, &[0xff, 0xff]);
    assert!(matches!(
        parse_chunk(&truncated, 9),
        Err(DumpError::Malformed(_))
    ));
}

#[test]
fn an_interrupted_dump_or_an_answer_to_another_request_is_refused() {
    let body = diag(2, 10, a("127.0.0.1:1"), a("0.0.0.0:0"), 1);
    let interrupted = message(SOCK_DIAG_BY_FAMILY, 2 | NLM_F_DUMP_INTR, 4, &body);
    assert_eq!(parse_chunk(&interrupted, 4), Err(DumpError::Interrupted));
    assert!(matches!(
        parse_chunk(&sample(4), 5),
        Err(DumpError::Malformed(_))
    ));
    let other_type = message(99, 2, 4, &body);
    assert!(matches!(
        parse_chunk(&other_type, 4),
        Err(DumpError::Malformed(_))
    ));
}

#[test]
fn every_truncation_and_every_corrupted_length_fails_without_panicking() {
    let whole = sample(1);
    for cut in 1..whole.len() {
        // A cut on a message boundary is a valid (shorter) chunk; any other cut is an error.
        let result = parse_chunk(&whole[..cut], 1);
        if cut == whole.len() / 2 {
            assert!(result.is_ok());
        } else {
            assert!(result.is_err(), "a cut at {cut} was accepted");
        }
    }
    for len in [0u32, 1, 15, 17, 88, 89, u32::MAX] {
        let mut buf = whole.clone();
        buf[..4].copy_from_slice(&len.to_ne_bytes());
        let _ = parse_chunk(&buf, 1);
    }
    // A message too short to hold a socket entry.
    let short = message(SOCK_DIAG_BY_FAMILY, 2, 1, &[2, 10, 0, 0]);
    assert!(parse_chunk(&short, 1).is_err());
    // An unknown address family.
    let body = diag(7, 10, a("127.0.0.1:1"), a("0.0.0.0:0"), 1);
    assert!(parse_chunk(&message(SOCK_DIAG_BY_FAMILY, 2, 1, &body), 1).is_err());
}

#[test]
fn the_ended_requests_ask_for_every_closed_or_closing_state_and_no_live_one() {
    // FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT, LAST-ACK, CLOSING; not CLOSE-WAIT (8), a leftover
    // its holder keeps.
    let ended = (1 << 4) | (1 << 5) | (1 << 6) | (1 << 9) | (1 << 11);
    let req = ended_request(Family::V4, 7);
    assert_eq!(req.len(), 72);
    assert_eq!(&req[16..20], &[2, 6, 0, 0]);
    assert_eq!(u32_at(&req, 20), ended);
    let both = ended_request_both(9);
    assert_eq!(both.len(), 76);
    assert_eq!(
        u16::from_ne_bytes([both[4], both[5]]),
        18,
        "TCPDIAG_GETSOCK"
    );
    assert_eq!(u32_at(&both, 68), ended);
    assert_eq!(
        &dump_request(Family::V4, 7)[..20],
        &req[..20],
        "the same request but for its states"
    );
    assert_eq!(u32_at(&dump_request(Family::V4, 7), 20), STATES);
}

/// Each closed or closing state decodes to its two ends, IPv4 and IPv6; a live state
/// (LISTEN, ESTABLISHED, SYN-RECV, and CLOSE and CLOSE-WAIT, which the request does not ask
/// for) is left out even if a kernel sent it.
#[test]
fn ended_rows_decode_their_two_ends_and_live_states_are_left_out() {
    let mut buf = Vec::new();
    for state in [4, 5, 6, 9, 11] {
        buf.extend(message(
            TCPDIAG_GETSOCK,
            2,
            3,
            &diag(2, state, a("127.0.0.1:5173"), a("127.0.0.1:40000"), 0),
        ));
    }
    buf.extend(message(
        TCPDIAG_GETSOCK,
        2,
        3,
        &diag(10, 6, a("[::1]:8000"), a("[::1]:50000"), 0),
    ));
    for live in [1, 3, 7, 8, 10, 12, 200] {
        buf.extend(message(
            TCPDIAG_GETSOCK,
            2,
            3,
            &diag(2, live, a("127.0.0.1:1"), a("127.0.0.1:2"), 9),
        ));
    }
    buf.extend(message(NLMSG_DONE, 2, 3, &0i32.to_ne_bytes()));
    let Chunk::Done(rows) = parse_ended_chunk(&buf, 3).unwrap() else {
        panic!("the dump ends");
    };
    let server = Ended {
        local: a("127.0.0.1:5173"),
        remote: a("127.0.0.1:40000"),
    };
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert!(rows[..5].iter().all(|r| *r == server));
    assert_eq!(
        rows[5],
        Ended {
            local: a("[::1]:8000"),
            remote: a("[::1]:50000")
        }
    );
}

#[test]
fn an_ended_dump_fails_whole_as_the_table_does() {
    let mut interrupted = message(
        TCPDIAG_GETSOCK,
        NLM_F_DUMP_INTR,
        4,
        &diag(2, 6, a("127.0.0.1:1"), a("127.0.0.1:2"), 0),
    );
    assert_eq!(
        parse_ended_chunk(&interrupted, 4),
        Err(DumpError::Interrupted)
    );
    interrupted.truncate(HEADER + 10);
    assert!(parse_ended_chunk(&interrupted, 4).is_err());
    let refused = message(NLMSG_ERROR, 0, 4, &(-2i32).to_ne_bytes());
    assert_eq!(parse_ended_chunk(&refused, 4), Err(DumpError::Refused(2)));
}
