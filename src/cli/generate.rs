//! `pier completions SHELL` and `pier man`: a shell's completion script and the roff man pages,
//! both generated from the clap definition itself (`Cli`), so they cannot drift from what
//! `pier --help` says. Nothing here reads the process table or the state folder.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Command, ValueHint};
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;

use super::{print, EXIT_FAILED};
use pier_core::words::path_for_terminal;

/// The commands with a page of their own, as `pier --help` lists them (a unit test keeps this
/// list in step with `Cli`).
const COMMANDS: [&str; 13] = [
    "app",
    "scan",
    "stop",
    "armed",
    "history",
    "restart",
    "protect",
    "auto",
    "watch",
    "mcp",
    "doctor",
    "completions",
    "man",
];

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print the completion script for.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Print the page of this command (`scan` prints pier-scan.1) instead of pier.1.
    #[arg(value_name = "COMMAND", conflicts_with = "dir", value_parser = COMMANDS)]
    command: Option<String>,
    /// Write pier.1 and one page per command (pier-scan.1, pier-stop.1, …) into DIR, created if
    /// missing, instead of printing pier.1; each file written is named on stdout.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    dir: Option<PathBuf>,
}

/// Runs `pier completions SHELL`: the script on stdout.
pub fn completions(args: &CompletionsArgs, mut cli: Command) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "pier", &mut script);
    print(&script)
}

/// Runs `pier man`: pier.1 (or one command's page) on stdout, or every page into `--dir`.
pub fn man(args: &ManArgs, cli: Command) -> ExitCode {
    let pages = pages(cli);
    if let Some(dir) = &args.dir {
        return write_pages(&pages, dir);
    }
    let wanted = match &args.command {
        None => "pier".to_owned(),
        Some(name) => format!("pier-{name}"),
    };
    let (_, page) = pages
        .iter()
        .find(|(name, _)| *name == wanted)
        .expect("COMMANDS names the commands of Cli");
    print(page)
}

/// Every page, by name without its section: `pier` first, then `pier-<command>` in the order
/// of `pier --help` (clap's own `help` command left out).
fn pages(cli: Command) -> Vec<(String, Vec<u8>)> {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let source = format!("pier {}", cli.get_version().unwrap_or_default());
    let mut commands: Vec<&Command> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    commands.sort_by_key(|c| c.get_display_order());
    std::iter::once(&cli)
        .chain(commands)
        .map(|cmd| {
            let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_owned();
            (name, render(cmd.clone(), &source))
        })
        .collect()
}

/// One page: clap_mangen's title, name, synopsis, description, options and commands, then
/// the after-help's own sections (`Exit codes:`, `Environment:`, `Examples:`) as man pages
/// name them, kept line for line. It opens with `.TH`, as man pages do; roff's definition of
/// the apostrophe (which every rendered part repeats) follows it, once.
fn render(cmd: Command, source: &str) -> Vec<u8> {
    let after = cmd.get_after_help().map(|s| s.to_string());
    let has_commands = cmd.has_subcommands();
    let has_version = cmd.get_version().is_some();
    let title = cmd
        .get_display_name()
        .unwrap_or(cmd.get_name())
        .to_uppercase();
    let man = Man::new(cmd)
        .title(title)
        .source(source)
        .manual("Pier Manual");
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    let _ = man.render_options_section(&mut out);
    if has_commands {
        let _ = man.render_subcommands_section(&mut out);
    }
    if let Some(after) = after {
        let _ = after_help_sections(&after).to_writer(&mut out);
    }
    if has_version {
        let _ = man.render_version_section(&mut out);
    }
    let preamble = Roff::new().render();
    let page = String::from_utf8_lossy(&out).replace(&preamble, "");
    let (title, rest) = page.split_once('\n').unwrap_or((&page, ""));
    ascii(&format!("{title}\n{preamble}{rest}")).into_bytes()
}

/// The page in ASCII, each other character as roff's escape for it (`…` is `\[u2026]`): troff
/// reads its input as Latin-1 unless told otherwise (`man` tells it, `groff -man` does not).
fn ascii(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let _ = write!(out, "\\[u{:04X}]", u32::from(c));
        }
    }
    out
}

/// The after-help text as man sections: each unindented line ending in `:` opens one (`Exit
/// codes:` is EXIT STATUS, as man pages name it), and the lines under it are kept as written
/// (no fill), since they are aligned columns.
fn after_help_sections(text: &str) -> Roff {
    let mut roff = Roff::default();
    let mut open = false;
    for line in text.lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
            if open {
                roff.control("fi", []);
            }
            let heading = match heading {
                "Exit codes" => "EXIT STATUS".to_owned(),
                other => other.to_uppercase(),
            };
            roff.control("SH", [heading.as_str()]);
            roff.control("nf", []);
            open = true;
        } else if open && !line.trim().is_empty() {
            roff.text([roman(line)]);
        }
    }
    if open {
        roff.control("fi", []);
    }
    roff
}

/// `pier man --dir DIR`: every page into DIR (created if missing), each path on stdout.
fn write_pages(pages: &[(String, Vec<u8>)], dir: &Path) -> ExitCode {
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        pages
            .iter()
            .map(|(name, page)| {
                let path = dir.join(format!("{name}.1"));
                std::fs::write(&path, page).map(|()| path)
            })
            .collect::<std::io::Result<Vec<_>>>()
    });
    match written {
        Ok(paths) => {
            let mut list = Vec::new();
            for path in paths {
                let _ = writeln!(list, "{}", path_for_terminal(&path));
            }
            print(&list)
        }
        Err(e) => {
            eprintln!(
                "pier: could not write the man pages into {}: {e}",
                path_for_terminal(dir)
            );
            ExitCode::from(EXIT_FAILED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_pages_are_those_of_the_commands_pier_help_lists() {
        let cli = super::super::Cli::command();
        let names: Vec<&str> = cli
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(Command::get_name)
            .collect();
        assert_eq!(names, COMMANDS);
    }

    /// Every option and argument of every command says what it is for, and every command ends
    /// its help with examples.
    #[test]
    fn every_option_is_described_and_every_command_has_examples() {
        let cli = super::super::Cli::command();
        for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
            let name = command.get_name();
            for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(
                    arg.get_help().is_some_and(|h| !h.to_string().is_empty()),
                    "pier {name}: {} has no help",
                    arg.get_id()
                );
            }
            let after = command.get_after_help().map(|s| s.to_string());
            assert!(
                after.is_some_and(|a| a.contains("Examples:\n  pier ")),
                "pier {name} has no examples"
            );
        }
    }

    #[test]
    fn the_after_help_becomes_man_sections_kept_line_for_line() {
        let roff =
            after_help_sections("Exit codes:\n  0    done\n\nExamples:\n  pier scan   the cards\n")
                .to_roff();
        assert_eq!(
            roff,
            ".SH \"EXIT STATUS\"\n.nf\n  0    done\n.fi\n.SH EXAMPLES\n.nf\n  pier scan   the cards\n.fi\n"
        );
    }

    #[test]
    fn a_page_is_ascii_with_roff_escapes_for_the_rest() {
        assert_eq!(ascii("pier-scan.1, …"), "pier-scan.1, \\[u2026]");
        for (name, page) in pages(super::super::Cli::command()) {
            assert!(page.is_ascii(), "{name}");
        }
    }

    #[test]
    fn a_page_opens_with_its_title_and_defines_the_apostrophe_once() {
        let pages = pages(super::super::Cli::command());
        for (name, page) in &pages {
            let page = String::from_utf8_lossy(page);
            let title = format!(".TH {} 1 ", name.to_uppercase());
            assert!(page.starts_with(&title), "{name}: {page}");
            assert_eq!(
                page.matches(".ds Aq").count(),
                2,
                "{name}: .ie and .el, once"
            );
        }
    }
}
