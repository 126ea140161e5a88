use super::*;

fn argv(s: &str) -> Vec<Vec<u8>> {
    s.split(' ').map(|a| a.as_bytes().to_vec()).collect()
}

#[test]
fn a_browsers_remote_debugging_port_in_either_form() {
    let chromium =
        "/usr/lib/chromium/chromium --headless=new --remote-debugging-port=9222 about:blank";
    assert_eq!(port_of(&argv(chromium)), Some(DebugPort::Port(9222)));
    assert_eq!(
        port_of(&argv("firefox --remote-debugging-port 9333")),
        Some(DebugPort::Port(9333))
    );
    assert_eq!(
        port_of(&argv("chrome --remote-debugging-port=0")),
        Some(DebugPort::Any)
    );
    assert_eq!(port_of(&argv("firefox -marionette")), Some(DebugPort::Any));
    assert_eq!(port_of(&argv("firefox --marionette")), Some(DebugPort::Any));
    assert_eq!(
        port_of(&argv("firefox --remote-debugging-port")),
        Some(DebugPort::Any)
    );
    assert_eq!(port_of(&argv("chromium --headless=new about:blank")), None);
    assert!(is_debugging_listener(
        &argv("chrome --remote-debugging-port=0"),
        41000
    ));
    assert!(!is_debugging_listener(&argv(chromium), 41000));
    assert!(is_debugging_listener(&argv(chromium), 9222));
}

#[test]
fn a_runtimes_inspector_among_its_own_flags_only() {
    assert_eq!(
        port_of(&argv("node --inspect app.js")),
        Some(DebugPort::Port(9229))
    );
    assert_eq!(
        port_of(&argv("node --inspect=127.0.0.1:9333 app.js")),
        Some(DebugPort::Port(9333))
    );
    assert_eq!(
        port_of(&argv("node --inspect-brk=9444 app.js")),
        Some(DebugPort::Port(9444))
    );
    assert_eq!(
        port_of(&argv("node --inspect-wait app.js")),
        Some(DebugPort::Port(9229))
    );
    assert_eq!(
        port_of(&argv("node --inspect=0 app.js")),
        Some(DebugPort::Any)
    );
    assert_eq!(
        port_of(&argv("node --inspect=localhost app.js")),
        Some(DebugPort::Any)
    );
    assert_eq!(
        port_of(&argv(
            "/usr/bin/node22 --inspect --inspect-port=9555 app.js"
        )),
        Some(DebugPort::Port(9555))
    );
    assert_eq!(
        port_of(&argv("node -r ts-node/register --inspect app.ts")),
        Some(DebugPort::Port(9229))
    );
    assert_eq!(
        port_of(&argv("deno run --inspect-brk main.ts")),
        Some(DebugPort::Port(9229))
    );
    assert_eq!(
        port_of(&argv("bun --inspect server.ts")),
        Some(DebugPort::Port(6499))
    );
    // The script's arguments are the script's.
    assert_eq!(port_of(&argv("node app.js --inspect")), None);
    assert_eq!(
        port_of(&argv("node launch.js --remote-debugging-port=9222")),
        None
    );
    assert_eq!(port_of(&argv("node -- --inspect")), None);
    assert_eq!(port_of(&argv("node server.js")), None);
}

#[test]
fn a_browser_on_a_debugging_pipe_and_nothing_else() {
    assert!(driven_by_pipe(&argv(
        "/usr/lib/chromium/chromium --headless=new --remote-debugging-pipe about:blank"
    )));
    assert!(driven_by_pipe(&argv("chrome --remote-debugging-pipe=cbor")));
    assert!(driven_by_pipe(&argv("firefox -juggler-pipe -silent")));
    assert!(!driven_by_pipe(&argv("chromium --remote-debugging-port=0")));
    assert!(!driven_by_pipe(&argv(
        "node run.js --remote-debugging-pipe"
    )));
    assert!(!driven_by_pipe(&[]));
}

/// The judge over one table, with the rows of `processes` (argv read) as the caller's.
mod judged {
    use std::collections::HashSet;

    use crate::diagnose::connections::SocketIndex;
    use crate::diagnose::judge::{network, Finding};
    use crate::model::card::Level;
    use crate::probe::fake::process;
    use crate::probe::{Pid, ProbeError, ProcessInfo, Socket, SocketTable, TcpState};

    fn socket(local: &str, remote: &str, state: TcpState, owner: Pid) -> Socket {
        Socket {
            local: local.parse().unwrap(),
            remote: remote.parse().unwrap(),
            state,
            owners: vec![owner],
            queued: None,
        }
    }

    /// chromedriver (10) started Chromium (11), which listens on 127.0.0.1:`port`; chromedriver
    /// is its client: one tree, one connection between members.
    fn driver_and_browser(port: u16, chromium_flag: &str) -> (SocketTable, Vec<ProcessInfo>) {
        let at = format!("127.0.0.1:{port}");
        let table = SocketTable {
            sockets: vec![
                socket("127.0.0.1:9515", "0.0.0.0:0", TcpState::Listen, 10),
                socket(&at, "0.0.0.0:0", TcpState::Listen, 11),
                socket(&at, "127.0.0.1:40100", TcpState::Established, 11),
                socket("127.0.0.1:40100", &at, TcpState::Established, 10),
            ],
            ..SocketTable::default()
        };
        let rows = vec![
            process(10, 1, &["/usr/bin/chromedriver", "--port=9515"]),
            process(
                11,
                10,
                &[
                    "/usr/lib/chromium/chromium",
                    "--headless=new",
                    chromium_flag,
                ],
            ),
        ];
        (table, rows)
    }

    fn findings(table: &SocketTable, rows: &[ProcessInfo]) -> Vec<Finding> {
        let members: HashSet<Pid> = rows.iter().map(|p| p.identity.pid).collect();
        let index = SocketIndex::new(&table.sockets);
        let row = |pid| rows.iter().find(|p: &&ProcessInfo| p.identity.pid == pid);
        network(Ok::<_, ProbeError>(table), &index, &members, row, 1000).findings
    }

    #[test]
    fn a_driver_in_the_same_tree_on_the_debugging_port_is_a_client_at_work() {
        for flag in ["--remote-debugging-port=0", "--remote-debugging-port=41234"] {
            let (table, rows) = driver_and_browser(41234, flag);
            let found = findings(&table, &rows);
            assert_eq!(found.len(), 1, "{flag}: {found:?}");
            assert_eq!(found[0].level(), Level::Red, "{flag}");
            let e = found[0].evidence();
            assert_eq!(
                e.message,
                "a client on its debugging port :41234: chromedriver (pid 10: `chromedriver \
                 --port=9515`), a driver at work (127.0.0.1:41234 ← 127.0.0.1:40100)",
                "{flag}"
            );
            assert_eq!(e.kind, crate::model::card::EvidenceKind::LiveConnection);
        }
    }

    #[test]
    fn the_same_connection_on_a_port_that_is_not_for_debugging_stays_internal() {
        let (table, rows) = driver_and_browser(41234, "--remote-debugging-port=9222");
        let found = findings(&table, &rows);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(matches!(&found[0], Finding::Connection(c) if c.internal));
        assert_eq!(found[0].level(), Level::Green);
    }

    #[test]
    fn a_browser_on_a_debugging_pipe_is_driven_by_its_parent() {
        let rows = vec![
            process(
                20,
                1,
                &["node", "/home/u/app/node_modules/.bin/playwright", "test"],
            ),
            process(
                21,
                20,
                &[
                    "/usr/lib/chromium/chromium",
                    "--headless=new",
                    "--remote-debugging-pipe",
                ],
            ),
            process(22, 21, &["/usr/lib/chromium/chromium", "--type=zygote"]),
        ];
        let found = findings(&SocketTable::default(), &rows);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].level(), Level::Red);
        assert_eq!(
            found[0].evidence().message,
            "pid 21 is driven through its debugging pipe by playwright (pid 20: `node \
             playwright test`), a driver at work"
        );
        // Orphaned, still running: whoever inherited the pipe's other end drives it.
        let mut orphan = vec![rows[1].clone()];
        orphan[0].ppid = 1;
        let found = findings(&SocketTable::default(), &orphan);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].level(), Level::Red);
    }
}

/// Found in CI: under a desktop session (a D-Bus session bus, a display) Chromium writes its
/// command line over its argv as one string, as its helpers always do.
#[test]
fn a_browser_that_wrote_its_command_line_as_one_string_is_read_by_its_words() {
    let joined = |s: &str| vec![s.as_bytes().to_vec()];
    assert_eq!(
        port_of(&joined(
            "/usr/lib/chromium/chromium --headless --remote-debugging-port=9222 about:blank"
        )),
        Some(DebugPort::Port(9222))
    );
    assert!(driven_by_pipe(&joined(
        "/usr/lib/chromium/chromium --headless --remote-debugging-pipe --no-startup-window"
    )));
}
