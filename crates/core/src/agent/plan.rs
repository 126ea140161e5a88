//! A stop plan (docs/design.md §7a): what would be signalled and why, under an id bound to the
//! identities and evidence it saw. Single-use, bound to the session that made it (each
//! session has its own [`Plans`]), and short-lived.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::time::{Duration, Instant};

use crate::model::reason::Reason;
use crate::model::shown::Shown;

use super::AgentError;

/// How long a plan may wait to be carried out.
pub const LIFETIME: Duration = Duration::from_secs(300);

/// One target of a plan: what the plan saw of it, which carrying it out must see again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The target's id (`2476-4670263`, `ctr-…`).
    pub id: String,
    /// Its project's level and its members' identities and executables, as planned.
    pub shown: Shown,
    /// The ports it listened on, as planned.
    pub ports: BTreeSet<u16>,
    /// The reasons against it the plan saw (empty when green).
    pub reasons: BTreeSet<Reason>,
    /// The agent started it itself (`own`): its live parent, and only that, is set aside.
    pub own: bool,
    /// What it is, in the words of the person's question (`vite in /src/shop (:5173)`).
    pub words: String,
}

/// A plan: its targets, and when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Its id: 128 random bits, in hex.
    pub id: String,
    /// When it was made, on the monotonic clock.
    pub made: Instant,
    /// What it would stop.
    pub targets: Vec<Planned>,
}

/// One session's plans: each taken at most once, and only before it expires.
#[derive(Debug, Default)]
pub struct Plans {
    open: HashMap<String, Plan>,
    used: BTreeSet<String>,
}

impl Plans {
    /// Keeps `targets` as a new plan made `now`, and returns its id.
    pub fn make(&mut self, targets: Vec<Planned>, now: Instant) -> Result<String, AgentError> {
        let id = fresh_id()?;
        self.open
            .retain(|_, p| now.duration_since(p.made) < LIFETIME);
        self.open.insert(
            id.clone(),
            Plan {
                id: id.clone(),
                made: now,
                targets,
            },
        );
        Ok(id)
    }

    /// A plan of this session's, taken for good: a second take of it is refused, whatever
    /// happens next (carried out, declined, or refused by the chain).
    pub fn take(&mut self, id: &str, now: Instant) -> Result<Plan, AgentError> {
        if self.used.contains(id) {
            return Err(AgentError::UsedPlan(id.to_owned()));
        }
        let plan = self
            .open
            .remove(id)
            .ok_or_else(|| AgentError::UnknownPlan(id.to_owned()))?;
        self.used.insert(id.to_owned());
        if now.duration_since(plan.made) >= LIFETIME {
            return Err(AgentError::ExpiredPlan(id.to_owned(), LIFETIME));
        }
        Ok(plan)
    }

    /// A plan of this session's, to read (the question the person is asked), not taken.
    pub fn peek(&self, id: &str) -> Option<&Plan> {
        self.open.get(id)
    }
}

/// 128 bits from the OS's random source, in hex: a plan id no one can guess.
fn fresh_id() -> Result<String, AgentError> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| AgentError::Failed(format!("no random plan id: /dev/urandom: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::card::Level;

    fn one() -> Vec<Planned> {
        vec![Planned {
            id: "10-20".into(),
            shown: Shown {
                project_level: Level::Green,
                members: vec![],
                container_run: None,
            },
            ports: BTreeSet::from([5173]),
            reasons: BTreeSet::new(),
            own: false,
            words: String::new(),
        }]
    }

    #[test]
    fn a_plan_is_taken_once_and_never_after_it_expires() {
        let mut plans = Plans::default();
        let t0 = Instant::now();
        let id = plans.make(one(), t0).unwrap();
        assert_eq!(id.len(), 32);
        assert_eq!(plans.take(&id, t0).unwrap().targets, one());
        assert_eq!(plans.take(&id, t0), Err(AgentError::UsedPlan(id.clone())));
        let old = plans.make(one(), t0).unwrap();
        assert_ne!(old, id);
        assert_eq!(
            plans.take(&old, t0 + LIFETIME),
            Err(AgentError::ExpiredPlan(old.clone(), LIFETIME))
        );
        // Expired and taken is used: it never comes back.
        assert_eq!(plans.take(&old, t0), Err(AgentError::UsedPlan(old)));
        assert_eq!(
            plans.take("feed", t0),
            Err(AgentError::UnknownPlan("feed".into()))
        );
    }
}
