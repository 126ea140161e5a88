//! `pier stop --anyway ID…`: the person is shown each resource's reasons and confirms them (on a
//! terminal, or by naming them with `--accept`); the stop then sets aside only those, and only
//! where the table lets a person (`pier_core::model::reason`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::process::ExitCode;

use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::model::card::{Project, Resource, Scan};
use pier_core::model::reason::{reasons_of, Anyway, Reason};
use pier_core::probe::Probe;
use pier_core::words::for_terminal;

use super::usage;

/// The confirmed reasons of each id: `accept` for every one, or what the person confirmed on
/// the terminal for each, after one sampled scan shows them (`sample`). `Err`: a usage error,
/// or the scan failed.
pub fn confirm(
    ids: &[String],
    accept: &[Reason],
    probe: &(dyn Probe + Sync),
    opts: ScanOptions,
) -> Result<Anyway, ExitCode> {
    let mut anyway = Anyway::default();
    if !accept.is_empty() {
        for id in ids {
            anyway.confirm(id, accept.iter().copied().collect());
        }
        return Ok(anyway);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(usage(
            "a stop anyway needs your confirmation: run it on a terminal, or name the reasons \
             you accept with --accept (e.g. --accept not_orphaned,busy, as `pier scan --json` \
             lists them in `reasons`)",
        ));
    }
    let scan = diagnose::scan(probe, &opts, &project::marker_on_disk)
        .map_err(|e| super::exit::failed(&e))?;
    for id in ids {
        // An id with no card here is the stop's to refuse, in its own words.
        let confirmed = match find(&scan, id) {
            Some((p, r)) => ask(p, r)?,
            None => BTreeSet::new(),
        };
        anyway.confirm(id, confirmed);
    }
    Ok(anyway)
}

/// The card of `id` in `scan`, with its project.
fn find<'s>(scan: &'s Scan, id: &str) -> Option<(&'s Project, &'s Resource)> {
    scan.projects
        .iter()
        .find_map(|p| Some((p, p.resources.iter().find(|r| r.id == id)?)))
}

/// Shows `r`'s reasons and asks; the reasons confirmed (none: declined, or green, or one no
/// stop anyway sets aside — the stop then says so).
fn ask(p: &Project, r: &Resource) -> Result<BTreeSet<Reason>, ExitCode> {
    let found = reasons_of(&r.evidence);
    if r.reasons.is_empty() || found.iter().any(|x| !x.person_may_skip()) {
        return Ok(BTreeSet::new());
    }
    eprint!("{}", question(p, r));
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return Ok(BTreeSet::new());
    }
    match answer.trim() {
        "y" | "Y" | "yes" => Ok(found),
        _ => Err(declined(&r.id)),
    }
}

/// Declined: nothing is stopped, exit 3.
fn declined(id: &str) -> ExitCode {
    eprintln!("pier: {id}: not stopped: you declined the stop anyway; nothing was sent");
    ExitCode::from(super::EXIT_NOT_ALL_STOPPED)
}

/// The question for `r`: what it is, each fact against it, what a stop anyway does, and what
/// a restart will and will not bring back.
fn question(p: &Project, r: &Resource) -> String {
    let mut q = format!(
        "{} ({}) in {} is {}:\n",
        r.id,
        for_terminal(&r.kind),
        for_terminal(&p.path),
        r.level.as_str()
    );
    for e in r.evidence.iter().filter_map(|e| Some((Reason::of(e)?, e))) {
        let _ = writeln!(q, "  - {}: {}", e.0, for_terminal(&e.1.message));
    }
    q.push_str(
        "A stop anyway sends SIGTERM leaf to root through every check, setting these aside; \
         a new reason refuses it.\n",
    );
    for after in r.reasons.iter().filter_map(|x| x.after_restart()) {
        let _ = writeln!(q, "{after}");
    }
    q.push_str("Send SIGTERM anyway? [y/N] ");
    q
}
