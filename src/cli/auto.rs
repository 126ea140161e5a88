//! `pier auto`: the automatic-stop rules (docs/design.md §5a) — whether they are on, paused,
//! which scheduler runs them, what they would stop now and, for every other card, why not and
//! when it would be due. It pauses and resumes them, and previews a stop as a dry run.
//!
//! A one-shot command has no idle clock: while the app or `pier watch` runs, it shows that
//! scheduler's view (`auto::view`); otherwise it judges a fresh scan itself, where every card
//! is "not measured yet".

mod text;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::{exit, print, print_json, resolve_dirs, usage};
use pier_core::auto::pause::{self, For};
use pier_core::auto::scheduler::{Scheduler, SchedulerOptions};
use pier_core::auto::view::{self, Seen, View};
use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::System;
use pier_core::model::outcome::StopReport;
use pier_core::model::rules::{AutoState, MemoryPressure, Pause, RulesState};
use pier_core::model::RequestedBy;
use pier_core::stop::StopOptions;

#[derive(Debug, Args)]
pub struct AutoArgs {
    /// Pause the rules: for a while ("1h", "30m") or until tomorrow ("tomorrow").
    #[arg(long, value_name = "FOR", conflicts_with_all = ["resume", "dry_run"])]
    pause: Option<String>,
    /// Resume the rules (end a pause).
    #[arg(long, conflicts_with = "dry_run")]
    resume: bool,
    /// Run each card the rules would stop now through every check: what would be signalled.
    /// Nothing is sent and nothing is recorded.
    #[arg(long)]
    dry_run: bool,
    /// Only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// One JSON document instead of text (docs/auto-json.md).
    #[arg(long)]
    json: bool,
}

/// `pier auto --json`: the rules and what they say of each card.
#[derive(Debug, Serialize)]
pub(crate) struct Document {
    schema: u32,
    /// `"on"`, `"off"` or `"unreadable"`.
    rules: &'static str,
    /// The rules file.
    file: Option<PathBuf>,
    /// Why the file cannot be read (with `"unreadable"`).
    unreadable: Option<String>,
    /// The rules, when on.
    rule: Vec<RuleLine>,
    /// The pause in force.
    paused: Option<Pause>,
    /// The scheduler whose view this is; `null`: none runs, and Pier judged a fresh scan.
    scheduler: Option<Runner>,
    /// The memory pressure that scheduler read.
    pressure: Option<MemoryPressure>,
    /// What the rules would stop now.
    due: Vec<Seen>,
    /// Every other card, with why not and when it would be due.
    others: Vec<Seen>,
}

/// One rule, as `pier auto` lists it.
#[derive(Debug, Serialize)]
pub(crate) struct RuleLine {
    name: String,
    idle_seconds: u64,
    pressure: bool,
    /// Its filters, as read (folders resolved); empty: any.
    under: Vec<std::path::PathBuf>,
    kinds: Vec<String>,
    ports: Vec<u16>,
}

/// The scheduler that runs the rules, as its view names it.
#[derive(Debug, Serialize)]
pub(crate) struct Runner {
    by: String,
    pid: u32,
    written_at: u64,
    every_seconds: u64,
}

/// Runs `pier auto`.
pub fn run(args: AutoArgs) -> ExitCode {
    if let Some(asked) = &args.pause {
        return match asked.parse::<For>() {
            Ok(asked) => pause_for(asked, args.json),
            Err(e) => usage(&e.to_string()),
        };
    }
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let system = match exit::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    if args.resume {
        return resume(&system, args.json);
    }
    let rules = pier_core::auto::rules::read();
    let now = pause::now();
    let paused = match pause::read(&system.store, now) {
        Ok(paused) => paused,
        Err(e) => return exit::failed(&e),
    };
    let running = view::running(&system, now).unwrap_or_else(|e| {
        eprintln!("pier: warning: the scheduler's view could not be read: {e}");
        None
    });
    let seen = match &running {
        Some(v) => v.resources.clone(),
        None => match judge_fresh(&system, &under, &rules) {
            Ok(seen) => seen,
            Err(code) => return code,
        },
    };
    let seen: Vec<Seen> = seen.into_iter().filter(|s| within(s, &under)).collect();
    if args.dry_run {
        return dry_run(&system, &seen, paused.as_ref(), args.json);
    }
    let doc = document(&rules, paused, running.as_ref(), seen);
    match args.json {
        true => print_json(&doc),
        false => print(text::document(&doc).as_bytes()),
    }
}

/// Pauses the rules and says until when.
fn pause_for(asked: For, json: bool) -> ExitCode {
    let system = match exit::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let p = asked.at(pause::now());
    if let Err(e) = pause::set(&system.store, &p) {
        return exit::failed(&e);
    }
    match json {
        true => print_json(&serde_json::json!({ "schema": 1, "paused": p })),
        false => print(text::paused(&p).as_bytes()),
    }
}

/// Resumes the rules and says whether a pause ended.
fn resume(system: &System, json: bool) -> ExitCode {
    let ended = match pause::clear(&system.store) {
        Ok(ended) => ended,
        Err(e) => return exit::failed(&e),
    };
    match json {
        true => print_json(&serde_json::json!({ "schema": 1, "resumed": ended })),
        false => print(text::resumed(ended).as_bytes()),
    }
}

/// What the rules say of a fresh scan, judged here: no scheduler runs, so no card has an idle
/// clock, and nothing is due (every card waits, "not measured yet"). Nothing is sent.
fn judge_fresh(
    system: &System,
    under: &[PathBuf],
    rules: &RulesState,
) -> Result<Vec<Seen>, ExitCode> {
    let opts = ScanOptions {
        under: under.to_vec(),
        protect: super::protect_list(),
        ..ScanOptions::default()
    };
    let mut scan = diagnose::scan(system.probe.as_ref(), &opts, &project::marker_on_disk)
        .map_err(|e| exit::failed(&e))?;
    let mut scheduler = Scheduler::new(SchedulerOptions::default());
    let _ = scheduler.rules(system, &mut scan, rules, &StopOptions::default(), false);
    Ok(view::seen(&scan))
}

/// Whether a card's project is under one of `under` (every card when none is given).
fn within(s: &Seen, under: &[PathBuf]) -> bool {
    under.is_empty() || under.iter().any(|d| Path::new(&s.project).starts_with(d))
}

/// Whether a dry run previews `s`: due now; or, while the rules are paused, held by the pause
/// alone. Why the second: a person previews while paused precisely so that nothing runs; the
/// judge says the pause before the settle, the back-off and the cap, so a held card with a
/// rule whose idle time is reached is what resuming would stop (the cap still applies then).
fn previewed(s: &Seen, paused: bool) -> bool {
    s.auto.as_ref().is_some_and(|n| match n.state {
        AutoState::Due => true,
        AutoState::Held => paused && n.rule.is_some(),
        AutoState::Waiting | AutoState::Never => false,
    })
}

/// One dry run's result.
#[derive(Debug, Serialize)]
struct Previewed<'a> {
    rule: &'a str,
    because: String,
    report: StopReport,
}

/// `pier auto --dry-run`: each card the rules would stop, through the whole chain as a dry
/// run asked for by its rule: what would be signalled; nothing is sent, nothing recorded.
fn dry_run(system: &System, seen: &[Seen], paused: Option<&Pause>, json: bool) -> ExitCode {
    let mut results = Vec::new();
    for s in seen.iter().filter(|s| previewed(s, paused.is_some())) {
        let rule = s
            .auto
            .as_ref()
            .and_then(|n| n.rule.as_deref())
            .unwrap_or("");
        let because = format!(
            "idle {}",
            pier_core::words::duration_seconds(s.idle.as_ref().map_or(0, |i| i.seconds))
        );
        let stopper = system.stopper(StopOptions {
            dry_run: true,
            requested_by: RequestedBy::Rule {
                name: rule.to_owned(),
                because: Some(because.clone()),
            },
            ..StopOptions::default()
        });
        for report in stopper.stop_all(&[(s.id.as_str(), None)], &mut |_| {}) {
            results.push(Previewed {
                rule,
                because: because.clone(),
                report,
            });
        }
    }
    match json {
        true => print_json(&serde_json::json!({
            "schema": 1, "dry_run": true, "paused": paused, "results": results,
        })),
        false => print(text::dry_run(&results, paused, super::colour_wanted()).as_bytes()),
    }
}

/// The document, from the rules, the pause and the cards.
fn document(
    rules: &RulesState,
    paused: Option<Pause>,
    running: Option<&View>,
    seen: Vec<Seen>,
) -> Document {
    let (state, rule, unreadable) = match rules {
        RulesState::Off => ("off", Vec::new(), None),
        RulesState::Unreadable(why) => ("unreadable", Vec::new(), Some(why.clone())),
        RulesState::On(r) => {
            let lines = r
                .rules
                .iter()
                .map(|r| RuleLine {
                    name: r.name.clone(),
                    idle_seconds: r.idle_seconds,
                    pressure: r.pressure,
                    under: r.under.clone(),
                    kinds: r.kinds.clone(),
                    ports: r.ports.clone(),
                })
                .collect();
            ("on", lines, None)
        }
    };
    let (due, others) = seen
        .into_iter()
        .partition(|s| s.auto.as_ref().is_some_and(|n| n.state == AutoState::Due));
    Document {
        schema: pier_core::model::SCHEMA_VERSION,
        rules: state,
        file: pier_core::auto::rules::path().ok(),
        unreadable,
        rule,
        paused,
        scheduler: running.map(|v| Runner {
            by: v.by.clone(),
            pid: v.pid,
            written_at: v.written_at,
            every_seconds: v.every_seconds,
        }),
        pressure: running.and_then(|v| v.pressure.clone()),
        due,
        others,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::card::Level;
    use pier_core::model::rules::AutoNote;

    fn seen(state: AutoState, rule: Option<&str>) -> Seen {
        Seen {
            id: "1-1".into(),
            project: "/p/web".into(),
            kind: "vite".into(),
            level: Level::Green,
            idle: None,
            auto: Some(AutoNote {
                state,
                rule: rule.map(str::to_owned),
                due_in_seconds: None,
                why: String::new(),
            }),
        }
    }

    /// A dry run previews the due cards; while paused, also the cards only the pause holds
    /// (held with a rule); never a waiting card, one no rule names, or one held by the rules
    /// being off.
    #[test]
    fn a_dry_run_previews_the_due_and_while_paused_what_the_pause_holds() {
        assert!(previewed(&seen(AutoState::Due, Some("r")), false));
        assert!(!previewed(&seen(AutoState::Held, Some("r")), false));
        assert!(previewed(&seen(AutoState::Held, Some("r")), true));
        assert!(!previewed(&seen(AutoState::Held, None), true), "rules off");
        assert!(!previewed(&seen(AutoState::Waiting, Some("r")), true));
        assert!(!previewed(&seen(AutoState::Never, None), true));
    }
}
