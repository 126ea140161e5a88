//! The names of what Pier stops and of what it records, each with its one parser and its one
//! formatter (the only place the grammar is written):
//! - a target: a process tree, named by its root's identity `<pid>-<start time>`, or a
//!   container run, `container-<12 hex digits>` as `docker ps` shortens its id;
//! - a record: a tree's recovery snapshot `snap-<pid>-<start time>-<unix ms>`, a container's stop
//!   record `ctr-<12 hex digits>-<unix ms>`.
//!
//! Parsing is strict (docs/design.md §5): ids are matched as text, so "017824-71008" would never
//! match anything and would read as a refusal, not as a typo, and a bare "17824" would match the
//! records of every tree whose id starts with it. What parses prints back as it was written.

use std::fmt;
use std::str::FromStr;

use super::Identity;

/// A container card's id: `container-` and this many hex digits of the container's id.
const CONTAINER_DIGITS: usize = 12;

/// What a stop is asked to stop, and whose records a restart looks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TargetId {
    /// A process tree, by its root's identity.
    Tree(Identity),
    /// A container run, by the first 12 hex digits of the container's id as written.
    Container(String),
}

/// The kinds of target, for what differs between them (the driver of each, the words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    /// A process tree.
    Tree,
    /// A container run.
    Container,
}

/// The name of one record in the state folder: a stop of `target` written at `ms`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordName {
    /// Whose stop it records.
    pub target: TargetId,
    /// When the record was written, unix milliseconds.
    pub ms: u128,
}

/// Text that is not a target id or not a record name (the front doors word the sentence, as
/// each names the forms it accepts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a target id or a record name")]
pub struct BadName(
    /// The text as given.
    pub String,
);

impl TargetId {
    /// The card id of the container whose full id is `id`: its first 12 digits.
    pub fn container(id: &str) -> Self {
        Self::Container(id.get(..CONTAINER_DIGITS).unwrap_or(id).to_owned())
    }

    /// Which kind of target this is.
    pub fn kind(&self) -> TargetKind {
        match self {
            Self::Tree(_) => TargetKind::Tree,
            Self::Container(_) => TargetKind::Container,
        }
    }

    /// The name of the record of a stop of this target written at `ms`.
    pub fn record(&self, ms: u128) -> RecordName {
        RecordName {
            target: self.clone(),
            ms,
        }
    }

    /// What every record of this target's stops starts with (`snap-<id>-`, `ctr-<hex>-`).
    pub fn record_prefix(&self) -> String {
        match self {
            Self::Tree(id) => format!("{SNAPSHOT}{}-{}-", id.pid, id.start_time),
            Self::Container(hex) => format!("{CONTAINER_RECORD}{hex}-"),
        }
    }

    /// The name of the lock held while this target is being stopped.
    pub fn stop_lock(&self) -> String {
        format!("stop-{self}")
    }
}

/// The record prefixes of the two kinds.
const SNAPSHOT: &str = "snap-";
const CONTAINER_RECORD: &str = "ctr-";
const CONTAINER_CARD: &str = "container-";

/// What every record of a kind starts with, for a listing of them all.
pub fn record_prefix_of(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Tree => SNAPSHOT,
        TargetKind::Container => CONTAINER_RECORD,
    }
}

/// `<pid>-<start time>`, both whole numbers written plainly.
fn tree(text: &str) -> Option<Identity> {
    let (pid, start) = text.split_once('-')?;
    let identity = Identity {
        pid: plain(pid)?,
        start_time: plain(start)?,
    };
    Some(identity)
}

/// Exactly 12 hex digits.
fn container_hex(text: &str) -> Option<String> {
    let hex = text.len() == CONTAINER_DIGITS && text.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| text.to_owned())
}

/// A whole number written plainly: no sign, no leading zero, no space.
fn plain<N: FromStr + ToString>(text: &str) -> Option<N> {
    let n: N = text.parse().ok()?;
    (n.to_string() == text).then_some(n)
}

impl FromStr for TargetId {
    type Err = BadName;

    fn from_str(text: &str) -> Result<Self, BadName> {
        let parsed = match text.strip_prefix(CONTAINER_CARD) {
            Some(hex) => container_hex(hex).map(Self::Container),
            None => tree(text).map(Self::Tree),
        };
        parsed.ok_or_else(|| BadName(text.to_owned()))
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Self::Tree(id) => write!(f, "{}-{}", id.pid, id.start_time),
            Self::Container(hex) => write!(f, "{CONTAINER_CARD}{hex}"),
        }
    }
}

impl FromStr for RecordName {
    type Err = BadName;

    fn from_str(text: &str) -> Result<Self, BadName> {
        let bad = || BadName(text.to_owned());
        let (rest, ms) = text.rsplit_once('-').ok_or_else(bad)?;
        let ms = plain(ms).ok_or_else(bad)?;
        let target = if let Some(id) = rest.strip_prefix(SNAPSHOT) {
            TargetId::Tree(tree(id).ok_or_else(bad)?)
        } else if let Some(hex) = rest.strip_prefix(CONTAINER_RECORD) {
            TargetId::Container(container_hex(hex).ok_or_else(bad)?)
        } else {
            return Err(bad());
        };
        Ok(Self { target, ms })
    }
}

impl fmt::Display for RecordName {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}{}", self.target.record_prefix(), self.ms)
    }
}

impl serde::Serialize for TargetId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TargetId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by trying real tools: `pier stop 12x` said "refused … no resource 12x now", as if a
    /// resource had been looked at.
    #[test]
    fn a_tree_is_two_plain_whole_numbers() {
        for good in ["17824-71008", "1-0", "4294967295-18446744073709551615"] {
            let id: TargetId = good.parse().unwrap();
            assert_eq!(id.kind(), TargetKind::Tree);
            assert_eq!(id.to_string(), good);
        }
        for bad in [
            "12x",
            "17824",
            "17824-",
            "-71008",
            "17824-71008-1",
            "017824-71008",
            "+17824-71008",
            "17824-+71008",
            " 17824-71008",
            "4294967296-1",
            "snap-17824-71008-1764590000000",
            "",
        ] {
            assert!(bad.parse::<TargetId>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_container_is_container_and_twelve_hex_digits() {
        for good in ["container-fe7ae5f85c8a", "container-FE7AE5F85C8A"] {
            let id: TargetId = good.parse().unwrap();
            assert_eq!(id.kind(), TargetKind::Container);
            assert_eq!(id.to_string(), good);
        }
        for bad in [
            "container-",
            "container-fe7ae5f85c8",
            "container-fe7ae5f85c8ax",
            "container-fe7ae5f85c8a0",
            "container-../../etc",
            "fe7ae5f85c8a",
        ] {
            assert!(bad.parse::<TargetId>().is_err(), "{bad:?}");
        }
        let full = "fe7ae5f85c8a0123456789abcdef";
        assert_eq!(
            TargetId::container(full).to_string(),
            "container-fe7ae5f85c8a"
        );
    }

    #[test]
    fn a_record_is_its_kind_its_target_and_a_time() {
        for good in [
            "snap-17824-71008-1764590000000",
            "ctr-fe7ae5f85c8a-1764590000000",
        ] {
            let name: RecordName = good.parse().unwrap();
            assert_eq!(name.to_string(), good);
            assert_eq!(name.ms, 1764590000000);
            assert!(good.starts_with(&name.target.record_prefix()));
        }
        for bad in [
            "snap-",
            "snap-17824-71008",
            "snap-17824-1764590000000x",
            "snap-12x-1-1",
            "snap-../../etc-1",
            "17824-71008-1764590000000",
            "ctr-fe7ae5f85c8a",
            "ctr-fe7ae5f85c8a-",
            "ctr-fe7ae5f85c8a-01",
            "ctr-xyz-1764590000000",
            "ctr-fe7ae5f85c8a-1-2",
        ] {
            assert!(bad.parse::<RecordName>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_stop_lock_and_the_json_are_the_id_as_written() {
        let id: TargetId = "17824-71008".parse().unwrap();
        assert_eq!(id.stop_lock(), "stop-17824-71008");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"17824-71008\"");
        let back: TargetId = serde_json::from_str("\"container-fe7ae5f85c8a\"").unwrap();
        assert_eq!(back, TargetId::Container("fe7ae5f85c8a".into()));
        assert!(serde_json::from_str::<TargetId>("\"x\"").is_err());
    }
}
