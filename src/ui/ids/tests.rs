//! Menu ids and the click → command mapping, without a display.

use super::*;
use crate::diagnose::model::Level;
use crate::probe::Identity;
use crate::ui::spec::tests::{project, resource, scanned, shop_and_api};
use crate::worker::{History, Update};

#[test]
fn every_click_round_trips_through_its_id() {
    for click in [
        Click::StopProject("/w/a:b c".into()),
        Click::StopAllSafe,
        Click::Open("http://localhost:5173".into()),
        Click::Reveal("/w/shop".into()),
        Click::Restart("snap-10-100-1700".into()),
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
    ] {
        assert_eq!(Click::parse(id), None, "{id}");
    }
}

#[test]
fn clean_up_safely_carries_the_level_and_identities_the_card_showed() {
    let s = shop_and_api();
    let Intent::Act { key, command, .. } = intent(Click::StopProject("/w/shop".into()), &s) else {
        panic!("a green card stops");
    };
    assert_eq!(key, ActionKey::Project("/w/shop".into()));
    let Command::Stop { targets, .. } = command else {
        panic!("a stop command");
    };
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].id, "10-100");
    assert_eq!(targets[0].shown.project_level, Level::Green);
    assert_eq!(
        targets[0].shown.members,
        vec![Identity {
            pid: 10,
            start_time: 100
        }]
    );
}

#[test]
fn a_stale_click_on_a_card_that_is_no_longer_green_does_nothing() {
    let s = shop_and_api();
    assert!(matches!(
        intent(Click::StopProject("/w/api".into()), &s),
        Intent::Ignore(_)
    ));
    assert!(matches!(
        intent(Click::StopProject("/w/gone".into()), &s),
        Intent::Ignore(_)
    ));
}

#[test]
fn a_second_click_while_the_stop_runs_does_nothing() {
    let mut s = shop_and_api();
    s.begin(ActionKey::Project("/w/shop".into()), "stopping…");
    assert!(matches!(
        intent(Click::StopProject("/w/shop".into()), &s),
        Intent::Ignore(_)
    ));
    assert!(matches!(intent(Click::StopAllSafe, &s), Intent::Ignore(_)));
}

#[test]
fn clean_up_all_safe_takes_every_green_project_and_nothing_else() {
    let mut s = UiState::new(Ok(false));
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
    } = intent(Click::StopAllSafe, &s)
    else {
        panic!("a batch stop");
    };
    assert_eq!(key, ActionKey::AllSafe);
    let ids: Vec<&str> = targets.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["1-1", "3-1"]);
}

#[test]
fn restart_needs_a_restartable_snapshot() {
    let mut s = UiState::new(Ok(false));
    let entry = |name: &str, ok: bool| crate::restart::HistoryEntry {
        snapshot: name.into(),
        id: "1-1".into(),
        kind: Some("vite".into()),
        project: "/w/shop".into(),
        root_command: vec!["vite".into()],
        ports: vec![],
        stopped_at: String::new(),
        result: Some("stopped".into()),
        restartable: ok,
        why_not: (!ok).then(|| "the stop was partial".into()),
    };
    s.apply(Update::Scanned {
        generation: 1,
        scan: Err("x".into()),
        history: Ok(History {
            entries: vec![entry("snap-ok", true), entry("snap-no", false)],
            damaged: vec![],
        }),
    });
    let Intent::Act { command, .. } = intent(Click::Restart("snap-ok".into()), &s) else {
        panic!("restartable");
    };
    assert_eq!(
        command,
        Command::Restart {
            snapshot: "snap-ok".into(),
            label: "shop · vite".into()
        }
    );
    assert_eq!(
        intent(Click::Restart("snap-no".into()), &s),
        Intent::Ignore("the stop was partial".into())
    );
}

#[test]
fn refresh_and_quit_map_directly() {
    let s = shop_and_api();
    assert_eq!(intent(Click::Refresh, &s), Intent::Send(Command::Scan));
    assert_eq!(intent(Click::Quit, &s), Intent::Quit);
    assert_eq!(intent(Click::StartAtLogin, &s), Intent::ToggleStartAtLogin);
}
