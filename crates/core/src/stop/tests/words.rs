//! The stop's words: every reason says in plain words what was seen — the process, the figure,
//! the peer — and carries no internal label (the report's `checkpoint` does that for programs).

use super::*;

/// Found by trying real tools: reasons read "check (a): …", "now yellow: …", "pid N
/// still_running", which say where in the code Pier was, not what it saw.
#[test]
fn a_resource_that_is_not_green_now_is_refused_with_its_evidence_in_words() {
    let mut fake = tree().with(process(50, 1, &["tmux"]), "/home/u");
    fake.process_mut(100).ppid = 50;
    let w = World {
        probe: Scripted::new(fake, |_, _, _| {}),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run(&w);
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(sent.is_empty());
    assert_eq!(r.checkpoint, None, "refused before the checkpoints");
    assert_eq!(
        r.reason,
        "it is yellow now, not green: parent tmux (pid 50) is a live terminal multiplexer: press \
         Ctrl-C in its tmux pane to stop it there; `pier stop --anyway 100-1000` sends SIGTERM \
         anyway, setting aside not_orphaned"
    );
}

#[test]
fn a_client_at_a_checkpoint_is_named_by_its_pid_and_command() {
    // curl (300) runs from the start; its connection comes at check (a), the second read.
    let fake = tree().with(process(300, 1, &["curl", "127.0.0.1:5173"]), "/home/u");
    let hook = |call: &str, n: usize, p: &mut FakeProbe| {
        if call == "sockets" && n == 2 {
            let s = p.sockets.get_or_insert_with(Vec::new);
            for (local, remote, owners) in [
                ("127.0.0.1:5173", "127.0.0.1:40000", vec![101]),
                ("127.0.0.1:40000", "127.0.0.1:5173", vec![300]),
            ] {
                s.push(crate::probe::Socket {
                    local: local.parse().unwrap(),
                    remote: remote.parse().unwrap(),
                    state: crate::probe::TcpState::Established,
                    owners,
                    queued: None,
                });
            }
        }
    };
    let w = World {
        probe: Scripted::new(fake, hook),
        store_dir: tempfile::tempdir().unwrap(),
    };
    let (r, sent) = run(&w);
    assert!(sent.is_empty());
    assert_eq!(r.checkpoint, Some(Checkpoint::A), "{r:#?}");
    assert_eq!(
        r.reason,
        "a client is connected: live connection 127.0.0.1:5173 ← 127.0.0.1:40000 from curl (an \
         HTTP client, pid 300: `curl 127.0.0.1:5173`) — it ends when that client disconnects; \
         `pier stop --anyway 100-1000` sends SIGTERM anyway, setting aside live_connection"
    );
}

#[test]
fn a_member_still_running_or_not_signalled_is_worded_with_its_command() {
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.ignores_term.insert(101);
    });
    assert_eq!(r.result, ResourceResult::PartiallyStopped);
    // The rescan then finds vite running on as a resource of its own: the member the report
    // names as still running, not a new one.
    assert_eq!(
        r.reason,
        "pid 101 (node /home/u/app/node_modules/.bin/vite) still runs after its signal"
    );
    let w = world(|_, _, _| {});
    let (r, _) = run_with(&w, opts(), |ops| {
        ops.refuses.insert(102);
    });
    assert_eq!(
        r.reason,
        "pid 102 (/home/u/app/node_modules/esbuild/bin/esbuild) could not be signalled: EPERM"
    );
}

/// Found in review: a stop whose every signal the kernel refused said "every member was gone
/// or had changed", which was not what happened.
#[test]
fn a_stop_whose_every_signal_was_refused_says_so() {
    let w = world(|_, _, _| {});
    let (r, sent) = run_with(&w, opts(), |ops| {
        ops.refuses.extend([100, 101, 102]);
    });
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(r.result, ResourceResult::Refused, "{r:#?}");
    assert!(
        r.reason.starts_with("no signal was sent: pid ")
            && r.reason.contains("could not be signalled"),
        "{}",
        r.reason
    );
    assert!(!r.reason.contains("gone or had changed"), "{}", r.reason);
}
