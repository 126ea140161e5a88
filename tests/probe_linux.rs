//! The Linux probe against real processes and sockets of the test: single-process reads, the
//! fd walk, the two sources of the socket tables, and a process's memory.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pier_core::probe::{
    Identity, IdentityRead, LinuxProbe, MemoryKind, Probe, TableSource, TcpState,
};

#[test]
fn environment_and_identity_of_a_real_process_are_read_exactly() {
    let mut child = Command::new("sleep")
        .arg("600")
        .env_clear()
        .env("PIER_TEST", "a b=c")
        .env("EMPTY", "")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let probe = LinuxProbe::new();
    let mut env = probe.environment(pid).unwrap();
    env.sort();
    assert_eq!(env, vec![b"EMPTY=".to_vec(), b"PIER_TEST=a b=c".to_vec()]);
    match probe.identity(pid) {
        IdentityRead::Alive { identity, exe } => {
            assert_eq!(identity.start_time, common::start_time_of(pid).unwrap());
            assert_eq!(exe, std::fs::read_link(format!("/proc/{pid}/exe")).ok());
        }
        other => panic!("{other:?}"),
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(probe.identity(pid), IdentityRead::Gone);
    assert!(
        probe.environment(pid).is_err(),
        "a gone process has no environment"
    );
}

/// The identity of a child just spawned, and its argv once its exec has put it in place:
/// spawn returns once the exec has replaced the child's memory, which can be before the new
/// argv is there, and until then the kernel shows an empty one (polled, with a deadline).
fn identity_and_argv(probe: &LinuxProbe, pid: u32) -> (Identity, Option<Vec<Vec<u8>>>) {
    let IdentityRead::Alive { identity, .. } = probe.identity(pid) else {
        panic!("the child runs");
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut argv = probe.argv(identity);
    while argv.as_ref().is_some_and(Vec::is_empty) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        argv = probe.argv(identity);
    }
    (identity, argv)
}

/// Runs `code` in python3 with piped stdin (closing it ends the child) and returns the child
/// with the first line it printed, which it prints once it is ready.
fn python_child(code: &str) -> (std::process::Child, String) {
    let mut python = Command::new("python3");
    python.args(["-c", code]);
    ready_child(python)
}

/// Starts `cmd` with piped stdin and stdout, and returns it with the first line it printed.
fn ready_child(mut cmd: Command) -> (std::process::Child, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

#[test]
fn argv_read_later_belongs_to_its_identity_or_to_nobody() {
    let mut child = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let probe = LinuxProbe::new();
    let (identity, argv) = identity_and_argv(&probe, pid);
    assert_eq!(argv, Some(vec![b"sleep".to_vec(), b"600".to_vec()]));
    let other = Identity {
        pid,
        start_time: identity.start_time + 1,
    };
    assert_eq!(probe.argv(other), None, "that pid is another process's now");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(probe.argv(identity), None, "gone");
}

/// One `getdents` buffer lists about 1,300 fds; a listener opened after 10,000 others (as
/// many as the fd limit allows) sits far beyond it, and the survey must still find it.
#[test]
fn a_listener_behind_thousands_of_fds_is_found() {
    let code = "import os, resource, socket, sys\n\
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n\
        want = 10240 if hard == resource.RLIM_INFINITY else min(hard, 10240)\n\
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))\n\
        held = [os.open('/dev/null', os.O_RDONLY) for _ in range(want - 64)]\n\
        s = socket.socket()\n\
        s.bind(('127.0.0.1', 0))\n\
        s.listen(1)\n\
        print(s.fileno(), s.getsockname()[1], flush=True)\n\
        sys.stdin.read()\n";
    let (mut child, line) = python_child(code);
    let (fd, port): (u32, u16) = match line.split_whitespace().collect::<Vec<_>>()[..] {
        [fd, port] => (fd.parse().unwrap(), port.parse().unwrap()),
        _ => panic!("the child said {line:?}"),
    };
    let found = LinuxProbe::new()
        .survey(&|_| false)
        .unwrap()
        .sockets
        .unwrap();
    drop(child.stdin.take());
    child.wait().unwrap();
    if fd < 1500 {
        eprintln!("skipped: the fd limit allowed only {fd} fds");
        return;
    }
    let listener = found
        .sockets
        .iter()
        .find(|s| s.state == TcpState::Listen && s.local.port() == port)
        .expect("the listener is in the table");
    assert_eq!(listener.owners, vec![child.id()], "found behind fd {fd}");
}

/// The `/proc/net` tables are the fallback for sock_diag: through either, a survey gives the
/// same sockets with the same owners.
#[test]
fn the_proc_net_fallback_gives_the_same_sockets_and_owners() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let _client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _accepted = listener.accept().unwrap();
    let _waiting = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let ours = |source: TableSource| -> BTreeSet<String> {
        let probe = LinuxProbe::with_tables(source);
        let table = probe.survey(&|_| false).unwrap().sockets.unwrap();
        // No silent fallback: each source answered itself.
        assert_eq!(probe.last_tables(), Some(source));
        table
            .sockets
            .iter()
            .filter(|s| s.local.port() == port || s.remote.port() == port)
            .map(|s| format!("{} {} {:?} {:?}", s.local, s.remote, s.state, s.owners))
            .collect()
    };
    let diag = ours(TableSource::SockDiag);
    assert_eq!(diag, ours(TableSource::ProcNet));
    assert_eq!(diag.len(), 5, "{diag:#?}");
    let me = std::process::id();
    assert!(
        diag.iter().any(|s| s.ends_with("Established []")),
        "the unaccepted end has no owner"
    );
    assert_eq!(
        diag.iter()
            .filter(|s| s.ends_with(&format!("[{me}]")))
            .count(),
        4
    );
}

/// A survey reads argv only for names the caller wants and for socket holders; the rest is
/// marked unread, never shown as an empty argv that was read.
#[test]
fn a_survey_reads_argv_of_socket_holders_and_of_wanted_names_only() {
    let code = "import socket, sys\n\
        s = socket.socket()\n\
        s.bind(('127.0.0.1', 0))\n\
        s.listen(1)\n\
        print(s.getsockname()[1], flush=True)\n\
        sys.stdin.read()\n";
    let (mut server, _) = python_child(code);
    let mut idle = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let probe = LinuxProbe::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    let row = |wants: &(dyn Fn(&str) -> bool + Sync), pid: u32| loop {
        let list = probe.survey(wants).unwrap().processes;
        let p = list
            .processes
            .into_iter()
            .find(|p| p.identity.pid == pid)
            .unwrap();
        // A child between its exec and its new argv shows none yet.
        if p.comm == "sleep" || p.comm.starts_with("python") || Instant::now() > deadline {
            return p;
        }
    };
    let none = |_: &str| false;
    let listener = row(&none, server.id());
    assert!(!listener.argv_unread);
    assert_eq!(listener.argv[1], b"-c", "{listener:?}");
    let sleeper = row(&none, idle.id());
    assert!(
        sleeper.argv_unread && sleeper.argv.is_empty(),
        "{sleeper:?}"
    );
    let sleeper = row(&|comm: &str| comm == "sleep", idle.id());
    assert_eq!(sleeper.argv, vec![b"sleep".to_vec(), b"600".to_vec()]);
    idle.kill().unwrap();
    idle.wait().unwrap();
    drop(server.stdin.take());
    server.wait().unwrap();
}

/// argv and environment of hundreds of KB are read whole and exactly (each argument is capped
/// at 128 KiB by the kernel; the total at 2 MiB).
#[test]
fn an_argv_and_environment_of_hundreds_of_kb_are_read_exactly() {
    let args: Vec<String> = (0..3).map(|i| format!("{i}").repeat(100 * 1024)).collect();
    let value = "v".repeat(100 * 1024);
    let mut child = Command::new("sleep")
        .arg("600")
        .args(&args)
        .env_clear()
        .env("BIG1", &value)
        .env("BIG2", &value)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let probe = LinuxProbe::new();
    let argv = identity_and_argv(&probe, pid).1.expect("alive");
    let total: usize = argv.iter().map(Vec::len).sum();
    let env = probe.environment(pid).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(argv.len(), 5, "sleep, 600 and three big arguments");
    assert_eq!(
        &argv[2..],
        args.iter()
            .map(|a| a.as_bytes().to_vec())
            .collect::<Vec<_>>()
            .as_slice()
    );
    assert!(total > 300 * 1024);
    let mut env = env;
    env.sort();
    assert_eq!(
        env,
        vec![
            format!("BIG1={value}").into_bytes(),
            format!("BIG2={value}").into_bytes()
        ]
    );
}

/// A stop glances at its members' children all through its waits: the children files of every
/// thread (a child forked by another thread is listed there), each child only under its
/// parent's identity, and the same answer the whole table gives.
#[test]
fn children_are_read_per_parent_identity_from_every_thread() {
    let probe = LinuxProbe::new();
    let spawn = || {
        Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut here = spawn();
    let mut there = std::thread::spawn(spawn).join().unwrap();
    let (a, b) = (here.id(), there.id());
    let IdentityRead::Alive { identity: me, .. } = probe.identity(std::process::id()) else {
        panic!("this test runs");
    };
    let mine = |pairs: Vec<(Identity, pier_core::probe::ProcessInfo)>| -> BTreeSet<u32> {
        pairs
            .into_iter()
            .filter(|(parent, child)| *parent == me && child.ppid == me.pid)
            .map(|(_, child)| child.identity.pid)
            .filter(|pid| [a, b].contains(pid))
            .collect()
    };
    let both = BTreeSet::from([a, b]);
    assert_eq!(mine(probe.children(&[me]).unwrap()), both);
    let table = pier_core::probe::children_in(probe.processes().unwrap(), &[me]);
    assert_eq!(mine(table), both, "the whole table says the same");
    let not_me = Identity {
        start_time: me.start_time + 1,
        ..me
    };
    assert!(
        probe.children(&[not_me]).unwrap().is_empty(),
        "another identity on this pid has none of these children"
    );
    for child in [&mut here, &mut there] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    assert_eq!(mine(probe.children(&[me]).unwrap()), BTreeSet::new());
}

/// Another user's process costs a survey of the user's own one `stat`: it is only sighted, and
/// `rows` reads it whole when asked. Its owner is its effective uid even when it made itself
/// non-dumpable (its `fd` folder then shows root, which must not be taken for its owner).
#[test]
fn another_users_process_is_sighted_and_read_whole_on_demand() {
    if common::needs_root("another_users_process_is_sighted_and_read_whole_on_demand") {
        return;
    }
    // uid 65534, non-dumpable (PR_SET_DUMPABLE is 4), ready once it says so.
    let code = "import ctypes, sys; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); \
                print('ready', flush=True); sys.stdin.read()";
    let python = common::python();
    let mut setpriv = Command::new("setpriv");
    setpriv
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args([python.as_str(), "-c", code, "marker-argument"]);
    let (mut child, line) = ready_child(setpriv);
    assert_eq!(line.trim(), "ready");
    let pid = child.id();
    let fd_owner =
        std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(format!("/proc/{pid}/fd")).unwrap());
    assert_eq!(fd_owner, 0, "a non-dumpable process's fd folder is root's");

    // Pier as root: this process is another user's.
    let probe = LinuxProbe::new();
    let own = probe.survey_own(&|_| true).unwrap();
    assert!(own.processes.sighted.contains(&pid), "sighted");
    assert!(
        !own.processes
            .processes
            .iter()
            .any(|p| p.identity.pid == pid),
        "not read"
    );
    let all = probe.survey(&|_| true).unwrap();
    let row = all
        .processes
        .processes
        .iter()
        .find(|p| p.identity.pid == pid)
        .expect("a survey of everyone reads its row");
    assert_eq!(row.uid, 65534);
    assert!(all.processes.sighted.is_empty());

    let rows = probe.rows(&[pid]);
    assert_eq!(rows.processes.len(), 1, "{rows:?}");
    let read = &rows.processes[0];
    assert_eq!(
        read.uid, 65534,
        "its effective uid, not its fd folder's owner"
    );
    assert_eq!(
        read.identity.start_time,
        common::start_time_of(pid).unwrap()
    );
    assert_eq!(read.ppid, std::process::id());
    assert!(!read.argv_unread);
    assert_eq!(read.argv.last().unwrap(), b"marker-argument");

    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(probe.rows(&[pid]).processes.is_empty(), "gone: left out");
}

/// A cgroup's CPU counter (what a container's activity is read from) is read only while the
/// process's cgroup is the one asked about, and it counts the CPU its processes use.
#[test]
fn a_cgroup_cpu_counter_is_read_only_for_the_cgroup_asked_about_and_grows_with_work() {
    let me = std::process::id();
    let refused = pier_core::probe::cgroup_cpu_ns(me, &|_| false).unwrap_err();
    assert!(
        refused.to_string().contains("not this container's"),
        "{refused}"
    );
    let before = pier_core::probe::cgroup_cpu_ns(me, &|_| true).expect("readable");
    // Some work of this process's own, on its own cgroup's counter.
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < Duration::from_millis(50) {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
    let after = pier_core::probe::cgroup_cpu_ns(me, &|_| true).unwrap();
    assert!(
        after.cpu_ns >= before.cpu_ns + 20_000_000,
        "{before:?} → {after:?}"
    );
    assert_eq!(after.start_time, before.start_time, "the same process");
}

/// The resident size of `pid` from `/proc/<pid>/statm`, in bytes: the figure that counts every
/// shared page in full, for comparison.
fn resident_bytes(pid: u32) -> u64 {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * rustix::param::page_size() as u64
}

const MIB: u64 = 1 << 20;

/// A process that wrote 50 MiB of its own reads at least that much, as its proportional set
/// size: private pages count whole.
#[test]
fn a_process_holding_50_mib_reads_at_least_that_much_proportional() {
    let code = "import sys\n\
        held = bytearray(b'\\x01') * (50 << 20)\n\
        print('ready', flush=True)\n\
        sys.stdin.read()";
    let (mut child, line) = python_child(code);
    assert_eq!(line.trim(), "ready");
    let probe = LinuxProbe::new();
    let memory = probe.memory(child.id()).expect("its memory reads");
    assert_eq!(memory.kind, MemoryKind::Proportional);
    assert!(memory.bytes >= 50 * MIB, "{memory:?}");
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(probe.memory(child.id()).is_err(), "gone: no figure");
}

/// A parent that wrote 50 MiB and then forked shares those pages with its child until either
/// writes them: each one's resident size counts them whole, their proportional sizes split
/// them, so the two proportional figures add up to about 50 MiB less than the resident ones.
/// This is why a card adds proportional figures: resident ones would count the pages twice.
#[test]
fn pages_shared_after_a_fork_are_counted_once_between_the_two() {
    let code = "import os, sys\n\
        held = bytearray(b'\\x01') * (50 << 20)\n\
        child = os.fork()\n\
        if child == 0:\n    sys.stdin.read()\n    os._exit(0)\n\
        print(child, flush=True)\n\
        sys.stdin.read()\n\
        os.waitpid(child, 0)";
    let (mut parent, line) = python_child(code);
    let forked: u32 = line.trim().parse().unwrap();
    let probe = LinuxProbe::new();
    let pids = [parent.id(), forked];
    let pss: u64 = pids.iter().map(|&p| probe.memory(p).unwrap().bytes).sum();
    let rss: u64 = pids.iter().map(|&p| resident_bytes(p)).sum();
    assert!(pss >= 50 * MIB, "the shared pages are counted once: {pss}");
    assert!(
        pss + 40 * MIB <= rss,
        "proportional {pss} against resident {rss}: the shared 50 MiB is not counted twice"
    );
    drop(parent.stdin.take());
    parent.wait().unwrap();
}
