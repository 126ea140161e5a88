//! `pier stop ID...`, `pier stop --project PATH`, `pier stop --all-green [--under DIR]`.
//! A batch goes on past a resource that is refused or fails, and reports each.

mod arm;
mod ask;
mod meant;
mod text;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::render::Style;
use super::{ports, print, resolve_dirs, usage, EXIT_NOT_ALL_STOPPED, EXIT_NOT_RECORDED};
use pier_core::diagnose::port::{self, PortAnswer};
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::{self, project, ScanOptions};
use pier_core::front::{numbers, System};
use pier_core::model::card::{Evidence, Level, Project, Resource, Scan};
use pier_core::model::container::Container;
use pier_core::model::outcome::{ResourceResult, StopReport};
use pier_core::model::reason::Reason;
use pier_core::model::shown::Shown;
use pier_core::model::snapshot::Snapshot;
use pier_core::model::target::{record_prefix_of, TargetKind};
use pier_core::model::SCHEMA_VERSION;
use pier_core::probe;
use pier_core::stop::interrupt;
use pier_core::stop::{Progress, StopOptions};
use pier_core::store::Store;
use pier_core::words::{self, for_terminal};

use text::{ending_text, ports_text, report_text, text, Status};

#[derive(Debug, Args)]
pub struct StopArgs {
    /// Resource ids (`<root pid>-<root start time>`) or container card ids (`container-<12 hex
    /// digits>`), as `pier scan` shows them; or `:PORT`, the one resource that listens on it.
    /// Each is done once. A bare number (a pid or a port) is asked about on a terminal, alone.
    #[arg(value_name = "ID|:PORT")]
    ids: Vec<String>,
    /// Stop every resource of the project at PATH (only green ones are stopped).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["ids", "all_green"])]
    project: Option<PathBuf>,
    /// Stop every green resource (use --under to limit it).
    #[arg(long, conflicts_with = "ids")]
    all_green: bool,
    /// With --all-green: only projects under DIR (repeatable).
    // Not clap's `requires = "all_green"`: clap drops a requirement whose target conflicts with
    // an argument given, so `pier stop ID --under DIR` passed in silence. `stop_options` says so.
    #[arg(long, value_name = "DIR")]
    under: Vec<PathBuf>,
    /// Print one JSON document (schema 1, see docs/stop-json.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Say every detail: who holds each port asked, each process and its outcome, the
    /// timings, the snapshot (by default one line per resource).
    #[arg(short, long)]
    verbose: bool,
    /// Run every check up to the first signal, then say what would be signalled: nothing is
    /// sent and no snapshot is written.
    #[arg(long)]
    dry_run: bool,
    /// Seconds each level of a tree gets to exit after its signal (0 to 600).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = numbers::grace)]
    grace: Duration,
    /// Send SIGTERM anyway to resources named by id that are not green, through every check,
    /// setting aside only the reasons you confirm (asked on a terminal, or --accept); never a
    /// data service, a manager's program, a protected or an unreadable one.
    // Ids only, like --force: `stop_options` refuses it with a port, --project or --all-green.
    #[arg(long, conflicts_with = "force")]
    anyway: bool,
    /// With --anyway: the reasons you accept without being asked, comma-separated, as `pier
    /// scan --json` names them in `reasons` (live_connection, busy, not_orphaned,
    /// unknown_kind, not_restartable).
    #[arg(long, value_name = "REASONS", value_delimiter = ',')]
    accept: Vec<Reason>,
    /// SIGKILL the processes of a resource's last stop that outlived their SIGTERM (after
    /// `pier stop ID` left them running); added to that stop's record, no new snapshot.
    // Not clap's `requires = "ids"`, for the reason `under` gives: `--force --all-green` and
    // `--force --project` passed it and SIGKILLed whatever they selected. `stop_options` refuses.
    #[arg(long)]
    force: bool,
    /// The activity window of the checkpoint chain, in milliseconds (1 to 1000: every check
    /// from the first to the first signal must fit in 2 s).
    #[arg(long = "sample-ms", value_name = "N", default_value = "500",
          value_parser = numbers::stop_sample)]
    sample: Duration,
    /// CPU use above which a member counts as busy, in percent of one core (0 to 10000).
    #[arg(long, value_name = "PCT", default_value_t = Thresholds::default().cpu_percent,
          value_parser = numbers::cpu_percent)]
    cpu_threshold: f64,
    /// Disk I/O above which a resource counts as busy, in bytes per second (0 to 10^12).
    #[arg(long, value_name = "BYTES", default_value_t = Thresholds::default().io_bytes_per_second,
          value_parser = numbers::io_bytes_per_second)]
    io_threshold: f64,
    /// Arm a stop instead of stopping now: Pier stops each resource the moment it is safe
    /// (green, and green for a settle), while the app or `pier watch` runs; `pier armed` lists
    /// and cancels them.
    #[arg(long, conflicts_with_all = ["anyway", "force", "dry_run", "all_green", "project"])]
    when_safe: bool,
    /// With --when-safe: how long the arm waits to be safe before it lapses (default 8h; 1 min
    /// to 7 days: 30min, 8h, 2days).
    #[arg(long, value_name = "DURATION", requires = "when_safe", value_parser = numbers::within)]
    within: Option<Duration>,
    /// With --when-safe: arm it although a live notebook kernel's state (its variables, what
    /// it loaded) is lost when it stops.
    #[arg(long, requires = "when_safe")]
    yes: bool,
}

/// `--within` and `--yes` without `--when-safe`: a usage error. Why checked here: clap leaves
/// `requires` unchecked beside a flag `--when-safe` conflicts with (`--dry-run`), and a
/// forgotten `--when-safe` must never become a stop now.
fn arm_flags_alone(args: &StopArgs) -> Result<(), ExitCode> {
    if args.within.is_some() || args.yes {
        return Err(usage(
            "--within and --yes go with --when-safe, which arms a stop for later; without it \
             `pier stop` stops now: add --when-safe, or leave them out",
        ));
    }
    Ok(())
}

/// A resource a batch did not try to stop, and why: it was not green.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct LeftAlone {
    id: String,
    kind: String,
    level: Level,
    /// The project's folder (or the working directory, outside any project).
    project: String,
    /// The root's pid; `null` for a container.
    pid: Option<u32>,
    /// Its level's evidence, in words.
    reason: String,
}

impl LeftAlone {
    fn of(project: &Project, r: &Resource) -> Self {
        Self {
            id: r.id.clone(),
            kind: r.kind.clone(),
            level: r.level,
            project: project.path.clone(),
            pid: Some(r.root.pid),
            reason: words::level_reasons(r),
        }
    }

    fn of_container(project: &Project, c: &Container) -> Self {
        Self {
            id: c.id.clone(),
            kind: format!("container {}", c.name),
            level: c.level,
            project: project.path.clone(),
            pid: None,
            reason: words::reasons(&c.evidence, c.level),
        }
    }
}

/// The `--json` document (docs/stop-json.md).
#[derive(Serialize)]
struct StopDocument<'a> {
    schema: u32,
    /// Whether this was `--dry-run`: then nothing was sent or written.
    dry_run: bool,
    /// Each `:PORT` asked for: who holds it, and what Pier stops of it.
    ports: &'a [PortAnswer],
    results: &'a [StopReport],
    /// What a batch did not ask to stop (`split_by_level`), with why.
    left_alone: &'a [LeftAlone],
    /// Records in the state folder that could not be read; they were kept as they are.
    damaged_records: Vec<String>,
}

/// Runs `pier stop`: the flags checked, the engine opened, the resources chosen, each stopped
/// in turn (a refusal never stops the batch), the reports printed, the exit code.
pub fn run(mut args: StopArgs) -> ExitCode {
    let mut opts = match checked(&mut args) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    if args.when_safe {
        return arm::run(&args, opts.thresholds);
    }
    if let Err(code) = arm_flags_alone(&args) {
        return code;
    }
    // From here on, Ctrl-C, a kill or a closed terminal interrupt the stop at its seams
    // rather than kill Pier mid-stop (docs/design.md §3.10).
    if let Err(e) = interrupt::catch() {
        eprintln!("pier: warning: {e}; an interruption may leave an unfinished snapshot");
    }
    let system = match super::open_system() {
        Ok(system) => system,
        Err(code) => return code,
    };
    let damaged = damaged_records(&system.store);
    if args.force {
        let show = Show {
            json: args.json,
            verbose: args.verbose,
        };
        return force(&system, opts, &args.ids, show, damaged);
    }
    if args.anyway {
        let shown = ScanOptions {
            sample: args.sample,
            ..selection_options(opts.thresholds)
        };
        match super::anyway::confirm(&args.ids, &args.accept, system.probe.as_ref(), shown) {
            Ok(anyway) => opts.anyway = anyway,
            Err(code) => return code,
        }
    }
    let selected = match select(&args, system.probe.as_ref(), opts.thresholds) {
        Ok(selected) => selected,
        Err(code) => return code,
    };
    let dry_run = opts.dry_run;
    let show = Show {
        json: args.json,
        verbose: args.verbose,
    };
    let (reports, written) = stop_and_show(&system, opts, &selected, show, damaged);
    if written != ExitCode::SUCCESS {
        return written;
    }
    match exit_code(&reports, dry_run) {
        // A port held by something Pier did not stop is a request not met.
        code if code == ExitCode::SUCCESS && selected.ports.iter().any(not_freed) => {
            ExitCode::from(EXIT_NOT_ALL_STOPPED)
        }
        code => code,
    }
}

/// The command line, checked ([`stop_options`]), and what the user typed that is no id settled
/// before the state folder is opened: a malformed id is refused naming the card it may have
/// meant (`meant.rs`); a bare number is asked about (`ask.rs`), and the id a person picked
/// takes its place.
fn checked(args: &mut StopArgs) -> Result<StopOptions, ExitCode> {
    let t = Thresholds {
        cpu_percent: args.cpu_threshold,
        io_bytes_per_second: args.io_threshold,
    };
    let probe = probe::system_probe();
    if let Some(code) = meant::refuse_malformed(&args.ids, probe.as_ref(), t) {
        return Err(code);
    }
    let opts = stop_options(args)?;
    // Asked before Ctrl-C is caught: at the question, Ctrl-C ends Pier, which has done nothing.
    if let Some(id) = ask::bare_number(args, probe.as_ref(), t)? {
        args.ids = vec![id];
    }
    Ok(opts)
}

/// Stops what was selected, as one batch, and shows it: on a terminal, each resource's lines
/// as soon as its report is final and a status line on stderr while the batch checks; piped or
/// with --json, one answer at the end. The reports, and how writing them went.
fn stop_and_show(
    system: &System,
    opts: StopOptions,
    selected: &Selected,
    Show { json, verbose }: Show,
    damaged: Vec<String>,
) -> (Vec<StopReport>, ExitCode) {
    let dry_run = opts.dry_run;
    let stopper = system.stopper(opts);
    let Selected {
        ids,
        left_alone,
        ports,
    } = selected;
    let targets: Vec<(&str, Option<&Shown>)> = ids.iter().map(|id| (id.as_str(), None)).collect();
    let live = !json && std::io::stdout().is_terminal();
    let style = Style {
        colour: live && super::colour_wanted(),
    };
    let mut status = Status::new(live && std::io::stderr().is_terminal() && !dumb_terminal());
    let mut shown = ExitCode::SUCCESS;
    if live {
        let follow = !ids.is_empty() || ports.is_empty();
        shown = print(ports_text(ports, &style, follow, verbose).as_bytes());
    }
    let reports = stopper.stop_all(&targets, &mut |p| match p {
        Progress::Step(step, n) => status.show(step, n),
        Progress::Done(r) if live => {
            status.clear();
            let written = print(report_text(r, &style, verbose).as_bytes());
            if written != ExitCode::SUCCESS {
                shown = written;
            }
        }
        Progress::Done(_) => {}
    });
    status.clear();
    let written = match (live, shown) {
        (true, ExitCode::SUCCESS) if only_ports(&reports, ports) => ExitCode::SUCCESS,
        (true, ExitCode::SUCCESS) => {
            print(ending_text(&reports, left_alone, dry_run, verbose).as_bytes())
        }
        (true, failed) => failed,
        (false, _) => {
            let doc = StopDocument {
                schema: SCHEMA_VERSION,
                dry_run,
                ports,
                results: &reports,
                left_alone,
                damaged_records: damaged,
            };
            print_reports(Show { json, verbose }, &doc)
        }
    };
    (reports, written)
}

/// How `pier stop` shows its answer: one JSON document, or text for a person — one line per
/// resource, or every detail.
#[derive(Clone, Copy)]
struct Show {
    json: bool,
    verbose: bool,
}

/// `pier stop --force ID…`: Force for each id in turn (`Stopper::force`), shown as a stop's
/// reports are.
fn force(
    system: &System,
    opts: StopOptions,
    ids: &[String],
    show: Show,
    damaged: Vec<String>,
) -> ExitCode {
    let dry_run = opts.dry_run;
    let stopper = system.stopper(opts);
    let mut seen = std::collections::HashSet::new();
    let reports: Vec<StopReport> = ids
        .iter()
        .filter(|id| seen.insert(id.as_str()))
        .map(|id| stopper.force(id))
        .collect();
    let doc = StopDocument {
        schema: SCHEMA_VERSION,
        dry_run,
        ports: &[],
        results: &reports,
        left_alone: &[],
        damaged_records: damaged,
    };
    let written = print_reports(show, &doc);
    if written != ExitCode::SUCCESS {
        return written;
    }
    exit_code(&reports, dry_run)
}

/// Only ports were asked, and none named a resource to stop: their answers say it all.
fn only_ports(reports: &[StopReport], ports: &[PortAnswer]) -> bool {
    reports.is_empty() && !ports.is_empty()
}

/// A port asked for that something holds and Pier stops nothing of.
fn not_freed(a: &PortAnswer) -> bool {
    !a.is_free() && a.stops.is_none()
}

/// The flags, checked, as the stop's options: something to stop, well-formed ids, `--under`
/// only with `--all-green`, `--force` only with ids. A wrong one is a usage error, before
/// anything is read, locked or written. (The numbers were bounded by their parsers,
/// `front::numbers`: a grace of 0 to 600 s, a sample of 1 to 1000 ms, finite thresholds.)
pub(super) fn stop_options(args: &StopArgs) -> Result<StopOptions, ExitCode> {
    if args.ids.is_empty() && args.project.is_none() && !args.all_green {
        return Err(usage(
            "say what to stop: resource ids, :PORT, --project PATH, or --all-green",
        ));
    }
    // A bare number is asked about (`ask.rs`), never taken as an id.
    let named: Vec<String> = args
        .ids
        .iter()
        .filter(|a| !ask::is_bare_number(a))
        .cloned()
        .collect();
    super::check_resource_ids(&named)?;
    if let Some(why) = misplaced_flag(args) {
        return Err(usage(why));
    }
    Ok(StopOptions {
        grace: args.grace,
        sample: args.sample,
        thresholds: Thresholds {
            cpu_percent: args.cpu_threshold,
            io_bytes_per_second: args.io_threshold,
        },
        dry_run: args.dry_run,
        requested_by: pier_core::model::RequestedBy::Cli,
        ..StopOptions::default()
    })
}

/// A flag given where it means nothing, or where it would mean too much: `--under` limits
/// `--all-green` alone (with ids or `--project` it would be ignored in silence), and `--force`
/// skips the level and activity checks, so it stops only resources named one by one, never
/// what `--project` or `--all-green` select.
fn misplaced_flag(args: &StopArgs) -> Option<&'static str> {
    if !args.under.is_empty() && !args.all_green && !args.when_safe {
        return Some(
            "--under limits --all-green and --when-safe only; with resource ids or --project \
             it would be ignored (give --all-green --under DIR, or leave --under out)",
        );
    }
    if !args.accept.is_empty() && !args.anyway {
        return Some("--accept confirms the reasons of a stop anyway: give it with --anyway");
    }
    if (args.force || args.anyway) && !ports::asked(&args.ids).is_empty() {
        return Some(
            "--force and --anyway act only on resources named by id, never by port: a port \
             names whatever holds it now (`pier scan :PORT` shows its id)",
        );
    }
    if args.force && args.ids.is_empty() {
        return Some(
            "--force follows one stop of a resource named by id (as `pier stop` reported it), \
             never a whole project or every green resource",
        );
    }
    if args.anyway && args.ids.is_empty() {
        return Some(
            "--anyway stops only resources named by id (as `pier scan` shows them), never a \
             whole project or every green resource: each one's reasons are yours to confirm",
        );
    }
    None
}

/// The records in the state folder that cannot be read (or why the folder could not be
/// listed), each warned about on stderr. They are kept as they are, and the `--json` document
/// names them.
fn damaged_records(store: &Store) -> Vec<String> {
    let damaged: Vec<String> = match store.list::<Snapshot>(record_prefix_of(TargetKind::Tree)) {
        Ok(listing) => listing.damaged.iter().map(ToString::to_string).collect(),
        Err(e) => vec![e.to_string()],
    };
    for d in &damaged {
        eprintln!("pier: warning: {}", for_terminal(d));
    }
    damaged
}

/// The reports on stdout: one `--json` document, or text for a person.
fn print_reports(Show { json, verbose }: Show, doc: &StopDocument) -> ExitCode {
    if json {
        super::print_json(doc)
    } else {
        let style = Style { colour: false };
        let only = only_ports(doc.results, doc.ports);
        let mut out = ports_text(doc.ports, &style, !only, verbose);
        if !only {
            out.push_str(&text(doc.results, doc.left_alone, doc.dry_run, verbose));
        }
        print(out.as_bytes())
    }
}

/// Every outcome that could not be recorded, on stderr; then the exit code: 128 + the signal
/// when one interrupted a stop (as its report says); else 3 if some requested resource was
/// not stopped; else 4 if every one was but some outcome could not be recorded; else 0.
fn exit_code(reports: &[StopReport], dry_run: bool) -> ExitCode {
    for r in reports
        .iter()
        .filter_map(|r| r.record_error.as_ref().map(|e| (&r.id, e)))
    {
        eprintln!("pier: {}: {}", r.0, for_terminal(r.1));
    }
    // From the reports, not the flag: a signal that came after the last stop changed none,
    // and the exit code must agree with what was printed.
    if let Some(n) = reports
        .iter()
        .find_map(|r| r.interrupted.as_deref().and_then(interrupt::number_of))
    {
        return ExitCode::from(128u8.saturating_add(n as u8));
    }
    // A dry run that would stop everything asked is done.
    let done = match dry_run {
        true => ResourceResult::WouldStop,
        false => ResourceResult::Stopped,
    };
    let all_stopped = reports.iter().all(|r| r.result == done);
    if !all_stopped {
        ExitCode::from(EXIT_NOT_ALL_STOPPED)
    } else if reports.iter().any(|r| r.record_error.is_some()) {
        ExitCode::from(EXIT_NOT_RECORDED)
    } else {
        ExitCode::SUCCESS
    }
}

/// What a stop's command line selects.
struct Selected {
    /// The ids to stop, in the order given.
    ids: Vec<String>,
    /// What a batch did not ask to stop (`split_by_level`), with why.
    left_alone: Vec<LeftAlone>,
    /// Each `:PORT` given, answered.
    ports: Vec<PortAnswer>,
}

/// The ids to stop: as given (a `:PORT` as the one green resource that holds it), or every
/// resource of a project, or every green one — and, for the last, every resource in scope it
/// leaves alone because it is not green.
fn select(
    args: &StopArgs,
    probe: &(dyn probe::Probe + Sync),
    t: Thresholds,
) -> Result<Selected, ExitCode> {
    if !args.ids.is_empty() {
        return select_named(&args.ids, args.dry_run, probe, t);
    }
    let under = match &args.project {
        Some(p) => resolve_dirs("--project", std::slice::from_ref(p))?,
        None => resolve_dirs("--under", &args.under)?,
    };
    let opts = ScanOptions {
        under: under.clone(),
        ..selection_options(t)
    };
    let scan = selection_scan(probe, &opts)?;
    if let (Some(_), [folder]) = (&args.project, under.as_slice()) {
        check_project(&scan, folder, opts.home.as_deref())?;
    }
    let whole_project = args.project.is_some();
    let in_scope = scan
        .projects
        .iter()
        .filter(|p| !whole_project || under.iter().any(|u| u.as_os_str() == p.path.as_str()));
    let (ids, left_alone) = split_by_level(in_scope, whole_project);
    Ok(Selected {
        ids,
        left_alone,
        ports: Vec::new(),
    })
}

/// The ids given, in their order, each `:PORT` as the one resource that holds it (none when
/// nothing Pier may stop holds it: its answer says so).
fn select_named(
    given: &[String],
    dry_run: bool,
    probe: &(dyn probe::Probe + Sync),
    t: Thresholds,
) -> Result<Selected, ExitCode> {
    let ports = answer_ports(&ports::asked(given), dry_run, probe, t)?;
    let ids = given
        .iter()
        .filter_map(|id| match port::parse(id) {
            Some(p) => {
                let p = p.ok()?;
                ports.iter().find(|a| a.port == p)?.stops.clone()
            }
            None => Some(id.clone()),
        })
        .collect();
    Ok(Selected {
        ids,
        left_alone: Vec::new(),
        ports,
    })
}

/// `--project PATH` when no card's folder is PATH: a usage error unless PATH is a project's
/// own folder with nothing running in it ([`project_refusal`]).
fn check_project(scan: &Scan, folder: &Path, home: Option<&Path>) -> Result<(), ExitCode> {
    let shown = scan
        .projects
        .iter()
        .any(|p| folder.as_os_str() == p.path.as_str());
    match (
        shown,
        project_refusal(folder, home, &project::marker_on_disk),
    ) {
        (false, Some(why)) => Err(usage(&why)),
        _ => Ok(()),
    }
}

/// The ids a batch stops, and what it leaves alone: every green resource and container; with
/// `whole_project` (`--project`), every one but what no stop ever signals ([`never_offered`]:
/// the stop refuses what is not green — but a protected resource, a data service or a manager's
/// program is left alone, never in a batch).
fn split_by_level<'a>(
    projects: impl Iterator<Item = &'a Project>,
    whole_project: bool,
) -> (Vec<String>, Vec<LeftAlone>) {
    let mut ids = Vec::new();
    let mut left_alone = Vec::new();
    let taken = |level: Level, evidence: &[Evidence]| {
        (whole_project && !never_offered(evidence)) || level == Level::Green
    };
    for p in projects {
        for r in &p.resources {
            match taken(r.level, &r.evidence) {
                true => ids.push(r.id.clone()),
                false => left_alone.push(LeftAlone::of(p, r)),
            }
        }
        for c in &p.containers {
            match taken(c.level, &c.evidence) {
                true => ids.push(c.id.clone()),
                false => left_alone.push(LeftAlone::of_container(p, c)),
            }
        }
    }
    (ids, left_alone)
}

/// What no stop ever signals, by the reason table ([`Reason::never_signalled`]): protected (by
/// Pier's rules or the user's list, or standing for a container: an engine's client), a data
/// service, or a manager's program, which its manager would start again. Never in a batch,
/// Force included.
fn never_offered(evidence: &[Evidence]) -> bool {
    evidence
        .iter()
        .any(|e| Reason::of(e).is_some_and(Reason::never_signalled))
}

/// Who holds each port: one scan of the whole machine — every card, the engines asked, and
/// the listeners that are no candidate — at no sample (the stop's own check samples). In a
/// dry run, the answer says it checks, never that it stops.
fn answer_ports(
    asked: &[u16],
    dry_run: bool,
    probe: &(dyn probe::Probe + Sync),
    t: Thresholds,
) -> Result<Vec<PortAnswer>, ExitCode> {
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let opts = ScanOptions {
        include_others: true,
        ..selection_options(t)
    };
    let scan = selection_scan(probe, &opts)?;
    let answer = match dry_run {
        true => port::answer_in_a_dry_run,
        false => port::answer,
    };
    Ok(asked.iter().map(|&p| answer(&scan, p)).collect())
}

/// A scan that chooses what to stop: at no sample (the stop's check (b) samples), every engine
/// asked, the protect list read, no memory (it shows no card: the stop's re-diagnosis reads it).
fn selection_options(t: Thresholds) -> ScanOptions {
    ScanOptions {
        sample: Duration::ZERO,
        thresholds: t,
        engines: diagnose::Engines::Ask,
        protect: super::protect_list(),
        memory: false,
        ..ScanOptions::default()
    }
}

/// The scan `opts` asks for; one that cannot be made is a sentence on stderr and exit 1.
fn selection_scan(probe: &(dyn probe::Probe + Sync), opts: &ScanOptions) -> Result<Scan, ExitCode> {
    diagnose::scan(probe, opts, &project::marker_on_disk).map_err(|e| super::exit::failed(&e))
}

/// Why `--project PATH` is a usage error when no card's folder is PATH: PATH is inside a
/// project but not its folder, or no project at all (nothing Pier sees runs in it either).
/// `None` when PATH is a project's own folder: nothing runs in it, and "Nothing to stop." is
/// the true answer (exit 0). Found by trying: `pier stop --project <a folder that is no
/// project>` said "Nothing to stop." and exited 0, as if it had looked at a project.
fn project_refusal(
    path: &Path,
    home: Option<&Path>,
    marker_at: &dyn Fn(&Path) -> Option<&'static str>,
) -> Option<String> {
    let shown = path.display();
    if path.parent().is_none() || Some(path) == home {
        return Some(format!(
            "--project {shown}: your home folder and / are never projects; give a project's \
             own folder"
        ));
    }
    match project::find_project(path, home, marker_at) {
        Some(p) if p.path == path => None,
        Some(p) => Some(format!(
            "--project {shown}: not a project's own folder but a folder inside the project {0} \
             (give --project {0})",
            p.path.display()
        )),
        None => Some(format!(
            "--project {shown}: not a project folder (neither it nor a folder above it holds a \
             project marker: {}), and no resource Pier sees runs in it",
            project::MARKERS.join(", ")
        )),
    }
}

/// A terminal that cannot move its cursor (`TERM=dumb`, as in Emacs' shell): the status line
/// rewrites itself with `\r` and an erase sequence, so it would pile up there as noise.
fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|t| t == "dumb")
}

#[cfg(test)]
mod tests;

/// One stop's result for a person, as `pier stop` says it (`pier watch` says each armed stop's).
pub(super) fn report_line(r: &StopReport, colour: bool) -> String {
    text::report_text(r, &super::render::Style { colour }, false)
}
