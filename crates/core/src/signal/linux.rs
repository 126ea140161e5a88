//! Linux: everything goes through pidfds (`pidfd_open`, Linux 5.3+). The signaller pins with a
//! pidfd and sends with `pidfd_send_signal`; the exit waiter polls pidfds. A pidfd refers to
//! one process for its whole life: once it has exited, a send gives ESRCH and a poll wakes, and
//! a newcomer that reuses the pid can never be reached through it.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::process::{pidfd_open, pidfd_send_signal, Pid as RawPid, PidfdFlags, Signal};

use super::wait::ExitWaiter;
use super::{Expected, PinError, SendError, Sig, SignalOps};
use crate::probe::Pid;

pub struct PidfdOps;

/// The signalling path: pidfds, when this kernel has them (a pidfd on Pier itself opens).
pub fn path() -> crate::model::doctor::SignalPath {
    let own = RawPid::from_raw(std::process::id() as i32).expect("a process's own pid is valid");
    match pidfd_open(own, PidfdFlags::empty()) {
        Ok(_) => crate::model::doctor::SignalPath {
            name: "pidfd".into(),
            race_free: true,
            detail: "pidfd_open, then pidfd_send_signal: a pidfd reaches only the process it \
                     was opened on"
                .into(),
        },
        Err(e) => crate::model::doctor::SignalPath {
            name: "none".into(),
            race_free: false,
            detail: format!(
                "pidfd_open fails here ({e}): Pier needs Linux 5.3 or later, and signals \
                 nothing without it"
            ),
        },
    }
}

impl SignalOps for PidfdOps {
    type Pin = OwnedFd;

    fn pin(&self, pid: Pid) -> Result<OwnedFd, PinError> {
        let raw = i32::try_from(pid)
            .ok()
            .and_then(RawPid::from_raw)
            .ok_or_else(|| PinError::Failed(format!("{pid} is not a valid pid")))?;
        match pidfd_open(raw, PidfdFlags::empty()) {
            Ok(fd) => Ok(fd),
            Err(Errno::SRCH) => Err(PinError::Gone),
            Err(e) => Err(PinError::Failed(format!("pidfd_open({pid}): {e}"))),
        }
    }

    fn send(&self, pin: &OwnedFd, sig: Sig) -> Result<(), SendError> {
        let signal = match sig {
            Sig::Term => Signal::TERM,
            Sig::Kill => Signal::KILL,
        };
        match pidfd_send_signal(pin, signal) {
            Ok(()) => Ok(()),
            Err(Errno::SRCH) => Err(SendError::NoSuchProcess),
            Err(e) => Err(SendError::Other(format!("pidfd_send_signal: {e}"))),
        }
    }
}

/// The exit waiter: a pidfd per member, `poll(2)` until each is readable (it exited) or the
/// time is up.
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
    let Some(pid) = i32::try_from(e.identity.pid)
        .ok()
        .and_then(RawPid::from_raw)
    else {
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
enum Judged {
    Exited,
    Watch,
    Blind,
}

/// No such file, or ESRCH from a read of a file that was open (found by the stop soak: a
/// child reaped by its parent right after `pidfd_open` was called "blind", hence
/// "still running", though it had exited): whoever held the pid is gone, so ours is.
fn judge(stat: std::io::Result<Vec<u8>>, start_time: u64) -> Judged {
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
        self.wait_glancing(members, timeout, Duration::MAX, &mut || true)
    }

    fn wait_glancing(
        &self,
        members: &[Expected],
        timeout: Duration,
        every: Duration,
        glance: &mut dyn FnMut() -> bool,
    ) -> Vec<bool> {
        let watches: Vec<Watch> = members.iter().map(open).collect();
        let mut exited: Vec<bool> = watches.iter().map(|w| matches!(w, Watch::Exited)).collect();
        let end = Instant::now() + timeout;
        let mut next_glance = Instant::now().checked_add(every);
        loop {
            if next_glance.is_some_and(|at| Instant::now() >= at) {
                if !glance() {
                    break;
                }
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
            let left = next_glance.map_or(left, |at| left.min(at.saturating_duration_since(now)));
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

#[cfg(test)]
mod tests {
    use super::{judge, Judged};

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
