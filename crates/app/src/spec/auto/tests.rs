//! "Automatic stops" in the menu spec, and what its clicks do, without a display.

use std::time::SystemTime;

use pier_core::auto::pause::For;
use pier_core::model::card::Level;
use pier_core::model::examples::{project, resource};
use pier_core::model::rules::{AutoNote, AutoState, Pause, Rule, Rules, RulesState};
use pier_core::worker::{ActionKey, AutoStatus, Command, Update};

use super::super::tests::{find, text_enabled};
use super::super::{menu, Entry};
use super::{PAUSE_HOUR, PAUSE_TOMORROW, RESUME};
use crate::ids::{intent, Click, Ignored, Intent};
use crate::state::fixtures::scanned;
use crate::state::UiState;

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-11-29T12:05:00Z").unwrap()
}

fn note(state: AutoState, why: &str) -> AutoNote {
    AutoNote {
        state,
        rule: Some("idle 30 min".into()),
        due_in_seconds: None,
        why: why.into(),
    }
}

fn on() -> RulesState {
    RulesState::On(Rules {
        cap_per_hour: 6,
        backoff_seconds: 1800,
        rules: vec![Rule {
            name: "idle 30 min".into(),
            idle_seconds: 1800,
            pressure: false,
            under: vec![],
            kinds: vec![],
            ports: vec![],
        }],
    })
}

/// A green shop whose server the rules say is due, and a green api that waits.
fn state(rules: RulesState, paused: Option<Pause>) -> UiState {
    let mut shop = resource("10-100", Level::Green, 5173);
    shop.auto = Some(note(AutoState::Due, "idle 42 min"));
    let mut api = resource("20-100", Level::Green, 8000);
    api.auto = Some(note(
        AutoState::Waiting,
        "due once idle 30 min; now idle 5 min",
    ));
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(
        1,
        vec![
            project("/w/shop", Level::Green, vec![shop]),
            project("/w/api", Level::Green, vec![api]),
        ],
    ));
    s.apply(Update::Auto(AutoStatus { rules, paused }));
    s
}

/// The submenu's title and its children's texts.
fn submenu(s: &UiState) -> (String, Vec<(String, bool)>) {
    let m = menu(s, now());
    let Some(Entry::Submenu { text, children, .. }) = find(&m, "auto") else {
        panic!("no Automatic stops submenu: {m:?}");
    };
    let kids = children
        .iter()
        .filter(|e| !matches!(e, Entry::Separator))
        .map(|e| {
            let (t, en) = text_enabled(e);
            (t.to_owned(), en)
        })
        .collect();
    (text.clone(), kids)
}

fn texts(kids: &[(String, bool)]) -> Vec<&str> {
    kids.iter().map(|(t, _)| t.as_str()).collect()
}

/// On: the submenu says so, names the due card (not the waiting one), and offers both pauses;
/// each card's resource line carries its note.
#[test]
fn on_the_submenu_names_what_is_due_and_offers_the_pauses() {
    let s = state(on(), None);
    let (title, kids) = submenu(&s);
    assert_eq!(title, "Automatic stops: on");
    assert_eq!(
        texts(&kids),
        [
            "On: 1 rule",
            "Would stop now: vite in shop",
            PAUSE_HOUR,
            PAUSE_TOMORROW
        ]
    );
    assert!(kids.iter().all(|(t, en)| *en || !t.starts_with("Pause")));
    let m = menu(&s, now());
    let (line, _) = text_enabled(find(&m, "info:card:/w/api:res:0:auto").expect("the note"));
    assert_eq!(
        line,
        "    Auto: rule 'idle 30 min': due once idle 30 min; now idle 5 min"
    );
}

/// Off, unreadable and paused each say so in the title; paused offers Resume alone.
#[test]
fn off_unreadable_and_paused_say_so_and_paused_offers_resume() {
    let (title, kids) = submenu(&state(RulesState::Off, None));
    assert_eq!(title, "Automatic stops: off");
    assert!(kids[0].0.starts_with("Off: add a rule to rules.toml"));
    let bad = RulesState::Unreadable("the rules file /c/rules.toml is not valid: line 2".into());
    let (title, kids) = submenu(&state(bad, None));
    assert_eq!(title, "Automatic stops: off, unreadable");
    assert!(kids[0].0.contains("line 2"), "{kids:?}");
    let paused = Pause {
        until: 1_764_460_800,
        asked: "until tomorrow".into(),
    };
    let (title, kids) = submenu(&state(on(), Some(paused)));
    assert_eq!(title, "Automatic stops: paused");
    let t = texts(&kids);
    assert!(
        t.contains(&"Paused until tomorrow (until 2025-11-30 00:00 UTC)"),
        "{t:?}"
    );
    assert_eq!(t.last(), Some(&RESUME));
    assert!(!t.contains(&PAUSE_HOUR));
}

/// Before a refresh read the rules, there is no submenu.
#[test]
fn no_submenu_before_the_rules_are_read() {
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![]));
    assert!(find(&menu(&s, now()), "auto").is_none());
}

/// The clicks: each pause and the resume become the worker's command under the one key of
/// the automatic stops; a second click while one runs is ignored.
#[test]
fn the_pause_and_resume_clicks_send_their_commands_once() {
    let mut s = state(on(), None);
    let hour = Click::parse(&Click::PauseAuto { tomorrow: false }.id()).unwrap();
    let Intent::Act { key, command, .. } = intent(hour, &s) else {
        panic!("the click pauses");
    };
    assert_eq!(key, ActionKey::Auto);
    let Command::Pause { asked } = command else {
        panic!("a pause");
    };
    assert_eq!(asked, For::While(std::time::Duration::from_secs(3600)));
    let tomorrow = Click::parse("auto-pause:tomorrow").unwrap();
    assert!(matches!(
        intent(tomorrow.clone(), &s),
        Intent::Act {
            command: Command::Pause {
                asked: For::Tomorrow
            },
            ..
        }
    ));
    assert!(matches!(
        intent(Click::parse("auto-resume").unwrap(), &s),
        Intent::Act {
            command: Command::Resume,
            ..
        }
    ));
    assert!(s.begin(ActionKey::Auto, "pausing…"));
    assert!(matches!(
        intent(tomorrow, &s),
        Intent::Ignore(Ignored::Auto)
    ));
    let (title, kids) = submenu(&s);
    assert_eq!(title, "Automatic stops: on — pausing…");
    assert!(kids
        .iter()
        .filter(|(t, _)| t.starts_with("Pause"))
        .all(|(_, en)| !en));
    assert_eq!(Click::parse("auto-pause:soon"), None);
}
