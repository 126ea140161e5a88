//! `pier watch` as a service that runs at login (docs/design.md §5a): a systemd user unit on
//! Linux, a LaunchAgent on macOS. Both texts are made here from the running `pier` binary's
//! absolute path; `--install` writes this platform's as the protect list is written (its folder
//! checked and held, a temp file renamed into place), never over a different file without
//! `--force`, never through a link. Pier never runs `systemctl` or `launchctl`: it prints the
//! one command that turns the service on.

use std::path::{Path, PathBuf};

use crate::trust::folder::{Folder, FolderError};
use crate::trust::read::FileError;
use crate::trust::Me;

/// The systemd user unit's file name.
pub const UNIT: &str = "pier-watch.service";
/// The LaunchAgent's label, and its file's stem.
pub const LABEL: &str = "dev.pier.watch";

/// Why the service could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No home folder to put it under.
    #[error("HOME is not set to an absolute path: there is no folder to write the service in")]
    NoHome,
    /// The binary's path cannot be written in a unit or a plist.
    #[error("{} is not UTF-8: a service file cannot name it", .0.display())]
    NotUtf8(PathBuf),
    /// systemd refuses an executable whose path holds such characters.
    #[error(
        "{} holds a quote, a backslash or a control character: systemd cannot run it; move \
         pier to a plainer path",
        .0.display()
    )]
    Unrunnable(PathBuf),
    /// Its folder could not be made or held.
    #[error("{0}")]
    Folder(#[from] FolderError),
    /// Something that is not the user's regular file is where the service goes.
    #[error("{}: {source}; Pier does not write through it", .path.display())]
    Planted {
        /// The service file's path.
        path: PathBuf,
        /// What is there.
        #[source]
        source: FileError,
    },
    /// A different file is there, and replacing it was not asked for.
    #[error(
        "{} exists and differs from Pier's; `pier watch --install --force` replaces it",
        .0.display()
    )]
    Differs(PathBuf),
    /// The OS's answer while writing it.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The service file's path.
        path: PathBuf,
        /// The OS's answer.
        #[source]
        source: std::io::Error,
    },
}

/// A service file for this platform: where it goes, what it says, and how to turn it on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Service {
    /// Its absolute path.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The one command that turns it on.
    pub enable: String,
}

/// The executable `exe` as a systemd command line's first word (systemd.syntax(7),
/// systemd.service(5)): in double quotes, `%` (a specifier) doubled; `None` for a path systemd
/// refuses as an executable's name (a quote, a backslash, a control character: "special
/// characters"). `$` stays as it is: the executable's name is not expanded. Why quote every
/// time: a path with a space must name the same file systemd runs.
pub fn systemd_quoted(exe: &str) -> Option<String> {
    if exe
        .chars()
        .any(|c| matches!(c, '"' | '\'' | '\\') || c.is_control())
    {
        return None;
    }
    Some(format!("\"{}\"", exe.replace('%', "%%")))
}

/// The systemd user unit that runs `exe watch` at login, restarted when it fails; `None` for
/// a path systemd cannot run ([`systemd_quoted`]). Why a minute between tries: a watch that
/// finds the app holding the scheduler lock exits 1; it tries again each minute, and acts once
/// the app has quit, without a start every few seconds meanwhile.
pub fn systemd_unit(exe: &str) -> Option<String> {
    let exe = systemd_quoted(exe)?;
    Some(format!(
        "# Written by `pier watch --install`: Pier's scheduler at login (pier watch).\n\
         [Unit]\n\
         Description=Pier: automatic stops of idle dev servers (pier watch)\n\
         \n\
         [Service]\n\
         ExecStart={exe} watch\n\
         Restart=on-failure\n\
         RestartSec=60\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n"
    ))
}

/// `text` escaped for XML character data.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The LaunchAgent that runs `exe watch` at login (RunAtLoad), started again when it ends
/// with a failure (KeepAlive, SuccessfulExit false), at most once a minute (ThrottleInterval),
/// as the systemd unit is.
pub fn launch_agent(exe: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \
         \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by Pier: its scheduler, pier watch, at login. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\t<string>{LABEL}</string>\n\
         \t<key>ProgramArguments</key>\n\
         \t<array>\n\t\t<string>{}</string>\n\t\t<string>watch</string>\n\t</array>\n\
         \t<key>RunAtLoad</key>\n\t<true/>\n\
         \t<key>KeepAlive</key>\n\
         \t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n\
         \t<key>ThrottleInterval</key>\n\t<integer>60</integer>\n\
         \t<key>ProcessType</key>\n\t<string>Background</string>\n\
         </dict>\n\
         </plist>\n",
        xml(exe)
    )
}

/// The systemd user unit for `exe`, under `config` (`$XDG_CONFIG_HOME`, or `~/.config`).
pub fn systemd(exe: &Path, config: &Path) -> Result<Service, ServiceError> {
    let path = exe;
    let exe = exe
        .to_str()
        .ok_or_else(|| ServiceError::NotUtf8(exe.into()))?;
    Ok(Service {
        path: config.join("systemd/user").join(UNIT),
        text: systemd_unit(exe).ok_or_else(|| ServiceError::Unrunnable(path.into()))?,
        enable: format!("systemctl --user daemon-reload && systemctl --user enable --now {UNIT}"),
    })
}

/// The LaunchAgent for `exe`, under `home`.
pub fn launchd(exe: &Path, home: &Path) -> Result<Service, ServiceError> {
    let exe = exe
        .to_str()
        .ok_or_else(|| ServiceError::NotUtf8(exe.into()))?;
    Ok(Service {
        path: home.join(format!("Library/LaunchAgents/{LABEL}.plist")),
        text: launch_agent(exe),
        enable: format!("launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/{LABEL}.plist"),
    })
}

/// An absolute path from an environment variable; `None` when unset, empty or relative.
fn absolute_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// This platform's service for the running binary `exe`, where its environment says.
pub fn for_this_platform(exe: &Path) -> Result<Service, ServiceError> {
    let home = absolute_var("HOME");
    if cfg!(target_os = "macos") {
        return launchd(exe, &home.ok_or(ServiceError::NoHome)?);
    }
    let config = match absolute_var("XDG_CONFIG_HOME") {
        Some(c) => c,
        None => home.ok_or(ServiceError::NoHome)?.join(".config"),
    };
    systemd(exe, &config)
}

/// What [`install`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// Written (new, or replacing a different file with `force`).
    Written,
    /// The same text was already there: nothing written.
    Unchanged,
}

/// Writes `service` (its folders made 0700 when missing and checked), unless the same text is
/// there; a different file is replaced only with `force`; a link, FIFO or another user's file
/// there is refused.
pub fn install(service: &Service, force: bool) -> Result<Installed, ServiceError> {
    let (Some(dir), Some(name)) = (
        service.path.parent(),
        service.path.file_name().and_then(|n| n.to_str()),
    ) else {
        return Err(ServiceError::NoHome);
    };
    let folder = Folder::open(dir, Me::current(), true)?;
    let planted = |source| ServiceError::Planted {
        path: service.path.clone(),
        source,
    };
    match folder.read(name, crate::trust::read::CONFIG) {
        Ok(None) => {}
        Ok(Some(old)) if old == service.text.as_bytes() => return Ok(Installed::Unchanged),
        Ok(Some(_)) if !force => return Err(ServiceError::Differs(service.path.clone())),
        Ok(Some(_)) => {}
        Err(FileError::Io(e)) => {
            return Err(ServiceError::Io {
                path: service.path.clone(),
                source: e,
            })
        }
        Err(e) => return Err(planted(e)),
    }
    write(&folder, name, &service.text).map_err(|source| ServiceError::Io {
        path: service.path.clone(),
        source,
    })?;
    Ok(Installed::Written)
}

/// `text` as `folder`'s file `name`: a temp file, synced, renamed into place.
fn write(folder: &Folder, name: &str, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let (mut f, tmp) = folder.create_temp(name)?;
    let written = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| folder.rename(&tmp, name))
        .and_then(|()| folder.sync());
    if written.is_err() {
        let _ = folder.unlink(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space stays inside the quotes, a specifier is doubled, and what systemd refuses in
    /// an executable's name is refused here (systemd-analyze verify, tests/watch_service_linux).
    #[test]
    fn a_path_is_quoted_as_systemd_reads_it_or_refused() {
        assert_eq!(
            systemd_quoted("/usr/bin/pier").as_deref(),
            Some("\"/usr/bin/pier\"")
        );
        assert_eq!(
            systemd_quoted("/a b/%h/$X/pier").as_deref(),
            Some("\"/a b/%%h/$X/pier\"")
        );
        for refused in ["/a\"b/pier", "/a'b/pier", "/a\\b/pier", "/a\nb/pier"] {
            assert_eq!(systemd_quoted(refused), None, "{refused:?}");
        }
    }

    /// The unit runs the binary's absolute path with `watch`, and restarts on failure.
    #[test]
    fn the_unit_runs_pier_watch_and_restarts_it_on_failure() {
        let unit = systemd_unit("/opt/pier/bin/pier").unwrap();
        assert!(unit.contains("\nExecStart=\"/opt/pier/bin/pier\" watch\n"));
        assert!(unit.contains("\nRestart=on-failure\n"));
        assert!(unit.contains("\nWantedBy=default.target\n"));
    }

    /// A plist names the binary as XML character data.
    #[test]
    fn the_launch_agent_escapes_the_binary_s_path() {
        let plist = launch_agent("/Apps/R&D <x>/pier");
        assert!(plist.contains("<string>/Apps/R&amp;D &lt;x&gt;/pier</string>"));
        assert!(plist.contains("<key>RunAtLoad</key>\n\t<true/>"));
    }
}
