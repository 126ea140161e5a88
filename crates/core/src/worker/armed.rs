//! The app's armed stops ("stop when safe", docs/design.md §5a), as result lines: arming and
//! cancelling from the menu, and what an armed stop came to at a refresh (fired, dropped).
//! Each is an [`ActionReport`] of the card's project, shown and notified as a click's result
//! is, and followed by a fresh scan. Pure functions over the engine's answers.

use super::summary::{project_name, signalled, stop_words, stop_words_by, tone_of_outcome};
use super::{ActionKey, ActionReport, Tone, Undo};
use crate::auto::arms::ArmError;
use crate::auto::scheduler::Event;
use crate::model::arm::{Arm, Armed};
use crate::model::outcome::{ResourceResult, StopReport};
use crate::store::StoreError;

/// Who asked, in a fired stop's line.
const BY_ARM: &str = " by your armed stop";

/// How a person knows the card an action key names: its project folder's name.
fn name_of(key: &ActionKey) -> String {
    match key {
        ActionKey::Project(path) => project_name(path),
        ActionKey::AllSafe => "all safe".to_owned(),
        ActionKey::Snapshot(name) => name.to_string(),
        ActionKey::Auto => "automatic stops".to_owned(),
    }
}

/// The line of what an armed stop came to at one refresh; `None` for what is only logged. Why
/// logged: an arm record that cannot be read is kept as it is and would be reported again at
/// every refresh, a notification each time; `pier armed` names it.
pub fn armed_event_summary(event: &Event) -> Option<ActionReport> {
    match event {
        Event::Fired { arm, report, kept } => Some(fired_summary(arm, report, *kept)),
        Event::Dropped { arm, why } => {
            let key = ActionKey::Project(arm.project.clone());
            Some(ActionReport {
                summary: format!("{}: armed stop dropped — {why}", name_of(&key)),
                tone: Tone::Refused,
                key,
                restart: None,
            })
        }
        Event::Ruled {
            rule,
            because,
            project,
            report,
        } => Some(ruled_summary(rule, because, project, report)),
        Event::Unreadable(e) => {
            tracing::warn!(
                "armed stops: {}",
                crate::words::for_terminal(&e.to_string())
            );
            None
        }
    }
}

/// "web: stopped by your armed stop (4 processes) · Restart in Recently stopped"; a stop
/// refused for what the arm waits out says it still waits (`kept`); any other end drops it.
fn fired_summary(arm: &Arm, r: &StopReport, kept: bool) -> ActionReport {
    let words = match r.result {
        _ if kept => format!("armed stop refused — {}; still armed", r.reason),
        ResourceResult::Stopped | ResourceResult::PartiallyStopped | ResourceResult::NotStopped => {
            stop_words_by(r, BY_ARM)
        }
        _ => format!("armed stop dropped — {}", stop_words(r)),
    };
    automatic_summary(&arm.project, &arm.kind, words, r)
}

/// "web: stopped by your rule 'idle 30 min': idle 42 min (4 processes) · Restart in Recently
/// stopped"; refused: it says so (the resource then waits out the back-off).
fn ruled_summary(rule: &str, because: &str, project: &str, r: &StopReport) -> ActionReport {
    let by = crate::model::RequestedBy::Rule {
        name: rule.to_owned(),
        because: Some(because.to_owned()),
    };
    let by = format!(" {}", crate::words::asked_by(&by).unwrap_or_default());
    let words = match r.result {
        ResourceResult::Stopped | ResourceResult::PartiallyStopped | ResourceResult::NotStopped => {
            stop_words_by(r, &by)
        }
        _ => format!("the rule '{rule}' did not stop it — {}", stop_words(r)),
    };
    automatic_summary(project, r.kind.as_deref().unwrap_or("server"), words, r)
}

/// An automatic stop's result line in `project`: `words`, then what could not be recorded,
/// then where its undo is; with the undo the notification offers.
fn automatic_summary(project: &str, kind: &str, mut words: String, r: &StopReport) -> ActionReport {
    let key = ActionKey::Project(project.to_owned());
    if let Some(e) = &r.record_error {
        words = format!("{words} — the outcome could not be recorded: {e}");
    }
    // What signals ended comes back from its snapshot: the undo is one click away.
    if signalled(r.result) && crate::restart::offered(Some(kind)) {
        words.push_str(" · Restart in Recently stopped");
    }
    ActionReport {
        summary: format!("{}: {words}", name_of(&key)),
        tone: tone_of_outcome(&Ok(r.clone())),
        key,
        restart: undo_of(project, kind, r),
    }
}

/// The undo of an automatic stop: only one that sent signals and wrote its snapshot has one
/// (a refused or failed stop left the server running; nothing to restart), of a kind a restart
/// takes (`restart::offered`).
fn undo_of(project: &str, kind: &str, r: &StopReport) -> Option<Undo> {
    if !signalled(r.result) || !crate::restart::offered(Some(kind)) {
        return None;
    }
    let snapshot = r.snapshot.as_deref()?.parse().ok()?;
    Some(Undo {
        snapshot,
        label: format!("{} · {kind}", project_name(project)),
    })
}

/// The line of "Stop when safe": armed, with what it waits for, or not and why.
pub fn arm_summary(key: ActionKey, result: &Result<Armed, ArmError>) -> ActionReport {
    let name = name_of(&key);
    let (tone, summary) = match result {
        Ok(a) if a.waiting_for.is_empty() => {
            (Tone::Done, format!("{name}: armed — stops when safe"))
        }
        Ok(a) => (
            Tone::Done,
            format!(
                "{name}: armed — stops when safe, waiting for {}",
                a.waiting_for.join("; ")
            ),
        ),
        Err(e @ ArmError::Refused(_)) => (Tone::Refused, format!("{name}: not armed — {e}")),
        Err(e) => (Tone::Failed, format!("{name}: not armed — {e}")),
    };
    ActionReport {
        key,
        tone,
        summary,
        restart: None,
    }
}

/// The line of "Cancel armed stop": cancelled, nothing to cancel (it fired or was dropped in
/// the meantime), or the state folder's sentence.
pub fn disarm_summary(key: ActionKey, result: &Result<Option<Arm>, StoreError>) -> ActionReport {
    let name = name_of(&key);
    let (tone, summary) = match result {
        Ok(Some(_)) => (Tone::Done, format!("{name}: armed stop cancelled")),
        Ok(None) => (
            Tone::Refused,
            format!("{name}: no armed stop to cancel — it fired, was dropped or was cancelled"),
        ),
        Err(e) => (
            Tone::Failed,
            format!("{name}: the armed stop could not be cancelled — {e}"),
        ),
    };
    ActionReport {
        key,
        tone,
        summary,
        restart: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auto::arms::{ArmRefusal, Dropped};
    use crate::model::outcome::{MemberOutcome, MemberReport};
    use crate::model::{Identity, RequestedBy};

    fn arm() -> Arm {
        Arm {
            schema: 1,
            id: "10-100".into(),
            root: Identity {
                pid: 10,
                start_time: 100,
            },
            boot_id: None,
            project: "/w/web".into(),
            kind: "vite".into(),
            reasons: vec![],
            armed_at: 0,
            expires_at: 0,
            armed_by: RequestedBy::App,
            kernel_state_lost: false,
            exe: None,
        }
    }

    fn stopped(n: u32) -> StopReport {
        StopReport {
            members: (0..n)
                .map(|i| MemberReport {
                    pid: 10 + i,
                    start_time: 100,
                    command: "node".into(),
                    outcome: MemberOutcome::Stopped,
                    detail: String::new(),
                })
                .collect(),
            ..StopReport::new("10-100", ResourceResult::Stopped, "every member is gone")
        }
    }

    #[test]
    fn a_fired_stop_says_who_asked_and_where_its_undo_is() {
        let event = Event::Fired {
            arm: arm(),
            report: Box::new(stopped(4)),
            kept: false,
        };
        let a = armed_event_summary(&event).expect("a result");
        assert_eq!(
            a.summary,
            "web: stopped by your armed stop (4 processes) · Restart in Recently stopped"
        );
        assert_eq!(a.tone, Tone::Done);
        assert_eq!(a.key, ActionKey::Project("/w/web".into()));
        assert_eq!(a.restart, None, "no snapshot written: nothing to restart");
    }

    /// The notification's Restart: only a stop that signalled and wrote a snapshot offers it.
    #[test]
    fn a_fired_stop_that_wrote_a_snapshot_offers_its_restart_and_a_refused_one_does_not() {
        let with_snapshot = |r: ResourceResult| StopReport {
            snapshot: Some("snap-10-100-1700000000".into()),
            result: r,
            ..stopped(2)
        };
        let fired = |report: StopReport| {
            armed_event_summary(&Event::Fired {
                arm: arm(),
                report: Box::new(report),
                kept: false,
            })
            .unwrap()
        };
        let undo = fired(with_snapshot(ResourceResult::Stopped)).restart;
        let undo = undo.expect("a stopped server offers its restart");
        assert_eq!(undo.snapshot.to_string(), "snap-10-100-1700000000");
        assert_eq!(undo.label, "web · vite");
        let partly = fired(with_snapshot(ResourceResult::PartiallyStopped));
        assert!(
            partly.restart.is_some(),
            "partly stopped: what ended comes back"
        );
        for nothing_ended in [ResourceResult::NotStopped, ResourceResult::Refused] {
            let a = fired(with_snapshot(nothing_ended));
            assert_eq!(a.restart, None, "{nothing_ended:?}: it still runs");
        }
    }

    /// A kind its client starts (an MCP server) is never restarted: its stop offers no undo,
    /// in the notification or in words.
    #[test]
    fn a_fired_stop_of_a_kind_its_client_starts_offers_no_restart() {
        let report = StopReport {
            snapshot: Some("snap-10-100-1700000000".into()),
            ..stopped(1)
        };
        let a = armed_event_summary(&Event::Fired {
            arm: Arm {
                kind: "mcp-server".into(),
                ..arm()
            },
            report: Box::new(report),
            kept: false,
        })
        .unwrap();
        assert_eq!(a.restart, None);
        assert_eq!(a.summary, "web: stopped by your armed stop (1 process)");
    }

    /// Refused for what it waits out: it still waits, and says so; never "stopped".
    #[test]
    fn a_fired_stop_refused_for_a_client_says_it_is_still_armed() {
        let r = StopReport::new("10-100", ResourceResult::Refused, "a client is connected");
        let a = armed_event_summary(&Event::Fired {
            arm: arm(),
            report: Box::new(r.clone()),
            kept: true,
        })
        .unwrap();
        assert_eq!(
            a.summary,
            "web: armed stop refused — a client is connected; still armed"
        );
        assert_eq!(a.tone, Tone::Refused);
        let a = armed_event_summary(&Event::Fired {
            arm: arm(),
            report: Box::new(r),
            kept: false,
        })
        .unwrap();
        assert_eq!(
            a.summary,
            "web: armed stop dropped — refused — a client is connected"
        );
    }

    #[test]
    fn a_dropped_arm_says_why_and_an_unreadable_record_is_only_logged() {
        let a = armed_event_summary(&Event::Dropped {
            arm: arm(),
            why: Dropped::Ended,
        })
        .unwrap();
        assert_eq!(a.summary, "web: armed stop dropped — it ended on its own");
        assert_eq!(a.tone, Tone::Refused);
        let unreadable = Event::Unreadable(StoreError::EmptyStateDir);
        assert_eq!(armed_event_summary(&unreadable), None);
    }

    #[test]
    fn arming_says_what_it_waits_for_or_why_not() {
        let key = ActionKey::Project("/w/web".into());
        let ok = Ok(Armed {
            expires_at: 0,
            waiting_for: vec!["the client on :5173 (curl) to leave".into()],
        });
        let a = arm_summary(key.clone(), &ok);
        assert_eq!(
            a.summary,
            "web: armed — stops when safe, waiting for the client on :5173 (curl) to leave"
        );
        assert_eq!(a.tone, Tone::Done);
        let refused = Err(ArmError::Refused(ArmRefusal::NotFound {
            id: "10-100".into(),
        }));
        let a = arm_summary(key.clone(), &refused);
        assert_eq!(a.tone, Tone::Refused);
        assert!(a
            .summary
            .starts_with("web: not armed — no resource 10-100 now"));
        let a = disarm_summary(key, &Ok(Some(arm())));
        assert_eq!(
            (a.tone, a.summary.as_str()),
            (Tone::Done, "web: armed stop cancelled")
        );
    }
}
