//! Masks over real-looking argvs: what must be masked, and what must stay as it is.

use super::*;

fn masked(words: &str) -> String {
    let v: Vec<String> = words.split(' ').map(str::to_owned).collect();
    argv(&v).join(" ")
}

/// Each row: an argv (split on spaces), and what it reads as masked.
#[track_caller]
fn table(rows: &[(&str, &str)]) {
    for (given, want) in rows {
        assert_eq!(masked(given), *want, "argv: {given}");
    }
}

#[test]
fn the_value_after_a_flag_named_like_a_secret_is_masked() {
    table(&[
        (
            "ngrok http 3000 --authtoken abc123",
            "ngrok http 3000 --authtoken •••",
        ),
        ("app --api-key k1 --port 1", "app --api-key ••• --port 1"),
        ("app --apikey k1", "app --apikey •••"),
        ("app --token=t1", "app --token=•••"),
        ("app --password hunter2 x", "app --password ••• x"),
        ("app --db-passwd p", "app --db-passwd •••"),
        ("app --client-secret s", "app --client-secret •••"),
        ("app --accessToken s", "app --accessToken •••"),
        ("app --private-key pk", "app --private-key •••"),
        ("app --credentials c", "app --credentials •••"),
        ("app --auth u:p", "app --auth •••"),
        ("app --PASSWORD=X", "app --PASSWORD=•••"),
        (
            "java -Dspring.datasource.password=pw -jar a.jar",
            "java -Dspring.datasource.password=••• -jar a.jar",
        ),
    ]);
}

#[test]
fn flags_that_name_no_secret_keep_their_values() {
    table(&[
        (
            "vite --port 5173 --host 0.0.0.0",
            "vite --port 5173 --host 0.0.0.0",
        ),
        (
            "vite --config vite.config.ts",
            "vite --config vite.config.ts",
        ),
        (
            "node --keep-alive 5 server.js",
            "node --keep-alive 5 server.js",
        ),
        ("git log --author bob", "git log --author bob"),
        ("app --tokenizer gpt2", "app --tokenizer gpt2"),
        ("next dev -p 3000", "next dev -p 3000"),
        ("python -m http.server 0", "python -m http.server 0"),
    ]);
}

#[test]
fn a_negated_or_descriptive_flag_is_not_followed_by_a_secret() {
    // `--no-auth` is a switch: the word after it is an argument of its own.
    table(&[
        ("serve --no-auth ./site", "serve --no-auth ./site"),
        ("app --key-file ./k.pem", "app --key-file ./k.pem"),
        ("app --auth-mode basic", "app --auth-mode basic"),
        ("app --token --port 1", "app --token --port 1"),
    ]);
}

#[test]
fn an_assignment_named_like_a_secret_is_masked() {
    table(&[
        ("env GITHUB_TOKEN=ghx1 vite", "env GITHUB_TOKEN=••• vite"),
        (
            "env AWS_SECRET_ACCESS_KEY=abc x",
            "env AWS_SECRET_ACCESS_KEY=••• x",
        ),
        ("env PGPASSWORD=pw psql", "env PGPASSWORD=••• psql"),
        (
            "docker run -e API_KEY=k img",
            "docker run -e API_KEY=••• img",
        ),
        ("app --env=NPM_TOKEN=t", "app --env=NPM_TOKEN=•••"),
        (
            "env NODE_ENV=development PORT=3000 vite",
            "env NODE_ENV=development PORT=3000 vite",
        ),
        ("env KEY_FILE=/k.pem x", "env KEY_FILE=/k.pem x"),
        (
            "env NODE_OPTIONS=--token=t x",
            "env NODE_OPTIONS=--token=••• x",
        ),
    ]);
}

#[test]
fn a_urls_password_is_masked_and_its_user_kept() {
    table(&[
        (
            "app postgres://me:pw@db:5432/x",
            "app postgres://me:•••@db:5432/x",
        ),
        (
            "app --database-url=mysql://u:p@h/d?x=1",
            "app --database-url=mysql://u:•••@h/d?x=1",
        ),
        (
            "env DATABASE_URL=redis://:pw@h x",
            "env DATABASE_URL=redis://:•••@h x",
        ),
        (
            "git clone ssh://git@github.com/a/b",
            "git clone ssh://git@github.com/a/b",
        ),
        (
            "curl http://h/a?next=http://x:y@z",
            "curl http://h/a?next=http://x:•••@z",
        ),
        ("curl http://host:8080/path", "curl http://host:8080/path"),
    ]);
}

/// A command cut short for display has lost what would tell a secret (a URL's `@`, a token's
/// length): what could begin one is masked.
#[test]
fn a_word_cut_short_is_masked_where_it_could_begin_a_secret() {
    table(&[
        (
            "vite --note postgres://admin:SUP…",
            "vite --note postgres://•••…",
        ),
        ("vite --note ghp_12…", "vite --note ghp_•••…"),
        (
            "vite --root /home/me/shop/front…",
            "vite --root /home/me/shop/front…",
        ),
    ]);
}

#[test]
fn known_token_shapes_are_masked_anywhere() {
    table(&[
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh ghp_•••"),
        (
            "x github_pat_11ABCDEFG0123456789_abcdef",
            "x github_pat_•••",
        ),
        ("x Bearer:sk-proj-abcdefghijklmnopqrstuv", "x Bearer:sk-•••"),
        ("x xoxb-1234567890-abcdefghij", "x xoxb-•••"),
        ("x id=AKIAIOSFODNN7EXAMPLE,", "x id=AKIA•••,"),
        // Too short, or not at a word's start: a name, not a token.
        ("pip install sk-learn", "pip install sk-learn"),
        (
            "x task-abcdefghijklmnopqrstuvwxyz",
            "x task-abcdefghijklmnopqrstuvwxyz",
        ),
        ("x AKIAIOSFODNN7EXAMPL", "x AKIAIOSFODNN7EXAMPL"),
    ]);
}

#[test]
fn a_short_password_flag_is_masked_only_for_its_program() {
    table(&[
        ("mysql -uroot -pSECRET shop", "mysql -uroot -p••• shop"),
        // A bare `-p` prompts; the word after it is the database.
        ("mysql -p shop", "mysql -p shop"),
        (
            "/usr/bin/mariadb-dump -ps3cret db",
            "/usr/bin/mariadb-dump -p••• db",
        ),
        ("redis-cli -a pw ping", "redis-cli -a ••• ping"),
        ("sshpass -p pw ssh host", "sshpass -p ••• ssh host"),
        ("sudo mysql -pX", "sudo mysql -p•••"),
        ("next dev -p3000", "next dev -p3000"),
        ("vite -a x", "vite -a x"),
    ]);
}

#[test]
fn the_program_is_never_masked_and_a_title_is_masked_after_it() {
    let v = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(argv(&v(&["GITHUB_TOKEN=x"])), v(&["GITHUB_TOKEN=x"]));
    assert_eq!(
        argv(&v(&["node server --token abc", "", ""])),
        v(&["node server --token •••", "", ""])
    );
    assert!(argv(&[]).is_empty());
}

#[test]
fn an_argument_holding_a_shell_line_is_masked_word_by_word() {
    let v = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        argv(&v(&[
            "sh",
            "-c",
            "GITHUB_TOKEN=t vite --api-key k --port 5173"
        ])),
        v(&[
            "sh",
            "-c",
            "GITHUB_TOKEN=••• vite --api-key ••• --port 5173"
        ])
    );
    assert_eq!(
        argv(&v(&["psql", "host=db user=me password=pw"])),
        v(&["psql", "host=db user=me password=•••"])
    );
    assert_eq!(
        argv(&v(&["curl", "-H", "Authorization: Bearer abc", "http://h"])),
        v(&["curl", "-H", "Authorization: ••• •••", "http://h"])
    );
    assert_eq!(
        argv(&v(&["app", "--token", "two words"])),
        v(&["app", "--token", "•••"])
    );
}

#[test]
fn a_sentence_quoting_a_command_is_masked_inside_its_quotes() {
    assert_eq!(
        line(
            "from curl (an HTTP client, pid 7: `curl -u me --password=pw http://a:b@h`) — it ends"
        ),
        "from curl (an HTTP client, pid 7: `curl -u me --password=••• http://a:•••@h`) — it ends"
    );
    assert_eq!(
        line("pid 9 (`mysql -pX`) is a client"),
        "pid 9 (`mysql -p•••`) is a client"
    );
    assert_eq!(line("vite  --token  x"), "vite  --token  •••");
    assert_eq!(
        line("parent is a live interactive shell"),
        "parent is a live interactive shell"
    );
}

// --- documents ---

use crate::model::card::{Activity, BusiestMember, Connection, Level};
use crate::model::client::{Client, ClientKind};
use crate::model::examples;
use crate::model::history::RestartResult;
use crate::model::managed::{ManagedBy, Respawner};
use crate::model::outcome::{
    MemberOutcome, MemberReport, NewcomerFate, NewcomerReport, PlannedSignal, ResourceResult,
    TieKind,
};
use crate::model::reason::{Reason, SetAside};
use crate::model::RequestedBy;

const SECRET: &str = "hunter2";

fn with_secret() -> Resource {
    let mut r = examples::resource("42-100", Level::Yellow, 5173);
    r.members[0].argv = ["node", "vite", "--token", SECRET]
        .map(str::to_owned)
        .to_vec();
    r.evidence[0].message = format!("started by `npm run dev -- --token {SECRET}`");
    r.activity = Some(Activity {
        window_ms: 500,
        cpu_percent: 0.0,
        io_bytes_per_second: 0.0,
        busiest: Some(BusiestMember {
            pid: 42,
            command: format!("node vite --token {SECRET}"),
            cpu_percent: 0.0,
            io_bytes_per_second: 0.0,
            life_cpu_percent: None,
            age_seconds: None,
        }),
    });
    r.connections.push(Connection {
        local: "127.0.0.1:5173".into(),
        peer: "127.0.0.1:40000".into(),
        peer_pid: Some(7),
        internal: false,
        client: Some(Client {
            pid: 7,
            program: "curl".into(),
            command: Some(format!("curl http://me:{SECRET}@127.0.0.1:5173")),
            uid: 1000,
            other_user: false,
            likely: ClientKind::HttpClient,
        }),
    });
    r.respawners.push(Respawner {
        pid: 42,
        command: format!("nodemon --password={SECRET}"),
        how: "restarts its child".into(),
        quieter: None,
    });
    r.managed_by = Some(ManagedBy {
        manager: "pm2".into(),
        pid: Some(3),
        program: Some("api".into()),
        stop_command: Some(format!("pm2 stop api --auth {SECRET}")),
        source: "environment".into(),
        note: None,
    });
    r
}

fn holds_secret<T: serde::Serialize>(doc: &T) -> bool {
    serde_json::to_string(doc).unwrap().contains(SECRET)
}

#[test]
fn a_scan_carries_no_secret_of_any_card() {
    let mut s = Scan {
        schema: 1,
        generation: 1,
        scanned_at: "2026-01-01T00:00:00Z".into(),
        sample_ms: 0,
        projects: vec![examples::project(
            "/w/shop",
            Level::Yellow,
            vec![with_secret()],
        )],
        other_listeners: None,
        engines: Vec::new(),
    };
    assert!(holds_secret(&s));
    scan(&mut s);
    assert!(!holds_secret(&s), "{}", serde_json::to_string(&s).unwrap());
    let r = &s.projects[0].resources[0];
    assert_eq!(r.members[0].argv, ["node", "vite", "--token", MASK]);
    assert_eq!(
        r.evidence[0].message,
        "started by `npm run dev -- --token •••`"
    );
    assert_eq!(r.respawners[0].command, "nodemon --password=•••");
    assert_eq!(r.ports[0].port, 5173, "the rest is as it was");
}

#[test]
fn a_stop_report_carries_no_secret() {
    let mut report = StopReport::new(
        "42-100",
        ResourceResult::Refused,
        format!("`app --token {SECRET}` changed"),
    );
    report.members.push(MemberReport {
        pid: 42,
        start_time: 100,
        command: format!("app --token {SECRET}"),
        outcome: MemberOutcome::Stopped,
        detail: "exited after SIGTERM".into(),
    });
    report.newcomers.push(NewcomerReport {
        pid: 43,
        start_time: 101,
        parent: 42,
        how: "child of member pid 42".into(),
        tie: TieKind::ChildOfMember,
        command: format!("env API_KEY={SECRET} worker"),
        fate: NewcomerFate::Exited,
        detail: "gone".into(),
    });
    report.would_signal.push(PlannedSignal {
        pid: Some(42),
        start_time: Some(100),
        command: format!("mysql -p{SECRET}"),
        signal: "SIGTERM".into(),
        order: 1,
    });
    report.set_aside.push(SetAside {
        reason: Reason::NotOrphaned,
        fact: format!("parent is `sh -c app --token {SECRET}`"),
    });
    report.fresh = Some(with_secret());
    assert!(holds_secret(&report));
    stop_report(&mut report);
    assert!(
        !holds_secret(&report),
        "{}",
        serde_json::to_string(&report).unwrap()
    );
    assert_eq!(report.members[0].command, "app --token •••");
    assert_eq!(report.newcomers[0].command, "env API_KEY=••• worker");
    assert_eq!(report.would_signal[0].command, "mysql -p•••");
}

#[test]
fn a_history_line_and_a_restart_carry_no_secret() {
    let mut h = HistoryEntry {
        snapshot: "snap-42-100-1".into(),
        id: "42-100".into(),
        kind: Some("vite".into()),
        project: "/w/shop".into(),
        root_command: ["sh", "-c", &format!("GITHUB_TOKEN={SECRET} vite")]
            .map(str::to_owned)
            .to_vec(),
        ports: vec![],
        helper_ports: vec![],
        stopped_at: "2026-01-01T00:00:00Z".into(),
        result: Some("stopped".into()),
        signalled: Some(true),
        reason: Some(format!("stopped `vite --api-key {SECRET}`")),
        reconciled_at: None,
        not_written: None,
        restartable: false,
        why_not: Some(format!("`vite --api-key {SECRET}` already runs")),
        program: Some("/usr/bin/sh".into()),
        folder: Some("/w/shop".into()),
        code_env: vec![format!("NODE_OPTIONS=--require x --secret {SECRET}")],
        restarts: vec![],
        batch: None,
        requested_by: RequestedBy::Agent {
            client: "claude-code".into(),
        },
        set_aside: vec![SetAside {
            reason: Reason::NotOrphaned,
            fact: format!("parent `app --token {SECRET}`"),
        }],
    };
    assert!(holds_secret(&h));
    history_entry(&mut h);
    assert!(!holds_secret(&h), "{}", serde_json::to_string(&h).unwrap());
    assert_eq!(h.root_command, ["sh", "-c", "GITHUB_TOKEN=••• vite"]);
    assert_eq!(
        h.code_env,
        ["NODE_OPTIONS=•••"],
        "an environment's values never leave"
    );

    let mut r = RestartReport::not_started(
        "snap",
        RestartResult::Refused,
        format!("`x --token {SECRET}` runs"),
    );
    r.code_env = vec![format!("NODE_OPTIONS=--token={SECRET}")];
    r.log_tail = vec![format!("listening; DATABASE_URL=postgres://u:{SECRET}@db")];
    restart_report(&mut r);
    assert!(!holds_secret(&r), "{}", serde_json::to_string(&r).unwrap());
}

/// A container card's connected client (`psql postgres://u:X@…`) is a person's command line
/// like any resource's: `cards` must not carry it.
#[test]
fn a_scans_containers_carry_no_secret() {
    let mut c = examples::container("shop-db", 5432);
    let client = Client {
        pid: 7,
        program: "psql".into(),
        command: Some(format!("psql postgres://app:{SECRET}@127.0.0.1:5432/app")),
        uid: 1000,
        other_user: false,
        likely: ClientKind::HttpClient,
    };
    c.connections.push(Connection {
        local: "127.0.0.1:5432".into(),
        peer: "127.0.0.1:40000".into(),
        peer_pid: Some(7),
        internal: false,
        client: Some(client.clone()),
    });
    c.evidence[0].message = crate::words::client_of_connection(Some(&client), Some(7));
    let mut s = Scan {
        schema: 1,
        generation: 1,
        scanned_at: "2026-01-01T00:00:00Z".into(),
        sample_ms: 0,
        projects: vec![crate::model::card::Project {
            containers: vec![c],
            ..examples::project("/w/shop", Level::Yellow, vec![])
        }],
        other_listeners: None,
        engines: Vec::new(),
    };
    scan(&mut s);
    assert!(!holds_secret(&s), "{}", serde_json::to_string(&s).unwrap());
}

/// The way forward `cards` and `plan_stop` give for a card that is not green quotes its
/// evidence: it must be masked as the evidence is.
#[test]
fn a_next_step_carries_no_secret() {
    let mut r = with_secret();
    r.evidence[0].level = Level::Yellow;
    let next = crate::agent::next::next_step(&r, &Err(crate::agent::own::NotOwn::Before));
    assert!(!next.contains(SECRET), "{next}");
    let mut c = examples::container("shop-db", 5432);
    c.evidence[0].message = format!("a live connection from `mysql -p{SECRET}`");
    let step = crate::agent::next::container_step(&c);
    assert!(!step.next.contains(SECRET), "{}", step.next);
}

/// A restart that exited before listening keeps its log tail in the record; `history` shows
/// every restart made from a snapshot.
#[test]
fn a_history_lines_restarts_carry_no_secret() {
    let mut h = HistoryEntry {
        snapshot: "snap-42-100-1".into(),
        id: "42-100".into(),
        kind: Some("vite".into()),
        project: "/w/shop".into(),
        root_command: vec!["vite".into()],
        ports: vec![],
        helper_ports: vec![],
        stopped_at: "2026-01-01T00:00:00Z".into(),
        result: Some("stopped".into()),
        signalled: Some(true),
        reason: None,
        reconciled_at: None,
        not_written: None,
        restartable: true,
        why_not: None,
        program: None,
        folder: None,
        code_env: vec![],
        restarts: vec![crate::model::history::HistoryRestart {
            at: "2026-01-01T00:01:00Z".into(),
            pid: Some(50),
            ready: false,
            exited: Some(crate::model::history::Exited {
                status: Some(1),
                signal: None,
                log_tail: format!("error: DATABASE_URL=postgres://u:{SECRET}@db refused"),
            }),
        }],
        batch: None,
        requested_by: RequestedBy::Person,
        set_aside: vec![],
    };
    history_entry(&mut h);
    assert!(!holds_secret(&h), "{}", serde_json::to_string(&h).unwrap());
}
