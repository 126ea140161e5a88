//! The `pier` binary: the command line (`cli/`). Parse arguments, run, map errors to documented
//! exit codes. It builds on the engine (`pier-core`) alone: no GUI dependency.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
