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
use crate::model::rules::MemoryPressure;

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
    /// The unix sockets, each with every holder (those outside `owners_among` are dropped as
    /// the backends drop them); `Err`: the unix table "could not be read", with why.
    pub unix: Result<Vec<super::UnixSocket>, String>,
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
    /// Each identity's cumulative counters ([`Probe::counters`],
    /// [`FakeProbe::set_counters`]). Without an entry: zero, standing still, while the
    /// table holds that identity alive; else `Gone`.
    pub counters: Shared<HashMap<Identity, Counted>>,
    /// What [`Probe::times`] answers ([`FakeProbe::set_times`]); `None`: both clocks are
    /// [`FakeProbe::clock`] (no sleep).
    pub times: Shared<Option<super::Times>>,
    /// What [`Probe::ended_connections`] answers ([`FakeProbe::set_ended`]); none by default.
    pub ended: Shared<Result<Vec<super::Ended>, ProbeError>>,
    /// What [`Probe::memory_pressure`] answers ([`FakeProbe::set_pressure`]); `Unsupported`
    /// by default, as a kernel without PSI.
    pub pressure: Shared<Result<MemoryPressure, ProbeError>>,
}

/// One identity's scripted counters.
#[derive(Debug, Clone)]
pub enum Counted {
    /// This answer at every read: a value standing still, or an error ("unreadable").
    Fixed(Result<super::Cumulative, ProbeError>),
    /// `next` at the next read, which then moves it on by `step`: a process at work.
    Advancing {
        /// What the next read answers.
        next: super::Cumulative,
        /// Added to each counter after each read.
        step: super::Cumulative,
    },
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
            unix: Ok(Vec::new()),
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
            counters: Shared::new(HashMap::new()),
            times: Shared::new(None),
            ended: Shared::new(Ok(Vec::new())),
            pressure: Shared::new(Err(ProbeError::Unsupported)),
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

    /// Adds a unix listener named `name` (`id` its socket id) held by `pid`.
    pub fn unix_listen(self, id: u64, name: &str, pid: Pid) -> Self {
        self.unix_socket(id, Some(name), true, super::UnixPeer::Unknown, &[pid])
    }

    /// Adds a connected unix socket `id` named `name` (`None`: unnamed, a client's end),
    /// whose other end is `peer`, held by `owners`.
    pub fn unix_connected(
        self,
        id: u64,
        name: Option<&str>,
        peer: super::UnixPeer,
        owners: &[Pid],
    ) -> Self {
        self.unix_socket(id, name, false, peer, owners)
    }

    fn unix_socket(
        mut self,
        id: u64,
        name: Option<&str>,
        listening: bool,
        peer: super::UnixPeer,
        owners: &[Pid],
    ) -> Self {
        if let Ok(list) = &mut self.unix {
            list.push(super::UnixSocket {
                id,
                name: name.map(|n| n.as_bytes().to_vec()),
                listening,
                peer,
                queued: None,
                owners: owners.to_vec(),
            });
        }
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

    /// `identity`'s counters read as `read` from now on (an `Err`: unreadable), until set
    /// again.
    pub fn set_counters(&self, identity: Identity, read: Result<super::Cumulative, ProbeError>) {
        self.counters
            .borrow_mut()
            .insert(identity, Counted::Fixed(read));
    }

    /// `identity`'s counters read as `from` next, then move on by `step` at every read.
    pub fn advance_counters(
        &self,
        identity: Identity,
        from: super::Cumulative,
        step: super::Cumulative,
    ) {
        self.counters
            .borrow_mut()
            .insert(identity, Counted::Advancing { next: from, step });
    }

    /// The awake clock and the boot clock read as these from now on: a test scripts a sleep
    /// by moving `since_boot` further than `awake`.
    pub fn set_times(&self, awake: Duration, since_boot: Duration) {
        self.times.set(Some(super::Times { awake, since_boot }));
    }

    /// Moves both clocks on by `awake`, then the boot clock alone by `asleep` (a suspend).
    pub fn advance_times(&self, awake: Duration, asleep: Duration) {
        let now = self.times();
        self.set_times(now.awake + awake, now.since_boot + awake + asleep);
    }

    /// The ended connections read as `ended` from now on.
    pub fn set_ended(&self, ended: Vec<super::Ended>) {
        *self.ended.borrow_mut() = Ok(ended);
    }

    /// The ended connections fail to read, with `why`.
    pub fn fail_ended(&self, why: ProbeError) {
        *self.ended.borrow_mut() = Err(why);
    }

    /// The memory pressure reads as `read` from now on (an `Err`: unreadable).
    pub fn set_pressure(&self, read: Result<MemoryPressure, ProbeError>) {
        *self.pressure.borrow_mut() = read;
    }

    /// One identity's counters, read now (an advancing one moves on).
    fn read_counters(&self, identity: Identity) -> Result<super::Cumulative, ProbeError> {
        let mut scripted = self.counters.borrow_mut();
        match scripted.get_mut(&identity) {
            Some(Counted::Fixed(read)) => read.clone(),
            Some(Counted::Advancing { next, step }) => {
                let read = *next;
                next.cpu_ns = next.cpu_ns.saturating_add(step.cpu_ns);
                next.io_bytes = next.io_bytes.saturating_add(step.io_bytes);
                next.syscalls = next.syscalls.saturating_add(step.syscalls);
                Ok(read)
            }
            None => match self.identity(identity.pid) {
                IdentityRead::Alive { identity: now, .. } if now == identity => {
                    Ok(super::Cumulative {
                        cpu_ns: 0,
                        io_bytes: 0,
                        syscalls: 0,
                    })
                }
                _ => Err(ProbeError::Gone(identity.pid)),
            },
        }
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
        let (unix, unix_unreadable) = match &self.unix {
            Ok(list) => (
                list.iter()
                    .cloned()
                    .filter_map(|mut u| {
                        u.owners.retain(|o| owners_among.contains(o));
                        (!u.owners.is_empty()).then_some(u)
                    })
                    .collect(),
                None,
            ),
            Err(why) => (Vec::new(), Some(why.clone())),
        };
        Ok(SocketTable {
            sockets,
            unreadable: self.unreadable_fds.clone(),
            blind: self.blind.clone(),
            unix,
            unix_unreadable,
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
            Ok(t) => t
                .sockets
                .iter()
                .flat_map(|s| s.owners.clone())
                .chain(t.unix.iter().flat_map(|u| u.owners.clone()))
                .collect(),
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

    fn counters(
        &self,
        members: &[Identity],
    ) -> Vec<(Identity, Result<super::Cumulative, ProbeError>)> {
        members
            .iter()
            .map(|&m| (m, self.read_counters(m)))
            .collect()
    }

    fn times(&self) -> super::Times {
        self.times.get().unwrap_or_else(|| {
            let now = self.now();
            super::Times {
                awake: now,
                since_boot: now,
            }
        })
    }

    fn ended_connections(&self) -> Result<Vec<super::Ended>, ProbeError> {
        self.ended.borrow().clone()
    }

    fn memory_pressure(&self) -> Result<MemoryPressure, ProbeError> {
        self.pressure.borrow().clone()
    }

    fn boot_id(&self) -> Option<String> {
        Some("fake-boot".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Cumulative, Ended, Times};

    fn c(cpu_ns: u64, io_bytes: u64, syscalls: u64) -> Cumulative {
        Cumulative {
            cpu_ns,
            io_bytes,
            syscalls,
        }
    }

    /// Unscripted counters stand still at zero for a live identity and are `Gone` for one
    /// the table does not hold (ended, or its pid run by another process).
    #[test]
    fn unscripted_counters_are_zero_while_alive_and_gone_otherwise() {
        let fake = FakeProbe::default().with(process(42, 1, &["vite"]), "/p");
        let alive = fake.processes[1].identity;
        let reused = Identity {
            pid: 42,
            start_time: 1,
        };
        let ended = Identity {
            pid: 43,
            start_time: 430,
        };
        let read = fake.counters(&[alive, reused, ended]);
        assert_eq!(read[0], (alive, Ok(c(0, 0, 0))));
        assert_eq!(read[1], (reused, Err(ProbeError::Gone(42))));
        assert_eq!(read[2], (ended, Err(ProbeError::Gone(43))));
        let mut fake = fake;
        fake.process_mut(42).zombie = true;
        assert_eq!(fake.counters(&[alive])[0].1, Err(ProbeError::Gone(42)));
    }

    /// A set answer holds until set again; an advancing one moves on by its step per read.
    #[test]
    fn counters_read_as_set_or_advance_per_read() {
        let fake = FakeProbe::default();
        let id = Identity {
            pid: 7,
            start_time: 70,
        };
        fake.set_counters(id, Err(ProbeError::Scripted("unreadable".into())));
        assert!(fake.counters(&[id])[0].1.is_err());
        fake.set_counters(id, Ok(c(5, 6, 7)));
        assert_eq!(fake.counters(&[id])[0].1, Ok(c(5, 6, 7)));
        assert_eq!(fake.counters(&[id])[0].1, Ok(c(5, 6, 7)));
        fake.advance_counters(id, c(10, 0, 0), c(1, 2, 3));
        assert_eq!(fake.counters(&[id])[0].1, Ok(c(10, 0, 0)));
        assert_eq!(fake.counters(&[id])[0].1, Ok(c(11, 2, 3)));
    }

    /// The two clocks move apart only as the test says: a sleep moves the boot clock alone.
    #[test]
    fn times_follow_the_clock_until_set_and_a_sleep_moves_only_the_boot_clock() {
        let fake = FakeProbe::default();
        fake.clock.set(Duration::from_secs(3));
        let s = Duration::from_secs;
        assert_eq!(
            fake.times(),
            Times {
                awake: s(3),
                since_boot: s(3)
            }
        );
        fake.set_times(s(100), s(100));
        fake.advance_times(s(60), s(600));
        assert_eq!(
            fake.times(),
            Times {
                awake: s(160),
                since_boot: s(760)
            }
        );
    }

    #[test]
    fn ended_connections_read_as_set_or_fail() {
        let fake = FakeProbe::default();
        assert_eq!(fake.ended_connections(), Ok(vec![]));
        let row = Ended {
            local: "127.0.0.1:5173".parse().unwrap(),
            remote: "127.0.0.1:40000".parse().unwrap(),
        };
        fake.set_ended(vec![row]);
        assert_eq!(fake.ended_connections(), Ok(vec![row]));
        fake.fail_ended(ProbeError::Unsupported);
        assert_eq!(fake.ended_connections(), Err(ProbeError::Unsupported));
    }

    #[test]
    fn memory_pressure_is_unsupported_until_set() {
        let fake = FakeProbe::default();
        assert_eq!(fake.memory_pressure(), Err(ProbeError::Unsupported));
        let under = MemoryPressure {
            under: true,
            words: "memory pressure: 40.0% of the last 10 s stalled on memory (PSI)".into(),
        };
        fake.set_pressure(Ok(under.clone()));
        assert_eq!(fake.memory_pressure(), Ok(under));
        fake.set_pressure(Err("permission denied".into()));
        assert_eq!(fake.memory_pressure(), Err("permission denied".into()));
    }
}
