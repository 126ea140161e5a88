//! The level rules, one small pure function each, over facts already read. Each returns the
//! evidence it found; a resource's level is the worst level among its evidence. The rules the
//! stop's checkpoints ask as well (connections, unreadable processes, protection) are judged
//! and worded in `judge.rs` (`Finding::level`, `Finding::evidence`): this file asks the judge,
//! never the reverse.
//!
//! Fail closed everywhere: a fact that could not be read argues against stopping.

use crate::model::protect::Protect;
use std::fmt::Write as _;
use std::time::Duration;

use super::connections::Conn;
use super::judge::Finding;
pub use super::judge::MemberActivity;
use super::kinds::chain::{tree_restart_target, How, NoTarget, Recognised};
use super::kinds::{family, Family, Role};
use crate::model::card::{Activity, BusiestMember, Evidence, EvidenceKind, Level};
use crate::model::managed::ManagedBy;
use crate::probe::{Pid, ProbeError, ProcessInfo};
use crate::words;

fn evidence(kind: EvidenceKind, level: Level, message: String, source: &str) -> Evidence {
    Evidence {
        kind,
        level,
        message,
        source: source.to_owned(),
    }
}

/// A resource is as safe as its least safe fact.
pub fn level_of(evidence: &[Evidence]) -> Level {
    evidence
        .iter()
        .map(|e| e.level)
        .max()
        .unwrap_or(Level::Yellow)
}

/// Known tools are what Pier understands; anything else listening in a project is worth a look,
/// not a stop. The evidence says how the kind was read and names the process: for an unknown
/// tree, the one that listens (`listener`), not its launcher. Agent residue is named by its
/// family and the name that made it known (`name`: "an MCP server: mcp-server-everything").
pub fn kind_evidence(
    recognised: Option<&Recognised>,
    listener: &ProcessInfo,
    name: Option<&str>,
) -> Evidence {
    // What a process wrote (its title, its name, a quoted command) is shown as words only:
    // padding dropped. Like every name in a message, it is kept as it was read: the JSON
    // carries it exactly, and a display escapes it (`words::for_terminal`).
    let said = |text: &str| words::command_for_a_person([text.as_bytes()]);
    let Some(r) = recognised else {
        return unknown_kind(listener);
    };
    let known = match family(&r.kind) {
        Family::Dev => format!("known dev tool: {}", r.kind),
        f => format!("{}: {}", f.describe(), name.unwrap_or(&r.kind)),
    };
    let (message, source) = match &r.how {
        How::Argv => (format!("{known} (pid {})", r.pid), "argv"),
        How::Launcher { command } => (
            format!(
                "{known}, from the command its launcher runs (pid {}: {})",
                r.pid,
                said(command)
            ),
            "launcher's argv",
        ),
        How::Title { title } => (
            format!(
                "{known}, from the title pid {} gave itself (\"{}\")",
                r.pid,
                said(title)
            ),
            "title",
        ),
        How::Launch(launch) => {
            let listens = if listener.identity.pid == r.pid {
                String::new()
            } else {
                format!(
                    "; {} (pid {}) is the server",
                    said(&listener.comm),
                    listener.identity.pid
                )
            };
            (
                format!(
                    "known: {}, by how it was launched: {} (pid {}){listens}",
                    r.kind,
                    launch.describe(),
                    r.pid,
                ),
                "launch",
            )
        }
    };
    evidence(
        EvidenceKind::ToolKind,
        Level::Green,
        said_up_front(&r.kind, message),
        source,
    )
}

/// A tree no rule knows, named by the process that listens.
fn unknown_kind(listener: &ProcessInfo) -> Evidence {
    let comm = words::command_for_a_person([listener.comm.as_bytes()]);
    evidence(
        EvidenceKind::UnknownKind,
        Level::Yellow,
        format!(
            "{comm} (pid {}) listens inside a project but is not a dev tool Pier knows",
            listener.identity.pid
        ),
        "argv",
    )
}

/// For a kind its client starts, what a stop means, said up front: no snapshot undoes it.
fn said_up_front(kind: &str, message: String) -> String {
    match crate::words::comes_back_by_its_client(Some(kind)) {
        Some(by_client) => format!("{message}; {by_client}"),
        None => message,
    }
}

/// A tree with no member whose command brings the whole tree back (`chain::restart_target`)
/// cannot be restarted: Puma writes its title over the argv of `rails server`, and Linux keeps
/// no copy. Nor can one whose restart target's environment cannot be read: macOS withholds it
/// from a code-signing-restricted process, and a restart replays the recorded environment only
/// (design §4), so an empty one would start something else. Stopping either is then the user's
/// call (Force). `environment` reads a member's environment (`Probe::environment`).
pub fn restart_evidence(
    tree: &[&ProcessInfo],
    environment: &dyn Fn(Pid) -> Result<(), ProbeError>,
) -> Option<Evidence> {
    let (at, why) = match tree_restart_target(tree) {
        Ok(at) => {
            let p = tree.get(at)?;
            let why = environment(p.identity.pid).err()?;
            return Some(evidence(
                EvidenceKind::NotRestartable,
                Level::Yellow,
                format!(
                    "could not be restarted: the environment of pid {} could not be read \
                     ({why}); only Force stops it",
                    p.identity.pid
                ),
                "environment",
            ));
        }
        Err(NoTarget::Lost(at)) => (at, "so the command that started it is lost"),
        Err(NoTarget::Several(at)) => (
            at,
            "and runs several processes: no one command of theirs brings the whole tree back",
        ),
    };
    let p = tree.get(at)?;
    let title = words::command_for_a_person(p.argv.iter().map(Vec::as_slice));
    Some(evidence(
        EvidenceKind::NotRestartable,
        Level::Yellow,
        format!(
            "could not be restarted: pid {} rewrote its command line (\"{title}\"), {why}; only \
             Force stops it",
            p.identity.pid
        ),
        "argv",
    ))
}

/// What the root hangs from.
pub struct Parentage<'a> {
    /// The resource's root process.
    pub root: &'a ProcessInfo,
    /// The root's parent and what it is; `None` when it could not be read.
    pub parent: Option<(&'a ProcessInfo, Role)>,
    /// Whether the root's session leader still runs.
    pub session_leader_alive: bool,
    /// The root's cgroup (`None` on an OS without cgroups).
    pub cgroup: Option<&'a Result<String, ProbeError>>,
    /// Who runs the root on purpose (`managers.rs`): its process manager, its systemd unit or
    /// its launchd agent; `None` when no one does.
    pub managed: Option<&'a ManagedBy>,
    /// Where a live parent is (`place::read`): its tmux pane, screen window or terminal;
    /// `None` when not read (no live parent, or a manager's).
    pub place: Option<&'a crate::model::client::Parent>,
}

/// Orphaned: adopted by init or a session subreaper (and not a service run on purpose), or its
/// terminal is gone and its parent is that terminal's shell. A manager's program is its
/// manager's (yellow, named); any other live parent still holds it (yellow).
pub fn orphan_evidence(p: &Parentage) -> Evidence {
    let root = p.root;
    if let Some(m) = p.managed {
        return managed_evidence(m, p.parent.as_ref().map(|(parent, _)| *parent));
    }
    if let Some((parent, role @ (Role::Init | Role::Subreaper))) = &p.parent {
        return adopted_evidence(parent, role, p.cgroup);
    }
    if terminal_hung_up(p) {
        return evidence(
            EvidenceKind::Orphaned,
            Level::Green,
            format!(
                "orphaned: its terminal session (leader pid {}) is gone, and its parent is \
                 that terminal's shell",
                root.session
            ),
            "process table",
        );
    }
    let message = match &p.parent {
        Some((parent, role)) => live_parent(parent, role, p.place),
        None => format!("parent pid {} could not be read", root.ppid),
    };
    evidence(
        EvidenceKind::NotOrphaned,
        Level::Yellow,
        message,
        "process table",
    )
}

/// Adopted by init or a session subreaper: orphaned (green), unless its cgroup could not be
/// read to rule out a service run on purpose (yellow).
fn adopted_evidence(
    parent: &ProcessInfo,
    role: &Role,
    cgroup: Option<&Result<String, ProbeError>>,
) -> Evidence {
    let adopted = format!(
        "parent is {} ({}, pid {})",
        role.describe(),
        parent.comm,
        parent.identity.pid
    );
    match cgroup {
        Some(Err(e)) => evidence(
            EvidenceKind::ServiceUnit,
            Level::Yellow,
            format!("{adopted}, but its cgroup could not be read to rule out a service: {e}"),
            "cgroup",
        ),
        _ => evidence(
            EvidenceKind::Orphaned,
            Level::Green,
            format!("orphaned: {adopted}"),
            "process table",
        ),
    }
}

/// A live parent that holds the root, and — when its place was read — which one it is and
/// where to press Ctrl-C (issue 40: a reason names the next step).
fn live_parent(
    parent: &ProcessInfo,
    role: &Role,
    place: Option<&crate::model::client::Parent>,
) -> String {
    let mut m = format!(
        "parent {} (pid {}) is a live {}",
        parent.comm,
        parent.identity.pid,
        role.describe()
    );
    if let Some(place) = place {
        let at = words::parent_place(place);
        if !at.is_empty() {
            let _ = write!(m, " {at}");
        }
        let _ = write!(m, ": {}", words::next_step_for_parent(place));
    }
    m
}

/// A hung-up session (docs/design.md §2.5): the root's controlling terminal is gone (no tty,
/// not its own session leader, the leader no longer runs) and its parent is the interactive
/// shell or terminal of that terminal — one that lost it too. Only then: an unknown live
/// parent still holds what it started, terminal or not (`nohup orchestrate &` is not residue
/// while the orchestrator runs), and so does a manager (`nohup foreman start &`).
fn terminal_hung_up(p: &Parentage) -> bool {
    let root = p.root;
    let Some((parent, role)) = &p.parent else {
        return false;
    };
    matches!(role, Role::InteractiveShell | Role::Terminal)
        && parent.session == root.session
        && parent.tty_nr == 0
        && root.tty_nr == 0
        && root.session != root.identity.pid
        && !p.session_leader_alive
}

/// A root its manager runs on purpose (yellow): who, which program, and the command that
/// stops it there; a signal from Pier would be answered by a restart.
pub fn managed_evidence(m: &ManagedBy, parent: Option<&ProcessInfo>) -> Evidence {
    let service = matches!(m.manager.as_str(), "systemd" | "launchd");
    let mut message = match (&m.program, &m.stop_command, parent) {
        (Some(program), Some(command), _) if service => format!(
            "run on purpose by {} as {program} (read from its {}): `{command}` stops it there",
            m.manager, m.source
        ),
        (Some(_), Some(command), _) => format!(
            "{}, which Pier leaves to it (it may start it again): `{command}` stops it there",
            m.describe()
        ),
        (Some(_), None, _) => format!("{}, which Pier leaves to it", m.describe()),
        (None, _, Some(parent)) => format!(
            "parent {} (pid {}) is a live process manager ({}); which of its programs this is \
             could not be read",
            parent.comm, parent.identity.pid, m.manager
        ),
        (None, _, None) => format!("{}, which Pier leaves to it", m.describe()),
    };
    if let Some(note) = &m.note {
        message.push_str(&format!(" ({note})"));
    }
    let kind = if service {
        EvidenceKind::ServiceUnit
    } else {
        EvidenceKind::Managed
    };
    let source = if service {
        m.source.as_str()
    } else {
        "process manager"
    };
    evidence(kind, Level::Yellow, message, source)
}

/// A member that starts its child again (`respawners.rs`): part of the resource, stopped with
/// it. A fact for the card, not an argument either way (green).
pub fn respawner_evidence(pid: u32, command: &str, how: &str) -> Evidence {
    evidence(
        EvidenceKind::Respawner,
        Level::Green,
        format!(
            "pid {pid} ({command}) respawns: {how}; it is part of this resource and is \
             stopped with it"
        ),
        "argv",
    )
}

/// A port the resource listens on: a fact, not an argument either way.
pub fn listening_evidence(address: &str, port: u16, helper: Option<&str>) -> Evidence {
    let whose = helper.map(|h| format!(" (the {h}'s)")).unwrap_or_default();
    evidence(
        EvidenceKind::Listening,
        Level::Green,
        format!(
            "listens on {}{whose}",
            crate::model::card::endpoint(address, port)
        ),
        "socket table",
    )
}

/// Live connections make a resource red; internal ones are listed, and do not count.
pub fn connection_evidence(conns: &[Conn], queued: u32) -> Vec<Evidence> {
    let mut findings: Vec<Finding> = conns.iter().cloned().map(Finding::Connection).collect();
    if queued > 0 {
        findings.push(Finding::Queued(queued));
    }
    findings.iter().map(Finding::evidence).collect()
}

/// When the socket table could not be read, nothing can be said about connections: red.
pub fn connections_unreadable(error: &str) -> Evidence {
    Finding::TablesUnreadable(error.to_owned()).evidence()
}

/// Thresholds above which a resource counts as busy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Percent of one core over the window.
    pub cpu_percent: f64,
    /// Bytes of disk I/O per second over the window.
    pub io_bytes_per_second: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            cpu_percent: 5.0,
            io_bytes_per_second: 1_000_000.0,
        }
    }
}

/// Summed activity of the members, or why it is missing.
pub enum ActivityFacts {
    /// The scan took no sample (`--sample-ms 0`).
    NotSampled,
    /// A member's activity could not be read: which pid, and why.
    Unreadable(String),
    /// Each member's activity, over the window the sample took.
    Measured(Vec<MemberActivity>, Duration),
}

/// Activity above the threshold argues the tool is working; unreadable activity cannot argue
/// it is idle. Returns the evidence and the measured figures.
///
/// Pier cannot tell a reloader polling files from a server at work: both are CPU a stop
/// would interrupt, so a busy polling reloader (uvicorn's StatReload walking a `.venv`) stays
/// busy. The words name the busiest member, its figures and the window, so the user sees
/// which process it is (docs/design.md §2.9).
pub fn activity_evidence(facts: &ActivityFacts, t: Thresholds) -> (Evidence, Option<Activity>) {
    let (members, window) = match facts {
        ActivityFacts::NotSampled => {
            return (
                evidence(
                    EvidenceKind::ActivityNotSampled,
                    Level::Green,
                    "activity not sampled".into(),
                    "activity sample",
                ),
                None,
            )
        }
        ActivityFacts::Unreadable(e) => {
            return (
                evidence(
                    EvidenceKind::ActivityUnreadable,
                    Level::Yellow,
                    format!("activity could not be read: {e}"),
                    "activity sample",
                ),
                None,
            )
        }
        ActivityFacts::Measured(m, w) => (m, *w),
    };
    let (activity, cpu_busy, io_busy) = measure(members, window, t);
    let (message, level) = if cpu_busy || io_busy {
        (busy_words(&activity, t, cpu_busy, io_busy), Level::Yellow)
    } else {
        (
            format!(
                "idle over {} ms: {:.1}% CPU, {} disk I/O",
                activity.window_ms,
                activity.cpu_percent,
                words::byte_rate(activity.io_bytes_per_second)
            ),
            Level::Green,
        )
    };
    (
        evidence(EvidenceKind::Activity, level, message, "activity sample"),
        Some(activity),
    )
}

/// The members' figures summed over `window`, with the busiest member's; and whether the CPU
/// and the disk I/O are over their thresholds.
fn measure(members: &[MemberActivity], window: Duration, t: Thresholds) -> (Activity, bool, bool) {
    let secs = window.as_secs_f64().max(1e-9);
    let cpu = |ns: u64| ns as f64 / 1e9 / secs * 100.0;
    let io = |bytes: u64| bytes as f64 / secs;
    let cpu_ns = members
        .iter()
        .fold(0u64, |s, m| s.saturating_add(m.delta.cpu_ns));
    let io_bytes = members
        .iter()
        .fold(0u64, |s, m| s.saturating_add(m.delta.io_bytes));
    let cpu_busy = cpu(cpu_ns) > t.cpu_percent;
    let io_busy = io(io_bytes) > t.io_bytes_per_second;
    let busiest = busiest(members, io_busy && !cpu_busy);
    let activity = Activity {
        window_ms: window.as_millis() as u64,
        cpu_percent: cpu(cpu_ns),
        io_bytes_per_second: io(io_bytes),
        busiest: busiest.map(|m| BusiestMember {
            pid: m.pid,
            command: m.command.clone(),
            cpu_percent: cpu(m.delta.cpu_ns),
            io_bytes_per_second: io(m.delta.io_bytes),
            life_cpu_percent: m.life.map(|l| life_percent(l.cpu_ns, l.age_seconds)),
            age_seconds: m.life.map(|l| l.age_seconds),
        }),
    };
    (activity, cpu_busy, io_busy)
}

/// The member that made it busy: by disk I/O when only that is over (`by_io`), else by CPU;
/// the first of equals.
fn busiest(members: &[MemberActivity], by_io: bool) -> Option<&MemberActivity> {
    members.iter().fold(None::<&MemberActivity>, |best, m| {
        let key = |m: &MemberActivity| {
            if by_io {
                m.delta.io_bytes
            } else {
                m.delta.cpu_ns
            }
        };
        match best {
            Some(b) if key(b) >= key(m) => Some(b),
            _ => Some(m),
        }
    })
}

/// The most of one core a tree known only by how it was launched may have used, on average,
/// over its life and still be green (docs/design.md §2.2), in percent. Idle dev servers
/// measured a minute after a normal start sit far below it (their start-up spread over their
/// age: `docs/decisions.md`), while a job — a training run, a long test, a migration that
/// pauses for half a second — works most of its life, far above it.
pub const QUIET_LIFE_PERCENT: f64 = 10.0;

/// One member's CPU time over its life, as the process table read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Life {
    /// The member's pid.
    pub pid: Pid,
    /// Its command line for a person.
    pub command: String,
    /// Its CPU time since it started, in nanoseconds, when read.
    pub cpu_ns: Option<u64>,
    /// Its age in seconds, when read.
    pub age_seconds: Option<u64>,
    /// A respawner whose own CPU is its polling (`respawners::pollers`): not the server's work.
    pub polls: bool,
}

/// What alone made a tree known, when that asks for a quiet life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownBy {
    /// How it was launched (`kinds/launch.rs`).
    Launch,
    /// The words of its name (`kinds/agent.rs`: `mcp`, `language-server`), no row.
    Words,
}

impl KnownBy {
    fn words(self) -> &'static str {
        match self {
            KnownBy::Launch => "how it was launched",
            KnownBy::Words => "the words of its name",
        }
    }
}

/// A tree known only by how it was launched, or by the words of its name, must have lived mostly idle: every member (its
/// respawners' polling aside) under [`QUIET_LIFE_PERCENT`] of a core over its life. A member
/// whose CPU time or age could not be read cannot show it (yellow).
pub fn quiet_life(members: &[Life], known_by: KnownBy) -> Evidence {
    let how = known_by.words();
    let share = |l: &Life| -> Option<f64> {
        let cpu = l.cpu_ns? as f64 / 1e9;
        Some(cpu / l.age_seconds?.max(1) as f64 * 100.0)
    };
    let judged: Vec<&Life> = members.iter().filter(|l| !l.polls).collect();
    if let Some(l) = judged.iter().find(|l| share(l).is_none()) {
        return evidence(
            EvidenceKind::LifeActivity,
            Level::Yellow,
            format!(
                "known only by {how}, and the CPU time pid {} ({}) used over its life could not \
                 be read, so a long job cannot be ruled out",
                l.pid, l.command
            ),
            "process table",
        );
    }
    let busiest = judged
        .iter()
        .filter_map(|l| Some((*l, share(l)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match busiest {
        Some((l, pct)) if pct >= QUIET_LIFE_PERCENT => evidence(
            EvidenceKind::LifeActivity,
            Level::Yellow,
            format!(
                "known only by {how}, and busy over its life: pid {} ({}) has \
                 used {pct:.0}% of a core on average since it started {} ago (a tree known so \
                 must stay under {QUIET_LIFE_PERCENT}%, so a long job is never green); a dev \
                 server turns green once its start-up is far enough behind it",
                l.pid,
                l.command,
                words::duration_seconds(l.age_seconds.unwrap_or(0)),
            ),
            "process table",
        ),
        busiest => quiet(members, busiest.map_or(0.0, |b| b.1)),
    }
}

/// Green: quiet over its life, `most` percent of a core at most, naming the respawners whose
/// polling was set aside, so a figure of 0 % beside a busy reloader is no riddle.
fn quiet(members: &[Life], most: f64) -> Evidence {
    let aside: Vec<String> = members
        .iter()
        .filter(|l| l.polls)
        .map(|l| format!("pid {} ({})", l.pid, l.command))
        .collect();
    let aside = if aside.is_empty() {
        String::new()
    } else {
        format!(
            "; the polling of its reloader {} is not counted",
            aside.join(", ")
        )
    };
    evidence(
        EvidenceKind::LifeActivity,
        Level::Green,
        format!(
            "quiet over its life: at most {most:.1}% of a core on average since it started \
             (under {QUIET_LIFE_PERCENT}%){aside}"
        ),
        "process table",
    )
}

/// A respawner whose own CPU is polling, and what would stop the polling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poller {
    /// The respawner's pid.
    pub pid: Pid,
    /// What would stop its polling, in words.
    pub quieter: String,
}

/// [`activity_evidence`], with a respawner's own polling set aside (docs/design.md §2.9): when
/// the activity over the threshold is the respawners' alone and every other member (the
/// server it runs) is idle, the tree is idle, and the evidence names the polling and what
/// would stop it. A busy server child keeps it busy.
pub fn activity_with_pollers(
    facts: &ActivityFacts,
    t: Thresholds,
    pollers: &[Poller],
) -> (Evidence, Option<Activity>) {
    let (found, activity) = activity_evidence(facts, t);
    let ActivityFacts::Measured(members, window) = facts else {
        return (found, activity);
    };
    if found.level == Level::Green || pollers.is_empty() {
        return (found, activity);
    }
    let polls = |m: &MemberActivity| pollers.iter().find(|p| p.pid == m.pid);
    let rest: Vec<MemberActivity> = members
        .iter()
        .filter(|m| polls(m).is_none())
        .cloned()
        .collect();
    let (without, _) = activity_evidence(&ActivityFacts::Measured(rest, *window), t);
    if without.level != Level::Green {
        return (found, activity);
    }
    let secs = window.as_secs_f64().max(1e-9);
    let polling: Vec<String> = members
        .iter()
        .filter_map(|m| {
            let p = polls(m)?;
            let pct = m.delta.cpu_ns as f64 / 1e9 / secs * 100.0;
            Some(format!(
                "pid {} ({}) polls at {pct:.1}% CPU — {} would stop it",
                m.pid, m.command, p.quieter
            ))
        })
        .collect();
    let message = format!(
        "{}, apart from its reloader's own polling, which is not the server's work: {}",
        without.message,
        polling.join("; ")
    );
    (
        evidence(
            EvidenceKind::Activity,
            Level::Green,
            message,
            "activity sample",
        ),
        activity,
    )
}

/// "busy over 500 ms: 15.8% CPU (more than 5%), 0 B/s disk I/O; the busiest member is pid 123
/// (uvicorn main:app --reload), at 15.6% CPU": what was measured, against which threshold,
/// and in which process.
fn busy_words(a: &Activity, t: Thresholds, cpu_busy: bool, io_busy: bool) -> String {
    let over = |busy: bool, limit: String| {
        if busy {
            format!(" (more than {limit})")
        } else {
            String::new()
        }
    };
    let mut out = format!(
        "busy over {} ms: {:.1}% CPU{}, {} disk I/O{}",
        a.window_ms,
        a.cpu_percent,
        over(cpu_busy, format!("{}%", t.cpu_percent)),
        words::byte_rate(a.io_bytes_per_second),
        over(io_busy, words::byte_rate(t.io_bytes_per_second)),
    );
    if let Some(b) = &a.busiest {
        let mut figures = Vec::new();
        if cpu_busy {
            figures.push(format!("{:.1}% CPU", b.cpu_percent));
        }
        if io_busy {
            figures.push(format!(
                "{} disk I/O",
                words::byte_rate(b.io_bytes_per_second)
            ));
        }
        let _ = write!(
            out,
            "; the busiest member is pid {} ({}), at {}: {}",
            b.pid,
            b.command,
            figures.join(" and "),
            waiting_words(b)
        );
    }
    out
}

/// Percent of one core used on average over a life of `age_seconds` (at least one second).
fn life_percent(cpu_ns: u64, age_seconds: u64) -> f64 {
    cpu_ns as f64 / 1e9 / age_seconds.max(1) as f64 * 100.0
}

/// A life shorter than this says too little to tell a burst from steady work: its start-up
/// weighs on it more than anything since.
pub const YOUNG_SECONDS: u64 = 60;

/// Whether waiting may help a member busy in the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// A quiet life: the activity is a burst (a request, a rebuild after a save), and bursts
    /// end.
    MayHelp,
    /// It has worked for most of its life: it is working (a build, a poller, a job), and
    /// waiting will likely not end it.
    WillNotHelp,
    /// It started less than [`YOUNG_SECONDS`] ago: it may still be starting up.
    Young,
    /// Its life's CPU time or age could not be read.
    Unknown,
}

/// Whether waiting helps a busy member, from its CPU time over its life. Why the life and not
/// the window: a sample of half a second cannot tell a burst from steady work, but a process
/// that averaged little over hours has spent most of them idle, so what it does now is likely
/// to end; one that averaged [`QUIET_LIFE_PERCENT`] of a core or more (the bound a tree known
/// only by how it was launched must stay under) has worked most of its life and will likely go
/// on. A young process's average is mostly its start-up: it says nothing yet.
pub fn waiting_helps(life: Option<(f64, u64)>) -> Waiting {
    match life {
        None => Waiting::Unknown,
        Some((_, age)) if age < YOUNG_SECONDS => Waiting::Young,
        Some((pct, _)) if pct >= QUIET_LIFE_PERCENT => Waiting::WillNotHelp,
        Some(_) => Waiting::MayHelp,
    }
}

/// [`waiting_helps`] in words, with the life's figures: the next step for a busy card.
fn waiting_words(b: &BusiestMember) -> String {
    let life = b.life_cpu_percent.zip(b.age_seconds);
    let age = |a: u64| words::duration_seconds(a);
    match (waiting_helps(life), life) {
        (Waiting::MayHelp, Some((pct, a))) => format!(
            "it has used {pct:.1}% of a core over its {} life: this looks like a burst, \
             waiting may help",
            age(a)
        ),
        (Waiting::WillNotHelp, Some((pct, a))) => format!(
            "it has worked for most of its {} life ({pct:.0}% of a core): waiting will likely \
             not help — it is working (a build, a poller)",
            age(a)
        ),
        (Waiting::Young, Some((_, a))) => format!(
            "it started {} ago and may still be starting up: waiting may help",
            age(a)
        ),
        _ => "its CPU time over its life could not be read, so whether waiting helps is \
              unknown"
            .to_owned(),
    }
}

/// The user's protect list (docs/design.md §2.10) names a card in `places` listening on `ports`
/// (`container`: its name, for a container's card): yellow, so it is never green and never in
/// a batch, with the entry that names it and how to take it off. A list that could not be
/// read names everything: Pier cannot tell what it would have named.
pub fn user_protected(
    protect: &Protect,
    places: &[&std::path::Path],
    ports: &[u16],
    container: Option<&str>,
) -> Option<Evidence> {
    let message = match protect {
        Protect::Unreadable(why) => format!("{why}; nothing is offered until it is fixed"),
        Protect::List(list) => {
            let (what, flag) = list.names(places, ports, container)?;
            format!("on your protect list ({what}): never offered; `pier protect remove {flag}` takes it off")
        }
    };
    Some(evidence(
        EvidenceKind::UserProtected,
        Level::Yellow,
        message,
        "protect list",
    ))
}

/// A member that is a container engine's client standing for containers
/// (`containers::processes::engine_client`: `docker run` attached, `docker compose up`): no
/// stop signals it, Force included (`judge::force_allowed`), since a SIGTERM to it would stop
/// its containers, and `--rm` remove one, outside the container rules (docs/design.md §2.8).
/// Yellow, not red: nothing is unknown, and the next step is the engine's own — the
/// container's card, or the engine's command. `client`: `None` when its argv was not read.
pub fn engine_client_evidence(
    p: &ProcessInfo,
    client: Option<&crate::containers::processes::EngineClient>,
) -> Evidence {
    use crate::containers::processes::StandsFor;
    let pid = p.identity.pid;
    let message = match client {
        Some(c) => {
            let (what, card) = match c.stands_for {
                StandsFor::Container => ("its container", "the container's card"),
                StandsFor::Compose => ("its Compose project's containers", "their cards"),
            };
            format!(
                "pid {pid} ({}) is a container engine's client: it stands for {what}, which \
                 Pier stops only through the engine — see {card}, or `{}`",
                words::short_command(p.argv.iter().map(Vec::as_slice)),
                c.stop
            )
        }
        None => format!(
            "pid {pid} ({}) is a container engine's client whose command line was not read: \
             it may stand for a container, so Pier never signals it",
            p.comm
        ),
    };
    evidence(EvidenceKind::EngineClient, Level::Yellow, message, "argv")
}

/// PID 1, Pier itself and Pier's ancestors are never touched.
pub fn protected_evidence(pid: u32, why: &str) -> Evidence {
    evidence(
        EvidenceKind::Protected,
        Level::Red,
        format!("pid {pid} is {why}"),
        "process table",
    )
}

/// A member whose executable cannot be read (a non-dumpable process) cannot be shown to be
/// the same program right before a signal, so the stop would skip it: yellow, not green.
pub fn exe_unreadable(pid: u32, error: &ProbeError) -> Evidence {
    evidence(
        EvidenceKind::ExeUnreadable,
        Level::Yellow,
        format!("the executable of pid {pid} could not be read: {error}"),
        "process table",
    )
}

/// A container as its engine describes it: a fact, not an argument either way (green).
pub fn container_evidence(name: &str, image: &str, engine: &str, host_network: bool) -> Evidence {
    let network = if host_network {
        ", on the host's network (its ports are its processes' own listeners)"
    } else {
        ""
    };
    evidence(
        EvidenceKind::Container,
        Level::Green,
        format!("container {name} (image {image}), run by {engine}{network}"),
        "container engine",
    )
}

/// What makes the engine the container's manager (yellow): a restart policy, with which the
/// engine starts it again when it ends (so a lasting stop is the engine's: `command` is how);
/// auto-remove, with which a stopped container is deleted and could not be started again.
pub fn engine_managed(
    restart_policy: Option<&str>,
    auto_remove: bool,
    engine: &str,
    command: &str,
) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Some(policy) = restart_policy {
        out.push(evidence(
            EvidenceKind::EngineManaged,
            Level::Yellow,
            format!(
                "restart policy {policy}: {engine} starts it again when it ends, so a lasting \
                 stop is {engine}'s: `{command}`"
            ),
            "container engine",
        ));
    }
    if auto_remove {
        out.push(evidence(
            EvidenceKind::EngineManaged,
            Level::Yellow,
            format!(
                "auto-remove (--rm): once stopped, {engine} deletes it, and it could not be \
                 started again; `{command}` stops it"
            ),
            "container engine",
        ));
    }
    out
}

/// A container whose stop signal Pier would never send (SIGKILL, SIGSTOP, or one it cannot
/// name) cannot be stopped by Pier (yellow): its engine's own command can.
pub fn unsendable_stop_signal(why: &str, command: &str) -> Evidence {
    evidence(
        EvidenceKind::EngineManaged,
        Level::Yellow,
        format!("{why}; `{command}` stops it"),
        "container engine",
    )
}

/// A container's CPU use — its cgroup's CPU time, the counter its engine's statistics report,
/// read on the host or asked of the engine (`containers::sample`) — against the CPU
/// threshold: above it, or not measured, argues against stopping it (yellow); `None` means
/// the scan took no sample. Its disk I/O is not measured (the engine's counters come without
/// an earlier reading), and the words say so rather than show a rate of zero.
pub fn container_activity(
    name: &str,
    measured: Option<Result<crate::containers::control::Measured, impl std::fmt::Display>>,
    t: Thresholds,
) -> (Evidence, Option<Activity>) {
    let m = match measured {
        None => return activity_evidence(&ActivityFacts::NotSampled, t),
        Some(Err(why)) => {
            return activity_evidence(
                &ActivityFacts::Unreadable(format!("container {name}: {why}")),
                t,
            )
        }
        Some(Ok(m)) => m,
    };
    let secs = m.window.as_secs_f64().max(1e-9);
    let cpu = m.cpu_ns as f64 / 1e9 / secs * 100.0;
    let window_ms = m.window.as_millis() as u64;
    let busy = cpu > t.cpu_percent;
    let message = if busy {
        format!(
            "busy over {window_ms} ms: {cpu:.1}% CPU (more than {}%), the container's CPU time",
            t.cpu_percent
        )
    } else {
        format!(
            "idle over {window_ms} ms: {cpu:.1}% CPU, the container's CPU time (its disk I/O is \
             not measured)"
        )
    };
    let level = if busy { Level::Yellow } else { Level::Green };
    let activity = Activity {
        window_ms,
        cpu_percent: cpu,
        io_bytes_per_second: 0.0,
        busiest: None,
    };
    (
        evidence(EvidenceKind::Activity, level, message, m.by),
        Some(activity),
    )
}

/// A container's own network namespace could not be read (yellow): clients from other
/// containers, or through NAT, never touch a host listener, so none can be ruled out.
pub fn container_connections_unread(why: &str) -> Evidence {
    evidence(
        EvidenceKind::ContainerConnectionsUnread,
        Level::Yellow,
        format!("connections inside the container could not be read: {why}"),
        "socket table",
    )
}

/// A container on the host's network (yellow): its listeners are its processes' own, on the
/// host, and are not attributed to it here.
pub fn host_network(engine: &str) -> Evidence {
    evidence(
        EvidenceKind::ContainerConnectionsUnread,
        Level::Yellow,
        format!(
            "runs on the host's network (--network host), and none of its processes could be \
             seen holding a listener: {engine} publishes none for it, and its connections \
             cannot be told apart from the host's"
        ),
        "container engine",
    )
}

#[cfg(test)]
mod tests;
