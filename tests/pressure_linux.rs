//! Memory pressure read from the kernel's PSI (docs/design.md §5a): the host's
//! `/proc/pressure/memory`, and a real stall — a process of the test's, limited by a memory
//! cgroup of its own, that re-reads a file larger than its limit thrashes its page cache, and
//! its cgroup's `memory.pressure` accounts the stall. The cgroups are found from
//! `/proc/self/mountinfo`, made under the test's own with a unique name, and removed.
//! Run with `--nocapture` to see the readings.
#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pier_core::probe::{psi, LinuxProbe, Probe, ProbeError};

/// The host's file parses, and the probe judges it as the threshold says; a kernel without
/// PSI is told apart as `Unsupported`.
#[test]
fn the_hosts_memory_pressure_is_read_and_judged() {
    let psi = match psi::read_at(Path::new(psi::HOST)) {
        Err(ProbeError::Unsupported) => {
            eprintln!(
                "skipped: this kernel has no PSI ({} is not there)",
                psi::HOST
            );
            assert_eq!(
                LinuxProbe::new().memory_pressure(),
                Err(ProbeError::Unsupported)
            );
            return;
        }
        read => read.expect("the host's pressure file reads"),
    };
    eprintln!("host: {psi:?}");
    assert!(psi.full.is_some(), "memory has a full line since PSI began");
    let judged = LinuxProbe::new()
        .memory_pressure()
        .expect("the probe reads it");
    eprintln!("probe: {judged:?}");
    assert!(judged.words.starts_with("memory pressure: "));
    assert!(judged
        .words
        .ends_with("% of the last 10 s stalled on memory (PSI)"));
}

/// A memory cgroup's limit below what its process re-reads: reclaim, refaults, a stall that
/// `read_at` sees in the process's own cgroup's `memory.pressure`.
#[test]
fn a_process_thrashing_in_a_small_memory_cgroup_stalls_in_its_psi() {
    let Some(setup) = Setup::find() else { return };
    let dir = tempfile::tempdir().unwrap();
    let name = format!("pier-psi-test-{}-{}", std::process::id(), nanos());
    let mut guard = Guard::default();
    let unified = guard.make(setup.unified.join(&name));
    let memory = match setup.memory == setup.unified {
        true => unified.clone(),
        false => guard.make(setup.memory.join(&name)),
    };
    fs::write(memory.join(setup.limit_file), (16u64 << 20).to_string()).unwrap();
    let before = psi::read_at(&unified.join("memory.pressure")).expect("a fresh cgroup's PSI");

    let child = guard.start(thrasher(&dir.path().join("big")));
    for cgroup in [&memory, &unified] {
        fs::write(cgroup.join("cgroup.procs"), child.to_string()).unwrap();
    }
    guard.go();
    let end = Instant::now() + Duration::from_secs(60);
    let stalled = loop {
        let now = psi::read_at(&unified.join("memory.pressure")).expect("reads while it runs");
        if now.some.total_us > before.some.total_us && now.some.avg10 > 0.0 {
            break now;
        }
        assert!(Instant::now() < end, "no stall seen within 60 s: {now:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("before: {before:?}\nstalled: {stalled:?}");
    assert!(stalled.some.total_us >= stalled.full.unwrap().total_us);
}

/// A cgroup whose PSI is turned off (`cgroup.pressure` 0 hides its pressure files) reads as
/// a kernel without PSI: `Unsupported`, not a failed read.
#[test]
fn a_cgroup_with_psi_turned_off_is_unsupported() {
    let Some(setup) = Setup::find() else { return };
    let name = format!("pier-psi-off-{}-{}", std::process::id(), nanos());
    let mut guard = Guard::default();
    let unified = guard.make(setup.unified.join(&name));
    psi::read_at(&unified.join("memory.pressure")).expect("on by default");
    if let Err(e) = fs::write(unified.join("cgroup.pressure"), "0") {
        eprintln!("skipped: this kernel cannot turn one cgroup's PSI off ({e})");
        return;
    }
    assert_eq!(
        psi::read_at(&unified.join("memory.pressure")),
        Err(ProbeError::Unsupported)
    );
}

/// A process that waits for a line, then writes 64 MB to `file` and reads it again and again.
fn thrasher(file: &Path) -> Command {
    let script = "import sys\n\
        sys.stdin.readline()\n\
        p = sys.argv[1]\n\
        with open(p, 'wb') as f:\n\
        \x20   for _ in range(64): f.write(b'x' * (1 << 20))\n\
        while True:\n\
        \x20   with open(p, 'rb') as f:\n\
        \x20       while f.read(1 << 20): pass\n";
    let mut cmd = Command::new(common::python());
    cmd.args(["-c", script])
        .arg(file)
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    cmd
}

/// Where the test's cgroups go: under its own, in the memory hierarchy and the unified one.
struct Setup {
    memory: PathBuf,
    /// `memory.limit_in_bytes` (v1) or `memory.max` (v2).
    limit_file: &'static str,
    unified: PathBuf,
}

impl Setup {
    /// The mounts and the test's own cgroups, or `None` with the reason printed.
    fn find() -> Option<Setup> {
        let skip = |why: &str| {
            eprintln!("skipped: {why}");
            None
        };
        if common::needs_root("cgroup pressure") {
            return None;
        }
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap();
        let Some(unified) = mount(&mounts, |fs, _| fs == "cgroup2") else {
            return skip("no cgroup2 mount");
        };
        let unified_own = own_path(&own, |c| c.is_empty())?;
        let unified = under(&unified, &unified_own);
        if !unified.join("memory.pressure").exists() {
            return skip("the unified hierarchy has no memory.pressure (no PSI)");
        }
        if let Some(v1) = mount(&mounts, |fs, opts| {
            fs == "cgroup" && opts.split(',').any(|o| o == "memory")
        }) {
            let mine = own_path(&own, |c| c.split(',').any(|c| c == "memory"))?;
            return Some(Setup {
                memory: under(&v1, &mine),
                limit_file: "memory.limit_in_bytes",
                unified,
            });
        }
        let controls = fs::read_to_string(unified.join("cgroup.subtree_control")).ok()?;
        if !controls.split_whitespace().any(|c| c == "memory") {
            return skip("no v1 memory mount and no v2 memory controller for a child cgroup");
        }
        Some(Setup {
            memory: unified.clone(),
            limit_file: "memory.max",
            unified,
        })
    }
}

/// The mount point and root of the first mount whose type and super options `fits`.
fn mount(mountinfo: &str, fits: impl Fn(&str, &str) -> bool) -> Option<(PathBuf, String)> {
    mountinfo.lines().find_map(|line| {
        let (head, tail) = line.split_once(" - ")?;
        let head: Vec<&str> = head.split(' ').collect();
        let tail: Vec<&str> = tail.split(' ').collect();
        let (fs, opts) = (*tail.first()?, *tail.get(2)?);
        let (point, root) = (*head.get(4)?, *head.get(3)?);
        fits(fs, opts).then(|| (PathBuf::from(point), root.to_owned()))
    })
}

/// The test's own cgroup path in the hierarchy whose controller list `is`.
fn own_path(own: &str, is: impl Fn(&str) -> bool) -> Option<String> {
    own.lines()
        .filter_map(|l| l.splitn(3, ':').collect::<Vec<_>>().try_into().ok())
        .find_map(|[_, c, path]: [&str; 3]| is(c).then(|| path.to_owned()))
}

/// `path` (as `/proc/self/cgroup` says it) in the mount, past the mount's own root.
fn under((point, root): &(PathBuf, String), path: &str) -> PathBuf {
    let inside = path.strip_prefix(root.as_str()).unwrap_or(path);
    point.join(inside.trim_start_matches('/'))
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// What the test made, undone on the way out, a failed assertion included: its own child
/// killed and reaped, then its own cgroups removed (deepest first).
#[derive(Default)]
struct Guard {
    child: Option<Child>,
    cgroups: Vec<PathBuf>,
}

impl Guard {
    fn make(&mut self, path: PathBuf) -> PathBuf {
        fs::create_dir(&path).unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
        self.cgroups.push(path.clone());
        path
    }

    fn start(&mut self, mut cmd: Command) -> u32 {
        let child = cmd.spawn().expect("python3 starts");
        let pid = child.id();
        self.child = Some(child);
        pid
    }

    /// Lets the child begin, once it is in its cgroups.
    fn go(&mut self) {
        let child = self.child.as_mut().unwrap();
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for cgroup in self.cgroups.iter().rev() {
            // A reaped process may leave its cgroup a moment later.
            let end = Instant::now() + common::DEADLINE;
            while let Err(e) = fs::remove_dir(cgroup) {
                if Instant::now() >= end {
                    eprintln!("could not remove {}: {e}", cgroup.display());
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
