use super::*;
use pier_core::diagnose::port::Holder;

fn part(id: &str, level: Level) -> PidMeaning {
    PidMeaning::Part {
        id: id.into(),
        kind: "vite".into(),
        level,
        project: "/h/u/web".into(),
    }
}

fn held_by(port: u16, id: &str, stops: bool) -> PortAnswer {
    PortAnswer {
        port,
        holders: vec![Holder {
            id: Some(id.into()),
            what: "next".into(),
            level: Some(Level::Green),
            project: Some("/h/u/shop".into()),
            pid: Some(7),
            listeners: vec![format!("127.0.0.1:{port}")],
        }],
        stops: stops.then(|| id.into()),
        reason: String::new(),
        hint: None,
    }
}

fn free(port: u16) -> PortAnswer {
    PortAnswer {
        port,
        holders: vec![],
        stops: None,
        reason: String::new(),
        hint: None,
    }
}

#[test]
fn a_bare_number_is_digits_only() {
    assert!(is_bare_number("6989"));
    assert!(is_bare_number("0"));
    for not in ["", "6989-1", ":6989", "69x", "+1", " 1"] {
        assert!(!is_bare_number(not), "{not:?}");
    }
}

/// "y" picks the one resource; a number picks among several; anything else picks none.
#[test]
fn only_yes_or_a_number_in_range_picks_a_choice() {
    assert_eq!(picked("y", 1), Some(0));
    assert_eq!(picked("yes", 1), Some(0));
    for no in ["", "n", "N", "1", "no", "yy"] {
        assert_eq!(picked(no, 1), None, "{no:?}");
    }
    assert_eq!(picked("2", 2), Some(1));
    for no in ["", "y", "0", "3", "-1"] {
        assert_eq!(picked(no, 2), None, "{no:?}");
    }
    assert_eq!(picked("y", 0), None);
}

/// A pid and a port naming one resource are one choice; different ones are two, pid first.
#[test]
fn each_resource_the_number_names_is_one_choice() {
    let same = Meaning {
        number: "5199".into(),
        pid: part("5199-1", Level::Green),
        port: Some(held_by(5199, "5199-1", true)),
    };
    assert_eq!(choices(&same).len(), 1);
    let two = Meaning {
        number: "5199".into(),
        pid: part("5199-1", Level::Yellow),
        port: Some(held_by(5199, "88-2", true)),
    };
    let c = choices(&two);
    assert_eq!(
        c.iter().map(|c| c.command.as_str()).collect::<Vec<_>>(),
        ["pier stop 5199-1", "pier stop :5199"]
    );
    let words = words::asked(&two, &c, false);
    assert!(
        words.contains("  1. pid 5199 is part of vite in /h/u/web (yellow, id 5199-1)"),
        "{words}"
    );
    assert!(
        words.contains("  2. :5199 is held by next (pid 7, id 88-2)"),
        "{words}"
    );
    assert!(
        words.ends_with("Stop which? [1/2, or Enter for none] "),
        "{words}"
    );
    // A port `pier stop :N` would not stop is no choice.
    let yellow_port = Meaning {
        port: Some(held_by(5199, "88-2", false)),
        ..two
    };
    assert_eq!(choices(&yellow_port).len(), 1);
}

#[test]
fn the_question_names_the_resource_and_its_id() {
    let m = Meaning {
        number: "6989".into(),
        pid: part("6989-3721068", Level::Green),
        port: Some(free(6989)),
    };
    let text = words::asked(&m, &choices(&m), false);
    assert_eq!(
        text,
        "6989 could mean:\n  pid 6989 is part of vite in /h/u/web (id 6989-3721068)\n  nothing \
         listens on :6989\nStop vite in /h/u/web (id 6989-3721068)? [y/N] "
    );
}

/// Without a terminal, the refusal names each meaning and the command to type instead.
#[test]
fn the_refusal_names_the_commands_to_type() {
    let m = Meaning {
        number: "6989".into(),
        pid: PidMeaning::Process("sleep 100".into()),
        port: Some(held_by(6989, "88-2", true)),
    };
    let text = words::not_asked(words::NotAsked::NoTerminal, &[m]);
    assert!(
        text.contains("only a person on a terminal can answer it"),
        "{text}"
    );
    assert!(text.contains("pid 6989 is `sleep 100`, not part of anything Pier would stop"));
    assert!(text.ends_with("— green: `pier stop :6989`"), "{text}");
    let none = Meaning {
        number: "99999".into(),
        pid: PidMeaning::Nobody,
        port: None,
    };
    let text = words::not_asked(words::NotAsked::PastANo, &[none]);
    assert!(text.ends_with("\n  no process has pid 99999"), "{text}");
}
