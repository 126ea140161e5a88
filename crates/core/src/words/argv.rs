//! The shape of a command line, as both the words and the diagnosis read it: whether an argv
//! is a title a process wrote over itself, and whether a program is an interpreter that runs
//! a script. Pure functions over bytes, below both of their users (`words` shortens a command
//! by them; `diagnose::kinds` classifies by them), so neither reaches into the other.

/// Programs that run a script rather than being the tool: the script names the tool.
pub(crate) const INTERPRETERS: &[&str] = &["node", "nodejs", "ruby", "bun", "deno", "php"];

/// A title the process wrote over its argv (libuv's `uv_set_process_title`, `next-server
/// (v…)`, npm's "npm run dev", Puma's): a program name with spaces, or padding of empty
/// arguments. Such an argv is not a command: it is never exec'd, and never read as one.
pub fn is_title<A: AsRef<[u8]>>(argv: &[A]) -> bool {
    let Some(first) = argv.first() else {
        return true;
    };
    first.as_ref().contains(&b' ')
        || (argv.len() > 1 && argv[1..].iter().all(|a| a.as_ref().is_empty()))
}

/// A program that runs a script named in its arguments (`node`, `python3.12`, `ruby`, …).
pub fn is_interpreter(name: &str) -> bool {
    is_python(name) || INTERPRETERS.contains(&name)
}

/// python, python3, python3.12, pypy3 …
pub(crate) fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.'))
}
