//! `pier` with no arguments, or `pier app ARGS`, execs the `pier-app` binary beside it with the
//! same arguments: the app links GTK (on Linux), the CLI does not, so `pier scan` starts in a
//! few milliseconds with a few MB and builds on a machine without GTK. `pier-app` parses its
//! arguments itself (`crates/app/src/start.rs`).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use pier_core::front::EXIT_FAILED;

/// The name of the app's binary, beside `pier`.
pub const APP_BINARY: &str = "pier-app";

/// `pier` / `pier app ARGS`: becomes `pier-app ARGS` (same pid); returns only when it cannot.
pub fn exec_app(args: Vec<OsString>) -> ExitCode {
    let app = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(APP_BINARY),
        Err(e) => {
            eprintln!("pier: Pier cannot find its own program, so not the app beside it: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let error = std::process::Command::new(&app).args(args).exec();
    let how = if error.kind() == std::io::ErrorKind::NotFound {
        "it is not built: `cargo build -p pier-app` builds it; on Linux that needs GTK 3, \
         libgtk-3-dev, and libayatana-appindicator3-1 to run, which scripts/setup-linux.sh \
         installs"
            .to_owned()
    } else {
        error.to_string()
    };
    eprintln!(
        "pier: the tray app {} could not be started ({how}); `pier scan` and `pier stop` work \
         without it",
        pier_core::words::path_for_terminal(&app)
    );
    ExitCode::from(EXIT_FAILED)
}
