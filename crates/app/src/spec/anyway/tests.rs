//! "Stop anyway…" in the menu spec, without a display.

use std::time::SystemTime;

use pier_core::model::card::{EvidenceKind as K, Level};
use pier_core::model::examples::{container, project, resource};

use super::super::tests::{find, text_enabled};
use super::super::{menu, Entry};
use super::{CONFIRM, TITLE};
use crate::ids::{card_seen, Click};
use crate::state::fixtures::{against, scanned, shop_and, shop_and_api_in_a_shell, LIVE_PARENT};
use crate::state::UiState;
use pier_core::worker::ActionKey;

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-11-29T12:05:00Z").unwrap()
}

/// The menu as text: one entry a line, indented by its depth; "[x]" marks what can be
/// clicked, "▸" a submenu.
fn dump(entries: &[Entry], depth: usize) -> String {
    let mut out = String::new();
    for e in entries {
        let pad = "  ".repeat(depth);
        match e {
            Entry::Separator => out.push_str(&format!("{pad}---\n")),
            Entry::Submenu { text, children, .. } => {
                out.push_str(&format!("{pad}▸ {text}\n"));
                out.push_str(&dump(children, depth + 1));
            }
            _ => {
                let (text, enabled) = text_enabled(e);
                let mark = if enabled { "[x] " } else { "" };
                out.push_str(&format!("{pad}{mark}{text}\n"));
            }
        }
    }
    out
}

/// The children of the submenu `id` in `m`.
fn children<'m>(m: &'m [Entry], id: &str) -> &'m [Entry] {
    match find(m, id) {
        Some(Entry::Submenu { children, .. }) => children,
        other => panic!("no submenu {id}: {other:?}"),
    }
}

/// The "Stop anyway…" submenu of the first resource of the card of `path`, if any.
fn anyway_of<'m>(m: &'m [Entry], path: &str) -> Option<&'m Entry> {
    find(m, &format!("card:{path}:res:0:anyway"))
}

#[test]
fn a_yellow_card_offers_stop_anyway_repeating_its_reasons_and_what_a_restart_will_not_do() {
    let s = shop_and_api_in_a_shell();
    let m = menu(&s, now());
    let card = dump(children(&m, "card:/w/api"), 0);
    assert_eq!(
        card,
        "/w/api
Up 2h 5m · activity not sampled
---
vite · pid 20 · 1 process · 48.2 MB (proportional) · 127.0.0.1:8000
    ! its parent bash (pid 7) still runs, in tmux session work, pane 1 (process table)
▸ Stop anyway…
  ! not_orphaned: its parent bash (pid 7) still runs, in tmux session work, pane 1
  A restart would run it on its own: its parent is not brought back.
  ---
  [x] Send SIGTERM anyway
[x] Stop when safe
---
Clean up safely
[x] Open http://localhost:8000
[x] Reveal folder
",
        "{card}"
    );
    let confirm = children(&m, "card:/w/api:res:0:anyway").last().unwrap();
    let Entry::Item { id, .. } = confirm else {
        panic!("the confirming item: {confirm:?}");
    };
    let api = &s.projects()[1];
    assert_eq!(
        Click::parse(id),
        Some(Click::StopAnyway {
            path: "/w/api".into(),
            id: "20-100".parse().unwrap(),
            seen: card_seen(api),
            reasons: vec![pier_core::model::reason::Reason::NotOrphaned],
        })
    );
    assert!(LIVE_PARENT.len() < 90, "shown whole");
}

/// Each fact is a line of its own, shortened as every line is; each restart fact that applies
/// is said.
#[test]
fn every_fact_is_repeated_shortened_and_every_restart_fact_is_said() {
    let long = "busy: 38 % CPU in node (pid 21) over the sample, a build that ends on its own \
                when the bundler is done";
    let s = shop_and(project(
        "/w/api",
        Level::Red,
        vec![against(
            "20-100",
            Level::Red,
            8000,
            &[
                (K::Activity, long),
                (K::NotOrphaned, LIVE_PARENT),
                (K::NotRestartable, "its argv was rewritten"),
            ],
        )],
    ));
    let m = menu(&s, now());
    let lines: Vec<&str> = children(&m, "card:/w/api:res:0:anyway")
        .iter()
        .map(|e| text_enabled(e).0)
        .collect();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert_eq!(lines[0].chars().count(), 90, "{}", lines[0]);
    assert!(lines[0].starts_with("✗ busy: busy: 38 % CPU") && lines[0].ends_with('…'));
    assert_eq!(lines[2], "✗ not_restartable: its argv was rewritten");
    assert_eq!(
        lines[3],
        "A restart would run it on its own: its parent is not brought back. It cannot be \
         restarted afterwards."
    );
    assert_eq!(lines[5], CONFIRM);
}

/// Nothing past a "no" that no person may set aside: a data service, a manager's program,
/// protected or unreadable processes keep their "no", even beside a reason that may be set
/// aside; nor a green card, a card whose resource has no reasons, or a container.
#[test]
fn no_stop_anyway_for_green_protected_data_service_managed_unreadable_or_containers() {
    let never = [
        (K::DataService, "a data service: postgres"),
        (K::Managed, "run by pm2: `pm2 stop api`"),
        (K::ServiceUnit, "run by the systemd unit api.service"),
        (K::Protected, "PID 1"),
        (K::UserProtected, "on your protect list"),
        (K::FdTableUnreadable, "its fd table could not be read"),
    ];
    for fact in never {
        let s = shop_and(project(
            "/w/api",
            Level::Yellow,
            vec![against(
                "20-100",
                Level::Yellow,
                8000,
                &[(K::NotOrphaned, LIVE_PARENT), fact],
            )],
        ));
        let m = menu(&s, now());
        assert!(anyway_of(&m, "/w/api").is_none(), "{fact:?}");
    }
    let mut green = shop_and_api_in_a_shell();
    let m = menu(&green, now());
    assert!(anyway_of(&m, "/w/shop").is_none(), "green");
    // A yellow card whose resource is green beside a yellow container: no reasons, no offer.
    let mut db = container("shop-db-1", 5432);
    db.reasons = vec![pier_core::model::reason::Reason::NotOrphaned];
    let mut p = project(
        "/w/db",
        Level::Yellow,
        vec![resource("30-100", Level::Green, 3000)],
    );
    p.containers.push(db);
    green.apply(scanned(2, vec![p]));
    let m = menu(&green, now());
    assert!(anyway_of(&m, "/w/db").is_none());
    let dumped = dump(&m, 0);
    assert!(!dumped.contains(TITLE), "{dumped}");
}

/// The confirming item acts only when a stop of the card may run: not while one runs, nor
/// before the self-test vouched for the machine.
#[test]
fn send_sigterm_anyway_waits_for_a_running_stop_and_for_the_self_test() {
    let confirm_enabled = |s: &UiState| {
        let m = menu(s, now());
        text_enabled(children(&m, "card:/w/api:res:0:anyway").last().unwrap()).1
    };
    let mut s = shop_and_api_in_a_shell();
    assert!(confirm_enabled(&s));
    s.begin(ActionKey::Project("/w/api".into()), "stopping anyway…");
    assert!(!confirm_enabled(&s));
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "card:/w/api").unwrap()).0,
        "● yellow · api — vite :8000 — stopping anyway…"
    );
    let mut unchecked = UiState::new(Ok(false));
    let Some(Ok(scan)) = s.scan.clone() else {
        panic!("a scan")
    };
    unchecked.apply(scanned(1, scan.projects));
    assert!(!confirm_enabled(&unchecked));
}
