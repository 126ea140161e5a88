//! The container engines' own processes, by name, their clients that stand for containers, by
//! argv, and a container's processes, by their cgroup (docs/design.md §2.8). The engine's are
//! protected: never a candidate, never signalled, Force included; stopping one stops every
//! container it serves, or cuts their ports, and users of port killers report exactly that. A
//! client that stands for containers (`docker run` attached, `docker compose up`) is never
//! signalled either: a SIGTERM to it stops its containers (and `--rm` removes one) outside the
//! container rules. A container's processes are never candidates: they are its engine's to stop.

/// The engines' processes, as their programs are named:
/// - Docker Engine: `dockerd`, `containerd`, `containerd-shim-runc-v2` (one per container),
///   `docker-proxy` (one per published port, when the userland proxy is on);
/// - rootless Docker and Podman: `dockerd-rootless.sh`, `rootlesskit`, `rootlessport`,
///   `slirp4netns`, `pasta`, `conmon` (Podman's monitor, one per container), `catatonit`
///   (Podman's pause process and init), `podman`;
/// - Podman's macOS machine: `gvproxy` (its port forwarder), `vfkit`, `krunkit`;
/// - Docker Desktop (macOS): `com.docker.backend`, `com.docker.vpnkit`, `com.docker.virtualization`,
///   `Docker Desktop`;
/// - OrbStack (macOS): `OrbStack`, `OrbStack Helper`, `orbstack`, `orbstack-helper`.
///
/// Seen running here: Debian's dockerd, containerd, containerd-shim-runc-v2 and docker-proxy.
/// The others are from their projects' documentation, not run.
const ENGINE_PROGRAMS: &[&str] = &[
    "dockerd",
    "containerd",
    "containerd-shim",
    "containerd-shim-runc-v1",
    "containerd-shim-runc-v2",
    "docker-proxy",
    "rootlesskit",
    "rootlessport",
    "slirp4netns",
    "pasta",
    "conmon",
    "catatonit",
    "podman",
    "dockerd-rootless.sh",
    "gvproxy",
    "vfkit",
    "krunkit",
    "com.docker.backend",
    "com.docker.vpnkit",
    "com.docker.virtualization",
    "Docker Desktop",
    "OrbStack",
    "OrbStack Helper",
    "orbstack",
    "orbstack-helper",
];

/// The kernel cuts a process's short name: Linux keeps 15 bytes (`TASK_COMM_LEN` − 1), macOS
/// 16 (`MAXCOMLEN`). A name that long may be the start of a longer program's.
const SHORTEST_CUT_NAME: usize = 15;

/// The engine program `comm` or `argv[0]` names, if any: its file name exactly, or a short
/// name the kernel cut from one (`containerd-shim` from `containerd-shim-runc-v2`,
/// `com.docker.backe` from `com.docker.backend`).
///
/// Why by name: the engine's processes run as root (docker-proxy, containerd) or inside a VM
/// helper, where a user cannot read more of them; and a name can be borrowed by anyone, which
/// only ever protects a process that did not need it, never exposes one that did.
pub fn engine_program(comm: &str, argv: &[Vec<u8>]) -> Option<&'static str> {
    let argv0 = argv
        .first()
        .map(|a| String::from_utf8_lossy(a.rsplit(|&b| b == b'/').next().unwrap_or(a)));
    ENGINE_PROGRAMS.iter().copied().find(|&name| {
        comm == name
            || argv0.as_deref() == Some(name)
            || (comm.len() >= SHORTEST_CUT_NAME && name.starts_with(comm))
    })
}

/// A container engine's client that stands for containers while it runs (docs/design.md
/// §2.8): `docker run` attached, `docker start --attach`, `docker attach`, `docker compose
/// up` not detached, `docker compose watch`, `docker compose run` attached — and the same of
/// Podman, nerdctl and the standalone Composes. A SIGTERM to it stops its containers (`docker
/// run` forwards it; `compose up` stops the project on it), and `--rm` then removes one:
/// a stop no container rule judged, and one no restart brings back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineClient {
    /// The client's program as its argv names it: `docker`, `podman`, `nerdctl`,
    /// `com.docker.cli`, `docker-compose`, `podman-compose`.
    pub program: &'static str,
    /// One container, or a Compose project's.
    pub stands_for: StandsFor,
    /// The engine's own command that stops what it stands for, with the client's global
    /// options (`docker --context dev stop web`, `docker compose -f dev.yml stop`);
    /// `<container>` where the argv names none.
    pub stop: String,
}

/// What an engine client stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandsFor {
    /// One container: `run` attached, `start --attach`, `attach`, `compose run` attached.
    Container,
    /// A Compose project's containers: `compose up` not detached, `compose watch`.
    Compose,
}

/// How a client's command line is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// An engine's CLI: global options, then the subcommand (`run`, `container run`, `compose
    /// up`).
    Cli,
    /// A Compose of its own: its global options, then the subcommand (`up`); or, run by the
    /// Docker CLI as its plugin, Docker's global options, `compose`, then the same
    /// (docker/cli `docs/extend/cli_plugins.md`: `docker-$name [GLOBAL OPTIONS] $name …`).
    Compose,
}

/// One engine client's program.
struct Client {
    /// Its file name.
    name: &'static str,
    /// How its command line reads.
    shape: Shape,
    /// The engine's CLI that stops a container of its.
    engine: &'static str,
}

/// The engine clients. Docker Compose 1.x and podman-compose are Python scripts (`python3
/// /usr/bin/docker-compose up`); the others are programs of their own.
const CLIENTS: &[Client] = &[
    Client {
        name: "docker",
        shape: Shape::Cli,
        engine: "docker",
    },
    Client {
        name: "podman",
        shape: Shape::Cli,
        engine: "podman",
    },
    Client {
        name: "nerdctl",
        shape: Shape::Cli,
        engine: "nerdctl",
    },
    Client {
        name: "com.docker.cli",
        shape: Shape::Cli,
        engine: "docker",
    },
    Client {
        name: "docker-compose",
        shape: Shape::Compose,
        engine: "docker",
    },
    Client {
        name: "podman-compose",
        shape: Shape::Compose,
        engine: "podman",
    },
];

/// Whether a kernel short name is an engine client's program (a Python Compose's `comm` is
/// its script's name). Why: a process so named whose argv was left unread may stand for a
/// container, so it is never signalled (`judge::force_allowed`), and the stop's last look
/// reads the argv of such processes (`stop::checks::last_look`) to tell.
pub fn is_client_program(comm: &str) -> bool {
    CLIENTS.iter().any(|c| c.name == comm)
}

/// The client program a process stands for containers with, if it does
/// ([`engine_client`]); fail closed: a client's program whose argv was not read may be one.
pub fn stands_for_containers(
    comm: &str,
    argv: &[Vec<u8>],
    argv_unread: bool,
) -> Option<&'static str> {
    if argv_unread {
        return CLIENTS.iter().find(|c| c.name == comm).map(|c| c.name);
    }
    engine_client(argv).map(|c| c.program)
}

/// The engine client `argv` is, read from its structure: the program by file name (or the
/// Python script of a Compose), its global options, the subcommand, and that subcommand's
/// options — never a substring of the line. `None` for anything that stands for no running
/// container: `docker ps`, `docker logs -f`, `docker run -d`, `docker compose up -d`,
/// `docker compose up --wait` (which detaches), a build, or another program.
///
/// Why it errs towards "client": what it reads wrong can only keep a process from a signal.
/// An option it does not know is taken to take no value, so at the subcommand's place the
/// word after it is tried both as its value and as the subcommand; and `run`'s options are
/// read only up to the first word that is not one (the image, after which the words are the
/// container's own command), so a `-d` it cannot place reads as attached.
pub fn engine_client(argv: &[Vec<u8>]) -> Option<EngineClient> {
    let words: Vec<String> = argv
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let (client, rest) = client_and_args(&words)?;
    let (program, engine) = (client.name, client.engine);
    let engine_cmd = vec![engine.to_owned()];
    match client.shape {
        Shape::Cli => cli(program, engine, rest),
        Shape::Compose => {
            // Run as Docker's plugin: `docker-compose [docker's options] compose …`.
            let plugin = subcommands(rest, &CLI_GLOBALS)
                .into_iter()
                .find(|&at| rest[at] == "compose");
            match plugin {
                Some(at) => {
                    let engine_cmd: Vec<String> =
                        engine_cmd.into_iter().chain(rest[..at].to_vec()).collect();
                    let mut project = engine_cmd.clone();
                    project.push("compose".to_owned());
                    compose(program, &engine_cmd, &project, &rest[at + 1..])
                }
                None => compose(program, &engine_cmd, &[program.to_owned()], rest),
            }
        }
    }
}

/// The client program `argv` runs, and the words after it.
fn client_and_args(argv: &[String]) -> Option<(&'static Client, &[String])> {
    let by_name = |name: &str| CLIENTS.iter().find(|c| c.name == name);
    let first = file_name(argv.first()?);
    if let Some(client) = by_name(first) {
        return Some((client, &argv[1..]));
    }
    if !is_python(first) {
        return None;
    }
    // `python3 [-u -I …] /usr/bin/docker-compose up`: the interpreter's options, the script.
    let mut at = 1;
    while let Some(w) = argv.get(at).filter(|w| w.starts_with('-')) {
        match w.as_str() {
            // Inline code or a module: no script names the program.
            "-c" | "-m" => return None,
            "-W" | "-X" => at += 2,
            _ => at += 1,
        }
    }
    let client = by_name(file_name(argv.get(at)?)).filter(|c| c.shape == Shape::Compose)?;
    Some((client, &argv[at + 1..]))
}

fn file_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `python`, `python3`, `python3.12`.
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// An engine CLI's subcommand after its global options.
fn cli(program: &'static str, engine: &str, words: &[String]) -> Option<EngineClient> {
    subcommands(words, &CLI_GLOBALS).into_iter().find_map(|at| {
        let engine_cmd: Vec<String> = std::iter::once(engine.to_owned())
            .chain(words[..at].to_vec())
            .collect();
        let container = |name: Option<&str>| EngineClient {
            program,
            stands_for: StandsFor::Container,
            stop: stop_container(&engine_cmd, name),
        };
        let (verb, rest) = words[at..].split_first()?;
        // `docker container run|start|attach` is `docker run|start|attach`.
        let (verb, rest) = match (verb.as_str(), rest.split_first()) {
            ("container", Some((verb, rest))) => (verb.as_str(), rest),
            (verb, _) => (verb, rest),
        };
        match verb {
            "run" => {
                let run = read_run(rest, &RUN);
                (!run.detached).then(|| container(run.name))
            }
            "start" => {
                let (attached, name) = read_start(rest);
                attached.then(|| container(name))
            }
            "attach" => Some(container(first_word(rest, &ATTACH))),
            "compose" if words[at] == "compose" => {
                let mut project = engine_cmd.clone();
                project.push("compose".to_owned());
                compose(program, &engine_cmd, &project, rest)
            }
            _ => None,
        }
    })
}

/// A Compose's subcommand after its global options: `up` not detached and `watch` stand for
/// the project's containers, `run` attached for its one container. `engine_cmd`: the engine's
/// CLI with its global options (`docker --context dev`); `project_cmd`: the Compose as
/// invoked (`docker compose`, `docker-compose`).
fn compose(
    program: &'static str,
    engine_cmd: &[String],
    project_cmd: &[String],
    words: &[String],
) -> Option<EngineClient> {
    subcommands(words, &COMPOSE_GLOBALS)
        .into_iter()
        .find_map(|at| {
            let (verb, rest) = words[at..].split_first()?;
            let project = || EngineClient {
                program,
                stands_for: StandsFor::Compose,
                stop: format!(
                    "{} stop",
                    shell_words(project_cmd.iter().chain(&words[..at]))
                ),
            };
            match verb.as_str() {
                "up" => (!compose_up_detached(rest)).then(project),
                "watch" => Some(project()),
                "run" => {
                    let run = read_run(rest, &COMPOSE_RUN);
                    (!run.detached).then(|| EngineClient {
                        program,
                        stands_for: StandsFor::Container,
                        stop: stop_container(engine_cmd, run.name),
                    })
                }
                _ => None,
            }
        })
}

/// `docker stop NAME`, with the engine's global options; `<container>` for a container the
/// argv does not name.
fn stop_container(engine_cmd: &[String], name: Option<&str>) -> String {
    let name = name.map_or_else(|| "<container>".to_owned(), shell_word);
    format!("{} stop {name}", shell_words(engine_cmd))
}

/// Words as a shell reads them back: a word with anything but plain characters in single
/// quotes.
fn shell_words<'w>(words: impl IntoIterator<Item = &'w String>) -> String {
    words
        .into_iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The options of one place in a command line, as the program parses them (Go's pflag, and
/// the Python Composes' parsers alike): the long and short ones that take a value — in the
/// next word, after `=`, or (short) in the rest of the word — and those known to take none.
/// Any other option is unknown: whether the next word is its value cannot be told.
struct Options {
    long_values: &'static [&'static str],
    short_values: &'static str,
    long_flags: &'static [&'static str],
    short_flags: &'static str,
}

/// Docker's global options (`docker --help`, Docker 28), and those of Podman and nerdctl
/// that take a value. An option listed as taking a value that takes none would hide the
/// subcommand, so only options that take one in every client are listed.
const CLI_GLOBALS: Options = Options {
    long_values: &[
        // Docker's.
        "config",
        "context",
        "host",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
        // Podman's.
        "connection",
        "url",
        "identity",
        "root",
        "runroot",
        "runtime",
        "runtime-flag",
        "storage-driver",
        "storage-opt",
        "cgroup-manager",
        "conmon",
        "events-backend",
        "hooks-dir",
        "imagestore",
        "module",
        "network-cmd-path",
        "network-config-dir",
        "tmpdir",
        "volumepath",
        "db-backend",
        "ssh",
        "out",
        // nerdctl's.
        "address",
        "namespace",
        "snapshotter",
        "cni-path",
        "cni-netconfpath",
        "data-root",
        "hosts-dir",
    ],
    short_values: "cHla",
    long_flags: &[
        "debug",
        "tls",
        "tlsverify",
        "remote",
        "syslog",
        "noout",
        "transient-store",
        "debug-full",
        "experimental",
        "insecure-registry",
    ],
    short_flags: "Dr",
};

/// Compose's global options: Compose 2's (`docker compose --help`), 1.x's and
/// podman-compose's that take a value.
const COMPOSE_GLOBALS: Options = Options {
    long_values: &[
        "file",
        "project-name",
        "project-directory",
        "env-file",
        "profile",
        "ansi",
        "progress",
        "parallel",
        "context",
        "host",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
        "podman-path",
        "podman-args",
        "podman-pull-args",
        "podman-push-args",
        "podman-build-args",
        "podman-inspect-args",
        "podman-run-args",
        "podman-start-args",
        "podman-stop-args",
        "podman-rm-args",
        "podman-volume-args",
        "in-pod",
        "pod-args",
    ],
    short_values: "fpcH",
    long_flags: &[
        "all-resources",
        "compatibility",
        "dry-run",
        "verbose",
        "no-ansi",
        "tls",
        "tlsverify",
        "skip-hostname-check",
        "no-pod",
        "no-cleanup",
        "no-normalize",
    ],
    short_flags: "",
};

/// `docker run`'s options that take a value (`docker run --help`, Docker 28, with the hidden
/// `--net` and `--net-alias`), and a few of Podman's; its flags of one letter.
const RUN: Options = Options {
    long_values: &[
        "add-host",
        "annotation",
        "attach",
        "blkio-weight",
        "blkio-weight-device",
        "cap-add",
        "cap-drop",
        "cgroup-parent",
        "cgroupns",
        "cidfile",
        "cpu-count",
        "cpu-percent",
        "cpu-period",
        "cpu-quota",
        "cpu-rt-period",
        "cpu-rt-runtime",
        "cpu-shares",
        "cpus",
        "cpuset-cpus",
        "cpuset-mems",
        "detach-keys",
        "device",
        "device-cgroup-rule",
        "device-read-bps",
        "device-read-iops",
        "device-write-bps",
        "device-write-iops",
        "dns",
        "dns-option",
        "dns-search",
        "domainname",
        "entrypoint",
        "env",
        "env-file",
        "expose",
        "gpus",
        "group-add",
        "health-cmd",
        "health-interval",
        "health-retries",
        "health-start-interval",
        "health-start-period",
        "health-timeout",
        "hostname",
        "io-maxbandwidth",
        "io-maxiops",
        "ip",
        "ip6",
        "ipc",
        "isolation",
        "kernel-memory",
        "label",
        "label-file",
        "link",
        "link-local-ip",
        "log-driver",
        "log-opt",
        "mac-address",
        "memory",
        "memory-reservation",
        "memory-swap",
        "memory-swappiness",
        "mount",
        "name",
        "net",
        "net-alias",
        "network",
        "network-alias",
        "oom-score-adj",
        "pid",
        "pids-limit",
        "platform",
        "publish",
        "pull",
        "restart",
        "runtime",
        "security-opt",
        "shm-size",
        "stop-signal",
        "stop-timeout",
        "storage-opt",
        "sysctl",
        "tmpfs",
        "ulimit",
        "user",
        "userns",
        "uts",
        "volume",
        "volume-driver",
        "volumes-from",
        "workdir",
        // Podman's.
        "pod",
        "secret",
        "arch",
        "os",
        "variant",
        "tz",
        "uidmap",
        "gidmap",
        "pidfile",
    ],
    short_values: "acehlmpuvw",
    long_flags: &[],
    short_flags: "diPqt",
};

/// `docker start`'s options that take a value; `-a` (`--attach`) and `-i` take none.
const START: Options = Options {
    long_values: &["checkpoint", "checkpoint-dir", "detach-keys"],
    short_values: "",
    long_flags: &[],
    short_flags: "ai",
};

/// `docker attach`'s option that takes a value.
const ATTACH: Options = Options {
    long_values: &["detach-keys"],
    short_values: "",
    long_flags: &[],
    short_flags: "",
};

/// `docker compose up`'s options that take a value; `-d`, `-V` and `-w` take none.
const COMPOSE_UP: Options = Options {
    long_values: &[
        "timeout",
        "scale",
        "attach",
        "no-attach",
        "exit-code-from",
        "pull",
        "wait-timeout",
    ],
    short_values: "t",
    long_flags: &[],
    short_flags: "dVw",
};

/// `docker compose run`'s options that take a value; `-d`, `-i` and `-T` take none.
const COMPOSE_RUN: Options = Options {
    long_values: &[
        "env",
        "env-from-file",
        "entrypoint",
        "label",
        "name",
        "publish",
        "user",
        "volume",
        "workdir",
        "cap-add",
        "cap-drop",
        "pull",
    ],
    short_values: "elpuvw",
    long_flags: &[],
    short_flags: "diT",
};

/// One piece of a command line, as [`Options`] read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item<'w> {
    /// An option, by name without its dashes, with the value it was given (after `=`, in the
    /// rest of a short group, or the next word for one that takes a value).
    Opt(&'w str, Option<&'w str>),
    /// An option neither list knows: the next word may be its value.
    Unknown(&'w str),
    /// The word at this index is not an option (after `--`, none is).
    Word(usize),
}

impl<'w> Item<'w> {
    /// The option's name and value, whether known or not.
    fn option(self) -> Option<(&'w str, Option<&'w str>)> {
        match self {
            Item::Opt(name, value) => Some((name, value)),
            Item::Unknown(name) => Some((name, None)),
            Item::Word(_) => None,
        }
    }
}

/// `words` read as options and words, by `opts`: `--name value`, `--name=value`, `-itd`,
/// `-p8080:80`, `-d=false`, `--`.
fn items<'w>(words: &'w [String], opts: &Options) -> Vec<Item<'w>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if w == "--" {
            out.extend((i..words.len()).map(Item::Word));
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            match long.split_once('=') {
                Some((name, value)) => out.push(Item::Opt(name, Some(value))),
                None if opts.long_values.contains(&long) => {
                    out.push(Item::Opt(long, words.get(i).map(String::as_str)));
                    i += 1;
                }
                None if opts.long_flags.contains(&long) => out.push(Item::Opt(long, None)),
                None => out.push(Item::Unknown(long)),
            }
            continue;
        }
        let Some(group) = w.strip_prefix('-').filter(|g| !g.is_empty()) else {
            out.push(Item::Word(i - 1));
            continue;
        };
        // Each letter a flag, until one takes the rest of the word (or the next word) as
        // its value, or one is given a value after `=`.
        for (at, c) in group.char_indices() {
            let name = &group[at..at + c.len_utf8()];
            let rest = &group[at + c.len_utf8()..];
            if opts.short_values.contains(c) {
                if rest.is_empty() {
                    out.push(Item::Opt(name, words.get(i).map(String::as_str)));
                    i += 1;
                } else {
                    out.push(Item::Opt(
                        name,
                        Some(rest.strip_prefix('=').unwrap_or(rest)),
                    ));
                }
                break;
            }
            if let Some(value) = rest.strip_prefix('=') {
                out.push(Item::Opt(name, Some(value)));
                break;
            }
            if !opts.short_flags.contains(c) {
                // The rest of the word may be its value: read no further in it.
                out.push(Item::Unknown(name));
                break;
            }
            out.push(Item::Opt(name, None));
        }
    }
    out
}

/// Where the subcommand may be, after the global options `opts`: the first word that is not
/// an option, and — when an unknown option came right before it, which may have taken it as
/// its value — the next such word too.
fn subcommands(words: &[String], opts: &Options) -> Vec<usize> {
    let mut out = Vec::new();
    let mut unsure = false;
    for item in items(words, opts) {
        match item {
            Item::Word(at) => {
                out.push(at);
                if !unsure {
                    break;
                }
                unsure = false;
            }
            Item::Unknown(_) => unsure = true,
            Item::Opt(..) => unsure = false,
        }
    }
    out
}

/// A boolean option's value as pflag parses it; one it would refuse reads as false.
fn truthy(value: Option<&str>) -> bool {
    matches!(
        value,
        None | Some("true" | "True" | "TRUE" | "t" | "T" | "1")
    )
}

/// What a `run`'s options say, up to the image (or the service).
struct RunRead<'w> {
    detached: bool,
    name: Option<&'w str>,
}

/// A `run`'s options up to its first word, the image or service: after it come the
/// container's own command and arguments (`docker run img sh -c 'x -d'`), never read.
/// Detached by `-d`, `--detach`, `--detach=true`; the last one given counts, as in pflag.
fn read_run<'w>(words: &'w [String], opts: &Options) -> RunRead<'w> {
    let mut read = RunRead {
        detached: false,
        name: None,
    };
    for item in items(words, opts) {
        let Some((option, value)) = item.option() else {
            break;
        };
        match option {
            "d" | "detach" => read.detached = truthy(value),
            "name" => read.name = value,
            _ => {}
        }
    }
    read
}

/// Whether a `start` attaches (`-a`, `--attach`), and the first container it names. Its
/// options may come after the names, as in every pflag command that allows it.
fn read_start(words: &[String]) -> (bool, Option<&str>) {
    let mut attached = false;
    let mut name = None;
    for item in items(words, &START) {
        match item.option() {
            Some(("a" | "attach", value)) => attached = truthy(value),
            Some(_) => {}
            None => {
                if let Item::Word(at) = item {
                    name = name.or(Some(words[at].as_str()));
                }
            }
        }
    }
    (attached, name)
}

/// The first word that is not an option: the container an `attach` names.
fn first_word<'w>(words: &'w [String], opts: &Options) -> Option<&'w str> {
    items(words, opts).into_iter().find_map(|item| match item {
        Item::Word(at) => Some(words[at].as_str()),
        _ => None,
    })
}

/// Whether a `compose up` detaches: `-d`, `--detach`, or `--wait` (which implies it, Compose
/// 2's `docker compose up --help`). Its options may follow the services.
fn compose_up_detached(words: &[String]) -> bool {
    let mut detached = false;
    let mut waits = false;
    for (option, value) in items(words, &COMPOSE_UP)
        .into_iter()
        .filter_map(Item::option)
    {
        match option {
            "d" | "detach" => detached = truthy(value),
            "wait" => waits = truthy(value),
            _ => {}
        }
    }
    detached || waits
}

/// The container id in a process's cgroup path, if the process runs in a container: a path
/// component that is a 64-hex-digit id, bare or as the engines and runtimes name their scopes
/// — Docker's `/docker/<id>` (cgroup v1 and v2 with the cgroupfs driver) and
/// `docker-<id>.scope` (systemd driver, rootless too), Podman's `libpod-<id>.scope`,
/// containerd's and CRI-O's `cri-containerd-<id>.scope`, `crio-<id>.scope`, Kubernetes'
/// `/kubepods/…/<id>`.
///
/// Why: a container's processes are its engine's to stop. Run by root (rootful Docker, to
/// Pier as root) or by the user (rootless Podman), they are never candidates of their own;
/// their listeners are their container's (a host-network container's are host listeners).
pub fn container_of_cgroup(cgroup: &str) -> Option<&str> {
    cgroup.split('/').find_map(|part| {
        let part = part.strip_suffix(".scope").unwrap_or(part);
        let id = part.rsplit('-').next().unwrap_or(part);
        (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_s_cgroup_names_its_id_whatever_the_engine() {
        let id = "cac68f7bb0f081d64600761236a20c9ad9a367ab2b70ef781632b89591b389ee";
        for path in [
            format!("/docker/{id}"),
            format!("/system.slice/docker-{id}.scope"),
            format!("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{id}.scope/container"),
            format!("/kubepods.slice/kubepods-besteffort.slice/cri-containerd-{id}.scope"),
            format!("/kubepods/besteffort/pod1234/{id}"),
        ] {
            assert_eq!(container_of_cgroup(&path), Some(id), "{path}");
        }
        for path in [
            "/",
            "/user.slice/user-1000.slice/session-2.scope",
            "/system.slice/docker.service",
            // 63 digits: not an id.
            "/docker/ac68f7bb0f081d64600761236a20c9ad9a367ab2b70ef781632b89591b389ee",
        ] {
            assert_eq!(container_of_cgroup(path), None, "{path}");
        }
    }

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn the_engines_processes_are_named_by_comm_by_a_cut_comm_or_by_argv0() {
        let proxy = argv(&["/usr/sbin/docker-proxy", "-proto", "tcp"]);
        assert_eq!(engine_program("docker-proxy", &proxy), Some("docker-proxy"));
        // comm as the kernel cut it, argv unread.
        assert_eq!(
            engine_program("containerd-shim", &[]),
            Some("containerd-shim")
        );
        assert_eq!(
            engine_program("com.docker.backe", &[]),
            Some("com.docker.backend")
        );
        // A renamed thread keeps its program in argv[0].
        let shim = argv(&["/usr/bin/containerd-shim-runc-v2", "-namespace", "moby"]);
        assert_eq!(
            engine_program("runc", &shim),
            Some("containerd-shim-runc-v2")
        );
        assert_eq!(
            engine_program("OrbStack Helper", &[]),
            Some("OrbStack Helper")
        );
    }

    #[test]
    fn an_engine_client_standing_for_containers_is_read_from_its_argv_structure() {
        use StandsFor::{Compose, Container};
        for (words, program, stands_for, stop) in [
            (
                &["docker", "run", "--rm", "-p", "8080:80", "img"][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            (
                &[
                    "/usr/bin/docker",
                    "--context",
                    "x",
                    "run",
                    "--rm",
                    "-p",
                    "8080:80",
                    "img",
                ][..],
                "docker",
                Container,
                "docker --context x stop <container>",
            ),
            (
                &[
                    "docker",
                    "-H",
                    "unix:///tmp/d.sock",
                    "container",
                    "run",
                    "--name",
                    "web",
                    "img",
                ][..],
                "docker",
                Container,
                "docker -H unix:///tmp/d.sock stop web",
            ),
            (
                &[
                    "docker",
                    "-Hunix:///tmp/d.sock",
                    "-D",
                    "run",
                    "--name=web",
                    "-it",
                    "img",
                ][..],
                "docker",
                Container,
                "docker -Hunix:///tmp/d.sock -D stop web",
            ),
            // The container's own `-d`, after the image, is not docker's.
            (
                &[
                    "docker", "run", "-p", "80:80", "-e", "X=-d", "img", "sh", "-c", "x -d",
                ][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            (
                &["docker", "run", "--detach=false", "-d=false", "img"][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            // `-e` takes the rest of the word: `-ed` sets a variable `d`.
            (
                &["docker", "run", "-ed", "img"][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            (
                &["docker", "start", "-a", "web"][..],
                "docker",
                Container,
                "docker stop web",
            ),
            (
                &["docker", "start", "web", "--attach"][..],
                "docker",
                Container,
                "docker stop web",
            ),
            (
                &["docker", "container", "start", "-ai", "web"][..],
                "docker",
                Container,
                "docker stop web",
            ),
            (
                &["docker", "attach", "web"][..],
                "docker",
                Container,
                "docker stop web",
            ),
            (
                &["docker", "compose", "up"][..],
                "docker",
                Compose,
                "docker compose stop",
            ),
            (
                &[
                    "docker",
                    "--context",
                    "x",
                    "compose",
                    "-f",
                    "f.yml",
                    "-p",
                    "shop",
                    "up",
                    "--build",
                    "web",
                ][..],
                "docker",
                Compose,
                "docker --context x compose -f f.yml -p shop stop",
            ),
            (
                &["docker", "compose", "up", "--wait=false", "-t", "5"][..],
                "docker",
                Compose,
                "docker compose stop",
            ),
            (
                &["docker", "compose", "watch"][..],
                "docker",
                Compose,
                "docker compose stop",
            ),
            (
                &[
                    "docker", "compose", "run", "--rm", "web", "sh", "-c", "x -d",
                ][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            // The Compose plugin, as the Docker CLI runs it.
            (
                &[
                    "/usr/libexec/docker/cli-plugins/docker-compose",
                    "compose",
                    "-f",
                    "dev.yml",
                    "up",
                ][..],
                "docker-compose",
                Compose,
                "docker compose -f dev.yml stop",
            ),
            (
                &["docker-compose", "up"][..],
                "docker-compose",
                Compose,
                "docker-compose stop",
            ),
            (
                &["docker-compose", "--file=dev.yml", "up", "web"][..],
                "docker-compose",
                Compose,
                "docker-compose --file=dev.yml stop",
            ),
            // Compose 1.x and podman-compose are Python scripts.
            (
                &["/usr/bin/python3", "/usr/bin/docker-compose", "up"][..],
                "docker-compose",
                Compose,
                "docker-compose stop",
            ),
            (
                &["python3", "-u", "/usr/local/bin/podman-compose", "up"][..],
                "podman-compose",
                Compose,
                "podman-compose stop",
            ),
            (
                &["podman", "run", "--rm", "-p", "8080:80", "img"][..],
                "podman",
                Container,
                "podman stop <container>",
            ),
            (
                &["podman", "--remote", "--connection", "m", "run", "img"][..],
                "podman",
                Container,
                "podman --remote --connection m stop <container>",
            ),
            (
                &["podman", "compose", "up"][..],
                "podman",
                Compose,
                "podman compose stop",
            ),
            (
                &["nerdctl", "--namespace", "k8s.io", "run", "img"][..],
                "nerdctl",
                Container,
                "nerdctl --namespace k8s.io stop <container>",
            ),
            // An option Pier does not know: the next word is its value or the subcommand.
            (
                &["docker", "--new-option", "v", "run", "img"][..],
                "docker",
                Container,
                "docker --new-option v stop <container>",
            ),
            (
                &["docker", "--new-flag", "run", "img"][..],
                "docker",
                Container,
                "docker --new-flag stop <container>",
            ),
            // So is a run option it does not know: the reading ends at the next word.
            (
                &["docker", "run", "--new-option", "v", "-d", "img"][..],
                "docker",
                Container,
                "docker stop <container>",
            ),
            (
                &["docker", "run", "--name", "it's", "img"][..],
                "docker",
                Container,
                r"docker stop 'it'\''s'",
            ),
        ] {
            let found = engine_client(&argv(words));
            assert_eq!(
                found,
                Some(EngineClient {
                    program,
                    stands_for,
                    stop: stop.to_owned()
                }),
                "{words:?}"
            );
        }
    }

    #[test]
    fn what_stands_for_no_running_container_is_no_engine_client() {
        for words in [
            &["docker", "run", "-d", "img"][..],
            &["docker", "run", "-itd", "img"],
            &["docker", "run", "--detach", "img"],
            &["docker", "run", "-p", "80:80", "--name", "web", "-d", "img"],
            &["docker", "run", "-dp", "80:80", "img"],
            &["docker", "run", "--detach=true", "img"],
            &["docker", "container", "run", "-d", "img"],
            &["docker", "ps"],
            &["docker", "logs", "-f", "web"],
            &["docker", "exec", "-it", "web", "sh"],
            &["docker", "build", "."],
            &["docker", "start", "web"],
            &["docker", "start", "-a=false", "web"],
            // `--context` takes `run` as its value: the subcommand is `ps`.
            &["docker", "--context", "run", "ps"],
            &["docker", "compose", "up", "-d"],
            &["docker", "compose", "up", "web", "--detach"],
            &["docker", "compose", "up", "-Vd"],
            &["docker", "compose", "up", "--wait"],
            &["docker", "compose", "logs", "-f"],
            &["docker", "compose", "run", "-d", "web"],
            &["docker-compose", "up", "-d"],
            &[
                "/usr/libexec/docker/cli-plugins/docker-compose",
                "compose",
                "up",
                "-d",
            ],
            &[
                "/usr/libexec/docker/cli-plugins/docker-compose",
                "docker-cli-plugin-metadata",
            ],
            &["podman", "run", "-d", "img"],
            &["docker"],
            &["dockerd", "run"],
            // A file named docker is not the program.
            &["vim", "docker"],
            &["cat", "./docker"],
            &["/home/me/docker/run.sh", "run"],
            &["node", "docker", "run", "img"],
            &["python3", "docker", "run", "img"],
            &["python3", "-c", "import os; os.system('docker-compose up')"],
            &["python3", "train.py", "docker-compose", "up"],
        ] {
            assert_eq!(engine_client(&argv(words)), None, "{words:?}");
        }
    }

    #[test]
    fn a_client_program_whose_argv_was_not_read_may_stand_for_a_container() {
        assert_eq!(stands_for_containers("docker", &[], true), Some("docker"));
        assert_eq!(
            stands_for_containers("docker-compose", &[], true),
            Some("docker-compose")
        );
        assert_eq!(stands_for_containers("node", &[], true), None);
        let ps = argv(&["docker", "ps"]);
        assert_eq!(stands_for_containers("docker", &ps, false), None);
        let run = argv(&["docker", "run", "img"]);
        assert_eq!(stands_for_containers("docker", &run, false), Some("docker"));
        assert!(is_client_program("docker") && !is_client_program("dockerd"));
    }

    #[test]
    fn dev_tools_and_short_prefixes_are_not_the_engine() {
        for (comm, words) in [
            ("node", vec!["node", "vite"]),
            ("python3", vec!["python3", "-m", "http.server"]),
            // A short name is a whole name: "docker" (the CLI) and "dock" are not dockerd.
            ("docker", vec!["docker", "compose", "up"]),
            ("dock", vec!["dock"]),
            ("pas", vec!["pas"]),
        ] {
            assert_eq!(engine_program(comm, &argv(&words)), None, "{comm}");
        }
    }
}
