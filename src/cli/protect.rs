//! `pier protect`: the list of what Pier must never offer — projects, ports, container names
//! (docs/design.md §2.10) — shown, added to and taken from. The file is `pier_core::config`'s.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde::Serialize;

use super::{print, usage, EXIT_FAILED};
use pier_core::config;
use pier_core::front::{resolve_dir, DirError};
use pier_core::model::protect::ProtectList;
use pier_core::model::SCHEMA_VERSION;
use pier_core::words::for_terminal;

/// `pier protect [list|add|remove]`. The list is `protect.toml` in the configuration folder:
/// `$PIER_CONFIG_DIR`, else `$XDG_CONFIG_HOME/pier` (`~/.config/pier`) on Linux and
/// `~/Library/Application Support/Pier` on macOS; `pier protect` prints its path.
#[derive(Debug, Args)]
pub struct ProtectArgs {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Show the list (what `pier protect` alone does).
    List {
        /// Print one JSON document instead of text (docs/protect-json.md).
        #[arg(long)]
        json: bool,
    },
    /// Add to the list: what it names is never green, never in a batch, never stopped.
    Add(Entries),
    /// Take from the list.
    Remove(Entries),
}

/// What an `add` or `remove` names; at least one.
#[derive(Debug, Args)]
#[group(required = true, multiple = true)]
struct Entries {
    /// A project folder (or any folder: every project inside it), repeatable.
    #[arg(long, value_name = "DIR")]
    project: Vec<PathBuf>,
    /// A TCP port, 1 to 65535, repeatable.
    #[arg(long, value_name = "PORT", value_parser = port_number)]
    port: Vec<u16>,
    /// A container's name, as `docker ps` shows it, repeatable.
    #[arg(long, value_name = "NAME", value_parser = container_name)]
    container: Vec<String>,
}

/// The `pier protect list --json` document.
#[derive(Serialize)]
struct ListDocument<'a> {
    schema: u32,
    /// The file the list is kept in.
    file: String,
    #[serde(flatten)]
    list: &'a ProtectList,
}

/// Runs `pier protect`.
pub fn run(args: ProtectArgs) -> ExitCode {
    let path = match config::protect_path() {
        Ok(path) => path,
        Err(why) => return usage(&why.to_string()),
    };
    // A list that cannot be read is never written over: it is the user's.
    let list = match config::read_list(&path) {
        Ok(list) => list,
        Err(why) => {
            let changing = matches!(args.action, Some(Action::Add(_) | Action::Remove(_)));
            // A folder the setup keeps Pier from using says itself what to do.
            let setup = matches!(why, config::ProtectError::Setup(_));
            let tail = match (changing, setup) {
                (true, _) => "; nothing was changed",
                (false, true) => "; until then Pier offers nothing",
                (false, false) => "; fix it or remove it (until then Pier offers nothing)",
            };
            eprintln!("pier: {}{tail}", for_terminal(&why.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match args.action.unwrap_or(Action::List { json: false }) {
        Action::List { json: true } => {
            let doc = ListDocument {
                schema: SCHEMA_VERSION,
                file: path.display().to_string(),
                list: &list,
            };
            super::print_json(&doc)
        }
        Action::List { json: false } => print(list_text(&list, &path).as_bytes()),
        Action::Add(entries) => change(&path, list, &entries, true),
        Action::Remove(entries) => change(&path, list, &entries, false),
    }
}

/// Why an entry of `add` or `remove` is refused, in a sentence naming its flag.
#[derive(Debug, thiserror::Error)]
enum EntryError {
    /// `--port` is not 1 to 65535.
    #[error("--port {0}: a TCP port is a whole number from 1 to 65535")]
    Port(String),
    /// `--container` names no container.
    #[error("--container needs a container's name, as `docker ps` shows it")]
    NoContainerName,
}

/// `--port N`: a whole number from 1 to 65535.
fn port_number(text: &str) -> Result<u16, EntryError> {
    match text.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(EntryError::Port(text.to_owned())),
    }
}

/// `--container NAME`: not empty (an empty name names no container, and reads as nothing).
fn container_name(text: &str) -> Result<String, EntryError> {
    match text.trim().is_empty() {
        true => Err(EntryError::NoContainerName),
        false => Ok(text.to_owned()),
    }
}

/// Adds (`add`) or removes the entries, writes the list, and says what changed.
fn change(path: &Path, mut list: ProtectList, e: &Entries, add: bool) -> ExitCode {
    let mut projects = Vec::new();
    for p in &e.project {
        match project_path(p, add) {
            Ok(p) => projects.push(p),
            Err(why) => return usage(&why.to_string()),
        }
    }
    let before = list.clone();
    let mut said = String::new();
    let mut missing = Vec::new();
    let mut each = |what: String, present: bool| {
        let what = for_terminal(&what).into_owned();
        let _ = match (add, present) {
            (true, true) => writeln!(said, "already protected: {what}"),
            (true, false) => writeln!(said, "protected: {what}"),
            (false, true) => writeln!(said, "no longer protected: {what}"),
            (false, false) => {
                missing.push(what);
                Ok(())
            }
        };
    };
    for p in projects {
        each(
            format!("project {}", p.display()),
            list.projects.contains(&p),
        );
        toggle(&mut list.projects, p, add);
    }
    for &port in &e.port {
        each(format!("port {port}"), list.ports.contains(&port));
        toggle(&mut list.ports, port, add);
    }
    for c in &e.container {
        each(format!("container {c}"), list.containers.contains(c));
        toggle(&mut list.containers, c.clone(), add);
    }
    if !missing.is_empty() {
        return usage(&format!(
            "not on the protect list: {}; nothing was changed (`pier protect` shows the list)",
            missing.join(", ")
        ));
    }
    if list != before {
        if let Err(why) = config::write_protect(path, &list) {
            eprintln!("pier: {}", for_terminal(&why.to_string()));
            return ExitCode::from(EXIT_FAILED);
        }
    }
    let _ = writeln!(
        said,
        "The list: {}",
        for_terminal(&path.display().to_string())
    );
    print(said.as_bytes())
}

/// Adds `item` once, or removes it.
fn toggle<T: PartialEq>(items: &mut Vec<T>, item: T, add: bool) {
    if add && !items.contains(&item) {
        items.push(item);
    } else if !add {
        items.retain(|i| *i != item);
    }
}

/// A project folder as the list keeps it: absolute and resolved (symlinks too, as a scan
/// resolves a working directory). One to add must exist; one to remove may be gone since.
fn project_path(p: &Path, add: bool) -> Result<PathBuf, DirError> {
    match resolve_dir("--project", p) {
        Err(DirError::Missing { .. } | DirError::Unreadable { .. }) if !add && p.is_absolute() => {
            Ok(p.to_path_buf())
        }
        resolved => resolved,
    }
}

/// The list for a person, and where it is kept.
fn list_text(list: &ProtectList, path: &Path) -> String {
    let mut out = String::new();
    if list.is_empty() {
        let _ = writeln!(
            out,
            "Nothing is protected. `pier protect add --project DIR | --port PORT | --container \
             NAME` adds to the list ({}).",
            for_terminal(&path.display().to_string())
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Never offered, never stopped (not even with --anyway): {}",
        for_terminal(&path.display().to_string())
    );
    for p in &list.projects {
        let _ = writeln!(
            out,
            "  project    {}",
            for_terminal(&p.display().to_string())
        );
    }
    for p in &list.ports {
        let _ = writeln!(out, "  port       {p}");
    }
    for c in &list.containers {
        let _ = writeln!(out, "  container  {}", for_terminal(c));
    }
    out
}
