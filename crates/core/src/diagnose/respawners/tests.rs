//! Which members respawn their child: known tools with a child, and shells whose command or
//! script loops; and the loop keyword only where a command starts.

use super::*;
use crate::probe::fake::process;

fn none(_: &ProcessInfo, _: &str) -> Option<String> {
    None
}

fn pids(found: &[Found]) -> Vec<Pid> {
    found.iter().map(|f| f.pid).collect()
}

#[test]
fn a_loop_keyword_counts_only_where_a_command_starts() {
    for looping in [
        "while true; do node server.js; done",
        "until false; do x; done",
        "cd app && while :; do npm start; done",
        "set -e\nwhile true\ndo\n  python3 -m http.server\ndone",
        "if x; then while true; do y; done; fi",
        "(while true; do y; done)",
        "! while false; do :; done",
    ] {
        assert!(loop_keyword(looping).is_some(), "{looping:?}");
    }
    for not_looping in [
        "vite",
        "echo while true",
        "node 'while true; do x; done'",
        "echo \"until\"",
        "for i in 1 2 3; do node s.js; done",
        "# while true; do x; done\nvite",
        "awhile true",
        "",
    ] {
        assert_eq!(loop_keyword(not_looping), None, "{not_looping:?}");
    }
}

#[test]
fn a_known_respawning_tool_with_a_child_is_a_respawner_and_alone_it_is_not() {
    let nodemon = process(
        10,
        1,
        &["node", "/p/node_modules/.bin/nodemon", "server.js"],
    );
    let child = process(11, 10, &["node", "server.js"]);
    let found = among(&[&nodemon, &child], &none);
    assert_eq!(pids(&found), vec![10]);
    assert!(
        found[0].how.starts_with("nodemon restarts its child"),
        "{found:?}"
    );

    let uvicorn = process(20, 1, &["/v/bin/python3", "/v/bin/uvicorn", "main:app"]);
    assert!(among(&[&uvicorn], &none).is_empty(), "uvicorn alone serves");
    let vite = process(30, 1, &["node", "/p/node_modules/.bin/vite"]);
    let esbuild = process(31, 30, &["/p/esbuild", "--service"]);
    assert!(
        among(&[&vite, &esbuild], &none).is_empty(),
        "vite does not respawn esbuild"
    );
}

#[test]
fn a_shell_whose_command_or_script_loops_is_a_respawner() {
    let sh = process(10, 1, &["sh", "-c", "while true; do node server.js; done"]);
    let node = process(11, 10, &["node", "server.js"]);
    let found = among(&[&sh, &node], &none);
    assert_eq!(pids(&found), vec![10]);
    assert!(found[0].how.contains("`while`"), "{found:?}");

    let plain = process(10, 1, &["sh", "-c", "node server.js; echo done"]);
    assert!(among(&[&plain, &node], &none).is_empty());

    let script = process(10, 1, &["bash", "run.sh"]);
    let looping = |_: &ProcessInfo, path: &str| {
        (path == "run.sh").then(|| "#!/bin/bash\nuntil node server.js; do sleep 1; done\n".into())
    };
    let found = among(&[&script, &node], &looping);
    assert_eq!(pids(&found), vec![10]);
    assert!(found[0].how.contains("script run.sh"), "{found:?}");
    assert!(
        among(&[&script, &node], &none).is_empty(),
        "a script that cannot be read is not called a loop"
    );
    // A shell with no child respawns nothing (yet): not named.
    assert!(among(&[&sh], &none).is_empty());
}
