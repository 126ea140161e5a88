//! Helpers: processes a server starts to do work for it, whose listeners are not the server's
//! own (a notebook kernel's). The table is data, read from argv structure like the tool table;
//! `diagnose::helpers` holds the rule that uses it.

use super::{basename, is_python, program_and_args};

/// One row of the helper table: what the helper is called, and the module a Python
/// interpreter runs it as (`python -m MODULE`, or the module's own file as the script).
struct HelperRule {
    helper: &'static str,
    module: &'static str,
}

/// What a notebook kernel's listener is called (`Port::helper`): state a restart cannot bring
/// back lives in it (its variables, what it loaded).
pub const NOTEBOOK_KERNEL: &str = "notebook kernel";

/// The helpers Pier recognises. Their listeners are chosen afresh at every start (a notebook
/// kernel binds random loopback ZMQ ports, and a restarted server has no kernel until a
/// notebook opens), so they are no address to open and prove nothing about readiness.
const HELPERS: &[HelperRule] = &[
    // Jupyter's kernelspec: `python -m ipykernel_launcher -f …/kernel-ID.json`.
    HelperRule {
        helper: NOTEBOOK_KERNEL,
        module: "ipykernel_launcher",
    },
    // Older kernelspecs, and `python -m ipykernel install`-era ones, run the package itself.
    HelperRule {
        helper: NOTEBOOK_KERNEL,
        module: "ipykernel",
    },
];

/// What helper an argv is, if it is one Pier knows: a Python interpreter running a module of
/// [`HELPERS`], read through the interpreter's own flags like every other argv here — never a
/// substring of the joined command line (`vim ipykernel_launcher.py` is no kernel).
pub fn helper_of(argv: &[Vec<u8>]) -> Option<&'static str> {
    if !is_python(&basename(argv.first()?)) {
        return None;
    }
    let (program, _) = program_and_args(argv)?;
    let module = program.strip_suffix(".py").unwrap_or(&program);
    HELPERS
        .iter()
        .find(|h| h.module == module)
        .map(|h| h.helper)
}

#[cfg(test)]
mod tests;
