//! Armed stops: the records against a real state folder in a temp dir; the rules as pure
//! functions over hand-made cards.

use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::model::arm::Armed;
use crate::model::card::{Connection, Evidence, EvidenceKind, Level, Port, Resource};
use crate::model::client::{Client, ClientKind, Parent};
use crate::model::examples;
use crate::model::idle::{Idle, IdleState};
use crate::model::managed::ManagedBy;
use crate::model::outcome::{Checkpoint, ResourceResult, StopReport};
use crate::model::reason::Reason;
use crate::model::RequestedBy;
use crate::probe::IdentityRead;

const NOW: u64 = 1_800_000_000;
const BOOT: &str = "boot-a";

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path().join("state")).unwrap();
    (dir, store)
}

fn arm(pid: u32) -> Arm {
    Arm {
        schema: ARM_SCHEMA,
        id: format!("{pid}-100"),
        root: Identity {
            pid,
            start_time: 100,
        },
        boot_id: Some(BOOT.into()),
        project: "/home/u/web".into(),
        kind: "vite".into(),
        reasons: vec![Reason::LiveConnection],
        armed_at: NOW - 60,
        expires_at: NOW + 3600,
        armed_by: RequestedBy::Cli,
        kernel_state_lost: false,
        exe: None,
    }
}

fn green(pid: u32) -> Resource {
    examples::resource(&format!("{pid}-100"), Level::Green, 5173)
}

/// A card held by `reason`, with one piece of evidence for it.
fn held(pid: u32, reason: Reason, kind: EvidenceKind, message: &str) -> Resource {
    let mut r = green(pid);
    r.level = Level::Red;
    r.reasons = vec![reason];
    r.evidence.push(Evidence {
        kind,
        level: Level::Red,
        message: message.into(),
        source: "test".into(),
    });
    r
}

fn connected(pid: u32) -> Resource {
    let mut r = held(
        pid,
        Reason::LiveConnection,
        EvidenceKind::LiveConnection,
        "live connection 127.0.0.1:5173 ← 127.0.0.1:40000",
    );
    r.connections.push(Connection {
        local: "127.0.0.1:5173".into(),
        peer: "127.0.0.1:40000".into(),
        peer_pid: Some(77),
        internal: false,
        client: Some(Client {
            pid: 77,
            program: "firefox".into(),
            command: None,
            uid: 1000,
            other_user: false,
            likely: ClientKind::Browser,
        }),
    });
    r
}

const IDLE: Idle = Idle {
    state: IdleState::Idle,
    seconds: 600,
    why: None,
};

/// Everything a firing needs: same boot, in time, green and idle for the settle, no wake.
fn ready(card: &Resource) -> Seen<'_> {
    Seen {
        now: UNIX_EPOCH + Duration::from_secs(NOW),
        boot_id: Some(BOOT),
        card: Some(card),
        identity: None,
        idle: Some(&IDLE),
        green_for: Some(Duration::from_secs(60)),
        settle: Duration::from_secs(60),
        wake_left: None,
    }
}

fn waits(v: Verdict) -> Vec<String> {
    match v {
        Verdict::Wait(w) => w,
        other => panic!("expected a wait, got {other:?}"),
    }
}

// ---- the records ----

#[test]
fn an_arm_survives_a_reopened_store_and_a_rearm_keeps_when_it_was_first_armed() {
    let (dir, store) = store();
    let first = arm(42);
    assert_eq!(arm_record(&store, &first).unwrap(), first);
    let reopened = Store::open_at(dir.path().join("state")).unwrap();
    let listed = list(&reopened).unwrap();
    assert_eq!(
        listed.records,
        vec![("arm-42-100".to_owned(), first.clone())]
    );
    let again = Arm {
        armed_at: NOW,
        expires_at: NOW + 7200,
        reasons: vec![Reason::Busy],
        ..first.clone()
    };
    let written = arm_record(&reopened, &again).unwrap();
    assert_eq!(written.armed_at, first.armed_at, "re-arming keeps armed_at");
    assert_eq!(written.expires_at, NOW + 7200);
    assert_eq!(written.reasons, vec![Reason::Busy]);
    assert_eq!(store.get::<Arm>("arm-42-100").unwrap().unwrap(), written);
}

#[test]
fn cancel_removes_the_arm_and_a_second_cancel_finds_none() {
    let (_dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    assert_eq!(cancel(&store, "42-100").unwrap(), Some(arm(42)));
    assert_eq!(cancel(&store, "42-100").unwrap(), None);
    assert!(list(&store).unwrap().records.is_empty());
    assert_eq!(cancel(&store, "container-0123456789ab").unwrap(), None);
}

#[test]
fn remove_acts_only_for_the_root_the_record_names() {
    let (_dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    let other = Arm {
        root: Identity {
            pid: 42,
            start_time: 999,
        },
        ..arm(42)
    };
    // Another identity's name: no such record.
    assert!(remove(&store, &other).is_err());
    remove(&store, &arm(42)).unwrap();
    assert!(list(&store).unwrap().records.is_empty());
}

#[test]
fn a_damaged_or_another_users_arm_is_reported_and_kept_never_used() {
    let (dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    let records = dir.path().join("state/records");
    std::fs::write(records.join("arm-7-100.json"), b"{ not json").unwrap();
    let theirs = records.join("arm-42-100.json");
    let foreign = std::os::unix::fs::chown(&theirs, Some(65534), None).is_ok();
    let listed = list(&store).unwrap();
    let expect_damaged = if foreign { 2 } else { 1 };
    assert_eq!(listed.damaged.len(), expect_damaged, "{:?}", listed.damaged);
    if foreign {
        assert!(listed.records.is_empty());
        assert!(
            cancel(&store, "42-100").is_err(),
            "never removed on a read it refused"
        );
        assert!(theirs.exists());
    }
    assert!(
        arm_record(&store, &arm(7)).is_err(),
        "a damaged record is never overwritten"
    );
    assert_eq!(
        std::fs::read(records.join("arm-7-100.json")).unwrap(),
        b"{ not json"
    );
}

#[test]
fn arm_records_are_not_in_history_or_any_snapshot_listing() {
    let (_dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    let probe = crate::probe::fake::FakeProbe::default();
    let (entries, damaged) = crate::restart::history_with(&probe, &store, &NoEngines).unwrap();
    assert!(
        entries.is_empty() && damaged.is_empty(),
        "{entries:?} {damaged:?}"
    );
    for kind in [
        crate::model::target::TargetKind::Tree,
        crate::model::target::TargetKind::Container,
    ] {
        let prefix = crate::model::target::record_prefix_of(kind);
        let l = store.list::<Arm>(prefix).unwrap();
        assert!(l.records.is_empty() && l.damaged.is_empty());
    }
}

/// No container engine: a history with no container records asks none.
struct NoEngines;

impl crate::containers::control::EngineAccess for NoEngines {
    fn read(&self) -> Vec<crate::containers::EngineRead> {
        Vec::new()
    }
    fn connect(
        &self,
        _host: &str,
    ) -> Result<Box<dyn crate::containers::control::Control>, crate::containers::EngineError> {
        panic!("no engine is asked without a container record")
    }
}

// ---- may it be armed ----

#[test]
fn a_green_card_is_refused_with_the_plain_stop() {
    let e = may_arm(Armable::Resource(&green(42)), false).unwrap_err();
    assert!(matches!(e, ArmRefusal::SafeNow { .. }));
    assert!(e.to_string().contains("`pier stop 42-100`"), "{e}");
}

#[test]
fn a_card_held_by_what_can_clear_may_be_armed() {
    for (reason, kind) in [
        (Reason::LiveConnection, EvidenceKind::LiveConnection),
        (Reason::Busy, EvidenceKind::Activity),
        (Reason::NotOrphaned, EvidenceKind::NotOrphaned),
        (Reason::Unreadable, EvidenceKind::FdTableUnreadable),
    ] {
        let r = held(42, reason, kind, "fact");
        assert_eq!(may_arm(Armable::Resource(&r), false), Ok(()), "{reason}");
    }
}

#[test]
fn a_reason_no_arm_waits_for_is_refused_naming_it_and_its_next_step() {
    for (reason, kind) in [
        (Reason::UnknownKind, EvidenceKind::UnknownKind),
        (Reason::NotRestartable, EvidenceKind::NotRestartable),
        (Reason::DataService, EvidenceKind::DataService),
        (Reason::Protected, EvidenceKind::UserProtected),
    ] {
        let r = held(42, reason, kind, "the fact — and what to do");
        let e = may_arm(Armable::Resource(&r), false).unwrap_err();
        assert!(matches!(e, ArmRefusal::NeverWaits { reason: x, .. } if x == reason));
        assert!(e.to_string().contains("the fact — and what to do"), "{e}");
    }
    let mut managed = held(42, Reason::Managed, EvidenceKind::Managed, "run by pm2");
    managed.managed_by = Some(ManagedBy {
        manager: "pm2".into(),
        pid: Some(9),
        program: Some("web".into()),
        stop_command: Some("pm2 stop web".into()),
        source: "environment".into(),
        note: None,
    });
    let e = may_arm(Armable::Resource(&managed), false).unwrap_err();
    assert!(e.to_string().contains("`pm2 stop web`"), "{e}");
}

#[test]
fn a_container_is_refused_its_idleness_is_not_measured() {
    let e = may_arm(Armable::Container("container-0123456789ab"), true).unwrap_err();
    assert!(matches!(e, ArmRefusal::Container { .. }));
    assert!(e
        .to_string()
        .contains("`pier stop container-0123456789ab` when it is green"));
}

#[test]
fn a_live_notebook_kernel_is_armed_only_once_its_lost_state_is_confirmed() {
    let mut r = connected(42);
    r.ports.push(Port {
        port: 40001,
        address: "127.0.0.1".into(),
        pid: 43,
        helper: Some("notebook kernel".into()),
    });
    let e = may_arm(Armable::Resource(&r), false).unwrap_err();
    assert!(matches!(e, ArmRefusal::KernelState { .. }));
    assert!(e.to_string().contains("variables") && e.to_string().contains("--yes"));
    assert_eq!(may_arm(Armable::Resource(&r), true), Ok(()));
}

// ---- the judge ----

#[test]
fn it_fires_when_every_condition_holds() {
    let card = green(42);
    assert_eq!(judge(&arm(42), &ready(&card)), Verdict::Fire);
    // A machine without a boot id, and an arm made there, may fire too.
    let no_boot = Arm {
        boot_id: None,
        ..arm(42)
    };
    let seen = Seen {
        boot_id: None,
        ..ready(&card)
    };
    assert_eq!(judge(&no_boot, &seen), Verdict::Fire);
}

#[test]
fn each_fire_condition_broken_alone_keeps_it_from_firing() {
    let card = green(42);
    let mut yellow = green(42);
    yellow.level = Level::Yellow;
    let measuring = Idle {
        state: IdleState::Measuring,
        ..IDLE
    };
    let active = Idle {
        state: IdleState::Active,
        seconds: 0,
        why: Some("a connection on :5173".into()),
    };
    let base = ready(&card);
    let broken: Vec<(&str, Seen)> = vec![
        (
            "not green",
            Seen {
                card: Some(&yellow),
                ..base
            },
        ),
        (
            "no clock",
            Seen {
                idle: None,
                green_for: None,
                ..base
            },
        ),
        (
            "measuring",
            Seen {
                idle: Some(&measuring),
                green_for: None,
                ..base
            },
        ),
        (
            "active",
            Seen {
                idle: Some(&active),
                green_for: None,
                ..base
            },
        ),
        (
            "green too briefly",
            Seen {
                green_for: Some(Duration::from_millis(59_500)),
                ..base
            },
        ),
        (
            "never green",
            Seen {
                green_for: None,
                ..base
            },
        ),
        (
            "waking",
            Seen {
                wake_left: Some(Duration::from_secs(61)),
                ..base
            },
        ),
        (
            "boot unread",
            Seen {
                boot_id: None,
                ..base
            },
        ),
        (
            "card gone, root unread",
            Seen {
                card: None,
                identity: None,
                ..base
            },
        ),
    ];
    for (what, seen) in broken {
        let w = waits(judge(&arm(42), &seen));
        assert!(!w.is_empty(), "{what}");
    }
    let w = waits(judge(
        &arm(42),
        &Seen {
            card: Some(&held(42, Reason::Busy, EvidenceKind::Activity, "9% CPU")),
            ..base
        },
    ));
    assert_eq!(w, vec!["its activity to stop (9% CPU)"]);
}

#[test]
fn the_waiting_words_name_what_it_waits_for() {
    let card = green(42);
    let base = ready(&card);
    let active = Idle {
        state: IdleState::Active,
        seconds: 0,
        why: Some("1.8% CPU over 30 s (more than 1%)".into()),
    };
    let w = waits(judge(
        &arm(42),
        &Seen {
            idle: Some(&active),
            green_for: None,
            wake_left: Some(Duration::from_secs(301)),
            ..base
        },
    ));
    assert_eq!(
        w,
        vec![
            "a quiet interval (1.8% CPU over 30 s (more than 1%))",
            "green for 60 s more",
            "the settle after wake (6 min left)",
        ]
    );
    let c = connected(42);
    let w = waits(judge(
        &arm(42),
        &Seen {
            card: Some(&c),
            ..base
        },
    ));
    assert_eq!(w, vec!["the client on :5173 (firefox) to leave"]);
    let mut p = held(
        42,
        Reason::NotOrphaned,
        EvidenceKind::NotOrphaned,
        "its parent runs",
    );
    p.parent = Some(Parent {
        program: "bash".into(),
        pid: 900,
        role: "interactive shell".into(),
        tty: Some("/dev/pts/3".into()),
        terminal: Some("tmux: server".into()),
        tmux: None,
        screen: None,
    });
    let w = waits(judge(
        &arm(42),
        &Seen {
            card: Some(&p),
            ..base
        },
    ));
    assert_eq!(
        w,
        vec!["its parent bash (pid 900) on /dev/pts/3 in tmux: server to exit"]
    );
    let u = held(
        42,
        Reason::Unreadable,
        EvidenceKind::FdTableUnreadable,
        "fds of pid 43 unread",
    );
    let w = waits(judge(
        &arm(42),
        &Seen {
            card: Some(&u),
            ..base
        },
    ));
    assert_eq!(
        w,
        vec!["what could not be read to be readable (fds of pid 43 unread)"]
    );
}

#[test]
fn every_drop_reason() {
    let card = green(42);
    let base = ready(&card);
    let drop = |a: &Arm, s: &Seen| match judge(a, s) {
        Verdict::Drop(d) => d,
        other => panic!("expected a drop, got {other:?}"),
    };
    assert_eq!(
        drop(
            &arm(42),
            &Seen {
                boot_id: Some("boot-b"),
                ..base
            }
        ),
        Dropped::Rebooted
    );
    let unbooted = Arm {
        boot_id: None,
        ..arm(42)
    };
    assert_eq!(drop(&unbooted, &base), Dropped::Rebooted);
    let expired = Seen {
        now: UNIX_EPOCH + Duration::from_secs(NOW + 3600),
        ..base
    };
    assert_eq!(drop(&arm(42), &expired), Dropped::Expired);
    let gone = IdentityRead::Gone;
    let absent = Seen {
        card: None,
        identity: Some(&gone),
        ..base
    };
    assert_eq!(drop(&arm(42), &absent), Dropped::Ended);
    let other = IdentityRead::Alive {
        identity: Identity {
            pid: 42,
            start_time: 555,
        },
        exe: None,
    };
    let reused = Seen {
        card: None,
        identity: Some(&other),
        ..base
    };
    assert_eq!(
        drop(&arm(42), &reused),
        Dropped::IdentityChanged { pid: 42 }
    );
    let data = held(
        42,
        Reason::DataService,
        EvidenceKind::DataService,
        "holds a lock on data.db",
    );
    let d = drop(
        &arm(42),
        &Seen {
            card: Some(&data),
            ..base
        },
    );
    assert!(matches!(
        d,
        Dropped::NeverWaits {
            reason: Reason::DataService,
            ..
        }
    ));
    assert!(d.to_string().contains("holds a lock on data.db"), "{d}");
}

#[test]
fn a_root_still_running_but_unread_or_off_the_scan_waits_never_drops() {
    let card = green(42);
    let base = ready(&card);
    let unknown = IdentityRead::Unknown("EACCES".into());
    let same = IdentityRead::Alive {
        identity: arm(42).root,
        exe: None,
    };
    for read in [&unknown, &same] {
        let s = Seen {
            card: None,
            identity: Some(read),
            ..base
        };
        assert_eq!(waits(judge(&arm(42), &s)).len(), 1);
    }
}

#[test]
fn the_card_shows_when_it_lapses_and_what_it_waits_for() {
    let view = armed_view(&arm(42), &Verdict::Wait(vec!["x".into()]));
    assert_eq!(
        view,
        Armed {
            expires_at: NOW + 3600,
            waiting_for: vec!["x".into()]
        }
    );
    assert!(armed_view(&arm(42), &Verdict::Fire).waiting_for.is_empty());
}

// ---- after the stop ----

fn refused(why: &str) -> StopReport {
    StopReport::new("42-100", ResourceResult::Refused, why)
}

#[test]
fn after_a_stop_the_arm_goes_unless_refused_for_what_it_waits_out() {
    let stopped = StopReport::new("42-100", ResourceResult::Stopped, "stopped");
    assert_eq!(after_stop(&stopped), AfterFire::Fired);
    for (reason, keeps) in [
        (Reason::LiveConnection, true),
        (Reason::Busy, true),
        (Reason::Unreadable, true),
        (Reason::Protected, false),
    ] {
        let r = StopReport {
            checkpoint: Some(Checkpoint::C),
            refused_for: Some(reason),
            ..refused("a client is connected")
        };
        assert_eq!(after_stop(&r) == AfterFire::KeepWaiting, keeps, "{reason}");
    }
    let deadline = StopReport {
        checkpoint: Some(Checkpoint::Deadline),
        ..refused("too long")
    };
    assert_eq!(after_stop(&deadline), AfterFire::KeepWaiting);
    let mut fresh = connected(42);
    let by_fresh = StopReport {
        fresh: Some(fresh.clone()),
        ..refused("not green")
    };
    assert_eq!(after_stop(&by_fresh), AfterFire::KeepWaiting);
    fresh.reasons.push(Reason::Managed);
    let managed = StopReport {
        fresh: Some(fresh),
        ..refused("never touched: run by pm2")
    };
    assert_eq!(
        after_stop(&managed),
        AfterFire::Drop(Dropped::Refused("never touched: run by pm2".into()))
    );
    let changed = StopReport {
        checkpoint: Some(Checkpoint::D),
        ..refused("a new process joined the tree")
    };
    assert!(matches!(after_stop(&changed), AfterFire::Drop(_)));
    let failed = StopReport::new("42-100", ResourceResult::Failed, "disk full");
    assert!(matches!(after_stop(&failed), AfterFire::Drop(_)));
}

/// "Stop when safe" is green, not idle: once the scheduler counted the card green (no reason,
/// not busy) for the settle, a clock that saw a connection close or a little CPU does not hold
/// the stop back; the chain's own checks judge it again.
#[test]
fn an_armed_stop_waits_for_green_not_for_the_idle_clock() {
    let card = green(42);
    let active = Idle {
        state: IdleState::Active,
        seconds: 0,
        why: Some("a connection on :5173 closed within the last minute".into()),
    };
    let seen = Seen {
        idle: Some(&active),
        ..ready(&card)
    };
    assert_eq!(judge(&arm(42), &seen), Verdict::Fire);
}

/// The start time survives an exec: a root that runs another program now is another resource,
/// and its arm is dropped. Found by the review: an arm on a python server fired on the `node`
/// it exec'd into.
#[test]
fn an_arm_whose_root_runs_another_program_now_is_dropped() {
    let mut armed = arm(42);
    armed.exe = Some("/usr/bin/python3.12".into());
    let mut card = green(42);
    card.members[0].exe = Some("/usr/bin/python3.12".into());
    assert_eq!(judge(&armed, &ready(&card)), Verdict::Fire);
    card.members[0].exe = Some("/usr/bin/node".into());
    assert_eq!(
        judge(&armed, &ready(&card)),
        Verdict::Drop(Dropped::IdentityChanged { pid: 42 })
    );
    // Unread on either side is no change: the chain's own checks read it again.
    card.members[0].exe = None;
    assert_eq!(judge(&armed, &ready(&card)), Verdict::Fire);
}

/// A record is acted on only under the name its root gives it, with an expiry an arm can have:
/// a copy under another name (or a hand-made one) is reported and kept, never judged, so its
/// drop can never remove the real arm. Found by the review: a planted `arm-95-95.json` copy,
/// dropped, removed the real arm it named.
#[test]
fn an_arm_under_another_name_or_with_an_impossible_expiry_is_damaged_and_never_used() {
    let (dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    let records = dir.path().join("state/records");
    let real = std::fs::read(records.join("arm-42-100.json")).unwrap();
    std::fs::write(records.join("arm-95-95.json"), &real).unwrap();
    let mut endless = arm(43);
    endless.expires_at = u64::MAX;
    std::fs::write(
        records.join("arm-43-100.json"),
        serde_json::to_vec(&endless).unwrap(),
    )
    .unwrap();
    let listed = list(&store).unwrap();
    let names: Vec<&str> = listed.records.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["arm-42-100"]);
    assert_eq!(listed.damaged.len(), 2, "{:?}", listed.damaged);
    assert!(records.join("arm-95-95.json").exists(), "kept as it is");
}

/// Another user's plants among the arms are never followed, read whole or blocked on: a FIFO
/// named like an arm, and a link to a real arm record elsewhere (which would name a resource
/// to stop), are each reported and kept; the user's own arm is still listed, and a drop or a
/// cancel never acts through them.
#[test]
fn a_planted_fifo_or_link_among_the_arms_is_reported_never_followed_or_acted_on() {
    let (dir, store) = store();
    arm_record(&store, &arm(42)).unwrap();
    let records = dir.path().join("state/records");
    crate::trust::tests::mkfifo(&records.join("arm-50-100.json"));
    let elsewhere = dir.path().join("planted.json");
    std::fs::write(&elsewhere, serde_json::to_vec(&arm(51)).unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, records.join("arm-51-100.json")).unwrap();
    let held = store.clone();
    let listed = crate::trust::tests::within_10_s(move || list(&held).unwrap());
    let names: Vec<&str> = listed.records.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["arm-42-100"]);
    assert_eq!(listed.damaged.len(), 2, "{:?}", listed.damaged);
    assert!(
        cancel(&store, "51-100").is_err(),
        "never removed through a link"
    );
    assert!(records.join("arm-51-100.json").is_symlink() && elsewhere.exists());
}
