//! The `pier-app` binary: the menu-bar / tray app (`pier` and `pier app` exec it).

use std::process::ExitCode;

fn main() -> ExitCode {
    pier_app::start::app_main()
}
