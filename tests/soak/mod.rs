//! One round of the stop soak: a fixture tree (`tests/fixtures/soak.py`) in its own project, a
//! plan of events at chosen calls of the stop, and the ground truth the round keeps on its own:
//! every process of the tree and every process an event made (from their own reports), when
//! each appeared and ended (as a call number of the stop), what each event did, and the
//! fixtures' signal log. Pier's report is judged against that truth in `oracle.rs`.
//!
//! A batch round stops several trees at once, each its own [`Round`] in its own project; they
//! share one [`Timeline`] (the calls of the one batch stop, in the order they happened, with
//! the thread that made each), and [`Batch`] hands every call to each of them, so an event
//! aimed at one tree fires at its call whichever resource's thread makes it.

pub mod hook;
pub mod oracle;

use std::collections::HashMap;
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use pier_core::probe::fake::Shared;
use pier_core::probe::Identity;
use pier_core::signal::{Expected, SignalOutcome};
use serde_json::{json, Value};

use crate::common::{self, Started};
use hook::{Call, Tick};

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A client connects to the server's port and holds the connection.
    Connect,
    /// A live process of the tree forks (the child is a new process in the project).
    Fork,
    /// A live process of the tree exits on its own.
    Exit,
    /// A live process of the tree execs another executable (same pid and start time).
    Exec,
    /// A live process of the tree is killed by the test and a newcomer running the same argv
    /// in the same folder takes its pid (`ns_last_pid`).
    Recycle,
    /// Right after the first signal Pier sends at or after the planned call, the signalled
    /// member's parent forks a replacement, as a supervisor respawns a worker (uvicorn
    /// `--workers`, nodemon): a newcomer Pier must name and never signal.
    Respawn,
}

pub const KINDS: [Kind; 6] = [
    Kind::Connect,
    Kind::Fork,
    Kind::Exit,
    Kind::Exec,
    Kind::Recycle,
    Kind::Respawn,
];

/// Where a process the round knows came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The tree Pier diagnosed.
    Initial,
    /// Forked by a fork event.
    Forked,
    /// Took a killed process's pid (a recycle event).
    Newcomer,
    /// A recycle attempt that got another pid; the test ended it at once.
    Stray,
}

/// A process the round knows of, from its own report.
#[derive(Debug, Clone)]
pub struct Known {
    pub id: Identity,
    pub ppid: u32,
    pub origin: Origin,
    /// The call number before which it appeared (0 for the initial tree).
    pub born: usize,
    /// The call number before which it exec'd another executable, if it did.
    pub exec_at: Option<usize>,
    /// The call number before which the test ended it, and how (an exit or a recycle event;
    /// a recycle's stray newcomers are ended as recycles too).
    pub ended: Option<(usize, Kind)>,
    pub port: Option<u16>,
}

/// What one event did.
#[derive(Debug, Clone)]
pub struct Fired {
    pub at: usize,
    pub kind: Kind,
    pub target: Option<Identity>,
    /// Whether it happened (false: no live target, or the target ended first).
    pub done: bool,
    pub note: String,
}

/// The round's world and its records.
pub struct Round {
    pub dir: PathBuf,
    pub project: PathBuf,
    interpreter: PathBuf,
    driver: UnixDatagram,
    plan: Vec<(usize, Kind)>,
    /// The batch's calls, shared by its rounds (`Timeline`).
    pub trace: Arc<Shared<Vec<Call>>>,
    /// The thread that made each call.
    pub threads: Arc<Shared<Vec<ThreadId>>>,
    /// Each signal request, with its call number and what the signaller answered.
    pub signals: Shared<Vec<(usize, Identity, SignalOutcome)>>,
    pub known: Shared<Vec<Known>>,
    pub fired: Shared<Vec<Fired>>,
    clients: Shared<Vec<TcpStream>>,
    /// Each command's number, and the kind of event that sent it.
    seqs: Shared<HashMap<u64, Kind>>,
    seq: Shared<u64>,
    rng: Shared<Rng>,
    /// Whether recycle events can steer pids (root only).
    can_recycle: bool,
    /// Whether each member was alive right after each wait, as the test saw it then.
    pub after_wait: Shared<Vec<AfterWait>>,
    /// At each survey and process read after the batch's first signal request: the diagnosed
    /// members' pids another process held then (the oracle takes those of this tree's rescan).
    pub reused_at: Shared<Vec<(usize, Vec<u32>)>>,
    /// The call at which Pier first asked to signal one of this tree's members.
    first_request: Shared<Option<usize>>,
    /// When each call was passed on (after its events): the test's own clock.
    pub stamps: Arc<Shared<Vec<Instant>>>,
    pub snapshot: Shared<SnapshotWatch>,
    /// The calls at which respawn events came due; each waits for the next signal sent.
    respawns_due: Shared<Vec<usize>>,
}

/// Where the stop's snapshot must be, and what the test found there when the first signal was
/// requested.
#[derive(Default)]
pub struct SnapshotWatch {
    /// The records folder and the resource id.
    pub expected: Option<(PathBuf, String)>,
    pub found: Option<Result<(), String>>,
}

/// A small deterministic generator (splitmix64): a failing round's plan can be replayed from
/// its seed (the races themselves cannot).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Starts a newcomer on a given pid, as an orphan: it steers the next pid (`ns_last_pid`),
/// forks, and exits; its child takes the pid, starts a session and runs the tool exactly as the
/// tree's own processes run it (same argv, same folder). argv: the pid, the tool's path.
const STEER: &str = r#"
import os, sys
with open("/proc/sys/kernel/ns_last_pid", "w") as f:
    f.write(str(int(sys.argv[1]) - 1))
if os.fork() == 0:
    os.setsid()
    os.execv("./" + sys.argv[2], ["./" + sys.argv[2]])
"#;

/// How long the round waits for a fixture to answer.
const ANSWER: Duration = Duration::from_secs(10);

/// A tree shape as the fixture takes it: one entry per child, each the child's own shape.
pub fn random_tree(rng: &mut Rng) -> Value {
    let kids: Vec<Value> = (0..rng.below(3))
        .map(|_| {
            let grandkids: Vec<Value> = (0..rng.below(2)).map(|_| json!([])).collect();
            json!(grandkids)
        })
        .collect();
    json!(kids)
}

fn count(tree: &Value) -> usize {
    1 + tree.as_array().unwrap().iter().map(count).sum::<usize>()
}

/// The executable a re-exec'd member runs: a copy of the interpreter, so that its path differs.
pub fn interpreter_copy(dir: &Path) -> PathBuf {
    let python = std::fs::canonicalize(crate::common::python()).expect("python3 resolves");
    let copy = dir.join("python3-reexec");
    std::fs::copy(&python, &copy).expect("the interpreter can be copied");
    copy
}

/// Whether the process `id` runs (a zombie does not).
pub fn runs(id: Identity) -> bool {
    common::start_time_of(id.pid) == Some(id.start_time) && common::alive(id.pid)
}

impl Round {
    /// Starts the tree `shape` as an orphan in a fresh project under `base`, and waits until
    /// every process of it has reported.
    pub fn start(
        base: &Path,
        n: usize,
        shape: &Value,
        plan: Vec<(usize, Kind)>,
        rng: Rng,
        interpreter: &Path,
        timeline: &Timeline,
    ) -> Round {
        let dir = base.join(format!("r{n}"));
        let project = base.join(format!("p{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let tool = project.join(common::VITE);
        std::fs::create_dir_all(tool.parent().unwrap()).unwrap();
        std::fs::write(project.join("package.json"), "{}\n").unwrap();
        let body = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/soak.py"),
        )
        .unwrap();
        std::fs::write(&tool, format!("#!{}\n{body}", common::python())).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let driver = UnixDatagram::bind(dir.join("driver.sock")).unwrap();
        driver
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let round = Round {
            dir,
            project,
            interpreter: interpreter.to_owned(),
            driver,
            plan,
            trace: timeline.calls.clone(),
            threads: timeline.threads.clone(),
            signals: Shared::new(Vec::new()),
            known: Shared::new(Vec::new()),
            fired: Shared::new(Vec::new()),
            clients: Shared::new(Vec::new()),
            seqs: Shared::new(HashMap::new()),
            seq: Shared::new(0),
            rng: Shared::new(rng),
            can_recycle: common::is_root(),
            after_wait: Shared::new(Vec::new()),
            reused_at: Shared::new(Vec::new()),
            first_request: Shared::new(None),
            stamps: timeline.stamps.clone(),
            snapshot: Shared::new(SnapshotWatch::default()),
            respawns_due: Shared::new(Vec::new()),
        };
        round.spawn(&[
            ("SOAK_KIDS", shape.to_string()),
            ("SOAK_LISTEN", "1".into()),
        ]);
        let want = count(shape);
        round.answer("the tree to report", None, |_| {
            (round.known.borrow().len() >= want).then_some(())
        });
        round
    }

    /// The tree's root: the process that reported with no seq and listens.
    pub fn root(&self) -> Identity {
        self.known
            .borrow()
            .iter()
            .find(|k| k.port.is_some() && k.origin == Origin::Initial)
            .expect("the root reported")
            .id
    }

    /// The events planned for this tree.
    pub fn plan(&self) -> &[(usize, Kind)] {
        &self.plan
    }

    pub fn initial(&self) -> Vec<Identity> {
        let mut ids: Vec<Identity> = self
            .known
            .borrow()
            .iter()
            .filter(|k| k.origin == Origin::Initial)
            .map(|k| k.id)
            .collect();
        ids.sort();
        ids
    }

    /// `setsid -f ./node_modules/.bin/vite` in the project, with the round's settings.
    fn spawn(&self, env: &[(&str, String)]) {
        let tool = format!("./{}", common::VITE);
        assert!(self.run("setsid", &["-f", &tool], env).success());
    }

    /// Runs `program` in the project with the round's folder and `env`, and waits for it.
    fn run(&self, program: &str, args: &[&str], env: &[(&str, String)]) -> ExitStatus {
        Command::new(program)
            .args(args)
            .current_dir(&self.project)
            .env("SOAK_DIR", &self.dir)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{program} runs: {e}"))
    }

    /// Reads the fixtures' reports until `until` answers, or `target` stops running, or the
    /// deadline passes (a panic: a fixture that never answers is a broken test).
    fn answer<T>(
        &self,
        what: &str,
        target: Option<Identity>,
        mut until: impl FnMut(&Value) -> Option<T>,
    ) -> Option<T> {
        let end = Instant::now() + ANSWER;
        let mut buf = [0u8; 4096];
        loop {
            if let Some(v) = until(&Value::Null) {
                return Some(v);
            }
            if let Ok(n) = self.driver.recv(&mut buf) {
                let msg: Value = serde_json::from_slice(&buf[..n]).expect("a fixture report");
                self.absorb(&msg);
                if let Some(v) = until(&msg) {
                    return Some(v);
                }
                continue;
            }
            if target.is_some_and(|t| !runs(t)) {
                return None;
            }
            assert!(Instant::now() < end, "timed out waiting for {what}");
        }
    }

    /// Records a process that reported itself.
    fn absorb(&self, msg: &Value) {
        let Some(pid) = msg["ready"].as_u64() else {
            return;
        };
        let id = Identity {
            pid: pid as u32,
            start_time: msg["start"].as_u64().unwrap(),
        };
        // Inside an event, the call it came before is already in the trace: that is its time.
        let now = self.trace.borrow().len().saturating_sub(1);
        let mut known = self.known.borrow_mut();
        if let Some(k) = known.iter_mut().find(|k| k.id == id) {
            // The same process after an exec.
            k.exec_at.get_or_insert(now);
            return;
        }
        let origin = match msg["seq"].as_u64() {
            None => Origin::Initial,
            Some(seq) if self.seqs.borrow().get(&seq) == Some(&Kind::Recycle) => Origin::Newcomer,
            Some(_) => Origin::Forked,
        };
        known.push(Known {
            id,
            ppid: msg["ppid"].as_u64().unwrap() as u32,
            origin,
            born: if origin == Origin::Initial { 0 } else { now },
            exec_at: None,
            ended: None,
            port: msg["port"].as_u64().map(|p| p as u16),
        });
    }

    fn next_seq(&self) -> u64 {
        self.seq.set(self.seq.get() + 1);
        self.seq.get()
    }

    /// A live process of the tree (or made by an event), chosen at random.
    fn live_target(&self) -> Option<Identity> {
        let live: Vec<Identity> = self
            .known
            .borrow()
            .iter()
            .filter(|k| k.origin != Origin::Stray && k.ended.is_none() && runs(k.id))
            .map(|k| k.id)
            .collect();
        (!live.is_empty()).then(|| live[self.rng.borrow_mut().below(live.len())])
    }

    fn command(&self, target: Identity, cmd: Value) -> bool {
        self.driver
            .send_to(
                cmd.to_string().as_bytes(),
                self.dir.join(format!("ctl-{}", target.pid)),
            )
            .is_ok()
    }

    fn end(&self, id: Identity, at: usize, how: Kind) {
        if let Some(k) = self.known.borrow_mut().iter_mut().find(|k| k.id == id) {
            k.ended.get_or_insert((at, how));
        }
    }

    /// Makes event `kind` happen before call `at`, and records what it did.
    fn fire(&self, at: usize, kind: Kind) {
        let f = self.happen(at, kind);
        self.fired.borrow_mut().push(f);
    }

    fn happen(&self, at: usize, kind: Kind) -> Fired {
        let seq = self.next_seq();
        self.seqs.borrow_mut().insert(seq, kind);
        let mut f = Fired {
            at,
            kind,
            target: None,
            done: false,
            note: String::new(),
        };
        match kind {
            Kind::Connect => {
                let root = self.root();
                let port = self
                    .known
                    .borrow()
                    .iter()
                    .find(|k| k.id == root)
                    .unwrap()
                    .port;
                f.target = Some(root);
                match TcpStream::connect(("127.0.0.1", port.unwrap())) {
                    Ok(c) => {
                        self.clients.borrow_mut().push(c);
                        f.done = true;
                    }
                    Err(e) => f.note = format!("connect: {e}"),
                }
            }
            Kind::Fork | Kind::Exec | Kind::Exit => {
                let Some(t) = self.live_target() else {
                    f.note = "no live target".into();
                    return f;
                };
                f.target = Some(t);
                let cmd = match kind {
                    Kind::Fork => json!({"do": "fork", "seq": seq}),
                    Kind::Exec => json!({"do": "exec", "seq": seq, "exe": self.interpreter}),
                    _ => json!({"do": "exit", "seq": seq}),
                };
                if !self.command(t, cmd) {
                    f.note = "the target had no control socket: it was ending".into();
                    return f;
                }
                if kind == Kind::Exit {
                    common::wait_for("the member to exit", || (!runs(t)).then_some(()));
                    self.end(t, at, Kind::Exit);
                    f.done = true;
                } else {
                    f.done = self
                        .answer("the command to be obeyed", Some(t), |m| {
                            (m["seq"].as_u64() == Some(seq)).then_some(())
                        })
                        .is_some();
                }
            }
            Kind::Respawn => f.note = "respawns happen after a signal (Round::respawn)".into(),
            Kind::Recycle => {
                let Some(t) = self.live_target() else {
                    f.note = "no live target".into();
                    return f;
                };
                f.target = Some(t);
                let port = self.known.borrow().iter().find(|k| k.id == t).unwrap().port;
                common::kill_by_identity(Started {
                    pid: t.pid,
                    start_time: t.start_time,
                });
                self.end(t, at, Kind::Recycle);
                // Reaped: the pid holds no process with its start time, not even a zombie.
                common::wait_for("the killed process to be reaped", || {
                    (common::start_time_of(t.pid) != Some(t.start_time)).then_some(())
                });
                f.done = true;
                f.note = if self.can_recycle {
                    self.recycle(t, port, seq, at)
                } else {
                    "killed; pid steering needs root".into()
                };
            }
        }
        f
    }

    /// A respawn that came due at call `due`, fired right after Pier's signal to `signalled`
    /// (call `at`) went out: the signalled member's parent, if it is a running member, forks.
    fn respawn(&self, due: usize, at: usize, signalled: Identity) {
        let seq = self.next_seq();
        self.seqs.borrow_mut().insert(seq, Kind::Respawn);
        let mut f = Fired {
            at,
            kind: Kind::Respawn,
            target: None,
            done: false,
            note: format!("due at call {due}"),
        };
        let parent = {
            let known = self.known.borrow();
            let ppid = known.iter().find(|k| k.id == signalled).map(|k| k.ppid);
            known
                .iter()
                .find(|k| {
                    Some(k.id.pid) == ppid
                        && k.origin == Origin::Initial
                        && k.ended.is_none()
                        && runs(k.id)
                })
                .map(|k| k.id)
        };
        match parent {
            None => f
                .note
                .push_str("; the signalled member has no running member as parent"),
            Some(p) => {
                f.target = Some(p);
                if !self.command(p, json!({"do": "fork", "seq": seq})) {
                    f.note
                        .push_str("; the parent had no control socket: it was ending");
                } else {
                    f.done = self
                        .answer("the replacement to report", Some(p), |m| {
                            (m["seq"].as_u64() == Some(seq)).then_some(())
                        })
                        .is_some();
                }
            }
        }
        self.fired.borrow_mut().push(f);
    }

    /// Records the respawns that came due but found no signal after them (the stop ended
    /// first, or sent nothing): planned, not done.
    pub fn close_plan(&self) {
        for due in std::mem::take(&mut *self.respawns_due.borrow_mut()) {
            self.fired.borrow_mut().push(Fired {
                at: due,
                kind: Kind::Respawn,
                target: None,
                done: false,
                note: "no signal went out after it came due".into(),
            });
        }
    }

    /// Starts newcomers until one gets `old`'s pid (bounded); the others are ended at once.
    fn recycle(&self, old: Identity, port: Option<u16>, seq: u64, at: usize) -> String {
        for attempt in 0..40 {
            let mut env = vec![("SOAK_SEQ", seq.to_string()), ("SOAK_KIDS", "[]".into())];
            if let Some(p) = port {
                env.push(("SOAK_LISTEN", "1".into()));
                env.push(("SOAK_PORT", p.to_string()));
            }
            let pid = old.pid.to_string();
            let status = self.run(&common::python(), &["-c", STEER, &pid, common::VITE], &env);
            if !status.success() {
                return format!("killed; pids cannot be steered here ({status})");
            }
            let got = self
                .answer("the newcomer to report", None, |m| {
                    (m["seq"].as_u64() == Some(seq)).then(|| Identity {
                        pid: m["ready"].as_u64().unwrap() as u32,
                        start_time: m["start"].as_u64().unwrap(),
                    })
                })
                .unwrap();
            if got.pid == old.pid {
                return format!("pid {} taken by a newcomer (try {attempt})", old.pid);
            }
            if let Some(k) = self.known.borrow_mut().iter_mut().find(|k| k.id == got) {
                k.origin = Origin::Stray;
            }
            common::kill_by_identity(Started {
                pid: got.pid,
                start_time: got.start_time,
            });
            self.end(got, at, Kind::Recycle);
            common::wait_for("a stray newcomer to end", || (!runs(got)).then_some(()));
        }
        format!("killed; no newcomer got pid {} in 40 tries", old.pid)
    }

    /// The signal log, one [`Logged`] per line.
    pub fn signal_lines(&self) -> Vec<Logged> {
        let log = std::fs::read_to_string(self.dir.join("signals.log")).unwrap_or_default();
        log.lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                Logged {
                    id: Identity {
                        pid: f[0].parse().unwrap(),
                        start_time: f[1].parse().unwrap(),
                    },
                    image: f[2].to_owned(),
                    signo: f[3].parse().unwrap(),
                    at_ns: f[4].parse().unwrap(),
                }
            })
            .collect()
    }

    /// Makes sure every signal already sent has been handled and logged: each known process
    /// that runs answers a ping (a pending handler runs before the next command is read), or
    /// ends. Then the log is complete.
    pub fn settle_signals(&self) {
        let running: Vec<Identity> = self
            .known
            .borrow()
            .iter()
            .map(|k| k.id)
            .filter(|id| runs(*id))
            .collect();
        for id in running {
            let seq = self.next_seq();
            if self.command(id, json!({"do": "ping", "seq": seq})) {
                self.answer("a ping to be answered", Some(id), |m| {
                    (m["pong"].as_u64() == Some(seq)).then_some(())
                });
            }
        }
    }

    /// Whether the snapshot of resource `id` is in `records`, parses, names every member, and
    /// carries the "signals may follow" mark.
    fn snapshot_on_disk(&self) -> Result<(), String> {
        let Some((records, id)) = &self.snapshot.borrow().expected else {
            return Err("the test did not say where the snapshot goes".into());
        };
        let prefix = format!("snap-{id}-");
        let file = std::fs::read_dir(records)
            .map_err(|e| format!("{}: {e}", records.display()))?
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .ok_or_else(|| format!("no {prefix}* in {}", records.display()))?;
        let doc: Value = serde_json::from_slice(&std::fs::read(file.path()).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", file.path().display()))?;
        let named = doc["members"].as_array().map_or(0, Vec::len);
        if named != self.initial().len() {
            return Err(format!("the snapshot names {named} members"));
        }
        if doc["signals_may_follow"] != Value::Bool(true) {
            return Err(
                "the \"signals may follow\" mark is not on disk at the first signal".into(),
            );
        }
        Ok(())
    }

    /// What fixtures wrote when they failed: a test error, never Pier's doing.
    pub fn crashes(&self) -> String {
        std::fs::read_to_string(self.dir.join("crashes.log")).unwrap_or_default()
    }

    /// Ends everything the round started that still runs, by identity, and waits for it.
    pub fn clean_up(&self) {
        self.clients.borrow_mut().clear();
        let known: Vec<Identity> = self.known.borrow().iter().map(|k| k.id).collect();
        for id in &known {
            common::kill_by_identity(Started {
                pid: id.pid,
                start_time: id.start_time,
            });
        }
        for id in known {
            common::wait_for("a fixture to end", || (!runs(id)).then_some(()));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        let _ = std::fs::remove_dir_all(&self.project);
    }
}

/// A round that ends in a panic still ends its processes.
impl Drop for Round {
    fn drop(&mut self) {
        self.clean_up();
    }
}

/// The calls of one stop, shared by the rounds of its batch.
#[derive(Default)]
pub struct Timeline {
    pub calls: Arc<Shared<Vec<Call>>>,
    pub threads: Arc<Shared<Vec<ThreadId>>>,
    pub stamps: Arc<Shared<Vec<Instant>>>,
    /// One call at a time (`hook.rs`).
    serial: Mutex<()>,
}

/// The rounds of one batch stop behind the hook: each call recorded once, then handed to every
/// round.
pub struct Batch<'r> {
    pub timeline: &'r Timeline,
    pub rounds: &'r [Round],
}

impl Tick for Batch<'_> {
    fn serial(&self) -> MutexGuard<'_, ()> {
        self.timeline
            .serial
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn before(&self, call: Call) {
        let n = {
            let mut trace = self.timeline.calls.borrow_mut();
            trace.push(call);
            self.timeline
                .threads
                .borrow_mut()
                .push(std::thread::current().id());
            trace.len() - 1
        };
        let signalled_before = self.timeline.calls.borrow()[..n]
            .iter()
            .any(|c| matches!(c, Call::Signal(_)));
        for round in self.rounds {
            round.before(n, call, signalled_before);
        }
        self.timeline.stamps.borrow_mut().push(Instant::now());
    }

    fn after_wait(&self, members: &[Expected], exited: &[bool], ended_ns: u64) {
        for round in self.rounds {
            round.after_wait(members, exited, ended_ns);
        }
    }

    fn after_read(&self, call: Call) {
        let n = self.timeline.calls.borrow().len() - 1;
        let signalled_before = self.timeline.calls.borrow()[..n]
            .iter()
            .any(|c| matches!(c, Call::Signal(_)));
        if matches!(call, Call::Survey | Call::Processes) && signalled_before {
            for round in self.rounds {
                round.note_reused(n);
            }
        }
    }

    fn on_signal(&self, expected: &Expected, outcome: &SignalOutcome) {
        let n = self.timeline.calls.borrow().len() - 1;
        for round in self.rounds {
            round.on_signal(n, expected, outcome);
        }
    }
}

impl Round {
    /// Whether `id` is a process of this round's.
    fn ours(&self, id: Identity) -> bool {
        self.known.borrow().iter().any(|k| k.id == id)
    }

    /// Whose pids another process holds now, noted at call `n`: before a rescan's read and
    /// again after it (found by the soak beside other runs: another run's process took a
    /// member's pid while the read ran, after the look before it).
    fn note_reused(&self, n: usize) {
        let reused = self
            .initial()
            .iter()
            .filter(|id| common::start_time_of(id.pid).is_some_and(|st| st != id.start_time))
            .map(|id| id.pid)
            .collect();
        self.reused_at.borrow_mut().push((n, reused));
    }

    /// Call `n` is about to be made: this round's events due at it, and what the round notes
    /// there. `signalled_before`: whether any signal was asked for before it, in the batch.
    fn before(&self, n: usize, call: Call, signalled_before: bool) {
        let due: Vec<Kind> = self
            .plan
            .iter()
            .filter(|(at, _)| *at == n)
            .map(|(_, k)| *k)
            .collect();
        for kind in due {
            if kind == Kind::Respawn {
                self.respawns_due.borrow_mut().push(n);
            } else {
                self.fire(n, kind);
            }
        }
        // A rescan's survey and process read come after the batch's first signal request:
        // note whose pids are taken at each, for those that turn out to be this tree's rescan.
        if matches!(call, Call::Survey | Call::Processes) && signalled_before {
            self.note_reused(n);
        }
        // Before the first signal request to this tree, its snapshot must be on disk, whole.
        if let Call::Signal(pid) = call {
            let mine = self.initial().iter().any(|id| id.pid == pid);
            if mine && self.first_request.borrow().is_none() {
                *self.first_request.borrow_mut() = Some(n);
                let found = self.snapshot_on_disk();
                self.snapshot.borrow_mut().found = Some(found);
            }
        }
    }

    fn after_wait(&self, members: &[Expected], exited: &[bool], ended_ns: u64) {
        for (m, &gone) in members.iter().zip(exited) {
            if !self.ours(m.identity) {
                continue;
            }
            let mut alive = runs(m.identity);
            // The kernel wakes a pidfd as the task exits, a moment before `/proc` shows it a
            // zombie (seen once in 200 rounds): a few milliseconds settle which one is right.
            let end = Instant::now() + Duration::from_millis(200);
            while gone && alive && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(1));
                alive = runs(m.identity);
            }
            self.after_wait.borrow_mut().push(AfterWait {
                id: m.identity,
                alive,
                ended_ns,
            });
        }
    }

    fn on_signal(&self, n: usize, expected: &Expected, outcome: &SignalOutcome) {
        if !self.ours(expected.identity) {
            return;
        }
        self.signals
            .borrow_mut()
            .push((n, expected.identity, outcome.clone()));
        if *outcome == SignalOutcome::Sent {
            let due: Vec<usize> = std::mem::take(&mut *self.respawns_due.borrow_mut());
            for d in due {
                self.respawn(d, n, expected.identity);
            }
        }
    }
}

/// One line of a round's signal log: a signal its handler received.
pub struct Logged {
    pub id: Identity,
    /// "orig", or "exec" in an image started by the exec command.
    pub image: String,
    pub signo: i32,
    /// When the handler ran (CLOCK_MONOTONIC, ns); the process exits right after.
    pub at_ns: u64,
}

/// What the test saw of one member right after one wait for it.
pub struct AfterWait {
    pub id: Identity,
    pub alive: bool,
    /// When the wait returned (CLOCK_MONOTONIC, ns).
    pub ended_ns: u64,
}

/// CLOCK_MONOTONIC in ns: the clock the fixtures' signal log is stamped with.
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
