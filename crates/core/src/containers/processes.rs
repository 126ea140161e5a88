//! The container engines' own processes, by name, and a container's processes, by their cgroup
//! (docs/design.md §2.8). The engine's are protected: never a candidate, never signalled, Force
//! included; stopping one stops every container it serves, or cuts their ports, and users of
//! port killers report exactly that. A container's are never candidates: they are its engine's
//! to stop.

/// The engines' processes, as their programs are named:
/// - Docker Engine: `dockerd`, `containerd`, `containerd-shim-runc-v2` (one per container),
///   `docker-proxy` (one per published port, when the userland proxy is on);
/// - rootless Docker and Podman: `dockerd-rootless.sh`, `rootlesskit`, `rootlessport`,
///   `slirp4netns`, `pasta`, `conmon` (Podman's monitor, one per container), `catatonit`
///   (Podman's pause process and init), `podman`;
/// - Podman's macOS machine: `gvproxy` (its port forwarder), `vfkit`, `krunkit`;
/// - Docker Desktop (macOS): `com.docker.backend`, `com.docker.vpnkit`, `com.docker.virtualization`,
///   `Docker Desktop`;
/// - OrbStack (macOS): `OrbStack`, `OrbStack Helper`, `orbstack`, `orbstack-helper`.
///
/// Seen running here: Debian's dockerd, containerd, containerd-shim-runc-v2 and docker-proxy.
/// The others are from their projects' documentation, not run.
const ENGINE_PROGRAMS: &[&str] = &[
    "dockerd",
    "containerd",
    "containerd-shim",
    "containerd-shim-runc-v1",
    "containerd-shim-runc-v2",
    "docker-proxy",
    "rootlesskit",
    "rootlessport",
    "slirp4netns",
    "pasta",
    "conmon",
    "catatonit",
    "podman",
    "dockerd-rootless.sh",
    "gvproxy",
    "vfkit",
    "krunkit",
    "com.docker.backend",
    "com.docker.vpnkit",
    "com.docker.virtualization",
    "Docker Desktop",
    "OrbStack",
    "OrbStack Helper",
    "orbstack",
    "orbstack-helper",
];

/// The kernel cuts a process's short name: Linux keeps 15 bytes (`TASK_COMM_LEN` − 1), macOS
/// 16 (`MAXCOMLEN`). A name that long may be the start of a longer program's.
const SHORTEST_CUT_NAME: usize = 15;

/// The engine program `comm` or `argv[0]` names, if any: its file name exactly, or a short
/// name the kernel cut from one (`containerd-shim` from `containerd-shim-runc-v2`,
/// `com.docker.backe` from `com.docker.backend`).
///
/// Why by name: the engine's processes run as root (docker-proxy, containerd) or inside a VM
/// helper, where a user cannot read more of them; and a name can be borrowed by anyone, which
/// only ever protects a process that did not need it, never exposes one that did.
pub fn engine_program(comm: &str, argv: &[Vec<u8>]) -> Option<&'static str> {
    let argv0 = argv
        .first()
        .map(|a| String::from_utf8_lossy(a.rsplit(|&b| b == b'/').next().unwrap_or(a)));
    ENGINE_PROGRAMS.iter().copied().find(|&name| {
        comm == name
            || argv0.as_deref() == Some(name)
            || (comm.len() >= SHORTEST_CUT_NAME && name.starts_with(comm))
    })
}

/// The container id in a process's cgroup path, if the process runs in a container: a path
/// component that is a 64-hex-digit id, bare or as the engines and runtimes name their scopes
/// — Docker's `/docker/<id>` (cgroup v1 and v2 with the cgroupfs driver) and
/// `docker-<id>.scope` (systemd driver, rootless too), Podman's `libpod-<id>.scope`,
/// containerd's and CRI-O's `cri-containerd-<id>.scope`, `crio-<id>.scope`, Kubernetes'
/// `/kubepods/…/<id>`.
///
/// Why: a container's processes are its engine's to stop. Run by root (rootful Docker, to
/// Pier as root) or by the user (rootless Podman), they are never candidates of their own;
/// their listeners are their container's (a host-network container's are host listeners).
pub fn container_of_cgroup(cgroup: &str) -> Option<&str> {
    cgroup.split('/').find_map(|part| {
        let part = part.strip_suffix(".scope").unwrap_or(part);
        let id = part.rsplit('-').next().unwrap_or(part);
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_s_cgroup_names_its_id_whatever_the_engine() {
        let id = "cac68f7bb0f081d64600761236a20c9ad9a367ab2b70ef781632b89591b389ee";
        for path in [
            format!("/docker/{id}"),
            format!("/system.slice/docker-{id}.scope"),
            format!("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{id}.scope/container"),
            format!("/kubepods.slice/kubepods-besteffort.slice/cri-containerd-{id}.scope"),
            format!("/kubepods/besteffort/pod1234/{id}"),
        ] {
            assert_eq!(container_of_cgroup(&path), Some(id), "{path}");
        }
        for path in [
            "/",
            "/user.slice/user-1000.slice/session-2.scope",
            "/system.slice/docker.service",
            // 63 digits: not an id.
            "/docker/ac68f7bb0f081d64600761236a20c9ad9a367ab2b70ef781632b89591b389ee",
        ] {
            assert_eq!(container_of_cgroup(path), None, "{path}");
        }
    }

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn the_engines_processes_are_named_by_comm_by_a_cut_comm_or_by_argv0() {
        let proxy = argv(&["/usr/sbin/docker-proxy", "-proto", "tcp"]);
        assert_eq!(engine_program("docker-proxy", &proxy), Some("docker-proxy"));
        // comm as the kernel cut it, argv unread.
        assert_eq!(
            engine_program("containerd-shim", &[]),
            Some("containerd-shim")
        );
        assert_eq!(
            engine_program("com.docker.backe", &[]),
            Some("com.docker.backend")
        );
        // A renamed thread keeps its program in argv[0].
        let shim = argv(&["/usr/bin/containerd-shim-runc-v2", "-namespace", "moby"]);
        assert_eq!(
            engine_program("runc", &shim),
            Some("containerd-shim-runc-v2")
        );
        assert_eq!(
            engine_program("OrbStack Helper", &[]),
            Some("OrbStack Helper")
        );
    }

    #[test]
    fn dev_tools_and_short_prefixes_are_not_the_engine() {
        for (comm, words) in [
            ("node", vec!["node", "vite"]),
            ("python3", vec!["python3", "-m", "http.server"]),
            // A short name is a whole name: "docker" (the CLI) and "dock" are not dockerd.
            ("docker", vec!["docker", "compose", "up"]),
            ("dock", vec!["dock"]),
            ("pas", vec!["pas"]),
        ] {
            assert_eq!(engine_program(comm, &argv(&words)), None, "{comm}");
        }
    }
}
