//! What an agent is never told: an environment (no reply carries one), and argv values that
//! look like secrets (docs/design.md §7a), masked before any reply leaves.

/// What a masked value reads as.
pub const MASK: &str = "•••";

/// `argv` with every value that looks like a secret replaced by [`MASK`]: the value after a
/// flag named like a token, key, secret or password (`--api-key X`, `--token=X`), a
/// `NAME=value` whose name is, and a URL's password (`postgres://u:X@h`).
pub fn argv(argv: &[String]) -> Vec<String> {
    todo!("mask {argv:?}")
}
