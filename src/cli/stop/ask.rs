//! `pier stop N`: a bare number is a question, not an order. A pid is no identity (it names
//! whatever process has it now), and `3000` may mean port 3000. So Pier names what N could
//! mean — the resource that has pid N among its members now (or the process, or none), and
//! who holds `:N` — and acts only when a person picks one on a terminal; then by the id it
//! resolved, through the normal chain, exactly as `pier stop ID` would (same checks, same
//! refusals). From a pipe or a script, with --json, beside other targets, or with --anyway or
//! --force, it acts on nothing and names the commands to type instead. Only a green card is
//! offered: a yellow or red one is named with its level and `pier stop ID`, never asked about.
//!
//! Only [`resolve`] turns a bare number into an id to act on, and it takes a [`Terminal`],
//! which only [`Terminal::here`] makes: nothing else (a pipe, a future `pier mcp`) can act on
//! a bare number.

mod words;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::process::ExitCode;

use pier_core::diagnose::port::{self, PortAnswer};
use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::ScanOptions;
use pier_core::model::card::{Level, Scan};
use pier_core::probe::Probe;

use super::StopArgs;
use crate::cli::{usage, EXIT_NOT_ALL_STOPPED};

/// An argument of digits only (`6989`): neither an id nor `:PORT`, but a bare number.
pub(super) fn is_bare_number(arg: &str) -> bool {
    !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_digit())
}

/// A terminal a person answers on: stdin and stderr are both terminals, as for a stop
/// anyway's question (`cli::anyway`). Made only by [`Terminal::here`].
pub(super) struct Terminal(());

impl Terminal {
    /// This process's terminal, when a person can be asked on it.
    fn here() -> Option<Self> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then_some(Self(()))
    }
}

/// What pid N is now.
#[derive(Debug, Clone, PartialEq)]
enum PidMeaning {
    /// A member of this card.
    Part {
        id: String,
        kind: String,
        level: Level,
        project: String,
    },
    /// A process that is no member of any card: its command.
    Process(String),
    /// No process has it.
    Nobody,
}

/// What a bare number could mean, read from one scan: as a pid, and as a port (`None` when it
/// is no port: 0, above 65535, or written with a leading zero).
#[derive(Debug, Clone, PartialEq)]
struct Meaning {
    number: String,
    pid: PidMeaning,
    port: Option<PortAnswer>,
}

/// One resource the number may name: the id a stop would act on, and the command that names it
/// without a question.
#[derive(Debug, Clone, PartialEq)]
struct Choice {
    id: String,
    command: String,
    /// "vite in /x (id 6989-3721068)", for the question.
    what: String,
}

/// `pier stop`'s bare numbers: none (`Ok(None)`), or the id a person picked for the one bare
/// number given, on a terminal. Otherwise nothing is acted on: what each number could mean is
/// said on stderr, with the commands to type, and the exit code is returned (2 where it was
/// not asked; 3 when the person declined or it names nothing to stop).
pub(super) fn bare_number(
    args: &StopArgs,
    probe: &(dyn Probe + Sync),
    t: Thresholds,
) -> Result<Option<String>, ExitCode> {
    let bare: Vec<&String> = args.ids.iter().filter(|a| is_bare_number(a)).collect();
    if bare.is_empty() {
        return Ok(None);
    }
    let opts = ScanOptions {
        include_others: true,
        ..super::selection_options(t)
    };
    let scan = super::selection_scan(probe, &opts)?;
    let meanings: Vec<Meaning> = bare.iter().map(|n| meaning(&scan, probe, n)).collect();
    let not_asked = if args.anyway || args.force {
        Some(words::NotAsked::PastANo)
    } else if args.json {
        Some(words::NotAsked::Json)
    } else if args.ids.len() > 1 {
        Some(words::NotAsked::NotAlone)
    } else {
        None
    };
    let terminal = match (not_asked, Terminal::here()) {
        (None, Some(terminal)) => terminal,
        (why, _) => {
            let why = why.unwrap_or(words::NotAsked::NoTerminal);
            return Err(usage(&words::not_asked(why, &meanings)));
        }
    };
    resolve(&terminal, &meanings[0], args.dry_run).map(Some)
}

/// What `number` could mean in `scan` (made with `include_others`): the card with pid N among
/// its members, else the process with it (read now), and who holds `:N`.
fn meaning(scan: &Scan, probe: &(dyn Probe + Sync), number: &str) -> Meaning {
    let pid = number.parse::<u32>().ok();
    let part = pid.and_then(|pid| {
        scan.projects.iter().find_map(|p| {
            let r = p
                .resources
                .iter()
                .find(|r| r.members.iter().any(|m| m.pid == pid))?;
            Some(PidMeaning::Part {
                id: r.id.clone(),
                kind: r.kind.clone(),
                level: r.level,
                project: p.path.clone(),
            })
        })
    });
    let process = || {
        let rows = probe.rows(&[pid?]);
        let row = rows.processes.first()?;
        let argv = row.argv.iter().map(Vec::as_slice);
        let command = pier_core::words::command_for_a_person(argv);
        Some(PidMeaning::Process(match command.is_empty() {
            true => row.comm.clone(),
            false => command,
        }))
    };
    let port = match port::parse(&format!(":{number}")) {
        Some(Ok(p)) => Some(port::answer(scan, p)),
        _ => None,
    };
    Meaning {
        number: number.to_owned(),
        pid: part.or_else(process).unwrap_or(PidMeaning::Nobody),
        port,
    }
}

/// What the number may be stopped as, each resource once: the card with the pid, then the one
/// `pier stop :N` would stop. Only a green card is offered: `pier stop :N` hands on only a
/// green holder, and a yellow or red one would be refused by the chain after a "y" — its line
/// says its level and the command that says why instead ([`words`]).
fn choices(m: &Meaning) -> Vec<Choice> {
    let mut out: Vec<Choice> = Vec::new();
    if let PidMeaning::Part {
        id,
        kind,
        level: Level::Green,
        project,
    } = &m.pid
    {
        out.push(Choice {
            id: id.clone(),
            command: format!("pier stop {id}"),
            what: words::what(kind, project, id),
        });
    }
    if let Some((a, id)) = m.port.as_ref().and_then(|a| Some((a, a.stops.as_ref()?))) {
        if out.iter().all(|c| &c.id != id) {
            let holder = a.holders.first();
            let kind = holder.map_or("", |h| h.what.as_str());
            let project = holder.and_then(|h| h.project.as_deref()).unwrap_or("");
            out.push(Choice {
                id: id.clone(),
                command: format!("pier stop :{}", a.port),
                what: words::what(kind, project, id),
            });
        }
    }
    out
}

/// Whether nothing the number could mean names anything of Pier's: no card has the pid and
/// nothing holds the port. Why: such an answer has no command in it, so it ends with the one
/// that lists what there is (`pier scan`).
fn dead_end(m: &Meaning) -> bool {
    !matches!(m.pid, PidMeaning::Part { .. }) && m.port.as_ref().is_none_or(PortAnswer::is_free)
}

/// The one function that turns a bare number into an id to act on: it shows what `m` could
/// mean on the person's terminal and asks; the id picked, or the exit code when none was
/// (declined: 3; nothing to stop: 3, as a refusal).
fn resolve(_on: &Terminal, m: &Meaning, dry_run: bool) -> Result<String, ExitCode> {
    let choices = choices(m);
    eprint!("{}", words::asked(m, &choices, dry_run));
    if choices.is_empty() {
        return Err(ExitCode::from(EXIT_NOT_ALL_STOPPED));
    }
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        answer.clear();
    }
    match picked(answer.trim(), choices.len()) {
        Some(i) => Ok(choices[i].id.clone()),
        None => {
            eprintln!("{}", words::declined(&m.number, choices.len()));
            Err(ExitCode::from(EXIT_NOT_ALL_STOPPED))
        }
    }
}

/// The choice an answer picks among `n`: "y" when there is one, its number when there are
/// several; anything else (Enter, "n", a number out of range) picks none.
fn picked(answer: &str, n: usize) -> Option<usize> {
    match (n, answer) {
        (1, "y" | "Y" | "yes") => Some(0),
        (2.., number) => number
            .parse::<usize>()
            .ok()
            .filter(|i| (1..=n).contains(i))
            .map(|i| i - 1),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
