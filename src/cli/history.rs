//! `pier history`: every snapshot, newest first, with what its stop did, its restarts and
//! whether it can be restarted now; `--prune` removes what cannot. Records whose stop can never
//! be restarted expire on their own after a week (`pier_core::restart::prune`). An agent's
//! requests that no snapshot shows — a refusal before the chain, a decline — follow, one line
//! each, and expire after the same week (`pier_core::agent::journal`).

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::Args;
use serde::Serialize;

use super::render::Style;
use super::{colour_wanted, print, EXIT_FAILED};
use pier_core::agent::journal;
use pier_core::model::agent::{AgentAction, AgentLine};
use pier_core::model::history::{HistoryEntry, HistoryRestart};
use pier_core::model::SCHEMA_VERSION;
use pier_core::restart::{self, prune};
use pier_core::words::{self, for_terminal};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Print one JSON document (schema 1, see docs/history-json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Remove every record that cannot be restarted now (never a damaged, unfinished or
    /// locked one); what can still be restarted is kept unless --all is given.
    #[arg(long)]
    prune: bool,
    /// With --prune: remove the records that can still be restarted too.
    #[arg(long, requires = "prune")]
    all: bool,
}

#[derive(Serialize)]
struct HistoryDocument<'a> {
    schema: u32,
    /// Newest first.
    snapshots: &'a [HistoryEntry],
    /// Records that could not be read; they were kept as they are.
    unreadable: &'a [String],
    /// Records removed by this read: their stop could never be restarted, and they were older
    /// than a week.
    expired: &'a [String],
    /// An agent's requests that no snapshot shows, newest first.
    agent_requests: &'a [AgentLine],
}

/// The `pier history --prune --json` document.
#[derive(Serialize)]
struct PruneDocument<'a> {
    schema: u32,
    removed: &'a [String],
    /// Removed by expiry in the same read, before the prune.
    expired: &'a [String],
    kept: Vec<Kept<'a>>,
    /// Lock files nobody held, removed.
    locks_removed: usize,
    /// Entries of `locks/` that are not lock files of the user's, left as they are.
    locks_left: usize,
}

#[derive(Serialize)]
struct Kept<'a> {
    snapshot: &'a str,
    why: &'a str,
}

/// Runs `pier history`.
pub fn history(args: HistoryArgs) -> ExitCode {
    let system = match super::open_system_for_reading() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let (mut entries, mut unreadable) = match restart::history(system.probe.as_ref(), &system.store)
    {
        Ok(found) => found,
        Err(e) => {
            eprintln!("pier: {}", for_terminal(&e.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    };
    // Expiry first: a read-only folder keeps them, to expire at a later read.
    let now = SystemTime::now();
    let mut expired = prune::prune(
        &system.store,
        &*system.probe,
        &entries,
        prune::Prune::Expired(now),
    )
    .removed;
    entries.retain(|e| !expired.contains(&e.snapshot));
    expired.extend(journal::expire(&system.store, now));
    let agent = agent_requests(&system.store, &mut unreadable);
    if args.prune {
        let what = match args.all {
            true => prune::Prune::All,
            false => prune::Prune::Unrestartable,
        };
        let pruned = prune::prune(&system.store, &*system.probe, &entries, what);
        return print_pruned(&pruned, &expired, &entries, (args.json, args.all));
    }
    if args.json {
        let doc = HistoryDocument {
            schema: SCHEMA_VERSION,
            snapshots: &entries,
            unreadable: &unreadable,
            expired: &expired,
            agent_requests: &agent,
        };
        return super::print_json(&doc);
    }
    let style = Style {
        colour: colour_wanted(),
    };
    let mut text = history_text(&entries, &unreadable, &style);
    text.push_str(&agent_text(&agent, &style));
    if !expired.is_empty() {
        let _ = writeln!(
            text,
            "expired: {} record(s) whose stop can never be restarted, older than a week, were \
             removed (their environments held secrets)",
            expired.len()
        );
    }
    print(text.as_bytes())
}

/// An agent's requests that no snapshot shows; a record that cannot be read joins
/// `unreadable`.
fn agent_requests(store: &pier_core::store::Store, unreadable: &mut Vec<String>) -> Vec<AgentLine> {
    match journal::unshown(store) {
        Ok((lines, damaged)) => {
            unreadable.extend(damaged);
            lines
        }
        Err(e) => {
            unreadable.push(e.to_string());
            Vec::new()
        }
    }
}

/// What `--prune` removed and kept, as text or JSON.
/// (`expired`: what this read let expire before the prune.)
fn print_pruned(
    p: &prune::Pruned,
    expired: &[String],
    entries: &[HistoryEntry],
    (json, all): (bool, bool),
) -> ExitCode {
    if json {
        let doc = PruneDocument {
            schema: SCHEMA_VERSION,
            removed: &p.removed,
            expired,
            kept: p
                .kept
                .iter()
                .map(|(snapshot, why)| Kept { snapshot, why })
                .collect(),
            locks_removed: p.locks,
            locks_left: p.locks_left,
        };
        return super::print_json(&doc);
    }
    let mut out = String::new();
    let label = |name: &str| {
        entries
            .iter()
            .find(|e| e.snapshot == name)
            .map_or(String::new(), |e| format!(" ({})", what_where(e)))
    };
    for name in &p.removed {
        let _ = writeln!(out, "removed {}{}", for_terminal(name), label(name));
    }
    for name in expired {
        let _ = writeln!(
            out,
            "expired {}: its stop can never be restarted, and it was older than a week",
            for_terminal(name)
        );
    }
    for (name, why) in &p.kept {
        let _ = writeln!(out, "kept {}: {}", for_terminal(name), for_terminal(why));
    }
    let _ = write!(
        out,
        "{} removed, {} kept",
        p.removed.len() + expired.len(),
        p.kept.len()
    );
    let stay = entries.iter().filter(|e| e.restartable).count();
    if !all && stay > 0 {
        let _ = write!(
            out,
            "; {stay} can still be restarted and stay (--all removes them too)"
        );
    }
    out.push_str(&locks_text(p));
    out.push('\n');
    print(out.as_bytes())
}

/// The prune's lock files, after its count of records: how many it removed, and how many
/// entries of the `locks` folder it left because they are not lock files of the user's.
fn locks_text(p: &prune::Pruned) -> String {
    let mut out = String::new();
    if p.locks > 0 {
        let _ = write!(out, "; {} unused lock file(s) removed", p.locks);
    }
    if p.locks_left > 0 {
        let _ = write!(
            out,
            "; {} entr(ies) in the locks folder left as they are (not lock files of yours)",
            p.locks_left
        );
    }
    out
}

/// "vite in /home/u/app", escaped.
pub(super) fn what_where(e: &HistoryEntry) -> String {
    let kind = e.kind.as_deref().unwrap_or("a resource");
    format!("{} in {}", for_terminal(kind), for_terminal(&e.project))
}

/// One restart made from a snapshot: ready, not ready in time, or how it exited before
/// listening — with the last lines of its output, or that its log is empty. Why: a crash read
/// as "not ready in time", and the log it named was empty (issue 41).
fn restart_lines(out: &mut String, r: &HistoryRestart) {
    let who = r.pid.map_or(String::new(), |pid| format!(" as pid {pid}"));
    let how = match (&r.exited, r.ready) {
        (_, true) => "ready".to_owned(),
        (Some(exited), false) => words::exited_before_listening(exited),
        (None, false) => "not ready in time".to_owned(),
    };
    let _ = writeln!(out, "    restarted {}{who}: {how}", for_terminal(&r.at));
    let Some(exited) = r.exited.as_ref().filter(|_| !r.ready) else {
        return;
    };
    if exited.log_tail.is_empty() {
        let _ = writeln!(out, "      {}", words::EMPTY_LOG);
    }
    for line in exited.log_tail.lines() {
        let _ = writeln!(out, "      | {}", for_terminal(line));
    }
}

/// `pier history` for a person, newest first: when, what became of it, what and where, its
/// command, its restarts, and whether it can be restarted. A stop that sent no signal reads
/// "NOT STOPPED … because …": it stopped nothing, so it is never worded as a stop, nor offered
/// for restart. Folders, commands and reasons are shown through [`for_terminal`].
pub(super) fn history_text(
    entries: &[HistoryEntry],
    unreadable: &[String],
    style: &Style,
) -> String {
    let mut out = String::new();
    if entries.is_empty() && unreadable.is_empty() {
        out.push_str("No snapshots.\n");
    }
    for e in entries {
        entry_text(&mut out, e, style);
    }
    for u in unreadable {
        let _ = writeln!(out, "unreadable: {}", for_terminal(u));
    }
    out
}

/// One record's lines: a stop that sent no signal in two ([`not_stopped_text`]), else its
/// header, command, what a restart replays, its reconciliation, its restarts and its answer.
fn entry_text(out: &mut String, e: &HistoryEntry, style: &Style) {
    // A container's stop has no command: its engine starts it again; its kind names it.
    let command = match (&e.kind, e.root_command.is_empty()) {
        (Some(kind), true) => kind.clone(),
        _ => words::command_of_strings(&e.root_command),
    };
    let command = for_terminal(&command);
    if e.sent_nothing() {
        return not_stopped_text(out, e, &command, style);
    }
    let (snapshot, at) = (for_terminal(&e.snapshot), for_terminal(&e.stopped_at));
    let server: Vec<&str> = e.server_ports().map(String::as_str).collect();
    let ports = match server.is_empty() {
        true => "no ports".to_owned(),
        false => format!("ports {}", server.join(", ")),
    };
    let result = match e.result.as_deref() {
        Some(result) => style.result_word(result),
        None => style.warn("NEVER FINISHED"),
    };
    let by = words::asked_by(&e.requested_by).map_or(String::new(), |by| format!("  {by}"));
    let _ = writeln!(out, "{at}  {result}  {}  {ports}{by}", what_where(e));
    if !e.helper_ports.is_empty() {
        let _ = writeln!(out, "    a helper's ports: {}", e.helper_ports.join(", "));
    }
    let _ = writeln!(out, "    {command}");
    replay_lines(out, e.program.as_deref(), e.folder.as_deref(), &e.code_env);
    reconciled_lines(out, e);
    for r in &e.restarts {
        restart_lines(out, r);
    }
    let _ = match &e.why_not {
        None => writeln!(
            out,
            "    snapshot {snapshot}: {} (`pier restart {snapshot}`)",
            style.paint("can be restarted", "32")
        ),
        Some(why) => writeln!(
            out,
            "    snapshot {snapshot}: cannot be restarted: {}",
            for_terminal(why)
        ),
    };
}

/// An agent's requests that no snapshot shows, one line each: when, what it asked of which
/// target, by which client, the result and why — every word from the record escaped.
fn agent_text(lines: &[AgentLine], style: &Style) -> String {
    let mut out = String::new();
    for l in lines {
        let target = match (&l.id, &l.plan) {
            (Some(id), _) => for_terminal(id).into_owned(),
            (None, Some(plan)) => format!("plan {}", for_terminal(plan)),
            (None, None) => "a request".to_owned(),
        };
        let what = match l.action {
            AgentAction::Restart => "restart of",
            AgentAction::Stop | AgentAction::Declined => "stop of",
        };
        let _ = write!(
            out,
            "{}  {}  {what} {target}  {}: {}",
            for_terminal(&l.at),
            style.result_word(&for_terminal(&l.result)),
            words::asked_by(&pier_core::model::RequestedBy::Agent {
                client: l.client.clone()
            })
            .unwrap_or_default(),
            for_terminal(&l.reason),
        );
        if !l.respawns.is_empty() {
            let back: Vec<_> = l.respawns.iter().map(|r| for_terminal(r)).collect();
            let _ = write!(out, "; came back: {}", back.join(", "));
        }
        out.push('\n');
    }
    out
}

/// "NOT STOPPED … because …": a stop that sent no signal stopped nothing, so it is never
/// worded as a stop, nor offered for restart.
fn not_stopped_text(out: &mut String, e: &HistoryEntry, command: &str, style: &Style) {
    let (snapshot, at) = (for_terminal(&e.snapshot), for_terminal(&e.stopped_at));
    let reason = e.reason.as_deref().unwrap_or("no reason was recorded");
    // The stop's own reason may already say it.
    let sent = match reason.starts_with("no signal was sent") {
        true => "",
        false => "; no signal was sent",
    };
    let by = words::asked_by(&e.requested_by).map_or(String::new(), |by| format!(" ({by})"));
    let _ = writeln!(
        out,
        "{at}  {}  {}: {} because {}{sent}{by}",
        style.paint("NOT STOPPED", "1"),
        what_where(e),
        e.result.as_deref().unwrap_or("refused"),
        for_terminal(reason),
    );
    let _ = writeln!(out, "    {command}\n    snapshot {snapshot}");
}

/// What a restart replays (docs/design.md §4): "runs /usr/bin/node in /home/u/app", and only
/// when the recorded environment has one, "with LD_PRELOAD=/x (changes what code runs)". Both
/// escaped: every name shown passes through [`for_terminal`].
pub(super) fn replay_lines(
    out: &mut String,
    program: Option<&str>,
    folder: Option<&str>,
    code_env: &[String],
) {
    if let (Some(program), Some(folder)) = (program, folder) {
        let _ = writeln!(
            out,
            "    runs {} in {}",
            for_terminal(program),
            for_terminal(folder)
        );
    }
    if !code_env.is_empty() {
        let entries: Vec<_> = code_env.iter().map(|e| for_terminal(e)).collect();
        let _ = writeln!(
            out,
            "    with {} (changes what code runs)",
            entries.join(", ")
        );
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::history::HistoryRestart;

    const PLAIN: Style = Style { colour: false };

    fn entry(result: &str, signalled: Option<bool>, reason: &str) -> HistoryEntry {
        HistoryEntry {
            restarts: Vec::new(),
            batch: None,
            requested_by: Default::default(),
            set_aside: Vec::new(),
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
            program: None,
            folder: None,
            code_env: Vec::new(),
        }
    }

    /// Found by trying real tools: a stop refused at its activity check (no signal sent) was
    /// listed as "stopped … refused … cannot be restarted".
    #[test]
    fn a_stop_that_sent_no_signal_is_never_worded_as_a_stop() {
        let busy = "busy over 500 ms: 15.8% CPU (more than 5%), 0 B/s disk I/O";
        let text = history_text(&[entry("refused", Some(false), busy)], &[], &PLAIN);
        assert_eq!(
            text,
            format!(
                "2026-12-01T12:00:00Z  NOT STOPPED  vite in /home/u/app: refused because \
                 {busy}; no signal was sent\n    node vite\n    snapshot snap-100-1000-1\n"
            )
        );
        assert!(
            !text.replace("NOT STOPPED", "").contains("stopped"),
            "{text}"
        );
        assert!(!text.contains("restart"), "nothing to restart is not news");
        let own = "no signal was sent: every member was gone or had changed";
        let text = history_text(&[entry("refused", Some(false), own)], &[], &PLAIN);
        assert_eq!(
            text.matches("no signal was sent").count(),
            1,
            "said once: {text}"
        );
    }

    /// A stop nobody clicked says who asked for it: the armed stop a person set earlier.
    #[test]
    fn a_stop_an_arm_fired_says_so_and_a_persons_says_nothing() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.requested_by = pier_core::model::RequestedBy::Armed;
        let text = history_text(&[e.clone()], &[], &PLAIN);
        assert!(
            text.starts_with(
                "2026-12-01T12:00:00Z  STOPPED  vite in /home/u/app  ports 127.0.0.1:5173  by \
                 your armed stop\n"
            ),
            "{text}"
        );
        e.requested_by = pier_core::model::RequestedBy::Cli;
        assert!(!history_text(&[e], &[], &PLAIN).contains(" by "));
    }

    /// Found by trying: the header said "stopped … stopped", and restarts were never shown.
    #[test]
    fn a_stop_reads_once_as_a_stop_with_its_restarts_and_its_restart_answer() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.restartable = true;
        e.why_not = None;
        e.restarts = vec![HistoryRestart {
            at: "2026-12-01T13:00:00Z".into(),
            pid: Some(4242),
            ready: true,
            exited: None,
        }];
        let text = history_text(&[e], &[], &PLAIN);
        assert_eq!(
            text,
            "2026-12-01T12:00:00Z  STOPPED  vite in /home/u/app  ports 127.0.0.1:5173\n    node \
             vite\n    restarted 2026-12-01T13:00:00Z as pid 4242: ready\n    snapshot \
             snap-100-1000-1: can be restarted (`pier restart snap-100-1000-1`)\n"
        );
        assert_eq!(
            text.matches("STOPPED").count() + text.matches("stopped").count(),
            1
        );
    }

    #[test]
    fn a_folder_and_a_command_holding_controls_are_shown_escaped_on_their_lines() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.project = "/home/u/\u{1b}[2J\u{1b}]0;pwned\u{7}\nx".into();
        e.root_command = vec!["node".into(), "vite\u{9b}31m".into()];
        let text = history_text(&[e], &[], &PLAIN);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{text:?}");
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.starts_with(
                "2026-12-01T12:00:00Z  STOPPED  vite in /home/u/\\e[2J\\e]0;pwned\\x07\\nx  "
            ),
            "{text}"
        );
        assert!(text.contains("\n    node vite\\u{9b}31m\n"), "{text}");
    }

    /// Issue 37: what a restart would replay is named — the program, the folder, and an
    /// entry that changes what code runs — escaped, and the rest of the environment never.
    #[test]
    fn a_snapshot_names_what_its_restart_runs_and_the_entries_that_change_what_code_runs() {
        let mut e = entry("stopped", Some(true), "every member is gone");
        e.program = Some("/usr/bin/node".into());
        e.folder = Some("/home/u/app".into());
        let text = history_text(&[e.clone()], &[], &PLAIN);
        assert!(
            text.contains("\n    node vite\n    runs /usr/bin/node in /home/u/app\n    snapshot"),
            "{text}"
        );
        assert!(!text.contains("with "), "nothing to name: {text}");
        e.code_env = vec![
            "LD_PRELOAD=/tmp/x.so".into(),
            "PATH=/tmp/\u{1b}[2Jbin:/usr/bin".into(),
        ];
        let text = history_text(&[e], &[], &PLAIN);
        assert!(
            text.contains(
                "\n    with LD_PRELOAD=/tmp/x.so, PATH=/tmp/\\e[2Jbin:/usr/bin (changes what code \
                 runs)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn an_unfinished_stop_says_it_never_finished() {
        let mut e = entry("", None, "");
        e.reason = None;
        e.why_not = Some("the stop never finished recording its outcome".into());
        let text = history_text(&[e], &["snap-1-1-1: kept as it is".into()], &PLAIN);
        assert!(
            text.starts_with("2026-12-01T12:00:00Z  NEVER FINISHED  vite in /home/u/app"),
            "{text}"
        );
        assert!(text.ends_with("unreadable: snap-1-1-1: kept as it is\n"));
    }

    #[test]
    fn colour_marks_the_result_only_when_asked() {
        let e = entry("partially_stopped", Some(true), "pid 9 still runs");
        let text = history_text(&[e], &[], &Style { colour: true });
        assert!(
            text.contains("\u{1b}[1;33mPARTIALLY STOPPED\u{1b}[0m"),
            "{text:?}"
        );
    }

    /// Issue 44: an agent's request no snapshot shows is one line naming the client, the
    /// target, the result and why, escaped.
    #[test]
    fn an_agents_refusal_is_one_escaped_line_naming_the_client() {
        let line = AgentLine {
            record: "agent-1-2-0".into(),
            at: "2026-12-01T12:00:00Z".into(),
            client: "evil\u{1b}[2J".into(),
            action: AgentAction::Stop,
            plan: Some("ab12".into()),
            id: Some("100-1000".into()),
            result: "refused".into(),
            reason: "refused: its ports changed\nsince".into(),
            respawns: Vec::new(),
        };
        let text = agent_text(&[line], &PLAIN);
        assert_eq!(
            text,
            "2026-12-01T12:00:00Z  REFUSED  stop of 100-1000  by the agent evil\\e[2J: refused: \
             its ports changed\\nsince\n"
        );
    }

    /// A stop an agent asked for that sent nothing says who asked, as a stop that did says.
    #[test]
    fn a_not_stopped_line_names_the_agent_that_asked() {
        let mut e = entry("refused", Some(false), "busy");
        e.requested_by = pier_core::model::RequestedBy::Agent {
            client: "cursor".into(),
        };
        let text = history_text(&[e], &[], &PLAIN);
        assert!(
            text.lines()
                .next()
                .unwrap()
                .ends_with("(by the agent cursor)"),
            "{text}"
        );
    }

    /// Issue 41: a restart whose command exited with status 1 read as "not ready in time",
    /// and the log it named was empty with nothing saying so.
    #[test]
    fn a_crashed_restart_says_it_exited_with_its_output_or_that_the_log_is_empty() {
        use pier_core::model::history::Exited;
        let crashed = |log_tail: &str, signal: Option<i32>| HistoryRestart {
            at: "2026-12-01T13:00:00Z".into(),
            pid: Some(4242),
            ready: false,
            exited: Some(Exited {
                status: signal.is_none().then_some(1),
                signal,
                log_tail: log_tail.into(),
            }),
        };
        let mut out = String::new();
        restart_lines(&mut out, &crashed("Error: boom\n\u{1b}[2Jat x.js:1", None));
        assert_eq!(
            out,
            "    restarted 2026-12-01T13:00:00Z as pid 4242: exited with status 1 before \
             listening\n      | Error: boom\n      | \\e[2Jat x.js:1\n"
        );
        let mut out = String::new();
        restart_lines(&mut out, &crashed("", Some(9)));
        assert_eq!(
            out,
            "    restarted 2026-12-01T13:00:00Z as pid 4242: was ended by signal 9 (SIGKILL) \
             before listening\n      the log is empty: the command sends its output \
             elsewhere, or wrote none\n"
        );
        let mut slow = crashed("", None);
        slow.exited = None;
        let mut out = String::new();
        restart_lines(&mut out, &slow);
        assert!(out.ends_with(": not ready in time\n"), "{out}");
    }
}
