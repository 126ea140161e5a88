//! The macOS side of the app. Type-checked here, never run: there is no Mac on this team's
//! machines. The accessory activation policy (no Dock icon) is set on the event loop in
//! `app.rs`; the bundled app also carries `LSUIElement` in `assets/macos/Info.plist`.
//! Notifications (UserNotifications) are in `macos/notify.rs`.

use tray_icon::{Icon, TrayIconBuilder};

#[path = "macos/notify.rs"]
mod notify;

pub use notify::{notify, on_restart};

/// One template icon, tinted by the menu bar; the title beside it carries the count.
pub const ICON_SHOWS_LOOK: bool = false;

pub fn with_icon(builder: TrayIconBuilder, icon: Icon) -> TrayIconBuilder {
    builder.with_icon_templated(icon)
}

/// Why the tray app cannot start in this session: on macOS, never.
#[derive(Debug)]
pub enum Unprepared {}

impl std::fmt::Display for Unprepared {
    fn fmt(&self, _: &mut std::fmt::Formatter) -> std::fmt::Result {
        match *self {}
    }
}

impl std::error::Error for Unprepared {}

/// macOS always has a window server for a logged-in user; nothing to check before tao starts.
pub fn prepare() -> Result<(), Unprepared> {
    Ok(())
}

/// The menu bar is always there on macOS.
pub fn missing_tray_host() -> Option<String> {
    None
}
