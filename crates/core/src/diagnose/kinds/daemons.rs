//! Shared daemons whose argv a plain program name does not describe: a program a runtime
//! hosts (`java … org.gradle.launcher.daemon.bootstrap.GradleDaemon`, `dotnet …/MSBuild.dll`),
//! a script known by its path inside its package (Nx's daemon is `…/nx/src/daemon/server/
//! start.js`, and every package has a `start.js`), and a daemon that writes its title over its
//! argv (eslint_d, prettierd). Their kinds are rows of `kinds.rs`'s `KINDS` (by the hosted
//! program's name) and of [`SCRIPTS`] and [`TITLES`] here; all are family `SharedDaemon`
//! (`family.rs`).

/// Runtimes whose hosted program [`hosted`] reads, by the kernel's name too: what
/// `name_may_matter` lets through.
pub const HOSTS: &[&str] = &["java", "dotnet"];

/// The kernel's names of the daemons of [`TITLES`] (Node's `process.title` sets it too).
pub const TITLED: &[&str] = &["eslint_d", "prettierd"];

/// JVM options that take the next argument as their value (`java -help`).
const JVM_VALUE_OPTIONS: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--add-opens",
    "--add-exports",
    "--add-reads",
    "--patch-module",
    "--limit-modules",
    "--enable-native-access",
];

/// `dotnet` host options that take a value (`dotnet exec --help`).
const DOTNET_VALUE_OPTIONS: &[&str] = &[
    "--depsfile",
    "--runtimeconfig",
    "--additionalprobingpath",
    "--additional-deps",
    "--fx-version",
    "--roll-forward",
    "--roll-forward-on-no-candidate-fx",
];

/// The program a runtime runs, and the arguments after it: a JVM's main class or `-jar`'s
/// file name ([`java_main`]), `dotnet`'s application file name. `None` for anything else.
/// Why Bazel's title counts as a JVM: its client starts the server's JVM with argv[0]
/// `bazel(<workspace>)` (`blaze.cc`, "will appear in ps(1) as"), the rest of argv a JVM's.
pub fn hosted(argv: &[Vec<u8>]) -> Option<(String, Vec<String>)> {
    let first = super::basename(argv.first()?);
    let args: Vec<String> = argv[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let server_title = ["bazel(", "blaze("]
        .iter()
        .any(|p| first.starts_with(p) && first.ends_with(')'));
    let at = match first.trim_end_matches(".exe") {
        "java" => java_main(&args)?,
        "dotnet" => first_operand(&args, DOTNET_VALUE_OPTIONS, &["exec"])?,
        _ if server_title => java_main(&args)?,
        _ => return None,
    };
    let program = super::basename(args[at].as_bytes());
    Some((program, args[at + 1..].to_vec()))
}

/// Where a JVM's program is among its arguments: the main class, or the file `-jar` names
/// (`java [options] <mainclass> [args]`, `java [options] -jar <jarfile> [args]`); `-m
/// module[/class]` too. Options and their values are skipped; `None` when no program follows.
pub fn java_main(args: &[String]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-jar" || a == "-m" || a == "--module" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if JVM_VALUE_OPTIONS.contains(&a) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') && !a.starts_with('@') {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The first argument that is not an option, an option's value or one of `verbs`.
fn first_operand(args: &[String], with_value: &[&str], verbs: &[&str]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if with_value.contains(&a) {
            i += 2;
        } else if a.starts_with('-') || (i == 0 && verbs.contains(&a)) {
            i += 1;
        } else {
            return Some(i);
        }
    }
    None
}

/// Daemons known by their script's path inside their package, run by an interpreter: the
/// kind, and the path's endings.
const SCRIPTS: &[(&str, &[&str])] = &[
    // Nx starts its daemon as `node …/nx/src/daemon/server/start.js` (`dist/` in nx ≥ 21).
    (
        "nx-daemon",
        &[
            "/nx/src/daemon/server/start.js",
            "/nx/dist/src/daemon/server/start.js",
        ],
    ),
    // eslint_d ≥ 14 spawns `node …/lib/daemon.js <ppid> …`; before, `node …/lib/server.js`.
    (
        "eslint_d",
        &["/eslint_d/lib/daemon.js", "/eslint_d/lib/server.js"],
    ),
];

/// Daemons that write their title over their argv (Node's `process.title`: argv becomes the
/// one title): the kind, and the title or its opening.
const TITLES: &[(&str, Title)] = &[
    // eslint_d ≥ 14: "eslint_d", then "eslint_d - <project>".
    ("eslint_d", Title::Is("eslint_d")),
    ("eslint_d", Title::Opens("eslint_d - ")),
    // core_d's daemon (eslint_d < 14, prettierd) takes `CORE_D_TITLE` as its title.
    ("prettierd", Title::Is("prettierd")),
];

/// How a title is matched.
#[derive(Debug, Clone, Copy)]
enum Title {
    /// The whole of argv is this one argument.
    Is(&'static str),
    /// The whole of argv is one argument that opens so.
    Opens(&'static str),
}

/// The shared-daemon kind of an argv known by its script's path ([`SCRIPTS`]) or its title
/// ([`TITLES`]).
pub fn by_script_or_title(argv: &[Vec<u8>]) -> Option<&'static str> {
    if let [only] = argv {
        let title = String::from_utf8_lossy(only);
        let found = TITLES.iter().find(|(_, t)| match t {
            Title::Is(name) => title == *name,
            Title::Opens(start) => title.starts_with(start),
        });
        if let Some((kind, _)) = found {
            return Some(kind);
        }
    }
    let first = super::basename(argv.first()?);
    if !super::is_interpreter(&first) {
        return None;
    }
    argv[1..].iter().find_map(|a| {
        let a = String::from_utf8_lossy(a);
        SCRIPTS
            .iter()
            .find(|(_, ends)| ends.iter().any(|e| a.ends_with(e)))
            .map(|(kind, _)| *kind)
    })
}

#[cfg(test)]
mod tests;
