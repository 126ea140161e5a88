//! Kinds from the launch chain, on argv shapes seen from the real tools (`docs/real-tools.md`).
use super::*;
use crate::probe::fake::process;

fn argv(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// A title written over the argv area: the title, then NUL padding (as /proc shows it).
fn titled(title: &str, padding: usize) -> ProcessInfo {
    let mut p = process(30, 1, &[title]);
    p.argv.extend(std::iter::repeat_n(Vec::new(), padding));
    p
}

fn kind_of(tree: &[ProcessInfo], listens: bool) -> Option<Recognised> {
    let refs: Vec<&ProcessInfo> = tree.iter().collect();
    recognise(&refs, listens)
}

#[test]
fn a_retitled_tool_is_known_from_the_shell_that_started_it() {
    // npm run dev → sh -c 'webpack serve' → node, retitled "webpack" (webpack-cli).
    let tree = [
        titled("npm run dev", 16),
        process(31, 30, &["sh", "-c", "webpack serve"]),
        titled("webpack", 40),
    ];
    let r = kind_of(&tree, true).expect("known");
    assert_eq!(r.kind, "webpack");
    assert_eq!(r.pid, 31);
    assert_eq!(
        r.how,
        How::Launcher {
            command: "webpack serve".into()
        }
    );
    // The title alone says nothing: `webpack` without `serve` is a build.
    assert_eq!(kind_of(&tree[2..], true), None);
}

#[test]
fn a_members_own_argv_comes_before_its_launcher() {
    let tree = [
        process(31, 1, &["sh", "-c", "webpack serve"]),
        process(32, 31, &["node", "/p/node_modules/.bin/vite"]),
    ];
    let r = kind_of(&tree, true).unwrap();
    assert_eq!((r.kind, r.pid, r.how), ("vite", 32, How::Argv));
}

#[test]
fn only_a_plain_command_is_read_from_a_shell() {
    let words = |script: &str| shell_command(&argv(&["sh", "-c", script]));
    assert_eq!(words("webpack serve"), Some(argv(&["webpack", "serve"])));
    assert_eq!(
        words("NODE_ENV=development cross-env A=1 next dev -p 3000"),
        Some(argv(&["next", "dev", "-p", "3000"]))
    );
    assert_eq!(
        words("exec vite --host ::1"),
        Some(argv(&["vite", "--host", "::1"]))
    );
    // npm exec quotes every word; a single-quoted part is literal, `$` and `;` included.
    assert_eq!(
        words("'webpack-dev-server'"),
        Some(argv(&["webpack-dev-server"]))
    );
    assert_eq!(
        words("'vite' --base '/a b;$x' ''"),
        Some(argv(&["vite", "--base", "/a b;$x", ""]))
    );
    assert_eq!(
        words("echo 'webpack serve'"),
        Some(argv(&["echo", "webpack serve"]))
    );
    assert_eq!(words("'vite"), None, "an unclosed quote");
    assert_eq!(words("   "), None);
    for shell_syntax in [
        "tsc && webpack serve",
        "webpack serve; echo",
        "echo \"webpack serve\"",
        "webpack\\ serve",
        "$BIN serve",
        "webpack serve > log",
        "webpack serve | tee log",
        "`which webpack` serve",
        "webpack serve &",
    ] {
        assert_eq!(words(shell_syntax), None, "{shell_syntax}");
    }
    assert_eq!(
        shell_command(&argv(&["sh", "-e", "-c", "vite"])),
        Some(argv(&["vite"]))
    );
    assert_eq!(
        shell_command(&argv(&["sh", "run.sh", "-c", "vite"])),
        None,
        "a script's own arguments are not the shell's"
    );
    assert_eq!(shell_command(&argv(&["python3", "-c", "vite"])), None);
}

#[test]
fn a_dev_script_is_read_from_the_package_manager() {
    let script = |a: &[&str]| dev_script(&argv(a));
    assert_eq!(script(&["npm run dev"]), Some(("npm", "dev".into())));
    assert_eq!(
        script(&[
            "node",
            "/usr/lib/node_modules/npm/bin/npm-cli.js",
            "run",
            "watch"
        ]),
        Some(("npm", "watch".into()))
    );
    assert_eq!(
        script(&["npm", "run", "start:dev"]),
        Some(("npm", "start:dev".into()))
    );
    assert_eq!(
        script(&["npm", "--prefix", "web", "run", "serve", "--", "--port", "1"]),
        Some(("npm", "serve".into()))
    );
    assert_eq!(
        script(&["node", "/p/pnpm.cjs", "dev"]),
        Some(("pnpm", "dev".into()))
    );
    assert_eq!(
        script(&["pnpm", "--filter", "web", "develop"]),
        Some(("pnpm", "develop".into()))
    );
    assert_eq!(
        script(&["yarn", "run", "dev"]),
        Some(("yarn", "dev".into()))
    );
    assert_eq!(script(&["bun", "run", "dev"]), Some(("bun", "dev".into())));
    // `start` is as often production; a build is not a server; npm needs `run`.
    assert_eq!(script(&["npm", "start"]), None);
    assert_eq!(script(&["npm", "run", "start"]), None);
    assert_eq!(script(&["npm", "run", "build"]), None);
    assert_eq!(script(&["npm", "dev"]), None);
    assert_eq!(script(&["pnpm", "--filter", "dev", "build"]), None);
    assert_eq!(script(&["make", "dev"]), None);
}

#[test]
fn a_dev_script_is_a_kind_only_for_a_tree_that_listens() {
    // npm run dev → sh -c 'node server.js' → node server.js (listening).
    let tree = [
        titled("npm run dev", 16),
        process(31, 30, &["sh", "-c", "node server.js"]),
        process(32, 31, &["node", "server.js"]),
    ];
    let r = kind_of(&tree, true).unwrap();
    assert_eq!(r.kind, "dev-script");
    assert_eq!(
        r.how,
        How::DevScript {
            manager: "npm",
            script: "dev".into()
        }
    );
    assert_eq!(r.pid, 30);
    assert_eq!(kind_of(&tree, false), None);
}

#[test]
fn a_known_title_names_its_tool() {
    let puma = titled("puma 5.6.5 (tcp://127.0.0.1:3000) [rails]", 13);
    let r = kind_of(std::slice::from_ref(&puma), true).unwrap();
    assert_eq!(r.kind, "puma");
    assert_eq!(
        r.how,
        How::Title {
            title: "puma 5.6.5 (tcp://127.0.0.1:3000) [rails]".into()
        }
    );
    // A worker's title, a bare word, or the same word as a real argv are not Puma's title.
    for other in [
        titled("puma: cluster worker 0: 123 [rails]", 4),
        titled("puma", 4),
        process(30, 1, &["puma", "5.6.5"]),
    ] {
        assert_eq!(kind_of(&[other], true), None);
    }
}

#[test]
fn titles_are_told_from_commands() {
    assert!(is_title(&argv(&["npm run dev", "", ""])));
    assert!(is_title(&argv(&["webpack", "", ""])));
    assert!(is_title::<Vec<u8>>(&[]));
    assert!(!is_title(&argv(&["webpack", "serve"])));
    assert!(!is_title(&argv(&["vite"])));
    assert!(!is_title(&argv(&["node", "", "x"])));
}
