//! Layouts pinned at compile time: every struct the macOS probe hands to the kernel or reads
//! back, and every constant it passes, checked against the XNU headers (xnu-11417.101.15) by
//! `const` assertions. Nothing here runs: the checks are evaluated by the compiler, so the
//! macOS type-check CI already runs (`cargo clippy --target aarch64-apple-darwin`) fails when
//! the libc or libproc crate — or the offsets `darwin.rs` decodes raw bytes with — disagree
//! with the kernel's layout. Each expected number is worked out from the cited header, not
//! taken from a crate; the crates are what is being checked. The signaller's audit token and
//! `kevent` are pinned at the bottom of `signal/macos.rs`, beside the code that uses them.
//!
//! Only the fields Pier reads are pinned (sizes, offsets, and field types where a wrong
//! width would be read silently); fields it never reads may differ in name (libproc calls
//! `fi_guardflags` `rfu_1`) without harm.

use std::ffi::{c_char, c_int, c_short};
use std::mem::{offset_of, size_of};

use libproc::kinfo::{KinfoProc, Timeval};
use libproc::net_info::{
    InSIAddr, InSockInfo, ProcFileInfo, SocketFDInfo, SocketInfo, SocketInfoKind, SocketInfoProto,
    TcpSIState, TcpSockInfo, UnSIAddr, UnSockInfo,
};

use super::darwin::{self, socket_fdinfo as sofd};
use super::macos;

/// `size!(Type, N)`: `sizeof(Type) == N`.
macro_rules! size {
    ($t:ty, $n:expr) => {
        const _: () = assert!(
            size_of::<$t>() == $n,
            concat!("XNU's ", stringify!($t), " is ", stringify!($n), " bytes")
        );
    };
}

/// `offset!(Type, field.path, N)`: the field starts `N` bytes into `Type`.
macro_rules! offset {
    ($t:ty, $($f:ident).+, $n:expr) => {
        const _: () = assert!(
            offset_of!($t, $($f).+) == $n,
            concat!(
                "XNU puts ", stringify!($t), ".", stringify!($($f).+),
                " at byte ", stringify!($n)
            )
        );
    };
}

/// `field!(Type, field, FieldType)`: the field is declared with the header's C type, so a
/// read of it has the kernel's width and signedness.
macro_rules! field {
    ($t:ty, $f:ident, $ft:ty) => {
        const _: fn(&$t) -> &$ft = |s| &s.$f;
    };
}

/// `same!(a, b)`: a constant or offset as Pier or a crate spells it equals the header's value,
/// or the same thing as the other spells it.
macro_rules! same {
    ($a:expr, $b:expr) => {
        const _: () = assert!(
            $a == $b,
            concat!(stringify!($a), " disagrees with ", stringify!($b))
        );
    };
}

// Every Mac Pier builds for (arm64, x86_64) is a 64-bit little-endian machine; the offsets
// below are the LP64 ones, and the decoders read the kernel's bytes in this machine's order.
const _: () = assert!(cfg!(target_endian = "little") && cfg!(target_pointer_width = "64"));

// XNU bsd/sys/param.h `MAXCOMLEN` (16), `MAXPATHLEN` (= `PATH_MAX`, bsd/sys/syslimits.h: 1024).
same!(libc::MAXCOMLEN, 16);
const MAXPATHLEN: usize = 1024;

// ---- XNU bsd/sys/proc_info.h `struct proc_bsdinfo` (proc_pidinfo PROC_PIDTBSDINFO) ----
// Twelve 32-bit words, `pbi_comm[MAXCOMLEN]`, `pbi_name[2 * MAXCOMLEN]`, six 32-bit words,
// two `uint64_t`.
size!(libc::proc_bsdinfo, 136);
offset!(libc::proc_bsdinfo, pbi_flags, 0);
offset!(libc::proc_bsdinfo, pbi_status, 4);
offset!(libc::proc_bsdinfo, pbi_ppid, 16);
offset!(libc::proc_bsdinfo, pbi_uid, 20);
offset!(libc::proc_bsdinfo, pbi_comm, 48);
offset!(libc::proc_bsdinfo, pbi_nfiles, 96);
offset!(libc::proc_bsdinfo, e_tdev, 108);
offset!(libc::proc_bsdinfo, pbi_start_tvsec, 120);
offset!(libc::proc_bsdinfo, pbi_start_tvusec, 128);
field!(libc::proc_bsdinfo, pbi_flags, u32);
field!(libc::proc_bsdinfo, pbi_status, u32);
field!(libc::proc_bsdinfo, pbi_ppid, u32);
field!(libc::proc_bsdinfo, pbi_uid, u32);
field!(libc::proc_bsdinfo, pbi_comm, [c_char; libc::MAXCOMLEN]);
field!(libc::proc_bsdinfo, pbi_nfiles, u32);
field!(libc::proc_bsdinfo, e_tdev, u32);
field!(libc::proc_bsdinfo, pbi_start_tvsec, u64);
field!(libc::proc_bsdinfo, pbi_start_tvusec, u64);

// ---- XNU bsd/sys/proc_info.h `struct proc_taskinfo`, `struct proc_taskallinfo`
// (proc_pidinfo PROC_PIDTASKALLINFO) ----
// `proc_taskinfo`: six `uint64_t` (virtual and resident size, the task's total user and
// system time, its live threads' user and system time), then twelve `int32_t`: 96 bytes.
// `proc_taskallinfo`: `pbsd` (the 136-byte `proc_bsdinfo` above, 8-aligned), then `ptinfo`.
size!(libc::proc_taskinfo, 6 * 8 + 12 * 4);
offset!(libc::proc_taskinfo, pti_total_user, 16);
offset!(libc::proc_taskinfo, pti_total_system, 24);
field!(libc::proc_taskinfo, pti_total_user, u64);
field!(libc::proc_taskinfo, pti_total_system, u64);
// After the six `uint64_t`, twelve `int32_t`: policy, faults, pageins, cow_faults,
// messages_sent, messages_received, then syscalls_mach (byte 72) and syscalls_unix (76).
offset!(libc::proc_taskinfo, pti_syscalls_mach, 72);
offset!(libc::proc_taskinfo, pti_syscalls_unix, 76);
field!(libc::proc_taskinfo, pti_syscalls_mach, i32);
field!(libc::proc_taskinfo, pti_syscalls_unix, i32);
same!(libc::PROC_PIDTASKINFO, 4);
size!(libc::proc_taskallinfo, 136 + 96);
offset!(libc::proc_taskallinfo, pbsd, 0);
offset!(libc::proc_taskallinfo, ptinfo, 136);
field!(libc::proc_taskallinfo, pbsd, libc::proc_bsdinfo);
field!(libc::proc_taskallinfo, ptinfo, libc::proc_taskinfo);

// ---- XNU bsd/sys/proc_info.h `struct proc_vnodepathinfo` (PROC_PIDVNODEPATHINFO) ----
// `struct vnode_info_path` = `struct vnode_info` (`struct vinfo_stat`: 136, `vi_type`,
// `vi_pad`, `fsid_t`: 152) + `vip_path[MAXPATHLEN]`; the cwd is `pvi_cdir`, the first.
size!(libc::vnode_info, 152);
size!(libc::vnode_info_path, 152 + MAXPATHLEN);
size!(libc::proc_vnodepathinfo, 2 * (152 + MAXPATHLEN));
offset!(libc::proc_vnodepathinfo, pvi_cdir.vip_path, 152);
// The libc crate splits the 1024 chars into 32 rows of 32; macos.rs flattens them.
field!(libc::vnode_info_path, vip_path, [[c_char; 32]; 32]);

// ---- XNU bsd/sys/proc_info.h `struct proc_fdinfo` (PROC_PIDLISTFDS) ----
size!(libc::proc_fdinfo, 8);
same!(libc::PROC_PIDLISTFD_SIZE, 8);
offset!(libc::proc_fdinfo, proc_fd, 0);
offset!(libc::proc_fdinfo, proc_fdtype, 4);
field!(libc::proc_fdinfo, proc_fd, i32);
field!(libc::proc_fdinfo, proc_fdtype, u32);

// ---- XNU bsd/sys/proc_info.h `struct socket_fdinfo` (proc_pidfdinfo PROC_PIDFDSOCKETINFO) ----
// `pfi` (`struct proc_fileinfo`: 24) then `psi` (`struct socket_info`: `struct vinfo_stat`
// 136, two `uint64_t`, three `int`, eight `short`s, `uint32_t`, two `struct sockbuf_info` of
// 24, `soi_kind`, `rfu_1`, then the `soi_proto` union, whose largest arm is
// `struct un_sockinfo`: two `uint64_t` and two 255-byte address unions, 528 with padding).
size!(ProcFileInfo, 24);
size!(InSockInfo, 80);
size!(TcpSockInfo, 120);
size!(SocketInfoProto, 528);
size!(SocketInfo, 768);
size!(SocketFDInfo, 792);
offset!(SocketFDInfo, psi, 24);
offset!(SocketInfo, soi_so, 136);
offset!(SocketInfo, soi_qlen, 170);
offset!(SocketInfo, soi_incqlen, 172);
offset!(SocketInfo, soi_kind, 232);
offset!(SocketInfo, soi_proto, 240);
offset!(TcpSockInfo, tcpsi_state, 80);
offset!(InSockInfo, insi_vflag, 24);
offset!(InSockInfo, insi_faddr, 32);
offset!(InSockInfo, insi_laddr, 48);
// The union of `struct in4in6_addr` (`i46a_pad32[3]`, then the IPv4 address) and
// `struct in6_addr`: 16 bytes, an IPv4 address in the last 4.
size!(InSIAddr, 16);
field!(SocketInfo, soi_so, u64);
field!(SocketInfo, soi_qlen, c_short);
field!(SocketInfo, soi_incqlen, c_short);
field!(SocketInfo, soi_kind, c_int);
field!(TcpSockInfo, tcpsi_state, c_int);
field!(InSockInfo, insi_fport, c_int);
field!(InSockInfo, insi_lport, c_int);
field!(InSockInfo, insi_vflag, u8);

// The offsets `darwin::decode_socket_fdinfo` reads raw bytes at are those of the same fields
// in libproc's mirror of the struct (itself checked against the header's numbers above).
same!(sofd::SIZE, size_of::<SocketFDInfo>());
same!(sofd::PSI, offset_of!(SocketFDInfo, psi));
same!(sofd::SOI_SO, offset_of!(SocketFDInfo, psi.soi_so));
same!(sofd::SOI_QLEN, offset_of!(SocketFDInfo, psi.soi_qlen));
same!(sofd::SOI_INCQLEN, offset_of!(SocketFDInfo, psi.soi_incqlen));
same!(sofd::SOI_KIND, offset_of!(SocketFDInfo, psi.soi_kind));
same!(sofd::SOI_PROTO, offset_of!(SocketFDInfo, psi.soi_proto));
same!(
    sofd::INSI_FPORT,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_ini.insi_fport)
);
same!(
    sofd::INSI_LPORT,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_ini.insi_lport)
);
same!(
    sofd::INSI_VFLAG,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_ini.insi_vflag)
);
same!(
    sofd::INSI_FADDR,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_ini.insi_faddr)
);
same!(
    sofd::INSI_LADDR,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_ini.insi_laddr)
);
same!(
    sofd::TCPSI_STATE,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_tcp.tcpsi_state)
);
// ---- `pri_un` (`struct un_sockinfo`): `unsi_conn_so`, `unsi_conn_pcb` (8 bytes each),
// `unsi_addr` and `unsi_caddr` (each a `sockaddr_un` in a `SOCK_MAXADDRLEN` (255) union);
// `sockaddr_un`: `sun_len`, `sun_family`, `sun_path[104]`. `soi_type` and `soi_options`
// follow `soi_so`/`soi_pcb` (8 each) and `soi_type`/`soi_protocol`/`soi_family` (4 each).
offset!(UnSockInfo, unsi_conn_so, 0);
offset!(UnSockInfo, unsi_addr, 16);
size!(UnSIAddr, 255);
size!(libc::sockaddr_un, 106);
offset!(libc::sockaddr_un, sun_path, 2);
field!(UnSockInfo, unsi_conn_so, u64);
field!(SocketInfo, soi_type, c_int);
field!(SocketInfo, soi_options, c_short);
offset!(SocketInfo, soi_type, 152);
offset!(SocketInfo, soi_options, 164);
same!(
    darwin::unix::SOI_TYPE,
    offset_of!(SocketFDInfo, psi.soi_type)
);
same!(
    darwin::unix::SOI_OPTIONS,
    offset_of!(SocketFDInfo, psi.soi_options)
);
same!(
    darwin::unix::UNSI_CONN_SO,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_un.unsi_conn_so)
);
same!(
    darwin::unix::UNSI_ADDR,
    offset_of!(SocketFDInfo, psi.soi_proto.pri_un.unsi_addr)
);
same!(darwin::unix::SOCKINFO_UN, 3);
same!(SocketInfoKind::Un as c_int, darwin::unix::SOCKINFO_UN);
same!(libc::SO_ACCEPTCONN as i16, darwin::unix::SO_ACCEPTCONN);

// `pri_tcp` and `pri_in` share the union's start: a TCP socket's `in_sockinfo` is where
// `fill_socketinfo` (XNU bsd/kern/socket_info.c) wrote it as `pri_in` before adding the TCP part.
same!(
    offset_of!(SocketInfoProto, pri_tcp),
    offset_of!(SocketInfoProto, pri_in)
);

// ---- XNU bsd/sys/proc_info.h `struct vnode_fdinfowithpath` (PROC_PIDFDVNODEPATHINFO) ----
// `pfi` (`struct proc_fileinfo`: two `uint32_t`, `off_t`, `int32_t`, `uint32_t`: 24) then
// `pvip` (`struct vnode_info_path`, 152 + MAXPATHLEN, as above); `vi_type` follows the 136
// bytes of `struct vinfo_stat`, whose `vst_nlink` is a `uint16_t` after `vst_dev` and
// `vst_mode`.
size!(macos::ProcFileInfo, 24);
size!(macos::ProcFileInfo, size_of::<ProcFileInfo>());
offset!(macos::ProcFileInfo, fi_openflags, 0);
same!(
    offset_of!(macos::ProcFileInfo, fi_openflags),
    offset_of!(ProcFileInfo, fi_openflags)
);
field!(macos::ProcFileInfo, fi_openflags, u32);
size!(libc::vinfo_stat, 136);
offset!(libc::vinfo_stat, vst_nlink, 6);
field!(libc::vinfo_stat, vst_nlink, u16);
offset!(libc::vnode_info, vi_type, 136);
field!(libc::vnode_info, vi_type, c_int);
size!(macos::VnodeFdInfoWithPath, 24 + 152 + MAXPATHLEN);
offset!(macos::VnodeFdInfoWithPath, pvip, 24);
offset!(macos::VnodeFdInfoWithPath, pvip.vip_vi.vi_type, 24 + 136);
offset!(macos::VnodeFdInfoWithPath, pvip.vip_path, 24 + 152);

// ---- XNU bsd/sys/resource.h `struct rusage_info_v2` (proc_pid_rusage RUSAGE_INFO_V2) ----
// `ri_uuid[16]`, then eighteen `uint64_t`.
size!(libc::rusage_info_v2, 16 + 18 * 8);
offset!(libc::rusage_info_v2, ri_user_time, 16);
offset!(libc::rusage_info_v2, ri_system_time, 24);
offset!(libc::rusage_info_v2, ri_phys_footprint, 72);
offset!(libc::rusage_info_v2, ri_diskio_bytesread, 144);
offset!(libc::rusage_info_v2, ri_diskio_byteswritten, 152);
// After ri_phys_footprint (72): proc_start_abstime, proc_exit_abstime, then the children's
// user and system times.
offset!(libc::rusage_info_v2, ri_child_user_time, 96);
offset!(libc::rusage_info_v2, ri_child_system_time, 104);
field!(libc::rusage_info_v2, ri_child_user_time, u64);
field!(libc::rusage_info_v2, ri_child_system_time, u64);
field!(libc::rusage_info_v2, ri_user_time, u64);
field!(libc::rusage_info_v2, ri_system_time, u64);
field!(libc::rusage_info_v2, ri_phys_footprint, u64);
field!(libc::rusage_info_v2, ri_diskio_bytesread, u64);
field!(libc::rusage_info_v2, ri_diskio_byteswritten, u64);

// ---- XNU bsd/sys/sysctl.h `struct kinfo_proc` (sysctl CTL_KERN, KERN_PROC, KERN_PROC_PID) ----
// `kp_proc` is bsd/sys/proc.h `struct extern_proc` (296 bytes: `p_un` is a 16-byte union of
// two pointers and the start `struct timeval`; `p_stat` a `char` after two pointers and
// `p_flag`; `p_comm[MAXCOMLEN + 1]` after 240 bytes and three `u_char`s), then `kp_eproc`
// (`struct eproc`, 352: two pointers, `struct _pcred` 104, `struct _ucred` 76, the 8-aligned
// `struct vmspace` 64, then `e_ppid`).
size!(KinfoProc, 648);
offset!(KinfoProc, kp_proc.p_un, 0);
size!(Timeval, 16);
offset!(Timeval, tv_usec, 8);
offset!(KinfoProc, kp_proc.p_stat, 36);
offset!(KinfoProc, kp_proc.p_comm, 243);
offset!(KinfoProc, kp_eproc, 296);
offset!(KinfoProc, kp_eproc.e_ucred.cr_uid, 296 + 16 + 104 + 4);
offset!(KinfoProc, kp_eproc.e_ppid, 296 + 264);
const _: fn(&KinfoProc) -> &[i8; libc::MAXCOMLEN + 1] = |k| &k.kp_proc.p_comm;
const _: fn(&KinfoProc) -> &i8 = |k| &k.kp_proc.p_stat;
const _: fn(&KinfoProc) -> &i32 = |k| &k.kp_eproc.e_ppid;
const _: fn(&KinfoProc) -> &u32 = |k| &k.kp_eproc.e_ucred.cr_uid;
const _: fn(&Timeval) -> &i64 = |t| &t.tv_sec;
const _: fn(&Timeval) -> &i32 = |t| &t.tv_usec;

// ---- Constants ----
// XNU bsd/sys/proc_info.h: the proc_pidinfo flavors, proc_pidfdinfo flavor, fd type,
// proc_listpids kinds, flags and socket values Pier passes or compares.
same!(libc::PROC_PIDLISTFDS, 1);
same!(libc::PROC_PIDTASKALLINFO, 2);
// XNU `bsd/sys/_types/_clock_id.h` (the idle clock's two clocks): _CLOCK_MONOTONIC_RAW 4,
// _CLOCK_UPTIME_RAW 8.
same!(libc::CLOCK_MONOTONIC_RAW, 4);
same!(libc::CLOCK_UPTIME_RAW, 8);
same!(libc::PROC_PIDTBSDINFO, 3);
same!(libc::PROC_PIDVNODEPATHINFO, 9);
// `PROC_PIDPATHINFO_MAXSIZE` is `4*MAXPATHLEN`.
same!(libc::PROC_PIDPATHINFO_MAXSIZE as usize, 4 * MAXPATHLEN);
same!(macos::PROC_PIDFDSOCKETINFO, 3);
same!(
    libproc::file_info::PIDFDInfoFlavor::SocketInfo as c_int,
    macos::PROC_PIDFDSOCKETINFO
);
same!(libc::PROX_FDTYPE_SOCKET, 2);
same!(libc::PROX_FDTYPE_VNODE, 1);
same!(macos::PROC_PIDFDVNODEPATHINFO, 2);
same!(
    libproc::file_info::PIDFDInfoFlavor::VNodePathInfo as c_int,
    macos::PROC_PIDFDVNODEPATHINFO
);
// XNU bsd/sys/fcntl.h `FWRITE`; bsd/sys/vnode.h `enum vtype` (`VNON`, `VREG`, …).
same!(macos::FWRITE, 0x2);
same!(macos::VREG, 1);
same!(macos::PROC_ALL_PIDS, 1);
same!(macos::PROC_UID_ONLY, 4);
// `children` lists through libproc's `ProcFilter::ByParentProcess`, its `PROC_PPID_ONLY`.
same!(libproc::proc_pid::ProcType::ProcPPIDOnly as u32, 6);
same!(darwin::PROC_FLAG_CTTY, 0x40);
same!(darwin::SOCKINFO_TCP, 2);
same!(SocketInfoKind::Tcp as c_int, darwin::SOCKINFO_TCP);
same!(darwin::TSI_S_LISTEN, 1);
same!(darwin::TSI_S_SYN_RECEIVED, 3);
same!(darwin::TSI_S_ESTABLISHED, 4);
same!(TcpSIState::Listen as c_int, darwin::TSI_S_LISTEN);
same!(TcpSIState::SynReceived as c_int, darwin::TSI_S_SYN_RECEIVED);
same!(TcpSIState::Established as c_int, darwin::TSI_S_ESTABLISHED);
same!(darwin::INI_IPV4, 0x1);
same!(darwin::INI_IPV6, 0x2);
// XNU bsd/sys/proc.h `SZOMB`.
same!(macos::SZOMB, 5);
same!(libc::SZOMB, macos::SZOMB);
// XNU bsd/sys/param.h `NODEV`: `(dev_t)(-1)`, `dev_t` an `int32_t`, read from `e_tdev` as
// a `uint32_t`.
same!(darwin::NODEV, -1i32 as u32);
// XNU bsd/sys/resource.h `RUSAGE_INFO_V2`.
same!(libc::RUSAGE_INFO_V2, 2);
// XNU bsd/sys/sysctl.h: the MIB names of KERN_ARGMAX, KERN_PROCARGS2 and KERN_PROC_PID.
same!(libc::CTL_KERN, 1);
same!(libc::KERN_ARGMAX, 8);
same!(libc::KERN_PROCARGS2, 49);
same!(libc::KERN_PROC, 14);
same!(libc::KERN_PROC_PID, 1);
// XNU bsd/sys/errno.h: the errnos the probe tells apart.
same!(libc::ESRCH, 3);
same!(libc::EIO, 5);
same!(libc::EBADF, 9);
same!(libc::ENOENT, 2);
same!(libc::ENOTSOCK, 38);
same!(libc::EOVERFLOW, 84);
