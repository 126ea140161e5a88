//! Stop: the checkpoint chain of docs/design.md §3, for every target of a batch at once. One
//! driver (`batch.rs`) owns the order over two kinds of target (`target.rs`): a process tree
//! (`tree.rs`, its signals in `signals.rs` and `ending.rs`) and a container run
//! (`container.rs`); a third kind is one more implementation of `Target`. A stop of one target
//! is a batch of one.
//!
//! Per resource, under its file lock held from the re-diagnosis until its outcome is recorded:
//! 1. re-diagnose (never trust the card that was clicked) and refuse on any change;
//! 2. write the recovery snapshot — no snapshot, no signal;
//! 3. checkpoints (a) network, (b) activity, (c) network, (d) tree + identities, (e) network +
//!    tree, with at most 2 s from (a) to the first signal on the probe's monotonic clock;
//! 4. signal leaf to root, level by level, each member re-verified right before its signal by
//!    the race-free signaller, then a bounded wait for the level to exit (both in `signal`);
//! 5. one honest outcome per member, true when the stop ends, and every newcomer (a process
//!    born during the stop: `newcomers.rs`) named with its parent and fate, never signalled;
//! 6. rescan the project; 7. one result for the resource.
//!
//! Every OS call goes through the [`Stopper`]'s interfaces — the probe, the signaller, the exit
//! waiter — so nothing here reads `/proc` or holds a pidfd or a kqueue, and the whole chain
//! runs against scripted fakes in the tests.
//!
//! There is no automatic SIGKILL. A stop anyway (`anyway.rs`) is this chain, sending SIGTERM,
//! with the reasons a person confirmed set aside; Force (`force.rs`) is a later step, SIGKILL
//! to what outlived a stop's SIGTERM, added to that stop's record.
//!
//! The checkpoints judge with the scan's own rules (`diagnose::judge`), so they refuse on
//! anything the scan would not call green; a refusal is a typed [`Refusal`] (which checkpoint,
//! and why), worded for the report's reason.

pub mod anyway;
mod batch;
pub mod checks;
pub mod container;
mod deadline;
pub mod failure;
pub mod force;
pub mod interrupt;
pub mod reconcile;
pub mod refusal;
pub mod snapshot;

mod ending;
mod flow;
pub mod newcomers;
mod rescan;
mod signals;
mod target;
mod tree;

use std::path::PathBuf;
use std::time::Duration;

use crate::diagnose::rules::Thresholds;

pub use batch::{Progress, Step};
pub use flow::Stopper;
pub use refusal::{Refusal, Why};

/// How to stop.
#[derive(Debug, Clone)]
pub struct StopOptions {
    /// How long each level of the tree gets to exit after its SIGTERM.
    pub grace: Duration,
    /// The activity window of checkpoint (b).
    pub sample: Duration,
    /// The activity above which the members count as busy at checkpoint (b).
    pub thresholds: Thresholds,
    /// The most time allowed from check (a) to the first signal.
    pub deadline: Duration,
    /// `$HOME`, which is never a project.
    pub home: Option<PathBuf>,
    /// The user's protect list, which every scan of the stop judges by (`crate::config`).
    pub protect: crate::model::protect::Protect,
    /// The cleanup's name, recorded in every snapshot it writes (`front::System::stopper`
    /// gives each stop its own): `pier restart --last` restarts one cleanup.
    pub batch: Option<String>,
    /// Run every check up to the first signal, then say what would be signalled: no snapshot
    /// is written and nothing is sent (`batch::plan_each`).
    pub dry_run: bool,
    /// Who asked for the stop, recorded in every record it writes.
    pub requested_by: crate::model::request::RequestedBy,
    /// A stop anyway: per target, the reasons the person was shown and confirmed, which the
    /// chain sets aside if the table lets a person (`model::reason`). Empty: an ordinary stop.
    pub anyway: crate::model::reason::Anyway,
}

impl StopOptions {
    /// Whether a refusal may offer a stop anyway: never to an agent, for whom it is never
    /// available (docs/design.md §7a).
    pub fn offers_anyway(&self) -> bool {
        !matches!(
            self.requested_by,
            crate::model::request::RequestedBy::Agent { .. }
        )
    }
}

impl Default for StopOptions {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(5),
            sample: Duration::from_millis(500),
            thresholds: Thresholds::default(),
            deadline: Duration::from_secs(2),
            home: std::env::var_os("HOME").map(PathBuf::from),
            dry_run: false,
            batch: None,
            protect: Default::default(),
            requested_by: Default::default(),
            anyway: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests;
