//! "Stop when safe" and an armed stop in the menu spec, and what their clicks do, without a
//! display.

use std::time::SystemTime;

use pier_core::model::arm::Armed;
use pier_core::model::card::{EvidenceKind as K, Level, Project};
use pier_core::model::examples::{container, notebook, project};
use pier_core::model::idle::{Idle, IdleState};
use pier_core::worker::{ActionKey, Command};

use super::super::tests::{find, text_enabled};
use super::super::{menu, Entry};
use super::{ARM, ARM_KERNEL, CANCEL};
use crate::ids::{card_seen, intent, Click, Ignored, Intent};
use crate::state::fixtures::{against, scanned, shop_and, LIVE_PARENT};
use crate::state::UiState;

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-11-29T12:05:00Z").unwrap()
}

/// Every item of the card of `path` (depth first), as (id, text, enabled).
fn items(m: &[Entry], path: &str) -> Vec<(String, String, bool)> {
    fn walk(es: &[Entry], out: &mut Vec<(String, String, bool)>) {
        for e in es {
            match e {
                Entry::Item { id, text, enabled } => out.push((id.clone(), text.clone(), *enabled)),
                Entry::Submenu { children, .. } => walk(children, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    if let Some(Entry::Submenu { children, .. }) = find(m, &format!("card:{path}")) {
        walk(children, &mut out);
    }
    out
}

/// The item of the card of `path` whose text is `text`, if any.
fn item(s: &UiState, path: &str, text: &str) -> Option<(String, bool)> {
    items(&menu(s, now()), path)
        .into_iter()
        .find(|(_, t, _)| t == text)
        .map(|(id, _, enabled)| (id, enabled))
}

/// A yellow api whose server's facts against a stop are `facts`.
fn api(level: Level, facts: &[(K, &str)]) -> Project {
    project("/w/api", level, vec![against("20-100", level, 8000, facts)])
}

const CLIENT: &str = "a client is connected on :8000 (curl, pid 44)";

#[test]
fn a_yellow_card_whose_reasons_all_clear_offers_stop_when_safe_and_the_click_arms_it() {
    let s = shop_and(api(Level::Yellow, &[(K::NotOrphaned, LIVE_PARENT)]));
    let (id, enabled) = item(&s, "/w/api", ARM).expect("offered");
    assert!(enabled);
    let click = Click::parse(&id).unwrap();
    assert_eq!(
        click,
        Click::StopWhenSafe {
            path: "/w/api".into(),
            id: "20-100".parse().unwrap(),
            seen: card_seen(&s.projects()[1]),
            kernel: false,
        }
    );
    let Intent::Act { key, command, .. } = intent(click, &s) else {
        panic!("the click arms");
    };
    assert_eq!(key, ActionKey::Project("/w/api".into()));
    let Command::Arm {
        target,
        kernel_state_lost,
        ..
    } = command
    else {
        panic!("an arm: {command:?}");
    };
    assert_eq!(target.id.to_string(), "20-100");
    assert_eq!(target.shown.project_level, Level::Yellow);
    assert!(!kernel_state_lost);
}

#[test]
fn a_red_card_with_a_client_and_activity_offers_it_and_one_that_never_clears_does_not() {
    let waits = shop_and(api(
        Level::Red,
        &[(K::LiveConnection, CLIENT), (K::Activity, "busy: 38 % CPU")],
    ));
    assert!(item(&waits, "/w/api", ARM).is_some());
    for never in [
        (K::Managed, "run by pm2: stop it there with `pm2 stop api`"),
        (K::UnknownKind, "not a dev tool Pier knows"),
        (K::DataService, "postgres holds data"),
        (K::NotRestartable, "its argv was rewritten"),
        (K::Protected, "pid 1"),
    ] {
        let s = shop_and(api(Level::Red, &[(K::LiveConnection, CLIENT), never]));
        let m = menu(&s, now());
        assert!(
            !items(&m, "/w/api")
                .iter()
                .any(|(_, t, _)| t.starts_with(ARM)),
            "{never:?}: never waited for, never offered"
        );
        // A click built before the reason appeared arms nothing.
        let stale = Click::StopWhenSafe {
            path: "/w/api".into(),
            id: "20-100".parse().unwrap(),
            seen: card_seen(&s.projects()[1]),
            kernel: false,
        };
        assert_eq!(
            intent(stale, &s),
            Intent::Ignore(Ignored::NoStopWhenSafe("/w/api".into(), "20-100".into())),
            "{never:?}"
        );
    }
}

#[test]
fn a_green_card_and_a_container_are_never_offered_it() {
    let mut db = project("/w/db", Level::Yellow, vec![]);
    db.containers.push(container("shop-db-1", 5432));
    let s = shop_and(db);
    let m = menu(&s, now());
    for path in ["/w/shop", "/w/db"] {
        assert!(
            !items(&m, path).iter().any(|(_, t, _)| t.starts_with(ARM)),
            "{path}"
        );
    }
}

/// A live notebook kernel: the item says its state will be lost, and its click confirms it; a
/// click from before the kernel was seen arms nothing.
#[test]
fn a_card_holding_a_kernel_says_its_state_is_lost_and_the_click_confirms_it() {
    let mut nb = notebook("/w/nb");
    nb.level = Level::Yellow;
    let r = &mut nb.resources[0];
    let plain = against(&r.id, Level::Yellow, 8888, &[(K::NotOrphaned, LIVE_PARENT)]);
    r.level = Level::Yellow;
    r.evidence = plain.evidence;
    r.reasons = plain.reasons;
    let s = shop_and(nb);
    assert_eq!(item(&s, "/w/nb", ARM), None);
    let (id, _) = item(&s, "/w/nb", ARM_KERNEL).expect("offered, saying so");
    let Intent::Act { command, .. } = intent(Click::parse(&id).unwrap(), &s) else {
        panic!("the click arms");
    };
    assert!(matches!(
        command,
        Command::Arm {
            kernel_state_lost: true,
            ..
        }
    ));
    let Some(Click::StopWhenSafe { path, id, seen, .. }) = Click::parse(&id) else {
        unreachable!()
    };
    let unconfirmed = Click::StopWhenSafe {
        path,
        id,
        seen,
        kernel: false,
    };
    assert_eq!(
        intent(unconfirmed, &s),
        Intent::Ignore(Ignored::CardChanged("/w/nb".into()))
    );
}

/// An armed resource says what it waits for and offers its cancel, never a second arm.
#[test]
fn an_armed_resource_shows_what_it_waits_for_and_offers_cancel() {
    let mut p = api(Level::Red, &[(K::LiveConnection, CLIENT)]);
    p.resources[0].armed = Some(Armed {
        expires_at: 0,
        waiting_for: vec![
            "the client on :8000 (curl) to leave".into(),
            "green for 60 s".into(),
        ],
    });
    let s = shop_and(p);
    let m = menu(&s, now());
    let texts: Vec<String> = items(&m, "/w/api").into_iter().map(|(_, t, _)| t).collect();
    assert!(
        texts.contains(
            &"Armed: stops when safe — waiting for the client on :8000 (curl) to leave".into()
        ),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.starts_with(ARM)), "{texts:?}");
    let (id, enabled) = item(&s, "/w/api", CANCEL).expect("cancel offered");
    assert!(enabled);
    let Intent::Act { command, .. } = intent(Click::parse(&id).unwrap(), &s) else {
        panic!("the click cancels");
    };
    assert_eq!(
        command,
        Command::Disarm {
            key: ActionKey::Project("/w/api".into()),
            id: "20-100".parse().unwrap(),
        }
    );
}

/// A card changed between the menu and the click (another member now) arms nothing; while an
/// action on the card runs, neither item is enabled.
#[test]
fn a_stale_or_busy_card_arms_nothing() {
    let mut s = shop_and(api(Level::Yellow, &[(K::NotOrphaned, LIVE_PARENT)]));
    let (id, _) = item(&s, "/w/api", ARM).unwrap();
    let mut changed = s.projects()[1].clone();
    changed.resources[0].members[0].start_time += 1;
    let shop = s.projects()[0].clone();
    s.apply(scanned(2, vec![shop, changed]));
    assert_eq!(
        intent(Click::parse(&id).unwrap(), &s),
        Intent::Ignore(Ignored::CardChanged("/w/api".into()))
    );
    s.begin(ActionKey::Project("/w/api".into()), "arming…");
    assert_eq!(item(&s, "/w/api", ARM).map(|(_, e)| e), Some(false));
}

/// The idle clock, where the worker measured it, ends the resource's line.
#[test]
fn a_resource_line_shows_its_idle_clock_when_known() {
    let mut p = api(Level::Yellow, &[(K::NotOrphaned, LIVE_PARENT)]);
    p.resources[0].idle = Some(Idle {
        state: IdleState::Idle,
        seconds: 2400,
        why: None,
    });
    let s = shop_and(p);
    let m = menu(&s, now());
    let (line, _) = text_enabled(find(&m, "info:card:/w/api:res:0").unwrap());
    assert!(line.ends_with(" · idle 40 min"), "{line}");
    let (line, _) = text_enabled(find(&m, "info:card:/w/shop:res:0").unwrap());
    assert!(!line.contains("idle"), "no clock, no word: {line}");
}
