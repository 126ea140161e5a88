//! A restart runs only what the user controls, and says what it replays (docs/design.md §4).
//!
//! The recorded folder, the program and every file or folder its argv or a code-changing
//! variable names ([`path_words`]: the script an interpreter loads, a module folder) are judged
//! by the shared rule,
//! [`crate::trust::check_path`]: each, and every folder on its way from `/`, must be the
//! user's or root's and not writable by others. Another user who recreated a project the user
//! deleted from a shared folder (`/tmp`) would otherwise have their code run as the user.
//!
//! What a restart replays is named before it runs and in history: the program's path, the
//! folder, and the recorded environment's entries that change what code runs
//! ([`changes_code`], and a `PATH` with a folder the user does not control). The pure rules
//! here pick those entries; [`judge_folder`], [`judge_code`] and [`replay`] ask the file system.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::rules;
use crate::model::snapshot::Snapshot;
use crate::trust::{check_path, walk, Me, Untrusted, Walk};

/// The words that may name a file a restart loads code from: those of the argv after argv[0],
/// and those of the recorded values of the variables that change what code runs
/// ([`changes_code`]). Each argument or value is taken whole and in words: split at blanks, the
/// shell's operators and quotes, and the `=`, `:` and `,` of options and lists (`--require=…`,
/// `PYTHONPATH=a:b`, `-cp a.jar:b.jar`), with a short option's attached path (`-r/x.rb`,
/// `-I./lib`) and `$VAR`, `${VAR}` and a leading `~` read from the recorded environment, as a
/// shell's command string would find them. This only chooses what to judge: nothing is run or
/// split to be run. Which words name a file is for the file system to say ([`named_files`]).
pub fn path_words(argv: &[&[u8]], env: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let split = |b: &u8| b.is_ascii_whitespace() || b";&|()<>'\"`=:,".contains(b);
    let word = |w: &[u8]| -> Option<Vec<u8>> {
        let w = match w.first() {
            // A short option's attached path: from its first `/`, with the dots before it.
            Some(b'-') => {
                let slash = w.iter().position(|&b| b == b'/')?;
                let dots = w[..slash].iter().rev().take_while(|&&b| b == b'.').count();
                &w[slash - dots..]
            }
            _ => w,
        };
        (!w.is_empty()).then(|| w.to_vec())
    };
    let values = rules::env_pairs(env)
        .into_iter()
        .filter(|(k, _)| changes_code(k.as_bytes()))
        .map(|(_, v)| v.as_bytes());
    let mut words: Vec<Vec<u8>> = Vec::new();
    for arg in argv.iter().skip(1).copied().chain(values) {
        let arg = expand(arg, env);
        words.extend(word(&arg));
        words.extend(arg.split(split).filter_map(word));
    }
    words.sort();
    words.dedup();
    words
}

/// `arg` with `$NAME`, `${NAME}` and a `~` that starts a word read from the recorded `env`
/// (an unset one reads as nothing, as a shell reads it).
fn expand(arg: &[u8], env: &[Vec<u8>]) -> Vec<u8> {
    let pairs = rules::env_pairs(env);
    let value = |name: &[u8]| {
        pairs
            .iter()
            .find(|(k, _)| k.as_bytes() == name)
            .map_or(&[][..], |(_, v)| v.as_bytes())
    };
    let name_char = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let mut out = Vec::with_capacity(arg.len());
    let mut i = 0;
    while i < arg.len() {
        let starts_word = i == 0 || arg[i - 1].is_ascii_whitespace() || arg[i - 1] == b'=';
        match arg[i] {
            b'$' if arg.get(i + 1) == Some(&b'{') => {
                match arg[i..].iter().position(|&b| b == b'}') {
                    Some(close) => {
                        out.extend_from_slice(value(&arg[i + 2..i + close]));
                        i += close + 1;
                    }
                    None => {
                        out.push(b'$');
                        i += 1;
                    }
                }
            }
            b'$' if arg.get(i + 1).is_some_and(name_char) => {
                let len = arg[i + 1..].iter().take_while(|b| name_char(b)).count();
                out.extend_from_slice(value(&arg[i + 1..i + 1 + len]));
                i += 1 + len;
            }
            b'~' if starts_word && matches!(arg.get(i + 1), None | Some(b'/')) => {
                out.extend_from_slice(value(b"HOME"));
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Whether an environment variable names code that is loaded before, or beside, what the
/// program itself loads. Why these: each makes a program run code from a file or folder the
/// variable names — a library the dynamic loader injects or searches first (`LD_PRELOAD`,
/// `LD_AUDIT`, `LD_LIBRARY_PATH`, `GCONV_PATH`, their macOS `DYLD_*` twins), a module, option or
/// search folder an interpreter takes before the script (`NODE_OPTIONS`' `--require`,
/// `NODE_PATH`, `PYTHONPATH`, `PYTHONHOME`, `PYTHONSTARTUP`, `PERL5OPT`, `PERL5LIB`, `RUBYOPT`,
/// `RUBYLIB`, the JVM's `JAVA_TOOL_OPTIONS`, `_JAVA_OPTIONS` and `JDK_JAVA_OPTIONS`, PHP's
/// `PHPRC` and `PHP_INI_SCAN_DIR`), or what a shell runs at start (`BASH_ENV`, `ENV`, an
/// exported function `BASH_FUNC_…`). A dev setup seldom sets them, so when one is named it is
/// news.
pub fn changes_code(key: &[u8]) -> bool {
    const KEYS: &[&[u8]] = &[
        b"LD_PRELOAD",
        b"LD_LIBRARY_PATH",
        b"LD_AUDIT",
        b"GCONV_PATH",
        b"NODE_OPTIONS",
        b"NODE_PATH",
        b"PYTHONPATH",
        b"PYTHONHOME",
        b"PYTHONSTARTUP",
        b"PERL5OPT",
        b"PERL5LIB",
        b"RUBYOPT",
        b"RUBYLIB",
        b"JAVA_TOOL_OPTIONS",
        b"_JAVA_OPTIONS",
        b"JDK_JAVA_OPTIONS",
        b"PHPRC",
        b"PHP_INI_SCAN_DIR",
        b"BASH_ENV",
        b"ENV",
    ];
    KEYS.contains(&key) || key.starts_with(b"DYLD_") || key.starts_with(b"BASH_FUNC_")
}

/// Whether any of `folders` is not one the user controls: a relative or empty one (it names
/// a folder only against wherever the program stands) always, an absolute one when `trusted`
/// says so.
pub fn any_untrusted(folders: &[&[u8]], mut trusted: impl FnMut(&Path) -> bool) -> bool {
    folders
        .iter()
        .any(|f| !f.starts_with(b"/") || !trusted(Path::new(OsStr::from_bytes(f))))
}

/// The recorded environment's entries that change what code runs, as `KEY=value` (values
/// kept: they are paths and options, not secrets; no other entry is ever shown): those of
/// [`changes_code`] with a value, in their recorded order, and `PATH` when `path_untrusted`.
pub fn code_env(env: &[Vec<u8>], path_untrusted: bool) -> Vec<String> {
    rules::env_pairs(env)
        .into_iter()
        .filter(|(k, v)| {
            let k = k.as_bytes();
            (changes_code(k) && !v.is_empty()) || (k == b"PATH" && path_untrusted)
        })
        .map(|(k, v)| {
            format!(
                "{}={}",
                String::from_utf8_lossy(k.as_bytes()),
                String::from_utf8_lossy(v.as_bytes())
            )
        })
        .collect()
}

/// The refusal for `what` (`"the folder"`, `"the program"`, `"the file"`) at `path`, which
/// the shared rule judged `why`: the sentence names the entry the user can act on (the path
/// itself, or the folder or link on its way that is not theirs alone).
pub fn not_controlled(what: &str, path: &Path, why: &Untrusted) -> String {
    const END: &str = "a restart runs only what you control";
    match why.path() == path {
        true => format!("{what} {why}: {END}"),
        false => format!(
            "{what} {} is not yours alone ({why}): {END}",
            path.display()
        ),
    }
}

/// Whether nothing another user put or could put at `path` is there: it is the user's alone
/// ([`check_path`]), or it is not there and the deepest folder of it that is, is the user's
/// alone itself (a sticky folder shields only an entry that exists).
fn nothing_foreign_at(path: &Path, me: &Me) -> Result<(), Untrusted> {
    match walk(path, me, true, true)? {
        Walk::Found(_) => Ok(()),
        Walk::Missing { parent, .. } => check_path(&parent, me).map(|_| ()),
    }
}

/// Whether a `PATH` folder is one the user controls ([`nothing_foreign_at`]: a folder that
/// is not there is, when only the user or root could make it).
pub fn folder_trusted(folder: &Path, me: &Me) -> bool {
    nothing_foreign_at(folder, me).is_ok()
}

/// The entries the [`path_words`] name in `cwd`: those that, joined to the recorded folder,
/// exist and are not a device (`> /dev/null`: only root makes one). Folders count: a module
/// path (`PYTHONPATH=/tmp/lib`, `-I./lib`) or a docroot names a folder the code is loaded from.
pub fn named_files(words: &[Vec<u8>], cwd: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt as _;
    words
        .iter()
        .map(|w| cwd.join(OsStr::from_bytes(w)))
        .filter(|p| {
            p.symlink_metadata().is_ok()
                && !p.metadata().is_ok_and(|m| {
                    let t = m.file_type();
                    t.is_char_device() || t.is_block_device()
                })
        })
        .collect()
}

/// Why a restart would run code the user does not control: the entry, and the shared rule's
/// reason. Its sentence names the entry the user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotYours {
    /// `what` (`"the folder"`, `"the program"`, `"the file"`) at `path` is not the user's alone.
    #[error("{}", not_controlled(.what, .path, .why))]
    Entry {
        /// What it is to the restart.
        what: &'static str,
        /// The entry.
        path: PathBuf,
        /// The shared rule's reason.
        why: Untrusted,
    },
    /// A file the command names is missing, and another user could put it there.
    #[error(
        "the file {} is missing, and {why}: a restart runs only what you control",
        .path.display()
    )]
    Missing {
        /// The missing file.
        path: PathBuf,
        /// The shared rule's reason.
        why: Untrusted,
    },
}

/// Judges `path` (`what` it is to the restart) by the shared rule.
fn check(me: &Me, what: &'static str, path: &Path) -> Result<(), NotYours> {
    check_path(path, me)
        .map(|_| ())
        .map_err(|why| NotYours::Entry {
            what,
            path: path.to_path_buf(),
            why,
        })
}

/// Judges the recorded folder by the shared rule. Asked before the program is looked for in
/// it: another user's folder at the recorded path says so, not that the program is gone.
pub fn judge_folder(me: &Me, cwd: &Path) -> Result<(), NotYours> {
    check(me, "the folder", cwd)
}

/// Judges the program, then every file the argv and the code-changing environment name
/// ([`path_words`]), by the shared rule, and every path they name that is not there: the
/// deepest folder of it that is must be one no one else can write (a script in a `/tmp` folder
/// since removed could be put back by anyone between this check and its load). The first one
/// the user does not control refuses.
pub fn judge_code(
    me: &Me,
    cwd: &Path,
    program: &Path,
    argv: &[&[u8]],
    env: &[Vec<u8>],
) -> Result<(), NotYours> {
    check(me, "the program", program)?;
    let words = path_words(argv, env);
    named_files(&words, cwd).iter().try_for_each(|entry| {
        let what = match entry.is_dir() {
            true => "the folder",
            false => "the file",
        };
        check(me, what, entry)
    })?;
    missing_paths(&words, cwd).iter().try_for_each(|missing| {
        nothing_foreign_at(missing, me).map_err(|why| NotYours::Missing {
            path: missing.clone(),
            why,
        })
    })
}

/// The paths the [`path_words`] name (a word with a `/`) that are not there.
fn missing_paths(words: &[Vec<u8>], cwd: &Path) -> Vec<PathBuf> {
    words
        .iter()
        .filter(|w| w.contains(&b'/'))
        .map(|w| cwd.join(OsStr::from_bytes(w)))
        .filter(|p| p.symlink_metadata().is_err())
        .collect()
}

/// What a restart of `s` replays, for a person to see before it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replay {
    /// The program it runs, when it can be resolved.
    pub program: Option<String>,
    /// The folder it runs it in, as recorded.
    pub folder: Option<String>,
    /// The environment entries that change what code runs ([`code_env`]).
    pub code_env: Vec<String>,
}

/// What a restart of `s` would replay, read from the record (and the file system for the
/// program and `PATH`'s folders); what cannot be resolved is left out.
pub fn replay(s: &Snapshot, me: &Me) -> Replay {
    let Ok(target) = rules::target(s) else {
        return Replay::default();
    };
    let env: Vec<Vec<u8>> = target.env.iter().flatten().map(|e| e.0.clone()).collect();
    let cwd = target
        .cwd
        .as_ref()
        .map(|c| PathBuf::from(OsStr::from_bytes(&c.0)));
    let arg0 = target.argv.first().map(|a| a.0.as_slice()).unwrap_or(b"");
    let program = cwd
        .as_deref()
        .and_then(|cwd| rules::resolve_program(arg0, cwd, &env).ok());
    let path = rules::env_pairs(&env)
        .into_iter()
        .find(|(k, _)| k.as_bytes() == b"PATH")
        .map(|(_, v)| v.as_bytes());
    // Every folder: the program's children (a shell's command string, a script's tools)
    // look theirs up in all of it.
    let path_untrusted = path.is_some_and(|path| {
        let folders: Vec<&[u8]> = path.split(|&b| b == b':').collect();
        any_untrusted(&folders, |f| folder_trusted(f, me))
    });
    Replay {
        program: program.map(|p| p.display().to_string()),
        folder: cwd.map(|c| c.display().to_string()),
        code_env: code_env(&env, path_untrusted),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(argv: &[&'static str]) -> Vec<&'static [u8]> {
        argv.iter().map(|a| a.as_bytes()).collect()
    }

    fn files(argv: &[&[u8]], cwd: &Path) -> Vec<PathBuf> {
        named_files(&path_words(argv, &[]), cwd)
    }

    fn words(argv: &[&'static str], env: &[&str]) -> Vec<String> {
        let env: Vec<Vec<u8>> = env.iter().map(|e| e.as_bytes().to_vec()).collect();
        path_words(&args(argv), &env)
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    #[test]
    fn the_words_that_may_name_a_file_are_those_after_the_program_whole_and_split() {
        let w = words(
            &[
                "python3",
                "node_modules/.bin/vite",
                "--port",
                "5173",
                "-m",
                "",
            ],
            &[],
        );
        assert_eq!(
            w,
            ["5173", "node_modules/.bin/vite"],
            "options are no files"
        );
        assert!(
            words(&["/tmp/vite"], &[]).is_empty(),
            "argv[0] is the program, judged as the program"
        );
        // Each was found by playing the other user: only whole arguments were judged.
        let has = |w: &[String], want: &str| w.iter().any(|x| x == want);
        let w = words(&["node", "--require=/tmp/x.js", "--inspect"], &[]);
        assert!(has(&w, "/tmp/x.js"), "an option's value: {w:?}");
        let w = words(
            &["sh", "-c", "node /tmp/x/srv.js 8080; true >/dev/null"],
            &[],
        );
        assert!(has(&w, "/tmp/x/srv.js") && has(&w, "/dev/null"), "{w:?}");
        let w = words(&["java", "-cp", "a.jar:/tmp/b.jar,/tmp/c.jar"], &[]);
        assert!(
            has(&w, "/tmp/b.jar") && has(&w, "/tmp/c.jar"),
            "lists: {w:?}"
        );
        let w = words(
            &["sh", "-c", "NODE_OPTIONS=--require=/tmp/h.js node s.js"],
            &[],
        );
        assert!(has(&w, "/tmp/h.js"), "an option inside a value: {w:?}");
        let w = words(&["ruby", "-r/tmp/h.rb", "-I./lib", "s.rb"], &[]);
        assert!(has(&w, "/tmp/h.rb") && has(&w, "./lib"), "attached: {w:?}");
        let w = words(
            &["sh", "-c", "node $TMPDIR/v/srv.js ${HOME}/a ~/b"],
            &["TMPDIR=/tmp", "HOME=/home/u"],
        );
        assert!(
            has(&w, "/tmp/v/srv.js") && has(&w, "/home/u/a") && has(&w, "/home/u/b"),
            "read from the recorded environment: {w:?}"
        );
        let w = words(
            &["python3", "-m", "http.server"],
            &["PYTHONPATH=/home/u/lib:/tmp/plib", "HOME=/h"],
        );
        assert!(
            has(&w, "/tmp/plib") && !has(&w, "/h"),
            "the values of the variables that change what code runs, only: {w:?}"
        );
    }

    #[test]
    fn only_the_variables_that_load_code_are_named() {
        for key in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "RUBYOPT",
            "BASH_ENV",
            "ENV",
        ] {
            assert!(changes_code(key.as_bytes()), "{key} changes what code runs");
        }
        for key in [
            "PATH",
            "HOME",
            "SECRET_TOKEN",
            "LD_PRELOADX",
            "NODE_ENV",
            "ENVX",
        ] {
            assert!(!changes_code(key.as_bytes()), "{key} is not named");
        }
    }

    #[test]
    fn the_code_environment_keeps_those_entries_only_with_their_values() {
        let env: Vec<Vec<u8>> = [
            "HOME=/home/u",
            "LD_PRELOAD=/tmp/evil.so",
            "SECRET_TOKEN=hunter2",
            "NODE_OPTIONS=",
            "PATH=/tmp/bin:/usr/bin",
            "DYLD_INSERT_LIBRARIES=/x.dylib",
        ]
        .iter()
        .map(|e| e.as_bytes().to_vec())
        .collect();
        assert_eq!(
            code_env(&env, false),
            ["LD_PRELOAD=/tmp/evil.so", "DYLD_INSERT_LIBRARIES=/x.dylib"],
            "an empty value loads nothing; no secret, no PATH it trusts"
        );
        assert_eq!(
            code_env(&env, true),
            [
                "LD_PRELOAD=/tmp/evil.so",
                "PATH=/tmp/bin:/usr/bin",
                "DYLD_INSERT_LIBRARIES=/x.dylib"
            ],
            "a PATH it does not trust is named"
        );
        assert!(code_env(&[b"HOME=/h".to_vec()], true).is_empty());
    }

    #[test]
    fn a_relative_or_empty_path_folder_is_never_trusted_and_an_absolute_one_is_judged() {
        let all_good = |_: &Path| true;
        assert!(!any_untrusted(&[b"/usr/bin", b"/bin"], all_good), "passes");
        assert!(
            any_untrusted(&[b"/usr/bin", b""], all_good),
            "empty: the cwd"
        );
        assert!(any_untrusted(&[b"node_modules/.bin"], all_good), "relative");
        assert!(
            any_untrusted(&[b"/usr/bin", b"/tmp/bin"], |f: &Path| f
                != Path::new("/tmp/bin")),
            "refused: a folder the judge refuses"
        );
        assert!(
            !any_untrusted(&[], |_: &Path| false),
            "nothing searched first"
        );
    }

    fn mode(p: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A project of the user's: a script and a folder in it.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("app");
        std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
        std::fs::create_dir(root.join("public")).unwrap();
        std::fs::write(root.join("node_modules/.bin/vite"), "#!/bin/sh\n").unwrap();
        mode(&root.join("node_modules/.bin/vite"), 0o755);
        (dir, root)
    }

    #[test]
    fn the_entries_an_argv_names_are_its_existing_arguments_in_the_folder_devices_aside() {
        let (_dir, root) = project();
        let vite = root.join("node_modules/.bin/vite");
        let argv = args(&["node", "node_modules/.bin/vite", "public", "5173", "--port"]);
        assert_eq!(
            files(&argv, &root),
            [vite.clone(), root.join("public")],
            "a folder counts: code is loaded from a module path or a docroot"
        );
        std::os::unix::fs::symlink("/nonexistent", root.join("dangling")).unwrap();
        assert_eq!(
            files(&args(&["node", "dangling"]), &root),
            [root.join("dangling")],
            "a link is an entry, wherever it points"
        );
        let abs = vite.to_str().unwrap().as_bytes();
        assert_eq!(
            files(&[b"node", abs], Path::new("/")),
            std::slice::from_ref(&vite)
        );
        assert_eq!(
            files(&args(&["sh", "-c", "vite > /dev/null"]), &root),
            Vec::<PathBuf>::new(),
            "a device is no file of code"
        );
        let script = format!("exec node {} 2>&1", vite.display());
        assert_eq!(
            files(&[b"sh", b"-c", script.as_bytes()], &root),
            [vite],
            "a script a shell's command string names"
        );
    }

    /// A script named in a folder others can write that is gone now: anyone could put one
    /// there before it loads. Gone in a folder of the user's, it is only gone.
    #[test]
    fn a_missing_script_is_refused_only_where_others_could_put_one() {
        let (_dir, root) = project();
        let me = Me::current();
        let program = root.join("node_modules/.bin/vite");
        let shared = root.join("shared");
        std::fs::create_dir(&shared).unwrap();
        mode(&shared, 0o1777);
        let gone = shared.join("x/srv.js");
        let argv = [b"node".as_slice(), gone.to_str().unwrap().as_bytes()];
        let why = judge_code(me, &root, &program, &argv, &[]).unwrap_err();
        assert!(matches!(why, NotYours::Missing { .. }), "{why}");
        let why = why.to_string();
        assert!(
            why.contains("is missing") && why.contains("other users"),
            "{why}"
        );
        let argv = [
            b"node".as_slice(),
            b"lib/gone.js",
            b"http://localhost:5173/",
        ];
        assert_eq!(judge_code(me, &root, &program, &argv, &[]), Ok(()));
    }

    #[test]
    fn the_users_own_folder_program_and_script_pass() {
        let (_dir, root) = project();
        let me = Me::current();
        let vite = root.join("node_modules/.bin/vite");
        assert_eq!(judge_folder(me, &root), Ok(()));
        let argv = args(&["node", "node_modules/.bin/vite", "--port", "5173"]);
        assert_eq!(judge_code(me, &root, &vite, &argv, &[]), Ok(()));
    }

    #[test]
    fn a_folder_others_can_write_is_refused_naming_it() {
        let (_dir, root) = project();
        mode(&root, 0o777);
        let why = judge_folder(Me::current(), &root).unwrap_err().to_string();
        assert_eq!(
            why,
            format!(
                "the folder {} can be written by other users: a restart runs only what you \
                 control",
                root.display()
            )
        );
    }

    #[test]
    fn a_script_others_can_write_is_refused_and_so_is_one_below_such_a_folder() {
        let (_dir, root) = project();
        let me = Me::current();
        let (bin, vite) = (
            root.join("node_modules/.bin"),
            root.join("node_modules/.bin/vite"),
        );
        let argv = args(&["node", "node_modules/.bin/vite"]);
        let node = Path::new("/bin/sh");
        mode(&vite, 0o757);
        let why = judge_code(me, &root, node, &argv, &[])
            .unwrap_err()
            .to_string();
        assert!(why.starts_with("the file "), "{why}");
        assert!(why.contains("can be written by other users"), "{why}");
        mode(&vite, 0o755);
        mode(&bin, 0o777);
        let why = judge_code(me, &root, node, &argv, &[])
            .unwrap_err()
            .to_string();
        assert_eq!(
            why,
            format!(
                "the file {} is not yours alone ({} can be written by other users): a restart \
                 runs only what you control",
                root.join("node_modules/.bin/vite").display(),
                bin.display()
            )
        );
        let why = judge_code(me, &root, &vite, &args(&["vite"]), &[]).unwrap_err();
        assert!(
            matches!(
                why,
                NotYours::Entry {
                    what: "the program",
                    ..
                }
            ),
            "{why}"
        );
        let why = why.to_string();
        assert!(
            why.starts_with("the program "),
            "the program is judged too: {why}"
        );
    }

    #[test]
    fn a_path_folder_is_trusted_when_the_user_controls_it_or_alone_could_make_it() {
        let (_dir, root) = project();
        let me = Me::current();
        assert!(folder_trusted(Path::new("/usr/bin"), me), "root's");
        assert!(
            folder_trusted(&root.join("node_modules/.bin"), me),
            "the user's"
        );
        assert!(
            folder_trusted(&root.join("not-yet"), me),
            "only the user could make it"
        );
        mode(&root, 0o777);
        assert!(
            !folder_trusted(&root.join("not-yet"), me),
            "anyone could make it"
        );
        assert!(!folder_trusted(&root, me), "anyone can write it");
    }
}
