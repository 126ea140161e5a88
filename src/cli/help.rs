//! What each command's `--help` says after its options: examples, and the exit codes where a
//! command has its own, in the layout of `pier --help` (`AFTER_HELP` in `mod.rs`). `pier man`
//! turns each heading into a man page section (`generate.rs`).

/// `pier scan --help`.
pub const SCAN: &str = "\
Examples:
  pier scan                          the cards: one per project, green / yellow / red
  pier scan --under ~/code           only projects under ~/code (repeatable)
  pier scan --all                    also the listening ports that are not candidates, and why
  pier scan --sample-ms 0            no activity sample: quicker, and activity does not count
  pier scan :3000                    what holds port 3000, and what `pier stop :3000` would do
  pier scan --json | jq -r '.projects[].resources[].id'
                                     the ids `pier stop` takes (the document: docs/scan-json.md)";

/// `pier stop --help`.
pub const STOP: &str = "\
Exit codes:
  0    every requested resource was stopped (--dry-run: would be), or a port asked for is free
  1    Pier could not work at all (the process table or the state folder could not be read)
  2    the command line was wrong (one sentence says what), or a bare number was given where
       no person can be asked (a pipe, --json, beside other targets, --anyway, --force)
  3    a requested resource was not stopped: refused, partially stopped, not stopped or
       failed; or
       a port asked for is held by something Pier did not stop; or
       a bare number's question was declined, or it names nothing Pier could stop; or
       --when-safe refused to arm one (green already: `pier stop ID`; a reason no arm waits
       for; a container; a notebook kernel without --yes)
  4    everything was stopped, but an outcome could not be written to its snapshot
  128+N  interrupted by signal N (130 for Ctrl-C): no further level was signalled

Examples:
  pier stop 17824-71008              stop one resource safely, by the id `pier scan` shows
  pier stop 17824-71008 17870-71020  a batch: checked together, each judged on its own
  pier stop container-fe7ae5f85c8a   a green container, through its engine
  pier stop :3000                    the one green resource that listens on port 3000
  pier stop 6989                     on a terminal, alone: asks whether pid 6989's resource (or
                                     :6989's holder) is meant, then stops it by its id; from a
                                     pipe it names the id to use and stops nothing
  pier stop --dry-run :3000          every check, then what would be signalled: nothing sent
  pier stop --project ~/code/shop    every green resource of one project
  pier stop --all-green --under ~/code
  pier stop --anyway 17824-71008     SIGTERM through every check, setting aside the reasons you confirm
  pier stop --force 17824-71008      SIGKILL, later, to what outlived that stop's SIGTERM
  pier stop --json 17824-71008       one JSON document (docs/stop-json.md)
  pier stop --when-safe 17824-71008  arm it: stopped through every check once it is safe (its
                                     client gone, its parent exited), within 8 h; fires while
                                     the app or `pier watch` runs
  pier stop --when-safe :5173 --within 2h
  pier stop --when-safe 17824-71008 --json
                                     the arm as one JSON document (docs/armed-json.md)";

/// `pier armed --help`.
pub const ARMED: &str = "\
Exit codes:
  0    listed, or every id asked was cancelled
  1    Pier could not work (the state folder could not be read, or an arm not removed)
  2    the command line was wrong (one sentence says what)
  3    an id asked for had no armed stop

Examples:
  pier armed                         each armed stop: project, kind, id, when it lapses
  pier armed --json                  one JSON document (docs/armed-json.md)
  pier armed --cancel 17824-71008    call one off
  pier armed --cancel-all            call every one off";

/// `pier history --help`.
pub const HISTORY: &str = "\
Examples:
  pier history                       each snapshot, its stop's result, and whether it can be restarted
  pier history --json                one JSON document (docs/history-json.md)
  pier history --prune               remove what cannot be restarted now (--all: everything finished)
  pier history --json | jq -r '.snapshots[] | select(.restartable) | .snapshot'
                                     the snapshots that can be restarted now";

/// `pier restart --help`.
pub const RESTART: &str = "\
Exit codes:
  0    ready: the server's recorded ports listen again
  1    Pier could not work, or could not start it (the state folder, the record, the log)
  2    the command line was wrong (one sentence says what)
  3    refused (the reason says why), or not ready within --wait

Examples:
  pier restart 17824-71008           from the resource's newest snapshot
  pier restart snap-17824-71008-1764590000000
                                     from one snapshot, as `pier history` names it
  pier restart container-fe7ae5f85c8a
                                     the same container, started again through its engine
  pier restart --last                everything the last cleanup stopped, each from its snapshot
  pier restart --wait 60 17824-71008 wait up to 60 s for its ports to listen
  pier restart --json 17824-71008    one JSON document (docs/restart-json.md)";

/// `pier protect --help`.
pub const PROTECT: &str = "\
Examples:
  pier protect                                 the list, and the file it is kept in
  pier protect add --project ~/code/payments   never offer anything in that folder
  pier protect add --port 5432 --container db  nor what listens on 5432, nor the container db
  pier protect remove --port 5432              offer it again
  pier protect list --json                     one JSON document (docs/protect-json.md)";

/// `pier completions --help`.
pub const COMPLETIONS: &str = "\
Examples:
  pier completions bash > ~/.local/share/bash-completion/completions/pier
  pier completions zsh > ~/.zfunc/_pier
                                     with fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc
  pier completions fish > ~/.config/fish/completions/pier.fish";

/// `pier man --help`.
pub const MAN: &str = "\
Examples:
  pier man | man -l -                read it now
  pier man --dir ~/.local/share/man/man1
                                     pier.1 and a page per command; then `man pier`, `man pier-stop`
  pier man stop > pier-stop.1        one command's page";

/// `pier auto --help`.
pub const AUTO: &str = "\
The rules live in rules.toml in the configuration folder (PIER_CONFIG_DIR), off by default.
They act only while the app or `pier watch` runs; `pier auto` shows that scheduler's view, or
judges a fresh scan itself (no idle clock: nothing is due).

Examples:
  pier auto                          on or off, what the rules would stop now, why not the rest
  pier auto --pause 1h               no rule acts for an hour (or 30m, or tomorrow)
  pier auto --resume                 end the pause
  pier auto --dry-run                every check on what they would stop now: nothing sent
  pier auto --under ~/code --json    one JSON document (docs/auto-json.md)";

/// `pier watch --help`.
pub const WATCH: &str = "\
Each rescan reads every resource's CPU time, reads and writes, and connections (no sample
window): an interval is idle when every counter stayed under its bound and no connection was
seen, live or closed in the last minute. Only awake time counts; after a wake nothing fires
for 10 minutes. The app does the same at each refresh.

Examples:
  pier watch                         rescan every 30 s, fire armed stops and rules, until Ctrl-C
  pier watch --under ~/code --json   one JSON object per line (docs/watch-json.md)
  pier watch --unit                  print the service that runs it at login
  pier watch --install               write that service, and print the command that turns it on

One scheduler runs per user: while the app or another pier watch holds the lock in the runtime
folder, pier watch refuses to start (exit 1) and names it.";

/// `pier mcp --help`.
pub const MCP: &str = "\
An MCP client starts it and talks to it on stdin and stdout: add the command `pier mcp` to the
client's MCP configuration. Its tools: cards, who_holds_port, plan_stop, carry_out, history, restart. A
stop is a plan first, carried out once through the whole safety chain; where the client can
ask, the person confirms it. Yellow, red and protected resources are refused whatever the
agent asks; stop anyway and Force are never offered. Every stop is recorded with the
client's name.

Examples:
  pier mcp                           serve every tool (an MCP client's command)
  pier mcp --read-only               only cards, who_holds_port and history
  pier mcp --max-stops 3             stop at most 3 resources in this session";

/// `pier doctor --help`.
pub const DOCTOR: &str = "\
It starts a test process of its own (a fixed environment, a fresh folder, a loopback listener
and a connection to it), reads it as a scan would, and signals it as a stop would. It signals
nothing else, and writes only a lock file in the state folder (and DIR, with --dump).

Exit codes:
  0    ready: everything a stop needs works on this machine
  1    something a stop needs does not work (the report names it); Pier then stops nothing
       it cannot check
  2    the command line was wrong

Examples:
  pier doctor                        what works and what does not, one line per check
  pier doctor --json                 one JSON document (docs/doctor-json.md)
  pier doctor --dump ~/pier-dump     also the raw OS buffers of the test process, as fixtures";

/// `pier app --help`.
pub const APP: &str = "\
Examples:
  pier                               the tray app: one card per project, Clean up safely
  pier --under ~/code                only projects under ~/code (also `pier app --under ~/code`)
  pier app --refresh 0               refresh only when asked and after actions

The app is its own program, pier-app, beside pier; a CLI-only install has none, and says how to
add it.";
