//! Data services (docs/design.md §2.12): databases, caches, queues, search and
//! object stores, emulators. Their data lives in them, so they are never green and Pier never
//! stops one, not even with Force; the card names where the data is and the tool's own clean
//! shutdown command instead.
//!
//! A resource is one when any member is (one is enough: the whole tree goes down together):
//! - **by name**: [`SERVICES`], read from argv structure — the program's basename (or the first
//!   word of a title it wrote over its argv, `postgres: checkpointer`, `redis-server *:6380`),
//!   its kernel name, an interpreter's script or `-m` module, a JVM's main class or `-jar`, an
//!   Erlang VM's `-s` application — never a substring of the command line;
//! - **by behaviour**: it holds a lock on, or keeps open for writing, a regular file inside the
//!   project that is not one of the tool's own working files ([`is_data`]).
//!
//! What is *not* data, by rule: the standard streams (fds 0–2: a shell's `> dev.log` puts them
//! there, they are output for a person, not state), and what a tool regenerates from the
//! project or appends for a person to read — dependency folders, build outputs and caches
//! ([`WORKING_DIRS`]), logs (`log/`, `logs/`, `*.log`) and the VCS's own folder. Losing any of
//! those costs a rebuild or a scroll-back, never data; a write anywhere else in the project
//! may be someone's only copy.
//!
//! A member whose open files cannot be read makes the resource yellow with the same kind: it
//! cannot be ruled out. The facts are read only for resources inside a project
//! ([`read_and_judge`]: each member's fds that named a path when the scan's survey walked it,
//! or all of them, `Probe::writes_of`); the rule itself ([`judge`]) is pure.

use std::path::{Component, Path, PathBuf};

use super::kinds::{basename, is_interpreter};
use crate::model::card::{Evidence, EvidenceKind, Level, Member, Port};
use crate::probe::{Hold, Pid, Probe, ProbeError, ProcessInfo, Written};
use crate::words;

/// Where a service keeps its data when no flag says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fallback {
    /// Its working directory, else the folder of the files it writes: it `chdir`s into its
    /// data folder (postgres into `-D`, redis into `--dir`), so a relative flag names its cwd.
    Cwd,
    /// The folder of the files it writes, else its working directory.
    Files,
    /// Memory only, unless a flag names a folder.
    Memory,
}

/// The tool's own clean shutdown command, filled in from what its argv and ports say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shutdown {
    /// `pg_ctl -D DIR stop -m fast`.
    PgCtl,
    /// `<cli> -p PORT shutdown` (redis and the servers that speak its protocol).
    RespCli(&'static str),
    /// `mysqladmin -h 127.0.0.1 -P PORT shutdown` (by TCP: with `localhost` the client would
    /// take the default socket, another server's).
    MysqlAdmin,
    /// `mongod --dbpath DIR --shutdown`.
    Mongod,
    /// `cockroach node drain --self --shutdown --host localhost:PORT` (`--insecure` when it
    /// runs so).
    Cockroach,
    /// `nats-server --signal quit=PID`.
    Nats,
    /// A fixed command.
    Command(&'static str),
    /// None of its own: "quit it its own way …, or end it yourself once its data is safe".
    Generic,
}

/// How one service is told by its argv.
#[derive(Debug, Clone, Copy)]
enum Match {
    /// The program (basename, title's first word, kernel name, script, `-m` module's first
    /// part) is this.
    Program(&'static str),
    /// The program is this and its subcommand one of these (`cockroach start`).
    Sub(&'static str, &'static [&'static str]),
    /// A JVM running this main class (`-m module/Class` too).
    MainClass(&'static str),
    /// A JVM running this `-jar` (its file name without `.jar` and a version).
    Jar(&'static str),
    /// An Erlang VM (`beam.smp`) starting this application (`-s rabbit`).
    Erlang(&'static str),
}

/// One row of the table of data services.
struct Service {
    /// How it is named in the evidence.
    tool: &'static str,
    matches: &'static [Match],
    /// Flags whose value is its data folder. An entry ending in `=` takes its value attached
    /// only (`-Epath.data=`); a two-letter one may take it attached (`-D/p/data`).
    data_flags: &'static [&'static str],
    /// A subcommand whose first operand is its data folder (`minio server DIR`).
    data_operand_after: Option<&'static str>,
    /// Flags that say it keeps its data in memory (`-inMemory`).
    memory_flags: &'static [&'static str],
    default: Fallback,
    /// Flags whose value is its port (`--port 6380`, `--listen-addr=host:26257`).
    port_flags: &'static [&'static str],
    /// Its port when neither a flag nor a listener says.
    default_port: Option<u16>,
    shutdown: Shutdown,
}

/// A row with no flags and the generic shutdown: filled in by each entry below.
const ROW: Service = Service {
    tool: "",
    matches: &[],
    data_flags: &[],
    data_operand_after: None,
    memory_flags: &[],
    default: Fallback::Files,
    port_flags: &[],
    default_port: None,
    shutdown: Shutdown::Generic,
};

const REDIS_DIR: &[&str] = &["--dir"];
const REDIS_PORT: &[&str] = &["--port"];

/// The data services Pier knows by name. Data, in one place: a new one is a row.
const SERVICES: &[Service] = &[
    Service {
        tool: "postgres",
        matches: &[Match::Program("postgres"), Match::Program("postmaster")],
        data_flags: &["-D"],
        default: Fallback::Cwd,
        shutdown: Shutdown::PgCtl,
        ..ROW
    },
    Service {
        tool: "mysqld",
        matches: &[
            Match::Program("mysqld"),
            Match::Program("mariadbd"),
            Match::Program("mysqld_safe"),
            Match::Program("mariadbd-safe"),
        ],
        data_flags: &["--datadir", "-h"],
        port_flags: &["--port", "-P"],
        default_port: Some(3306),
        shutdown: Shutdown::MysqlAdmin,
        ..ROW
    },
    Service {
        tool: "mongod",
        matches: &[Match::Program("mongod")],
        data_flags: &["--dbpath"],
        shutdown: Shutdown::Mongod,
        ..ROW
    },
    Service {
        tool: "redis-server",
        matches: &[
            Match::Program("redis-server"),
            Match::Program("redis-stack-server"),
        ],
        data_flags: REDIS_DIR,
        default: Fallback::Cwd,
        port_flags: REDIS_PORT,
        default_port: Some(6379),
        shutdown: Shutdown::RespCli("redis-cli"),
        ..ROW
    },
    Service {
        tool: "valkey-server",
        matches: &[Match::Program("valkey-server")],
        data_flags: REDIS_DIR,
        default: Fallback::Cwd,
        port_flags: REDIS_PORT,
        default_port: Some(6379),
        shutdown: Shutdown::RespCli("valkey-cli"),
        ..ROW
    },
    Service {
        tool: "keydb-server",
        matches: &[Match::Program("keydb-server")],
        data_flags: REDIS_DIR,
        default: Fallback::Cwd,
        port_flags: REDIS_PORT,
        default_port: Some(6379),
        shutdown: Shutdown::RespCli("keydb-cli"),
        ..ROW
    },
    Service {
        tool: "dragonfly",
        matches: &[Match::Program("dragonfly")],
        data_flags: REDIS_DIR,
        default: Fallback::Cwd,
        port_flags: REDIS_PORT,
        default_port: Some(6379),
        shutdown: Shutdown::RespCli("redis-cli"),
        ..ROW
    },
    Service {
        tool: "memcached",
        matches: &[Match::Program("memcached")],
        default: Fallback::Memory,
        ..ROW
    },
    Service {
        tool: "etcd",
        matches: &[Match::Program("etcd")],
        data_flags: &["--data-dir"],
        ..ROW
    },
    Service {
        tool: "minio",
        matches: &[Match::Sub("minio", &["server"])],
        data_operand_after: Some("server"),
        ..ROW
    },
    Service {
        tool: "clickhouse",
        matches: &[
            Match::Sub("clickhouse", &["server"]),
            Match::Program("clickhouse-server"),
        ],
        data_flags: &["--path"],
        ..ROW
    },
    Service {
        tool: "cockroach",
        matches: &[Match::Sub(
            "cockroach",
            &["start", "start-single-node", "demo"],
        )],
        data_flags: &["--store", "-s"],
        port_flags: &["--listen-addr", "--port"],
        default_port: Some(26257),
        shutdown: Shutdown::Cockroach,
        ..ROW
    },
    Service {
        tool: "nats-server",
        matches: &[Match::Program("nats-server")],
        data_flags: &["--store_dir", "-sd"],
        shutdown: Shutdown::Nats,
        ..ROW
    },
    Service {
        tool: "rabbitmq",
        matches: &[Match::Erlang("rabbit"), Match::Program("rabbitmq-server")],
        shutdown: Shutdown::Command("rabbitmqctl stop"),
        ..ROW
    },
    Service {
        tool: "elasticsearch",
        matches: &[
            Match::Program("elasticsearch"),
            Match::MainClass("org.elasticsearch.bootstrap.Elasticsearch"),
        ],
        data_flags: &["-Epath.data="],
        ..ROW
    },
    Service {
        tool: "opensearch",
        matches: &[
            Match::Program("opensearch"),
            Match::MainClass("org.opensearch.bootstrap.OpenSearch"),
        ],
        data_flags: &["-Epath.data="],
        ..ROW
    },
    Service {
        tool: "kafka",
        matches: &[Match::MainClass("kafka.Kafka")],
        shutdown: Shutdown::Command("kafka-server-stop.sh"),
        ..ROW
    },
    Service {
        tool: "zookeeper",
        matches: &[Match::MainClass(
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        )],
        ..ROW
    },
    Service {
        tool: "cassandra",
        matches: &[Match::MainClass(
            "org.apache.cassandra.service.CassandraDaemon",
        )],
        shutdown: Shutdown::Command("nodetool stopdaemon"),
        ..ROW
    },
    Service {
        tool: "influxd",
        matches: &[Match::Program("influxd")],
        data_flags: &["--engine-path"],
        ..ROW
    },
    Service {
        tool: "meilisearch",
        matches: &[Match::Program("meilisearch")],
        data_flags: &["--db-path"],
        ..ROW
    },
    Service {
        tool: "typesense",
        matches: &[Match::Program("typesense-server")],
        data_flags: &["--data-dir", "-d"],
        ..ROW
    },
    Service {
        tool: "qdrant",
        matches: &[Match::Program("qdrant")],
        ..ROW
    },
    Service {
        tool: "prometheus",
        matches: &[Match::Program("prometheus")],
        data_flags: &["--storage.tsdb.path"],
        ..ROW
    },
    Service {
        tool: "surrealdb",
        matches: &[Match::Sub("surreal", &["start"])],
        ..ROW
    },
    Service {
        tool: "temporal dev server",
        matches: &[Match::Sub("temporal", &["server"])],
        data_flags: &["--db-filename", "-f"],
        default: Fallback::Memory,
        ..ROW
    },
    Service {
        tool: "localstack",
        matches: &[
            Match::Program("localstack"),
            Match::Program("localstack-supervisor"),
        ],
        shutdown: Shutdown::Command("localstack stop"),
        ..ROW
    },
    Service {
        tool: "DynamoDB Local",
        matches: &[Match::Jar("DynamoDBLocal"), Match::Program("dynalite")],
        data_flags: &["-dbPath", "--path"],
        memory_flags: &["-inMemory"],
        ..ROW
    },
    Service {
        tool: "moto",
        matches: &[Match::Program("moto_server")],
        default: Fallback::Memory,
        ..ROW
    },
    Service {
        tool: "azurite",
        matches: &[
            Match::Program("azurite"),
            Match::Program("azurite-blob"),
            Match::Program("azurite-queue"),
            Match::Program("azurite-table"),
        ],
        data_flags: &["--location", "-l"],
        ..ROW
    },
    Service {
        tool: "firebase emulators",
        matches: &[
            Match::Sub("firebase", &["emulators:start", "emulators:exec"]),
            Match::Jar("cloud-firestore-emulator"),
            Match::Jar("firebase-database-emulator"),
        ],
        data_flags: &["--export-on-exit", "--import"],
        default: Fallback::Memory,
        ..ROW
    },
    Service {
        tool: "pubsub emulator",
        matches: &[Match::Jar("cloud-pubsub-emulator")],
        default: Fallback::Memory,
        ..ROW
    },
    Service {
        tool: "datastore emulator",
        matches: &[Match::Jar("CloudDatastore")],
        data_flags: &["--data-dir"],
        ..ROW
    },
];

/// Folders a tool regenerates from the project (dependencies, build outputs, caches) or
/// appends to for a person to read (logs), and the VCS's own: a write there is the tool's own
/// working file, never data (see the module's paragraph). Compared with whole path components
/// below the project.
pub const WORKING_DIRS: &[&str] = &[
    // Dependencies and environments.
    "node_modules",
    ".venv",
    "venv",
    // Build outputs.
    "dist",
    "build",
    "target",
    ".next",
    ".nuxt",
    ".output",
    ".svelte-kit",
    // Caches.
    ".cache",
    ".parcel-cache",
    ".turbo",
    ".vite",
    ".angular",
    ".gradle",
    ".dart_tool",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "tmp",
    // Logs.
    "log",
    "logs",
    // The VCS's own.
    ".git",
];

/// One member as the rule reads it.
#[derive(Debug, Clone)]
pub struct Seen<'a> {
    /// Its process id.
    pub pid: Pid,
    /// The kernel's short name.
    pub comm: &'a str,
    /// argv as read.
    pub argv: &'a [Vec<u8>],
    /// Its working directory, when read.
    pub cwd: Option<&'a Path>,
    /// The TCP ports it listens on.
    pub ports: Vec<u16>,
    /// What [`Probe::writes`] answered for it.
    pub writes: &'a Result<Vec<Written>, ProbeError>,
}

/// Where a data service keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataAt {
    /// In this folder.
    Folder(PathBuf),
    /// In memory only.
    Memory,
    /// Nothing Pier read says (a config file of its own would).
    Unknown,
}

/// How a resource came to be a data service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnownBy {
    /// A row of [`SERVICES`].
    Name,
    /// A data file it holds ([`DataService::file`]); named by its program.
    Files,
}

/// A data service, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataService {
    /// The tool (`redis-server`), or for one known by its files, its program.
    pub tool: String,
    /// The resource's kind when nothing else names it: a data service is a kind of its own
    /// (`redis-server`, `dynamodb-local`; for one known by its files, its program's name).
    pub kind: String,
    /// The member that made it one.
    pub pid: Pid,
    /// How it was known.
    pub known_by: KnownBy,
    /// Where its data is.
    pub data: DataAt,
    /// A data file a member holds, and how (the first found; the named member's first).
    pub file: Option<(PathBuf, Hold)>,
    /// Its own clean shutdown command; `None`: it has none Pier knows.
    pub shutdown: Option<String>,
}

/// What the rule concluded about a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It is a data service.
    Service(DataService),
    /// It is none by name or by any file read, but a member's open files could not be read.
    Unreadable {
        /// The member.
        pid: Pid,
        /// Its short command line.
        command: String,
        /// Why they could not be read.
        why: String,
    },
}

/// Whether `w`, held by a member of a resource of `project`, is data (see the module's
/// paragraph): not a standard stream, inside the project, and not under one of
/// [`WORKING_DIRS`] nor a `*.log`.
pub fn is_data(w: &Written, project: Option<&Path>) -> bool {
    let Some(project) = project.filter(|_| w.fd > 2) else {
        return false;
    };
    let Ok(inside) = w.path.strip_prefix(project) else {
        return false;
    };
    let mut parts = inside.components().peekable();
    while let Some(part) = parts.next() {
        let Component::Normal(name) = part else {
            // `..` or anything but a plain name: not provably inside.
            return false;
        };
        let name = name.to_string_lossy();
        let last = parts.peek().is_none();
        if last {
            return !name.ends_with(".log") && !name.is_empty();
        }
        if WORKING_DIRS.contains(&name.as_ref()) {
            return false;
        }
    }
    // The project folder itself is not a file.
    false
}

/// The rule: whether the resource whose members are `members` is a data service, in
/// `project` (`None`: outside any project, where no file is data). Known by name first (any
/// member), then by a data file (any member); else, when a member's files could not be read,
/// that. `None`: none of these.
pub fn judge(members: &[Seen], project: Option<&Path>) -> Option<Verdict> {
    let data_file = |m: &Seen| -> Option<(PathBuf, Hold)> {
        let list = m.writes.as_ref().ok()?;
        let w = list.iter().find(|w| is_data(w, project))?;
        Some((w.path.clone(), w.how))
    };
    let data_files = |m: &Seen| -> Vec<PathBuf> {
        match m.writes {
            Ok(list) => list
                .iter()
                .filter(|w| is_data(w, project))
                .map(|w| w.path.clone())
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    for m in members {
        if let Some(service) = service_of(m) {
            let file = data_file(m).or_else(|| members.iter().find_map(data_file));
            let data = data_at(service, m, &data_files(m));
            let shutdown = shutdown_of(service, m, &data);
            return Some(Verdict::Service(DataService {
                tool: service.tool.to_owned(),
                kind: service.tool.to_lowercase().replace(' ', "-"),
                pid: m.pid,
                known_by: KnownBy::Name,
                data,
                file,
                shutdown,
            }));
        }
    }
    for m in members {
        if let Some(file) = data_file(m) {
            let files = data_files(m);
            let data = common_folder(&files)
                .map(DataAt::Folder)
                .unwrap_or(DataAt::Unknown);
            return Some(Verdict::Service(DataService {
                tool: program_name(m),
                kind: kind_name(m),
                pid: m.pid,
                known_by: KnownBy::Files,
                data,
                file: Some(file),
                shutdown: None,
            }));
        }
    }
    members.iter().find_map(|m| {
        let why = m.writes.as_ref().err()?;
        Some(Verdict::Unreadable {
            pid: m.pid,
            command: words::short_command(m.argv.iter().map(Vec::as_slice)),
            why: why.to_string(),
        })
    })
}

/// The verdict as evidence: yellow, `data_service`, naming where the data is and the command
/// that stops it.
pub fn evidence(v: &Verdict) -> Evidence {
    let (message, source) = match v {
        Verdict::Service(s) => {
            let at = match &s.data {
                DataAt::Folder(dir) => format!("keeps its data in {}", dir.display()),
                DataAt::Memory => "keeps its data in memory".to_owned(),
                DataAt::Unknown => "keeps its data where its own settings say".to_owned(),
            };
            let held = match &s.file {
                Some((path, Hold::Write)) => {
                    format!(" (it holds {} open for writing)", path.display())
                }
                Some((path, Hold::Lock)) => format!(" (it holds a lock on {})", path.display()),
                None => String::new(),
            };
            let stop = match &s.shutdown {
                Some(cmd) => format!("Pier never stops it — `{cmd}` does"),
                // An orphan has no terminal left: the tool's own way out, or the user's hand.
                None => "Pier never stops it — quit it its own way (its shutdown command or \
                         quit action, Ctrl-C if its terminal is still open), or end it yourself \
                         once its data is safe"
                    .to_owned(),
            };
            let source = match s.known_by {
                KnownBy::Name => "argv",
                KnownBy::Files => "fd table",
            };
            (
                format!(
                    "data service: {} (pid {}) {at}{held}; {stop}",
                    s.tool, s.pid
                ),
                source,
            )
        }
        Verdict::Unreadable { pid, command, why } => (
            format!(
                "may be a data service: the open files of pid {pid} ({command}) could not be \
                 read ({why}), so data it keeps in the project cannot be ruled out; Pier does \
                 not stop it"
            ),
            "fd table",
        ),
    };
    Evidence {
        kind: EvidenceKind::DataService,
        level: Level::Yellow,
        message,
        source: source.to_owned(),
    }
}

/// What a scan learns of a resource here: the evidence, and the kind when it is a data service.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The `data_service` evidence.
    pub evidence: Evidence,
    /// [`DataService::kind`]; `None` when its files could not be read (it may be one).
    pub kind: Option<String>,
}

/// What a scan asks of a resource: inside a project, each member's held files are read
/// (`Probe::writes_of`: of a member the scan's survey walked, only the fds that then named a
/// path) and judged with its name; outside any project, where no file is data, by name only
/// and nothing is read (scans stay fast).
pub(crate) fn read_and_judge(
    probe: &dyn Probe,
    tree: &[&ProcessInfo],
    members: &[Member],
    ports: &[Port],
    project: Option<&Path>,
) -> Option<Found> {
    let writes: Vec<Result<Vec<Written>, ProbeError>> = tree
        .iter()
        .map(|p| match project {
            Some(_) => probe.writes_of(p.identity),
            None => Ok(Vec::new()),
        })
        .collect();
    let cwds: Vec<Option<PathBuf>> = tree
        .iter()
        .map(|p| {
            let m = members.iter().find(|m| m.pid == p.identity.pid)?;
            m.cwd.as_ref().map(PathBuf::from)
        })
        .collect();
    let seen: Vec<Seen> = tree
        .iter()
        .zip(&writes)
        .zip(&cwds)
        .map(|((p, writes), cwd)| Seen {
            pid: p.identity.pid,
            comm: &p.comm,
            argv: &p.argv,
            cwd: cwd.as_deref(),
            ports: ports
                .iter()
                .filter(|port| port.pid == p.identity.pid)
                .map(|port| port.port)
                .collect(),
            writes,
        })
        .collect();
    let verdict = judge(&seen, project)?;
    Some(Found {
        evidence: evidence(&verdict),
        kind: match verdict {
            Verdict::Service(s) => Some(s.kind),
            Verdict::Unreadable { .. } => None,
        },
    })
}

/// The row of [`SERVICES`] `m` runs, if any.
fn service_of(m: &Seen) -> Option<&'static Service> {
    let names = names_of(m);
    let args = lossy(m.argv);
    SERVICES.iter().find(|s| {
        s.matches.iter().any(|rule| match *rule {
            Match::Program(p) => names.iter().any(|n| n == p),
            Match::Sub(p, subs) => {
                names.iter().any(|n| n == p) && subcommand(&args).is_some_and(|s| subs.contains(&s))
            }
            Match::MainClass(class) => java_main(&args).is_some_and(|c| c == class),
            Match::Jar(stem) => jar_of(&args).is_some_and(|j| j == stem),
            Match::Erlang(app) => erlang_app(&names, &args, app),
        })
    })
}

/// The names a member may go by: its argv[0]'s basename, the first word of a title written
/// over it (trailing `:` dropped), its kernel name (cut at 15 bytes: matched as a prefix then),
/// and for an interpreter its script's basename without extension or its `-m` module's first
/// part.
fn names_of(m: &Seen) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(first) = m.argv.first() {
        out.push(basename(first));
        let word = first.split(|&b| b == b' ').next().unwrap_or(first);
        out.push(basename(word).trim_end_matches(':').to_owned());
    }
    out.push(m.comm.to_owned());
    if m.comm.len() >= 15 {
        out.extend(
            SERVICES
                .iter()
                .flat_map(|s| s.matches)
                .filter_map(|rule| match *rule {
                    Match::Program(p) | Match::Sub(p, _) => Some(p),
                    _ => None,
                })
                .filter(|p| p.starts_with(m.comm))
                .map(str::to_owned),
        );
    }
    let interpreter = out
        .first()
        .is_some_and(|n| is_interpreter(n) || matches!(n.as_str(), "sh" | "bash" | "dash"));
    if interpreter {
        out.extend(script_of(&lossy(m.argv)));
    }
    out
}

/// An interpreter's script basename without its extension, or its `-m` module's first part.
fn script_of(args: &[String]) -> Option<String> {
    let name = script_file(args)?;
    let stem = [".js", ".mjs", ".cjs", ".py", ".sh"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(&name);
    Some(stem.split('.').next().unwrap_or(stem).to_owned())
}

/// An interpreter's script basename, or its `-m` module; `None` for inline code.
fn script_file(args: &[String]) -> Option<String> {
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-c" | "-e" | "--eval" => return None,
            "-m" => return rest.next().cloned(),
            a if a.starts_with('-') => {}
            a => return Some(basename(a.as_bytes())),
        }
    }
    None
}

/// The subcommand: the first argument after the program, when it is not a flag.
fn subcommand(args: &[String]) -> Option<&str> {
    let program = args.first()?;
    let is_interp = is_interpreter(&basename(program.as_bytes()));
    // Through an interpreter, the word after the script.
    let at = if is_interp {
        args.iter().skip(1).position(|a| !a.starts_with('-'))? + 2
    } else {
        1
    };
    args.get(at)
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
}

/// JVM options that take the next argument as their value.
const JAVA_VALUE_OPTIONS: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--add-opens",
    "--add-exports",
    "--add-modules",
];

/// A JVM's main class: `-m module/Class`'s class, else the first operand after its options
/// (none with `-jar`).
fn java_main(args: &[String]) -> Option<&str> {
    if basename(args.first()?.as_bytes()) != "java" {
        return None;
    }
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-jar" => return None,
            "-m" | "--module" => {
                let value = args.get(i + 1)?;
                return value.rsplit('/').next();
            }
            a if JAVA_VALUE_OPTIONS.contains(&a) => i += 1,
            a if a.starts_with('-') => {}
            a => return Some(a),
        }
        i += 1;
    }
    None
}

/// A JVM's `-jar` file name, without `.jar` and a trailing version (`-v1.19.7`, `-2.0`).
fn jar_of(args: &[String]) -> Option<String> {
    if basename(args.first()?.as_bytes()) != "java" {
        return None;
    }
    let at = args.iter().position(|a| a == "-jar")?;
    let name = basename(args.get(at + 1)?.as_bytes());
    let stem = name.strip_suffix(".jar").unwrap_or(&name);
    let versioned = stem.match_indices('-').find(|(i, _)| {
        let after = &stem[i + 1..];
        let after = after.strip_prefix('v').unwrap_or(after);
        after.starts_with(|c: char| c.is_ascii_digit())
    });
    Some(match versioned {
        Some((i, _)) => stem[..i].to_owned(),
        None => stem.to_owned(),
    })
}

/// An Erlang VM starting `app`: `-s app` among its arguments.
fn erlang_app(names: &[String], args: &[String], app: &str) -> bool {
    names.iter().any(|n| n == "beam.smp" || n == "beam")
        && args.windows(2).any(|w| w[0] == "-s" && w[1] == app)
}

/// The value of the first of `flags` in `args` (see [`Service::data_flags`]).
fn flag_value<'a>(args: &'a [String], flags: &[&str]) -> Option<&'a str> {
    for (i, arg) in args.iter().enumerate().skip(1) {
        for flag in flags {
            if flag.ends_with('=') {
                if let Some(v) = arg.strip_prefix(flag) {
                    return Some(v);
                }
                continue;
            }
            if arg == flag {
                return args.get(i + 1).map(String::as_str);
            }
            if let Some(v) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                return Some(v);
            }
            // `-D/p/data`: a two-letter flag with its value attached.
            if flag.len() == 2 && !flag.starts_with("--") && arg.len() > 2 {
                if let Some(v) = arg.strip_prefix(flag) {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Where `service`, run by `m` (whose data files in the project are `files`), keeps its data.
fn data_at(service: &Service, m: &Seen, files: &[PathBuf]) -> DataAt {
    let args = lossy(m.argv);
    if service
        .memory_flags
        .iter()
        .any(|f| args.iter().any(|a| a == f))
    {
        return DataAt::Memory;
    }
    let named = flag_value(&args, service.data_flags).or_else(|| {
        let sub = service.data_operand_after?;
        let at = args.iter().position(|a| a == sub)?;
        args[at + 1..]
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str)
    });
    if let Some(value) = named.and_then(store_path) {
        if value == "mem" {
            return DataAt::Memory;
        }
        let path = Path::new(value);
        return DataAt::Folder(match m.cwd {
            Some(cwd) if path.is_relative() && service.default == Fallback::Cwd => cwd.to_owned(),
            Some(cwd) if path.is_relative() => cwd.join(path),
            _ => path.to_owned(),
        });
    }
    let cwd = || m.cwd.map(|c| DataAt::Folder(c.to_owned()));
    let from_files = || common_folder(files).map(DataAt::Folder);
    let found = match service.default {
        Fallback::Memory => Some(DataAt::Memory),
        Fallback::Cwd => cwd().or_else(from_files),
        Fallback::Files => from_files().or_else(cwd),
    };
    found.unwrap_or(DataAt::Unknown)
}

/// A data flag's value as a folder: `path=DIR,attrs=…` (cockroach's `--store`) gives DIR,
/// `type=mem,…` gives `mem`; an empty value none.
fn store_path(value: &str) -> Option<&str> {
    if value.is_empty() {
        return None;
    }
    if !value.contains('=') {
        return Some(value);
    }
    let fields = value.split(',');
    let mut path = None;
    for field in fields {
        match field.split_once('=') {
            Some(("path", p)) => path = Some(p),
            Some(("type", "mem")) => return Some("mem"),
            _ => {}
        }
    }
    path
}

/// The port the shutdown command reaches it on: a port flag, else its default when it listens
/// there, else the lowest port it listens on, else its default.
fn port_of(service: &Service, m: &Seen) -> Option<u16> {
    let args = lossy(m.argv);
    let flagged = flag_value(&args, service.port_flags)
        .and_then(|v| v.rsplit(':').next())
        .and_then(|p| p.parse().ok());
    if flagged.is_some() {
        return flagged;
    }
    if let Some(d) = service.default_port.filter(|d| m.ports.contains(d)) {
        return Some(d);
    }
    m.ports.iter().min().copied().or(service.default_port)
}

/// The service's own shutdown command for this run, or `None` when it has none Pier knows
/// (or it needs a fact Pier did not read).
fn shutdown_of(service: &Service, m: &Seen, data: &DataAt) -> Option<String> {
    let dir = match data {
        DataAt::Folder(dir) => Some(shell_word(&dir.to_string_lossy())),
        _ => None,
    };
    match service.shutdown {
        Shutdown::PgCtl => Some(format!("pg_ctl -D {} stop -m fast", dir?)),
        Shutdown::RespCli(cli) => Some(format!("{cli} -p {} shutdown", port_of(service, m)?)),
        Shutdown::MysqlAdmin => Some(format!(
            "mysqladmin -h 127.0.0.1 -P {} shutdown",
            port_of(service, m)?
        )),
        Shutdown::Mongod => Some(format!("mongod --dbpath {} --shutdown", dir?)),
        Shutdown::Cockroach => {
            let insecure = lossy(m.argv).iter().any(|a| a == "--insecure");
            Some(format!(
                "cockroach node drain --self --shutdown --host localhost:{}{}",
                port_of(service, m)?,
                if insecure { " --insecure" } else { "" }
            ))
        }
        Shutdown::Nats => Some(format!("nats-server --signal quit={}", m.pid)),
        Shutdown::Command(cmd) => Some(cmd.to_owned()),
        Shutdown::Generic => None,
    }
}

/// A path as one shell word: as is when it is plain, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The deepest folder holding every one of `files`; `None` for none.
fn common_folder(files: &[PathBuf]) -> Option<PathBuf> {
    let mut folders = files.iter().filter_map(|f| f.parent());
    let mut common = folders.next()?.to_owned();
    for folder in folders {
        while !folder.starts_with(&common) {
            if !common.pop() {
                return None;
            }
        }
    }
    Some(common)
}

/// A member's program as a person names it: an interpreter's script, else argv[0]'s
/// basename, else its kernel name.
fn program_name(m: &Seen) -> String {
    let args = lossy(m.argv);
    let first = args.first().map(|a| basename(a.as_bytes()));
    match first {
        Some(f) if is_interpreter(&f) => match script_file(&args) {
            Some(script) => format!("{f} {script}"),
            None => f,
        },
        Some(f) if !f.is_empty() => f,
        _ => m.comm.to_owned(),
    }
}

/// A member's program as a kind is named: an interpreter's script (without its extension),
/// else argv[0]'s basename, else its kernel name.
fn kind_name(m: &Seen) -> String {
    let args = lossy(m.argv);
    let first = args.first().map(|a| basename(a.as_bytes()));
    match first {
        Some(f) if is_interpreter(&f) => script_of(&args).unwrap_or(f),
        Some(f) if !f.is_empty() => f,
        _ => m.comm.to_owned(),
    }
}

fn lossy(argv: &[Vec<u8>]) -> Vec<String> {
    argv.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

#[cfg(test)]
mod tests;
