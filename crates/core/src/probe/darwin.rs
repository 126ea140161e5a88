//! Pure decoders for the byte layouts the macOS probe reads, compiled on every platform so their
//! unit tests run on Linux (no Mac is available to the project's CI). Each takes plain values
//! or bytes as the kernel lays them out and returns what they mean; the FFI calls that fetch
//! them live in `macos.rs`.
//!
//! Sources: XNU `bsd/kern/kern_sysctl.c` (KERN_PROCARGS2), `bsd/sys/proc_info.h` (socket and
//! BSD info) with `bsd/kern/socket_info.c` (how socket info is filled), `osfmk` (Mach time),
//! as summarised in `docs/design.md` §7.3. The offsets are checked against the libc and
//! libproc crates' structs at compile time by `darwin_layout.rs` (macOS builds only).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::TcpState;

/// What `sysctl(KERN_PROCARGS2)` holds for one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcArgs {
    /// The path the process was exec'd from, as the kernel saved it.
    pub exec_path: Vec<u8>,
    /// Its `argc` arguments, exactly.
    pub argv: Vec<Vec<u8>>,
    /// Its environment as `KEY=value` strings, or why the buffer does not hold it whole.
    pub env: Result<Vec<Vec<u8>>, EnvGap>,
}

/// Why a `KERN_PROCARGS2` buffer holds no trustworthy environment. A restart replays the
/// recorded environment, so an environment that is not there must never read as an empty one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EnvGap {
    /// Nothing follows argv: the kernel cut the copy there (`omit_env_vars` in XNU
    /// `bsd/kern/kern_sysctl.c` `sysctl_procargsx`, for a code-signing-restricted target).
    #[error(
        "macOS withholds its environment (a code-signing-restricted process), so a restart \
         could not give it back"
    )]
    Withheld,
    /// Strings follow argv but no apple string ends them: the buffer was cut short, or the
    /// process wrote over its own strings area.
    #[error(
        "its environment could not be read whole (the kernel's buffer ends before the strings \
         that follow it)"
    )]
    CutShort,
}

/// Why a buffer the kernel wrote could not be decoded: its bytes do not have the layout XNU
/// gives it (cut short, or hostile). Never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A `KERN_PROCARGS2` buffer without its argument count.
    #[error("the buffer is shorter than its argument count")]
    NoArgumentCount,
    /// A `KERN_PROCARGS2` buffer whose argument count is below 0.
    #[error("negative argument count {0}")]
    NegativeArgumentCount(i32),
    /// A `KERN_PROCARGS2` buffer whose executable path has no NUL.
    #[error("the executable path is not terminated")]
    PathUnterminated,
    /// A `KERN_PROCARGS2` buffer that ends before its `argc` arguments do.
    #[error("argument {index} of {argc} is missing or unterminated")]
    ArgumentMissing {
        /// The first argument missing (from 0).
        index: usize,
        /// How many the buffer said it holds.
        argc: usize,
    },
    /// A `proc_listpids` answer below 0.
    #[error("proc_listpids answered {0}, not a length")]
    NotALength(i32),
    /// A `proc_listpids` answer of a ragged number of bytes.
    #[error("proc_listpids filled {0} bytes, not a whole number of pids")]
    Ragged(usize),
    /// A `proc_listpids` answer larger than its buffer.
    #[error("proc_listpids filled {filled} pids into a buffer of {room}")]
    Overfilled {
        /// The pids it said it filled.
        filled: usize,
        /// The pids the buffer holds.
        room: usize,
    },
    /// A `socket_fdinfo` of another size than the struct's.
    #[error(
        "the socket info is {0} bytes, not the {size} of a struct socket_fdinfo",
        size = socket_fdinfo::SIZE
    )]
    SocketInfoSize(usize),
    /// A `socket_fdinfo` that ends before a field does.
    #[error("the socket info ends before byte {0}")]
    SocketInfoEnds(usize),
}

/// Keys of the kernel's "apple strings", which follow the environment (after up to a word of
/// NUL padding: XNU `exec_extract_strings` aligns the end of argv + envv) and are not part of
/// it. `pfz=` is always the first one (`exec_add_apple_strings` in XNU `bsd/kern/kern_exec.c`,
/// from xnu-7195 to xnu-11417); the others are there in case a release reorders them.
///
/// `MallocNanoZone=` is left out on purpose: people set it themselves, and stopping at a
/// variable of theirs would drop every variable after it from a restart.
const APPLE_KEYS: &[&[u8]] = &[
    b"pfz=",
    b"subsystem_root_path=",
    b"MallocExperiment=",
    b"HardenedRuntime=",
    b"vm_force_4k_pages=",
    b"ptr_munge=",
    b"main_stack=",
    b"executable_file=",
    b"dyld_file=",
    b"executable_cdhash=",
    b"executable_boothash=",
    b"th_port=",
    b"arm64e_abi=",
    b"stack_guard=",
    b"malloc_entropy=",
    b"executable_path=",
    b"libsystem_file=",
    b"dyld_flags=",
];

/// Decodes a `KERN_PROCARGS2` buffer: a native-endian `i32` argc, the executable path, NUL
/// padding, `argc` NUL-terminated arguments, the environment, NUL padding, then the apple
/// strings. The environment is every non-empty string before the first apple string; when the
/// kernel withholds it, the buffer ends right after argv, and when no apple string comes at
/// all the environment cannot be trusted (`EnvGap`). Truncated or hostile buffers give an
/// error, never a panic.
pub fn parse_procargs2(buf: &[u8]) -> Result<ProcArgs, DecodeError> {
    let head: [u8; 4] = buf
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or(DecodeError::NoArgumentCount)?;
    let argc = i32::from_ne_bytes(head);
    let argc = usize::try_from(argc).map_err(|_| DecodeError::NegativeArgumentCount(argc))?;
    let mut rest = &buf[4..];
    let exec_path = take_string(&mut rest).ok_or(DecodeError::PathUnterminated)?;
    // The path is padded with NULs to a word boundary; skip them all.
    let pad = rest.iter().take_while(|&&b| b == 0).count();
    rest = &rest[pad..];
    let mut argv = Vec::with_capacity(argc.min(4096));
    for i in 0..argc {
        let arg = take_string(&mut rest).ok_or(DecodeError::ArgumentMissing { index: i, argc })?;
        argv.push(arg);
    }
    Ok(ProcArgs {
        exec_path,
        argv,
        env: environment(rest),
    })
}

/// The environment in what follows argv (see [`parse_procargs2`]).
fn environment(mut rest: &[u8]) -> Result<Vec<Vec<u8>>, EnvGap> {
    if rest.is_empty() {
        return Err(EnvGap::Withheld);
    }
    let mut env = Vec::new();
    while let Some(var) = take_string(&mut rest) {
        if APPLE_KEYS.iter().any(|k| var.starts_with(k)) {
            return Ok(env);
        }
        // The padding that aligns the end of the environment reads as empty strings.
        if !var.is_empty() {
            env.push(var);
        }
    }
    Err(EnvGap::CutShort)
}

/// What one `proc_listpids` call answered into a buffer of pids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The pids listed, in ascending order, each once; 0 (the kernel's own task) left out.
    Pids(Vec<u32>),
    /// The buffer was filled: the list may have been cut short (the kernel truncates it
    /// silently), so ask again with more room.
    Grow,
}

/// Decodes a `proc_listpids` answer: `buf` is the buffer passed, `returned` what the call
/// returned — the bytes it filled, a whole number of `int` pids (XNU `proc_listpids` in
/// `bsd/kern/proc_info.c`). A negative, ragged or oversized answer is an error, never a guess.
pub fn listed_pids(buf: &[i32], returned: i32) -> Result<Listing, DecodeError> {
    let bytes = usize::try_from(returned).map_err(|_| DecodeError::NotALength(returned))?;
    let size = std::mem::size_of::<i32>();
    if bytes % size != 0 {
        return Err(DecodeError::Ragged(bytes));
    }
    let n = bytes / size;
    if n > buf.len() {
        return Err(DecodeError::Overfilled {
            filled: n,
            room: buf.len(),
        });
    }
    if n == buf.len() {
        return Ok(Listing::Grow);
    }
    let mut pids: Vec<u32> = buf[..n]
        .iter()
        .filter_map(|&p| u32::try_from(p).ok())
        .filter(|&p| p != 0)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    Ok(Listing::Pids(pids))
}

/// Takes one NUL-terminated string off the front; `None` when there is no terminator.
fn take_string(rest: &mut &[u8]) -> Option<Vec<u8>> {
    let end = rest.iter().position(|&b| b == 0)?;
    let s = rest[..end].to_vec();
    *rest = &rest[end + 1..];
    Some(s)
}

/// The identity start time: `pbi_start_tvsec * 1_000_000 + pbi_start_tvusec` (µs since the
/// epoch). `None` on overflow (a corrupt record), which callers treat as unreadable.
pub fn start_time_us(tvsec: u64, tvusec: u64) -> Option<u64> {
    tvsec.checked_mul(1_000_000)?.checked_add(tvusec)
}

/// `e_tdev` when the process has no controlling terminal.
pub const NODEV: u32 = 0xFFFF_FFFF;
/// `PROC_FLAG_CTTY`: the process has a controlling tty (cleared when the session loses it).
pub const PROC_FLAG_CTTY: u32 = 0x40;

/// The controlling terminal as Linux's `tty_nr` would say it: 0 when there is none. macOS
/// leaves `PROC_FLAG_CONTROLT` set on survivors after the terminal goes away, so it is not
/// used; `e_tdev == NODEV` or a cleared `PROC_FLAG_CTTY` means "no terminal".
pub fn tty_nr(e_tdev: u32, pbi_flags: u32) -> u32 {
    if e_tdev == NODEV || pbi_flags & PROC_FLAG_CTTY == 0 {
        0
    } else {
        e_tdev
    }
}

/// `TSI_S_LISTEN` (XNU `bsd/sys/proc_info.h`): a `tcpsi_state` listening for connections.
pub const TSI_S_LISTEN: i32 = 1;
/// `TSI_S_SYN_RECEIVED` (XNU `bsd/sys/proc_info.h`): a `tcpsi_state` of a server's half-open
/// end. Such a socket sits in its listener's incomplete queue, held by no fd, so it is counted
/// there (`soi_incqlen`, inside `soi_qlen`); a row in this state is read all the same.
pub const TSI_S_SYN_RECEIVED: i32 = 3;
/// `TSI_S_ESTABLISHED` (XNU `bsd/sys/proc_info.h`): a `tcpsi_state` of an open connection.
pub const TSI_S_ESTABLISHED: i32 = 4;

/// `tcpsi_state` values Pier reads (`TSI_S_LISTEN`, `TSI_S_SYN_RECEIVED`,
/// `TSI_S_ESTABLISHED`).
pub fn tcp_state(tcpsi_state: i32) -> Option<TcpState> {
    match tcpsi_state {
        TSI_S_LISTEN => Some(TcpState::Listen),
        TSI_S_SYN_RECEIVED => Some(TcpState::SynRecv),
        TSI_S_ESTABLISHED => Some(TcpState::Established),
        _ => None,
    }
}

/// `insi_vflag` bits: the socket speaks IPv4, IPv6, or (a `[::]` listener) both.
pub const INI_IPV4: u8 = 0x1;
/// `insi_vflag` bit: the socket speaks IPv6 (set, with [`INI_IPV4`], on a `[::]` listener).
pub const INI_IPV6: u8 = 0x2;

/// One endpoint of an `in_sockinfo`: `addr` holds the 16 bytes of the `insi_laddr` /
/// `insi_faddr` union (an IPv4 address sits in its last 4 bytes, in network order) and
/// `port` the `insi_lport` / `insi_fport` int, whose low 16 bits are in network byte order.
pub fn endpoint(vflag: u8, addr: [u8; 16], port: i32) -> Option<SocketAddr> {
    let port = u16::from_be(port as u16);
    let ip = if vflag & INI_IPV6 != 0 {
        IpAddr::V6(Ipv6Addr::from(addr))
    } else if vflag & INI_IPV4 != 0 {
        IpAddr::V4(Ipv4Addr::new(addr[12], addr[13], addr[14], addr[15]))
    } else {
        return None;
    };
    Some(SocketAddr::new(ip, port))
}

/// Where the fields Pier reads sit in a `struct socket_fdinfo` (XNU `bsd/sys/proc_info.h`), in
/// bytes from its start, as the 64-bit kernel lays it out (arm64 and x86_64 alike). Worked out
/// from the header's field types; `darwin_layout.rs` asserts, on every macOS type-check, that
/// each equals the `offset_of!` of the same field in the libproc crate's `SocketFDInfo`, so the
/// decoder below, the crate and the header cannot drift apart unnoticed.
pub mod socket_fdinfo {
    /// `sizeof(struct socket_fdinfo)` (`PROC_PIDFDSOCKETINFO_SIZE`): `pfi` (24) + `psi` (768).
    pub const SIZE: usize = 792;
    /// `psi` (`struct socket_info`), after `pfi` (`struct proc_fileinfo`: `fi_openflags`,
    /// `fi_status`, the 8-byte `fi_offset`, `fi_type`, `fi_guardflags`).
    pub const PSI: usize = 24;
    /// `psi.soi_so` (`uint64_t`): the socket's opaque handle, after `soi_stat`
    /// (`struct vinfo_stat`, 136 bytes).
    pub const SOI_SO: usize = PSI + 136;
    /// `psi.soi_qlen` (`short`): connections in the accept queue, complete or not; after
    /// `soi_pcb`, `soi_type`, `soi_protocol`, `soi_family` and three shorts.
    pub const SOI_QLEN: usize = PSI + 170;
    /// `psi.soi_incqlen` (`short`): the incomplete (half-open) ones among them.
    pub const SOI_INCQLEN: usize = PSI + 172;
    /// `psi.soi_kind` (`int`): which arm of `soi_proto` the kernel filled (`SOCKINFO_*`),
    /// after `soi_oobmark` and two `struct sockbuf_info` (24 bytes each).
    pub const SOI_KIND: usize = PSI + 232;
    /// `psi.soi_proto` (the union), 8-aligned after `soi_kind` and `rfu_1`. Its `pri_tcp` arm
    /// (`struct tcp_sockinfo`) opens with `tcpsi_ini` (`struct in_sockinfo`), so the
    /// `insi_*` fields of a TCP socket sit at the union's start.
    pub const SOI_PROTO: usize = PSI + 240;
    /// `pri_tcp.tcpsi_ini.insi_fport` (`int`): the foreign port.
    pub const INSI_FPORT: usize = SOI_PROTO;
    /// `pri_tcp.tcpsi_ini.insi_lport` (`int`): the local port.
    pub const INSI_LPORT: usize = SOI_PROTO + 4;
    /// `pri_tcp.tcpsi_ini.insi_vflag` (`uint8_t`, `INI_IPV4` / `INI_IPV6`), after
    /// `insi_gencnt` (8 bytes), `insi_flags` and `insi_flow`.
    pub const INSI_VFLAG: usize = SOI_PROTO + 24;
    /// `pri_tcp.tcpsi_ini.insi_faddr` (16 bytes: `in4in6_addr` or `in6_addr`), after
    /// `insi_ip_ttl` and the 4-aligned `rfu_1`.
    pub const INSI_FADDR: usize = SOI_PROTO + 32;
    /// `pri_tcp.tcpsi_ini.insi_laddr` (16 bytes).
    pub const INSI_LADDR: usize = SOI_PROTO + 48;
    /// `pri_tcp.tcpsi_state` (`int`, `TSI_S_*`), after `tcpsi_ini` (80 bytes, its
    /// `insi_v4` and `insi_v6` included).
    pub const TCPSI_STATE: usize = SOI_PROTO + 80;
}

// Every field read lies inside the struct, so a buffer of `SIZE` bytes holds them all.
const _: () = assert!(socket_fdinfo::TCPSI_STATE + 4 <= socket_fdinfo::SIZE);
const _: () = assert!(socket_fdinfo::INSI_LADDR + 16 <= socket_fdinfo::SIZE);

/// `SOCKINFO_TCP` (XNU `bsd/sys/proc_info.h`): a `soi_kind` whose `soi_proto` holds
/// `pri_tcp`.
pub const SOCKINFO_TCP: i32 = 2;

/// One TCP socket as [`decode_socket_fdinfo`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketRow {
    /// `soi_so`: the kernel's opaque handle for the socket, the same in every process holding
    /// it, so rows read through different processes' fds merge on it.
    pub handle: u64,
    /// This end's address and port.
    pub local: SocketAddr,
    /// The other end's (the unspecified address and port 0 for a listener).
    pub remote: SocketAddr,
    /// Listening, or one end of an open (or half-open) connection.
    pub state: TcpState,
    /// For a listener, the connections waiting to be accepted, completed or half-open
    /// (`soi_qlen`, never below 0); `None` for a connection.
    pub queued: Option<u32>,
}

/// Decodes the `struct socket_fdinfo` that `proc_pidfdinfo(PROC_PIDFDSOCKETINFO)` wrote, in
/// the byte order of the machine that wrote it (XNU `bsd/kern/proc_info.c` `pid_socketinfo`
/// zeroes the struct, `bsd/kern/socket_info.c` `fill_socketinfo` fills it, and all of it is
/// copied out). `Ok(None)` for a socket that is not TCP LISTEN, SYN-RECEIVED or ESTABLISHED
/// over IPv4 or IPv6; an error, never a panic, for a buffer of any other size than the struct's.
pub fn decode_socket_fdinfo(buf: &[u8]) -> Result<Option<SocketRow>, DecodeError> {
    use socket_fdinfo as at;
    if buf.len() != at::SIZE {
        return Err(DecodeError::SocketInfoSize(buf.len()));
    }
    if i32::from_ne_bytes(field(buf, at::SOI_KIND)?) != SOCKINFO_TCP {
        return Ok(None);
    }
    let Some(state) = tcp_state(i32::from_ne_bytes(field(buf, at::TCPSI_STATE)?)) else {
        return Ok(None);
    };
    let [vflag] = field(buf, at::INSI_VFLAG)?;
    let local = endpoint(
        vflag,
        field(buf, at::INSI_LADDR)?,
        i32::from_ne_bytes(field(buf, at::INSI_LPORT)?),
    );
    let remote = endpoint(
        vflag,
        field(buf, at::INSI_FADDR)?,
        i32::from_ne_bytes(field(buf, at::INSI_FPORT)?),
    );
    let (Some(local), Some(remote)) = (local, remote) else {
        return Ok(None);
    };
    // soi_qlen counts half-open connections too (XNU has no syncache), and they count: a
    // connection is a client when either end is seen, and a half-open one is the server's
    // end (docs/design.md §2.4). A negative count reads as none.
    let queued = if state == TcpState::Listen {
        let qlen = i16::from_ne_bytes(field(buf, at::SOI_QLEN)?);
        Some(u32::try_from(qlen).unwrap_or(0))
    } else {
        None
    };
    Ok(Some(SocketRow {
        handle: u64::from_ne_bytes(field(buf, at::SOI_SO)?),
        local,
        remote,
        state,
        queued,
    }))
}

/// `N` bytes at `at`, or where the buffer ends first.
fn field<const N: usize>(buf: &[u8], at: usize) -> Result<[u8; N], DecodeError> {
    buf.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or(DecodeError::SocketInfoEnds(at + N))
}

/// Mach absolute-time ticks → nanoseconds, given `hw.tbfrequency` (ticks per second: 24 MHz on
/// Apple Silicon, 1 GHz on Intel). `None` for a zero frequency.
pub fn mach_ticks_to_ns(ticks: u64, tb_frequency_hz: u64) -> Option<u64> {
    if tb_frequency_hz == 0 {
        return None;
    }
    let ns = u128::from(ticks) * 1_000_000_000 / u128::from(tb_frequency_hz);
    Some(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// A process's CPU time over its life (user + system, every thread's, ended ones included),
/// in nanoseconds, from the two totals `proc_pidinfo(PROC_PIDTASKALLINFO)` gives in Mach
/// absolute-time ticks (`pti_total_user`, `pti_total_system`: XNU `osfmk/kern/bsd_kern.c`
/// `fill_taskprocinfo` copies them from `recount_task_times`, a `struct recount_times_mach`),
/// given `hw.tbfrequency` — the same conversion as the activity sample's. `None` when the
/// frequency is unknown or zero: the life's CPU is then unknown, never zero.
pub fn lifetime_cpu_ns(
    user_ticks: u64,
    system_ticks: u64,
    tb_frequency_hz: Option<u64>,
) -> Option<u64> {
    mach_ticks_to_ns(user_ticks.saturating_add(system_ticks), tb_frequency_hz?)
}

/// What `proc_pid_rusage(RUSAGE_INFO_V2)` and `proc_pidinfo(PROC_PIDTASKINFO)` give the idle
/// clock, as the kernel counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskCounts {
    /// `ri_user_time + ri_system_time`, Mach absolute-time ticks: every thread's, ended
    /// ones included.
    pub cpu_ticks: u64,
    /// `ri_child_user_time + ri_child_system_time`, in the same ticks: the children it has
    /// waited for, and theirs (XNU `update_rusage_info_child` adds a child's own and its
    /// children's times at the wait).
    pub child_cpu_ticks: u64,
    /// `ri_diskio_bytesread + ri_diskio_byteswritten`.
    pub disk_bytes: u64,
    /// `pti_syscalls_unix`, which XNU keeps as an `int32_t`.
    pub syscalls_unix: i32,
    /// `pti_syscalls_mach`, an `int32_t` too.
    pub syscalls_mach: i32,
}

/// The idle clock's counters from what the kernel counts, given `hw.tbfrequency`; `None`
/// when it is zero (no CPU time can be told, and an unknown counter is never idle). The
/// syscall counts are read as the unsigned 32-bit numbers they are: past 2^31 they keep
/// rising rather than turn negative (past 2^32 they wrap, and a caller sees a counter go
/// back: it moved).
pub fn cumulative(counts: TaskCounts, tb_frequency_hz: u64) -> Option<super::Cumulative> {
    let cpu = counts.cpu_ticks.saturating_add(counts.child_cpu_ticks);
    Some(super::Cumulative {
        cpu_ns: mach_ticks_to_ns(cpu, tb_frequency_hz)?,
        io_bytes: counts.disk_bytes,
        syscalls: u64::from(counts.syscalls_unix as u32) + u64::from(counts.syscalls_mach as u32),
    })
}

/// The NUL-terminated prefix of a fixed C char array (`pbi_comm`, `vip_path`), as bytes.
pub fn c_bytes(raw: &[u8]) -> &[u8] {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    &raw[..end]
}

pub mod pressure;
pub mod unix;

#[cfg(test)]
mod procargs_tests;
#[cfg(test)]
mod socket_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// CPU is the process's and its reaped children's, in ns at the machine's timebase;
    /// syscall counts past 2^31 keep rising; no timebase, no counters.
    #[test]
    fn macos_counters_add_reaped_children_and_read_syscalls_unsigned() {
        let counts = TaskCounts {
            cpu_ticks: 24_000_000,
            child_cpu_ticks: 12_000_000,
            disk_bytes: 4096,
            syscalls_unix: 10,
            syscalls_mach: 5,
        };
        let read = cumulative(counts, 24_000_000).unwrap();
        assert_eq!(read.cpu_ns, 1_500_000_000);
        assert_eq!((read.io_bytes, read.syscalls), (4096, 15));
        let past = TaskCounts {
            syscalls_unix: i32::MIN,
            syscalls_mach: -1,
            ..counts
        };
        assert_eq!(
            cumulative(past, 1_000_000_000).unwrap().syscalls,
            (1u64 << 31) + u64::from(u32::MAX)
        );
        assert_eq!(cumulative(counts, 0), None);
    }

    #[test]
    fn a_pid_listing_is_decoded_from_the_bytes_it_filled() {
        let mut buf = [0i32; 8];
        buf[..5].copy_from_slice(&[412, 0, 1, 97, 412]);
        assert_eq!(
            listed_pids(&buf, 20),
            Ok(Listing::Pids(vec![1, 97, 412])),
            "kernel_task (0) left out, sorted, each once"
        );
        assert_eq!(listed_pids(&buf, 0), Ok(Listing::Pids(Vec::new())));
        // Negative pids are no pids.
        buf[0] = -5;
        assert_eq!(listed_pids(&buf, 8), Ok(Listing::Pids(Vec::new())));
    }

    #[test]
    fn a_full_or_hostile_pid_listing_is_asked_again_or_refused() {
        let buf = [7i32; 4];
        assert_eq!(
            listed_pids(&buf, 16),
            Ok(Listing::Grow),
            "a full buffer may be cut short"
        );
        assert!(listed_pids(&buf, 17).is_err(), "ragged");
        assert!(listed_pids(&buf, 20).is_err(), "more than the buffer holds");
        assert!(listed_pids(&buf, -1).is_err(), "negative");
    }

    #[test]
    fn start_times_are_microseconds_and_overflow_is_refused() {
        assert_eq!(
            start_time_us(1_700_000_000, 123_456),
            Some(1_700_000_000_123_456)
        );
        assert_eq!(start_time_us(u64::MAX, 0), None);
    }

    #[test]
    fn the_terminal_is_gone_when_tdev_is_nodev_or_ctty_is_cleared() {
        assert_eq!(tty_nr(0x1000003, PROC_FLAG_CTTY), 0x1000003);
        assert_eq!(tty_nr(NODEV, PROC_FLAG_CTTY), 0);
        // The stale CONTROLT (0x80) alone does not mean a live terminal.
        assert_eq!(tty_nr(0x1000003, 0x80), 0);
    }

    #[test]
    fn tcp_states_map_listen_syn_received_and_established_only() {
        assert_eq!(tcp_state(1), Some(TcpState::Listen));
        assert_eq!(tcp_state(3), Some(TcpState::SynRecv));
        assert_eq!(tcp_state(4), Some(TcpState::Established));
        assert_eq!(tcp_state(2), None, "SYN_SENT: a client's end, not open");
        assert_eq!(tcp_state(0), None);
        assert_eq!(tcp_state(5), None);
    }

    #[test]
    fn endpoints_decode_network_order_ports_and_both_families() {
        let mut v4 = [0u8; 16];
        v4[12..].copy_from_slice(&[127, 0, 0, 1]);
        // Port 5173 = 0x1435, stored big-endian in the low 16 bits of an int.
        let port = i32::from(u16::from_ne_bytes([0x14, 0x35]));
        assert_eq!(
            endpoint(INI_IPV4, v4, port),
            Some("127.0.0.1:5173".parse().unwrap())
        );
        let v6 = Ipv6Addr::LOCALHOST.octets();
        assert_eq!(
            endpoint(INI_IPV6, v6, port),
            Some("[::1]:5173".parse().unwrap())
        );
        // A dual-stack `[::]` listener sets both bits: it is the IPv6 wildcard.
        assert_eq!(
            endpoint(INI_IPV4 | INI_IPV6, [0; 16], port),
            Some("[::]:5173".parse().unwrap())
        );
        assert_eq!(endpoint(0, v6, port), None);
    }

    #[test]
    fn mach_ticks_convert_with_the_timebase_frequency() {
        // Apple Silicon: 24 MHz → 125/3 ns per tick.
        assert_eq!(
            mach_ticks_to_ns(24_000_000, 24_000_000),
            Some(1_000_000_000)
        );
        assert_eq!(mach_ticks_to_ns(3, 24_000_000), Some(125));
        // Intel: 1 GHz, 1 ns per tick.
        assert_eq!(mach_ticks_to_ns(42, 1_000_000_000), Some(42));
        assert_eq!(mach_ticks_to_ns(1, 0), None);
        assert_eq!(mach_ticks_to_ns(u64::MAX, 1), Some(u64::MAX), "saturates");
    }

    #[test]
    fn a_life_s_cpu_time_is_user_plus_system_ticks_in_nanoseconds() {
        // Apple silicon (24 MHz, 125/3 ns a tick): 1.5 s of user time and 0.5 s of system time.
        assert_eq!(
            lifetime_cpu_ns(36_000_000, 12_000_000, Some(24_000_000)),
            Some(2_000_000_000)
        );
        assert_eq!(lifetime_cpu_ns(2, 1, Some(24_000_000)), Some(125));
        // Intel (1 GHz): a tick is a nanosecond.
        assert_eq!(lifetime_cpu_ns(40, 2, Some(1_000_000_000)), Some(42));
        assert_eq!(
            lifetime_cpu_ns(u64::MAX, 1, Some(1_000_000_000)),
            Some(u64::MAX),
            "saturates"
        );
        // A timebase that could not be read, or reads zero: unknown, never 0 ns.
        assert_eq!(lifetime_cpu_ns(5, 5, None), None);
        assert_eq!(lifetime_cpu_ns(5, 5, Some(0)), None);
    }

    #[test]
    fn c_strings_end_at_their_nul() {
        assert_eq!(c_bytes(b"vite\0\0garbage"), b"vite");
        assert_eq!(c_bytes(b"full"), b"full");
    }
}
