//! Crash-safety of the state folder (docs/design.md §5): a writing process SIGKILLed at random
//! moments, again and again, while this process reads the folder the whole time. No reader
//! ever sees a torn record, and no record a writer said was written is lost.
//!
//! The writer is this test binary run again with `PIER_CRASH_WRITER` set (the `writer` test
//! below): it creates new records and updates one shared record in a loop, printing each name
//! or sequence number once the store has returned (after fsync, rename and the folder fsync).
//! `PIER_CRASH_KILLS` sets the number of kills (default 1,000).
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pier_core::probe::Identity;
use pier_core::store::{Owned, Store, Versioned};
use serde::{Deserialize, Serialize};

/// A record like a snapshot: a schema, an owner, and a body large enough to span pages.
#[derive(Debug, Serialize, Deserialize)]
struct Rec {
    schema: u32,
    pid: u32,
    start_time: u64,
    seq: u64,
    body: String,
}

impl Versioned for Rec {
    const SCHEMA: u32 = 1;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Rec {
    fn owner(&self) -> Identity {
        Identity {
            pid: self.pid,
            start_time: self.start_time,
        }
    }
}

const OWNER: Identity = Identity {
    pid: 4242,
    start_time: 99,
};

fn rec(seq: u64) -> Rec {
    Rec {
        schema: 1,
        pid: OWNER.pid,
        start_time: OWNER.start_time,
        seq,
        body: format!("{seq:08}-").repeat(900),
    }
}

/// The writer's loop, run only in the child.
#[test]
fn writer() {
    if std::env::var_os("PIER_CRASH_WRITER").is_none() {
        return;
    }
    let store = Store::open().expect("the state folder opens");
    // The round number, not the pid: pids come round again over thousands of rounds.
    let run = std::env::var("PIER_CRASH_WRITER").unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0u64.. {
        let name = format!("snap-{run}-{i}");
        store.put(&name, &rec(i)).expect("a new record is written");
        writeln!(out, "put {name}").unwrap();
        let now = store
            .update("shared", OWNER, |r: &mut Rec| {
                r.seq += 1;
                r.body = format!("{:08}-", r.seq).repeat(900);
            })
            .expect("the shared record is updated");
        writeln!(out, "upd {}", now.seq).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn records_survive_sigkills_of_a_writer_at_random_moments() {
    if std::env::var_os("PIER_CRASH_WRITER").is_some() {
        return;
    }
    let kills: usize = std::env::var("PIER_CRASH_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path()).unwrap();
    store.put("shared", &rec(0)).unwrap();

    // The reader: lists and parses every record, the whole time.
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let reader = {
        let (store, stop, reads) = (store.clone(), stop.clone(), reads.clone());
        std::thread::spawn(move || -> Result<(), String> {
            while !stop.load(Ordering::Relaxed) {
                let listing = store.list::<Rec>("").map_err(|e| e.to_string())?;
                if let Some(e) = listing.damaged.first() {
                    return Err(format!("a reader saw a torn record: {e}"));
                }
                if !listing.records.iter().any(|(n, _)| n == "shared") {
                    return Err("the shared record vanished".into());
                }
                reads.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
    };

    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut put = Vec::new();
    let mut last_upd = 0u64;
    let mut ahead = 0;
    let started = Instant::now();
    for round in 0..kills {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "writer", "--nocapture", "--test-threads", "1"])
            .env("PIER_CRASH_WRITER", round.to_string())
            .env("PIER_STATE_DIR", dir.path())
            .env("PIER_CONFIG_DIR", "/nonexistent/pier-test-config")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        let lines = std::thread::spawn(move || {
            // The test harness says things of its own ("running 1 test"): only steps count.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if (line.starts_with("put ") || line.starts_with("upd ")) && tx.send(line).is_err()
                {
                    break;
                }
            }
        });
        // Kill at a random moment: right after the writer reports its k-th step, k random
        // (0 = as soon as it starts), while it goes on writing.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let wait_for = rng % 6;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut said = Vec::new();
        while (said.len() as u64) < wait_for {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => said.push(line),
                Err(_) => panic!(
                    "the writer of round {round} reported {} steps in 10 s (run it with \
                     stderr to see why)",
                    said.len()
                ),
            }
        }
        // Then a random 0–2 ms more, spun rather than slept: a fault injected at a random
        // point of the write in progress, not a wait for anything.
        let spin = Instant::now() + Duration::from_micros(rng % 2000);
        while Instant::now() < spin {
            std::hint::spin_loop();
        }
        // Our own child, not yet reaped: its pid cannot have changed hands.
        child.kill().unwrap();
        child.wait().unwrap();
        lines.join().unwrap();
        said.extend(rx.try_iter());
        for line in said {
            match line.split_once(' ') {
                Some(("put", name)) => put.push(name.to_owned()),
                Some(("upd", seq)) => last_upd = seq.parse().unwrap(),
                _ => panic!("the writer said {line:?}"),
            }
        }
        // After every kill: the shared record holds the last update reported, or one more
        // that was written but not yet reported when the kill came.
        let shared: Rec = store.get("shared").unwrap().unwrap();
        match shared.seq.checked_sub(last_upd) {
            Some(0) => {}
            Some(1) => {
                ahead += 1;
                last_upd = shared.seq;
            }
            _ => panic!("shared holds {} after update {last_upd}", shared.seq),
        }
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap().unwrap();

    // None lost, none torn: every record reported written is there and parses; the shared
    // record holds the last update reported, or the one after it (killed before it said so).
    let listing = store.list::<Rec>("").unwrap();
    assert!(listing.damaged.is_empty(), "{:?}", listing.damaged);
    let names: std::collections::HashSet<&str> =
        listing.records.iter().map(|(n, _)| n.as_str()).collect();
    for name in &put {
        assert!(names.contains(name.as_str()), "{name} was lost");
    }
    let shared: Rec = store.get("shared").unwrap().unwrap();
    assert_eq!(shared.seq, last_upd);
    assert_eq!(shared.body, format!("{:08}-", shared.seq).repeat(900));
    let temp = std::fs::read_dir(dir.path().join("records"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    eprintln!(
        "{kills} SIGKILLs in {:.1} s; {} records written and all found, shared at {} ({ahead} \
         kills after a write and before its report); {} reads, none torn; {temp} temp files \
         left by kills inside a write",
        started.elapsed().as_secs_f64(),
        put.len(),
        shared.seq,
        reads.load(Ordering::Relaxed),
    );
}
