//! The automatic-stop rules as a test writes and reads them: `rules.toml` in the sandbox's
//! configuration folder, and `pier auto --json` scoped to the sandbox.

use serde_json::Value;

use super::Sandbox;

/// Writes `text` as the sandbox's `rules.toml`.
pub fn rules(sb: &Sandbox, text: &str) {
    let dir = sb.path().join("config");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rules.toml"), text).unwrap();
}

/// `pier auto --json ARGS` over the sandbox, which must exit 0.
pub fn auto_json(sb: &Sandbox, args: &[&str]) -> Value {
    let out = sb.pier(&[&["auto", "--json"], args].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("pier auto prints JSON")
}

/// The card of resource `id` in `pier auto --json`'s lists.
pub fn card<'v>(doc: &'v Value, id: &str) -> Option<&'v Value> {
    ["due", "others"]
        .iter()
        .flat_map(|k| doc[k].as_array().into_iter().flatten())
        .find(|c| c["id"] == id)
}
