use super::*;

const VITE: &[u8] = b"node_modules/.bin/vite";

fn rec(name: &'static str, automatic: bool, at: &str, argv: &'static [u8]) -> Rec<'static> {
    Rec {
        named: Named {
            name,
            id: "100-1000",
            project: "/w/web",
        },
        automatic,
        result: Some(ResourceResult::Stopped),
        at: humantime::parse_rfc3339(at).ok(),
        command: Some(Command::Tree {
            project: "/w/web",
            argv: vec![argv],
            cwd: Some(b"/w/web"),
        }),
    }
}

fn new() -> Rec<'static> {
    rec("snap-new", true, "2026-12-01T14:02:00Z", VITE)
}

fn old() -> Rec<'static> {
    rec("snap-old", true, "2026-12-01T12:00:00Z", VITE)
}

#[test]
fn an_older_automatic_record_of_the_same_command_is_superseded() {
    assert!(superseded(&new(), &old()));
    let same_second = rec("snap-twin", true, "2026-12-01T14:02:00Z", VITE);
    assert!(superseded(&new(), &same_second), "a second's precision");
}

#[test]
fn a_persons_record_a_newer_one_and_the_new_one_itself_stay() {
    assert!(!superseded(&new(), &new()), "never the new one");
    let person = rec("snap-person", false, "2026-12-01T12:00:00Z", VITE);
    assert!(!superseded(&new(), &person), "a person's undo");
    let newer = rec("snap-newer", true, "2026-12-01T15:00:00Z", VITE);
    assert!(!superseded(&new(), &newer));
    let mut unread = old();
    unread.at = None;
    assert!(!superseded(&new(), &unread), "an unreadable time");
}

#[test]
fn only_the_same_project_argv_and_folder_are_the_same_command() {
    let other = rec(
        "snap-api",
        true,
        "2026-12-01T12:00:00Z",
        b"node_modules/.bin/next",
    );
    assert!(!superseded(&new(), &other));
    let mut elsewhere = old();
    elsewhere.command = Some(Command::Tree {
        project: "/w/web",
        argv: vec![VITE],
        cwd: Some(b"/w/web/packages/a"),
    });
    assert!(!superseded(&new(), &elsewhere), "another folder");
    let mut unknown = old();
    unknown.command = None;
    let mut also_unknown = new();
    also_unknown.command = None;
    assert!(
        !superseded(&also_unknown, &unknown),
        "no command is no match"
    );
}

#[test]
fn an_unfinished_record_or_a_stop_that_ended_nothing_supersedes_nothing() {
    let mut unfinished = old();
    unfinished.result = None;
    assert!(!superseded(&new(), &unfinished));
    for result in [
        None,
        Some(ResourceResult::Refused),
        Some(ResourceResult::Failed),
        Some(ResourceResult::NotStopped),
    ] {
        let mut n = new();
        n.result = result;
        assert!(!superseded(&n, &old()), "{result:?}");
    }
    let mut partial = new();
    partial.result = Some(ResourceResult::PartiallyStopped);
    assert!(superseded(&partial, &old()));
    let mut by_a_person = new();
    by_a_person.automatic = false;
    assert!(
        !superseded(&by_a_person, &old()),
        "only an automatic stop supersedes"
    );
}
