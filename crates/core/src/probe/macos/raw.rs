//! The raw buffers the macOS probe decodes, for `pier doctor --dump`: the kernel's own bytes
//! for one process, so a first run on a Mac gives the decoders real fixtures.
//!
//! NOT RUN: no Mac is available to this project; type-checked for `aarch64-apple-darwin`.

use std::mem::size_of;

use super::{
    bsd_info, failed, list_fds, procargs_bytes, rusage, socket_fdinfo_bytes, task_all_info,
    vnode_fdinfo, vnode_path_info, Pid, ProbeError, Read,
};

/// The bytes of a plain-old-data kernel struct, for `pier doctor --dump`.
fn bytes_of<T: Copy>(value: &T) -> Vec<u8> {
    // SAFETY: T is one of the kernel's plain C structs, fully initialised (zeroed, then
    // written by the kernel); reading its bytes is always valid.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

/// A libproc answer as bytes, or why there are none.
fn answer<T>(
    what: &str,
    pid: Pid,
    read: Read<T>,
    bytes: impl Fn(&T) -> Vec<u8>,
) -> Result<Vec<u8>, ProbeError> {
    match read {
        Read::Ok(value) => Ok(bytes(&value)),
        Read::Gone => Err(ProbeError::Reading {
            what: what.to_owned(),
            error: Box::new(ProbeError::Gone(pid)),
        }),
        Read::Failed(e) => Err(failed(what.to_owned(), e)),
    }
}

/// The raw buffers the probe decodes for `pid` (`pier doctor --dump`): `KERN_PROCARGS2`, the
/// vnode path info (cwd), the BSD info, the BSD and task info a row reads, the rusage record,
/// each socket fd's `socket_fdinfo`, and each file fd's `vnode_fdinfowithpath` (what
/// `Probe::writes` reads). (NOT RUN: no Mac here.)
pub(in crate::probe) fn raw_buffers(pid: Pid) -> Vec<(String, Result<Vec<u8>, ProbeError>)> {
    let mut out = vec![
        ("kern-procargs2".to_owned(), procargs_bytes(pid)),
        (
            "proc-vnodepathinfo".to_owned(),
            vnode_path_info(pid).map(|info| bytes_of(&info)),
        ),
        (
            "proc-bsdinfo".to_owned(),
            answer("PROC_PIDTBSDINFO", pid, bsd_info(pid), bytes_of),
        ),
        (
            "proc-taskallinfo".to_owned(),
            answer("PROC_PIDTASKALLINFO", pid, task_all_info(pid), bytes_of),
        ),
        (
            "rusage-info-v2".to_owned(),
            answer("proc_pid_rusage", pid, rusage(pid), bytes_of),
        ),
    ];
    match list_fds(pid) {
        Read::Ok(fds) => {
            let sockets = fds
                .iter()
                .filter(|f| f.proc_fdtype == libc::PROX_FDTYPE_SOCKET as u32);
            for fd in sockets {
                let read = socket_fdinfo_bytes(pid, fd.proc_fd);
                out.push((
                    format!("socket-fdinfo-fd{}", fd.proc_fd),
                    answer("PROC_PIDFDSOCKETINFO", pid, read, Vec::clone),
                ));
            }
            let files = fds
                .iter()
                .filter(|f| f.proc_fdtype == libc::PROX_FDTYPE_VNODE as u32);
            for fd in files {
                let read = vnode_fdinfo(pid, fd.proc_fd);
                out.push((
                    format!("vnode-fdinfowithpath-fd{}", fd.proc_fd),
                    answer("PROC_PIDFDVNODEPATHINFO", pid, read, bytes_of),
                ));
            }
        }
        other => out.push((
            "fds".to_owned(),
            answer("PROC_PIDLISTFDS", pid, other, |_| Vec::new()),
        )),
    }
    out
}
