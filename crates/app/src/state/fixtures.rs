//! The states the app's tests start from: scans, histories and self-tests as the worker
//! sends them, applied to a [`UiState`].

use pier_core::model::card::{Evidence, EvidenceKind, Level, Project, Resource, Scan};
use pier_core::model::examples::{project, resource};
use pier_core::model::history::{History, HistoryEntry};
use pier_core::model::target::RecordName;
use pier_core::worker::Update;

use super::UiState;

pub fn scanned(generation: u64, projects: Vec<Project>) -> Update {
    Update::Scanned {
        generation,
        scan: Ok(Scan {
            schema: 1,
            generation,
            scanned_at: "2026-11-29T12:00:00Z".into(),
            sample_ms: 0,
            projects,
            other_listeners: None,
            engines: Vec::new(),
        }),
        history: Ok(History::default()),
    }
}

pub fn shop_and_api() -> UiState {
    shop_and(project(
        "/w/api",
        Level::Yellow,
        vec![resource("20-100", Level::Yellow, 8000)],
    ))
}

/// A first scan of a green shop (vite :5173) and `other`.
pub fn shop_and(other: Project) -> UiState {
    let mut s = UiState::checked(Ok(false));
    let shop = project(
        "/w/shop",
        Level::Green,
        vec![resource("10-100", Level::Green, 5173)],
    );
    s.apply(scanned(1, vec![shop, other]));
    s
}

/// The vite server `id` on `port`, at `level` for the facts `against` (kind, message), which
/// its card names as reasons as the scan does (`reason::reasons_of`).
pub fn against(id: &str, level: Level, port: u16, against: &[(EvidenceKind, &str)]) -> Resource {
    let mut r = resource(id, level, port);
    r.evidence = against
        .iter()
        .map(|(kind, message)| Evidence {
            kind: *kind,
            level,
            message: (*message).into(),
            source: "process table".into(),
        })
        .collect();
    r.reasons = pier_core::model::reason::reasons_of(&r.evidence)
        .into_iter()
        .collect();
    r
}

/// The api server's parent, a live shell: its one fact against a stop.
pub const LIVE_PARENT: &str = "its parent bash (pid 7) still runs, in tmux session work, pane 1";

/// A green shop, and a yellow api whose server's one fact against a stop is its live parent.
pub fn shop_and_api_in_a_shell() -> UiState {
    shop_and(project(
        "/w/api",
        Level::Yellow,
        vec![against(
            "20-100",
            Level::Yellow,
            8000,
            &[(EvidenceKind::NotOrphaned, LIVE_PARENT)],
        )],
    ))
}

pub fn history_entry(name: &str, restartable: bool, why_not: Option<&str>) -> HistoryEntry {
    HistoryEntry {
        restarts: Vec::new(),
        batch: None,
        requested_by: Default::default(),
        set_aside: Vec::new(),
        snapshot: name.into(),
        id: "10-100".into(),
        kind: None,
        project: "/w/shop".into(),
        root_command: vec![
            "node_modules/.bin/vite".into(),
            "--port".into(),
            "5173".into(),
        ],
        ports: vec!["127.0.0.1:5173".into()],
        helper_ports: vec![],
        stopped_at: "2026-11-29T12:00:00Z".into(),
        result: Some("stopped".into()),
        signalled: Some(true),
        reason: Some("every member is gone".into()),
        reconciled_at: None,
        not_written: None,
        restartable,
        why_not: why_not.map(Into::into),
        program: None,
        folder: None,
        code_env: vec![],
    }
}

pub fn with_history(entries: Vec<HistoryEntry>) -> UiState {
    let mut s = UiState::checked(Ok(true));
    s.apply(Update::Scanned {
        generation: 1,
        scan: Ok(Scan {
            schema: 1,
            generation: 1,
            scanned_at: String::new(),
            sample_ms: 0,
            projects: vec![],
            other_listeners: None,
            engines: Vec::new(),
        }),
        history: Ok(History {
            entries,
            damaged: vec!["snap-x: not JSON".into()],
        }),
    });
    s
}

/// A self-test report with one check: `signal`, passed or failed.
pub fn self_test(signal_works: bool) -> Update {
    use pier_core::model::doctor::{Check, DoctorReport, SignalPath, Status};
    Update::SelfTested(Box::new(DoctorReport {
        schema: 1,
        version: "0.1.0".into(),
        os: "macos aarch64".into(),
        signalling: SignalPath {
            name: "audit_token".into(),
            race_free: true,
            detail: String::new(),
        },
        checks: vec![Check {
            name: "signal".into(),
            what: "the signaller pins the test process and signals it".into(),
            needed: true,
            status: if signal_works {
                Status::Ok
            } else {
                Status::Failed
            },
            detail: "task_name_for_pid(4242) failed: 5".into(),
            setup: false,
        }],
        ready: signal_works,
        dump: None,
    }))
}

/// A record name as a test writes it.
pub fn record(name: &str) -> RecordName {
    name.parse().expect("a record name")
}
