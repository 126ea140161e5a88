//! `pier stop --when-safe ID…`: arms a stop of each resource instead of stopping it now. One
//! sampled scan (so the reasons are fresh) judges each card (`auto::arms::may_arm`); an arm is
//! written to the state folder with this boot's id, and fires while the app or `pier watch`
//! runs (docs/design.md §5a). `pier armed` lists and cancels them.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;

use super::{resolve_dirs, selection_options, selection_scan, StopArgs};
use crate::cli::{print, print_json, EXIT_FAILED, EXIT_NOT_ALL_STOPPED};
use pier_core::auto::arms::{self, ArmAsk, ArmError, ArmRefusal, Armable, DEFAULT_WITHIN};
use pier_core::diagnose::port;
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::ScanOptions;
use pier_core::front::System;
use pier_core::model::arm::Arm;
use pier_core::model::card::{Project, Resource, Scan};
use pier_core::model::target::TargetId;
use pier_core::model::{RequestedBy, SCHEMA_VERSION};
use pier_core::words::{self, for_terminal};

/// One id's answer (docs/armed-json.md).
#[derive(Debug, Serialize)]
struct ArmAnswer {
    /// The id or `:PORT` as typed.
    asked: String,
    /// `"armed"`, `"refused"` or `"failed"` (the state folder).
    result: &'static str,
    /// The arm as written, when armed.
    arm: Option<Arm>,
    /// What it waits for, in words, when armed.
    waiting_for: Vec<String>,
    /// Why not, in one sentence, when refused or failed.
    reason: Option<String>,
}

#[derive(Serialize)]
struct ArmDocument<'a> {
    schema: u32,
    results: &'a [ArmAnswer],
}

/// What one arm needs besides its card: the expiry, the confirmation.
struct Asked {
    within: Duration,
    yes: bool,
}

/// Arms each id given, once each; prints one line per id (or one JSON document); exit 0 when
/// every one is armed, 3 when one was refused, 1 when the state folder failed one.
pub(super) fn run(args: &StopArgs, t: Thresholds) -> ExitCode {
    let system = match crate::cli::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let under = match resolve_dirs("--under", &args.under) {
        Ok(under) => under,
        Err(code) => return code,
    };
    let opts = ScanOptions {
        sample: args.sample,
        under,
        ..selection_options(t)
    };
    let scan = match selection_scan(system.probe.as_ref(), &opts) {
        Ok(scan) => scan,
        Err(code) => return code,
    };
    let asked = Asked {
        within: args.within.unwrap_or(DEFAULT_WITHIN),
        yes: args.yes,
    };
    let mut once = HashSet::new();
    let answers: Vec<ArmAnswer> = args
        .ids
        .iter()
        .filter(|id| once.insert(id.as_str()))
        .map(|id| arm_one(&system, &scan, id, &asked))
        .collect();
    let written = match args.json {
        true => print_json(&ArmDocument {
            schema: SCHEMA_VERSION,
            results: &answers,
        }),
        false => print(text(&answers).as_bytes()),
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    exit_code(&answers)
}

fn exit_code(answers: &[ArmAnswer]) -> ExitCode {
    if answers.iter().any(|a| a.result == "failed") {
        ExitCode::from(EXIT_FAILED)
    } else if answers.iter().any(|a| a.result != "armed") {
        ExitCode::from(EXIT_NOT_ALL_STOPPED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Judges and arms one id, through the one path the app arms through too
/// (`auto::arms::arm_card`).
fn arm_one(system: &System, scan: &Scan, asked_as: &str, asked: &Asked) -> ArmAnswer {
    let answer = |result, arm, waiting_for, reason| ArmAnswer {
        asked: asked_as.to_owned(),
        result,
        arm,
        waiting_for,
        reason,
    };
    let refused = |e: ArmRefusal| answer("refused", None, Vec::new(), Some(e.to_string()));
    let (project, r) = match card(scan, asked_as, asked.yes) {
        Ok(found) => found,
        Err(e) => return refused(e),
    };
    let ask = ArmAsk {
        project: &project.path,
        within: asked.within,
        armed_by: RequestedBy::Cli,
        kernel_state_lost: asked.yes,
    };
    match arms::arm_card(&system.store, system.probe.as_ref(), r, &ask) {
        Ok(written) => answer("armed", Some(written), arms::waiting_for(r), None),
        Err(ArmError::Refused(e)) => refused(e),
        Err(e) => answer("failed", None, Vec::new(), Some(e.to_string())),
    }
}

/// The card `asked` names in `scan` (a `:PORT` as the one resource listening on it); a
/// container's is refused here, a resource's is judged as it is armed.
fn card<'s>(
    scan: &'s Scan,
    asked: &str,
    yes: bool,
) -> Result<(&'s Project, &'s Resource), ArmRefusal> {
    let id = match port::parse(asked) {
        Some(Ok(p)) => holder_of(scan, p)?,
        _ => asked.to_owned(),
    };
    if let Ok(TargetId::Container(_)) = id.parse::<TargetId>() {
        arms::may_arm(Armable::Container(&id), yes)?;
    }
    let (project, r) = scan
        .projects
        .iter()
        .find_map(|p| Some((p, p.resources.iter().find(|r| r.id == id)?)))
        .ok_or(ArmRefusal::NotFound { id })?;
    Ok((project, r))
}

/// The id of the one resource listening on `port`.
fn holder_of(scan: &Scan, port: u16) -> Result<String, ArmRefusal> {
    let holders: Vec<&str> = scan
        .projects
        .iter()
        .flat_map(|p| &p.resources)
        .filter(|r| r.ports.iter().any(|x| x.port == port))
        .map(|r| r.id.as_str())
        .collect();
    match holders.as_slice() {
        [one] => Ok((*one).to_owned()),
        [] => Err(ArmRefusal::Port {
            port,
            held: "no resource Pier sees listens on it".to_owned(),
        }),
        many => Err(ArmRefusal::Port {
            port,
            held: format!("more than one resource listens on it ({})", many.join(", ")),
        }),
    }
}

/// One line per id, and how an arm fires.
fn text(answers: &[ArmAnswer]) -> String {
    let mut out = String::new();
    for a in answers {
        let line = match (&a.arm, &a.reason) {
            (Some(arm), _) => armed_line(arm, &a.waiting_for),
            (None, Some(why)) => format!("not armed: {why}"),
            (None, None) => format!("not armed: {}", a.asked),
        };
        let _ = writeln!(out, "{}", for_terminal(&line));
    }
    if answers.iter().any(|a| a.arm.is_some()) {
        out.push_str(
            "An armed stop fires while the Pier app or `pier watch` runs; `pier armed` lists them.\n",
        );
    }
    out
}

/// "armed: stops vite in ~/web when it is safe (by …) — waiting for … · cancel: …".
fn armed_line(arm: &Arm, waiting_for: &[String]) -> String {
    let waits = match waiting_for.is_empty() {
        true => String::new(),
        false => format!(" — waiting for {}", waiting_for.join("; ")),
    };
    format!(
        "armed: stops {} {} in {} when it is safe (by {}){waits} · cancel: pier armed --cancel {}",
        arm.kind,
        arm.id,
        arm.project,
        words::utc_minute(arm.expires_at),
        arm.id
    )
}
