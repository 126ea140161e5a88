//! The menu as plain data, a pure function of [`UiState`]: what every line says, whether it is
//! enabled, and its id. Built and tested without a display; [`super::menu`] turns it into muda
//! items.
//!
//! The level is always a word in the text ("● green"), because StatusNotifier hosts drop menu
//! icons; where icons are drawn, the card also carries a coloured dot.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use pier_core::model::card::{Evidence, Level, Project, Resource};
use pier_core::model::history::HistoryEntry;
use pier_core::model::target::RecordName;
use pier_core::words;
use pier_core::worker::{snapshot_label, ActionKey, Tone};

use super::ids::Click;
use super::state::UiState;

/// How many snapshots "Recently stopped" lists, newest first.
const SNAPSHOTS_SHOWN: usize = 8;

/// The most characters a line shows of a message (a failed check's detail, a fact against a
/// stop anyway), its last one "…" when it was longer.
const LINE_CHARS: usize = 90;

mod anyway;
mod armed;
mod auto;

/// One line of the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Item {
        id: String,
        text: String,
        enabled: bool,
    },
    Check {
        id: String,
        text: String,
        checked: bool,
        enabled: bool,
    },
    Submenu {
        id: String,
        text: String,
        enabled: bool,
        /// The coloured dot drawn beside the text, where the host draws icons.
        dot: Option<Level>,
        children: Vec<Entry>,
    },
    Separator,
}

impl Entry {
    fn action(click: &Click, text: impl Into<String>, enabled: bool) -> Entry {
        Entry::Item {
            id: click.id(),
            text: text.into(),
            enabled,
        }
    }

    /// A line that only informs: disabled, with an id no click maps to.
    fn info(id: impl Into<String>, text: impl Into<String>) -> Entry {
        Entry::Item {
            id: format!("info:{}", id.into()),
            text: text.into(),
            enabled: false,
        }
    }
}

/// The level as a word with a dot, for hosts that draw no icons.
pub fn level_word(level: Level) -> &'static str {
    match level {
        Level::Green => "● green",
        Level::Yellow => "● yellow",
        Level::Red => "● red",
    }
}

/// "2h 5m", "40s": the largest two units.
pub fn short_duration(d: Duration) -> String {
    let s = d.as_secs();
    let (days, hours, minutes) = (s / 86_400, s / 3_600 % 24, s / 60 % 60);
    match () {
        () if days > 0 => format!("{days}d {hours}h"),
        () if hours > 0 => format!("{hours}h {minutes}m"),
        () if minutes > 0 => format!("{minutes}m"),
        () => format!("{s}s"),
    }
}

/// The header: "3 projects · 2 safe to stop".
pub fn header(state: &UiState) -> String {
    if state.not_ready().is_some() {
        return "Pier cannot work on this machine".into();
    }
    match &state.scan {
        None => "Pier — scanning…".into(),
        Some(Err(e)) => format!("Pier — the scan failed: {e}"),
        Some(Ok(scan)) => {
            let n = scan.projects.len();
            let safe = state.safe().count();
            let noun = if n == 1 { "project" } else { "projects" };
            format!("{n} {noun} · {safe} safe to stop")
        }
    }
}

/// What the self-test found not working, instead of the cards: each failed check a stop needs,
/// then where the whole report is.
fn self_test_failures(report: &pier_core::model::doctor::DoctorReport) -> Vec<Entry> {
    let mut out: Vec<Entry> = report
        .failures()
        .map(|c| {
            let detail = shortened(&words::for_terminal(&c.detail));
            Entry::info(
                format!("doctor:{}", c.name),
                format!("✗ {}: {detail}", c.what),
            )
        })
        .collect();
    out.push(Entry::info(
        "doctor:hint",
        "Nothing is offered. Run `pier doctor` in a terminal for the whole report; once it \
         passes, quit and reopen Pier.",
    ));
    out
}

/// The whole menu.
pub fn menu(state: &UiState, now: SystemTime) -> Vec<Entry> {
    let mut out = vec![Entry::info("header", header(state))];
    for (i, r) in state.results.iter().enumerate() {
        out.push(Entry::info(
            format!("result:{i}"),
            format!("{} {}", tone_mark(r.tone), r.summary),
        ));
    }
    out.push(Entry::Separator);
    let projects = state.projects();
    if let Some(report) = state.not_ready() {
        out.extend(self_test_failures(report));
    } else if matches!(state.scan, Some(Ok(_))) && projects.is_empty() {
        out.push(Entry::info("empty", "No dev servers or watchers found."));
    }
    out.extend(projects.iter().map(|p| card(state, p)));
    out.push(Entry::Separator);
    let safe = state.safe().count();
    let all_doing = state.doing(&ActionKey::AllSafe);
    out.push(Entry::action(
        &Click::StopAllSafe {
            seen: super::ids::all_safe_seen(state),
        },
        match all_doing {
            Some(doing) => format!("Clean up all safe — {doing}"),
            None => format!("Clean up all safe ({safe})"),
        },
        safe > 0 && !state.is_running(&ActionKey::AllSafe) && state.may_stop().is_ok(),
    ));
    out.push(recently_stopped(state, now));
    if let Some(words) = state.acting.as_ref().and_then(|a| a.words()) {
        out.push(Entry::info("acting", words));
    }

    out.extend(auto::submenu(state));
    out.push(Entry::Separator);
    out.push(Entry::action(&Click::Refresh, "Refresh", true));
    out.push(match &state.start_at_login {
        Ok(on) => Entry::Check {
            id: Click::StartAtLogin.id(),
            text: "Start at login".into(),
            checked: *on,
            enabled: true,
        },
        Err(e) => Entry::info("login", format!("Start at login: {e}")),
    });
    out.push(Entry::action(&Click::Quit, "Quit Pier", true));
    out
}

fn tone_mark(tone: Tone) -> &'static str {
    match tone {
        Tone::Done => "✓",
        Tone::Refused => "✗",
        Tone::Partial => "◐",
        Tone::NotStopped => "○",
        Tone::Failed => "✗",
    }
}

/// "vite :5173, cargo-watch": the kinds and the server's ports of a project's resources (a
/// helper's, such as a notebook kernel's, are shown inside the card).
fn kinds_and_ports(p: &Project) -> String {
    let mut parts = Vec::new();
    for r in &p.resources {
        let mut s = r.kind.clone();
        let mut ports: Vec<u16> = r.server_ports().map(|p| p.port).collect();
        ports.sort_unstable();
        ports.dedup();
        for port in ports {
            let _ = write!(s, " :{port}");
        }
        parts.push(s);
    }
    for c in &p.containers {
        let mut s = format!("container {}", c.name);
        for port in &c.ports {
            let _ = write!(s, " :{}", port.port);
        }
        parts.push(s);
    }
    parts.join(", ")
}

/// The card title. It stays the same while the card's state does: hosts cannot change a
/// submenu's label in place, so a new title means a rebuilt menu.
fn card_title(state: &UiState, p: &Project) -> String {
    let base = format!(
        "{} · {} — {}",
        level_word(p.level),
        p.name,
        kinds_and_ports(p)
    );
    // A card whose resources have ended while the rest of the batch runs says how.
    match (
        state.doing(&ActionKey::Project(p.path.clone())),
        state.card_mark(&p.path),
    ) {
        (Some(_), Some(tone)) => format!("{base} — {}", ended_words(tone)),
        (Some(doing), None) => format!("{base} — {doing}"),
        (None, _) => base,
    }
}

/// How a card's resources ended, in its title while the batch goes on.
fn ended_words(tone: Tone) -> String {
    let words = match tone {
        Tone::Done => "stopped",
        Tone::Partial => "partly stopped",
        Tone::NotStopped => "not stopped",
        Tone::Refused => "refused",
        Tone::Failed => "failed",
    };
    format!("{words} {}", tone_mark(tone))
}

/// "up 2h 5m · idle" for the card's oldest resource or container and their activity (a
/// container's is its CPU time).
fn age_line(p: &Project) -> String {
    let ages = p.resources.iter().map(|r| r.age_seconds);
    let age = ages
        .chain(p.containers.iter().map(|c| c.age_seconds))
        .flatten()
        .max();
    let mut line = match age {
        Some(s) => format!("Up {}", short_duration(Duration::from_secs(s))),
        None => "Age unknown".into(),
    };
    let activity: Vec<_> = p
        .resources
        .iter()
        .map(|r| r.activity.as_ref())
        .chain(p.containers.iter().map(|c| c.activity.as_ref()))
        .collect();
    if activity.iter().all(Option::is_some) && !activity.is_empty() {
        let cpu: f64 = activity.iter().flatten().map(|a| a.cpu_percent).sum();
        let _ = write!(line, " · {cpu:.1} % CPU over the sample");
    } else {
        line.push_str(" · activity not sampled");
    }
    line
}

/// How a fact of `level` is marked: "✓" for it, "!" and "✗" against.
fn evidence_mark(level: Level) -> &'static str {
    match level {
        Level::Green => "✓",
        Level::Yellow => "!",
        Level::Red => "✗",
    }
}

fn evidence_line(e: &Evidence) -> String {
    format!("{} {} ({})", evidence_mark(e.level), e.message, e.source)
}

/// "jupyter · pid 10 · 2 processes · 48.2 MB (proportional) · 127.0.0.1:8888 · notebook kernel:
/// 127.0.0.1:40123, … · idle 40 min" (the memory only when it was read, the idle clock only
/// where the worker's scheduler measured it).
fn resource_line(r: &Resource) -> String {
    let mut ports: Vec<String> = r
        .server_ports()
        .map(pier_core::model::card::Port::endpoint)
        .collect();
    ports.dedup();
    let n = r.members.len();
    let noun = if n == 1 { "process" } else { "processes" };
    let mut line = format!("{} · pid {} · {n} {noun}", r.kind, r.root.pid);
    if let Some(memory) = r.memory {
        let _ = write!(line, " · {}", words::memory(memory));
    }
    if !ports.is_empty() {
        let _ = write!(line, " · {}", ports.join(", "));
    }
    for (helper, ports) in r.helper_ports() {
        let _ = write!(line, " · {helper}: {}", ports.join(", "));
    }
    if let Some(idle) = &r.idle {
        let _ = write!(line, " · {}", words::idle(idle));
    }
    line
}

/// "container shop-db-1 · postgres:16 · Docker · 127.0.0.1:5432 → 5432".
fn container_line(c: &pier_core::model::container::Container) -> String {
    let mut line = format!("container {} · {} · {}", c.name, c.image, c.engine);
    for p in &c.ports {
        let _ = write!(
            line,
            " · {} → {}",
            pier_core::model::card::endpoint(&p.address, p.port),
            p.container_port
        );
    }
    line
}

/// A browser address for a port: loopback and wildcard listeners open on this machine.
pub fn url(address: &str, port: u16) -> String {
    match address {
        "0.0.0.0" | "::" | "127.0.0.1" => format!("http://localhost:{port}"),
        a if a.contains(':') => format!("http://[{a}]:{port}"),
        a => format!("http://{a}:{port}"),
    }
}

/// A project's card: a submenu with its folder, age and activity, what is being done to it,
/// its resources and containers with their evidence, then its actions.
fn card(state: &UiState, p: &Project) -> Entry {
    let key = ActionKey::Project(p.path.clone());
    let at = |what: &str| format!("card:{}:{what}", p.path);
    let mut children = vec![
        Entry::info(at("path"), p.path.clone()),
        Entry::info(at("age"), age_line(p)),
    ];
    if let Some(doing) = state.doing(&key) {
        children.push(Entry::info(at("doing"), format!("Now {doing}")));
    }
    if let Some(r) = state.last_result(&key) {
        children.push(Entry::info(
            at("result"),
            format!("{} {}", tone_mark(r.tone), r.summary),
        ));
    }
    children.push(Entry::Separator);
    children.extend(card_contents(state, p, &at));
    children.push(Entry::Separator);
    children.push(Entry::action(
        &Click::StopProject {
            path: p.path.clone(),
            seen: super::ids::card_seen(p),
        },
        "Clean up safely",
        p.level == Level::Green && !state.is_running(&key) && state.may_stop().is_ok(),
    ));
    children.extend(card_links(p));
    Entry::Submenu {
        id: format!("card:{}", p.path),
        text: card_title(state, p),
        enabled: true,
        dot: Some(p.level),
        children,
    }
}

/// A card's resources and containers, each followed by its evidence (and a resource by its
/// "Stop anyway…" where the card offers one); `at` names each line.
fn card_contents(state: &UiState, p: &Project, at: &dyn Fn(&str) -> String) -> Vec<Entry> {
    let mut lines = Vec::new();
    let evidence = |lines: &mut Vec<Entry>, of: &str, evidence: &[Evidence]| {
        for (j, e) in evidence.iter().enumerate() {
            lines.push(Entry::info(
                at(&format!("{of}:ev:{j}")),
                format!("    {}", evidence_line(e)),
            ));
        }
    };
    for (i, r) in p.resources.iter().enumerate() {
        lines.push(Entry::info(at(&format!("res:{i}")), resource_line(r)));
        evidence(&mut lines, &format!("res:{i}"), &r.evidence);
        lines.extend(auto::note(r, at(&format!("res:{i}:auto"))));
        lines.extend(anyway::submenu(state, p, i, r, at));
        lines.extend(armed::lines(state, p, i, r, at));
    }
    for (i, c) in p.containers.iter().enumerate() {
        let of = format!("container:{i}");
        lines.push(Entry::info(at(&of), container_line(c)));
        evidence(&mut lines, &of, &c.evidence);
    }
    lines
}

/// "Open" for each of the server's addresses (a helper's, such as a kernel's ZMQ sockets, is
/// no page to open), then "Reveal folder".
fn card_links(p: &Project) -> Vec<Entry> {
    let mut urls: Vec<String> = p
        .resources
        .iter()
        .flat_map(|r| r.server_ports().map(|port| url(&port.address, port.port)))
        .collect();
    urls.sort();
    urls.dedup();
    let mut links: Vec<Entry> = urls
        .into_iter()
        .map(|u| Entry::action(&Click::Open(u.clone()), format!("Open {u}"), true))
        .collect();
    links.push(Entry::action(
        &Click::Reveal(p.path.clone()),
        "Reveal folder",
        true,
    ));
    links
}

/// `text` cut to `chars` characters, ending in "…" when it was longer.
fn clipped(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `text` as a line shows it: at most [`LINE_CHARS`] characters.
fn shortened(text: &str) -> String {
    match text.chars().count() > LINE_CHARS {
        true => clipped(text, LINE_CHARS - 1),
        false => text.to_owned(),
    }
}

fn ago(stamp: &str, now: SystemTime) -> String {
    match humantime::parse_rfc3339_weak(stamp) {
        Ok(at) => match now.duration_since(at) {
            Ok(d) => format!("{} ago", short_duration(d)),
            Err(_) => "just now".into(),
        },
        Err(_) => stamp.to_owned(),
    }
}

fn recently_stopped(state: &UiState, now: SystemTime) -> Entry {
    let mut children = Vec::new();
    match &state.history {
        None => children.push(Entry::info("history", "Reading the snapshots…")),
        Some(Err(e)) => children.push(Entry::info("history", format!("Unreadable: {e}"))),
        Some(Ok(h)) => {
            // A stop that sent no signal stopped nothing: `pier history` lists its record.
            // (Every record the store lists is named as `model::target` writes it.)
            let stops: Vec<(&HistoryEntry, RecordName)> = h
                .entries
                .iter()
                .filter(|e| !e.sent_nothing())
                .filter_map(|e| Some((e, e.snapshot.parse().ok()?)))
                .collect();
            if stops.is_empty() {
                children.push(Entry::info("history", "Nothing stopped yet"));
            }
            for (e, name) in stops.into_iter().take(SNAPSHOTS_SHOWN) {
                children.push(snapshot_entry(state, e, name, now));
            }
            if !h.damaged.is_empty() {
                children.push(Entry::info(
                    "history:damaged",
                    format!(
                        "{} unreadable record(s), kept as they are (see `pier history`)",
                        h.damaged.len()
                    ),
                ));
            }
        }
    }
    Entry::Submenu {
        id: "history".into(),
        text: "Recently stopped".into(),
        enabled: true,
        dot: None,
        children,
    }
}

/// One snapshot of "Recently stopped" (`name`, the record of `e`): when and how its stop
/// ended, its command, what its restart replays, its last result, and "Restart".
fn snapshot_entry(state: &UiState, e: &HistoryEntry, name: RecordName, now: SystemTime) -> Entry {
    let key = ActionKey::Snapshot(name.clone());
    let at = |what: &str| format!("snap:{}:{what}", e.snapshot);
    let mut children = snapshot_lines(e, &at, now);
    if let Some(r) = state.last_result(&key) {
        children.push(Entry::info(
            at("result"),
            format!("{} {}", tone_mark(r.tone), r.summary),
        ));
    }
    children.push(restart_item(state, e, &name));
    let mut text = snapshot_label(e);
    if let Some(doing) = state.doing(&key) {
        let _ = write!(text, " — {doing}");
    }
    Entry::Submenu {
        id: format!("snap:{}", e.snapshot),
        text,
        enabled: true,
        dot: None,
        children,
    }
}

/// What a snapshot says of itself: when and how its stop ended, its command, and what its
/// restart replays (the program, the folder, the entries that change what code runs).
fn snapshot_lines(e: &HistoryEntry, at: &dyn Fn(&str) -> String, now: SystemTime) -> Vec<Entry> {
    let result = e
        .result
        .as_deref()
        .unwrap_or("not finished")
        .replace('_', " ");
    let mut lines = vec![
        Entry::info(
            at("when"),
            format!("Stopped {} · {result}", ago(&e.stopped_at, now)),
        ),
        // A container's record has no command (its engine starts it): its kind names it.
        Entry::info(
            at("command"),
            match (&e.kind, e.root_command.is_empty()) {
                (Some(kind), true) => kind.clone(),
                _ => words::command_of_strings(&e.root_command),
            },
        ),
    ];
    if let (Some(program), Some(folder)) = (&e.program, &e.folder) {
        lines.push(Entry::info(
            at("runs"),
            format!("Runs {program} in {folder}"),
        ));
    }
    if !e.code_env.is_empty() {
        lines.push(Entry::info(
            at("env"),
            format!("With {} (changes what code runs)", code_env_words(e)),
        ));
    }
    lines
}

/// The entries of a snapshot's environment that change what code runs, cut for the menu.
fn code_env_words(e: &HistoryEntry) -> String {
    clipped(&e.code_env.join(", "), 60)
}

/// "Restart": busy, armed, not possible and why, or ready to click.
fn restart_item(state: &UiState, e: &HistoryEntry, name: &RecordName) -> Entry {
    let key = ActionKey::Snapshot(name.clone());
    let restart = Click::Restart(name.clone());
    match (state.doing(&key), &e.why_not) {
        (Some(doing), _) => Entry::action(&restart, format!("Restart — {doing}"), false),
        // Issue 37: a replay that changes what code runs is confirmed by a second click.
        (None, None) if !e.code_env.is_empty() => match state.is_armed(e) {
            true => Entry::action(
                &restart,
                format!(
                    "Restart with {} — click again to confirm",
                    code_env_words(e)
                ),
                e.restartable,
            ),
            false => Entry::action(&restart, "Restart…", e.restartable),
        },
        (None, None) => Entry::action(&restart, "Restart", e.restartable),
        (None, Some(why)) => {
            Entry::action(&restart, format!("Restart — not possible: {why}"), false)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
