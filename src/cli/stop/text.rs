//! What `pier stop` says to a person: each resource's lines, what a batch left alone and why,
//! the summary, each port's answer, and the status line while a batch runs on a terminal.

use std::fmt::Write as _;

use pier_core::diagnose::port::PortAnswer;
use pier_core::model::memory::Memory;
use pier_core::model::outcome::{MemberOutcome, NewcomerFate, ResourceResult, StopReport, TieKind};
use pier_core::stop::Step;
use pier_core::words::{self, byte_size, comes_back_by_its_client, for_terminal};

use super::LeftAlone;
use crate::cli::ports;
use crate::cli::render::Style;

/// Each port's answer, and a blank line before the reports, if any follow. A port whose holder
/// Pier goes on to stop is said only with `verbose`: its report's line says what became of it,
/// and echoing the command just typed is noise (issue 41). A port Pier stops nothing of says
/// why, always.
pub(super) fn ports_text(
    ports: &[PortAnswer],
    style: &Style,
    reports_follow: bool,
    verbose: bool,
) -> String {
    let mut out: String = ports
        .iter()
        .filter(|a| verbose || a.stops.is_none())
        .map(|a| ports::answer_text(a, style, false))
        .collect();
    if !out.is_empty() && reports_follow {
        out.push('\n');
    }
    out
}

/// The reports for a person, then what a batch left alone and why. Every command, reason and
/// folder is shown through [`for_terminal`].
pub(super) fn text(
    reports: &[StopReport],
    left_alone: &[LeftAlone],
    dry_run: bool,
    verbose: bool,
) -> String {
    let plain = Style { colour: false };
    let mut out: String = reports
        .iter()
        .map(|r| report_text(r, &plain, verbose))
        .collect();
    out.push_str(&ending_text(reports, left_alone, dry_run, verbose));
    out
}

/// One resource: by default one line ([`short_text`]); with `verbose`, every detail.
pub(super) fn report_text(r: &StopReport, style: &Style, verbose: bool) -> String {
    match verbose {
        true => detail_text(r, style),
        false => short_text(r, style),
    }
}

/// One resource in one line: what stopped, where, how many processes, what it freed and how
/// to bring it back; what a dry run would signal; a "no" with its reason and next step. A
/// stop that left something running adds each survivor and Force's hint. Why short: a
/// successful stop is one fact, and twelve lines of timings hid it (issue 41).
fn short_text(r: &StopReport, style: &Style) -> String {
    let mut out = String::new();
    match r.result {
        ResourceResult::Stopped => {
            let _ = writeln!(out, "{}", stopped_line(r, style));
        }
        ResourceResult::WouldStop => {
            let _ = writeln!(out, "{}", would_stop_line(r, style));
        }
        ResourceResult::PartiallyStopped | ResourceResult::NotStopped => {
            headline(&mut out, r, style);
            still_running_lines(&mut out, r);
            if let Some(hint) = force_hint(r) {
                let _ = writeln!(out, "    → {hint}");
            }
        }
        ResourceResult::Refused | ResourceResult::Failed => headline(&mut out, r, style),
    }
    out
}

/// "stopped vite in /h/u/web (4 processes): :5173 free, about 119.6 MB · pier restart ID".
fn stopped_line(r: &StopReport, style: &Style) -> String {
    let mut line = format!("{} {}", style.paint("stopped", "32"), what_where(r));
    let ended = r
        .members
        .iter()
        .filter(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited))
        .count();
    let mut how = Vec::new();
    match (&r.container, ended) {
        (Some(_), _) => how.push("by its engine".to_owned()),
        (None, 1) => how.push("1 process".to_owned()),
        (None, n) => how.push(format!("{n} processes")),
    }
    if r.timings.is_none() && r.container.is_none() {
        how.push("SIGKILL".to_owned());
    }
    if !r.set_aside.is_empty() {
        let names: Vec<&str> = r.set_aside.iter().map(|a| a.reason.as_str()).collect();
        how.push(format!("set aside: {}", names.join(", ")));
    }
    let _ = write!(line, " ({})", how.join(", "));
    let freed = freed_words(r);
    if !freed.is_empty() {
        let _ = write!(line, ": {}", freed.join(", "));
    }
    match (&r.snapshot, comes_back_by_its_client(r.kind.as_deref())) {
        (Some(_), None) => {
            let _ = write!(line, " · pier restart {}", r.id);
        }
        (_, Some(by_client)) => {
            let _ = write!(line, " · {by_client}");
        }
        (None, None) => {}
    }
    line
}

/// What a stop freed, for a person: its ports ([`port_words`]) and "about 119.6 MB".
fn freed_words(r: &StopReport) -> Vec<String> {
    let mut freed = port_words(r);
    if let Some(m) = r.freed {
        freed.push(format!("about {}", byte_size(m.bytes)));
    }
    freed
}

/// ":5173 free", ":5173 still in use by another process": a port is free only when nothing
/// listens on it once the stop ended.
fn port_words(r: &StopReport) -> Vec<String> {
    let ports = |ps: &[u16]| {
        ps.iter()
            .map(|p| format!(":{p}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut words = Vec::new();
    if !r.freed_ports.is_empty() {
        words.push(format!("{} free", ports(&r.freed_ports)));
    }
    if let Some(first) = r.ports_still_held.first() {
        words.push(format!(
            "{} still in use by another process (`pier scan :{first}`)",
            ports(&r.ports_still_held)
        ));
    }
    words
}

/// "would stop vite in /h/u/web: 4 processes would get SIGTERM, children first; nothing was
/// sent or written".
fn would_stop_line(r: &StopReport, style: &Style) -> String {
    let signal = r
        .would_signal
        .first()
        .map_or("SIGTERM", |s| s.signal.as_str());
    let what = match r.would_signal.iter().filter(|s| s.pid.is_some()).count() {
        0 => format!("its engine would be asked to send {signal}"),
        1 => format!("1 process would get {signal}"),
        n => format!("{n} processes would get {signal}, children first"),
    };
    format!(
        "{} {}: {what}; nothing was sent or written",
        style.paint("would stop", "32"),
        what_where(r)
    )
}

/// "vite in /h/u/web" (or the id, when the stop ended before it knew).
fn what_where(r: &StopReport) -> String {
    match (&r.kind, &r.project) {
        (Some(kind), Some(project)) => {
            format!("{} in {}", for_terminal(kind), for_terminal(project))
        }
        _ => r.id.clone(),
    }
}

/// What a stop left running: each member and newcomer still alive, one line each.
fn still_running_lines(out: &mut String, r: &StopReport) {
    for m in r
        .members
        .iter()
        .filter(|m| matches!(m.outcome, MemberOutcome::StillRunning))
    {
        let command = for_terminal(&shown_command(&m.command)).into_owned();
        let _ = writeln!(out, "    still running: pid {} {command}", m.pid);
    }
    for n in r
        .newcomers
        .iter()
        .filter(|n| n.fate == NewcomerFate::StillRunning)
    {
        let command = for_terminal(&shown_command(&n.command)).into_owned();
        let _ = writeln!(
            out,
            "    still running: pid {} {command} (born during the stop)",
            n.pid
        );
    }
}

/// Every detail of one resource (`-v`): its id, result, what it is and where, and the reason;
/// each member and newcomer with its command; its timings, its snapshot; and, when a member
/// outlived its signal, how Force would end it.
fn detail_text(r: &StopReport, style: &Style) -> String {
    let mut out = String::new();
    headline(&mut out, r, style);
    for a in &r.set_aside {
        let _ = writeln!(
            out,
            "    set aside: {}: {}",
            a.reason,
            for_terminal(&a.fact)
        );
    }
    member_lines(&mut out, r);
    newcomer_lines(&mut out, r);
    would_signal_lines(&mut out, r);
    ending_lines(&mut out, r);
    out
}

/// "ID  RESULT  kind in folder: reason".
fn headline(out: &mut String, r: &StopReport, style: &Style) {
    let what = match (&r.kind, &r.project) {
        (Some(kind), Some(project)) => {
            format!("{} in {}: ", for_terminal(kind), for_terminal(project))
        }
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "{}  {}  {what}{}",
        style.bold(&r.id),
        style.result_word(r.result.as_str()),
        for_terminal(&r.reason)
    );
}

/// Each member with its outcome and command; a container with what its engine was asked.
fn member_lines(out: &mut String, r: &StopReport) {
    for m in &r.members {
        let _ = writeln!(
            out,
            "    pid {:<7} {:<14} {}  {}",
            m.pid,
            m.outcome.as_str(),
            for_terminal(&shown_command(&m.command)),
            for_terminal(&m.detail)
        );
    }
    if let Some(c) = &r.container {
        let signal = for_terminal(&c.signal);
        let how = match c.sent {
            Some(true) => format!("{signal} sent through its engine"),
            Some(false) => format!("{signal} not sent"),
            None => format!("{signal} asked of its engine, unconfirmed"),
        };
        let _ = writeln!(
            out,
            "    container {:<14} {}  {how}: {}",
            c.outcome.as_str(),
            for_terminal(&c.name),
            for_terminal(&c.detail)
        );
    }
}

/// Each process born during the stop, with how it is tied to the tree and its fate.
fn newcomer_lines(out: &mut String, r: &StopReport) {
    for n in &r.newcomers {
        // A child's tie already names its parent.
        let parent = match n.tie {
            TieKind::ChildOfMember | TieKind::ChildOfNewcomer => String::new(),
            TieKind::Listens | TieKind::OrphanInProject => format!(", parent pid {}", n.parent),
        };
        let _ = writeln!(
            out,
            "    pid {:<7} {:<14} {}  newcomer ({}{parent}): {}",
            n.pid,
            n.fate.as_str(),
            for_terminal(&shown_command(&n.command)),
            for_terminal(&n.how),
            for_terminal(&n.detail)
        );
    }
}

/// A dry run's signals, in their order.
fn would_signal_lines(out: &mut String, r: &StopReport) {
    for s in &r.would_signal {
        let who = match s.pid {
            Some(pid) => format!("pid {pid:<7}"),
            None => "    ".to_owned() + &" ".repeat(7),
        };
        let _ = writeln!(
            out,
            "    {}. would send {} to {who} {}",
            s.order,
            s.signal,
            for_terminal(&s.command)
        );
    }
}

/// What it freed, its timings, an outcome not recorded, its snapshot, and Force's hint.
fn ending_lines(out: &mut String, r: &StopReport) {
    if let Some(m) = r.freed {
        let _ = writeln!(
            out,
            "    freed about {} ({}, as read before the stop)",
            byte_size(m.bytes),
            m.kind.as_str()
        );
    }
    let ports = port_words(r);
    if !ports.is_empty() {
        let _ = writeln!(out, "    {}", ports.join(", "));
    }
    if let Some(t) = &r.timings {
        let sample = format!("activity sampled over {} ms", t.sample_ms);
        let _ = writeln!(
            out,
            "    first check to first signal {:.0} ms, to last signal {:.0} ms ({sample})",
            t.a_to_first_signal_ms, t.a_to_last_signal_ms
        );
    }
    if let Some(e) = &r.record_error {
        let _ = writeln!(out, "    not recorded: {}", for_terminal(e));
    }
    if let Some(s) = &r.snapshot {
        let s = for_terminal(s);
        let _ = match r.result {
            ResourceResult::Refused | ResourceResult::Failed => writeln!(
                out,
                "    snapshot {s} kept: nothing was signalled, so it is not offered for restart"
            ),
            ResourceResult::Stopped => match comes_back_by_its_client(r.kind.as_deref()) {
                Some(by_client) => writeln!(out, "    snapshot {s}: {by_client}"),
                None => writeln!(out, "    snapshot {s}: `pier restart {}`", r.id),
            },
            _ => writeln!(out, "    snapshot {s}"),
        };
    }
    if let Some(hint) = force_hint(r) {
        let _ = writeln!(out, "    → {hint}");
    }
}

/// A command as a report line shows it: the program and a script by file name, cut at 60
/// characters (`words::short_command`); the JSON keeps it whole.
fn shown_command(command: &str) -> String {
    words::short_command(command.split(' ').map(str::as_bytes))
}

/// What Force can do about members that outlived their SIGTERM: offered only after a stop that
/// sent signals (Force's own report has no timings: its SIGKILL is the last step).
fn force_hint(r: &StopReport) -> Option<String> {
    let outlived = r
        .members
        .iter()
        .filter(|m| m.outcome == pier_core::model::outcome::MemberOutcome::StillRunning)
        .count();
    if r.timings.is_none() || outlived == 0 {
        return None;
    }
    Some(format!(
        "`pier stop --force {}` sends SIGKILL to the {outlived} process(es) that outlived \
         SIGTERM (added to this stop's record)",
        r.id
    ))
}

/// What follows the reports: "Nothing to stop." when there are none, what a batch left alone
/// and why, and the summary line.
pub(super) fn ending_text(
    reports: &[StopReport],
    left_alone: &[LeftAlone],
    dry_run: bool,
    verbose: bool,
) -> String {
    let mut out = String::new();
    match (reports.is_empty(), left_alone.is_empty()) {
        (true, true) => out.push_str("Nothing to stop.\n"),
        (true, false) => out.push_str("Nothing to stop: nothing here is green.\n"),
        _ => {}
    }
    left_alone_lines(&mut out, left_alone);
    if verbose || !one_alone(reports, left_alone) {
        summary_line(&mut out, reports, left_alone.len(), dry_run);
    }
    out
}

/// One resource asked and nothing left alone: its own line says it all, and a summary of one
/// would say it twice.
fn one_alone(reports: &[StopReport], left_alone: &[LeftAlone]) -> bool {
    reports.len() == 1 && left_alone.is_empty()
}

/// Each resource a batch left alone, with why.
fn left_alone_lines(out: &mut String, left_alone: &[LeftAlone]) {
    if !left_alone.is_empty() {
        out.push_str("\nLeft alone (not green):\n");
    }
    for l in left_alone {
        let pid = l.pid.map_or(String::new(), |pid| format!("pid {pid}, "));
        let _ = writeln!(
            out,
            "    {} ({pid}id {}) in {} — {}: {}",
            for_terminal(&l.kind),
            l.id,
            for_terminal(&l.project),
            l.level.as_str(),
            for_terminal(&l.reason)
        );
    }
}

/// "N of M stopped", what became of the rest, what was left alone and freed, and what was
/// not recorded or interrupted.
fn summary_line(out: &mut String, reports: &[StopReport], left_alone: usize, dry_run: bool) {
    if dry_run {
        let would = reports
            .iter()
            .filter(|r| r.result == ResourceResult::WouldStop)
            .count();
        let _ = write!(
            out,
            "\n{would} of {} would be stopped (--dry-run: nothing was sent or written)",
            reports.len()
        );
    } else {
        let stopped = reports
            .iter()
            .filter(|r| r.result == ResourceResult::Stopped)
            .count();
        let _ = write!(out, "\n{stopped} of {} stopped", reports.len());
        out.push_str(&not_stopped_counts(reports));
    }
    if left_alone > 0 {
        let _ = write!(out, ", {left_alone} left alone");
    }
    let freed = reports.iter().filter_map(|r| r.freed);
    if let Some(m) = Memory::total(freed.map(Some)) {
        let _ = write!(out, "; about {} freed", byte_size(m.bytes));
    }
    let unrecorded = reports.iter().filter(|r| r.record_error.is_some()).count();
    if unrecorded > 0 {
        let _ = write!(out, "; {unrecorded} outcome(s) not recorded yet");
    }
    if let Some(signal) = reports.iter().find_map(|r| r.interrupted.as_deref()) {
        let _ = write!(
            out,
            "; interrupted by {signal}: no further level or resource was signalled"
        );
    }
    out.push('\n');
}

/// What became of the resources a batch did not stop, counted by result after "N of M
/// stopped" (" (1 refused, 1 not stopped)"); each one's reason is on its own line above. Why:
/// the selection's scan has no activity sample, so what it chose is not what the stop found;
/// the summary says what the stop's own checks found, nothing else.
fn not_stopped_counts(reports: &[StopReport]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for r in reports
        .iter()
        .filter(|r| r.result != ResourceResult::Stopped)
    {
        let word = r.result.as_str();
        match counts.iter_mut().find(|(w, _)| *w == word) {
            Some((_, n)) => *n += 1,
            None => counts.push((word, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(w, n)| format!("{n} {}", w.replace('_', " ")))
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    }
}

/// The status line on stderr while a batch runs on a terminal: the step, rewritten in place,
/// cleared before any other output.
pub(super) struct Status {
    on: bool,
    shown: bool,
}

impl Status {
    pub(super) fn new(on: bool) -> Self {
        Self { on, shown: false }
    }

    pub(super) fn show(&mut self, step: Step, resources: usize) {
        if !self.on {
            return;
        }
        let of = if resources == 1 {
            "1 resource".to_owned()
        } else {
            format!("{resources} resources")
        };
        eprint!("\r\x1b[Kpier: {} ({of})…", step.words());
        self.shown = true;
    }

    pub(super) fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::card::Level;

    fn left(kind: &str, pid: u32, reason: &str) -> LeftAlone {
        LeftAlone {
            id: format!("{pid}-1000"),
            kind: kind.into(),
            level: Level::Yellow,
            project: "/home/u/docs".into(),
            pid: Some(pid),
            reason: reason.into(),
        }
    }

    /// Found by a new user: the line after stopping an MCP server offered `pier restart`,
    /// which its restart then refused.
    #[test]
    fn a_stopped_kind_its_client_starts_says_so_instead_of_a_restart() {
        let plain = Style { colour: false };
        let mut r = StopReport::new("5125-283171", ResourceResult::Stopped, "stopped");
        r.snapshot = Some("snap-5125-283171-1".into());
        r.kind = Some("vite".into());
        assert!(stopped_line(&r, &plain).ends_with(" · pier restart 5125-283171"));
        r.kind = Some("mcp-server".into());
        let line = stopped_line(&r, &plain);
        assert!(!line.contains("pier restart"), "{line}");
        assert!(
            line.ends_with(" · its agent, editor or test run starts a new one when it needs one"),
            "{line}"
        );
    }

    /// Found by trying real tools: `pier stop --all-green --under DIR` said "Nothing to stop"
    /// and named none of the yellow and red resources it had left alone.
    #[test]
    fn a_batch_names_each_resource_it_left_alone_and_why() {
        let shell = "parent sh (pid 99) is a live interactive shell";
        let text = text(&[], &[left("vite", 100, shell)], false, false);
        assert_eq!(
            text,
            format!(
                "Nothing to stop: nothing here is green.\n\nLeft alone (not green):\n    vite \
                 (pid 100, id 100-1000) in /home/u/docs — yellow: {shell}\n\n0 of 0 stopped, 1 \
                 left alone\n"
            )
        );
    }

    #[test]
    fn a_left_alone_folder_and_reason_are_shown_escaped() {
        let mut l = left(
            "vite",
            100,
            "parent \u{1b}]0;x\u{7} (pid 99) is a live shell",
        );
        l.project = "/home/u/a\nb\u{202e}".into();
        let text = text(&[], &[l], false, false);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{text:?}");
        assert!(
            text.contains(
                "\n    vite (pid 100, id 100-1000) in /home/u/a\\nb\\u{202e} — yellow: parent \
                 \\e]0;x\\x07 (pid 99) is a live shell\n"
            ),
            "{text}"
        );
    }

    /// A stopped resource says about how much it freed, as read before the stop; a refused
    /// one says nothing of it, and the summary adds up the rest.
    #[test]
    fn a_stop_says_about_what_it_freed() {
        use pier_core::model::memory::MemoryKind;
        let report = |id: &str, result, bytes: Option<u64>| StopReport {
            kind: None,
            project: None,
            result,
            reason: "why".into(),
            freed: bytes.map(|bytes| Memory {
                bytes,
                kind: MemoryKind::Proportional,
            }),
            ..blank(id)
        };
        let reports = [
            report("1-1", ResourceResult::Stopped, Some(48_200_000)),
            report("2-1", ResourceResult::PartiallyStopped, Some(1_800_000)),
            report("3-1", ResourceResult::Refused, None),
        ];
        let text = text(&reports, &[], false, true);
        assert!(
            text.starts_with(
                "1-1  STOPPED  why\n    freed about 48.2 MB (proportional, as read before the \
                 stop)\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\n1 of 3 stopped (1 partially stopped, 1 refused); about 50.0 MB freed\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("freed about").count(), 2, "{text}");
    }

    /// A stop of a kind its client starts (an MCP server) offers no restart: a restart of it
    /// is always refused (`restart::offered`). Other kinds keep the offer.
    #[test]
    fn a_stop_offers_a_restart_only_for_a_kind_a_restart_takes() {
        let mut r = blank("1-1");
        r.snapshot = Some("snap-1-1-5".into());
        let line = stopped_line(&r, &Style { colour: false });
        assert!(line.ends_with(" · pier restart 1-1"), "{line}");
        assert!(detail_text(&r, &Style { colour: false }).contains("`pier restart 1-1`"));
        r.kind = Some("mcp-server".into());
        let line = stopped_line(&r, &Style { colour: false });
        assert!(!line.contains("pier restart"), "{line}");
        assert!(!detail_text(&r, &Style { colour: false }).contains("pier restart"));
    }

    #[test]
    fn a_summary_counts_what_the_stops_own_checks_found() {
        let mut refused = blank("1-1");
        refused.result = ResourceResult::Refused;
        let mut stopped = blank("2-1");
        stopped.result = ResourceResult::Stopped;
        let mut none = blank("3-1");
        none.result = ResourceResult::NotStopped;
        let shown = ending_text(
            &[refused.clone(), stopped, none, refused],
            &[],
            false,
            false,
        );
        assert_eq!(shown, "\n1 of 4 stopped (2 refused, 1 not stopped)\n");
    }

    #[test]
    fn nothing_in_scope_says_nothing_to_stop() {
        assert_eq!(
            text(&[], &[], false, false),
            "Nothing to stop.\n\n0 of 0 stopped\n"
        );
    }

    /// Found by trying: a server that outlived its SIGTERM ended `partially_stopped` with no
    /// word of `--force`. The hint names the id and how many outlived it, and is never given
    /// after Force (whose report has no timings).
    #[test]
    fn a_member_that_outlived_its_sigterm_gets_a_force_hint_and_force_does_not() {
        use pier_core::model::outcome::{MemberOutcome, MemberReport, Timings};
        let member = |pid: u32, outcome| MemberReport {
            pid,
            start_time: 1000,
            command: "python3 server.py".into(),
            outcome,
            detail: String::new(),
        };
        let mut r = blank("100-1000");
        r.result = ResourceResult::NotStopped;
        r.members = vec![member(100, MemberOutcome::StillRunning)];
        r.timings = Some(Timings {
            a_to_first_signal_ms: 1.0,
            a_to_last_signal_ms: 1.0,
            sample_ms: 500,
        });
        let hint = force_hint(&r).unwrap();
        assert!(
            hint.starts_with("`pier stop --force 100-1000` sends SIGKILL to the 1 process(es)"),
            "{hint}"
        );
        r.members = vec![
            member(101, MemberOutcome::StillRunning),
            member(100, MemberOutcome::Stopped),
        ];
        assert!(force_hint(&r).is_some(), "a child outlived it");
        r.timings = None;
        assert_eq!(force_hint(&r), None, "after Force");
        r.timings = Some(Timings {
            a_to_first_signal_ms: 1.0,
            a_to_last_signal_ms: 1.0,
            sample_ms: 500,
        });
        r.members = vec![member(100, MemberOutcome::Stopped)];
        assert_eq!(force_hint(&r), None, "nothing outlived its signal");
    }

    /// A member of a report, for the short forms.
    fn member(pid: u32, outcome: MemberOutcome) -> pier_core::model::outcome::MemberReport {
        pier_core::model::outcome::MemberReport {
            pid,
            start_time: 1000,
            command: "node /h/u/app/node_modules/.bin/vite --port 5173".into(),
            outcome,
            detail: "exited after SIGTERM".into(),
        }
    }

    fn timings() -> pier_core::model::outcome::Timings {
        pier_core::model::outcome::Timings {
            a_to_first_signal_ms: 522.0,
            a_to_last_signal_ms: 522.0,
            sample_ms: 500,
        }
    }

    /// Issue 41: a successful stop printed twelve lines (members, timings, the snapshot, a
    /// summary of one). By default it is one line: what, where, how many processes, what it
    /// freed, how to bring it back; `-v` keeps every detail.
    #[test]
    fn a_stopped_resource_is_one_line_and_verbose_keeps_the_detail() {
        use pier_core::model::memory::MemoryKind;
        let mut r = blank("6989-3721068");
        r.kind = Some("vite".into());
        r.project = Some("/tmp/demo/web".into());
        r.reason = "every member is gone".into();
        r.members = vec![
            member(7005, MemberOutcome::Stopped),
            member(7004, MemberOutcome::Exited),
            member(6992, MemberOutcome::Exited),
            member(6989, MemberOutcome::Exited),
        ];
        r.timings = Some(timings());
        r.snapshot = Some("snap-6989-3721068-1796464804138".into());
        r.freed_ports = vec![5199];
        r.freed = Some(Memory {
            bytes: 119_600_000,
            kind: MemoryKind::Proportional,
        });
        let short = text(std::slice::from_ref(&r), &[], false, false);
        assert_eq!(
            short,
            "stopped vite in /tmp/demo/web (4 processes): :5199 free, about 119.6 MB · pier \
             restart 6989-3721068\n"
        );
        let detail = text(std::slice::from_ref(&r), &[], false, true);
        assert!(detail.starts_with("6989-3721068  STOPPED  vite in /tmp/demo/web: every"));
        for said in [
            "pid 7005",
            "first check to first signal",
            "snapshot snap-",
            "1 of 1",
        ] {
            assert!(detail.contains(said), "{said}: {detail}");
        }
        // A batch: one line each, and one summary.
        let batch = text(&[r.clone(), r], &[], false, false);
        assert_eq!(
            batch.lines().filter(|l| l.starts_with("stopped ")).count(),
            2
        );
        assert!(
            batch.ends_with("\n\n2 of 2 stopped; about 239.2 MB freed\n"),
            "{batch}"
        );
    }

    /// A dry run: one line saying what would get SIGTERM; `-v` lists each pid.
    #[test]
    fn a_dry_run_is_one_line_saying_what_would_get_sigterm() {
        use pier_core::model::outcome::PlannedSignal;
        let mut r = blank("7412-3727581");
        r.result = ResourceResult::WouldStop;
        r.would_signal = (1..=4)
            .map(|order| PlannedSignal {
                pid: Some(7428 - order as u32),
                start_time: Some(1),
                command: "sh -c vite".into(),
                signal: "SIGTERM".into(),
                order,
            })
            .collect();
        assert_eq!(
            text(std::slice::from_ref(&r), &[], true, false),
            "would stop python-http-server in /h/u/app: 4 processes would get SIGTERM, \
             children first; nothing was sent or written\n"
        );
        let detail = text(&[r], &[], true, true);
        assert!(
            detail.contains("4. would send SIGTERM to pid 7424"),
            "{detail}"
        );
    }

    /// A "no" is its one line with its reason and next step; a stop that left something
    /// running names what still runs and Force's hint.
    #[test]
    fn a_refusal_is_one_line_and_a_partial_stop_names_what_still_runs() {
        let mut refused = blank("1-1");
        refused.result = ResourceResult::Refused;
        refused.reason = "a live connection: close the browser tab".into();
        refused.snapshot = Some("snap-1-1-1".into());
        assert_eq!(
            text(&[refused], &[], false, false),
            "1-1  REFUSED  python-http-server in /h/u/app: a live connection: close the \
             browser tab\n"
        );
        let mut partial = blank("100-1000");
        partial.result = ResourceResult::PartiallyStopped;
        partial.reason = "pid 101 still runs".into();
        partial.timings = Some(timings());
        partial.members = vec![
            member(101, MemberOutcome::StillRunning),
            member(100, MemberOutcome::Stopped),
        ];
        let shown = text(&[partial], &[], false, false);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), 3, "{shown}");
        assert!(
            lines[1].starts_with("    still running: pid 101 node"),
            "{shown}"
        );
        assert!(
            lines[2].starts_with("    → `pier stop --force 100-1000`"),
            "{shown}"
        );
    }

    /// A port whose holder the stop goes on to stop is not echoed back (its report says what
    /// became of it) but with `-v`; a port Pier stops nothing of always says why.
    #[test]
    fn a_port_is_echoed_only_when_pier_stops_nothing_of_it_or_with_verbose() {
        let port = |stops: Option<&str>| PortAnswer {
            port: 5199,
            holders: Vec::new(),
            stops: stops.map(Into::into),
            reason: "why".into(),
            hint: None,
        };
        let style = Style { colour: false };
        assert_eq!(ports_text(&[port(Some("1-1"))], &style, true, false), "");
        assert_eq!(
            ports_text(&[port(Some("1-1"))], &style, true, true),
            ":5199  why\n\n"
        );
        assert_eq!(
            ports_text(&[port(None)], &style, false, false),
            ":5199  why\n"
        );
    }

    fn blank(id: &str) -> StopReport {
        StopReport {
            kind: Some("python-http-server".into()),
            project: Some("/h/u/app".into()),
            ..StopReport::new(id, ResourceResult::Stopped, "")
        }
    }
}
