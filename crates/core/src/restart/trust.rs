//! A restart runs only what the user controls, and says what it replays (docs/design.md §4).
//!
//! The recorded folder, the program and every file its argv names (the script an interpreter
//! loads, a program resolved in the project) are judged by the shared rule,
//! [`crate::trust::check_path`]: each, and every folder on its way from `/`, must be the
//! user's or root's and not writable by others. Another user who recreated a project the user
//! deleted from a shared folder (`/tmp`) would otherwise have their code run as the user.
//!
//! What a restart replays is named before it runs and in history: the program's path, the
//! folder, and the recorded environment's entries that change what code runs
//! ([`changes_code`], and a `PATH` led by a folder the user does not control). The pure rules
//! here pick those entries; [`judge_folder`], [`judge_code`] and [`replay`] ask the file system.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::rules;
use crate::model::snapshot::Snapshot;
use crate::trust::{check_path, walk, Me, Untrusted, Walk};

/// The words of the argv after argv[0] that may name a file the program loads: each argument
/// whole, and each word of it — split at blanks and the shell's operators, so a `sh -c 'node
/// /tmp/x/srv.js; true'` string names its script — with an option's value after its `=`
/// (`--require=/tmp/hook.js`). Options without one, and empty words, are left out. This only
/// chooses what to judge; nothing is ever run or split to run. Which words name a file is for
/// the file system to say ([`named_files`]).
pub fn path_arguments<'a>(argv: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let word = |w: &'a [u8]| -> Option<&'a [u8]> {
        let w = match w.iter().position(|&b| b == b'=') {
            Some(eq) => &w[eq + 1..],
            None if w.starts_with(b"-") => return None,
            None => w,
        };
        (!w.is_empty() && !w.starts_with(b"-")).then_some(w)
    };
    let split = |b: &u8| b.is_ascii_whitespace() || b";&|()<>'\"`".contains(b);
    let mut words = Vec::new();
    for arg in argv.iter().skip(1) {
        words.extend(word(arg));
        if arg.iter().any(split) {
            words.extend(arg.split(split).filter_map(word));
        }
    }
    words.dedup();
    words
}

/// Whether an environment variable names code that is loaded before, or beside, what the
/// program itself loads. Why these: each makes a program run code from a file the variable
/// names — a library the dynamic loader injects (`LD_PRELOAD`, `LD_AUDIT`, a folder searched
/// first for libraries, their macOS `DYLD_*` twins), a module or option an interpreter takes
/// before the script (`NODE_OPTIONS`' `--require`, `PYTHONPATH`, `PYTHONSTARTUP`, `PERL5OPT`'s
/// `-M`, `RUBYOPT`'s `-r`), or a file a shell sources at start (`BASH_ENV`, `ENV`). A dev
/// setup seldom sets them, so when one is named it is news; those that only choose among the
/// user's own installs (`NODE_PATH`, `GEM_HOME`) are left out.
pub fn changes_code(key: &[u8]) -> bool {
    const KEYS: &[&[u8]] = &[
        b"LD_PRELOAD",
        b"LD_LIBRARY_PATH",
        b"LD_AUDIT",
        b"NODE_OPTIONS",
        b"PYTHONPATH",
        b"PYTHONSTARTUP",
        b"PERL5OPT",
        b"RUBYOPT",
        b"BASH_ENV",
        b"ENV",
    ];
    KEYS.contains(&key) || key.starts_with(b"DYLD_")
}

/// The `PATH` folders that decide what a restart runs, in order: with a `/` in argv[0] the
/// program was not looked up, and every folder is what it (a `#!/usr/bin/env node` script)
/// and its children look up theirs in; otherwise those searched before the folder it was
/// found in (index `found_in`), any of which could gain a program of that name. All of them
/// when where it was found is not known.
pub fn path_folders<'a>(path: &'a [u8], arg0: &[u8], found_in: Option<usize>) -> Vec<&'a [u8]> {
    let folders = path.split(|&b| b == b':');
    match found_in {
        Some(i) if !arg0.contains(&b'/') => folders.take(i).collect(),
        _ => folders.collect(),
    }
}

/// Which `PATH` folder `program` was found in: the first whose join with `arg0`, against the
/// recorded folder `cwd`, is `program` (as `rules::resolve_program` joins them).
pub fn found_in(path: &[u8], arg0: &[u8], cwd: &Path, program: &Path) -> Option<usize> {
    path.split(|&b| b == b':').position(|dir| {
        let dir = match dir.is_empty() {
            true => cwd.to_path_buf(),
            false => cwd.join(OsStr::from_bytes(dir)),
        };
        dir.join(OsStr::from_bytes(arg0)) == program
    })
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

/// Whether a `PATH` folder is one the user controls. A folder that is not there is, when the
/// folder it would be made in is: then only the user or root could make it.
pub fn folder_trusted(folder: &Path, me: &Me) -> bool {
    match check_path(folder, me) {
        Ok(_) => true,
        Err(Untrusted::Missing { path }) => {
            path.parent().is_some_and(|p| check_path(p, me).is_ok())
        }
        Err(_) => false,
    }
}

/// The files `argv` names in `cwd`: the [`path_arguments`] that, joined to the recorded
/// folder, name an existing entry that is neither a folder (a folder an argument names is what
/// the program reads or serves, `--directory /tmp`; the code it loads is a file, and the folder
/// it runs in is judged as the folder) nor a device (`> /dev/null`: only root makes one).
pub fn named_files(argv: &[&[u8]], cwd: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt as _;
    path_arguments(argv)
        .into_iter()
        .map(|a| cwd.join(OsStr::from_bytes(a)))
        .filter(|p| {
            p.symlink_metadata().is_ok()
                && !p.metadata().is_ok_and(|m| {
                    let t = m.file_type();
                    t.is_dir() || t.is_char_device() || t.is_block_device()
                })
        })
        .collect()
}

/// Judges `path` (`what` it is to the restart) by the shared rule.
fn check(me: &Me, what: &str, path: &Path) -> Result<(), String> {
    check_path(path, me)
        .map(|_| ())
        .map_err(|why| not_controlled(what, path, &why))
}

/// Judges the recorded folder by the shared rule. Asked before the program is looked for in
/// it: another user's folder at the recorded path says so, not that the program is gone.
pub fn judge_folder(me: &Me, cwd: &Path) -> Result<(), String> {
    check(me, "the folder", cwd)
}

/// Judges the program, then every file its argv names in the folder, by the shared rule, and
/// every path it names that is not there: the deepest folder of it that is must be one no one
/// else can write (a script in a `/tmp` folder since removed could be put back by anyone
/// between this check and its load). The first one the user does not control refuses.
pub fn judge_code(me: &Me, cwd: &Path, program: &Path, argv: &[&[u8]]) -> Result<(), String> {
    check(me, "the program", program)?;
    named_files(argv, cwd)
        .iter()
        .try_for_each(|file| check(me, "the file", file))?;
    missing_paths(argv, cwd).iter().try_for_each(|missing| {
        let Ok(Walk::Missing { parent, .. }) = walk(missing, me, true, true) else {
            return check(me, "the file", missing);
        };
        check_path(&parent, me).map(|_| ()).map_err(|why| {
            format!(
                "the file {} is missing, and {why}: a restart runs only what you control",
                missing.display()
            )
        })
    })
}

/// The paths `argv` names (a word with a `/`, from [`path_arguments`]) that are not there.
fn missing_paths(argv: &[&[u8]], cwd: &Path) -> Vec<PathBuf> {
    path_arguments(argv)
        .into_iter()
        .filter(|a| a.contains(&b'/'))
        .map(|a| cwd.join(OsStr::from_bytes(a)))
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
    let path_untrusted = path.is_some_and(|path| {
        let found = match (&cwd, &program) {
            (Some(cwd), Some(program)) => found_in(path, arg0, cwd, program),
            _ => None,
        };
        any_untrusted(&path_folders(path, arg0, found), |f| folder_trusted(f, me))
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

    #[test]
    fn the_arguments_that_may_name_a_file_are_the_non_options_after_the_program() {
        let argv = args(&[
            "python3",
            "node_modules/.bin/vite",
            "--port",
            "5173",
            "-m",
            "",
            "/tmp/x.py",
        ]);
        assert_eq!(
            path_arguments(&argv),
            args(&["node_modules/.bin/vite", "5173", "/tmp/x.py"]),
            "passes: a script, a value, an absolute path"
        );
        assert!(
            path_arguments(&args(&["/tmp/vite"])).is_empty(),
            "argv[0] is the program, judged as the program"
        );
        assert_eq!(
            path_arguments(&args(&["node", "--require=/tmp/x.js", "-", "--inspect"])),
            args(&["/tmp/x.js"]),
            "an option's value may be a file; an option is not"
        );
        assert_eq!(
            path_arguments(&args(&[
                "sh",
                "-c",
                "node /tmp/x/srv.js 8080; true >/dev/null"
            ])),
            args(&[
                "node /tmp/x/srv.js 8080; true >/dev/null",
                "node",
                "/tmp/x/srv.js",
                "8080",
                "true",
                "/dev/null"
            ]),
            "a shell's command string names its script (found by playing the other user)"
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
    fn the_path_folders_judged_are_those_searched_before_the_program_or_all() {
        let path = b"/tmp/bin:/home/u/bin:/usr/bin";
        let shown = |v: Vec<&[u8]>| -> Vec<String> {
            v.iter()
                .map(|f| String::from_utf8_lossy(f).into())
                .collect()
        };
        assert_eq!(
            shown(path_folders(path, b"node", Some(2))),
            ["/tmp/bin", "/home/u/bin"]
        );
        assert!(
            path_folders(path, b"node", Some(0)).is_empty(),
            "found first"
        );
        assert_eq!(
            path_folders(path, b"./vite", Some(0)).len(),
            3,
            "a / in argv[0]: all"
        );
        assert_eq!(path_folders(path, b"node", None).len(), 3, "not known: all");
    }

    #[test]
    fn the_folder_a_program_was_found_in_is_the_first_that_joins_to_it() {
        let cwd = Path::new("/p");
        let path = b"/tmp/bin:bin::/usr/bin";
        assert_eq!(
            found_in(path, b"node", cwd, Path::new("/usr/bin/node")),
            Some(3)
        );
        assert_eq!(
            found_in(path, b"vite", cwd, Path::new("/p/bin/vite")),
            Some(1)
        );
        assert_eq!(found_in(path, b"vite", cwd, Path::new("/p/vite")), Some(2));
        assert_eq!(found_in(path, b"node", cwd, Path::new("/opt/node")), None);
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
    fn the_files_an_argv_names_are_its_existing_non_folder_arguments_in_the_folder() {
        let (_dir, root) = project();
        let vite = root.join("node_modules/.bin/vite");
        let argv = args(&["node", "node_modules/.bin/vite", "public", "5173", "--port"]);
        assert_eq!(named_files(&argv, &root), std::slice::from_ref(&vite));
        std::os::unix::fs::symlink("/nonexistent", root.join("dangling")).unwrap();
        assert_eq!(
            named_files(&args(&["node", "dangling"]), &root),
            [root.join("dangling")],
            "a link is an entry, wherever it points"
        );
        let abs = vite.to_str().unwrap().as_bytes();
        assert_eq!(
            named_files(&[b"node", abs], Path::new("/")),
            std::slice::from_ref(&vite)
        );
        assert_eq!(
            named_files(&args(&["sh", "-c", "vite > /dev/null"]), &root),
            Vec::<PathBuf>::new(),
            "a device is no file of code"
        );
        let script = format!("exec node {} 2>&1", vite.display());
        assert_eq!(
            named_files(&[b"sh", b"-c", script.as_bytes()], &root),
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
        let why = judge_code(me, &root, &program, &argv).unwrap_err();
        assert!(
            why.contains("is missing") && why.contains("other users"),
            "{why}"
        );
        let argv = [
            b"node".as_slice(),
            b"lib/gone.js",
            b"http://localhost:5173/",
        ];
        assert_eq!(judge_code(me, &root, &program, &argv), Ok(()));
    }

    #[test]
    fn the_users_own_folder_program_and_script_pass() {
        let (_dir, root) = project();
        let me = Me::current();
        let vite = root.join("node_modules/.bin/vite");
        assert_eq!(judge_folder(me, &root), Ok(()));
        let argv = args(&["node", "node_modules/.bin/vite", "--port", "5173"]);
        assert_eq!(judge_code(me, &root, &vite, &argv), Ok(()));
    }

    #[test]
    fn a_folder_others_can_write_is_refused_naming_it() {
        let (_dir, root) = project();
        mode(&root, 0o777);
        let why = judge_folder(Me::current(), &root).unwrap_err();
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
        let why = judge_code(me, &root, node, &argv).unwrap_err();
        assert!(why.starts_with("the file "), "{why}");
        assert!(why.contains("can be written by other users"), "{why}");
        mode(&vite, 0o755);
        mode(&bin, 0o777);
        let why = judge_code(me, &root, node, &argv).unwrap_err();
        assert_eq!(
            why,
            format!(
                "the file {} is not yours alone ({} can be written by other users): a restart \
                 runs only what you control",
                root.join("node_modules/.bin/vite").display(),
                bin.display()
            )
        );
        let why = judge_code(me, &root, &vite, &args(&["vite"])).unwrap_err();
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
