//! The muda layer without a display: built from a spec, updated in place when the shape is the
//! same, rebuilt when it is not.

use super::*;
use crate::spec::menu;
use crate::spec::tests::stop_id;
use crate::spec::Entry;
use crate::state::fixtures::{record, scanned, shop_and_api};
use crate::state::UiState;
use pier_core::model::card::Level;
use pier_core::model::examples::{notebook, project, resource};
use pier_core::worker::ActionKey;

fn now() -> std::time::SystemTime {
    std::time::SystemTime::UNIX_EPOCH
}

#[test]
fn the_built_menu_holds_the_spec_texts_ids_and_states() {
    let s = shop_and_api();
    let live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    assert_eq!(
        live.read("info:header"),
        Some(("2 projects · 1 safe to stop".into(), false))
    );
    assert_eq!(
        live.read(&stop_id(&s, "/w/shop")),
        Some(("Clean up safely".into(), true))
    );
    assert_eq!(
        live.read(&stop_id(&s, "/w/api")),
        Some(("Clean up safely".into(), false))
    );
    assert_eq!(live.menu.items().len(), menu(&s, now()).len());
}

#[test]
fn a_change_of_text_and_enabled_state_is_made_in_place() {
    let mut s = shop_and_api();
    let mut live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    let before = live.menu.clone();
    // A newer scan: same projects and levels, older servers, and the api card not green.
    let mut older = resource("10-100", Level::Green, 5173);
    older.age_seconds = Some(9_000);
    s.apply(scanned(
        2,
        vec![
            project("/w/shop", Level::Green, vec![older]),
            project(
                "/w/api",
                Level::Yellow,
                vec![resource("20-100", Level::Yellow, 8000)],
            ),
        ],
    ));
    assert_eq!(live.update(&menu(&s, now())).unwrap(), Applied::InPlace);
    assert_eq!(
        live.menu.id(),
        before.id(),
        "the same menu object: an open menu stays open"
    );
    assert_eq!(
        live.read("info:card:/w/shop:age").unwrap().0,
        "Up 2h 30m · activity not sampled"
    );
}

#[test]
fn a_card_that_changes_level_rebuilds_and_the_new_menu_says_so() {
    let s = shop_and_api();
    let mut live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    let mut s2 = UiState::checked(Ok(false));
    s2.apply(scanned(
        2,
        vec![
            project(
                "/w/shop",
                Level::Red,
                vec![resource("10-100", Level::Red, 5173)],
            ),
            project(
                "/w/api",
                Level::Yellow,
                vec![resource("20-100", Level::Yellow, 8000)],
            ),
        ],
    ));
    assert_eq!(live.update(&menu(&s2, now())).unwrap(), Applied::Rebuilt);
    assert_eq!(
        live.read("card:/w/shop").unwrap().0,
        "● red · shop — vite :5173"
    );
    assert_eq!(
        live.read(&stop_id(&s2, "/w/shop")).unwrap(),
        ("Clean up safely".into(), false)
    );
}

#[test]
fn an_in_place_update_changes_what_muda_holds() {
    let mut s = shop_and_api();
    let mut live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    // Only plain items change: the login check and the all-safe line.
    s.start_at_login = Ok(true);
    s.begin(ActionKey::Snapshot(record("snap-1-1-1")), "restarting…");
    let spec = menu(&s, now());
    assert_eq!(live.update(&spec).unwrap(), Applied::InPlace);
    let login = live
        .menu
        .items()
        .into_iter()
        .find_map(|i| i.as_check_menuitem().cloned());
    assert!(login.unwrap().is_checked());
}

#[test]
fn an_ampersand_in_a_command_line_is_kept_not_read_as_a_mnemonic() {
    let spec = vec![Entry::Item {
        id: "info:cmd".into(),
        text: "sh -c 'a & b'".into(),
        enabled: false,
    }];
    let mut live = LiveMenu::build(&spec, Dots::default()).unwrap();
    assert_eq!(live.read("info:cmd").unwrap().0, "sh -c 'a && b'");
    assert_eq!(live.update(&spec).unwrap(), Applied::InPlace);
    assert_eq!(
        live.read("info:cmd").unwrap().0,
        "sh -c 'a && b'",
        "not doubled again"
    );
}

#[test]
fn the_built_menu_opens_a_notebook_server_but_not_its_kernel() {
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![notebook("/w/lab")]));
    let live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    assert_eq!(
        live.read("open:http://localhost:8888"),
        Some(("Open http://localhost:8888".into(), true))
    );
    for port in [40001, 40002] {
        assert_eq!(live.read(&format!("open:http://localhost:{port}")), None);
    }
    assert_eq!(
        live.read("card:/w/lab").unwrap().0,
        "● green · lab — jupyter :8888"
    );
}

/// A folder named to clear the screen and retitle the window, with a newline and a bidi
/// override, and an evidence message quoting it: every label shows them escaped, as
/// `pier scan` does, on one line.
#[test]
fn a_folder_holding_escape_sequences_is_shown_escaped_in_every_label() {
    let name = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\n\u{202e}y";
    let path = format!("/w/{name}");
    let mut r = resource("10-100", Level::Green, 5173);
    r.evidence[0].message = format!("parent {name} (pid 1) is init");
    let mut p = project(&path, Level::Green, vec![r]);
    p.name = name.into();
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![p]));
    let live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    for id in live.items.keys() {
        let (text, _) = live.read(id).unwrap();
        assert!(!text.contains(|c: char| c.is_control()), "{id:?}: {text:?}");
        assert!(!text.contains('\u{202e}'), "{id:?}: {text:?}");
    }
    let shown = "x\\e[2J\\e]0;pwned\\x07\\n\\u{202e}y";
    let card = format!("card:{path}");
    assert_eq!(
        live.read(&card).unwrap().0,
        format!("● green · {shown} — vite :5173")
    );
    assert_eq!(
        live.read(&format!("info:{card}:path")).unwrap().0,
        format!("/w/{shown}")
    );
    assert_eq!(
        live.read(&format!("info:{card}:res:0:ev:0")).unwrap().0,
        format!("    ✓ parent {shown} (pid 1) is init (/proc/1/stat)")
    );
}

/// "Stop anyway…" is a submenu inside its card's, and its confirming item is clickable there.
#[test]
fn stop_anyway_is_built_as_a_submenu_of_its_card() {
    let s = crate::state::fixtures::shop_and_api_in_a_shell();
    let live = LiveMenu::build(&menu(&s, now()), Dots::default()).unwrap();
    assert_eq!(
        live.read("card:/w/api:res:0:anyway"),
        Some(("Stop anyway…".into(), true))
    );
    let p = &s.projects()[1];
    let confirm = crate::ids::Click::StopAnyway {
        path: p.path.clone(),
        id: p.resources[0].id.parse().unwrap(),
        seen: crate::ids::card_seen(p),
        reasons: p.resources[0].reasons.clone(),
    };
    assert_eq!(
        live.read(&confirm.id()),
        Some(("Send SIGTERM anyway".into(), true))
    );
}
