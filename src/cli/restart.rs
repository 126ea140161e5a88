//! `pier history` and `pier restart SNAPSHOT`.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::{print, EXIT_FAILED, EXIT_NOT_ALL_STOPPED};
use pier_core::front::{numbers, System};
use pier_core::model::history::{HistoryEntry, RestartReport, RestartResult};
use pier_core::restart;
use pier_core::words::{self, for_terminal};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Print one JSON document (schema 1, see docs/history-json.md) instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RestartArgs {
    /// A snapshot as `pier history` names it (`snap-…`, a container's `ctr-…`), or a resource
    /// id or a container card's id (its newest snapshot).
    pub(super) snapshot: String,
    /// Print one JSON document (schema 1, see docs/restart-json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds to wait for the server's recorded ports to listen again (0 to 3600; a helper's
    /// are not waited for).
    #[arg(long, value_name = "SECS", default_value = "15", value_parser = numbers::restart_wait)]
    wait: Duration,
}

#[derive(Serialize)]
struct HistoryDocument<'a> {
    schema: u32,
    snapshots: &'a [HistoryEntry],
    /// Records that could not be read; they were kept as they are.
    unreadable: &'a [String],
}

/// `pier restart --json`: the report, with the document's schema version beside its fields.
#[derive(Serialize)]
struct RestartDocument<'a> {
    schema: u32,
    #[serde(flatten)]
    report: &'a RestartReport,
}

/// Runs `pier history`.
pub fn history(args: HistoryArgs) -> ExitCode {
    let system = match System::open_for_reading() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let (entries, unreadable) = match restart::history(system.probe.as_ref(), &system.store) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("pier: {}", for_terminal(&e.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if args.json {
        let doc = HistoryDocument {
            schema: 1,
            snapshots: &entries,
            unreadable: &unreadable,
        };
        let mut text = serde_json::to_vec_pretty(&doc).expect("history serialises");
        text.push(b'\n');
        return print(&text);
    }
    print(history_text(&entries, &unreadable).as_bytes())
}

/// `pier history` for a person. A stop that sent no signal reads "not stopped: refused
/// because …": it stopped nothing, so it is never worded as a stop, nor offered for restart.
/// Folders, commands and reasons are shown through [`for_terminal`].
fn history_text(entries: &[HistoryEntry], unreadable: &[String]) -> String {
    let mut out = String::new();
    if entries.is_empty() && unreadable.is_empty() {
        out.push_str("No snapshots yet.\n");
    }
    for e in entries {
        // A container's stop has no command: its engine starts it again; its kind names it.
        let command = match (&e.kind, e.root_command.is_empty()) {
            (Some(kind), true) => kind.clone(),
            _ => words::command_of_strings(&e.root_command),
        };
        let command = for_terminal(&command);
        let (snapshot, project) = (for_terminal(&e.snapshot), for_terminal(&e.project));
        let server: Vec<&str> = e.server_ports().map(String::as_str).collect();
        let ports = if server.is_empty() {
            "none".into()
        } else {
            server.join(", ")
        };
        if e.sent_nothing() {
            let reason = e.reason.as_deref().unwrap_or("no reason was recorded");
            // The stop's own reason may already say it.
            let sent = if reason.starts_with("no signal was sent") {
                ""
            } else {
                "; no signal was sent"
            };
            let _ = writeln!(
                out,
                "{snapshot}  {project}  not stopped: {} because {} (tried {}{sent})",
                e.result.as_deref().unwrap_or("refused"),
                for_terminal(reason),
                for_terminal(&e.stopped_at),
            );
            let _ = writeln!(out, "    {command}");
            continue;
        }
        let _ = match e.result.as_deref() {
            Some(result) => writeln!(
                out,
                "{snapshot}  {project}  stopped {}  {result}  ports {ports}",
                for_terminal(&e.stopped_at)
            ),
            None => writeln!(
                out,
                "{snapshot}  {project}  stop began {}, never finished  ports {ports}",
                for_terminal(&e.stopped_at)
            ),
        };
        if !e.helper_ports.is_empty() {
            let _ = writeln!(out, "    a helper's ports: {}", e.helper_ports.join(", "));
        }
        let _ = writeln!(out, "    {command}");
        reconciled_lines(&mut out, e);
        let _ = match &e.why_not {
            None => writeln!(out, "    can be restarted"),
            Some(why) => writeln!(out, "    cannot be restarted: {}", for_terminal(why)),
        };
    }
    for u in unreadable {
        let _ = writeln!(out, "unreadable: {}", for_terminal(u));
    }
    out
}

/// What a read did with an unfinished stop (docs/design.md §3.10): its reason, and whether
/// the reconciled view could be written.
fn reconciled_lines(out: &mut String, e: &HistoryEntry) {
    if let (Some(at), Some(reason)) = (&e.reconciled_at, &e.reason) {
        let _ = writeln!(
            out,
            "    reconciled {}: {}",
            for_terminal(at),
            for_terminal(reason)
        );
    }
    if let Some(why) = &e.not_written {
        let _ = writeln!(
            out,
            "    (shown, not written: {}; the next pier history that can write it will)",
            for_terminal(why)
        );
    }
}

/// Runs `pier restart`: the snapshot named, restarted (or refused), the report printed.
pub fn restart(args: RestartArgs) -> ExitCode {
    if let Err(code) = super::check_snapshot_or_id(&args.snapshot) {
        return code;
    }
    let system = match System::open() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let probe = system.probe.as_ref();
    let report = if super::is_container_name(&args.snapshot) {
        // A container's stop record: the same container started again through its engine.
        match restart::container::find(&system.store, &args.snapshot) {
            Ok((name, _)) => restart::container::restart(
                probe,
                &system.store,
                &pier_core::containers::control::LiveEngines,
                &name,
                args.wait,
            ),
            Err(why) => RestartReport::not_started(&args.snapshot, RestartResult::Refused, why),
        }
    } else {
        match restart::find(&system.store, &args.snapshot) {
            Ok((name, _)) => restart::restart(probe, &system.store, &name, args.wait),
            Err(why) => RestartReport::not_started(&args.snapshot, RestartResult::Refused, why),
        }
    };
    let written = if args.json {
        let doc = RestartDocument {
            schema: 1,
            report: &report,
        };
        let mut text = serde_json::to_vec_pretty(&doc).expect("reports serialise");
        text.push(b'\n');
        print(&text)
    } else {
        print(restart_text(&report).as_bytes())
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    match report.result {
        RestartResult::Ready => ExitCode::SUCCESS,
        RestartResult::Failed => ExitCode::from(EXIT_FAILED),
        RestartResult::NotReady | RestartResult::Refused => ExitCode::from(EXIT_NOT_ALL_STOPPED),
    }
}

/// `pier restart` for a person: the result and its reason, the helper ports not waited for,
/// the log, and its last lines when the server did not get ready. The reason, the log's path
/// and every line of the server's own output are shown through [`for_terminal`].
fn restart_text(report: &RestartReport) -> String {
    let result = serde_json::to_value(report.result).expect("a result serialises");
    let result = result.as_str().unwrap_or_default().to_uppercase();
    let mut out = format!(
        "{}  {result}  {}\n",
        for_terminal(&report.snapshot),
        for_terminal(&report.reason)
    );
    if !report.helper_ports.is_empty() {
        let _ = writeln!(
            out,
            "    not waited for (a helper's ports): {}",
            report.helper_ports.join(", ")
        );
    }
    if let Some(log) = &report.log {
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

    fn entry(result: &str, signalled: Option<bool>, reason: &str) -> HistoryEntry {
        HistoryEntry {
            snapshot: "snap-100-1000-1".into(),
            id: "100-1000".into(),
            kind: Some("vite".into()),
            project: "/home/u/app".into(),
            root_command: vec!["node".into(), "vite".into(), String::new(), String::new()],
            helper_ports: Vec::new(),
            ports: vec!["127.0.0.1:5173".into()],
            stopped_at: "2026-12-01T12:00:00Z".into(),
            result: Some(result.into()).filter(|r: &String| !r.is_empty()),
            signalled,
            reason: Some(reason.into()),
            reconciled_at: None,
            not_written: None,
            restartable: false,
            why_not: Some("nothing was stopped, so there is nothing to restart".into()),
        }
    }

    /// Found by trying real tools: a stop refused at its activity check (no signal sent) was
    /// listed as "stopped … refused … cannot be restarted".
    #[test]
    fn a_stop_that_sent_no_signal_is_never_worded_as_a_stop() {
        let busy = "busy over 500 ms: 15.8% CPU (more than 5%), 0 B/s disk I/O";
        let text = history_text(&[entry("refused", Some(false), busy)], &[]);
        assert_eq!(
            text,
            format!(
                "snap-100-1000-1  /home/u/app  not stopped: refused because {busy} (tried \
                 2026-12-01T12:00:00Z; no signal was sent)\n    node vite\n"
            )
        );
        assert!(
            !text.replace("not stopped", "").contains("stopped"),
            "{text}"
        );
        assert!(!text.contains("restart"), "nothing to restart is not news");
        let own = "no signal was sent: every member was gone or had changed";
        let text = history_text(&[entry("refused", Some(false), own)], &[]);
        assert_eq!(
            text.matches("no signal was sent").count(),
            1,
            "said once: {text}"
        );
    }

    #[test]
    fn a_stop_that_signalled_reads_as_a_stop_with_its_restart_answer() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.restartable = true;
        e.why_not = None;
        let text = history_text(&[e], &[]);
        assert_eq!(
            text,
            "snap-100-1000-1  /home/u/app  stopped 2026-12-01T12:00:00Z  stopped  ports \
             127.0.0.1:5173\n    node vite\n    can be restarted\n"
        );
    }

    #[test]
    fn a_folder_and_a_command_holding_controls_are_shown_escaped_on_their_lines() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.project = "/home/u/\u{1b}[2J\u{1b}]0;pwned\u{7}\nx".into();
        e.root_command = vec!["node".into(), "vite\u{9b}31m".into()];
        let text = history_text(&[e], &[]);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{text:?}");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.starts_with("snap-100-1000-1  /home/u/\\e[2J\\e]0;pwned\\x07\\nx  stopped "),
            "{text}"
        );
        assert!(text.contains("\n    node vite\\u{9b}31m\n"), "{text}");
    }

    /// The log tail is the server's own output: anything at all.
    #[test]
    fn a_restart_shows_the_logs_last_lines_escaped() {
        let mut report =
            RestartReport::not_started("snap-1-1-1", RestartResult::NotReady, "x".into());
        report.log_tail = vec!["\u{1b}[31merror\u{1b}[0m\r".into()];
        assert_eq!(
            restart_text(&report),
            "snap-1-1-1  NOT_READY  x\n    | \\e[31merror\\e[0m\\r\n"
        );
    }

    #[test]
    fn an_unfinished_stop_says_it_never_finished() {
        let mut e = entry("", None, "");
        e.reason = None;
        e.why_not = Some("the stop never finished recording its outcome".into());
        let text = history_text(&[e], &["snap-1-1-1: kept as it is".into()]);
        assert!(
            text.starts_with(
                "snap-100-1000-1  /home/u/app  stop began 2026-12-01T12:00:00Z, never finished"
            ),
            "{text}"
        );
        assert!(text.ends_with("unreadable: snap-1-1-1: kept as it is\n"));
    }
}
