//! The rules file and the judge, on an injected clock: each safety rule of §5a is one test
//! that fails when the rule is broken.

use std::time::Duration;

use super::judge::{self, Card, Due, Gates};
use super::*;
use crate::model::card::{Level, Resource};
use crate::model::history::HistoryEntry;
use crate::model::idle::{Idle, IdleState};
use crate::model::reason::Reason;
use crate::model::rules::{AutoState, MemoryPressure, Pause};
use crate::model::{examples, RequestedBy};

const NOW: u64 = 1_800_000_000;

fn rules(text: &str) -> Rules {
    parse(text).expect("valid rules")
}

fn idle_for(seconds: u64) -> Resource {
    let mut r = examples::resource("10-100", Level::Green, 5173);
    r.idle = Some(Idle {
        state: IdleState::Idle,
        seconds,
        why: None,
    });
    r
}

fn gates(rules: &Rules) -> Gates<'_> {
    Gates {
        rules,
        now: NOW,
        pause: None,
        settling: None,
        pressure: None,
        cap_left: rules.cap_per_hour,
        cap_frees_at: None,
    }
}

fn card(r: &Resource) -> Card<'_> {
    Card {
        r,
        project: "/w/web",
        backoff_until: None,
        started_again: None,
    }
}

#[test]
fn the_file_reads_durations_filters_and_defaults_and_says_what_is_wrong() {
    let r = rules(
        "[[rule]]\nidle = \"30 min\"\nkinds = [\"vite\"]\n\n[[rule]]\nname = \"squeeze\"\nidle = \"10m\"\npressure = true\n",
    );
    assert_eq!((r.cap_per_hour, r.backoff_seconds), (6, 1800));
    assert_eq!(r.rules[0].name, "idle 30 min");
    assert_eq!(r.rules[0].idle_seconds, 1800);
    assert!(r.rules[1].pressure);
    for (text, says) in [
        ("[[rule]]\nidle = \"soon\"\n", "not a duration"),
        ("[[rule]]\nidle = \"0s\"\n", "not a duration"),
        (
            "cap_per_hour = 0\n[[rule]]\nidle = \"1h\"\n",
            "to turn the rules off",
        ),
        (
            "[[rule]]\nidle = \"1h\"\nunder = [\"code\"]\n",
            "not an absolute path",
        ),
        ("[[rule]]\nidle = \"1h\"\nports = [0]\n", "port 0"),
        (
            "[[rule]]\nidle = \"1h\"\n[[rule]]\nidle = \"60 min\"\n",
            "two rules",
        ),
        ("[[rule]]\nidle = \"1h\"\nkind = [\"vite\"]\n", "line 3"),
    ] {
        let e = parse(text).expect_err(text).to_string();
        assert!(e.contains(says), "{text:?}: {e}");
    }
}

/// Off by default: no file, or a file without a rule; a file that cannot be read is rules off
/// with a sentence naming it, never rules on.
#[test]
fn no_file_is_off_and_an_unreadable_file_is_off_with_its_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(RULES_FILE);
    assert_eq!(read_at(&path), RulesState::Off);
    std::fs::write(&path, "cap_per_hour = 3\n").unwrap();
    assert_eq!(read_at(&path), RulesState::Off, "no rule: off");
    std::fs::write(&path, "[[rule]]\nidle = \"forever\"\n").unwrap();
    match read_at(&path) {
        RulesState::Unreadable(why) => {
            assert!(
                why.contains("rules.toml") && why.contains("forever"),
                "{why}"
            )
        }
        other => panic!("{other:?}"),
    }
    std::fs::write(&path, [0xff, 0xfe]).unwrap();
    assert!(matches!(read_at(&path), RulesState::Unreadable(_)));
}

/// Due exactly at N minutes of idleness on the clock, not a second before.
#[test]
fn a_card_is_due_exactly_when_its_idle_time_reaches_the_rule() {
    let rules = rules("[[rule]]\nidle = \"30 min\"\n");
    let g = gates(&rules);
    let before = idle_for(1799);
    let j = judge::judge(&g, &card(&before));
    assert_eq!(j.note.state, AutoState::Waiting);
    assert_eq!(j.note.due_in_seconds, Some(1));
    assert_eq!(j.due, None);
    let at = idle_for(1800);
    let j = judge::judge(&g, &card(&at));
    assert_eq!((j.note.state, j.due), (AutoState::Due, Some(0)));
    assert_eq!(judge::because(&card(&idle_for(2520))), "idle 42 min");
    let mut active = idle_for(0);
    active.idle.as_mut().unwrap().state = IdleState::Active;
    assert_eq!(
        judge::judge(&g, &card(&active)).note.state,
        AutoState::Waiting
    );
    let mut unmeasured = idle_for(0);
    unmeasured.idle = None;
    let j = judge::judge(&g, &card(&unmeasured));
    assert_eq!(j.note.due_in_seconds, None, "no clock: not known when");
    assert_eq!(j.note.state, AutoState::Waiting);
}

/// Only green: any reason on the card, or a level other than green, is never due however long
/// it was idle; and a live notebook kernel never is.
#[test]
fn rules_act_only_on_green_and_never_on_a_kernel() {
    let rules = rules("[[rule]]\nidle = \"1 min\"\n");
    let g = gates(&rules);
    for reason in crate::model::reason::ALL {
        let mut r = idle_for(3600);
        r.reasons = vec![reason];
        assert_eq!(
            judge::judge(&g, &card(&r)).note.state,
            AutoState::Never,
            "{reason:?}"
        );
    }
    let mut yellow = idle_for(3600);
    yellow.level = Level::Yellow;
    assert_eq!(
        judge::judge(&g, &card(&yellow)).note.state,
        AutoState::Never
    );
    let mut protected = idle_for(3600);
    protected.level = Level::Red;
    protected.reasons = vec![Reason::Protected];
    assert_eq!(
        judge::judge(&g, &card(&protected)).note.state,
        AutoState::Never
    );
    let mut kernel = examples::notebook("/w/nb").resources.remove(0);
    kernel.idle = idle_for(3600).idle;
    let j = judge::judge(&g, &card(&kernel));
    assert_eq!(j.note.state, AutoState::Never);
    assert!(j.note.why.contains("kernel"), "{}", j.note.why);
}

/// Filters: every filter given must match; a card no rule names is never due.
#[test]
fn a_rule_acts_only_on_what_its_filters_name() {
    let rules =
        rules("[[rule]]\nidle = \"1 min\"\nunder = [\"/w\"]\nkinds = [\"vite\"]\nports = [5173]\n");
    let g = gates(&rules);
    let r = idle_for(120);
    assert_eq!(judge::judge(&g, &card(&r)).due, Some(0));
    let elsewhere = Card {
        project: "/x/web",
        ..card(&r)
    };
    assert_eq!(judge::judge(&g, &elsewhere).note.state, AutoState::Never);
    let mut next = idle_for(120);
    next.kind = "next-dev".into();
    assert_eq!(judge::judge(&g, &card(&next)).note.state, AutoState::Never);
    let other_port = examples::resource("10-100", Level::Green, 3000);
    let other_port = Resource {
        idle: r.idle.clone(),
        ..other_port
    };
    assert_eq!(
        judge::judge(&g, &card(&other_port)).note.state,
        AutoState::Never
    );
    let sibling = Card {
        project: "/wx/web",
        ..card(&r)
    };
    assert_eq!(
        judge::judge(&g, &sibling).note.state,
        AutoState::Never,
        "/wx is not under /w"
    );
}

/// A pause, the settle after a wake, a back-off after a refusal and the cap each hold a due
/// card back, and say until when.
#[test]
fn the_pause_the_settle_the_backoff_and_the_cap_hold_a_due_card() {
    let rules = rules("cap_per_hour = 2\n[[rule]]\nidle = \"1 min\"\n");
    let r = idle_for(120);
    let pause = Pause {
        until: NOW + 3600,
        asked: "for 1 h".into(),
    };
    let paused = Gates {
        pause: Some(&pause),
        ..gates(&rules)
    };
    let j = judge::judge(&paused, &card(&r));
    assert_eq!((j.note.state, j.due), (AutoState::Held, None));
    assert!(j.note.why.contains("--resume"), "{}", j.note.why);
    let settling = Gates {
        settling: Some(Duration::from_secs(300)),
        ..gates(&rules)
    };
    assert_eq!(judge::judge(&settling, &card(&r)).due, None);
    let backed = Card {
        backoff_until: Some(NOW + 60),
        ..card(&r)
    };
    assert_eq!(judge::judge(&gates(&rules), &backed).due, None);
    let over = Card {
        backoff_until: Some(NOW),
        ..card(&r)
    };
    assert_eq!(
        judge::judge(&gates(&rules), &over).due,
        Some(0),
        "back-off over"
    );
    let capped = Gates {
        cap_left: 0,
        cap_frees_at: Some(NOW + 600),
        ..gates(&rules)
    };
    let j = judge::judge(&capped, &card(&r));
    assert_eq!(j.due, None);
    assert!(j.note.why.contains("cap"), "{}", j.note.why);
}

fn entry(project: &str, argv: &[&str], stopped_at: u64) -> HistoryEntry {
    HistoryEntry {
        snapshot: "snap-9-1-1".into(),
        id: "9-1".into(),
        kind: Some("vite".into()),
        project: project.into(),
        root_command: argv.iter().map(|s| s.to_string()).collect(),
        ports: vec![],
        helper_ports: vec![],
        stopped_at: humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + Duration::from_secs(stopped_at),
        )
        .to_string(),
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
        restarts: vec![],
        batch: None,
        requested_by: RequestedBy::Rule {
            name: "idle 30 min".into(),
            because: None,
        },
        set_aside: vec![],
    }
}

/// Started again after a stop of the same command within the day — by hand, or from the
/// snapshot — is left alone for a day; a different command, or a start before the stop, is not.
#[test]
fn a_resource_started_again_today_is_left_alone_for_a_day() {
    let rules = rules("[[rule]]\nidle = \"1 min\"\n");
    let mut r = idle_for(7200);
    r.age_seconds = Some(600);
    let stopped = entry("/w/web", &["node", "vite"], NOW - 3600);
    let again = judge::started_again(&r, "/w/web", std::slice::from_ref(&stopped), NOW);
    assert_eq!(again, Some(NOW - 600), "by hand, after the stop");
    let c = Card {
        started_again: again,
        ..card(&r)
    };
    let j = judge::judge(&gates(&rules), &c);
    assert_eq!((j.note.state, j.due), (AutoState::Held, None));
    assert!(j.note.why.contains("started again"), "{}", j.note.why);
    let other = entry("/w/web", &["node", "next"], NOW - 3600);
    assert_eq!(judge::started_again(&r, "/w/web", &[other], NOW), None);
    let before = entry("/w/web", &["node", "vite"], NOW - 300);
    assert_eq!(
        judge::started_again(&r, "/w/web", &[before], NOW),
        None,
        "started before that stop: not started again"
    );
    let old = entry("/w/web", &["node", "vite"], NOW - 2 * 86_400);
    assert_eq!(judge::started_again(&r, "/w/web", &[old], NOW), None);
    let mut restarted = entry("/w/api", &["x"], NOW - 3600);
    restarted
        .restarts
        .push(crate::model::history::HistoryRestart {
            at: stopped.stopped_at.clone(),
            pid: Some(r.root.pid),
            ready: true,
            exited: None,
        });
    assert!(
        judge::started_again(&r, "/w/api", &[restarted], NOW).is_some(),
        "from the snapshot"
    );
    let late = Card {
        started_again: Some(NOW - judge::STARTED_AGAIN_FOR),
        ..card(&r)
    };
    assert_eq!(
        judge::judge(&gates(&rules), &late).due,
        Some(0),
        "a day later"
    );
}

/// A pressure rule acts only under pressure (an injected reading), never when the pressure
/// cannot be read, and then only on what has been idle its time; the largest goes first.
#[test]
fn a_pressure_rule_acts_only_under_pressure_the_largest_first() {
    let rules = rules("[[rule]]\nidle = \"10 min\"\npressure = true\n");
    let r = idle_for(900);
    let calm = MemoryPressure {
        under: false,
        words: "0.0%".into(),
    };
    let high = MemoryPressure {
        under: true,
        words: "35%".into(),
    };
    for pressure in [None, Some(&calm)] {
        let g = Gates {
            pressure,
            ..gates(&rules)
        };
        let j = judge::judge(&g, &card(&r));
        assert_eq!(j.due, None, "{pressure:?}");
        assert!(j.note.why.contains("memory pressure"), "{}", j.note.why);
    }
    let g = Gates {
        pressure: Some(&high),
        ..gates(&rules)
    };
    assert_eq!(judge::judge(&g, &card(&r)).due, Some(0));
    assert_eq!(
        judge::judge(&g, &card(&idle_for(500))).due,
        None,
        "not idle its time"
    );
    let due = |memory| Due {
        rule: 0,
        pressure: true,
        memory,
    };
    let idle_rule = Due {
        pressure: false,
        ..due(None)
    };
    let each = [
        due(Some(10)),
        due(None),
        due(Some(300)),
        idle_rule,
        due(Some(20)),
    ];
    assert_eq!(
        judge::pick(&each, 10),
        vec![3, 2],
        "every idle rule's, one largest"
    );
    assert_eq!(judge::pick(&each, 1), vec![3], "the cap");
    assert_eq!(judge::pick(&each, 0), Vec::<usize>::new());
}

/// Another user may plant the rules: a file of another user's, one reached through a folder
/// others can write, or a FIFO is never read (rules off, said), and a FIFO never hangs. Why
/// this matters more than for the protect list: a planted rule would stop the user's servers.
#[test]
fn rules_another_user_could_plant_are_off_and_never_block() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("conf");
    std::fs::create_dir(&conf).unwrap();
    let path = conf.join(RULES_FILE);
    let off = |path: std::path::PathBuf| {
        crate::trust::tests::within_10_s(move || match read_at(&path) {
            RulesState::Unreadable(why) => why,
            other => panic!("{other:?}"),
        })
    };
    crate::trust::tests::mkfifo(&path);
    assert!(off(path.clone()).contains("FIFO"));
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "[[rule]]\nidle = \"1s\"\n").unwrap();
    assert!(
        matches!(read_at(&path), RulesState::On(_)),
        "the user's own"
    );
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(!off(path.clone()).is_empty(), "a folder others can write");
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Another user's file: only root can make one here; as anyone else the case is the FIFO's.
    if crate::trust::Me::current().uid == 0 {
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        assert!(off(path).contains("65534"), "another user's file");
    }
}
