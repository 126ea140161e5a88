//! The baseline for `bench/app-idle.sh`: a bare tao + tray-icon app with a three-item menu and
//! nothing else, started the same way as Pier's app, so the benchmark can say what Pier adds
//! on top of the toolkit. Quit from its menu or with SIGTERM.

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder};
use tray_icon::menu::{Menu, MenuEvent, MenuItem};
use tray_icon::TrayIconBuilder;

enum UserEvent {
    Menu(MenuEvent),
}

fn main() {
    let event_loop = EventLoopBuilder::<UserEvent>::with_user_event().build();
    let proxy = event_loop.create_proxy();
    MenuEvent::set_event_handler(Some(move |e| {
        let _ = proxy.send_event(UserEvent::Menu(e));
    }));
    let menu = Menu::new();
    let items = [
        MenuItem::with_id("one", "One", true, None),
        MenuItem::with_id("two", "Two", true, None),
        MenuItem::with_id("quit", "Quit", true, None),
    ];
    for item in &items {
        menu.append(item).expect("a menu item");
    }
    let mut tray = None;
    event_loop.run(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            Event::NewEvents(StartCause::Init) => {
                let icon = tray_icon::Icon::from_rgba(vec![128; 32 * 32 * 4], 32, 32)
                    .expect("a 32 px icon");
                tray = Some(
                    TrayIconBuilder::new()
                        .with_id("bare")
                        .with_menu(Box::new(menu.clone()))
                        .with_icon(icon)
                        .build()
                        .expect("the tray icon"),
                );
            }
            Event::UserEvent(UserEvent::Menu(e)) if e.id.0 == "quit" => {
                tray.take();
                *control_flow = ControlFlow::Exit;
            }
            _ => {}
        }
    });
}
