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
        pid: part("5199-1", Level::Green),
        port: Some(held_by(5199, "88-2", true)),
    };
    let c = choices(&two);
    assert_eq!(
        c.iter().map(|c| c.command.as_str()).collect::<Vec<_>>(),
        ["pier stop 5199-1", "pier stop :5199"]
    );
    let words = words::asked(&two, &c, false);
    assert!(
        words.contains("  1. pid 5199 is part of vite in /h/u/web (id 5199-1)\n"),
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

/// Only a green card is offered: a yellow or red one would be refused by the chain after a
/// "y". Its line says its level and the command that says why, and nothing is asked.
#[test]
fn a_card_that_is_not_green_is_named_with_its_way_forward_and_not_offered() {
    for level in [Level::Yellow, Level::Red] {
        let m = Meaning {
            number: "2338".into(),
            pid: part("2338-4011944", level),
            port: Some(free(2338)),
        };
        assert!(choices(&m).is_empty(), "{level:?}");
        let text = words::asked(&m, &choices(&m), false);
        let line = format!(
            "  pid 2338 is part of vite in /h/u/web (id 2338-4011944), {}: `pier stop \
             2338-4011944` says why and what you can do\n",
            level.as_str()
        );
        assert!(text.contains(&line), "{text}");
        assert!(!text.contains('?'), "nothing asked: {text}");
        assert!(
            !text.contains("pier scan"),
            "it has its way forward: {text}"
        );
        // Without a terminal, the same line.
        let text = words::not_asked(words::NotAsked::NoTerminal, &[m]);
        assert!(text.contains(line.trim_end()), "{text}");
        assert!(!text.contains("pier scan"), "{text}");
    }
    // Beside it, the green port is the one choice: a plain [y/N].
    let m = Meaning {
        number: "2338".into(),
        pid: part("2338-4011944", Level::Yellow),
        port: Some(held_by(2338, "88-2", true)),
    };
    let c = choices(&m);
    assert_eq!(c.len(), 1);
    assert!(words::asked(&m, &c, false).ends_with("Stop next in /h/u/shop (id 88-2)? [y/N] "));
}

/// A held port `pier stop :N` would not stop says the command that says why.
#[test]
fn a_port_pier_would_not_stop_names_the_command_that_says_why() {
    let m = Meaning {
        number: "5199".into(),
        pid: PidMeaning::Nobody,
        port: Some(held_by(5199, "88-2", false)),
    };
    let text = words::asked(&m, &choices(&m), false);
    assert!(
        text.contains("— green: `pier stop :5199` says why and what you can do\n"),
        "{text}"
    );
    assert!(!text.contains("pier scan"), "{text}");
}

/// A number that names nothing of Pier's ends with the command that lists what there is.
#[test]
fn a_dead_end_names_pier_scan() {
    let nothing = Meaning {
        number: "3000".into(),
        pid: PidMeaning::Nobody,
        port: Some(free(3000)),
    };
    let text = words::asked(&nothing, &[], false);
    assert_eq!(
        text,
        "3000 could mean:\n  no process has pid 3000\n  nothing listens on :3000\nNothing \
         there Pier would stop: nothing was stopped.\n`pier scan` lists what Pier can stop, \
         with each id.\n"
    );
    let text = words::not_asked(words::NotAsked::NoTerminal, &[nothing]);
    assert!(
        text.ends_with("\n`pier scan` lists what Pier can stop, with each id."),
        "{text}"
    );
    let process = Meaning {
        number: "70000".into(),
        pid: PidMeaning::Process("sleep 100".into()),
        port: None,
    };
    assert!(dead_end(&process));
}

/// Declining says what the person did: "no" to a question, or no pick among several.
#[test]
fn a_decline_says_what_the_person_answered() {
    assert_eq!(
        words::declined("31717", 1),
        "pier: 31717: nothing was stopped (you answered no)"
    );
    assert_eq!(
        words::declined("31717", 2),
        "pier: 31717: nothing was stopped (you did not pick one)"
    );
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
    assert!(
        text.ends_with(
            "\n  no process has pid 99999\n`pier scan` lists what Pier can stop, with each id."
        ),
        "{text}"
    );
}
