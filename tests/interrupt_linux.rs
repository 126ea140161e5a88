//! `pier stop` interrupted at random points of a real stop (docs/design.md §3.10): by SIGINT,
//! which Pier handles, and by SIGKILL, which leaves the record for a later read to reconcile.
//! Every round must end as a listed stop with its true result (restartable exactly when
//! complete), or as no stop with every process untouched — never as a stranded snapshot.
//! `PIER_INTERRUPT_ROUNDS` sets the rounds (default 200; `scripts/long.sh` runs 400), and
//! `PIER_INTERRUPT_SEED` replays a run. Each round stops its own fixture, by its id.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use serde_json::Value;

/// xorshift64*: a seeded, replayable source of kill points.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether the fixture's process still runs as itself.
fn runs(p: Started) -> bool {
    start_time_of(p.pid) == Some(p.start_time) && alive(p.pid)
}

fn history(sb: &Sandbox) -> Value {
    let out = sb.pier_exact(&["history", "--json"]);
    assert!(
        out.status.success(),
        "pier history failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("history prints JSON")
}

#[test]
fn a_stop_interrupted_or_killed_anywhere_ends_true_or_as_no_stop() {
    if fixtures_cannot_be_orphans("interrupted stops") {
        return;
    }
    let rounds = env_number("PIER_INTERRUPT_ROUNDS", 200);
    let seed = env_number(
        "PIER_INTERRUPT_SEED",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1,
    );
    eprintln!("interrupted stops: {rounds} rounds, PIER_INTERRUPT_SEED={seed}");
    let mut rng = Rng(seed);
    let sb = Sandbox::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for round in 0..rounds {
        // Every other pair of rounds, the server has a child of its own: its level is
        // signalled first, and the server's only after a settle wait, so an interruption
        // there leaves a level unsignalled.
        let with_child = (round / 2) % 2 == 1;
        let extra: &[&str] = if with_child { &["--child"] } else { &[] };
        let server = sb.start_vite(&format!("p{round}"), extra, |_| true);
        let mut members = vec![
            Started {
                pid: server["ppid"].as_u64().unwrap() as u32,
                start_time: server["ppid_start_time"].as_u64().unwrap(),
            },
            Started {
                pid: pid(&server),
                start_time: server["start_time"].as_u64().unwrap(),
            },
        ];
        if with_child {
            members.push(Started {
                pid: server["children"][0].as_u64().unwrap() as u32,
                start_time: server["children_start_times"][0].as_u64().unwrap(),
            });
        }
        let id = format!("{}-{}", members[0].pid, members[0].start_time);
        let sigint = round % 2 == 0;
        // A stop here takes about 220 ms (420 ms with the child's level): kill points spread
        // over all of it, and a little past.
        let after = Duration::from_millis(rng.below(if with_child { 460 } else { 260 }));
        let child = spawn_stop(&sb, &[&id, "--sample-ms", "50", "--grace", "3"]);
        // Not a synchronisation: the random point at which the stop is interrupted.
        std::thread::sleep(after);
        let raw = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        // The child is not reaped yet, so its pid is still its own.
        let signal = if sigint {
            rustix::process::Signal::INT
        } else {
            rustix::process::Signal::KILL
        };
        let _ = rustix::process::kill_process(raw, signal);
        let out = child.wait_with_output().unwrap();
        let said = format!(
            "round {round} ({} after {after:?}): exit {:?}\n{}{}",
            if sigint { "SIGINT" } else { "SIGKILL" },
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // A handled SIGINT exits 130; one before the handlers were installed (the first
        // milliseconds) kills Pier before it reads anything; a late one finds the stop ended.
        let handled = out.status.code() == Some(130);
        if sigint {
            assert!(
                matches!(out.status.code(), Some(0 | 3 | 130)) || out.status.signal() == Some(2),
                "{said}"
            );
        }
        let ran_before: Vec<bool> = members.iter().map(|&m| runs(m)).collect();
        let doc = history(&sb);
        let ran_after: Vec<bool> = members.iter().map(|&m| runs(m)).collect();
        let entries: Vec<&Value> = doc["snapshots"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["id"] == id.as_str())
            .collect();
        let kind = judge_round(&entries, &ran_before, &ran_after, &said);
        let by = match (sigint, handled) {
            (true, true) => "SIGINT (handled)",
            (true, false) => "SIGINT (not in a stop)",
            (false, _) => "SIGKILL",
        };
        *tally.entry(format!("{by} {kind}")).or_default() += 1;
        for &m in &members {
            kill_by_identity(m);
        }
        wait_for("the round's processes to end", || {
            members.iter().all(|&m| !runs(m)).then_some(())
        });
    }
    eprintln!("interrupted stops: {tally:#?}");
    let count = |k: &str| {
        tally
            .iter()
            .filter(|(n, _)| n.contains(k))
            .map(|(_, c)| c)
            .sum::<usize>()
    };
    assert!(
        count("SIGKILL reconciled stopped")
            + count("SIGKILL reconciled partially_stopped")
            + count("SIGKILL reconciled not_stopped")
            > 0,
        "no SIGKILL landed between the mark and the outcome: {tally:?}"
    );
    assert!(
        count("SIGINT (handled) finished partially_stopped")
            + count("SIGINT (handled) finished not_stopped")
            > 0,
        "no SIGINT left a level unsignalled: {tally:?}"
    );
    assert!(
        count("(handled)") > 0,
        "no SIGINT landed inside a stop: {tally:?}"
    );
}

/// What one round's history says, checked against the processes' fates: read before the
/// history (`before`) and after it (`after`), since a member signalled just before Pier died
/// may end during the read.
fn judge_round(entries: &[&Value], before: &[bool], after: &[bool], said: &str) -> String {
    assert!(
        entries.len() <= 1,
        "one record per stop: {entries:#?}\n{said}"
    );
    let Some(e) = entries.first() else {
        // Killed before its snapshot: nothing may have been sent.
        assert!(
            after.iter().all(|&r| r),
            "signalled without a snapshot\n{said}"
        );
        return "before the snapshot".into();
    };
    let result = e["result"].as_str();
    assert!(result.is_some(), "a stranded snapshot: {e:#}\n{said}");
    let restartable = e["restartable"].as_bool().unwrap();
    let reconciled = !e["reconciled_at"].is_null();
    let how = if reconciled { "reconciled" } else { "finished" };
    if e["signalled"] == false {
        assert!(
            after.iter().all(|&r| r),
            "no stop, yet a member is gone: {e:#}\n{said}"
        );
        assert!(!restartable, "{e:#}");
        return format!("{how} as no stop");
    }
    match result.unwrap() {
        "stopped" => {
            assert!(
                after.iter().all(|&r| !r),
                "stopped, yet a member runs: {e:#}\n{said}"
            );
            assert!(restartable, "a complete stop is restartable: {e:#}\n{said}");
        }
        // Nothing of it ended: not restartable (every member still ran when it looked).
        "not_stopped" => {
            if reconciled {
                assert!(
                    before.iter().any(|&r| r),
                    "all were gone before: {e:#}\n{said}"
                );
            }
            assert!(!restartable, "a stop that ended nothing: {e:#}\n{said}");
        }
        "partially_stopped" => {
            // Reconciled by that very read: some member ran when it looked.
            if reconciled {
                assert!(
                    before.iter().any(|&r| r),
                    "all were gone before: {e:#}\n{said}"
                );
            }
            assert!(
                !restartable,
                "a partial stop is not restartable: {e:#}\n{said}"
            );
        }
        other => panic!("a stop that signalled cannot be {other}: {e:#}\n{said}"),
    }
    format!("{how} {}", result.unwrap())
}

/// Whether `pid` catches SIGINT (its handlers are installed): `SigCgt` in its status.
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// `pier stop ID` as a child, with the sandbox's state folder.
fn spawn_stop(sb: &Sandbox, args: &[&str]) -> std::process::Child {
    Command::new(pier_bin())
        .arg("stop")
        .args(args)
        .env("PIER_STATE_DIR", sb.path().join("state"))
        .env("PIER_CONFIG_DIR", sb.path().join("config"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits, bounded by the kit's deadline, for `child` to end; its output.
fn ended(mut child: std::process::Child) -> std::process::Output {
    wait_for("pier stop to end", || child.try_wait().unwrap().map(|_| ()));
    child.wait_with_output().unwrap()
}

fn sigint(child: &std::process::Child) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
}

/// Found in review: while another stop of the resource held its lock, `pier stop` waited in
/// `flock`, which the kernel restarts after the handler, so Ctrl-C did nothing until the
/// other stop let go.
#[test]
fn ctrl_c_while_another_stop_holds_the_lock_ends_the_wait() {
    if fixtures_cannot_be_orphans("ctrl_c_while_another_stop_holds_the_lock") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let id = format!(
        "{}-{}",
        server["ppid"].as_u64().unwrap(),
        server["ppid_start_time"].as_u64().unwrap()
    );
    let locks = sb.path().join("state/locks");
    std::fs::create_dir_all(&locks).unwrap();
    let held = std::fs::File::create(locks.join(format!("stop-{id}.lock"))).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let inode = std::os::unix::fs::MetadataExt::ino(&held.metadata().unwrap());
    let records = sb.path().join("state/records");
    let child = spawn_stop(&sb, &[&id, "--sample-ms", "50"]);
    // In the lock's wait itself (not the scan before it), with its handlers installed.
    wait_for("pier to wait on the lock", || {
        (catches_sigint(child.id()) && waits_on_lock(child.id(), inode, &records)).then_some(())
    });
    sigint(&child);
    let out = ended(child);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(
        text.contains(&format!(
            "{id}  REFUSED  interrupted by SIGINT while another stop of it held its lock, \
             before this one began: nothing was sent"
        )),
        "{text}"
    );
    let records = std::fs::read_dir(sb.path().join("state/records")).unwrap();
    assert_eq!(records.count(), 0, "no snapshot");
    assert_eq!(start_time_of(pid(&server)), server["start_time"].as_u64());
}

/// Ctrl-C during a level's grace wait ends the wait at once, signals no further level, and the
/// result is what is true then: the server still runs and its `sh` was never signalled, so the
/// stop ended nothing (`not_stopped`), not restartable.
#[test]
fn ctrl_c_during_the_grace_wait_ends_it_at_once() {
    if fixtures_cannot_be_orphans("ctrl_c_during_the_grace_wait") {
        return;
    }
    let sb = Sandbox::new();
    let log = sb.path().join("term.log");
    let log_arg = log.to_str().unwrap();
    let server = sb.start_vite("app", &["--term-log", log_arg, "--stay"], |_| true);
    let id = format!(
        "{}-{}",
        server["ppid"].as_u64().unwrap(),
        server["ppid_start_time"].as_u64().unwrap()
    );
    // A grace far past the kit's deadline: only a wait cut short ends in time.
    let child = spawn_stop(&sb, &[&id, "-v", "--sample-ms", "50", "--grace", "120"]);
    wait_for("the server's SIGTERM", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains(" term"))
    });
    sigint(&child);
    let out = ended(child);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(
        text.contains(&format!("{id}  NOT STOPPED  vite in "))
            && text.contains(": interrupted by SIGINT, so no further level was signalled; "),
        "{text}"
    );
    assert!(
        text.contains("still running when SIGINT ended the wait for it"),
        "{text}"
    );
    assert!(
        text.contains("SIGINT interrupted the stop before its turn"),
        "{text}"
    );
    assert!(alive(pid(&server)), "it ignored its SIGTERM");
    let doc = history(&sb);
    let entry = &doc["snapshots"][0];
    assert_eq!(entry["result"], "not_stopped", "{doc:#}");
    assert_eq!(entry["restartable"], false);
}
