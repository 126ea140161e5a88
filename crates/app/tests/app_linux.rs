//! The tray app end to end, as a user meets it, through the real menu a StatusNotifier host
//! reads over D-Bus: an orphaned dev server's card is green, "Clean up safely" stops it,
//! "Restart" brings it back, "Quit" ends the app with 0.
//!
//! Needs a display, a D-Bus session and status-notifier-watcher: `scripts/test.sh` runs every
//! test inside `scripts/headless.sh`, which starts them. Without them these tests fail and say
//! so rather than pass unseen.
#![cfg(target_os = "linux")]

#[path = "../../../tests/common/mod.rs"]
mod common;
mod dbusmenu;

use std::fs;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::*;
use dbusmenu::{wait_menu, Node, Tray};

fn needs_session() {
    for var in ["DISPLAY", "DBUS_SESSION_BUS_ADDRESS"] {
        assert!(
            std::env::var_os(var).is_some(),
            "{var} is not set: run the tests through scripts/test.sh, which starts Xvfb, a \
             D-Bus session and status-notifier-watcher (scripts/headless.sh)"
        );
    }
}

/// `pier app` scoped to the sandbox, with its own state, config and runtime folders.
fn start_app(sb: &Sandbox, extra: &[&str]) -> Child {
    let run = sb.path().join("run");
    fs::create_dir_all(&run).unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o700)).unwrap();
    Command::new(pier_bin())
        .args(["app", "--refresh", "1", "--sample-ms", "100", "--under"])
        .arg(sb.path())
        .args(extra)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("XDG_CONFIG_HOME", sb.path().join("config"))
        .env("XDG_RUNTIME_DIR", &run)
        .env("NO_AT_BRIDGE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pier app starts")
}

/// The child's exit, bounded; kills it (our own child) if it does not end.
fn exit_of(app: &mut Child) -> ExitStatus {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = app.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > end {
            let _ = app.kill();
            panic!("the app did not exit within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The safe icon's fill (assets/tray-safe.png); the idle ring's centre is transparent.
fn is_green([r, g, b, a]: [u8; 4]) -> bool {
    a > 200 && g > 120 && r < 100 && b < 100
}

fn tray_of(app: &Child) -> Tray {
    wait_for("the app's tray item on the session bus", || {
        Tray::of_pid(app.id())
    })
}

#[test]
fn clean_up_safely_then_restart_from_the_real_menu_then_quit() {
    needs_session();
    if fixtures_cannot_be_orphans("clean_up_safely_then_restart_from_the_real_menu_then_quit") {
        return;
    }
    let notifications = dbusmenu::notification_service();
    let sb = Sandbox::new();
    let port = free_port();
    let server = sb.start_vite("shop", &["--port", &port.to_string()], |_| true);
    let pid = pid(&server);
    let mut app = start_app(&sb, &[]);
    let tray = tray_of(&app);

    // The card is green, says so in words, and offers "Clean up safely".
    let card_title = format!("● green · shop — vite :{port}");
    let stop_id = wait_menu(&tray, "a green card for shop", |m| {
        let card = m.find(&card_title)?;
        let item = card.find("Clean up safely")?;
        item.enabled.then_some(item.id)
    });
    let header = tray.layout().children[0].label.clone();
    assert_eq!(header, "1 project · 1 safe to stop");
    wait_for("a green icon: something is safe to stop", || {
        tray.icon_centre().filter(|&p| is_green(p))
    });

    // A periodic scan that changes only texts updates the menu in place: the host sees new
    // labels on the same items (a rebuilt menu would have new ids, and an open one would close).
    let age = |m: &Node| m.find(&card_title)?.find("Up ").map(|n| n.label.clone());
    let first_age = wait_menu(&tray, "the card's age line", age);
    wait_menu(&tray, "a newer age line", |m| {
        age(m).filter(|a| *a != first_age).map(|_| ())
    });
    let same_id = wait_menu(&tray, "the stop item", |m| {
        m.find(&card_title)?.find("Clean up safely").map(|n| n.id)
    });
    assert_eq!(same_id, stop_id, "updated in place, not rebuilt");

    // A second instance says so and leaves.
    let mut second = start_app(&sb, &[]);
    assert!(exit_of(&mut second).success(), "a second start exits 0");
    let mut said = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().unwrap(), &mut said).unwrap();
    assert!(said.contains("already running"), "{said}");

    tray.click(stop_id);
    let done = wait_menu(&tray, "the stop's result", |m| {
        m.find("✓ shop: stopped").map(|n| n.label.clone())
    });
    assert!(!alive(pid), "the server is gone: {done}");
    wait_for("an icon that is not green: nothing is safe to stop", || {
        tray.icon_centre().filter(|&p| !is_green(p))
    });
    let (summary, body) = notifications
        .recv_timeout(Duration::from_secs(10))
        .expect("a desktop notification for the stop");
    assert_eq!(summary, "Pier: done");
    assert!(body.starts_with("shop: stopped"), "{body}");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the port is free"
    );

    // Recently stopped offers Restart; it brings the server back on its port. Under `cargo
    // test` the fixture's environment holds cargo's LD_LIBRARY_PATH, which changes what code
    // runs: the menu names it, and the first click only asks for a second.
    let snapshot = format!("shop · vite :{port}");
    let (restart_id, asks) = wait_menu(&tray, "a Restart item for the snapshot", |m| {
        let entry = m.find("Recently stopped")?.find(&snapshot)?;
        let item = entry.find("Restart")?;
        let asks = entry.find("With ").is_some();
        let label = if asks { "Restart…" } else { "Restart" };
        (item.enabled && item.label == label).then_some((item.id, asks))
    });
    tray.click(restart_id);
    if asks {
        let confirm = wait_menu(&tray, "the restart's second click", |m| {
            let entry = m.find("Recently stopped")?.find(&snapshot)?;
            let item = entry.find("Restart with ")?;
            item.enabled.then_some(item.id)
        });
        assert!(
            TcpStream::connect(("127.0.0.1", port)).is_err(),
            "the first click restarted nothing"
        );
        tray.click(confirm);
    }
    let again = sb.report("shop", |r| r["pid"].as_u64() != Some(u64::from(pid)));
    wait_menu(&tray, "the restart's result", |m| {
        m.find(&format!("✓ {snapshot}: restarted")).map(|_| ())
    });
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "listening again"
    );
    assert_ne!(
        ppid_of(common::pid(&again)).and_then(ppid_of),
        Some(app.id()),
        "the restarted tree is not the app's: it was adopted, as residue is"
    );

    // Start at login writes the autostart entry into the sandbox's config folder.
    let login = wait_menu(&tray, "the start-at-login item", |m| {
        m.find("Start at login").map(|n| (n.id, n.toggle))
    });
    assert_eq!(login.1, Some(0));
    tray.click(login.0);
    let entry = sb.path().join("config/autostart/pier.desktop");
    wait_for("the autostart entry", || entry.exists().then_some(()));
    wait_menu(&tray, "the check mark", |m| {
        (m.find("Start at login")?.toggle == Some(1)).then_some(())
    });

    let quit = wait_menu(&tray, "Quit", |m| m.find("Quit Pier").map(|n| n.id));
    tray.click(quit);
    let status = exit_of(&mut app);
    assert_eq!(status.code(), Some(0), "Quit ends the app with 0");
    let log = fs::read_to_string(sb.path().join("state/app.log")).unwrap();
    assert!(log.contains("quit"), "the app logged its end: {log}");
}

/// "Clean up all safe" is one batch, and the menu marks each card as its resources end: the
/// server that stops at once is marked stopped while the one that ignores SIGTERM still holds
/// its grace wait, and the card of the latter is marked too when it ends.
#[test]
fn clean_up_all_safe_marks_each_card_as_its_resources_end() {
    needs_session();
    if fixtures_cannot_be_orphans("clean_up_all_safe_marks_each_card_as_its_resources_end") {
        return;
    }
    let sb = Sandbox::new();
    let (quick, slow) = (free_port(), free_port());
    let shop = sb.start_vite("shop", &["--port", &quick.to_string()], |_| true);
    let docs = sb.start_vite(
        "docs",
        &["--port", &slow.to_string(), "--ignore-term"],
        |_| true,
    );
    let mut app = start_app(&sb, &[]);
    let tray = tray_of(&app);
    let all = wait_menu(&tray, "Clean up all safe (2)", |m| {
        let item = m.find("Clean up all safe (2)")?;
        item.enabled.then_some(item.id)
    });
    tray.click(all);
    let marked = format!("● green · shop — vite :{quick} — stopped ✓");
    let waiting = format!("● green · docs — vite :{slow} — stopping…");
    wait_menu(&tray, "shop marked stopped while docs still stops", |m| {
        (m.find(&marked).is_some() && m.find(&waiting).is_some()).then_some(())
    });
    assert!(!alive(pid(&shop)), "shop is gone");
    assert!(alive(pid(&docs)), "docs still waits out its grace");
    wait_menu(&tray, "the batch's result", |m| {
        m.find("◐ Cleaned up 1 of 2").map(|_| ())
    });
    assert!(
        alive(pid(&docs)),
        "never killed: it ignores SIGTERM, and there is no SIGKILL"
    );
    let quit = wait_menu(&tray, "Quit", |m| m.find("Quit Pier").map(|n| n.id));
    tray.click(quit);
    assert_eq!(exit_of(&mut app).code(), Some(0));
}

#[test]
fn sigterm_ends_the_app_cleanly_with_0() {
    needs_session();
    let sb = Sandbox::new();
    let mut app = start_app(&sb, &[]);
    let tray = tray_of(&app);
    wait_menu(&tray, "the first scan", |m| {
        m.find("0 projects").map(|_| ())
    });
    // Our own child, not yet reaped: its pid cannot have changed hands.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&app),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert_eq!(exit_of(&mut app).code(), Some(0));
}

#[test]
fn without_a_display_the_app_says_so_in_a_sentence() {
    let sb = Sandbox::new();
    let out = Command::new(pier_bin())
        .arg("app")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs a graphical session"), "{err}");
    assert!(err.contains("pier scan"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn an_unknown_under_folder_is_a_usage_error() {
    let sb = Sandbox::new();
    let missing = sb.path().join("nope");
    let out = Command::new(pier_bin())
        .args(["app", "--under"])
        .arg(&missing)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such folder"));
    let out = Command::new(pier_bin())
        .args(["app", "--refresh", "1e300"])
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let why = pier_core::front::numbers::refresh("1e300").unwrap_err();
    assert_eq!(err, format!("pier: {why}\n"), "one sentence with the range");
}

/// `pier app` hands every argument to `pier-app`, `--help` too: the app's own options are what
/// `pier app --help` lists.
#[test]
fn pier_app_help_lists_the_app_s_options() {
    let sb = Sandbox::new();
    let out = Command::new(pier_bin())
        .args(["app", "--help"])
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{help}");
    for option in ["--under", "--refresh", "--sample-ms"] {
        assert!(help.contains(option), "{option} in {help}");
    }
}

/// The cgroups a test made, removed when dropped (even on failure): each emptied first — a
/// `svc` by `cgroup.kill` (only the test's own app is in it), a restart's sibling once the
/// sandbox has killed its own processes by identity (declare this before the sandbox).
struct Cgroups(Vec<std::path::PathBuf>);

impl Cgroups {
    fn populated(dir: &std::path::Path) -> bool {
        fs::read_to_string(dir.join("cgroup.events")).is_ok_and(|e| e.contains("populated 1"))
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        for dir in self.0.iter().rev() {
            let end = Instant::now() + Duration::from_secs(10);
            while Self::populated(dir) && Instant::now() < end {
                if dir
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("pier-test-svc"))
                {
                    let _ = fs::write(dir.join("cgroup.kill"), "1");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            if let Err(e) = fs::remove_dir(dir) {
                eprintln!("the cgroup {} was left behind: {e}", dir.display());
            }
        }
    }
}

/// The cgroup v2 mount point, from this process's mountinfo.
fn cgroup2_mount() -> Option<std::path::PathBuf> {
    fs::read_to_string("/proc/self/mountinfo")
        .ok()?
        .lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            (right.split(' ').next()? == "cgroup2")
                .then(|| left.split(' ').nth(4).map(Into::into))?
        })
}

/// Process `pid`'s cgroup v2 path.
fn cgroup_of(pid: u32) -> String {
    fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
        .unwrap()
}

/// What the app restarts runs outside the app's own cgroup (docs/design.md §5a): the app runs
/// in a fresh cgroup `svc`, as a service would; a server stopped and restarted from its menu
/// is in another cgroup, and killing everything in `svc` (as stopping the service would)
/// leaves the server answering.
#[test]
fn a_restart_from_the_menu_runs_outside_the_app_s_cgroup_and_outlives_it() {
    needs_session();
    let test = "a_restart_from_the_menu_runs_outside_the_app_s_cgroup_and_outlives_it";
    if fixtures_cannot_be_orphans(test) {
        return;
    }
    let Some(mount) = cgroup2_mount().filter(|_| is_root()) else {
        eprintln!("NOT RUN: {test}: needs root and a cgroup v2 mount");
        return;
    };
    let mut cgroups = Cgroups(Vec::new());
    let svc = mount.join(format!("pier-test-svc-{}", std::process::id()));
    fs::create_dir(&svc).unwrap();
    cgroups.0.push(svc.clone());
    let sb = Sandbox::new();
    let port = free_port();
    let server = sb.start_vite("shop", &["--port", &port.to_string()], |_| true);
    let pid = pid(&server);
    let mut app = start_app(&sb, &[]);
    fs::write(svc.join("cgroup.procs"), app.id().to_string()).unwrap();
    let svc_path = cgroup_of(app.id());
    let tray = tray_of(&app);
    let stop_id = wait_menu(&tray, "a green card for shop", |m| {
        let item = m
            .find(&format!("● green · shop — vite :{port}"))?
            .find("Clean up safely")?;
        item.enabled.then_some(item.id)
    });
    tray.click(stop_id);
    wait_menu(&tray, "the stop's result", |m| {
        m.find("✓ shop: stopped").map(|_| ())
    });
    let snapshot = format!("shop · vite :{port}");
    let (restart_id, asks) = wait_menu(&tray, "a Restart item", |m| {
        let entry = m.find("Recently stopped")?.find(&snapshot)?;
        let item = entry.find("Restart")?;
        item.enabled
            .then_some((item.id, entry.find("With ").is_some()))
    });
    tray.click(restart_id);
    if asks {
        let confirm = wait_menu(&tray, "the restart's second click", |m| {
            let item = m
                .find("Recently stopped")?
                .find(&snapshot)?
                .find("Restart with ")?;
            item.enabled.then_some(item.id)
        });
        tray.click(confirm);
    }
    let again = sb.report("shop", |r| r["pid"].as_u64() != Some(u64::from(pid)));
    sb.own_parent(&again);
    let restarted = common::pid(&again);
    let now = cgroup_of(restarted);
    if now != "/" {
        cgroups.0.insert(
            1.min(cgroups.0.len()),
            mount.join(now.trim_start_matches('/')),
        );
    }
    assert!(
        now != svc_path && !now.starts_with(&format!("{svc_path}/")),
        "the restarted server is in the app's cgroup {svc_path}"
    );
    // Stopping the service: everything in svc is killed at once.
    fs::write(svc.join("cgroup.kill"), "1").unwrap();
    let status = exit_of(&mut app);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    assert!(
        alive(restarted),
        "the restarted server outlived the app's cgroup"
    );
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "and still answers"
    );
    drop(sb);
}
