//! The state → menu layer, without a display.

use super::*;
use crate::state::fixtures::{
    history_entry, record, scanned, self_test, shop_and, shop_and_api, with_history,
};
use pier_core::model::examples::{notebook, project, resource};
use pier_core::model::history::History;
use pier_core::worker::{ActionReport, Update};

/// The id of "Clean up safely" on the card of `path`, as the menu of `state` builds it.
pub fn stop_id(state: &UiState, path: &str) -> String {
    let p = state.projects().iter().find(|p| p.path == path).unwrap();
    Click::StopProject {
        path: path.into(),
        seen: crate::ids::card_seen(p),
    }
    .id()
}

/// The id of "Clean up all safe", as the menu of `state` builds it.
pub fn stop_all_id(state: &UiState) -> String {
    Click::StopAllSafe {
        seen: crate::ids::all_safe_seen(state),
    }
    .id()
}

pub fn find<'a>(entries: &'a [Entry], id: &str) -> Option<&'a Entry> {
    entries.iter().find_map(|e| match e {
        Entry::Item { id: i, .. } | Entry::Check { id: i, .. } if i == id => Some(e),
        Entry::Submenu { id: i, .. } if i == id => Some(e),
        Entry::Submenu { children, .. } => find(children, id),
        _ => None,
    })
}

pub fn text_enabled(e: &Entry) -> (&str, bool) {
    match e {
        Entry::Item { text, enabled, .. }
        | Entry::Check { text, enabled, .. }
        | Entry::Submenu { text, enabled, .. } => (text, *enabled),
        Entry::Separator => ("", false),
    }
}

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-11-29T12:05:00Z").unwrap()
}

#[test]
fn the_header_counts_projects_and_safe_ones() {
    let m = menu(&shop_and_api(), now());
    assert_eq!(text_enabled(&m[0]), ("2 projects · 1 safe to stop", false));
}

#[test]
fn before_the_first_scan_the_header_says_scanning_and_nothing_is_enabled_to_stop() {
    let s = UiState::checked(Ok(false));
    let m = menu(&s, now());
    assert_eq!(text_enabled(&m[0]).0, "Pier — scanning…");
    assert!(!text_enabled(find(&m, &stop_all_id(&s)).unwrap()).1);
}

#[test]
fn a_failed_scan_is_said_in_the_header() {
    let mut s = UiState::checked(Ok(false));
    s.apply(Update::Scanned {
        generation: 1,
        scan: Err(pier_core::diagnose::ScanError::Processes(
            pier_core::probe::ProbeError::Scripted("the process table could not be read".into()),
        )
        .into()),
        history: Ok(History::default()),
    });
    let m = menu(&s, now());
    assert!(text_enabled(&m[0])
        .0
        .contains("the process table could not be read"));
}

#[test]
fn a_card_shows_level_as_a_word_name_kinds_and_ports() {
    let m = menu(&shop_and_api(), now());
    let card = find(&m, "card:/w/shop").unwrap();
    assert_eq!(text_enabled(card).0, "● green · shop — vite :5173");
    let api = find(&m, "card:/w/api").unwrap();
    assert_eq!(text_enabled(api).0, "● yellow · api — vite :8000");
    assert!(matches!(
        card,
        Entry::Submenu {
            dot: Some(Level::Green),
            ..
        }
    ));
}

#[test]
fn a_card_shows_its_containers_with_their_ports_and_evidence() {
    let mut shop = project(
        "/w/shop",
        Level::Yellow,
        vec![resource("10-100", Level::Green, 5173)],
    );
    shop.containers
        .push(pier_core::model::examples::container("shop-db-1", 5432));
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![shop]));
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "card:/w/shop").unwrap()).0,
        "● yellow · shop — vite :5173, container shop-db-1 :5432"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:container:0").unwrap()).0,
        "container shop-db-1 · postgres:16 · Docker · 127.0.0.1:5432 → 5432"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:container:0:ev:0").unwrap()).0,
        "    ! restart policy always: Docker starts it again when it ends, so a lasting stop \
         is Docker's: `docker stop shop-db-1` (container engine)"
    );
    assert!(!text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1);
}

/// A card holding only an idle container with no manager: its age and activity are the
/// container's, and it can be cleaned up (found by looking at the menu: "Age unknown ·
/// activity not sampled" under a green container card).
#[test]
fn a_green_container_card_shows_its_age_and_activity_and_can_be_cleaned_up() {
    let mut db = pier_core::model::examples::container("shop-db-1", 5432);
    db.level = Level::Green;
    db.restart_policy = None;
    db.evidence.clear();
    db.activity = Some(pier_core::model::card::Activity {
        window_ms: 1003,
        cpu_percent: 0.25,
        io_bytes_per_second: 0.0,
        busiest: None,
    });
    let mut shop = project("/w/shop", Level::Green, vec![]);
    shop.containers.push(db);
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![shop]));
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:age").unwrap()).0,
        "Up 10m · 0.2 % CPU over the sample"
    );
    assert!(text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1);
}

#[test]
fn a_card_opens_to_its_age_evidence_resources_and_actions() {
    let m = menu(&shop_and_api(), now());
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:age").unwrap()).0,
        "Up 2h 5m · activity not sampled"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:res:0:ev:0").unwrap()).0,
        "    ✓ orphaned: its parent is PID 1 (/proc/1/stat)"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:res:0").unwrap()).0,
        "vite · pid 10 · 1 process · 48.2 MB (proportional) · 127.0.0.1:5173"
    );
    assert!(find(&m, "open:http://localhost:5173").is_some());
    assert!(find(&m, "reveal:/w/shop").is_some());
}

#[test]
fn clean_up_safely_is_enabled_only_on_green_cards() {
    let s = shop_and_api();
    let m = menu(&s, now());
    assert!(text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1);
    assert!(!text_enabled(find(&m, &stop_id(&s, "/w/api")).unwrap()).1);
    assert_eq!(
        text_enabled(find(&m, &stop_all_id(&s)).unwrap()),
        ("Clean up all safe (1)", true)
    );
}

#[test]
fn a_running_stop_is_on_its_card_and_disables_both_clean_ups() {
    let mut s = shop_and_api();
    assert!(s.begin(ActionKey::Project("/w/shop".into()), "stopping…"));
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "card:/w/shop").unwrap()).0,
        "● green · shop — vite :5173 — stopping…"
    );
    assert!(!text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1);
    assert!(!text_enabled(find(&m, &stop_all_id(&s)).unwrap()).1);
}

/// "Clean up all safe" over two green cards: the card whose resources have ended says how, while
/// the other still says "stopping…"; the marks go with the action once its scan is shown.
#[test]
fn during_clean_up_all_safe_each_card_is_marked_as_its_resources_end() {
    let mut s = shop_and(project(
        "/w/docs",
        Level::Green,
        vec![resource("30-100", Level::Green, 4000)],
    ));
    assert!(s.begin(ActionKey::AllSafe, "stopping…"));
    s.apply(Update::CardDone {
        key: ActionKey::AllSafe,
        project: "/w/shop".into(),
        tone: Tone::Done,
    });
    let m = menu(&s, now());
    let title = |m: &[Entry], path: &str| {
        text_enabled(find(m, &format!("card:{path}")).unwrap())
            .0
            .to_owned()
    };
    assert_eq!(
        title(&m, "/w/shop"),
        "● green · shop — vite :5173 — stopped ✓"
    );
    assert_eq!(
        title(&m, "/w/docs"),
        "● green · docs — vite :4000 — stopping…"
    );
    s.apply(Update::ActionDone {
        report: ActionReport {
            key: ActionKey::AllSafe,
            tone: Tone::Done,
            summary: "Cleaned up 2 of 2: shop: stopped; docs: stopped".into(),
            restart: None,
        },
        settled_by: 2,
    });
    s.apply(scanned(2, vec![]));
    assert!(s.marks.is_empty(), "the marks went with the action");
    // A mark for an action that no longer runs is not taken.
    s.apply(Update::CardDone {
        key: ActionKey::AllSafe,
        project: "/w/shop".into(),
        tone: Tone::Refused,
    });
    assert!(s.marks.is_empty());
}

#[test]
fn a_result_appears_at_the_top_and_on_its_card() {
    let mut s = shop_and_api();
    s.begin(ActionKey::Project("/w/shop".into()), "stopping…");
    s.apply(Update::ActionDone {
        report: ActionReport {
            key: ActionKey::Project("/w/shop".into()),
            tone: Tone::Refused,
            summary: "shop: refused — a client is connected".into(),
            restart: None,
        },
        settled_by: 2,
    });
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "info:result:0").unwrap()).0,
        "✗ shop: refused — a client is connected"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/shop:result").unwrap()).0,
        "✗ shop: refused — a client is connected"
    );
    assert!(
        !text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1,
        "not offered again before the scan that follows the action"
    );
    assert!(text_enabled(find(&m, "card:/w/shop").unwrap())
        .0
        .ends_with("— updating…"));
    s.apply(scanned(
        2,
        vec![project(
            "/w/shop",
            Level::Green,
            vec![resource("30-100", Level::Green, 5173)],
        )],
    ));
    let m = menu(&s, now());
    assert!(
        text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1,
        "free again once the scan that follows is shown"
    );
}

#[test]
fn recently_stopped_offers_restart_only_when_restartable_and_says_why_not() {
    let s = with_history(vec![
        history_entry("snap-10-100-1", true, None),
        history_entry("snap-10-100-2", false, Some("port 5173 is taken by pid 9")),
    ]);
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "snap:snap-10-100-1").unwrap()).0,
        "shop · vite :5173"
    );
    assert_eq!(
        text_enabled(find(&m, "info:snap:snap-10-100-1:when").unwrap()).0,
        "Stopped 5m ago · stopped"
    );
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-1").unwrap()),
        ("Restart", true)
    );
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-2").unwrap()),
        ("Restart — not possible: port 5173 is taken by pid 9", false)
    );
    assert!(text_enabled(find(&m, "info:history:damaged").unwrap())
        .0
        .starts_with("1 unreadable record(s), kept"));
    let Some(Entry::Check { checked, .. }) = find(&m, "login") else {
        panic!("start at login is a check item");
    };
    assert!(*checked);
}

/// Found by trying real tools: a stop refused before any signal was listed under "Recently
/// stopped" as "Stopped 5m ago · refused".
#[test]
fn a_stop_that_sent_no_signal_is_not_listed_as_recently_stopped() {
    let mut refused = history_entry("snap-10-100-3", false, Some("nothing was stopped"));
    refused.result = Some("refused".into());
    refused.signalled = Some(false);
    let m = menu(&with_history(vec![refused.clone()]), now());
    assert!(find(&m, "snap:snap-10-100-3").is_none(), "not a stop");
    assert_eq!(
        text_enabled(find(&m, "info:history").unwrap()).0,
        "Nothing stopped yet"
    );
    let m = menu(
        &with_history(vec![history_entry("snap-10-100-1", true, None), refused]),
        now(),
    );
    assert!(find(&m, "snap:snap-10-100-1").is_some());
    assert!(find(&m, "snap:snap-10-100-3").is_none());
    assert!(find(&m, "info:history").is_none());
}

#[test]
fn a_running_restart_disables_its_item() {
    let mut s = with_history(vec![history_entry("snap-10-100-1", true, None)]);
    s.begin(ActionKey::Snapshot(record("snap-10-100-1")), "restarting…");
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-1").unwrap()),
        ("Restart — restarting…", false)
    );
}

/// Issue 37: a snapshot names what its restart runs; one whose replay changes what code runs
/// asks first — "Restart…", then, clicked once, the entries and "click again to confirm".
#[test]
fn a_restart_that_changes_what_code_runs_names_it_and_asks_for_a_second_click() {
    let mut plain = history_entry("snap-10-100-1", true, None);
    plain.program = Some("/usr/bin/node".into());
    plain.folder = Some("/w/shop".into());
    let mut preload = history_entry("snap-10-100-4", true, None);
    preload.code_env = vec!["LD_PRELOAD=/tmp/x.so".into()];
    let mut s = with_history(vec![plain, preload]);
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "info:snap:snap-10-100-1:runs").unwrap()).0,
        "Runs /usr/bin/node in /w/shop"
    );
    assert!(
        find(&m, "info:snap:snap-10-100-1:env").is_none(),
        "nothing to name"
    );
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-1").unwrap()),
        ("Restart", true),
        "passes: no question"
    );
    assert_eq!(
        text_enabled(find(&m, "info:snap:snap-10-100-4:env").unwrap()).0,
        "With LD_PRELOAD=/tmp/x.so (changes what code runs)"
    );
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-4").unwrap()),
        ("Restart…", true)
    );
    s.arm(record("snap-10-100-4"), vec!["LD_PRELOAD=/tmp/x.so".into()]);
    let m = menu(&s, now());
    assert_eq!(
        text_enabled(find(&m, "restart:snap-10-100-4").unwrap()),
        (
            "Restart with LD_PRELOAD=/tmp/x.so — click again to confirm",
            true
        )
    );
    let mut long = history_entry("snap-10-100-5", true, None);
    long.code_env = vec![format!("NODE_OPTIONS={}", "x".repeat(100))];
    let m = menu(&with_history(vec![long]), now());
    let (text, _) = text_enabled(find(&m, "info:snap:snap-10-100-5:env").unwrap());
    assert!(text.chars().count() < 100 && text.contains('…'), "{text}");
}

#[test]
fn urls_open_loopback_and_wildcards_on_this_machine() {
    assert_eq!(url("0.0.0.0", 3000), "http://localhost:3000");
    assert_eq!(url("::", 3000), "http://localhost:3000");
    assert_eq!(url("::1", 3000), "http://[::1]:3000");
    assert_eq!(url("192.168.1.5", 80), "http://192.168.1.5:80");
}

#[test]
fn durations_are_short() {
    assert_eq!(short_duration(Duration::from_secs(40)), "40s");
    assert_eq!(short_duration(Duration::from_secs(7_500)), "2h 5m");
    assert_eq!(short_duration(Duration::from_secs(90_000)), "1d 1h");
}

fn open_items(entries: &[Entry]) -> Vec<String> {
    let mut out = Vec::new();
    for e in entries {
        match e {
            Entry::Item { id, .. } if id.starts_with("open:") => out.push(id.clone()),
            Entry::Submenu { children, .. } => out.extend(open_items(children)),
            _ => {}
        }
    }
    out
}

#[test]
fn a_notebook_card_offers_to_open_the_server_only_and_shows_the_kernels_ports_apart() {
    let mut s = UiState::checked(Ok(false));
    s.apply(scanned(1, vec![notebook("/w/lab")]));
    let m = menu(&s, now());
    assert_eq!(open_items(&m), ["open:http://localhost:8888"]);
    assert_eq!(
        text_enabled(find(&m, "card:/w/lab").unwrap()).0,
        "● green · lab — jupyter :8888",
        "the title's ports are the server's"
    );
    assert_eq!(
        text_enabled(find(&m, "info:card:/w/lab:res:0").unwrap()).0,
        "jupyter · pid 30 · 1 process · 48.2 MB (proportional) · 127.0.0.1:8888 · notebook \
         kernel: 127.0.0.1:40001, 127.0.0.1:40002"
    );
}

#[test]
fn a_snapshot_is_named_by_the_servers_ports() {
    let mut e = history_entry("snap-10-100-1", true, None);
    e.kind = Some("jupyter".into());
    e.ports = vec![
        "127.0.0.1:8888".into(),
        "127.0.0.1:40001".into(),
        "127.0.0.1:40002".into(),
    ];
    e.helper_ports = vec!["127.0.0.1:40001".into(), "127.0.0.1:40002".into()];
    let m = menu(&with_history(vec![e]), now());
    assert_eq!(
        text_enabled(find(&m, "snap:snap-10-100-1").unwrap()).0,
        "shop · jupyter :8888"
    );
}

#[test]
fn a_failed_self_test_replaces_the_cards_with_what_does_not_work_and_offers_no_clean_up() {
    let mut s = shop_and_api();
    let stop_shop = stop_id(&s, "/w/shop");
    assert_eq!(s.apply(self_test(false)), crate::state::Applied::Changed);
    let m = menu(&s, now());
    assert_eq!(text_enabled(&m[0]).0, "Pier cannot work on this machine");
    let failure = find(&m, "info:doctor:signal").expect("the failed check is shown");
    assert_eq!(
        text_enabled(failure),
        (
            "✗ the signaller pins the test process and signals it: task_name_for_pid(4242) \
             failed: 5",
            false
        )
    );
    assert!(find(&m, "info:doctor:hint").is_some());
    assert!(find(&m, &stop_shop).is_none(), "no card is offered");
    assert!(!text_enabled(find(&m, &stop_all_id(&s)).unwrap()).1);
    assert!(
        find(&m, "info:empty").is_none(),
        "not an empty list: a failure"
    );
}

#[test]
fn a_passed_self_test_changes_nothing_in_the_menu() {
    let mut s = shop_and_api();
    let before = menu(&s, now());
    s.apply(self_test(true));
    assert_eq!(menu(&s, now()), before);
}

#[test]
fn before_the_self_test_answers_the_cards_show_but_no_clean_up_is_enabled() {
    let mut s = UiState::new(Ok(false));
    s.apply(scanned(
        1,
        vec![project(
            "/w/shop",
            Level::Green,
            vec![resource("10-100", Level::Green, 5173)],
        )],
    ));
    let m = menu(&s, now());
    let card = find(&m, &stop_id(&s, "/w/shop")).expect("the card is shown");
    assert!(
        !text_enabled(card).1,
        "Clean up safely waits for the self-test"
    );
    assert!(!text_enabled(find(&m, &stop_all_id(&s)).unwrap()).1);
    s.apply(self_test(true));
    let m = menu(&s, now());
    assert!(text_enabled(find(&m, &stop_id(&s, "/w/shop")).unwrap()).1);
}

/// While another scheduler holds the lock the menu says where automatic stops run; once the
/// app holds it, nothing is said.
#[test]
fn the_menu_says_where_automatic_stops_run_when_not_here() {
    use pier_core::auto::lock::{Acting, Holder, Who};
    let mut s = shop_and_api();
    let holder = Holder {
        pid: 1234,
        who: Who::Watch,
    };
    s.apply(Update::Acting(Acting::Elsewhere(Some(holder))));
    let m = menu(&s, now());
    let line = find(&m, "info:acting").map(text_enabled);
    assert_eq!(
        line,
        Some(("Automatic stops run in pier watch (pid 1234)", false))
    );
    s.apply(Update::Acting(Acting::Here));
    assert!(find(&menu(&s, now()), "info:acting").is_none());
}
