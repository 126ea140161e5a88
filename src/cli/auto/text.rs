//! `pier auto` for a person: every sentence it says, made here.

use std::fmt::Write as _;

use super::{Document, Previewed, Runner};
use pier_core::auto::view::Seen;
use pier_core::model::rules::Pause;
use pier_core::words::{duration_seconds, for_terminal, path_for_terminal, utc_minute};

/// What a person adds to `rules.toml` to turn the rules on: three lines.
const EXAMPLE: &str = "  [[rule]]\n  name = \"idle 30 min\"\n  idle = \"30 min\"\n";

/// Where the rules run when no scheduler does.
const NONE_RUNS: &str = "No scheduler runs them: rules act only while the Pier app or `pier \
                         watch` runs: `pier watch`, or `pier watch --install`.";

/// The whole answer of `pier auto`.
pub(super) fn document(d: &Document) -> String {
    let mut out = rules_line(d);
    if let Some(p) = &d.paused {
        let _ = writeln!(
            out,
            "Paused {} (until {}): `pier auto --resume` ends it.",
            for_terminal(&p.asked),
            utc_minute(p.until)
        );
    }
    out.push_str(&runner_line(d.scheduler.as_ref(), d.rules == "on"));
    if let Some(p) = &d.pressure {
        let words = for_terminal(&p.words);
        let mut first = words.chars();
        let head = first.next().map(|c| c.to_uppercase().to_string());
        let _ = writeln!(out, "{}{}.", head.unwrap_or_default(), first.as_str());
    }
    if d.rules == "off" {
        return out;
    }
    if !d.due.is_empty() {
        out.push_str("\nWould stop now:\n");
        d.due.iter().for_each(|s| out.push_str(&card(s)));
    }
    if !d.others.is_empty() {
        out.push_str("\nNot now:\n");
        d.others.iter().for_each(|s| out.push_str(&card(s)));
    }
    if d.due.is_empty() && d.others.is_empty() {
        out.push_str("\nNo dev server or watcher is running.\n");
    }
    out
}

/// Whether the rules are on, off (and how to turn them on) or unreadable.
fn rules_line(d: &Document) -> String {
    let file = d
        .file
        .as_deref()
        .map_or_else(|| "rules.toml".into(), path_for_terminal);
    match d.rules {
        "on" => {
            let names: Vec<String> = d
                .rule
                .iter()
                .map(|r| {
                    let pressure = if r.pressure {
                        ", under memory pressure"
                    } else {
                        ""
                    };
                    let idle = duration_seconds(r.idle_seconds);
                    format!(
                        "'{}' (idle {idle}{pressure}{})",
                        for_terminal(&r.name),
                        filters(r)
                    )
                })
                .collect();
            let n = d.rule.len();
            let s = if n == 1 { "" } else { "s" };
            format!("Automatic stops: on, {n} rule{s}: {}.\n", names.join(", "))
        }
        "unreadable" => format!(
            "Automatic stops are off: {}. Every card says so until the file is fixed.\n",
            for_terminal(d.unreadable.as_deref().unwrap_or_default())
        ),
        _ => format!(
            "Automatic stops: off (the default). To turn them on, add a rule to {file}:\n{EXAMPLE}"
        ),
    }
}

/// A rule's filters, as read: "; under /w; kinds vite; ports 5173"; empty when it has none.
fn filters(r: &super::RuleLine) -> String {
    let under: Vec<String> = r
        .under
        .iter()
        .map(|f| path_for_terminal(f).into_owned())
        .collect();
    let kinds: Vec<String> = r
        .kinds
        .iter()
        .map(|k| for_terminal(k).into_owned())
        .collect();
    let ports: Vec<String> = r.ports.iter().map(u16::to_string).collect();
    [("under", under), ("kinds", kinds), ("ports", ports)]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("; {k} {}", v.join(", ")))
        .collect()
}

/// Which scheduler runs the rules, or that none does.
fn runner_line(runner: Option<&Runner>, on: bool) -> String {
    match runner {
        Some(r) => {
            let ago = pier_core::auto::pause::now().saturating_sub(r.written_at);
            format!(
                "Run by {} (pid {}): rescans every {}, last {} ago.\n",
                for_terminal(&r.by),
                r.pid,
                duration_seconds(r.every_seconds),
                duration_seconds(ago)
            )
        }
        None if on => format!(
            "{NONE_RUNS}\nJudged here on a fresh scan, which has no idle clock: nothing is due.\n"
        ),
        None => format!("{NONE_RUNS}\n"),
    }
}

/// One card's line: kind, project, id, idle clock, and what the rules say of it.
fn card(s: &Seen) -> String {
    let idle = s
        .idle
        .as_ref()
        .map_or_else(String::new, |i| format!(" · {}", pier_core::words::idle(i)));
    let note = s
        .auto
        .as_ref()
        .map_or_else(|| "no rule judged it".to_owned(), pier_core::words::auto);
    format!(
        "  {} in {} ({}){}\n    {}\n",
        for_terminal(&s.kind),
        for_terminal(&s.project),
        s.id,
        for_terminal(&idle),
        for_terminal(&note)
    )
}

/// What `pier auto --pause` did.
pub(super) fn paused(p: &Pause) -> String {
    format!(
        "Automatic stops paused {} (until {}): `pier auto --resume` ends it.\n",
        for_terminal(&p.asked),
        utc_minute(p.until)
    )
}

/// What `pier auto --resume` did.
pub(super) fn resumed(ended: bool) -> String {
    match ended {
        true => "Automatic stops resumed: the pause is over.\n".to_owned(),
        false => "Automatic stops were not paused: nothing to resume.\n".to_owned(),
    }
}

/// What `pier auto --dry-run` found: each previewed card's checks, nothing sent.
pub(super) fn dry_run(results: &[Previewed], paused: Option<&Pause>, colour: bool) -> String {
    let mut out = String::new();
    if let Some(p) = paused {
        let _ = writeln!(
            out,
            "Paused until {}: nothing is stopped; once resumed, the rules would stop what follows.",
            utc_minute(p.until)
        );
    }
    if results.is_empty() {
        out.push_str("Dry run: no rule would stop anything now.\n");
        return out;
    }
    for r in results {
        let said = super::super::stop::report_line(&r.report, colour);
        let _ = writeln!(
            out,
            "Dry run of rule '{}' ({}): {}",
            for_terminal(r.rule),
            for_terminal(&r.because),
            said.trim_end()
        );
    }
    out.push_str("Nothing was sent, and nothing was recorded.\n");
    out
}
