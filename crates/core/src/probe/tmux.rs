//! Asking a tmux server which session, window and pane a pane id is (`%7` → `dev:2.1`), so a
//! card can say where to press Ctrl-C. The one place Pier runs another program during a scan,
//! so every condition is checked first, and a failed one means "not asked" (the card then
//! names the pane by its id alone):
//! - the binary is the server's own executable, and the user controls it and every folder on
//!   its path (`trust::check_path`, the rule a restart's program passes);
//! - the socket is the user's own socket, not a link;
//! - it runs with no shell, an empty environment, stdin closed, and is killed after
//!   [`ASK_TIMEOUT`].

use std::io::Read as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a tmux server is given to answer.
pub const ASK_TIMEOUT: Duration = Duration::from_millis(300);

/// What tmux prints for a pane: `session:window.pane`.
const FORMAT: &str = "#{session_name}:#{window_index}.#{pane_index}";

/// One question to one tmux server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxQuery {
    /// The server's own executable (Linux: `/proc/<server pid>/exe`).
    pub exe: PathBuf,
    /// The server's socket (`TMUX`'s first field).
    pub socket: PathBuf,
    /// The pane's id (`TMUX_PANE`: `%7`).
    pub pane_id: String,
}

/// Where a pane is, as its server names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneName {
    /// The session's name.
    pub session: String,
    /// The window's index.
    pub window: u32,
    /// The pane's index in its window.
    pub pane: u32,
}

/// Parses tmux's answer to [`FORMAT`]: `dev:2.1`. A session name may hold `:`; the indexes
/// are after the last one.
pub fn parse_answer(out: &str) -> Option<PaneName> {
    let line = out.lines().next()?.trim_end();
    let (session, at) = line.rsplit_once(':')?;
    let (window, pane) = at.split_once('.')?;
    Some(PaneName {
        session: session.to_owned(),
        window: window.parse().ok()?,
        pane: pane.parse().ok()?,
    })
}

/// Whether Pier may run `q.exe` against `q.socket` for user `me`: the binary is one the user
/// controls (owned by the user or root, no folder on its path writable by others), and the
/// socket is a socket of the user's, not a link (another user's socket would be another
/// user's server, answering with whatever it likes).
pub fn may_ask(q: &TmuxQuery, me: &crate::trust::Me) -> bool {
    let socket = match std::fs::symlink_metadata(&q.socket) {
        Ok(m) => m,
        Err(_) => return false,
    };
    socket.file_type().is_socket()
        && socket.uid() == me.uid
        && q.pane_id.starts_with('%')
        && crate::trust::check_path(&q.exe, me).is_ok()
}

/// Asks the server (when [`may_ask`]) and parses its answer; `None` on any failure.
pub fn ask(q: &TmuxQuery) -> Option<PaneName> {
    if !may_ask(q, crate::trust::Me::current()) {
        return None;
    }
    let mut child = Command::new(&q.exe)
        .arg("-S")
        .arg(&q.socket)
        .args(["display-message", "-p", "-t", &q.pane_id, FORMAT])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + ASK_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => break None,
        }
    };
    let Some(status) = status.filter(|s| s.success()) else {
        // Ours to end: the child we just started, by its handle.
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let mut out = String::new();
    child
        .stdout
        .take()?
        .take(4096)
        .read_to_string(&mut out)
        .ok()?;
    let _ = status;
    parse_answer(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_session_window_and_pane_and_a_session_may_hold_a_colon() {
        let want = |s: &str, w, p| {
            Some(PaneName {
                session: s.into(),
                window: w,
                pane: p,
            })
        };
        assert_eq!(parse_answer("dev:2.1\n"), want("dev", 2, 1));
        assert_eq!(parse_answer("a:b:0.3"), want("a:b", 0, 3));
        assert_eq!(parse_answer("dev:x.1"), None);
        assert_eq!(parse_answer("no server running"), None);
        assert_eq!(parse_answer(""), None);
    }

    #[test]
    fn only_the_users_own_socket_and_a_binary_the_user_controls_are_asked() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let me = *crate::trust::Me::current();
        let q = |exe: &str, socket: &std::path::Path| TmuxQuery {
            exe: exe.into(),
            socket: socket.to_path_buf(),
            pane_id: "%1".into(),
        };
        assert!(may_ask(&q("/bin/sh", &socket), &me), "a system binary");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&socket, &link).unwrap();
        assert!(!may_ask(&q("/bin/sh", &link), &me), "a link to a socket");
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        assert!(!may_ask(&q("/bin/sh", &plain), &me), "not a socket");
        let other = crate::trust::Me {
            uid: me.uid + 1,
            ..me
        };
        assert!(
            !may_ask(&q("/bin/sh", &socket), &other),
            "another user's socket"
        );
        // A binary in a folder others can write.
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::copy("/bin/sh", open.join("tmux")).unwrap();
        let exe = open.join("tmux");
        assert!(
            !may_ask(&q(exe.to_str().unwrap(), &socket), &me),
            "others can write"
        );
    }
}
