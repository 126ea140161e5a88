//! Agent residue's kinds, from argv structure: the shapes the real programs run as.
use super::super::{classify, family, name_may_matter, Family};
use super::*;

fn argv(args: &[&str]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.as_bytes().to_vec()).collect()
}

fn kind(args: &[&str]) -> Option<&'static str> {
    classify(&argv(args))
}

fn named(args: &[&str]) -> Option<String> {
    name_of(&argv(args))
}

#[test]
fn mcp_servers_are_known_by_the_word_in_every_name_they_go_by() {
    for args in [
        // npm's bins: the kernel passes the symlink's path.
        &["node", "/p/node_modules/.bin/mcp-server-everything"][..],
        // `uv tool run mcp-server-time`, once the console script runs.
        &[
            "/u/tools/mcp-server-time/bin/python",
            "/u/tools/mcp-server-time/bin/mcp-server-time",
        ],
        &["python3", "-m", "mcp_server_time", "--local-timezone=UTC"],
        &["mcp-server-fetch"],
        &["uvx", "mcp-server-fetch"],
        &["uv", "tool", "run", "mcp-server-time"],
        &["pipx", "run", "mcp-server-time==0.6.2"],
        &["npx", "-y", "@x/foo-mcp@1.2.3"],
        &[
            "node",
            "/usr/lib/node_modules/npm/bin/npx-cli.js",
            "-y",
            "@playwright/mcp@latest",
        ],
        &["bunx", "context7-mcp"],
        &["pnpm", "dlx", "github-mcp-server"],
        &[
            "npm",
            "exec",
            "--yes",
            "--",
            "@modelcontextprotocol/server-everything",
        ],
        // npm writes its title over its argv.
        &["npm exec @modelcontextprotocol/server-everything"],
        &["node", "/home/u/code/weather-mcp/build/index.js"],
        &[
            "node",
            "/p/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ],
        &["python", "/home/u/weather_mcp/src/server.py"],
        &["fastmcp", "run", "server.py"],
        &["mcp", "dev", "server.py"],
        &["uv", "run", "--with", "mcp", "mcp", "run", "server.py"],
    ] {
        assert_eq!(kind(args), Some(MCP_SERVER), "{args:?}");
    }
    assert_eq!(
        named(&["node", "/p/node_modules/.bin/mcp-server-everything"]).as_deref(),
        Some("mcp-server-everything")
    );
    assert_eq!(
        named(&["npx", "-y", "@x/foo-mcp@1.2.3"]).as_deref(),
        Some("@x/foo-mcp")
    );
    assert_eq!(family(MCP_SERVER), Family::McpServer);
}

#[test]
fn a_word_inside_another_command_or_a_one_shot_of_the_sdk_is_no_mcp_server() {
    for args in [
        &["vim", "mcp.txt"][..],
        &["grep", "-r", "mcp", "."],
        &["node", "build.js"],
        &["node", "/home/u/mcp/build.js"],
        &["python3", "-c", "import mcp"],
        &["mcp", "install", "server.py"],
        &["fastmcp", "version"],
        &["npx", "prettier", "mcp.js"],
        &["npm", "run", "mcp"],
        // The inspector is a client of MCP servers.
        &[
            "npx",
            "@modelcontextprotocol/inspector",
            "node",
            "build/index.js",
        ],
        &["node", "/p/node_modules/.bin/mcp-inspector"],
        &["/opt/mcpe/bin/lint"],
        // Found by review and by the MCP tests: clients and a person's own programs say it too.
        &["mcp-agent", "run"],
        &["mcp-cli", "chat"],
        &["python3", "/home/u/mcp_eval.py", "--epochs", "100"],
        &["python3", "/tmp/x/mcp-bench/main.py"],
        &[
            "/w/target/debug/deps/mcp_agent_linux-0f3b2e",
            "--test-threads",
            "2",
        ],
    ] {
        assert_eq!(kind(args), None, "{args:?}");
    }
}

#[test]
fn headless_browsers_are_their_main_process_run_headless_or_over_a_pipe() {
    // Debian's `chromium` wrapper execs the browser in place, its own flags and the page
    // first (seen on a real `chromium --headless=new --remote-debugging-pipe about:blank`).
    assert_eq!(
        kind(&[
            "/usr/lib/chromium/chromium",
            "--show-component-extension-options",
            "--load-extension=",
            "about:blank",
            "--headless=new",
            "--no-sandbox",
            "--remote-debugging-pipe",
        ]),
        Some(HEADLESS_BROWSER)
    );
    // Its zygotes repeat `--headless=new`; they carry `--type=`.
    assert_eq!(
        kind(&[
            "/usr/lib/chromium/chromium",
            "--type=zygote",
            "--no-sandbox",
            "--headless=new",
        ]),
        None
    );
    for args in [
        &[
            "/usr/lib/chromium/chromium",
            "--headless=new",
            "--remote-debugging-port=0",
        ][..],
        &[
            "/opt/google/chrome/chrome",
            "--headless",
            "--remote-debugging-port=9222",
        ],
        &["google-chrome-stable", "--remote-debugging-pipe"],
        &[
            "/r/ms-playwright/chromium-1140/chrome-linux/chrome",
            "--headless",
            "--remote-debugging-pipe",
        ],
        &[
            "/r/ms-playwright/chromium_headless_shell-1140/chrome-linux/headless_shell",
            "--remote-debugging-pipe",
        ],
        &["chrome-headless-shell", "--remote-debugging-port=0"],
        &[
            "microsoft-edge-beta",
            "--headless",
            "--remote-debugging-port",
            "0",
        ],
        &["firefox", "-headless", "-juggler-pipe"],
        &["firefox-esr", "--headless", "--marionette"],
    ] {
        assert_eq!(kind(args), Some(HEADLESS_BROWSER), "{args:?}");
    }
    for args in [
        // A person's browser, even with a debugging port.
        &["/usr/lib/chromium/chromium"][..],
        &["/opt/google/chrome/chrome", "--remote-debugging-port=9222"],
        &["firefox", "https://example.com"],
        // The browser's helpers: only the main process is the kind.
        &["/opt/google/chrome/chrome", "--type=renderer", "--headless"],
        &["firefox", "-contentproc", "-headless", "tab"],
        &["vim", "--headless"],
        &["node", "chrome.js", "--headless"],
        // A person's one-shot job: no debugging port or pipe, so no driver, no agent's.
        &[
            "chromium",
            "--headless",
            "--print-to-pdf=/tmp/r.pdf",
            "https://x",
        ],
        &[
            "/opt/google/chrome/chrome",
            "--headless",
            "--screenshot",
            "about:blank",
        ],
        &["chrome-headless-shell", "--dump-dom", "https://x"],
        &["firefox", "--headless", "--screenshot", "https://x"],
    ] {
        assert_eq!(kind(args), None, "{args:?}");
    }
    assert_eq!(
        named(&[
            "/opt/google/chrome/chrome",
            "--headless",
            "--remote-debugging-port=0"
        ])
        .as_deref(),
        Some("chrome")
    );
}

#[test]
fn browser_drivers_are_known_by_program_and_playwrights_by_its_verb() {
    for args in [
        &["/usr/bin/chromedriver", "--port=9515"][..],
        &["geckodriver"],
        &["msedgedriver"],
        &["playwright", "run-driver"],
        &["npx", "playwright", "run-server", "--port", "0"],
        // Python's playwright starts its bundled Node.
        &[
            "/v/lib/python3.12/site-packages/playwright/driver/node",
            "/v/lib/python3.12/site-packages/playwright/driver/package/cli.js",
            "run-driver",
        ],
        &[
            "node",
            "/p/node_modules/playwright-core/cli.js",
            "run-server",
        ],
    ] {
        assert_eq!(kind(args), Some(BROWSER_DRIVER), "{args:?}");
    }
    for args in [
        &["playwright", "test"][..],
        &["npx", "playwright", "install"],
        &["node", "/p/node_modules/other/cli.js", "run-driver"],
    ] {
        assert_eq!(kind(args), None, "{args:?}");
    }
}

#[test]
fn language_servers_are_known_by_their_words_and_the_rows_the_words_miss() {
    for args in [
        &["node", "/p/node_modules/.bin/typescript-language-server", "--stdio"][..],
        &["pyright-langserver", "--stdio"],
        &["vscode-json-languageserver", "--stdio"],
        &["pylsp"],
        &["python3", "-m", "pylsp"],
        &["ocamllsp"],
        &["sourcekit-lsp"],
        &["python-lsp-server"],
        &["astro-ls", "--stdio"],
        &["erlang_ls"],
        &["node", "/p/node_modules/svelte-language-server/bin/server.js", "--stdio"],
        &["gopls"],
        &["gopls", "-remote=auto"],
        &["gopls", "serve"],
        &["clangd", "--background-index"],
        &["rust-analyzer"],
        &["zls"],
        &["texlab"],
        &["marksman", "server"],
        &["node", "/p/node_modules/typescript/lib/tsserver.js", "--serverMode", "partialSemantic"],
        &["ruby", "/g/bin/solargraph", "stdio"],
        &["intelephense", "--stdio"],
        &["ruff", "server"],
        &["deno", "lsp"],
        &["taplo", "lsp", "stdio"],
        &["biome", "lsp-proxy"],
        &["dart", "language-server"],
        // VS Code's, run by its Electron as Node.
        &["/usr/share/code/code", "--max-old-space-size=3072", "/usr/share/code/resources/app/extensions/json-language-features/server/dist/node/jsonServerMain", "--node-ipc", "--clientProcessId=10"],
        &["/usr/share/code/code", "/x/eslint/server/out/eslintServer.js", "--node-ipc"],
    ] {
        assert_eq!(kind(args), Some(LANGUAGE_SERVER), "{args:?}");
    }
    assert_eq!(family(LANGUAGE_SERVER), Family::LanguageServer);
}

/// `train_lsp_model.py` is a training run that names its subject, not a server: an `lsp`
/// among other words does not count, lest an orphaned long run be taken for residue.
#[test]
fn an_lsp_among_other_words_or_a_one_shot_of_a_servers_program_is_no_language_server() {
    for args in [
        &["python", "train_lsp_model.py"][..],
        &["ls", "-la"],
        &["vim", "pyright-langserver.md"],
        &["gopls", "check", "main.go"],
        &["rust-analyzer", "diagnostics", "."],
        // Found by review: an `lsp` first names a subject as often, unless an editor's
        // transport flag says it serves.
        &["python3", "lsp_train.py"],
        &["ruff", "check", "."],
        &["deno", "run", "main.ts"],
        &["marksman"],
        // An editor opening a folder whose name has the words is the editor.
        &["/usr/share/code/code", "/home/u/src/weather-mcp"],
        &["/usr/share/code/code", "/home/u/src/my-language-server"],
    ] {
        assert_eq!(kind(args), None, "{args:?}");
    }
    // The shared daemon is not an editor's (`daemons.rs`).
    for args in [
        &["gopls", "-listen=unix;/tmp/gopls-daemon"][..],
        &["gopls", "serve", "--listen=127.0.0.1:37374"],
    ] {
        assert_eq!(kind(args), Some("gopls-daemon"), "{args:?}");
    }
}

#[test]
fn the_name_filter_lets_agent_residue_through_as_the_kernel_names_it() {
    for comm in [
        "mcp-server-time",
        "mcp-server-ever",
        "weather-mcp",
        "chromium",
        "chrome",
        "headless_shell",
        "chrome-headless",
        "google-chrome-s",
        "firefox-esr",
        "chromedriver",
        "geckodriver",
        "playwright",
        "typescript-lang",
        "pyright-langser",
        "vscode-json-lan",
        "pylsp",
        "astro-ls",
        "gopls",
        "rust-analyzer",
        "clangd",
        "fastmcp",
        "npx",
        "uvx",
        "npm exec @model",
        "code",
    ] {
        assert!(name_may_matter(comm), "{comm}");
    }
    for comm in [
        "sleep",
        "bash",
        "systemd",
        "kworker/0:1",
        "ls",
        "vim",
        "cat",
    ] {
        assert!(!name_may_matter(comm), "{comm}");
    }
}
