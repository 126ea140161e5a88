//! The raw buffers the probe decodes for one process, as the OS hands them over, for
//! `pier doctor --dump` (fixtures from a real machine). Linux: the `/proc` files; macOS: the
//! `sysctl` and `libproc` answers (`macos::raw_buffers`).

use super::{Pid, ProbeError};

/// Each buffer's name (a file name without extension) and its bytes, or why it could not be
/// read.
pub fn buffers(pid: Pid) -> Vec<(String, Result<Vec<u8>, ProbeError>)> {
    #[cfg(target_os = "linux")]
    {
        // Not `net/tcp`: it lists every socket of the namespace, the user's too.
        ["cmdline", "environ", "stat", "status"]
            .iter()
            .map(|f| {
                let path = format!("/proc/{pid}/{f}");
                (
                    format!("proc-{f}"),
                    std::fs::read(&path).map_err(|e| ProbeError::read(path, e)),
                )
            })
            .collect()
    }
    #[cfg(target_os = "macos")]
    {
        super::macos::raw_buffers(pid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = pid;
        Vec::new()
    }
}
