//! Diagnosis: from what the probe read to cards with levels and evidence (docs/design.md §2).
//!
//! One pass: process table → the user's candidates (known tool kinds, or listeners inside a
//! project) → their roots → resources (root + live descendants) → projects → one activity
//! sample for every kept member at once → evidence per resource → levels.
//!
//! Invariants: only the current user's processes are candidates; every fact that could not be
//! read becomes evidence against stopping (never "nothing there"); a failure spoils one
//! resource, never the scan — only an unreadable process table fails the scan as a whole.

pub mod clients;
mod complete;
pub mod connections;
mod containers;
pub mod data;
pub mod debugging;
mod find;
pub mod helpers;
pub mod judge;
pub mod kinds;
pub mod managers;
mod memory;
mod others;
pub mod place;
pub mod port;

pub mod project;
pub mod respawners;
pub mod rules;
mod shared;
pub mod suggest;
pub mod tree;
pub mod unix_clients;

pub(crate) mod evaluate;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::model::card::{Level, Project, Resource, Scan, SCHEMA_VERSION};
use crate::probe::{Pid, Probe, ProbeError, ProcessDetails, SocketTable, Survey};
use project::ProjectDir;
use rules::Thresholds;
use tree::ProcessTable;

/// How to scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// The worker's scan counter, carried into the result.
    pub generation: u64,
    /// The activity window; zero means "not sampled".
    pub sample: Duration,
    /// Keep only projects (or, outside any project, working directories) under these folders.
    pub under: Vec<PathBuf>,
    /// Also list listeners that are not candidates.
    pub include_others: bool,
    /// The activity above which a resource counts as busy.
    pub thresholds: Thresholds,
    /// `$HOME`, which is never a project.
    pub home: Option<PathBuf>,
    /// Which container engines to ask for their containers' cards.
    pub engines: Engines,
    /// The user's protect list (`crate::config::protect`): what it names is never green.
    pub protect: crate::model::protect::Protect,
    /// Read the members' memory (`memory.rs`): for the cards a person sees and a stop's
    /// snapshot; not for the stop's checks and rescans, which must be quick and show nothing.
    pub memory: bool,
}

/// Which container engines a scan asks (`containers::find_engines`, `containers::ask_engines`).
#[derive(Debug, Clone, Default)]
pub enum Engines {
    /// None: a scan of processes only (the stop's re-diagnosis, which judges process trees,
    /// and tests of processes).
    #[default]
    NotAsked,
    /// Every engine found on this machine, asked while the process table is read.
    Ask,
    /// What the engines said, read by the caller, and what their counters would say over the
    /// scan's sample (`containers::sample`), by container id (the tests' scripted engines).
    Given(
        Vec<crate::containers::EngineRead>,
        crate::containers::sample::Samples,
    ),
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            generation: 1,
            sample: Duration::from_millis(500),
            under: Vec::new(),
            include_others: false,
            thresholds: Thresholds::default(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            engines: Engines::NotAsked,
            protect: Default::default(),
            memory: true,
        }
    }
}

/// Why a scan could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The process table could not be read, so there is nothing to judge.
    #[error("Pier could not read the process table: {0}")]
    Processes(#[from] ProbeError),
}

/// Answers "which project marker does this folder hold?" (the disk, or a test's table).
pub type MarkerLookup<'a> = &'a (dyn Fn(&Path) -> Option<&'static str> + Sync);

/// Everything read once per scan, shared by the steps below.
pub(crate) struct Facts<'a> {
    pub probe: &'a dyn Probe,
    pub table: ProcessTable,
    pub sockets: Result<SocketTable, ProbeError>,
    /// `sockets` indexed once, for judging every resource against it.
    pub index: connections::SocketIndex,
    pub uid: u32,
    /// Pier's ancestors (Pier itself is `probe.own_pid()`).
    pub pier_ancestors: HashSet<Pid>,
    /// The user's processes (or processes of unknown owner) that exist but could not be read.
    pub unreadable: Vec<judge::Finding>,
    /// Other users' processes the survey saw and did not read, and no step has read since
    /// (`complete.rs`).
    sighted: HashSet<Pid>,
    details: HashMap<Pid, Option<ProcessDetails>>,
    /// What the scan's tmux servers answered (`place::Asked`): each pane asked once.
    tmux: place::Asked,
}

impl<'a> Facts<'a> {
    /// What the survey read, indexed, with Pier's lineage read in full (Pier and its
    /// ancestors are never stopped); and the user's live processes, the candidates.
    fn new(probe: &'a dyn Probe, survey: Survey) -> (Self, Vec<Pid>) {
        let list = survey.processes;
        let uid = probe.current_uid();
        let own = crate::probe::own_live(&list, uid);
        let table = ProcessTable::new(list.processes);
        let unreadable = judge::unreadable_of(&list.unreadable, uid);
        let sockets = survey.sockets;
        let index = match &sockets {
            Ok(t) => connections::SocketIndex::new(&t.sockets),
            Err(_) => connections::SocketIndex::default(),
        };
        let mut facts = Facts {
            probe,
            table,
            sockets,
            index,
            uid,
            pier_ancestors: HashSet::new(),
            unreadable,
            sighted: list.sighted.into_iter().collect(),
            details: HashMap::new(),
            tmux: place::Asked::default(),
        };
        facts.complete_lineage(probe.own_pid());
        facts.pier_ancestors = facts.table.ancestors(probe.own_pid()).into_iter().collect();
        (facts, own)
    }

    /// exe, cwd and cgroup, read once per pid per scan. `None`: the process is gone.
    pub fn details(&mut self, pid: Pid) -> Option<&ProcessDetails> {
        let probe = self.probe;
        self.details
            .entry(pid)
            .or_insert_with(|| probe.details(pid))
            .as_ref()
    }

    /// Reads the argv the survey left unread for `pid`. A process gone since keeps an empty
    /// argv, which makes it nothing: never a candidate, never part of a launch chain.
    fn fill_argv(&mut self, pid: Pid) {
        let Some(p) = self.table.get(pid).filter(|p| p.argv_unread) else {
            return;
        };
        let argv = self.probe.argv(p.identity).unwrap_or_default();
        self.table.set_argv(pid, argv);
    }

    /// Fills the argv of `pid` and of every ancestor, which the root walk judges by argv,
    /// reading the rows of ancestors the survey only sighted.
    fn fill_lineage(&mut self, pid: Pid) {
        self.complete_lineage(pid);
        let mut seen = HashSet::new();
        let mut cur = pid;
        while cur > 1 && seen.insert(cur) {
            self.fill_argv(cur);
            let Some(p) = self.table.get(cur) else {
                break;
            };
            cur = p.ppid;
        }
    }

    /// The container `pid` runs in, by its cgroup (`containers::processes`).
    pub fn container_of(&mut self, pid: Pid) -> Option<String> {
        let cgroup = self.details(pid)?.cgroup.as_ref()?.as_ref().ok()?;
        crate::containers::processes::container_of_cgroup(cgroup).map(str::to_owned)
    }

    /// Whether `pid` is a watcher by its words, its program judged by its path
    /// (`kinds::launch::watches`).
    fn watches(&mut self, pid: Pid) -> bool {
        let details = self.details(pid).cloned();
        let Some(p) = self.table.get(pid) else {
            return false;
        };
        let exe = details.as_ref().and_then(|d| d.exe.as_ref().ok());
        let cwd = details.as_ref().and_then(|d| d.cwd.as_ref().ok());
        let uid = self.uid;
        let owns = |path: &Path| kinds::launch::owned_by(uid, path);
        kinds::launch::watches(&kinds::launch::Seen {
            p,
            exe: exe.map(PathBuf::as_path),
            cwd: cwd.map(PathBuf::as_path),
            owns: Some(&owns),
        })
    }

    fn cwd(&mut self, pid: Pid) -> Option<PathBuf> {
        self.details(pid)?.cwd.clone().ok()
    }
}

/// A resource found, before it is judged.
pub(crate) struct Draft {
    pub root: Pid,
    pub members: Vec<Pid>,
    pub project: Option<ProjectDir>,
    /// Where the card goes: the project folder, or the root's cwd outside any project.
    pub place: PathBuf,
}

/// Runs one scan.
pub fn scan(
    probe: &(dyn Probe + Sync),
    opts: &ScanOptions,
    marker_at: MarkerLookup,
) -> Result<Scan, ScanError> {
    let started = std::time::Instant::now();
    let (survey, engine_reads) = survey_and_engines(probe, opts);
    let survey = survey?;
    let surveyed = started.elapsed();
    let (mut facts, own) = Facts::new(probe, survey);
    let judged = judge_all(
        probe,
        (&mut facts, &own),
        opts,
        marker_at,
        (&engine_reads, started),
    );
    let containers::Found {
        cards,
        claimed: published,
        engines,
    } = judged.containers;
    let mut projects = judged.projects;
    place_containers(&mut projects, opts, cards);
    name_reasons(projects.values_mut());
    tracing::debug!(
        "scan {}: survey {:.1} ms, resources {:.1} ms, sample and judgement {:.1} ms",
        opts.generation,
        surveyed.as_secs_f64() * 1e3,
        (judged.found - surveyed).as_secs_f64() * 1e3,
        (started.elapsed() - judged.found).as_secs_f64() * 1e3,
    );
    let claimed: HashSet<Pid> = judged.members.iter().copied().collect();
    let other_listeners = opts.include_others.then(|| {
        let unasked = engines
            .iter()
            .find(|e| e.error.is_some())
            .map(|e| format!("{} at {}", e.engine, e.host));
        others::other_listeners(&mut facts, &claimed, &published, unasked, &opts.under)
    });
    Ok(Scan {
        schema: SCHEMA_VERSION,
        generation: opts.generation,
        scanned_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        sample_ms: opts.sample.as_millis() as u64,
        projects: projects.into_values().collect(),
        other_listeners,
        engines,
    })
}

/// Each card's reasons, from its final evidence (`model::reason`): what its level rests on, as
/// one typed reason per kind of fact against it.
fn name_reasons<'p>(projects: impl Iterator<Item = &'p mut Project>) {
    use crate::model::reason::reasons_of;
    for p in projects {
        for r in &mut p.resources {
            r.reasons = reasons_of(&r.evidence).into_iter().collect();
        }
        for c in &mut p.containers {
            c.reasons = reasons_of(&c.evidence).into_iter().collect();
        }
    }
}

/// The survey of the user's processes, and what the engines say of their containers: asked
/// over their sockets on a thread of their own while the process table is read (or, in
/// tests, given).
fn survey_and_engines(
    probe: &(dyn Probe + Sync),
    opts: &ScanOptions,
) -> (
    Result<Survey, ProbeError>,
    Vec<crate::containers::EngineRead>,
) {
    std::thread::scope(|scope| {
        let asked = matches!(opts.engines, Engines::Ask)
            .then(crate::containers::find_engines)
            .filter(|found| !found.is_empty())
            .map(|found| scope.spawn(move || crate::containers::ask_engines(found)));
        let survey = probe.survey_own(&kinds::name_may_matter);
        let reads = match (&opts.engines, asked) {
            (_, Some(h)) => h.join().expect("an engine read never panics"),
            (Engines::Given(reads, _), None) => reads.clone(),
            _ => Vec::new(),
        };
        (survey, reads)
    })
}

/// What a scan found and judged, before its containers join their groups.
struct Judged {
    /// Every member of every resource found.
    members: Vec<Pid>,
    /// The resources' cards, by group.
    projects: BTreeMap<PathBuf, Project>,
    /// The containers' cards, and what the engines said.
    containers: containers::Found,
    /// When the resources were found, since the scan started.
    found: Duration,
}

/// Finds the resources, samples their members and the containers over one window, and judges
/// each. The members' memory is read on threads of its own (`memory.rs`) from the moment each
/// is known: while the resources are found, while the samples wait, and while they are
/// judged.
fn judge_all(
    probe: &(dyn Probe + Sync),
    (facts, own): (&mut Facts, &[Pid]),
    opts: &ScanOptions,
    marker_at: MarkerLookup,
    (engine_reads, started): (&[crate::containers::EngineRead], std::time::Instant),
) -> Judged {
    std::thread::scope(|scope| {
        let mut memory = opts.memory.then(|| memory::Reader::new(scope, probe));
        // With `--under`, a member is known to be shown only once its draft is kept.
        let early = opts.under.is_empty();
        let drafts = find::find_resources(facts, own, opts, marker_at, &mut |pid| {
            if let Some(reader) = memory.as_mut().filter(|_| early) {
                reader.send(pid);
            }
        });
        let members: Vec<Pid> = drafts.iter().flat_map(|d| d.members.clone()).collect();
        if let Some(reader) = &mut memory {
            members.iter().for_each(|&pid| reader.send(pid));
        }
        let found = started.elapsed();
        let (sample, container_sample) = samples(probe, opts, engine_reads, &members);
        let mut projects: BTreeMap<PathBuf, Project> = BTreeMap::new();
        for draft in &drafts {
            place_resource(&mut projects, facts, draft, opts, sample.as_ref());
        }
        let containers = containers::cards(
            facts,
            engine_reads,
            (container_sample.as_ref(), opts.thresholds),
            opts.home.as_deref(),
            &opts.under,
            marker_at,
        );
        if let Some(memory) = memory {
            let read = memory.finish();
            memory::fill(projects.values_mut(), read);
        }
        Judged {
            members,
            projects,
            containers,
            found,
        }
    })
}

/// Judges one draft and puts its card in its group, with the user's protect list asked of
/// its folders (its own, and its members' working directories) and ports.
fn place_resource(
    projects: &mut BTreeMap<PathBuf, Project>,
    facts: &mut Facts,
    draft: &Draft,
    opts: &ScanOptions,
    sample: Option<&crate::probe::ActivitySample>,
) {
    let mut resource = evaluate::resource(facts, draft, sample, opts.thresholds);
    let ports: Vec<u16> = resource.ports.iter().map(|p| p.port).collect();
    let Resource {
        evidence,
        level,
        members,
        ..
    } = &mut resource;
    let mut places = vec![draft.place.as_path()];
    places.extend(
        members
            .iter()
            .filter_map(|m| m.cwd.as_deref().map(Path::new)),
    );
    protect(opts, (&places, &ports, None), evidence, level);
    let marker = draft.project.as_ref().map(|p| p.marker.to_owned());
    let project = group(projects, &draft.place, folder_name(&draft.place), marker);
    project.level = project.level.max(resource.level);
    project.resources.push(resource);
}

/// Puts each container's card in its group, with the user's protect list asked of its folder,
/// ports and name; each group's containers by name.
fn place_containers(
    projects: &mut BTreeMap<PathBuf, Project>,
    opts: &ScanOptions,
    cards: Vec<(containers::Place, crate::model::container::Container)>,
) {
    for (place, mut card) in cards {
        let ports: Vec<u16> = card.ports.iter().map(|p| p.port).collect();
        let names = (
            &[place.path.as_path()][..],
            &ports[..],
            Some(card.name.as_str()),
        );
        protect(opts, names, &mut card.evidence, &mut card.level);
        let project = group(projects, &place.path, place.name, place.marker);
        project.level = project.level.max(card.level);
        project.containers.push(card);
    }
    for p in projects.values_mut() {
        p.containers.sort_by(|a, b| a.name.cmp(&b.name));
    }
}

/// The user's protect list asked of one card — its folders, ports and (a container's) name —
/// and its evidence and level as the list makes them (`rules::user_protected`).
fn protect(
    opts: &ScanOptions,
    (places, ports, name): (&[&Path], &[u16], Option<&str>),
    evidence: &mut Vec<crate::model::card::Evidence>,
    level: &mut Level,
) {
    if let Some(e) = rules::user_protected(&opts.protect, places, ports, name) {
        evidence.push(e);
        *level = rules::level_of(evidence);
    }
}

/// The processes' activity over the scan's window and the containers' (their cgroup counters
/// over the same window, or their engines' statistics), side by side; neither when unsampled.
fn samples(
    probe: &dyn Probe,
    opts: &ScanOptions,
    engine_reads: &[crate::containers::EngineRead],
    members: &[Pid],
) -> (
    Option<crate::probe::ActivitySample>,
    Option<crate::containers::sample::Samples>,
) {
    if opts.sample.is_zero() {
        return (None, None);
    }
    std::thread::scope(|scope| {
        let containers = scope.spawn(|| match &opts.engines {
            Engines::Given(_, samples) => samples.clone(),
            _ => crate::containers::sample::of_reads(engine_reads, opts.sample),
        });
        let processes = probe.activity(members, opts.sample);
        let containers = containers.join().expect("a container sample never panics");
        (Some(processes), Some(containers))
    })
}

/// The card group at `path`, made (green and empty) the first time it is asked for.
fn group<'a>(
    projects: &'a mut BTreeMap<PathBuf, Project>,
    path: &Path,
    name: String,
    marker: Option<String>,
) -> &'a mut Project {
    projects.entry(path.to_owned()).or_insert_with(|| Project {
        name,
        path: path.to_string_lossy().into_owned(),
        marker,
        level: Level::Green,
        resources: Vec::new(),
        containers: Vec::new(),
    })
}

/// A card group's name: its folder's last component (`"shop-web"`), or the whole path.
pub(crate) fn folder_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
        .into_owned()
}

#[cfg(test)]
mod agent_tests;
#[cfg(test)]
mod launch_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
