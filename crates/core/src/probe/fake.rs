//! A scripted probe for tests: a process table, details, socket table and activity set by the
//! test, so each diagnosis rule can be pinned without a kernel. Answers are plain data; a test
//! that wants "could not read" sets the `Err` itself.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{own_live, ProcessList, Survey, UnreadableProcess, WantsArgv};
use super::{
    ActivityDelta, ActivitySample, Identity, IdentityRead, Pid, Probe, ProbeError, ProcessDetails,
    ProcessInfo, Socket, SocketTable, TcpState,
};

/// A `RefCell` that threads can share: the state of the scripted fakes, which a batch reads
/// and changes from a thread per resource (`stop/batch.rs`). A lock, so a second borrow on one
/// thread while the first is held would hang where a `RefCell` would panic: the fakes never
/// nest them.
#[derive(Debug, Default)]
pub struct Shared<T>(std::sync::Mutex<T>);

impl<T> Shared<T> {
    /// Holds `value`.
    pub fn new(value: T) -> Self {
        Self(std::sync::Mutex::new(value))
    }

    /// The value, for reading (a lock, like [`Shared::borrow_mut`]).
    pub fn borrow(&self) -> std::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The value, for changing.
    pub fn borrow_mut(&self) -> std::sync::MutexGuard<'_, T> {
        self.borrow()
    }
}

impl<T: Copy> Shared<T> {
    /// A copy of the value (as `Cell::get`).
    pub fn get(&self) -> T {
        *self.borrow()
    }

    /// Replaces the value (as `Cell::set`).
    pub fn set(&self, value: T) {
        *self.borrow() = value;
    }
}

/// The uid the fake's processes belong to unless a test says otherwise.
pub const USER: u32 = 1000;
/// The pid the fake reports as Pier's own.
pub const PIER_PID: Pid = 9000;

/// The scripted probe: every answer is one of these fields, set by the test.
pub struct FakeProbe {
    /// What [`Probe::current_uid`] answers ([`USER`] by default).
    pub uid: u32,
    /// What [`Probe::own_pid`] answers ([`PIER_PID`] by default).
    pub own_pid: Pid,
    /// The process table; by default only PID 1 (`/sbin/init`).
    pub processes: Vec<ProcessInfo>,
    /// exe, cwd and cgroup per pid; a pid without an entry reads as gone.
    pub details: HashMap<Pid, ProcessDetails>,
    /// `None`: the socket tables fail to read.
    pub sockets: Option<Vec<Socket>>,
    /// [`SocketTable::unreadable`]: pids whose open files "could not be read", with why.
    pub unreadable_fds: Vec<(Pid, String)>,
    /// [`SocketTable::blind`]: pids whose connections the tables "cannot show", with why.
    pub blind: Vec<(Pid, String)>,
    /// [`ProcessList::unreadable`]: processes that exist but "could not be read".
    pub unreadable_processes: Vec<UnreadableProcess>,
    /// Pids whose fresh identity read gives no answer.
    pub identity_unknown: std::collections::HashSet<Pid>,
    /// Each pid's activity over any window; a pid without an entry is idle.
    pub activity: HashMap<Pid, Result<ActivityDelta, ProbeError>>,
    /// Each pid's memory; for a pid without an entry, the read fails.
    pub memory: HashMap<Pid, Result<super::Memory, ProbeError>>,
    /// The files each pid holds locked or open for writing ([`Probe::writes`]); a pid without
    /// an entry holds none.
    pub writes: HashMap<Pid, Result<Vec<super::Written>, ProbeError>>,
    /// Each pid's environment; a pid without an entry has an empty one.
    pub environments: HashMap<Pid, Vec<Vec<u8>>>,
    /// Pids whose environment the OS withholds (macOS, a code-signing-restricted process):
    /// the read fails.
    pub environment_withheld: std::collections::HashSet<Pid>,
    /// What each tmux pane id answers ([`Probe::tmux_pane`]), with the question it was asked;
    /// a pane without an entry gives no answer. Nothing is run.
    pub tmux_panes: HashMap<String, (super::tmux::TmuxQuery, super::tmux::PaneName)>,
    /// Monotonic time, advanced by each `activity` call by its window.
    pub clock: Shared<Duration>,
    /// [`Probe::survey_own`] reads everything, as the default survey does (`false`: only the
    /// user's rows, the rest sighted, as the Linux backend).
    pub survey_everyone: Shared<bool>,
    /// [`Probe::children`] answers `Unsupported`, as Linux without `CONFIG_PROC_CHILDREN`.
    pub no_children_lists: Shared<bool>,
    /// Every pid [`Probe::rows`] was asked for and every parent [`Probe::children`] was
    /// asked about, in order: what a scan read beyond its survey.
    pub read_later: Shared<Vec<Pid>>,
}

impl Default for FakeProbe {
    fn default() -> Self {
        Self {
            uid: USER,
            own_pid: PIER_PID,
            processes: vec![process(1, 0, &["/sbin/init"])],
            details: HashMap::new(),
            sockets: Some(Vec::new()),
            unreadable_fds: Vec::new(),
            blind: Vec::new(),
            unreadable_processes: Vec::new(),
            identity_unknown: Default::default(),
            activity: HashMap::new(),
            memory: HashMap::new(),
            writes: HashMap::new(),
            environments: HashMap::new(),
            environment_withheld: Default::default(),
            tmux_panes: HashMap::new(),
            clock: Shared::new(Duration::ZERO),
            survey_everyone: Shared::new(false),
            no_children_lists: Shared::new(false),
            read_later: Shared::new(Vec::new()),
        }
    }
}

/// A process of [`USER`] with start time `pid * 10`, its own session, no terminal.
pub fn process(pid: Pid, ppid: Pid, argv: &[&str]) -> ProcessInfo {
    ProcessInfo {
        identity: Identity {
            pid,
            start_time: u64::from(pid) * 10,
        },
        ppid,
        uid: if pid == 1 { 0 } else { USER },
        session: pid,
        tty_nr: 0,
        comm: argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a).chars().take(15).collect())
            .unwrap_or_default(),
        argv: argv.iter().map(|a| a.as_bytes().to_vec()).collect(),
        argv_unread: false,
        zombie: false,
        age_seconds: Some(60),
        cpu_ns: Some(0),
    }
}

impl FakeProbe {
    /// Adds a process whose cwd (and exe) are set, returning `self` for chaining.
    pub fn with(mut self, info: ProcessInfo, cwd: &str) -> Self {
        let exe = PathBuf::from(format!("/usr/bin/{}", info.comm));
        self.details.insert(
            info.identity.pid,
            ProcessDetails {
                exe: Ok(exe),
                cwd: Ok(PathBuf::from(cwd)),
                cgroup: Some(Ok("/user.slice/user-1000.slice/session-1.scope".into())),
            },
        );
        self.processes.push(info);
        self
    }

    /// Adds a listening socket owned by `pid`.
    pub fn listen(mut self, addr: &str, pid: Pid) -> Self {
        self.sockets.get_or_insert_with(Vec::new).push(Socket {
            local: addr.parse().expect("test address"),
            remote: unspecified_like(addr),
            state: TcpState::Listen,
            owners: vec![pid],
            queued: None,
        });
        self
    }

    /// Adds an established socket `local` ↔ `remote` held by `owner`.
    pub fn established(mut self, local: &str, remote: &str, owner: Option<Pid>) -> Self {
        self.sockets.get_or_insert_with(Vec::new).push(Socket {
            local: local.parse().expect("test address"),
            remote: remote.parse().expect("test address"),
            state: TcpState::Established,
            owners: owner.into_iter().collect(),
            queued: None,
        });
        self
    }

    /// `pid` holds `path` through `fd`, locked or open for writing (`how`).
    pub fn holds(mut self, pid: Pid, fd: u32, path: &str, how: super::Hold) -> Self {
        let held = super::Written {
            fd,
            path: PathBuf::from(path),
            how,
        };
        if let Ok(list) = self.writes.entry(pid).or_insert_with(|| Ok(Vec::new())) {
            list.push(held);
        }
        self
    }

    /// The row of `pid`, to change in place; panics when the test added no such process.
    pub fn process_mut(&mut self, pid: Pid) -> &mut ProcessInfo {
        self.processes
            .iter_mut()
            .find(|p| p.identity.pid == pid)
            .expect("test process exists")
    }
}

fn unspecified_like(addr: &str) -> SocketAddr {
    if addr.starts_with('[') {
        "[::]:0".parse().unwrap()
    } else {
        "0.0.0.0:0".parse().unwrap()
    }
}

impl Probe for FakeProbe {
    fn current_uid(&self) -> u32 {
        self.uid
    }

    fn own_pid(&self) -> Pid {
        self.own_pid
    }

    fn processes(&self) -> Result<ProcessList, ProbeError> {
        Ok(ProcessList {
            processes: self.processes.clone(),
            unreadable: self.unreadable_processes.clone(),
            sighted: Vec::new(),
        })
    }

    fn children(&self, parents: &[Identity]) -> Result<Vec<(Identity, ProcessInfo)>, ProbeError> {
        if self.no_children_lists.get() {
            return Err(ProbeError::Unsupported);
        }
        self.read_later
            .borrow_mut()
            .extend(parents.iter().map(|p| p.pid));
        Ok(super::children_in(self.processes()?, parents))
    }

    fn rows(&self, pids: &[Pid]) -> ProcessList {
        self.read_later.borrow_mut().extend_from_slice(pids);
        let mut list = self.processes().expect("the fake's table reads");
        list.processes.retain(|p| pids.contains(&p.identity.pid));
        list.unreadable.retain(|u| pids.contains(&u.pid));
        list
    }

    /// As the Linux survey of the user's own: another user's process only sighted.
    fn survey_own(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let mut survey = self.survey(wants_argv)?;
        if !self.survey_everyone.get() {
            let list = &mut survey.processes;
            let uid = self.uid;
            list.sighted = list
                .processes
                .iter()
                .filter(|p| p.uid != uid)
                .map(|p| p.identity.pid)
                .collect();
            list.processes.retain(|p| p.uid == uid);
        }
        Ok(survey)
    }

    fn details(&self, pid: Pid) -> Option<ProcessDetails> {
        self.details.get(&pid).cloned()
    }

    fn tmux_pane(&self, q: &super::tmux::TmuxQuery) -> Option<super::tmux::PaneName> {
        let (asked, name) = self.tmux_panes.get(&q.pane_id)?;
        (asked == q).then(|| name.clone())
    }

    fn environment(&self, pid: Pid) -> Result<Vec<Vec<u8>>, ProbeError> {
        if self.environment_withheld.contains(&pid) {
            return Err(format!("pid {pid}: its environment is withheld (scripted)").into());
        }
        Ok(self.environments.get(&pid).cloned().unwrap_or_default())
    }

    fn sockets(&self, owners_among: &[Pid]) -> Result<SocketTable, ProbeError> {
        let sockets = self.sockets.clone().ok_or_else(|| ProbeError::Parse {
            path: "/proc/net/tcp".into(),
            what: "scripted failure".into(),
        })?;
        let sockets = sockets
            .into_iter()
            .map(|mut s| {
                s.owners.retain(|o| owners_among.contains(o));
                s
            })
            .collect();
        Ok(SocketTable {
            sockets,
            unreadable: self.unreadable_fds.clone(),
            blind: self.blind.clone(),
        })
    }

    /// As the Linux survey: argv left unread for other users' processes and for the user's
    /// that hold no socket and whose name `wants_argv` turns down, so the diagnosis's reads on
    /// demand are exercised.
    fn survey(&self, wants_argv: &WantsArgv) -> Result<Survey, ProbeError> {
        let mut processes = self.processes()?;
        let own = own_live(&processes, self.uid);
        let sockets = self.sockets(&own);
        let holders: Vec<Pid> = match &sockets {
            Ok(t) => t.sockets.iter().flat_map(|s| s.owners.clone()).collect(),
            Err(_) => Vec::new(),
        };
        for p in &mut processes.processes {
            let pid = p.identity.pid;
            if p.uid != self.uid || (!holders.contains(&pid) && !wants_argv(&p.comm)) {
                p.argv.clear();
                p.argv_unread = true;
            }
        }
        Ok(Survey { processes, sockets })
    }

    fn memory(&self, pid: Pid) -> Result<super::Memory, ProbeError> {
        self.memory
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| Err(format!("no memory scripted for pid {pid}").into()))
    }

    fn writes(&self, pid: Pid) -> Result<Vec<super::Written>, ProbeError> {
        self.writes.get(&pid).cloned().unwrap_or(Ok(Vec::new()))
    }

    fn activity(&self, pids: &[Pid], window: Duration) -> ActivitySample {
        *self.clock.borrow_mut() += window;
        let idle = ActivityDelta {
            cpu_ns: 0,
            io_bytes: 0,
        };
        let per_pid = pids
            .iter()
            .map(|&p| (p, self.activity.get(&p).cloned().unwrap_or(Ok(idle))))
            .collect();
        ActivitySample { window, per_pid }
    }

    fn identity(&self, pid: Pid) -> IdentityRead {
        if self.identity_unknown.contains(&pid) {
            return IdentityRead::Unknown("scripted: no answer".into());
        }
        match self.processes.iter().find(|p| p.identity.pid == pid) {
            Some(p) if p.zombie => IdentityRead::Gone,
            Some(p) => IdentityRead::Alive {
                identity: p.identity,
                exe: self.details.get(&pid).and_then(|d| d.exe.clone().ok()),
            },
            None => IdentityRead::Gone,
        }
    }

    fn now(&self) -> Duration {
        *self.clock.borrow()
    }

    fn boot_id(&self) -> Option<String> {
        Some("fake-boot".into())
    }
}
