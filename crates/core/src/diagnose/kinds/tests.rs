//! Tool kinds and parent roles, from argv structure.
use super::*;
use crate::probe::fake::process;

fn kind(args: &[&str]) -> Option<&'static str> {
    let argv: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    classify(&argv)
}

#[test]
fn tools_are_known_by_program_and_subcommand() {
    assert_eq!(kind(&["/p/node_modules/.bin/vite"]), Some("vite"));
    assert_eq!(kind(&["vite", "--port", "3000"]), Some("vite"));
    assert_eq!(kind(&["vite", "build"]), None);
    assert_eq!(kind(&["next", "dev"]), Some("next-dev"));
    assert_eq!(
        kind(&["next", "build"]),
        None,
        "a build is not a dev server"
    );
    assert_eq!(kind(&["rails", "server"]), Some("rails-server"));
    assert_eq!(kind(&["cargo", "watch", "-x", "run"]), Some("cargo-watch"));
    assert_eq!(kind(&["cargo", "build"]), None);
    assert_eq!(kind(&["tsc", "--watch"]), Some("tsc-watch"));
    assert_eq!(kind(&["tsc"]), None);
    assert_eq!(kind(&["php", "-S", "localhost:8000"]), Some("php-server"));
    assert_eq!(kind(&["jupyter", "lab"]), Some("jupyter"));
    assert_eq!(kind(&["jupyter", "nbconvert"]), None);
}

#[test]
fn interpreters_are_looked_through_to_their_script() {
    assert_eq!(
        kind(&["node", "/p/node_modules/vite/bin/vite.js", "--host"]),
        Some("vite")
    );
    assert_eq!(
        kind(&[
            "node",
            "--inspect",
            "-r",
            "ts-node/register",
            "node_modules/.bin/next",
            "dev"
        ]),
        Some("next-dev")
    );
    assert_eq!(
        kind(&["python3", "manage.py", "runserver"]),
        Some("django-runserver")
    );
    assert_eq!(
        kind(&["python3.12", "-m", "uvicorn", "app:app"]),
        Some("uvicorn")
    );
    assert_eq!(
        kind(&["python", "-m", "http.server", "8000"]),
        Some("python-http-server")
    );
    assert_eq!(
        kind(&["php", "artisan", "serve"]),
        Some("php-artisan-serve")
    );
    assert_eq!(
        kind(&["/usr/bin/ruby", "bin/rails", "s"]),
        Some("rails-server")
    );
}

#[test]
fn interpreters_own_servers_are_known_before_their_script() {
    assert_eq!(kind(&["deno", "task", "dev"]), Some("deno-task"));
    assert_eq!(kind(&["bun", "--hot", "server.ts"]), Some("bun-dev"));
    assert_eq!(kind(&["bun", "--watch", "index.ts"]), Some("bun-dev"));
    assert_eq!(kind(&["bun", "run", "vite"]), Some("vite"));
    assert_eq!(kind(&["bun", "index.ts"]), None);
    assert_eq!(kind(&["next"]), Some("next-dev"), "bare next runs next dev");
    assert_eq!(
        kind(&["php", "-S", "0.0.0.0:8000", "-t", "public"]),
        Some("php-server")
    );
}

#[test]
fn substrings_of_the_command_line_never_count() {
    assert_eq!(kind(&["vim", "vite.config.ts"]), None);
    assert_eq!(kind(&["grep", "-r", "next dev", "."]), None);
    assert_eq!(kind(&["python3", "-c", "import vite"]), None);
    assert_eq!(kind(&["node", "-e", "require('vite')"]), None);
    assert_eq!(kind(&["/opt/vite-tools/bin/lint"]), None);
    assert_eq!(kind(&[]), None);
}

#[test]
fn non_utf8_argv_is_classified_lossily_without_panicking() {
    let argv = vec![b"/p/\xffdir/vite".to_vec(), b"\xfe".to_vec()];
    assert_eq!(
        classify(&argv),
        None,
        "an \\xfe subcommand is not dev/serve"
    );
    let argv = vec![b"/p/\xffdir/vite".to_vec()];
    assert_eq!(classify(&argv), Some("vite"));
}

#[test]
fn shells_running_a_command_are_launchers_and_waiting_shells_are_interactive() {
    assert_eq!(role(&process(10, 1, &["sh", "-c", "vite"])), Role::Wrapper);
    assert_eq!(role(&process(10, 1, &["bash", "dev.sh"])), Role::Wrapper);
    assert_eq!(role(&process(10, 1, &["-zsh"])), Role::InteractiveShell);
    assert_eq!(
        role(&process(10, 1, &["bash", "-i"])),
        Role::InteractiveShell
    );
    let mut leader = process(10, 9, &["sh", "-c", "vite; true"]);
    leader.tty_nr = 34816;
    assert_eq!(
        role(&leader),
        Role::InteractiveShell,
        "leads a live terminal session"
    );
}

#[test]
fn parents_that_own_a_session_are_not_launchers() {
    assert_eq!(role(&process(1, 0, &["/sbin/init"])), Role::Init);
    assert_eq!(
        role(&process(5, 1, &["/lib/systemd/systemd", "--user"])),
        Role::Subreaper
    );
    assert_eq!(role(&process(5, 1, &["tmux", "new"])), Role::Multiplexer);
    assert_eq!(role(&process(5, 1, &["/usr/bin/code"])), Role::Editor);
    assert_eq!(role(&process(5, 1, &["pm2"])), Role::ProcessManager);
    assert_eq!(role(&process(5, 1, &["npm", "run", "dev"])), Role::Wrapper);
    assert_eq!(
        role(&process(
            5,
            1,
            &[
                "node",
                "/usr/lib/node_modules/npm/bin/npm-cli.js",
                "run",
                "dev"
            ]
        )),
        Role::Wrapper
    );
    assert_eq!(
        role(&process(5, 1, &["python3", "orchestrate.py"])),
        Role::Other
    );
    assert_eq!(
        role(&process(5, 1, &["npm run dev"])),
        Role::Wrapper,
        "a retitled npm"
    );
    // Found by the real-tools suite: `composer run dev` was taken for a live parent.
    assert_eq!(
        role(&process(5, 1, &["php", "/usr/bin/composer", "run", "dev"])),
        Role::Wrapper
    );
}

#[test]
fn every_program_and_interpreter_passes_the_name_filter_as_the_kernel_names_it() {
    for r in KINDS {
        // comm is the exec'd file's basename, cut to 15 bytes.
        let comm: String = r.program.chars().take(15).collect();
        assert!(name_may_matter(&comm), "{} as {comm}", r.program);
        assert!(name_may_matter(&format!("{}.js", r.program)) || r.program.len() > 12);
    }
    for comm in [
        "node",
        "nodejs",
        "bun",
        "deno",
        "php",
        "ruby",
        "python3",
        "python3.12",
        "pypy3",
    ] {
        assert!(name_may_matter(comm), "{comm}");
    }
    assert!(
        name_may_matter("webpack-dev-ser"),
        "webpack-dev-server, cut"
    );
}

#[test]
fn names_of_no_tool_are_turned_down() {
    for comm in [
        "sleep",
        "bash",
        "systemd",
        "next-server (v1",
        "kworker/0:1",
        "",
    ] {
        assert!(!name_may_matter(comm), "{comm}");
    }
}

/// Found by the real-tools suite: `flask --app app run --debug`, as Flask's docs start an app,
/// was an unknown kind (its first argument is a flag).
#[test]
fn flask_run_is_known_past_its_global_options_and_fastapi_dev_is_known() {
    for argv in [
        &["flask", "run"][..],
        &["flask", "--app", "app", "run", "--debug"],
        &["flask", "--app=app", "--debug", "run"],
        &[
            "/v/bin/python3",
            "/v/bin/flask",
            "-A",
            "hello",
            "-e",
            ".env",
            "run",
        ],
    ] {
        assert_eq!(kind(argv), Some("flask-run"), "{argv:?}");
    }
    for argv in [
        &["flask", "--app", "app", "routes"][..],
        &["flask", "--app", "run"],
        &["flask", "--unknown", "run"],
        &["flask", "shell"],
    ] {
        assert_eq!(kind(argv), None, "{argv:?}");
    }
    assert_eq!(kind(&["fastapi", "dev", "main.py"]), Some("fastapi-dev"));
    assert_eq!(
        kind(&["/v/bin/python3", "/v/bin/fastapi", "dev", "main.py"]),
        Some("fastapi-dev")
    );
    assert_eq!(kind(&["fastapi", "run", "main.py"]), None, "production");
}

#[test]
fn documentation_servers_are_known() {
    // A venv's console script runs as `python <venv>/bin/mkdocs serve …`.
    assert_eq!(
        kind(&[
            "/p/.venv/bin/python3",
            "/p/.venv/bin/mkdocs",
            "serve",
            "-a",
            "127.0.0.1:8000"
        ]),
        Some("mkdocs-serve")
    );
    assert_eq!(kind(&["mkdocs", "serve"]), Some("mkdocs-serve"));
    assert_eq!(
        kind(&["python3", "-m", "mkdocs", "serve"]),
        Some("mkdocs-serve")
    );
    assert_eq!(kind(&["mkdocs", "build"]), None, "a build is not a server");
    assert_eq!(kind(&["mkdocs", "gh-deploy"]), None);
    assert_eq!(
        kind(&[
            "python3",
            "/p/.venv/bin/sphinx-autobuild",
            "docs",
            "_build/html"
        ]),
        Some("sphinx-autobuild")
    );
    assert_eq!(kind(&["sphinx-build", "docs", "_build"]), None);
}
