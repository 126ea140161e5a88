//! The Linux side of the app: the display check before tao's panicking `gtk::init`, the
//! tray-host check, and notifications over D-Bus (org.freedesktop.Notifications), all through
//! the gtk and gio that tao and tray-icon already link.

use std::collections::HashMap;

use gtk::gio;
use gtk::glib::{self, ToVariant};
use tray_icon::{Icon, TrayIconBuilder};

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

/// Sends a desktop notification without waiting for the answer (the reply is handled on the
/// GLib main loop that tao runs). No notification service: logged, nothing else.
pub fn notify(summary: &str, body: &str) {
    let Some(bus) = session_bus() else {
        tracing::info!("no session bus for a notification: {summary}");
        return;
    };
    let hints: HashMap<String, glib::Variant> = HashMap::new();
    let params = (
        "Pier",
        0u32,
        "",
        summary,
        body,
        Vec::<String>::new(),
        hints,
        -1i32,
    )
        .to_variant();
    bus.call(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications",
        "Notify",
        Some(&params),
        None,
        gio::DBusCallFlags::NONE,
        5_000,
        None::<&gio::Cancellable>,
        |reply| {
            if let Err(e) = reply {
                tracing::info!("no notification shown: {e}");
            }
        },
    );
}
