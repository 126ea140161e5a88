use super::*;

/// One netlink attribute, padded.
fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
    let mut a = ((4 + value.len()) as u16).to_ne_bytes().to_vec();
    a.extend_from_slice(&kind.to_ne_bytes());
    a.extend_from_slice(value);
    a.resize((a.len() + 3) & !3, 0);
    a
}

/// One `unix_diag_msg` and its attributes.
fn msg(kind: u8, state: u8, inode: u32, attrs: &[Vec<u8>]) -> Vec<u8> {
    let mut m = vec![AF_UNIX, kind, state, 0];
    m.extend_from_slice(&inode.to_ne_bytes());
    m.extend_from_slice(&[0xff; 8]); // cookie
    for a in attrs {
        m.extend_from_slice(a);
    }
    m
}

fn message(seq: u32, body: &[u8]) -> Vec<u8> {
    let len = 16 + body.len();
    let mut out = (len as u32).to_ne_bytes().to_vec();
    out.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    out.extend_from_slice(&2u16.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(body);
    out.resize((out.len() + 3) & !3, 0);
    out
}

fn rows(buf: &[u8]) -> Vec<UnixRow> {
    match parse_chunk(buf, 9).unwrap() {
        Chunk::More(r) | Chunk::Done(r) => r,
    }
}

#[test]
fn the_request_asks_for_listening_and_connected_unix_sockets_with_name_peer_and_queue() {
    let req = dump_request(4);
    assert_eq!(req.len(), 40);
    assert_eq!(&req[16..20], &[AF_UNIX, 0, 0, 0]);
    assert_eq!(req[20..24], ((1u32 << 1) | (1 << 10)).to_ne_bytes());
    assert_eq!(req[28..32], 0x15u32.to_ne_bytes());
}

#[test]
fn a_listener_its_accepted_end_and_the_client_decode_with_names_and_peers() {
    let path = b"/tmp/gopls-1-daemon.sock\0";
    let mut buf = message(
        9,
        &msg(
            SOCK_STREAM,
            LISTEN,
            100,
            &[
                attr(UNIX_DIAG_NAME, path),
                attr(UNIX_DIAG_RQLEN, &[2, 0, 0, 0, 128, 0, 0, 0]),
            ],
        ),
    );
    // The server's end of an accepted connection carries the listener's name.
    buf.extend(message(
        9,
        &msg(
            SOCK_STREAM,
            ESTABLISHED,
            101,
            &[
                attr(UNIX_DIAG_NAME, path),
                attr(UNIX_DIAG_PEER, &102u32.to_ne_bytes()),
            ],
        ),
    ));
    buf.extend(message(
        9,
        &msg(
            SOCK_SEQPACKET,
            ESTABLISHED,
            102,
            &[attr(UNIX_DIAG_PEER, &101u32.to_ne_bytes())],
        ),
    ));
    let got = rows(&buf);
    let name = Some(b"/tmp/gopls-1-daemon.sock".to_vec());
    assert_eq!(got.len(), 3);
    assert_eq!(
        (got[0].inode, got[0].listening, got[0].queued),
        (100, true, Some(2))
    );
    assert_eq!(got[0].name, name);
    assert_eq!(got[1].name, name);
    assert_eq!((got[1].peer, got[1].queued), (UnixPeer::Socket(102), None));
    assert_eq!(
        (got[2].name.clone(), got[2].peer),
        (None, UnixPeer::Socket(101))
    );
}

#[test]
fn an_abstract_name_reads_with_an_at_and_a_closed_peer_as_closed() {
    let buf = message(
        9,
        &msg(
            SOCK_STREAM,
            ESTABLISHED,
            7,
            &[
                attr(UNIX_DIAG_NAME, b"\0watch\0x"),
                attr(UNIX_DIAG_PEER, &0u32.to_ne_bytes()),
            ],
        ),
    );
    let got = rows(&buf);
    assert_eq!(got[0].name.as_deref(), Some(&b"@watch\0x"[..]));
    assert_eq!(got[0].peer, UnixPeer::Closed);
    // No peer attribute at all: unknown, which counts.
    let got = rows(&message(9, &msg(SOCK_STREAM, ESTABLISHED, 8, &[])));
    assert_eq!(got[0].peer, UnixPeer::Unknown);
}

#[test]
fn datagram_sockets_are_left_out() {
    let got = rows(&message(9, &msg(2, ESTABLISHED, 7, &[])));
    assert!(got.is_empty());
}

#[test]
fn truncated_or_hostile_entries_fail_the_dump() {
    // A body shorter than the message.
    assert!(parse_chunk(&message(9, &[AF_UNIX, 1, 1]), 9).is_err());
    // Another family.
    let mut m = msg(SOCK_STREAM, LISTEN, 1, &[]);
    m[0] = 2;
    assert!(parse_chunk(&message(9, &m), 9).is_err());
    // An attribute claiming more than the body holds, or less than its own header.
    for len in [200u16, 2] {
        let mut m = msg(SOCK_STREAM, LISTEN, 1, &[]);
        m.extend_from_slice(&len.to_ne_bytes());
        m.extend_from_slice(&UNIX_DIAG_NAME.to_ne_bytes());
        assert!(parse_chunk(&message(9, &m), 9).is_err(), "{len}");
    }
    // A peer attribute too short for its inode.
    let m = msg(
        SOCK_STREAM,
        ESTABLISHED,
        1,
        &[attr(UNIX_DIAG_PEER, &[1, 2])],
    );
    assert!(parse_chunk(&message(9, &m), 9).is_err());
    // Half an attribute header.
    let mut m = msg(SOCK_STREAM, ESTABLISHED, 1, &[]);
    m.extend_from_slice(&[8, 0]);
    assert!(parse_chunk(&message(9, &m), 9).is_err());
}

#[test]
fn proc_net_unix_gives_listeners_and_connected_streams_with_their_paths() {
    let text = "\
Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 30001 /tmp/a dir/sock
0000000000000000: 00000003 00000000 00000000 0001 03 30002 /tmp/a dir/sock
0000000000000000: 00000003 00000000 00000000 0001 03   228
0000000000000000: 00000002 00000000 00000000 0002 01 30003 /run/dgram
0000000000000000: 00000002 00000000 00010000 0005 01 30004 @abstract@x
";
    let got = parse_proc_net_unix(text).unwrap();
    let short: Vec<_> = got
        .iter()
        .map(|r| {
            (
                r.inode,
                r.listening,
                r.name.clone().map(|n| String::from_utf8(n).unwrap()),
            )
        })
        .collect();
    assert_eq!(
        short,
        vec![
            (30001, true, Some("/tmp/a dir/sock".into())),
            (30002, false, Some("/tmp/a dir/sock".into())),
            (228, false, None),
            (30004, true, Some("@abstract@x".into())),
        ]
    );
    assert!(got.iter().all(|r| r.peer == UnixPeer::Unknown));
    assert!(parse_proc_net_unix("Num\nnot a row\n").is_err());
}
