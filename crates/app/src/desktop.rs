//! Asking the desktop to open things: a URL in the browser, a folder in the file manager, and
//! a notification when an action ends — an automatic stop's with a Restart button where the
//! platform has them. Each is best effort: a failure is logged, never shown as a crash, and
//! never blocks the UI thread.

use std::path::Path;
use std::process::{Command, Stdio};

use pier_core::words::for_terminal;
use pier_core::worker::{notification_text, ActionReport, Undo};

/// The opener command and its arguments for a URL or a folder (`xdg-open` or macOS `open`).
pub fn opener(target: &str, macos: bool) -> (&'static str, Vec<String>) {
    if macos {
        ("open", vec![target.to_owned()])
    } else {
        ("xdg-open", vec![target.to_owned()])
    }
}

/// Opens `target` without a shell, reaping the opener on a thread of its own.
pub fn open(target: &str) {
    if !(target.starts_with("http://") || Path::new(target).is_absolute()) {
        let target = for_terminal(target);
        tracing::warn!("not opening {target}: neither a URL nor an absolute folder");
        return;
    }
    let (program, args) = opener(target, cfg!(target_os = "macos"));
    match Command::new(program)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => tracing::warn!(
            "{program} could not be started to open {}: {e}",
            for_terminal(target)
        ),
    }
}

/// Shows a desktop notification, where the desktop has a notification service. Its texts
/// name folders and commands, so they are escaped as the menu's are ([`for_terminal`]); the
/// platforms' own log lines then hold the escaped texts too.
pub fn notify(summary: &str, body: &str) {
    let body = for_terminal(body).into_owned();
    super::platform::notify(Note {
        summary: for_terminal(summary).into_owned(),
        plain: body.clone(),
        body,
        undo: None,
    });
}

/// One notification, its texts escaped: `body` beside a Restart button for `undo`, `plain`
/// where no button can be shown (it names the command instead).
#[derive(Debug, Clone)]
pub struct Note {
    pub summary: String,
    pub body: String,
    pub plain: String,
    pub undo: Option<Undo>,
}

/// Notifies an action's result under `title`; an automatic stop's offers its Restart.
pub fn notify_result(title: &str, report: &ActionReport) {
    super::platform::notify(Note {
        summary: for_terminal(title).into_owned(),
        body: for_terminal(&notification_text(report, true)).into_owned(),
        plain: for_terminal(&notification_text(report, false)).into_owned(),
        undo: report.restart.clone(),
    });
}

/// What a notification's Restart does, set once at start-up; it may be called on any thread.
pub type OnRestart = Box<dyn Fn(Undo) + Send + Sync>;

/// Listens for the Restart of a notification from now on (on Linux, the D-Bus signal).
pub fn on_restart(f: OnRestart) {
    super::platform::on_restart(f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_one_argument_never_a_command_line() {
        let (program, args) = opener("http://localhost:5173/?a=1&b=$(x)", false);
        assert_eq!(program, "xdg-open");
        assert_eq!(args, vec!["http://localhost:5173/?a=1&b=$(x)".to_owned()]);
        assert_eq!(opener("/w/shop", true).0, "open");
    }
}
