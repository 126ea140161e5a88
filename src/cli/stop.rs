//! `pier stop ID...`, `pier stop --project PATH`, `pier stop --all-green [--under DIR]`.
//! A batch goes on past a resource that is refused or fails, and reports each.

use std::fmt::Write as _;
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
use pier_core::model::memory::Memory;
use pier_core::model::outcome::{ResourceResult, StopReport, TieKind};
use pier_core::model::reason::Reason;
use pier_core::model::shown::Shown;
use pier_core::model::snapshot::Snapshot;
use pier_core::model::target::{record_prefix_of, TargetKind};
use pier_core::model::SCHEMA_VERSION;
use pier_core::probe;
use pier_core::stop::interrupt;
use pier_core::stop::{Progress, Step, StopOptions};
use pier_core::store::Store;
use pier_core::words::{self, byte_size, for_terminal};

#[derive(Debug, Args)]
pub struct StopArgs {
    /// Resource ids (`<root pid>-<root start time>`) or container card ids (`container-<12 hex
    /// digits>`), as `pier scan` shows them; or `:PORT`, the one resource that listens on it.
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
    /// With `--all-green`: the resources in scope that were not green, so not stopped.
    left_alone: &'a [LeftAlone],
    /// Records in the state folder that could not be read; they were kept as they are.
    damaged_records: Vec<String>,
}

/// Runs `pier stop`: the flags checked, the engine opened, the resources chosen, each stopped
/// in turn (a refusal never stops the batch), the reports printed, the exit code.
pub fn run(args: StopArgs) -> ExitCode {
    let mut opts = match stop_options(&args) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
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
        return force(&system, opts, &args.ids, args.json, damaged);
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
    let (reports, written) = stop_and_show(&system, opts, &selected, args.json, damaged);
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

/// Stops what was selected, as one batch, and shows it: on a terminal, each resource's lines
/// as soon as its report is final and a status line on stderr while the batch checks; piped or
/// with --json, one answer at the end. The reports, and how writing them went.
fn stop_and_show(
    system: &System,
    opts: StopOptions,
    selected: &Selected,
    json: bool,
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
    let mut status = Status::new(live && std::io::stderr().is_terminal());
    let mut shown = ExitCode::SUCCESS;
    if live {
        let follow = !ids.is_empty() || ports.is_empty();
        shown = print(ports_text(ports, &style, follow).as_bytes());
    }
    let reports = stopper.stop_all(&targets, &mut |p| match p {
        Progress::Step(step, n) => status.show(step, n),
        Progress::Done(r) if live => {
            status.clear();
            let written = print(report_text(r, &style).as_bytes());
            if written != ExitCode::SUCCESS {
                shown = written;
            }
        }
        Progress::Done(_) => {}
    });
    status.clear();
    let written = match (live, shown) {
        (true, ExitCode::SUCCESS) if only_ports(&reports, ports) => ExitCode::SUCCESS,
        (true, ExitCode::SUCCESS) => print(ending_text(&reports, left_alone, dry_run).as_bytes()),
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
            print_reports(json, &doc)
        }
    };
    (reports, written)
}

/// `pier stop --force ID…`: Force for each id in turn (`Stopper::force`), shown as a stop's
/// reports are.
fn force(
    system: &System,
    opts: StopOptions,
    ids: &[String],
    json: bool,
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
    let written = print_reports(json, &doc);
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

/// Each port's answer, and a blank line before the reports, if any follow.
fn ports_text(ports: &[PortAnswer], style: &Style, reports_follow: bool) -> String {
    let mut out: String = ports
        .iter()
        .map(|a| ports::answer_text(a, style, false))
        .collect();
    if !out.is_empty() && reports_follow {
        out.push('\n');
    }
    out
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
    super::check_resource_ids(&args.ids)?;
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
    if !args.under.is_empty() && !args.all_green {
        return Some(
            "--under limits --all-green only; with resource ids or --project it would be \
             ignored (give --all-green --under DIR, or leave --under out)",
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
fn print_reports(json: bool, doc: &StopDocument) -> ExitCode {
    if json {
        super::print_json(doc)
    } else {
        let style = Style { colour: false };
        let only = only_ports(doc.results, doc.ports);
        let mut out = ports_text(doc.ports, &style, !only);
        if !only {
            out.push_str(&text(doc.results, doc.left_alone, doc.dry_run));
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
    /// With `--all-green`: the resources in scope that are not green.
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
        return select_named(&args.ids, probe, t);
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
    probe: &(dyn probe::Probe + Sync),
    t: Thresholds,
) -> Result<Selected, ExitCode> {
    let ports = answer_ports(&ports::asked(given), probe, t)?;
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
/// `whole_project` (`--project`), every one that is not protected (the stop refuses what is not
/// green — but never what is protected: that is left alone, never in a batch).
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

/// Protected, by Pier's rules or the user's list, or standing for a container (an engine's
/// client): never in a batch, Force included.
fn never_offered(evidence: &[Evidence]) -> bool {
    use pier_core::model::card::EvidenceKind;
    evidence.iter().any(|e| {
        matches!(
            e.kind,
            EvidenceKind::Protected
                | EvidenceKind::UserProtected
                | EvidenceKind::EngineClient
                | EvidenceKind::DataService
        )
    })
}

/// Who holds each port: one scan of the whole machine — every card, the engines asked, and
/// the listeners that are no candidate — at no sample (the stop's own check samples).
fn answer_ports(
    asked: &[u16],
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
    Ok(asked.iter().map(|&p| port::answer(&scan, p)).collect())
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

/// The reports for a person, then what a batch left alone and why. Every command, reason and
/// folder is shown through [`for_terminal`].
fn text(reports: &[StopReport], left_alone: &[LeftAlone], dry_run: bool) -> String {
    let plain = Style { colour: false };
    let mut out: String = reports.iter().map(|r| report_text(r, &plain)).collect();
    out.push_str(&ending_text(reports, left_alone, dry_run));
    out
}

/// One resource's lines: its id, result, what it is and where, and the reason; each member
/// and newcomer with its command; its timings, its snapshot; and, when a member outlived its
/// signal, how Force would end it.
fn report_text(r: &StopReport, style: &Style) -> String {
    let mut out = String::new();
    headline(&mut out, r, style);
    for a in &r.set_aside {
        let _ = writeln!(
            out,
            "    set aside: {}: {}",
            a.reason,
            for_terminal(&a.fact)
        );
    }
    member_lines(&mut out, r);
    newcomer_lines(&mut out, r);
    would_signal_lines(&mut out, r);
    ending_lines(&mut out, r);
    out
}

/// "ID  RESULT  kind in folder: reason".
fn headline(out: &mut String, r: &StopReport, style: &Style) {
    let what = match (&r.kind, &r.project) {
        (Some(kind), Some(project)) => {
            format!("{} in {}: ", for_terminal(kind), for_terminal(project))
        }
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "{}  {}  {what}{}",
        style.bold(&r.id),
        style.result_word(r.result.as_str()),
        for_terminal(&r.reason)
    );
}

/// Each member with its outcome and command; a container with what its engine was asked.
fn member_lines(out: &mut String, r: &StopReport) {
    for m in &r.members {
        let _ = writeln!(
            out,
            "    pid {:<7} {:<14} {}  {}",
            m.pid,
            m.outcome.as_str(),
            for_terminal(&shown_command(&m.command)),
            for_terminal(&m.detail)
        );
    }
    if let Some(c) = &r.container {
        let signal = for_terminal(&c.signal);
        let how = match c.sent {
            Some(true) => format!("{signal} sent through its engine"),
            Some(false) => format!("{signal} not sent"),
            None => format!("{signal} asked of its engine, unconfirmed"),
        };
        let _ = writeln!(
            out,
            "    container {:<14} {}  {how}: {}",
            c.outcome.as_str(),
            for_terminal(&c.name),
            for_terminal(&c.detail)
        );
    }
}

/// Each process born during the stop, with how it is tied to the tree and its fate.
fn newcomer_lines(out: &mut String, r: &StopReport) {
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
            for_terminal(&shown_command(&n.command)),
            for_terminal(&n.how),
            for_terminal(&n.detail)
        );
    }
}

/// A dry run's signals, in their order.
fn would_signal_lines(out: &mut String, r: &StopReport) {
    for s in &r.would_signal {
        let who = match s.pid {
            Some(pid) => format!("pid {pid:<7}"),
            None => "    ".to_owned() + &" ".repeat(7),
        };
        let _ = writeln!(
            out,
            "    {}. would send {} to {who} {}",
            s.order,
            s.signal,
            for_terminal(&s.command)
        );
    }
}

/// What it freed, its timings, an outcome not recorded, its snapshot, and Force's hint.
fn ending_lines(out: &mut String, r: &StopReport) {
    if let Some(m) = r.freed {
        let _ = writeln!(
            out,
            "    freed about {} ({}, as read before the stop)",
            byte_size(m.bytes),
            m.kind.as_str()
        );
    }
    if let Some(t) = &r.timings {
        let sample = format!("activity sampled over {} ms", t.sample_ms);
        let _ = writeln!(
            out,
            "    first check to first signal {:.0} ms, to last signal {:.0} ms ({sample})",
            t.a_to_first_signal_ms, t.a_to_last_signal_ms
        );
    }
    if let Some(e) = &r.record_error {
        let _ = writeln!(out, "    not recorded: {}", for_terminal(e));
    }
    if let Some(s) = &r.snapshot {
        let s = for_terminal(s);
        let _ = match r.result {
            ResourceResult::Refused | ResourceResult::Failed => writeln!(
                out,
                "    snapshot {s} kept: nothing was signalled, so it is not offered for restart"
            ),
            _ => writeln!(out, "    snapshot {s}"),
        };
    }
    if let Some(hint) = force_hint(r) {
        let _ = writeln!(out, "    → {hint}");
    }
}

/// A command as a report line shows it: the program and a script by file name, cut at 60
/// characters (`words::short_command`); the JSON keeps it whole.
fn shown_command(command: &str) -> String {
    words::short_command(command.split(' ').map(str::as_bytes))
}

/// What Force can do about members that outlived their SIGTERM: offered only after a stop that
/// sent signals (Force's own report has no timings: its SIGKILL is the last step).
fn force_hint(r: &StopReport) -> Option<String> {
    let outlived = r
        .members
        .iter()
        .filter(|m| m.outcome == pier_core::model::outcome::MemberOutcome::StillRunning)
        .count();
    if r.timings.is_none() || outlived == 0 {
        return None;
    }
    Some(format!(
        "`pier stop --force {}` sends SIGKILL to the {outlived} process(es) that outlived \
         SIGTERM (added to this stop's record)",
        r.id
    ))
}

/// What follows the reports: "Nothing to stop." when there are none, what a batch left alone
/// and why, and the summary line.
fn ending_text(reports: &[StopReport], left_alone: &[LeftAlone], dry_run: bool) -> String {
    let mut out = String::new();
    match (reports.is_empty(), left_alone.is_empty()) {
        (true, true) => out.push_str("Nothing to stop.\n"),
        (true, false) => out.push_str("Nothing to stop: nothing here is green.\n"),
        _ => {}
    }
    if !left_alone.is_empty() {
        out.push_str("\nLeft alone (not green):\n");
    }
    for l in left_alone {
        let pid = l.pid.map_or(String::new(), |pid| format!("pid {pid}, "));
        let _ = writeln!(
            out,
            "    {} ({pid}id {}) in {} — {}: {}",
            for_terminal(&l.kind),
            l.id,
            for_terminal(&l.project),
            l.level.as_str(),
            for_terminal(&l.reason)
        );
    }
    if dry_run {
        let would = reports
            .iter()
            .filter(|r| r.result == ResourceResult::WouldStop)
            .count();
        let _ = write!(
            out,
            "\n{would} of {} would be stopped (--dry-run: nothing was sent or written)",
            reports.len()
        );
    } else {
        let stopped = reports
            .iter()
            .filter(|r| r.result == ResourceResult::Stopped)
            .count();
        let _ = write!(out, "\n{stopped} of {} stopped", reports.len());
        out.push_str(&not_stopped_counts(reports));
    }
    if !left_alone.is_empty() {
        let _ = write!(out, ", {} left alone", left_alone.len());
    }
    let freed = reports.iter().filter_map(|r| r.freed);
    if let Some(m) = Memory::total(freed.map(Some)) {
        let _ = write!(out, "; about {} freed", byte_size(m.bytes));
    }
    let unrecorded = reports.iter().filter(|r| r.record_error.is_some()).count();
    if unrecorded > 0 {
        let _ = write!(out, "; {unrecorded} outcome(s) not recorded yet");
    }
    if let Some(signal) = reports.iter().find_map(|r| r.interrupted.as_deref()) {
        let _ = write!(
            out,
            "; interrupted by {signal}: no further level or resource was signalled"
        );
    }
    out.push('\n');
    out
}

/// What became of the resources a batch did not stop, counted by result after "N of M
/// stopped" (" (1 refused, 1 not stopped)"); each one's reason is on its own line above. Why:
/// the selection's scan has no activity sample, so what it chose is not what the stop found;
/// the summary says what the stop's own checks found, nothing else.
fn not_stopped_counts(reports: &[StopReport]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for r in reports
        .iter()
        .filter(|r| r.result != ResourceResult::Stopped)
    {
        let word = r.result.as_str();
        match counts.iter_mut().find(|(w, _)| *w == word) {
            Some((_, n)) => *n += 1,
            None => counts.push((word, 1)),
        }
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(w, n)| format!("{n} {}", w.replace('_', " ")))
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    }
}

/// The status line on stderr while a batch runs on a terminal: the step, rewritten in place,
/// cleared before any other output.
struct Status {
    on: bool,
    shown: bool,
}

impl Status {
    fn new(on: bool) -> Self {
        Self { on, shown: false }
    }

    fn show(&mut self, step: Step, resources: usize) {
        if !self.on {
            return;
        }
        let of = if resources == 1 {
            "1 resource".to_owned()
        } else {
            format!("{resources} resources")
        };
        eprint!("\r\x1b[Kpier: {} ({of})…", step.words());
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left(kind: &str, pid: u32, reason: &str) -> LeftAlone {
        LeftAlone {
            id: format!("{pid}-1000"),
            kind: kind.into(),
            level: Level::Yellow,
            project: "/home/u/docs".into(),
            pid: Some(pid),
            reason: reason.into(),
        }
    }

    /// Found by trying real tools: `pier stop --all-green --under DIR` said "Nothing to stop"
    /// and named none of the yellow and red resources it had left alone.
    #[test]
    fn a_batch_names_each_resource_it_left_alone_and_why() {
        let shell = "parent sh (pid 99) is a live interactive shell";
        let text = text(&[], &[left("vite", 100, shell)], false);
        assert_eq!(
            text,
            format!(
                "Nothing to stop: nothing here is green.\n\nLeft alone (not green):\n    vite \
                 (pid 100, id 100-1000) in /home/u/docs — yellow: {shell}\n\n0 of 0 stopped, 1 \
                 left alone\n"
            )
        );
    }

    #[test]
    fn a_left_alone_folder_and_reason_are_shown_escaped() {
        let mut l = left(
            "vite",
            100,
            "parent \u{1b}]0;x\u{7} (pid 99) is a live shell",
        );
        l.project = "/home/u/a\nb\u{202e}".into();
        let text = text(&[], &[l], false);
        assert!(!text.contains(['\u{1b}', '\u{7}', '\u{202e}']), "{text:?}");
        assert!(
            text.contains(
                "\n    vite (pid 100, id 100-1000) in /home/u/a\\nb\\u{202e} — yellow: parent \
                 \\e]0;x\\x07 (pid 99) is a live shell\n"
            ),
            "{text}"
        );
    }

    /// A stopped resource says about how much it freed, as read before the stop; a refused
    /// one says nothing of it, and the summary adds up the rest.
    #[test]
    fn a_stop_says_about_what_it_freed() {
        use pier_core::model::memory::MemoryKind;
        let report = |id: &str, result, bytes: Option<u64>| StopReport {
            kind: None,
            project: None,
            result,
            reason: "why".into(),
            freed: bytes.map(|bytes| Memory {
                bytes,
                kind: MemoryKind::Proportional,
            }),
            ..blank(id)
        };
        let reports = [
            report("1-1", ResourceResult::Stopped, Some(48_200_000)),
            report("2-1", ResourceResult::PartiallyStopped, Some(1_800_000)),
            report("3-1", ResourceResult::Refused, None),
        ];
        let text = text(&reports, &[], false);
        assert!(
            text.starts_with(
                "1-1  STOPPED  why\n    freed about 48.2 MB (proportional, as read before the \
                 stop)\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "\n1 of 3 stopped (1 partially stopped, 1 refused); about 50.0 MB freed\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches("freed about").count(), 2, "{text}");
    }

    #[test]
    fn a_summary_counts_what_the_stops_own_checks_found() {
        let mut refused = blank("1-1");
        refused.result = ResourceResult::Refused;
        let mut stopped = blank("2-1");
        stopped.result = ResourceResult::Stopped;
        let mut none = blank("3-1");
        none.result = ResourceResult::NotStopped;
        let shown = ending_text(&[refused.clone(), stopped, none, refused], &[], false);
        assert_eq!(shown, "\n1 of 4 stopped (2 refused, 1 not stopped)\n");
    }

    #[test]
    fn nothing_in_scope_says_nothing_to_stop() {
        assert_eq!(
            text(&[], &[], false),
            "Nothing to stop.\n\n0 of 0 stopped\n"
        );
    }

    /// Found by trying: a server that outlived its SIGTERM ended `partially_stopped` with no
    /// word of `--force`. The hint names the id and how many outlived it, and is never given
    /// after Force (whose report has no timings).
    #[test]
    fn a_member_that_outlived_its_sigterm_gets_a_force_hint_and_force_does_not() {
        use pier_core::model::outcome::{MemberOutcome, MemberReport, Timings};
        let member = |pid: u32, outcome| MemberReport {
            pid,
            start_time: 1000,
            command: "python3 server.py".into(),
            outcome,
            detail: String::new(),
        };
        let mut r = blank("100-1000");
        r.result = ResourceResult::NotStopped;
        r.members = vec![member(100, MemberOutcome::StillRunning)];
        r.timings = Some(Timings {
            a_to_first_signal_ms: 1.0,
            a_to_last_signal_ms: 1.0,
            sample_ms: 500,
        });
        let hint = force_hint(&r).unwrap();
        assert!(
            hint.starts_with("`pier stop --force 100-1000` sends SIGKILL to the 1 process(es)"),
            "{hint}"
        );
        r.members = vec![
            member(101, MemberOutcome::StillRunning),
            member(100, MemberOutcome::Stopped),
        ];
        assert!(force_hint(&r).is_some(), "a child outlived it");
        r.timings = None;
        assert_eq!(force_hint(&r), None, "after Force");
        r.timings = Some(Timings {
            a_to_first_signal_ms: 1.0,
            a_to_last_signal_ms: 1.0,
            sample_ms: 500,
        });
        r.members = vec![member(100, MemberOutcome::Stopped)];
        assert_eq!(force_hint(&r), None, "nothing outlived its signal");
    }

    fn blank(id: &str) -> StopReport {
        StopReport {
            kind: Some("python-http-server".into()),
            project: Some("/h/u/app".into()),
            ..StopReport::new(id, ResourceResult::Stopped, "")
        }
    }

    /// `pier stop ARGS`, as clap parses it.
    fn parse(args: &[&str]) -> Result<StopArgs, clap::Error> {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            stop: StopArgs,
        }
        <Line as clap::Parser>::try_parse_from(std::iter::once("stop").chain(args.iter().copied()))
            .map(|l| l.stop)
    }

    /// Found by trying: clap drops `requires = "all_green"` when ids are given, so
    /// `pier stop ID --under DIR` stopped ID and ignored `--under` in silence.
    #[test]
    fn under_without_all_green_is_a_usage_error_not_ignored() {
        for args in [
            &["1-1", "--under", "/tmp"][..],
            &["--project", "/tmp", "--under", "/tmp"],
        ] {
            let why = misplaced_flag(&parse(args).unwrap()).expect("refused");
            assert!(why.starts_with("--under limits --all-green only"), "{why}");
        }
        assert_eq!(
            misplaced_flag(&parse(&["--all-green", "--under", "/tmp"]).unwrap()),
            None
        );
    }

    /// Found by trying: `pier stop --force --all-green` and `--force --project DIR` passed
    /// clap's `requires = "ids"` the same way. Force and a stop anyway take ids only.
    #[test]
    fn force_and_a_stop_anyway_are_only_for_resources_named_by_id() {
        for (args, said) in [
            (&["--force", "--all-green"][..], "--force follows one stop"),
            (
                &["--force", "--project", "/tmp"],
                "--force follows one stop",
            ),
            (
                &["--anyway", "--all-green"],
                "--anyway stops only resources named by id",
            ),
            (&["--anyway", "--accept", "busy", ":3000"], "never by port"),
            (&["--accept", "busy", "1-1"], "give it with --anyway"),
        ] {
            let why = misplaced_flag(&parse(args).unwrap()).expect("refused");
            assert!(why.contains(said), "{args:?}: {why}");
        }
        assert_eq!(misplaced_flag(&parse(&["--force", "1-1"]).unwrap()), None);
        assert_eq!(misplaced_flag(&parse(&["--anyway", "1-1"]).unwrap()), None);
    }

    /// A stop's sample over a second is refused by clap, with the parser's sentence, before
    /// `run` could open the state folder.
    #[test]
    fn a_stop_sample_that_cannot_fit_its_deadline_is_refused_at_parse() {
        use std::error::Error as _;
        let e = parse(&["--sample-ms", "2500", "1-1"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        assert_eq!(
            e.source().map(ToString::to_string),
            numbers::stop_sample("2500").err().map(|e| e.to_string())
        );
        let args = parse(&["--sample-ms", "1000", "--grace", "0.25", "1-1"]).unwrap();
        let opts = stop_options(&args).unwrap();
        assert_eq!(opts.sample, Duration::from_secs(1));
        assert_eq!(opts.grace, Duration::from_millis(250));
        let defaults = stop_options(&parse(&["1-1"]).unwrap()).unwrap();
        assert_eq!(defaults.sample, Duration::from_millis(500));
        assert_eq!(defaults.grace, Duration::from_secs(5));
        assert_eq!(defaults.thresholds, Thresholds::default());
    }

    /// Found by trying: `pier stop --project <a folder that is no project>` said "Nothing to
    /// stop." and exited 0.
    #[test]
    fn a_project_flag_names_a_projects_own_folder() {
        let markers = |d: &Path| (d == Path::new("/h/u/app")).then_some("package.json");
        let home = Some(Path::new("/h/u"));
        assert_eq!(
            project_refusal(Path::new("/h/u/app"), home, &markers),
            None,
            "a project with nothing running: nothing to stop"
        );
        assert_eq!(
            project_refusal(Path::new("/h/u/app/src"), home, &markers).unwrap(),
            "--project /h/u/app/src: not a project's own folder but a folder inside the \
             project /h/u/app (give --project /h/u/app)"
        );
        let none = project_refusal(Path::new("/h/u/notes"), home, &markers).unwrap();
        assert!(
            none.starts_with("--project /h/u/notes: not a project folder (neither it nor"),
            "{none}"
        );
        assert!(none.contains(".git, package.json, Cargo.toml"), "{none}");
        for never in ["/h/u", "/"] {
            let why = project_refusal(Path::new(never), home, &|_| Some(".git")).unwrap();
            assert!(why.contains("never projects"), "{why}");
        }
    }
}
