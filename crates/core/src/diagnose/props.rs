//! Property tests of the diagnosis over generated trees and sockets (docs/design.md §2): a live
//! connection on any member's listener is never green, whoever holds the other end and
//! whatever address family; a process of the user's that cannot be read makes every resource
//! red.

use proptest::prelude::*;

use super::scan;
use super::tests::{markers, opts, APP};
use crate::model::card::Level;
use crate::probe::fake::{process, FakeProbe, USER};
use crate::probe::{Pid, UnreadableProcess};

/// Who holds the client end of the connection.
#[derive(Debug, Clone, Copy)]
enum Peer {
    /// Nobody the probe can see (another user, another machine, not yet accepted).
    Unattributed,
    /// A process outside the resource.
    Outsider,
    /// A member of the resource, and also a process outside it (an inherited fd).
    MemberAndOutsider,
}

/// `sh -c vite` (100) → a chain of `depth` more members, member `listener` listening on
/// `addr`, and one established connection on it held at the other end by `peer`.
fn world(depth: u32, listener: u32, addr: &str, peer: Peer, accepted: bool) -> FakeProbe {
    let mut probe = FakeProbe::default().with(process(100, 1, &["sh", "-c", "vite"]), APP);
    for i in 1..=depth {
        let argv: &[&str] = if i == 1 {
            &["node", "/home/u/app/node_modules/.bin/vite"]
        } else {
            &["/home/u/app/node_modules/.bin/esbuild", "--service"]
        };
        probe = probe.with(process(100 + i, 99 + i, argv), APP);
    }
    let server: Pid = 100 + listener.min(depth);
    let port = addr.rsplit(':').next().unwrap();
    let local = if addr.starts_with('[') {
        format!("[::1]:{port}")
    } else {
        format!("127.0.0.1:{port}")
    };
    let remote = if addr.starts_with('[') {
        "[::1]:40000"
    } else {
        "127.0.0.1:40000"
    };
    probe = probe
        .with(process(500, 1, &["firefox"]), "/home/u")
        .listen(addr, server)
        .established(&local, remote, accepted.then_some(server));
    match peer {
        Peer::Unattributed => probe,
        Peer::Outsider => probe.established(remote, &local, Some(500)),
        Peer::MemberAndOutsider => {
            // One socket, two holders: the table has one row for it.
            let mut probe = probe.established(remote, &local, Some(100 + depth));
            let row = probe.sockets.as_mut().unwrap().last_mut().unwrap();
            row.owners.push(500);
            probe
        }
    }
}

fn peer() -> impl Strategy<Value = Peer> {
    prop::sample::select(vec![
        Peer::Unattributed,
        Peer::Outsider,
        Peer::MemberAndOutsider,
    ])
}

fn addr() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "127.0.0.1:5173",
        "0.0.0.0:5173",
        "[::1]:5173",
        "[::]:5173",
    ])
}

proptest! {
    // 64 cases in the test suite; PROPTEST_CASES for the long run (`with_cases` alone would
    // override it).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn a_live_connection_on_any_members_listener_is_never_green(
        depth in 1u32..5,
        listener in 0u32..5,
        addr in addr(),
        peer in peer(),
        accepted in any::<bool>(),
    ) {
        let probe = world(depth, listener, addr, peer, accepted);
        let s = scan(&probe, &opts(), &markers).unwrap();
        prop_assert_eq!(s.projects.len(), 1);
        let r = &s.projects[0].resources[0];
        prop_assert_eq!(r.level, Level::Red, "{:#?}", r);
    }

    #[test]
    fn an_unreadable_process_of_the_users_makes_every_resource_red(
        depth in 1u32..5,
        uid in prop::sample::select(vec![Some(USER), None]),
    ) {
        let mut probe = world(depth, 0, "127.0.0.1:5173", Peer::Outsider, true);
        probe.sockets = Some(Vec::new());
        probe = probe.listen("127.0.0.1:5173", 101);
        probe.unreadable_processes.push(UnreadableProcess {
            pid: 777,
            uid,
            error: "scripted: EIO".into(),
        });
        let s = scan(&probe, &opts(), &markers).unwrap();
        for r in s.projects.iter().flat_map(|p| &p.resources) {
            prop_assert_eq!(r.level, Level::Red, "{:#?}", r);
        }
    }
}
