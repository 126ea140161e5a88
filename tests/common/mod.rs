//! Test support: temporary projects, fixture processes started as orphans, scans scoped to the
//! test's own folder, and clean-up that signals only the test's own processes, by identity.
#![allow(dead_code)] // each test binary uses its own part of this kit

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod auto;
pub mod mcp;
pub mod users;
pub mod watch;

/// Where a test project holds the fixture dev server: Pier knows it as vite.
pub const VITE: &str = "node_modules/.bin/vite";

/// `pier stop` flags for a stop anyway that accepts every reason, those no stop anyway sets
/// aside included: what is never stopped must refuse whatever a person accepts.
#[allow(dead_code)]
pub const ANYWAY_ALL: [&str; 3] = [
    "--anyway",
    "--accept",
    "live_connection,busy,not_orphaned,unknown_kind,not_restartable,data_service,managed,protected,unreadable",
];

/// A fixture's pid, from its report.
pub fn pid(report: &Value) -> u32 {
    report["pid"].as_u64().unwrap() as u32
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    fs::read(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| pier_core::probe::procfs::parse_stat(&s))
        .is_some_and(|(_, s)| s.state != b'Z')
}

/// How long a fixture may take to start, or a condition to come true.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// Polls `f` every 20 ms until it answers, or panics with `what` at the deadline.
pub fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_for_within(what, DEADLINE, f)
}

/// [`wait_for`] with its own deadline, for what is slow by nature (a container's start on a
/// loaded machine: its namespace, bridge and proxy).
pub fn wait_for_within<T>(what: &str, deadline: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A port that was free a moment ago, for a fixture that must come back on the same port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether the tests run as root (some fixtures need it: another uid, a network namespace).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Skips a test that needs root, saying so.
pub fn needs_root(test: &str) -> bool {
    if is_root() {
        return false;
    }
    eprintln!("{test}: skipped, needs root");
    true
}

/// A test runner inside a systemd `.service` unit (a CI agent run as a service) hands its
/// cgroup to every fixture, and Pier rightly calls such processes services, not orphans. The
/// tests that expect green say so and stop there.
pub fn fixtures_cannot_be_orphans(test: &str) -> bool {
    let cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let service = cgroup
        .lines()
        .filter_map(|l| l.splitn(3, ':').nth(2))
        .any(|path| {
            path.split('/')
                .any(|c| c.ends_with(".service") && !c.starts_with("user@"))
        });
    if service {
        eprintln!("{test}: skipped, the test runner is in a systemd .service cgroup");
    }
    service
}

/// The interpreter the fixtures run on: the system one when there is one (no shims).
pub fn python() -> String {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .find(|p| Path::new(p).exists())
        .map_or_else(|| "python3".to_owned(), |p| (*p).to_owned())
}

/// The workspace's `tests/`: this kit is also compiled into the app crate's tests
/// (`crates/app/tests`), whose manifest folder is two levels down.
fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("tests"))
        .find(|t| t.join("fixtures/devserver.py").is_file())
        .expect("the workspace's tests folder")
}

fn fixture_source(name: &str) -> PathBuf {
    tests_dir().join("fixtures").join(name)
}

/// The `pier` binary: this package's own, or — from the app crate's tests — the one the
/// workspace's build puts beside `pier-app`.
pub fn pier_bin() -> PathBuf {
    if let Some(pier) = option_env!("CARGO_BIN_EXE_pier") {
        return pier.into();
    }
    let Some(app) = option_env!("CARGO_BIN_EXE_pier-app") else {
        panic!("this kit serves the tests of the pier and pier-app packages only");
    };
    let pier = Path::new(app).with_file_name("pier");
    assert!(
        pier.exists(),
        "{} is not built: run the tests of the whole workspace (`cargo test --workspace`)",
        pier.display()
    );
    pier
}

/// The exit code of a `pier … --json` run and the document it printed; one that printed no
/// JSON fails the test with what it said instead.
pub fn exit_and_json(out: &std::process::Output) -> (i32, Value) {
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

/// A process the test started, known by identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    pub pid: u32,
    pub start_time: u64,
}

/// A temporary folder holding the test's projects, state folder and fixture reports. Dropping
/// it kills every process registered with [`Sandbox::own`], by identity.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    owned: std::cell::RefCell<Vec<Started>>,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir_all(dir.path().join("state")).unwrap();
        fs::create_dir_all(dir.path().join("reports")).unwrap();
        Self {
            dir,
            owned: Default::default(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A project folder with a `package.json` and the dev-server fixture installed as `tool`
    /// (a path inside the project, e.g. `node_modules/.bin/vite`).
    pub fn project(&self, name: &str, tool: &str) -> PathBuf {
        let root = self.path().join(name);
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("package.json"), "{}\n").unwrap();
        self.install(&root.join(tool), "devserver.py");
        root
    }

    /// Copies a fixture script to `to`, executable, with this machine's python in its shebang.
    pub fn install(&self, to: &Path, fixture: &str) {
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        let body = fs::read_to_string(fixture_source(fixture)).unwrap();
        fs::write(to, format!("#!{}\n{body}", python())).unwrap();
        fs::set_permissions(to, fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub fn report_path(&self, name: &str) -> PathBuf {
        self.path().join("reports").join(format!("{name}.json"))
    }

    /// Starts `argv` in `cwd` as an orphan: `setsid -f` forks, its parent exits, and the
    /// fixture is re-parented to PID 1 (or the nearest subreaper).
    pub fn spawn_orphan(&self, cwd: &Path, argv: &[&str]) {
        let status = Command::new("setsid")
            .arg("-f")
            .args(argv)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("setsid runs");
        assert!(status.success(), "setsid -f {argv:?} failed");
    }

    /// Waits for the fixture report `name` (and `until` on it), registering every process it
    /// names for clean-up.
    pub fn report(&self, name: &str, until: impl Fn(&Value) -> bool) -> Value {
        let path = self.report_path(name);
        let report = wait_for(&format!("report {name}"), || {
            let v: Value = serde_json::from_slice(&fs::read(&path).ok()?).ok()?;
            until(&v).then_some(v)
        });
        let pid = |k: &str| report[k].as_u64().unwrap() as u32;
        let time = |k: &str| report[k].as_u64().unwrap();
        self.own(Started {
            pid: pid("pid"),
            start_time: time("start_time"),
        });
        let children = report["children"].as_array().unwrap();
        for (i, c) in children.iter().enumerate() {
            self.own(Started {
                pid: c.as_u64().unwrap() as u32,
                start_time: report["children_start_times"][i].as_u64().unwrap(),
            });
        }
        report
    }

    /// Starts the fixture as `node_modules/.bin/vite` in a new project `name`, through
    /// `sh -c '…; true'` (so `sh` stays as its launcher), and waits for its report (and
    /// `until` on it), registering `sh` too for clean-up.
    pub fn start_vite(&self, name: &str, extra: &[&str], until: impl Fn(&Value) -> bool) -> Value {
        let project = self.project(name, VITE);
        let report = self.report_path(name);
        let cmd = format!(
            "./{VITE} --report '{}' {}; true",
            report.display(),
            extra.join(" ")
        );
        self.spawn_orphan(&project, &["sh", "-c", &cmd]);
        let r = self.report(name, until);
        self.own_parent(&r);
        r
    }

    /// Registers the fixture's parent (its `sh`), when the report names a live one.
    pub fn own_parent(&self, report: &Value) {
        if let Some(start_time) = report["ppid_start_time"].as_u64() {
            self.own(Started {
                pid: report["ppid"].as_u64().unwrap() as u32,
                start_time,
            });
        }
    }

    /// Registers a process of the test's for the kill at drop.
    pub fn own(&self, p: Started) {
        self.owned.borrow_mut().push(p);
    }

    /// Runs `pier scan --json --under <sandbox>` with a 100 ms sample and extra `args`.
    pub fn scan(&self, args: &[&str]) -> Value {
        let out = self.pier(&[&["scan", "--json", "--sample-ms", "100"], args].concat());
        assert!(
            out.status.success(),
            "pier scan failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("scan prints JSON")
    }

    /// Runs the `pier` binary with exactly `args`, with this sandbox's state folder.
    pub fn pier_exact(&self, args: &[&str]) -> std::process::Output {
        Command::new(pier_bin())
            .args(args)
            .env("PIER_STATE_DIR", self.path().join("state"))
            .env("PIER_CONFIG_DIR", self.path().join("config"))
            .env("NO_COLOR", "1")
            .output()
            .expect("pier runs")
    }

    /// Runs the `pier` binary scoped to this sandbox, with its own state folder.
    pub fn pier(&self, args: &[&str]) -> std::process::Output {
        Command::new(pier_bin())
            .args(args)
            .arg("--under")
            .arg(self.path())
            .env("PIER_STATE_DIR", self.path().join("state"))
            .env("PIER_CONFIG_DIR", self.path().join("config"))
            .env("NO_COLOR", "1")
            .output()
            .expect("pier runs")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        for p in self.owned.borrow().iter().rev() {
            kill_by_identity(*p);
        }
    }
}

/// SIGKILL through a pidfd, only if the pid still has the start time we recorded: a pid that
/// was reused is never signalled.
pub fn kill_by_identity(p: Started) {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    let Some(pid) = Pid::from_raw(p.pid as i32) else {
        return;
    };
    let Ok(fd) = pidfd_open(pid, PidfdFlags::empty()) else {
        return;
    };
    if start_time_of(p.pid) == Some(p.start_time) {
        let _ = pidfd_send_signal(&fd, Signal::KILL);
    }
}

/// The kernel start time of `pid`, via Pier's own parser (pinned by its unit tests).
pub fn start_time_of(pid: u32) -> Option<u64> {
    let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
    pier_core::probe::procfs::parse_stat(&stat).map(|(_, s)| s.start_time)
}

/// The parent pid of `pid`.
pub fn ppid_of(pid: u32) -> Option<u32> {
    let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
    pier_core::probe::procfs::parse_stat(&stat).map(|(_, s)| s.ppid)
}

/// Every resource in a scan document, with its project.
pub fn resources(scan: &Value) -> Vec<(Value, Value)> {
    scan["projects"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |r| (p.clone(), r.clone()))
        })
        .collect()
}

/// The resource one of whose members is `pid`.
pub fn resource_with(scan: &Value, pid: u32) -> Option<(Value, Value)> {
    resources(scan).into_iter().find(|(_, r)| {
        r["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["pid"] == pid)
    })
}

pub fn evidence_kinds(resource: &Value) -> Vec<String> {
    resource["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether the stop `pid` waits for a lock another holds, as `Store::lock_polling` does: it
/// holds the lock file (inode `lock_inode`) open, sleeps between tries (x86_64's
/// clock_nanosleep is 230; elsewhere the file alone), and has written no snapshot to `records`.
pub fn waits_on_lock(pid: u32, lock_inode: u64, records: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let holds = fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| fs::metadata(fd.path()).is_ok_and(|m| m.ino() == lock_inode));
    let asleep = !cfg!(target_arch = "x86_64")
        || fs::read_to_string(format!("/proc/{pid}/syscall")).is_ok_and(|s| s.starts_with("230 "));
    let no_record = fs::read_dir(records).map_or(true, |mut d| d.next().is_none());
    holds && asleep && no_record
}

/// The evidence of `kind` on the card `r`, as (level, message).
pub fn evidence_of(r: &Value, kind: &str) -> Option<(String, String)> {
    r["evidence"].as_array()?.iter().find_map(|e| {
        (e["kind"] == kind).then(|| {
            (
                e["level"].as_str().unwrap().to_owned(),
                e["message"].as_str().unwrap().to_owned(),
            )
        })
    })
}

/// The kinds of the evidence on the card `r` that argue against a stop.
pub fn against(r: &Value) -> Vec<String> {
    r["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["level"] != "green")
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// The id of the resource a `start_vite` fixture is the server of: its `sh` is the root.
pub fn id_of(server: &Value) -> String {
    format!(
        "{}-{}",
        server["ppid"].as_u64().unwrap(),
        server["ppid_start_time"].as_u64().unwrap()
    )
}

/// The recovery snapshots in the sandbox's state folder (a stop writes one before any signal).
pub fn snapshots(sb: &Sandbox) -> usize {
    std::fs::read_dir(sb.path().join("state/records"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("snap-"))
                .count()
        })
        .unwrap_or(0)
}

/// Closes `stream` with a reset (SO_LINGER 0): a client gone without the normal close, so no
/// TIME-WAIT row is left on either end (what an aborted page load does). A test that only needs
/// its client gone uses it: a normal close keeps a server "used within the last minute".
pub fn reset(stream: std::net::TcpStream) {
    rustix::net::sockopt::set_socket_linger(&stream, Some(std::time::Duration::ZERO))
        .expect("SO_LINGER");
    drop(stream);
}
