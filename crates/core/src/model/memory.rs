//! What a cleanup frees: the memory of a process, of a resource's tree, of every green resource
//! (docs/design.md §2.11). The probe reads one process's figure (`Probe::memory`); everything
//! here is arithmetic over what it read, and the honest label of the sum.
//!
//! Why proportional where the OS gives it: a dev server's tree shares most of its pages — the
//! interpreter, its libraries, pages a fork shares with its parent. Resident sizes count every
//! shared page once per process that maps it, so three `node` processes "hold" their runtime
//! three times over, and a total of several cards would promise more than a stop gives back.
//! The proportional set size divides each shared page among the processes that map it, so the
//! members' figures add up without counting a page twice.

use serde::{Deserialize, Serialize};

use super::card::{Level, Project};
use super::outcome::{MemberOutcome, MemberReport};
use super::snapshot::SnapshotMember;

/// How a figure was measured: what its bytes count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// `"proportional"`: the proportional set size (Linux `Pss` of `/proc/<pid>/smaps_rollup`):
    /// its private pages, plus each shared page divided by the number of processes mapping it.
    /// Figures of this kind add up without counting a page twice.
    Proportional,
    /// `"footprint"`: macOS's physical footprint (`ri_phys_footprint`): its dirty private
    /// memory, compressed or not; shared libraries are left out. macOS has no proportional
    /// figure.
    Footprint,
    /// `"resident"`: the resident set size (Linux `/proc/<pid>/statm`): every page it maps in
    /// memory, each shared page counted in full by every process mapping it — more than a stop
    /// would free.
    Resident,
}

impl MemoryKind {
    /// The kind as the JSON spells it, and as a card shows it: `"proportional"`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Proportional => "proportional",
            MemoryKind::Footprint => "footprint",
            MemoryKind::Resident => "resident",
        }
    }
}

/// The memory of a process, or of several added up, with how it was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Bytes.
    pub bytes: u64,
    /// What the bytes count.
    pub kind: MemoryKind,
}

impl Memory {
    /// The sum of `parts`, or `None` when there is none or any one is unknown: a total missing
    /// a member would look smaller than the tree is. Its kind is the parts' kind when they all
    /// agree, else `Resident`: once a shared page may be counted twice, the sum is no longer
    /// proportional, and "resident" is the label that promises no less.
    pub fn total(parts: impl IntoIterator<Item = Option<Memory>>) -> Option<Memory> {
        let mut out: Option<Memory> = None;
        for part in parts {
            let part = part?;
            out = Some(match out {
                None => part,
                Some(sum) => Memory {
                    bytes: sum.bytes.saturating_add(part.bytes),
                    kind: if sum.kind == part.kind {
                        sum.kind
                    } else {
                        MemoryKind::Resident
                    },
                },
            });
        }
        out
    }
}

/// What stopping every green resource would free, as `pier stop --all-green` and "Clean up all
/// safe" would stop them: the sum over the green resources whose memory was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GreenMemory {
    /// The sum over `measured` resources; `None` when none was measured.
    pub total: Option<Memory>,
    /// The green resources in the sum.
    pub measured: usize,
    /// Green resources whose memory could not be read (left out of the sum).
    pub unmeasured: usize,
    /// Green containers: their memory is not read (their engine holds it).
    pub containers: usize,
}

impl GreenMemory {
    /// Over every green resource and container of `projects`, whatever the project's level.
    pub fn of(projects: &[Project]) -> Self {
        let mut out = Self::default();
        let green = projects
            .iter()
            .flat_map(|p| &p.resources)
            .filter(|r| r.level == Level::Green);
        let mut read = Vec::new();
        for r in green {
            match r.memory {
                Some(m) => read.push(Some(m)),
                None => out.unmeasured += 1,
            }
        }
        out.measured = read.len();
        out.total = Memory::total(read);
        out.containers = projects
            .iter()
            .flat_map(|p| &p.containers)
            .filter(|c| c.level == Level::Green)
            .count();
        out
    }

    /// Whether there is anything green at all.
    pub fn any(&self) -> bool {
        self.measured + self.unmeasured + self.containers > 0
    }
}

/// What a stop freed: the memory of the members it ended (`stopped`, or `exited` after the
/// first signal), as the snapshot recorded it before the stop. Not what the OS reclaimed
/// afterwards — a proportional figure hands a departing member's share of a shared page to the
/// processes still mapping it — hence "about" wherever it is shown. `None` when no member
/// ended or one that ended had no figure.
pub fn freed(members: &[MemberReport], recorded: &[SnapshotMember]) -> Option<Memory> {
    let ended = members
        .iter()
        .filter(|m| matches!(m.outcome, MemberOutcome::Stopped | MemberOutcome::Exited));
    Memory::total(ended.map(|m| {
        recorded
            .iter()
            .find(|s| s.identity == m.identity())
            .and_then(|s| s.memory)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Identity;

    fn m(bytes: u64, kind: MemoryKind) -> Option<Memory> {
        Some(Memory { bytes, kind })
    }

    #[test]
    fn a_total_keeps_its_members_kind_when_they_agree() {
        let p = MemoryKind::Proportional;
        assert_eq!(
            Memory::total([m(1, p), m(2, p)]),
            m(3, MemoryKind::Proportional)
        );
    }

    /// One member read as resident (its smaps_rollup was refused) may count a page its
    /// siblings also count: the sum cannot be called proportional any more.
    #[test]
    fn a_total_of_mixed_kinds_is_labelled_resident() {
        let sum = Memory::total([m(1, MemoryKind::Proportional), m(2, MemoryKind::Resident)]);
        assert_eq!(sum, m(3, MemoryKind::Resident));
    }

    #[test]
    fn a_total_with_an_unknown_member_or_none_at_all_is_unknown() {
        assert_eq!(Memory::total([m(1, MemoryKind::Resident), None]), None);
        assert_eq!(Memory::total([]), None);
    }

    fn member(pid: u32, memory: Option<Memory>) -> SnapshotMember {
        SnapshotMember {
            identity: Identity { pid, start_time: 1 },
            ppid: 1,
            uid: 1000,
            argv: Vec::new(),
            env: None,
            exe: crate::model::bytes::ByteString(b"/bin/sh".to_vec()),
            cwd: None,
            memory,
        }
    }

    fn report(pid: u32, outcome: MemberOutcome) -> MemberReport {
        MemberReport {
            pid,
            start_time: 1,
            command: "sh".into(),
            outcome,
            detail: String::new(),
        }
    }

    /// A partial stop frees what it ended, not what still runs nor what was gone before it.
    #[test]
    fn a_stop_frees_the_memory_of_the_members_it_ended() {
        let p = MemoryKind::Proportional;
        let recorded = [
            member(1, m(10, p)),
            member(2, m(20, p)),
            member(3, m(40, p)),
            member(4, m(80, p)),
        ];
        let reports = [
            report(1, MemberOutcome::Stopped),
            report(2, MemberOutcome::Exited),
            report(3, MemberOutcome::StillRunning),
            report(4, MemberOutcome::Skipped),
        ];
        assert_eq!(freed(&reports, &recorded), m(30, p));
        assert_eq!(freed(&reports[2..], &recorded), None, "nothing ended");
    }

    #[test]
    fn a_stop_whose_ended_member_had_no_figure_says_nothing_of_what_it_freed() {
        let recorded = [member(1, None), member(2, m(5, MemoryKind::Resident))];
        let reports = [
            report(1, MemberOutcome::Stopped),
            report(2, MemberOutcome::Stopped),
        ];
        assert_eq!(freed(&reports, &recorded), None);
    }

    #[test]
    fn green_memory_adds_every_green_resource_whatever_its_project_and_counts_the_rest() {
        use crate::model::examples::{project, resource};
        let p = MemoryKind::Proportional;
        let mut a = resource("10-1", Level::Green, 5173);
        a.memory = m(100, p);
        let mut b = resource("11-1", Level::Green, 5174);
        b.memory = None;
        let mut c = resource("12-1", Level::Yellow, 5175);
        c.memory = m(1000, p);
        let mut d = resource("13-1", Level::Green, 5176);
        d.memory = m(10, p);
        let projects = [
            project("/w/a", Level::Green, vec![a, b]),
            project("/w/c", Level::Yellow, vec![c, d]),
        ];
        let green = GreenMemory::of(&projects);
        assert_eq!(green.total, m(110, p));
        assert_eq!((green.measured, green.unmeasured), (2, 1));
        assert_eq!(green.containers, 0);
        assert!(green.any());
        assert!(!GreenMemory::of(&[]).any());
    }
}
