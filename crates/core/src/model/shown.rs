//! What a card showed the user, when it showed something (the app does): a stop of it is
//! refused if the fresh diagnosis differs.

use super::card::{Level, Resource};
use super::container::Container;
use super::Identity;

/// What the caller showed the user, when it showed something (the app does): the stop is
/// refused if the fresh diagnosis differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The level of the project the card was in; the stop is refused if it is another now.
    pub project_level: Level,
    /// The resource's members as shown; the stop is refused if the fresh ones are not the
    /// same identities running the same executables. Empty for a container.
    pub members: Vec<ShownMember>,
    /// For a container's card: the run it showed (its start time, as the engine wrote it);
    /// the stop is refused if the container runs another one now. `None` for a resource.
    pub container_run: Option<String>,
}

/// One member as it was shown: its identity, and the executable it ran then. The start time
/// survives an exec, so the executable is what tells an exec since (docs/design.md §1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ShownMember {
    /// Who it was: its pid and start time.
    pub identity: Identity,
    /// The path of the executable it ran then; `None` when it could not be read.
    pub exe: Option<String>,
}

impl Shown {
    /// What a card built from `resource`, in a project at `project_level`, shows.
    pub fn of(project_level: Level, resource: &Resource) -> Self {
        Self {
            project_level,
            members: shown_members(resource),
            container_run: None,
        }
    }

    /// What a container's card, in a project at `project_level`, shows.
    pub fn of_container(project_level: Level, container: &Container) -> Self {
        Self {
            project_level,
            members: Vec::new(),
            container_run: container.started_at.clone(),
        }
    }
}

/// Every member of `resource` as a card shows it.
pub fn shown_members(resource: &Resource) -> Vec<ShownMember> {
    resource
        .members
        .iter()
        .map(|m| ShownMember {
            identity: m.identity(),
            exe: m.exe.clone(),
        })
        .collect()
}
