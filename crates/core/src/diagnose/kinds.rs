//! What a process *is*, read from the structure of its argv — never from a substring of the
//! joined command line (`grep vite` would match `vim vite.config.ts`).
//!
//! The program is the basename of argv[0]; for an interpreter (node, python, ruby, bun, deno,
//! php) it is the script's basename (or `-m module`). A subcommand is the argument right after
//! the program, when it is not a flag. The tables below, with `chain.rs`'s dev scripts and
//! titles, `helper.rs`'s helpers and the interpreters of `words::argv`, are the only places
//! tools are named.

use crate::probe::ProcessInfo;
pub use crate::words::argv::is_interpreter;
use crate::words::argv::{is_python, INTERPRETERS};

mod agent;
pub mod chain;
mod daemons;
mod family;
mod helper;
pub mod launch;

pub use agent::known_by_words;
pub use agent::name_of as agent_name;
pub use family::{family, Family};
pub use helper::{helper_of, NOTEBOOK_KERNEL};

/// How a tool's arguments must look for it to count as a dev server or watcher.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Args {
    /// Always (the program only ever serves or watches).
    Any,
    /// The subcommand is one of these (`None` = no subcommand at all also counts).
    Sub(&'static [&'static str], bool),
    /// One of these flags is present anywhere (`tsc --watch`, `php -S`).
    Flag(&'static [&'static str]),
    /// The subcommand is one of these, after the tool's own global options: those that take
    /// a value (`flask --app hello run`) and those that do not (`flask --debug run`).
    SubPast(Subs, Options, Options),
    /// One of these switches is present, as `/name`, `-name` or `--name`, alone or with a
    /// value after `:` or `=`, in any case (MSBuild's `/nodemode:1`).
    Switch(&'static [&'static str]),
}

type Subs = &'static [&'static str];
type Options = &'static [&'static str];

/// One row of the tool table: the kind reported, the program, and the argument rule.
struct KindRule {
    kind: &'static str,
    program: &'static str,
    args: Args,
}

const fn rule(kind: &'static str, program: &'static str, args: Args) -> KindRule {
    KindRule {
        kind,
        program,
        args,
    }
}

const DEV: &[&str] = &[
    "dev", "develop", "serve", "server", "start", "watch", "preview",
];

/// The dev tools Pier recognises. Order matters only where one program has several rows.
const KINDS: &[KindRule] = &[
    rule(
        "vite",
        "vite",
        Args::Sub(&["dev", "serve", "preview"], true),
    ),
    // A bare `next` runs the dev server.
    rule("next-dev", "next", Args::Sub(&["dev", "start"], true)),
    rule("nuxt-dev", "nuxt", Args::Sub(&["dev", "preview"], false)),
    rule("nuxt-dev", "nuxi", Args::Sub(&["dev", "preview"], false)),
    rule("astro-dev", "astro", Args::Sub(&["dev", "preview"], false)),
    rule("remix-dev", "remix", Args::Sub(&["dev"], false)),
    rule(
        "svelte-kit",
        "svelte-kit",
        Args::Sub(&["dev", "preview"], false),
    ),
    rule(
        "gatsby-develop",
        "gatsby",
        Args::Sub(&["develop", "serve"], false),
    ),
    rule("angular-serve", "ng", Args::Sub(&["serve", "s"], false)),
    rule(
        "vue-cli-serve",
        "vue-cli-service",
        Args::Sub(&["serve"], false),
    ),
    rule(
        "react-scripts",
        "react-scripts",
        Args::Sub(&["start"], false),
    ),
    rule("webpack-dev-server", "webpack-dev-server", Args::Any),
    rule("webpack", "webpack", Args::Sub(&["serve", "watch"], false)),
    rule("webpack", "webpack", Args::Flag(&["--watch", "-w"])),
    rule("parcel", "parcel", Args::Sub(&["serve", "watch"], true)),
    rule("esbuild", "esbuild", Args::Flag(&["--serve", "--watch"])),
    rule("tsc-watch", "tsc", Args::Flag(&["--watch", "-w"])),
    rule(
        "tailwind-watch",
        "tailwindcss",
        Args::Flag(&["--watch", "-w"]),
    ),
    rule("storybook", "storybook", Args::Sub(&["dev"], false)),
    rule("storybook", "start-storybook", Args::Any),
    rule("expo", "expo", Args::Sub(&["start"], false)),
    rule("eleventy", "eleventy", Args::Flag(&["--serve", "--watch"])),
    rule("nodemon", "nodemon", Args::Any),
    rule("ts-node-dev", "ts-node-dev", Args::Any),
    rule("tsx-watch", "tsx", Args::Sub(&["watch"], false)),
    rule("live-server", "live-server", Args::Any),
    rule("http-server", "http-server", Args::Any),
    rule("json-server", "json-server", Args::Any),
    rule("serve", "serve", Args::Any),
    rule("rails-server", "rails", Args::Sub(&["server", "s"], false)),
    rule(
        "django-runserver",
        "manage.py",
        Args::Sub(&["runserver"], false),
    ),
    rule(
        "django-runserver",
        "django-admin",
        Args::Sub(&["runserver"], false),
    ),
    rule("uvicorn", "uvicorn", Args::Any),
    // Flask's own docs start an app as `flask --app hello run --debug`.
    rule(
        "flask-run",
        "flask",
        Args::SubPast(
            &["run"],
            &["--app", "-A", "--env-file", "-e"],
            &["--debug", "--no-debug"],
        ),
    ),
    // `fastapi run` is production; `fastapi dev` reloads.
    rule("fastapi-dev", "fastapi", Args::Sub(&["dev"], false)),
    rule("python-http-server", "http.server", Args::Any),
    rule(
        "jupyter",
        "jupyter",
        Args::Sub(&["lab", "notebook", "server"], false),
    ),
    rule("jupyter", "jupyter-lab", Args::Any),
    rule("jupyter", "jupyter-notebook", Args::Any),
    rule("cargo-watch", "cargo", Args::Sub(&["watch"], false)),
    rule("cargo-watch", "cargo-watch", Args::Any),
    rule("php-artisan-serve", "artisan", Args::Sub(&["serve"], false)),
    rule("php-server", "php", Args::Flag(&["-S"])),
    rule("phoenix-server", "mix", Args::Sub(&["phx.server"], false)),
    rule(
        "hugo-server",
        "hugo",
        Args::Sub(&["server", "serve"], false),
    ),
    rule("jekyll-serve", "jekyll", Args::Sub(&["serve", "s"], false)),
    rule("mkdocs-serve", "mkdocs", Args::Sub(&["serve"], false)),
    rule("sphinx-autobuild", "sphinx-autobuild", Args::Any),
    rule("watchexec", "watchexec", Args::Any),
    rule("air", "air", Args::Any),
    rule("deno-task", "deno", Args::Sub(&["task"], false)),
    rule("bun-dev", "bun", Args::Flag(&["--watch", "--hot"])),
    rule("wrangler-dev", "wrangler", Args::Sub(&["dev"], false)),
    rule(
        "firebase-emulators",
        "firebase",
        Args::Sub(&["emulators:start", "serve"], false),
    ),
    rule("turbo-dev", "turbo", Args::Sub(DEV, false)),
    // Shared daemons (family `SharedDaemon`, `kinds/family.rs`): orphaned by design, shared by
    // several editors, agents or builds; residue only when orphaned and idle with no client
    // attached (docs/design.md §2.4). A runtime's hosted program is named by its main class,
    // jar or application (`kinds/daemons.rs`), and daemons known by a script's path or their
    // title are rows of `daemons.rs`.
    // `gopls -remote=auto` starts `gopls serve -listen unix;<socket> -listen.timeout 1m0s`.
    rule(
        "gopls-daemon",
        "gopls",
        Args::Flag(&["-listen", "--listen"]),
    ),
    // watchman's server as launchd and site-spawn start it; Debian's 4.9 forks its server
    // from the client instead, with the client's argv, which no argv rule can tell apart.
    rule("watchman-server", "watchman", Args::Flag(&["--foreground"])),
    rule(
        "gradle-daemon",
        "org.gradle.launcher.daemon.bootstrap.GradleDaemon",
        Args::Any,
    ),
    rule(
        "kotlin-daemon",
        "org.jetbrains.kotlin.daemon.KotlinCompileDaemon",
        Args::Any,
    ),
    rule("bazel-server", "A-server.jar", Args::Any),
    rule(
        "turbo-daemon",
        "turbo",
        Args::SubPast(
            &["daemon"],
            &["--cwd"],
            &["--skip-infer", "--no-update-notifier"],
        ),
    ),
    rule(
        "msbuild-node",
        "MSBuild.dll",
        Args::Switch(&["nodemode", "nmode"]),
    ),
    rule(
        "msbuild-node",
        "MSBuild",
        Args::Switch(&["nodemode", "nmode"]),
    ),
    rule("vbcscompiler", "VBCSCompiler", Args::Any),
    rule("vbcscompiler", "VBCSCompiler.dll", Args::Any),
];

/// The kinds whose process starts its child again when the child exits (or a file
/// changes), with what it does in words: part of their resource, named on its card as its
/// respawner (`respawners.rs`). Only the parent of a child counts: `uvicorn` alone serves.
const RESPAWNERS: &[(&str, &str)] = &[
    ("nodemon", "restarts its child when a file changes"),
    ("ts-node-dev", "restarts its child when a file changes"),
    ("tsx-watch", "restarts its child when a file changes"),
    ("cargo-watch", "runs its command again when a file changes"),
    ("watchexec", "runs its command again when a file changes"),
    ("air", "rebuilds and restarts its child when a file changes"),
    (
        "uvicorn",
        "restarts its worker (a reloader when a file changes, a supervisor when a worker dies)",
    ),
    ("fastapi-dev", "restarts its worker when a file changes"),
    (
        "django-runserver",
        "restarts its serving child when a file changes (the autoreloader)",
    ),
    (
        "flask-run",
        "restarts its serving child when a file changes (the reloader)",
    ),
];

/// What a kind does as a respawner ([`RESPAWNERS`]), if it is one.
pub fn respawns(kind: &str) -> Option<&'static str> {
    RESPAWNERS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, what)| *what)
}

/// Interpreter and runtime flags that take a value, so the value is not mistaken for the script
/// (here and in `debugging.rs`). Inline code (`-c`, `-e`, `-p`) is read before this list.
pub(crate) const VALUE_FLAGS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-W",
    "-X",
    "-I",
    "-e",
    "--eval",
    "-p",
    "--print",
    "-C",
    "--conditions",
    "--title",
    "--env-file",
    "--inspect-port",
    "--debug-port",
    "-c",
    "--config",
    "--import-map",
    "--preload",
    "--cwd",
];

/// What a process is to the root walk and to the orphan rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// PID 1 (init / launchd).
    Init,
    /// Adopts orphans for a user session (`systemd --user`): its children count as orphaned.
    Subreaper,
    /// A shell waiting for a person: a login shell, one leading a session on a terminal, or one
    /// running neither `-c` nor a script. What it starts is not orphaned.
    InteractiveShell,
    /// A terminal emulator, `script` or `sshd`: what it starts is not orphaned.
    Terminal,
    /// An editor or IDE (`code`, `nvim`, `idea`): what it starts is not orphaned.
    Editor,
    /// A terminal multiplexer (`tmux`, `screen`, `zellij`): what it starts is not orphaned.
    Multiplexer,
    /// A process manager (`pm2`, `foreman`, `supervisord`): it runs what it starts on
    /// purpose, so that is not orphaned.
    ProcessManager,
    /// Launches the tool and belongs to its resource (`sh -c`, `npm run`, `make`, `cargo run`).
    Wrapper,
    /// A known dev tool of this kind.
    Tool(&'static str),
    /// Anything else: the root walk stops below it, and a child of it is not orphaned (an
    /// unknown parent is never taken for an absent one).
    Other,
}

impl Role {
    /// The words used in evidence ("parent is a live interactive shell").
    pub fn describe(&self) -> &'static str {
        match self {
            Role::Init => "init",
            Role::Subreaper => "session subreaper",
            Role::InteractiveShell => "interactive shell",
            Role::Terminal => "terminal",
            Role::Editor => "editor",
            Role::Multiplexer => "terminal multiplexer",
            Role::ProcessManager => "process manager",
            Role::Wrapper => "launcher",
            Role::Tool(_) => "dev tool",
            Role::Other => "process",
        }
    }

    /// Something that keeps what it starts on purpose (a person's shell, a terminal, an
    /// editor, a multiplexer, a process manager): its children are not orphans.
    pub fn holds_sessions(&self) -> bool {
        matches!(
            self,
            Role::InteractiveShell
                | Role::Terminal
                | Role::Editor
                | Role::Multiplexer
                | Role::ProcessManager
        )
    }

    /// Part of a tool's own launch chain: the root walk climbs through it.
    pub fn is_launch_chain(&self) -> bool {
        matches!(self, Role::Wrapper | Role::Tool(_))
    }
}

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "pwsh", "elvish",
];
const WRAPPERS: &[&str] = &[
    "npm",
    "npx",
    "pnpm",
    "pnpx",
    "yarn",
    "bunx",
    "make",
    "gmake",
    "env",
    "nohup",
    "timeout",
    "nice",
    "time",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "rye",
    "hatch",
    "bundle",
    "concurrently",
    "npm-run-all",
    "run-p",
    "run-s",
    "dotenv",
    "nx",
    "corepack",
    "npm-cli.js",
    "npx-cli.js",
    "yarn.js",
    "yarn.cjs",
    "pnpm.cjs",
    "pnpm.js",
    "bun",
    "deno",
    "cargo",
    // `composer run dev` (Laravel's dev script): found by the real-tools suite.
    "composer",
    // Monorepo and task runners: each runs its tasks as children, which end with it.
    "turbo",
    "lerna",
    "moon",
    "just",
    "uvx",
];
const TERMINALS: &[&str] = &[
    "gnome-terminal-server",
    "gnome-terminal-",
    "konsole",
    "xterm",
    "urxvt",
    "rxvt",
    "alacritty",
    "kitty",
    "wezterm",
    "wezterm-gui",
    "foot",
    "tilix",
    "terminator",
    "iTerm2",
    "Terminal",
    "Hyper",
    "ghostty",
    "warp",
    "script",
    "sshd",
    "sshd-session",
    "xfce4-terminal",
    "lxterminal",
];
const EDITORS: &[&str] = &[
    "code",
    "code-oss",
    "codium",
    "cursor",
    "Code Helper",
    "Code Helper (Plugin)",
    "Electron",
    "idea",
    "pycharm",
    "webstorm",
    "goland",
    "rubymine",
    "clion",
    "rider",
    "phpstorm",
    "studio",
    "vim",
    "nvim",
    "emacs",
    "zed",
    "zed-editor",
    "sublime_text",
    "subl",
    "hx",
    "helix",
    "kate",
];
const MULTIPLEXERS: &[&str] = &[
    "tmux",
    "tmux: server",
    "screen",
    "SCREEN",
    "zellij",
    "abduco",
    "dtach",
];
const MANAGERS: &[&str] = &[
    "pm2",
    "supervisord",
    "overmind",
    "foreman",
    "process-compose",
    "honcho",
    "hivemind",
    "launchd",
    "runsv",
    "s6-supervise",
    "circusd",
];

/// The lossy basename of an argument, the way a user would name the program.
pub(crate) fn basename(arg: &[u8]) -> String {
    let name = arg.rsplit(|&b| b == b'/').next().unwrap_or(arg);
    String::from_utf8_lossy(name).into_owned()
}

/// The program a process runs and the arguments after it, looking through interpreters.
/// `None` for inline code (`python -c`, `node -e`): no script names it.
pub(crate) fn program_and_args(argv: &[Vec<u8>]) -> Option<(String, Vec<String>)> {
    let (script, args) = script_and_args(argv)?;
    Some((basename(script.as_bytes()), args))
}

/// As [`program_and_args`], with the script's path as written (`/p/weather-mcp/build/index.js`)
/// and a Python module's name (`mcp_server_time`).
pub(crate) fn script_and_args(argv: &[Vec<u8>]) -> Option<(String, Vec<String>)> {
    let first = basename(argv.first()?);
    let rest: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let python = is_python(&first);
    if !python && !INTERPRETERS.contains(&first.as_str()) {
        return Some((first, rest));
    }
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        match arg {
            "-c" | "-e" | "--eval" | "-p" | "--print" => return None,
            "-m" if python => {
                let module = rest.get(i + 1)?.clone();
                return Some((module, rest[i + 2..].to_vec()));
            }
            // `bun run x`, `deno run x`: the verb is not the script.
            "run" | "x" if i == 0 && !python => {}
            _ if VALUE_FLAGS.contains(&arg) => i += 1,
            _ if arg.starts_with('-') => {}
            _ => return Some((arg.to_owned(), rest[i + 1..].to_vec())),
        }
        i += 1;
    }
    // A bare interpreter (a REPL) or a verb with no script: the interpreter is the program.
    Some((first, rest))
}

/// `vite.js` → `vite`, `next.mjs` → `next`; `manage.py` keeps its name (the table uses it).
pub(crate) fn strip_script_ext(name: &str) -> &str {
    for ext in [".js", ".mjs", ".cjs", ".ts", ".rb"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return stem;
        }
    }
    name
}

pub(crate) fn args_match(rule: Args, args: &[String]) -> bool {
    // Subcommands come first (`next dev -p 3000`); a leading flag means there is none, so a
    // flag's value (`vite --port 3000`) is never taken for one. `cargo +nightly watch` skips
    // the toolchain.
    let sub = args
        .iter()
        .find(|a| !a.starts_with('+'))
        .filter(|a| !a.starts_with('-'));
    match rule {
        Args::Any => true,
        Args::Sub(subs, bare_ok) => match sub {
            Some(s) => subs.contains(&s.as_str()),
            None => bare_ok,
        },
        Args::Flag(flags) => args
            .iter()
            .any(|a| flags.contains(&a.split('=').next().unwrap_or(a))),
        Args::SubPast(subs, with_value, flags) => {
            sub_past(args, with_value, flags).is_some_and(|s| subs.contains(&s))
        }
        Args::Switch(names) => args.iter().any(|a| is_switch(a, names)),
    }
}

/// Whether `arg` is one of the switches `names`: `/name`, `-name` or `--name`, alone or with
/// a value after `:` or `=`, in any case.
fn is_switch(arg: &str, names: &[&str]) -> bool {
    let Some(bare) = ["--", "-", "/"].iter().find_map(|p| arg.strip_prefix(p)) else {
        return false;
    };
    let name = bare.split([':', '=']).next().unwrap_or(bare);
    names.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// The first argument that is neither one of the tool's global options nor an option's value
/// (`--app hello`, `--app=hello`); `None` when an unknown flag comes first, as for
/// [`Args::Sub`].
fn sub_past(args: &[String], with_value: Options, flags: Options) -> Option<&str> {
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        let name = a.split('=').next().unwrap_or(a);
        if with_value.contains(&name) {
            if !a.contains('=') {
                rest.next();
            }
        } else if !flags.contains(&a.as_str()) {
            return (!a.starts_with('-')).then_some(a.as_str());
        }
    }
    None
}

/// The tool kind of an argv, if it is one Pier knows. The program itself is tried first
/// (`deno task`, `bun --hot`, `php -S` are the interpreter's own servers), then the script it
/// runs, a runtime's hosted program or a daemon by its script or title (`daemons.rs`), then the
/// agent residue's rules (`agent.rs`).
pub fn classify(argv: &[Vec<u8>]) -> Option<&'static str> {
    let first = basename(argv.first()?);
    let rest: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if let Some(kind) = lookup(&first, &rest) {
        return Some(kind);
    }
    // A runtime's hosted program (a JVM's main class, `dotnet`'s application), then a daemon
    // known by its script's path or its title.
    if let Some(kind) = daemons::hosted(argv).and_then(|(program, args)| lookup(&program, &args)) {
        return Some(kind);
    }
    if let Some(kind) = daemons::by_script_or_title(argv) {
        return Some(kind);
    }
    program_and_args(argv)
        .and_then(|(program, args)| lookup(&program, &args))
        .or_else(|| agent::kind_of(argv).map(|(kind, _)| kind))
}

fn lookup(program: &str, args: &[String]) -> Option<&'static str> {
    let names = [program, strip_script_ext(program)];
    KINDS
        .iter()
        .find(|r| names.contains(&r.program) && args_match(r.args, args))
        .map(|r| r.kind)
}

/// Whether a process the kernel names `comm` could be a tool [`classify`] recognises, so that
/// a scan reads its argv (reading every argv is a large share of a scan).
///
/// `comm` is the basename of the file the process exec'd, cut to 15 bytes: argv[0]'s
/// basename, or for a `#!` script the script's own name. So every program in the table
/// passes, cut or with its script extension, and so does every interpreter `classify` looks
/// through, and agent residue's names (`agent::name_may_matter`: MCP and language servers by
/// their words, browsers, drivers, runners, editors' Electron). What it misses, by design: a process that renamed itself to a name no rule knows
/// while its argv still names a tool, and one exec'd from another file than its argv[0] says
/// (`exec -a vite other`). Scans read the argv of every socket holder regardless, so such a
/// process still shows when it listens in a project.
pub fn name_may_matter(comm: &str) -> bool {
    let stem = strip_script_ext(comm);
    let cut =
        |name: &str| comm == name || stem == name || (comm.len() >= 15 && name.starts_with(comm));
    is_python(comm)
        || INTERPRETERS.iter().any(|i| cut(i))
        || KINDS.iter().any(|r| cut(r.program))
        || agent::name_may_matter(comm)
        || daemons::HOSTS.iter().any(|h| cut(h))
        || daemons::TITLED.iter().any(|t| comm.starts_with(t))
}

/// What a process is to the root walk. `comm` backs up argv[0] (which a process may rewrite).
pub fn role(p: &ProcessInfo) -> Role {
    if p.identity.pid == 1 {
        return Role::Init;
    }
    if let Some(kind) = classify(&p.argv) {
        return Role::Tool(kind);
    }
    let arg0 = p.argv.first().map(|a| basename(a)).unwrap_or_default();
    let login = arg0.starts_with('-');
    let name = arg0.trim_start_matches('-');
    let is = |list: &[&str]| list.contains(&name) || list.contains(&p.comm.as_str());
    if name == "systemd" || p.comm == "systemd" {
        return Role::Subreaper;
    }
    if SHELLS.contains(&name) {
        return if login || is_interactive_shell(p) {
            Role::InteractiveShell
        } else {
            Role::Wrapper
        };
    }
    if is(MULTIPLEXERS) || p.comm.starts_with("tmux") {
        return Role::Multiplexer;
    }
    if is(MANAGERS) || p.comm.starts_with("PM2") {
        return Role::ProcessManager;
    }
    if is(EDITORS) {
        return Role::Editor;
    }
    if is(TERMINALS) {
        return Role::Terminal;
    }
    // A build tool running what it built (`go run`), a runtime's watch mode or a reloader by
    // its flag (`node --watch`, `hypercorn --reload`): the server is its child, and it is part
    // of the resource (docs/design.md §2.2).
    if launch::is_builder_run(&p.argv) || launch::reloads(p) {
        return Role::Wrapper;
    }
    let through = program_and_args(&p.argv).map(|(prog, _)| prog);
    // A launcher that rewrote its title ("npm run dev", in argv[0] and comm) is still one.
    let titled = [name, p.comm.as_str()]
        .iter()
        .any(|t| is_titled_launcher(t));
    if is(WRAPPERS) || titled || through.is_some_and(|prog| WRAPPERS.contains(&prog.as_str())) {
        return Role::Wrapper;
    }
    Role::Other
}

/// A shell (`sh`, `bash`, …), by its argv[0] or its kernel name.
pub fn is_shell(p: &ProcessInfo) -> bool {
    let arg0 = p.argv.first().map(|a| basename(a)).unwrap_or_default();
    SHELLS.contains(&arg0.trim_start_matches('-')) || SHELLS.contains(&p.comm.as_str())
}

/// A title a launcher wrote over its argv ("npm run dev", "npm exec vite"): words, the first
/// of them a launcher's name.
pub fn is_titled_launcher(title: &str) -> bool {
    title.contains(' ')
        && title
            .split(' ')
            .next()
            .is_some_and(|w| WRAPPERS.contains(&w))
}

/// A shell is interactive when it leads a session on a terminal, or runs neither `-c` nor a
/// script (a shell waiting for a person). `sh -c 'vite'` and `bash run.sh` are launchers.
fn is_interactive_shell(p: &ProcessInfo) -> bool {
    let leads_terminal = p.session == p.identity.pid && p.tty_nr != 0;
    let runs_something = p
        .argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .any(|a| a.as_slice() == b"-c" || !a.starts_with(b"-"));
    leads_terminal || !runs_something
}

#[cfg(test)]
mod tests;
