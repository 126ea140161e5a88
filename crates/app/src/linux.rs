//! The Linux side of the app: the display check before tao's panicking `gtk::init`, the
//! tray-host check, and notifications over D-Bus (org.freedesktop.Notifications) with an
//! automatic stop's Restart button, all through the gtk and gio that tao and tray-icon
//! already link.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};

use gtk::gio;
use gtk::glib::{self, ToVariant};
use pier_core::worker::Undo;
use tray_icon::{Icon, TrayIconBuilder};

use crate::desktop::{Note, OnRestart};

/// The icon's colour tells whether anything is safe to stop, so it changes with the state.
pub const ICON_SHOWS_LOOK: bool = true;

pub fn with_icon(builder: TrayIconBuilder, icon: Icon) -> TrayIconBuilder {
    builder.with_icon(icon)
}

/// Why the tray app cannot start in this session; each says what works without it.
#[derive(Debug, thiserror::Error)]
pub enum Unprepared {
    /// No graphical session.
    #[error(
        "the tray app needs a graphical session, and neither DISPLAY nor WAYLAND_DISPLAY is set; \
         `pier scan` and `pier stop` work without one"
    )]
    NoDisplay,
    /// A display is named, and GTK could not open it.
    #[error("the display could not be opened ({0}); `pier scan` and `pier stop` work without one")]
    Display(glib::BoolError),
    /// The tray icon's AppIndicator library is not installed.
    #[error(
        "the tray icon needs the AppIndicator library, which is not installed (Debian and \
         Ubuntu: apt install libayatana-appindicator3-1); `pier scan` and `pier stop` work \
         without it"
    )]
    NoAppIndicator,
}

/// Checks that a graphical session is there, so tao's start-up cannot panic on its absence.
pub fn prepare() -> Result<(), Unprepared> {
    let has = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if !has("DISPLAY") && !has("WAYLAND_DISPLAY") {
        return Err(Unprepared::NoDisplay);
    }
    // The window class hosts and window managers see: "Pier", not the binary's name.
    glib::set_prgname(Some("pier"));
    glib::set_application_name("Pier");
    gtk::init().map_err(Unprepared::Display)?;
    appindicator_present()
}

/// The tray icon's AppIndicator library is loaded at run time, and its binding panics when it
/// is missing: look for it first, by the same names, and say what to install.
fn appindicator_present() -> Result<(), Unprepared> {
    let found = ["libayatana-appindicator3.so.1", "libappindicator3.so.1"]
        .iter()
        // SAFETY: loading the library runs its initialisers, exactly as the tray icon's own
        // load of the same file would a moment later; nothing from it is called here.
        .any(|name| unsafe { libloading::Library::new(name) }.is_ok());
    match found {
        true => Ok(()),
        false => Err(Unprepared::NoAppIndicator),
    }
}

fn session_bus() -> Option<gio::DBusConnection> {
    gio::bus_get_sync(gio::BusType::Session, None::<&gio::Cancellable>).ok()
}

/// A sentence when no tray host is on the session bus (no StatusNotifierWatcher). The app keeps
/// running: the icon falls back to an XEmbed tray when one runs, and a host started later (a
/// panel after login) still finds it.
pub fn missing_tray_host() -> Option<String> {
    let bus = match session_bus() {
        Some(bus) => bus,
        None => {
            return Some(
                "there is no D-Bus session bus, so no tray host can show Pier's icon; \
                 use `pier scan` instead"
                    .into(),
            )
        }
    };
    let reply = bus.call_sync(
        Some("org.freedesktop.DBus"),
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        "NameHasOwner",
        Some(&("org.kde.StatusNotifierWatcher",).to_variant()),
        None,
        gio::DBusCallFlags::NONE,
        2_000,
        None::<&gio::Cancellable>,
    );
    let has_watcher = reply
        .ok()
        .and_then(|v| v.get::<(bool,)>())
        .is_some_and(|(b,)| b);
    (!has_watcher).then(|| {
        "no StatusNotifier tray host is running; Pier's icon falls back to an XEmbed tray \
         if there is one, and shows nowhere otherwise; `pier scan` works without a tray"
            .into()
    })
}

/// Notifications are sent here; their buttons' signals come from here.
const NAME: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
/// The identifier of a notification's Restart button.
const RESTART: &str = "restart";
/// How many shown notifications' undos are kept: older ones' buttons do nothing (their
/// Restart stays in the menu's Recently stopped).
const KEPT: usize = 16;

thread_local! {
    /// Whether the server shows buttons (GetCapabilities has "actions"), once asked.
    static BUTTONS: Cell<Option<bool>> = const { Cell::new(None) };
    /// The notifications shown with a Restart button, by the server's id. The GLib main loop
    /// that tao runs is on this thread: every callback below runs here.
    static SHOWN: RefCell<BTreeMap<u32, Undo>> = const { RefCell::new(BTreeMap::new()) };
}

/// Sends a desktop notification without waiting for the answer (the replies are handled on
/// the GLib main loop that tao runs). One with an undo asks the server first whether it shows
/// buttons (once). No notification service: logged, nothing else.
pub fn notify(note: Note) {
    let Some(bus) = session_bus() else {
        tracing::info!("no session bus for a notification: {}", note.summary);
        return;
    };
    match (note.undo.is_some(), BUTTONS.get()) {
        (false, _) => send(&bus, note, false),
        (true, Some(buttons)) => send(&bus, note, buttons),
        (true, None) => {
            let asker = bus.clone();
            call(&bus, "GetCapabilities", None, move |reply| {
                let buttons = reply
                    .ok()
                    .and_then(|v| v.get::<(Vec<String>,)>())
                    .map(|(caps,)| caps.iter().any(|c| c == "actions"));
                BUTTONS.set(buttons);
                send(&asker, note, buttons.unwrap_or(false));
            })
        }
    }
}

/// The Notify call: with the Restart button when `buttons` and there is an undo, whose id is
/// then kept for the button's signal; otherwise the body that names the command.
fn send(bus: &gio::DBusConnection, note: Note, buttons: bool) {
    let undo = note.undo.filter(|_| buttons);
    let (body, actions) = match undo {
        Some(_) => (note.body, vec![RESTART.to_owned(), "Restart".to_owned()]),
        None => (note.plain, Vec::new()),
    };
    let hints: HashMap<String, glib::Variant> = HashMap::new();
    let params = (
        "Pier",
        0u32,
        "",
        note.summary.as_str(),
        body,
        actions,
        hints,
        -1i32,
    );
    let summary = note.summary.clone();
    call(bus, "Notify", Some(params.to_variant()), move |reply| {
        let id = match reply.map(|v| v.get::<(u32,)>()) {
            Ok(Some((id,))) => id,
            Ok(None) => return,
            Err(e) => return tracing::info!("no notification shown ({summary}): {e}"),
        };
        if let Some(undo) = undo {
            SHOWN.with_borrow_mut(|shown| {
                shown.insert(id, undo);
                while shown.len() > KEPT {
                    shown.pop_first();
                }
            });
        }
    });
}

fn call(
    bus: &gio::DBusConnection,
    method: &str,
    params: Option<glib::Variant>,
    done: impl FnOnce(Result<glib::Variant, glib::Error>) + 'static,
) {
    bus.call(
        Some(NAME),
        PATH,
        NAME,
        method,
        params.as_ref(),
        None,
        gio::DBusCallFlags::NONE,
        5_000,
        None::<&gio::Cancellable>,
        done,
    );
}

/// Subscribes to the server's ActionInvoked (a Restart button pressed: `f` gets its undo) and
/// NotificationClosed (its undo is forgotten). Called once, on the thread of the main loop.
pub fn on_restart(f: OnRestart) {
    let Some(bus) = session_bus() else {
        return;
    };
    let signal = |member: &str, handle: Box<dyn Fn(&glib::Variant)>| {
        // Subscribed for the life of the process: the id is never needed to unsubscribe.
        let _ = bus.signal_subscribe(
            Some(NAME),
            Some(NAME),
            Some(member),
            Some(PATH),
            None,
            gio::DBusSignalFlags::NONE,
            move |_, _, _, _, _, params| handle(params),
        );
    };
    signal(
        "ActionInvoked",
        Box::new(move |params| {
            let Some((id, action)) = params.get::<(u32, String)>() else {
                return;
            };
            let undo = SHOWN.with_borrow_mut(|shown| shown.remove(&id));
            if let (RESTART, Some(undo)) = (action.as_str(), undo) {
                f(undo);
            }
        }),
    );
    signal(
        "NotificationClosed",
        Box::new(|params| {
            if let Some((id, _reason)) = params.get::<(u32, u32)>() {
                SHOWN.with_borrow_mut(|shown| shown.remove(&id));
            }
        }),
    );
}
