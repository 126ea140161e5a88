//! One honest line per action, for the menu and the notification. Pure functions over the
//! engine's reports: the words follow the result types, so "stopped" is only ever said of a
//! resource whose result is `stopped`.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use super::{ActionKey, ActionReport, NoReport};
use crate::model::history::{HistoryEntry, RestartReport, RestartResult};
use crate::model::outcome::{MemberOutcome, ResourceResult, StopReport};
use crate::model::reason::Reason;

/// How an action went, worst last: the menu and the notification take their tone from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    /// Everything asked for was done.
    Done,
    /// Nothing was done because a check said no.
    Refused,
    /// Some of it was done.
    Partial,
    /// Signals went out, and nothing ended.
    NotStopped,
    /// Pier itself could not do it.
    Failed,
}

/// The name a person knows a project by: its folder's name.
pub fn project_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// "shop · vite :5173": how a snapshot is named in the menu and in its restart's result line.
pub fn snapshot_label(e: &HistoryEntry) -> String {
    let tool = e.kind.clone().unwrap_or_else(|| {
        e.root_command
            .first()
            .map(|a| project_name(a))
            .unwrap_or_default()
    });
    let mut label = format!("{} · {tool}", project_name(&e.project));
    for p in e.server_ports() {
        if let Some((_, port)) = p.rsplit_once(':') {
            let _ = write!(label, " :{port}");
        }
    }
    label
}

fn tone_of(result: ResourceResult) -> Tone {
    match result {
        ResourceResult::Stopped => Tone::Done,
        // The app makes no dry run; were one shown, it is one more thing not stopped.
        ResourceResult::Refused | ResourceResult::WouldStop => Tone::Refused,
        ResourceResult::PartiallyStopped => Tone::Partial,
        ResourceResult::NotStopped => Tone::NotStopped,
        ResourceResult::Failed => Tone::Failed,
    }
}

/// "stopped (3 processes)", "refused — a client is connected", "stopped anyway (1 process),
/// set aside: not_orphaned", …: one resource, in words.
pub(super) fn stop_words(r: &StopReport) -> String {
    stop_words_by(r, "")
}

/// As [`stop_words`], with who asked (`by`: " by your armed stop") after what signals did:
/// "stopped by your armed stop (4 processes)".
pub(super) fn stop_words_by(r: &StopReport, by: &str) -> String {
    // A stop anyway that sent its signals says so, and names what it set aside.
    let (anyway, aside) = match aside_words(r) {
        Some(aside) if signalled(r.result) => (" anyway", format!(", {aside}")),
        _ => ("", String::new()),
    };
    let words = match r.result {
        ResourceResult::Stopped if r.container.is_some() => {
            let name = r.container.as_ref().map_or("", |c| c.name.as_str());
            format!("stopped{by} (container {name})")
        }
        ResourceResult::Stopped => {
            let ended = r
                .members
                .iter()
                .filter(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited))
                .count();
            let noun = if ended == 1 { "process" } else { "processes" };
            match freed_words(r) {
                Some(freed) => format!("stopped{anyway}{by} ({ended} {noun}, {freed})"),
                None => format!("stopped{anyway}{by} ({ended} {noun})"),
            }
        }
        ResourceResult::PartiallyStopped => match freed_words(r) {
            Some(freed) => format!("partially stopped{anyway}{by} ({freed}) — {}", r.reason),
            None => format!("partially stopped{anyway}{by} — {}", r.reason),
        },
        ResourceResult::NotStopped => format!("not stopped{by} — {}", r.reason),
        ResourceResult::Refused => format!("refused — {}", r.reason),
        ResourceResult::Failed => format!("failed — {}", r.reason),
        ResourceResult::WouldStop => format!("would be stopped — {}", r.reason),
    };
    words + &aside
}

/// Whether a stop with this result sent signals: only then was anything set aside.
pub(super) fn signalled(result: ResourceResult) -> bool {
    matches!(
        result,
        ResourceResult::Stopped | ResourceResult::PartiallyStopped
    )
}

/// "set aside: not_orphaned, busy": the reasons a stop anyway set aside, each once, in the
/// table's order; `None` for any other stop.
fn aside_words(r: &StopReport) -> Option<String> {
    let reasons: BTreeSet<Reason> = r.set_aside.iter().map(|s| s.reason).collect();
    let names: Vec<&str> = reasons.into_iter().map(Reason::as_str).collect();
    (!names.is_empty()).then(|| format!("set aside: {}", names.join(", ")))
}

/// "about 48.2 MB freed" when the report says what the stop freed: "about", since the figure
/// was read before the stop (`memory::freed`).
fn freed_words(r: &StopReport) -> Option<String> {
    r.freed
        .map(|m| format!("about {} freed", crate::words::byte_size(m.bytes)))
}

/// A stop's report, or why there is none (Pier failed inside the stop: whether signals were
/// sent is then unknown, and the line says so).
pub type StopOutcome = Result<StopReport, NoReport>;

pub(super) fn tone_of_outcome(r: &StopOutcome) -> Tone {
    match r {
        Ok(r) if r.record_error.is_some() => tone_of(r.result).max(Tone::Partial),
        Ok(r) => tone_of(r.result),
        Err(_) => Tone::Failed,
    }
}

fn outcome_words(r: &StopOutcome) -> String {
    match r {
        Ok(r) => match &r.record_error {
            Some(e) => format!("{} — the outcome could not be recorded: {e}", stop_words(r)),
            None => stop_words(r),
        },
        Err(why) => format!("outcome unknown — {why}"),
    }
}

/// The tone of a batch: all done is done; some done and some not is partial (something was
/// stopped, so neither "refused" nor "failed" would be true of the whole); none done is the
/// worst of the rest.
fn batch_tone(tones: &[Tone]) -> Tone {
    let done = tones.iter().filter(|&&t| t == Tone::Done).count();
    match done {
        _ if tones.is_empty() => Tone::Refused,
        d if d == tones.len() => Tone::Done,
        0 => tones.iter().copied().max().unwrap_or(Tone::Refused),
        _ => Tone::Partial,
    }
}

/// The tone of one card's resources in a batch, once they have all ended: what the menu marks
/// the card with while the rest of the batch runs.
pub fn card_tone(reports: &[&StopReport]) -> Tone {
    let tones: Vec<Tone> = reports
        .iter()
        .map(|r| tone_of_outcome(&Ok((*r).clone())))
        .collect();
    batch_tone(&tones)
}

/// The line for a stop of one project or of every safe one. `reports`: (project path, report),
/// in the order they ran.
pub fn stop_summary(key: ActionKey, reports: &[(String, StopOutcome)]) -> ActionReport {
    let tones: Vec<Tone> = reports.iter().map(|(_, r)| tone_of_outcome(r)).collect();
    let tone = batch_tone(&tones);
    let parts: Vec<String> = reports
        .iter()
        .map(|(project, r)| format!("{}: {}", project_name(project), outcome_words(r)))
        .collect();
    let summary = match (&key, parts.len()) {
        (_, 0) => "Nothing was safe to stop.".to_owned(),
        (ActionKey::AllSafe, _) => {
            let stopped = reports
                .iter()
                .filter(|(_, r)| matches!(r, Ok(r) if r.result == ResourceResult::Stopped))
                .count();
            format!(
                "Cleaned up {stopped} of {}: {}",
                reports.len(),
                parts.join("; ")
            )
        }
        _ => parts.join("; "),
    };
    ActionReport {
        key,
        tone,
        summary,
        restart: None,
    }
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
        restart: None,
    }
}

/// A result's notification text. An automatic stop's undo is a button where the platform
/// shows one (`button`); elsewhere the text names the command, since a notification is all a
/// person may see of a stop nobody clicked: "… · undo: pier restart SNAP".
pub fn notification_text(report: &ActionReport, button: bool) -> String {
    match &report.restart {
        Some(undo) if !button => {
            format!("{} · undo: pier restart {}", report.summary, undo.snapshot)
        }
        _ => report.summary.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::MemberReport;

    fn report(result: ResourceResult, reason: &str, outcomes: &[MemberOutcome]) -> StopReport {
        StopReport {
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
            ..StopReport::new("10-100", result, reason)
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
            &[("/w/shop".into(), Ok(r))],
        );
        assert_eq!(a.summary, "shop: stopped (2 processes)");
        assert_eq!(a.tone, Tone::Done);
    }

    #[test]
    fn a_stop_says_about_how_much_it_freed_when_it_knows() {
        use crate::model::memory::{Memory, MemoryKind};
        let freed = Some(Memory {
            bytes: 48_200_000,
            kind: MemoryKind::Proportional,
        });
        let mut r = report(ResourceResult::Stopped, "", &[MemberOutcome::Stopped]);
        r.freed = freed;
        let a = stop_summary(ActionKey::AllSafe, &[("/w/shop".into(), Ok(r))]);
        assert_eq!(
            a.summary,
            "Cleaned up 1 of 1: shop: stopped (1 process, about 48.2 MB freed)"
        );
        let mut r = report(ResourceResult::PartiallyStopped, "pid 11 runs", &[]);
        r.freed = freed;
        let a = stop_summary(ActionKey::AllSafe, &[("/w/shop".into(), Ok(r))]);
        assert_eq!(
            a.summary,
            "Cleaned up 0 of 1: shop: partially stopped (about 48.2 MB freed) — pid 11 runs"
        );
    }

    /// A stop whose signals ended nothing is never called partial, in words or in tone.
    #[test]
    fn a_stop_that_ended_nothing_says_not_stopped() {
        let why =
            "pid 11 (vite) still runs after SIGTERM; wait and look again, or stop it where it runs";
        let r = report(
            ResourceResult::NotStopped,
            why,
            &[MemberOutcome::StillRunning],
        );
        let a = stop_summary(ActionKey::AllSafe, &[("/w/shop".into(), Ok(r))]);
        assert_eq!(
            a.summary,
            format!("Cleaned up 0 of 1: shop: not stopped — {why}")
        );
        assert_eq!(a.tone, Tone::NotStopped);
    }

    /// A container's stop has no members: it is named, never "0 processes".
    #[test]
    fn a_stopped_container_is_named_not_counted_as_processes() {
        let mut r = report(ResourceResult::Stopped, "container web stopped", &[]);
        r.container = Some(crate::model::outcome::ContainerOutcome {
            container_id: "fe7a".into(),
            name: "web".into(),
            signal: "SIGTERM".into(),
            sent: Some(true),
            outcome: MemberOutcome::Stopped,
            detail: String::new(),
        });
        let a = stop_summary(
            ActionKey::Project("/w/shop".into()),
            &[("/w/shop".into(), Ok(r))],
        );
        assert_eq!(a.summary, "shop: stopped (container web)");
        assert_eq!(a.tone, Tone::Done);
    }

    /// A stop anyway says "anyway" and names each reason it set aside once; a refused one set
    /// nothing aside, whatever its record holds.
    #[test]
    fn a_stop_anyway_names_what_it_set_aside() {
        use crate::model::reason::SetAside;
        let aside = |reason, fact: &str| SetAside {
            reason,
            fact: fact.into(),
        };
        let mut r = report(ResourceResult::Stopped, "", &[MemberOutcome::Stopped]);
        r.set_aside = vec![
            aside(Reason::NotOrphaned, "its parent bash still runs"),
            aside(Reason::Busy, "12 % CPU"),
            aside(Reason::NotOrphaned, "its parent bash still runs"),
        ];
        let a = stop_summary(
            ActionKey::Project("/w/api".into()),
            &[("/w/api".into(), Ok(r.clone()))],
        );
        assert_eq!(
            a.summary,
            "api: stopped anyway (1 process), set aside: busy, not_orphaned"
        );
        assert_eq!(a.tone, Tone::Done);
        r.result = ResourceResult::Refused;
        r.reason = "busy was not among the reasons confirmed".into();
        let a = stop_summary(
            ActionKey::Project("/w/api".into()),
            &[("/w/api".into(), Ok(r))],
        );
        assert_eq!(
            a.summary,
            "api: refused — busy was not among the reasons confirmed"
        );
    }

    #[test]
    fn a_refusal_says_why_and_is_never_called_stopped() {
        let r = report(ResourceResult::Refused, "a client is connected", &[]);
        let a = stop_summary(
            ActionKey::Project("/w/api".into()),
            &[("/w/api".into(), Ok(r))],
        );
        assert_eq!(a.summary, "api: refused — a client is connected");
        assert_eq!(a.tone, Tone::Refused);
    }

    #[test]
    fn a_batch_counts_the_stopped_and_says_partial_when_some_were_stopped() {
        let ok = || report(ResourceResult::Stopped, "", &[MemberOutcome::Stopped]);
        let part = report(
            ResourceResult::PartiallyStopped,
            "pid 11 is still running",
            &[MemberOutcome::StillRunning],
        );
        let a = stop_summary(
            ActionKey::AllSafe,
            &[("/w/a".into(), Ok(ok())), ("/w/b".into(), Ok(part))],
        );
        assert_eq!(a.tone, Tone::Partial);
        assert_eq!(
            a.summary,
            "Cleaned up 1 of 2: a: stopped (1 process); b: partially stopped — pid 11 is still running"
        );
        // Stopped + refused, stopped + failed: something was stopped, so neither word fits.
        for other in [ResourceResult::Refused, ResourceResult::Failed] {
            let r = report(other, "no", &[]);
            let a = stop_summary(
                ActionKey::AllSafe,
                &[("/w/a".into(), Ok(ok())), ("/w/b".into(), Ok(r))],
            );
            assert_eq!(a.tone, Tone::Partial, "{other:?}");
        }
        // Nothing stopped: the worst of the rest.
        let a = stop_summary(
            ActionKey::AllSafe,
            &[
                ("/w/a".into(), Ok(report(ResourceResult::Refused, "x", &[]))),
                ("/w/b".into(), Ok(report(ResourceResult::Failed, "y", &[]))),
            ],
        );
        assert_eq!(a.tone, Tone::Failed);
    }

    #[test]
    fn an_outcome_that_could_not_be_recorded_is_never_plain_done() {
        let mut r = report(ResourceResult::Stopped, "", &[MemberOutcome::Stopped]);
        r.record_error = Some("disk full".into());
        let a = stop_summary(ActionKey::Project("/w/a".into()), &[("/w/a".into(), Ok(r))]);
        assert_eq!(a.tone, Tone::Partial);
        assert_eq!(
            a.summary,
            "a: stopped (1 process) — the outcome could not be recorded: disk full"
        );
    }

    #[test]
    fn a_stop_that_died_inside_says_the_outcome_is_unknown() {
        let a = stop_summary(
            ActionKey::Project("/w/a".into()),
            &[(
                "/w/a".into(),
                Err(crate::worker::Panicked("boom".into()).into()),
            )],
        );
        assert_eq!(a.tone, Tone::Failed);
        assert_eq!(
            a.summary,
            "a: outcome unknown — Pier hit an internal error (boom); see app.log"
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
            reason: "started as pid 9, but 127.0.0.1:8888 did not listen again within 10 s".into(),
            pid: Some(9),
            start_time: None,
            log: None,
            log_tail: Vec::new(),
            helper_ports: Vec::new(),
            program: None,
            folder: None,
            code_env: Vec::new(),
            exited: None,
        };
        let snapshot = "snap-1-1-1".parse().unwrap();
        let a = restart_summary(ActionKey::Snapshot(snapshot), "shop", &r);
        assert_eq!(a.tone, Tone::Partial);
        assert!(a
            .summary
            .starts_with("shop: restarted, not ready — started as pid 9"));
    }

    /// The command stands in for the button only where no button can be shown, and only for
    /// a result that has an undo.
    #[test]
    fn a_notification_names_the_undo_command_only_without_a_button() {
        let mut a = ActionReport {
            key: ActionKey::Project("/w/web".into()),
            tone: Tone::Done,
            summary: "web: stopped by your armed stop (1 process)".into(),
            restart: None,
        };
        assert_eq!(notification_text(&a, false), a.summary);
        a.restart = Some(super::super::Undo {
            snapshot: "snap-10-100-1700000000".parse().unwrap(),
            label: "web · vite".into(),
        });
        assert_eq!(notification_text(&a, true), a.summary);
        assert_eq!(
            notification_text(&a, false),
            "web: stopped by your armed stop (1 process) · undo: pier restart snap-10-100-1700000000"
        );
    }
}
