//! Shared daemons by their argv as their tools start them (each cited where it was read).
use super::super::{classify, family, name_may_matter, Family};
use super::*;

fn kind(args: &[&str]) -> Option<&'static str> {
    let argv: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
    classify(&argv)
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

#[test]
fn a_jvm_s_program_is_its_main_class_or_its_jar() {
    fn main<'a>(args: &[&'a str]) -> Option<&'a str> {
        java_main(&strings(args)).map(|i| args[i])
    }
    assert_eq!(
        main(&["-Xmx1g", "-cp", "a.jar:b.jar", "com.x.Main", "arg"]),
        Some("com.x.Main")
    );
    assert_eq!(
        main(&["-Dx=y", "-jar", "/p/A-server.jar", "--x"]),
        Some("/p/A-server.jar")
    );
    assert_eq!(
        main(&["--module-path", "mods", "-m", "app/com.x.Main"]),
        Some("app/com.x.Main")
    );
    assert_eq!(main(&["@argfile", "com.x.Main"]), Some("com.x.Main"));
    assert_eq!(main(&["-version"]), None);
    assert_eq!(main(&["-jar"]), None, "-jar with nothing after it");
}

#[test]
fn gradle_and_kotlin_daemons_are_known_by_their_main_class() {
    // As `ps` shows them (Gradle's own docs and issue threads).
    assert_eq!(
        kind(&[
            "/usr/lib/jvm/java-17/bin/java",
            "-XX:MaxMetaspaceSize=384m",
            "-Xmx512m",
            "-cp",
            "/home/u/.gradle/wrapper/dists/gradle-8.5/lib/gradle-launcher-8.5.jar",
            "org.gradle.launcher.daemon.bootstrap.GradleDaemon",
            "8.5",
        ]),
        Some("gradle-daemon")
    );
    assert_eq!(
        kind(&[
            "java",
            "-cp",
            "kotlin-compiler-embeddable.jar",
            "-Dkotlin.environment.keepalive",
            "org.jetbrains.kotlin.daemon.KotlinCompileDaemon",
            "--daemon-runFilesPath",
            "/tmp/kotlin-daemon",
        ]),
        Some("kotlin-daemon")
    );
    // The wrapper and a build's worker are no daemons.
    assert_eq!(
        kind(&[
            "java",
            "-cp",
            "gradle-wrapper.jar",
            "org.gradle.wrapper.GradleWrapperMain",
            "build"
        ]),
        None
    );
    assert_eq!(kind(&["java", "-jar", "app.jar"]), None);
}

#[test]
fn bazel_s_server_is_known_by_its_title_and_jar() {
    // blaze.cc: argv[0] is "bazel(<workspace>)", then the JVM's arguments.
    assert_eq!(
        kind(&[
            "bazel(myproject)",
            "-XX:+HeapDumpOnOutOfMemoryError",
            "-jar",
            "/home/u/.cache/bazel/_bazel_u/install/abc/A-server.jar",
            "--max_idle_secs=10800",
        ]),
        Some("bazel-server")
    );
    assert_eq!(kind(&["bazel", "build", "//..."]), None, "the client");
}

#[test]
fn msbuild_s_reusable_nodes_and_the_compiler_server_are_known() {
    // As the .NET SDK leaves them (MSBuild's NodeLauncher; Roslyn's apphost).
    assert_eq!(
        kind(&[
            "/home/u/.dotnet/dotnet",
            "/home/u/.dotnet/sdk/8.0.100/MSBuild.dll",
            "/noautoresponse",
            "/nologo",
            "/nodemode:1",
            "/nodeReuse:true",
            "/low:false",
        ]),
        Some("msbuild-node")
    );
    assert_eq!(
        kind(&["dotnet", "exec", "/sdk/MSBuild.dll", "-NodeMode:2"]),
        Some("msbuild-node")
    );
    assert_eq!(
        kind(&["dotnet", "/sdk/MSBuild.dll", "build.proj"]),
        None,
        "a build"
    );
    assert_eq!(
        kind(&["/sdk/Roslyn/bincore/VBCSCompiler", "-pipename:abc"]),
        Some("vbcscompiler")
    );
    assert_eq!(
        kind(&[
            "dotnet",
            "/sdk/Roslyn/bincore/VBCSCompiler.dll",
            "-pipename:abc"
        ]),
        Some("vbcscompiler")
    );
    assert_eq!(kind(&["dotnet", "build"]), None);
}

#[test]
fn gopls_watchman_and_turbo_daemons_are_known_by_their_flags() {
    // gopls's forwarder (`-remote=auto`) starts exactly this (seen on Debian's gopls).
    assert_eq!(
        kind(&[
            "/usr/bin/gopls",
            "serve",
            "-listen",
            "unix;/tmp/gopls-4f9439-daemon.u",
            "-listen.timeout",
            "1m0s"
        ]),
        Some("gopls-daemon")
    );
    assert_eq!(kind(&["gopls", "-listen=:4389"]), Some("gopls-daemon"));
    assert_eq!(
        kind(&["gopls", "-remote=auto"]),
        Some("language-server"),
        "the forwarder is the editor's language server, the daemon's client"
    );
    assert_eq!(kind(&["gopls"]), Some("language-server"));
    assert_eq!(
        kind(&[
            "watchman",
            "--foreground",
            "--sockname=/tmp/w/sock",
            "--logfile=/tmp/w/log"
        ]),
        Some("watchman-server")
    );
    assert_eq!(kind(&["watchman", "watch-list"]), None);
    assert_eq!(
        kind(&["turbo", "--skip-infer", "daemon"]),
        Some("turbo-daemon")
    );
    assert_eq!(kind(&["turbo", "daemon"]), Some("turbo-daemon"));
    assert_eq!(kind(&["turbo", "run", "build"]), None);
}

#[test]
fn node_daemons_are_known_by_their_script_s_path_or_their_title() {
    assert_eq!(
        kind(&["node", "/p/node_modules/nx/src/daemon/server/start.js"]),
        Some("nx-daemon")
    );
    assert_eq!(
        kind(&[
            "/usr/bin/node",
            "/p/node_modules/.pnpm/nx@21/node_modules/nx/dist/src/daemon/server/start.js"
        ]),
        Some("nx-daemon")
    );
    assert_eq!(
        kind(&["node", "/p/server/start.js"]),
        None,
        "any package's start.js"
    );
    assert_eq!(
        kind(&[
            "node",
            "/g/lib/node_modules/eslint_d/lib/daemon.js",
            "4242",
            "0",
            "/p",
            "h"
        ]),
        Some("eslint_d")
    );
    // Retitled (eslint_d's daemon.js and core_d's `CORE_D_TITLE`).
    assert_eq!(kind(&["eslint_d - my-app"]), Some("eslint_d"));
    assert_eq!(kind(&["eslint_d - /home/u/p"]), Some("eslint_d"));
    assert_eq!(kind(&["prettierd"]), Some("prettierd"));
    // The clients.
    assert_eq!(kind(&["node", "/g/bin/eslint_d", "src/a.js"]), None);
    assert_eq!(kind(&["node", "/g/bin/prettierd", "src/a.js"]), None);
}

#[test]
fn every_shared_daemon_kind_is_of_the_shared_daemon_family_and_its_name_is_read() {
    for k in [
        "gopls-daemon",
        "watchman-server",
        "gradle-daemon",
        "kotlin-daemon",
        "bazel-server",
        "nx-daemon",
        "turbo-daemon",
        "eslint_d",
        "prettierd",
        "msbuild-node",
        "vbcscompiler",
    ] {
        assert_eq!(family(k), Family::SharedDaemon, "{k}");
    }
    for comm in [
        "java",
        "dotnet",
        "gopls",
        "watchman",
        "eslint_d - my-a",
        "prettierd",
    ] {
        assert!(name_may_matter(comm), "{comm}");
    }
}
