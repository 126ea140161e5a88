//! Reading and clicking a tray app's real menu the way a StatusNotifier host does: find the
//! app's item through status-notifier-watcher, read its menu with com.canonical.dbusmenu
//! GetLayout, click with Event. Blocking gio calls on the session bus the test runs in.

use gtk::gio;
use gtk::glib::{self, ToVariant, Variant};

/// One menu line, as the host sees it.
#[derive(Debug, Clone)]
pub struct Node {
    pub id: i32,
    pub label: String,
    pub enabled: bool,
    pub toggle: Option<i32>,
    pub children: Vec<Node>,
}

impl Node {
    /// Every line, depth first.
    pub fn all(&self) -> Vec<&Node> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.all());
        }
        out
    }

    /// The first line whose label starts with `prefix`.
    pub fn find(&self, prefix: &str) -> Option<&Node> {
        self.all().into_iter().find(|n| n.label.starts_with(prefix))
    }

    /// Every label, one per line, indented by depth (for failure messages).
    pub fn dump(&self) -> String {
        fn walk(n: &Node, depth: usize, out: &mut String) {
            out.push_str(&format!(
                "{}{}{}\n",
                "  ".repeat(depth),
                n.label,
                if n.enabled { "" } else { "  [disabled]" }
            ));
            for c in &n.children {
                walk(c, depth + 1, out);
            }
        }
        let mut out = String::new();
        walk(self, 0, &mut out);
        out
    }
}

pub struct Tray {
    bus: gio::DBusConnection,
    name: String,
    item: String,
    menu: String,
}

fn call(
    bus: &gio::DBusConnection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    args: Option<Variant>,
) -> Result<Variant, glib::Error> {
    bus.call_sync(
        Some(dest),
        path,
        iface,
        method,
        args.as_ref(),
        None,
        gio::DBusCallFlags::NONE,
        5_000,
        None::<&gio::Cancellable>,
    )
}

/// The object path under `path` on `dest` that implements the StatusNotifierItem interface.
fn find_item_path(bus: &gio::DBusConnection, dest: &str, path: &str) -> Option<String> {
    let xml: String = call(
        bus,
        dest,
        path,
        "org.freedesktop.DBus.Introspectable",
        "Introspect",
        None,
    )
    .ok()?
    .child_value(0)
    .get()?;
    if xml.contains("interface name=\"org.kde.StatusNotifierItem\"") {
        return Some(path.to_owned());
    }
    xml.split("<node name=\"").skip(1).find_map(|rest| {
        let child = rest.split('"').next()?;
        let sub = if path == "/" {
            format!("/{child}")
        } else {
            format!("{path}/{child}")
        };
        find_item_path(bus, dest, &sub)
    })
}

impl Tray {
    /// The tray item registered by process `pid`, once it is there.
    pub fn of_pid(pid: u32) -> Option<Tray> {
        let bus = gio::bus_get_sync(gio::BusType::Session, None::<&gio::Cancellable>).ok()?;
        let items = call(
            &bus,
            "org.kde.StatusNotifierWatcher",
            "/StatusNotifierWatcher",
            "org.freedesktop.DBus.Properties",
            "Get",
            Some(
                (
                    "org.kde.StatusNotifierWatcher",
                    "RegisteredStatusNotifierItems",
                )
                    .to_variant(),
            ),
        )
        .ok()?;
        let items: Vec<String> = items.child_value(0).as_variant()?.get()?;
        items.into_iter().find_map(|item| {
            let (name, path) = match item.find('/') {
                Some(i) => (item[..i].to_owned(), Some(item[i..].to_owned())),
                None => (item.clone(), None),
            };
            let owner: u32 = call(
                &bus,
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                "GetConnectionUnixProcessID",
                Some((name.as_str(),).to_variant()),
            )
            .ok()?
            .child_value(0)
            .get()?;
            if owner != pid {
                return None;
            }
            let path = path.or_else(|| find_item_path(&bus, &name, "/"))?;
            let menu = call(
                &bus,
                &name,
                &path,
                "org.freedesktop.DBus.Properties",
                "Get",
                Some(("org.kde.StatusNotifierItem", "Menu").to_variant()),
            )
            .ok()?;
            let menu = menu.child_value(0).as_variant()?.str()?.to_owned();
            Some(Tray {
                bus: bus.clone(),
                name,
                item: path,
                menu,
            })
        })
    }

    /// The whole menu, as the host would read it.
    pub fn layout(&self) -> Node {
        let props: Vec<&str> = vec!["label", "enabled", "toggle-state"];
        let reply = call(
            &self.bus,
            &self.name,
            &self.menu,
            "com.canonical.dbusmenu",
            "GetLayout",
            Some((0i32, -1i32, props).to_variant()),
        )
        .expect("GetLayout answers");
        parse(&reply.child_value(1))
    }

    /// The RGBA pixel at the centre of the icon the host is told to draw (the PNG file the
    /// item's IconName names), or `None` while it cannot be read.
    pub fn icon_centre(&self) -> Option<[u8; 4]> {
        let reply = call(
            &self.bus,
            &self.name,
            &self.item,
            "org.freedesktop.DBus.Properties",
            "Get",
            Some(("org.kde.StatusNotifierItem", "IconName").to_variant()),
        )
        .ok()?;
        let path = reply.child_value(0).as_variant()?.str()?.to_owned();
        let bytes = std::fs::read(path).ok()?;
        let mut decoder = png::Decoder::new(bytes.as_slice());
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().ok()?;
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).ok()?;
        if info.color_type != png::ColorType::Rgba || info.bit_depth != png::BitDepth::Eight {
            return None;
        }
        let at = ((info.height / 2 * info.width + info.width / 2) * 4) as usize;
        buf.get(at..at + 4)?.try_into().ok()
    }

    /// Clicks the line `id`, as a host does.
    pub fn click(&self, id: i32) {
        call(
            &self.bus,
            &self.name,
            &self.menu,
            "com.canonical.dbusmenu",
            "Event",
            Some((id, "clicked", "".to_variant(), 0u32).to_variant()),
        )
        .expect("Event answers");
    }
}

/// The value of `key` in an a{sv} dictionary.
fn lookup(props: &Variant, key: &str) -> Option<Variant> {
    (0..props.n_children()).find_map(|i| {
        let entry = props.child_value(i);
        (entry.child_value(0).str() == Some(key))
            .then(|| entry.child_value(1).as_variant())
            .flatten()
    })
}

fn parse(v: &Variant) -> Node {
    let props = v.child_value(1);
    let label = lookup(&props, "label")
        .and_then(|l| l.str().map(str::to_owned))
        .unwrap_or_default()
        .replace("__", "\u{0}")
        .replace('_', "")
        .replace('\u{0}', "_");
    let enabled = lookup(&props, "enabled")
        .and_then(|e| e.get::<bool>())
        .unwrap_or(true);
    let toggle = lookup(&props, "toggle-state").and_then(|t| t.get::<i32>());
    let children = v.child_value(2);
    Node {
        id: v.child_value(0).get().unwrap_or(-1),
        label,
        enabled,
        toggle,
        children: (0..children.n_children())
            .filter_map(|i| children.child_value(i).as_variant())
            .map(|c| parse(&c))
            .collect(),
    }
}

/// A stand-in desktop notification service (org.freedesktop.Notifications) on the session bus:
/// every Notify call's summary and body arrive on the receiver.
pub fn notification_service() -> std::sync::mpsc::Receiver<(String, String)> {
    const XML: &str = r#"<node><interface name="org.freedesktop.Notifications">
      <method name="Notify">
        <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
        <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
        <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
        <arg type="u" direction="out"/>
      </method>
    </interface></node>"#;
    let (tx, rx) = std::sync::mpsc::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let context = glib::MainContext::new();
        let main_loop = glib::MainLoop::new(Some(&context), false);
        context
            .with_thread_default(|| {
                let address = std::env::var("DBUS_SESSION_BUS_ADDRESS").expect("a session bus");
                let bus = gio::DBusConnection::for_address_sync(
                    &address,
                    gio::DBusConnectionFlags::AUTHENTICATION_CLIENT
                        | gio::DBusConnectionFlags::MESSAGE_BUS_CONNECTION,
                    None,
                    None::<&gio::Cancellable>,
                )
                .expect("a private connection to the session bus");
                let node = gio::DBusNodeInfo::for_xml(XML).unwrap();
                let iface = node
                    .lookup_interface("org.freedesktop.Notifications")
                    .unwrap();
                let tx = std::sync::Mutex::new(tx);
                bus.register_object(
                    "/org/freedesktop/Notifications",
                    &iface,
                    move |_, _, _, _, method, params, invocation| {
                        if method == "Notify" {
                            let text = |i| params.child_value(i).str().unwrap_or("").to_owned();
                            let _ = tx.lock().unwrap().send((text(3), text(4)));
                        }
                        invocation.return_value(Some(&(1u32,).to_variant()));
                    },
                    |_, _, _, _, _| ().to_variant(),
                    |_, _, _, _, _, _| false,
                )
                .expect("the object is registered");
                let owned: u32 = call(
                    &bus,
                    "org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus",
                    "RequestName",
                    Some(("org.freedesktop.Notifications", 4u32).to_variant()),
                )
                .expect("RequestName answers")
                .child_value(0)
                .get()
                .unwrap();
                let _ = ready_tx.send(owned == 1);
                main_loop.run();
            })
            .expect("the thread's own main context");
    });
    assert!(
        ready_rx.recv().expect("the service thread answers"),
        "another process already owns org.freedesktop.Notifications on this bus"
    );
    rx
}

/// Polls the app's menu until `f` finds what it wants, for 30 s; the menu is in the panic
/// message.
#[allow(dead_code)] // each test binary includes this module and uses what it needs
pub fn wait_menu<T>(tray: &Tray, what: &str, f: impl Fn(&Node) -> Option<T>) -> T {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let menu = tray.layout();
        if let Some(v) = f(&menu) {
            return v;
        }
        assert!(
            std::time::Instant::now() < end,
            "timed out waiting for {what}; the menu:\n{}",
            menu.dump()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
