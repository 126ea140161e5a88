//! The server/helper split: the pure rule, then whole scans against the scripted probe.

use super::*;
use crate::diagnose::scan;
use crate::diagnose::tests::{markers, only, opts, APP};
use crate::model::card::{Level, Resource};
use crate::probe::fake::{process, FakeProbe};

const SERVER: &[&str] = &["/venv/bin/python", "/venv/bin/jupyter-lab", "--no-browser"];
const KERNEL: &[&str] = &[
    "/venv/bin/python",
    "-m",
    "ipykernel_launcher",
    "-f",
    "k.json",
];

fn table() -> ProcessTable {
    ProcessTable::new(vec![
        process(1, 0, &["/sbin/init"]),
        process(10, 1, SERVER),
        process(11, 10, KERNEL),
        // A process the kernel started (a notebook's `subprocess`).
        process(12, 11, &["python3", "worker.py"]),
        process(13, 10, &["node", "lsp.js"]),
    ])
}

fn all() -> Vec<Pid> {
    vec![10, 11, 12, 13]
}

#[test]
fn a_helper_and_its_descendants_are_helpers_and_the_rest_are_not() {
    let h = helpers_among(&table(), &all());
    assert_eq!(h.get(&11), Some(&"notebook kernel"));
    assert_eq!(h.get(&12), Some(&"notebook kernel"), "the kernel's child");
    assert_eq!(h.get(&10), None, "the server");
    assert_eq!(h.get(&13), None, "the server's other child");
}

#[test]
fn only_ancestry_within_the_resource_counts() {
    // The kernel is no member: its child is judged as itself, a plain process.
    let h = helpers_among(&table(), &[12]);
    assert_eq!(h.get(&12), None);
}

#[test]
fn a_listener_is_a_helpers_only_when_every_member_holding_it_is() {
    let h = helpers_among(&table(), &all());
    assert_eq!(listener_helper(&[11], &h), Some("notebook kernel"));
    assert_eq!(listener_helper(&[12, 11], &h), Some("notebook kernel"));
    assert_eq!(
        listener_helper(&[10, 11], &h),
        None,
        "the server's listener, inherited by the kernel, is the server's"
    );
    assert_eq!(listener_helper(&[11, 10], &h), None);
    assert_eq!(listener_helper(&[13], &h), None);
    assert_eq!(
        listener_helper(&[], &h),
        None,
        "no holder known: the server's"
    );
}

/// An orphaned `jupyter lab` in `APP` on 127.0.0.1:8888 with a running kernel on two random
/// loopback ports.
fn notebook() -> FakeProbe {
    FakeProbe::default()
        .with(process(100, 1, SERVER), APP)
        .with(process(101, 100, KERNEL), APP)
        .listen("127.0.0.1:8888", 100)
        .listen("127.0.0.1:40001", 101)
        .listen("127.0.0.1:40002", 101)
}

/// `(port, helper)` of every listener the scan shows.
fn roles(r: &Resource) -> Vec<(u16, Option<&str>)> {
    r.ports
        .iter()
        .map(|p| (p.port, p.helper.as_deref()))
        .collect()
}

#[test]
fn a_notebook_kernels_listeners_are_the_helpers_and_the_servers_port_is_the_servers() {
    let scan = scan(&notebook(), &opts(), &markers).unwrap();
    let r = only(&scan);
    assert_eq!(r.kind, "jupyter");
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert_eq!(
        roles(r),
        [
            (8888, None),
            (40001, Some("notebook kernel")),
            (40002, Some("notebook kernel"))
        ]
    );
    let server: Vec<u16> = r.server_ports().map(|p| p.port).collect();
    assert_eq!(server, [8888]);
    let said: Vec<&str> = r
        .evidence
        .iter()
        .filter(|e| e.kind == crate::model::card::EvidenceKind::Listening)
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(
        said,
        [
            "listens on 127.0.0.1:8888",
            "listens on 127.0.0.1:40001 (the notebook kernel's)",
            "listens on 127.0.0.1:40002 (the notebook kernel's)"
        ]
    );
}

#[test]
fn a_kernels_own_child_listening_is_the_kernels_too() {
    let probe = notebook()
        .with(process(102, 101, &["python3", "spawned.py"]), APP)
        .listen("127.0.0.1:40003", 102);
    let scan = scan(&probe, &opts(), &markers).unwrap();
    assert!(roles(only(&scan)).contains(&(40003, Some("notebook kernel"))));
}

#[test]
fn a_servers_listener_shared_with_its_kernel_stays_the_servers() {
    let mut probe = notebook();
    let shared = probe
        .sockets
        .as_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s.local.port() == 8888)
        .unwrap();
    shared.owners = vec![101, 100];
    let scan = scan(&probe, &opts(), &markers).unwrap();
    assert!(roles(only(&scan)).contains(&(8888, None)));
}

#[test]
fn a_client_on_a_kernels_port_still_makes_the_resource_red() {
    let probe = notebook()
        .with(process(200, 1, &["firefox"]), "/home/u")
        .established("127.0.0.1:40001", "127.0.0.1:50000", Some(101))
        .established("127.0.0.1:50000", "127.0.0.1:40001", Some(200));
    let scan = scan(&probe, &opts(), &markers).unwrap();
    let r = only(&scan);
    assert_eq!(r.level, Level::Red, "every listener counts for connections");
    assert_eq!(r.connections[0].local, "127.0.0.1:40001");
}

#[test]
fn the_servers_own_connection_to_its_kernel_is_internal() {
    let probe = notebook()
        .established("127.0.0.1:40001", "127.0.0.1:50000", Some(101))
        .established("127.0.0.1:50000", "127.0.0.1:40001", Some(100));
    let scan = scan(&probe, &opts(), &markers).unwrap();
    let r = only(&scan);
    assert_eq!(r.level, Level::Green, "{r:#?}");
    assert!(r.connections[0].internal);
}
