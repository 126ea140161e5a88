use super::*;
use crate::probe::fake::{process, FakeProbe};
use crate::probe::tmux::PaneName;
use crate::probe::Identity;
use crate::words;

fn env(entries: &[&str]) -> Vec<Vec<u8>> {
    entries.iter().map(|e| e.as_bytes().to_vec()).collect()
}

#[test]
fn tmux_and_screen_are_read_from_the_environment_and_a_malformed_value_is_none() {
    let found = from_env(&env(&[
        "TMUX=/tmp/tmux-1000/a,b,4321,0",
        "TMUX_PANE=%7",
        "STY=4242.dev",
        "WINDOW=2",
    ]));
    assert_eq!(
        found.tmux,
        Some(TmuxEnv {
            socket: "/tmp/tmux-1000/a,b".into(),
            server: 4321,
            pane_id: "%7".into()
        })
    );
    assert_eq!(
        found.screen,
        Some(ScreenWindow {
            session: "4242.dev".into(),
            window: Some("2".into())
        })
    );
    assert_eq!(from_env(&env(&["TMUX=/s,x,0", "TMUX_PANE=%7"])).tmux, None);
    assert_eq!(
        from_env(&env(&["TMUX=/s,1,0", "TMUX_PANE=7; rm"])).tmux,
        None
    );
    assert_eq!(from_env(&env(&["TMUX=/s,1,0"])).tmux, None, "no pane");
    assert_eq!(
        from_env(&env(&["MY_TMUX=/s,1,0", "TMUX_PANE=%1"])).tmux,
        None
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_terminals_device_number_is_its_path() {
    assert_eq!(tty_name(0), None);
    assert_eq!(tty_name((136 << 8) | 3), Some("/dev/pts/3".into()));
    assert_eq!(tty_name((137 << 8) | 4), Some("/dev/pts/260".into()));
    assert_eq!(tty_name((4 << 8) | 2), Some("/dev/tty2".into()));
    assert_eq!(tty_name(5 << 8), None, "/dev/tty itself is not guessed");
}

/// A shell (pid 20) in tmux pane %7 of server 10, running the root (pid 30).
fn in_tmux(server_uid: u32) -> (FakeProbe, ProcessTable) {
    let mut server = process(10, 1, &["tmux", "new", "-s", "dev"]);
    server.uid = server_uid;
    let mut shell = process(20, 10, &["-bash"]);
    shell.tty_nr = (136 << 8) | 3;
    let root = process(30, 20, &["python3", "-m", "http.server"]);
    let mut probe = FakeProbe::default()
        .with(server, "/")
        .with(shell, "/")
        .with(root, "/p");
    probe.environments.insert(
        20,
        env(&["TMUX=/tmp/tmux-1000/default,10,0", "TMUX_PANE=%7"]),
    );
    let q = TmuxQuery {
        exe: "/usr/bin/tmux".into(),
        socket: "/tmp/tmux-1000/default".into(),
        pane_id: "%7".into(),
    };
    let name = PaneName {
        session: "dev".into(),
        window: 2,
        pane: 1,
    };
    probe.tmux_panes.insert("%7".into(), (q, name));
    // What tmux names its server process (after `with`, which takes the exe from the name).
    for p in probe.processes.iter_mut().filter(|p| p.identity.pid == 10) {
        p.comm = SERVER_COMM.into();
    }
    let table = ProcessTable::new(probe.processes.clone());
    (probe, table)
}

fn place_of(probe: &FakeProbe, table: &ProcessTable) -> Parent {
    let (root, shell) = (table.get(30).unwrap(), table.get(20).unwrap());
    read(
        probe,
        (table, &mut Asked::default()),
        (root, shell, &Role::InteractiveShell),
        probe.uid,
    )
}

/// [`in_tmux`] with the server (pid 10) changed by `change`.
fn with_server(change: impl Fn(&mut ProcessInfo)) -> (FakeProbe, ProcessTable) {
    let (mut probe, _) = in_tmux(crate::probe::fake::USER);
    probe
        .processes
        .iter_mut()
        .filter(|p| p.identity.pid == 10)
        .for_each(change);
    let table = ProcessTable::new(probe.processes.clone());
    (probe, table)
}

#[test]
fn a_server_is_asked_only_when_it_is_the_users_live_tmux_server_and_older_than_the_shell() {
    let (probe, table) = in_tmux(crate::probe::fake::USER);
    let (server, shell) = (table.get(10).unwrap(), table.get(20).unwrap());
    let uid = probe.uid;
    assert!(may_ask_server(server, shell, uid));
    let same_tick = ProcessInfo {
        identity: Identity {
            start_time: shell.identity.start_time,
            ..server.identity
        },
        ..server.clone()
    };
    assert!(may_ask_server(&same_tick, shell, uid), "the same tick");
    let changed = |f: &dyn Fn(&mut ProcessInfo)| {
        let mut s = server.clone();
        f(&mut s);
        may_ask_server(&s, shell, uid)
    };
    assert!(!changed(&|s| s.comm = "vim".into()), "not tmux");
    assert!(!changed(&|s| s.comm = "tmux".into()) || cfg!(target_os = "macos"));
    assert!(!changed(&|s| s.zombie = true), "a zombie");
    assert!(!changed(&|s| s.uid += 1), "another user's");
    assert!(
        !changed(&|s| s.identity.start_time = shell.identity.start_time + 1),
        "started after the shell: a reused pid"
    );
}

#[test]
fn a_pid_in_tmux_that_is_not_a_tmux_server_or_started_after_the_shell_is_never_run() {
    let not_tmux = with_server(|s| s.comm = "vim".into());
    let later = with_server(|s| s.identity.start_time = 10_000);
    for (probe, table) in [not_tmux, later] {
        let p = place_of(&probe, &table);
        let t = p.tmux.unwrap();
        assert_eq!((t.session, t.pane_id.as_str()), (None, "%7"));
    }
}

#[test]
fn a_scan_asks_each_pane_once_and_a_server_that_gave_no_answer_not_again() {
    let q = |socket: &str, pane: &str| TmuxQuery {
        exe: "/usr/bin/tmux".into(),
        socket: socket.into(),
        pane_id: pane.into(),
    };
    let name = PaneName {
        session: "dev".into(),
        window: 0,
        pane: 1,
    };
    let asks = std::cell::Cell::new(0);
    let answers = |a: Option<PaneName>| {
        let asks = &asks;
        move |_: &TmuxQuery| {
            asks.set(asks.get() + 1);
            a
        }
    };
    let mut asked = Asked::default();
    for _ in 0..3 {
        let got = asked.ask(10, q("/s", "%1"), answers(Some(name.clone())));
        assert_eq!(got.as_ref(), Some(&name));
    }
    assert_eq!(asks.get(), 1, "one pane, asked once");
    assert_eq!(asked.ask(11, q("/t", "%1"), answers(None)), None);
    assert_eq!(
        asked.ask(11, q("/t", "%2"), answers(Some(name.clone()))),
        None
    );
    assert_eq!(asks.get(), 2, "a silent server is not asked again");
    let other = asked.ask(10, q("/s", "%2"), answers(Some(name.clone())));
    assert_eq!(
        (other, asks.get()),
        (Some(name), 3),
        "another pane is asked"
    );
}

#[test]
fn a_shell_in_the_users_own_tmux_is_named_by_session_window_and_pane() {
    let (probe, table) = in_tmux(crate::probe::fake::USER);
    let p = place_of(&probe, &table);
    let t = p.tmux.clone().unwrap();
    assert_eq!(
        (t.session.as_deref(), t.window, t.pane, t.pane_id.as_str()),
        (Some("dev"), Some(2), Some(1), "%7")
    );
    assert_eq!(p.tty.as_deref(), Some("/dev/pts/3"));
    assert_eq!(p.terminal.as_deref(), Some(SERVER_COMM));
    assert_eq!(words::parent_place(&p), "in tmux pane dev:2.1 (%7)");
    assert_eq!(
        words::next_step_for_parent(&p),
        "press Ctrl-C in tmux pane dev:2.1 to stop it there"
    );
}

#[test]
fn another_users_tmux_server_is_never_asked_and_the_pane_id_alone_is_said() {
    let (probe, table) = in_tmux(crate::probe::fake::USER + 1);
    let p = place_of(&probe, &table);
    let t = p.tmux.clone().unwrap();
    assert_eq!((t.session, t.pane_id.as_str()), (None, "%7"));
    assert_eq!(words::parent_place(&p), "in tmux pane %7");
    assert_eq!(
        words::next_step_for_parent(&p),
        "press Ctrl-C in tmux pane %7 to stop it there"
    );
}

#[test]
fn another_users_shell_environment_is_never_read() {
    let (mut probe, _) = in_tmux(crate::probe::fake::USER);
    for p in &mut probe.processes {
        if p.identity.pid == 20 {
            p.uid += 1;
        }
    }
    let table = ProcessTable::new(probe.processes.clone());
    let p = place_of(&probe, &table);
    assert_eq!((p.tmux, p.screen), (None, None));
}

#[test]
fn a_shell_outside_a_multiplexer_is_named_by_its_terminal() {
    let mut term = process(10, 1, &["/usr/libexec/gnome-terminal-server"]);
    term.comm = "gnome-terminal-".into();
    let mut shell = process(20, 10, &["bash"]);
    shell.tty_nr = (136 << 8) | 3;
    let probe = FakeProbe::default()
        .with(term, "/")
        .with(shell, "/")
        .with(process(30, 20, &["vite"]), "/p");
    let table = ProcessTable::new(probe.processes.clone());
    let p = place_of(&probe, &table);
    assert_eq!(words::parent_place(&p), "on /dev/pts/3 in gnome-terminal-");
    assert_eq!(
        words::next_step_for_parent(&p),
        "press Ctrl-C in that terminal (/dev/pts/3) to stop it there"
    );
}
