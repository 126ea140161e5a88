//! Menu ids and the click → command mapping, without a display.

use super::*;
use crate::state::fixtures::{record, scanned, shop_and_api};
use crate::state::NoStop;
use pier_core::model::card::Level;
use pier_core::model::examples::{project, resource};
use pier_core::probe::Identity;

/// The click on "Clean up safely" of `path` as the menu of `s` offers it.
fn stop_click(s: &UiState, path: &str) -> Click {
    let p = s.projects().iter().find(|p| p.path == path).unwrap();
    Click::StopProject {
        path: path.into(),
        seen: card_seen(p),
    }
}
use pier_core::model::history::History;
use pier_core::model::reason::Reason;
use pier_core::worker::{RefreshError, Update};

#[test]
fn every_click_round_trips_through_its_id() {
    for click in [
        Click::StopProject {
            path: "/w/a:b c".into(),
            seen: 0xfeed,
        },
        Click::StopAllSafe { seen: u64::MAX },
        Click::StopAnyway {
            path: "/w/a:b c".into(),
            id: "20-100".parse().unwrap(),
            seen: 7,
            reasons: vec![Reason::Busy, Reason::NotOrphaned],
        },
        Click::StopWhenSafe {
            path: "/w/a:b c".into(),
            id: "20-100".parse().unwrap(),
            seen: 9,
            kernel: true,
        },
        Click::StopWhenSafe {
            path: "/w/api".into(),
            id: "20-100".parse().unwrap(),
            seen: 0,
            kernel: false,
        },
        Click::CancelArmed {
            path: "/w/a:b c".into(),
            id: "20-100".parse().unwrap(),
        },
        Click::Open("http://localhost:5173".into()),
        Click::Reveal("/w/shop".into()),
        Click::Restart(record("snap-10-100-1700")),
        Click::Refresh,
        Click::StartAtLogin,
        Click::Quit,
    ] {
        assert_eq!(Click::parse(&click.id()), Some(click.clone()), "{click:?}");
    }
}

#[test]
fn informational_and_unknown_ids_are_not_clicks() {
    for id in [
        "info:header",
        "card:/w/shop",
        "stop:",
        "quit:now",
        "",
        "snap:x",
        "anyway:",
        "anyway:0000000000000007::20-100:/w/a",
        "anyway:0000000000000007:busy,:20-100:/w/a",
        "anyway:0000000000000007:bored:20-100:/w/a",
        "anyway:0000000000000007:busy:020-100:/w/a",
        "anyway:0000000000000007:busy:20-100:",
        "when-safe:0000000000000007:yes:20-100:/w/a",
        "when-safe:0000000000000007:-:20-100:",
        "when-safe:7:-:20-100:/w/a",
        "disarm:container:/w/a",
        "disarm:20-100:",
    ] {
        assert_eq!(Click::parse(id), None, "{id}");
    }
}

#[test]
fn clean_up_safely_carries_the_level_and_identities_the_card_showed() {
    let s = shop_and_api();
    let Intent::Act { key, command, .. } = intent(stop_click(&s, "/w/shop"), &s) else {
        panic!("a green card stops");
    };
    assert_eq!(key, ActionKey::Project("/w/shop".into()));
    let Command::Stop { targets, .. } = command else {
        panic!("a stop command");
    };
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].id.to_string(), "10-100");
    assert_eq!(targets[0].shown.project_level, Level::Green);
    let shown: Vec<Identity> = targets[0]
        .shown
        .members
        .iter()
        .map(|m| m.identity)
        .collect();
    assert_eq!(
        shown,
        vec![Identity {
            pid: 10,
            start_time: 100
        }]
    );
}

/// A green card's containers are stopped with it, each handed the run its card showed; a
/// card whose container was started again since no longer matches the click.
#[test]
fn clean_up_safely_carries_each_container_s_run_as_shown() {
    let mut db = pier_core::model::examples::container("shop-db-1", 5432);
    db.level = Level::Green;
    let mut shop = project(
        "/w/shop",
        Level::Green,
        vec![resource("10-100", Level::Green, 5173)],
    );
    shop.containers.push(db.clone());
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![shop.clone()]));
    let click = stop_click(&s, "/w/shop");
    let Intent::Act { command, .. } = intent(click.clone(), &s) else {
        panic!("a green card stops");
    };
    let Command::Stop { targets, .. } = command else {
        panic!("a stop command");
    };
    let ids: Vec<String> = targets.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(ids, ["10-100", "container-0123456789ab"]);
    assert_eq!(targets[1].shown.container_run, db.started_at);
    assert!(targets[1].shown.members.is_empty());
    // Started again: the same card, another run.
    shop.containers[0].started_at = Some("2026-12-03T09:00:00Z".into());
    s.apply(scanned(2, vec![shop]));
    assert!(matches!(intent(click, &s), Intent::Ignore(_)));
}

#[test]
fn a_stale_click_on_a_card_that_is_no_longer_green_does_nothing() {
    let s = shop_and_api();
    assert!(matches!(
        intent(stop_click(&s, "/w/api"), &s),
        Intent::Ignore(_)
    ));
    assert!(matches!(
        intent(
            Click::StopProject {
                path: "/w/gone".into(),
                seen: 0
            },
            &s
        ),
        Intent::Ignore(_)
    ));
}

#[test]
fn a_second_click_while_the_stop_runs_does_nothing() {
    let mut s = shop_and_api();
    s.begin(ActionKey::Project("/w/shop".into()), "stopping…");
    assert!(matches!(
        intent(stop_click(&s, "/w/shop"), &s),
        Intent::Ignore(_)
    ));
    let all = Click::StopAllSafe {
        seen: all_safe_seen(&s),
    };
    assert!(matches!(intent(all, &s), Intent::Ignore(_)));
}

#[test]
fn clean_up_all_safe_takes_every_green_project_and_nothing_else() {
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(
        1,
        vec![
            project("/w/a", Level::Green, vec![resource("1-1", Level::Green, 1)]),
            project("/w/b", Level::Red, vec![resource("2-1", Level::Red, 2)]),
            project("/w/c", Level::Green, vec![resource("3-1", Level::Green, 3)]),
        ],
    ));
    let Intent::Act {
        command: Command::Stop { key, targets },
        ..
    } = intent(
        Click::StopAllSafe {
            seen: all_safe_seen(&s),
        },
        &s,
    )
    else {
        panic!("a batch stop");
    };
    assert_eq!(key, ActionKey::AllSafe);
    let ids: Vec<String> = targets.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(ids, ["1-1", "3-1"]);
}

#[test]
fn restart_needs_a_restartable_snapshot() {
    let mut s = UiState::checked(Ok(false));
    let entry = |name: &str, ok: bool| pier_core::model::history::HistoryEntry {
        restarts: Vec::new(),
        batch: None,
        requested_by: Default::default(),
        set_aside: Vec::new(),
        snapshot: name.into(),
        id: "1-1".into(),
        kind: Some("vite".into()),
        project: "/w/shop".into(),
        root_command: vec!["vite".into()],
        ports: vec![],
        helper_ports: vec![],
        stopped_at: String::new(),
        result: Some("stopped".into()),
        signalled: Some(true),
        reason: None,
        reconciled_at: None,
        not_written: None,
        restartable: ok,
        why_not: (!ok).then(|| "the stop was partial".into()),
        program: None,
        folder: None,
        code_env: vec![],
    };
    s.apply(Update::Scanned {
        generation: 1,
        scan: Err(RefreshError::History("x".into())),
        history: Ok(History {
            entries: vec![entry("snap-10-100-6", true), entry("snap-10-100-7", false)],
            damaged: vec![],
        }),
    });
    let Intent::Act { command, .. } = intent(Click::Restart(record("snap-10-100-6")), &s) else {
        panic!("restartable");
    };
    assert_eq!(
        command,
        Command::Restart {
            snapshot: record("snap-10-100-6"),
            label: "shop · vite".into()
        }
    );
    assert_eq!(
        intent(Click::Restart(record("snap-10-100-7")), &s),
        Intent::Ignore(Ignored::NotRestartable("the stop was partial".into()))
    );
}

/// Issue 37: the first click on a restart whose replay changes what code runs arms it; the
/// second acts, once; a confirmation of other entries is no confirmation.
#[test]
fn a_restart_that_changes_what_code_runs_acts_only_on_the_second_click() {
    use crate::state::fixtures::{history_entry, with_history};
    let env = vec!["LD_PRELOAD=/tmp/x.so".to_owned()];
    let mut e = history_entry("snap-10-100-4", true, None);
    e.code_env = env.clone();
    let mut s = with_history(vec![e.clone(), history_entry("snap-10-100-1", true, None)]);
    assert!(
        matches!(
            intent(Click::Restart(record("snap-10-100-1")), &s),
            Intent::Act { .. }
        ),
        "passes: nothing to confirm"
    );
    let first = intent(Click::Restart(record("snap-10-100-4")), &s);
    assert_eq!(
        first,
        Intent::Arm {
            snapshot: record("snap-10-100-4"),
            code_env: env.clone()
        },
        "refused: the first click acts not"
    );
    s.arm(
        record("snap-10-100-4"),
        vec!["LD_PRELOAD=/elsewhere.so".into()],
    );
    assert!(
        matches!(
            intent(Click::Restart(record("snap-10-100-4")), &s),
            Intent::Arm { .. }
        ),
        "armed for other entries: asked again"
    );
    s.arm(record("snap-10-100-4"), env);
    let Intent::Act { key, command, .. } = intent(Click::Restart(record("snap-10-100-4")), &s)
    else {
        panic!("the second click acts");
    };
    assert!(matches!(command, Command::Restart { .. }));
    assert!(s.begin(key, "restarting…"));
    assert_eq!(s.armed, None, "used up");
    assert!(!s.is_armed(&e));
}

#[test]
fn refresh_and_quit_map_directly() {
    let s = shop_and_api();
    assert_eq!(intent(Click::Refresh, &s), Intent::Send(Command::Scan));
    assert_eq!(intent(Click::Quit, &s), Intent::Quit);
    assert_eq!(intent(Click::StartAtLogin, &s), Intent::ToggleStartAtLogin);
}

#[test]
fn a_click_on_a_card_that_changed_before_the_click_was_handled_stops_nothing() {
    // The user saw shop with one member; a scan that adds a member is applied before the click.
    let mut s = shop_and_api();
    let shown = stop_click(&s, "/w/shop");
    let shown_all = Click::StopAllSafe {
        seen: all_safe_seen(&s),
    };
    let mut grown = resource("10-100", Level::Green, 5173);
    let mut child = grown.members[0].clone();
    child.pid = 11;
    child.ppid = 10;
    grown.members.push(child);
    s.apply(scanned(
        2,
        vec![
            project("/w/shop", Level::Green, vec![grown]),
            project(
                "/w/api",
                Level::Yellow,
                vec![resource("20-100", Level::Yellow, 8000)],
            ),
        ],
    ));
    let card = intent(shown, &s);
    assert_eq!(card, Intent::Ignore(Ignored::CardChanged("/w/shop".into())));
    let all = intent(shown_all, &s);
    assert_eq!(all, Intent::Ignore(Ignored::SafeCardsChanged));
    for said in [card, all] {
        assert!(matches!(said, Intent::Ignore(why) if why.to_string().contains("changed")));
    }
    // The menu built from the new scan offers the new card, which can be clicked.
    assert!(matches!(
        intent(stop_click(&s, "/w/shop"), &s),
        Intent::Act { .. }
    ));
}

/// No stop is offered or acted on before the self-test has answered, nor after it failed;
/// the same clicks act once it passed.
#[test]
fn a_stop_click_acts_only_once_the_self_test_passed() {
    use crate::state::fixtures::self_test;
    let shop = project(
        "/w/shop",
        Level::Green,
        vec![resource("10-100", Level::Green, 5173)],
    );
    let mut s = UiState::new(Ok(false));
    s.apply(scanned(1, vec![shop]));
    let click = stop_click(&s, "/w/shop");
    let all = Click::StopAllSafe {
        seen: all_safe_seen(&s),
    };
    for c in [click.clone(), all.clone()] {
        match intent(c, &s) {
            Intent::Ignore(why) => {
                assert_eq!(why, Ignored::NoStop(NoStop::Checking));
                assert!(why.to_string().contains("still checking"), "{why}");
            }
            other => panic!("acted before the self-test answered: {other:?}"),
        }
    }
    s.apply(self_test(false));
    // The card is hidden; a click the old menu offered is still refused for the right reason.
    match intent(click.clone(), &s) {
        Intent::Ignore(why) => {
            assert_eq!(why, Ignored::NoStop(NoStop::NotReady));
            assert!(
                why.to_string().contains("cannot work on this machine"),
                "{why}"
            );
        }
        other => panic!("acted after a failed self-test: {other:?}"),
    }
    s.apply(self_test(true));
    assert!(matches!(intent(click, &s), Intent::Act { .. }));
    assert!(matches!(intent(all, &s), Intent::Act { .. }));
}

/// "Send SIGTERM anyway" on the api card, as the menu of `s` offers it.
fn anyway_click(s: &UiState) -> Click {
    let p = s.projects().iter().find(|p| p.path == "/w/api").unwrap();
    Click::StopAnyway {
        path: p.path.clone(),
        id: p.resources[0].id.parse().unwrap(),
        seen: card_seen(p),
        reasons: p.resources[0].reasons.clone(),
    }
}

/// The click stops that one resource anyway, with what its card showed, confirming exactly
/// the reasons the card showed; its result belongs to the card.
#[test]
fn send_sigterm_anyway_stops_that_resource_confirming_the_reasons_shown() {
    use crate::state::fixtures::shop_and_api_in_a_shell;
    let s = shop_and_api_in_a_shell();
    let click = anyway_click(&s);
    assert_eq!(Click::parse(&click.id()), Some(click.clone()));
    let Intent::Act {
        key,
        doing,
        command,
    } = intent(click, &s)
    else {
        panic!("a stop anyway");
    };
    let api = ActionKey::Project("/w/api".into());
    assert_eq!((key, doing), (api.clone(), "stopping anyway…"));
    let api_card = &s.projects()[1];
    assert_eq!(
        command,
        Command::StopAnyway {
            key: api,
            target: StopTarget {
                project: "/w/api".into(),
                id: "20-100".parse().unwrap(),
                shown: Shown::of(Level::Yellow, &api_card.resources[0]),
            },
            reasons: [Reason::NotOrphaned].into(),
        }
    );
}

/// A stop anyway confirms only what was shown: a card that shows another reason now, or
/// other members, ignores the click; so does one whose reasons include one never set aside
/// (the menu never offers it), one busy stopping, and one before the self-test.
#[test]
fn a_stop_anyway_click_on_a_card_that_changed_or_is_never_set_aside_does_nothing() {
    use crate::state::fixtures::{against, self_test, shop_and, shop_and_api_in_a_shell};
    use pier_core::model::card::EvidenceKind as K;
    let mut s = shop_and_api_in_a_shell();
    let shown = anyway_click(&s);
    let busier = against(
        "20-100",
        Level::Yellow,
        8000,
        &[(K::NotOrphaned, "its parent bash"), (K::Activity, "busy")],
    );
    s.apply(scanned(
        2,
        vec![project("/w/api", Level::Yellow, vec![busier])],
    ));
    assert_eq!(
        intent(shown.clone(), &s),
        Intent::Ignore(Ignored::CardChanged("/w/api".into())),
        "a new reason since the look"
    );
    let mut grown = against("20-100", Level::Yellow, 8000, &[(K::NotOrphaned, "bash")]);
    let mut child = grown.members[0].clone();
    child.pid = 21;
    child.ppid = 20;
    grown.members.push(child);
    s.apply(scanned(
        3,
        vec![project("/w/api", Level::Yellow, vec![grown])],
    ));
    assert_eq!(
        intent(shown, &s),
        Intent::Ignore(Ignored::CardChanged("/w/api".into())),
        "the same reasons, other members"
    );

    let managed = shop_and(project(
        "/w/api",
        Level::Yellow,
        vec![against(
            "20-100",
            Level::Yellow,
            8000,
            &[(K::NotOrphaned, "bash"), (K::Managed, "pm2")],
        )],
    ));
    assert_eq!(
        intent(anyway_click(&managed), &managed),
        Intent::Ignore(Ignored::NoStopAnyway("/w/api".into(), "20-100".into()))
    );

    let mut s = shop_and_api_in_a_shell();
    s.begin(ActionKey::Project("/w/api".into()), "stopping…");
    assert_eq!(
        intent(anyway_click(&s), &s),
        Intent::Ignore(Ignored::Cleaning("/w/api".into()))
    );
    let mut unchecked = UiState::new(Ok(false));
    let Some(Ok(scan)) = shop_and_api_in_a_shell().scan else {
        panic!("a scan")
    };
    unchecked.apply(scanned(1, scan.projects));
    let click = anyway_click(&unchecked);
    assert_eq!(
        intent(click.clone(), &unchecked),
        Intent::Ignore(Ignored::NoStop(NoStop::Checking))
    );
    unchecked.apply(self_test(true));
    assert!(matches!(intent(click, &unchecked), Intent::Act { .. }));
}
