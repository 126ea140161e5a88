//! The `pier` binary: parse arguments, run, map errors to documented exit codes.

use std::process::ExitCode;

fn main() -> ExitCode {
    pier::cli::main()
}
