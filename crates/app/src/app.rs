//! The event loop: tao on the main thread, the tray icon and its muda menu, the worker on its
//! own thread. Everything here reacts to one event and returns; nothing waits on the engine.
//!
//! Start-up order (docs/design.md §7.4): the display check (tao's Linux start-up panics without
//! one), the event loop, the worker, then the tray icon at `StartCause::Init`. Quit — from the
//! menu, SIGINT or SIGTERM — drops the tray icon, joins the worker, and exits 0.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tray_icon::menu::MenuEvent;
use tray_icon::{TrayIcon, TrayIconBuilder, TrayIconEvent};

use super::icons::{self, IconError, Look};
use super::ids::{self, Click, Intent};
use super::login::LoginError;
use super::menu::{Applied, LiveMenu};
use super::state::{self, UiState};
use super::{desktop, login, spec};
use pier_core::worker::{ActionKey, Command, Engine, Tone, Undo, Update, Worker, WorkerOptions};

/// What reaches the event loop from other threads.
#[derive(Debug)]
pub enum UserEvent {
    Worker(Update),
    Menu(String),
    /// A click on the icon itself (macOS; Linux hosts do not report it).
    IconClicked,
    /// The login item was written or removed (off the UI thread): the new setting, or why not.
    StartAtLogin(Result<bool, LoginError>),
    /// "Restart" on an automatic stop's notification.
    Undo(Undo),
}

/// Why the tray icon could not be put up.
#[derive(Debug, thiserror::Error)]
enum TrayError {
    /// The menu could not be built.
    #[error(transparent)]
    Menu(#[from] tray_icon::menu::Error),
    /// The icon could not be read.
    #[error(transparent)]
    Icon(#[from] IconError),
    /// The tray would not take the icon.
    #[error(transparent)]
    Tray(#[from] tray_icon::Error),
}

/// Everything the running app holds; owned by the event-loop closure.
struct App {
    state: UiState,
    live: Option<LiveMenu>,
    tray: Option<TrayIcon>,
    worker: Option<Worker>,
    look: Option<Look>,
    title: String,
    login_path: Result<PathBuf, LoginError>,
    exe: PathBuf,
    proxy: Arc<Mutex<EventLoopProxy<UserEvent>>>,
}

/// Runs the app until Quit. `engine` and `opts` are the worker's.
pub fn run(engine: Arc<dyn Engine>, opts: WorkerOptions, exe: PathBuf) -> ! {
    #[allow(unused_mut)]
    let mut event_loop = EventLoopBuilder::<UserEvent>::with_user_event().build();
    #[cfg(target_os = "macos")]
    {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
    }
    let proxy = Arc::new(Mutex::new(event_loop.create_proxy()));
    install_handlers(&proxy);
    let sink_proxy = Arc::clone(&proxy);
    let sink = Arc::new(move |u: Update| send(&sink_proxy, UserEvent::Worker(u)));
    let worker = match Worker::spawn(engine, opts, sink) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("pier: the background worker could not start: {e}");
            std::process::exit(1);
        }
    };
    let login_path = login::system_entry_path();
    let start_at_login = login_path
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|p| login::is_enabled(p));
    let mut app = App {
        state: UiState::new(start_at_login),
        live: None,
        tray: None,
        worker: Some(worker),
        look: None,
        title: String::new(),
        login_path,
        exe,
        proxy: Arc::clone(&proxy),
    };
    event_loop.run(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            Event::NewEvents(StartCause::Init) => {
                if let Err(e) = app.start_tray() {
                    eprintln!("pier: the tray icon could not be created: {e}");
                    app.quit(control_flow, 1);
                }
            }
            Event::UserEvent(UserEvent::Worker(update)) => app.on_update(update, control_flow),
            Event::UserEvent(UserEvent::Menu(id)) => app.on_click(&id, control_flow),
            Event::UserEvent(UserEvent::IconClicked) => {
                app.send(Command::Scan);
            }
            Event::UserEvent(UserEvent::Undo(undo)) => app.undo(undo),
            Event::UserEvent(UserEvent::StartAtLogin(result)) => {
                if let Err(e) = &result {
                    desktop::notify("Pier: start at login", &e.to_string());
                }
                app.state.start_at_login = result;
                app.render();
            }
            _ => {}
        }
    })
}

fn send(proxy: &Mutex<EventLoopProxy<UserEvent>>, event: UserEvent) {
    if let Ok(p) = proxy.lock() {
        // The loop has ended only while quitting: nothing is left to tell.
        let _ = p.send_event(event);
    }
}

/// Menu clicks and icon clicks arrive on other threads' handlers; forward them to the loop.
fn install_handlers(proxy: &Arc<Mutex<EventLoopProxy<UserEvent>>>) {
    let menu_proxy = Arc::clone(proxy);
    MenuEvent::set_event_handler(Some(move |e: MenuEvent| {
        send(&menu_proxy, UserEvent::Menu(e.id.0));
    }));
    let icon_proxy = Arc::clone(proxy);
    TrayIconEvent::set_event_handler(Some(move |e: TrayIconEvent| {
        if matches!(e, TrayIconEvent::Click { .. }) {
            send(&icon_proxy, UserEvent::IconClicked);
        }
    }));
    let undo_proxy = Arc::clone(proxy);
    desktop::on_restart(Box::new(move |undo| {
        send(&undo_proxy, UserEvent::Undo(undo))
    }));
}

impl App {
    fn start_tray(&mut self) -> Result<(), TrayError> {
        let live = LiveMenu::build(&spec::menu(&self.state, SystemTime::now()), icons::dots())?;
        let look = icons::look(&self.state);
        let icon = icons::tray_icon(look)?;
        let builder = TrayIconBuilder::new()
            .with_id("pier")
            .with_menu(Box::new(live.menu.clone()))
            .with_tooltip("Pier");
        let tray = super::platform::with_icon(builder, icon).build()?;
        self.live = Some(live);
        self.tray = Some(tray);
        self.look = Some(look);
        tracing::info!("the tray icon is up");
        Ok(())
    }

    fn send(&self, command: Command) {
        if let Some(w) = &self.worker {
            if !w.send(command) {
                tracing::error!("the worker has ended; the menu can no longer act");
            }
        }
    }

    fn on_update(&mut self, update: Update, control_flow: &mut ControlFlow) {
        match self.state.apply(update) {
            state::Applied::Changed => {
                tracing::debug!("showing the scan of generation {}", self.state.generation());
                self.render();
            }
            state::Applied::Stale => tracing::debug!("dropped a scan older than the one shown"),
            state::Applied::Same => {}
            state::Applied::Finished(report) => {
                self.render();
                let title = match report.tone {
                    Tone::Done => "Pier: done",
                    Tone::Refused => "Pier: refused",
                    Tone::Partial => "Pier: partly done",
                    Tone::NotStopped => "Pier: not stopped",
                    Tone::Failed => "Pier: failed",
                };
                desktop::notify_result(title, &report);
            }
            state::Applied::Quit => self.quit(control_flow, 0),
        }
    }

    fn on_click(&mut self, id: &str, control_flow: &mut ControlFlow) {
        let Some(click) = Click::parse(id) else {
            return;
        };
        match ids::intent(click, &self.state) {
            Intent::Act {
                key,
                doing,
                command,
            } => {
                if self.state.begin(key, doing) {
                    self.send(command);
                }
            }
            Intent::Send(command) => self.send(command),
            Intent::Open(target) | Intent::Reveal(target) => desktop::open(&target),
            Intent::ToggleStartAtLogin => self.toggle_start_at_login(),
            Intent::Arm { snapshot, code_env } => self.state.arm(snapshot, code_env),
            Intent::Quit => return self.quit(control_flow, 0),
            Intent::Ignore(why) => {
                let why = why.to_string();
                tracing::info!("click ignored: {}", pier_core::words::for_terminal(&why))
            }
        }
        self.render();
    }

    /// A notification's Restart: the undo of a stop nobody clicked, run as the menu's Restart
    /// is, marked on its snapshot while it runs (once: a second press while it runs is
    /// dropped). Not confirmed by a second click as the menu's may be (docs/decisions.md).
    fn undo(&mut self, undo: Undo) {
        if self
            .state
            .begin(ActionKey::Snapshot(undo.snapshot.clone()), "restarting…")
        {
            tracing::info!("restart from a notification: {}", undo.snapshot);
            self.send(undo.command());
        }
        self.render();
    }

    /// Writes or removes the login item on a thread of its own (it fsyncs); the new setting
    /// comes back as an event.
    fn toggle_start_at_login(&mut self) {
        let want = !matches!(self.state.start_at_login, Ok(true));
        let path = self.login_path.clone();
        let exe = self.exe.clone();
        let proxy = Arc::clone(&self.proxy);
        std::thread::spawn(move || {
            let result = path.and_then(|p| login::set(&p, &exe, want, cfg!(target_os = "macos")));
            send(&proxy, UserEvent::StartAtLogin(result));
        });
    }

    /// Brings the tray up to date with the state: menu in place where it can, icon and title
    /// only when they change (each icon change writes a file on Linux).
    fn render(&mut self) {
        let (Some(live), Some(tray)) = (self.live.as_mut(), self.tray.as_ref()) else {
            return;
        };
        match live.update(&spec::menu(&self.state, SystemTime::now())) {
            Ok(Applied::InPlace) => {}
            Ok(Applied::Rebuilt) => tray.set_menu(Some(Box::new(live.menu.clone()))),
            Err(e) => tracing::error!("the menu could not be updated: {e}"),
        }
        let look = icons::look(&self.state);
        if super::platform::ICON_SHOWS_LOOK && self.look != Some(look) {
            match icons::tray_icon(look) {
                Ok(icon) => {
                    if let Err(e) = tray.set_icon(Some(icon)) {
                        tracing::warn!("the icon could not be changed: {e}");
                    }
                }
                Err(e) => tracing::warn!("the icon could not be read: {e}"),
            }
            self.look = Some(look);
        }
        let title = icons::title(&self.state);
        if cfg!(target_os = "macos") && title != self.title {
            tray.set_title(Some(&title));
        }
        self.title = title;
    }

    fn quit(&mut self, control_flow: &mut ControlFlow, code: i32) {
        drop(self.tray.take());
        if let Some(worker) = self.worker.take() {
            worker.shutdown();
        }
        tracing::info!("quit");
        *control_flow = ControlFlow::ExitWithCode(code);
    }
}
