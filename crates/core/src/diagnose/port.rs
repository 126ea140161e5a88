//! Who holds a TCP port, and whether `pier stop :PORT` may act on it (docs/design.md §3.11).
//!
//! The question people bring is an error: `EADDRINUSE :::3000`. The tools they reach for
//! (`kill-port`, `killport`, `fkill :3000`) kill whatever holds the port. Here the answer
//! comes from a whole scan: the holders are the cards (a resource's every listener, both
//! families, is one holder; a container publishing the port is one), and the listeners that
//! are no candidate. Pier acts only when exactly one holder has the port and that holder is
//! green; otherwise it says why not, and what the user can do. Pure: a function of the scan.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::card::{endpoint, EvidenceKind, Level, OtherListener, Resource, Scan};
use crate::model::container::Container;
use crate::model::reason::{self, Reason};
use crate::words;

/// `:3000` as a port, `None` when `arg` does not start with a colon (it is an id). A port is
/// 1 to 65535, written plainly; anything else after the colon is refused ([`NotAPort`]).
pub fn parse(arg: &str) -> Option<Result<u16, NotAPort>> {
    let digits = arg.strip_prefix(':')?;
    Some(match digits.parse::<u16>() {
        Ok(p) if p > 0 && p.to_string() == digits => Ok(p),
        _ => Err(NotAPort(arg.to_owned())),
    })
}

/// An argument with a colon and no port after it (`:0`, `:http`, `:99999`), as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a port: write a colon and the port number, 1 to 65535 (e.g. :3000)")]
pub struct NotAPort(pub String);

/// One holder of the port, as the answer names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// The card's id (a resource or a container), what `pier stop` takes; `null` for a
    /// listener that is no candidate.
    pub id: Option<String>,
    /// What it is: the tool kind (`"vite"`), `"container web"`, or the process's short name.
    pub what: String,
    /// Its card's level; `null` for a listener that is no candidate.
    pub level: Option<Level>,
    /// Its project's folder (or working directory); `null` when it has no card.
    pub project: Option<String>,
    /// The process holding the port (a resource's root, or the listener's owner); `null` for
    /// a container, and when no owner is visible.
    pub pid: Option<u32>,
    /// Its listeners on the port, as a browser writes them (`127.0.0.1:3000`, `[::]:3000`).
    pub listeners: Vec<String>,
}

/// The answer to "who holds this port": for `pier stop :PORT`, and for `pier scan :PORT` as
/// what that stop would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortAnswer {
    /// The port asked about.
    pub port: u16,
    /// Every holder, one per card or per visible process.
    pub holders: Vec<Holder>,
    /// The id `pier stop :PORT` hands to its stop: the only holder, green in the scan (which
    /// `pier stop` makes without the activity sample: whether it was stopped is the stop's
    /// result). `null` when it stops nothing.
    pub stops: Option<String>,
    /// Why it stops it, or why not, in words.
    pub reason: String,
    /// What the user can do instead; `null` when Pier stops it, or nothing can be added.
    pub hint: Option<String>,
}

impl PortAnswer {
    /// Nothing listens: the port is free.
    pub fn is_free(&self) -> bool {
        self.holders.is_empty()
    }
}

/// Who holds `port` in `scan` (made with `include_others`, no `--under`), and what a stop of
/// it would do.
pub fn answer(scan: &Scan, port: u16) -> PortAnswer {
    answer_as(scan, port, false)
}

/// [`answer`] for `pier stop --dry-run :PORT`: the same choice, and its reason says the holder
/// is checked as a stop would check it, never that it is being stopped.
pub fn answer_in_a_dry_run(scan: &Scan, port: u16) -> PortAnswer {
    answer_as(scan, port, true)
}

/// Who says the answer, for its words on the holder it hands to the stop ([`handed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Said {
    /// `pier scan :PORT`, from a sampled scan: it saw the level.
    Sampled,
    /// `pier stop :PORT`, from an unsampled scan.
    Stop,
    /// `pier stop --dry-run :PORT`: nothing is stopped.
    DryRun,
}

fn answer_as(scan: &Scan, port: u16, dry_run: bool) -> PortAnswer {
    let mut holders = Vec::new();
    let mut single: Option<Verdict> = None;
    let said = match (scan.sample_ms > 0, dry_run) {
        (true, _) => Said::Sampled,
        (false, false) => Said::Stop,
        (false, true) => Said::DryRun,
    };
    for p in &scan.projects {
        for r in p.resources.iter().filter(|r| holds(r, port)) {
            holders.push(resource_holder(&p.path, r, port));
            single = Some(of_resource(r, port, said));
        }
        for c in p
            .containers
            .iter()
            .filter(|c| c.ports.iter().any(|x| x.port == port))
        {
            holders.push(container_holder(&p.path, c, port));
            single = Some(of_container(c, port, said));
        }
    }
    for (owner, listeners) in others(scan, port) {
        holders.push(other_holder(owner, &listeners));
        single = Some(of_other(listeners[0], port));
    }
    let (stops, reason, hint) = match (holders.len(), single) {
        (0, _) => (
            None,
            format!("nothing listens on TCP port {port}: it is free"),
            None,
        ),
        (1, Some(v)) => (v.stops, v.reason, v.hint),
        (n, _) => (
            None,
            format!(
                "{n} holders listen on TCP port {port}, so `pier stop :{port}` stops none of \
                 them: it acts on a port only when one resource holds it"
            ),
            Some(
                "stop the one you mean by its id (`pier stop ID`), after `pier scan` shows it"
                    .to_owned(),
            ),
        ),
    };
    PortAnswer {
        port,
        holders,
        stops,
        reason,
        hint,
    }
}

/// A resource of the group at `project` holding `port`, as a holder.
fn resource_holder(project: &str, r: &Resource, port: u16) -> Holder {
    Holder {
        id: Some(r.id.clone()),
        what: r.kind.clone(),
        level: Some(r.level),
        project: Some(project.to_owned()),
        pid: Some(r.root.pid),
        listeners: r
            .ports
            .iter()
            .filter(|x| x.port == port)
            .map(|x| x.endpoint())
            .collect(),
    }
}

/// A container of the group at `project` publishing `port`, as a holder.
fn container_holder(project: &str, c: &Container, port: u16) -> Holder {
    Holder {
        id: Some(c.id.clone()),
        what: format!("container {}", c.name),
        level: Some(c.level),
        project: Some(project.to_owned()),
        pid: None,
        listeners: c
            .ports
            .iter()
            .filter(|x| x.port == port)
            .map(|x| endpoint(&x.address, x.port))
            .collect(),
    }
}

/// The listeners of one owner that is no candidate (`None`: no visible owner), as a holder.
fn other_holder(owner: Option<u32>, listeners: &[&OtherListener]) -> Holder {
    Holder {
        id: None,
        what: listeners[0]
            .command
            .as_deref()
            .map_or("unknown owner".to_owned(), |c| c.trim_end().to_owned()),
        level: None,
        project: None,
        pid: owner,
        listeners: listeners
            .iter()
            .map(|l| endpoint(&l.address, l.port))
            .collect(),
    }
}

/// Whether the resource listens on `port`, the server's listener or a helper's: a stop of the
/// resource frees both.
fn holds(r: &Resource, port: u16) -> bool {
    r.ports.iter().any(|p| p.port == port)
}

/// The listeners on `port` that are no candidate, one group per owner (a server's IPv4 and
/// IPv6 listeners are one holder); listeners with no visible owner form one group.
fn others(scan: &Scan, port: u16) -> BTreeMap<Option<u32>, Vec<&OtherListener>> {
    let mut groups: BTreeMap<Option<u32>, Vec<&OtherListener>> = BTreeMap::new();
    for l in scan
        .other_listeners
        .iter()
        .flatten()
        .filter(|l| l.port == port)
    {
        groups.entry(l.pid).or_default().push(l);
    }
    groups
}

/// The hint for what the user's protect list names (`message`: its evidence's), or for a list
/// that could not be read, which protects everything until it is fixed.
fn on_your_list(message: &str) -> String {
    if message.starts_with("on your protect list") {
        "Pier never stops what your protect list names, not even with --anyway (`pier protect` \
         shows the list)"
            .to_owned()
    } else {
        "fix what the reason names (`pier doctor` checks it): until then Pier offers nothing"
            .to_owned()
    }
}

struct Verdict {
    stops: Option<String>,
    reason: String,
    hint: Option<String>,
}

/// A resource, the only holder: green is handed to the stop; otherwise its level's evidence
/// says why not, and the hint what the user can do ([`hint`]). `said`: who says it.
fn of_resource(r: &Resource, port: u16, said: Said) -> Verdict {
    let name = format!("{} (pid {}, id {})", r.kind, r.root.pid, r.id);
    if r.level == Level::Green {
        return Verdict {
            stops: Some(r.id.clone()),
            reason: handed_to_the_stop(&name, port, said),
            hint: None,
        };
    }
    let reason = format!(
        "{name} holds it and is {}: {}",
        r.level.as_str(),
        words::level_reasons(r)
    );
    Verdict {
        stops: None,
        reason,
        hint: Some(hint(r, port)),
    }
}

/// The words for the only holder, green in `scan`, that `pier stop :PORT` hands to its stop.
/// Why not "green" without a sample: `pier stop :PORT` chooses from a scan with no activity
/// sample, and the stop's own check (b) may find it busy; a verdict the stop has not reached
/// would then contradict its result. `pier scan :PORT` samples, and says what it saw. A dry
/// run stops nothing, so it never says "stopping".
fn handed_to_the_stop(name: &str, port: u16, said: Said) -> String {
    handed(name, "holds it", "", port, said)
}

/// [`handed_to_the_stop`]'s words for any holder: `holds` (its relation to the port) and `how`
/// (" through its engine", or nothing).
fn handed(name: &str, holds: &str, how: &str, port: u16, said: Said) -> String {
    match said {
        Said::Sampled => format!(
            "{name} {holds} and is green: `pier stop :{port}` stops it{how} if the stop's own \
             checks still pass"
        ),
        Said::Stop => format!("{name} {holds}: stopping it{how}, if the stop's own checks pass"),
        Said::DryRun => format!("{name} {holds}: checking it as a stop would, stopping nothing"),
    }
}

/// What the user can do about a resource that is not green. A stop anyway is offered only where
/// it can act and would free the port: every reason one a person may set aside (never a
/// protected process, a managed program, a data service, something unread or a listener shared
/// with a process outside the resource, where the port would stay held).
fn hint(r: &Resource, port: u16) -> String {
    if let Some(hint) = not_for_pier(r, port) {
        return hint;
    }
    let found: Vec<Reason> = reason::reasons_of(&r.evidence).into_iter().collect();
    if let Some(e) = r
        .evidence
        .iter()
        .find(|e| Reason::of(e).is_some_and(|x| !x.person_may_skip()))
    {
        // A stop anyway would be refused too: say so, offer nothing.
        format!("not even `pier stop --anyway` would stop it: {}", e.message)
    } else if found.contains(&Reason::LiveConnection) {
        format!(
            "close that client and run `pier stop :{port}` again, or {}",
            words::stop_anyway(&r.id, &found)
        )
    } else {
        format!("if you are sure, {}", words::stop_anyway(&r.id, &found))
    }
}

/// Why the resource is not Pier's to stop, a stop anyway included, and who stops it instead: the
/// user's protect list, a protected process, a data service or an engine's client (their own
/// command), its manager, or a process outside it sharing the listener.
fn not_for_pier(r: &Resource, port: u16) -> Option<String> {
    let has = |k: EvidenceKind| r.evidence.iter().any(|e| e.kind == k);
    let listed = r
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::UserProtected);
    if let Some(e) = listed {
        Some(on_your_list(&e.message))
    } else if has(EvidenceKind::Protected) {
        Some("Pier never stops it, not even with --anyway".to_owned())
    } else if let Some(e) = r.evidence.iter().find(|e| {
        matches!(
            e.kind,
            EvidenceKind::DataService | EvidenceKind::EngineClient
        )
    }) {
        // Its own words name the command that stops it (the tool's shutdown, the engine's).
        Some(format!(
            "Pier never stops it, not even with --anyway: {}",
            e.message
        ))
    } else if let Some(m) = &r.managed_by {
        Some(match (&m.stop_command, m.started_it()) {
            (Some(cmd), _) => format!(
                "stop it with its manager: `{cmd}` (a signal would be answered by a restart)"
            ),
            (None, true) => format!(
                "stop it through {}, which would start it again after a signal",
                m.manager
            ),
            (None, false) => format!("it runs in a {} unit; stop it there", m.manager),
        })
    } else if has(EvidenceKind::SharedListener) {
        Some(format!(
            "a process outside it holds the same listener, so stopping it would not free :{port}"
        ))
    } else {
        None
    }
}

/// A container, the only holder: stopped through its engine when green; never a stop anyway.
fn of_container(c: &Container, port: u16, said: Said) -> Verdict {
    let name = format!("container {} ({}, id {})", c.name, c.engine, c.id);
    if c.level == Level::Green {
        // As for a resource ([`handed_to_the_stop`]): no verdict the stop has not reached.
        let reason = handed(&name, "publishes it", " through its engine", port, said);
        return Verdict {
            stops: Some(c.id.clone()),
            reason,
            hint: None,
        };
    }
    let listed = c
        .evidence
        .iter()
        .find(|e| e.kind == EvidenceKind::UserProtected);
    Verdict {
        stops: None,
        hint: Some(match listed {
            Some(e) => on_your_list(&e.message),
            None => format!(
                "it is its engine's to stop: `{} stop {}`, if you are sure",
                c.engine.to_lowercase(),
                c.name
            ),
        }),
        reason: format!(
            "{name} publishes it and is {}: {}",
            c.level.as_str(),
            words::reasons(&c.evidence, c.level)
        ),
    }
}

/// A listener that is no candidate: never Pier's to stop.
fn of_other(l: &OtherListener, port: u16) -> Verdict {
    match (l.pid, &l.command) {
        (None, _) => Verdict {
            stops: None,
            reason: format!(
                "a process Pier cannot see holds it: not yours (another user's), or one Pier \
                 cannot read; {}",
                l.reason
            ),
            hint: Some(format!(
                "`sudo lsof -nP -iTCP:{port} -sTCP:LISTEN` names it; Pier never stops another \
                 user's process"
            )),
        },
        (Some(pid), command) => Verdict {
            stops: None,
            reason: format!(
                "{} (pid {pid}) holds it, and is not dev residue Pier can vouch for: {}",
                command.as_deref().unwrap_or("a process").trim_end(),
                l.reason
            ),
            hint: Some(
                "Pier leaves it alone; stop it the way it was started, if it is yours to stop"
                    .to_owned(),
            ),
        },
    }
}

#[cfg(test)]
mod tests;
