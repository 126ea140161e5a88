//! The checks themselves: what the probe reads of the test process, what the signaller and
//! the exit waiter do to it. Each records one line in the [`Tally`]; none signals anything but
//! the doctor's own children, identified as the probe read them.

use std::path::Path;
use std::time::{Duration, Instant};

use super::fault::{Fault, SocketsUnread};
use super::process::{self, Reaped, TestChild, TestFolder};
use super::tally::Tally;
use super::{Machine, Options};
use crate::probe::{IdentityRead, Pid, ProcessInfo, Socket, TcpState};
use crate::signal::{Expected, Sig, SignalOutcome};

/// What a check found: its detail when it passed, why it failed otherwise.
type Found = Result<String, Fault>;

/// What the scan's reads make of the test process: its row, argv, start time, cwd,
/// executable, environment, sockets, activity and memory.
pub(super) fn look(t: &mut Tally, m: &Machine, c: &mut TestChild, opts: &Options) {
    let pid = c.pid();
    let survey = m.probe.survey_own(&|_| true);
    let row = match &survey {
        Err(e) => Err(Fault::NoTable(e.clone())),
        Ok(s) => s
            .processes
            .processes
            .iter()
            .find(|p| p.identity.pid == pid)
            .cloned()
            .ok_or(Fault::NotInTable(pid)),
    };
    let row = match row {
        Ok(row) => row,
        Err(e) => return t.fail("process_table", e),
    };
    t.record("process_table", parentage(m, &row));
    t.record("argv", argv(c, &row));
    let start = start_time(m, &row);
    let started = start.is_ok();
    t.record("start_time", start);
    let exe = cwd_and_exe(t, m, c, opts);
    if let (true, Ok(exe)) = (started, &exe) {
        c.read = Some((row.identity, exe.clone()));
    }
    t.record("executable", exe.map(|e| e.display().to_string()));
    t.record("environment", environment(m, pid));
    let sockets = match survey.map(|s| s.sockets) {
        Ok(Ok(table)) => Ok(table.sockets),
        Ok(Err(e)) => Err(SocketsUnread::NoSockets(e)),
        Err(_) => Err(SocketsUnread::NoTable),
    };
    sockets_held(t, &sockets, c);
    t.record("activity", activity(m, c, opts.sample));
    t.record("memory", memory(m, pid));
}

/// The command line reads back as started.
fn argv(c: &TestChild, row: &ProcessInfo) -> Found {
    let want: Vec<Vec<u8>> = c
        .argv
        .iter()
        .map(|a| a.as_encoded_bytes().to_vec())
        .collect();
    if row.argv == want {
        Ok(shown(&row.argv))
    } else {
        Err(Fault::OtherArgv {
            read: shown(&row.argv),
            started: shown(&want),
        })
    }
}

/// Records the working folder's check, and returns the executable as read (the one a stop's
/// signal is checked against), or why it is not the one started.
fn cwd_and_exe(
    t: &mut Tally,
    m: &Machine,
    c: &TestChild,
    opts: &Options,
) -> Result<std::path::PathBuf, Fault> {
    let pid = c.pid();
    let details = m.probe.details(pid);
    t.record(
        "cwd",
        match details.as_ref().map(|d| &d.cwd) {
            Some(Ok(cwd)) if *cwd == c.cwd => Ok(cwd.display().to_string()),
            Some(Ok(cwd)) => Err(Fault::OtherCwd {
                read: cwd.clone(),
                started: c.cwd.clone(),
            }),
            Some(Err(e)) => Err(e.clone().into()),
            None => Err(Fault::Gone(pid)),
        },
    );
    match details.map(|d| d.exe) {
        Some(Ok(exe)) if same_file(&exe, &opts.pier) => Ok(exe),
        Some(Ok(exe)) => Err(Fault::OtherExe {
            read: exe,
            started: opts.pier.clone(),
        }),
        Some(Err(e)) => Err(e.into()),
        None => Err(Fault::Gone(pid)),
    }
}

/// Records the listener's check and the connection's, both ends.
fn sockets_held(t: &mut Tally, sockets: &Result<Vec<Socket>, SocketsUnread>, c: &TestChild) {
    let pid = c.pid();
    t.record(
        "listener",
        held(sockets, pid, TcpState::Listen, c.port, None),
    );
    t.record(
        "connection",
        held(
            sockets,
            pid,
            TcpState::Established,
            c.port,
            Some(c.client_port),
        )
        .and_then(|a| {
            held(
                sockets,
                pid,
                TcpState::Established,
                c.client_port,
                Some(c.port),
            )
            .map(|b| format!("{a}; {b}"))
        }),
    );
}

/// Its memory reads as something.
fn memory(m: &Machine, pid: Pid) -> Found {
    let mem = m.probe.memory(pid)?;
    match mem.bytes {
        0 => Err(Fault::NoMemory),
        b => Ok(format!(
            "{} ({})",
            crate::words::byte_size(b),
            mem.kind.as_str()
        )),
    }
}

/// The row is the user's, and the doctor's child.
fn parentage(m: &Machine, p: &ProcessInfo) -> Found {
    let (me, uid) = (m.probe.own_pid(), m.probe.current_uid());
    if p.ppid != me || p.uid != uid {
        return Err(Fault::NotOurs {
            pid: p.identity.pid,
            ppid: p.ppid,
            uid: p.uid,
            me,
            my_uid: uid,
        });
    }
    Ok(format!("pid {}, parent {me}, user {uid}", p.identity.pid))
}

fn shown(argv: &[Vec<u8>]) -> String {
    crate::words::command_for_a_person(argv.iter().map(Vec::as_slice))
}

/// The same file: a hard link (cargo's `target/debug/pier`) may be read back by its other
/// name, which is still the program that was started.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

fn start_time(m: &Machine, row: &ProcessInfo) -> Found {
    match m.probe.identity(row.identity.pid) {
        IdentityRead::Alive { identity, .. } if identity == row.identity => Ok(format!(
            "{} (started {} s ago)",
            identity.start_time,
            row.age_seconds.map_or("?".to_owned(), |a| a.to_string())
        )),
        IdentityRead::Alive { identity, .. } => Err(Fault::Disagree {
            first: row.identity.start_time,
            second: identity.start_time,
        }),
        IdentityRead::Gone => Err(Fault::Gone(row.identity.pid)),
        IdentityRead::Unknown(e) => Err(Fault::Unknown(e)),
    }
}

/// The environment reads back as exactly the fixed one (in any order).
fn environment(m: &Machine, pid: Pid) -> Found {
    let mut read: Vec<String> = m
        .probe
        .environment(pid)?
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let mut want = process::fixed_env();
    read.sort();
    want.sort();
    if read == want {
        Ok(format!("{} variables, as set", read.len()))
    } else {
        Err(Fault::OtherEnv {
            read,
            started: want,
        })
    }
}

/// One socket of `pid`'s, on loopback: `state`, local port `local`, remote port `remote`.
fn held(
    sockets: &Result<Vec<Socket>, SocketsUnread>,
    pid: Pid,
    state: TcpState,
    local: u16,
    remote: Option<u16>,
) -> Found {
    let all = sockets.as_ref().map_err(Clone::clone)?;
    all.iter()
        .find(|s| {
            s.state == state
                && s.local.port() == local
                && s.local.ip().is_loopback()
                && remote.is_none_or(|r| s.remote.port() == r)
                && s.owners.contains(&pid)
        })
        .map(|s| match state {
            TcpState::Listen => format!("{}, held by pid {pid}", s.local),
            _ => format!("{} → {}, held by pid {pid}", s.local, s.remote),
        })
        .ok_or(Fault::NoSocket {
            pid,
            read: all.len(),
        })
}

/// The test process spins on one thread while the probe samples it: the CPU read must be a
/// real share of the window, and no more than one core's worth — a unit wrong by a factor
/// (Mach ticks read as nanoseconds: 41×) lands outside.
fn activity(m: &Machine, c: &mut TestChild, window: Duration) -> Found {
    c.say("spin")?;
    let sample = m.probe.activity(&[c.pid()], window);
    c.say("rest")?;
    let delta = sample
        .per_pid
        .iter()
        .find(|(p, _)| *p == c.pid())
        .map(|(_, d)| d.clone())
        .ok_or(Fault::NotSampled(c.pid()))??;
    let window_ns = u64::try_from(sample.window.as_nanos()).unwrap_or(u64::MAX);
    let (cpu_ms, window_ms) = (delta.cpu_ns / 1_000_000, window_ns / 1_000_000);
    if delta.cpu_ns < window_ns / 10 {
        return Err(Fault::TooLittleCpu { cpu_ms, window_ms });
    }
    if delta.cpu_ns > window_ns + window_ns / 2 + 20_000_000 {
        return Err(Fault::TooMuchCpu { cpu_ms, window_ms });
    }
    Ok(format!("{cpu_ms} ms of CPU in {window_ms} ms"))
}

/// A child that has ended and is not yet reaped reads as a zombie (macOS needs the right
/// argument to show one at all). While it exits it may read as gone for a moment.
pub(super) fn zombie(t: &mut Tally, m: &Machine, opts: &Options, folder: &TestFolder) {
    let child = match process::spawn_ending(opts, folder) {
        Ok(c) => c,
        Err(e) => return t.fail("zombie", Fault::EndingNotStarted(e)),
    };
    let pid = child.0.id();
    let deadline = Instant::now() + Duration::from_secs(5);
    let seen = loop {
        let rows = m.probe.rows(&[pid]);
        match rows.processes.iter().find(|p| p.identity.pid == pid) {
            Some(p) if p.zombie => break Ok(format!("pid {pid} ({})", p.comm)),
            _ if Instant::now() >= deadline => break Err(Fault::NoZombie(pid)),
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    drop(child);
    t.record("zombie", seen);
}

/// A system shell's environment reads back: the restart target of `npm run dev` is `sh -c`,
/// and a system binary is where macOS may withhold it (a stop does without; such cards are
/// yellow, "could not be restarted").
pub(super) fn shell_environment(t: &mut Tally, m: &Machine, folder: &TestFolder) {
    let shell = Path::new("/bin/sh");
    let found = process::command(shell, &["-c", "read line"], folder)
        .spawn()
        .map(Reaped)
        .map_err(Fault::NoShell)
        .and_then(|sh| {
            // `spawn` returns as the exec begins; the new argv and environment are in place
            // once the argv reads back as the shell's.
            let pid = sh.0.id();
            let want: Vec<Vec<u8>> = ["/bin/sh", "-c", "read line"]
                .iter()
                .map(|a| a.as_bytes().to_vec())
                .collect();
            let deadline = Instant::now() + Duration::from_secs(5);
            while !m
                .probe
                .rows(&[pid])
                .processes
                .iter()
                .any(|p| p.argv == want)
            {
                if Instant::now() >= deadline {
                    return Err(Fault::ShellUnseen(pid));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            environment(m, pid)
        });
    t.record("shell_environment", found);
}

/// Signals the test process as a stop does, after checking that a stale identity is refused.
pub(super) fn stop(t: &mut Tally, m: &Machine, c: &mut TestChild) {
    let Some((identity, exe)) = c.read.clone() else {
        return;
    };
    let expected = Expected { identity, exe };
    let stale = Expected {
        identity: crate::probe::Identity {
            start_time: identity.start_time.wrapping_add(1),
            ..identity
        },
        ..expected.clone()
    };
    let refused = match m.signaller.signal(&stale, Sig::Term) {
        // Nothing may reach it: the exit waiter must not see it end.
        SignalOutcome::Mismatch(why) => {
            let waited = m
                .waiter
                .wait_for_exit(std::slice::from_ref(&expected), Duration::from_millis(200));
            if waited == [false] {
                Ok(why)
            } else {
                Err(Fault::EndedAfterRefusal)
            }
        }
        other => Err(Fault::StaleNotRefused(other)),
    };
    t.record("stale_identity", refused);
    let sent = match m.signaller.signal(&expected, Sig::Term) {
        SignalOutcome::Sent => Ok(format!("SIGTERM sent to pid {}", identity.pid)),
        other => Err(Fault::NotSent {
            pid: identity.pid,
            outcome: other,
        }),
    };
    let was_sent = sent.is_ok();
    t.record("signal", sent);
    if !was_sent {
        return;
    }
    let begun = Instant::now();
    let exited = m
        .waiter
        .wait_for_exit(std::slice::from_ref(&expected), Duration::from_secs(5));
    t.record(
        "exit_wait",
        if exited == [true] {
            Ok(format!("in {} ms", begun.elapsed().as_millis()))
        } else {
            Err(Fault::NotEnded)
        },
    );
}
