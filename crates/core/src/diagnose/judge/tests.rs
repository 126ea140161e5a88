//! One test per rule of the judge and per answer: yes, no, and "could not read". The scan and
//! the checkpoints both ask these functions; `stop/tests/judge.rs` puts each fact before both.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::probe::fake::{process, USER};
use crate::probe::{ActivityDelta, TcpState};

fn socket(local: &str, remote: &str, state: TcpState, owners: &[Pid]) -> Socket {
    Socket {
        local: local.parse().unwrap(),
        remote: remote.parse().unwrap(),
        state,
        owners: owners.to_vec(),
        queued: None,
    }
}

fn listen(local: &str, owners: &[Pid]) -> Socket {
    socket(local, "0.0.0.0:0", TcpState::Listen, owners)
}

fn judged(table: &SocketTable, members: &[Pid]) -> Vec<Finding> {
    let members: HashSet<Pid> = members.iter().copied().collect();
    let index = SocketIndex::new(&table.sockets);
    network(Ok::<_, ProbeError>(table), &index, &members, |_| None, 1000).findings
}

fn levels(findings: &[Finding]) -> Vec<Level> {
    findings.iter().map(Finding::level).collect()
}

#[test]
fn an_unreadable_process_of_the_user_or_of_no_known_owner_counts_and_another_users_does_not() {
    let u = |pid, uid| UnreadableProcess {
        pid,
        uid,
        error: "EIO".into(),
    };
    let list = [u(7, Some(USER)), u(8, None), u(9, Some(0))];
    let found = unreadable_of(&list, USER);
    let pids: Vec<Pid> = found
        .iter()
        .map(|f| match f {
            Finding::ProcessUnreadable { pid, .. } => *pid,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(pids, vec![7, 8], "uid 0's row is never a member of ours");
    assert!(found.iter().all(|f| f.level() == Level::Red));
    assert!(unreadable_of(&[], USER).is_empty());
}

#[test]
fn a_quiet_listener_has_no_finding_against_it() {
    let table = SocketTable {
        sockets: vec![listen("127.0.0.1:5173", &[101])],
        ..SocketTable::default()
    };
    assert!(judged(&table, &[100, 101]).is_empty());
}

#[test]
fn unreadable_tables_are_the_one_red_finding() {
    let n = network(
        Err::<&SocketTable, _>(ProbeError::from("EPERM")),
        &SocketIndex::default(),
        &HashSet::from([1]),
        |_| None,
        1000,
    );
    assert_eq!(n.findings, vec![Finding::TablesUnreadable("EPERM".into())]);
    assert_eq!(levels(&n.findings), vec![Level::Red]);
    assert!(n.listeners.is_empty() && n.conns.is_empty());
}

#[test]
fn what_the_tables_cannot_show_of_a_member_counts_and_of_an_outsider_does_not() {
    let table = SocketTable {
        sockets: Vec::new(),
        unreadable: vec![(101, "EACCES".into()), (500, "EACCES".into())],
        blind: vec![(102, "another network namespace".into()), (501, "x".into())],
        ..SocketTable::default()
    };
    let found = judged(&table, &[100, 101, 102]);
    assert_eq!(
        found,
        vec![
            Finding::Blind {
                pid: 102,
                why: "another network namespace".into()
            },
            Finding::FdsUnreadable {
                pid: 101,
                why: "EACCES".into()
            },
        ],
        "what cannot be seen at all first"
    );
    assert_eq!(levels(&found), vec![Level::Red, Level::Yellow]);
}

#[test]
fn a_listener_also_held_outside_the_resource_is_yellow() {
    let table = SocketTable {
        sockets: vec![listen("127.0.0.1:5173", &[101, 500])],
        ..SocketTable::default()
    };
    let found = judged(&table, &[100, 101]);
    assert_eq!(
        found,
        vec![Finding::SharedListener {
            local: "127.0.0.1:5173".parse().unwrap(),
            outside: vec![500],
        }]
    );
    assert_eq!(found[0].level(), Level::Yellow);
}

#[test]
fn a_live_connection_is_red_and_one_between_members_is_green() {
    let table = SocketTable {
        sockets: vec![
            listen("127.0.0.1:5173", &[101]),
            // A member's own client (internal) and an unaccepted outsider (live).
            socket(
                "127.0.0.1:5173",
                "127.0.0.1:40001",
                TcpState::Established,
                &[101],
            ),
            socket(
                "127.0.0.1:40001",
                "127.0.0.1:5173",
                TcpState::Established,
                &[102],
            ),
            socket(
                "127.0.0.1:5173",
                "127.0.0.1:40002",
                TcpState::Established,
                &[],
            ),
        ],
        ..SocketTable::default()
    };
    let found = judged(&table, &[100, 101, 102]);
    assert_eq!(levels(&found), vec![Level::Green, Level::Red], "{found:#?}");
    let against = first_against(&found).expect("the live one");
    assert!(
        matches!(against, Finding::Connection(c) if c.peer.port() == 40002),
        "{against:?}"
    );
    assert_eq!(
        first_against(&found[..1]),
        None,
        "internal only: nothing against"
    );
}

#[test]
fn a_client_the_server_has_not_accepted_is_red_seen_at_either_end() {
    // TCP_DEFER_ACCEPT: the server's end half-open, the client's established, one connection.
    let server_end = socket("127.0.0.1:5173", "127.0.0.1:40003", TcpState::SynRecv, &[]);
    let client_end = socket(
        "127.0.0.1:40003",
        "127.0.0.1:5173",
        TcpState::Established,
        &[900],
    );
    for sockets in [
        vec![
            listen("0.0.0.0:5173", &[101]),
            server_end.clone(),
            client_end.clone(),
        ],
        vec![listen("0.0.0.0:5173", &[101]), server_end],
        vec![listen("0.0.0.0:5173", &[101]), client_end],
    ] {
        let table = SocketTable {
            sockets,
            ..SocketTable::default()
        };
        let found = judged(&table, &[101]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            matches!(&found[0], Finding::Connection(c)
                if c.local.port() == 5173 && c.peer.port() == 40003 && !c.internal),
            "{found:?}"
        );
        assert_eq!(found[0].level(), Level::Red);
    }
}

#[test]
fn connections_waiting_in_the_accept_queue_are_red() {
    let mut l = listen("127.0.0.1:5173", &[101]);
    l.queued = Some(2);
    let table = SocketTable {
        sockets: vec![l],
        ..SocketTable::default()
    };
    assert_eq!(judged(&table, &[101]), vec![Finding::Queued(2)]);
    assert_eq!(Finding::Queued(2).level(), Level::Red);
}

#[test]
fn one_unreadable_member_spoils_the_sample_and_outsiders_are_left_out() {
    let idle = ActivityDelta {
        cpu_ns: 1,
        io_bytes: 2,
    };
    let sample = ActivitySample {
        window: Duration::from_millis(100),
        per_pid: vec![(100, Ok(idle)), (500, Err("gone".into())), (101, Ok(idle))],
    };
    let members = |pid: Pid| (pid != 500).then(|| format!("cmd {pid}"));
    let m = measured(&sample, members).unwrap();
    assert_eq!(
        m.iter()
            .map(|a| (a.pid, a.command.as_str()))
            .collect::<Vec<_>>(),
        vec![(100, "cmd 100"), (101, "cmd 101")]
    );
    let mut spoiled = sample.clone();
    spoiled.per_pid.push((102, Err("EACCES".into())));
    assert_eq!(
        measured(&spoiled, |pid| Some(pid.to_string())).unwrap_err(),
        (500, "gone".to_owned()),
        "the first unreadable member is named"
    );
}

#[test]
fn force_never_allows_another_user_init_pier_or_pier_s_ancestors() {
    let ancestors = HashSet::from([50]);
    let guard = Guard {
        uid: USER,
        pier: 9000,
        pier_ancestors: &ancestors,
    };
    let allowed = |p: &ProcessInfo| force_allowed(p, &guard);
    assert_eq!(allowed(&process(100, 1, &["vite"])), Ok(()));
    let mut root_s = process(100, 1, &["vite"]);
    root_s.uid = 0;
    assert_eq!(allowed(&root_s), Err(Protection::OtherUser(0)));
    let mut init = process(1, 0, &["/sbin/init"]);
    init.uid = USER;
    assert_eq!(
        allowed(&init),
        Err(Protection::Init),
        "PID 1, whoever runs it"
    );
    assert_eq!(
        allowed(&process(9000, 50, &["pier"])),
        Err(Protection::Pier)
    );
    assert_eq!(
        allowed(&process(50, 1, &["zsh"])),
        Err(Protection::PierAncestor)
    );
    assert_eq!(
        Protection::OtherUser(0).to_string(),
        "another user's process (uid 0)"
    );
}

#[test]
fn force_never_allows_a_container_engine_s_own_process_of_the_user_s() {
    let ancestors = HashSet::new();
    let guard = Guard {
        uid: USER,
        pier: 9000,
        pier_ancestors: &ancestors,
    };
    // Rootless Docker and Podman run these as the user: the one case where the owner rule
    // alone would let Force through.
    for (argv, program) in [
        (&["/usr/bin/rootlessport"][..], "rootlessport"),
        (
            &["/usr/sbin/docker-proxy", "-proto", "tcp"][..],
            "docker-proxy",
        ),
        (&["/usr/bin/conmon", "--api-version", "1"][..], "conmon"),
        (&["dockerd"][..], "dockerd"),
    ] {
        let p = process(200, 1, argv);
        assert_eq!(
            force_allowed(&p, &guard),
            Err(Protection::ContainerEngine(program)),
            "{argv:?}"
        );
    }
    assert_eq!(
        Protection::ContainerEngine("docker-proxy").to_string(),
        "the container engine's own process (docker-proxy)"
    );
}

/// A client that stands for containers is never signalled, Force included; one whose argv
/// was not read may be one. `podman run` is Podman's client before it is an engine's name.
#[test]
fn force_never_allows_an_engine_client_that_stands_for_containers() {
    let ancestors = HashSet::new();
    let guard = Guard {
        uid: USER,
        pier: 9000,
        pier_ancestors: &ancestors,
    };
    for (argv, program) in [
        (
            &["docker", "run", "--rm", "-p", "8080:80", "img"][..],
            "docker",
        ),
        (&["docker", "compose", "-f", "f.yml", "up"][..], "docker"),
        (
            &["/usr/bin/python3", "/usr/bin/docker-compose", "up"][..],
            "docker-compose",
        ),
        (&["podman", "run", "img"][..], "podman"),
    ] {
        let p = process(200, 1, argv);
        assert_eq!(
            force_allowed(&p, &guard),
            Err(Protection::EngineClient(program)),
            "{argv:?}"
        );
    }
    let mut unread = process(200, 1, &[]);
    unread.comm = "docker".into();
    unread.argv_unread = true;
    assert_eq!(
        force_allowed(&unread, &guard),
        Err(Protection::EngineClient("docker"))
    );
    for argv in [
        &["docker", "run", "-d", "img"][..],
        &["docker", "logs", "-f", "web"],
    ] {
        assert_eq!(
            force_allowed(&process(200, 1, argv), &guard),
            Ok(()),
            "{argv:?}"
        );
    }
    assert_eq!(
        Protection::EngineClient("docker").to_string(),
        "a container engine's client (docker), which stands for its containers"
    );
}

fn twin_of(p: &ProcessInfo, cwd: Option<Result<PathBuf, ProbeError>>) -> Option<TwinPlace> {
    let recorded: Vec<Vec<&[u8]>> = vec![vec![b"node", b"vite"], vec![b"sh", b"-c", b"vite"]];
    argv_twin(p, USER, &recorded, Path::new("/home/u/app"), |_| cwd)
}

#[test]
fn a_process_running_a_recorded_argv_exactly_is_a_twin_placed_by_its_folder() {
    let twin = process(300, 1, &["node", "vite"]);
    let inside = Some(Ok(PathBuf::from("/home/u/app/web")));
    assert_eq!(twin_of(&twin, inside.clone()), Some(TwinPlace::InProject));
    assert_eq!(
        twin_of(&twin, Some(Ok("/home/u/other".into()))),
        Some(TwinPlace::Elsewhere)
    );
    assert_eq!(
        twin_of(&twin, Some(Err("EACCES".into()))),
        Some(TwinPlace::Unknown("EACCES".into())),
        "a folder that cannot be read cannot rule it out"
    );
    assert_eq!(twin_of(&twin, None), None, "gone since: no twin");
    for argv in [
        &["node", "vite", "--port"][..],
        &["node"],
        &["node", "vitE"],
    ] {
        assert_eq!(
            twin_of(&process(300, 1, argv), inside.clone()),
            None,
            "{argv:?}"
        );
    }
}

#[test]
fn another_user_s_process_a_zombie_or_an_empty_argv_is_never_a_twin() {
    let inside = Some(Ok(PathBuf::from("/home/u/app")));
    let mut theirs = process(300, 1, &["node", "vite"]);
    theirs.uid = 0;
    let mut zombie = process(301, 1, &["node", "vite"]);
    zombie.zombie = true;
    let unread = process(302, 1, &[]);
    for p in [theirs, zombie, unread] {
        assert_eq!(twin_of(&p, inside.clone()), None, "{p:?}");
    }
}

/// A daemon (pid 100) listening on a unix socket, with one accepted connection (socket 2)
/// whose client's end (socket 3) `client` holds.
fn unix_daemon(client: &[Pid]) -> SocketTable {
    use crate::probe::{UnixPeer, UnixSocket};
    let name = Some(b"/tmp/d.sock".to_vec());
    let sock = |id, listening, peer, owners: &[Pid]| UnixSocket {
        id,
        name: if id == 3 { None } else { name.clone() },
        listening,
        peer,
        queued: None,
        owners: owners.to_vec(),
    };
    SocketTable {
        unix: vec![
            sock(1, true, UnixPeer::Unknown, &[100]),
            sock(2, false, UnixPeer::Socket(3), &[100]),
            sock(3, false, UnixPeer::Socket(2), client),
        ],
        ..SocketTable::default()
    }
}

#[test]
fn a_client_attached_over_a_unix_socket_is_a_red_live_connection_named_in_words() {
    let found = judged(&unix_daemon(&[300]), &[100]);
    assert_eq!(levels(&found), vec![Level::Red]);
    let e = found[0].evidence();
    assert_eq!(e.kind, EvidenceKind::LiveConnection);
    assert_eq!(
        e.message,
        "live connection on unix socket /tmp/d.sock from pid 300, whose program could not be \
         read — it ends when that client disconnects"
    );
    // A client inside the resource is none.
    assert!(judged(&unix_daemon(&[101]), &[100, 101]).is_empty());
}

/// A unix client Pier cannot see is another user's or one the table gives no peer for: never
/// "another machine's" nor "not yet accepted" (a unix socket is local, and this one was
/// accepted), and the stop's refusal says the same sentence.
#[test]
fn an_unseen_unix_client_is_named_as_a_unix_one() {
    let found = judged(&unix_daemon(&[]), &[100]);
    let message = found[0].evidence().message;
    assert_eq!(
        message,
        "live connection on unix socket /tmp/d.sock from a process Pier cannot see (another \
         user's, or one the unix socket table gives no peer for) — it ends when that client \
         disconnects"
    );
    let why = crate::stop::checks::against(&found[0], &HashSet::from([100]));
    assert_eq!(why.to_string(), format!("a client is connected: {message}"));
}

#[test]
fn an_unreadable_unix_table_fails_every_resource_closed() {
    let table = SocketTable {
        unix_unreadable: Some("EPERM".into()),
        ..SocketTable::default()
    };
    assert_eq!(
        judged(&table, &[100]),
        vec![Finding::TablesUnreadable("unix sockets: EPERM".into())]
    );
}
