//! Locks against real files and real threads: each thread opens its own file description, so
//! their `flock`s exclude each other as separate processes' do.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::super::Store;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_at(dir.path().join("state")).unwrap();
    (dir, store)
}

fn lock_files(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store.folder().join("locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// The rule the removal must not break (docs/design.md §3: two stops of one resource signal it
/// once): takers of one name — blocking, polling and trying — never hold it at once, while
/// every holder removes the file as it lets go and the next taker makes it again. Without the
/// taker's check that the name still names the file it locked, a taker woken on a removed file
/// holds it alongside the one who made the name's new file.
#[test]
fn takers_of_one_lock_never_hold_it_at_once_while_its_file_is_removed_and_made_again() {
    let (_d, store) = store();
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (store, inside, overlaps) = (store.clone(), inside.clone(), overlaps.clone());
            std::thread::spawn(move || {
                for _ in 0..150 {
                    let lock = match t % 3 {
                        0 => store.lock("stop-1-1").unwrap(),
                        1 => store
                            .lock_polling("stop-1-1", Duration::from_micros(50), &|| false)
                            .unwrap()
                            .unwrap(),
                        _ => loop {
                            if let Some(lock) = store.try_lock("stop-1-1").unwrap() {
                                break lock;
                            }
                            std::thread::yield_now();
                        },
                    };
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    for _ in 0..20 {
                        std::thread::yield_now();
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                    drop(lock);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0, "two holders at once");
    assert!(lock_files(&store).is_empty(), "{:?}", lock_files(&store));
}

/// A stop's or a record's lock leaves no file once let go; one held keeps its file.
#[test]
fn a_lock_file_is_removed_when_its_holder_lets_go() {
    let (_d, store) = store();
    let stop = store.lock("stop-7-7").unwrap();
    let record = store.try_lock("record-snap-7-7-1").unwrap().unwrap();
    assert_eq!(
        lock_files(&store),
        ["record-snap-7-7-1.lock", "stop-7-7.lock"]
    );
    drop(record);
    assert_eq!(lock_files(&store), ["stop-7-7.lock"]);
    drop(stop);
    assert!(lock_files(&store).is_empty());
}

/// A file someone else made under the name after it was removed from under a holder is not the
/// holder's to remove.
#[test]
fn a_holder_never_removes_a_file_that_is_no_longer_the_one_it_locked() {
    let (_d, store) = store();
    let lock = store.lock("stop-3-3").unwrap();
    let path = store.folder().join("locks/stop-3-3.lock");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"").unwrap();
    drop(lock);
    assert!(path.exists(), "another file under the name is left alone");
}

/// A state folder opened for reading removes nothing, lock files included.
#[test]
fn a_folder_opened_for_reading_removes_no_lock_file() {
    let (_d, store) = store();
    std::fs::write(store.folder().join("locks/stop-5-5.lock"), b"").unwrap();
    let reading = Store {
        writes: false,
        ..store.clone()
    };
    drop(reading.lock("stop-5-5").unwrap());
    drop(reading.try_lock("stop-5-5").unwrap().unwrap());
    assert_eq!(reading.remove_free_locks().unwrap(), Default::default());
    assert_eq!(lock_files(&store), ["stop-5-5.lock"]);
    // Nor does it make one.
    drop(reading.lock("stop-6-6").unwrap());
    assert_eq!(lock_files(&store), ["stop-5-5.lock"]);
}

/// A prune removes the lock files nobody holds — left by a Pier of before, or one that was
/// killed — and never one that is held (the app's, a running stop's).
#[test]
fn removing_free_locks_keeps_the_held_ones() {
    let (_d, store) = store();
    for stale in ["stop-1-1", "stop-1-2", "record-snap-1-1-9"] {
        std::fs::write(store.folder().join(format!("locks/{stale}.lock")), b"").unwrap();
    }
    let app = store.lock("app").unwrap();
    assert_eq!(store.remove_free_locks().unwrap().removed, 3);
    assert_eq!(lock_files(&store), ["app.lock"]);
    assert!(store.try_lock("app").unwrap().is_none(), "still held");
    drop(app);
}

/// An entry named as a lock file that is not a regular file of the user's — a folder, a FIFO,
/// a link to a file outside — is left as it is, never followed, and the prune of the others
/// goes on: every stale file goes, and the count is of what went. Before, the folder stopped
/// the prune with an error, leaving stale files and no count (issue 41's review).
#[test]
fn odd_entries_in_the_locks_folder_are_left_and_the_prune_goes_on() {
    let (d, store) = store();
    let locks = store.folder().join("locks");
    let outside = d.path().join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    std::fs::create_dir(locks.join("c.lock")).unwrap();
    std::os::unix::fs::symlink(&outside, locks.join("a.lock")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(locks.join("b.lock"))
        .status()
        .unwrap();
    assert!(fifo.success());
    for stale in ["e", "z", "stop-1-1"] {
        std::fs::write(locks.join(format!("{stale}.lock")), b"").unwrap();
    }
    let pruned = store.remove_free_locks().unwrap();
    assert_eq!(
        pruned,
        super::FreeLocks {
            removed: 3,
            left: 3
        }
    );
    assert_eq!(lock_files(&store), ["a.lock", "b.lock", "c.lock"]);
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
    assert!(locks
        .join("a.lock")
        .symlink_metadata()
        .unwrap()
        .is_symlink());
}

/// The rule: only a regular file of the user's is taken and removed by a prune.
#[test]
fn only_a_regular_file_of_the_users_is_prunable() {
    use crate::trust::Kind;
    assert!(super::prunable(Kind::File, 501, 501));
    for kind in [Kind::Dir, Kind::Link, Kind::Other] {
        assert!(!super::prunable(kind, 501, 501), "{kind:?}");
    }
    assert!(!super::prunable(Kind::File, 0, 501), "another user's");
}
