//! `pier doctor` on this machine, as a user runs it: the self-test passes here (Linux in CI;
//! macOS in the GitHub Actions job, the day it runs), its JSON and exit code agree, `--dump`
//! writes the test process's raw buffers with nothing of the caller's environment in them, and
//! a state folder Pier cannot use makes it exit 1 naming that check. Each run has its own
//! state and config folders; the only processes signalled are the doctor's own children.
#![cfg(unix)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A variable the caller has and the test process must not.
const SECRET: &str = "PIER_TEST_SECRET_TOKEN";

fn doctor(state: &Path, args: &[&str]) -> Output {
    doctor_with(state, Path::new("/nonexistent/pier-test-config"), args)
}

fn doctor_with(state: &Path, config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pier"))
        .arg("doctor")
        .args(args)
        .env("PIER_STATE_DIR", state)
        .env("PIER_CONFIG_DIR", config)
        .env("NO_COLOR", "1")
        .env(SECRET, "hunter2-5f0c")
        .output()
        .expect("pier runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report:#}"))
}

#[test]
fn every_check_passes_here_and_the_exit_code_says_ready() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(&dir.path().join("state"), &["--json"]);
    let report = json(&out);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["schema"], 1);
    assert_eq!(report["ready"], true, "{report:#}");
    // Here (Linux) every check passes; on a Mac those a stop does without may not (a zombie
    // reads as gone while it exits; a system shell's environment may be withheld).
    for c in report["checks"].as_array().unwrap() {
        assert_ne!(c["what"], "", "a check the tally does not describe: {c:#}");
        let no_psi = c["name"] == "memory_pressure" && c["setup"] == true;
        if (cfg!(target_os = "linux") && !no_psi) || c["needed"] == true {
            assert_eq!(c["status"], "ok", "{c:#}");
        }
    }
    // The checks a stop needs are all there, in order.
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"config_folder"), "{names:?}");
    // A kernel without PSI is the setup's, and only the pressure rules do without it.
    let pressure = check(&report, "memory_pressure");
    if cfg!(target_os = "linux") && std::path::Path::new("/proc/pressure/memory").exists() {
        let detail = pressure["detail"].as_str().unwrap();
        assert!(detail.starts_with("memory pressure: "), "{pressure:#}");
    } else if pressure["status"] == "failed" {
        assert_eq!(pressure["setup"], true, "{pressure:#}");
    }
    for needed in [
        "state_folder",
        "listener",
        "connection",
        "argv",
        "cwd",
        "start_time",
        "environment",
        "activity",
        "stale_identity",
        "signal",
        "exit_wait",
    ] {
        assert!(names.contains(&needed), "{needed} in {names:?}");
        assert_eq!(check(&report, needed)["needed"], true);
    }
    assert_eq!(report["signalling"]["race_free"], true, "{report:#}");
    let expected = if cfg!(target_os = "linux") {
        "pidfd"
    } else {
        "audit_token"
    };
    assert_eq!(report["signalling"]["name"], expected);
}

#[test]
fn the_text_names_each_check_and_ends_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let out = doctor(&dir.path().join("state"), &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("  ok       signal  "), "{text}");
    assert!(
        text.trim_end()
            .ends_with("Ready: everything a stop needs works on this machine."),
        "{text}"
    );
}

#[test]
fn a_dump_holds_the_test_process_buffers_and_nothing_of_the_callers_environment() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    let out = doctor(
        &dir.path().join("state"),
        &["--json", "--dump", dump.to_str().unwrap()],
    );
    let report = json(&out);
    assert!(out.status.success(), "{report:#}");
    assert_eq!(report["dump"], dump.to_str().unwrap());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dump.join("manifest.json")).unwrap()).unwrap();
    let started = &manifest["started_with"];
    assert_eq!(
        started["env"],
        serde_json::json!(["PATH=/usr/bin:/bin", "LANG=C", "PIER_DOCTOR=child"])
    );
    let buffers = manifest["buffers"].as_array().unwrap();
    assert!(!buffers.is_empty());
    let mut written = 0;
    for b in buffers {
        let Some(file) = b["file"].as_str() else {
            continue;
        };
        let bytes = std::fs::read(dump.join(file)).unwrap();
        assert_eq!(b["bytes"], bytes.len());
        let secret = SECRET.as_bytes();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret),
            "{file} holds the caller's environment"
        );
        written += 1;
    }
    // The argv buffer (Linux cmdline, macOS KERN_PROCARGS2) holds the child's command.
    let argv_file = if cfg!(target_os = "linux") {
        "proc-cmdline.bin"
    } else {
        "kern-procargs2.bin"
    };
    let argv = std::fs::read(dump.join(argv_file)).unwrap();
    assert!(
        argv.windows(12).any(|w| w == b"doctor-child"),
        "{argv_file}: {argv:?}"
    );
    assert!(written >= 3, "{manifest:#}");
    if cfg!(target_os = "linux") {
        // Only the test process's own files: not `/proc/net/tcp`, which lists every socket.
        let names: Vec<&str> = buffers
            .iter()
            .map(|b| b["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["proc-cmdline", "proc-environ", "proc-stat", "proc-status"]
        );
    }
}

#[test]
fn a_state_folder_pier_cannot_use_is_a_failed_needed_check_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    // A file where the folder should be.
    let state = dir.path().join("state");
    std::fs::write(&state, "not a folder").unwrap();
    let out = doctor(&state, &["--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report["ready"], false);
    let c = check(&report, "state_folder");
    assert_eq!(
        (c["status"].as_str(), c["needed"].as_bool()),
        (Some("failed"), Some(true)),
        "{c:#}"
    );
    // The rest still ran: the probe and the signaller are judged on their own.
    assert_eq!(check(&report, "signal")["status"], "ok", "{report:#}");

    let text = doctor(&state, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Not ready: state_folder"), "{text}");
}

/// A state folder other users can write is the setup's fault, named with what to do — not a
/// bug to report — and its permissions are left as they were.
#[test]
fn an_unsafe_state_folder_is_the_setups_fault_with_the_fix() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let out = doctor(&state, &["--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let detail = check(&report, "state_folder")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(detail.contains("can be written by other users"), "{detail}");
    assert!(
        detail.contains("PIER_STATE_DIR"),
        "says what to do: {detail}"
    );
    assert_eq!(check(&report, "state_folder")["setup"], true, "{report:#}");
    let text = doctor(&state, &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("the machine's setup, not a fault in Pier"),
        "{text}"
    );
    assert!(!text.contains("Please report"), "{text}");
    let mode = std::fs::metadata(&state).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o1777, "never changed");
}

#[test]
fn it_leaves_no_folder_and_no_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["doctor", "--json"])
        .env("PIER_STATE_DIR", dir.path().join("state"))
        .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let report = json(&out);
    assert!(out.status.success(), "{report:#}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    // "pid N, listening on …": the test process is gone, reaped by the doctor.
    let detail = check(&report, "child")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    let pid: i32 = detail
        .strip_prefix("pid ")
        .and_then(|r| r.split(',').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{detail}"));
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    assert!(
        rustix::process::test_kill_process(pid).is_err(),
        "pid {pid:?} still exists"
    );
}

/// The checks catch a probe, a signaller or a waiter that lies: each lie makes the machine not
/// ready and names the check that saw it. The lying parts wrap the real ones; only the doctor's
/// own children are ever signalled.
mod lies {
    use std::time::Duration;

    use pier_core::doctor::{run_with, Machine, Options};
    use pier_core::model::doctor::{DoctorReport, Status};
    use pier_core::probe::{
        self, ActivitySample, Identity, IdentityRead, Pid, Probe, ProbeError, ProcessDetails,
        ProcessInfo, ProcessList, SocketTable, Survey, WantsArgv,
    };
    use pier_core::signal::wait::{self, ExitWaiter};
    use pier_core::signal::{self, Expected, Sig, SignalOutcome, Signaller};

    #[derive(Clone, Copy, PartialEq)]
    enum Lie {
        /// The environment reads as empty (what macOS's withheld one must never read as).
        EmptyEnvironment,
        /// No socket has an owner.
        NoOwners,
        /// Every process reads as idle.
        Idle,
        /// CPU read in the wrong unit (Mach ticks as nanoseconds: 1/41).
        WrongUnit,
    }

    struct LyingProbe {
        real: Box<dyn Probe + Send + Sync>,
        lie: Lie,
    }

    impl LyingProbe {
        fn strip(&self, mut t: SocketTable) -> SocketTable {
            if self.lie == Lie::NoOwners {
                t.sockets.iter_mut().for_each(|s| s.owners.clear());
            }
            t
        }
    }

    impl Probe for LyingProbe {
        fn current_uid(&self) -> u32 {
            self.real.current_uid()
        }
        fn own_pid(&self) -> Pid {
            self.real.own_pid()
        }
        fn processes(&self) -> Result<ProcessList, ProbeError> {
            self.real.processes()
        }
        fn rows(&self, pids: &[Pid]) -> ProcessList {
            self.real.rows(pids)
        }
        fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
            let mut s = self.real.survey_own(wants_argv)?;
            s.sockets = s.sockets.map(|t| self.strip(t));
            Ok(s)
        }
        fn children(
            &self,
            parents: &[Identity],
        ) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
            self.real.children(parents)
        }
        fn details(&self, pid: Pid) -> Option<ProcessDetails> {
            self.real.details(pid)
        }
        fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
            match self.lie {
                Lie::EmptyEnvironment => Ok(Vec::new()),
                _ => self.real.environment(pid),
            }
        }
        fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
            self.real.sockets(owners_among).map(|t| self.strip(t))
        }
        fn memory(&self, pid: Pid) -> Result<probe::Memory, ProbeError> {
            self.real.memory(pid)
        }
        fn memory_pressure(&self) -> Result<pier_core::model::rules::MemoryPressure, ProbeError> {
            self.real.memory_pressure()
        }
        fn writes(&self, pid: Pid) -> Result<Vec<probe::Written>, ProbeError> {
            self.real.writes(pid)
        }
        fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
            let mut s = self.real.activity(pids, window);
            for (_, d) in &mut s.per_pid {
                if let Ok(d) = d {
                    d.cpu_ns = match self.lie {
                        Lie::Idle => 0,
                        Lie::WrongUnit => d.cpu_ns / 41,
                        _ => d.cpu_ns,
                    };
                }
            }
            s
        }
        fn identity(&self, pid: Pid) -> IdentityRead {
            self.real.identity(pid)
        }
        fn now(&self) -> Duration {
            self.real.now()
        }
        fn boot_id(&self) -> Option<String> {
            self.real.boot_id()
        }
    }

    /// Says "sent" and sends nothing: a signaller that cannot pin.
    struct Mute;

    impl Signaller for Mute {
        fn signal(&self, _: &Expected, _: Sig) -> SignalOutcome {
            SignalOutcome::Sent
        }
    }

    fn run(probe: &dyn Probe, signaller: &dyn Signaller, waiter: &dyn ExitWaiter) -> DoctorReport {
        let state = tempfile::tempdir().unwrap();
        run_with(
            &Options {
                pier: env!("CARGO_BIN_EXE_pier").into(),
                dump: None,
                sample: pier_core::doctor::SAMPLE,
                state: Some(state.path().to_path_buf()),
            },
            &Machine {
                probe,
                signaller,
                waiter,
            },
        )
    }

    fn failed(r: &DoctorReport) -> Vec<&str> {
        r.checks
            .iter()
            .filter(|c| c.status == Status::Failed)
            .map(|c| c.name.as_str())
            .collect()
    }

    fn with_lie(lie: Lie) -> DoctorReport {
        let probe = LyingProbe {
            real: probe::system_probe(),
            lie,
        };
        let (signaller, waiter) = (signal::system_signaller(), wait::system_waiter());
        run(&probe, signaller.as_ref(), waiter.as_ref())
    }

    #[test]
    fn a_probe_that_lies_is_caught_by_the_check_of_what_it_lied_about() {
        for (lie, check) in [
            (
                Lie::EmptyEnvironment,
                vec!["environment", "shell_environment"],
            ),
            (Lie::NoOwners, vec!["listener", "connection"]),
            (Lie::Idle, vec!["activity"]),
            (Lie::WrongUnit, vec!["activity"]),
        ] {
            let r = with_lie(lie);
            assert!(!r.ready, "{r:#?}");
            assert_eq!(failed(&r), check, "{r:#?}");
        }
    }

    #[test]
    fn a_signaller_that_does_not_pin_is_caught_and_nothing_else_is_blamed() {
        let real = probe::system_probe();
        let waiter = wait::system_waiter();
        let r = run(real.as_ref(), &Mute, waiter.as_ref());
        assert!(!r.ready, "{r:#?}");
        // "Sent" to a stale identity is no refusal; "sent" to the real one ends nothing.
        assert_eq!(failed(&r), ["stale_identity", "exit_wait"], "{r:#?}");
    }
}

/// A state folder that is a file, one under a file, or one whose `records` is a file is the
/// setup's mistake: one sentence saying what the path is and what to do, never the OS's words,
/// and the verdict says it is the setup — never "Please report this".
#[test]
fn a_state_folder_that_is_a_file_or_under_one_is_the_setups_fault_not_a_bug() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"").unwrap();
    let records_file = dir.path().join("state");
    std::fs::create_dir(&records_file).unwrap();
    std::fs::write(records_file.join("records"), b"").unwrap();
    for state in [file.clone(), file.join("sub"), records_file] {
        let report = json(&doctor(&state, &["--json"]));
        let c = check(&report, "state_folder");
        let detail = c["detail"].as_str().unwrap();
        assert_eq!(c["setup"], true, "{report:#}");
        assert!(detail.contains("is a file, not a folder"), "{detail}");
        assert!(
            detail.contains("PIER_STATE_DIR"),
            "says what to do: {detail}"
        );
        // The variable named the path: the file is the user's to keep, never one to move.
        assert!(!detail.contains("move"), "{detail}");
        assert!(!detail.contains("os error"), "{detail}");
        let out = doctor(&state, &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("the machine's setup, not a fault in Pier"),
            "{text}"
        );
        assert!(!text.contains("Please report"), "{text}");
    }
}

/// A configuration folder that is a file keeps the protect list from being read, so Pier offers
/// nothing: `pier doctor` names `config_folder`, says it is the setup, with what to do, and that
/// Pier offers nothing until then — never "Please report this". Before, it did not look at it.
/// Not needed: a stop stays safe, and the app still starts.
#[test]
fn a_config_folder_that_is_a_file_is_the_setups_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::write(&config, b"").unwrap();
    let state = dir.path().join("state");
    let out = doctor_with(&state, &config, &["--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    let c = check(&report, "config_folder");
    assert_eq!(
        (
            c["status"].as_str(),
            c["needed"].as_bool(),
            c["setup"].as_bool()
        ),
        (Some("failed"), Some(false), Some(true)),
        "{c:#}"
    );
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("(PIER_CONFIG_DIR) is a file"), "{detail}");
    assert_eq!(check(&report, "state_folder")["status"], "ok");
    let out = doctor_with(&state, &config, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "Fix config_folder (the machine's setup, not a fault in Pier): until then \
                       Pier offers nothing"
        ),
        "{text}"
    );
    assert!(!text.contains("Please report"), "{text}");
    // A good one passes.
    let good = doctor_with(&state, &dir.path().join("fresh"), &["--json"]);
    assert_eq!(check(&json(&good), "config_folder")["status"], "ok");
}

/// A protect list that is a folder or a FIFO is the user's setup too: `config_folder` fails as
/// the setup's (not needed: still Ready), and the text says Pier offers nothing until it is fixed.
#[test]
fn a_protect_list_that_is_a_folder_or_a_fifo_is_the_setups() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (folder, fifo) = (dir.path().join("folder"), dir.path().join("fifo"));
    std::fs::create_dir_all(folder.join("protect.toml")).unwrap();
    std::fs::create_dir(&fifo).unwrap();
    let made = Command::new("mkfifo")
        .arg(fifo.join("protect.toml"))
        .status()
        .unwrap();
    assert!(made.success());
    for (config, what) in [(&folder, "a folder"), (&fifo, "a FIFO")] {
        let out = doctor_with(&state, config, &["--json"]);
        let report = json(&out);
        assert_eq!(out.status.code(), Some(0), "{report:#}");
        let c = check(&report, "config_folder");
        assert_eq!(
            (c["status"].as_str(), c["setup"].as_bool()),
            (Some("failed"), Some(true)),
            "{c:#}"
        );
        assert!(c["detail"].as_str().unwrap().contains(what), "{c:#}");
        let out = doctor_with(&state, config, &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(
                "Fix config_folder (the machine's setup, not a fault in Pier): until then Pier \
                 offers nothing to stop."
            ),
            "{text}"
        );
    }
}

/// A configuration folder others can write is refused with the configuration folder's reason
/// (what Pier must never stop), not the state folder's (secrets, what a restart runs).
#[test]
fn an_unsafe_configuration_folder_says_what_others_could_change() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(["protect", "add", "--port", "1"])
        .env("PIER_STATE_DIR", dir.path().join("state"))
        .env("PIER_CONFIG_DIR", open.join("config"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("(PIER_CONFIG_DIR) is not safe"), "{text}");
    assert!(
        text.contains("others could change what Pier must never stop"),
        "{text}"
    );
    assert!(!text.contains("secrets"), "{text}");
}

/// A link loop on the path, a device on it (`/dev/null/x`), a name too long and a system
/// folder that takes no folders (`/proc/1/…`) are each one sentence of the setup's, naming the
/// variable, for the state folder (`pier history`, `pier doctor`) and the configuration folder
/// (`pier protect add`): never the OS's words, never "not safe", never "move /dev/null away".
#[test]
fn every_unusable_path_is_one_sentence_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
    let mut cases = vec![
        (root.join("loop/x"), "goes through a symbolic link loop"),
        (
            Path::new("/dev/null/x").to_path_buf(),
            "/dev/null is not a folder",
        ),
        (root.join("a".repeat(300)), "is too long a path"),
    ];
    if cfg!(target_os = "linux") {
        cases.push(("/proc/1/x".into(), "/proc/1 takes no new folders"));
    }
    let said = |var: &str, path: &Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_pier"))
            .args(args)
            .env("PIER_STATE_DIR", root.join("state"))
            .env("PIER_CONFIG_DIR", root.join("config"))
            .env(var, path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{path:?} {args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (path, what) in &cases {
        for (var, args) in [
            ("PIER_STATE_DIR", &["history"][..]),
            ("PIER_CONFIG_DIR", &["protect", "add", "--port", "1"][..]),
        ] {
            let text = said(var, path, args);
            assert!(text.contains(&format!("({var})")), "{text}");
            assert!(text.contains(what), "{what}: {text}");
            for never in ["os error", "not safe", "move /dev/null", "not a file"] {
                assert!(!text.contains(never), "{never}: {text}");
            }
        }
        let report = json(&doctor(path, &["--json"]));
        let c = check(&report, "state_folder");
        assert_eq!(c["setup"], true, "{c:#}");
        assert!(c["detail"].as_str().unwrap().contains(what), "{c:#}");
    }
}
