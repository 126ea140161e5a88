//! Container cards against the scripted probe and engine facts: the port's attribution, the
//! connections that count (host and namespace), the engine as manager, the placement.

use std::net::SocketAddr;
use std::time::Duration;

use super::super::tests::{markers, opts, APP};
use super::super::{scan, Engines, ScanOptions};
use crate::containers::control::Measured;
use crate::containers::sample::Samples;
use crate::containers::{Compose, ContainerFacts, Endpoint, EngineRead, Published};
use crate::model::card::{EvidenceKind, Level, Scan};
use crate::model::container::Container;
use crate::probe::fake::{process, FakeProbe};
use crate::probe::{Socket, TcpState};

const HOST: &str = "unix:///var/run/docker.sock";
/// docker-proxy, run by root, holding the published port.
const PROXY: u32 = 500;
/// The container's first process, in the host's pid namespace.
const INIT: u32 = 600;

fn endpoint() -> Endpoint {
    Endpoint {
        engine: "Docker",
        host: HOST.into(),
        origin: "default place".into(),
    }
}

fn web() -> ContainerFacts {
    ContainerFacts {
        id: "fe7ae5f85c8ac8f8b745dc570885ffbb28e2789e9b94a40e4b6755992f2dc3dd".into(),
        name: "web1".into(),
        image: "pier-busybox:test".into(),
        started_at: Some("2026-12-03T06:08:14.144822442Z".into()),
        ports: vec![Published {
            host_ip: "127.0.0.1".parse().unwrap(),
            host_port: 18080,
            container_port: 8080,
        }],
        pid: Some(INIT),
        addresses: vec!["172.30.249.2".parse().unwrap()],
        // busybox httpd on [::]:8080, inside.
        namespace: Some(Ok(vec![socket("[::]:8080", "[::]:0", TcpState::Listen)])),
        ..ContainerFacts::default()
    }
}

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn socket(local: &str, remote: &str, state: TcpState) -> Socket {
    Socket {
        local: addr(local),
        remote: addr(remote),
        state,
        owners: Vec::new(),
        queued: None,
    }
}

/// The host with docker-proxy on the published port.
fn host() -> FakeProbe {
    let mut proxy = process(PROXY, 1, &["/usr/sbin/docker-proxy", "-proto", "tcp"]);
    proxy.uid = 0;
    FakeProbe::default()
        .with(proxy, "/")
        .listen("127.0.0.1:18080", PROXY)
}

/// Every container idle over the sample: no CPU time, no disk I/O.
fn idle(containers: &[ContainerFacts]) -> Samples {
    containers
        .iter()
        .map(|c| (c.id.clone(), Ok(used(0))))
        .collect()
}

fn used(cpu_ns: u64) -> Measured {
    Measured {
        cpu_ns,
        window: Duration::from_millis(1000),
        by: crate::containers::control::BY_ENGINE,
    }
}

fn scan_with(probe: &FakeProbe, containers: Vec<ContainerFacts>, o: ScanOptions) -> Scan {
    let samples = idle(&containers);
    scan_sampled(probe, containers, samples, o)
}

fn scan_sampled(
    probe: &FakeProbe,
    containers: Vec<ContainerFacts>,
    samples: Samples,
    o: ScanOptions,
) -> Scan {
    let o = ScanOptions {
        engines: Engines::Given(
            vec![EngineRead {
                endpoint: endpoint(),
                containers: Ok(containers),
            }],
            samples,
        ),
        include_others: true,
        ..o
    };
    scan(probe, &o, &markers).unwrap()
}

fn the_card(scan: &Scan) -> &Container {
    let cards: Vec<&Container> = scan.projects.iter().flat_map(|p| &p.containers).collect();
    assert_eq!(cards.len(), 1, "{scan:#?}");
    cards[0]
}

fn kinds(c: &Container) -> Vec<EvidenceKind> {
    c.evidence.iter().map(|e| e.kind).collect()
}

fn live(c: &Container) -> Vec<String> {
    c.evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::LiveConnection)
        .map(|e| e.message.clone())
        .collect()
}

#[test]
fn a_published_port_is_the_container_s_card_and_not_an_other_listener() {
    let scan = scan_with(&host(), vec![web()], opts());
    let c = the_card(&scan);
    assert_eq!(c.id, "container-fe7ae5f85c8a");
    assert_eq!(c.name, "web1");
    assert_eq!(c.ports[0].port, 18080);
    assert_eq!(c.ports[0].address, "127.0.0.1");
    assert_eq!(c.ports[0].container_port, 8080);
    assert!(c.connections.is_empty(), "{c:#?}");
    assert_eq!(scan.projects[0].name, "Containers");
    assert_eq!(scan.projects[0].path, HOST);
    assert_eq!(scan.other_listeners, Some(Vec::new()), "{scan:#?}");
    assert_eq!(scan.engines[0].running, Some(1));
    // Idle, every connection read, no restart policy: Pier may stop it.
    assert_eq!(c.level, Level::Green, "{c:#?}");
    assert_eq!(
        kinds(c),
        vec![EvidenceKind::Container, EvidenceKind::Activity]
    );
    assert_eq!(
        c.evidence[1].message,
        "idle over 1000 ms: 0.0% CPU, the container's CPU time (its disk I/O is not measured)"
    );
    assert_eq!(
        c.started_at.as_deref(),
        Some("2026-12-03T06:08:14.144822442Z")
    );
}

#[test]
fn a_busy_container_is_yellow_and_one_not_measured_cannot_be_green() {
    // 200 ms of CPU over a second: 20% of one core.
    let busy = [(web().id, Ok(used(200_000_000)))].into_iter().collect();
    let scan = scan_sampled(&host(), vec![web()], busy, opts());
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Yellow, "{c:#?}");
    let said = &c.evidence[1].message;
    assert_eq!(
        said,
        "busy over 1000 ms: 20.0% CPU (more than 5%), the container's CPU time"
    );

    let unread = [(
        web().id,
        Err(crate::containers::EngineError::Unreachable {
            who: "the engine",
            host: "X".into(),
            why: "gone".into(),
        }
        .into()),
    )]
    .into_iter()
    .collect();
    let c = the_card(&scan_sampled(&host(), vec![web()], unread, opts())).clone();
    assert_eq!(c.level, Level::Yellow, "{c:#?}");
    assert!(
        c.evidence[1].message.contains("could not be asked"),
        "{c:#?}"
    );
    let c = the_card(&scan_sampled(&host(), vec![web()], Samples::new(), opts())).clone();
    assert_eq!(c.level, Level::Yellow, "{c:#?}");
    assert_eq!(c.evidence[1].kind, EvidenceKind::ActivityUnreadable);
}

#[test]
fn a_scan_without_a_sample_says_so_and_leaves_activity_out_of_the_level() {
    let o = ScanOptions {
        sample: Duration::ZERO,
        ..opts()
    };
    let scan = scan_sampled(&host(), vec![web()], Samples::new(), o);
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Green, "{c:#?}");
    assert_eq!(c.evidence[1].kind, EvidenceKind::ActivityNotSampled);
}

#[test]
fn a_user_s_own_engine_process_in_a_project_is_never_a_candidate() {
    // Rootless Docker: rootlessport runs as the user, in whatever folder the daemon started.
    let probe = FakeProbe::default()
        .with(process(PROXY, 1, &["/usr/bin/rootlessport"]), APP)
        .listen("127.0.0.1:18080", PROXY);
    let scan = scan_with(&probe, vec![web()], opts());
    assert!(
        scan.projects.iter().all(|p| p.resources.is_empty()),
        "{scan:#?}"
    );
    // Without its container, it is an other listener, never a candidate.
    let scan = scan_with(&probe, Vec::new(), opts());
    assert!(scan.projects.is_empty(), "{scan:#?}");
    assert_eq!(scan.other_listeners.unwrap()[0].pid, Some(PROXY));
}

#[test]
fn a_client_of_the_published_port_makes_it_red() {
    let probe = host()
        .with(process(200, 1, &["curl"]), "/home/u")
        .established("127.0.0.1:18080", "127.0.0.1:40000", Some(PROXY))
        .established("127.0.0.1:40000", "127.0.0.1:18080", Some(200));
    let scan = scan_with(&probe, vec![web()], opts());
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Red);
    assert_eq!(
        live(c),
        vec!["live connection 127.0.0.1:18080 ← 127.0.0.1:40000 from curl (an HTTP client, pid 200: `curl`) — it ends when that client disconnects"]
    );
}

/// Run by root, who sees docker-proxy hold its leg into the container: that leg is the
/// engine's plumbing, counted once, as the client on the published port. (A user, who cannot
/// see who holds it, counts it too: an unattributed connection to the container's address.)
#[test]
fn a_client_inside_the_engine_s_network_makes_it_red_and_the_proxy_s_leg_counts_once() {
    let mut probe = host()
        .with(process(200, 1, &["curl"]), "/home/u")
        .established("127.0.0.1:18080", "127.0.0.1:40000", Some(PROXY))
        .established("127.0.0.1:40000", "127.0.0.1:18080", Some(200))
        // The proxy's leg into the container, on the host...
        .established("172.30.249.1:50670", "172.30.249.2:8080", Some(PROXY));
    let mut served = web();
    served.namespace = Some(Ok(vec![
        socket("[::]:8080", "[::]:0", TcpState::Listen),
        // ... and inside, where the kernel shows it IPv4-mapped.
        socket(
            "[::ffff:172.30.249.2]:8080",
            "[::ffff:172.30.249.1]:50670",
            TcpState::Established,
        ),
        // Another container, which never touches a host listener.
        socket(
            "[::ffff:172.30.249.2]:8080",
            "[::ffff:172.30.249.3]:39800",
            TcpState::Established,
        ),
    ]));
    probe.uid = 0;
    for p in &mut probe.processes {
        p.uid = 0;
    }
    let scan = scan_with(&probe, vec![served], opts());
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Red);
    assert_eq!(
        live(c),
        vec![
            "live connection 127.0.0.1:18080 ← 127.0.0.1:40000 from curl (an HTTP client, pid 200: `curl`) — it ends when that client disconnects",
            "live connection 172.30.249.2:8080 ← 172.30.249.3:39800 from a process Pier cannot see (another user's, another machine's, or one not yet accepted) — it ends when that client disconnects",
        ]
    );
}

#[test]
fn a_host_process_talking_to_the_container_s_address_counts() {
    let probe = host()
        .with(process(200, 1, &["psql"]), "/home/u")
        .established("172.30.249.1:41000", "172.30.249.2:8080", Some(200));
    let c = scan_with(&probe, vec![web()], opts());
    assert_eq!(
        live(the_card(&c)),
        vec!["live connection 172.30.249.2:8080 ← 172.30.249.1:41000 from psql (a database client, pid 200: `psql`) — it ends when that client disconnects"]
    );
}

#[test]
fn a_namespace_that_cannot_be_read_keeps_it_yellow_and_says_why() {
    let mut unread = web();
    unread.namespace = Some(Err(crate::containers::NamespaceUnread::Probe(
        crate::probe::ProbeError::Scripted(
            "could not read /proc/600/net/tcp: permission denied".into(),
        ),
    )));
    let scan = scan_with(&host(), vec![unread], opts());
    let c = the_card(&scan);
    assert!(
        kinds(c).contains(&EvidenceKind::ContainerConnectionsUnread),
        "{c:#?}"
    );
    assert_eq!(c.level, Level::Yellow);
    // In a VM (Docker Desktop, OrbStack): no host process at all.
    let mut in_vm = web();
    in_vm.pid = None;
    in_vm.namespace = None;
    let scan = scan_with(&host(), vec![in_vm], opts());
    let e = the_card(&scan)
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::ContainerConnectionsUnread)
        .unwrap();
    assert_eq!(e.level, Level::Yellow);
    assert!(e.message.contains("runs in a VM"), "{e:#?}");
}

#[test]
fn a_restart_policy_or_auto_remove_makes_the_engine_its_manager() {
    let mut managed = web();
    managed.restart_policy = Some("unless-stopped".into());
    managed.auto_remove = true;
    let scan = scan_with(&host(), vec![managed], opts());
    let messages: Vec<&str> = the_card(&scan)
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::EngineManaged)
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert!(messages[0].starts_with("restart policy unless-stopped: Docker starts it again"));
    assert!(messages[0].ends_with("a lasting stop is Docker's: `docker stop web1`"));
    assert!(messages[1].starts_with("auto-remove (--rm)"));
}

/// Compose's own command stops a Compose service; the engine's, any other container.
#[test]
fn a_managed_card_names_the_engine_s_own_stop_command() {
    let mut db = web();
    db.restart_policy = Some("always".into());
    db.compose = Some(Compose {
        project: "app".into(),
        service: Some("db".into()),
        working_dir: Some(format!("{APP}/deploy").into()),
    });
    let scan = scan_with(&host(), vec![db], opts());
    let said = &the_card(&scan).evidence[1].message;
    assert!(said.ends_with("`docker compose -p app stop db`"), "{said}");
}

#[test]
fn a_compose_container_goes_to_its_project_and_under_keeps_only_what_is_under_it() {
    let mut db = web();
    db.compose = Some(Compose {
        project: "app".into(),
        service: Some("db".into()),
        working_dir: Some(format!("{APP}/deploy").into()),
    });
    let scan = scan_with(&host(), vec![db.clone(), web()], opts());
    let groups: Vec<(&str, &str, usize)> = scan
        .projects
        .iter()
        .map(|p| (p.name.as_str(), p.path.as_str(), p.containers.len()))
        .collect();
    // The project around the Compose folder (package.json in APP), then the engine's group.
    assert_eq!(groups, vec![("app", APP, 1), ("Containers", HOST, 1)]);
    assert_eq!(
        scan.projects[0].containers[0].compose_service.as_deref(),
        Some("db")
    );
    let mut o = opts();
    o.under = vec![APP.into()];
    let scan = scan_with(&host(), vec![db, web()], o);
    let groups: Vec<&str> = scan.projects.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(groups, vec!["app"], "the engine's group is under no folder");
}

#[test]
fn an_engine_that_cannot_be_asked_is_reported_and_its_port_stays_unattributed() {
    let o = ScanOptions {
        engines: Engines::Given(
            vec![EngineRead {
                endpoint: endpoint(),
                containers: Err(crate::containers::EngineError::Unreachable {
                    who: "Docker",
                    host: "unix:///var/run/docker.sock".into(),
                    why: "Permission denied (os error 13)".into(),
                }),
            }],
            Samples::new(),
        ),
        include_others: true,
        ..opts()
    };
    let scan = scan(&host(), &o, &markers).unwrap();
    assert!(scan.projects.is_empty(), "{scan:#?}");
    assert_eq!(scan.engines[0].running, None);
    assert!(scan.engines[0]
        .error
        .as_deref()
        .unwrap()
        .contains("Permission denied"));
    let others = scan.other_listeners.unwrap();
    assert_eq!(others.len(), 1, "{others:#?}");
    assert!(
        others[0].reason.contains("may be a container's"),
        "{others:#?}"
    );
}

/// Rootless Podman, or a container run with the project bind-mounted at its own path: the
/// container's vite is the user's process, in the project, listening. It is its container's,
/// never a candidate; on the host's network its listener is the container's port.
#[test]
fn a_container_s_process_is_never_a_candidate_and_a_host_network_container_owns_its_listener() {
    let mut vite = web();
    vite.ports.clear();
    vite.host_network = true;
    vite.addresses.clear();
    vite.namespace = None;
    let mut probe = FakeProbe::default()
        .with(
            process(700, 650, &["node", "/home/u/app/node_modules/.bin/vite"]),
            APP,
        )
        .listen("0.0.0.0:5173", 700);
    probe.details.get_mut(&700).unwrap().cgroup = Some(Ok(format!(
        "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{}.scope/container",
        vite.id
    )));
    let scan = scan_with(&probe, vec![vite.clone()], opts());
    assert!(
        scan.projects.iter().all(|p| p.resources.is_empty()),
        "{scan:#?}"
    );
    let c = the_card(&scan);
    assert_eq!(c.ports.len(), 1, "{c:#?}");
    assert_eq!(
        (c.ports[0].port, c.ports[0].address.as_str()),
        (5173, "0.0.0.0")
    );
    assert!(
        !kinds(c).contains(&EvidenceKind::ContainerConnectionsUnread),
        "{c:#?}"
    );
    assert_eq!(scan.other_listeners, Some(Vec::new()), "{scan:#?}");
    // Its process's listener unseen (another user's, run by rootful Docker): said.
    let mut unseen = probe;
    unseen.sockets.as_mut().unwrap()[0].owners.clear();
    let scan = scan_with(&unseen, vec![vite], opts());
    let c = the_card(&scan);
    assert!(c.ports.is_empty());
    assert!(
        kinds(c).contains(&EvidenceKind::ContainerConnectionsUnread),
        "{c:#?}"
    );
}

#[test]
fn without_the_host_s_socket_tables_a_container_is_red() {
    let mut probe = host();
    probe.sockets = None;
    let scan = scan_with(&probe, vec![web()], opts());
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Red, "{c:#?}");
    assert!(
        kinds(c).contains(&EvidenceKind::ConnectionsUnreadable),
        "{c:#?}"
    );
}

/// A dual-stack client on the host (Java, for one) holds its end of a connection to the
/// container's IPv4 address IPv4-mapped; the namespace's side is counted on the host.
#[test]
fn a_dual_stack_host_client_of_the_container_s_address_counts_once() {
    let probe = host()
        .with(process(200, 1, &["java", "-jar", "client.jar"]), "/home/u")
        .established(
            "[::ffff:172.30.249.1]:41000",
            "[::ffff:172.30.249.2]:8080",
            Some(200),
        );
    let mut served = web();
    served.namespace = Some(Ok(vec![
        socket("[::]:8080", "[::]:0", TcpState::Listen),
        socket(
            "[::ffff:172.30.249.2]:8080",
            "[::ffff:172.30.249.1]:41000",
            TcpState::Established,
        ),
    ]));
    let scan = scan_with(&probe, vec![served], opts());
    assert_eq!(
        live(the_card(&scan)),
        vec!["live connection 172.30.249.2:8080 ← 172.30.249.1:41000 from java (unknown program, pid 200: `java -jar client.jar`) — it ends when that client disconnects"]
    );
}

#[test]
fn a_compose_folder_that_is_home_or_the_root_is_no_project() {
    for dir in ["/home/u", "/"] {
        let mut c = web();
        c.compose = Some(Compose {
            project: "u".into(),
            service: None,
            working_dir: Some(dir.into()),
        });
        let scan = scan_with(&host(), vec![c], opts());
        assert_eq!(scan.projects[0].path, HOST, "{dir}: {scan:#?}");
    }
}

#[test]
fn an_inspection_without_a_host_configuration_leaves_the_policy_unknown() {
    let list = serde_json::json!({
        "Id": "fe7ae5f85c8ac8f8b745dc570885ffbb28e2789e9b94a40e4b6755992f2dc3dd",
        "Names": ["/web1"], "Image": "i",
        "Ports": [{"PrivatePort": 8080, "PublicPort": 18080, "Type": "tcp", "IP": ""}]
    });
    let inspected = serde_json::json!({"State": {"Running": true, "Pid": 600}});
    let facts = crate::containers::engine::facts(
        serde_json::from_value(list).unwrap(),
        serde_json::from_value(inspected).unwrap(),
    )
    .unwrap();
    assert_eq!(
        facts.restart_policy.as_deref(),
        Some(crate::containers::engine::UNKNOWN_POLICY)
    );
    // An address the engine left empty is every address: the port's listeners are claimed.
    assert!(facts.ports[0].host_ip.is_unspecified());
    let scan = scan_with(&host(), vec![facts], opts());
    let c = the_card(&scan);
    assert!(c
        .evidence
        .iter()
        .any(|e| e.kind == EvidenceKind::EngineManaged
            && e.message.starts_with("restart policy unknown")));
}

/// An image whose stop signal is SIGKILL (`--stop-signal KILL`): Pier would never send it, so
/// the card is not green, and says what stops it.
#[test]
fn a_container_whose_stop_signal_is_sigkill_is_yellow() {
    let mut killed = web();
    killed.stop_signal = Some("SIGKILL".into());
    let scan = scan_with(&host(), vec![killed], opts());
    let c = the_card(&scan);
    assert_eq!(c.level, Level::Yellow, "{c:#?}");
    let said = &c.evidence[1].message;
    assert_eq!(
        said,
        "its stop signal is SIGKILL, which Pier never sends (`docker stop` would); \
         `docker stop web1` stops it"
    );
}
