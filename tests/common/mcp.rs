//! The official MCP SDK the `mcp*_linux` tests drive `pier mcp` with.

use std::path::PathBuf;

/// The venv's python with the official Python SDK (`scripts/real-tools.sh`, group `mcp`), or
/// `None` (with a line saying how to run `test`) without the cache.
pub fn sdk_python(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("PIER_REAL_TOOLS") else {
        eprintln!(
            "{test}: skipped, it runs the official MCP SDK: scripts/real-tools.sh, then \
             PIER_REAL_TOOLS=~/.cache/pier-real-tools cargo test --test 'mcp*'"
        );
        return None;
    };
    let python = PathBuf::from(dir).join("venv/mcp/bin/python");
    assert!(
        python.exists(),
        "{test}: the MCP SDK is not installed ({} is missing): run scripts/real-tools.sh",
        python.display()
    );
    Some(python)
}
