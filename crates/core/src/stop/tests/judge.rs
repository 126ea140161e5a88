//! One judge, two callers: every fact that keeps the scan from calling the tree green, put
//! before the scan and, appearing only after the re-diagnosis, before the checkpoint chain,
//! which must refuse on it with nothing sent. Then the rules the checkpoints took from the
//! scan, each pinned on its own.

use super::*;
use crate::diagnose::ScanOptions;
use crate::model::card::Level;
use crate::probe::fake::USER;
use crate::probe::UnreadableProcess;

fn unreadable(pid: Pid, uid: Option<u32>) -> UnreadableProcess {
    UnreadableProcess {
        pid,
        uid,
        error: "scripted: EIO".into(),
    }
}

/// A change to the world, made by a test at an exact probe call.
type Fact = fn(&mut FakeProbe);

/// Each fact, and the checkpoint that must refuse when it appears as check (a) begins.
const FACTS: &[(&str, Fact, Checkpoint)] = &[
    ("a client connects", client_on_5173, Checkpoint::A),
    (
        "a client waits in the accept queue",
        |p| listener(p).queued = Some(1),
        Checkpoint::A,
    ),
    (
        "the socket tables fail",
        |p| p.sockets = None,
        Checkpoint::A,
    ),
    (
        "a member moves to another network namespace",
        |p| p.blind.push((101, "another network namespace".into())),
        Checkpoint::A,
    ),
    (
        "a member's open files cannot be read",
        |p| p.unreadable_fds.push((102, "permission denied".into())),
        Checkpoint::A,
    ),
    ("the listener is shared outside", share_5173, Checkpoint::A),
    (
        "a member drives another member's debugging port",
        drive_debugging_port,
        Checkpoint::A,
    ),
    (
        "a member runs on a debugging pipe",
        |p| p.process_mut(102).argv = chromium(&["--remote-debugging-pipe"]),
        Checkpoint::A,
    ),
    (
        "a client attaches over a member's unix socket",
        |p| {
            use crate::probe::UnixPeer;
            let fake = std::mem::take(p);
            *p = fake
                .unix_listen(1, "/tmp/d.sock", 101)
                .unix_connected(2, Some("/tmp/d.sock"), UnixPeer::Socket(3), &[101])
                .unix_connected(3, None, UnixPeer::Socket(2), &[900]);
        },
        Checkpoint::A,
    ),
    (
        "the unix sockets cannot be read",
        |p| p.unix = Err("scripted: EPERM".into()),
        Checkpoint::A,
    ),
    (
        "a member's row cannot be read",
        |p| {
            p.processes.retain(|q| q.identity.pid != 102);
            p.unreadable_processes.push(unreadable(102, Some(USER)));
        },
        Checkpoint::A,
    ),
    (
        "a process of the user's cannot be read",
        |p| p.unreadable_processes.push(unreadable(777, Some(USER))),
        Checkpoint::A,
    ),
    (
        "a process of no known owner cannot be read",
        |p| p.unreadable_processes.push(unreadable(777, None)),
        Checkpoint::A,
    ),
    (
        "a member is busy",
        |p| {
            p.activity.insert(
                101,
                Ok(ActivityDelta {
                    cpu_ns: 90_000_000,
                    io_bytes: 0,
                }),
            );
        },
        Checkpoint::B,
    ),
    (
        "a member's activity cannot be read",
        |p| {
            p.activity.insert(102, Err("scripted: EACCES".into()));
        },
        Checkpoint::B,
    ),
    (
        "a member's executable cannot be read",
        |p| p.details.get_mut(&102).unwrap().exe = Err("permission denied".into()),
        Checkpoint::D,
    ),
    (
        "a member runs as another user",
        |p| p.process_mut(102).uid = 0,
        Checkpoint::D,
    ),
    (
        "a member is a container engine's own process",
        |p| p.process_mut(102).comm = "docker-proxy".into(),
        Checkpoint::D,
    ),
    (
        "a member is a container engine's client that stands for its container",
        |p| p.process_mut(102).argv = engine_client_argv(),
        Checkpoint::D,
    ),
];

/// Debian's headless Chromium, with `flags`.
fn chromium(flags: &[&str]) -> Vec<Vec<u8>> {
    ["/usr/lib/chromium/chromium", "--headless=new"]
        .iter()
        .chain(flags)
        .map(|w| w.as_bytes().to_vec())
        .collect()
}

/// 102 becomes a Chromium listening on its debugging port, and 101, in the same tree, its
/// client: a connection between members, and a driver at work.
fn drive_debugging_port(p: &mut FakeProbe) {
    p.process_mut(102).argv = chromium(&["--remote-debugging-port=0"]);
    let s = p.sockets.get_or_insert_with(Vec::new);
    let socket = |local: &str, remote: &str, state, owner| crate::probe::Socket {
        local: local.parse().unwrap(),
        remote: remote.parse().unwrap(),
        state,
        owners: vec![owner],
        queued: None,
    };
    use crate::probe::TcpState::{Established, Listen};
    s.push(socket("127.0.0.1:9222", "0.0.0.0:0", Listen, 102));
    s.push(socket(
        "127.0.0.1:9222",
        "127.0.0.1:40100",
        Established,
        102,
    ));
    s.push(socket(
        "127.0.0.1:40100",
        "127.0.0.1:9222",
        Established,
        101,
    ));
}

/// `docker run --rm -p 8080:80 img`, attached: it stands for its container.
fn engine_client_argv() -> Vec<Vec<u8>> {
    ["docker", "run", "--rm", "-p", "8080:80", "img"]
        .iter()
        .map(|w| w.as_bytes().to_vec())
        .collect()
}

/// The listening socket of `tree()`.
fn listener(p: &mut FakeProbe) -> &mut crate::probe::Socket {
    p.sockets
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s.state == crate::probe::TcpState::Listen)
        .unwrap()
}

/// node (300), working in /tmp, also holds vite's listener (an inherited fd).
fn share_5173(p: &mut FakeProbe) {
    *p = std::mem::take(p).with(process(300, 1, &["node", "other.js"]), "/tmp");
    listener(p).owners.push(300);
}

fn scan_level(fake: &FakeProbe) -> Option<Level> {
    let opts = ScanOptions {
        sample: Duration::from_millis(100),
        home: Some("/home/u".into()),
        ..ScanOptions::default()
    };
    let scan = crate::diagnose::scan(fake, &opts, &markers).unwrap();
    let r = scan.projects.iter().flat_map(|p| &p.resources);
    r.clone().find(|r| r.id == ID).map(|r| r.level)
}

/// Process reads: 1 = re-diagnosis, 2 = the snapshot's, 3 = check (a), 4 = (c), 5 = (d),
/// 6 = (e), whose tree check judges the table its survey read (under Force: 3 = (d), 4 = (e)). The fact
/// appears at read `from`, and is gone again at read `until` (so only the checks between see
/// it), if any.
fn fact_at(from: usize, until: Option<usize>, fact: Fact) -> World {
    world(move |call, n, p| {
        if call == "processes" && n == from {
            fact(p);
        }
        if call == "processes" && Some(n) == until {
            p.unreadable_processes.clear();
        }
    })
}

#[test]
fn the_untouched_tree_is_green_and_passes_every_checkpoint() {
    assert_eq!(scan_level(&tree()), Some(Level::Green));
    let (r, sent) = run(&world(|_, _, _| {}));
    assert_eq!(r.result, ResourceResult::Stopped, "{r:#?}");
    assert_eq!(sent, vec![102, 101, 100]);
}

#[test]
fn whatever_keeps_the_scan_from_green_is_refused_by_the_checkpoints_with_nothing_sent() {
    for &(what, fact, checkpoint) in FACTS {
        let mut fake = tree();
        fact(&mut fake);
        let level = scan_level(&fake);
        assert_ne!(level, Some(Level::Green), "{what}: the scan");
        let (r, sent) = run(&fact_at(3, None, fact));
        assert_eq!(r.result, ResourceResult::Refused, "{what}: {r:#?}");
        assert_eq!(r.checkpoint, Some(checkpoint), "{what}: {r:#?}");
        assert!(sent.is_empty(), "{what}: {sent:?}");
    }
}

/// The scan makes every resource red when any process of the user's cannot be read (it may be
/// a member); the network checks looked at unreadable members only.
#[test]
fn a_network_check_refuses_while_any_process_of_the_user_s_cannot_be_read() {
    let (r, sent) = run(&fact_at(3, Some(4), |p| {
        p.unreadable_processes.push(unreadable(777, Some(USER)));
    }));
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::A), "{r:#?}");
    assert_eq!(
        r.reason,
        "pid 777 could not be read, so it may be a member whose connections are unknown: \
         scripted: EIO"
    );
    assert!(sent.is_empty(), "{sent:?}");
}

/// The tree check read the table's unreadable list and dropped it: a new member it could not
/// read passed as no new member.
#[test]
fn the_tree_check_refuses_while_any_process_of_the_user_s_cannot_be_read() {
    let (r, sent) = run(&fact_at(5, Some(6), |p| {
        p.unreadable_processes.push(unreadable(777, None));
    }));
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert_eq!(r.checkpoint, Some(Checkpoint::D), "{r:#?}");
    assert_eq!(
        r.reason,
        "pid 777 could not be read, so whether it joined the tree is unknown: scripted: EIO"
    );
    assert!(sent.is_empty(), "{sent:?}");
}

/// The scan calls a listener shared outside the resource yellow (stopping would not free the
/// port); the network checks did not look.
#[test]
fn a_network_check_refuses_a_listener_shared_outside_the_resource() {
    let (r, sent) = run(&fact_at(3, None, share_5173));
    assert_eq!(r.checkpoint, Some(Checkpoint::A), "{r:#?}");
    assert_eq!(
        r.reason,
        "the socket listening on 127.0.0.1:5173 is also held by pid 300 outside this resource, \
         so stopping it would not free the port"
    );
    assert!(sent.is_empty(), "{sent:?}");
}

/// A tree with an engine client in it (yellow, `engine_client`) is refused at the
/// re-diagnosis, a stop anyway included: no snapshot, nothing sent.
#[test]
fn a_stop_anyway_refuses_a_tree_holding_an_engine_client_at_the_re_diagnosis() {
    for force in [false, true] {
        let o = if force { anyway() } else { opts() };
        let (r, sent) = run_with(
            &fact_at(1, None, |p| p.process_mut(102).argv = engine_client_argv()),
            o,
            |_| {},
        );
        assert_eq!(r.result, ResourceResult::Refused, "force {force}: {r:#?}");
        assert_eq!(r.checkpoint, None, "force {force}: {r:#?}");
        assert!(
            r.reason
                .starts_with("never touched: pid 102 (docker run --rm -p 8080:80 img) is a")
                || r.reason.contains("never sets aside protected"),
            "force {force}: {}",
            r.reason
        );
        assert!(sent.is_empty(), "force {force}: {sent:?}");
    }
}

/// A stop anyway sets aside reasons, not `force_allowed`: a member that turned into another
/// user's process after the re-diagnosis (a setuid helper) is never signalled, and the tree
/// check is where the chain asks.
#[test]
fn the_tree_check_asks_force_allowed_of_every_member_under_a_stop_anyway_too() {
    for force in [false, true] {
        let o = if force { anyway() } else { opts() };
        let w = fact_at(3, None, |p| p.process_mut(102).uid = 0);
        let (r, sent) = run_with(&w, o, |_| {});
        assert_eq!(r.result, ResourceResult::Refused, "force {force}: {r:#?}");
        assert_eq!(r.checkpoint, Some(Checkpoint::D), "force {force}: {r:#?}");
        assert_eq!(
            r.reason,
            "never touched: pid 102 is another user's process (uid 0)"
        );
        assert!(sent.is_empty(), "force {force}: {sent:?}");
    }
}

/// A survey reads the argv of socket holders only, and a browser on a debugging pipe holds
/// none: the network check reads its members' argv itself, so the pipe is seen there too.
#[test]
fn the_network_check_reads_the_argv_of_a_member_on_a_debugging_pipe_the_survey_left_unread() {
    let mut fake = tree();
    fake.process_mut(102).argv = chromium(&["--remote-debugging-pipe"]);
    let members = HashSet::from([100, 101, 102]);
    let answer = crate::stop::checks::network(&fake, &[(&members, None)]);
    assert!(
        matches!(&answer[0], Err(super::refusal::Why::Driven(s))
            if s.starts_with("pid 102 is driven through its debugging pipe by vite (pid 101")),
        "{answer:?}"
    );
}
