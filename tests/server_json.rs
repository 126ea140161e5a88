//! `server.json`, the official MCP registry's entry for Pier (docs/mcp.md), cannot drift from
//! the crate it names: its version is Cargo's, its package is this crate, the stdio server it
//! starts is exactly `pier mcp`, and it holds what the registry's schema requires
//! (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json, checked here
//! field by field rather than vendored).

use std::path::Path;
use std::process::Command;

use serde_json::{Map, Value};

/// The schema the file names; a newer one is a deliberate change of this test too.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn server() -> Map<String, Value> {
    let text =
        std::fs::read_to_string(root().join("server.json")).expect("server.json at the root");
    match serde_json::from_str(&text).expect("server.json is JSON") {
        Value::Object(map) => map,
        other => panic!("server.json is not an object: {other}"),
    }
}

fn text<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{key} is a required string in {map:?}"))
}

/// The one package: Pier's crate on crates.io.
fn package(server: &Map<String, Value>) -> &Map<String, Value> {
    let packages = server["packages"].as_array().expect("packages is an array");
    assert_eq!(packages.len(), 1, "one package, the crate: {packages:?}");
    packages[0].as_object().expect("a package is an object")
}

/// The registry's name rule: `^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters.
fn registry_name(name: &str) -> bool {
    let Some((space, server)) = name.split_once('/') else {
        return false;
    };
    let ok = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    (3..=200).contains(&name.len()) && ok(space, ".-") && ok(server, "._-")
}

#[test]
fn the_entry_is_pier_at_cargos_version_under_its_repositorys_owner() {
    let server = server();
    assert_eq!(text(&server, "$schema"), SCHEMA);
    let name = text(&server, "name");
    assert!(
        registry_name(name),
        "{name} breaks the registry's name rule"
    );
    // The registry grants `io.github.<owner>/*` to the repository's owner (GitHub sign-in).
    let repo = server["repository"].as_object().expect("repository");
    assert_eq!(text(repo, "source"), "github");
    let owner = text(repo, "url")
        .strip_prefix("https://github.com/")
        .and_then(|rest| rest.strip_suffix("/pier"))
        .expect("the repository is https://github.com/OWNER/pier");
    assert_eq!(name, format!("io.github.{owner}/pier"));
    let description = text(&server, "description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "the registry takes 1 to 100 characters: {description}"
    );
    assert_eq!(
        text(&server, "version"),
        env!("CARGO_PKG_VERSION"),
        "server.json's version is Cargo's"
    );
}

#[test]
fn the_package_is_this_crate_and_starts_exactly_pier_mcp_on_stdio() {
    let server = server();
    let package = package(&server);
    // Only the schema's Package fields (it allows no others).
    let known = [
        "registryType",
        "registryBaseUrl",
        "identifier",
        "version",
        "fileSha256",
        "runtimeHint",
        "transport",
        "runtimeArguments",
        "packageArguments",
        "environmentVariables",
    ];
    for key in package.keys() {
        assert!(known.contains(&key.as_str()), "{key} is no Package field");
    }
    assert_eq!(text(package, "registryType"), "cargo");
    assert_eq!(text(package, "registryBaseUrl"), "https://crates.io");
    assert_eq!(text(package, "identifier"), env!("CARGO_PKG_NAME"));
    assert_eq!(text(package, "version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(package["transport"], serde_json::json!({"type": "stdio"}));
    // `cargo install` puts `pier` on PATH; there is no runner (no npx, uvx) to pass arguments to.
    assert!(!package.contains_key("runtimeHint") && !package.contains_key("runtimeArguments"));
    assert_eq!(package_arguments(package), ["mcp"]);
}

/// The binary's arguments, each a positional with a fixed `value` (required: `type`, and
/// `value` or `valueHint`; a hint would ask the person for it).
fn package_arguments(package: &Map<String, Value>) -> Vec<&str> {
    let args = package["packageArguments"]
        .as_array()
        .expect("packageArguments");
    args.iter()
        .map(|arg| {
            let arg = arg.as_object().expect("an argument is an object");
            assert_eq!(text(arg, "type"), "positional", "{arg:?}");
            assert!(
                !arg.contains_key("valueHint"),
                "a fixed argument, asked of nobody: {arg:?}"
            );
            text(arg, "value")
        })
        .collect()
}

#[test]
fn the_arguments_name_a_command_pier_has() {
    let server = server();
    let mut args: Vec<&str> = package_arguments(package(&server));
    args.push("--help");
    let out = Command::new(env!("CARGO_BIN_EXE_pier"))
        .args(&args)
        .output()
        .expect("pier runs");
    assert!(
        out.status.success(),
        "pier {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_readme_carries_the_registrys_ownership_line_in_plain_text() {
    // The registry proves a cargo package is ours by `mcp-name: NAME` in the README crates.io
    // shows; crates.io drops HTML comments, so it must be visible text.
    let name = text(&server(), "name").to_owned();
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let line = format!("mcp-name: {name}");
    let at = readme
        .find(&line)
        .unwrap_or_else(|| panic!("README.md lacks `{line}`"));
    let before = &readme[..at];
    assert!(
        before.rfind("<!--") <= before.rfind("-->"),
        "`{line}` is inside an HTML comment"
    );
    let next = readme[at + line.len()..].chars().next();
    assert!(
        next.is_none_or(|c| !c.is_ascii_alphanumeric() && !"./_-".contains(c)),
        "`{line}` runs on"
    );
}
