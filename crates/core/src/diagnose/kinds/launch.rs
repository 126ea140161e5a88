//! Known by how it was launched (docs/design.md §2.2): the table names what it can, and a tree
//! the table never heard of is still a dev tool when its launch says so — a package manager's
//! or runner's script in the project, a task runner's dev-named target, a tool from the
//! project's own toolchain folders, a build tool running what it built, or a dev subcommand or
//! flag. Everything is read from argv structure (the program, its options, its first operand),
//! never from a substring of the joined command line.
//!
//! Widening is where wrong kills come from, so each reading is narrow: a production name or
//! setting is never dev, a system program's dev word is no sign, the interpreter alone is no
//! toolchain tool, and a portless tree needs a watch word (`watches`). The caller adds the
//! rest: a project, and a quiet life (`rules::quiet_life`).

use std::path::{Component, Path, PathBuf};

use super::{basename, is_interpreter, is_python, program_and_args, strip_script_ext};
use crate::probe::{Pid, ProcessInfo};

/// How a tree was known by its launch, for the evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// A package manager's or runner's script: `npm run db:studio`, `uv run streamlit`.
    Script {
        /// The runner as the user typed it (`npm run`, `uv run`, `turbo run`).
        runner: String,
        /// The script, target or command it runs.
        script: String,
    },
    /// A generic task runner's target whose name says dev: `make dev`, `just serve-api`.
    Target {
        /// The task runner (`make`, `just`).
        runner: String,
        /// The target.
        target: String,
    },
    /// A tool from the project's own toolchain folders (`node_modules/.bin/sirv`,
    /// `.venv/bin/streamlit`, `target/debug/api`), by its path inside the project.
    Toolchain {
        /// The tool's path, relative to the project.
        path: String,
    },
    /// A build tool that runs what it built from the project: `go run .`, `dotnet run`.
    Built {
        /// The build tool's words (`go run`).
        runner: String,
    },
    /// A dev subcommand or flag of a program that is not the system's: `mdbook serve`,
    /// `hypercorn --reload`, `node --watch`.
    DevWord {
        /// The program (`mdbook`).
        program: String,
        /// The word (`serve`, `--reload`).
        word: String,
    },
}

impl Launch {
    /// The evidence's words: "launched by `npm run db:studio` in this project".
    pub fn describe(&self) -> String {
        match self {
            Launch::Script { runner, script } => {
                format!("launched by `{runner} {script}` in this project")
            }
            Launch::Target { runner, target } => {
                format!("launched by `{runner} {target}` in this project")
            }
            Launch::Toolchain { path } => {
                format!("runs {path}, from this project's own toolchain")
            }
            Launch::Built { runner } => {
                format!("built and run from this project by `{runner}`")
            }
            Launch::DevWord { program, word } => format!("`{program} {word}` is a dev mode"),
        }
    }
}

/// One member as the launch rules read it: its row, and its executable and working folder
/// when they could be read.
#[derive(Clone, Copy)]
pub struct Seen<'a> {
    /// The member's row (argv, pid, parent).
    pub p: &'a ProcessInfo,
    /// Its executable, as the kernel names it.
    pub exe: Option<&'a Path>,
    /// Its working folder.
    pub cwd: Option<&'a Path>,
    /// Whether a program file is the user's own (installed by them: `~/.cargo/bin`, a
    /// Homebrew prefix they own); `None`: not asked, so no program is.
    pub owns: Option<&'a dyn Fn(&Path) -> bool>,
}

/// The member that makes the tree known by launch, and how. `project`: the tree's project
/// folder (nothing outside a project is known this way). Read in the order the design lists
/// the ways; a production name or setting anywhere in the tree (`production`, which reads a
/// member's environment) makes none of them count.
pub fn known(
    members: &[Seen],
    project: &Path,
    production: &dyn Fn(Pid) -> bool,
) -> Option<(Pid, Launch)> {
    let first = |f: &dyn Fn(&Seen) -> Option<Launch>| {
        members.iter().find_map(|m| Some((m.p.identity.pid, f(m)?)))
    };
    let found = first(&|m| script(&m.p.argv))
        .or_else(|| first(&|m| target(&m.p.argv)))
        .or_else(|| first(&|m| toolchain(m, project)))
        .or_else(|| first(&|m| built(&m.p.argv)))
        .or_else(|| first(&|m| dev_word(m)))?;
    // A production name or setting anywhere in the tree (`npm start` over a toolchain tool,
    // `make prod` over `go run`) makes none of the ways count.
    let settings = members
        .iter()
        .any(|m| production_argv(&m.p.argv) || production_launch(&m.p.argv));
    let env = || members.iter().any(|m| production(m.p.identity.pid));
    (!settings && !env()).then_some(found)
}

/// A program's own name, as a tree known by launch shows it for its kind (`node server.js` →
/// `server`, `python -m streamlit` → `streamlit`); `None` for inline code (`python -c …`, as
/// a reloader starts its worker), which no program names.
pub fn kind_name(p: &ProcessInfo) -> Option<String> {
    // A title (npm's "npm run test:watch") names no program.
    if super::chain::is_title(&p.argv) {
        return None;
    }
    let (name, _) = program_and_args(&p.argv)?;
    Some(strip_script_ext(&name).trim_end_matches(".py").to_owned())
}

// --- (b) scripts and targets ----------------------------------------------------------------

/// A production name: `start` itself (`start:dev` is NestJS's dev script), or one with a word
/// `prod` / `production` (`serve:prod`, `start-production`, `web:serve:Production`).
fn production_name(name: &str) -> bool {
    name == "start" || name_words(name).any(is_production_word)
}

/// `prod` or `production`, in any case.
fn is_production_word(w: &str) -> bool {
    w.eq_ignore_ascii_case("prod") || w.eq_ignore_ascii_case("production")
}

/// A name's words, split where a script name splits them (`db:studio`, `dev-api`, `serve_all`).
fn name_words(name: &str) -> impl Iterator<Item = &str> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Words that make a task runner's target a dev one, as a word of its name (`db:studio`).
const DEV_NAMES: &[&str] = &["dev", "serve", "watch", "develop", "preview", "studio"];

/// Runners that run a script or command in the project, with how their own words are read.
/// `verbs`: the words before the script (`run`); `bare`: whether a script may follow the
/// program directly (`pnpm dev`, `yarn watch`; npm runs only its lifecycle scripts so).
struct Runner {
    names: &'static [&'static str],
    shown: &'static str,
    verbs: &'static [&'static str],
    bare: bool,
}

const RUNNERS: &[Runner] = &[
    Runner {
        names: &["npm", "npm-cli"],
        shown: "npm",
        verbs: &["run", "run-script", "rum", "urn", "exec", "x"],
        bare: true,
    },
    Runner {
        names: &["npx", "npx-cli", "bunx", "pnpx"],
        shown: "npx",
        verbs: &[],
        bare: true,
    },
    Runner {
        names: &["pnpm"],
        shown: "pnpm",
        verbs: &["run", "run-script", "exec", "dlx"],
        bare: true,
    },
    Runner {
        names: &["yarn"],
        shown: "yarn",
        verbs: &["run", "exec", "dlx"],
        bare: true,
    },
    Runner {
        names: &["bun"],
        shown: "bun",
        verbs: &["run", "x"],
        bare: false,
    },
    Runner {
        names: &["deno"],
        shown: "deno",
        verbs: &["task"],
        bare: false,
    },
    Runner {
        names: &["uv", "poetry", "pipenv", "pdm", "hatch", "rye"],
        shown: "",
        verbs: &["run"],
        bare: false,
    },
    Runner {
        names: &["uvx"],
        shown: "uvx",
        verbs: &[],
        bare: true,
    },
    Runner {
        names: &["bundle"],
        shown: "bundle",
        verbs: &["exec"],
        bare: false,
    },
    Runner {
        names: &["composer"],
        shown: "composer",
        verbs: &["run", "run-script"],
        bare: false,
    },
    // Monorepo and parallel runners: one task across workspaces.
    Runner {
        names: &["turbo", "lerna", "moon"],
        shown: "",
        verbs: &["run"],
        bare: true,
    },
    Runner {
        names: &["nx"],
        shown: "nx",
        verbs: &["run", "run-many"],
        bare: true,
    },
    Runner {
        names: &["npm-run-all", "run-p", "run-s", "npm-run-all2"],
        shown: "",
        verbs: &[],
        bare: true,
    },
];

/// Generic task runners: a target counts only when its name says dev.
const TASK_RUNNERS: &[&str] = &["make", "gmake", "just", "task", "mage", "rake", "invoke"];

/// Options of the runners that take a value, so the value is not read as the script.
const VALUE_OPTIONS: &[&str] = &[
    "--prefix",
    "-w",
    "--workspace",
    "--filter",
    "-F",
    "-C",
    "--dir",
    "--directory",
    "--cwd",
    "--project",
    "-p",
    "--package",
    "--python",
    "--with",
    "--env-file",
    "--from",
    "-t",
    "--target",
    "--targets",
    "--projects",
    "--scope",
    "-f",
    "--file",
    "--justfile",
    "--concurrency",
];

/// The runner a program is, through an interpreter (`node …/npm-cli.js`).
fn runner_of(argv: &[Vec<u8>]) -> Option<(&'static Runner, String, Vec<String>)> {
    let direct = basename(argv.first()?);
    let (program, args) = if find_runner(&direct).is_some() {
        (direct, lossy(&argv[1..]))
    } else {
        program_and_args(argv)?
    };
    let runner = find_runner(&program)?;
    Some((runner, strip_script_ext(&program).to_owned(), args))
}

fn find_runner(program: &str) -> Option<&'static Runner> {
    let name = strip_script_ext(program);
    RUNNERS.iter().find(|r| r.names.contains(&name))
}

/// Options of the runners that take no value.
const FLAG_OPTIONS: &[&str] = &[
    "-s",
    "--silent",
    "-q",
    "--quiet",
    "--if-present",
    "-r",
    "--recursive",
    "--parallel",
    "--stream",
    "--ignore-scripts",
    "--frozen",
    "--locked",
    "--no-sync",
    "--continue",
    "--no-cache",
    "--no-daemon",
    "-l",
    "--print-label",
];

/// The operands of a runner's words, past its options: an option that takes a value skips
/// it, one that takes none is passed over, and any other (it might take a value: `yarn
/// --mystery dev build`) makes the words unreadable: `None`.
fn operands(args: &[String]) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            break;
        } else if VALUE_OPTIONS.contains(&a.as_str()) {
            rest.next();
        } else if !a.starts_with('-') {
            out.push(a.as_str());
        } else if !FLAG_OPTIONS.contains(&a.as_str()) && !a.contains('=') {
            return None;
        }
    }
    Some(out)
}

/// (b) A package manager's or runner's script, under any name but a production one, and never
/// an interpreter alone (`npx node job.js`, `uv run python train.py`: the script it runs is
/// judged as any script is, by the toolchain rule).
fn script(argv: &[Vec<u8>]) -> Option<Launch> {
    let (runner, name) = script_name(argv)?;
    if production_name(&name) || is_interpreter(&name) {
        return None;
    }
    Some(Launch::Script {
        runner,
        script: name,
    })
}

/// The runner's words and the script or command it runs, whatever its name.
fn script_name(argv: &[Vec<u8>]) -> Option<(String, String)> {
    let words = super::chain::title_words(argv).unwrap_or_else(|| argv.to_vec());
    let (runner, program, args) = runner_of(&words)?;
    let ops = operands(&args)?;
    let (verb, name) = match ops.as_slice() {
        [verb, name, ..] if runner.verbs.contains(verb) => (Some(*verb), *name),
        [name, ..] if runner.bare && !runner.verbs.contains(name) => (None, *name),
        _ => return None,
    };
    // npm runs only its lifecycle scripts bare; `npm test` is one, `npm start` production.
    if program.starts_with("npm") && verb.is_none() && !["test", "t", "start"].contains(&name) {
        return None;
    }
    // A command a runner runs (`npx sirv`, `uv run streamlit`) is named by its program.
    let name = if name.contains('/') {
        basename(name.as_bytes())
    } else {
        name.to_owned()
    };
    let shown = if runner.shown.is_empty() {
        program
    } else {
        runner.shown.to_owned()
    };
    let runner_words = match verb {
        Some(v) => format!("{shown} {v}"),
        None => shown,
    };
    Some((runner_words, name))
}

/// A runner's script or a task runner's target with a production name (`npm start`, `make
/// prod`, `npm run serve:prod`).
fn production_launch(argv: &[Vec<u8>]) -> bool {
    let scripted = script_name(argv).is_some_and(|(_, name)| production_name(&name));
    let targeted = || {
        let program = basename(argv.first().map_or(&[][..], Vec::as_slice));
        let args = lossy(argv.get(1..).unwrap_or_default());
        TASK_RUNNERS.contains(&program.as_str())
            && operands(&args)
                .is_some_and(|ops| ops.iter().any(|o| !o.contains('=') && production_name(o)))
    };
    scripted || targeted()
}

/// (b) A generic task runner's target whose name says dev (`make dev`, `just serve-api`).
fn target(argv: &[Vec<u8>]) -> Option<Launch> {
    let program = basename(argv.first()?);
    if !TASK_RUNNERS.contains(&program.as_str()) {
        return None;
    }
    let args = lossy(&argv[1..]);
    let ops = operands(&args)?;
    let target = ops.into_iter().find(|o| !o.contains('='))?;
    (!production_name(target)).then_some(())?;
    let dev = name_words(target).any(|w| DEV_NAMES.contains(&w.to_ascii_lowercase().as_str()));
    dev.then(|| Launch::Target {
        runner: program,
        target: target.to_owned(),
    })
}

// --- (c) the project's own toolchain ----------------------------------------------------------

/// The folders inside a project that hold its own tools, as path components: a package's
/// `node_modules` (its `.bin` and its packages' scripts, pnpm's store inside it), Yarn's PnP
/// folder, a virtualenv's `bin`, Composer's `vendor/bin`, Cargo's build outputs.
fn in_toolchain(rel: &Path, project: &Path) -> bool {
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let pair = |a: &str, b: &str| parts.windows(2).any(|w| w[0] == a && w[1] == b);
    let venv_bin = parts.windows(2).enumerate().any(|(i, w)| {
        w[1] == "bin"
            && (matches!(w[0], ".venv" | "venv")
                || project
                    .join(parts[..=i].join("/"))
                    .join("pyvenv.cfg")
                    .is_file())
    });
    parts.contains(&"node_modules")
        || parts.first() == Some(&".yarn")
        || venv_bin
        || pair("vendor", "bin")
        || pair("target", "debug")
        || pair("target", "release")
}

/// The path a member runs: for an interpreter, its script (`python -m` names none); else its
/// argv[0] when it is a path, else its executable. Relative paths are the member's cwd's.
fn program_path(m: &Seen) -> Option<PathBuf> {
    let argv = &m.p.argv;
    let first = basename(argv.first()?);
    if python_module(argv).is_some() {
        return None;
    }
    let raw: PathBuf = if is_interpreter(&first) {
        let (_, rest) = program_and_args(argv)?;
        let i = argv.len().checked_sub(rest.len() + 1)?;
        let script = std::str::from_utf8(argv.get(i)?).ok()?;
        if script.starts_with('-') || Some(script) == std::str::from_utf8(&argv[0]).ok() {
            return None;
        }
        PathBuf::from(script)
    } else if argv[0].contains(&b'/') {
        PathBuf::from(String::from_utf8_lossy(&argv[0]).into_owned())
    } else {
        m.exe?.to_path_buf()
    };
    // A relative path whose folder is unknown stays relative: never the system's, never the
    // project's.
    Some(match m.cwd {
        Some(cwd) if raw.is_relative() => cwd.join(raw),
        _ => raw,
    })
}

/// Whether the program file at `path` (links followed) is owned by `uid`: one the user
/// installed, for [`Seen::owns`].
pub fn owned_by(uid: u32, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|m| m.uid() == uid)
}

/// (c) A tool from the project's own toolchain folders — the program itself or the script an
/// interpreter runs, never the interpreter alone (`.venv/bin/python train.py` is no tool); or
/// `python -m` of a module the project holds.
fn toolchain(m: &Seen, project: &Path) -> Option<Launch> {
    if let Some(module) = python_module(&m.p.argv) {
        let cwd = m.cwd?;
        let top = module.split('.').next()?;
        let here = [format!("{top}.py"), format!("{top}/__init__.py")];
        let held = here.iter().any(|f| cwd.join(f).is_file());
        return (held && cwd.starts_with(project)).then(|| Launch::Toolchain {
            path: format!("python -m {module}"),
        });
    }
    let path = program_path(m)?;
    let rel = path.strip_prefix(project).ok()?;
    in_toolchain(rel, project).then(|| Launch::Toolchain {
        path: rel.to_string_lossy().into_owned(),
    })
}

/// The module of `python -m MODULE`, if that is what a Python interpreter runs.
fn python_module(argv: &[Vec<u8>]) -> Option<String> {
    if !is_python(&basename(argv.first()?)) {
        return None;
    }
    let m = argv.iter().position(|a| a.as_slice() == b"-m")?;
    // The first operand must be `-m`'s: `python script.py -m x` runs a script.
    let before = &argv[1..m];
    if before.iter().any(|a| !a.starts_with(b"-")) {
        return None;
    }
    Some(String::from_utf8_lossy(argv.get(m + 1)?).into_owned())
}

// --- build tools that run what they built -----------------------------------------------------

/// Build tools that compile the project and run the result as their child, with the words
/// that make them do it.
const BUILDERS: &[(&str, &[&str])] = &[
    ("go", &["run"]),
    ("cargo", &["run"]),
    ("dotnet", &["run", "watch"]),
    ("swift", &["run"]),
    ("stack", &["run"]),
    ("cabal", &["run"]),
    ("zig", &["build", "run"]),
];

/// (c) A build tool running what it built from the project (`go run .`): its first operands
/// are the words (`cargo +nightly run` skips the toolchain).
fn built(argv: &[Vec<u8>]) -> Option<Launch> {
    let program = basename(argv.first()?);
    let (_, words) = BUILDERS.iter().find(|(p, _)| *p == program)?;
    let args = lossy(&argv[1..]);
    let ops: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('+'))
        .take(words.len())
        .map(String::as_str)
        .collect();
    // `dotnet run|watch` take one of their words; the others all of theirs, in order.
    let matches = if program == "dotnet" {
        ops.first().is_some_and(|o| words.contains(o))
    } else {
        ops == *words
    };
    matches.then(|| Launch::Built {
        runner: format!("{program} {}", ops.join(" ")),
    })
}

/// A build tool's run (`go run`, `cargo run`): part of its resource's launch chain.
pub fn is_builder_run(argv: &[Vec<u8>]) -> bool {
    built(argv).is_some()
}

// --- (d) a dev subcommand or flag ---------------------------------------------------------------

/// Subcommands that mean a dev mode.
const DEV_SUBCOMMANDS: &[&str] = &[
    "dev", "serve", "watch", "edit", "studio", "preview", "develop",
];

/// Flags that mean a dev mode (also `--flag=true`); `--watch=false` and `--no-watch` do not.
const DEV_FLAGS: &[&str] = &[
    "--watch",
    "--watchAll",
    "--watch-all",
    "--watch-path",
    "--reload",
    "--hot",
    "--dev",
];

/// The watch words: what makes a portless tree a candidate (a watcher, not a one-shot).
const WATCH_WORDS: &[&str] = &[
    "watch",
    "--watch",
    "--watchAll",
    "--watch-all",
    "--watch-path",
];

/// Languages' own tools: a dev word on them is the developer's, wherever they are installed
/// (`/usr/bin/node --watch`, `/usr/bin/go run`).
const LANGUAGE_TOOLS: &[&str] = &[
    "go", "cargo", "dotnet", "deno", "bun", "swift", "mix", "elixir", "iex", "gleam", "zig",
    "java", "kotlin", "dart", "flutter",
];

/// The folders the operating system's own programs live in: a dev word on one of them alone
/// (`ssh dev -L …`) is no sign of a dev tool.
const SYSTEM_FOLDERS: &[&str] = &[
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/libexec",
    "/usr/lib",
    "/lib",
    "/System",
    "/usr/games",
];

/// Whether `path` is one of the system's own programs.
fn is_system_path(path: &Path) -> bool {
    SYSTEM_FOLDERS.iter().any(|f| path.starts_with(f))
}

/// The dev word a member carries, and the program it is on, when the program is the
/// developer's: a language's own tool, an interpreter running a script that is not the
/// system's (or `-m` a module), or a program outside the system's folders.
fn dev_word_of(m: &Seen, words: &[&str]) -> Option<(String, String)> {
    let argv = &m.p.argv;
    let first = basename(argv.first()?);
    let (program, args) = program_and_args(argv)?;
    let own = if LANGUAGE_TOOLS.contains(&first.as_str()) {
        true
    } else if is_interpreter(&first) {
        // The interpreter's own flags (`node --watch server.js`) or its script's.
        python_module(argv).is_some() || program_path(m).is_some_and(|p| !is_system_path(&p))
    } else {
        program_path(m).is_some_and(|p| !is_system_path(&p))
    };
    if !own {
        return None;
    }
    // A first operand is a subcommand only for a program whose subcommands the developer
    // chose: a language's own tool, `python -m` a module, or a program file the user owns.
    // Anything else may take a host or a file there (`ssh dev -L …`, wherever ssh lives).
    let chosen = LANGUAGE_TOOLS.contains(&first.as_str())
        || python_module(argv).is_some()
        || program_path(m).is_some_and(|p| m.owns.is_some_and(|owns| owns(&p)));
    let sub = args
        .iter()
        .find(|a| !a.starts_with('+'))
        .filter(|a| !a.starts_with('-'))
        .filter(|_| chosen);
    if let Some(s) =
        sub.filter(|s| DEV_SUBCOMMANDS.contains(&s.as_str()) && words.contains(&s.as_str()))
    {
        return Some((program, s.clone()));
    }
    let all = lossy(&argv[1..]);
    // `--watch false` (a value after the flag, as yargs reads it) is no watch either.
    let off = |i: usize| all.get(i + 1).is_some_and(|v| is_off(v));
    let at = (0..all.len())
        .find(|&i| dev_flag(&all[i]).is_some_and(|f| words.contains(&f)) && !off(i))?;
    let flag = dev_flag(&all[at])?;
    // A flag before the script is the interpreter's own (`node --watch server.js`).
    let script_at = all.len() - args.len();
    let on = if is_interpreter(&first) && at < script_at {
        first
    } else {
        program
    };
    Some((on, flag.to_owned()))
}

/// A value that turns a flag off.
fn is_off(v: &str) -> bool {
    ["false", "0", "no", "off"].contains(&v.to_ascii_lowercase().as_str())
}

/// The dev flag an argument is, when it is one and not negated (`--watch=false` is none).
fn dev_flag(arg: &str) -> Option<&'static str> {
    let (name, value) = match arg.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (arg, None),
    };
    let flag = DEV_FLAGS.iter().find(|f| **f == name)?;
    let negated = value.is_some_and(is_off);
    // `--watch-path=DIR` takes a path, which is no negation.
    (!negated || *flag == "--watch-path").then_some(flag)
}

/// (d) A dev subcommand or flag on a program that is the developer's.
fn dev_word(m: &Seen) -> Option<Launch> {
    let mut all: Vec<&str> = DEV_SUBCOMMANDS.to_vec();
    all.extend_from_slice(DEV_FLAGS);
    let (program, word) = dev_word_of(m, &all)?;
    Some(Launch::DevWord {
        program: strip_script_ext(&program).to_owned(),
        word,
    })
}

/// A watcher by its words (`vitest --watch`, `tsc-like watch`): a portless tree is a candidate
/// only so (or by the table) — a portless one-shot is never residue.
pub fn watches(m: &Seen) -> bool {
    !production_argv(&m.p.argv) && dev_word_of(m, WATCH_WORDS).is_some()
}

/// Whether an argv holds a watch word at all: the cheap test before [`watches`] reads the
/// program's path.
pub fn mentions_watch(argv: &[Vec<u8>]) -> bool {
    argv.iter().skip(1).any(|a| {
        let name = a.split(|b| *b == b'=').next().unwrap_or(a);
        WATCH_WORDS.iter().any(|w| w.as_bytes() == name)
    })
}

/// Whether a member is a watcher by its words alone ([`watches`], every program taken for
/// the user's): which member names a portless tree already known. It only picks a name, so
/// it need not judge the program; whether the tree is a candidate was judged in full.
pub fn watcher(p: &ProcessInfo) -> bool {
    watches(&Seen {
        p,
        exe: None,
        cwd: None,
        owns: Some(&|_| true),
    })
}

/// A reloader or watcher by its flag (`hypercorn --reload`, `node --watch`): with a child, it
/// starts that child again (`respawners.rs`), and it belongs to its resource's launch chain.
pub fn reloads(p: &ProcessInfo) -> bool {
    reloader(p).is_some()
}

/// The program and flag that make `p` a reloader ([`reloads`]): `("node", "--watch")`.
pub fn reloader(p: &ProcessInfo) -> Option<(String, String)> {
    let m = Seen {
        p,
        exe: None,
        cwd: None,
        owns: None,
    };
    let (program, word) = dev_word_of(&m, &["--reload", "--watch", "--watch-path", "--hot"])?;
    Some((strip_script_ext(&program).to_owned(), word))
}

// --- production settings ----------------------------------------------------------------------

/// Variables whose production value makes a tree production.
const PRODUCTION_VARIABLES: &[&str] = &[
    "NODE_ENV",
    "RAILS_ENV",
    "RACK_ENV",
    "APP_ENV",
    "MIX_ENV",
    "FLASK_ENV",
    "ASPNETCORE_ENVIRONMENT",
    "DOTNET_ENVIRONMENT",
    "ENVIRONMENT",
    "ENV",
    "DJANGO_ENV",
    "SPRING_PROFILES_ACTIVE",
];

/// `NAME=prod` / `NAME=production` (any case) for one of [`PRODUCTION_VARIABLES`].
pub fn production_assignment(word: &[u8]) -> bool {
    let text = String::from_utf8_lossy(word);
    let Some((name, value)) = text.split_once('=') else {
        return false;
    };
    PRODUCTION_VARIABLES.contains(&name) && value.split(',').any(is_production_word)
}

/// A production setting in an argv: `--mode production`, `-e production`, `--env=production`,
/// or a shell command's leading `NODE_ENV=production`.
fn production_argv(argv: &[Vec<u8>]) -> bool {
    let args = lossy(argv.get(1..).unwrap_or_default());
    let value_is_prod = |v: &str| is_production_word(v);
    // Options whose value names an environment or a build configuration, in their long and
    // single-dash spellings (`-env`, as Go's `flag` package reads `--env`).
    let flags = [
        "--mode",
        "-mode",
        "-e",
        "-E",
        "--env",
        "-env",
        "--environment",
        "-environment",
        "-c",
        "--configuration",
        "--profile",
    ];
    // Options that say production by themselves.
    let alone = ["--prod", "--production", "-prod", "-production"];
    if args.iter().any(|a| alone.contains(&a.as_str())) {
        return true;
    }
    let split = args
        .windows(2)
        .any(|w| flags.contains(&w[0].as_str()) && value_is_prod(&w[1]));
    let joined = args.iter().any(|a| {
        a.split_once('=')
            .is_some_and(|(f, v)| flags.contains(&f) && value_is_prod(v))
    });
    let shell = super::chain::shell_assignments(argv)
        .iter()
        .any(|w| production_assignment(w));
    split || joined || shell
}

/// Whether an environment (`KEY=value` entries) sets a production variable.
pub fn production_environment(env: &[Vec<u8>]) -> bool {
    env.iter().any(|e| production_assignment(e))
}

fn lossy(args: &[Vec<u8>]) -> Vec<String> {
    args.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests;
