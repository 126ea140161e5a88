//! The user's automatic-stop rules (docs/design.md §5a): off by default, read from `rules.toml`
//! beside the protect list, readable and written by hand:
//!
//! ```toml
//! cap_per_hour = 6        # the most automatic stops in any hour (default 6)
//! backoff = "30 min"      # after a stop that did not stop it, that resource waits (default 30 min)
//!
//! [[rule]]
//! name = "idle 30 min"    # default: said from `idle`
//! idle = "30 min"
//! under = ["/home/me/code"]   # each filter is optional; all given must match
//! kinds = ["vite", "next-dev"]
//! ports = [5173]
//!
//! [[rule]]
//! idle = "10 min"
//! pressure = true         # only under memory pressure, the largest first
//! ```
//!
//! A missing file, or one with no rule, is [`RulesState::Off`]. A file that is there and cannot
//! be read or is not valid is [`RulesState::Unreadable`]: rules off, and every card says so.
//! [`judge`] is what the rules say of one card; the scheduler fires what it says is due.

pub mod judge;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::config::{self, ConfigDirError, ProtectError};
use crate::model::rules::{Rule, Rules, RulesState};

/// The rules file's name in the configuration folder.
pub const RULES_FILE: &str = "rules.toml";

/// The cap when the file names none. Why 6: a rule that misfires stops at most a handful of
/// servers before a person notices, and a machine rarely has more idle ones in an hour.
pub const DEFAULT_CAP_PER_HOUR: u32 = 6;

/// The back-off when the file names none. Why 30 min: a refusal means something used the
/// resource at the last moment; asking again sooner would only be refused again.
pub const DEFAULT_BACKOFF: Duration = Duration::from_secs(30 * 60);

/// The longest idle time or back-off a rule may name: a week.
const LONGEST: Duration = Duration::from_secs(7 * 24 * 3600);

/// What is wrong with a rules file's text; each says the line or the rule and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// Not TOML, or not the file's fields: the parser's words, on one line.
    #[error("{}{what}", .line.map(|l| format!("line {l}: ")).unwrap_or_default())]
    Toml {
        /// The line it is on, when the parser says.
        line: Option<usize>,
        /// The parser's message.
        what: String,
    },
    /// A duration Pier cannot read, or out of range.
    #[error(
        "{field} = {given:?} is not a duration from 1 s to 7 days (write \"30 min\", \"2 h\")"
    )]
    Duration {
        /// The field (`idle` of rule 2, `backoff`).
        field: String,
        /// What it said.
        given: String,
    },
    /// A cap of 0, or above 600.
    #[error("cap_per_hour = {0} is not from 1 to 600 (to turn the rules off, remove them)")]
    Cap(u32),
    /// A folder that is not absolute.
    #[error("rule {rule:?}: under = {:?} is not an absolute path", .folder.display().to_string())]
    RelativeFolder {
        /// The rule's name.
        rule: String,
        /// The folder.
        folder: PathBuf,
    },
    /// Port 0.
    #[error("rule {0:?}: port 0 is no port")]
    PortZero(String),
    /// Two rules of one name: history could not tell which stopped what.
    #[error("two rules are named {0:?}: give each its own name")]
    SameName(String),
}

/// The rules file's path.
pub fn path() -> Result<PathBuf, ConfigDirError> {
    config::folder().map(|f| f.join(RULES_FILE))
}

/// The rules as a scheduler judges by them, read now.
pub fn read() -> RulesState {
    match path() {
        Ok(path) => read_at(&path),
        Err(why) => RulesState::Unreadable(format!("the rules file cannot be named: {why}")),
    }
}

/// The rules in the file at `path`, read as the protect list is (`config::read_text`: owner,
/// links, a regular file, bounded, never blocking).
pub fn read_at(path: &Path) -> RulesState {
    let text = match config::read_text(path) {
        Ok(Some(text)) => text,
        Ok(None) => return RulesState::Off,
        Err(e) => return RulesState::Unreadable(unreadable(path, e)),
    };
    match parse(&text) {
        Ok(rules) if rules.rules.is_empty() => RulesState::Off,
        Ok(rules) => RulesState::On(rules),
        Err(why) => RulesState::Unreadable(format!(
            "the rules file {} is not valid: {why}",
            path.display()
        )),
    }
}

/// The sentence for a rules file that could not be read.
fn unreadable(path: &Path, e: ProtectError) -> String {
    match e {
        ProtectError::Unreadable { why, .. } => {
            format!("the rules file {} could not be read: {why}", path.display())
        }
        other => other.to_string(),
    }
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    cap_per_hour: Option<u32>,
    backoff: Option<String>,
    #[serde(default)]
    rule: Vec<RuleFile>,
}

/// One `[[rule]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    name: Option<String>,
    idle: String,
    #[serde(default)]
    pressure: bool,
    #[serde(default)]
    under: Vec<PathBuf>,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    ports: Vec<u16>,
}

/// The rules from the file's text, checked.
pub fn parse(text: &str) -> Result<Rules, Invalid> {
    let file: File = toml::from_str(text).map_err(|e| {
        let (line, what) = config::toml_error(text, &e);
        Invalid::Toml { line, what }
    })?;
    let cap_per_hour = file.cap_per_hour.unwrap_or(DEFAULT_CAP_PER_HOUR);
    if !(1..=600).contains(&cap_per_hour) {
        return Err(Invalid::Cap(cap_per_hour));
    }
    let backoff = match &file.backoff {
        Some(given) => duration("backoff", given)?,
        None => DEFAULT_BACKOFF,
    };
    let mut rules: Vec<Rule> = Vec::new();
    for (i, r) in file.rule.into_iter().enumerate() {
        let rule = checked(i + 1, r)?;
        if rules.iter().any(|o| o.name == rule.name) {
            return Err(Invalid::SameName(rule.name));
        }
        rules.push(rule);
    }
    Ok(Rules {
        cap_per_hour,
        backoff_seconds: backoff.as_secs(),
        rules,
    })
}

/// Rule number `n` as written, checked; its name said from its idle time when it has none.
fn checked(n: usize, r: RuleFile) -> Result<Rule, Invalid> {
    let idle = duration(&format!("idle of rule {n}"), &r.idle)?;
    let name = r.name.unwrap_or_else(|| default_name(idle, r.pressure));
    if let Some(folder) = r.under.iter().find(|f| !f.is_absolute()) {
        return Err(Invalid::RelativeFolder {
            rule: name,
            folder: folder.clone(),
        });
    }
    if r.ports.contains(&0) {
        return Err(Invalid::PortZero(name));
    }
    let under = r
        .under
        .into_iter()
        // Folders as a scan names projects: resolved, where they exist.
        .map(|f| f.canonicalize().unwrap_or(f))
        .collect();
    Ok(Rule {
        name,
        idle_seconds: idle.as_secs(),
        pressure: r.pressure,
        under,
        kinds: r.kinds,
        ports: r.ports,
    })
}

/// "idle 30 min"; "idle 10 min under memory pressure".
fn default_name(idle: Duration, pressure: bool) -> String {
    let idle = crate::words::duration_seconds(idle.as_secs());
    match pressure {
        true => format!("idle {idle} under memory pressure"),
        false => format!("idle {idle}"),
    }
}

/// A duration as people write it ("30 min", "2h", "90s"), from 1 s to a week.
fn duration(field: &str, given: &str) -> Result<Duration, Invalid> {
    let bad = || Invalid::Duration {
        field: field.to_owned(),
        given: given.to_owned(),
    };
    let d = humantime::parse_duration(given.trim()).map_err(|_| bad())?;
    match d >= Duration::from_secs(1) && d <= LONGEST {
        true => Ok(d),
        false => Err(bad()),
    }
}
