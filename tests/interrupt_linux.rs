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
        let server = sb.start_vite(&format!("p{round}"), &[], |_| true);
        let members = [
            Started {
                pid: server["ppid"].as_u64().unwrap() as u32,
                start_time: server["ppid_start_time"].as_u64().unwrap(),
            },
            Started {
                pid: pid(&server),
                start_time: server["start_time"].as_u64().unwrap(),
            },
        ];
        let id = format!("{}-{}", members[0].pid, members[0].start_time);
        let sigint = round % 2 == 0;
        // A stop here takes about 220 ms: kill points spread over all of it, and a little past.
        let after = Duration::from_millis(rng.below(260));
        let child = Command::new(pier_bin())
            .args(["stop", &id, "--sample-ms", "50", "--grace", "3"])
            .env("PIER_STATE_DIR", sb.path().join("state"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
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
        for m in members {
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
        count("SIGKILL reconciled") > 0,
        "no round killed a stop mid-way: {tally:?}"
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
