//! Known by launch, on argv shapes real tools and real launches have (docs/design.md §2.2).
use super::*;
use crate::probe::fake::process;

const PROJECT: &str = "/home/u/shop";

fn seen<'a>(p: &'a ProcessInfo, exe: Option<&'a Path>) -> Seen<'a> {
    Seen {
        p,
        exe,
        cwd: Some(Path::new(PROJECT)),
        owns: Some(&|path: &Path| path.starts_with("/home/u")),
    }
}

/// How one process alone is known, never production.
fn how(argv: &[&str]) -> Option<Launch> {
    how_with(argv, None)
}

fn how_with(argv: &[&str], exe: Option<&str>) -> Option<Launch> {
    let p = process(10, 1, argv);
    let exe = exe.map(Path::new);
    known(&[seen(&p, exe)], Path::new(PROJECT), &|_| false).map(|(_, l)| l)
}

fn script_of(argv: &[&str]) -> Option<(String, String)> {
    match how(argv)? {
        Launch::Script { runner, script } => Some((runner, script)),
        other => panic!("{argv:?}: {other:?}"),
    }
}

#[test]
fn a_package_managers_script_under_any_name_but_a_production_one() {
    let s = |r: &str, n: &str| Some((r.to_owned(), n.to_owned()));
    assert_eq!(
        script_of(&["npm", "run", "db:studio"]),
        s("npm run", "db:studio")
    );
    assert_eq!(
        script_of(&[
            "node",
            "/usr/lib/node_modules/npm/bin/npm-cli.js",
            "run",
            "test:watch"
        ]),
        s("npm run", "test:watch")
    );
    assert_eq!(script_of(&["pnpm", "storybook"]), s("pnpm", "storybook"));
    assert_eq!(script_of(&["yarn", "--silent", "api"]), s("yarn", "api"));
    assert_eq!(
        script_of(&["bun", "run", "dev-api"]),
        s("bun run", "dev-api")
    );
    assert_eq!(
        script_of(&["uv", "run", "--with", "x", "streamlit", "run", "app.py"]),
        s("uv run", "streamlit")
    );
    assert_eq!(
        script_of(&["poetry", "run", "hypercorn"]),
        s("poetry run", "hypercorn")
    );
    assert_eq!(
        script_of(&["bundle", "exec", "/home/u/.gem/bin/puma"]),
        s("bundle exec", "puma")
    );
    assert_eq!(script_of(&["npx", "sirv", "public"]), s("npx", "sirv"));
    assert_eq!(script_of(&["turbo", "run", "dev"]), s("turbo run", "dev"));
    assert_eq!(
        script_of(&["nx", "run", "web:serve"]),
        s("nx run", "web:serve")
    );
    assert_eq!(
        script_of(&["npm", "--prefix", "web", "run", "serve", "--", "--port", "1"]),
        s("npm run", "serve")
    );
    assert_eq!(script_of(&["node", "/p/pnpm.cjs", "dev"]), s("pnpm", "dev"));
    assert_eq!(
        script_of(&["yarn", "--cwd", "web", "dev"]),
        s("yarn", "dev")
    );
    assert_eq!(
        script_of(&["npm", "--loglevel=warn", "run", "dev"]),
        s("npm run", "dev")
    );
    // An option Pier does not know might take a value: no script is read.
    assert_eq!(how(&["yarn", "--mystery", "dev", "build"]), None);
    assert!(how(&["bun", "--cwd", "dev", "run", "build"]).is_some());
    // npm's own title, written over its argv.
    let mut titled = process(10, 1, &["npm run db:studio"]);
    titled.argv.extend(std::iter::repeat_n(Vec::new(), 4));
    let found = known(&[seen(&titled, None)], Path::new(PROJECT), &|_| false);
    assert!(
        matches!(found, Some((10, Launch::Script { .. }))),
        "{found:?}"
    );
}

#[test]
fn production_names_and_settings_are_never_dev() {
    for argv in [
        &["npm", "start"][..],
        &["npm", "run", "start"],
        &["npm", "run", "serve:prod"],
        &["pnpm", "start-production"],
        &["yarn", "run", "build:PROD"],
        &["nx", "run", "web:serve:production"],
        // npm runs only its lifecycle scripts bare: `npm dev` is no script.
        &["npm", "dev"],
        &["npm", "install"],
        &["yarn", "run"],
    ] {
        assert_eq!(how(argv), None, "{argv:?}");
    }
    // A production setting anywhere in the tree: a flag, a shell's assignment, the
    // environment.
    for argv in [
        &["node", "/p/node_modules/.bin/sirv", "--mode", "production"][..],
        &["/home/u/.cargo/bin/mdbook", "serve", "-e", "production"],
        &["/home/u/.local/bin/app", "serve", "--env=production"],
        &["sh", "-c", "NODE_ENV=production npm run serve"],
    ] {
        let p = process(10, 1, argv);
        let npm = process(11, 10, &["npm", "run", "serve"]);
        let tree = [seen(&p, None), seen(&npm, None)];
        assert_eq!(
            known(&tree, Path::new(PROJECT), &|_| false),
            None,
            "{argv:?}"
        );
    }
    let npm = process(11, 1, &["npm", "run", "serve"]);
    assert_eq!(
        known(&[seen(&npm, None)], Path::new(PROJECT), &|pid| pid == 11),
        None,
        "NODE_ENV=production in its environment"
    );
    assert!(production_environment(&[b"NODE_ENV=production".to_vec()]));
    assert!(production_environment(&[b"RAILS_ENV=production".to_vec()]));
    assert!(!production_environment(&[b"NODE_ENV=development".to_vec()]));
    assert!(!production_environment(&[
        b"MY_NODE_ENV=production".to_vec()
    ]));
}

#[test]
fn a_task_runners_target_counts_only_when_its_name_says_dev() {
    let t = |argv: &[&str]| match how(argv) {
        Some(Launch::Target { target, .. }) => Some(target),
        None => None,
        other => panic!("{other:?}"),
    };
    assert_eq!(t(&["make", "dev"]), Some("dev".into()));
    assert_eq!(
        t(&["make", "-C", "api", "serve-api"]),
        Some("serve-api".into())
    );
    assert_eq!(t(&["just", "db:studio"]), Some("db:studio".into()));
    assert_eq!(t(&["make", "PORT=1", "watch"]), Some("watch".into()));
    // Not dev: a job, a tunnel, a production target, a word inside another word.
    assert_eq!(t(&["make", "train"]), None);
    assert_eq!(t(&["make", "tunnel"]), None);
    assert_eq!(t(&["make", "serve-prod"]), None);
    assert_eq!(t(&["make", "devices"]), None);
    assert_eq!(t(&["make"]), None);
}

#[test]
fn a_tool_from_the_projects_own_toolchain_but_never_the_interpreter_alone() {
    let tool = |argv: &[&str], exe: Option<&str>| match how_with(argv, exe) {
        Some(Launch::Toolchain { path }) => Some(path),
        None => None,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        tool(
            &["node", "/home/u/shop/node_modules/.bin/sirv", "public"],
            None
        ),
        Some("node_modules/.bin/sirv".into())
    );
    assert_eq!(
        tool(
            &[
                "/home/u/shop/.venv/bin/python3",
                "/home/u/shop/.venv/bin/streamlit",
                "run",
                "a.py"
            ],
            None
        ),
        Some(".venv/bin/streamlit".into())
    );
    assert_eq!(
        tool(&["target/debug/api"], None),
        Some("target/debug/api".into())
    );
    assert_eq!(
        tool(&["api"], Some("/home/u/shop/target/release/api")),
        Some("target/release/api".into())
    );
    assert_eq!(
        tool(&["php", "vendor/bin/phpunit-watcher"], None),
        Some("vendor/bin/phpunit-watcher".into())
    );
    // The interpreter alone, a script of the project, a tool outside it: not by this rule.
    assert_eq!(
        tool(&["/home/u/shop/.venv/bin/python", "train.py"], None),
        None
    );
    assert_eq!(tool(&["node", "server.js"], None), None);
    assert_eq!(tool(&["node", "/opt/node_modules/.bin/x"], None), None);
    assert_eq!(tool(&["/home/u/shop/.venv/bin/python"], None), None);
}

#[test]
fn python_dash_m_of_a_module_the_project_holds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("worker.py"), "").unwrap();
    let p = process(10, 1, &["python3", "-m", "worker", "--reload"]);
    let m = Seen {
        p: &p,
        exe: None,
        cwd: Some(dir.path()),
        owns: None,
    };
    assert_eq!(
        toolchain(&m, dir.path()),
        Some(Launch::Toolchain {
            path: "python -m worker".into()
        })
    );
    let other = process(10, 1, &["python3", "-m", "celery", "worker"]);
    let m = Seen { p: &other, ..m };
    assert_eq!(toolchain(&m, dir.path()), None, "not the project's module");
}

#[test]
fn a_build_tool_running_what_it_built() {
    assert_eq!(
        how(&["go", "run", "."]),
        Some(Launch::Built {
            runner: "go run".into()
        })
    );
    assert!(is_builder_run(&argv(&["go", "run", "-race", "./cmd/api"])));
    assert!(is_builder_run(&argv(&["cargo", "+nightly", "run"])));
    assert!(is_builder_run(&argv(&["zig", "build", "run"])));
    assert!(!is_builder_run(&argv(&["go", "build", "."])));
    assert!(!is_builder_run(&argv(&["go", "test", "./..."])));
    assert!(!is_builder_run(&argv(&["zig", "build"])));
}

fn argv(a: &[&str]) -> Vec<Vec<u8>> {
    a.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn a_dev_subcommand_or_flag_on_the_developers_program() {
    let word = |argv: &[&str], exe: Option<&str>| match how_with(argv, exe) {
        Some(Launch::DevWord { program, word }) => Some((program, word)),
        None => None,
        other => panic!("{other:?}"),
    };
    let w = |p: &str, x: &str| Some((p.to_owned(), x.to_owned()));
    assert_eq!(
        word(
            &["mdbook", "serve", "-p", "3000"],
            Some("/home/u/.cargo/bin/mdbook")
        ),
        w("mdbook", "serve")
    );
    assert_eq!(
        word(
            &[
                "/usr/bin/python3",
                "/home/u/.local/bin/hypercorn",
                "main:app",
                "--reload"
            ],
            None
        ),
        w("hypercorn", "--reload")
    );
    assert_eq!(
        word(&["node", "--watch", "server.js"], None),
        w("node", "--watch")
    );
    assert_eq!(
        word(&["node", "server.js", "--watch"], None),
        w("server", "--watch")
    );
    assert_eq!(
        word(&["python3", "-m", "marimo", "edit", "nb.py"], None),
        w("marimo", "edit")
    );
    assert_eq!(
        word(&["deno", "run", "--watch", "main.ts"], None),
        w("deno", "--watch")
    );
    assert_eq!(
        word(
            &["/opt/homebrew/bin/templ", "generate", "--watch=true"],
            None
        ),
        w("templ", "--watch")
    );
    // Negated, a system program, a word that is an argument, not a subcommand.
    assert_eq!(
        word(&["/home/u/.local/bin/vitest", "--watch=false"], None),
        None
    );
    assert_eq!(word(&["/home/u/.local/bin/jest", "--no-watch"], None), None);
    assert_eq!(
        word(
            &["ssh", "dev", "-L", "8080:localhost:80"],
            Some("/usr/bin/ssh")
        ),
        None
    );
    assert_eq!(word(&["/usr/bin/rsync", "--dev", "a", "b"], None), None);
    assert_eq!(word(&["python3", "/usr/bin/tool", "serve"], None), None);
    assert_eq!(word(&["/home/u/bin/app", "build", "dev"], None), None);
    // A bare program name whose executable could not be read cannot be shown the user's.
    assert_eq!(word(&["mdbook", "serve"], None), None);
}

#[test]
fn a_portless_tree_is_a_watcher_only_by_a_watch_word() {
    let watches_argv = |argv: &[&str]| {
        let p = process(10, 1, argv);
        mentions_watch(&p.argv) && watches(&seen(&p, None))
    };
    assert!(watches_argv(&[
        "node",
        "/home/u/shop/node_modules/.bin/vitest",
        "--watch"
    ]));
    assert!(watches_argv(&[
        "node",
        "node_modules/jest/bin/jest.js",
        "--watchAll"
    ]));
    assert!(watches_argv(&["node", "--watch-path=./src", "worker.js"]));
    assert!(watches_argv(&["/home/u/go/bin/templ", "watch"]));
    // Served, but no watch word: a portless one-shot (`serve` needs a port to be residue).
    assert!(!watches_argv(&[
        "node",
        "/home/u/shop/node_modules/.bin/vitest",
        "run"
    ]));
    assert!(!watches_argv(&[
        "node",
        "node_modules/.bin/vite",
        "build",
        "--watch=false"
    ]));
    assert!(!watches_argv(&["/usr/bin/inotifywait", "--watch", "x"]));
    assert!(!watches_argv(&[
        "node",
        "build.js",
        "--mode",
        "production",
        "--watch"
    ]));
}

#[test]
fn reloaders_by_their_flag_are_part_of_the_launch_chain() {
    assert!(reloads(&process(10, 1, &["node", "--watch", "server.js"])));
    assert!(reloads(&process(
        10,
        1,
        &[
            "/home/u/shop/.venv/bin/python",
            "/home/u/shop/.venv/bin/hypercorn",
            "--reload",
            "m:app"
        ]
    )));
    assert!(reloads(&process(
        10,
        1,
        &["python3", "-m", "granian", "--reload", "m:app"]
    )));
    assert!(!reloads(&process(10, 1, &["node", "server.js"])));
    assert!(!reloads(&process(10, 1, &["/usr/bin/tail", "--reload"])));
}

#[test]
fn the_kind_is_the_programs_own_name() {
    let name = |argv: &[&str]| kind_name(&process(1, 0, argv));
    assert_eq!(name(&["node", "server.js"]).as_deref(), Some("server"));
    assert_eq!(
        name(&["python3", "-m", "streamlit", "run", "a.py"]).as_deref(),
        Some("streamlit")
    );
    assert_eq!(
        name(&["/tmp/go-build1/b001/exe/api"]).as_deref(),
        Some("api")
    );
    assert_eq!(name(&["python3", "app.py"]).as_deref(), Some("app"));
    assert_eq!(
        name(&[
            "python3",
            "-c",
            "from multiprocessing.spawn import spawn_main"
        ]),
        None
    );
}

#[test]
fn a_production_name_anywhere_vetoes_the_whole_tree() {
    // `npm start` over a tool of the project's toolchain; `make prod` over `go run`.
    for (parent, child) in [
        (
            &["npm", "start"][..],
            &["node", "/home/u/shop/node_modules/.bin/appsrv"][..],
        ),
        (
            &["npm", "run", "serve:prod"],
            &["node", "/home/u/shop/node_modules/.bin/appsrv"],
        ),
        (&["make", "prod"], &["go", "run", "."]),
    ] {
        let (a, b) = (process(10, 1, parent), process(11, 10, child));
        let tree = [seen(&a, None), seen(&b, None)];
        assert_eq!(
            known(&tree, Path::new(PROJECT), &|_| false),
            None,
            "{parent:?}"
        );
    }
    // `start:dev` is NestJS's dev script, not `start`.
    assert!(script_of(&["npm", "run", "start:dev"]).is_some());
}

#[test]
fn an_interpreter_through_a_runner_is_no_script() {
    assert_eq!(how(&["npx", "node", "job.js"]), None);
    assert_eq!(how(&["uv", "run", "python", "train.py"]), None);
    assert_eq!(how(&["bundle", "exec", "ruby", "x.rb"]), None);
}

#[test]
fn production_spellings() {
    for argv in [
        &["/home/u/bin/app", "--reload", "--environment", "Production"][..],
        &["/home/u/bin/app", "--reload", "--env=PRODUCTION"],
        &[
            "/home/u/bin/app",
            "--reload",
            "--configuration",
            "production",
        ],
        &["/home/u/bin/app", "--reload", "--prod"],
        &["/home/u/bin/app", "--reload", "-env", "production"],
    ] {
        assert_eq!(how(argv), None, "{argv:?}");
    }
    for var in [
        "ASPNETCORE_ENVIRONMENT=Production",
        "NODE_ENV=Production",
        "ENVIRONMENT=production",
        "SPRING_PROFILES_ACTIVE=db,prod",
    ] {
        assert!(production_environment(&[var.as_bytes().to_vec()]), "{var}");
    }
}

#[test]
fn a_flag_turned_off_by_the_next_word_is_no_dev_word() {
    assert_eq!(how(&["/home/u/shop/bin/jest", "--watch", "false"]), None);
    assert!(how(&["/home/u/shop/bin/jest", "--watch", "src"]).is_some());
}

#[test]
fn a_subcommand_counts_only_on_a_program_the_user_chose() {
    // ssh wherever it lives: its first operand is a host.
    assert_eq!(
        how(&[
            "/nix/store/x-openssh-9.6/bin/ssh",
            "dev",
            "-N",
            "-L",
            "1:h:2"
        ]),
        None
    );
    assert_eq!(how(&["/opt/homebrew/bin/ssh", "dev", "-L", "1:h:2"]), None);
    assert!(how(&["/home/u/.cargo/bin/mdbook", "serve"]).is_some());
    assert!(how(&["go", "dev"]).is_some(), "a language's own tool");
}

#[test]
fn a_portless_tree_is_named_by_its_watcher_whatever_the_program_files_owner() {
    // `npm run test:watch` (npm's title) → `node …/vitest watch`: no listener, so the watcher
    // names it — the name needs no judgement of who installed vitest.
    let mut npm = process(10, 1, &["npm run test:watch"]);
    npm.argv.extend(std::iter::repeat_n(Vec::new(), 4));
    let vitest = process(
        11,
        10,
        &["node", "/home/u/shop/node_modules/.bin/vitest", "watch"],
    );
    let none = |_: &Path| false;
    let tree = [
        Seen {
            owns: Some(&none),
            ..seen(&npm, None)
        },
        Seen {
            owns: Some(&none),
            ..seen(&vitest, None)
        },
    ];
    let r = super::super::chain::by_launch(&tree, Path::new(PROJECT), (None, &[]), &|_| false)
        .expect("known by its script");
    assert_eq!(r.kind, "vitest");
}
