//! An automatic snapshot supersedes the one before it for the same command (docs/design.md
//! §5a): a rule or an armed stop that stops the same server every evening would otherwise
//! leave one record — one copy of its environment, secrets included — per evening, and the
//! undo a person wants is the newest. A person's records are never touched here.

use std::collections::HashSet;
use std::time::SystemTime;

use super::{remove, Ended, Named};
use crate::model::outcome::ResourceResult;
use crate::model::snapshot::{ContainerSnapshot, Snapshot};
use crate::model::target::{record_prefix_of, TargetKind};
use crate::probe::Probe;
use crate::store::{Listing, Store, StoreError};

/// What makes two records "the same command": the project, and what a restart of each starts
/// — a tree's restart member's exact argv and folder, a container's engine id. `None` when a
/// record names no such thing (its restart member not recorded).
#[derive(Debug, PartialEq, Eq)]
enum Command<'s> {
    Tree {
        project: &'s str,
        argv: Vec<&'s [u8]>,
        cwd: Option<&'s [u8]>,
    },
    Container {
        project: &'s str,
        container: &'s str,
    },
}

/// One record as a supersede reads it.
struct Rec<'s> {
    named: Named<'s>,
    automatic: bool,
    result: Option<ResourceResult>,
    /// When its stop began; `None` when it cannot be read (then it is never superseded).
    at: Option<SystemTime>,
    command: Option<Command<'s>>,
}

/// A kind of record a supersede reads.
trait Superseding {
    fn rec<'s>(&'s self, name: &'s str) -> Rec<'s>;
}

impl Superseding for Snapshot {
    fn rec<'s>(&'s self, name: &'s str) -> Rec<'s> {
        let command = super::super::rules::target(self)
            .ok()
            .map(|m| Command::Tree {
                project: &self.project.path,
                argv: m.argv.iter().map(|a| a.0.as_slice()).collect(),
                cwd: m.cwd.as_ref().map(|c| c.0.as_slice()),
            });
        Rec {
            named: Named {
                name,
                id: &self.id,
                project: &self.project.path,
            },
            automatic: self.requested_by.is_automatic(),
            result: self.result,
            at: humantime::parse_rfc3339(&self.created_at).ok(),
            command,
        }
    }
}

impl Superseding for ContainerSnapshot {
    fn rec<'s>(&'s self, name: &'s str) -> Rec<'s> {
        Rec {
            named: Named {
                name,
                id: &self.id,
                project: &self.project.path,
            },
            automatic: self.requested_by.is_automatic(),
            result: self.result,
            at: humantime::parse_rfc3339(&self.created_at).ok(),
            command: Some(Command::Container {
                project: &self.project.path,
                container: &self.container_id,
            }),
        }
    }
}

fn recs<R: Superseding>(listing: &Listing<R>) -> impl Iterator<Item = Rec<'_>> {
    listing.records.iter().map(|(name, r)| r.rec(name))
}

/// Whether `old` goes once the automatic stop recorded as `new` has ended. Why each part:
/// only an automatic record is Pier's own to replace (a person's snapshot is a person's undo);
/// only a finished one (an unfinished stop is settled by a read, never removed); only one
/// not newer than the new one, of the same command; and only once the new stop sent its
/// signals and ended something (stopped or partially stopped): a refused stop supersedes
/// nothing.
fn superseded(new: &Rec, old: &Rec) -> bool {
    let ended = matches!(
        new.result,
        Some(ResourceResult::Stopped | ResourceResult::PartiallyStopped)
    );
    let older = matches!((old.at, new.at), (Some(old), Some(new)) if old <= new);
    new.automatic
        && ended
        && old.automatic
        && old.result.is_some()
        && old.named.name != new.named.name
        && older
        && old.command.is_some()
        && old.command == new.command
}

/// After the automatic stop recorded as `new` has ended (its outcome written), removes the
/// older automatic records of the same command through the same ownership-gated removal as a
/// prune, each under its stop lock and its restart lock; one that is locked, changed or
/// cannot be read stays. Returns the names removed; an error only when the records cannot be
/// listed.
pub fn supersede(store: &Store, probe: &dyn Probe, new: &str) -> Result<Vec<String>, StoreError> {
    let trees = store.list::<Snapshot>(record_prefix_of(TargetKind::Tree))?;
    let containers = store.list::<ContainerSnapshot>(record_prefix_of(TargetKind::Container))?;
    let all: Vec<Rec> = recs(&trees).chain(recs(&containers)).collect();
    let Some(new) = all.iter().find(|r| r.named.name == new) else {
        return Ok(Vec::new());
    };
    let gone: Vec<&Rec> = all.iter().filter(|old| superseded(new, old)).collect();
    if gone.is_empty() {
        return Ok(Vec::new());
    }
    let ended = Ended {
        stopped: all
            .iter()
            .filter(|r| r.result == Some(ResourceResult::Stopped))
            .map(|r| r.named.id)
            .collect::<HashSet<_>>(),
        sessions: super::live_sessions(probe),
    };
    let mut removed = Vec::new();
    for old in gone {
        match remove(store, old.named, &ended) {
            Ok(()) => removed.push(old.named.name.to_owned()),
            Err(why) => tracing::info!("{} not superseded: {why}", old.named.name),
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests;
