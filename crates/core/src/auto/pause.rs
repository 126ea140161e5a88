//! The rules' pause (`pier auto --pause`, the menu): no rule acts until it ends. Kept as the
//! record `auto-pause` in the state folder, so the app and `pier watch` see the same pause.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::NOBODY;
use crate::model::rules::Pause;
use crate::model::Identity;
use crate::store::{Owned, Store, StoreError, Versioned};

/// The pause record's name.
const RECORD: &str = "auto-pause";

/// The schema of the pause record.
const SCHEMA: u32 = 1;

/// The record as kept.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Record {
    schema: u32,
    #[serde(flatten)]
    pause: Pause,
}

impl Versioned for Record {
    const SCHEMA: u32 = SCHEMA;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl Owned for Record {
    fn owner(&self) -> Identity {
        NOBODY
    }
}

/// How long a pause lasts, as a person asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum For {
    /// For a while ("1h", "30 min").
    While(Duration),
    /// Until the next midnight, UTC.
    Tomorrow,
}

/// Why a pause was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a pause: give a duration from 1 min to 7 days (\"1h\", \"30 min\") or \"tomorrow\"")]
pub struct NotAPause(pub String);

impl std::str::FromStr for For {
    type Err = NotAPause;
    fn from_str(s: &str) -> Result<Self, NotAPause> {
        if s.trim().eq_ignore_ascii_case("tomorrow") {
            return Ok(Self::Tomorrow);
        }
        let d = humantime::parse_duration(s.trim()).map_err(|_| NotAPause(s.to_owned()))?;
        let range = Duration::from_secs(60)..=Duration::from_secs(7 * 24 * 3600);
        match range.contains(&d) {
            true => Ok(Self::While(d)),
            false => Err(NotAPause(s.to_owned())),
        }
    }
}

impl For {
    /// The pause this asks for, made at `now` (seconds since the Unix epoch).
    pub fn at(self, now: u64) -> Pause {
        match self {
            Self::While(d) => Pause {
                until: now + d.as_secs(),
                asked: format!("for {}", crate::words::duration_seconds(d.as_secs())),
            },
            Self::Tomorrow => Pause {
                until: (now / 86_400 + 1) * 86_400,
                asked: "until tomorrow".to_owned(),
            },
        }
    }
}

/// Seconds since the Unix epoch, now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The pause in force at `now`; `None` when there is none or it has ended.
pub fn read(store: &Store, now: u64) -> Result<Option<Pause>, StoreError> {
    let record: Option<Record> = store.get(RECORD)?;
    Ok(record.map(|r| r.pause).filter(|p| p.until > now))
}

/// Pauses the rules: `pause` replaces any pause before it.
pub fn set(store: &Store, pause: &Pause) -> Result<(), StoreError> {
    let record = Record {
        schema: SCHEMA,
        pause: pause.clone(),
    };
    store.put_or_update(RECORD, &record)
}

/// Resumes the rules: the pause removed; `false` when there was none.
pub fn clear(store: &Store) -> Result<bool, StoreError> {
    match store.get::<Record>(RECORD)? {
        None => Ok(false),
        Some(_) => store.remove::<Record>(RECORD, NOBODY).map(|()| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_is_a_duration_or_tomorrow_and_ends_when_it_says() {
        assert_eq!(
            "1h".parse::<For>().unwrap(),
            For::While(Duration::from_secs(3600))
        );
        assert_eq!("Tomorrow".parse::<For>().unwrap(), For::Tomorrow);
        assert!("5s".parse::<For>().is_err(), "shorter than a minute");
        assert!("soon".parse::<For>().is_err());
        let p = For::Tomorrow.at(86_400 * 3 + 100);
        assert_eq!(p.until, 86_400 * 4);
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_at(dir.path().join("state")).unwrap();
        assert_eq!(read(&store, 0).unwrap(), None);
        set(&store, &For::While(Duration::from_secs(3600)).at(1000)).unwrap();
        set(&store, &For::While(Duration::from_secs(7200)).at(1000)).unwrap();
        let p = read(&store, 1000).unwrap().expect("paused");
        assert_eq!((p.until, p.asked.as_str()), (8200, "for 2 h"));
        assert_eq!(read(&store, 8200).unwrap(), None, "ended");
        assert!(clear(&store).unwrap());
        assert!(!clear(&store).unwrap());
        assert_eq!(read(&store, 1000).unwrap(), None);
    }
}
