//! The restart rules over recorded snapshots.

use super::error::{NotRestartable, PortHolder};
use super::rules::stop_was_complete;
use std::time::Duration;

use super::{helper_endpoints, outcome, ports_free, server_ports, spawn, Now};

use crate::model::card::Port;
use crate::model::history::RestartResult;
use crate::model::outcome::ResourceResult;
use crate::model::snapshot::{Snapshot, SnapshotProject};
use crate::model::Identity;
use crate::probe::fake::{process, FakeProbe};

pub(super) fn snap(signalled: Option<bool>, result: Option<ResourceResult>) -> Snapshot {
    Snapshot {
        kind: Some("vite".into()),
        schema: crate::model::SCHEMA_VERSION,
        id: "1-1".into(),
        boot_id: None,
        created_at: String::new(),
        project: SnapshotProject {
            name: "app".into(),
            path: "/p".into(),
            marker: None,
        },
        ports: Vec::new(),
        evidence: Vec::new(),
        managed_by: None,
        root: Identity {
            pid: 1,
            start_time: 1,
        },
        members: Vec::new(),
        signalled,
        signals_may_follow: Some(true),
        reconciled_at: None,
        outcomes: Vec::new(),
        newcomers: None,
        neighbours: None,
        result,
        reason: None,
        restarts: Vec::new(),
        batch: None,
        requested_by: Default::default(),
        set_aside: Vec::new(),
    }
}

#[test]
fn only_a_complete_recorded_stop_can_be_restarted() {
    assert!(stop_was_complete(&snap(Some(true), Some(ResourceResult::Stopped))).is_ok());
    let partial = stop_was_complete(&snap(Some(true), Some(ResourceResult::PartiallyStopped)));
    assert_eq!(partial, Err(NotRestartable::Partial));
    let none = stop_was_complete(&snap(Some(true), Some(ResourceResult::NotStopped)));
    assert_eq!(
        none,
        Err(NotRestartable::NotStopped),
        "its signals ended nothing"
    );
    assert!(stop_was_complete(&snap(Some(false), Some(ResourceResult::Refused))).is_err());
    assert_eq!(
        stop_was_complete(&snap(None, None)),
        Err(NotRestartable::NeverRecorded)
    );
    assert!(
        stop_was_complete(&snap(Some(true), None)).is_err(),
        "no result, no restart"
    );
}

/// A manager's program (stopped with Force; its manager's respawn made the stop partial) is its
/// manager's to start again: the restart says so first, whatever else argues against it. A
/// process that only landed in a unit's cgroup (no `INVOCATION_ID`) is not the unit's.
#[test]
fn a_managers_program_is_refused_a_restart_with_its_managers_name() {
    use crate::diagnose::managers::{systemd_unit, Env};
    let probe = FakeProbe::default();
    let now = Now::read(&probe);
    let unit = "/user.slice/u/user@1000.service/app.slice/dev.service";
    let mut managed = snap(Some(true), Some(ResourceResult::PartiallyStopped));
    managed.managed_by = systemd_unit(unit, Ok(Env(&[b"INVOCATION_ID=1".to_vec()])));
    assert_eq!(
        super::refusal(&now, &managed).unwrap_err().to_string(),
        "systemd ran it as dev.service: start it again with systemd, not outside its manager"
    );
    let mut landed = snap(Some(true), Some(ResourceResult::PartiallyStopped));
    landed.managed_by = systemd_unit(unit, Ok(Env(&[b"HOME=/home/u".to_vec()])));
    assert_eq!(
        super::refusal(&now, &landed).unwrap_err(),
        NotRestartable::Partial,
        "not the unit's program: refused for what it is, a partial stop"
    );
}

fn port(address: &str, port: u16, helper: Option<&str>) -> Port {
    Port {
        port,
        address: address.into(),
        pid: 100,
        helper: helper.map(Into::into),
    }
}

/// A notebook server's snapshot: its own port 8888 and its kernel's 40001 and 40002.
fn notebook() -> Snapshot {
    let mut s = snap(Some(true), Some(ResourceResult::Stopped));
    s.ports = vec![
        port("127.0.0.1", 8888, None),
        port("127.0.0.1", 40001, Some("notebook kernel")),
        port("127.0.0.1", 40002, Some("notebook kernel")),
    ];
    s
}

#[test]
fn a_snapshot_written_before_helpers_were_told_apart_reads_every_port_as_the_servers() {
    let old = r#"{"port": 5173, "address": "127.0.0.1", "pid": 42}"#;
    let p: Port = serde_json::from_str(old).unwrap();
    assert!(p.is_server(), "{p:?}");
    let mut s = notebook();
    for p in &mut s.ports {
        p.helper = None;
    }
    assert_eq!(server_ports(&s).len(), 3);
}

#[test]
fn a_restart_checks_and_waits_for_the_servers_ports_only() {
    let ports: Vec<u16> = server_ports(&notebook()).iter().map(|p| p.port).collect();
    assert_eq!(ports, [8888]);
    assert_eq!(
        helper_endpoints(&notebook()),
        ["127.0.0.1:40001", "127.0.0.1:40002"]
    );
}

#[test]
fn a_helpers_old_port_taken_by_another_process_does_not_refuse_a_restart() {
    let probe = FakeProbe::default()
        .with(process(300, 1, &["other"]), "/elsewhere")
        .listen("127.0.0.1:40001", 300);
    assert_eq!(ports_free(&Now::read(&probe), &notebook()), Ok(()));
}

#[test]
fn the_servers_port_taken_refuses_a_restart() {
    let probe = FakeProbe::default()
        .with(process(300, 1, &["other"]), "/elsewhere")
        .listen("0.0.0.0:8888", 300);
    assert_eq!(
        ports_free(&Now::read(&probe), &notebook()),
        Err(NotRestartable::PortTaken {
            endpoint: "127.0.0.1:8888".into(),
            holder: Some(PortHolder::Own {
                pid: 300,
                program: "other".into(),
                command: "other".into()
            })
        })
    );
}

#[test]
fn readiness_names_the_server_ports_that_do_not_listen_from_the_new_tree() {
    let s = notebook();
    let awaited = server_ports(&s);
    // The new tree (root 100) listens on nothing yet; a stranger holds 8888's twin on ::1.
    let probe = FakeProbe::default()
        .with(process(100, 1, &["jupyter-lab"]), "/p")
        .with(process(300, 1, &["other"]), "/elsewhere")
        .listen("[::1]:8888", 300);
    let missing: Vec<String> = spawn::not_listening(&probe, 100, &awaited)
        .iter()
        .map(|p| p.endpoint())
        .collect();
    assert_eq!(missing, ["127.0.0.1:8888"]);
    // Once the new server listens, nothing is missing: the kernel's ports are not asked for.
    let probe = probe.listen("127.0.0.1:8888", 100);
    assert!(spawn::not_listening(&probe, 100, &awaited).is_empty());
}

#[test]
fn a_restart_not_ready_names_the_server_ports_that_did_not_come_back() {
    let end = spawn::WaitEnd::TimedOut(vec!["127.0.0.1:8888".into()]);
    let (result, why) = outcome(&end, 7, &notebook(), Duration::from_secs(15));
    assert_eq!(result, RestartResult::NotReady);
    assert_eq!(
        why,
        "started as pid 7, but 127.0.0.1:8888 did not listen again within 15 s"
    );
}

#[test]
fn a_snapshot_with_only_a_helpers_ports_is_ready_once_running_as_a_portless_one() {
    let mut s = notebook();
    s.ports.remove(0);
    let (result, why) = outcome(&spawn::WaitEnd::Ready, 7, &s, Duration::from_secs(15));
    assert_eq!(result, RestartResult::Ready);
    assert!(why.contains("no port of its own"), "{why}");
}

/// A complete stop of `sh <script>` in `cwd`, with `env` recorded.
fn stopped_script(cwd: &std::path::Path, script: &str, env: &[&str]) -> Snapshot {
    use crate::model::bytes::ByteString;
    use crate::model::snapshot::SnapshotMember;
    let bytes = |s: &str| ByteString(s.as_bytes().to_vec());
    let mut s = snap(Some(true), Some(ResourceResult::Stopped));
    s.members = vec![SnapshotMember {
        identity: s.root,
        ppid: 1,
        uid: 0,
        argv: vec![bytes("sh"), bytes(script)],
        env: Some(env.iter().map(|e| bytes(e)).collect()),
        exe: bytes("/bin/sh"),
        cwd: Some(bytes(cwd.to_str().unwrap())),
        memory: None,
    }];
    s
}

fn chmod(p: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Issue 37: a project folder recreated where others can write is refused for what it is,
/// before its program or script is looked for; the user's own passes.
#[test]
fn a_folder_or_script_the_user_does_not_control_refuses_the_restart_with_its_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("server.sh"), "exit 0\n").unwrap();
    let s = stopped_script(&app, "server.sh", &["PATH=/usr/bin:/bin"]);
    let probe = FakeProbe::default();
    let now = Now::read(&probe);
    assert_eq!(
        super::refusal(&now, &s).map(|(_, cwd)| cwd),
        Ok(app.clone()),
        "passes: the user's own folder and script"
    );
    chmod(&app.join("server.sh"), 0o666);
    let why = super::refusal(&now, &s).unwrap_err().to_string();
    assert!(why.starts_with("the file "), "{why}");
    assert!(
        why.ends_with("a restart runs only what you control"),
        "{why}"
    );
    chmod(&app, 0o777);
    let why = super::refusal(&now, &s).unwrap_err().to_string();
    assert_eq!(
        why,
        format!(
            "the folder {} can be written by other users: a restart runs only what you control",
            app.display()
        )
    );
}

/// Issue 37: history and a restart name the program, the folder, and only the environment
/// entries that change what code runs — `PATH` when a folder searched first is not the user's.
#[test]
fn a_replay_names_its_program_folder_and_the_entries_that_change_what_code_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (app, open) = (dir.path().join("app"), dir.path().join("open"));
    std::fs::create_dir(&app).unwrap();
    std::fs::create_dir(&open).unwrap();
    let me = crate::trust::Me::current();
    let env = ["PATH=/usr/bin:/bin", "LD_PRELOAD=/x.so", "TOKEN=secret"];
    let r = super::trust::replay(&stopped_script(&app, "server.sh", &env), me);
    let program = r.program.clone().unwrap_or_default();
    assert!(
        ["/usr/bin/sh", "/bin/sh"].contains(&program.as_str()),
        "{r:?}"
    );
    assert_eq!(r.folder.as_deref(), app.to_str());
    assert_eq!(
        r.code_env,
        ["LD_PRELOAD=/x.so"],
        "passes: no secret, a PATH of root's"
    );
    let led = format!("PATH={}:/usr/bin:/bin", open.display());
    let s = stopped_script(&app, "server.sh", &[&led]);
    assert!(
        super::trust::replay(&s, me).code_env.is_empty(),
        "the user's own folder first"
    );
    chmod(&open, 0o777);
    assert_eq!(
        super::trust::replay(&s, me).code_env,
        [led],
        "named: a folder others can write, searched before /usr/bin"
    );
    let after = format!("PATH=/usr/bin:/bin:{}", open.display());
    let s = stopped_script(&app, "server.sh", &[&after]);
    assert_eq!(
        super::trust::replay(&s, me).code_env,
        [after],
        "searched after the program's: its children (a shell's command string) look there too \
         (found by playing the other user)"
    );
}

/// Who asked is recorded once; a record written before it was kept reads as a person's, and
/// `pier history --json` says so.
#[test]
fn a_record_written_before_requested_by_reads_as_a_persons_stop() {
    use super::record::Record;
    let s = snap(Some(true), Some(ResourceResult::Stopped));
    let mut json = serde_json::to_value(&s).unwrap();
    json.as_object_mut().unwrap().remove("requested_by");
    let old: Snapshot = serde_json::from_value(json).unwrap();
    assert!(old.requested_by.is_person());
    let probe = FakeProbe::default();
    let entry = old.entry("snap-100-1000-1".into(), &Now::read(&probe));
    assert_eq!(
        serde_json::to_value(&entry).unwrap()["requested_by"],
        serde_json::json!({"kind": "person"})
    );
}

/// Issue 40: "port … is taken" said not by whom. A holder no process Pier reads owns is
/// unseen, with the command that names it.
#[test]
fn a_taken_port_whose_holder_cannot_be_seen_says_how_to_find_it() {
    let probe = FakeProbe::default().listen("0.0.0.0:8888", 999);
    let why = ports_free(&Now::read(&probe), &notebook()).unwrap_err();
    assert_eq!(
        why,
        NotRestartable::PortTaken {
            endpoint: "127.0.0.1:8888".into(),
            holder: Some(PortHolder::Unseen)
        }
    );
    assert!(
        why.to_string().ends_with("`sudo lsof -i :8888` names it"),
        "{why}"
    );
}

/// A kind its client starts on demand is never restarted, before anything else is asked; a
/// dev tool's kind, and a snapshot written before kinds were kept, are asked the rest.
#[test]
fn a_kind_started_by_its_client_is_refused_a_restart_before_anything_runs() {
    use super::rules::not_started_by_its_client;
    use crate::diagnose::kinds::Family;
    let family = |k: &str| match k {
        "headless-browser" => Family::Browser,
        "mcp-server" => Family::McpServer,
        _ => Family::Dev,
    };
    let mut browser = snap(Some(true), Some(ResourceResult::Stopped));
    browser.kind = Some("headless-browser".into());
    assert_eq!(
        not_started_by_its_client(&browser, family)
            .unwrap_err()
            .to_string(),
        "a headless browser (headless-browser) is started by its client — the agent, editor or \
         test run — when it needs one, and from a snapshot it would have no one to talk to: \
         start that agent, editor or test run again and it starts a new one"
    );
    browser.kind = Some("mcp-server".into());
    assert!(matches!(
        not_started_by_its_client(&browser, family),
        Err(NotRestartable::StartedByItsClient {
            family: "an MCP server",
            ..
        })
    ));
    let vite = snap(Some(true), Some(ResourceResult::Stopped));
    assert_eq!(not_started_by_its_client(&vite, family), Ok(()));
    let mut old = vite.clone();
    old.kind = None;
    assert_eq!(not_started_by_its_client(&old, family), Ok(()));
    // A restart asks it first, before the partial stop it would name next; a dev tool's
    // kind goes on to that.
    let probe = FakeProbe::default();
    let now = Now::read(&probe);
    let mut partial = snap(Some(true), Some(ResourceResult::PartiallyStopped));
    partial.kind = Some("headless-browser".into());
    assert!(matches!(
        super::refusal_in(&now, &partial, family),
        Err(NotRestartable::StartedByItsClient { .. })
    ));
    partial.kind = Some("vite".into());
    assert_eq!(
        super::refusal_in(&now, &partial, family).unwrap_err(),
        NotRestartable::Partial
    );
}

/// Through the table itself, once the kinds of agent residue fill it (issue 45): a headless
/// browser's snapshot is refused by `refusal`, first.
#[test]
fn a_headless_browsers_snapshot_is_refused_by_the_tables_family() {
    let mut browser = snap(Some(true), Some(ResourceResult::PartiallyStopped));
    browser.kind = Some("headless-browser".into());
    if !crate::diagnose::kinds::family("headless-browser").started_by_its_client() {
        // The table does not know the kind yet on this branch: nothing to pin.
        return;
    }
    let probe = FakeProbe::default();
    let now = Now::read(&probe);
    assert!(matches!(
        super::refusal(&now, &browser),
        Err(NotRestartable::StartedByItsClient { .. })
    ));
}
