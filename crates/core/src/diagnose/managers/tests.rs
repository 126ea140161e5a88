//! Each manager's reader over its own data, as the manager writes it: the variables pm2,
//! supervisord, overmind, foreman, honcho and process-compose give their programs (seen on
//! real pm2 5.4.3 and supervisor 4.3.0; read in the others' sources), the cgroup paths systemd
//! gives its units (systemd.unit(5), systemd-run(1)) and the label launchd passes down.

use std::path::Path;

use super::*;
use crate::probe::fake::process;

fn env(vars: &[&str]) -> Vec<Vec<u8>> {
    vars.iter().map(|v| v.as_bytes().to_vec()).collect()
}

fn no_file(_: &Path) -> Option<String> {
    None
}

fn nothing_exists(_: &Path) -> bool {
    false
}

/// The reader's answer for a root (pid 200) under `manager`.
fn under(
    manager: &ProcessInfo,
    vars: &[&str],
    read: &dyn Fn(&Path) -> Option<String>,
    exists: &dyn Fn(&Path) -> bool,
) -> ManagedBy {
    let vars = env(vars);
    under_manager(&UnderManager {
        manager,
        manager_cwd: Some(Path::new("/srv/sup")),
        root: 200,
        root_argv: &[],
        env: Ok(Env(&vars)),
        root_cwd: Some(Path::new("/p/app")),
        read,
        exists,
    })
}

fn god() -> ProcessInfo {
    let mut god = process(100, 1, &["PM2 v5.4.3: God Daemon (/tmp/t/pm2)    "]);
    god.comm = "PM2 v5.4.3: God".into();
    god
}

/// What real pm2 5.4.3 gave `pm2 start server.js --name api` (PM2_HOME in a temp folder).
const PM2_APP: &[&str] = &[
    "name=api",
    "pm_id=0",
    "instances=1",
    "pm_pid_path=/tmp/t/pm2/pids/api-0.pid",
    "PM2_HOME=/tmp/t/pm2",
    "HOME=/home/u",
];

#[test]
fn a_pm2_app_is_named_from_its_environment_and_confirmed_by_its_pid_file() {
    let pid_file = |p: &Path| (p == Path::new("/tmp/t/pm2/pids/api-0.pid")).then(|| "200\n".into());
    let m = under(&god(), PM2_APP, &pid_file, &nothing_exists);
    assert_eq!(m.manager, "pm2");
    assert_eq!(m.pid, Some(100));
    assert_eq!(m.program.as_deref(), Some("api"));
    assert_eq!(
        m.stop_command.as_deref(),
        Some("env PM2_HOME=/tmp/t/pm2 pm2 stop 0"),
        "a daemon of another home than ~/.pm2 is named in the command, and the app by its id \
         (a name also stands for every app of that name, a namespace, `all`, a /regex/)"
    );
    assert_eq!(m.source, "environment and pm2's pid file");
    assert_eq!(m.note, None);

    let home = [
        "name=api",
        "pm_id=3",
        "pm_pid_path=/home/u/.pm2/pids/api-3.pid",
        "HOME=/home/u",
    ];
    let m = under(&god(), &home, &|_| Some("200".into()), &nothing_exists);
    assert_eq!(
        m.stop_command.as_deref(),
        Some("pm2 stop 3"),
        "the default home"
    );
}

#[test]
fn a_pm2_pid_file_naming_another_process_or_several_instances_are_said() {
    let m = under(&god(), PM2_APP, &|_| Some("4242".into()), &nothing_exists);
    assert_eq!(m.program.as_deref(), Some("api"));
    assert!(
        m.note.as_deref().unwrap().contains("holds pid 4242"),
        "{m:?}"
    );
    // Only a pid is repeated from a file the process's environment named.
    let m = under(
        &god(),
        PM2_APP,
        &|_| Some("SECRET=x\n".into()),
        &nothing_exists,
    );
    let note = m.note.unwrap();
    assert!(
        note.contains("holds no pid") && !note.contains("SECRET"),
        "{note}"
    );
    let m = under(&god(), PM2_APP, &no_file, &nothing_exists);
    assert!(
        m.note.as_deref().unwrap().contains("could not be read"),
        "{m:?}"
    );

    // Cluster mode: one JSON variable, `pm2_env`, holds the fields.
    let cluster = [
        r#"pm2_env={"name":"api","pm_id":4,"exec_mode":"cluster_mode","pm_pid_path":"/tmp/t/pm2/pids/api-4.pid","PM2_HOME":"/tmp/t/pm2"}"#,
        "HOME=/home/u",
    ];
    let m = under(&god(), &cluster, &|_| Some("200".into()), &nothing_exists);
    assert_eq!(m.program.as_deref(), Some("api"));
    assert_eq!(
        m.stop_command.as_deref(),
        Some("env PM2_HOME=/tmp/t/pm2 pm2 stop 4")
    );
    assert_eq!(m.source, "environment and pm2's pid file");
}

#[test]
fn a_program_whose_names_cannot_be_read_is_still_its_managers() {
    let m = under(&god(), &["HOME=/home/u"], &no_file, &nothing_exists);
    assert_eq!((m.manager.as_str(), m.pid), ("pm2", Some(100)));
    assert_eq!((m.program, m.stop_command), (None, None));
    assert!(m.note.unwrap().contains("no pm2 app name"));

    let unreadable = under_manager(&UnderManager {
        manager: &god(),
        manager_cwd: None,
        root: 200,
        root_argv: &[],
        env: Err(&ProbeError::from("permission denied")),
        root_cwd: None,
        read: &no_file,
        exists: &nothing_exists,
    });
    assert_eq!(unreadable.program, None);
    assert!(unreadable.note.unwrap().contains("permission denied"));

    let runsv = process(100, 1, &["runsv", "web"]);
    let m = under(&runsv, &["PS=web.1"], &no_file, &nothing_exists);
    assert_eq!((m.manager.as_str(), m.program), ("runsv", None));
    assert!(m.note.unwrap().contains("does not know"));
}

fn supervisord() -> ProcessInfo {
    let mut s = process(
        100,
        1,
        &["/v/bin/python3", "/v/bin/supervisord", "-c", "sup.conf"],
    );
    s.comm = "supervisord".into();
    s
}

/// What real supervisord 4.3.0 gave `[program:web]`.
const SUPERVISED: &[&str] = &[
    "SUPERVISOR_ENABLED=1",
    "SUPERVISOR_PROCESS_NAME=web",
    "SUPERVISOR_GROUP_NAME=web",
    "SUPERVISOR_SERVER_URL=unix:///srv/sup/sup.sock",
];

#[test]
fn a_supervisord_program_is_named_and_stopped_through_supervisords_own_config() {
    assert_eq!(Manager::of(&supervisord()), Manager::Supervisord);
    let config = |p: &Path| {
        (p == Path::new("/srv/sup/sup.conf")).then(|| {
            "[supervisord]\nlogfile=x\n[supervisorctl]\nserverurl=unix:///srv/sup/sup.sock\n\
             [program:web]\ncommand=python3 -m http.server\n"
                .into()
        })
    };
    let m = under(&supervisord(), SUPERVISED, &config, &nothing_exists);
    assert_eq!(m.program.as_deref(), Some("web"));
    assert_eq!(
        m.stop_command.as_deref(),
        Some("supervisorctl -c /srv/sup/sup.conf -s unix:///srv/sup/sup.sock stop web"),
        "-c is relative to supervisord's folder"
    );
    assert_eq!(m.source, "environment and supervisord's config");
    assert_eq!(m.note, None);

    // No config to read, or one without a [supervisorctl] section (`supervisorctl -c` would
    // fail on it): the server's own URL. Neither: no command (supervisorctl's own search
    // could find another supervisord).
    let url = Some("supervisorctl -s unix:///srv/sup/sup.sock stop web");
    let m = under(&supervisord(), SUPERVISED, &no_file, &nothing_exists);
    assert_eq!(m.stop_command.as_deref(), url);
    let bare = |_: &Path| Some("[supervisord]\n[program:web]\n".to_owned());
    let m = under(&supervisord(), SUPERVISED, &bare, &nothing_exists);
    assert_eq!(m.stop_command.as_deref(), url);
    let m = under(&supervisord(), &SUPERVISED[..3], &no_file, &nothing_exists);
    assert_eq!((m.program.as_deref(), m.stop_command), (Some("web"), None));
    assert!(m.note.unwrap().contains("neither its config"));

    // A process of a group (numprocs) is `group:name`; a config that declares no such group
    // (and includes nothing) is said.
    let grouped = [
        "SUPERVISOR_PROCESS_NAME=web_01",
        "SUPERVISOR_GROUP_NAME=web",
        "SUPERVISOR_SERVER_URL=unix:///srv/sup/sup.sock",
    ];
    let other = |_: &Path| Some("[supervisorctl]\n[program:api]\n".to_owned());
    let m = under(&supervisord(), &grouped, &other, &nothing_exists);
    assert_eq!(m.program.as_deref(), Some("web:web_01"));
    assert!(m.note.unwrap().contains("declares no [program:web]"));
    let included = |_: &Path| Some("[supervisorctl]\n[include]\nfiles=conf.d/*.conf\n".to_owned());
    let m = under(&supervisord(), &grouped, &included, &nothing_exists);
    assert_eq!(m.note, None, "an included file may declare it");
}

#[test]
fn supervisords_config_option_is_read_in_each_spelling() {
    let argv = |a: &[&str]| a.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
    for a in [
        &["supervisord", "-c", "a.conf"][..],
        &["supervisord", "-ca.conf"],
        &["supervisord", "--configuration", "a.conf"],
        &["supervisord", "--configuration=a.conf"],
    ] {
        assert_eq!(
            config_option(&argv(a)),
            Some(PathBuf::from("a.conf")),
            "{a:?}"
        );
    }
    assert_eq!(config_option(&argv(&["supervisord", "-n"])), None);
}

#[test]
fn an_overmind_process_is_known_by_its_tmux_server_and_named_by_ps() {
    let mut tmux = process(
        100,
        1,
        &[
            "tmux",
            "-C",
            "-L",
            "overmind-app-x1Y2",
            "new",
            "-n",
            "web",
            "-s",
            "app",
        ],
    );
    tmux.comm = "tmux: server".into();
    assert!(is_overminds_tmux(&tmux));
    let plain = process(101, 1, &["tmux", "-S", "/tmp/s", "new"]);
    assert!(!is_overminds_tmux(&plain));

    // The root is `sh <script>`: the script, in the folder named as the server's socket, names
    // the process (its `PS` is the script's child's).
    let script = [
        "sh".as_bytes().to_vec(),
        b"/tmp/overmind-app-x1Y2/web".to_vec(),
    ];
    let socket = |p: &Path| p == Path::new("/p/app/.overmind.sock");
    let vars = env(&["PORT=5000"]);
    let at = |argv: &[Vec<u8>], exists: &dyn Fn(&Path) -> bool| {
        under_manager(&UnderManager {
            manager: &tmux,
            manager_cwd: None,
            root: 200,
            root_argv: argv,
            env: Ok(Env(&vars)),
            root_cwd: Some(Path::new("/p/app")),
            read: &no_file,
            exists,
        })
    };
    let m = at(&script, &socket);
    assert_eq!((m.manager.as_str(), m.pid), ("overmind", None));
    assert_eq!(m.program.as_deref(), Some("web"));
    assert_eq!(
        m.stop_command.as_deref(),
        Some("overmind stop -s /p/app/.overmind.sock web")
    );
    assert!(m.note.unwrap().contains("tmux server, pid 100"));
    let m = at(&script, &nothing_exists);
    assert_eq!(m.stop_command.as_deref(), Some("overmind stop web"));
    assert!(m.note.unwrap().contains("Procfile's folder"));
    // Another overmind's script folder does not name this one's process.
    let stranger = [
        "sh".as_bytes().to_vec(),
        b"/tmp/overmind-other-zz/web".to_vec(),
    ];
    assert_eq!(at(&stranger, &nothing_exists).program, None);
}

#[test]
fn foreman_and_honcho_name_the_process_and_have_no_command_for_one() {
    let foreman = process(100, 1, &["/usr/bin/ruby", "/usr/bin/foreman", "start"]);
    let mut foreman = foreman;
    foreman.comm = "foreman".into();
    let m = under(
        &foreman,
        &["PS=web.1", "PORT=5000"],
        &no_file,
        &nothing_exists,
    );
    assert_eq!(
        (m.manager.as_str(), m.program.as_deref()),
        ("foreman", Some("web.1"))
    );
    assert_eq!(m.stop_command, None);
    assert!(m.note.unwrap().contains("Ctrl-C in its terminal"));

    let honcho = process(100, 1, &["honcho", "start"]);
    let m = under(
        &honcho,
        &["HONCHO_PROCESS_NAME=web.1"],
        &no_file,
        &nothing_exists,
    );
    assert_eq!(
        (m.manager.as_str(), m.program.as_deref()),
        ("honcho", Some("web.1"))
    );
}

#[test]
fn a_process_compose_process_is_stopped_through_its_own_api() {
    let pc = process(100, 1, &["process-compose", "up"]);
    let m = under(
        &pc,
        &["PC_PROC_NAME=api", "PC_REPLICA_NUM=0"],
        &no_file,
        &nothing_exists,
    );
    assert_eq!(
        m.stop_command.as_deref(),
        Some("process-compose process stop api")
    );
    assert_eq!(m.note, None);
    // The server's own flags come first: another instance may listen on the default port.
    let on_port = process(100, 1, &["process-compose", "-p", "9000", "up"]);
    let m = under(&on_port, &["PC_PROC_NAME=api"], &no_file, &nothing_exists);
    assert_eq!(
        m.stop_command.as_deref(),
        Some("process-compose process stop --port 9000 api")
    );
    let on_socket = process(100, 1, &["process-compose", "--unix-socket=/run/pc.sock"]);
    let m = under(&on_socket, &["PC_PROC_NAME=api"], &no_file, &nothing_exists);
    assert_eq!(
        m.stop_command.as_deref(),
        Some("process-compose process stop --unix-socket /run/pc.sock api")
    );
    let uds = process(100, 1, &["process-compose", "-U"]);
    let default_socket = |p: &Path| p == Path::new("/tmp/process-compose-100.sock");
    let m = under(&uds, &["PC_PROC_NAME=api"], &no_file, &default_socket);
    assert_eq!(
        m.stop_command.as_deref(),
        Some("process-compose process stop --unix-socket /tmp/process-compose-100.sock api")
    );
    let m = under(
        &pc,
        &["PC_PROC_NAME=api", "PC_PORT_NUM=9000", "PC_REPLICA_NUM=2"],
        &no_file,
        &nothing_exists,
    );
    assert_eq!(
        m.stop_command.as_deref(),
        Some("process-compose process stop --port 9000 api")
    );
    assert!(m.note.unwrap().contains("replica 2"));
}

#[test]
fn a_systemd_service_is_named_from_its_cgroup_and_a_scope_is_not_one() {
    let started = env(&["INVOCATION_ID=0b2d4d4f1c0a4a8e9d8f3e6c2a1b7c90"]);
    let unit = |cg: &str| {
        systemd_unit(cg, Ok(Env(&started))).map(|m| (m.program.unwrap(), m.stop_command.unwrap()))
    };
    let user = |u: &str| Some((u.to_owned(), format!("systemctl --user stop {u}")));
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/app.slice/dev.service"),
        user("dev.service")
    );
    // Older user managers put units at the manager's root; templates get a slice of their
    // own; `systemd-run --user` names a transient service; a delegated unit has sub-cgroups.
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/dev.service"),
        user("dev.service")
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/app.slice/app-web.slice/web@blue.service"),
        user("web@blue.service")
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/app.slice/run-u10.service"),
        user("run-u10.service")
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/app.slice/run-u0.service/harness"),
        user("run-u0.service")
    );
    let system = systemd_unit("/system.slice/nginx.service", Ok(Env(&started))).unwrap();
    assert_eq!(
        system.stop_command.as_deref(),
        Some("systemctl stop nginx.service")
    );
    assert!(system.note.unwrap().contains("sudo"));
    for not_a_service in [
        "/user.slice/user-1000.slice/user@1000.service/app.slice/app-term.scope",
        "/user.slice/user-1000.slice/user@1000.service/app.slice/run-p5-i9.scope",
        "/user.slice/user-1000.slice/session-2.scope",
        "/user.slice/user-1000.slice/user@1000.service",
        "/",
    ] {
        assert_eq!(unit(not_a_service), None, "{not_a_service}");
    }
}

#[test]
fn a_process_that_only_landed_in_a_services_cgroup_gets_no_command() {
    // A cron job's leftover, or an ssh session's where no session scope was made: systemd
    // did not start it for the unit, so the unit's stop may not end it (KillMode=process).
    let cron_job = env(&["HOME=/home/u", "SHELL=/bin/sh"]);
    let m = systemd_unit("/system.slice/cron.service", Ok(Env(&cron_job))).unwrap();
    assert_eq!(
        (m.manager.as_str(), m.program.as_deref()),
        ("systemd", Some("cron.service"))
    );
    assert_eq!(m.stop_command, None);
    assert!(m.note.unwrap().contains("did not start it"));
    let denied = ProbeError::from("permission denied");
    let m = systemd_unit("/system.slice/ssh.service", Err(&denied)).unwrap();
    assert_eq!(m.stop_command, None);
    assert!(m.note.unwrap().contains("permission denied"));
}

#[test]
fn a_launchd_agent_is_named_by_its_label_and_terminal_or_app_values_are_not_agents() {
    let agent = env(&["XPC_SERVICE_NAME=com.example.api", "HOME=/Users/u"]);
    let m = launchd_agent(Env(&agent), 501).unwrap();
    assert_eq!(
        (m.manager.as_str(), m.program.as_deref()),
        ("launchd", Some("com.example.api"))
    );
    assert_eq!(
        m.stop_command.as_deref(),
        Some("launchctl bootout gui/501/com.example.api")
    );
    assert!(m
        .note
        .unwrap()
        .contains("launchctl print gui/501/com.example.api"));
    for not_an_agent in [
        "XPC_SERVICE_NAME=0",
        "XPC_SERVICE_NAME=application.com.microsoft.VSCode.59852660.59852666",
        "XPC_SERVICE_NAME=",
        "TERM_PROGRAM=Apple_Terminal",
    ] {
        let e = env(&[not_an_agent]);
        assert_eq!(launchd_agent(Env(&e), 501), None, "{not_an_agent}");
    }
}

#[test]
fn names_are_quoted_as_one_shell_word() {
    assert_eq!(quote("api"), "api");
    assert_eq!(quote("web:web_01"), "web:web_01");
    assert_eq!(quote("my app"), "'my app'");
    assert_eq!(quote("it's"), r"'it'\''s'");
    assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
    assert_eq!(quote(""), "''");
    assert_eq!(quote("=cmd"), "'=cmd'", "zsh expands a leading =");
    assert_eq!(quote("~x"), "'~x'");
}

#[test]
fn a_name_a_command_would_take_for_an_option_gets_no_command() {
    let m = under(&god(), &["name=-rf", "pm_id=0"], &no_file, &nothing_exists);
    assert_eq!(m.program.as_deref(), Some("-rf"));
    let m = under(
        &supervisord(),
        &[
            "SUPERVISOR_PROCESS_NAME=-x",
            "SUPERVISOR_SERVER_URL=unix:///s",
        ],
        &no_file,
        &nothing_exists,
    );
    assert_eq!(m.stop_command, None);
    assert!(m.note.unwrap().contains("option"));
}

#[test]
fn an_environment_variable_is_read_by_its_whole_name() {
    let e = env(&["PS1=x", "PS=web.1", "name=api", "names=x"]);
    assert_eq!(Env(&e).get("PS"), Some("web.1"));
    assert_eq!(Env(&e).get("name"), Some("api"));
    assert_eq!(Env(&e).get("nam"), None);
}
