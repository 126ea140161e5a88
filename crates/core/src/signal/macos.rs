//! macOS: pin with an audit token, send with `proc_signal_with_audittoken` (macOS 14.2+), which
//! the kernel refuses (ESRCH) when the token's pid *version* no longer matches — the process
//! exited, or exec'd. Older systems fall back to a re-read followed at once by `kill(2)`. The
//! exit waiter ([`KqueueWaiter`]) waits on a kqueue `EVFILT_PROC`/`NOTE_EXIT` per member.
//!
//! NOT RUN: no Mac is available to this project. Type-checked and linted for
//! `aarch64-apple-darwin`; written from the libc crate's declarations, XNU's `<libproc.h>` and
//! `<mach/task_info.h>` as summarised in `docs/design.md` §7.3. The retry and verification
//! policy it plugs into (`signal_verified`) is unit-tested on Linux.
//!
//! Remaining window on macOS before 14.2: between the identity re-read and `kill(2)` the pid
//! could exit and be reused. The re-read is immediately followed by the kill, so the window is
//! one system call long; pids are handed out in increasing order, so a reuse inside it needs
//! the whole pid space to wrap in that instant.

use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

use super::wait::ExitWaiter;
use super::{Expected, PinError, SendError, Sig, SignalOps, Signaller, Verified};
use crate::probe::{IdentityRead, MacProbe, Pid, Probe};

/// `audit_token_t`: eight 32-bit words; `val[5]` is the pid, `val[7]` the pid version.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditToken {
    val: [u32; 8],
}

/// The word of an audit token holding the pid (XNU `bsd/kern/kern_prot.c`
/// `proc_calc_audit_token`; `val[7]` holds the pid version).
const AUDIT_TOKEN_PID: usize = 5;

/// `TASK_AUDIT_TOKEN` from `<mach/task_info.h>`, and its size in `natural_t` words.
const TASK_AUDIT_TOKEN: libc::task_flavor_t = 15;
const TASK_AUDIT_TOKEN_COUNT: libc::mach_msg_type_number_t = 8;
/// `RTLD_DEFAULT` on Darwin: search every loaded image.
const RTLD_DEFAULT: *mut c_void = -2isize as *mut c_void;

extern "C" {
    /// Our own task port: what the C macro `mach_task_self()` reads.
    static mach_task_self_: libc::mach_port_t;
    /// Allowed without privileges when the target's euid and ruid equal ours.
    fn task_name_for_pid(
        target_tport: libc::mach_port_t,
        pid: c_int,
        tn: *mut libc::mach_port_t,
    ) -> libc::kern_return_t;
    fn mach_port_deallocate(
        task: libc::mach_port_t,
        name: libc::mach_port_t,
    ) -> libc::kern_return_t;
}

fn task_self() -> libc::mach_port_t {
    // SAFETY: set once by the runtime before main and never changed.
    unsafe { mach_task_self_ }
}

/// `int proc_signal_with_audittoken(audit_token_t *, int)`: returns the errno value directly.
type SignalWithToken = unsafe extern "C" fn(*mut AuditToken, c_int) -> c_int;

/// Looks the symbol up at run time: it does not exist before macOS 14.2.
fn signal_with_token() -> Option<SignalWithToken> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name has no other preconditions.
    let sym = unsafe { libc::dlsym(RTLD_DEFAULT, c"proc_signal_with_audittoken".as_ptr()) };
    if sym.is_null() {
        None
    } else {
        // SAFETY: the symbol has this C signature in <libproc.h> (macOS 14.2 and later).
        Some(unsafe { std::mem::transmute::<*mut c_void, SignalWithToken>(sym) })
    }
}

fn signo(sig: Sig) -> c_int {
    match sig {
        Sig::Term => libc::SIGTERM,
        Sig::Kill => libc::SIGKILL,
    }
}

/// Does `pid` exist at all? (`kill(pid, 0)`: ESRCH means no.)
fn exists(pid: c_int) -> bool {
    // SAFETY: signal 0 sends nothing; it only checks the pid and permissions.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The audit-token signaller (macOS 14.2+).
pub struct TokenOps {
    send: SignalWithToken,
}

impl SignalOps for TokenOps {
    type Pin = AuditToken;

    fn pin(&self, pid: Pid) -> Result<AuditToken, PinError> {
        let raw = c_int::try_from(pid).map_err(|_| PinError::Failed(format!("bad pid {pid}")))?;
        let mut port: libc::mach_port_t = 0;
        // SAFETY: port is a valid out-parameter; task_self() is our own task port.
        let kr = unsafe { task_name_for_pid(task_self(), raw, &mut port) };
        if kr != libc::KERN_SUCCESS {
            return if exists(raw) {
                Err(PinError::Failed(format!(
                    "task_name_for_pid({pid}) failed: {kr}"
                )))
            } else {
                Err(PinError::Gone)
            };
        }
        let mut token = AuditToken::default();
        let mut count = TASK_AUDIT_TOKEN_COUNT;
        // SAFETY: token is 8 natural_t words, as TASK_AUDIT_TOKEN_COUNT says.
        let kr = unsafe {
            libc::task_info(
                port,
                TASK_AUDIT_TOKEN,
                (&mut token as *mut AuditToken).cast::<libc::integer_t>(),
                &mut count,
            )
        };
        // SAFETY: the port name was given to us by task_name_for_pid above.
        unsafe { mach_port_deallocate(task_self(), port) };
        if kr != libc::KERN_SUCCESS {
            return Err(PinError::Failed(format!(
                "task_info(TASK_AUDIT_TOKEN) for pid {pid}: {kr}"
            )));
        }
        if token.val[AUDIT_TOKEN_PID] != pid {
            return Err(PinError::Failed(format!(
                "the audit token names pid {}, not {pid}",
                token.val[AUDIT_TOKEN_PID]
            )));
        }
        Ok(token)
    }

    fn send(&self, pin: &AuditToken, sig: Sig) -> Result<(), SendError> {
        let mut token = *pin;
        // SAFETY: token is a valid audit_token_t; the function only reads it.
        let rc = unsafe { (self.send)(&mut token, signo(sig)) };
        match rc {
            0 => Ok(()),
            libc::ESRCH => Err(SendError::NoSuchProcess),
            e => Err(SendError::Other(format!(
                "proc_signal_with_audittoken: {}",
                std::io::Error::from_raw_os_error(e)
            ))),
        }
    }
}

/// Before macOS 14.2: re-read (done by the policy) and `kill(2)` at once.
pub struct KillOps;

impl SignalOps for KillOps {
    type Pin = c_int;

    fn pin(&self, pid: Pid) -> Result<c_int, PinError> {
        let raw = c_int::try_from(pid).map_err(|_| PinError::Failed(format!("bad pid {pid}")))?;
        if exists(raw) {
            Ok(raw)
        } else {
            Err(PinError::Gone)
        }
    }

    fn send(&self, pin: &c_int, sig: Sig) -> Result<(), SendError> {
        // SAFETY: kill has no memory preconditions.
        if unsafe { libc::kill(*pin, signo(sig)) } == 0 {
            return Ok(());
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ESRCH) => Err(SendError::NoSuchProcess),
            _ => Err(SendError::Other(format!(
                "kill: {}",
                std::io::Error::last_os_error()
            ))),
        }
    }
}

/// The signalling path [`signaller`] takes on this Mac. (NOT RUN: no Mac here.)
pub fn path() -> crate::model::doctor::SignalPath {
    match signal_with_token() {
        Some(_) => crate::model::doctor::SignalPath {
            name: "audit_token".into(),
            race_free: true,
            detail: "task_name_for_pid and task_info(TASK_AUDIT_TOKEN) pin the process; \
                     proc_signal_with_audittoken sends, and the kernel refuses it once the pid \
                     version changed"
                .into(),
        },
        None => crate::model::doctor::SignalPath {
            name: "kill".into(),
            race_free: false,
            detail: "proc_signal_with_audittoken is not in this macOS (dlsym found no such \
                     symbol; it came with macOS 14.2), so Pier re-reads the identity and calls \
                     kill(2) at once: a one-system-call window in which the pid could be reused"
                .into(),
        },
    }
}

/// The audit-token signaller where the system has it, the `kill(2)` fallback elsewhere.
pub fn signaller() -> Box<dyn Signaller + Send + Sync> {
    match signal_with_token() {
        Some(send) => Box::new(Verified {
            ops: TokenOps { send },
            probe: MacProbe::new(),
        }),
        None => Box::new(Verified {
            ops: KillOps,
            probe: MacProbe::new(),
        }),
    }
}

/// The exit waiter: one kqueue, a `NOTE_EXIT` event per member, and the probe that tells
/// whether a registered pid still holds the member.
#[derive(Default)]
pub struct KqueueWaiter {
    probe: MacProbe,
}

impl ExitWaiter for KqueueWaiter {
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
        let mut exited = vec![false; members.len()];
        // SAFETY: kqueue has no preconditions; the fd is closed below.
        let kq = unsafe { libc::kqueue() };
        if kq < 0 {
            return exited;
        }
        register(kq, members, &mut exited);
        self.mark_replaced(members, &mut exited);
        let end = Instant::now() + timeout;
        let mut next_glance = Instant::now().checked_add(every);
        while exited.iter().any(|e| !e) {
            if next_glance.is_some_and(|at| Instant::now() >= at) {
                if !glance() {
                    break;
                }
                next_glance = Instant::now().checked_add(every);
            }
            let now = Instant::now();
            let left = end.saturating_duration_since(now);
            if left.is_zero() {
                break;
            }
            let left = next_glance.map_or(left, |at| left.min(at.saturating_duration_since(now)));
            match next_event(kq, left) {
                Event::Exit(i) => {
                    if let Some(e) = exited.get_mut(i) {
                        *e = true;
                    }
                }
                Event::Nothing => {}
                Event::Failed => break,
            }
        }
        // SAFETY: kq is ours.
        unsafe { libc::close(kq) };
        glance();
        exited
    }
}

impl KqueueWaiter {
    /// Registered by bare pid: if the pid already holds a newcomer, the event watches it, and
    /// ours has exited. Checked after registering, so an exit in between is caught either
    /// way. (Type-checked only: no Mac here.)
    fn mark_replaced(&self, members: &[Expected], exited: &mut [bool]) {
        for (i, m) in members.iter().enumerate() {
            match self.probe.identity(m.identity.pid) {
                IdentityRead::Gone => exited[i] = true,
                IdentityRead::Alive { identity, .. } if identity != m.identity => {
                    exited[i] = true;
                }
                _ => {}
            }
        }
    }
}

/// Registers a `NOTE_EXIT` event per member on `kq`, its index as the event's data; one whose
/// pid is already gone is marked exited.
fn register(kq: c_int, members: &[Expected], exited: &mut [bool]) {
    for (i, m) in members.iter().enumerate() {
        // SAFETY: kevent is plain old data; all-zero is valid.
        let mut ev: libc::kevent = unsafe { std::mem::zeroed() };
        ev.ident = m.identity.pid as libc::uintptr_t;
        ev.filter = libc::EVFILT_PROC;
        ev.flags = libc::EV_ADD | libc::EV_ONESHOT;
        ev.fflags = libc::NOTE_EXIT;
        ev.udata = i as *mut libc::c_void;
        // SAFETY: one change in, none out.
        let rc = unsafe { libc::kevent(kq, &ev, 1, std::ptr::null_mut(), 0, std::ptr::null()) };
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
            exited[i] = true;
        }
    }
}

/// What one wait on the kqueue gave.
enum Event {
    /// The member of this index exited.
    Exit(usize),
    /// The time ran out, or a signal interrupted the wait.
    Nothing,
    /// The kqueue failed: waiting on would not end any sooner.
    Failed,
}

/// Waits on `kq` for one event, `left` at most.
fn next_event(kq: c_int, left: Duration) -> Event {
    let ts = libc::timespec {
        tv_sec: left.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(left.subsec_nanos() as i32),
    };
    // SAFETY: plain old data; all-zero is valid.
    let mut out: libc::kevent = unsafe { std::mem::zeroed() };
    // SAFETY: room for one event out; no changes in.
    let n = unsafe { libc::kevent(kq, std::ptr::null(), 0, &mut out, 1, &ts) };
    if n > 0 {
        Event::Exit(out.udata as usize)
    } else if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
        Event::Failed
    } else {
        Event::Nothing
    }
}

// Layouts pinned at compile time, as `probe/darwin_layout.rs` pins the probe's: what this file
// hands to the kernel, against the XNU headers, evaluated by the macOS type-check.
mod layout {
    use std::mem::{offset_of, size_of};

    use super::{AuditToken, AUDIT_TOKEN_PID, TASK_AUDIT_TOKEN, TASK_AUDIT_TOKEN_COUNT};

    // XNU osfmk/mach/message.h `audit_token_t`: `unsigned int val[8]`; bsd/kern/kern_prot.c
    // `proc_calc_audit_token` puts the pid in `val[5]` and the pid version in `val[7]`.
    const _: () = assert!(size_of::<AuditToken>() == 32);
    const _: () = assert!(offset_of!(AuditToken, val) == 0);
    const _: fn(&AuditToken) -> &[u32; 8] = |t| &t.val;
    const _: () = assert!(AUDIT_TOKEN_PID == 5);
    // XNU osfmk/mach/task_info.h `TASK_AUDIT_TOKEN` (15) and `TASK_AUDIT_TOKEN_COUNT`
    // (`sizeof(audit_token_t) / sizeof(natural_t)`).
    const _: () = assert!(TASK_AUDIT_TOKEN == 15);
    const _: () = assert!(
        TASK_AUDIT_TOKEN_COUNT as usize == size_of::<AuditToken>() / size_of::<libc::natural_t>()
    );
    // XNU osfmk/mach/kern_return.h `KERN_SUCCESS`.
    const _: () = assert!(libc::KERN_SUCCESS == 0);

    // XNU bsd/sys/event.h `struct kevent`, declared under `#pragma pack(4)`: `ident`
    // (`uintptr_t`), `filter` (`int16_t`), `flags` (`uint16_t`), `fflags` (`uint32_t`), `data`
    // (`intptr_t`), `udata` (`void *`).
    const _: () = assert!(size_of::<libc::kevent>() == 32);
    const _: () = assert!(offset_of!(libc::kevent, ident) == 0);
    const _: () = assert!(offset_of!(libc::kevent, filter) == 8);
    const _: () = assert!(offset_of!(libc::kevent, flags) == 10);
    const _: () = assert!(offset_of!(libc::kevent, fflags) == 12);
    const _: () = assert!(offset_of!(libc::kevent, data) == 16);
    const _: () = assert!(offset_of!(libc::kevent, udata) == 24);
    const _: fn(&libc::kevent) -> &i16 = |e| &e.filter;
    const _: fn(&libc::kevent) -> &u16 = |e| &e.flags;
    const _: fn(&libc::kevent) -> &u32 = |e| &e.fflags;
    // XNU bsd/sys/event.h `EVFILT_PROC`, `EV_ADD`, `EV_ONESHOT`, `NOTE_EXIT`.
    const _: () = assert!(libc::EVFILT_PROC == -5);
    const _: () = assert!(libc::EV_ADD == 0x1);
    const _: () = assert!(libc::EV_ONESHOT == 0x10);
    const _: () = assert!(libc::NOTE_EXIT == 0x8000_0000);

    // XNU bsd/sys/signal.h and bsd/sys/errno.h: the signals sent, the errnos told apart.
    const _: () = assert!(libc::SIGTERM == 15);
    const _: () = assert!(libc::SIGKILL == 9);
    const _: () = assert!(libc::ESRCH == 3);
    const _: () = assert!(libc::EINTR == 4);
}
