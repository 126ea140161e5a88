//! The agent's own, over synthetic process tables: `fake::process` gives each row the start
//! time `pid * 10`, its own session and no terminal.

use super::*;
use crate::probe::fake::process;
use crate::probe::UnreadableProcess;

const CLIENT: Pid = 100;

fn list(rows: Vec<ProcessInfo>) -> ProcessList {
    ProcessList {
        processes: rows,
        ..ProcessList::default()
    }
}

fn id(pid: Pid) -> Identity {
    Identity {
        pid,
        start_time: u64::from(pid) * 10,
    }
}

/// A shell a person types into: it leads its session on a terminal.
fn person_shell(pid: Pid, ppid: Pid) -> ProcessInfo {
    let mut p = process(pid, ppid, &["bash"]);
    p.tty_nr = 34816;
    p
}

/// init, the agent (a node program, `Other`), and under it `npm run dev` → `sh -c vite` →
/// the server as root 300.
fn agent_tree(middle: Vec<ProcessInfo>, root_parent: Pid) -> ProcessList {
    let mut rows = vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["node", "/opt/agent/cli.js"]),
    ];
    rows.extend(middle);
    rows.push(process(
        300,
        root_parent,
        &["/usr/bin/python3", "-m", "http.server", "0"],
    ));
    list(rows)
}

fn launchers() -> Vec<ProcessInfo> {
    vec![
        process(200, CLIENT, &["npm", "run", "dev"]),
        process(210, 200, &["sh", "-c", "python3 -m http.server 0"]),
    ]
}

// --- client_of ---

#[test]
fn the_client_is_the_servers_nearest_ancestor_above_its_launchers() {
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["node", "/opt/agent/cli.js"]),
        process(110, CLIENT, &["sh", "-c", "npx pier mcp"]),
        process(120, 110, &["npx", "pier", "mcp"]),
        process(130, 120, &["env", "RUST_LOG=info", "pier", "mcp"]),
        process(140, 130, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Ok(id(CLIENT)));
}

#[test]
fn a_server_started_directly_has_its_parent_for_client() {
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["python3", "/opt/agent/client.py"]),
        process(140, CLIENT, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Ok(id(CLIENT)));
}

#[test]
fn a_server_a_person_started_has_no_client() {
    let cases: Vec<(ProcessInfo, &str)> = vec![
        (person_shell(50, 1), "interactive shell"),
        (process(50, 1, &["tmux"]), "terminal multiplexer"),
        (process(50, 1, &["code"]), "editor"),
        (process(50, 1, &["script", "-qfc", "bash"]), "terminal"),
        (process(50, 1, &["pm2"]), "process manager"),
        (
            process(50, 1, &["/lib/systemd/systemd", "--user"]),
            "subreaper",
        ),
    ];
    for (parent, words) in cases {
        let l = list(vec![
            process(1, 0, &["/sbin/init"]),
            parent,
            process(110, 50, &["sh", "-c", "pier mcp"]),
            process(140, 110, &["pier", "mcp"]),
        ]);
        match client_of(&l, 140) {
            Err(NoClient::Person(who)) => assert!(who.contains(words), "{who} ≠ {words}"),
            other => panic!("{words}: {other:?}"),
        }
    }
}

#[test]
fn a_server_whose_launcher_was_adopted_by_init_has_no_client() {
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(110, 1, &["sh", "-c", "pier mcp"]),
        process(140, 110, &["pier", "mcp"]),
    ]);
    assert!(matches!(client_of(&l, 140), Err(NoClient::Person(w)) if w.contains("init")));
}

#[test]
fn an_unread_link_of_the_servers_chain_finds_no_client() {
    let mut l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(140, 110, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Err(NoClient::Unread), "parent absent");
    assert_eq!(client_of(&l, 141), Err(NoClient::Unread), "server absent");
    l.processes.push(process(110, 1, &["sh", "-c", "pier mcp"]));
    l.unreadable.push(UnreadableProcess {
        pid: 110,
        uid: None,
        error: "EACCES".into(),
    });
    assert_eq!(
        client_of(&l, 140),
        Err(NoClient::Unread),
        "parent unreadable"
    );
}

#[test]
fn a_loop_of_launchers_ends_unread() {
    let l = list(vec![
        process(110, 120, &["sh", "-c", "x"]),
        process(120, 110, &["sh", "-c", "y"]),
        process(140, 110, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Err(NoClient::Unread));
}

// --- judge ---

#[test]
fn a_root_the_agent_started_through_launchers_is_its_own() {
    let l = agent_tree(launchers(), 210);
    assert_eq!(judge(&l, id(300), id(CLIENT), 1500), Ok(()));
    let direct = agent_tree(vec![], CLIENT);
    assert_eq!(judge(&direct, id(300), id(CLIENT), 1500), Ok(()));
}

#[test]
fn a_root_started_before_the_session_is_not_its_own() {
    let l = agent_tree(launchers(), 210);
    assert_eq!(judge(&l, id(300), id(CLIENT), 3000), Err(NotOwn::Before));
    assert_eq!(judge(&l, id(300), id(CLIENT), 3001), Err(NotOwn::Before));
    assert_eq!(judge(&l, id(300), id(CLIENT), 2999), Ok(()));
}

#[test]
fn a_root_outside_the_clients_tree_is_not_descended() {
    let mut l = agent_tree(vec![process(200, 1, &["npm", "run", "dev"])], 200);
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Err(NotOwn::NotDescended));
    // A person's shell on the way does not matter when the chain never reaches the client.
    l.processes.push(person_shell(250, 1));
    l.processes
        .iter_mut()
        .find(|p| p.identity.pid == 200)
        .unwrap()
        .ppid = 250;
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Err(NotOwn::NotDescended));
}

#[test]
fn a_client_pid_held_by_another_process_now_is_not_the_client() {
    let l = agent_tree(launchers(), 210);
    let earlier = Identity {
        pid: CLIENT,
        start_time: 999,
    };
    assert_eq!(judge(&l, id(300), earlier, 0), Err(NotOwn::NotDescended));
}

#[test]
fn a_root_started_through_a_persons_process_is_not_its_own() {
    let cases: Vec<(ProcessInfo, &str)> = vec![
        (person_shell(250, CLIENT), "interactive shell"),
        (process(250, CLIENT, &["bash"]), "interactive shell"),
        (process(250, CLIENT, &["-zsh"]), "interactive shell"),
        (
            process(250, CLIENT, &["script", "-qfc", "bash"]),
            "terminal",
        ),
        (process(250, CLIENT, &["tmux"]), "terminal multiplexer"),
        (process(250, CLIENT, &["nvim"]), "editor"),
        (process(250, CLIENT, &["pm2"]), "process manager"),
        (process(250, CLIENT, &["systemd", "--user"]), "subreaper"),
    ];
    for (person, words) in cases {
        let l = agent_tree(
            vec![
                person,
                process(210, 250, &["sh", "-c", "python3 -m http.server"]),
            ],
            210,
        );
        match judge(&l, id(300), id(CLIENT), 0) {
            Err(NotOwn::ThroughPerson(who)) => assert!(who.contains(words), "{who} ≠ {words}"),
            other => panic!("{words}: {other:?}"),
        }
    }
}

#[test]
fn a_program_leading_a_terminal_session_is_a_persons() {
    let mut other = process(250, CLIENT, &["/opt/bin/agent-runner"]);
    let l = agent_tree(vec![other.clone()], 250);
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Ok(()), "no terminal");
    other.tty_nr = 34816;
    let l = agent_tree(vec![other.clone()], 250);
    assert!(matches!(
        judge(&l, id(300), id(CLIENT), 0),
        Err(NotOwn::ThroughPerson(_))
    ));
    // On a terminal but not leading its session: the agent's own pty child, not a login.
    other.session = CLIENT;
    let l = agent_tree(vec![other], 250);
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Ok(()));
}

#[test]
fn a_dev_tool_between_is_a_launcher() {
    let l = agent_tree(vec![process(250, CLIENT, &["nodemon", "server.js"])], 250);
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Ok(()));
}

#[test]
fn an_unread_link_refuses_as_unread() {
    let mut l = agent_tree(launchers(), 210);
    l.processes.retain(|p| p.identity.pid != 200);
    assert_eq!(
        judge(&l, id(300), id(CLIENT), 0),
        Err(NotOwn::Unread),
        "absent"
    );

    let mut l = agent_tree(launchers(), 210);
    l.unreadable.push(UnreadableProcess {
        pid: 200,
        uid: None,
        error: "EACCES".into(),
    });
    assert_eq!(
        judge(&l, id(300), id(CLIENT), 0),
        Err(NotOwn::Unread),
        "unreadable"
    );

    let mut l = agent_tree(launchers(), 210);
    let npm = l
        .processes
        .iter_mut()
        .find(|p| p.identity.pid == 200)
        .unwrap();
    npm.argv.clear();
    npm.argv_unread = true;
    assert_eq!(
        judge(&l, id(300), id(CLIENT), 0),
        Err(NotOwn::Unread),
        "argv unread"
    );
}

#[test]
fn a_root_not_in_the_table_is_unread() {
    let l = agent_tree(launchers(), 210);
    assert_eq!(judge(&l, id(301), id(CLIENT), 0), Err(NotOwn::Unread));
    let reused = Identity {
        pid: 300,
        start_time: 1,
    };
    assert_eq!(judge(&l, reused, id(CLIENT), 0), Err(NotOwn::Unread));
}

#[test]
fn a_loop_of_parents_ends_not_descended() {
    let l = agent_tree(
        vec![
            process(200, 210, &["npm", "run", "dev"]),
            process(210, 200, &["sh", "-c", "x"]),
        ],
        210,
    );
    assert_eq!(judge(&l, id(300), id(CLIENT), 0), Err(NotOwn::NotDescended));
}

/// An editor Pier does not list by name (a VS Code fork) as the MCP client: its extension host
/// is an Electron helper, the person's; a debug run it starts is never the agent's own, and a
/// server started through such a host is not either.
#[test]
fn an_electron_editors_helper_is_the_persons_not_an_agent() {
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(50, 1, &["/usr/share/windsurf/windsurf"]),
        process(
            CLIENT,
            50,
            &[
                "/usr/share/windsurf/windsurf",
                "--type=utility",
                "--utility-sub-type=node",
            ],
        ),
        process(140, CLIENT, &["pier", "mcp"]),
        process(
            300,
            CLIENT,
            &["/usr/bin/node", "--inspect-brk=9229", "server.js"],
        ),
    ]);
    assert!(matches!(client_of(&l, 140), Err(NoClient::Person(_))));
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["agent"]),
        process(60, CLIENT, &["/opt/ide/ide", "--type=utility"]),
        process(300, 60, &["/usr/bin/node", "server.js"]),
    ]);
    assert!(matches!(
        judge(&l, id(300), id(CLIENT), 0),
        Err(NotOwn::ThroughPerson(_))
    ));
}

/// A client run by a runtime Pier knows as a launcher (`bun agent.ts`) is the client: the
/// walk climbs only past launchers that start the next program and nothing else.
#[test]
fn a_runtime_running_the_agent_is_the_client_not_climbed_past() {
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(50, 1, &["/opt/someide/someide"]),
        process(CLIENT, 50, &["bun", "agent.ts"]),
        process(140, CLIENT, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Ok(id(CLIENT)));
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["claude"]),
        process(130, CLIENT, &["sh", "-c", "pier mcp"]),
        process(140, 130, &["pier", "mcp"]),
    ]);
    assert_eq!(client_of(&l, 140), Ok(id(CLIENT)), "sh -c is climbed past");
    let l = list(vec![
        process(1, 0, &["/sbin/init"]),
        process(CLIENT, 1, &["claude"]),
        process(130, CLIENT, &["npm exec @acme/pier mcp"]),
        process(140, 130, &["pier", "mcp"]),
    ]);
    assert_eq!(
        client_of(&l, 140),
        Ok(id(CLIENT)),
        "npx's `npm exec` is climbed past"
    );
}

/// OpenSSH 9.8 split sshd: a connection's process is `sshd-session` (title
/// `sshd-session: user@notty`). `ssh devbox pier mcp` then makes it the client, and with a
/// shared (ControlMaster) connection the person's own `ssh devbox 'npm run dev'` runs under
/// it through `bash -c` alone: it would pass for the agent's own.
#[test]
fn a_server_started_over_ssh_has_no_client_whatever_sshd_is_called() {
    for (argv0, comm) in [
        ("sshd: dev@notty", "sshd"),
        ("sshd-session: dev@notty", "sshd-session"),
    ] {
        let mut sshd = process(CLIENT, 1, &[argv0]);
        sshd.comm = comm.into();
        let l = list(vec![
            process(1, 0, &["/sbin/init"]),
            sshd,
            process(110, CLIENT, &["bash", "-c", "pier mcp"]),
            process(140, 110, &["pier", "mcp"]),
        ]);
        assert!(
            matches!(client_of(&l, 140), Err(NoClient::Person(_))),
            "{comm}: {:?}",
            client_of(&l, 140)
        );
    }
}
