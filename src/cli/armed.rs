//! `pier armed`: the armed stops waiting in the state folder (`pier stop --when-safe`), and
//! `--cancel ID…` / `--cancel-all` to call them off. A cancel of an id with no arm says so and
//! exits 3, as a request not met.

use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;
use serde::Serialize;

use super::{print, print_json, EXIT_NOT_ALL_STOPPED};
use pier_core::auto::arms;
use pier_core::model::arm::Arm;
use pier_core::model::SCHEMA_VERSION;
use pier_core::store::Store;
use pier_core::words::{self, for_terminal};

#[derive(Debug, Args)]
pub struct ArmedArgs {
    /// Cancel the armed stops of these resource ids.
    #[arg(long, value_name = "ID", num_args = 1.., conflicts_with = "cancel_all")]
    cancel: Vec<String>,
    /// Cancel every armed stop.
    #[arg(long)]
    cancel_all: bool,
    /// Print one JSON document (schema 1, see docs/armed-json.md) instead of text.
    #[arg(long)]
    json: bool,
}

/// The `pier armed --json` document.
#[derive(Serialize)]
struct ListDocument<'a> {
    schema: u32,
    arms: Vec<&'a Arm>,
    /// Arm records that could not be read; they were kept as they are.
    damaged_records: Vec<String>,
}

/// The `pier armed --cancel … --json` document.
#[derive(Serialize)]
struct CancelDocument<'a> {
    schema: u32,
    cancelled: &'a [Arm],
    /// Ids asked that had no arm.
    not_armed: &'a [String],
    /// Why an arm could not be cancelled (a damaged or another user's record), one sentence
    /// each; it was kept.
    failed: &'a [String],
}

/// Lists, or cancels.
pub fn run(args: ArmedArgs) -> ExitCode {
    if !args.cancel.is_empty() || args.cancel_all {
        if let Err(code) = super::check_resource_ids(&args.cancel) {
            return code;
        }
        let system = match super::open_system() {
            Ok(system) => system,
            Err(code) => return code,
        };
        return cancel(&system.store, &args);
    }
    let system = match super::open_system_for_reading() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let listing = match arms::list(&system.store) {
        Ok(listing) => listing,
        Err(e) => return super::exit::store_failed(&e),
    };
    let damaged: Vec<String> = listing.damaged.iter().map(ToString::to_string).collect();
    for d in &damaged {
        eprintln!("pier: warning: {}", for_terminal(d));
    }
    let arms: Vec<&Arm> = listing.records.iter().map(|(_, a)| a).collect();
    match args.json {
        true => print_json(&ListDocument {
            schema: SCHEMA_VERSION,
            arms,
            damaged_records: damaged,
        }),
        false => print(list_text(&arms).as_bytes()),
    }
}

/// One line per arm: its project, kind and id, when it lapses (or that it has), what it was
/// armed for; and that arms fire only while a scheduler runs.
fn list_text(arms: &[&Arm]) -> String {
    if arms.is_empty() {
        return "No armed stops.\n".to_owned();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut out = String::new();
    for a in arms {
        let waited: Vec<&str> = a.reasons.iter().map(|r| r.words()).collect();
        let lapse = match a.expires_at <= now {
            true => "lapsed",
            false => "lapses",
        };
        let line = format!(
            "{} · {} {} · {lapse} {} · armed for: {}",
            a.project,
            a.kind,
            a.id,
            words::utc_minute(a.expires_at),
            waited.join(", ")
        );
        let _ = writeln!(out, "{}", for_terminal(&line));
    }
    out.push_str(
        "Armed stops fire only while the Pier app or `pier watch` runs; `pier armed --cancel ID` \
         cancels one.\n",
    );
    out
}

/// Cancels the ids asked (or every arm); exit 3 when one had no arm, 1 when one could not be
/// removed.
fn cancel(store: &Store, args: &ArmedArgs) -> ExitCode {
    let ids: Vec<String> = match args.cancel_all {
        true => match arms::list(store) {
            Ok(l) => l.records.into_iter().map(|(_, a)| a.id).collect(),
            Err(e) => return super::exit::store_failed(&e),
        },
        false => args.cancel.clone(),
    };
    let (mut cancelled, mut not_armed, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for id in ids {
        match arms::cancel(store, &id) {
            Ok(Some(arm)) => cancelled.push(arm),
            Ok(None) => not_armed.push(id),
            Err(e) => failed.push(format!("{id}: {e}")),
        }
    }
    let written = match args.json {
        true => print_json(&CancelDocument {
            schema: SCHEMA_VERSION,
            cancelled: &cancelled,
            not_armed: &not_armed,
            failed: &failed,
        }),
        false => print(cancel_text(&cancelled, &not_armed, &failed).as_bytes()),
    };
    if written != ExitCode::SUCCESS {
        written
    } else if !failed.is_empty() {
        ExitCode::from(super::EXIT_FAILED)
    } else if !not_armed.is_empty() {
        ExitCode::from(EXIT_NOT_ALL_STOPPED)
    } else {
        ExitCode::SUCCESS
    }
}

fn cancel_text(cancelled: &[Arm], not_armed: &[String], failed: &[String]) -> String {
    let mut out = String::new();
    for a in cancelled {
        let line = format!(
            "cancelled: the armed stop of {} {} in {}",
            a.kind, a.id, a.project
        );
        let _ = writeln!(out, "{}", for_terminal(&line));
    }
    for id in not_armed {
        let line = format!("not armed: {id} has no armed stop (`pier armed` lists them)");
        let _ = writeln!(out, "{}", for_terminal(&line));
    }
    for f in failed {
        let _ = writeln!(out, "not cancelled: {}", for_terminal(f));
    }
    if cancelled.is_empty() && not_armed.is_empty() && failed.is_empty() {
        out.push_str("No armed stops.\n");
    }
    out
}
