//! The command line: `pier scan`, `pier stop`, `pier history`, `pier restart`, each with text
//! for a person or `--json`; and `pier` alone (or `pier app`), the tray app.
//! Errors become one sentence on stderr and a documented exit code; nothing here prints a
//! stack trace.
//!
//! Exit codes: 0 done (a scan ran, whatever it found; every requested resource was stopped);
//! 1 Pier could not work at all (the process table or the state folder was unreadable);
//! 2 the command line was wrong (an unknown flag; a number outside its range, see
//! `pier_core::front::numbers`; a `--under` folder that does not exist; `--under` without
//! `--all-green`, `--anyway` or `--force` without ids; a `--project` folder that is no project's; a
//! malformed resource id or snapshot name; a bare number where no person can be asked; an
//! empty or relative `PIER_STATE_DIR`);
//! 3 a stop left some requested resource not `stopped` (refused, partially stopped, not
//! stopped, failed), or a restart was refused or did not get ready in time, or `pier stop
//! --when-safe` refused to arm one (green already, a reason no arm waits for, a container), or
//! `pier armed --cancel` named an id with no arm;
//! 4 every requested resource was stopped, but some outcome could not be recorded;
//! 128 + N a stop interrupted by signal N (docs/design.md §3.10).

mod anyway;
mod app;
mod armed;
mod auto;
mod doctor;
mod exit;
mod generate;
mod help;
mod history;
mod mcp;
mod ports;
mod protect;
mod render;
mod restart;
mod scan;
mod stop;
mod watch;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

/// What `pier --help` says after the commands: exit codes, environment, examples (README.md).
const AFTER_HELP: &str = "\
Exit codes:
  0    done: the scan ran, or every requested resource was stopped, or a restart is ready
  1    Pier could not work at all (the process table or the state folder could not be read)
  2    the command line was wrong (one sentence says what)
  3    a stop left a requested resource not stopped, or a restart was refused or not ready,
       or an arm was refused, or `pier armed --cancel` named an id with no arm
  4    everything was stopped, but an outcome could not be written to its snapshot
  128+N  a stop interrupted by signal N (130 for Ctrl-C, 143 for SIGTERM)

Environment:
  PIER_STATE_DIR  the state folder (snapshots, locks, logs); an absolute path
                  (default: $XDG_STATE_HOME/pier on Linux, ~/Library/Application Support/Pier on macOS)
  PIER_CONFIG_DIR the configuration folder, where `pier protect` keeps protect.toml; an absolute path
                  (default: $XDG_CONFIG_HOME/pier on Linux, ~/Library/Application Support/Pier on macOS)
  PIER_LOG        diagnostic logging to stderr (e.g. debug)
  NO_COLOR        no colour in the text output
  DOCKER_HOST     the container engine to ask (else the current Docker context, else the usual sockets)

Examples:
  pier scan                          the cards: one per project, green / yellow / red
  pier scan --under ~/code --json    only projects under ~/code, as JSON (docs/scan-json.md)
  pier stop 17824-71008              stop one resource safely, by the id the scan shows
  pier stop --all-green --under ~/code
  pier stop --when-safe 17824-71008  stop it once it is safe (its client gone), within 8 h
  pier history                       what was stopped, and whether it can be restarted
  pier restart 17824-71008           start it again from its newest snapshot";

/// Finds dev servers and watchers left running after their terminal is gone.
#[derive(Debug, Parser)]
#[command(name = "pier", version, about, after_help = AFTER_HELP)]
struct Cli {
    /// With no command, Pier starts the tray app (`pier app`).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the menu-bar / tray app (what `pier` alone does).
    #[command(after_help = help::APP)]
    App(pier_core::front::app_args::AppArgs),
    /// Show dev residue, one card per project, green / yellow / red with the evidence.
    #[command(after_help = help::SCAN)]
    Scan(scan::ScanArgs),
    /// Stop resources safely: re-check, snapshot, then SIGTERM leaf to root.
    #[command(after_help = help::STOP)]
    Stop(stop::StopArgs),
    /// List the armed stops ("stop when safe"), or cancel them.
    #[command(after_help = help::ARMED)]
    Armed(armed::ArmedArgs),
    /// List the recovery snapshots, and whether each can be restarted.
    #[command(after_help = help::HISTORY)]
    History(history::HistoryArgs),
    /// Start a stopped service again from its snapshot, exactly as it was recorded.
    #[command(after_help = help::RESTART)]
    Restart(restart::RestartArgs),
    /// Show or change the list of projects, ports and containers Pier must never offer.
    #[command(after_help = help::PROTECT)]
    Protect(protect::ProtectArgs),
    /// Show the automatic-stop rules: on or off, what they would stop now and why not the
    /// rest; pause, resume, or preview them as a dry run.
    #[command(after_help = help::AUTO)]
    Auto(auto::AutoArgs),
    /// Measure how long each resource has been idle, and fire armed stops ("stop when safe")
    /// and the automatic-stop rules (`pier auto`), until Ctrl-C.
    #[command(after_help = help::WATCH)]
    Watch(watch::WatchArgs),
    /// Serve Pier to an AI agent over MCP (stdio): the cards, stop plans a person confirms,
    /// and restarts of what the agent stopped, with the same safety as a click.
    #[command(after_help = help::MCP)]
    Mcp(mcp::McpArgs),
    /// Check that Pier works on this machine: a self-test against a test process of its own.
    #[command(after_help = help::DOCTOR)]
    Doctor(doctor::DoctorArgs),
    /// The test process `pier doctor` starts (not for people).
    #[command(name = "doctor-child", hide = true)]
    DoctorChild(doctor::ChildArgs),
    /// Print the completion script for a shell: bash, zsh, fish, elvish or powershell.
    #[command(after_help = help::COMPLETIONS)]
    Completions(generate::CompletionsArgs),
    /// Print Pier's man page (roff), or write one page per command into a folder.
    #[command(after_help = help::MAN)]
    Man(generate::ManArgs),
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to anything non-empty.
fn use_colour(stdout_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stdout_is_terminal && no_color.is_none_or(|v| v.is_empty())
}

use exit::{open_system, open_system_for_reading, resolve_dirs, usage};
use exit::{EXIT_FAILED, EXIT_NOT_ALL_STOPPED, EXIT_NOT_RECORDED, EXIT_USAGE};
use pier_core::diagnose::port;
use pier_core::model::target::{RecordName, TargetId, TargetKind};

/// What a resource id looks like, for the sentence that refuses a malformed one.
const ID_FORM: &str = "a resource id is <root pid>-<root start time>, two whole numbers as \
                       `pier scan` shows them (e.g. 17824-71008)";

/// Every id of `pier stop ID...` must be a [`TargetId`] (a resource's id or a container
/// card's, parsed strictly: `model::target` says why) or `:PORT`; the first that is neither is
/// a usage error (exit 2), before anything is read or locked.
fn check_resource_ids(ids: &[String]) -> Result<(), ExitCode> {
    for id in ids {
        // `:3000`: the resource that holds the port (`diagnose::port`).
        if let Some(port) = port::parse(id) {
            port.map_err(|why| usage(&why.to_string()))?;
        } else if id.parse::<TargetId>().is_err() {
            return Err(usage(&not_a_resource_id(id)));
        }
    }
    Ok(())
}

/// Why `bad` is refused, naming both forms an id may take.
fn not_a_resource_id(bad: &str) -> String {
    format!(
        "{bad:?} is not a resource id: {ID_FORM}; a container's card is container- and 12 hex \
         digits (e.g. container-fe7ae5f85c8a); a port is a colon and its number (e.g. :3000)."
    )
}

/// The kind of target `pier restart`'s argument names: a record as `pier history` names it
/// ([`RecordName`]), or a target's id (its newest record); `None` when it is neither.
fn restart_kind(arg: &str) -> Option<TargetKind> {
    match arg.parse::<RecordName>() {
        Ok(record) => Some(record.target.kind()),
        Err(_) => arg.parse::<TargetId>().ok().map(|id| id.kind()),
    }
}

/// `pier restart`'s argument: a snapshot name or a resource id, else a usage error (exit 2).
fn check_snapshot_or_id(arg: &str) -> Result<(), ExitCode> {
    if restart_kind(arg).is_some() {
        return Ok(());
    }
    Err(usage(&format!(
        "{arg:?} is neither a snapshot nor a resource id: a snapshot is named as `pier \
         history` shows it (e.g. snap-17824-71008-1764590000000, or ctr-fe7ae5f85c8a-1764590000000 \
         for a container's); {ID_FORM}."
    )))
}

/// The user's protect list for a scan; one that cannot be read is said on stderr (every card
/// then says it too, and nothing is offered).
fn protect_list() -> pier_core::model::protect::Protect {
    let protect = pier_core::config::protect();
    if let pier_core::model::protect::Protect::Unreadable(why) = &protect {
        eprintln!("pier: warning: {}", pier_core::words::for_terminal(why));
    }
    protect
}

/// One `--json` document on stdout, pretty-printed, with its final newline. Every document
/// Pier prints is plain data: serialising it cannot fail.
fn print_json(doc: &impl serde::Serialize) -> ExitCode {
    let mut text = serde_json::to_vec_pretty(doc).expect("a document serialises");
    text.push(b'\n');
    print(&text)
}

/// Writes `text` to stdout; a closed pipe is the reader's choice, not a failure.
fn print(text: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pier: could not write the result: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

fn colour_wanted() -> bool {
    use_colour(
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// A command line clap did not take. A value one of Pier's own parsers refused
/// (`front::numbers`) is that parser's sentence, `pier: --grace 1e300: must be …`, and exit 2,
/// like every usage error Pier words itself; anything else is clap's message (exit 2), or the
/// help or version asked for (exit 0).
fn refused(e: &clap::Error) -> ExitCode {
    use std::error::Error as _;
    if e.kind() == clap::error::ErrorKind::ValueValidation {
        if let Some(why) = e.source() {
            return usage(&why.to_string());
        }
    }
    let _ = e.print();
    ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 })
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    // `pier --under DIR`: the app, with its own options (README.md).
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if app::for_the_app(&raw) {
        return app::exec_app(raw);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refused(&e),
    };
    let Some(command) = cli.command else {
        return app::exec_app(Vec::new());
    };
    pier_core::front::init_logging(None, "warn");
    match command {
        // Checked here (so `--help` and a wrong value need no app), then passed on as given.
        Command::App(_) => app::exec_app(app::after_app(raw)),
        Command::Scan(args) => scan::run(args),
        Command::Stop(args) => stop::run(args),
        Command::Armed(args) => armed::run(args),
        Command::History(args) => history::history(args),
        Command::Restart(args) => restart::restart(args),
        Command::Protect(args) => protect::run(args),
        Command::Auto(args) => auto::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::DoctorChild(args) => doctor::child(args),
        Command::Completions(args) => generate::completions(&args, Cli::command()),
        Command::Man(args) => generate::man(&args, Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::ffi::OsStr;

    /// A resource's id, as [`TargetId`] parses it.
    fn is_resource_id(id: &str) -> bool {
        matches!(id.parse(), Ok(TargetId::Tree(_)))
    }

    fn is_snapshot_name(name: &str) -> bool {
        name.parse::<RecordName>()
            .is_ok_and(|r| r.target.kind() == TargetKind::Tree)
    }

    /// The gates of `pier stop` and `pier restart` take what `model::target` parses (its tests
    /// hold the grammar's cases) and refuse the rest before anything is read. Found by trying
    /// real tools: `pier stop 12x` said "refused … no resource 12x now" and exited 3, as if a
    /// resource had been looked at.
    #[test]
    fn stop_and_restart_take_only_what_the_id_grammar_parses() {
        assert!(check_resource_ids(&["container-fe7ae5f85c8a".into(), "1-1".into()]).is_ok());
        for bad in ["12x", "17824", "container-fe7ae5f85c8", "snap-1-1-1"] {
            assert!(check_resource_ids(&[bad.into()]).is_err(), "{bad:?}");
        }
        assert!(not_a_resource_id("vite").contains("is not a resource id"));
        for good in [
            "snap-17824-71008-1764590000000",
            "17824-71008",
            "ctr-fe7ae5f85c8a-1764590000000",
            "container-fe7ae5f85c8a",
        ] {
            assert!(check_snapshot_or_id(good).is_ok(), "{good}");
        }
        let container = Some(TargetKind::Container);
        assert_eq!(restart_kind("ctr-fe7ae5f85c8a-1764590000000"), container);
        assert_eq!(restart_kind("container-fe7ae5f85c8a"), container);
        assert_ne!(restart_kind("snap-17824-71008-1764590000000"), container);
        for bad in [
            "snap-17824-71008",
            "ctr-xyz-1764590000000",
            "17824-71008-1764590000000",
        ] {
            assert!(check_snapshot_or_id(bad).is_err(), "{bad:?}");
        }
    }

    /// A numeric flag's value as a person might type it, or mistype it.
    fn number_like() -> impl Strategy<Value = String> {
        prop_oneof![
            "[-+]?[0-9]{0,21}(\\.[0-9]{0,8})?([eE][-+]?[0-9]{1,4})?",
            "(?i)[-+]?(nan|inf|infinity)",
            any::<String>(),
        ]
    }

    /// `pier ARGS` as clap parses it, then as each command checks it, the way `main` runs
    /// them up to the first read of the OS or the state folder.
    fn parse_and_check(argv: &[String]) {
        let argv = std::iter::once("pier".to_owned()).chain(argv.iter().cloned());
        match Cli::try_parse_from(argv) {
            Ok(Cli {
                command: Some(Command::Stop(args)),
            }) => {
                let _ = stop::stop_options(&args);
            }
            Ok(Cli {
                command: Some(Command::Restart(args)),
            }) => {
                if let Some(snapshot) = &args.snapshot {
                    let _ = check_snapshot_or_id(snapshot);
                }
            }
            Ok(_) => {}
            // What the user reads: rendering the error must not panic either.
            Err(e) => {
                let _ = e.render();
            }
        }
    }

    proptest! {
        /// Any command line, built from Pier's own words and arbitrary strings, is parsed or
        /// refused; never a panic.
        #[test]
        fn no_command_line_makes_the_parsers_panic(
            argv in proptest::collection::vec(
                prop_oneof![
                    prop::sample::select(vec![
                        "scan", "stop", "history", "restart", "app", "--json", "--grace",
                        "--sample-ms", "--under", "--all-green", "--project", "--force",
                        "--anyway", "--accept", "busy,not_orphaned", "managed",
                        "--cpu-threshold", "--io-threshold", "--wait", "--all", "--", "1-1",
                        "snap-1-1-1", "/tmp", "-1", "1e300", "NaN", "0", "2500",
                    ]).prop_map(str::to_owned),
                    number_like(),
                ],
                0..8,
            ),
        ) {
            parse_and_check(&argv);
        }

        /// Each numeric flag, given any value: clap's verdict is its parser's, a refusal is
        /// the parser's sentence naming the flag, and nothing panics.
        #[test]
        fn every_numeric_flag_takes_exactly_what_its_parser_takes(value in number_like()) {
            use pier_core::front::numbers;
            type Parse = fn(&str) -> Result<(), numbers::BadNumber>;
            let cases: [(&[&str], &str, Parse); 8] = [
                (&["stop", "1-1"], "--grace", |v| numbers::grace(v).map(drop)),
                (&["stop", "1-1"], "--sample-ms", |v| numbers::stop_sample(v).map(drop)),
                (&["stop", "1-1"], "--cpu-threshold", |v| numbers::cpu_percent(v).map(drop)),
                (&["stop", "1-1"], "--io-threshold", |v| numbers::io_bytes_per_second(v).map(drop)),
                (&["scan"], "--sample-ms", |v| numbers::scan_sample(v).map(drop)),
                (&["scan"], "--cpu-threshold", |v| numbers::cpu_percent(v).map(drop)),
                (&["scan"], "--io-threshold", |v| numbers::io_bytes_per_second(v).map(drop)),
                (&["restart", "1-1"], "--wait", |v| numbers::restart_wait(v).map(drop)),
            ];
            for (command, flag, parse) in cases {
                let mut argv = vec!["pier".to_owned()];
                argv.extend(command.iter().map(|s| s.to_string()));
                argv.push(format!("{flag}={value}"));
                let parsed = Cli::try_parse_from(&argv);
                if value.is_empty() {
                    // clap's own refusal: "a value is required".
                    prop_assert!(parsed.is_err());
                    continue;
                }
                match (parsed, parse(&value)) {
                    (Ok(_), Ok(())) => {}
                    (Err(e), Err(why)) => {
                        use std::error::Error as _;
                        prop_assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
                        let said = e.source().map(ToString::to_string);
                        let why = why.to_string();
                        prop_assert_eq!(said.as_deref(), Some(why.as_str()));
                        prop_assert!(why.starts_with(&format!("{flag} ")), "{}", why);
                        prop_assert!(!why.contains('\n'), "one line: {}", why);
                    }
                    (parsed, own) => prop_assert!(
                        false,
                        "{argv:?}: clap {:?}, the parser {own:?}",
                        parsed.map(drop).map_err(|e| e.kind())
                    ),
                }
            }
        }

        /// Any id or snapshot name is taken or refused, never a panic; what is taken reads
        /// back as written.
        #[test]
        fn ids_and_snapshot_names_never_panic(text in prop_oneof![
            any::<String>(),
            "(snap-)?[-+0-9]{0,12}-[0-9]{0,22}(-[0-9]{0,14})?",
        ]) {
            parse_and_check(&["stop".into(), "--".into(), text.clone()]);
            parse_and_check(&["restart".into(), "--".into(), text.clone()]);
            if is_resource_id(&text) {
                let (pid, start) = text.split_once('-').unwrap();
                prop_assert_eq!(format!("{}-{}", pid.parse::<u32>().unwrap(), start.parse::<u64>().unwrap()), text.clone());
            }
            let _ = is_snapshot_name(&text);
        }
    }

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        assert!(use_colour(true, None));
        assert!(
            use_colour(true, Some(OsStr::new(""))),
            "an empty NO_COLOR is unset"
        );
        assert!(!use_colour(true, Some(OsStr::new("1"))));
        assert!(!use_colour(false, None), "never when piped");
    }
}
