//! "Start at login": an XDG autostart entry on Linux, a LaunchAgent on macOS. Each file names
//! the `pier-app` binary, with no arguments; its presence is the setting. The contents, and
//! whether this binary may be named at all ([`may_start_at_login`]), are pure functions
//! (tested); the file is written whole (temp, then rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Pier.app's bundle identifier (`CFBundleIdentifier` in `assets/macos/Info.plist`), which is
/// also its LaunchAgent's label and the agent file's name.
pub const BUNDLE_ID: &str = "dev.pier.Pier";

/// What to do when Pier is not where a login item could start it from.
const MOVE: &str = "move Pier.app to /Applications and open it from there first";

/// Why "Start at login" cannot be read or changed: a sentence that follows "Start at login: "
/// in the menu, or the notification's body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    /// macOS: no `HOME`, so no `~/Library/LaunchAgents`.
    #[error("HOME is not set")]
    NoHome,
    /// Linux: no `XDG_CONFIG_HOME` and no `HOME`, so no autostart folder.
    #[error("neither XDG_CONFIG_HOME nor HOME is set")]
    NoConfigFolder,
    /// Pier's path holds a control character ([`may_start_at_login`]).
    #[error(
        "Pier's path holds a control character, which a login item cannot name; move Pier to a \
         plain folder first"
    )]
    ControlCharacter,
    /// macOS runs Pier from an App Translocation copy ([`may_start_at_login`]).
    #[error("macOS runs Pier from a temporary copy (App Translocation); {MOVE}")]
    Translocated,
    /// macOS: a `pier-app` outside `Pier.app` ([`may_start_at_login`]).
    #[error("Pier runs outside Pier.app here; {MOVE}")]
    OutsideBundle,
    /// Pier's path is not UTF-8, which neither file can hold.
    #[error("{} is not valid UTF-8", .0.display())]
    NotUtf8(PathBuf),
    /// The login item could not be looked at, written or removed: the file and the OS's words.
    #[error("{} {}: {why}", .path.display(), .doing.words())]
    Io {
        /// The login item's file.
        path: PathBuf,
        /// What was being done to it.
        doing: Doing,
        /// The OS's error, in its words.
        why: String,
    },
}

/// What was being done to the login item when the OS said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    /// Looking whether it is there.
    Reading,
    /// Writing it (on).
    Writing,
    /// Removing it (off).
    Removing,
}

impl Doing {
    fn words(self) -> &'static str {
        match self {
            Self::Reading => "cannot be read",
            Self::Writing => "could not be written",
            Self::Removing => "could not be removed",
        }
    }

    /// The OS's `e`, met while doing this to `path`.
    fn failed(self, path: &Path, e: &std::io::Error) -> LoginError {
        LoginError::Io {
            path: path.to_path_buf(),
            doing: self,
            why: e.to_string(),
        }
    }
}

/// Where the login item lives for this user, from the environment.
pub fn entry_path(
    env: &dyn Fn(&str) -> Option<String>,
    macos: bool,
) -> Result<PathBuf, LoginError> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if macos {
        return var("HOME")
            .map(|h| h.join(format!("Library/LaunchAgents/{BUNDLE_ID}.plist")))
            .ok_or(LoginError::NoHome);
    }
    var("XDG_CONFIG_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .map(|c| c.join("autostart/pier.desktop"))
        .ok_or(LoginError::NoConfigFolder)
}

/// The path of this user's login item on this platform.
pub fn system_entry_path() -> Result<PathBuf, LoginError> {
    entry_path(&|k| std::env::var(k).ok(), cfg!(target_os = "macos"))
}

/// Quotes one Exec argument as the Desktop Entry spec asks: in double quotes, with `"`, `` ` ``,
/// `$` and `\` escaped, and `%` doubled (field codes).
fn desktop_quote(arg: &str) -> String {
    let mut out = String::from("\"");
    for c in arg.chars() {
        match c {
            '"' | '`' | '$' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '%' => out.push_str("%%"),
            _ => out.push(c),
        }
    }
    out.push('"');
    // The file format escapes backslashes once more on top of the Exec quoting.
    out.replace('\\', "\\\\")
}

/// The XDG autostart entry for `exe`.
pub fn desktop_entry(exe: &str) -> String {
    format!(
        "[Desktop Entry]\nType=Application\nName=Pier\n\
         Comment=Finds dev servers left running and stops them safely\n\
         Exec={}\nTerminal=false\nX-GNOME-Autostart-enabled=true\n",
        desktop_quote(exe)
    )
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The LaunchAgent for `exe`: run at login, as an app the user sees (`Interactive`: no
/// background throttling), and only in the graphical session (`Aqua`: not in an ssh or
/// background session, where a menu-bar app has no menu bar).
pub fn launch_agent(exe: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{BUNDLE_ID}</string>
    <key>ProgramArguments</key>
    <array>
        <string>{}</string>
    </array>
    <key>RunAtLoad</key>
    <true/>
    <key>ProcessType</key>
    <string>Interactive</string>
    <key>LimitLoadToSessionType</key>
    <string>Aqua</string>
</dict>
</plist>
"#,
        xml_escape(exe)
    )
}

/// Why `exe` cannot be the login item, if it cannot; a sentence that follows "Start at login: "
/// in the menu.
///
/// - A control character (a newline, say) cannot be written into either file: it would end
///   the autostart entry's `Exec` line, and XML cannot hold most of them.
/// - On macOS, an app opened where it was downloaded runs from an App Translocation folder: a
///   random, read-only copy that Gatekeeper makes and that is gone after a restart, so a
///   LaunchAgent naming it would start nothing.
/// - On macOS, a `pier-app` outside `Pier.app/Contents/MacOS` (one run from a build folder) is
///   no app: it has no bundle identifier, so no notifications, and a build folder is rebuilt,
///   moved and cleaned out from under a login item.
pub fn may_start_at_login(exe: &Path, macos: bool) -> Result<(), LoginError> {
    if exe.to_string_lossy().chars().any(char::is_control) {
        return Err(LoginError::ControlCharacter);
    }
    if !macos {
        return Ok(());
    }
    let translocated = exe
        .components()
        .any(|c| c.as_os_str() == "AppTranslocation");
    if translocated {
        return Err(LoginError::Translocated);
    }
    let mut up = exe.ancestors().skip(1);
    let named = |p: Option<&Path>, name: &str| p.and_then(Path::file_name) == Some(name.as_ref());
    let in_bundle = named(up.next(), "MacOS")
        && named(up.next(), "Contents")
        && up.next().and_then(Path::extension) == Some("app".as_ref());
    if !in_bundle {
        return Err(LoginError::OutsideBundle);
    }
    Ok(())
}

/// Whether the login item is there.
pub fn is_enabled(path: &Path) -> Result<bool, LoginError> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Doing::Reading.failed(path, &e)),
    }
}

/// Writes (`on`) or removes the login item for `exe`; returns the new setting. Turning it on
/// is refused, and nothing written, when [`may_start_at_login`] says no; turning it off never is.
pub fn set(path: &Path, exe: &Path, on: bool, macos: bool) -> Result<bool, LoginError> {
    if !on {
        return match fs::remove_file(path) {
            Ok(()) => Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Doing::Removing.failed(path, &e)),
        };
    }
    may_start_at_login(exe, macos)?;
    let exe = exe
        .to_str()
        .ok_or_else(|| LoginError::NotUtf8(exe.to_path_buf()))?;
    let text = if macos {
        launch_agent(exe)
    } else {
        desktop_entry(exe)
    };
    let folder = path.parent().expect("the entry lives in a folder");
    let write = || -> std::io::Result<()> {
        fs::create_dir_all(folder)?;
        let tmp = folder.join(".pier-login.tmp");
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write()
        .map(|()| true)
        .map_err(|e| Doing::Writing.failed(path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn linux_follows_xdg_config_home_then_home() {
        let both = env(&[("XDG_CONFIG_HOME", "/c"), ("HOME", "/h")]);
        assert_eq!(
            entry_path(&both, false).unwrap(),
            Path::new("/c/autostart/pier.desktop")
        );
        let home = env(&[("XDG_CONFIG_HOME", ""), ("HOME", "/h")]);
        assert_eq!(
            entry_path(&home, false).unwrap(),
            Path::new("/h/.config/autostart/pier.desktop")
        );
        assert!(
            entry_path(&env(&[]), false).is_err(),
            "no place: a sentence"
        );
    }

    #[test]
    fn macos_uses_a_launch_agent_named_after_the_bundle() {
        assert_eq!(BUNDLE_ID, "dev.pier.Pier");
        assert_eq!(
            entry_path(&env(&[("HOME", "/Users/u")]), true).unwrap(),
            Path::new("/Users/u/Library/LaunchAgents/dev.pier.Pier.plist")
        );
        assert!(entry_path(&env(&[]), true).is_err(), "no HOME: a sentence");
    }

    #[test]
    fn exec_quotes_spaces_dollars_and_percent() {
        let e = desktop_entry("/opt/my apps/$pier%");
        assert!(e.contains("Exec=\"/opt/my apps/\\\\$pier%%\"\n"), "{e}");
    }

    /// The agent as launchd reads it: a plist parser's view, not a substring of the text.
    fn parsed_agent(text: &str) -> plist::Dictionary {
        plist::Value::from_reader_xml(text.as_bytes())
            .unwrap_or_else(|e| panic!("not a plist ({e}):\n{text}"))
            .into_dictionary()
            .expect("a dictionary at the top")
    }

    #[test]
    fn the_launch_agent_is_a_plist_naming_exactly_the_program() {
        let exe = "/Users/Zoë Q/Apps & <Tools> \"new\" 'x'/Pier.app/Contents/MacOS/pier-app";
        let agent = parsed_agent(&launch_agent(exe));
        let mut keys: Vec<&str> = agent.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "Label",
                "LimitLoadToSessionType",
                "ProcessType",
                "ProgramArguments",
                "RunAtLoad"
            ],
            "these keys and no others"
        );
        assert_eq!(agent["Label"].as_string(), Some(BUNDLE_ID));
        let args = agent["ProgramArguments"].as_array().expect("an array");
        let args: Vec<_> = args.iter().map(plist::Value::as_string).collect();
        assert_eq!(args, [Some(exe)], "the program alone, unchanged");
        assert_eq!(agent["RunAtLoad"].as_boolean(), Some(true));
        assert_eq!(agent["ProcessType"].as_string(), Some("Interactive"));
        assert_eq!(agent["LimitLoadToSessionType"].as_string(), Some("Aqua"));
    }

    #[test]
    fn the_bundle_s_identifier_is_the_launch_agent_s_label() {
        let info = include_str!("../../../assets/macos/Info.plist").replace("@VERSION@", "0.0.0");
        let info = parsed_agent(&info);
        assert_eq!(info["CFBundleIdentifier"].as_string(), Some(BUNDLE_ID));
        assert_eq!(info["CFBundleExecutable"].as_string(), Some("pier-app"));
    }

    const BUNDLED: &str = "/Applications/Pier.app/Contents/MacOS/pier-app";

    #[test]
    fn a_translocated_app_may_not_start_at_login() {
        let translocated = "/private/var/folders/xy/T/AppTranslocation/5C0E-41A2/d/Pier.app/\
                            Contents/MacOS/pier-app";
        let why = may_start_at_login(Path::new(translocated), true).unwrap_err();
        assert_eq!(why, LoginError::Translocated);
        let why = why.to_string();
        assert!(why.contains("App Translocation"), "{why}");
        assert!(why.contains("move Pier.app to /Applications"), "{why}");
        assert_eq!(may_start_at_login(Path::new(BUNDLED), true), Ok(()));
        let downloads = "/Users/u/Downloads/Pier.app/Contents/MacOS/pier-app";
        assert_eq!(
            may_start_at_login(Path::new(downloads), true),
            Ok(()),
            "run where it is, not translocated: it stays there"
        );
        let lookalike = "/Users/u/AppTranslocation notes/Pier.app/Contents/MacOS/pier-app";
        assert_eq!(
            may_start_at_login(Path::new(lookalike), true),
            Ok(()),
            "only a folder named exactly AppTranslocation"
        );
    }

    #[test]
    fn a_pier_app_outside_a_bundle_may_not_start_at_login_on_macos() {
        for exe in [
            "/Users/u/code/pier/target/release/pier-app",
            "/Applications/Pier.app/pier-app",
            "/Applications/Pier/Contents/MacOS/pier-app",
            "/Applications/Pier.app/Contents/Resources/pier-app",
            "pier-app",
        ] {
            let why = may_start_at_login(Path::new(exe), true).unwrap_err();
            assert_eq!(why, LoginError::OutsideBundle, "{exe}");
            let why = why.to_string();
            assert!(why.contains("outside Pier.app"), "{exe}: {why}");
            assert!(why.contains("move Pier.app to /Applications"), "{why}");
        }
        assert_eq!(
            may_start_at_login(Path::new("/home/u/.cargo/bin/pier-app"), false),
            Ok(()),
            "Linux has no bundles"
        );
    }

    #[test]
    fn a_path_with_a_control_character_may_not_start_at_login() {
        let exe = "/opt/pier\nHidden=true/pier-app";
        for macos in [false, true] {
            let why = may_start_at_login(Path::new(exe), macos).unwrap_err();
            assert_eq!(why, LoginError::ControlCharacter);
            let why = why.to_string();
            assert!(why.contains("control character"), "{why}");
        }
    }

    #[test]
    fn a_refusal_writes_nothing_and_off_is_never_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LaunchAgents/dev.pier.Pier.plist");
        let translocated = Path::new(
            "/private/var/folders/xy/T/AppTranslocation/1/d/Pier.app/Contents/MacOS/pier-app",
        );
        assert!(set(&path, translocated, true, true).is_err());
        assert!(!is_enabled(&path).unwrap(), "nothing written");
        assert_eq!(set(&path, Path::new(BUNDLED), true, true), Ok(true));
        let agent = parsed_agent(&fs::read_to_string(&path).unwrap());
        assert_eq!(
            agent["ProgramArguments"].as_array().unwrap()[0].as_string(),
            Some(BUNDLED)
        );
        assert_eq!(
            set(&path, translocated, false, true),
            Ok(false),
            "a translocated copy can still turn off what an installed one turned on"
        );
        assert!(!is_enabled(&path).unwrap());
    }

    #[test]
    fn on_writes_the_entry_and_off_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autostart/pier.desktop");
        assert!(!is_enabled(&path).unwrap());
        assert!(set(&path, Path::new("/usr/bin/pier-app"), true, false).unwrap());
        assert!(is_enabled(&path).unwrap());
        assert!(fs::read_to_string(&path)
            .unwrap()
            .contains("Exec=\"/usr/bin/pier-app\"\n"));
        assert!(!set(&path, Path::new("/usr/bin/pier"), false, false).unwrap());
        assert!(!is_enabled(&path).unwrap());
        assert!(
            !set(&path, Path::new("/usr/bin/pier"), false, false).unwrap(),
            "off twice is still off"
        );
    }
}
