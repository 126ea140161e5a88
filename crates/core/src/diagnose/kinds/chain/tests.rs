//! Kinds from the launch chain, on argv shapes seen from the real tools (`docs/real-tools.md`).
use super::*;
use crate::probe::fake::process;

fn argv(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

/// A title written over the argv area: the title, then NUL padding (as /proc shows it).
pub(crate) fn titled(pid: Pid, ppid: Pid, title: &str) -> ProcessInfo {
    let mut p = process(pid, ppid, &[title]);
    p.argv.extend(std::iter::repeat_n(Vec::new(), 12));
    p
}

fn kind_of(tree: &[ProcessInfo], _listeners: &[Pid]) -> Option<Recognised> {
    let refs: Vec<&ProcessInfo> = tree.iter().collect();
    recognise(&refs)
}

#[test]
fn a_retitled_tool_is_known_from_the_shell_that_started_it() {
    // npm run dev → sh -c 'webpack serve' → node, retitled "webpack" (webpack-cli).
    let tree = [
        titled(30, 1, "npm run dev"),
        process(31, 30, &["sh", "-c", "webpack serve"]),
        titled(32, 31, "webpack"),
    ];
    let r = kind_of(&tree, &[32]).expect("known");
    assert_eq!(r.kind, "webpack");
    assert_eq!(r.pid, 31);
    assert_eq!(
        r.how,
        How::Launcher {
            command: "webpack serve".into()
        }
    );
    // The title alone says nothing: `webpack` without `serve` is a build.
    assert_eq!(kind_of(&tree[2..], &[32]), None);
}

#[test]
fn a_members_own_argv_comes_before_its_launcher() {
    let tree = [
        process(31, 1, &["sh", "-c", "webpack serve"]),
        process(32, 31, &["node", "/p/node_modules/.bin/vite"]),
    ];
    let r = kind_of(&tree, &[32]).unwrap();
    assert_eq!((r.kind.as_str(), r.pid, r.how), ("vite", 32, How::Argv));
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
    // Other shells quote otherwise; an interactive shell expands aliases.
    assert_eq!(shell_command(&argv(&["fish", "-c", "vite"])), None);
    assert_eq!(shell_command(&argv(&["bash", "-i", "-c", "vite"])), None);
    assert_eq!(
        shell_command(&argv(&["bash", "--norc", "-c", "vite"])),
        Some(argv(&["vite"]))
    );
}

#[test]
fn a_known_title_names_its_tool_only_in_a_tree_with_no_command_left() {
    let puma = titled(30, 1, "puma 5.6.5 (tcp://127.0.0.1:3000) [rails]");
    let r = kind_of(std::slice::from_ref(&puma), &[30]).unwrap();
    assert_eq!(r.kind, "puma");
    assert_eq!(
        r.how,
        How::Title {
            title: "puma 5.6.5 (tcp://127.0.0.1:3000) [rails]".into()
        }
    );
    // A worker's title, a bare word, or the same word as a real argv are not Puma's title.
    for other in [
        titled(30, 1, "puma: cluster worker 0: 123 [rails]"),
        titled(30, 1, "puma"),
        process(30, 1, &["puma", "5.6.5"]),
    ] {
        assert_eq!(kind_of(&[other], &[30]), None);
    }
    // Under a launcher that kept its command (`bundle exec puma -e production`), the title
    // does not tell a dev server from production: no kind.
    let launched = [
        process(29, 1, &["sh", "-c", "bundle exec puma -e production"]),
        titled(30, 29, "puma 5.6.5 (tcp://127.0.0.1:3000) [rails]"),
    ];
    assert_eq!(kind_of(&launched, &[30]), None);
}

fn node(pid: Pid, ppid: Pid, argv: ArgvIs) -> Node {
    Node { pid, ppid, argv }
}

#[test]
fn a_restart_replays_the_member_whose_command_brings_the_whole_tree_back() {
    use ArgvIs::{Command, LauncherTitle, Title};
    // npm run dev (its title) → sh -c → node: the sh.
    let npm = [
        node(30, 1, LauncherTitle),
        node(31, 30, Command),
        node(32, 31, Title),
    ];
    assert_eq!(restart_target(&npm, 0), Ok(1));
    assert_eq!(restart_target(&[node(30, 1, Command)], 0), Ok(0));
    // Puma over `rails server`, with its tailwind watcher: the watcher is not the server.
    let puma = [node(30, 1, Title), node(31, 30, Command)];
    assert_eq!(restart_target(&puma, 0), Err(NoTarget::Lost(0)));
    // A retitled launcher with two children: neither brings the other back.
    let two = [
        node(30, 1, LauncherTitle),
        node(31, 30, Command),
        node(32, 30, Command),
    ];
    assert_eq!(restart_target(&two, 0), Err(NoTarget::Several(0)));
    assert_eq!(
        restart_target(&[node(30, 1, LauncherTitle)], 0),
        Err(NoTarget::Lost(0))
    );
    assert_eq!(ArgvIs::of(&argv(&["npm run dev", "", ""])), LauncherTitle);
    assert_eq!(ArgvIs::of(&argv(&["npm exec vite"])), LauncherTitle);
    assert_eq!(ArgvIs::of(&argv(&["puma 5.6.5 (tcp://x) [a]"])), Title);
    assert_eq!(ArgvIs::of(&argv(&["webpack", "", ""])), Title);
    assert_eq!(ArgvIs::of(&argv(&["sh", "-c", "vite"])), Command);
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
