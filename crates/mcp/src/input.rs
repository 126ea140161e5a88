//! What an agent may pass to each tool, and its checks: the same as the CLI's (a resource id
//! parsed strictly, a port 1 to 65535, a folder that exists), refused in `AgentError`'s
//! sentences before the session is touched. Unknown fields are refused, not ignored: an
//! agent that passes `force: true` learns there is no such thing, instead of believing it
//! was heard.

use std::path::{Path, PathBuf};

use pier_core::agent::AgentError;
use pier_core::front;
use pier_core::model::target::TargetId;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

// Taken as any JSON value so that a bare number (`1234`) is refused in Pier's sentence, not in
// a parser's. (The `///` lines are the schema's description, which the model reads.)
/// A resource id as the `cards` tool gives it (`2476-4670263`, `container-fe7ae5f85c8a`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct IdArg(#[schemars(with = "String")] Value);

// Taken as any JSON value, as `IdArg` is.
/// A TCP port, 1 to 65535.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct PortArg(#[schemars(with = "u16", range(min = 1, max = 65535))] Value);

/// `cards`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CardsArgs {
    /// Only projects under these folders, each an absolute path; none: every project.
    #[serde(default)]
    pub under: Vec<String>,
    /// Only resources that listen on these TCP ports; none: every resource.
    #[serde(default)]
    pub ports: Vec<PortArg>,
}

/// `who_holds_port`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PortArgs {
    /// The TCP port, 1 to 65535.
    pub port: PortArg,
}

/// `plan_stop`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// Resource ids from the `cards` tool (`2476-4670263`, `container-fe7ae5f85c8a`).
    #[serde(default)]
    pub ids: Vec<IdArg>,
    /// TCP ports: the resource holding each is planned.
    #[serde(default)]
    pub ports: Vec<PortArg>,
    /// Plan every resource this agent started itself during this session.
    #[serde(default)]
    pub mine: bool,
}

/// `carry_out`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CarryOutArgs {
    /// The plan id `plan_stop` returned.
    pub plan: String,
}

/// `history`: nothing.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {}

/// `restart`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestartArgs {
    /// The snapshot of a stop this agent made, as `history` or `carry_out` names it.
    pub snapshot: String,
}

/// A resource id, checked as `pier stop` checks one (`model::target`'s grammar): a bare
/// number, a name, a path or `:PORT` is refused, naming both forms an agent may use.
pub fn id(arg: &IdArg) -> Result<String, AgentError> {
    match &arg.0 {
        Value::String(s) if s.parse::<TargetId>().is_ok() => Ok(s.clone()),
        Value::String(s) => Err(AgentError::BadId(s.clone())),
        other => Err(AgentError::BadId(other.to_string())),
    }
}

/// A port, 1 to 65535, written as a JSON whole number (not `"3000"`, not `3000.5`).
pub fn port(arg: &PortArg) -> Result<u16, AgentError> {
    arg.0
        .as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|&p| p > 0)
        .ok_or_else(|| AgentError::BadPort(arg.0.to_string()))
}

/// A folder to scope the cards by: absolute, existing, resolved (`front::resolve_absolute_dir`).
pub fn folder(path: &str) -> Result<PathBuf, AgentError> {
    front::resolve_absolute_dir("under", Path::new(path))
        .map_err(|e| AgentError::BadFolder(e.to_string()))
}

/// Each of `args`, checked by `check`; the first refused is the answer.
pub fn all<A, T>(
    args: &[A],
    check: impl Fn(&A) -> Result<T, AgentError>,
) -> Result<Vec<T>, AgentError> {
    args.iter().map(check).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id_of(v: Value) -> Result<String, AgentError> {
        id(&IdArg(v))
    }

    /// A bare number is what an agent types for a pid; Pier takes only the ids it gives
    /// (a pid alone names no process once it has changed hands).
    #[test]
    fn an_id_is_what_the_cards_give_and_nothing_else() {
        assert_eq!(id_of(json!("2476-4670263")).unwrap(), "2476-4670263");
        assert!(id_of(json!("container-fe7ae5f85c8a")).is_ok());
        for bad in [
            json!("1234"),
            json!(1234),
            json!(":3000"),
            json!("vite"),
            json!(null),
        ] {
            let e = id_of(bad.clone()).unwrap_err();
            assert!(matches!(e, AgentError::BadId(_)), "{bad}: {e:?}");
        }
        assert_eq!(
            id_of(json!(1234)).unwrap_err(),
            AgentError::BadId("1234".into())
        );
    }

    #[test]
    fn a_port_is_a_whole_number_from_1_to_65535() {
        assert_eq!(port(&PortArg(json!(5173))).unwrap(), 5173);
        assert_eq!(port(&PortArg(json!(65535))).unwrap(), 65535);
        for bad in [
            json!(0),
            json!(65536),
            json!(-1),
            json!(80.5),
            json!("3000"),
        ] {
            let e = port(&PortArg(bad.clone())).unwrap_err();
            assert!(matches!(e, AgentError::BadPort(_)), "{bad}: {e:?}");
        }
    }

    #[test]
    fn a_folder_is_absolute_and_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        assert_eq!(folder(path).unwrap(), dir.path().canonicalize().unwrap());
        for bad in ["code", "./code", &format!("{path}/gone")] {
            let e = folder(bad).unwrap_err();
            assert!(matches!(e, AgentError::BadFolder(_)), "{bad}: {e:?}");
        }
    }

    /// An argument the tool does not have is refused (`force`, `anyway`): never ignored.
    #[test]
    fn an_unknown_argument_is_refused() {
        let e = serde_json::from_value::<PlanArgs>(json!({"ids": [], "force": true}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `force`"), "{e}");
    }

    /// The schemas say what the checks take: ids are strings, ports 1 to 65535.
    #[test]
    fn the_schemas_say_ids_are_strings_and_ports_are_1_to_65535() {
        let schema = serde_json::to_value(schemars::schema_for!(PlanArgs)).unwrap();
        let text = schema.to_string();
        assert!(
            text.contains("\"minimum\":1") && text.contains("\"maximum\":65535"),
            "{text}"
        );
        assert_eq!(schema["$defs"]["IdArg"]["type"], "string", "{text}");
        assert_eq!(schema["additionalProperties"], false, "{text}");
    }
}
