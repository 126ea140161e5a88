//! Waiting for signalled members to exit, bounded by the grace period, woken by the exits
//! themselves: Linux waits on pidfds with `poll(2)`, macOS on a kqueue `EVFILT_PROC`/
//! `NOTE_EXIT`. A stop's waits also wake every few milliseconds to glance for newcomers
//! ([`ExitWaiter::wait_glancing`]).

use std::time::Duration;

use crate::signal::Expected;

/// Waits until each of `members` has exited (a zombie counts) or `timeout` passes; returns,
/// for each, whether it had exited.
pub trait ExitWaiter {
    fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool>;

    /// [`wait_for_exit`](ExitWaiter::wait_for_exit), calling `glance` about every `every`
    /// while it waits, and once at its end: a stop looks for newcomers all through a wait, or
    /// one born and gone within it is never seen (`newcomers.rs`). The default glances once,
    /// after the wait.
    fn wait_glancing(
        &self,
        members: &[Expected],
        timeout: Duration,
        every: Duration,
        glance: &mut dyn FnMut(),
    ) -> Vec<bool> {
        let _ = every;
        let exited = self.wait_for_exit(members, timeout);
        glance();
        exited
    }
}

/// The waiter for the OS Pier was built for.
pub fn system_waiter() -> Box<dyn ExitWaiter + Send + Sync> {
    #[cfg(target_os = "linux")]
    {
        Box::new(linux::PidfdWaiter)
    }
    #[cfg(target_os = "macos")]
    {
        Box::new(macos::KqueueWaiter)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Box::new(Never)
    }
}

/// Every other OS: nothing is known to exit.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
struct Never;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
impl ExitWaiter for Never {
    fn wait_for_exit(&self, members: &[Expected], _timeout: Duration) -> Vec<bool> {
        vec![false; members.len()]
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::OwnedFd;
    use std::time::{Duration, Instant};

    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use rustix::io::Errno;
    use rustix::process::{pidfd_open, Pid, PidfdFlags};

    use super::ExitWaiter;
    use crate::signal::Expected;

    pub struct PidfdWaiter;

    /// What can be watched of one member.
    enum Watch {
        Exited,
        Fd(OwnedFd),
        /// Cannot be watched (pidfd_open failed otherwise): never reported as exited, so the
        /// outcome says still_running rather than a stop that may not have happened.
        Blind,
    }

    fn open(e: &Expected) -> Watch {
        let Some(pid) = i32::try_from(e.identity.pid).ok().and_then(Pid::from_raw) else {
            return Watch::Blind;
        };
        let fd = match pidfd_open(pid, PidfdFlags::empty()) {
            Ok(fd) => fd,
            Err(Errno::SRCH) => return Watch::Exited,
            Err(_) => return Watch::Blind,
        };
        // The pid may already belong to a newcomer: then ours has exited.
        let stat = std::fs::read(format!("/proc/{}/stat", e.identity.pid));
        match judge(stat, e.identity.start_time) {
            Judged::Exited => Watch::Exited,
            Judged::Watch => Watch::Fd(fd),
            Judged::Blind => Watch::Blind,
        }
    }

    /// What the stat read after `pidfd_open` says of the member.
    #[derive(Debug, PartialEq, Eq)]
    pub(super) enum Judged {
        Exited,
        Watch,
        Blind,
    }

    /// No such file, or ESRCH from a read of a file that was open (found by the stop soak: a
    /// child reaped by its parent right after `pidfd_open` was called "blind", hence
    /// "still running", though it had exited): whoever held the pid is gone, so ours is.
    pub(super) fn judge(stat: std::io::Result<Vec<u8>>, start_time: u64) -> Judged {
        let stat = match stat {
            Ok(bytes) => bytes,
            Err(err)
                if err.kind() == std::io::ErrorKind::NotFound
                    || err.raw_os_error() == Some(Errno::SRCH.raw_os_error()) =>
            {
                return Judged::Exited
            }
            Err(_) => return Judged::Blind,
        };
        match crate::probe::procfs::parse_stat(&stat) {
            Some((_, s)) if s.start_time == start_time => Judged::Watch,
            Some(_) => Judged::Exited,
            None => Judged::Blind,
        }
    }

    impl ExitWaiter for PidfdWaiter {
        fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool> {
            self.wait_glancing(members, timeout, Duration::MAX, &mut || {})
        }

        fn wait_glancing(
            &self,
            members: &[Expected],
            timeout: Duration,
            every: Duration,
            glance: &mut dyn FnMut(),
        ) -> Vec<bool> {
            let watches: Vec<Watch> = members.iter().map(open).collect();
            let mut exited: Vec<bool> =
                watches.iter().map(|w| matches!(w, Watch::Exited)).collect();
            let end = Instant::now() + timeout;
            let mut next_glance = Instant::now().checked_add(every);
            loop {
                if next_glance.is_some_and(|at| Instant::now() >= at) {
                    glance();
                    next_glance = Instant::now().checked_add(every);
                }
                let waiting: Vec<(usize, &OwnedFd)> = watches
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !exited[*i])
                    .filter_map(|(i, w)| match w {
                        Watch::Fd(fd) => Some((i, fd)),
                        _ => None,
                    })
                    .collect();
                let now = Instant::now();
                let left = end.saturating_duration_since(now);
                if waiting.is_empty() || left.is_zero() {
                    break;
                }
                let left =
                    next_glance.map_or(left, |at| left.min(at.saturating_duration_since(now)));
                let mut polls: Vec<PollFd> = waiting
                    .iter()
                    .map(|(_, fd)| PollFd::new(*fd, PollFlags::IN))
                    .collect();
                let ts = Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                };
                match poll(&mut polls, Some(&ts)) {
                    Ok(_) => {
                        for (p, (i, _)) in polls.iter().zip(&waiting) {
                            if p.revents().intersects(PollFlags::IN | PollFlags::HUP) {
                                exited[*i] = true;
                            }
                        }
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => break,
                }
            }
            glance();
            exited
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::linux::{judge, Judged};

    const STAT: &[u8] = b"42 (vite) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0";

    #[test]
    fn a_member_reaped_between_its_pidfd_and_its_stat_has_exited() {
        let esrch = std::io::Error::from_raw_os_error(3);
        assert_eq!(judge(Err(esrch), 777), Judged::Exited);
        let enoent = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(judge(Err(enoent), 777), Judged::Exited);
        let eacces = std::io::Error::from_raw_os_error(13);
        assert_eq!(
            judge(Err(eacces), 777),
            Judged::Blind,
            "unknown is not exited"
        );
    }

    #[test]
    fn the_pid_of_a_newcomer_means_ours_exited_and_ours_is_watched() {
        assert_eq!(judge(Ok(STAT.to_vec()), 777), Judged::Watch);
        assert_eq!(judge(Ok(STAT.to_vec()), 700), Judged::Exited);
        assert_eq!(judge(Ok(b"garbage".to_vec()), 777), Judged::Blind);
    }
}

#[cfg(target_os = "macos")]
mod macos {
    use std::time::{Duration, Instant};

    use super::ExitWaiter;
    use crate::probe::IdentityRead;
    use crate::signal::Expected;

    pub struct KqueueWaiter;

    impl ExitWaiter for KqueueWaiter {
        fn wait_for_exit(&self, members: &[Expected], timeout: Duration) -> Vec<bool> {
            self.wait_glancing(members, timeout, Duration::MAX, &mut || {})
        }

        fn wait_glancing(
            &self,
            members: &[Expected],
            timeout: Duration,
            every: Duration,
            glance: &mut dyn FnMut(),
        ) -> Vec<bool> {
            let mut exited = vec![false; members.len()];
            // SAFETY: kqueue has no preconditions; the fd is closed below.
            let kq = unsafe { libc::kqueue() };
            if kq < 0 {
                return exited;
            }
            for (i, m) in members.iter().enumerate() {
                // SAFETY: kevent is plain old data; all-zero is valid.
                let mut ev: libc::kevent = unsafe { std::mem::zeroed() };
                ev.ident = m.identity.pid as libc::uintptr_t;
                ev.filter = libc::EVFILT_PROC;
                ev.flags = libc::EV_ADD | libc::EV_ONESHOT;
                ev.fflags = libc::NOTE_EXIT;
                ev.udata = i as *mut libc::c_void;
                // SAFETY: one change in, none out.
                let rc =
                    unsafe { libc::kevent(kq, &ev, 1, std::ptr::null_mut(), 0, std::ptr::null()) };
                if rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
                    exited[i] = true;
                }
            }
            // Registered by bare pid: if the pid already holds a newcomer, the event watches
            // it, and ours has exited. Checked after registering, so an exit in between is
            // caught either way. (Type-checked only: no Mac here.)
            let probe = crate::probe::system_probe();
            for (i, m) in members.iter().enumerate() {
                match probe.identity(m.identity.pid) {
                    IdentityRead::Gone => exited[i] = true,
                    IdentityRead::Alive { identity, .. } if identity != m.identity => {
                        exited[i] = true;
                    }
                    _ => {}
                }
            }
            let end = Instant::now() + timeout;
            let mut next_glance = Instant::now().checked_add(every);
            while exited.iter().any(|e| !e) {
                if next_glance.is_some_and(|at| Instant::now() >= at) {
                    glance();
                    next_glance = Instant::now().checked_add(every);
                }
                let now = Instant::now();
                let left = end.saturating_duration_since(now);
                if left.is_zero() {
                    break;
                }
                let left =
                    next_glance.map_or(left, |at| left.min(at.saturating_duration_since(now)));
                let ts = libc::timespec {
                    tv_sec: left.as_secs() as libc::time_t,
                    tv_nsec: libc::c_long::from(left.subsec_nanos() as i32),
                };
                // SAFETY: plain old data; all-zero is valid.
                let mut out: libc::kevent = unsafe { std::mem::zeroed() };
                // SAFETY: room for one event out; no changes in.
                let n = unsafe { libc::kevent(kq, std::ptr::null(), 0, &mut out, 1, &ts) };
                if n > 0 {
                    if let Some(e) = exited.get_mut(out.udata as usize) {
                        *e = true;
                    }
                } else if n < 0
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                {
                    break;
                }
            }
            // SAFETY: kq is ours.
            unsafe { libc::close(kq) };
            glance();
            exited
        }
    }
}
