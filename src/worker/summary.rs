//! One honest line per action, for the menu and the notification. Pure functions over the
//! engine's reports: the words follow the result types, so "stopped" is only ever said of a
//! resource whose result is `stopped`.

use std::path::Path;

use super::{ActionKey, ActionReport};
use crate::restart::{RestartReport, RestartResult};
use crate::stop::{MemberOutcome, ResourceResult, StopReport};

/// How an action went, worst last: the menu and the notification take their tone from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    /// Everything asked for was done.
    Done,
    /// Nothing was done because a check said no.
    Refused,
    /// Some of it was done.
    Partial,
    /// Pier itself could not do it.
    Failed,
}

/// The name a person knows a project by: its folder's name.
pub fn project_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

fn tone_of(result: ResourceResult) -> Tone {
    match result {
        ResourceResult::Stopped => Tone::Done,
        ResourceResult::Refused => Tone::Refused,
        ResourceResult::PartiallyStopped => Tone::Partial,
        ResourceResult::Failed => Tone::Failed,
    }
}

/// "stopped (3 processes)", "refused — a client is connected", …: one resource, in words.
fn stop_words(r: &StopReport) -> String {
    match r.result {
        ResourceResult::Stopped => {
            let ended = r
                .members
                .iter()
                .filter(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited))
                .count();
            let noun = if ended == 1 { "process" } else { "processes" };
            format!("stopped ({ended} {noun})")
        }
        ResourceResult::PartiallyStopped => format!("partially stopped — {}", r.reason),
        ResourceResult::Refused => format!("refused — {}", r.reason),
        ResourceResult::Failed => format!("failed — {}", r.reason),
    }
}

/// The line for a stop of one project or of every safe one. `reports`: (project path, report),
/// in the order they ran. The tone is the worst of them.
pub fn stop_summary(key: ActionKey, reports: &[(String, StopReport)]) -> ActionReport {
    let tone = reports
        .iter()
        .map(|(_, r)| tone_of(r.result))
        .max()
        .unwrap_or(Tone::Refused);
    let parts: Vec<String> = reports
        .iter()
        .map(|(project, r)| format!("{}: {}", project_name(project), stop_words(r)))
        .collect();
    let summary = match (&key, parts.len()) {
        (_, 0) => "Nothing was safe to stop.".to_owned(),
        (ActionKey::AllSafe, _) => {
            let stopped = reports
                .iter()
                .filter(|(_, r)| r.result == ResourceResult::Stopped)
                .count();
            format!(
                "Cleaned up {stopped} of {}: {}",
                reports.len(),
                parts.join("; ")
            )
        }
        _ => parts.join("; "),
    };
    ActionReport { key, tone, summary }
}

/// The line for a restart; `label` is how the menu names the snapshot.
pub fn restart_summary(key: ActionKey, label: &str, r: &RestartReport) -> ActionReport {
    let (tone, words) = match r.result {
        RestartResult::Ready => (Tone::Done, format!("restarted — {}", r.reason)),
        RestartResult::NotReady => (
            Tone::Partial,
            format!("restarted, not ready — {}", r.reason),
        ),
        RestartResult::Refused => (Tone::Refused, format!("restart refused — {}", r.reason)),
        RestartResult::Failed => (Tone::Failed, format!("restart failed — {}", r.reason)),
    };
    ActionReport {
        key,
        tone,
        summary: format!("{label}: {words}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::MemberReport;

    fn report(result: ResourceResult, reason: &str, outcomes: &[MemberOutcome]) -> StopReport {
        StopReport {
            id: "10-100".into(),
            result,
            reason: reason.into(),
            members: outcomes
                .iter()
                .enumerate()
                .map(|(i, &outcome)| MemberReport {
                    pid: 10 + i as u32,
                    start_time: 100,
                    command: "node".into(),
                    outcome,
                    detail: String::new(),
                })
                .collect(),
            snapshot: None,
            fresh: None,
            timings: None,
            record_error: None,
        }
    }

    #[test]
    fn a_stop_counts_only_the_processes_that_ended() {
        let r = report(
            ResourceResult::Stopped,
            "",
            &[
                MemberOutcome::Stopped,
                MemberOutcome::Exited,
                MemberOutcome::Skipped,
            ],
        );
        let a = stop_summary(
            ActionKey::Project("/w/shop".into()),
            &[("/w/shop".into(), r)],
        );
        assert_eq!(a.summary, "shop: stopped (2 processes)");
        assert_eq!(a.tone, Tone::Done);
    }

    #[test]
    fn a_refusal_says_why_and_is_never_called_stopped() {
        let r = report(ResourceResult::Refused, "a client is connected", &[]);
        let a = stop_summary(ActionKey::Project("/w/api".into()), &[("/w/api".into(), r)]);
        assert_eq!(a.summary, "api: refused — a client is connected");
        assert_eq!(a.tone, Tone::Refused);
    }

    #[test]
    fn a_batch_takes_the_worst_tone_and_counts_the_stopped() {
        let ok = report(ResourceResult::Stopped, "", &[MemberOutcome::Stopped]);
        let part = report(
            ResourceResult::PartiallyStopped,
            "pid 11 is still running",
            &[MemberOutcome::StillRunning],
        );
        let a = stop_summary(
            ActionKey::AllSafe,
            &[("/w/a".into(), ok), ("/w/b".into(), part)],
        );
        assert_eq!(a.tone, Tone::Partial);
        assert_eq!(
            a.summary,
            "Cleaned up 1 of 2: a: stopped (1 process); b: partially stopped — pid 11 is still running"
        );
    }

    #[test]
    fn an_empty_batch_is_not_a_success() {
        let a = stop_summary(ActionKey::AllSafe, &[]);
        assert_eq!(a.tone, Tone::Refused);
        assert_eq!(a.summary, "Nothing was safe to stop.");
    }

    #[test]
    fn a_restart_that_is_not_ready_is_partial() {
        let r = RestartReport {
            snapshot: "snap-1".into(),
            result: RestartResult::NotReady,
            reason: "started as pid 9, but not every recorded port listened within 10 s".into(),
            pid: Some(9),
            start_time: None,
            log: None,
            log_tail: Vec::new(),
        };
        let a = restart_summary(ActionKey::Snapshot("snap-1".into()), "shop", &r);
        assert_eq!(a.tone, Tone::Partial);
        assert!(a
            .summary
            .starts_with("shop: restarted, not ready — started as pid 9"));
    }
}
