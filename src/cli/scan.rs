//! `pier scan`: the cards, as text or as the `--json` document.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use serde::Serialize;

use super::render::Style;
use super::{colour_wanted, exit, ports, print, render, resolve_dirs, usage};
use pier_core::diagnose::port::{self, PortAnswer};
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::numbers;
use pier_core::model::card::Scan;
use pier_core::model::rules::RulesState;
use pier_core::probe;

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Only what listens on this TCP port (`:3000`), and what `pier stop :3000` would do.
    #[arg(value_name = ":PORT")]
    port: Option<String>,
    /// Print one JSON document (schema 1, see docs/scan-json.md) instead of cards.
    #[arg(long)]
    json: bool,
    /// How long to sample CPU and disk activity, in milliseconds (0 to 10000); 0 = do not
    /// sample.
    #[arg(long = "sample-ms", value_name = "N", default_value = "500",
          value_parser = numbers::scan_sample)]
    sample: Duration,
    /// Only projects under DIR (repeatable).
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// Also list listening ports that are not candidates, with the reason.
    #[arg(long)]
    all: bool,
    /// CPU use above which a resource counts as busy, in percent of one core (0 to 10000).
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().cpu_percent,
          value_parser = numbers::cpu_percent)]
    cpu_threshold: f64,
    /// Disk I/O above which a resource counts as busy, in bytes per second (0 to 10^12).
    #[arg(long, value_name = "BYTES", default_value_t = Thresholds::default().io_bytes_per_second,
          value_parser = numbers::io_bytes_per_second)]
    io_threshold: f64,
}

/// Runs `pier scan`.
pub fn run(args: ScanArgs) -> ExitCode {
    let port = match asked_port(&args) {
        Ok(port) => port,
        Err(why) => return usage(&why.to_string()),
    };
    let under = match resolve_dirs("--under", &args.under) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let opts = ScanOptions {
        sample: args.sample,
        under,
        // A port's holder may be any listener: every one is looked at.
        include_others: args.all || port.is_some(),
        thresholds: Thresholds {
            cpu_percent: args.cpu_threshold,
            io_bytes_per_second: args.io_threshold,
        },
        engines: diagnose::Engines::Ask,
        protect: super::protect_list(),
        ..ScanOptions::default()
    };
    let probe = probe::system_probe();
    let result = match diagnose::scan(probe.as_ref(), &opts, &project::marker_on_disk) {
        Ok(result) => result,
        Err(e) => return exit::failed(&e),
    };
    let mut result = result;
    show_arms(&mut result);
    // A rules file that cannot be read means rules off, said on every card (§5a).
    if let RulesState::Unreadable(why) = pier_core::auto::rules::read() {
        pier_core::auto::scheduler::off_on_every_card(&mut result, &why);
    }
    if let Some(port) = port {
        return print_port(&result, port, args.json);
    }
    if args.json {
        super::print_json(&result)
    } else {
        print(render::cards(&result, colour_wanted()).as_bytes())
    }
}

/// Each armed resource's card says so (`armed`), with what its reasons wait for: the arms are
/// read, never judged here (a scheduler does that). A state folder that cannot be read shows
/// none, and says nothing: `pier armed` is where arms are read and reported. A scan writes
/// nothing: without a records folder there is no arm, and none is made.
fn show_arms(scan: &mut Scan) {
    let has_records = pier_core::store::default_folder().is_ok_and(|d| d.join("records").is_dir());
    if !has_records {
        return;
    }
    let Ok(store) = pier_core::store::Store::open_for_reading() else {
        return;
    };
    let Ok(listing) = pier_core::auto::arms::list(&store) else {
        return;
    };
    for r in scan
        .projects
        .iter_mut()
        .flat_map(|p| p.resources.iter_mut())
    {
        if let Some((_, a)) = listing.records.iter().find(|(_, a)| a.id == r.id) {
            r.armed = Some(pier_core::model::arm::Armed {
                expires_at: a.expires_at,
                waiting_for: pier_core::auto::arms::waiting_for(r),
            });
        }
    }
}

/// Why `pier scan`'s `:PORT` argument is a usage error.
#[derive(Debug, thiserror::Error)]
enum PortArgError {
    /// Not `:` and a number: an id, say.
    #[error(
        "{0:?}: `pier scan` takes a port as :PORT (e.g. :3000); resources are stopped by id with \
         `pier stop ID`"
    )]
    NotAPort(String),
    /// A colon, and no port after it: `diagnose::port::parse`'s own sentence.
    #[error("{0}")]
    BadPort(String),
    /// With `--under`.
    #[error(
        "--under with {0}: a port is the whole machine's, and a holder outside those folders \
         would look like a free port; leave --under out"
    )]
    WithUnder(String),
}

/// The `:PORT` argument, checked: a port, and never with `--under` (a port is the whole
/// machine's: a holder outside the folders would read as a free port).
fn asked_port(args: &ScanArgs) -> Result<Option<u16>, PortArgError> {
    let Some(arg) = &args.port else {
        return Ok(None);
    };
    let port = match port::parse(arg) {
        None => return Err(PortArgError::NotAPort(arg.clone())),
        Some(parsed) => parsed.map_err(|why| PortArgError::BadPort(why.to_string()))?,
    };
    if !args.under.is_empty() {
        return Err(PortArgError::WithUnder(arg.clone()));
    }
    Ok(Some(port))
}

/// The `pier scan :PORT` document: the scan cut to what holds the port, and the answer.
#[derive(Serialize)]
struct PortScan<'a> {
    #[serde(flatten)]
    scan: &'a Scan,
    /// Who holds the port, and what `pier stop :PORT` would do (docs/scan-json.md).
    port: &'a PortAnswer,
}

/// `pier scan :PORT`: the cards of what holds the port, any other listener on it, and what
/// `pier stop :PORT` would do.
fn print_port(scan: &Scan, port: u16, json: bool) -> ExitCode {
    let answer = port::answer(scan, port);
    let cut = holding(scan, port);
    if json {
        let doc = PortScan {
            scan: &cut,
            port: &answer,
        };
        return super::print_json(&doc);
    }
    let style = Style {
        colour: colour_wanted(),
    };
    let mut out = String::new();
    if !cut.projects.is_empty() {
        let cards_only = Scan {
            other_listeners: None,
            engines: Vec::new(),
            ..cut.clone()
        };
        out.push_str(&render::cards(&cards_only, style.colour));
        out.push('\n');
    }
    out.push_str(&ports::answer_text(&answer, &style, true));
    print(out.as_bytes())
}

/// The scan cut to `port`: the resources and containers that listen on it, in their
/// projects, and the other listeners on it.
fn holding(scan: &Scan, port: u16) -> Scan {
    let mut cut = scan.clone();
    for p in &mut cut.projects {
        p.resources
            .retain(|r| r.ports.iter().any(|x| x.port == port));
        p.containers
            .retain(|c| c.ports.iter().any(|x| x.port == port));
        // The project's level, as these alone make it.
        let levels = p.resources.iter().map(|r| r.level);
        p.level = levels
            .chain(p.containers.iter().map(|c| c.level))
            .max()
            .unwrap_or(p.level);
    }
    cut.projects
        .retain(|p| !p.resources.is_empty() || !p.containers.is_empty());
    if let Some(others) = &mut cut.other_listeners {
        others.retain(|l| l.port == port);
    }
    cut
}
