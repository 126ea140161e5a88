//! The unix-socket connection rule (docs/design.md §2.4): a client attached over a unix
//! socket to one of the resource's unix listeners is a live connection, as a TCP client is.
//!
//! The server's end of an accepted unix connection carries its listener's name (Linux and XNU
//! both copy it at accept), and is held by the server: so a connection on a member's listener
//! is a connected socket a member holds whose name is that of a unix listener a member holds.
//! Its other end is the client. Internal when every holder of the other end is a member; an
//! other end the table cannot attribute (no peer read, a peer nobody walked holds) counts, as
//! for TCP. A closed other end is nobody: the client has left.

use std::collections::{HashMap, HashSet};

use crate::model::client::Client;
use crate::probe::{Pid, ProcessInfo, SocketTable, UnixPeer, UnixSocket};

/// A client attached over a unix socket to one of the resource's unix listeners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnixConn {
    /// The listener's name (a path, or `@…` for a Linux abstract name), as read.
    pub name: Vec<u8>,
    /// The first holder of the client's end outside the resource; `None`: it cannot be
    /// attributed, and counts all the same.
    pub peer_pid: Option<Pid>,
    /// The program holding the client's end, filled in by whoever holds the process table
    /// ([`name_unix_clients`]).
    pub client: Option<Client>,
}

/// The clients attached to the unix listeners `members` hold, and how many connections wait
/// in those listeners' accept queues.
pub fn unix_clients(table: &SocketTable, members: &HashSet<Pid>) -> (Vec<UnixConn>, u32) {
    let held = |s: &UnixSocket| s.owners.iter().any(|o| members.contains(o));
    let listeners: Vec<&UnixSocket> = table
        .unix
        .iter()
        .filter(|s| s.listening && held(s))
        .collect();
    let queued = listeners
        .iter()
        .filter_map(|s| s.queued)
        .fold(0u32, u32::saturating_add);
    let names: HashSet<&[u8]> = listeners.iter().filter_map(|s| s.name.as_deref()).collect();
    if names.is_empty() {
        return (Vec::new(), queued);
    }
    let by_id: HashMap<u64, &UnixSocket> = table.unix.iter().map(|s| (s.id, s)).collect();
    let conns = table
        .unix
        .iter()
        .filter(|s| !s.listening && held(s))
        .filter(|s| s.name.as_deref().is_some_and(|n| names.contains(n)))
        .filter_map(|s| {
            let peer_pid = match s.peer {
                UnixPeer::Closed => return None,
                UnixPeer::Unknown => None,
                UnixPeer::Socket(id) => match by_id.get(&id) {
                    Some(peer) if !peer.owners.is_empty() => {
                        // Internal: the stop ends both sides.
                        Some(*peer.owners.iter().find(|o| !members.contains(o))?)
                    }
                    _ => None,
                },
            };
            Some(UnixConn {
                name: s.name.clone().unwrap_or_default(),
                peer_pid,
                client: None,
            })
        })
        .collect();
    (conns, queued)
}

/// Names the client of each of `conns` from the process table (`row`: a pid's row, `None`
/// when it was not read), as user `uid` sees it.
pub fn name_unix_clients<'t>(
    conns: &mut [UnixConn],
    row: impl Fn(Pid) -> Option<&'t ProcessInfo>,
    uid: u32,
) {
    for c in conns {
        c.client = super::clients::client_at(c.peer_pid, &row, uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOCK: &str = "/tmp/gopls-daemon.sock";

    fn sock(
        id: u64,
        name: Option<&str>,
        listening: bool,
        peer: UnixPeer,
        owners: &[Pid],
    ) -> UnixSocket {
        UnixSocket {
            id,
            name: name.map(|n| n.as_bytes().to_vec()),
            listening,
            peer,
            queued: None,
            owners: owners.to_vec(),
        }
    }

    /// A daemon (pid 10) listening on `SOCK`, with one accepted connection whose client's
    /// end is `client`.
    fn daemon_with(client: Option<UnixSocket>) -> SocketTable {
        let mut unix = vec![
            sock(1, Some(SOCK), true, UnixPeer::Unknown, &[10]),
            sock(2, Some(SOCK), false, UnixPeer::Socket(3), &[10]),
        ];
        unix.extend(client);
        SocketTable {
            unix,
            ..SocketTable::default()
        }
    }

    fn members(pids: &[Pid]) -> HashSet<Pid> {
        pids.iter().copied().collect()
    }

    #[test]
    fn a_client_outside_the_resource_is_a_live_connection_named_by_its_pid() {
        let table = daemon_with(Some(sock(3, None, false, UnixPeer::Socket(2), &[20])));
        let (conns, _) = unix_clients(&table, &members(&[10]));
        assert_eq!(conns.len(), 1);
        assert_eq!(
            (conns[0].name.as_slice(), conns[0].peer_pid),
            (SOCK.as_bytes(), Some(20))
        );
    }

    #[test]
    fn a_client_inside_the_resource_does_not_count() {
        let table = daemon_with(Some(sock(3, None, false, UnixPeer::Socket(2), &[11])));
        assert!(unix_clients(&table, &members(&[10, 11])).0.is_empty());
        // Held by a member and by someone else (an fd passed on): it counts.
        let table = daemon_with(Some(sock(3, None, false, UnixPeer::Socket(2), &[11, 30])));
        let (conns, _) = unix_clients(&table, &members(&[10, 11]));
        assert_eq!(conns[0].peer_pid, Some(30));
    }

    #[test]
    fn a_peer_that_cannot_be_attributed_counts() {
        // Not in the table (held by no process walked), or a table without peers.
        let (conns, _) = unix_clients(&daemon_with(None), &members(&[10]));
        assert_eq!((conns.len(), conns[0].peer_pid), (1, None));
        let mut table = daemon_with(None);
        table.unix[1].peer = UnixPeer::Unknown;
        assert_eq!(unix_clients(&table, &members(&[10])).0.len(), 1);
    }

    #[test]
    fn a_closed_peer_an_unrelated_socket_or_another_resource_s_listener_is_no_client() {
        let mut table = daemon_with(None);
        table.unix[1].peer = UnixPeer::Closed;
        assert!(unix_clients(&table, &members(&[10])).0.is_empty());
        // A member's connection under another name (a client of someone else's daemon).
        let mut table = daemon_with(None);
        table.unix[1].name = Some(b"/run/dbus".to_vec());
        assert!(unix_clients(&table, &members(&[10])).0.is_empty());
        // Not a member's listener at all.
        assert!(unix_clients(&daemon_with(None), &members(&[99]))
            .0
            .is_empty());
    }

    #[test]
    fn connections_waiting_in_a_member_listener_s_queue_are_counted() {
        let mut table = daemon_with(None);
        table.unix[0].queued = Some(2);
        assert_eq!(unix_clients(&table, &members(&[10])).1, 2);
        assert_eq!(unix_clients(&table, &members(&[99])).1, 0);
    }
}
