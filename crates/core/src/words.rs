//! How Pier says things to a person: a command line, a byte rate, why a resource has its level.
//! Pure functions, shared by the scan's evidence, the stop's reasons and every text output.
//!
//! Words only: the snapshot keeps every argv byte as it was, and the JSON keeps the exact argv;
//! what is trimmed here is trimmed for reading.
//!
//! What these functions build is data (a JSON `command`, an evidence message, a reason): the
//! names in it are kept as they were read, control characters included. Whatever shows it to
//! a person passes it through [`for_terminal`] (see [`terminal`]), once, at display.

pub mod argv;
pub mod terminal;

pub use terminal::{bytes_for_terminal, for_terminal, path_for_terminal};

use crate::model::card::Resource;
use crate::model::client::{Client, Parent};
use crate::model::memory::Memory;
use argv::{is_interpreter, is_title};

/// The longest command shown, in characters; longer ones end in "…".
const COMMAND_CHARS: usize = 60;

/// A command line for a person: lossy UTF-8, a rewritten title's padding dropped, cut at 60
/// characters. Control characters are kept (a display shows them escaped, [`for_terminal`]),
/// except as trailing padding.
///
/// Why the padding goes: a tool that rewrites its title over its argv (Next's
/// `next-server (v16.4.6)`, libuv's `uv_set_process_title`) pads it to the old length, so
/// `/proc/<pid>/cmdline` reads as the title followed by dozens of empty arguments, or as one
/// argument ending in spaces. Printed as it is, that is a line of blanks cut at 60 characters.
pub fn command_for_a_person<'a>(argv: impl IntoIterator<Item = &'a [u8]>) -> String {
    let clean = whole_command(argv);
    match clean.char_indices().nth(COMMAND_CHARS) {
        Some((cut, _)) => format!("{}…", clean[..cut].trim_end()),
        None => clean,
    }
}

/// A command line whole, for a document a program reads (the stop's `--json`): lossy UTF-8,
/// a rewritten title's padding dropped, never cut. A display still escapes it.
pub fn whole_command<'a>(argv: impl IntoIterator<Item = &'a [u8]>) -> String {
    // Trailing empty arguments join into trailing spaces: one trim drops both kinds of padding.
    let joined = argv
        .into_iter()
        .map(String::from_utf8_lossy)
        .collect::<Vec<_>>()
        .join(" ");
    joined
        .trim_end_matches(|c: char| c.is_whitespace() || c == '\0')
        .to_owned()
}

/// A command line short enough to name a process inside a sentence: as
/// [`command_for_a_person`], with the program, and a script right after it, by file name
/// (`/home/me/api/.venv/bin/python3 /home/me/api/.venv/bin/uvicorn main:app --reload` reads
/// `python3 uvicorn main:app --reload`). Why: cut at 60 characters, the two paths alone would
/// hide the very name that tells a reloader from the server. The pid beside it, and the JSON's
/// exact argv, say which files they are.
///
/// A title is shown as it is (`puma 5.6.5 (tcp://127.0.0.1:3000) [app]` has no program path to
/// shorten), and the argument after the program only after an interpreter (`tail /var/log/x`
/// names a file, not a script).
pub fn short_command<'a>(argv: impl IntoIterator<Item = &'a [u8]>) -> String {
    let argv: Vec<&[u8]> = argv.into_iter().collect();
    if is_title(&argv) {
        return command_for_a_person(argv);
    }
    let file_name = |a: &'a [u8]| -> &'a [u8] {
        match a.iter().rposition(|&b| b == b'/') {
            Some(i) if i + 1 < a.len() => &a[i + 1..],
            _ => a,
        }
    };
    let interpreter = argv
        .first()
        .is_some_and(|a| is_interpreter(&String::from_utf8_lossy(file_name(a))));
    let shortened = argv.into_iter().enumerate().map(|(i, a)| match i {
        0 => file_name(a),
        1 if interpreter && !a.starts_with(b"-") => file_name(a),
        _ => a,
    });
    command_for_a_person(shortened)
}

/// [`short_command`], for an argv already held as text (the history's commands): a venv's
/// full paths would otherwise fill the line before the program's name.
pub fn command_of_strings(argv: &[String]) -> String {
    short_command(argv.iter().map(|a| a.as_bytes()))
}

/// Who holds a live connection's client end, and what ends the connection: "from curl (an HTTP
/// client, pid 28081: `curl -s http://127.0.0.1:8000/slow`) — it ends when that client
/// disconnects". Another user's process is named by its program only; a pid whose row was
/// not read, or no pid at all, says so.
pub fn client_of_connection(client: Option<&Client>, peer_pid: Option<u32>) -> String {
    let who = match (client, peer_pid) {
        (Some(c), _) if c.other_user => format!(
            "{} (another user's process, uid {}, pid {})",
            c.program, c.uid, c.pid
        ),
        (Some(c), _) => match &c.command {
            Some(command) => format!(
                "{} ({}, pid {}: `{command}`)",
                c.program,
                c.likely.describe(),
                c.pid
            ),
            None => format!("{} ({}, pid {})", c.program, c.likely.describe(), c.pid),
        },
        (None, Some(pid)) => format!("pid {pid}, whose program could not be read"),
        (None, None) => "a process Pier cannot see (another user's, another machine's, or one \
                         not yet accepted)"
            .to_owned(),
    };
    format!("from {who} — it ends when that client disconnects")
}

/// As [`client_of_connection`], for a client on a unix socket: one Pier cannot see is another
/// user's, or one the table gives no peer for (`/proc/net/unix`) — never another machine's,
/// and never one not yet accepted (those are counted apart).
pub fn unix_client_of_connection(client: Option<&Client>, peer_pid: Option<u32>) -> String {
    match (client, peer_pid) {
        (None, None) => "from a process Pier cannot see (another user's, or one the unix socket \
                         table gives no peer for) — it ends when that client disconnects"
            .to_owned(),
        _ => client_of_connection(client, peer_pid),
    }
}

/// A shared daemon's use, for its card (docs/design.md §2.4): who is attached, each as
/// "gopls pid 4242" (`attached`, one per client process), and that it is not residue while
/// any is; with none, that none is.
pub fn shared_daemon_use(attached: &[String]) -> String {
    match attached {
        [] => "shared by no one now: no client attached".to_owned(),
        [one] => format!("shared and in use: 1 client attached ({one}): not residue while in use"),
        many => format!(
            "shared and in use: {} clients attached ({}): not residue while in use",
            many.len(),
            many.join(", ")
        ),
    }
}

/// What brings back a stopped resource of `kind`, for the line after its stop: `None` when
/// its snapshot does (`pier restart ID`); for a kind its client starts (an MCP server, a
/// headless browser, a language server, a shared daemon), that its client starts a new one.
pub fn comes_back_by_its_client(kind: Option<&str>) -> Option<&'static str> {
    (!crate::restart::offered(kind))
        .then_some("its agent, editor or test run starts a new one when it needs one")
}

/// One client of a shared daemon, as [`shared_daemon_use`] lists it: its program and pid, a
/// pid alone, or a client Pier cannot see.
pub fn attached_client(client: Option<&Client>, peer_pid: Option<u32>) -> String {
    match (client, peer_pid) {
        (Some(c), _) => format!("{} pid {}", c.program, c.pid),
        (None, Some(pid)) => format!("pid {pid}"),
        (None, None) => "a client Pier cannot see".to_owned(),
    }
}

/// Where a live parent is, for a sentence: "in tmux pane dev:2.1 (%7)", "in tmux pane %7",
/// "in screen session 4242.dev, window 2", "on /dev/pts/3 in gnome-terminal-server"; empty
/// when nothing says where.
pub fn parent_place(p: &Parent) -> String {
    if let Some(t) = &p.tmux {
        return match (&t.session, t.window, t.pane) {
            (Some(s), Some(w), Some(n)) => format!("in tmux pane {s}:{w}.{n} ({})", t.pane_id),
            _ => format!("in tmux pane {}", t.pane_id),
        };
    }
    if let Some(s) = &p.screen {
        return match &s.window {
            Some(w) => format!("in screen session {}, window {w}", s.session),
            None => format!("in screen session {}", s.session),
        };
    }
    match (&p.tty, &p.terminal) {
        (Some(tty), Some(term)) => format!("on {tty} in {term}"),
        (Some(tty), None) => format!("on {tty}"),
        _ => String::new(),
    }
}

/// The next step for a resource a live parent holds: where to press Ctrl-C, or what ends it
/// there. The one place this sentence is made (the stop anyway beside it is
/// `stop::anyway::offer`'s, which knows the id).
pub fn next_step_for_parent(p: &Parent) -> String {
    let there = "to stop it there";
    if let Some(t) = &p.tmux {
        let name = match (&t.session, t.window, t.pane) {
            (Some(s), Some(w), Some(n)) => format!("{s}:{w}.{n}"),
            _ => t.pane_id.clone(),
        };
        return format!("press Ctrl-C in tmux pane {name} {there}");
    }
    if let Some(s) = &p.screen {
        let window = s
            .window
            .as_ref()
            .map_or(String::new(), |w| format!(", window {w}"));
        return format!(
            "press Ctrl-C in screen session {}{window} {there}",
            s.session
        );
    }
    match p.role.as_str() {
        "interactive shell" | "terminal" => match &p.tty {
            Some(tty) => format!("press Ctrl-C in that terminal ({tty}) {there}"),
            None => format!("press Ctrl-C in that terminal {there}"),
        },
        "editor" => format!(
            "stop it from {} (its terminal or task), or close that editor",
            p.program
        ),
        "terminal multiplexer" => format!("press Ctrl-C in its {} pane {there}", p.program),
        _ => format!(
            "it runs for {} (pid {}): it ends when that process ends it",
            p.program, p.pid
        ),
    }
}

/// The way past a "no" that a person may set aside: the stop anyway of `id`, naming what it
/// would set aside. The one place this sentence is made.
pub fn stop_anyway(id: &str, reasons: &[crate::model::reason::Reason]) -> String {
    let names: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
    format!(
        "`pier stop --anyway {id}` sends SIGTERM anyway, setting aside {}",
        names.join(", ")
    )
}

/// The way to a stop later, for a card whose every reason an armed stop waits out.
pub fn when_safe(id: &str) -> String {
    format!("`pier stop --when-safe {id}` stops it once it is safe (while the app or `pier watch` runs)")
}

/// An armed stop as a card's line says it: "armed: stops when safe (lapses 2026-12-05 20:10
/// UTC) — waiting for the client on :5173 (firefox) to leave".
pub fn armed(a: &crate::model::arm::Armed) -> String {
    let mut line = format!(
        "armed: stops when safe (lapses {})",
        utc_minute(a.expires_at)
    );
    if !a.waiting_for.is_empty() {
        line.push_str(" — waiting for ");
        line.push_str(&a.waiting_for.join("; "));
    }
    line
}

/// What an id that names no card may have meant ([`crate::diagnose::suggest`]), as the end of
/// the sentence that refuses it: "pid 6989 is now 6989-3721068", "did you mean 6989-3721068?".
/// Words only: nothing acts on it.
pub fn did_you_mean(s: &crate::diagnose::suggest::Suggestion) -> String {
    use crate::diagnose::suggest::Suggestion;
    match s {
        Suggestion::SamePid { pid, now } => format!("pid {pid} is now {now}"),
        Suggestion::Close { id } => format!("did you mean {id}?"),
    }
}

/// How a restarted root that exited before listening ended: "exited with status 1 before
/// listening", "was ended by signal 9 (SIGKILL) before listening". The one place it is said.
pub fn exited_before_listening(e: &crate::model::history::Exited) -> String {
    match (e.status, e.signal) {
        (_, Some(n)) => match signal_name(n) {
            Some(name) => format!("was ended by signal {n} ({name}) before listening"),
            None => format!("was ended by signal {n} before listening"),
        },
        (Some(code), None) => format!("exited with status {code} before listening"),
        (None, None) => "exited before listening".to_owned(),
    }
}

/// Said of a crashed restart whose run wrote nothing to its log: the reader would otherwise
/// open an empty file and learn nothing (issue 41: a script that redirects its own output).
pub const EMPTY_LOG: &str =
    "the log is empty: the command sends its output elsewhere, or wrote none";

/// The name of a signal a crash is often ended by, for a person (the numbers are the OS's).
fn signal_name(n: i32) -> Option<&'static str> {
    use rustix::process::Signal;
    [
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::TERM, "SIGTERM"),
    ]
    .iter()
    .find(|(signal, _)| signal.as_raw() == n)
    .map(|(_, name)| *name)
}

/// A rate of disk I/O for a person: "0 B/s", "512 B/s", "41.0 kB/s", "2.3 MB/s".
pub fn byte_rate(bytes_per_second: f64) -> String {
    let b = bytes_per_second.max(0.0);
    if b < 999.5 {
        format!("{b:.0} B/s")
    } else if b < 999_950.0 {
        format!("{:.1} kB/s", b / 1e3)
    } else {
        format!("{:.1} MB/s", b / 1e6)
    }
}

/// A span of time for a person, at one unit's precision: "45 s", "3 min", "2 h", "4 d".
pub fn duration_seconds(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 7_200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3_600),
        s => format!("{} d", s / 86_400),
    }
}

/// Who asked for a stop, when it was not a person at the moment it ran: "by your armed stop",
/// "by your rule nightly", "by the agent claude-code"; `None` for a person's own stop.
pub fn asked_by(who: &crate::model::RequestedBy) -> Option<String> {
    use crate::model::RequestedBy as R;
    match who {
        R::Person | R::Cli | R::App => None,
        R::Armed => Some("by your armed stop".to_owned()),
        R::Rule {
            name,
            because: None,
        } => Some(format!("by your rule '{}'", for_terminal(name))),
        R::Rule {
            name,
            because: Some(because),
        } => Some(format!(
            "by your rule '{}': {}",
            for_terminal(name),
            for_terminal(because)
        )),
        R::Agent { client } => Some(format!("by the agent {}", for_terminal(client))),
    }
}

/// What the rules say of a card: "rule 'idle 30 min' stops it now", "rule 'idle 30 min': due
/// once idle 30 min; now idle 12 min", "automatic stops are off: …".
pub fn auto(n: &crate::model::rules::AutoNote) -> String {
    use crate::model::rules::AutoState;
    match (&n.rule, n.state) {
        (Some(rule), AutoState::Due) => format!("rule '{rule}' stops it now"),
        (Some(rule), _) => format!("rule '{rule}': {}", n.why),
        (None, _) => n.why.clone(),
    }
}

/// A resource's idle clock for a person: "idle 40 min", "active: 2.0% CPU over 30 s (more
/// than 1.0%)", "idle: measuring".
pub fn idle(i: &crate::model::idle::Idle) -> String {
    use crate::model::idle::IdleState;
    match i.state {
        IdleState::Measuring => "idle: measuring".to_owned(),
        IdleState::Idle => format!("idle {}", duration_seconds(i.seconds)),
        IdleState::Active => match &i.why {
            Some(why) => format!("active: {why}"),
            None => "active".to_owned(),
        },
    }
}

/// An amount of memory for a person: "512 B", "41.0 kB", "48.2 MB", "1.3 GB" (powers of
/// 1000, as [`byte_rate`]).
pub fn byte_size(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 999.5 {
        format!("{bytes} B")
    } else if b < 999_950.0 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 999_950_000.0 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// A process's or a tree's memory for a person: `"48.2 MB (proportional)"`.
pub fn memory(m: Memory) -> String {
    format!("{} ({})", byte_size(m.bytes), m.kind.as_str())
}

/// A PSI reading of memory for a person: the share of the last ten seconds some task
/// stalled on memory (`probe/linux/pressure.rs`).
pub fn psi_memory(some_avg10: f64) -> String {
    format!("memory pressure: {some_avg10:.1}% of the last 10 s stalled on memory (PSI)")
}

/// macOS's memory pressure level for a person (`"warn"`, `probe/darwin.rs`).
pub fn pressure_level(level: &str) -> String {
    format!("memory pressure: {level} (macOS's memory pressure level)")
}

/// Why a resource has its level, in the words of the evidence that set it: every fact at
/// that level, joined. Used where Pier leaves a resource alone (a stop refused at the
/// re-diagnosis, a batch that only stops green ones).
pub fn level_reasons(r: &Resource) -> String {
    reasons(&r.evidence, r.level)
}

/// The messages of the evidence at `level`, the card's level: why it is what it is.
pub fn reasons(
    evidence: &[crate::model::card::Evidence],
    level: crate::model::card::Level,
) -> String {
    let reasons: Vec<&str> = evidence
        .iter()
        .filter(|e| e.level == level)
        .map(|e| e.message.as_str())
        .collect();
    if reasons.is_empty() {
        // `level_of` says yellow when there is no evidence at all.
        return "nothing is known about it".to_owned();
    }
    reasons.join("; ")
}

/// A time (seconds since the Unix epoch) to the minute, in UTC: "2026-12-05 20:10 UTC".
pub fn utc_minute(secs: u64) -> String {
    // humantime writes years up to 9999: a later time (a hand-edited record) is said as is.
    const LAST: u64 = 253_402_300_799;
    let Some(t) = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs)) else {
        return format!("{secs} s after 1970");
    };
    if secs > LAST {
        return format!("{secs} s after 1970");
    }
    let text = humantime::format_rfc3339_seconds(t).to_string();
    // "2026-12-05T20:10:33Z": the date, the hour and the minute.
    match (text.get(..10), text.get(11..16)) {
        (Some(day), Some(minute)) => format!("{day} {minute} UTC"),
        _ => text,
    }
}

/// What a caught panic said, for a sentence: its message, or "a panic" when it carried none.
pub fn of_panic(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the review: an arm expiring at u64::MAX made `pier armed` panic.
    #[test]
    fn a_time_past_year_9999_is_said_not_a_panic() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(u64::MAX), format!("{} s after 1970", u64::MAX));
        assert_eq!(utc_minute(253_402_300_800), "253402300800 s after 1970");
    }

    fn cmd(argv: &[&str]) -> String {
        command_for_a_person(argv.iter().map(|a| a.as_bytes()))
    }

    /// Next 16's server child, as `/proc/<pid>/cmdline` splits it: the title, then the padding.
    #[test]
    fn a_rewritten_title_loses_its_padding_of_empty_arguments() {
        let mut argv = vec!["next-server (v16.4.6)"];
        argv.extend(std::iter::repeat_n("", 40));
        assert_eq!(cmd(&argv), "next-server (v16.4.6)");
    }

    #[test]
    fn a_rewritten_title_loses_its_padding_of_trailing_spaces() {
        let padded = format!("next-server (v16.4.6){}", " ".repeat(200));
        assert_eq!(cmd(&[&padded]), "next-server (v16.4.6)");
        let with_nuls = format!("next-server (v16.4.6){}", "\0".repeat(30));
        assert_eq!(cmd(&[&with_nuls]), "next-server (v16.4.6)");
    }

    #[test]
    fn inner_empty_arguments_and_spaces_are_kept() {
        assert_eq!(cmd(&["printf", "", "a  b", "x"]), "printf  a  b x");
    }

    #[test]
    fn a_long_command_is_cut_at_sixty_characters() {
        let long = "a".repeat(100);
        let shown = cmd(&["node", &long]);
        assert_eq!(shown.chars().count(), 61, "{shown}");
        assert!(shown.ends_with('…'));
        let shown = cmd(&["sh", "-c", "vite\n"]);
        assert_eq!(
            shown, "sh -c vite",
            "trailing control characters are padding"
        );
    }

    /// Blanked, a newline or an ESC would vanish from what a person reads; kept, the display
    /// shows it escaped and the JSON as it is.
    #[test]
    fn inner_control_characters_are_kept_for_the_display_to_escape() {
        let shown = cmd(&["sh", "-c", "cd x\nvite\u{1b}[2J"]);
        assert_eq!(shown, "sh -c cd x\nvite\u{1b}[2J");
        assert_eq!(for_terminal(&shown), "sh -c cd x\\nvite\\e[2J");
    }

    #[test]
    fn a_short_command_names_the_program_and_its_script_by_file_name() {
        let short = |argv: &[&str]| short_command(argv.iter().map(|a| a.as_bytes()));
        assert_eq!(
            short(&[
                "/home/me/api/.venv/bin/python3",
                "/home/me/api/.venv/bin/uvicorn",
                "main:app",
                "--reload",
                "--reload-dir",
                "/home/me/src",
            ]),
            "python3 uvicorn main:app --reload --reload-dir /home/me/src",
            "only the program and its script are shortened"
        );
        assert_eq!(
            short(&["sh", "-c", "./node_modules/.bin/vite"]),
            "sh -c ./node_modules/.bin/vite"
        );
        assert_eq!(
            short(&["/usr/bin/node", "./node_modules/.bin/vite", ""]),
            "node vite"
        );
        assert_eq!(
            short(&["next-server (v16.4.6)", "", ""]),
            "next-server (v16.4.6)"
        );
        assert_eq!(short(&["/weird/"]), "/weird/", "no file name: kept");
        assert_eq!(
            short(&["puma 5.6.5 (tcp://127.0.0.1:3000) [app]", "", ""]),
            "puma 5.6.5 (tcp://127.0.0.1:3000) [app]",
            "a title has no path to shorten"
        );
        assert_eq!(
            short(&["/usr/bin/tail", "-f", "/var/log/app.log"]),
            "tail -f /var/log/app.log"
        );
        assert_eq!(
            short(&["/usr/bin/cat", "/var/log/app.log"]),
            "cat /var/log/app.log",
            "a file after a program that is no interpreter is no script"
        );
    }

    #[test]
    fn byte_rates_and_sizes_use_a_unit_a_person_reads() {
        assert_eq!(byte_rate(0.0), "0 B/s");
        assert_eq!(byte_rate(512.0), "512 B/s");
        assert_eq!(byte_rate(41_000.0), "41.0 kB/s");
        assert_eq!(byte_rate(999_999.0), "1.0 MB/s");
        assert_eq!(byte_rate(2_300_000.0), "2.3 MB/s");
        assert_eq!(byte_size(512), "512 B");
        assert_eq!(byte_size(41_000), "41.0 kB");
        assert_eq!(byte_size(48_200_000), "48.2 MB");
        assert_eq!(byte_size(999_999_999), "1.0 GB");
    }
}
