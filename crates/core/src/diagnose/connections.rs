//! The connection rule: a live connection is an ESTABLISHED socket whose local address and port
//! are those of one of the resource's listeners, read from the socket table — so a connection
//! the server has not accepted yet (no owner) still counts. A connection whose other end is held
//! by a member of the same resource is internal and does not count; one whose other end cannot
//! be attributed does.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};

use crate::probe::{Pid, Socket, TcpState};

/// One established connection on a resource's listener.
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
}

impl Conn {
    /// The connection as a card shows it.
    pub fn shown(&self) -> crate::model::card::Connection {
        crate::model::card::Connection {
            local: self.local.to_string(),
            peer: self.peer.to_string(),
            peer_pid: self.peer_pid,
            internal: self.internal,
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

/// The socket table indexed once per scan, so judging R resources against S sockets costs
/// about R + S lookups rather than R × S comparisons. Positions are into the table it was
/// built from, in table order.
#[derive(Debug, Default)]
pub struct SocketIndex {
    /// Established sockets by local port.
    established_by_port: HashMap<u16, Vec<usize>>,
    /// Established sockets by their two ends, canonical; the first in table order wins.
    by_ends: HashMap<(SocketAddr, SocketAddr), usize>,
    /// Listening sockets by each of their holders.
    listeners_by_owner: HashMap<Pid, Vec<usize>>,
}

impl SocketIndex {
    /// Indexes `table` in one pass.
    pub fn new(table: &[Socket]) -> Self {
        let mut index = SocketIndex::default();
        for (i, s) in table.iter().enumerate() {
            match s.state {
                TcpState::Established => {
                    index
                        .established_by_port
                        .entry(s.local.port())
                        .or_default()
                        .push(i);
                    index
                        .by_ends
                        .entry((canonical_addr(s.local), canonical_addr(s.remote)))
                        .or_insert(i);
                }
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

/// The established connections on `listeners`, each attributed to the process holding its other
/// end where the table shows it.
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
    let mut candidates: Vec<usize> = ports
        .iter()
        .filter_map(|p| index.established_by_port.get(p))
        .flatten()
        .copied()
        .collect();
    candidates.sort_unstable();
    candidates
        .into_iter()
        .map(|i| &table[i])
        .filter(|s| listeners.iter().any(|&l| serves(l, s.local)))
        .map(|s| {
            let peer_owners: &[Pid] = index
                .by_ends
                .get(&(canonical_addr(s.remote), canonical_addr(s.local)))
                .map_or(&[], |&j| table[j].owners.as_slice());
            Conn {
                local: s.local,
                peer: s.remote,
                peer_pid: peer_owners.first().copied(),
                // Internal only when every holder of the other end is a member.
                internal: !peer_owners.is_empty()
                    && peer_owners.iter().all(|p| members.contains(p)),
            }
        })
        .collect()
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
        established
            .iter()
            .filter(|s| listeners.iter().any(|&l| serves(l, s.local)))
            .map(|s| {
                let peer_owners: &[Pid] = established
                    .iter()
                    .find(|t| same(t.local, s.remote) && same(t.remote, s.local))
                    .map_or(&[], |t| t.owners.as_slice());
                Conn {
                    local: s.local,
                    peer: s.remote,
                    peer_pid: peer_owners.first().copied(),
                    internal: !peer_owners.is_empty()
                        && peer_owners.iter().all(|p| members.contains(p)),
                }
            })
            .collect()
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
                (endpoint(), endpoint(), proptest::prelude::any::<bool>(),
                 proptest::collection::vec(1u32..5, 0..3)),
                0..14,
            ),
            listeners in proptest::collection::vec(endpoint(), 0..3),
            members in proptest::collection::hash_set(1u32..5, 0..4),
        ) {
            let table: Vec<Socket> = rows
                .into_iter()
                .map(|(local, remote, listen, owners)| Socket {
                    local,
                    remote,
                    state: if listen { TcpState::Listen } else { TcpState::Established },
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
