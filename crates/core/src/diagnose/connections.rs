//! The connection rule: a connection on one of the resource's listeners counts when either of
//! its ends is seen in the socket table — the server's end at the listener's address and port,
//! ESTABLISHED or still half-open (SYN-RECV: a listener with `TCP_DEFER_ACCEPT` keeps a client
//! that has sent nothing there, while the client's end is already established), or the client's
//! end established *to* the listener ([`reaches`]). So a connection the server has not accepted
//! yet (no owner) counts, and so does one whose server end the table does not show. The two ends
//! of one connection are one connection. A connection whose other end is held by a member of
//! the same resource is internal and does not count; one whose other end cannot be attributed
//! does.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};

use crate::probe::{Pid, Socket, TcpState};

/// One connection on a resource's listener, seen at either end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conn {
    /// The listener's end: the address and port the connection arrived at.
    pub local: SocketAddr,
    /// The other end's address and port.
    pub peer: SocketAddr,
    /// The first process holding the other end, when the table shows one; `None`: the peer
    /// cannot be attributed, and the connection counts as live.
    pub peer_pid: Option<Pid>,
    /// Every holder of the other end is a member: it does not count as live.
    pub internal: bool,
    /// The program holding the other end (`clients::client_of`), filled in by whoever holds
    /// the process table ([`name_clients`]); `None`: not attributed, or its row not read.
    pub client: Option<crate::model::client::Client>,
}

/// Names the client of each connection in `conns` from the process table (`row`: a pid's row,
/// `None` when it was not read), as user `uid` sees it.
pub fn name_clients<'t>(
    conns: &mut [Conn],
    row: impl Fn(Pid) -> Option<&'t crate::probe::ProcessInfo>,
    uid: u32,
) {
    for c in conns {
        c.client = super::clients::client_at(c.peer_pid, &row, uid);
    }
}

impl Conn {
    /// The connection as a card shows it.
    pub fn shown(&self) -> crate::model::card::Connection {
        crate::model::card::Connection {
            local: self.local.to_string(),
            peer: self.peer.to_string(),
            peer_pid: self.peer_pid,
            internal: self.internal,
            client: self.client.clone(),
        }
    }
}

/// `::ffff:127.0.0.1` and `127.0.0.1` are one address: an IPv4 client of a dual-stack listener
/// shows up in the IPv6 table with the mapped form.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether a listener bound to `listener` accepts connections arriving at `local`.
///
/// Address and port, not port alone: `127.0.0.1:5173` and `[::1]:5173` are different
/// listeners. A wildcard listener serves every address of its family; `[::]` may be dual-stack,
/// so it also serves IPv4 (over-matching can only make a resource redder, never greener).
pub fn serves(listener: SocketAddr, local: SocketAddr) -> bool {
    if listener.port() != local.port() {
        return false;
    }
    let (l, a) = (canonical(listener.ip()), canonical(local.ip()));
    match l {
        IpAddr::V6(v6) if v6.is_unspecified() => true,
        IpAddr::V4(v4) if v4.is_unspecified() => a.is_ipv4(),
        _ => l == a,
    }
}

/// `a` with an IPv4-mapped address in its IPv4 form.
pub fn canonical_addr(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(canonical(a.ip()), a.port())
}

/// Whether a client whose far end is `remote` reached `listener`: the listener's own address
/// and port or — a wildcard listener — its port at any address of this machine (`machine`, the
/// addresses the table's sockets are bound to; loopback always is).
///
/// Why the table's addresses are enough to tell a client from an outgoing connection to a
/// server elsewhere on the same port: every socket's own end is bound to one of this machine's
/// addresses, and a client here dialling one of them gets that very address as its own end
/// from the kernel (the local route's source; 127.0.0.0/8, whose source is 127.0.0.1, is
/// loopback) — so its own row puts the address it dialled in the set, and so does the server's
/// end while the table shows it. An address nothing here is bound to is another machine's.
pub fn reaches(listener: SocketAddr, remote: SocketAddr, machine: &HashSet<IpAddr>) -> bool {
    let ip = canonical(remote.ip());
    serves(listener, remote)
        && (!canonical(listener.ip()).is_unspecified() || ip.is_loopback() || machine.contains(&ip))
}

/// The addresses of this machine that `table` shows: every socket's own end but a listener's
/// wildcard, canonical.
fn machine_addresses(table: &[Socket]) -> HashSet<IpAddr> {
    table
        .iter()
        .map(|s| canonical(s.local.ip()))
        .filter(|ip| !ip.is_unspecified())
        .collect()
}

/// One connection as a card shows it: the listener's end, the other end, and the holders of
/// the other end (none: unattributed, which is never internal).
fn conn(local: SocketAddr, peer: SocketAddr, peer_owners: &[Pid], members: &HashSet<Pid>) -> Conn {
    Conn {
        local,
        peer,
        peer_pid: peer_owners.first().copied(),
        // Internal only when every holder of the other end is a member.
        internal: !peer_owners.is_empty() && peer_owners.iter().all(|p| members.contains(p)),
        client: None,
    }
}

/// The socket table indexed once per scan, so judging R resources against S sockets costs
/// about R + S lookups rather than R × S comparisons. Positions are into the table it was
/// built from, in table order.
#[derive(Debug, Default)]
pub struct SocketIndex {
    /// Servers' ends by local port: established or half-open (SYN-RECV) sockets.
    server_ends_by_port: HashMap<u16, Vec<usize>>,
    /// Established sockets by their far end's port: where clients' ends are looked for.
    established_by_remote_port: HashMap<u16, Vec<usize>>,
    /// Established sockets by their two ends, canonical; the first in table order wins.
    by_ends: HashMap<(SocketAddr, SocketAddr), usize>,
    /// Listening sockets by each of their holders.
    listeners_by_owner: HashMap<Pid, Vec<usize>>,
    /// This machine's addresses as the table shows them ([`reaches`]).
    machine: HashSet<IpAddr>,
}

impl SocketIndex {
    /// Indexes `table` in one pass.
    pub fn new(table: &[Socket]) -> Self {
        let mut index = SocketIndex {
            machine: machine_addresses(table),
            ..SocketIndex::default()
        };
        for (i, s) in table.iter().enumerate() {
            match s.state {
                TcpState::Established => {
                    index
                        .server_ends_by_port
                        .entry(s.local.port())
                        .or_default()
                        .push(i);
                    index
                        .established_by_remote_port
                        .entry(s.remote.port())
                        .or_default()
                        .push(i);
                    index
                        .by_ends
                        .entry((canonical_addr(s.local), canonical_addr(s.remote)))
                        .or_insert(i);
                }
                // Half-open: only ever a server's end, held by no process.
                TcpState::SynRecv => index
                    .server_ends_by_port
                    .entry(s.local.port())
                    .or_default()
                    .push(i),
                TcpState::Listen => {
                    for &owner in &s.owners {
                        index.listeners_by_owner.entry(owner).or_default().push(i);
                    }
                }
            }
        }
        index
    }

    /// The listening sockets any of `members` holds, in table order.
    pub fn listeners_of(&self, members: &HashSet<Pid>) -> Vec<usize> {
        let mut found: Vec<usize> = members
            .iter()
            .filter_map(|m| self.listeners_by_owner.get(m))
            .flatten()
            .copied()
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// The connections on `listeners`, seen at either end and each listed once, each attributed to
/// the process holding its other end where the table shows it: first those whose server end
/// the table shows, in table order, then those seen only at the client's end.
pub fn connections_on(
    listeners: &[SocketAddr],
    table: &[Socket],
    members: &HashSet<Pid>,
) -> Vec<Conn> {
    connections_indexed(listeners, table, &SocketIndex::new(table), members)
}

/// [`connections_on`] with the table's index built beforehand (once per scan).
pub fn connections_indexed(
    listeners: &[SocketAddr],
    table: &[Socket],
    index: &SocketIndex,
    members: &HashSet<Pid>,
) -> Vec<Conn> {
    let mut ports: Vec<u16> = listeners.iter().map(SocketAddr::port).collect();
    ports.sort_unstable();
    ports.dedup();
    // Rows filed under one of the listeners' ports, in table order.
    let on_ports = |by_port: &HashMap<u16, Vec<usize>>| -> Vec<usize> {
        let mut rows: Vec<usize> = ports
            .iter()
            .filter_map(|p| by_port.get(p))
            .flatten()
            .copied()
            .collect();
        rows.sort_unstable();
        rows
    };
    // One connection, one row: keyed by (the listener's end, the client's end), canonical.
    let mut seen: HashSet<(SocketAddr, SocketAddr)> = HashSet::new();
    let mut conns = Vec::new();
    for s in on_ports(&index.server_ends_by_port)
        .into_iter()
        .map(|i| &table[i])
    {
        if listeners.iter().any(|&l| serves(l, s.local))
            && seen.insert((canonical_addr(s.local), canonical_addr(s.remote)))
        {
            let peer_owners: &[Pid] = index
                .by_ends
                .get(&(canonical_addr(s.remote), canonical_addr(s.local)))
                .map_or(&[], |&j| table[j].owners.as_slice());
            conns.push(conn(s.local, s.remote, peer_owners, members));
        }
    }
    for s in on_ports(&index.established_by_remote_port)
        .into_iter()
        .map(|i| &table[i])
    {
        if listeners
            .iter()
            .any(|&l| reaches(l, s.remote, &index.machine))
            && seen.insert((canonical_addr(s.remote), canonical_addr(s.local)))
        {
            conns.push(conn(s.remote, s.local, &s.owners, members));
        }
    }
    conns
}

/// Connections waiting in an accept queue the table reports only as a count (macOS `soi_qlen`).
pub fn queued_on(listeners: &[&Socket]) -> u32 {
    listeners.iter().filter_map(|s| s.queued).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn est(local: &str, remote: &str, owner: Option<Pid>) -> Socket {
        Socket {
            local: a(local),
            remote: a(remote),
            state: TcpState::Established,
            owners: owner.into_iter().collect(),
            queued: None,
        }
    }

    /// A server's half-open end, as the kernel lists one: no process holds it.
    fn syn_recv(local: &str, remote: &str) -> Socket {
        Socket {
            state: TcpState::SynRecv,
            ..est(local, remote, None)
        }
    }

    fn listen(local: &str, owner: Pid) -> Socket {
        Socket {
            state: TcpState::Listen,
            ..est(local, "0.0.0.0:0", Some(owner))
        }
    }

    #[test]
    fn address_and_port_both_decide_which_listener_serves() {
        assert!(serves(a("127.0.0.1:5173"), a("127.0.0.1:5173")));
        assert!(!serves(a("127.0.0.1:5173"), a("[::1]:5173")));
        assert!(!serves(a("[::1]:5173"), a("127.0.0.1:5173")));
        assert!(!serves(a("127.0.0.1:5173"), a("127.0.0.1:5174")));
        assert!(serves(a("0.0.0.0:80"), a("10.0.0.5:80")));
        assert!(!serves(a("0.0.0.0:80"), a("[::1]:80")));
        assert!(serves(a("[::]:80"), a("[::ffff:127.0.0.1]:80")));
        assert!(
            serves(a("[::]:80"), a("127.0.0.1:80")),
            "dual-stack may serve IPv4"
        );
    }

    #[test]
    fn a_client_of_the_listener_is_a_live_connection() {
        let table = vec![
            est("127.0.0.1:5173", "127.0.0.1:40000", Some(10)),
            est("127.0.0.1:40000", "127.0.0.1:5173", Some(99)),
        ];
        let c = connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].peer_pid, Some(99));
        assert!(!c[0].internal);
    }

    #[test]
    fn an_unaccepted_connection_counts_though_no_process_holds_it() {
        let table = vec![est("127.0.0.1:5173", "127.0.0.1:40000", None)];
        let c = connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1);
        assert!(!c[0].internal, "an unattributed peer is never internal");
    }

    #[test]
    fn a_connection_between_members_is_internal() {
        let table = vec![
            est(
                "[::ffff:127.0.0.1]:8888",
                "[::ffff:127.0.0.1]:40000",
                Some(10),
            ),
            est("127.0.0.1:40000", "127.0.0.1:8888", Some(11)),
        ];
        let c = connections_on(&[a("[::]:8888")], &table, &HashSet::from([10, 11]));
        assert_eq!(c.len(), 1);
        assert!(c[0].internal);
    }

    #[test]
    fn a_peer_socket_shared_with_an_outsider_is_not_internal() {
        let mut client = est("127.0.0.1:40000", "127.0.0.1:8888", Some(11));
        client.owners.push(99);
        let table = vec![est("127.0.0.1:8888", "127.0.0.1:40000", Some(10)), client];
        let c = connections_on(&[a("127.0.0.1:8888")], &table, &HashSet::from([10, 11]));
        assert!(!c[0].internal);
    }

    #[test]
    fn connections_on_other_ports_and_outgoing_ones_do_not_count() {
        let table = vec![
            est("127.0.0.1:40001", "127.0.0.1:5432", Some(10)),
            est("127.0.0.1:5432", "127.0.0.1:40001", Some(50)),
        ];
        assert!(connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10])).is_empty());
    }

    #[test]
    fn a_half_open_server_end_on_the_listener_is_a_live_connection() {
        // TCP_DEFER_ACCEPT: the client (on another machine here, so only this end is seen) has
        // completed its handshake and sent nothing; the server's end stays SYN-RECV.
        let table = vec![
            listen("0.0.0.0:5173", 10),
            syn_recv("192.0.2.2:5173", "198.51.100.7:40000"),
        ];
        let c = connections_on(&[a("0.0.0.0:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].local, a("192.0.2.2:5173"));
        assert_eq!(c[0].peer, a("198.51.100.7:40000"));
        assert_eq!(c[0].peer_pid, None);
        assert!(!c[0].internal);
        // On another port, or another address, it is not this listener's.
        assert!(connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::new()).is_empty());
        assert!(connections_on(&[a("0.0.0.0:5174")], &table, &HashSet::new()).is_empty());
    }

    #[test]
    fn a_client_established_to_the_listener_counts_though_the_server_end_is_not_seen() {
        let table = vec![
            listen("127.0.0.1:5173", 10),
            est("127.0.0.1:40000", "127.0.0.1:5173", Some(99)),
        ];
        let c = connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].local, a("127.0.0.1:5173"), "the listener's end");
        assert_eq!(c[0].peer, a("127.0.0.1:40000"), "the client's end");
        assert_eq!(c[0].peer_pid, Some(99));
        assert!(!c[0].internal);
        // A client of a member is between members, seen from its end too.
        let c = connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10, 99]));
        assert!(c[0].internal);
        // An IPv4 client of a dual-stack listener, dialled as IPv4-mapped, is the same.
        let mapped = vec![est(
            "[::ffff:127.0.0.1]:40000",
            "[::ffff:127.0.0.1]:5173",
            Some(99),
        )];
        let c = connections_on(&[a("[::]:5173")], &mapped, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
    }

    #[test]
    fn the_two_ends_of_one_connection_are_one_connection() {
        // Half-open at the server, established at the client: the scan in a defer window.
        let table = vec![
            syn_recv("127.0.0.1:5173", "127.0.0.1:40000"),
            est("127.0.0.1:40000", "127.0.0.1:5173", Some(99)),
        ];
        let c = connections_on(&[a("127.0.0.1:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(
            (c[0].local, c[0].peer, c[0].peer_pid),
            (a("127.0.0.1:5173"), a("127.0.0.1:40000"), Some(99))
        );
        // Established at both ends, one of them in the IPv4-mapped form.
        let table = vec![
            est(
                "[::ffff:127.0.0.1]:5173",
                "[::ffff:127.0.0.1]:40000",
                Some(10),
            ),
            est("127.0.0.1:40000", "127.0.0.1:5173", Some(99)),
        ];
        let c = connections_on(&[a("[::]:5173")], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].peer_pid, Some(99));
    }

    #[test]
    fn a_wildcard_listener_is_reached_at_this_machines_addresses_only() {
        let machine = machine_addresses(&[
            listen("0.0.0.0:8080", 10),
            est("192.0.2.2:40002", "203.0.113.7:8080", Some(99)),
        ]);
        assert_eq!(machine, HashSet::from([a("192.0.2.2:0").ip()]));
        let wild = a("0.0.0.0:8080");
        assert!(
            reaches(wild, a("192.0.2.2:8080"), &machine),
            "an address of its own"
        );
        assert!(
            reaches(wild, a("127.0.0.2:8080"), &machine),
            "loopback, any of 127/8"
        );
        assert!(
            !reaches(wild, a("203.0.113.7:8080"), &machine),
            "another machine's server on the same port"
        );
        assert!(
            !reaches(wild, a("192.0.2.2:8081"), &machine),
            "another port"
        );
        assert!(
            !reaches(wild, a("[::1]:8080"), &machine),
            "IPv6 at an IPv4 listener"
        );
        let dual = a("[::]:8080");
        assert!(reaches(dual, a("[::1]:8080"), &machine));
        assert!(reaches(dual, a("[::ffff:192.0.2.2]:8080"), &machine));
        assert!(!reaches(dual, a("[2001:db8::1]:8080"), &machine));
        // A listener on one address is reached at that address, whatever the table shows.
        assert!(reaches(
            a("10.1.2.3:8080"),
            a("10.1.2.3:8080"),
            &HashSet::new()
        ));
        assert!(!reaches(a("10.1.2.3:8080"), a("192.0.2.2:8080"), &machine));

        // Through the table: a client dialling this machine's own address counts (its own end
        // is bound there), an outgoing connection to a server elsewhere on that port does not.
        let table = vec![
            listen("0.0.0.0:8080", 10),
            est("192.0.2.2:40001", "192.0.2.2:8080", Some(98)),
            est("192.0.2.2:40002", "203.0.113.7:8080", Some(99)),
        ];
        let c = connections_on(&[wild], &table, &HashSet::from([10]));
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].local, c[0].peer_pid), (a("192.0.2.2:8080"), Some(98)));
    }

    #[test]
    fn queued_counts_add_up_and_absent_counts_are_zero() {
        let mut l = est("127.0.0.1:1", "0.0.0.0:0", Some(1));
        l.state = TcpState::Listen;
        l.queued = Some(2);
        let mut m = l.clone();
        m.queued = None;
        assert_eq!(queued_on(&[&l, &m]), 2);
    }

    /// The table scan the index replaced, kept as the reference it must agree with.
    fn naive(listeners: &[SocketAddr], table: &[Socket], members: &HashSet<Pid>) -> Vec<Conn> {
        let same = |a: SocketAddr, b: SocketAddr| canonical_addr(a) == canonical_addr(b);
        let established: Vec<&Socket> = table
            .iter()
            .filter(|s| s.state == TcpState::Established)
            .collect();
        let machine = machine_addresses(table);
        let mut out: Vec<Conn> = Vec::new();
        let counted = |out: &[Conn], local: SocketAddr, peer: SocketAddr| {
            out.iter()
                .any(|c| same(c.local, local) && same(c.peer, peer))
        };
        for s in table {
            let server_end = matches!(s.state, TcpState::Established | TcpState::SynRecv);
            if server_end
                && listeners.iter().any(|&l| serves(l, s.local))
                && !counted(&out, s.local, s.remote)
            {
                let peer_owners: &[Pid] = established
                    .iter()
                    .find(|t| same(t.local, s.remote) && same(t.remote, s.local))
                    .map_or(&[], |t| t.owners.as_slice());
                out.push(conn(s.local, s.remote, peer_owners, members));
            }
        }
        for s in &established {
            if listeners.iter().any(|&l| reaches(l, s.remote, &machine))
                && !counted(&out, s.remote, s.local)
            {
                out.push(conn(s.remote, s.local, &s.owners, members));
            }
        }
        out
    }

    fn endpoint() -> impl proptest::strategy::Strategy<Value = SocketAddr> {
        use proptest::prelude::*;
        (
            prop::sample::select(vec![
                "127.0.0.1",
                "0.0.0.0",
                "10.0.0.1",
                "::1",
                "::",
                "::ffff:127.0.0.1",
            ]),
            prop::sample::select(vec![80u16, 5173, 40000, 40001]),
        )
            .prop_map(|(ip, port)| SocketAddr::new(ip.parse().unwrap(), port))
    }

    proptest::proptest! {
        #[test]
        fn the_index_agrees_with_a_scan_of_the_whole_table(
            rows in proptest::collection::vec(
                (endpoint(), endpoint(),
                 proptest::sample::select(vec![
                     TcpState::Listen, TcpState::Established, TcpState::SynRecv,
                 ]),
                 proptest::collection::vec(1u32..5, 0..3)),
                0..14,
            ),
            listeners in proptest::collection::vec(endpoint(), 0..3),
            members in proptest::collection::hash_set(1u32..5, 0..4),
        ) {
            let table: Vec<Socket> = rows
                .into_iter()
                .map(|(local, remote, state, owners)| Socket {
                    local,
                    remote,
                    state,
                    owners,
                    queued: None,
                })
                .collect();
            proptest::prop_assert_eq!(
                connections_on(&listeners, &table, &members),
                naive(&listeners, &table, &members)
            );
            let index = SocketIndex::new(&table);
            let by_index: Vec<usize> = index.listeners_of(&members);
            let by_scan: Vec<usize> = (0..table.len())
                .filter(|&i| {
                    table[i].state == TcpState::Listen
                        && table[i].owners.iter().any(|o| members.contains(o))
                })
                .collect();
            proptest::prop_assert_eq!(by_index, by_scan);
        }
    }
}
