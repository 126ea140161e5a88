//! `pier stop ID...`, `pier stop --project PATH`, `pier stop --all-green [--under DIR]`.
//! A batch goes on past a resource that is refused or fails, and reports each.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::{print, resolve_dirs, thresholds, usage, EXIT_FAILED, EXIT_NOT_ALL_STOPPED};
use crate::diagnose::model::Level;
use crate::diagnose::rules::Thresholds;
use crate::diagnose::{self, project, ScanOptions};
use crate::probe;
use crate::signal;
use crate::stop::snapshot::Snapshot;
use crate::stop::{wait, ResourceResult, StopOptions, StopReport, Stopper, TieKind};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct StopArgs {
    /// Resource ids (`<root pid>-<root start time>`, as `pier scan` shows them).
    ids: Vec<String>,
    /// Stop every resource of the project at PATH (only green ones are stopped).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["ids", "all_green"])]
    project: Option<PathBuf>,
    /// Stop every green resource (use --under to limit it).
    #[arg(long, conflicts_with = "ids")]
    all_green: bool,
    /// With --all-green: only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR", requires = "all_green")]
    under: Vec<PathBuf>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds each level of a tree gets to exit after its signal.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    grace: f64,
    /// SIGKILL the named resources, skipping the level, connection and activity checks
    /// (identities are still re-verified; other users' processes, PID 1 and Pier are never
    /// touched).
    #[arg(long, requires = "ids")]
    force: bool,
    /// The activity window of the checkpoint chain, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 500)]
    sample_ms: u64,
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().cpu_percent)]
    cpu_threshold: f64,
    #[arg(long, value_name = "BYTES", default_value_t = Thresholds::default().io_bytes_per_second)]
    io_threshold: f64,
}

/// The `--json` document.
#[derive(Serialize)]
struct StopDocument<'a> {
    schema: u32,
    results: &'a [StopReport],
    /// Records in the state folder that could not be read; they were kept as they are.
    damaged_records: Vec<String>,
}

/// Runs `pier stop`.
pub fn run(args: StopArgs) -> ExitCode {
    if args.ids.is_empty() && args.project.is_none() && !args.all_green {
        return usage("say what to stop: resource ids, --project PATH, or --all-green");
    }
    if args.sample_ms == 0 {
        return usage("--sample-ms 0: a stop always samples activity (give at least 1 ms)");
    }
    if !args.grace.is_finite() || args.grace < 0.0 {
        return usage(&format!(
            "--grace {}: must be a number of seconds, zero or more",
            args.grace
        ));
    }
    let thresholds = match thresholds(args.cpu_threshold, args.io_threshold) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let store = match Store::open() {
        Ok(store) => store,
        Err(e) => {
            eprintln!("pier: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let damaged: Vec<String> = match store.list::<Snapshot>("snap-") {
        Ok(listing) => listing.damaged.iter().map(ToString::to_string).collect(),
        Err(e) => vec![e.to_string()],
    };
    for d in &damaged {
        eprintln!("pier: warning: {d}");
    }
    let probe = probe::system_probe();
    let ids = match select(&args, probe.as_ref(), thresholds) {
        Ok(ids) => ids,
        Err(code) => return code,
    };
    let signaller = signal::system_signaller();
    let waiter = wait::system_waiter();
    let stopper = Stopper {
        probe: probe.as_ref(),
        signaller: signaller.as_ref(),
        waiter: waiter.as_ref(),
        store: &store,
        marker_at: &project::marker_on_disk,
        opts: StopOptions {
            grace: Duration::from_secs_f64(args.grace),
            sample: Duration::from_millis(args.sample_ms),
            thresholds,
            force: args.force,
            ..StopOptions::default()
        },
    };
    let reports: Vec<StopReport> = ids.iter().map(|id| stopper.stop(id, None)).collect();
    let written = if args.json {
        let doc = StopDocument {
            schema: 1,
            results: &reports,
            damaged_records: damaged,
        };
        let mut text = serde_json::to_vec_pretty(&doc).expect("reports serialise");
        text.push(b'\n');
        print(&text)
    } else {
        print(text(&reports).as_bytes())
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    for r in reports
        .iter()
        .filter_map(|r| r.record_error.as_ref().map(|e| (&r.id, e)))
    {
        eprintln!("pier: {}: {}", r.0, r.1);
    }
    let all_stopped = reports
        .iter()
        .all(|r| r.result == ResourceResult::Stopped && r.record_error.is_none());
    if all_stopped {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_NOT_ALL_STOPPED)
    }
}

/// The ids to stop: as given, or every resource of a project, or every green one.
fn select(
    args: &StopArgs,
    probe: &dyn probe::Probe,
    t: Thresholds,
) -> Result<Vec<String>, ExitCode> {
    if !args.ids.is_empty() {
        return Ok(args.ids.clone());
    }
    let under = match &args.project {
        Some(p) => resolve_dirs("--project", std::slice::from_ref(p))?,
        None => resolve_dirs("--under", &args.under)?,
    };
    let opts = ScanOptions {
        sample: Duration::ZERO,
        under: under.clone(),
        thresholds: t,
        ..ScanOptions::default()
    };
    let scan = diagnose::scan(probe, &opts, &project::marker_on_disk).map_err(|e| {
        eprintln!("pier: {e}");
        ExitCode::from(EXIT_FAILED)
    })?;
    let ids = scan
        .projects
        .iter()
        .filter(|p| {
            args.project.is_none() || under.iter().any(|u| u.as_os_str() == p.path.as_str())
        })
        .flat_map(|p| p.resources.iter())
        .filter(|r| args.project.is_some() || r.level == Level::Green)
        .map(|r| r.id.clone())
        .collect();
    Ok(ids)
}

/// The reports for a person.
fn text(reports: &[StopReport]) -> String {
    let mut out = String::new();
    if reports.is_empty() {
        out.push_str("Nothing to stop.\n");
    }
    for r in reports {
        let _ = writeln!(
            out,
            "{}  {}  {}",
            r.id,
            r.result.as_str().to_uppercase(),
            r.reason
        );
        for m in &r.members {
            let _ = writeln!(
                out,
                "    pid {:<7} {:<14} {}  {}",
                m.pid,
                m.outcome.as_str(),
                m.command,
                m.detail
            );
        }
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
                n.command,
                n.how,
                n.detail
            );
        }
        if let Some(t) = &r.timings {
            let _ = writeln!(
                out,
                "    check (a) → first signal {:.0} ms, → last signal {:.0} ms (sample {} ms)",
                t.a_to_first_signal_ms, t.a_to_last_signal_ms, t.sample_ms
            );
        }
        if let Some(s) = &r.snapshot {
            let _ = writeln!(out, "    snapshot {s}");
        }
    }
    let stopped = reports
        .iter()
        .filter(|r| r.result == ResourceResult::Stopped)
        .count();
    let _ = writeln!(out, "\n{stopped} of {} stopped", reports.len());
    out
}
