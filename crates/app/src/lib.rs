//! Pier's menu-bar app (a tray app on Linux): one card per project, "Clean up safely",
//! "Recently stopped" with "Restart". The only crate that links tao, tray-icon and GTK.
//!
//! Layers, each testable on its own:
//! - [`state`]: what the app knows, as plain data; the worker's updates are applied here, and
//!   a scan older than the one shown is dropped;
//! - [`spec`]: the menu as plain data, a pure function of the state;
//! - [`ids`]: menu ids, and the pure mapping from a click to a command;
//! - [`menu`]: the spec made real with muda, updated in place when its shape is unchanged;
//! - [`app`]: the tao event loop that ties them to the tray icon and the worker;
//! - [`login`], [`desktop`], [`icons`]: start at login, open / reveal / notify, the icons;
//! - `linux.rs` / `macos.rs`: the few things that differ per OS, chosen below (macOS
//!   notifications in `macos/notify.rs`, the permission question they wait on in
//!   `macos/gate.rs`);
//! - [`start`]: `pier-app`'s command line, its log, and the start.
//!
//! The UI thread never waits on the engine: it posts commands to the worker and renders what
//! comes back.

mod app;
pub mod desktop;
pub mod icons;
pub mod ids;
pub mod login;
pub mod menu;
pub mod spec;
pub mod start;
pub mod state;

#[cfg_attr(target_os = "linux", path = "linux.rs")]
#[cfg_attr(target_os = "macos", path = "macos.rs")]
mod platform;

/// What macOS notifications wait on; plain data, so its tests run everywhere.
#[cfg(any(target_os = "macos", test))]
#[path = "macos/gate.rs"]
mod gate;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use pier_core::auto::scheduler::SchedulerOptions;
use pier_core::store::{Store, StoreError};
use pier_core::worker::{SystemEngine, WorkerOptions};
pub use platform::Unprepared;

/// How the app runs (`pier app` flags).
#[derive(Debug, Clone)]
pub struct AppOptions {
    /// Only projects under these folders (empty: all of the user's).
    pub under: Vec<PathBuf>,
    /// The periodic refresh; `None`: only on click, Refresh and after actions.
    pub refresh: Option<Duration>,
    /// The activity window of each scan.
    pub sample: Duration,
    /// How long a card stays green before its armed stop fires.
    pub settle: Duration,
}

/// Why the app did not run.
#[derive(Debug, thiserror::Error)]
pub enum NotStarted {
    /// Another instance holds this state folder; not an error for the user.
    #[error(
        "Pier is already running for the state folder {}; its icon is in the tray (the menu bar \
         on macOS)",
        .0.display()
    )]
    AlreadyRunning(PathBuf),
    /// This session cannot show the tray app.
    #[error(transparent)]
    Unprepared(#[from] Unprepared),
    /// The one-instance lock could not be taken.
    #[error(transparent)]
    Lock(#[from] StoreError),
    /// Pier cannot find its own program, which restarts and the login item run.
    #[error("Pier cannot find its own program: {0}")]
    NoProgram(std::io::Error),
}

/// Checks what the app needs, takes the one-instance lock, then runs the event loop (which
/// never returns: Quit exits the process).
pub fn run(opts: AppOptions, store: Store) -> Result<std::convert::Infallible, NotStarted> {
    platform::prepare()?;
    let folder = store.folder().to_path_buf();
    let instance = store
        .try_lock("app")?
        .ok_or_else(|| NotStarted::AlreadyRunning(folder.clone()))?;
    if let Some(warning) = platform::missing_tray_host() {
        eprintln!("pier: {warning}");
        tracing::warn!("{warning}");
    }
    let exe = std::env::current_exe().map_err(NotStarted::NoProgram)?;
    tracing::info!(
        "starting: state folder {}, refresh {:?}, under {:?}",
        pier_core::words::path_for_terminal(&folder),
        opts.refresh,
        opts.under
    );
    // Restarts run through the `pier` binary beside this one (see `SystemEngine::restart`).
    let engine = Arc::new(
        SystemEngine::new(store, opts.under, opts.sample, exe.with_file_name("pier"))
            .with_scheduler(SchedulerOptions {
                settle: opts.settle,
                ..SchedulerOptions::default()
            })
            .with_refresh(opts.refresh.unwrap_or(Duration::from_secs(30))),
    );
    // The lock lives as long as the process: the event loop ends in process::exit.
    std::mem::forget(instance);
    app::run(
        engine,
        WorkerOptions {
            period: opts.refresh,
            signals: true,
            drain: Duration::from_secs(2),
        },
        exe,
    )
}
