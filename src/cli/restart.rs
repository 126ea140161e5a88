//! `pier restart SNAPSHOT` and `pier restart --last`: start stopped services again from their
//! snapshots, exactly as they were recorded.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::render::Style;
use super::{colour_wanted, print, EXIT_FAILED, EXIT_NOT_ALL_STOPPED};
use pier_core::front::{numbers, System};
use pier_core::model::history::{HistoryEntry, RestartReport, RestartResult};
use pier_core::model::SCHEMA_VERSION;
use pier_core::restart;
use pier_core::words::{self, for_terminal};

#[derive(Debug, Args)]
pub struct RestartArgs {
    /// A snapshot as `pier history` names it (`snap-…`, a container's `ctr-…`), or a resource
    /// id or a container card's id (its newest snapshot).
    #[arg(required_unless_present = "last", conflicts_with = "last")]
    pub(super) snapshot: Option<String>,
    /// Start again everything the last cleanup you asked for stopped (one `pier stop`, one
    /// click), each from its own snapshot; a rule's or an armed stop's is named, not restarted.
    #[arg(long)]
    last: bool,
    /// Print one JSON document (schema 1, see docs/restart-json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds to wait for the server's recorded ports to listen again (0 to 3600; a helper's
    /// are not waited for).
    #[arg(long, value_name = "SECS", default_value = "15", value_parser = numbers::restart_wait)]
    wait: Duration,
    /// Say every detail: a helper's ports not waited for, and the log of a restart that got
    /// ready.
    #[arg(short, long)]
    verbose: bool,
}

/// `pier restart --json`: the report, with the document's schema version beside its fields.
#[derive(Serialize)]
struct RestartDocument<'a> {
    schema: u32,
    #[serde(flatten)]
    report: &'a RestartReport,
}

/// `pier restart --last --json`: one report per snapshot of the last cleanup.
#[derive(Serialize)]
struct LastDocument<'a> {
    schema: u32,
    restarts: &'a [RestartReport],
    /// A newer automatic stop, not part of --last; `null` when there is none.
    left_out: Option<LeftOut<'a>>,
}

/// Runs `pier restart`: the snapshot named (or the last cleanup's), restarted (or refused),
/// the report printed.
pub fn restart(args: RestartArgs) -> ExitCode {
    let snapshot = args.snapshot.clone().unwrap_or_default();
    if !args.last {
        if let Err(code) = super::check_snapshot_or_id(&snapshot) {
            return code;
        }
    }
    let system = match super::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    if args.last {
        return restart_last(&system, &args);
    }
    let report = system.restart(&snapshot, args.wait);
    let written = if args.json {
        let doc = RestartDocument {
            schema: SCHEMA_VERSION,
            report: &report,
        };
        super::print_json(&doc)
    } else {
        let style = Style {
            colour: colour_wanted(),
        };
        print(restart_text(&report, &style, args.verbose).as_bytes())
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    exit_code(std::slice::from_ref(&report))
}

/// `pier restart --last`: every snapshot of the newest cleanup a person asked for that
/// stopped something, each restarted in turn (each asks every rule again); then the newest
/// automatic stop, when it is newer, named with its own command: not part of --last.
fn restart_last(system: &System, args: &RestartArgs) -> ExitCode {
    let entries = match restart::history(system.probe.as_ref(), &system.store) {
        Ok((entries, _)) => entries,
        Err(e) => {
            eprintln!("pier: {}", for_terminal(&e.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let last = last_cleanup(&entries);
    if last.cleanup.is_empty() {
        let automatic = last
            .left_out
            .map_or(String::new(), |e| format!("; {}", left_out_text(e)));
        eprintln!(
            "pier: nothing to restart: no stop you asked for stopped anything (`pier \
             history`){automatic}"
        );
        return ExitCode::from(EXIT_NOT_ALL_STOPPED);
    }
    let reports: Vec<RestartReport> = last
        .cleanup
        .iter()
        .map(|e| system.restart(&e.snapshot, args.wait))
        .collect();
    let written = if args.json {
        let doc = LastDocument {
            schema: SCHEMA_VERSION,
            restarts: &reports,
            left_out: last.left_out.map(LeftOut::of),
        };
        super::print_json(&doc)
    } else {
        let style = Style {
            colour: colour_wanted(),
        };
        let mut text: String = reports
            .iter()
            .map(|r| restart_text(r, &style, args.verbose))
            .collect();
        if let Some(e) = last.left_out {
            let _ = writeln!(text, "{}", left_out_text(e));
        }
        print(text.as_bytes())
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    exit_code(&reports)
}

/// What `--last` restarts, and the automatic stop it leaves out.
pub(super) struct Last<'e> {
    /// The last cleanup a person asked for, oldest first.
    pub(super) cleanup: Vec<&'e HistoryEntry>,
    /// The newest automatic stop that sent a signal, when it is newer than that cleanup (or
    /// there is none).
    pub(super) left_out: Option<&'e HistoryEntry>,
}

/// The last cleanup a person asked for: the newest record of a person's stop that sent a
/// signal, and every other record of its cleanup (its `batch`); oldest first, the order they
/// were stopped in. A record from before cleanups were named is a cleanup of its own. Why a
/// person's: `--last` undoes what you just did, and a rule's stop at 3 a.m. is not that
/// (docs/design.md §5a); it is named instead, with its own command.
pub(super) fn last_cleanup(entries: &[HistoryEntry]) -> Last<'_> {
    let stopped = |e: &&HistoryEntry| !e.sent_nothing();
    let asked = |e: &&HistoryEntry| stopped(e) && !e.requested_by.is_automatic();
    // Newest first: whichever comes first is newer.
    let newest = entries.iter().position(|e| asked(&e));
    let automatic = entries
        .iter()
        .position(|e| stopped(&e) && e.requested_by.is_automatic());
    let left_out = match (automatic, newest) {
        (Some(a), Some(p)) if a > p => None,
        (a, _) => a.map(|a| &entries[a]),
    };
    let Some(newest) = newest.map(|p| &entries[p]) else {
        return Last {
            cleanup: Vec::new(),
            left_out,
        };
    };
    let mut cleanup: Vec<&HistoryEntry> = match &newest.batch {
        None => vec![newest],
        Some(batch) => entries
            .iter()
            .filter(|e| e.batch.as_ref() == Some(batch) && asked(e))
            .collect(),
    };
    cleanup.reverse();
    Last { cleanup, left_out }
}

/// "the automatic stop of vite in /w/web at 2026-12-01T14:02:00Z (by your rule 'idle 30
/// min': idle 42 min) is not part of --last: `pier restart snap-…`", escaped.
fn left_out_text(e: &HistoryEntry) -> String {
    let by = words::asked_by(&e.requested_by).unwrap_or_default();
    let snapshot = for_terminal(&e.snapshot);
    format!(
        "the automatic stop of {} at {} ({by}) is not part of --last: `pier restart {snapshot}`",
        super::history::what_where(e),
        for_terminal(&e.stopped_at),
    )
}

/// The automatic stop `--last` left out, in its JSON document.
#[derive(Serialize)]
struct LeftOut<'e> {
    snapshot: &'e str,
    kind: Option<&'e str>,
    project: &'e str,
    stopped_at: &'e str,
    requested_by: &'e pier_core::model::RequestedBy,
}

impl<'e> LeftOut<'e> {
    fn of(e: &'e HistoryEntry) -> Self {
        Self {
            snapshot: &e.snapshot,
            kind: e.kind.as_deref(),
            project: &e.project,
            stopped_at: &e.stopped_at,
            requested_by: &e.requested_by,
        }
    }
}

/// 0 when every restart is ready; 1 when Pier could not start one; else 3.
fn exit_code(reports: &[RestartReport]) -> ExitCode {
    if reports.iter().all(|r| r.result == RestartResult::Ready) {
        ExitCode::SUCCESS
    } else if reports.iter().any(|r| r.result == RestartResult::Failed) {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::from(EXIT_NOT_ALL_STOPPED)
    }
}

/// `pier restart` for a person: the result and its reason, what it runs (the program, the
/// folder, the environment entries that change what code runs: always, §4), and, when the
/// server did not get ready, the log and its last lines. With `verbose`, the helper ports not
/// waited for and the log of a ready one too. The reason, the log's path and every line of the
/// server's own output are shown through [`for_terminal`].
fn restart_text(report: &RestartReport, style: &Style, verbose: bool) -> String {
    let result = serde_json::to_value(report.result).expect("a result serialises");
    let result = style.result_word(result.as_str().unwrap_or_default());
    let mut out = format!(
        "{}  {result}  {}\n",
        for_terminal(&report.snapshot),
        for_terminal(&report.reason)
    );
    super::history::replay_lines(
        &mut out,
        report.program.as_deref(),
        report.folder.as_deref(),
        &report.code_env,
    );
    if verbose && !report.helper_ports.is_empty() {
        let _ = writeln!(
            out,
            "    not waited for (a helper's ports): {}",
            report.helper_ports.join(", ")
        );
    }
    let ready = report.result == RestartResult::Ready;
    if let Some(log) = report.log.as_ref().filter(|_| verbose || !ready) {
        let _ = writeln!(out, "    log {}", for_terminal(log));
    }
    for line in &report.log_tail {
        let _ = writeln!(out, "    | {}", for_terminal(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::RequestedBy;

    fn entry(snapshot: &str, batch: Option<&str>, signalled: Option<bool>) -> HistoryEntry {
        HistoryEntry {
            restarts: Vec::new(),
            batch: batch.map(Into::into),
            requested_by: Default::default(),
            set_aside: Vec::new(),
            snapshot: snapshot.into(),
            id: "100-1000".into(),
            kind: Some("vite".into()),
            project: "/home/u/app".into(),
            root_command: vec!["vite".into()],
            helper_ports: Vec::new(),
            ports: Vec::new(),
            stopped_at: "2026-12-01T12:00:00Z".into(),
            result: Some("stopped".into()),
            signalled,
            reason: None,
            reconciled_at: None,
            not_written: None,
            restartable: true,
            why_not: None,
            program: None,
            folder: None,
            code_env: Vec::new(),
        }
    }

    fn names(last: &Last) -> Vec<String> {
        last.cleanup.iter().map(|e| e.snapshot.clone()).collect()
    }

    /// The history is newest first; the last cleanup is the newest one that stopped
    /// something, all of it, in the order it was stopped.
    #[test]
    fn the_last_cleanup_is_every_snapshot_of_the_newest_stop_that_signalled() {
        let entries = [
            entry("snap-4", Some("b3"), Some(false)),
            entry("snap-3", Some("b2"), Some(true)),
            entry("snap-2", Some("b2"), Some(true)),
            entry("snap-1", Some("b1"), Some(true)),
        ];
        let last = last_cleanup(&entries);
        assert_eq!(names(&last), ["snap-2", "snap-3"]);
        assert!(last.left_out.is_none());
        let old = [
            entry("snap-2", None, Some(true)),
            entry("snap-1", None, Some(true)),
        ];
        assert_eq!(
            last_cleanup(&old).cleanup.len(),
            1,
            "unnamed: a cleanup of its own"
        );
        assert!(last_cleanup(&[entry("snap-1", None, Some(false))])
            .cleanup
            .is_empty());
    }

    /// Issue 43: `--last` is the last stop a person asked for; a newer automatic one is named,
    /// an older one is not.
    #[test]
    fn the_last_cleanup_skips_automatic_stops_and_names_the_newest_when_newer() {
        let rule = RequestedBy::Rule {
            name: "idle 30 min".into(),
            because: Some("idle 42 min".into()),
        };
        let auto = |name, batch, who: &RequestedBy| HistoryEntry {
            requested_by: who.clone(),
            ..entry(name, Some(batch), Some(true))
        };
        let entries = [
            auto("snap-5", "b5", &rule),
            auto("snap-4", "b4", &RequestedBy::Armed),
            entry("snap-3", Some("b3"), Some(true)),
            auto("snap-2", "b3", &rule),
            entry("snap-1", Some("b1"), Some(true)),
        ];
        let last = last_cleanup(&entries);
        assert_eq!(
            names(&last),
            ["snap-3"],
            "the person's, never the rule's in its batch"
        );
        assert_eq!(last.left_out.unwrap().snapshot, "snap-5");
        assert_eq!(
            left_out_text(last.left_out.unwrap()),
            "the automatic stop of vite in /home/u/app at 2026-12-01T12:00:00Z (by your rule \
             'idle 30 min': idle 42 min) is not part of --last: `pier restart snap-5`"
        );
        let older = [
            entry("snap-2", None, Some(true)),
            auto("snap-1", "b1", &rule),
        ];
        assert!(last_cleanup(&older).left_out.is_none(), "older than --last");
        let only = [
            auto("snap-2", "b2", &RequestedBy::Armed),
            auto("snap-1", "b1", &rule),
        ];
        let last = last_cleanup(&only);
        assert!(last.cleanup.is_empty());
        assert_eq!(last.left_out.unwrap().snapshot, "snap-2");
        let agent = RequestedBy::Agent { client: "x".into() };
        assert_eq!(
            names(&last_cleanup(&[auto("snap-1", "b1", &agent)])),
            ["snap-1"]
        );
    }

    /// Issue 37: a restart says what it runs, whatever its answer.
    #[test]
    fn a_restart_names_its_program_folder_and_the_entries_that_change_what_code_runs() {
        let mut report = RestartReport::not_started(
            "snap-1-1-1",
            RestartResult::Refused,
            "the folder /tmp/app belongs to uid 1001, not to you: a restart runs only what you \
             control"
                .into(),
        );
        report.program = Some("/usr/bin/node".into());
        report.folder = Some("/tmp/app\u{7}".into());
        report.code_env = vec!["LD_PRELOAD=/tmp/x.so".into()];
        assert_eq!(
            restart_text(&report, &Style { colour: false }, false),
            "snap-1-1-1  REFUSED  the folder /tmp/app belongs to uid 1001, not to you: a restart \
             runs only what you control\n    runs /usr/bin/node in /tmp/app\\x07\n    with \
             LD_PRELOAD=/tmp/x.so (changes what code runs)\n"
        );
    }

    /// The log tail is the server's own output: anything at all.
    #[test]
    fn a_restart_shows_the_logs_last_lines_escaped() {
        let mut report =
            RestartReport::not_started("snap-1-1-1", RestartResult::NotReady, "x".into());
        report.log_tail = vec!["\u{1b}[31merror\u{1b}[0m\r".into()];
        assert_eq!(
            restart_text(&report, &Style { colour: false }, false),
            "snap-1-1-1  NOT READY  x\n    | \\e[31merror\\e[0m\\r\n"
        );
    }
}
