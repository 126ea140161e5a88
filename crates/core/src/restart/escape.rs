//! What a scheduler restarts runs outside the scheduler's own cgroup (docs/design.md §5a), so
//! stopping the scheduler's service (`systemctl --user stop pier-watch`, which kills its whole
//! cgroup) never stops the servers it brought back. The app's restart runs `pier restart` as
//! a child; [`command`] builds that child so that it, and the tree it starts, leave:
//!
//! - at the cgroup root, or without cgroup v2: nothing to do;
//! - under a systemd user manager (`…/user@UID.service/…`): through `systemd-run --user
//!   --scope --quiet --collect --`, a scope of its own the manager collects once empty;
//! - otherwise, when the folder above the scheduler's cgroup takes a new one: a sibling cgroup
//!   `pier-restart-<ms>`, the child moved into it before it execs;
//! - if neither: the restart still runs, and the log says it stays.
//!
//! macOS: launchd has no cgroups, and the child's tree is re-parented when `pier restart`
//! ends: nothing to do.

use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(target_os = "linux")]
#[path = "escape/linux.rs"]
mod platform;

#[cfg(not(target_os = "linux"))]
mod platform {
    use super::{Escape, NoNeed};

    /// No cgroups here.
    pub fn plan() -> Escape {
        Escape::Nothing(NoNeed::NoCgroups)
    }

    /// Never asked: [`plan`] makes no sibling here.
    pub fn move_before_exec(_: &mut std::process::Command, _: &std::path::Path) {}

    /// Never asked: [`plan`] makes no sibling here.
    pub fn settle_sibling(_: &std::path::Path, _: u32) {}
}

pub use platform::plan;

/// Why the restart's child needs no move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoNeed {
    /// The scheduler runs at the root of the cgroup tree: no service holds it.
    #[error("the scheduler runs at the cgroup root")]
    Root,
    /// No cgroup v2 line for this process.
    #[error("no cgroup v2 here")]
    NoCgroup2,
    /// This platform has no cgroups (macOS: launchd re-parents the tree).
    #[error("this platform has no cgroups; the restarted tree is re-parented")]
    NoCgroups,
}

/// Why the restart's child stays in the scheduler's cgroup.
#[derive(Debug, thiserror::Error)]
pub enum Stays {
    /// The cgroup v2 mount could not be found.
    #[error("the cgroup v2 mount was not found in /proc/self/mountinfo")]
    NoMount,
    /// A sibling cgroup could not be made.
    #[error("no cgroup could be made in {}: {source}", .parent.display())]
    NoSibling {
        /// The folder above the scheduler's cgroup.
        parent: PathBuf,
        /// The OS's answer.
        #[source]
        source: std::io::Error,
    },
}

/// How the restart's child leaves the scheduler's cgroup.
#[derive(Debug)]
pub enum Escape {
    /// It needs not.
    Nothing(NoNeed),
    /// Through `systemd-run` (this trusted binary) into a scope of its own.
    Scope(PathBuf),
    /// Moved into this new sibling cgroup (a folder of the cgroup v2 mount) before it execs.
    Sibling(PathBuf),
    /// It cannot: it runs where the scheduler runs.
    Stays(Stays),
}

/// `exe ARGS…` as the restart's child, leaving the scheduler's cgroup as `escape` says. The
/// caller adds the arguments, environment and pipes.
pub fn command(exe: &Path, escape: &Escape) -> Command {
    match escape {
        Escape::Scope(systemd_run) => {
            let mut c = Command::new(systemd_run);
            c.args(["--user", "--scope", "--quiet", "--collect", "--"])
                .arg(exe);
            c
        }
        Escape::Sibling(dir) => {
            let mut c = Command::new(exe);
            platform::move_before_exec(&mut c, dir);
            c
        }
        Escape::Nothing(_) | Escape::Stays(_) => Command::new(exe),
    }
}

/// After the child started: whether it left (for the log), and a sibling it did not enter
/// removed. `pid` is the child's, not yet reaped.
pub fn settle(escape: &Escape, pid: u32) {
    match escape {
        Escape::Sibling(dir) => platform::settle_sibling(dir, pid),
        Escape::Stays(why) => {
            tracing::warn!("the restart stays in the scheduler's cgroup: {why}");
        }
        Escape::Nothing(_) | Escape::Scope(_) => {}
    }
}
