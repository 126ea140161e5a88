//! Menu ids and what a click on each one means. Ids are strings the menu hands back unchanged;
//! this is the only place that builds or reads them, and mapping a click to a command is a pure
//! function of the state.
//!
//! A click is handled after whatever the event queue held before it — a newer scan may have
//! been applied between the user's look and the click. So the clean-up ids carry a fingerprint
//! of what the card showed (level, resources, member identities): a click whose fingerprint no
//! longer matches the state does nothing, and the stop is only ever handed what was shown.
//! A stop anyway's id carries the reasons its card showed as well, and confirms exactly those:
//! a click whose card shows other reasons now does nothing, and a reason that appears after the
//! click refuses the stop (`pier_core::stop::anyway`).

use std::hash::{DefaultHasher, Hash, Hasher};

use pier_core::model::card::{Level, Project, Resource};
use pier_core::model::reason::Reason;
use pier_core::model::shown::Shown;
use pier_core::model::target::{RecordName, TargetId};
use pier_core::worker::{snapshot_label, ActionKey, Command, StopTarget};

use super::state::{NoStop, UiState};

/// Every clickable item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Click {
    /// "Clean up safely" on the project at `path`, as [`card_seen`] fingerprinted it.
    StopProject {
        path: String,
        seen: u64,
    },
    /// "Clean up all safe (N)", as [`all_safe_seen`] fingerprinted the safe cards.
    StopAllSafe {
        seen: u64,
    },
    /// "Send SIGTERM anyway" on the resource `id` of the project at `path`, confirming
    /// `reasons`, the ones its card showed, as [`card_seen`] fingerprinted the card.
    StopAnyway {
        path: String,
        id: TargetId,
        seen: u64,
        reasons: Vec<Reason>,
    },
    /// "Stop when safe" on the resource `id` of the project at `path`, as [`card_seen`]
    /// fingerprinted the card; `kernel`: the item said a live notebook kernel's state will be
    /// lost, and the click confirms it.
    StopWhenSafe {
        path: String,
        id: TargetId,
        seen: u64,
        kernel: bool,
    },
    /// "Cancel armed stop" on the resource `id` of the project at `path`: the id names the
    /// arm exactly (its root's identity), so no fingerprint is needed to cancel it.
    CancelArmed {
        path: String,
        id: TargetId,
    },
    /// Open a URL in the browser.
    Open(String),
    /// Show a folder in the file manager.
    Reveal(String),
    /// "Restart" a snapshot (its record name).
    Restart(RecordName),
    /// "Pause for 1 hour" (`false`) or "Pause until tomorrow" (`true`) of the automatic stops.
    PauseAuto {
        tomorrow: bool,
    },
    /// "Resume" the automatic stops.
    ResumeAuto,
    Refresh,
    StartAtLogin,
    Quit,
}

impl Click {
    /// The menu id of this item.
    pub fn id(&self) -> String {
        match self {
            Click::StopProject { path, seen } => format!("stop:{seen:016x}:{path}"),
            Click::StopAllSafe { seen } => format!("stop-all:{seen:016x}"),
            Click::StopAnyway {
                path,
                id,
                seen,
                reasons,
            } => {
                let reasons: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
                format!("anyway:{seen:016x}:{}:{id}:{path}", reasons.join(","))
            }
            Click::StopWhenSafe {
                path,
                id,
                seen,
                kernel,
            } => {
                let kernel = if *kernel { "kernel" } else { "-" };
                format!("when-safe:{seen:016x}:{kernel}:{id}:{path}")
            }
            Click::CancelArmed { path, id } => format!("disarm:{id}:{path}"),
            Click::Open(url) => format!("open:{url}"),
            Click::Reveal(path) => format!("reveal:{path}"),
            Click::Restart(name) => format!("restart:{name}"),
            Click::PauseAuto { tomorrow: false } => "auto-pause:hour".into(),
            Click::PauseAuto { tomorrow: true } => "auto-pause:tomorrow".into(),
            Click::ResumeAuto => "auto-resume".into(),
            Click::Refresh => "refresh".into(),
            Click::StartAtLogin => "login".into(),
            Click::Quit => "quit".into(),
        }
    }

    /// The click an id stands for; `None` for lines that only inform (`info:…`, `card:…`).
    pub fn parse(id: &str) -> Option<Click> {
        let (head, rest) = id.split_once(':').unwrap_or((id, ""));
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        match head {
            "stop" => {
                let (seen, path) = rest.split_once(':')?;
                Some(Click::StopProject {
                    seen: hex(seen)?,
                    path: some(path)?,
                })
            }
            "stop-all" => Some(Click::StopAllSafe { seen: hex(rest)? }),
            "anyway" => {
                let (seen, rest) = rest.split_once(':')?;
                let (reasons, rest) = rest.split_once(':')?;
                let (id, path) = rest.split_once(':')?;
                Some(Click::StopAnyway {
                    seen: hex(seen)?,
                    reasons: reasons
                        .split(',')
                        .map(|r| r.parse().ok())
                        .collect::<Option<_>>()?,
                    id: id.parse().ok()?,
                    path: some(path)?,
                })
            }
            "when-safe" => when_safe(rest),
            "disarm" => {
                let (id, path) = rest.split_once(':')?;
                Some(Click::CancelArmed {
                    id: id.parse().ok()?,
                    path: some(path)?,
                })
            }
            "open" => some(rest).map(Click::Open),
            "reveal" => some(rest).map(Click::Reveal),
            "restart" => rest.parse().ok().map(Click::Restart),
            "auto-pause" if rest == "hour" => Some(Click::PauseAuto { tomorrow: false }),
            "auto-pause" if rest == "tomorrow" => Some(Click::PauseAuto { tomorrow: true }),
            "auto-resume" if !id.contains(':') => Some(Click::ResumeAuto),
            "refresh" if !id.contains(':') => Some(Click::Refresh),
            "login" if !id.contains(':') => Some(Click::StartAtLogin),
            "quit" if !id.contains(':') => Some(Click::Quit),
            _ => None,
        }
    }
}

/// A fingerprint as an id writes it: 16 hex digits.
fn hex(s: &str) -> Option<u64> {
    (s.len() == 16)
        .then(|| u64::from_str_radix(s, 16).ok())
        .flatten()
}

/// The rest of a "Stop when safe" id: `SEEN:kernel|-:ID:PATH`.
fn when_safe(rest: &str) -> Option<Click> {
    let (seen, rest) = rest.split_once(':')?;
    let (kernel, rest) = rest.split_once(':')?;
    let (id, path) = rest.split_once(':')?;
    Some(Click::StopWhenSafe {
        seen: hex(seen)?,
        kernel: match kernel {
            "kernel" => true,
            "-" => false,
            _ => return None,
        },
        id: id.parse().ok()?,
        path: (!path.is_empty()).then(|| path.to_owned())?,
    })
}

/// Whether a card offers "Stop anyway…" for its resource `r`: the card is not green, and `r`
/// has reasons against it, every one of which a person may set aside (the table in
/// `model::reason`). Why: past a "no" a person may send SIGTERM anyway only where a restart or
/// a second look can undo what they set aside; a data service, a manager's program, a protected
/// or an unreadable process keep their "no" (docs/design.md §2). A container is never offered
/// one: it is no `Resource`.
pub fn offers_anyway(p: &Project, r: &Resource) -> bool {
    p.level != Level::Green
        && !r.reasons.is_empty()
        && r.reasons.iter().all(|reason| reason.person_may_skip())
}

/// Whether a card offers "Stop when safe" for its resource `r`: `r` is yellow or red, none
/// waits on it yet, and an armed stop waits for every reason against it to clear (the table
/// in `model::reason`: a client, activity, a live parent, what could not be read). Why: an arm
/// on a reason that never clears (a manager's program, a data service, the protected, an
/// unknown kind) would only lapse unfired; a green resource is stopped now ("Clean up
/// safely"); a container's idleness is not measured, and it is no `Resource`.
pub fn offers_when_safe(p: &Project, r: &Resource) -> bool {
    p.level != Level::Green
        && r.level != Level::Green
        && r.armed.is_none()
        && !r.reasons.is_empty()
        && r.reasons.iter().all(|reason| reason.armed_waits())
}

/// A fingerprint of what a card shows that a stop depends on: the project's level and, per
/// resource, its id, level and member identities.
pub fn card_seen(p: &Project) -> u64 {
    let mut h = DefaultHasher::new();
    (&p.path, p.level).hash(&mut h);
    for r in &p.resources {
        (&r.id, r.level, r.identities()).hash(&mut h);
    }
    for c in &p.containers {
        (&c.id, c.level, &c.started_at).hash(&mut h);
    }
    h.finish()
}

/// A fingerprint of every card "Clean up all safe" would stop.
pub fn all_safe_seen(state: &UiState) -> u64 {
    let mut h = DefaultHasher::new();
    for p in state.safe() {
        card_seen(p).hash(&mut h);
    }
    h.finish()
}

/// What the app does for a click.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Mark `key` as running with the word `doing`, then send the command.
    Act {
        key: ActionKey,
        doing: &'static str,
        command: Command,
    },
    /// Send a command that marks nothing (a refresh).
    Send(Command),
    Open(String),
    Reveal(String),
    ToggleStartAtLogin,
    Quit,
    /// Ask for a second click before restarting `snapshot`: its replay sets `code_env`,
    /// entries that change what code runs (`UiState::arm`).
    Arm {
        snapshot: RecordName,
        code_env: Vec<String>,
    },
    /// Nothing to do, and why (a click on an item that went stale before it was handled).
    Ignore(Ignored),
}

/// Why a click does nothing: the item went stale before the click was handled, or what it
/// acts on is busy or gone. Logged, never shown as a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Ignored {
    /// No stop is offered yet, or on this machine.
    #[error(transparent)]
    NoStop(#[from] NoStop),
    /// The project at this path is being cleaned up already.
    #[error("{0} is already being cleaned up")]
    Cleaning(String),
    /// "Clean up all safe" runs already.
    #[error("a clean-up is already running")]
    CleaningAll,
    /// The card of the project at this path is no longer what was shown.
    #[error("the card of {0} changed since it was shown; nothing was stopped")]
    CardChanged(String),
    /// The safe cards are no longer what was shown.
    #[error("the safe cards changed since they were shown; nothing was stopped")]
    SafeCardsChanged,
    /// The project at this path is no longer on the menu.
    #[error("{0} is no longer shown")]
    NotShown(String),
    /// The project at this path is not green (its level's word).
    #[error("{0} is {1}, not green")]
    NotGreen(String, &'static str),
    /// A card's id is no target id (`model::target`).
    #[error("{0} is not a resource id")]
    NotAnId(String),
    /// A pause or resume of the automatic stops runs already.
    #[error("automatic stops are being paused or resumed already")]
    Auto,
    /// No card is safe to stop.
    #[error("nothing is safe to stop")]
    NothingSafe,
    /// The card of the project at this path offers no "Stop when safe" of this resource.
    #[error("{0} offers no armed stop of {1}: a reason against it never clears on its own")]
    NoStopWhenSafe(String, String),
    /// The card of the project at this path offers no stop anyway of this resource.
    #[error("{0} offers no stop anyway of {1}: a reason against it is never set aside")]
    NoStopAnyway(String, String),
    /// This snapshot is restarting already.
    #[error("{0} is already restarting")]
    Restarting(RecordName),
    /// This snapshot is not in the history any more.
    #[error("{0} is no longer listed")]
    NotListed(RecordName),
    /// The history says this snapshot cannot be restarted, and why (its words).
    #[error("{0}")]
    NotRestartable(String),
}

/// What to stop for one green project: each of its resources, with what the card showed —
/// the project's level and the member identities — so the stop refuses if they changed.
fn targets(state: &UiState, path: &str) -> Result<Vec<StopTarget>, Ignored> {
    let project = state
        .projects()
        .iter()
        .find(|p| p.path == path)
        .ok_or_else(|| Ignored::NotShown(path.to_owned()))?;
    if project.level != Level::Green {
        return Err(Ignored::NotGreen(path.to_owned(), project.level.as_str()));
    }
    let target = |id: &str, shown: Shown| {
        let id = id
            .parse::<TargetId>()
            .map_err(|_| Ignored::NotAnId(id.to_owned()))?;
        Ok(StopTarget {
            project: project.path.clone(),
            id,
            shown,
        })
    };
    let resources = project
        .resources
        .iter()
        .map(|r| target(&r.id, Shown::of(project.level, r)));
    // A container is stopped through its engine, with the run the card showed.
    let containers = project
        .containers
        .iter()
        .map(|c| target(&c.id, Shown::of_container(project.level, c)));
    resources.chain(containers).collect()
}

/// The intent of a click, judged against the state the menu was built from.
pub fn intent(click: Click, state: &UiState) -> Intent {
    let judged = match click {
        Click::StopProject { path, seen } => stop_project(state, path, seen),
        Click::StopAllSafe { seen } => stop_all_safe(state, seen),
        Click::StopAnyway {
            path,
            id,
            seen,
            reasons,
        } => stop_anyway(state, path, id, seen, reasons),
        Click::StopWhenSafe {
            path,
            id,
            seen,
            kernel,
        } => stop_when_safe(state, path, id, seen, kernel),
        Click::CancelArmed { path, id } => cancel_armed(state, path, id),
        Click::Restart(snapshot) => restart(state, snapshot),
        Click::Open(url) => Ok(Intent::Open(url)),
        Click::Reveal(path) => Ok(Intent::Reveal(path)),
        Click::PauseAuto { tomorrow } => pause_auto(state, tomorrow),
        Click::ResumeAuto => auto_action(state, "resuming…", Command::Resume),
        Click::Refresh => Ok(Intent::Send(Command::Scan)),
        Click::StartAtLogin => Ok(Intent::ToggleStartAtLogin),
        Click::Quit => Ok(Intent::Quit),
    };
    judged.unwrap_or_else(Intent::Ignore)
}

/// "Clean up safely" on the project at `path`, if its card is still what was shown (`seen`).
fn stop_project(state: &UiState, path: String, seen: u64) -> Result<Intent, Ignored> {
    state.may_stop()?;
    let key = ActionKey::Project(path.clone());
    if state.is_running(&key) {
        return Err(Ignored::Cleaning(path));
    }
    let now = state
        .projects()
        .iter()
        .find(|p| p.path == path)
        .map(card_seen);
    if now != Some(seen) {
        return Err(Ignored::CardChanged(path));
    }
    let targets = targets(state, &path)?;
    Ok(Intent::Act {
        key: key.clone(),
        doing: "stopping…",
        command: Command::Stop { key, targets },
    })
}

/// "Clean up all safe", if the safe cards are still what was shown (`seen`).
fn stop_all_safe(state: &UiState, seen: u64) -> Result<Intent, Ignored> {
    state.may_stop()?;
    if state.is_running(&ActionKey::AllSafe) {
        return Err(Ignored::CleaningAll);
    }
    if all_safe_seen(state) != seen {
        return Err(Ignored::SafeCardsChanged);
    }
    let targets: Vec<StopTarget> = state
        .safe()
        .filter_map(|p| targets(state, &p.path).ok())
        .flatten()
        .collect();
    if targets.is_empty() {
        return Err(Ignored::NothingSafe);
    }
    Ok(Intent::Act {
        key: ActionKey::AllSafe,
        doing: "stopping…",
        command: Command::Stop {
            key: ActionKey::AllSafe,
            targets,
        },
    })
}

/// "Send SIGTERM anyway" on resource `id` of the project at `path`, if its card is still what
/// was shown (`seen`) with the same reasons against it (`reasons`): a stop anyway of that one
/// resource, with what its card showed, confirming exactly those reasons.
fn stop_anyway(
    state: &UiState,
    path: String,
    id: TargetId,
    seen: u64,
    reasons: Vec<Reason>,
) -> Result<Intent, Ignored> {
    state.may_stop()?;
    let key = ActionKey::Project(path.clone());
    if state.is_running(&key) {
        return Err(Ignored::Cleaning(path));
    }
    let project = state
        .projects()
        .iter()
        .find(|p| p.path == path)
        .ok_or_else(|| Ignored::NotShown(path.clone()))?;
    let name = id.to_string();
    let resource = project.resources.iter().find(|r| r.id == name);
    let Some(r) = resource.filter(|r| card_seen(project) == seen && r.reasons == reasons) else {
        return Err(Ignored::CardChanged(path));
    };
    if !offers_anyway(project, r) {
        return Err(Ignored::NoStopAnyway(path, name));
    }
    let target = StopTarget {
        shown: Shown::of(project.level, r),
        project: path,
        id,
    };
    Ok(Intent::Act {
        key: key.clone(),
        doing: "stopping anyway…",
        command: Command::StopAnyway {
            key,
            target,
            reasons: reasons.into_iter().collect(),
        },
    })
}

/// "Stop when safe" on resource `id` of the project at `path`, if its card is still what was
/// shown (`seen`), still offers it, and still holds a notebook kernel exactly when the item
/// said so (`kernel`): the worker arms it on the resource's fresh card.
fn stop_when_safe(
    state: &UiState,
    path: String,
    id: TargetId,
    seen: u64,
    kernel: bool,
) -> Result<Intent, Ignored> {
    state.may_stop()?;
    let key = ActionKey::Project(path.clone());
    if state.is_running(&key) {
        return Err(Ignored::Cleaning(path));
    }
    let (project, r) = shown_resource(state, &path, &id, seen)?;
    if !offers_when_safe(project, r) {
        return Err(Ignored::NoStopWhenSafe(path, id.to_string()));
    }
    if pier_core::auto::arms::holds_kernel(r) != kernel {
        return Err(Ignored::CardChanged(path));
    }
    let target = StopTarget {
        shown: Shown::of(project.level, r),
        project: path,
        id,
    };
    Ok(Intent::Act {
        key: key.clone(),
        doing: "arming…",
        command: Command::Arm {
            key,
            target,
            kernel_state_lost: kernel,
        },
    })
}

/// The project at `path` and its resource `id`, if the card is still what was shown (`seen`).
fn shown_resource<'s>(
    state: &'s UiState,
    path: &str,
    id: &TargetId,
    seen: u64,
) -> Result<(&'s Project, &'s Resource), Ignored> {
    let project = state
        .projects()
        .iter()
        .find(|p| p.path == path)
        .ok_or_else(|| Ignored::NotShown(path.to_owned()))?;
    let name = id.to_string();
    project
        .resources
        .iter()
        .find(|r| r.id == name)
        .filter(|_| card_seen(project) == seen)
        .map(|r| (project, r))
        .ok_or_else(|| Ignored::CardChanged(path.to_owned()))
}

/// "Cancel armed stop" on resource `id` of the project at `path`: its id names the arm.
fn cancel_armed(state: &UiState, path: String, id: TargetId) -> Result<Intent, Ignored> {
    let key = ActionKey::Project(path.clone());
    if state.is_running(&key) {
        return Err(Ignored::Cleaning(path));
    }
    Ok(Intent::Act {
        key: key.clone(),
        doing: "cancelling the armed stop…",
        command: Command::Disarm { key, id },
    })
}

/// "Pause for 1 hour" or "Pause until tomorrow" of the automatic stops.
fn pause_auto(state: &UiState, tomorrow: bool) -> Result<Intent, Ignored> {
    use pier_core::auto::pause::For;
    let asked = match tomorrow {
        true => For::Tomorrow,
        false => For::While(std::time::Duration::from_secs(3600)),
    };
    auto_action(state, "pausing…", Command::Pause { asked })
}

/// A pause or resume of the automatic stops, unless one runs already.
fn auto_action(state: &UiState, doing: &'static str, command: Command) -> Result<Intent, Ignored> {
    if state.is_running(&ActionKey::Auto) {
        return Err(Ignored::Auto);
    }
    Ok(Intent::Act {
        key: ActionKey::Auto,
        doing,
        command,
    })
}

/// "Restart" of `snapshot`: armed first when its replay changes what code runs.
fn restart(state: &UiState, snapshot: RecordName) -> Result<Intent, Ignored> {
    let key = ActionKey::Snapshot(snapshot.clone());
    if state.is_running(&key) {
        return Err(Ignored::Restarting(snapshot));
    }
    let name = snapshot.to_string();
    let entry = state
        .history
        .as_ref()
        .and_then(|h| h.as_ref().ok())
        .and_then(|h| h.entries.iter().find(|e| e.snapshot == name));
    match entry {
        // Issue 37: a replay that changes what code runs is confirmed by a second click.
        Some(e) if e.restartable && !e.code_env.is_empty() && !state.is_armed(e) => {
            Ok(Intent::Arm {
                snapshot,
                code_env: e.code_env.clone(),
            })
        }
        Some(e) if e.restartable => Ok(Intent::Act {
            key: key.clone(),
            doing: "restarting…",
            command: Command::Restart {
                label: snapshot_label(e),
                snapshot,
            },
        }),
        Some(e) => Err(Ignored::NotRestartable(
            e.why_not.clone().unwrap_or_default(),
        )),
        None => Err(Ignored::NotListed(snapshot)),
    }
}

#[cfg(test)]
mod tests;
