//! The cards as text for a person: one block per project, its resources, their evidence.
//! Every name and message is shown through [`for_terminal`]: a folder, a command or an
//! evidence message holding an escape sequence or a newline is shown escaped, on its line.

use std::fmt::Write;

use pier_core::model::card::{
    endpoint, Evidence, Level, OtherListener, Port, Project, Resource, Scan,
};
use pier_core::model::container::{Container, EngineStatus};
use pier_core::model::memory::GreenMemory;
use pier_core::words::{byte_size, for_terminal};

/// How text is painted: ANSI colours on a terminal (`super::colour_wanted`), else plain. One
/// set of colours for every command's output: green, yellow and red as on the cards.
pub(super) struct Style {
    pub(super) colour: bool,
}

impl Style {
    /// Bold, for what a line is about (a port, an id).
    pub(super) fn bold(&self, text: &str) -> String {
        self.paint(text, "1")
    }

    /// Yellow, for what was not done.
    pub(super) fn warn(&self, text: &str) -> String {
        self.paint(text, "33")
    }

    /// A level as a lower-case word, in its colour: `green`.
    pub(super) fn level_word(&self, level: Level) -> String {
        let code = match level {
            Level::Green => "32",
            Level::Yellow => "33",
            Level::Red => "31",
        };
        self.paint(level.as_str(), code)
    }

    /// A result as the JSON spells it (`"partially_stopped"`), in capitals and in its colour:
    /// done green, half done yellow, not done red (`not_stopped`: "NOT STOPPED"), a dry run's
    /// answer cyan.
    pub(super) fn result_word(&self, result: &str) -> String {
        let code = match result {
            "stopped" | "ready" => "1;32",
            "partially_stopped" | "not_ready" => "1;33",
            "would_stop" => "1;36",
            _ => "1;31",
        };
        self.paint(&result.replace('_', " ").to_uppercase(), code)
    }

    pub(super) fn paint(&self, text: &str, code: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn level(&self, level: Level) -> String {
        let code = match level {
            Level::Green => "1;32",
            Level::Yellow => "1;33",
            Level::Red => "1;31",
        };
        self.paint(&level.as_str().to_uppercase(), code)
    }

    fn mark(&self, level: Level) -> String {
        match level {
            Level::Green => self.paint("✓", "32"),
            Level::Yellow => self.paint("!", "33"),
            Level::Red => self.paint("✗", "31"),
        }
    }
}

/// Renders the whole scan. `colour`: ANSI colours (a terminal, and `NO_COLOR` unset).
pub fn cards(scan: &Scan, colour: bool) -> String {
    let style = Style { colour };
    let mut out = String::new();
    if scan.projects.is_empty() {
        out.push_str("No dev residue found.\n");
    }
    for project in &scan.projects {
        project_card(&mut out, project, &style);
    }
    // Cards are set apart by a blank line before each, but the output starts with the first.
    if out.starts_with('\n') {
        out.remove(0);
    }
    if let Some(others) = &scan.other_listeners {
        other_listeners(&mut out, others);
    }
    engine_lines(&mut out, &scan.engines, &style);
    out.push_str(&counts_line(scan));
    out.push_str(&would_free(&GreenMemory::of(&scan.projects)));
    out
}

/// `--all`: the listening ports that are no candidate, each with its owner and why.
fn other_listeners(out: &mut String, others: &[OtherListener]) {
    out.push_str("\nOther listeners (not candidates):\n");
    if others.is_empty() {
        out.push_str("  none\n");
    }
    for l in others {
        // A retitled process may pad its name; the JSON keeps it as the kernel gave it.
        let who = match (l.pid, &l.command) {
            (Some(pid), Some(cmd)) => format!("{} (pid {pid})", for_terminal(cmd.trim_end())),
            (Some(pid), None) => format!("pid {pid}"),
            _ => "unknown owner".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {}  {who}  {}",
            endpoint(&l.address, l.port),
            for_terminal(&l.reason)
        );
    }
}

/// Each container engine asked: how many containers it runs, or why it could not answer.
fn engine_lines(out: &mut String, engines: &[EngineStatus], style: &Style) {
    for e in engines {
        let _ = match (&e.error, e.running) {
            (Some(error), _) => writeln!(
                out,
                "\n{} {}",
                style.mark(Level::Yellow),
                for_terminal(error)
            ),
            (None, running) => writeln!(
                out,
                "\n{} at {}: {} running container(s)",
                for_terminal(&e.engine),
                for_terminal(&e.host),
                running.unwrap_or(0)
            ),
        };
    }
}

/// "3 project(s): 1 green, 1 yellow, 1 red (activity sampled over 500 ms)".
fn counts_line(scan: &Scan) -> String {
    let count = |level| scan.projects.iter().filter(|p| p.level == level).count();
    let sampled = match scan.sample_ms {
        0 => " (activity not sampled)".to_owned(),
        ms => format!(" (activity sampled over {ms} ms)"),
    };
    format!(
        "\n{} project(s): {} green, {} yellow, {} red{sampled}\n",
        scan.projects.len(),
        count(Level::Green),
        count(Level::Yellow),
        count(Level::Red),
    )
}

/// The line under the counts when something is green: about what stopping every green
/// resource shown would free (`pier stop --all-green`, the app's "Clean up all safe"), as far
/// as it was measured. Nothing when nothing is green.
fn would_free(green: &GreenMemory) -> String {
    if !green.any() {
        return String::new();
    }
    let n = green.measured + green.unmeasured;
    let mut line = match green.total {
        Some(total) => {
            let mut notes = vec![total.kind.as_str().to_owned()];
            if green.unmeasured > 0 {
                notes.push(format!("{} not measured", green.unmeasured));
            }
            format!(
                "{n} green resource(s) would free about {} ({})",
                byte_size(total.bytes),
                notes.join("; ")
            )
        }
        None if n > 0 => format!("{n} green resource(s): memory not measured"),
        None => String::new(),
    };
    if green.containers > 0 {
        if !line.is_empty() {
            line.push_str("; ");
        }
        let _ = write!(
            line,
            "{} green container(s): memory not counted",
            green.containers
        );
    }
    line.push('\n');
    line
}

fn project_card(out: &mut String, project: &Project, style: &Style) {
    let title = style.paint(&for_terminal(&project.name), "1");
    let _ = writeln!(
        out,
        "\n{title}  {}  {}",
        for_terminal(&project.path),
        style.level(project.level)
    );
    for r in &project.resources {
        resource_block(out, r, style);
    }
    for c in &project.containers {
        container_block(out, c, style);
    }
}

fn container_block(out: &mut String, c: &Container, style: &Style) {
    let ports: Vec<String> = c
        .ports
        .iter()
        .map(|p| format!("{} → {}", endpoint(&p.address, p.port), p.container_port))
        .collect();
    let service = match (&c.compose_project, &c.compose_service) {
        (Some(p), Some(s)) => format!("  compose {}/{}", for_terminal(p), for_terminal(s)),
        (Some(p), None) => format!("  compose {}", for_terminal(p)),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "  {} container {} ({})  ports {}  age {}{service}  id {}",
        style.level(c.level),
        for_terminal(&c.name),
        for_terminal(&c.image),
        if ports.is_empty() {
            "none".to_owned()
        } else {
            ports.join(", ")
        },
        c.age_seconds.map_or("unknown".to_owned(), age),
        c.id
    );
    evidence_lines(out, &c.evidence, style);
}

fn resource_block(out: &mut String, r: &Resource, style: &Style) {
    let ports: Vec<String> = r.server_ports().map(Port::endpoint).collect();
    let pids: Vec<String> = r.members.iter().map(|m| m.pid.to_string()).collect();
    let _ = writeln!(
        out,
        "  {} {}  ports {}  pids {}  age {}  memory {}  id {}",
        style.level(r.level),
        for_terminal(&r.kind),
        if ports.is_empty() {
            "none".to_owned()
        } else {
            ports.join(", ")
        },
        pids.join(" "),
        r.age_seconds.map_or("unknown".to_owned(), age),
        r.memory
            .map_or("unknown".to_owned(), pier_core::words::memory),
        r.id
    );
    for (helper, ports) in r.helper_ports() {
        let _ = writeln!(out, "    {}: {}", for_terminal(helper), ports.join(", "));
    }
    evidence_lines(out, &r.evidence, style);
    if let Some(a) = &r.armed {
        let _ = writeln!(out, "    {}", for_terminal(&pier_core::words::armed(a)));
    } else if !r.reasons.is_empty() && r.reasons.iter().all(|x| x.armed_waits()) {
        // The way to a stop later, when every reason can clear on its own.
        let _ = writeln!(out, "    → {}", pier_core::words::when_safe(&r.id));
    }
    if let Some(n) = &r.auto {
        let _ = writeln!(out, "    {}", for_terminal(&pier_core::words::auto(n)));
    }
    // The way past its "no" when a person may set every reason aside.
    if !r.reasons.is_empty() && r.reasons.iter().all(|x| x.person_may_skip()) {
        let _ = writeln!(
            out,
            "    → {}",
            pier_core::words::stop_anyway(&r.id, &r.reasons)
        );
    }
}

/// A card's evidence, one fact a line under it.
fn evidence_lines(out: &mut String, evidence: &[Evidence], style: &Style) {
    for e in evidence {
        let _ = writeln!(
            out,
            "    {} {}",
            style.mark(e.level),
            for_terminal(&e.message)
        );
    }
}

/// `3725` → `1h 2m`: two units are enough to tell old from new.
fn age(seconds: u64) -> String {
    let (d, h, m, s) = (
        seconds / 86_400,
        seconds / 3_600 % 24,
        seconds / 60 % 60,
        seconds % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_use_the_two_largest_units() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(125), "2m 5s");
        assert_eq!(age(3_725), "1h 2m");
        assert_eq!(age(90_000), "1d 1h");
    }

    #[test]
    fn a_card_shows_the_servers_ports_as_its_ports_and_a_helpers_apart() {
        let project = pier_core::model::examples::notebook("/w/lab");
        let mut out = String::new();
        resource_block(&mut out, &project.resources[0], &Style { colour: false });
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("  GREEN jupyter  ports 127.0.0.1:8888  pids 30  "),
            "{out}"
        );
        assert_eq!(
            lines[1],
            "    notebook kernel: 127.0.0.1:40001, 127.0.0.1:40002"
        );
    }

    #[test]
    fn a_card_shows_its_memory_with_how_it_was_measured() {
        use pier_core::model::examples::resource;
        let mut out = String::new();
        let mut r = resource("10-100", Level::Green, 5173);
        resource_block(&mut out, &r, &Style { colour: false });
        assert!(
            out.contains("  age 2h 5m  memory 48.2 MB (proportional)  id 10-100\n"),
            "{out}"
        );
        r.memory = None;
        out.clear();
        resource_block(&mut out, &r, &Style { colour: false });
        assert!(out.contains("  memory unknown  id 10-100\n"), "{out}");
    }

    /// The line under the counts: what stopping every green resource would free, the yellow
    /// left out, and what was not measured said so.
    #[test]
    fn the_counts_are_followed_by_what_the_green_would_free() {
        use pier_core::model::examples::{container, project, resource};
        let yellow = resource("12-100", Level::Yellow, 5175);
        let mut unread = resource("13-100", Level::Green, 5176);
        unread.memory = None;
        let mut scan = Scan {
            projects: vec![
                project(
                    "/w/a",
                    Level::Green,
                    vec![resource("10-100", Level::Green, 5173)],
                ),
                project(
                    "/w/b",
                    Level::Yellow,
                    vec![resource("11-100", Level::Green, 5174), yellow],
                ),
            ],
            ..only_others(Vec::new())
        };
        scan.other_listeners = None;
        let text = cards(&scan, false);
        assert!(
            text.ends_with(
                "2 project(s): 1 green, 1 yellow, 0 red (activity not sampled)\n\
                 2 green resource(s) would free about 96.4 MB (proportional)\n"
            ),
            "{text}"
        );
        scan.projects[0].resources.push(unread);
        let mut green_db = container("db", 5432);
        green_db.level = Level::Green;
        scan.projects[0].containers.push(green_db);
        let text = cards(&scan, false);
        assert!(
            text.ends_with(
                "3 green resource(s) would free about 96.4 MB (proportional; 1 not measured); \
                 1 green container(s): memory not counted\n"
            ),
            "{text}"
        );
        scan.projects.truncate(0);
        assert!(!cards(&scan, false).contains("would free"));
    }

    /// A scan with no project, only these other listeners.
    fn only_others(others: Vec<pier_core::model::card::OtherListener>) -> Scan {
        Scan {
            schema: 1,
            generation: 1,
            scanned_at: String::new(),
            sample_ms: 0,
            projects: Vec::new(),
            other_listeners: Some(others),
            engines: Vec::new(),
        }
    }

    #[test]
    fn another_listeners_padded_name_is_trimmed() {
        let scan = only_others(vec![pier_core::model::card::OtherListener {
            port: 3000,
            address: "::".into(),
            pid: Some(7),
            command: Some("next-server    ".into()),
            reason: "not a known dev tool".into(),
        }]);
        assert!(
            cards(&scan, false)
                .contains("  [::]:3000  next-server (pid 7)  not a known dev tool\n"),
            "{}",
            cards(&scan, false)
        );
    }

    /// A folder named to clear the screen and retitle the window, and a newline in an
    /// evidence message: shown escaped, each on its own line of the card.
    #[test]
    fn names_with_escape_sequences_and_newlines_are_shown_escaped_on_their_line() {
        use pier_core::model::examples::{project, resource};
        let name = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\ny";
        let path = format!("/w/{name}");
        let mut r = resource("10-100", Level::Green, 5173);
        r.evidence[0].message = format!("parent {name} (pid 1) is init");
        let mut p = project(&path, Level::Green, vec![r]);
        p.name = name.into();
        let scan = Scan {
            projects: vec![p],
            ..only_others(Vec::new())
        };
        let text = cards(&scan, false);
        assert!(!text.contains(['\u{1b}', '\u{7}']), "{text:?}");
        let shown = "x\\e[2J\\e]0;pwned\\x07\\ny";
        assert!(
            text.starts_with(&format!("{shown}  /w/{shown}  GREEN\n")),
            "the first card's line, first, with no blank line before it: {text}"
        );
        assert!(
            text.contains(&format!("\n    ✓ parent {shown} (pid 1) is init\n")),
            "{text}"
        );
        assert_eq!(text.lines().filter(|l| l.contains("pwned")).count(), 2);
    }

    #[test]
    fn no_colour_means_no_escape_codes() {
        let scan = only_others(Vec::new());
        let plain = cards(&scan, false);
        assert!(!plain.contains('\x1b'));
        assert!(plain.contains("No dev residue found."));
        assert!(plain.contains("activity not sampled"));
    }
}
