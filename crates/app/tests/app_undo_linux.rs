//! An automatic stop's notification offers Restart, against a real notification daemon
//! (dunst) on the headless session's bus: the app stops a real server by itself — an armed stop
//! armed through its real menu, once the client leaves; a rule of `rules.toml` once the server
//! is idle for it — dunst shows the notification with its one action, and `dunstctl action 0`
//! — dunst invoking that action, as a click on it would — restarts the server from the stop's
//! snapshot: its port answers again and `pier history` has the restart. The rule then leaves
//! the restarted server alone (a person started it again: never fight the undo).
//!
//! Needs what `app_linux.rs` needs (`scripts/test.sh` gives a display and a session bus) and
//! dunst (`apt install dunst`; `scripts/setup-linux.sh` installs it); without dunst it says so
//! and passes.
#![cfg(target_os = "linux")]

#[path = "../../../tests/common/mod.rs"]
mod common;
// Only the menu's reader is used here (not its stand-in notification service).
#[allow(dead_code)]
mod dbusmenu;

use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::auto::{auto_json, card, rules};
use common::*;
use dbusmenu::{wait_menu, Node, Tray};

/// dunst, started by this test on the session bus, ended with it.
struct Dunst {
    child: Child,
    config: std::path::PathBuf,
}

impl Dunst {
    /// Starts dunst with notifications that stay until acted on (timeout 0), and waits until
    /// it answers `dunstctl`. `None` when dunst is not installed.
    fn start(sb: &Sandbox) -> Option<Dunst> {
        let config = sb.path().join("dunst-config");
        fs::create_dir_all(config.join("dunst")).unwrap();
        fs::write(
            config.join("dunst/dunstrc"),
            "[urgency_low]\ntimeout = 0\n[urgency_normal]\ntimeout = 0\n",
        )
        .unwrap();
        let child = Command::new("dunst")
            .env("XDG_CONFIG_HOME", &config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let dunst = Dunst { child, config };
        wait_for("dunst on the session bus", || {
            dunst
                .ctl(&["count", "displayed"])
                .status
                .success()
                .then_some(())
        });
        Some(dunst)
    }

    fn ctl(&self, args: &[&str]) -> Output {
        Command::new("dunstctl")
            .args(args)
            .env("XDG_CONFIG_HOME", &self.config)
            .output()
            .expect("dunstctl runs")
    }

    fn text(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.ctl(args).stdout)
            .trim()
            .to_owned()
    }

    /// Waits until the one notification shows; the server is stopped by then.
    fn one_shown(&self) {
        wait_for("dunst to show the notification", || {
            (self.text(&["count", "displayed"]) == "1").then_some(())
        });
    }

    /// Closes what shows and returns dunst's history (JSON text), once it holds Pier's result.
    fn closed_history(&self) -> String {
        assert!(self.ctl(&["close-all"]).status.success());
        wait_for("the notification in dunst's history", || {
            let h = self.text(&["history"]);
            h.contains("Pier: done").then_some(h)
        })
    }
}

/// Starts dunst for `sb`, or says why the test is skipped.
fn dunst_or_skip(sb: &Sandbox) -> Option<Dunst> {
    let dunst = Dunst::start(sb);
    if dunst.is_none() {
        eprintln!(
            "skipped: the notification's Restart needs dunst (apt install dunst; \
             scripts/setup-linux.sh installs it)"
        );
    }
    dunst
}

/// dunst invokes the notification's one action, as a click on it does: the stopped `server`
/// comes back from its snapshot on `port`, and the app's menu says so. Returns the new report.
fn restarted_by_the_action(
    sb: &Sandbox,
    dunst: &Dunst,
    tray: &Tray,
    server: &serde_json::Value,
    port: u16,
) -> serde_json::Value {
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "stopped");
    assert!(dunst.ctl(&["action", "0"]).status.success());
    let again = sb.report("web", |r| r["pid"].as_u64() != Some(u64::from(pid(server))));
    // Closed with a reset: a normal close would keep it used for a minute (the rule's idle).
    reset(TcpStream::connect(("127.0.0.1", port)).expect("listening again"));
    wait_menu(tray, "the restart's result", |m| {
        m.find("✓ web · vite: restarted").map(|_| ())
    });
    assert!(alive(pid(&again)));
    again
}

/// `pier history --json` of the sandbox: its one snapshot, checked to have been asked for by
/// `kind` and restarted once, ready.
fn the_one_snapshot(sb: &Sandbox, kind: &str) -> serde_json::Value {
    let out = sb.pier_exact(&["history", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("history JSON");
    let snaps = json["snapshots"].as_array().expect("snapshots");
    assert_eq!(snaps.len(), 1, "one stop: {json}");
    let snap = snaps[0].clone();
    assert_eq!(snap["requested_by"]["kind"], kind, "{json}");
    let restarts = snap["restarts"].as_array().expect("restarts");
    assert_eq!(
        restarts.len(),
        1,
        "one restart, from the notification: {json}"
    );
    assert_eq!(restarts[0]["ready"], true, "{json}");
    snap
}

impl Drop for Dunst {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn owns_notifications() -> bool {
    let out = Command::new("gdbus")
        .args([
            "call",
            "--session",
            "-d",
            "org.freedesktop.DBus",
            "-o",
            "/org/freedesktop/DBus",
        ])
        .args([
            "-m",
            "org.freedesktop.DBus.NameHasOwner",
            "org.freedesktop.Notifications",
        ])
        .output()
        .expect("gdbus runs");
    String::from_utf8_lossy(&out.stdout).contains("true")
}

fn start_app(sb: &Sandbox) -> Child {
    let run = sb.path().join("run");
    fs::create_dir_all(&run).unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o700)).unwrap();
    Command::new(pier_bin())
        .args([
            "app",
            "--refresh",
            "1",
            "--sample-ms",
            "100",
            "--settle",
            "1",
        ])
        .arg("--under")
        .arg(sb.path())
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("XDG_CONFIG_HOME", sb.path().join("config"))
        .env("XDG_RUNTIME_DIR", &run)
        .env("NO_AT_BRIDGE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pier app starts")
}

/// The child's own process ends; it is ours, killed by its handle.
struct Ends(Child);

impl Drop for Ends {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A vite fixture "web" held by a client, and the app with its stop armed through the real
/// menu: (its report, its port, the client, the app, its tray).
fn armed(sb: &Sandbox) -> (serde_json::Value, u16, TcpStream, Ends, Tray) {
    let port = free_port();
    let server = sb.start_vite("web", &["--port", &port.to_string()], |_| true);
    let client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let app = Ends(start_app(sb));
    let tray = wait_for("the app's tray item", || Tray::of_pid(app.0.id()));

    // A client holds it: the card offers "Stop when safe"; armed, it waits for the client.
    let card = format!("web — vite :{port}");
    let card_of = |m: &Node| -> Option<Node> {
        m.all()
            .into_iter()
            .find(|n| n.label.contains(&card))
            .cloned()
    };
    let arm = wait_menu(&tray, "Stop when safe on web's card", |m| {
        let item = card_of(m)?.find("Stop when safe")?.clone();
        item.enabled.then_some(item.id)
    });
    tray.click(arm);
    wait_menu(&tray, "the armed line", |m| {
        card_of(m)?.find("Armed: ").map(|_| ())
    });
    assert!(alive(pid(&server)), "a client holds it");
    (server, port, client, app, tray)
}

/// Both halves own the notification name on the one session bus, so they run in turn: dunst
/// (with buttons) first, then the tests' stand-in (without), which keeps the name until the
/// process ends.
#[test]
fn an_automatic_stop_s_notification_offers_restart() {
    for var in ["DISPLAY", "DBUS_SESSION_BUS_ADDRESS"] {
        assert!(
            std::env::var_os(var).is_some(),
            "{var} is not set: run the tests through scripts/test.sh (scripts/headless.sh)"
        );
    }
    if fixtures_cannot_be_orphans("the notification's Restart") {
        return;
    }
    the_restart_button_restarts_the_server_from_dunst_s_action();
    wait_for("dunst to leave the bus", || {
        (!owns_notifications()).then_some(())
    });
    a_rule_s_stop_is_undone_from_dunst_and_the_rule_leaves_it_alone();
    wait_for("dunst to leave the bus", || {
        (!owns_notifications()).then_some(())
    });
    without_buttons_the_notification_names_the_undo_command();
}

fn the_restart_button_restarts_the_server_from_dunst_s_action() {
    let sb = Sandbox::new();
    let Some(dunst) = dunst_or_skip(&sb) else {
        return;
    };
    let (server, port, client, _app, tray) = armed(&sb);
    // The arming's own notification (no undo) is closed: the stop's is then the only one.
    dunst.one_shown();
    assert!(dunst.ctl(&["close-all"]).status.success());

    // Gone with a reset: a normal close would keep the server used for a minute.
    reset(client);
    wait_for("the server to be stopped", || {
        (!alive(pid(&server))).then_some(())
    });
    dunst.one_shown();
    restarted_by_the_action(&sb, &dunst, &tray, &server, port);

    // What dunst showed: the honest result, with the button (so no command in the text).
    let history = dunst.closed_history();
    assert!(
        history.contains("web: stopped by your armed stop ("),
        "{history}"
    );
    assert!(!history.contains("undo: pier restart"), "{history}");
    the_one_snapshot(&sb, "armed");
}

/// The app with a rule `idle = "2s"` scoped to the sandbox stops a real idle server at a
/// refresh; dunst's action restarts it; `pier history` says the rule asked and why; and the
/// restarted server, idle past the rule's time, is left alone refresh after refresh.
fn a_rule_s_stop_is_undone_from_dunst_and_the_rule_leaves_it_alone() {
    let sb = Sandbox::new();
    let Some(dunst) = dunst_or_skip(&sb) else {
        return;
    };
    let under = sb.path().display();
    rules(
        &sb,
        &format!("[[rule]]\nname = \"quick\"\nidle = \"2s\"\nunder = [\"{under}\"]\n"),
    );
    let port = free_port();
    let server = sb.start_vite("web", &["--port", &port.to_string()], |_| true);
    let app = Ends(start_app(&sb));
    let tray = wait_for("the app's tray item", || Tray::of_pid(app.0.id()));
    wait_for("the rule's stop", || (!alive(pid(&server))).then_some(()));
    dunst.one_shown();
    let again = restarted_by_the_action(&sb, &dunst, &tray, &server, port);

    let history = dunst.closed_history();
    let said = history
        .split_once("web: stopped by your rule 'quick': idle ")
        .map(|(_, rest)| rest.split_once(" s").map_or("", |(n, _)| n));
    let said = said.unwrap_or_else(|| panic!("the rule and why in {history}"));
    assert!(said.parse::<u64>().is_ok_and(|n| n >= 2), "{history}");
    assert!(!history.contains("undo: pier restart"), "{history}");
    let snap = the_one_snapshot(&sb, "rule");
    assert_eq!(snap["requested_by"]["name"], "quick", "{snap}");
    assert_eq!(
        snap["requested_by"]["because"],
        format!("idle {said} s").as_str(),
        "{snap}"
    );

    the_rule_leaves_the_restarted_server_alone(&sb, &again, port);
}

/// Never fight the undo: the app's view shows the restarted server idle past the rule's time
/// and the rule's note "started again", and for five more refreshes it is not stopped.
fn the_rule_leaves_the_restarted_server_alone(sb: &Sandbox, again: &serde_json::Value, port: u16) {
    let id = id_of(again);
    let left_alone = |doc: &serde_json::Value| -> Option<serde_json::Value> {
        assert_eq!(doc["scheduler"]["by"], "the Pier app", "{doc}");
        let c = card(doc, &id)?.clone();
        let idle = c["idle"]["state"] == "idle" && c["idle"]["seconds"].as_u64() >= Some(2);
        idle.then_some(c)
    };
    let (doc, c) = wait_for("the restarted server idle past the rule's time", || {
        let doc = auto_json(sb, &[]);
        left_alone(&doc).map(|c| (doc, c))
    });
    assert_eq!(c["auto"]["state"], "held", "{c}");
    assert!(
        c["auto"]["why"]
            .as_str()
            .unwrap()
            .starts_with("started again at "),
        "{c}"
    );
    let since = doc["scheduler"]["written_at"].as_u64().unwrap();
    wait_for("five more refreshes", || {
        let doc = auto_json(sb, &[]);
        let c = card(&doc, &id).unwrap_or_else(|| panic!("its card stays: {doc}"));
        assert_eq!(c["auto"]["state"], "held", "{c}");
        assert!(alive(pid(again)), "not stopped again: {c}");
        (doc["scheduler"]["written_at"].as_u64() >= Some(since + 5)).then_some(())
    });
    reset(TcpStream::connect(("127.0.0.1", port)).expect("still up"));
    assert_eq!(snapshots(sb), 1, "no second stop");
}

/// A notification server without buttons (the tests' stand-in answers GetCapabilities with
/// no list of them): the text names the command instead.
fn without_buttons_the_notification_names_the_undo_command() {
    let notifications = dbusmenu::notification_service();
    let sb = Sandbox::new();
    let (server, _, client, _app, _tray) = armed(&sb);
    reset(client);
    let body = wait_for("the stop's notification", || {
        let (summary, body) = notifications.recv_timeout(Duration::from_secs(1)).ok()?;
        (summary == "Pier: done" && body.contains("by your armed stop")).then_some(body)
    });
    assert!(!alive(pid(&server)));
    let snapshot = body.rsplit_once("· undo: pier restart ").map(|(_, s)| s);
    let snapshot = snapshot.unwrap_or_else(|| panic!("the command in {body:?}"));
    assert!(snapshot.starts_with("snap-"), "{body}");
}
