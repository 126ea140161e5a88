//! `pier doctor`: the self-test (`pier_core::doctor`) as text or JSON (docs/doctor-json.md),
//! and `pier doctor-child`, the hidden command its test process runs.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::render::Style;
use super::{colour_wanted, print, print_json, EXIT_FAILED};
use pier_core::doctor;
use pier_core::model::doctor::{DoctorReport, Status};
use pier_core::words::for_terminal;

/// `pier doctor [--json] [--dump DIR]`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON document instead of text (docs/doctor-json.md).
    #[arg(long)]
    json: bool,
    /// Also write the raw OS buffers the probe decodes, read from the test process (started
    /// with a fixed environment: nothing of yours), and a manifest, into DIR.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

/// `pier doctor-child [--exit]`: the test process (hidden from help).
#[derive(Debug, Args)]
pub struct ChildArgs {
    /// End at once (the zombie check's process).
    #[arg(long)]
    exit: bool,
}

pub fn run(args: DoctorArgs) -> ExitCode {
    let pier = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("pier: Pier could not find its own executable to start a test process: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let report = doctor::run(&doctor::Options {
        pier,
        dump: args.dump,
        sample: doctor::SAMPLE,
        state: None,
    });
    let printed = if args.json {
        print_json(&report)
    } else {
        print(
            text(
                &report,
                &Style {
                    colour: colour_wanted(),
                },
            )
            .as_bytes(),
        )
    };
    if !report.ready {
        return ExitCode::from(EXIT_FAILED);
    }
    printed
}

pub fn child(args: ChildArgs) -> ExitCode {
    match doctor::child::main(args.exit) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pier doctor-child: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// The report for a person: how signals are sent, one line per check, then the verdict.
fn text(r: &DoctorReport, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Pier {} on {}", r.version, r.os);
    let race = if r.signalling.race_free {
        "race-free"
    } else {
        "NOT race-free"
    };
    let _ = writeln!(
        out,
        "Signals: {} ({race}): {}\n",
        style.bold(&r.signalling.name),
        for_terminal(&r.signalling.detail)
    );
    let width = r.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &r.checks {
        let word = match c.status {
            Status::Ok => style.paint("ok     ", "32"),
            Status::Failed if c.needed => style.paint("FAILED ", "1;31"),
            Status::Failed => style.paint("failed ", "33"),
            Status::Skipped => style.paint("skipped", "33"),
        };
        let note = if c.needed {
            ""
        } else {
            " (a stop does without)"
        };
        let _ = writeln!(
            out,
            "  {word}  {:width$}  {}{note}: {}",
            c.name,
            c.what,
            for_terminal(&c.detail)
        );
    }
    if let Some(dump) = &r.dump {
        let _ = writeln!(out, "\nRaw buffers: {}", for_terminal(dump));
    }
    verdict(&mut out, r, style);
    out
}

/// The last line: ready, or not ready and whose fault — the machine's setup, or Pier's.
fn verdict(out: &mut String, r: &DoctorReport, style: &Style) {
    let failed: Vec<&str> = r.failures().map(|c| c.name.as_str()).collect();
    if !failed.is_empty() && r.failures().all(|c| c.setup) {
        let _ = writeln!(
            out,
            "\n{}: {} — this is the machine's setup, not a fault in Pier: do what the check \
             says, then run `pier doctor` again.",
            style.paint("Not ready", "1;31"),
            failed.join(", ")
        );
    } else if failed.is_empty() {
        let _ = writeln!(
            out,
            "\n{}: everything a stop needs works on this machine.",
            style.paint("Ready", "1;32")
        );
    } else {
        let _ = writeln!(
            out,
            "\n{}: {} — Pier will not stop anything it cannot check. Please report this with \
             `pier doctor --json` (and `--dump DIR` for the raw buffers).",
            style.paint("Not ready", "1;31"),
            failed.join(", ")
        );
    }
    offers_nothing(out, r);
}

/// The line under the verdict when the protect list could not be read, for whatever reason:
/// a stop does without it, but a list that cannot be read protects everything, so until it is
/// fixed Pier offers nothing to stop. Whose fault is said only when it is the setup's.
fn offers_nothing(out: &mut String, r: &DoctorReport) {
    let Some(c) = r
        .checks
        .iter()
        .find(|c| c.name == "config_folder" && c.status == Status::Failed)
    else {
        return;
    };
    let whose = match c.setup {
        true => " (the machine's setup, not a fault in Pier)",
        false => "",
    };
    let _ = writeln!(
        out,
        "Fix {}{whose}: until then Pier offers nothing to stop.",
        c.name
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::doctor::{Check, SignalPath, DOCTOR_SCHEMA};

    fn report(status: Status, needed: bool) -> DoctorReport {
        DoctorReport {
            schema: DOCTOR_SCHEMA,
            version: "0.1.0".into(),
            os: "macos aarch64".into(),
            signalling: SignalPath {
                name: "kill".into(),
                race_free: false,
                detail: "no proc_signal_with_audittoken".into(),
            },
            checks: vec![Check {
                name: "environment".into(),
                what: "its environment reads back".into(),
                needed,
                status,
                detail: "withheld\x1b[2J".into(),
                setup: false,
            }],
            ready: status == Status::Ok || !needed,
            dump: None,
        }
    }

    #[test]
    fn a_failed_needed_check_is_named_in_the_verdict_and_escaped() {
        let t = text(&report(Status::Failed, true), &Style { colour: false });
        assert!(t.contains("Signals: kill (NOT race-free)"), "{t}");
        assert!(t.contains("FAILED   environment"), "{t}");
        assert!(t.contains("Not ready: environment"), "{t}");
        assert!(!t.contains('\x1b'), "escapes are shown, not sent: {t}");
    }

    /// A protect list that cannot be read, for any reason, gets the Fix line under the
    /// verdict; only the setup's says so.
    #[test]
    fn a_failed_config_folder_always_says_pier_offers_nothing_until_fixed() {
        let mut r = report(Status::Ok, true);
        r.checks.push(Check {
            name: "config_folder".into(),
            what: "the protect list reads".into(),
            needed: false,
            status: Status::Failed,
            detail: "the protect list /c/protect.toml could not be read: Input/output error".into(),
            setup: false,
        });
        let t = text(&r, &Style { colour: false });
        assert!(t.contains("Ready: everything a stop needs works"), "{t}");
        assert!(
            t.contains("\nFix config_folder: until then Pier offers nothing to stop.\n"),
            "{t}"
        );
        r.checks[1].setup = true;
        r.checks[0].status = Status::Failed;
        let t = text(&r, &Style { colour: false });
        assert!(t.contains("Not ready: environment"), "{t}");
        assert!(
            t.contains(
                "\nFix config_folder (the machine's setup, not a fault in Pier): until then \
                 Pier offers nothing to stop.\n"
            ),
            "{t}"
        );
        r.checks[1].status = Status::Ok;
        let t = text(&r, &Style { colour: false });
        assert!(!t.contains("Fix config_folder"), "{t}");
    }

    #[test]
    fn a_failed_check_a_stop_does_without_leaves_it_ready() {
        let t = text(&report(Status::Failed, false), &Style { colour: false });
        assert!(t.contains("failed   environment"), "{t}");
        assert!(t.contains("(a stop does without)"), "{t}");
        assert!(t.contains("Ready: everything a stop needs works"), "{t}");
    }
}
