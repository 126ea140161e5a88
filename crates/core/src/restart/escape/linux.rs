//! Linux: the scheduler's cgroup v2 path from `/proc/self/cgroup`, the cgroup2 mount from
//! `/proc/self/mountinfo`, and the way out that fits ([`super`] says which, in order).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{Escape, NoNeed, Stays};
use crate::trust::{check_path, Kind, Me};

/// Where `systemd-run` may be, in order.
const SYSTEMD_RUN: [&str; 2] = ["/usr/bin/systemd-run", "/bin/systemd-run"];

/// Whether `systemd-run --user` can reach the user manager: its private socket, or the user's
/// bus, in the runtime folder. NOT RUN against a real user manager (none here).
fn user_manager_reachable() -> bool {
    let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) else {
        return false;
    };
    let run = Path::new(&run);
    run.join("systemd/private").exists() || run.join("bus").exists()
}

/// This process's way out, read now.
pub fn plan() -> Escape {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let Some(path) = v2_path(&cgroup) else {
        return Escape::Nothing(NoNeed::NoCgroup2);
    };
    if path == "/" {
        return Escape::Nothing(NoNeed::Root);
    }
    // systemd-run needs the user manager's socket: without it the restart would not run at all.
    if under_user_manager(path) && user_manager_reachable() {
        if let Some(run) = SYSTEMD_RUN.iter().map(Path::new).find(|p| trusted(p)) {
            return Escape::Scope(run.to_path_buf());
        }
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let Some(dir) = cgroup2_mount(&mountinfo).and_then(|(root, at)| folder_of(&root, &at, path))
    else {
        return Escape::Stays(Stays::NoMount);
    };
    let Some(parent) = dir.parent() else {
        return Escape::Nothing(NoNeed::Root);
    };
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let sibling = parent.join(format!("pier-restart-{ms}"));
    match std::fs::create_dir(&sibling) {
        Ok(()) => Escape::Sibling(sibling),
        Err(source) => Escape::Stays(Stays::NoSibling {
            parent: parent.to_path_buf(),
            source,
        }),
    }
}

/// The cgroup v2 line's path ("0::/user.slice/…"). Why only v2: a v1 hierarchy is not where
/// a service's processes are killed together on a unified or hybrid system.
fn v2_path(cgroup: &str) -> Option<&str> {
    cgroup.lines().find_map(|l| l.strip_prefix("0::"))
}

/// Whether `path` is under a systemd user manager (`…/user@1000.service/…`): its services are
/// the user's units, and a scope of the user's own is what leaves them.
fn under_user_manager(path: &str) -> bool {
    path.split('/').any(|part| {
        part.strip_prefix("user@")
            .and_then(|p| p.strip_suffix(".service"))
            .is_some_and(|uid| !uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The cgroup2 mount's root (within the hierarchy) and mount point, from mountinfo(5) lines:
/// "id parent dev ROOT POINT options … - cgroup2 source options".
fn cgroup2_mount(mountinfo: &str) -> Option<(String, PathBuf)> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        if right.split(' ').next()? != "cgroup2" {
            return None;
        }
        let mut f = left.split(' ');
        let root = f.nth(3)?;
        let point = f.next()?;
        Some((unescape(root), PathBuf::from(unescape(point))))
    })
}

/// A mountinfo field with its `\NNN` octal escapes (a space is `\040`) read back.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The folder of cgroup `path` under a mount of the hierarchy's `root` at `at`; `None` when
/// the cgroup is not under that root (outside this namespace's view).
fn folder_of(root: &str, at: &Path, path: &str) -> Option<PathBuf> {
    let rel = Path::new(path).strip_prefix(root).ok()?;
    Some(at.join(rel))
}

/// Whether `p` is a binary root owns on a path nobody else may change (`trust`): Pier runs it
/// with the user's restart behind it.
fn trusted(p: &Path) -> bool {
    check_path(p, Me::current())
        .is_ok_and(|c| c.entry.kind == Kind::File && c.entry.uid == 0 && c.entry.mode & 0o022 == 0)
}

/// Moves the child into `dir` before it execs: it writes "0" (itself) to `dir/cgroup.procs`.
/// A move that fails leaves it where it is, and the restart runs all the same ([`settle_sibling`]
/// says so).
pub fn move_before_exec(cmd: &mut Command, dir: &Path) {
    let Ok(procs) = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()) else {
        return;
    };
    // SAFETY: open, write and close are async-signal-safe; the path was made before the fork,
    // so nothing is allocated between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            use rustix::fs::{Mode, OFlags};
            if let Ok(fd) = rustix::fs::open(
                procs.as_c_str(),
                OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                let _ = rustix::io::write(&fd, b"0");
            }
            Ok(())
        });
    }
}

/// After the child (`pid`, not yet reaped) started: if it is not in `dir`, the log says it
/// stays in the scheduler's cgroup, and `dir`, empty, is removed.
pub fn settle_sibling(dir: &Path, pid: u32) {
    let now = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let moved = v2_path(&now)
        .zip(name)
        .is_some_and(|(p, n)| p.rsplit('/').next() == Some(n.as_str()));
    if !moved {
        tracing::warn!(
            "the restart stays in the scheduler's cgroup: it could not move into {}",
            dir.display()
        );
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v2_line_is_read_among_v1_lines() {
        let hybrid = "4:memory:/x\n1:name=systemd:/user.slice\n0::/user.slice/user-1000.slice\n";
        assert_eq!(v2_path(hybrid), Some("/user.slice/user-1000.slice"));
        assert_eq!(v2_path("4:memory:/x\n"), None, "v1 only");
    }

    /// A user manager's cgroup is named by its unit, `user@UID.service`; the slice above it
    /// (`user-1000.slice`) is not one.
    #[test]
    fn a_user_manager_is_known_by_its_unit_name() {
        assert!(under_user_manager(
            "/user.slice/user-1000.slice/user@1000.service/app.slice/pier-watch.service"
        ));
        assert!(!under_user_manager(
            "/user.slice/user-1000.slice/session-2.scope"
        ));
        assert!(!under_user_manager("/system.slice/user@.service"));
    }

    /// The cgroup2 line of a hybrid system, a space escaped in its mount point; a v1 line
    /// before it is passed over.
    #[test]
    fn the_cgroup2_mount_is_found_with_its_escapes_read() {
        let info = "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                    41 31 0:38 /ns /sys/fs/cgroup/uni\\040fied rw,relatime - cgroup2 cgroup2 rw\n";
        let (root, at) = cgroup2_mount(info).unwrap();
        assert_eq!(root, "/ns");
        assert_eq!(at, PathBuf::from("/sys/fs/cgroup/uni fied"));
        assert_eq!(
            folder_of(&root, &at, "/ns/svc"),
            Some(PathBuf::from("/sys/fs/cgroup/uni fied/svc"))
        );
        assert_eq!(
            folder_of(&root, &at, "/other"),
            None,
            "outside the mount's view"
        );
    }
}
