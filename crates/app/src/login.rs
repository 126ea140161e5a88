//! "Start at login": an XDG autostart entry on Linux, a LaunchAgent on macOS. Each file names
//! the `pier-app` binary, with no arguments; its presence is the setting. The contents are
//! built by pure functions (tested); the file is written whole (temp, then rename).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the login item lives for this user, from the environment.
pub fn entry_path(env: &dyn Fn(&str) -> Option<String>, macos: bool) -> Result<PathBuf, String> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if macos {
        return var("HOME")
            .map(|h| h.join("Library/LaunchAgents/dev.pier.Pier.plist"))
            .ok_or_else(|| "HOME is not set".to_owned());
    }
    var("XDG_CONFIG_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .map(|c| c.join("autostart/pier.desktop"))
        .ok_or_else(|| "neither XDG_CONFIG_HOME nor HOME is set".to_owned())
}

/// The path of this user's login item on this platform.
pub fn system_entry_path() -> Result<PathBuf, String> {
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

/// The LaunchAgent for `exe`.
pub fn launch_agent(exe: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>dev.pier.Pier</string>
    <key>ProgramArguments</key>
    <array>
        <string>{}</string>
    </array>
    <key>RunAtLoad</key>
    <true/>
    <key>ProcessType</key>
    <string>Interactive</string>
</dict>
</plist>
"#,
        xml_escape(exe)
    )
}

/// Whether the login item is there.
pub fn is_enabled(path: &Path) -> Result<bool, String> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
    }
}

/// Writes (`on`) or removes the login item for `exe`; returns the new setting.
pub fn set(path: &Path, exe: &Path, on: bool, macos: bool) -> Result<bool, String> {
    if !on {
        return match fs::remove_file(path) {
            Ok(()) => Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("{} could not be removed: {e}", path.display())),
        };
    }
    let exe = exe
        .to_str()
        .ok_or_else(|| format!("{} is not valid UTF-8", exe.display()))?;
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
        .map_err(|e| format!("{} could not be written: {e}", path.display()))
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
    fn macos_uses_a_launch_agent() {
        assert_eq!(
            entry_path(&env(&[("HOME", "/Users/u")]), true).unwrap(),
            Path::new("/Users/u/Library/LaunchAgents/dev.pier.Pier.plist")
        );
    }

    #[test]
    fn exec_quotes_spaces_dollars_and_percent() {
        let e = desktop_entry("/opt/my apps/$pier%");
        assert!(e.contains("Exec=\"/opt/my apps/\\\\$pier%%\"\n"), "{e}");
    }

    #[test]
    fn the_launch_agent_escapes_its_path() {
        let a = launch_agent("/Apps/A&B/pier");
        assert!(a.contains("<string>/Apps/A&amp;B/pier</string>"));
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
