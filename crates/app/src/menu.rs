//! The menu spec made real with muda, kept up to date in place when it can be.
//!
//! An open menu closes when the tray is given a new menu, so an update whose *shape* is the same
//! (the same items with the same ids, kinds and submenu titles) only changes texts, enabled and
//! checked states in place. Submenu titles are part of the shape because gtk3 cannot relabel a
//! muda submenu (its child is an image + label box: docs/design.md §7.4), so a new title rebuilds.

use std::collections::HashMap;

use tray_icon::menu::{
    CheckMenuItem, Icon, IsMenuItem, Menu, MenuItem, PredefinedMenuItem, Submenu,
};

use super::spec::Entry;
use pier_core::model::card::Level;
use pier_core::words::for_terminal;

/// The coloured dots drawn beside card titles, where the host draws menu icons.
#[derive(Clone, Default)]
pub struct Dots {
    pub green: Option<Icon>,
    pub yellow: Option<Icon>,
    pub red: Option<Icon>,
}

impl Dots {
    fn get(&self, level: Level) -> Option<Icon> {
        match level {
            Level::Green => self.green.clone(),
            Level::Yellow => self.yellow.clone(),
            Level::Red => self.red.clone(),
        }
    }
}

/// Every text goes through here on its way to muda. A folder, a command or a message holding
/// a control character (a newline would split the line; an ESC or a bidi override would make
/// it read as something else) is shown escaped, as the CLI shows it ([`for_terminal`]). muda
/// reads `&` as a mnemonic marker and drops it; `&&` shows one `&`, so a command line or a
/// folder holding `&` is shown as it is.
fn label(text: &str) -> String {
    for_terminal(text).replace('&', "&&")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    Item(String),
    Check(String),
    Submenu(String, String, Option<Level>, Vec<Shape>),
    Separator,
}

fn shape(spec: &[Entry]) -> Vec<Shape> {
    spec.iter()
        .map(|e| match e {
            Entry::Item { id, .. } => Shape::Item(id.clone()),
            Entry::Check { id, .. } => Shape::Check(id.clone()),
            Entry::Submenu {
                id,
                text,
                dot,
                children,
                ..
            } => Shape::Submenu(id.clone(), text.clone(), *dot, shape(children)),
            Entry::Separator => Shape::Separator,
        })
        .collect()
}

enum Handle {
    Item(MenuItem),
    Check(CheckMenuItem),
    Submenu(Submenu),
}

/// How [`LiveMenu::update`] applied a spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Same shape: texts and states changed in place; an open menu stays open.
    InPlace,
    /// A new shape: a new [`Menu`] was built; give it to the tray.
    Rebuilt,
}

/// The muda menu and its items by id.
pub struct LiveMenu {
    pub menu: Menu,
    shape: Vec<Shape>,
    items: HashMap<String, Handle>,
    dots: Dots,
}

impl LiveMenu {
    pub fn build(spec: &[Entry], dots: Dots) -> tray_icon::menu::Result<Self> {
        let mut live = LiveMenu {
            menu: Menu::new(),
            shape: shape(spec),
            items: HashMap::new(),
            dots,
        };
        for entry in spec {
            let item = live.make(entry)?;
            live.menu.append(item.as_ref())?;
        }
        Ok(live)
    }

    /// Brings the menu to `spec`: in place when the shape is unchanged, else rebuilt.
    pub fn update(&mut self, spec: &[Entry]) -> tray_icon::menu::Result<Applied> {
        if shape(spec) != self.shape {
            *self = LiveMenu::build(spec, self.dots.clone())?;
            return Ok(Applied::Rebuilt);
        }
        self.set_in_place(spec);
        Ok(Applied::InPlace)
    }

    fn set_in_place(&self, spec: &[Entry]) {
        for entry in spec {
            match (entry, self.handle(entry)) {
                (Entry::Item { text, enabled, .. }, Some(Handle::Item(item))) => {
                    let text = label(text);
                    if item.text() != text {
                        item.set_text(text);
                    }
                    if item.is_enabled() != *enabled {
                        item.set_enabled(*enabled);
                    }
                }
                (
                    Entry::Check {
                        text,
                        checked,
                        enabled,
                        ..
                    },
                    Some(Handle::Check(item)),
                ) => {
                    let text = label(text);
                    if item.text() != text {
                        item.set_text(text);
                    }
                    if item.is_checked() != *checked {
                        item.set_checked(*checked);
                    }
                    if item.is_enabled() != *enabled {
                        item.set_enabled(*enabled);
                    }
                }
                (
                    Entry::Submenu {
                        enabled, children, ..
                    },
                    Some(Handle::Submenu(sub)),
                ) => {
                    if sub.is_enabled() != *enabled {
                        sub.set_enabled(*enabled);
                    }
                    self.set_in_place(children);
                }
                _ => {}
            }
        }
    }

    fn handle(&self, entry: &Entry) -> Option<&Handle> {
        match entry {
            Entry::Item { id, .. } | Entry::Check { id, .. } | Entry::Submenu { id, .. } => {
                self.items.get(id)
            }
            Entry::Separator => None,
        }
    }

    fn make(&mut self, entry: &Entry) -> tray_icon::menu::Result<Box<dyn IsMenuItem>> {
        Ok(match entry {
            Entry::Item { id, text, enabled } => {
                let item = MenuItem::with_id(id.as_str(), label(text), *enabled, None);
                self.items.insert(id.clone(), Handle::Item(item.clone()));
                Box::new(item)
            }
            Entry::Check {
                id,
                text,
                checked,
                enabled,
            } => {
                let item =
                    CheckMenuItem::with_id(id.as_str(), label(text), *enabled, *checked, None);
                self.items.insert(id.clone(), Handle::Check(item.clone()));
                Box::new(item)
            }
            Entry::Submenu {
                id,
                text,
                enabled,
                dot,
                children,
            } => {
                let sub = Submenu::with_id(id.as_str(), label(text), *enabled);
                if let Some(icon) = dot.and_then(|level| self.dots.get(level)) {
                    sub.set_icon(Some(icon));
                }
                for child in children {
                    let item = self.make(child)?;
                    sub.append(item.as_ref())?;
                }
                self.items.insert(id.clone(), Handle::Submenu(sub.clone()));
                Box::new(sub)
            }
            Entry::Separator => Box::new(PredefinedMenuItem::separator()),
        })
    }

    /// The text and enabled state of the item `id`, as muda holds them (`&&` for one `&`).
    pub fn read(&self, id: &str) -> Option<(String, bool)> {
        self.items.get(id).map(|h| match h {
            Handle::Item(i) => (i.text(), i.is_enabled()),
            Handle::Check(i) => (i.text(), i.is_enabled()),
            Handle::Submenu(s) => (s.text(), s.is_enabled()),
        })
    }
}

// Not on macOS: muda builds a macOS menu on the main thread only ("`muda::Menu` can only be
// created on the main thread"), and the test harness runs every test on a thread of its own.
// The spec these menus are built from is tested everywhere (spec/tests.rs).
#[cfg(all(test, not(target_os = "macos")))]
mod tests;
