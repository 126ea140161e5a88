//! What the real-tools tests read in `pier watch --json`'s lines (`common::watch` reads them).

use std::path::Path;

use serde_json::Value;

pub use crate::common::watch::Watch;

/// The resource of project folder `project` in a rescan line.
pub fn in_rescan<'v>(line: &'v Value, project: &Path) -> Option<&'v Value> {
    let project = project.to_string_lossy();
    (line["event"] == "rescan")
        .then(|| line["resources"].as_array())
        .flatten()?
        .iter()
        .find(|r| r["project"].as_str() == Some(&*project))
}

/// A resource's idle clock in a rescan line: its state and why.
pub fn clock(r: &Value) -> (&str, &str) {
    (
        r["idle"]["state"].as_str().unwrap_or("none"),
        r["idle"]["why"].as_str().unwrap_or(""),
    )
}
