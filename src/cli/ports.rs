//! `:PORT` on the command line: `pier stop :3000` stops the one green resource that holds the
//! port, `pier scan :3000` shows who holds it and what that stop would do. The answer is
//! `pier_core::diagnose::port`'s; here it is put in words.

use std::fmt::Write as _;

use pier_core::diagnose::port::{Holder, PortAnswer};
use pier_core::words::for_terminal;

use super::render::Style;

/// The ports among a command line's ids (`:3000`), already checked by `check_resource_ids`.
/// Each port once, in the order first given: `pier stop :7071 :7071` asks about one port.
pub(super) fn asked(ids: &[String]) -> Vec<u16> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .filter_map(|id| pier_core::diagnose::port::parse(id)?.ok())
        .filter(|p| seen.insert(*p))
        .collect()
}

/// The answer for a person: what holds the port and what Pier does about it; when it does
/// nothing, each holder and what the user can do. `scan`: said by `pier scan :PORT`, which
/// stops nothing itself.
pub(super) fn answer_text(a: &PortAnswer, style: &Style, scan: bool) -> String {
    let mut out = String::new();
    let port = style.bold(&format!(":{}", a.port));
    if a.stops.is_some() || a.is_free() {
        let _ = writeln!(out, "{port}  {}", for_terminal(&a.reason));
        return out;
    }
    let none = match scan {
        true => format!("`pier stop :{}` stops nothing", a.port),
        false => "nothing stopped".to_owned(),
    };
    let _ = writeln!(
        out,
        "{port}  {}: {}",
        style.warn(&none),
        for_terminal(&a.reason)
    );
    if a.holders.len() > 1 {
        for h in &a.holders {
            let _ = writeln!(out, "    {}", holder_text(h, style));
        }
    }
    if let Some(hint) = &a.hint {
        let _ = writeln!(out, "    → {}", for_terminal(hint));
    }
    out
}

/// One holder on its line: `vite (pid 10, id 10-100) in /h/u/shop on 127.0.0.1:3000 — green`.
pub(super) fn holder_text(h: &Holder, style: &Style) -> String {
    let mut who = vec![];
    if let Some(pid) = h.pid {
        who.push(format!("pid {pid}"));
    }
    if let Some(id) = &h.id {
        who.push(format!("id {id}"));
    }
    let mut line = for_terminal(&h.what).into_owned();
    if !who.is_empty() {
        let _ = write!(line, " ({})", who.join(", "));
    }
    if let Some(project) = &h.project {
        let _ = write!(line, " in {}", for_terminal(project));
    }
    let _ = write!(line, " on {}", h.listeners.join(", "));
    match h.level {
        Some(level) => {
            let _ = write!(line, " — {}", style.level_word(level));
        }
        None => line.push_str(" — no card"),
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use pier_core::model::card::Level;

    fn holder(id: Option<&str>, what: &str, pid: Option<u32>) -> Holder {
        Holder {
            id: id.map(Into::into),
            what: what.into(),
            level: id.map(|_| Level::Green),
            project: id.map(|_| "/h/u/shop".into()),
            pid,
            listeners: vec!["127.0.0.1:3000".into(), "[::]:3000".into()],
        }
    }

    #[test]
    fn several_holders_are_each_named_with_the_hint() {
        let a = PortAnswer {
            port: 3000,
            holders: vec![
                holder(Some("10-100"), "vite", Some(10)),
                holder(None, "nginx\u{1b}[2J", Some(7)),
            ],
            stops: None,
            reason: "2 holders listen on TCP port 3000, so Pier stops none of them".into(),
            hint: Some("stop the one you mean by its id".into()),
        };
        let text = answer_text(&a, &Style { colour: false }, false);
        assert_eq!(
            text,
            ":3000  nothing stopped: 2 holders listen on TCP port 3000, so Pier stops none of \
             them\n    vite (pid 10, id 10-100) in /h/u/shop on 127.0.0.1:3000, [::]:3000 — \
             green\n    nginx\\e[2J (pid 7) on 127.0.0.1:3000, [::]:3000 — no card\n    → stop \
             the one you mean by its id\n"
        );
    }

    #[test]
    fn a_port_pier_stops_is_one_line() {
        let a = PortAnswer {
            port: 3000,
            holders: vec![holder(Some("10-100"), "vite", Some(10))],
            stops: Some("10-100".into()),
            reason: "vite (pid 10, id 10-100) holds it: stopping it, if the stop's own checks pass"
                .into(),
            hint: None,
        };
        assert_eq!(
            answer_text(&a, &Style { colour: false }, false),
            ":3000  vite (pid 10, id 10-100) holds it: stopping it, if the stop's own checks \
             pass\n"
        );
    }
}
