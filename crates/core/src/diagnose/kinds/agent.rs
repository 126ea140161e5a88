//! Agent residue, known from argv structure like every kind (docs/design.md §2, "Agent
//! residue"): MCP servers, headless browsers and their drivers, language servers.
//!
//! Words first, so a server no one listed is still known: `mcp` as a whole word names an MCP
//! server, `language-server`, `langserver`, an `lsp` at a name's end or a `-ls` ending a
//! language server. They are read in the names a process goes by ([`names`]): its program,
//! the script or module an interpreter runs (a generic script, `index.js`, by its package's
//! folder), and the package a runner runs (`npx -y @x/foo-mcp`). The rows below are only the
//! programs whose names do not say what they are.

use super::chain::title_words;
use super::{args_match, basename, is_interpreter, script_and_args, strip_script_ext, Args};

pub const MCP_SERVER: &str = "mcp-server";
pub const HEADLESS_BROWSER: &str = "headless-browser";
pub const BROWSER_DRIVER: &str = "browser-driver";
pub const LANGUAGE_SERVER: &str = "language-server";

/// A program whose name does not say what it is: its kind, and the arguments it must have.
const ROWS: &[(&str, &str, Args)] = &[
    // The SDKs' own runners (`mcp install`, `fastmcp version` are not servers).
    (MCP_SERVER, "mcp", Args::Sub(&["run", "dev"], false)),
    (MCP_SERVER, "fastmcp", Args::Sub(&["run", "dev"], false)),
    // Bridges an agent runs as its stdio server, whose names do not say "server".
    (MCP_SERVER, "mcp-remote", Args::Any),
    (MCP_SERVER, "mcp-proxy", Args::Any),
    (BROWSER_DRIVER, "chromedriver", Args::Any),
    (BROWSER_DRIVER, "geckodriver", Args::Any),
    (BROWSER_DRIVER, "msedgedriver", Args::Any),
    (BROWSER_DRIVER, "operadriver", Args::Any),
    (BROWSER_DRIVER, "safaridriver", Args::Any),
    (
        BROWSER_DRIVER,
        "playwright",
        Args::Sub(&["run-driver", "run-server"], false),
    ),
    // `gopls -listen=…` is the shared daemon, not an editor's: [`kind_of`] leaves it.
    (LANGUAGE_SERVER, "gopls", Args::Sub(&["serve"], true)),
    (LANGUAGE_SERVER, "clangd", Args::Sub(&[], true)),
    (LANGUAGE_SERVER, "rust-analyzer", Args::Sub(&[], true)),
    (LANGUAGE_SERVER, "jdtls", Args::Any),
    (LANGUAGE_SERVER, "zls", Args::Sub(&[], true)),
    (LANGUAGE_SERVER, "texlab", Args::Sub(&[], true)),
    (LANGUAGE_SERVER, "intelephense", Args::Any),
    (LANGUAGE_SERVER, "tsserver", Args::Any),
    (LANGUAGE_SERVER, "marksman", Args::Sub(&["server"], false)),
    (
        LANGUAGE_SERVER,
        "solargraph",
        Args::Sub(&["stdio", "socket"], false),
    ),
    (LANGUAGE_SERVER, "ruff", Args::Sub(&["server"], false)),
    (LANGUAGE_SERVER, "deno", Args::Sub(&["lsp"], false)),
    (LANGUAGE_SERVER, "taplo", Args::Sub(&["lsp"], false)),
    (LANGUAGE_SERVER, "biome", Args::Sub(&["lsp-proxy"], false)),
    (
        LANGUAGE_SERVER,
        "dart",
        Args::Sub(&["language-server"], false),
    ),
    // VS Code's own, run by its Electron as Node (`code … jsonServerMain --node-ipc`).
    (LANGUAGE_SERVER, "jsonServerMain", Args::Any),
    (LANGUAGE_SERVER, "cssServerMain", Args::Any),
    (LANGUAGE_SERVER, "htmlServerMain", Args::Any),
    (LANGUAGE_SERVER, "eslintServer", Args::Any),
];

/// Chromium-family and Firefox programs; a name starting with one of [`BROWSER_PREFIXES`]
/// counts too (`google-chrome-stable`, `microsoft-edge-beta`, `brave-browser`).
const BROWSERS: &[&str] = &[
    "chromium",
    "chromium-browser",
    "chrome",
    "chrome-headless-shell",
    "headless_shell",
    "msedge",
    "firefox",
    "firefox-esr",
    "firefox-bin",
];
const BROWSER_PREFIXES: &[&str] = &["google-chrome", "microsoft-edge", "brave"];
/// Headless by build: no flag needed.
const HEADLESS_BUILDS: &[&str] = &["chrome-headless-shell", "headless_shell"];

/// Programs that run a package named in their arguments: the package is the first word that
/// is no flag, after the verb when there is one (`npm exec`, `uv tool run`).
const RUNNERS: &[(&str, &[&str])] = &[
    ("npx", &[]),
    ("npx-cli", &[]),
    ("bunx", &[]),
    ("pnpx", &[]),
    ("uvx", &[]),
    ("npm", &["exec"]),
    ("npm", &["x"]),
    ("npm-cli", &["exec"]),
    ("pnpm", &["dlx"]),
    ("pnpm", &["exec"]),
    ("yarn", &["dlx"]),
    ("bun", &["x"]),
    ("pipx", &["run"]),
    ("uv", &["tool", "run"]),
    ("uv", &["run"]),
];
/// A runner's options that take a value; `--package` and `--from` name the package too.
const RUNNER_VALUES: &[&str] = &[
    "-p",
    "--package",
    "--from",
    "--spec",
    "--with",
    "--directory",
    "--project",
    "--python",
    "--cwd",
    "-c",
    "--call",
];
const PACKAGE_OPTIONS: &[&str] = &["-p", "--package", "--from", "--spec"];

/// Scripts that say nothing of what they run: named by their package's folder instead.
const GENERIC_SCRIPTS: &[&str] = &[
    "index", "main", "server", "cli", "app", "run", "start", "__main__",
];
/// Folders a package keeps its scripts in, passed over on the way to its name.
const BUILD_FOLDERS: &[&str] = &["dist", "build", "src", "lib", "bin", "out"];
/// Editors whose Electron runs a script as Node (`ELECTRON_RUN_AS_NODE`): only [`ROWS`]
/// count there, never a word (the editor's own argv names the folder it opened).
const ELECTRON_HOSTS: &[&str] = &[
    "code",
    "code-oss",
    "codium",
    "cursor",
    "windsurf",
    "electron",
    "Code Helper (Plugin)",
    "Cursor Helper (Plugin)",
];

/// One name a process goes by, and the arguments after it.
#[derive(Debug)]
struct Named {
    name: String,
    args: Vec<String>,
}

/// The agent-residue kind of an argv and the name that made it known
/// (`mcp-server-everything`, `@modelcontextprotocol/server-everything`, `chrome`).
pub fn kind_of(argv: &[Vec<u8>]) -> Option<(&'static str, String)> {
    known(argv).map(|(kind, name, _)| (kind, name))
}

/// Whether an argv's agent-residue kind is known only by the words of its name (no row, no
/// browser or driver): it must then have lived quietly, as a tree known by its launch must.
pub fn known_by_words(argv: &[Vec<u8>]) -> bool {
    known(argv).is_some_and(|(_, _, by_words)| by_words)
}

/// The kind, the name that made it known, and whether only its words did.
fn known(argv: &[Vec<u8>]) -> Option<(&'static str, String, bool)> {
    // npm writes its title over its argv: `npm exec @modelcontextprotocol/server-everything`.
    let argv = title_words(argv).unwrap_or_else(|| argv.to_vec());
    if let Some((kind, name)) = browser(&argv) {
        return Some((kind, name, false));
    }
    let names = names(&argv);
    let row = names.iter().find_map(|n| {
        let (kind, ..) = ROWS
            .iter()
            .find(|(_, program, args)| *program == n.name && args_match(*args, &n.args))?;
        Some((*kind, n.name.clone(), false))
    });
    let listens_for_all = names.first().is_some_and(|n| n.name == "gopls")
        && argv.iter().any(|a| {
            let flag = String::from_utf8_lossy(a);
            matches!(flag.split('=').next(), Some("-listen" | "--listen"))
        });
    if listens_for_all {
        return None;
    }
    let playwright = names.iter().any(|n| is_playwright_driver(&argv, n));
    // A program a row names is judged by its row alone (`mcp install` is no server).
    let by_word = |kind, rule: fn(&str) -> bool| {
        let has_row = |n: &Named| ROWS.iter().any(|(_, program, _)| *program == n.name);
        let n = names.iter().find(|n| !has_row(n) && rule(&n.name))?;
        (!electron(&argv)).then(|| (kind, n.name.clone(), true))
    };
    row.or_else(|| playwright.then(|| (BROWSER_DRIVER, "playwright".to_owned(), false)))
        .or_else(|| by_word(MCP_SERVER, is_mcp_name))
        .or_else(|| by_word(LANGUAGE_SERVER, is_language_server_name))
        .or_else(|| by_word(LANGUAGE_SERVER, starts_with_lsp).filter(|_| speaks_lsp(&argv)))
}

/// The transports of the language server protocol's own libraries (`vscode-languageserver`,
/// `pygls`, `tower-lsp`): an editor always names one, so a name with the words and none of
/// them is a person's program about language servers, not one an editor left.
fn speaks_lsp(argv: &[Vec<u8>]) -> bool {
    argv.iter().any(|a| {
        let a = String::from_utf8_lossy(a);
        let flag = a.split('=').next().unwrap_or_default();
        matches!(
            flag,
            "--stdio" | "--node-ipc" | "--socket" | "--pipe" | "--clientProcessId" | "--tcp"
        )
    })
}

/// The name that made an argv's agent-residue kind known, for the card's evidence.
pub fn name_of(argv: &[Vec<u8>]) -> Option<String> {
    kind_of(argv).map(|(_, name)| name)
}

/// A browser's main process run headless or driven over a pipe, with a debugging port or pipe
/// for its driver; never one of its helpers (`--type=renderer`, Firefox's `-contentproc`),
/// never a person's browser, even with a debugging port, nor a person's one-shot job
/// (`--print-to-pdf`, `--screenshot`: no port, no pipe, so no driver).
fn browser(argv: &[Vec<u8>]) -> Option<(&'static str, String)> {
    let program = basename(argv.first()?);
    let known = BROWSERS.contains(&program.as_str())
        || BROWSER_PREFIXES.iter().any(|p| program.starts_with(p));
    if !known {
        return None;
    }
    let args: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let helper = args
        .iter()
        .any(|a| a.starts_with("--type=") || a == "-contentproc");
    let headless = HEADLESS_BUILDS.contains(&program.as_str())
        || args.iter().any(|a| {
            let flag = a.split('=').next().unwrap_or(a);
            matches!(flag, "--headless" | "-headless" | "--remote-debugging-pipe")
        });
    (!helper && headless && drivable(argv)).then_some((HEADLESS_BROWSER, program))
}

/// Whether a browser's argv opens a way for a driver in: a debugging port or pipe
/// (`diagnose::debugging`). Why: every driver (Puppeteer, Playwright, Selenium's) starts one
/// so; a headless browser without is a person's job that ends by itself.
fn drivable(argv: &[Vec<u8>]) -> bool {
    use crate::diagnose::debugging::{driven_by_pipe, port_of};
    port_of(argv).is_some() || driven_by_pipe(argv)
}

/// Playwright's driver as its Python package starts it: `node …/playwright/driver/package/
/// cli.js run-driver` (a generic script inside a folder named `playwright*`).
fn is_playwright_driver(argv: &[Vec<u8>], n: &Named) -> bool {
    let Some((script, _)) = script_and_args(argv) else {
        return false;
    };
    let in_playwright = script
        .split('/')
        .rev()
        .skip(1)
        .any(|folder| folder.starts_with("playwright"));
    strip_script_ext(&basename(script.as_bytes())) == "cli"
        && in_playwright
        && args_match(Args::Sub(&["run-driver", "run-server"], false), &n.args)
}

/// Whether argv[0] is an editor's Electron running a script as Node.
fn electron(argv: &[Vec<u8>]) -> bool {
    argv.first()
        .is_some_and(|a| ELECTRON_HOSTS.contains(&basename(a).as_str()))
}

/// The names a process goes by, in order: its program, the script (or module) an interpreter
/// or an editor's Electron runs, and the packages a runner runs.
fn names(argv: &[Vec<u8>]) -> Vec<Named> {
    let Some(first) = argv.first() else {
        return Vec::new();
    };
    let rest: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut out = vec![Named {
        name: stem(&basename(first)).to_owned(),
        args: rest.clone(),
    }];
    let program = basename(first);
    let script = if electron(argv) {
        electron_script(&rest)
    } else if is_interpreter(&program) {
        script_and_args(argv)
    } else {
        None
    };
    if let Some((path, args)) = script {
        out.push(Named {
            name: script_name(&path),
            args,
        });
    }
    let runner = out.last().map(|n| (n.name.clone(), n.args.clone()));
    if let Some((name, args)) = runner {
        out.extend(packages(&name, &args));
    }
    out
}

/// The script an editor's Electron runs as Node: its first argument that is no flag.
fn electron_script(rest: &[String]) -> Option<(String, Vec<String>)> {
    let i = rest.iter().position(|a| !a.starts_with('-'))?;
    Some((rest[i].clone(), rest[i + 1..].to_vec()))
}

/// A script's name without its extension; a generic one (`index.js`) by its package's
/// folder (`weather-mcp/build/index.js` → `weather-mcp`), scope included
/// (`@modelcontextprotocol/server-everything`).
fn script_name(path: &str) -> String {
    let name = stem(&basename(path.as_bytes())).to_owned();
    if !GENERIC_SCRIPTS.contains(&name.as_str()) {
        return name;
    }
    let folders: Vec<&str> = path.split('/').rev().skip(1).collect();
    let Some(at) = folders
        .iter()
        .position(|f| !f.is_empty() && !BUILD_FOLDERS.contains(f))
    else {
        return name;
    };
    match folders.get(at + 1) {
        Some(scope) if scope.starts_with('@') => format!("{scope}/{}", folders[at]),
        _ => folders[at].to_owned(),
    }
}

/// `mcp-server.js` → `mcp-server`, `train.py` → `train`.
fn stem(name: &str) -> &str {
    let name = strip_script_ext(name);
    name.strip_suffix(".py").unwrap_or(name)
}

/// The packages a runner runs (`npx -y @x/foo-mcp@1.2`, `uv tool run mcp-server-time`), each
/// with the arguments after it; none when `runner` is no runner.
fn packages(runner: &str, args: &[String]) -> Vec<Named> {
    let mut out = Vec::new();
    for (_, verb) in RUNNERS.iter().filter(|(r, _)| *r == runner) {
        let mut i = 0;
        let mut words = verb.iter();
        let mut next = words.next();
        while i < args.len() {
            let arg = args[i].as_str();
            let option = arg.split('=').next().unwrap_or(arg);
            if RUNNER_VALUES.contains(&option) {
                let value = if arg.contains('=') {
                    arg.split_once('=').map(|(_, v)| v)
                } else {
                    i += 1;
                    args.get(i).map(String::as_str)
                };
                if let Some(v) = value.filter(|_| PACKAGE_OPTIONS.contains(&option)) {
                    out.push(package(v, &[]));
                }
            } else if !arg.starts_with('-') {
                match next {
                    Some(w) if *w == arg => next = words.next(),
                    Some(_) => break,
                    None => {
                        out.push(package(arg, &args[i + 1..]));
                        break;
                    }
                }
            }
            i += 1;
        }
    }
    out
}

/// A package's name without its registry prefix or version (`npm:@x/y@1.2` → `@x/y`,
/// `mcp-server-time==0.6` → `mcp-server-time`).
fn package(spec: &str, args: &[String]) -> Named {
    let spec = spec.strip_prefix("npm:").unwrap_or(spec);
    // A path (`uv run ./server.py`) is a script, named as one.
    if spec.contains('/') && !spec.starts_with('@') {
        return Named {
            name: script_name(spec),
            args: args.to_vec(),
        };
    }
    // The first character may be a scope's `@`; a version or an extra follows the name.
    let cut = spec
        .char_indices()
        .skip(1)
        .find(|(_, c)| "@=[<>~".contains(*c))
        .map_or(spec.len(), |(i, _)| i);
    Named {
        name: spec[..cut].to_owned(),
        args: args.to_vec(),
    }
}

/// A name's words: split on `-`, `_`, `.`, `/`, `@`, lower case.
fn words(name: &str) -> Vec<String> {
    name.split(['-', '_', '.', '/', '@', ' '])
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// `mcp` as a whole word that names a server — the name's last word (`context7-mcp`,
/// `@playwright/mcp`) or beside `server` (`mcp-server-fetch`, `github-mcp-server`) — or the
/// protocol's own scope. Why not the word alone: clients and a person's own programs say `mcp`
/// too (`mcp-agent`, `mcp-cli`, `mcp_eval.py`, a test binary `mcp_agent_linux-…` that runs
/// MCP servers as its children); the inspector is a client.
fn is_mcp_name(name: &str) -> bool {
    let words = words(name);
    let has = |w: &str| words.iter().any(|x| x == w);
    let serves = words.last().is_some_and(|w| w == "mcp") || has("server") || has("servers");
    ((has("mcp") && serves) || name.starts_with("@modelcontextprotocol/")) && !has("inspector")
}

/// `language-server`, `langserver`, `languageserver`; `lsp` at a name's end or before `server`
/// (`pylsp`, `sourcekit-lsp`, `python-lsp-server`); a `-ls` ending a name of several words
/// (`astro-ls`). An `lsp` among other words names a subject (`train_lsp_model.py`).
fn is_language_server_name(name: &str) -> bool {
    let words = words(name);
    let pair = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
    let last = words.last().map(String::as_str).unwrap_or("");
    words
        .iter()
        .any(|w| w == "langserver" || w == "languageserver")
        || pair("language", "server")
        || pair("lsp", "server")
        || last.ends_with("lsp")
        || (words.len() > 1 && last == "ls")
}

/// `lsp` as a name's first word (`lsp-ai`) names a server only with a transport flag: alone it
/// names a subject as often (`lsp_train.py`).
fn starts_with_lsp(name: &str) -> bool {
    words(name).first().is_some_and(|w| w == "lsp")
}

/// Whether a process the kernel names `comm` (its exec'd file's basename, cut to 15 bytes)
/// could be agent residue: a row's program, a browser, a runner, an editor's Electron, or a
/// name with the words. Loose on purpose where a word may be cut (`typescript-lang`).
pub fn name_may_matter(comm: &str) -> bool {
    let stem = stem(comm);
    let cut = |name: &str| stem == name || (comm.len() >= 15 && name.starts_with(comm));
    // A runner's title (`npm exec @model`), never another of its verbs (`npm run dev`).
    let titled = |runner: &str, verb: &[&str]| {
        let mut said = comm.split(' ');
        said.next() == Some(runner) && verb.first().is_some_and(|v| said.next() == Some(v))
    };
    let words = words(stem);
    // A word the kernel cut (`vscode-json-lan`, `pyright-langser`).
    let cut_word = comm.len() >= 15
        && words
            .last()
            .is_some_and(|w| "languageserver".starts_with(w.as_str()) && w.len() >= 3);
    cut_word
        || ROWS.iter().any(|(_, program, _)| cut(program))
        || BROWSERS.iter().any(|b| cut(b))
        || BROWSER_PREFIXES.iter().any(|p| comm.starts_with(p))
        || RUNNERS.iter().any(|(r, verb)| cut(r) || titled(r, verb))
        || ELECTRON_HOSTS.iter().any(|h| cut(h))
        || is_mcp_name(stem)
        || is_language_server_name(stem)
        || words
            .iter()
            .any(|w| w.starts_with("lang") || w.contains("lsp"))
}

#[cfg(test)]
mod tests;
