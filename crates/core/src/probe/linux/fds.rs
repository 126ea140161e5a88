//! Socket ownership: the `socket:[inode]` links under `/proc/<pid>/fd`, the largest cost of a
//! scan. Each folder is read with one large `getdents` buffer and its links with `readlinkat`
//! relative to the open folder (no path walk per fd). The same links say which fds may hold
//! a file ([`Walked::files`]): what `Probe::writes_of` then reads again, and nothing else.

use std::fs;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{openat, readlinkat, Mode, OFlags, RawDir, CWD};

use super::is_gone;
use super::writes::{fd_number, may_be_file, MAX_FDS};
use crate::probe::procfs as parse;
use crate::probe::Pid;

/// The `getdents` buffer of an fd folder, in bytes.
const DIRENTS: usize = 32 * 1024;

/// Whether the entries read so far — all of one `getdents` buffer of `buffer` bytes, `seen`
/// of them fds — are the whole folder. Two proofs, both needed:
/// - room: an fd entry takes at most 32 bytes (a name of up to 10 digits), so when `seen` fds
///   and the two dot entries left room for one more, the kernel stopped because it ran out of
///   fds, not of room (it fills a buffer until one or the other);
/// - count: the folder's size, read just before, says exactly `seen` fds are open.
///
/// A full buffer, a size of 0 (kernels before 6.2) or any other count reads on to the end.
fn listing_complete(seen: u64, open_fds: Option<u64>, buffer: usize) -> bool {
    let room = (seen + 3) * 32 <= buffer as u64;
    room && open_fds == Some(seen)
}

/// What a walk over some processes found.
#[derive(Default)]
pub struct FdWalk {
    /// `(socket inode, holder)`.
    pub sockets: Vec<(u64, Pid)>,
    pub unreadable: Vec<(Pid, String)>,
    pub blind: Vec<(Pid, String)>,
    /// `(pid, start time, fds)`: the fds whose links named a path, of each process walked
    /// whole (a survey's, for `Probe::writes_of`).
    pub files: Vec<(Pid, u64, Vec<u32>)>,
}

/// What one walk of a process's fd folder found, beyond the sockets it added.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Walked {
    pub holds_sockets: bool,
    /// The fds whose links named a path ([`may_be_file`]); `None` when the folder could not be
    /// read to its end, or held more than [`MAX_FDS`] fds (a bounded read answers for it
    /// instead: `writes::read`).
    pub files: Option<Vec<u32>>,
}

/// A reusable walker: the `getdents` buffer and the name list live across processes.
pub struct Walker<'a> {
    /// Pier's own network namespace; `None` when it could not be read.
    own_ns: Option<&'a Path>,
    dirents: Vec<MaybeUninit<u8>>,
    /// The buffer each link is read into.
    link: Vec<u8>,
    found: Vec<(u64, Pid)>,
    /// The fds of the folder being walked whose links name a path.
    files: Vec<u32>,
}

impl<'a> Walker<'a> {
    pub fn new(own_ns: Option<&'a Path>) -> Self {
        Self {
            own_ns,
            dirents: vec![MaybeUninit::uninit(); DIRENTS],
            link: Vec::with_capacity(256),
            found: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Opens `/proc/<pid>/fd`.
    pub fn open(pid: Pid) -> std::io::Result<OwnedFd> {
        Ok(openat(
            CWD,
            format!("/proc/{pid}/fd"),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    /// Adds the sockets `pid` holds to `out`, or why they cannot be known.
    pub fn walk(&mut self, pid: Pid, out: &mut FdWalk) {
        match Self::open(pid) {
            Ok(dir) => {
                self.walk_open(pid, dir, None, out);
            }
            Err(e) if is_gone(&e) => {}
            Err(e) => out.unreadable.push((pid, format!("/proc/{pid}/fd: {e}"))),
        }
    }

    /// [`walk`](Self::walk) over a folder already open, whose size the caller may have read
    /// (see [`links`](Self::links)): whether `pid` holds any socket, and which fds may hold
    /// a file.
    pub fn walk_open(
        &mut self,
        pid: Pid,
        dir: OwnedFd,
        open_fds: Option<u64>,
        out: &mut FdWalk,
    ) -> Walked {
        self.found.clear();
        self.files.clear();
        let files = match self.links(pid, dir, open_fds) {
            Ok(seen) => (seen <= MAX_FDS as u64).then(|| self.files.clone()),
            Err(e) if is_gone(&e) => return Walked::default(),
            Err(e) => {
                out.unreadable.push((pid, format!("/proc/{pid}/fd: {e}")));
                return Walked::default();
            }
        };
        let holds_sockets = self.holders(pid, out);
        Walked {
            holds_sockets,
            files,
        }
    }

    /// Adds the sockets found in `pid`'s folder to `out`, once its network namespace is known
    /// to be Pier's. Whether it holds any.
    fn holders(&mut self, pid: Pid, out: &mut FdWalk) -> bool {
        if self.found.is_empty() {
            return false;
        }
        // Only a process that holds sockets needs its network namespace checked.
        let ns_path = format!("/proc/{pid}/ns/net");
        match (fs::read_link(&ns_path), self.own_ns) {
            (Ok(ns), Some(own)) if ns != own => {
                let why = format!(
                    "its sockets are in another network namespace ({})",
                    ns.display()
                );
                out.blind.push((pid, why));
            }
            (Ok(_), Some(_)) => out.sockets.append(&mut self.found),
            (Err(e), _) if is_gone(&e) => {}
            (Err(e), _) => out.unreadable.push((pid, format!("{ns_path}: {e}"))),
            (Ok(_), None) => out
                .unreadable
                .push((pid, "Pier's own network namespace is unreadable".into())),
        }
        true
    }

    /// The socket links of one open fd folder, read as the folder is listed, and the fds
    /// whose links name a path; how many fds it listed. An fd closed mid-walk is skipped; any
    /// other failure fails the whole folder — never "no sockets".
    ///
    /// `open_fds` is the folder's size, which Linux ≥ 6.2 reports as the number of open fds
    /// (older kernels say 0); see [`listing_complete`] for when the `getdents` that would only
    /// answer "end" is skipped.
    fn links(&mut self, pid: Pid, fd: OwnedFd, open_fds: Option<u64>) -> std::io::Result<u64> {
        let mut buf = std::mem::take(&mut self.link);
        let mut seen = 0u64;
        let mut entries = RawDir::new(&fd, &mut self.dirents);
        while let Some(entry) = entries.next() {
            let entry = entry?;
            let name = entry.file_name();
            if name.to_bytes().first() == Some(&b'.') {
                continue;
            }
            seen += 1;
            match readlinkat(&fd, name, std::mem::take(&mut buf)) {
                Ok(target) => {
                    let link = target.as_bytes();
                    if let Some(inode) = parse::parse_socket_link(link) {
                        self.found.push((inode, pid));
                    } else if may_be_file(link) {
                        self.files.extend(fd_number(name));
                    }
                    buf = target.into_bytes_with_nul();
                    buf.clear();
                }
                Err(rustix::io::Errno::NOENT) => {}
                Err(e) => {
                    self.link = buf;
                    return Err(e.into());
                }
            }
            if entries.is_buffer_empty() && listing_complete(seen, open_fds, DIRENTS) {
                break;
            }
        }
        self.link = buf;
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_ends_early_only_with_room_left_and_the_count_matched() {
        assert!(listing_complete(5, Some(5), DIRENTS));
        assert!(listing_complete(0, Some(0), DIRENTS), "no fds at all");
        assert!(!listing_complete(5, Some(6), DIRENTS), "an fd opened since");
        assert!(!listing_complete(5, None, DIRENTS), "size unknown");
        assert!(
            !listing_complete(5, Some(0), DIRENTS),
            "a kernel before 6.2"
        );
        // A buffer that may be full: more may follow, whatever the count says.
        assert!(!listing_complete(1022, Some(1022), DIRENTS));
        assert!(listing_complete(1021, Some(1021), DIRENTS));
    }
}
