//! What an agent is never told: an environment (no reply carries one), and argv values that
//! look like secrets (docs/design.md §7a), masked before any reply leaves.
//!
//! Masks are read from the shape of each argument, never from a regex: the value after a flag
//! named like a secret, a `NAME=value` whose name is, a URL's password, a known token's
//! shape, and the few short flags that unambiguously carry a password for one program
//! (`mysql -pX`). Flag names, program names and everything else stay as they are. An argument
//! holding spaces (`sh -c 'vite --token X'`) and a whole command line are masked word by word,
//! the same way. What this cannot see: a secret quoted with spaces inside a shell line, or one
//! a program takes positionally.

use crate::model::card::{Resource, Scan};
use crate::model::history::{HistoryEntry, RestartReport};
use crate::model::outcome::StopReport;

mod shape;
use shape::{is_secret_flag, is_secret_name, short_flag, ShortFlag};

/// What a masked value reads as.
pub const MASK: &str = "•••";

/// `argv` with every value that looks like a secret replaced by [`MASK`]: the value after a
/// flag named like a token, key, secret or password (`--api-key X`, `--token=X`), a
/// `NAME=value` whose name is, and a URL's password (`postgres://u:X@h`).
///
/// argv[0], the program, is never masked; a title a process wrote over it (`npm run dev
/// --token X`, in one argument) keeps its first word and is masked after it.
pub fn argv(argv: &[String]) -> Vec<String> {
    let Some((program, rest)) = argv.split_first() else {
        return Vec::new();
    };
    let mut words = Words::default();
    let first = match program.split_once(' ') {
        Some((name, title)) => {
            words.note_program(name);
            format!("{name} {}", line(title))
        }
        None => {
            words.note_program(program);
            program.clone()
        }
    };
    let mut out = vec![first];
    out.extend(rest.iter().map(|a| words.next(a)));
    out
}

/// A command line (argv joined by spaces, or a sentence quoting one) masked as [`argv`] masks
/// its words: split on spaces, each word stripped of the quotes and brackets a sentence puts
/// around a command (`` (`mysql -pX`) ``), then joined again by the same spaces.
pub fn line(line: &str) -> String {
    let mut words = Words::default();
    line.split(' ')
        .map(|piece| {
            let (before, word, after) = unwrap_word(piece);
            format!("{before}{}{after}", words.next(word))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A scan with every member's argv and every command line it quotes masked.
pub fn scan(scan: &mut Scan) {
    for project in &mut scan.projects {
        project.resources.iter_mut().for_each(resource);
        for c in &mut project.containers {
            for e in &mut c.evidence {
                e.message = line(&e.message);
            }
            for k in c.connections.iter_mut().filter_map(|k| k.client.as_mut()) {
                k.command = k.command.as_deref().map(line);
            }
        }
    }
}

/// One card masked: its members' argv, and every command line its evidence, activity,
/// clients, respawners and manager quote.
pub fn resource(r: &mut Resource) {
    for m in &mut r.members {
        m.argv = argv(&m.argv);
    }
    for e in &mut r.evidence {
        e.message = line(&e.message);
    }
    if let Some(busiest) = r.activity.as_mut().and_then(|a| a.busiest.as_mut()) {
        busiest.command = line(&busiest.command);
    }
    for c in r.connections.iter_mut().filter_map(|c| c.client.as_mut()) {
        c.command = c.command.as_deref().map(line);
    }
    for s in &mut r.respawners {
        s.command = line(&s.command);
    }
    if let Some(m) = r.managed_by.as_mut() {
        m.stop_command = m.stop_command.as_deref().map(line);
    }
}

/// A stop's report masked: its reason, every member's, newcomer's and planned signal's command
/// line, the facts it set aside, and the fresh card it carries.
pub fn stop_report(r: &mut StopReport) {
    r.reason = line(&r.reason);
    for m in &mut r.members {
        m.command = line(&m.command);
    }
    for n in &mut r.newcomers {
        n.command = line(&n.command);
    }
    for s in &mut r.would_signal {
        s.command = line(&s.command);
    }
    for s in &mut r.set_aside {
        s.fact = line(&s.fact);
    }
    if let Some(fresh) = r.fresh.as_mut() {
        resource(fresh);
    }
}

/// A history line masked: the argv a restart runs, its reasons, the facts it set aside and
/// the environment entries it names (`NODE_OPTIONS=--require x`).
pub fn history_entry(h: &mut HistoryEntry) {
    h.root_command = argv(&h.root_command);
    h.reason = h.reason.as_deref().map(line);
    h.why_not = h.why_not.as_deref().map(line);
    names_only(&mut h.code_env);
    for s in &mut h.set_aside {
        s.fact = line(&s.fact);
    }
    for e in h.restarts.iter_mut().filter_map(|r| r.exited.as_mut()) {
        e.log_tail = e.log_tail.lines().map(line).collect::<Vec<_>>().join("\n");
    }
}

/// The code-changing environment entries a record names (`LD_PRELOAD=/x`), by name only: an
/// agent is never told an environment's values.
fn names_only(entries: &mut [String]) {
    for e in entries {
        if let Some((name, _)) = e.split_once('=') {
            *e = format!("{name}={MASK}");
        }
    }
}

/// A restart's report masked: its reason and the environment entries it names.
pub fn restart_report(r: &mut RestartReport) {
    r.reason = line(&r.reason);
    // What the server printed may quote its environment or a secret it was given.
    for l in &mut r.log_tail {
        *l = line(l);
    }
    if let Some(exited) = r.exited.as_mut() {
        exited.log_tail = exited
            .log_tail
            .lines()
            .map(line)
            .collect::<Vec<_>>()
            .join("\n");
    }
    names_only(&mut r.code_env);
}

/// The quotes and brackets around a word in a sentence, split off so the word is judged
/// alone and they are kept.
fn unwrap_word(piece: &str) -> (&str, &str, &str) {
    const OPEN: &[char] = &['`', '\'', '"', '('];
    const CLOSE: &[char] = &['`', '\'', '"', ')', ',', ';'];
    let word = piece.trim_start_matches(OPEN);
    let before = &piece[..piece.len() - word.len()];
    let trimmed = word.trim_end_matches(CLOSE);
    (before, trimmed, &word[trimmed.len()..])
}

/// The state carried from one word of an argv (or a line) to the next.
#[derive(Default)]
struct Words {
    /// The word before named a secret (`--token`): this one is its value.
    value_next: bool,
    /// A header named like a secret (`Authorization:`) came: every word after it is its value.
    rest_secret: bool,
    /// The last program seen whose short flags carry a password (`mysql`).
    short: Option<&'static ShortFlag>,
}

impl Words {
    fn note_program(&mut self, word: &str) {
        if let Some(rule) = short_flag(word) {
            self.short = Some(rule);
        }
    }

    /// One word, masked. Why an empty word changes nothing: two spaces in a line are not a
    /// value.
    fn next(&mut self, word: &str) -> String {
        if word.is_empty() {
            return String::new();
        }
        if self.rest_secret {
            return MASK.to_owned();
        }
        if std::mem::take(&mut self.value_next) && !word.starts_with('-') {
            return MASK.to_owned();
        }
        if word.contains(' ') {
            return line(word);
        }
        self.note_program(word);
        if word.starts_with('-') {
            return self.flag(word);
        }
        if let Some(name) = word.strip_suffix(':') {
            self.rest_secret = is_secret_name(name);
            return word.to_owned();
        }
        value(word)
    }

    /// A flag: `--name=value`, `--name` (then perhaps a value next), or a program's short
    /// password flag (`-pX`).
    fn flag(&mut self, word: &str) -> String {
        if let Some(rule) = self.short {
            if let Some(rest) = word.strip_prefix(rule.flag) {
                if !rest.is_empty() {
                    return format!("{}{MASK}", rule.flag);
                }
                self.value_next = rule.value_next;
                return word.to_owned();
            }
        }
        match word.split_once('=') {
            Some((name, _)) if is_secret_flag(name) => format!("{name}={MASK}"),
            Some((name, v)) => format!("{name}={}", value(v)),
            None => {
                self.value_next = is_secret_flag(word);
                word.to_owned()
            }
        }
    }
}

/// A word that is not a flag: a `NAME=value` named like a secret is masked after its `=`, any
/// other's value is masked as a word of its own (`NODE_OPTIONS=--token=X`); else a URL's
/// password and known tokens in it are.
fn value(word: &str) -> String {
    if let Some(masked) = word.strip_suffix('…').and_then(shape::cut_short) {
        return format!("{masked}…");
    }
    if let Some((name, v)) = word.split_once('=') {
        if shape::is_assignment_name(name) {
            if is_secret_name(name) {
                return format!("{name}={MASK}");
            }
            return format!("{name}={}", Words::default().next(v));
        }
    }
    shape::tokens(&shape::url_passwords(word))
}

#[cfg(test)]
mod tests;

/// Every sentence and command in a port's answer (`who_holds_port`).
pub fn port(a: &mut crate::diagnose::port::PortAnswer) {
    for h in &mut a.holders {
        h.what = line(&h.what);
    }
    a.reason = line(&a.reason);
    if let Some(hint) = &mut a.hint {
        *hint = line(hint);
    }
}
