//! A shared daemon's card (docs/design.md §2.4): a daemon orphaned by design and shared by
//! several editors, agents or builds (family `SharedDaemon`, `kinds/family.rs`) says what it
//! is and, while any client is attached over TCP or a unix socket, that it is shared and in
//! use — red, as the connections themselves are. With none attached it is judged as any other.

use std::collections::BTreeSet;

use super::connections::Conn;
use super::judge::Finding;
use super::kinds::{family, Family};
use super::unix_clients::UnixConn;
use crate::model::card::{Evidence, EvidenceKind, Level};
use crate::probe::Pid;
use crate::words;

/// The clients attached to a resource, one per client process (a client with several
/// connections is one), in the judge's order: its live TCP connections, then its unix ones.
/// Every connection the judge did not find internal counts, an unattributed one included.
pub fn attached(conns: &[Conn], unix: &[UnixConn]) -> Vec<String> {
    let mut seen: BTreeSet<Pid> = BTreeSet::new();
    let live = conns
        .iter()
        .filter(|c| !c.internal)
        .map(|c| (c.client.as_ref(), c.peer_pid));
    let on_unix = unix.iter().map(|c| (c.client.as_ref(), c.peer_pid));
    live.chain(on_unix)
        .filter(|(_, pid)| pid.is_none_or(|p| seen.insert(p)))
        .map(|(client, pid)| words::attached_client(client, pid))
        .collect()
}

/// Whether the judge's `findings` leave some client unseen (a table, a member's namespace or
/// open files, a process of the user's unreadable). Why: "no client attached" is then unknown,
/// never said.
pub fn clients_unseen(findings: &[Finding]) -> bool {
    findings.iter().any(|f| {
        let unseen = matches!(
            f,
            Finding::TablesUnreadable(_)
                | Finding::Blind { .. }
                | Finding::FdsUnreadable { .. }
                | Finding::ProcessUnreadable { .. }
        );
        unseen && f.level() != Level::Green
    })
}

/// The evidence a shared daemon's card carries about its use: red while any client is
/// attached (a stop would cut every one of them off), green with none. `None` for a kind of
/// another family, and when who is attached cannot be known (`attached` is `None`:
/// [`clients_unseen`]; the card is red for that already).
pub fn use_evidence(kind: Option<&str>, attached: Option<&[String]>) -> Option<Evidence> {
    let attached = attached?;
    if family(kind?) != Family::SharedDaemon {
        return None;
    }
    let (kind, level) = if attached.is_empty() {
        (EvidenceKind::ToolKind, Level::Green)
    } else {
        (EvidenceKind::LiveConnection, Level::Red)
    };
    Some(Evidence {
        kind,
        level,
        message: words::shared_daemon_use(attached),
        source: "socket table".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(peer_pid: Option<Pid>) -> UnixConn {
        UnixConn {
            name: b"/tmp/d.sock".to_vec(),
            peer_pid,
            client: None,
        }
    }

    #[test]
    fn a_shared_daemon_in_use_says_who_is_attached_and_is_red() {
        let clients = attached(
            &[],
            &[unix(Some(7)), unix(Some(7)), unix(Some(9)), unix(None)],
        );
        assert_eq!(clients, vec!["pid 7", "pid 9", "a client Pier cannot see"]);
        let e = use_evidence(Some("gopls-daemon"), Some(&clients)).unwrap();
        assert_eq!(
            (e.kind, e.level),
            (EvidenceKind::LiveConnection, Level::Red)
        );
        assert_eq!(
            e.message,
            "shared and in use: 3 clients attached (pid 7, pid 9, a client Pier cannot see): not \
             residue while in use"
        );
    }

    #[test]
    fn a_shared_daemon_with_no_client_says_so_in_green_and_other_kinds_say_nothing() {
        let e = use_evidence(Some("gopls-daemon"), Some(&[])).unwrap();
        assert_eq!(
            (e.level, e.message.as_str()),
            (Level::Green, "shared by no one now: no client attached")
        );
        assert!(use_evidence(Some("vite"), Some(&["pid 7".to_owned()])).is_none());
        assert!(use_evidence(None, Some(&[])).is_none());
    }
}
