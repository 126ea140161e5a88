//! Who asked for a stop, recorded once in every stop's record and report, so a later kind of
//! asker fills a field instead of changing the schema. A record written before the field existed
//! reads as a person's.

use serde::{Deserialize, Serialize};

/// Who asked for a stop.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RequestedBy {
    /// A person, at the CLI or in the app (`via`: which, when known).
    #[default]
    Person,
    /// A person at the CLI.
    Cli,
    /// A person in the menu-bar / tray app.
    App,
    /// A rule of the user's, by its name, and what made it due ("idle 42 min").
    Rule {
        /// The rule's name.
        name: String,
        /// What made it due, in words; `null` in records written before it was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        because: Option<String>,
    },
    /// A stop the user armed earlier, fired when its conditions held.
    Armed,
    /// An agent, by the name its client gave.
    Agent {
        /// The client's name.
        client: String,
    },
}

impl RequestedBy {
    /// Whether a person asked (at the CLI, in the app, or in a record older than the field).
    pub fn is_person(&self) -> bool {
        matches!(self, Self::Person | Self::Cli | Self::App)
    }

    /// Whether Pier asked on its own: a rule or an armed stop (docs/design.md §5a).
    pub fn is_automatic(&self) -> bool {
        matches!(self, Self::Rule { .. } | Self::Armed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Old {
        #[serde(default)]
        requested_by: RequestedBy,
    }

    #[test]
    fn an_older_record_reads_as_a_person_and_each_asker_reads_back() {
        let old: Old = serde_json::from_str("{}").unwrap();
        assert!(old.requested_by.is_person());
        for who in [
            RequestedBy::Cli,
            RequestedBy::App,
            RequestedBy::Rule {
                name: "nightly".into(),
                because: Some("idle 42 min".into()),
            },
            RequestedBy::Armed,
            RequestedBy::Agent {
                client: "claude-code".into(),
            },
        ] {
            let text = serde_json::to_string(&who).unwrap();
            assert_eq!(serde_json::from_str::<RequestedBy>(&text).unwrap(), who);
        }
        assert_eq!(
            serde_json::to_string(&RequestedBy::Agent { client: "x".into() }).unwrap(),
            r#"{"kind":"agent","client":"x"}"#
        );
    }
}
