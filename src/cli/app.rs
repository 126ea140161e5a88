//! `pier` with no arguments, or `pier app ARGS`, execs the `pier-app` binary beside it with the
//! same arguments: the app links GTK (on Linux), the CLI does not, so `pier scan` starts in a
//! few milliseconds with a few MB and builds on a machine without GTK. Both parse the app's
//! options from one definition (`pier_core::front::app_args`), so `pier app --help` answers on
//! a CLI-only install.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use super::EXIT_FAILED;

/// The name of the app's binary, beside `pier`.
pub const APP_BINARY: &str = "pier-app";

/// The app's own options (`pier_core::front::app_args`), which `pier` alone takes too:
/// `pier --under ~/code` is `pier app --under ~/code`, as the README shows them.
const APP_OPTIONS: [&str; 3] = ["--under", "--refresh", "--sample-ms"];

/// Whether a command line starts with one of the app's options (`--under DIR`,
/// `--refresh=0`): then it is the app's, passed to it whole.
pub fn for_the_app(args: &[OsString]) -> bool {
    let Some(first) = args.first().and_then(|a| a.to_str()) else {
        return false;
    };
    let name = first.split_once('=').map_or(first, |(name, _)| name);
    APP_OPTIONS.contains(&name)
}

/// `pier-app` beside the program `exe` names. On macOS `current_exe` is the path `pier` was
/// started by, a symbolic link when Homebrew's cask linked it into its `bin` (on Linux it is the
/// link's target already); the app is beside the target, inside Pier.app.
fn app_beside(exe: PathBuf) -> PathBuf {
    exe.canonicalize().unwrap_or(exe).with_file_name(APP_BINARY)
}

/// What follows `app` in `pier app ARGS` (clap has checked it; the app parses it again).
pub fn after_app(raw: Vec<OsString>) -> Vec<OsString> {
    let at = raw.iter().position(|a| a == "app").map_or(0, |i| i + 1);
    raw.into_iter().skip(at).collect()
}

/// `pier` / `pier app ARGS`: becomes `pier-app ARGS` (same pid); returns only when it cannot.
pub fn exec_app(args: Vec<OsString>) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("pier: Pier cannot find its own program, so not the app beside it: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let app = app_beside(exe.clone());
    let error = std::process::Command::new(&app).args(args).exec();
    if error.kind() == std::io::ErrorKind::NotFound {
        eprintln!("pier: {}", not_installed(&exe));
    } else {
        eprintln!(
            "pier: the tray app {} could not be started: {error}",
            pier_core::words::path_for_terminal(&app)
        );
    }
    ExitCode::from(EXIT_FAILED)
}

/// The one line a CLI-only install gets for `pier` alone: how to get the app, for a `pier`
/// built in a checkout (`target/<profile>/`) or installed.
fn not_installed(exe: &std::path::Path) -> String {
    let built_here = exe
        .parent()
        .and_then(std::path::Path::parent)
        .is_some_and(|p| p.file_name().is_some_and(|n| n == "target"));
    let how = if built_here {
        "`cargo build -p pier-app` builds it"
    } else {
        "`cargo install --locked --path crates/app` (the same --root as pier) adds it"
    };
    format!("the tray app is not installed; {how}. `pier --help` lists the commands.")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by trying: `pier --under ~/code` said "unexpected argument", though the README
    /// lists `--under` among the options of `pier` (the app).
    #[test]
    fn the_apps_options_first_make_the_command_line_the_apps() {
        let line = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(for_the_app(&line(&["--under", "/tmp"])));
        assert!(for_the_app(&line(&["--refresh=0", "--under", "/tmp"])));
        assert!(for_the_app(&line(&["--sample-ms", "0"])));
        assert!(!for_the_app(&line(&["scan", "--under", "/tmp"])));
        assert!(!for_the_app(&line(&["--help"])));
        assert!(!for_the_app(&line(&[])));
    }

    /// The cask links Homebrew's `bin/pier` to `Pier.app/Contents/MacOS/pier`, and on macOS
    /// `current_exe` is then the link: `pier` alone would look for `bin/pier-app`.
    #[test]
    fn the_app_is_looked_for_beside_the_program_a_link_names() {
        let dir = tempfile::tempdir().unwrap();
        let macos = dir.path().join("Pier.app/Contents/MacOS");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&macos).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(macos.join("pier"), "").unwrap();
        std::os::unix::fs::symlink(macos.join("pier"), bin.join("pier")).unwrap();
        let inside = macos.canonicalize().unwrap().join("pier-app");
        assert_eq!(app_beside(bin.join("pier")), inside);
        assert_eq!(app_beside(macos.join("pier")), inside);
        // A program that cannot be resolved (removed while running): the path as given.
        let gone = dir.path().join("gone/pier");
        assert_eq!(app_beside(gone), dir.path().join("gone/pier-app"));
    }
}
