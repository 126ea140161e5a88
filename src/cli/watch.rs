//! `pier watch`: the scheduler in the foreground (docs/design.md §5a). It rescans every few
//! seconds without a sample window, measures each resource's idle clock, and fires the armed
//! stops that are due, each through the whole chain. It ends on Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use super::{exit, resolve_dirs};
use pier_core::auto::lock::{self, SchedulerLock, Who};
use pier_core::auto::scheduler::{Event, Scheduler, SchedulerOptions};
use pier_core::auto::service::{self, Installed};
use pier_core::auto::view;
use pier_core::diagnose::ScanOptions;
use pier_core::front::numbers;
use pier_core::model::arm::Armed;
use pier_core::model::card::{Level, Scan};
use pier_core::model::idle::{Idle, IdleState};
use pier_core::model::outcome::StopReport;
use pier_core::model::rules::AutoNote;
use pier_core::stop::interrupt;
use pier_core::stop::StopOptions;
use pier_core::words::for_terminal;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Seconds between two rescans (1 to 60).
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = numbers::watch_every)]
    every: Duration,
    /// Seconds a card must stay green before its armed stop fires (1 to 3600).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = numbers::settle)]
    settle: Duration,
    /// Only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// One JSON object per line instead of text (docs/watch-json.md).
    #[arg(long)]
    json: bool,
    /// End after N rescans (default: run until Ctrl-C).
    #[arg(long, value_name = "N", value_parser = numbers::rescans)]
    rescans: Option<u64>,
    /// Print the service that runs `pier watch` at login (a systemd user unit; a LaunchAgent
    /// on macOS), and do nothing else.
    #[arg(long, conflicts_with = "install")]
    unit: bool,
    /// Write that service where the user's service manager reads it, and print the command
    /// that turns it on (Pier never runs it).
    #[arg(long)]
    install: bool,
    /// With --install: replace a different file already there.
    #[arg(long, requires = "install")]
    force: bool,
}

/// One line of `pier watch --json`: a rescan's resources.
#[derive(Serialize)]
struct Rescan<'a> {
    event: &'static str,
    scanned_at: &'a str,
    /// Seconds left of the settle after a wake; `null` when none is left.
    settling_seconds: Option<u64>,
    resources: Vec<Seen<'a>>,
}

/// One resource of a rescan.
#[derive(Serialize)]
struct Seen<'a> {
    id: &'a str,
    project: &'a str,
    kind: &'a str,
    level: Level,
    idle: Option<&'a Idle>,
    armed: Option<&'a Armed>,
    /// What the automatic-stop rules say of it; `null` when they are off.
    auto: Option<&'a AutoNote>,
}

/// Runs `pier watch`.
pub fn run(args: WatchArgs) -> ExitCode {
    if args.unit || args.install {
        return service_file(args.install, args.force);
    }
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let system = match exit::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    // One scheduler per user: held until the watch ends (docs/design.md §5a).
    let _lock = match scheduler_lock(&system) {
        Ok(lock) => lock,
        Err(code) => return code,
    };
    if let Err(e) = interrupt::catch() {
        eprintln!("pier: warning: {e}; Ctrl-C ends pier watch at once");
    }
    let mut scheduler = Scheduler::new(SchedulerOptions {
        settle: args.settle,
        ..SchedulerOptions::default()
    });
    if !args.json {
        banner(&args);
    }
    let mut generation = 0;
    let mut said = Said::new();
    loop {
        generation += 1;
        let started = Instant::now();
        let opts = ScanOptions {
            generation,
            under: under.clone(),
            protect: pier_core::config::protect(),
            ..ScanOptions::default()
        };
        // Without a sample window or memory: `Scheduler::rescan` says why.
        // Read at every rescan: an edit of the rules takes effect at the next one.
        let rules = pier_core::auto::rules::read();
        let (scan, events) = match scheduler.rescan(&system, &opts, &stop_options(), &rules, true) {
            Ok(rescanned) => rescanned,
            Err(e) => return exit::failed(&e),
        };
        // What `pier auto` shows while this watch runs.
        let watch = pier_core::auto::lock::Who::Watch;
        view::write_or_log(&system, watch, args.every, &scan, scheduler.pressure());
        let mut open = report(&scan, &scheduler, args.json, &mut said);
        for e in &events {
            open = open && event(e, args.json);
        }
        if let Some(code) = interrupted(&events) {
            return code;
        }
        if !open || args.rescans.is_some_and(|n| generation >= n) || !wait(started + args.every) {
            return ExitCode::SUCCESS;
        }
    }
}

/// `--unit` prints this platform's service for the running binary; `--install` writes it
/// (`service::install`) and prints the command that turns it on.
fn service_file(install: bool, force: bool) -> ExitCode {
    let made = std::env::current_exe()
        .map_err(|e| format!("the running pier binary's path: {e}"))
        .and_then(|exe| service::for_this_platform(&exe).map_err(|e| e.to_string()));
    let s = match made {
        Ok(s) => s,
        Err(why) => return exit::failed(&why),
    };
    if !install {
        print!("{}", s.text);
        return ExitCode::SUCCESS;
    }
    let done = match service::install(&s, force) {
        Ok(Installed::Written) => "Wrote",
        Ok(Installed::Unchanged) => "Already there, unchanged:",
        Err(e) => return exit::failed(&e),
    };
    let path = pier_core::words::path_for_terminal(&s.path);
    say(&format!("{done} {path}\nTurn it on with:\n  {}", s.enable));
    ExitCode::SUCCESS
}

/// The scheduler lock, taken for `pier watch`; a refusal says who holds it, and exit 1. Kept
/// in the state folder instead of the runtime folder is said once, on stderr.
fn scheduler_lock(system: &pier_core::front::System) -> Result<SchedulerLock, ExitCode> {
    let (taken, why) = lock::take(&system.store, Who::Watch);
    if let Some(why) = why {
        eprintln!(
            "pier: the scheduler lock is in the state folder: {}",
            for_terminal(&why.to_string())
        );
    }
    taken.map_err(|e| exit::failed(&e))
}

/// What the watch says as it starts: how often it rescans, when an armed stop fires, and
/// whether rules act.
fn banner(args: &WatchArgs) {
    say(&format!(
        "Watching: a rescan every {} s; an armed stop fires here once its card has been green \
         for {} s. Ctrl-C ends.",
        args.every.as_secs_f64(),
        args.settle.as_secs_f64()
    ));
    say(&rules_line(&pier_core::auto::rules::read()));
}

/// Whether the rules act here, at the start: each rescan reads them again.
fn rules_line(rules: &pier_core::model::rules::RulesState) -> String {
    use pier_core::model::rules::RulesState;
    match rules {
        RulesState::Off => "Rules: off (`pier auto` says how to turn them on).".to_owned(),
        RulesState::On(r) => {
            let names: Vec<String> = r.rules.iter().map(|x| format!("'{}'", x.name)).collect();
            for_terminal(&format!(
                "Rules: on ({}); `pier auto` previews them.",
                names.join(", ")
            ))
            .into_owned()
        }
        RulesState::Unreadable(why) => for_terminal(&format!("Rules are off: {why}")).into_owned(),
    }
}

/// 128 + N when signal N interrupted an armed stop this rescan fired, as `pier stop` exits
/// (docs/design.md §3.10); a Ctrl-C between rescans is how a watch ends, with 0.
fn interrupted(events: &[Event]) -> Option<ExitCode> {
    events.iter().find_map(|e| match e {
        Event::Fired { report, .. } | Event::Ruled { report, .. } => {
            let n = interrupt::number_of(report.interrupted.as_deref()?)?;
            Some(ExitCode::from((128 + n).clamp(0, 255) as u8))
        }
        _ => None,
    })
}

/// How the armed stops run: as `pier stop` runs, its defaults and the user's protect list.
fn stop_options() -> StopOptions {
    StopOptions::default()
}

/// One line of `pier watch --json` for an armed stop that fired or was dropped.
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum EventLine<'a> {
    /// It ran through the chain (docs/stop-json.md's report).
    Fired {
        id: &'a str,
        project: &'a str,
        report: &'a StopReport,
        /// It waits on: refused for what it waits out.
        kept: bool,
    },
    /// Dropped unfired, with why.
    Dropped {
        id: &'a str,
        project: &'a str,
        why: String,
    },
    /// A rule stopped a resource through the chain (docs/stop-json.md's report).
    Ruled {
        id: &'a str,
        project: &'a str,
        rule: &'a str,
        because: &'a str,
        report: &'a StopReport,
    },
    /// The arms could not be read or removed.
    Unreadable { why: String },
}

/// An armed stop's event, as JSON or text.
fn event(e: &Event, json: bool) -> bool {
    let line = match e {
        Event::Fired { arm, report, kept } => EventLine::Fired {
            id: &arm.id,
            project: &arm.project,
            report,
            kept: *kept,
        },
        Event::Dropped { arm, why } => EventLine::Dropped {
            id: &arm.id,
            project: &arm.project,
            why: why.to_string(),
        },
        Event::Ruled {
            rule,
            because,
            project,
            report,
        } => EventLine::Ruled {
            id: &report.id,
            project,
            rule,
            because,
            report,
        },
        Event::Unreadable(e) => EventLine::Unreadable { why: e.to_string() },
    };
    if json {
        return say(&serde_json::to_string(&line).expect("a line serialises"));
    }
    let stamp = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    match line {
        EventLine::Fired { report, kept, .. } => {
            let said = super::stop::report_line(report, super::colour_wanted());
            let still = if kept { ", still armed" } else { "" };
            say(&format!("{stamp}  armed stop{still}: {}", said.trim_end()))
        }
        EventLine::Ruled {
            rule,
            because,
            report,
            ..
        } => {
            let said = super::stop::report_line(report, super::colour_wanted());
            say(&format!(
                "{stamp}  rule '{}' ({because}): {}",
                for_terminal(rule),
                said.trim_end()
            ))
        }
        EventLine::Dropped { id, project, why } => say(&format!(
            "{stamp}  armed stop of {id} in {} dropped: {why}",
            for_terminal(project)
        )),
        EventLine::Unreadable { why } => {
            eprintln!("pier: armed stops: {}", for_terminal(&why));
            true
        }
    }
}

/// Writes one line to stdout; false once nobody reads it (`pier watch | head`): the watch
/// then ends, as every command does on a closed pipe.
fn say(line: &str) -> bool {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// When a growing idle time is said again: at 1, 5, 10 and 30 minutes, then each hour.
fn milestone(seconds: u64) -> u64 {
    match seconds {
        s if s < 60 => 0,
        s if s < 300 => 60,
        s if s < 600 => 300,
        s if s < 1800 => 600,
        s if s < 3600 => 1800,
        s => s / 3600 * 3600,
    }
}

/// Waits until `until`; false when Ctrl-C (or SIGTERM, SIGHUP) came first.
fn wait(until: Instant) -> bool {
    loop {
        if interrupt::PROCESS.raised().is_some() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        // The loop's own timer: it wakes to see Ctrl-C within a tenth of a second.
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// What text mode last said of each resource: it says a resource again only when that changes.
type Said = std::collections::HashMap<String, String>;

/// One rescan, as JSON or as text.
fn report(scan: &Scan, scheduler: &Scheduler, json: bool, said: &mut Said) -> bool {
    let resources: Vec<Seen> = scan
        .projects
        .iter()
        .flat_map(|p| {
            p.resources.iter().map(|r| Seen {
                id: &r.id,
                project: &p.path,
                kind: &r.kind,
                level: r.level,
                idle: r.idle.as_ref(),
                armed: r.armed.as_ref(),
                auto: r.auto.as_ref(),
            })
        })
        .collect();
    if json {
        let line = Rescan {
            event: "rescan",
            scanned_at: &scan.scanned_at,
            settling_seconds: scheduler.settling().map(|d| d.as_secs()),
            resources,
        };
        return say(&serde_json::to_string(&line).expect("a line serialises"));
    }
    let mut now = Said::new();
    let mut open = true;
    for r in resources {
        let armed = r.armed.map_or_else(String::new, |a| {
            format!(" · armed, waiting for {}", a.waiting_for.join("; "))
        });
        let auto = r
            .auto
            .map_or_else(String::new, |n| format!(" · {}", pier_core::words::auto(n)));
        // A growing idle time is said again at its milestones, not at every rescan; a rule's
        // note when its state or rule changes.
        let state = r.idle.map_or_else(String::new, |i| match i.state {
            IdleState::Idle => format!("idle {}", milestone(i.seconds)),
            _ => pier_core::words::idle(i),
        }) + &armed
            + &r.auto
                .map_or_else(String::new, |n| format!("{:?} {:?}", n.state, n.rule));
        if open && said.get(r.id) != Some(&state) {
            let idle = r.idle.map_or_else(String::new, pier_core::words::idle);
            open = say(&format!(
                "{}  {} in {} ({})  {idle}{}{}",
                humantime::format_rfc3339_seconds(std::time::SystemTime::now()),
                for_terminal(r.kind),
                for_terminal(r.project),
                r.id,
                for_terminal(&armed),
                for_terminal(&auto)
            ));
        }
        now.insert(r.id.to_owned(), state);
    }
    *said = now;
    open
}
