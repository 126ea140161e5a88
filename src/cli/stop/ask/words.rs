//! The words of a bare number's question and of its refusals, in one place. Every name read
//! from the system passes through [`for_terminal`] here.

use std::fmt::Write as _;

use pier_core::diagnose::port::PortAnswer;
use pier_core::model::card::Level;
use pier_core::words::for_terminal;

use super::{choices, dead_end, Choice, Meaning, PidMeaning};
use crate::cli::render::Style;

/// Why a bare number was not asked about: nothing was acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NotAsked {
    /// No person to ask: stdin or stderr is no terminal.
    NoTerminal,
    /// `--json`: a script reads the answer.
    Json,
    /// Given beside other targets.
    NotAlone,
    /// With `--anyway` or `--force`: those act on an id alone.
    PastANo,
}

/// The refusal, one line per bare number, each with what it could mean and the command that
/// names each resource it could be (`pier stop 6989-3721068`, `pier stop :5199`).
pub(super) fn not_asked(why: NotAsked, meanings: &[Meaning]) -> String {
    let head = match why {
        NotAsked::NoTerminal => {
            "a bare number is a question, and only a person on a terminal can answer it: \
             nothing was stopped"
        }
        NotAsked::Json => {
            "a bare number is a question, and --json answers none: nothing was stopped"
        }
        NotAsked::NotAlone => {
            "a bare number is asked about only when it is alone on the command line: nothing \
             was stopped"
        }
        NotAsked::PastANo => {
            "--anyway and --force act only on a resource named by its id, never on a bare \
             number: nothing was stopped"
        }
    };
    let mut out = format!("{head}. Give the id you mean:");
    for m in meanings {
        let choices = choices(m);
        for (id, line) in lines(m) {
            let _ = write!(out, "\n  {line}");
            if let Some(c) = choices.iter().find(|c| Some(&c.id) == id.as_ref()) {
                let _ = write!(out, ": `{}`", c.command);
            }
        }
    }
    if meanings.iter().any(dead_end) {
        let _ = write!(out, "\n{LIST}");
    }
    out
}

/// The way forward when what a number could mean names nothing of Pier's.
const LIST: &str = "`pier scan` lists what Pier can stop, with each id.";

/// What the number could mean, then the question: "Stop vite in /x (id 6989-3721068)? [y/N]",
/// or a numbered choice when the pid and the port name different resources. When it names
/// nothing Pier could stop, it says so instead of asking.
pub(super) fn asked(m: &Meaning, choices: &[Choice], dry_run: bool) -> String {
    let mut out = format!("{} could mean:\n", m.number);
    for (id, line) in lines(m) {
        let number = choices.iter().position(|c| Some(&c.id) == id.as_ref());
        match number {
            Some(i) if choices.len() > 1 => {
                let _ = writeln!(out, "  {}. {line}", i + 1);
            }
            _ => {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    let verb = match dry_run {
        true => "Check, without stopping,",
        false => "Stop",
    };
    match choices {
        [] => {
            out.push_str("Nothing there Pier would stop: nothing was stopped.\n");
            if dead_end(m) {
                let _ = writeln!(out, "{LIST}");
            }
        }
        [one] => {
            let _ = write!(out, "{verb} {}? [y/N] ", one.what);
        }
        many => {
            let numbers: Vec<String> = (1..=many.len()).map(|i| i.to_string()).collect();
            let _ = write!(
                out,
                "{verb} which? [{}, or Enter for none] ",
                numbers.join("/")
            );
        }
    }
    out
}

/// The person answered and picked none: "no" (or Enter) to one question, or no number among
/// several (`choices`: how many were offered).
pub(super) fn declined(number: &str, choices: usize) -> String {
    let why = match choices {
        1 => "you answered no",
        _ => "you did not pick one",
    };
    format!("pier: {number}: nothing was stopped ({why})")
}

/// A resource as the question names it: "vite in /x (id 6989-3721068)". Only a green one is
/// offered (`choices`), so no level is said.
pub(super) fn what(kind: &str, project: &str, id: &str) -> String {
    format!(
        "{} in {} (id {id})",
        for_terminal(kind),
        for_terminal(project)
    )
}

/// A card that is not green, on its line: its level, and the command that says why it is
/// not stopped and what the user can do, since Pier offers no stop of it here.
fn not_offered(kind: &str, project: &str, level: Level, id: &str) -> String {
    format!(
        "{}, {}: `pier stop {id}` says why and what you can do",
        what(kind, project, id),
        level.as_str()
    )
}

/// One line per meaning, the pid's then the port's, each with the id of the resource a stop
/// of it would act on (`None`: nothing to stop there).
fn lines(m: &Meaning) -> Vec<(Option<String>, String)> {
    let n = &m.number;
    let pid_line = match &m.pid {
        PidMeaning::Part {
            id,
            kind,
            level: Level::Green,
            project,
        } => (
            Some(id.clone()),
            format!("pid {n} is part of {}", what(kind, project, id)),
        ),
        PidMeaning::Part {
            id,
            kind,
            level,
            project,
        } => (
            None,
            format!(
                "pid {n} is part of {}",
                not_offered(kind, project, *level, id)
            ),
        ),
        PidMeaning::Process(command) => (
            None,
            format!(
                "pid {n} is `{}`, not part of anything Pier would stop",
                for_terminal(command)
            ),
        ),
        PidMeaning::Nobody => (None, format!("no process has pid {n}")),
    };
    let mut out = vec![pid_line];
    if let Some(a) = &m.port {
        out.push((a.stops.clone(), port_line(a)));
    }
    out
}

/// Who holds the port: "nothing listens on :5199", or each holder as `pier scan :PORT` names
/// it.
fn port_line(a: &PortAnswer) -> String {
    if a.is_free() {
        return format!("nothing listens on :{}", a.port);
    }
    let plain = Style { colour: false };
    let holders: Vec<String> = a
        .holders
        .iter()
        .map(|h| crate::cli::ports::holder_text(h, &plain))
        .collect();
    let held = format!(":{} is held by {}", a.port, holders.join(", and by "));
    match a.stops {
        Some(_) => held,
        // `pier stop :N` would stop nothing: it says why, and what the user can do.
        None => format!(
            "{held}: `pier stop :{}` says why and what you can do",
            a.port
        ),
    }
}
