//! Property tests of every parser of OS data: whatever the bytes, a parser answers or refuses,
//! never panics; and what the kernel writes reads back exactly. And the command line's numbers,
//! through the real `pier`: a value is taken or refused in one sentence, exit 2, never a panic
//! (the command line's own parsers are driven with any argv by `src/cli/mod.rs`'s unit tests).
//! Run with the other tests; `PROPTEST_CASES=100000 cargo test --test parsers_prop` runs the
//! long version.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use pier_core::front::numbers;
use pier_core::probe::darwin::unix::{decode_unix_fdinfo, SOCKINFO_UN};
use pier_core::probe::darwin::{
    decode_socket_fdinfo, parse_procargs2, socket_fdinfo, EnvGap, SOCKINFO_TCP,
};
use pier_core::probe::netlink::parse_chunk;
use pier_core::probe::procfs::{
    parse_cgroup, parse_cmdline, parse_io_bytes, parse_schedstat, parse_socket_link, parse_stat,
    parse_tcp_table, parse_uptime,
};
use pier_core::probe::unix;
use pier_core::probe::TcpState;
use proptest::prelude::*;

proptest! {
    #[test]
    fn no_parser_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = parse_stat(&bytes);
        let _ = parse_cmdline(&bytes);
        let _ = parse_socket_link(&bytes);
        let _ = parse_schedstat(&bytes);
        let _ = parse_io_bytes(&bytes);
        let _ = parse_cgroup(&bytes);
        let _ = parse_uptime(&bytes);
        let _ = parse_tcp_table(&String::from_utf8_lossy(&bytes));
        let _ = parse_procargs2(&bytes);
        let _ = parse_chunk(&bytes, 1);
        let _ = decode_socket_fdinfo(&bytes);
        let _ = unix::parse_chunk(&bytes, 1);
        let _ = unix::parse_proc_net_unix(&String::from_utf8_lossy(&bytes));
        let _ = decode_unix_fdinfo(&bytes);
    }

    /// `comm` may hold anything but NUL — spaces, `(`, `)`, digits that look like fields.
    #[test]
    fn stat_reads_back_what_the_kernel_wrote(
        comm in proptest::collection::vec(1u8..=255, 0..16),
        state in prop::sample::select(vec![b'R', b'S', b'D', b'Z', b'T', b'X', b'I']),
        ppid in any::<u32>(),
        session in any::<u32>(),
        tty_nr in any::<i32>(),
        utime in 0u64..u64::MAX / 2,
        stime in 0u64..u64::MAX / 2,
        start_time in any::<u64>(),
    ) {
        let mut line = b"4242 (".to_vec();
        line.extend_from_slice(&comm);
        line.extend_from_slice(
            format!(
                ") {} {ppid} 7 {session} {tty_nr} -1 4194560 1 0 0 0 {utime} {stime} 0 0 20 0 1 0 \
                 {start_time} 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
                state as char
            )
            .as_bytes(),
        );
        let (name, stat) = parse_stat(&line).expect("a kernel line parses");
        prop_assert_eq!(name, String::from_utf8_lossy(&comm).into_owned());
        prop_assert_eq!(stat.state, state);
        prop_assert_eq!(stat.ppid, ppid);
        prop_assert_eq!(stat.session, session);
        prop_assert_eq!(stat.tty_nr, tty_nr as u32);
        prop_assert_eq!(stat.cpu_ticks, utime + stime);
        prop_assert_eq!(stat.start_time, start_time);
    }

    /// argv and environ: NUL-separated, NUL-terminated, any other byte kept.
    #[test]
    fn cmdline_reads_back_every_argument(
        first in proptest::collection::vec(1u8..=255, 1..40),
        rest in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..40), 0..8),
    ) {
        let argv: Vec<Vec<u8>> = std::iter::once(first).chain(rest).collect();
        let mut bytes = Vec::new();
        for a in &argv {
            bytes.extend_from_slice(a);
            bytes.push(0);
        }
        prop_assert_eq!(parse_cmdline(&bytes), argv);
    }

    #[test]
    fn tcp_tables_read_back_every_listen_and_established_row(
        rows in proptest::collection::vec(
            (any::<bool>(), any::<[u8; 16]>(), any::<u16>(), any::<[u8; 16]>(), any::<u16>(),
             prop::sample::select(vec![0x01u8, 0x0A, 0x06, 0x08]), any::<u32>()),
            0..20,
        )
    ) {
        let mut v4 = String::from("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n");
        let mut v6 = v4.clone();
        let mut want = Vec::new();
        for (n, (is_v4, la, lp, ra, rp, st, inode)) in rows.iter().enumerate() {
            let (l, r) = if *is_v4 {
                (SocketAddr::new(IpAddr::V4(Ipv4Addr::new(la[0], la[1], la[2], la[3])), *lp),
                 SocketAddr::new(IpAddr::V4(Ipv4Addr::new(ra[0], ra[1], ra[2], ra[3])), *rp))
            } else {
                (SocketAddr::new(IpAddr::V6(Ipv6Addr::from(*la)), *lp),
                 SocketAddr::new(IpAddr::V6(Ipv6Addr::from(*ra)), *rp))
            };
            let line = format!(
                "{n:4}: {}:{:04X} {}:{:04X} {st:02X} 00000000:00000000 00:00000000 00000000  1000        0 {inode} 1 0000000000000000 100 0 0 10 0\n",
                kernel_hex(l.ip()), lp, kernel_hex(r.ip()), rp
            );
            if *is_v4 { v4.push_str(&line) } else { v6.push_str(&line) }
            let state = match st { 0x01 => Some(TcpState::Established), 0x0A => Some(TcpState::Listen), _ => None };
            if let Some(state) = state {
                want.push((*is_v4, l, r, state, u64::from(*inode)));
            }
        }
        let got: Vec<_> = parse_tcp_table(&v4).unwrap().into_iter().map(|r| (true, r))
            .chain(parse_tcp_table(&v6).unwrap().into_iter().map(|r| (false, r)))
            .map(|(fam, r)| (fam, r.local, r.remote, r.state, r.inode))
            .collect();
        want.sort_by_key(|w| !w.0);
        prop_assert_eq!(got, want);
    }

    /// KERN_PROCARGS2: argc, the executable path and its NUL padding, argv, the environment,
    /// its NUL padding, then the kernel's apple strings (`pfz=` first) — which are never part
    /// of the environment. With no apple string after it, the environment is withheld (nothing
    /// after argv) or cut short, never read as what is there.
    #[test]
    fn procargs2_reads_back_argv_and_environment(
        exec in proptest::collection::vec(1u8..=255, 1..60),
        pad in 1usize..8,
        argv in proptest::collection::vec(proptest::collection::vec(1u8..=255, 1..30), 1..6),
        env in proptest::collection::vec(proptest::collection::vec(b'A'..=b'Z', 1..20), 0..6),
        env_pad in 0usize..8,
        apple in any::<bool>(),
    ) {
        let mut buf = (argv.len() as i32).to_ne_bytes().to_vec();
        buf.extend_from_slice(&exec);
        buf.extend(std::iter::repeat_n(0, pad));
        for a in argv.iter().chain(env.iter()) {
            buf.extend_from_slice(a);
            buf.push(0);
        }
        if apple {
            buf.extend(std::iter::repeat_n(0, env_pad));
            buf.extend_from_slice(b"pfz=0x7ffffff80000\0ptr_munge=\0main_stack=\0");
        }
        let read = parse_procargs2(&buf).expect("a kernel buffer parses");
        prop_assert_eq!(read.exec_path, exec);
        prop_assert_eq!(read.argv, argv);
        let want = match (apple, env.is_empty()) {
            (true, _) => Ok(env),
            (false, true) => Err(EnvGap::Withheld),
            (false, false) => Err(EnvGap::CutShort),
        };
        prop_assert_eq!(read.env, want);
    }

    /// Whole netlink messages with any content never panic, and a well-framed stream yields at
    /// most one socket per message.
    #[test]
    fn framed_netlink_messages_never_panic(
        bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..8),
        kind in prop::sample::select(vec![2u16, 3, 20, 99]),
    ) {
        let mut buf = Vec::new();
        for body in &bodies {
            let len = 16 + body.len();
            buf.extend_from_slice(&(len as u32).to_ne_bytes());
            buf.extend_from_slice(&kind.to_ne_bytes());
            buf.extend_from_slice(&2u16.to_ne_bytes());
            buf.extend_from_slice(&1u32.to_ne_bytes());
            buf.extend_from_slice(&0u32.to_ne_bytes());
            buf.extend_from_slice(body);
            buf.resize((buf.len() + 3) & !3, 0);
        }
        if let Ok(pier_core::probe::netlink::Chunk::More(rows) | pier_core::probe::netlink::Chunk::Done(rows)) = parse_chunk(&buf, 1) {
            prop_assert!(rows.len() <= bodies.len());
        }
    }

    /// Unix dump messages of any content after a unix header (any type and state, any
    /// attributes: names without NUL, lengths past the end, huge queues) answer or refuse,
    /// never panic; a well-framed stream yields at most one socket per message.
    #[test]
    fn framed_unix_dump_messages_never_panic(
        bodies in proptest::collection::vec(
            (0u8..12, 0u8..12, proptest::collection::vec(any::<u8>(), 0..120)), 0..8),
    ) {
        let mut buf = Vec::new();
        for (kind, state, attrs) in &bodies {
            let mut body = vec![1u8, *kind, *state, 0];
            body.extend_from_slice(&[0; 12]);
            body.extend_from_slice(attrs);
            let len = 16 + body.len();
            buf.extend_from_slice(&(len as u32).to_ne_bytes());
            buf.extend_from_slice(&20u16.to_ne_bytes());
            buf.extend_from_slice(&2u16.to_ne_bytes());
            buf.extend_from_slice(&1u32.to_ne_bytes());
            buf.extend_from_slice(&0u32.to_ne_bytes());
            buf.extend_from_slice(&body);
            buf.resize((buf.len() + 3) & !3, 0);
        }
        if let Ok(pier_core::probe::netlink::Chunk::More(rows) | pier_core::probe::netlink::Chunk::Done(rows)) = unix::parse_chunk(&buf, 1) {
            prop_assert!(rows.len() <= bodies.len());
        }
    }

    /// A `struct socket_fdinfo` of any content made a unix socket decodes or refuses, never
    /// panics, at its full size or cut anywhere.
    #[test]
    fn any_unix_socket_fdinfo_decodes_or_refuses(
        mut bytes in proptest::collection::vec(any::<u8>(), socket_fdinfo::SIZE),
        cut in 0usize..socket_fdinfo::SIZE,
    ) {
        bytes[socket_fdinfo::SOI_KIND..][..4].copy_from_slice(&SOCKINFO_UN.to_ne_bytes());
        let _ = decode_unix_fdinfo(&bytes);
        prop_assert!(decode_unix_fdinfo(&bytes[..cut]).is_err());
    }

    /// A `struct socket_fdinfo` of any content, made a TCP socket in any state so that every
    /// field is read, decodes or refuses, never panics, at its full size or cut anywhere; a
    /// listener's queue is never longer than its `soi_qlen`.
    #[test]
    fn any_socket_fdinfo_decodes_or_refuses(
        mut bytes in proptest::collection::vec(any::<u8>(), socket_fdinfo::SIZE),
        state in prop::sample::select(vec![1i32, 4, 0, 10, -1]),
        cut in 0usize..socket_fdinfo::SIZE,
    ) {
        bytes[socket_fdinfo::SOI_KIND..][..4].copy_from_slice(&SOCKINFO_TCP.to_ne_bytes());
        bytes[socket_fdinfo::TCPSI_STATE..][..4].copy_from_slice(&state.to_ne_bytes());
        if let Ok(Some(row)) = decode_socket_fdinfo(&bytes) {
            let qlen = i16::from_ne_bytes([bytes[socket_fdinfo::SOI_QLEN], bytes[socket_fdinfo::SOI_QLEN + 1]]);
            prop_assert!(i64::from(row.queued.unwrap_or(0)) <= i64::from(qlen.max(0)));
        }
        prop_assert!(decode_socket_fdinfo(&bytes[..cut]).is_err());
    }
}

/// A number as a person might type or mistype it; never empty (clap's own "a value is
/// required") and never holding NUL (no argv can).
fn typed_number() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+]?[0-9]{1,21}(\\.[0-9]{0,8})?([eE][-+]?[0-9]{1,4})?",
        "(?i)[-+]?(nan|inf|infinity)",
        "[^\u{0}]{1,12}",
    ]
}

/// What `pier ARGS` printed on stderr and how it exited, with a state folder of its own that
/// it must not touch.
fn pier(args: &[&str], state: &std::path::Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(args)
        .env("PIER_STATE_DIR", state)
        .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
        .env("NO_COLOR", "1")
        .output()
        .expect("pier runs");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

proptest! {
    // Each case runs the binary five times.
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Found by trying: `pier stop --grace 1e300 ID` panicked with a stack trace (exit 101),
    /// and `pier scan --sample-ms 99999999999` hung. Each command below is wrong beyond its
    /// number too (nothing to stop; a missing `--under` folder; a malformed snapshot), so
    /// whatever the number, `pier` exits 2 with one sentence on stderr before it reads or
    /// writes anything: the number's own when its parser refuses it, else the other one.
    #[test]
    fn the_real_pier_takes_or_refuses_any_number_in_one_sentence(value in typed_number()) {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let missing = dir.path().join("missing");
        let missing = missing.to_str().unwrap();
        let nothing = "pier: say what to stop: resource ids, :PORT, --project PATH, or --all-green\n";
        let no_folder = format!("pier: --under {missing}: no such folder\n");
        let no_snapshot = "pier: \"x\" is neither a snapshot nor a resource id";
        type Parse = fn(&str) -> Result<(), numbers::BadNumber>;
        let cases: [(Vec<String>, Parse, &str); 5] = [
            (vec!["stop".into(), format!("--grace={value}")],
             |v| numbers::grace(v).map(drop), nothing),
            (vec!["stop".into(), format!("--sample-ms={value}")],
             |v| numbers::stop_sample(v).map(drop), nothing),
            (vec!["stop".into(), format!("--cpu-threshold={value}")],
             |v| numbers::cpu_percent(v).map(drop), nothing),
            (vec!["scan".into(), format!("--sample-ms={value}"), "--under".into(), missing.into()],
             |v| numbers::scan_sample(v).map(drop), &no_folder),
            (vec!["restart".into(), format!("--wait={value}"), "x".into()],
             |v| numbers::restart_wait(v).map(drop), no_snapshot),
        ];
        for (args, parse, otherwise) in cases {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, err) = pier(&args, &state);
            prop_assert_eq!(code, Some(2), "{:?}: {}", args, err);
            prop_assert_eq!(err.lines().count(), 1, "{:?}: one line: {}", args, err);
            match parse(&value) {
                Err(why) => prop_assert_eq!(err, format!("pier: {why}\n")),
                Ok(()) => prop_assert!(err.starts_with(otherwise), "{:?}: {}", args, err),
            }
        }
        prop_assert!(!state.exists(), "the state folder was never opened");
    }
}

/// An address as `/proc/net/tcp` prints it: each 32-bit word of the network-order bytes as a
/// host-order integer in hex.
fn kernel_hex(ip: IpAddr) -> String {
    let bytes: Vec<u8> = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    bytes
        .chunks(4)
        .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
        .collect()
}
