//! Another user of the machine against Pier (docs/design.md §5, SECURITY.md "Another user on the
//! machine"): what a second account can plant in or around the state and config folders, and
//! in a shared folder, must never make Pier write for it, follow its links, hang or read
//! without end, or take its files for the user's project. Root only: each test creates the
//! accounts it plays with (`common::users`) and removes them; Pier runs as the victim or as root.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::users::{finishes_within, Account};
use common::*;
use serde_json::Value;

/// Long enough for any of these commands, short enough that a hang fails the test.
const LIMIT: Duration = Duration::from_secs(30);

/// A temp folder others can reach (0755), for folders each test hands to its users.
fn shared_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn mkdir(path: &Path, mode: u32) -> PathBuf {
    fs::create_dir_all(path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    path.to_path_buf()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// `pier args…` as `user` (or root), with these state and config folders.
fn pier(user: Option<&Account>, state: &Path, config: &Path, args: &[&str]) -> Command {
    let mut c = match user {
        Some(u) => u.run(pier_bin(), Path::new("/nonexistent")),
        None => Command::new(pier_bin()),
    };
    c.args(args)
        .env("PIER_STATE_DIR", state)
        .env("PIER_CONFIG_DIR", config)
        .env("NO_COLOR", "1");
    c
}

/// `pier scan --json` of `under`, unsampled, as `user`, within [`LIMIT`].
fn scan(user: &Account, state: &Path, config: &Path, under: &str) -> Output {
    let args = ["scan", "--json", "--sample-ms", "0", "--under", under];
    finishes_within(pier(Some(user), state, config, &args), LIMIT, "pier scan")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o666),
        0,
    )
    .unwrap();
}

/// Point 3: the victim's state folder lies in a folder the attacker owns, who could swap it
/// for one of theirs at any moment. Refused, with a sentence naming the owner; nothing is
/// written — not even a folder.
#[test]
fn a_state_folder_inside_another_users_folder_is_refused_with_nothing_written() {
    if needs_root("a_state_folder_inside_another_users_folder_is_refused_with_nothing_written") {
        return;
    }
    let (victim, attacker) = (Account::new("v"), Account::new("a"));
    let root = shared_root();
    let theirs = mkdir(&root.path().join("theirs"), 0o755);
    attacker.own(&theirs);
    let state = mkdir(&theirs.join("state"), 0o700);
    victim.own(&state);
    let config = mkdir(&root.path().join("config"), 0o700);
    victim.own(&config);
    for args in [
        &["history"][..],
        &["stop", "--all-green", "--under", "/nonexistent-pier-test"][..],
    ] {
        let out = finishes_within(pier(Some(&victim), &state, &config, args), LIMIT, "pier");
        let said = text(&out);
        assert!(!out.status.success(), "{args:?}: {said}");
        assert!(
            said.contains(&format!("belongs to uid {}", attacker.uid)),
            "{args:?}: {said}"
        );
        assert!(
            fs::read_dir(&state).unwrap().next().is_none(),
            "nothing written"
        );
    }

    // A link of the attacker's in a shared sticky folder, to a folder of root's: root's Pier
    // makes nothing through it (the state folder and the folders above it are missing).
    let sticky = mkdir(&root.path().join("sticky"), 0o1777);
    let roots = mkdir(&root.path().join("roots"), 0o755);
    let link = sticky.join("evil");
    std::os::unix::fs::symlink(&roots, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(attacker.uid), Some(attacker.gid)).unwrap();
    let out = finishes_within(
        pier(None, &link.join("x/state"), &config, &["history"]),
        LIMIT,
        "pier",
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("belongs to uid {}", attacker.uid)),
        "{}",
        text(&out)
    );
    assert!(
        fs::read_dir(&roots).unwrap().next().is_none(),
        "nothing made through the link"
    );
}

/// Point 4: a state folder others can write — `/tmp` itself, as root — is refused and left as
/// it is: never made 0700 (that would break `/tmp` for every user), sticky bit kept, nothing
/// created in it; whatever was planted stays unread.
#[test]
fn a_state_folder_others_can_write_is_refused_and_never_changed() {
    if needs_root("a_state_folder_others_can_write_is_refused_and_never_changed") {
        return;
    }
    let victim = Account::new("v");
    let root = shared_root();
    let tmp_like = mkdir(&root.path().join("tmp"), 0o1777);
    let config = mkdir(&root.path().join("config"), 0o700);
    // As root, and as the victim with a folder of its own that others can write.
    let open = mkdir(&root.path().join("open"), 0o777);
    victim.own(&open);
    for (user, state) in [(None, &tmp_like), (Some(&victim), &open)] {
        let before = mode(state);
        let out = finishes_within(pier(user, state, &config, &["history"]), LIMIT, "pier");
        let said = text(&out);
        assert!(!out.status.success(), "{said}");
        assert!(said.contains("can be written by other users"), "{said}");
        assert!(said.contains("PIER_STATE_DIR"), "says what to do: {said}");
        assert_eq!(mode(state), before, "permissions never changed");
        assert!(fs::read_dir(state).unwrap().next().is_none());
    }
}

/// Point 2: `logs/` is checked as the other folders are. A link planted there is never
/// followed: the folder it points to is not made 0700 and receives no log, and a prune never
/// removes a file in it.
#[test]
fn a_link_planted_as_the_logs_folder_is_never_followed() {
    if needs_root("a_link_planted_as_the_logs_folder_is_never_followed")
        || fixtures_cannot_be_orphans("a_link_planted_as_the_logs_folder_is_never_followed")
    {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(&server)).expect("found");
    let id = r["id"].as_str().unwrap().to_owned();
    let out = sb.pier_exact(&["stop", "--json", "--sample-ms", "100", &id]);
    let (_, doc) = exit_and_json(&out);
    let snapshot = doc["results"][0]["snapshot"].as_str().unwrap().to_owned();
    assert_eq!(doc["results"][0]["result"], "stopped", "{doc:#}");

    // The attacker's choice of folder, with a file named as the restart's log would be.
    let target = mkdir(&sb.path().join("victims-folder"), 0o755);
    let planted_log = target.join(format!("{snapshot}.log"));
    fs::write(&planted_log, "keep me\n").unwrap();
    let logs = sb.path().join("state/logs");
    let _ = fs::remove_dir_all(&logs);
    std::os::unix::fs::symlink(&target, &logs).unwrap();

    let out = finishes_within(
        pier(
            None,
            &sb.path().join("state"),
            &sb.path().join("config"),
            &["restart", "--wait", "5", &snapshot],
        ),
        LIMIT,
        "pier restart",
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("symbolic link"), "{}", text(&out));
    assert_eq!(mode(&target), 0o755, "never made 0700 through the link");
    assert_eq!(fs::read_to_string(&planted_log).unwrap(), "keep me\n");

    let out = sb.pier_exact(&["history", "--prune", "--all"]);
    assert!(
        planted_log.exists(),
        "a prune never removes through the link: {}",
        text(&out)
    );
}

/// Points 5 and 6: a FIFO named like a record, or at `protect.toml`, is never opened for
/// reading (the open would wait for a writer for ever, deaf to Ctrl-C): history, scan and stop
/// finish, naming it; an unreadable protect list protects everything.
#[test]
fn a_fifo_named_like_a_record_or_the_protect_list_never_hangs_pier() {
    if needs_root("a_fifo_named_like_a_record_or_the_protect_list_never_hangs_pier") {
        return;
    }
    let victim = Account::new("v");
    let root = shared_root();
    let state = mkdir(&root.path().join("state"), 0o700);
    let config = mkdir(&root.path().join("config"), 0o700);
    let records = mkdir(&state.join("records"), 0o700);
    mkdir(&state.join("locks"), 0o700);
    // Planted while the folders were the attacker's to write, as the issue found them; the
    // victim's own, so that only what they are is against them.
    mkfifo(&records.join("snap-1-2-1700000000000.json"));
    mkfifo(&config.join("protect.toml"));
    victim.own(&state);
    victim.own(&config);
    let empty = mkdir(&root.path().join("empty"), 0o755);
    let under = empty.to_str().unwrap();

    let out = finishes_within(
        pier(Some(&victim), &state, &config, &["history"]),
        LIMIT,
        "pier history over a FIFO record",
    );
    assert!(text(&out).contains("FIFO"), "named: {}", text(&out));
    let out = scan(&victim, &state, &config, under);
    let (code, doc) = exit_and_json(&out);
    assert_eq!(code, 0, "{doc:#}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("protect list") && said.contains("FIFO"),
        "the scan says why: {said}"
    );
    let out = finishes_within(
        pier(
            Some(&victim),
            &state,
            &config,
            &["stop", "--all-green", "--under", under],
        ),
        LIMIT,
        "pier stop over a FIFO record and protect list",
    );
    assert!(out.status.code().is_some(), "{}", text(&out));
    assert!(records.join("snap-1-2-1700000000000.json").exists(), "kept");
}

/// Point 7: a record that is a link to `/dev/zero`, or a sparse file of 8 GB, is never read
/// to its end: under a 1.5 GB address-space limit, history finishes and names both.
#[test]
fn a_record_without_end_is_never_read_to_its_end() {
    if needs_root("a_record_without_end_is_never_read_to_its_end") {
        return;
    }
    let root = shared_root();
    let state = mkdir(&root.path().join("state"), 0o700);
    let records = mkdir(&state.join("records"), 0o700);
    let config = mkdir(&root.path().join("config"), 0o700);
    std::os::unix::fs::symlink("/dev/zero", records.join("snap-1-2-1700000000000.json")).unwrap();
    let huge = fs::File::create(records.join("snap-3-4-1700000000001.json")).unwrap();
    huge.set_len(8 << 30).unwrap();
    let mut limited = Command::new("prlimit");
    limited
        .arg("--as=1500000000")
        .arg("--")
        .arg(pier_bin())
        .args(["history", "--json"])
        .env("PIER_STATE_DIR", &state)
        .env("PIER_CONFIG_DIR", &config);
    let out = finishes_within(limited, LIMIT, "pier history over endless records");
    let (code, doc) = exit_and_json(&out);
    assert_eq!(code, 0, "{}", text(&out));
    let damaged = doc["unreadable"].to_string();
    assert!(damaged.contains("symbolic link"), "{doc:#}");
    assert!(damaged.contains("larger than 16 MB"), "{doc:#}");
}

/// Point 8: another user's `package.json` in a shared sticky folder makes nothing a project:
/// the victim's listener working there is no candidate, while the same listener in a folder of
/// the victim's own project is.
#[test]
fn another_users_marker_in_a_shared_folder_makes_no_project() {
    if needs_root("another_users_marker_in_a_shared_folder_makes_no_project") {
        return;
    }
    let (victim, attacker) = (Account::new("v"), Account::new("a"));
    let root = shared_root();
    let shared = mkdir(&root.path().join("shared"), 0o1777);
    let planted = shared.join("package.json");
    fs::write(&planted, "{}\n").unwrap();
    attacker.own(&planted);
    // And in a folder no one else can write (root's, 0755): the marker's owner decides.
    let lab = mkdir(&root.path().join("lab"), 0o755);
    fs::write(lab.join("package.json"), "{}\n").unwrap();
    attacker.own(&lab.join("package.json"));
    let mine = mkdir(&root.path().join("mine"), 0o755);
    fs::write(mine.join("package.json"), "{}\n").unwrap();
    victim.own(&mine);
    victim.own(&mine.join("package.json"));
    let state = mkdir(&root.path().join("state"), 0o700);
    let config = mkdir(&root.path().join("config"), 0o700);
    victim.own(&state);
    victim.own(&config);

    let listen = "import socket, sys\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\n\
                  s.listen()\nprint(s.getsockname()[1], flush=True)\nsys.stdin.read()\n";
    let start = |cwd: &Path| {
        let mut child = victim
            .run(python(), Path::new("/nonexistent"))
            .args(["-c", listen])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        assert!(line.trim().parse::<u16>().is_ok(), "listening: {line:?}");
        child
    };
    let in_shared = start(&shared);
    let in_lab = start(&lab);
    let in_mine = start(&mine);
    let under = root.path().to_str().unwrap();
    let out = scan(&victim, &state, &config, under);
    let (code, scan) = exit_and_json(&out);
    assert_eq!(code, 0, "{scan:#}");
    assert!(
        resource_with(&scan, in_mine.id()).is_some(),
        "the victim's own project counts: {scan:#}"
    );
    assert!(
        resource_with(&scan, in_shared.id()).is_none(),
        "another user's marker made a project: {scan:#}"
    );
    assert!(
        resource_with(&scan, in_lab.id()).is_none(),
        "another user's marker made a project: {scan:#}"
    );
    let projects: Vec<&Value> = scan["projects"].as_array().unwrap().iter().collect();
    assert!(projects
        .iter()
        .all(|p| p["path"] != shared.to_str().unwrap()));
    // Ending stdin ends each listener, reaped here; the accounts' drop ends anything left.
    for mut child in [in_shared, in_lab, in_mine] {
        drop(child.stdin.take());
        let _ = child.wait();
    }
}

/// Another user attached to the victim's unix socket is a client the victim's Pier cannot
/// name (it reads only the victim's processes): it counts, red — a shared daemon's other
/// users are never cut off — and once it leaves, the socket says nothing against a stop.
#[test]
fn another_users_client_on_a_unix_socket_counts_as_a_live_connection() {
    if needs_root("another_users_client_on_a_unix_socket_counts_as_a_live_connection") {
        return;
    }
    let (victim, attacker) = (Account::new("v"), Account::new("a"));
    let root = shared_root();
    let mine = mkdir(&root.path().join("mine"), 0o755);
    fs::write(mine.join("package.json"), "{}\n").unwrap();
    victim.own(&mine);
    let state = mkdir(&root.path().join("state"), 0o700);
    let config = mkdir(&root.path().join("config"), 0o700);
    victim.own(&state);
    victim.own(&config);
    let sock = mine.join("d.sock");

    // A daemon in the victim's project: a TCP listener (so the scan finds it) and a unix one
    // anyone may connect to, accepting every client.
    let daemon = "import os, socket, sys, threading\nt = socket.socket()\n\
                  t.bind(('127.0.0.1', 0))\nt.listen()\nu = socket.socket(socket.AF_UNIX)\n\
                  u.bind(sys.argv[1])\nos.chmod(sys.argv[1], 0o777)\nu.listen()\nheld = []\n\
                  def serve():\n    while True:\n        held.append(u.accept()[0])\n\
                  threading.Thread(target=serve, daemon=True).start()\n\
                  print('ready', flush=True)\nsys.stdin.read()\n";
    let client = "import socket, sys\nc = socket.socket(socket.AF_UNIX)\nc.connect(sys.argv[1])\n\
                  print('ready', flush=True)\nsys.stdin.read()\n";
    let start = |who: &Account, code: &str| {
        let mut child = who
            .run(python(), Path::new("/nonexistent"))
            .args(["-c", code, sock.to_str().unwrap()])
            .current_dir(&mine)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "ready");
        child
    };
    let mut served = start(&victim, daemon);
    let mut attached = start(&attacker, client);
    let under = root.path().to_str().unwrap();
    let unix_evidence = |scan: &Value| -> Option<String> {
        let (_, r) = resource_with(scan, served.id())?;
        r["evidence"].as_array()?.iter().find_map(|e| {
            let m = e["message"].as_str()?;
            m.contains("unix socket")
                .then(|| format!("{} {m}", e["level"]))
        })
    };
    let seen = wait_for("the other user's client seen", || {
        let (_, scan) = exit_and_json(&scan(&victim, &state, &config, under));
        unix_evidence(&scan)
    });
    assert!(seen.starts_with("\"red\""), "{seen}");
    assert!(seen.contains(sock.to_str().unwrap()), "{seen}");

    drop(attached.stdin.take());
    let _ = attached.wait();
    wait_for("the client gone from the card", || {
        let (_, scan) = exit_and_json(&scan(&victim, &state, &config, under));
        resource_with(&scan, served.id())?;
        unix_evidence(&scan).is_none().then_some(())
    });
    drop(served.stdin.take());
    let _ = served.wait();
}
