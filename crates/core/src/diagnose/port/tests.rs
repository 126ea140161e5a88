use super::*;
use crate::model::card::{Evidence, Port};
use crate::model::examples::{container, project, resource};

fn scan(projects: Vec<crate::model::card::Project>, others: Vec<OtherListener>) -> Scan {
    Scan {
        schema: 1,
        generation: 1,
        scanned_at: String::new(),
        sample_ms: 0,
        projects,
        other_listeners: Some(others),
        engines: Vec::new(),
    }
}

fn other(port: u16, address: &str, pid: Option<u32>, command: Option<&str>) -> OtherListener {
    OtherListener {
        port,
        address: address.into(),
        pid,
        command: command.map(Into::into),
        reason: "not a known dev tool, and not working inside a project".into(),
    }
}

fn evidence(kind: EvidenceKind, level: Level, message: &str) -> Evidence {
    Evidence {
        kind,
        level,
        message: message.into(),
        source: "test".into(),
    }
}

#[test]
fn a_port_is_a_colon_and_a_plain_number_from_1_to_65535() {
    assert_eq!(parse(":3000"), Some(Ok(3000)));
    assert_eq!(parse(":65535"), Some(Ok(65535)));
    assert_eq!(parse("17824-71008"), None, "an id");
    for bad in [
        ":", ":0", ":65536", ":03000", ":+3000", ":3000x", ": 3000", "::1",
    ] {
        let why = parse(bad).unwrap().unwrap_err();
        assert_eq!(why, NotAPort(bad.to_owned()), "{bad:?}");
    }
    let why = parse(":0").unwrap().unwrap_err().to_string();
    assert!(why.contains("is not a port"), "{why}");
}

/// One server listening on 127.0.0.1 and [::1] is one holder, and green is stopped.
#[test]
fn both_families_of_one_server_are_one_answer_and_green_is_stopped() {
    let mut r = resource("10-100", Level::Green, 3000);
    r.ports.push(Port {
        port: 3000,
        address: "::1".into(),
        pid: 10,
        helper: None,
    });
    let a = answer(
        &scan(vec![project("/h/u/shop", Level::Green, vec![r])], vec![]),
        3000,
    );
    assert_eq!(a.holders.len(), 1, "{a:#?}");
    assert_eq!(a.holders[0].listeners, ["127.0.0.1:3000", "[::1]:3000"]);
    assert_eq!(a.stops.as_deref(), Some("10-100"));
    assert_eq!(a.hint, None);
}

#[test]
fn nothing_listening_is_a_free_port() {
    let a = answer(
        &scan(vec![], vec![other(8080, "0.0.0.0", Some(5), Some("nginx"))]),
        3000,
    );
    assert!(a.is_free());
    assert_eq!(a.stops, None);
    assert_eq!(a.reason, "nothing listens on TCP port 3000: it is free");
}

/// Two resources on one port (SO_REUSEPORT), or a resource and another listener: Pier acts
/// on none and lists them.
#[test]
fn several_holders_are_listed_and_none_is_stopped() {
    let shop = project(
        "/h/u/shop",
        Level::Green,
        vec![
            resource("10-100", Level::Green, 3000),
            resource("20-100", Level::Green, 3000),
        ],
    );
    let a = answer(&scan(vec![shop.clone()], vec![]), 3000);
    assert_eq!(a.holders.len(), 2);
    assert_eq!(a.stops, None, "{a:#?}");
    assert!(
        a.reason
            .starts_with("2 holders listen on TCP port 3000, so `pier stop :3000` stops none"),
        "{}",
        a.reason
    );
    let one = project(
        "/h/u/shop",
        Level::Green,
        vec![resource("10-100", Level::Green, 3000)],
    );
    let a = answer(
        &scan(vec![one], vec![other(3000, "::", Some(7), Some("nginx"))]),
        3000,
    );
    assert_eq!((a.holders.len(), a.stops.as_deref()), (2, None));
}

/// A live client: named, with the advice to close it, and a stop anyway offered by id.
#[test]
fn a_client_is_named_and_a_stop_anyway_is_offered_by_id() {
    let mut r = resource("10-100", Level::Red, 3000);
    r.evidence.push(evidence(
        EvidenceKind::LiveConnection,
        Level::Red,
        "a client is connected: live connection 127.0.0.1:3000 ← 127.0.0.1:40000 (pid 77, curl)",
    ));
    let a = answer(
        &scan(vec![project("/h/u/shop", Level::Red, vec![r])], vec![]),
        3000,
    );
    assert_eq!(a.stops, None);
    assert!(a.reason.contains("(pid 77, curl)"), "{}", a.reason);
    let hint = a.hint.unwrap();
    assert!(
        hint.starts_with("close that client and run `pier stop :3000` again"),
        "{hint}"
    );
    assert!(hint.contains("`pier stop --anyway 10-100`"), "{hint}");
}

/// A stop anyway is never offered where it cannot act or would not free the port.
#[test]
fn a_stop_anyway_is_never_offered_for_a_protected_managed_shared_or_foreign_holder() {
    let with = |kind: EvidenceKind, level: Level| {
        let mut r = resource("10-100", level, 3000);
        r.evidence.push(evidence(kind, level, "a fact"));
        answer(
            &scan(vec![project("/h/u/shop", level, vec![r])], vec![]),
            3000,
        )
    };
    let protected = with(EvidenceKind::Protected, Level::Red);
    assert_eq!(
        protected.hint.as_deref(),
        Some("Pier never stops it, not even with --anyway")
    );
    for kind in [
        EvidenceKind::IdentityUnreadable,
        EvidenceKind::ExeUnreadable,
        EvidenceKind::ServiceUnit,
    ] {
        let a = with(kind, Level::Yellow);
        let hint = a.hint.unwrap();
        assert!(
            hint.starts_with("not even `pier stop --anyway` would stop it"),
            "{kind:?}: {hint}"
        );
    }
    let broken = with(EvidenceKind::UserProtected, Level::Yellow);
    assert!(
        broken
            .hint
            .as_deref()
            .unwrap()
            .starts_with("fix what the reason names (`pier doctor` checks it)"),
        "{broken:?}"
    );
    let mut r = resource("10-100", Level::Yellow, 3000);
    r.evidence.push(evidence(
        EvidenceKind::UserProtected,
        Level::Yellow,
        "on your protect list (port 3000)",
    ));
    let listed = answer(
        &scan(vec![project("/h/u/shop", Level::Yellow, vec![r])], vec![]),
        3000,
    );
    assert!(listed
        .hint
        .as_deref()
        .unwrap()
        .starts_with("Pier never stops what your protect list names"));
    let shared = with(EvidenceKind::SharedListener, Level::Yellow);
    assert!(shared.hint.unwrap().contains("would not free :3000"));
    let mut managed = resource("10-100", Level::Yellow, 3000);
    managed.managed_by = Some(crate::model::managed::ManagedBy {
        manager: "pm2".into(),
        pid: Some(5),
        program: Some("api".into()),
        stop_command: Some("pm2 stop 0".into()),
        source: "environment".into(),
        note: None,
    });
    let a = answer(
        &scan(
            vec![project("/h/u/shop", Level::Yellow, vec![managed])],
            vec![],
        ),
        3000,
    );
    assert_eq!(
        a.hint.as_deref(),
        Some("stop it with its manager: `pm2 stop 0` (a signal would be answered by a restart)")
    );
    let db = crate::model::card::Project {
        containers: vec![container("db", 3000)],
        ..project("/h/u/shop", Level::Yellow, vec![])
    };
    let a = answer(&scan(vec![db], vec![]), 3000);
    assert_eq!(a.holders[0].what, "container db");
    assert_eq!(a.stops, None);
    assert!(
        a.hint.as_deref().unwrap().contains("`docker stop db`"),
        "{a:#?}"
    );
    let foreign = answer(
        &scan(
            vec![],
            vec![
                other(3000, "0.0.0.0", None, None),
                other(3000, "::", None, None),
            ],
        ),
        3000,
    );
    assert_eq!(foreign.holders.len(), 1, "one unknown owner, two families");
    assert!(foreign.reason.contains("not yours"), "{}", foreign.reason);
    let not_dev = answer(
        &scan(vec![], vec![other(3000, "0.0.0.0", Some(9), Some("nginx"))]),
        3000,
    );
    assert!(
        not_dev.reason.starts_with("nginx (pid 9) holds it"),
        "{}",
        not_dev.reason
    );
    for a in [protected, listed, foreign, not_dev, a] {
        assert!(
            !a.hint.unwrap_or_default().contains("pier stop --anyway"),
            "{}",
            a.reason
        );
    }
}

/// One green vite on port 3000 in /h/u/shop, from a scan without the activity sample (as
/// `pier stop :PORT` makes).
fn unsampled_shop() -> Scan {
    scan(
        vec![project(
            "/h/u/shop",
            Level::Green,
            vec![resource("10-100", Level::Green, 3000)],
        )],
        Vec::new(),
    )
}

/// `pier stop :PORT` chooses from a scan without the activity sample: the answer hands the
/// holder to the stop without calling it green or safe, which the stop's own check (b) may
/// contradict. `pier scan :PORT` samples, and says what it saw.
#[test]
fn an_unsampled_answer_claims_no_verdict_the_stop_has_not_reached() {
    let unsampled = unsampled_shop();
    let a = answer(&unsampled, 3000);
    assert_eq!(a.stops.as_deref(), Some("10-100"));
    assert_eq!(
        a.reason,
        "vite (pid 10, id 10-100) holds it: stopping it, if the stop's own checks pass"
    );
    let sampled = Scan {
        sample_ms: 500,
        ..unsampled
    };
    let a = answer(&sampled, 3000);
    assert!(a.reason.contains("is green"), "{}", a.reason);
    assert!(!a.reason.contains("safely"), "{}", a.reason);
}

/// A dry run stops nothing: its answer makes the same choice and never says "stopping".
#[test]
fn a_dry_runs_answer_checks_and_never_says_stopping() {
    let unsampled = unsampled_shop();
    let a = answer_in_a_dry_run(&unsampled, 3000);
    assert_eq!(a.stops.as_deref(), Some("10-100"));
    assert_eq!(
        a.reason,
        "vite (pid 10, id 10-100) holds it: checking it as a stop would, stopping nothing"
    );
    assert_eq!(answer(&unsampled, 3000).stops, a.stops);
}
