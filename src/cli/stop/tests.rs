//! The flags of `pier stop` and what `--project` accepts.

use super::*;

/// `pier stop ARGS`, as clap parses it.
fn parse(args: &[&str]) -> Result<StopArgs, clap::Error> {
    #[derive(clap::Parser)]
    struct Line {
        #[command(flatten)]
        stop: StopArgs,
    }
    <Line as clap::Parser>::try_parse_from(std::iter::once("stop").chain(args.iter().copied()))
        .map(|l| l.stop)
}

/// Found by trying: clap drops `requires = "all_green"` when ids are given, so
/// `pier stop ID --under DIR` stopped ID and ignored `--under` in silence.
#[test]
fn under_without_all_green_is_a_usage_error_not_ignored() {
    for args in [
        &["1-1", "--under", "/tmp"][..],
        &["--project", "/tmp", "--under", "/tmp"],
    ] {
        let why = misplaced_flag(&parse(args).unwrap()).expect("refused");
        assert!(
            why.starts_with("--under limits --all-green and --when-safe only"),
            "{why}"
        );
    }
    assert_eq!(
        misplaced_flag(&parse(&["--all-green", "--under", "/tmp"]).unwrap()),
        None
    );
}

/// Found by trying: `pier stop --force --all-green` and `--force --project DIR` passed
/// clap's `requires = "ids"` the same way. Force and a stop anyway take ids only.
#[test]
fn force_and_a_stop_anyway_are_only_for_resources_named_by_id() {
    for (args, said) in [
        (&["--force", "--all-green"][..], "--force follows one stop"),
        (
            &["--force", "--project", "/tmp"],
            "--force follows one stop",
        ),
        (
            &["--anyway", "--all-green"],
            "--anyway stops only resources named by id",
        ),
        (&["--anyway", "--accept", "busy", ":3000"], "never by port"),
        (&["--accept", "busy", "1-1"], "give it with --anyway"),
    ] {
        let why = misplaced_flag(&parse(args).unwrap()).expect("refused");
        assert!(why.contains(said), "{args:?}: {why}");
    }
    assert_eq!(misplaced_flag(&parse(&["--force", "1-1"]).unwrap()), None);
    assert_eq!(misplaced_flag(&parse(&["--anyway", "1-1"]).unwrap()), None);
}

/// A stop's sample over a second is refused by clap, with the parser's sentence, before
/// `run` could open the state folder.
#[test]
fn a_stop_sample_that_cannot_fit_its_deadline_is_refused_at_parse() {
    use std::error::Error as _;
    let e = parse(&["--sample-ms", "2500", "1-1"]).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
    assert_eq!(
        e.source().map(ToString::to_string),
        numbers::stop_sample("2500").err().map(|e| e.to_string())
    );
    let args = parse(&["--sample-ms", "1000", "--grace", "0.25", "1-1"]).unwrap();
    let opts = stop_options(&args).unwrap();
    assert_eq!(opts.sample, Duration::from_secs(1));
    assert_eq!(opts.grace, Duration::from_millis(250));
    let defaults = stop_options(&parse(&["1-1"]).unwrap()).unwrap();
    assert_eq!(defaults.sample, Duration::from_millis(500));
    assert_eq!(defaults.grace, Duration::from_secs(5));
    assert_eq!(defaults.thresholds, Thresholds::default());
}

/// Found by trying: `pier stop --project <a folder that is no project>` said "Nothing to
/// stop." and exited 0.
#[test]
fn a_project_flag_names_a_projects_own_folder() {
    let markers = |d: &Path| (d == Path::new("/h/u/app")).then_some("package.json");
    let home = Some(Path::new("/h/u"));
    assert_eq!(
        project_refusal(Path::new("/h/u/app"), home, &markers),
        None,
        "a project with nothing running: nothing to stop"
    );
    assert_eq!(
        project_refusal(Path::new("/h/u/app/src"), home, &markers).unwrap(),
        "--project /h/u/app/src: not a project's own folder but a folder inside the \
         project /h/u/app (give --project /h/u/app)"
    );
    let none = project_refusal(Path::new("/h/u/notes"), home, &markers).unwrap();
    assert!(
        none.starts_with("--project /h/u/notes: not a project folder (neither it nor"),
        "{none}"
    );
    assert!(none.contains(".git, package.json, Cargo.toml"), "{none}");
    for never in ["/h/u", "/"] {
        let why = project_refusal(Path::new(never), home, &|_| Some(".git")).unwrap();
        assert!(why.contains("never projects"), "{why}");
    }
}

/// A `--project` batch takes what is not green (the stop's checks refuse it) but leaves alone
/// what no stop ever signals, by the reason table: a protected resource, a data service, and
/// a manager's program, which its manager would start again. `--all-green` takes green only.
#[test]
fn a_project_batch_leaves_alone_what_no_stop_ever_signals() {
    use pier_core::model::card::EvidenceKind;
    use pier_core::model::examples;
    let with = |id: &str, kind| {
        let mut r = examples::resource(id, Level::Yellow, 3000);
        r.evidence.push(Evidence {
            kind,
            level: Level::Yellow,
            message: "why".into(),
            source: "argv".into(),
        });
        r
    };
    let resources = vec![
        examples::resource("1-1", Level::Green, 3000),
        with("2-1", EvidenceKind::Activity),
        with("3-1", EvidenceKind::Managed),
        with("4-1", EvidenceKind::ServiceUnit),
        with("5-1", EvidenceKind::DataService),
        with("6-1", EvidenceKind::UserProtected),
    ];
    let p = examples::project("/h/u/app", Level::Yellow, resources);
    let (ids, left) = split_by_level(std::iter::once(&p), true);
    assert_eq!(ids, ["1-1", "2-1"]);
    let left: Vec<&str> = left.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(left, ["3-1", "4-1", "5-1", "6-1"]);
    let (ids, _) = split_by_level(std::iter::once(&p), false);
    assert_eq!(ids, ["1-1"]);
}
