//! The data-service rule (`data.rs`): names, behaviour, what is not data, and the words.

use std::path::{Path, PathBuf};

use super::*;

const P: &str = "/p";

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn held(fd: u32, path: &str, how: Hold) -> Written {
    Written {
        fd,
        path: PathBuf::from(path),
        how,
    }
}

/// One member: its argv, kernel name (argv[0]'s basename cut at 15 bytes), cwd, ports, files.
struct M {
    pid: Pid,
    argv: Vec<Vec<u8>>,
    comm: String,
    cwd: Option<PathBuf>,
    ports: Vec<u16>,
    writes: Result<Vec<Written>, ProbeError>,
}

fn m(pid: Pid, words: &[&str]) -> M {
    let comm = words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w).chars().take(15).collect())
        .unwrap_or_default();
    M {
        pid,
        argv: argv(words),
        comm,
        cwd: Some(PathBuf::from(P)),
        ports: Vec::new(),
        writes: Ok(Vec::new()),
    }
}

impl M {
    fn cwd(mut self, cwd: &str) -> Self {
        self.cwd = Some(PathBuf::from(cwd));
        self
    }
    fn port(mut self, port: u16) -> Self {
        self.ports.push(port);
        self
    }
    fn holds(mut self, w: Written) -> Self {
        if let Ok(list) = &mut self.writes {
            list.push(w);
        }
        self
    }
    fn unreadable(mut self, why: &str) -> Self {
        self.writes = Err(why.into());
        self
    }
    fn comm(mut self, comm: &str) -> Self {
        self.comm = comm.to_owned();
        self
    }
    fn seen(&self) -> Seen<'_> {
        Seen {
            pid: self.pid,
            comm: &self.comm,
            argv: &self.argv,
            cwd: self.cwd.as_deref(),
            ports: self.ports.clone(),
            writes: &self.writes,
        }
    }
}

fn verdict(members: &[M]) -> Option<Verdict> {
    let seen: Vec<Seen> = members.iter().map(M::seen).collect();
    judge(&seen, Some(Path::new(P)))
}

fn service(members: &[M]) -> DataService {
    match verdict(members) {
        Some(Verdict::Service(s)) => s,
        other => panic!("not a data service: {other:?}"),
    }
}

#[test]
fn databases_and_caches_are_known_by_name_with_where_and_their_shutdown() {
    let pg = service(&[m(
        7,
        &["/usr/lib/postgresql/16/bin/postgres", "-D", "/p/pgdata"],
    )]);
    assert_eq!(
        (pg.tool.as_str(), pg.known_by.clone()),
        ("postgres", KnownBy::Name)
    );
    assert_eq!(pg.data, DataAt::Folder("/p/pgdata".into()));
    assert_eq!(
        pg.shutdown.as_deref(),
        Some("pg_ctl -D /p/pgdata stop -m fast")
    );
    // Attached, and relative: postgres chdirs into its data folder, so the cwd is it.
    let pg = service(&[m(7, &["postgres", "-Dpgdata"]).cwd("/p/pgdata")]);
    assert_eq!(pg.data, DataAt::Folder("/p/pgdata".into()));

    let redis = service(&[m(
        8,
        &["redis-server", "--port", "6380", "--dir", "/p/data"],
    )]);
    assert_eq!(redis.data, DataAt::Folder("/p/data".into()));
    assert_eq!(
        redis.shutdown.as_deref(),
        Some("redis-cli -p 6380 shutdown")
    );

    let mysql = service(&[m(9, &["mysqld", "--datadir=/p/db", "--port=3307"])]);
    assert_eq!(mysql.data, DataAt::Folder("/p/db".into()));
    assert_eq!(
        mysql.shutdown.as_deref(),
        Some("mysqladmin -h 127.0.0.1 -P 3307 shutdown")
    );
    let maria = service(&[m(9, &["/usr/sbin/mariadbd", "--datadir", "/p/db"]).port(3310)]);
    assert_eq!(maria.tool, "mysqld");
    assert_eq!(
        maria.shutdown.as_deref(),
        Some("mysqladmin -h 127.0.0.1 -P 3310 shutdown")
    );

    let mongo = service(&[m(10, &["mongod", "--dbpath", "/p/mongo data"])]);
    assert_eq!(
        mongo.shutdown.as_deref(),
        Some("mongod --dbpath '/p/mongo data' --shutdown")
    );

    let memcached = service(&[m(11, &["memcached", "-p", "11211"])]);
    assert_eq!((memcached.data, memcached.shutdown), (DataAt::Memory, None));

    let cockroach = service(&[m(
        12,
        &[
            "cockroach",
            "start-single-node",
            "--insecure",
            "--store=path=/p/crdb,attrs=ssd",
            "--listen-addr=localhost:26300",
        ],
    )]);
    assert_eq!(cockroach.data, DataAt::Folder("/p/crdb".into()));
    assert_eq!(
        cockroach.shutdown.as_deref(),
        Some("cockroach node drain --self --shutdown --host localhost:26300 --insecure")
    );
    assert_eq!(
        service(&[m(13, &["minio", "server", "./blobs"])]).data,
        DataAt::Folder("/p/./blobs".into())
    );
}

#[test]
fn interpreters_jvms_and_erlang_are_looked_through() {
    let rabbit = service(&[m(
        20,
        &[
            "/usr/lib/erlang/erts-13/bin/beam.smp",
            "--",
            "-noshell",
            "-s",
            "rabbit",
            "boot",
        ],
    )]);
    assert_eq!(rabbit.tool, "rabbitmq");
    assert_eq!(rabbit.shutdown.as_deref(), Some("rabbitmqctl stop"));
    // Another Erlang application is not rabbit.
    assert!(verdict(&[m(20, &["beam.smp", "-s", "couch"])]).is_none());

    let es = service(&[m(
        21,
        &[
            "/usr/share/elasticsearch/jdk/bin/java",
            "-Xms1g",
            "-cp",
            "lib/*",
            "-m",
            "org.elasticsearch.server/org.elasticsearch.bootstrap.Elasticsearch",
            "-Epath.data=/p/es",
        ],
    )]);
    assert_eq!(
        (es.tool.as_str(), es.data),
        ("elasticsearch", DataAt::Folder("/p/es".into()))
    );
    let kafka = service(&[m(
        22,
        &[
            "java",
            "-Xmx1G",
            "-cp",
            "/opt/kafka/libs/*",
            "kafka.Kafka",
            "config/server.properties",
        ],
    )]);
    assert_eq!(kafka.tool, "kafka");

    let dynamo = service(&[m(
        23,
        &[
            "java",
            "-Djava.library.path=./DynamoDBLocal_lib",
            "-jar",
            "DynamoDBLocal.jar",
            "-inMemory",
        ],
    )]);
    assert_eq!(
        (dynamo.tool.as_str(), dynamo.data),
        ("DynamoDB Local", DataAt::Memory)
    );
    let firestore = service(&[m(
        24,
        &[
            "java",
            "-jar",
            "/home/u/.cache/firebase/emulators/cloud-firestore-emulator-v1.19.7.jar",
        ],
    )]);
    assert_eq!(firestore.tool, "firebase emulators");

    let localstack = service(&[m(25, &["python3", "-m", "localstack.runtime.main"])]);
    assert_eq!(localstack.shutdown.as_deref(), Some("localstack stop"));
    let azurite = service(&[m(
        26,
        &[
            "node",
            "/p/node_modules/.bin/azurite",
            "--location",
            "store",
        ],
    )]);
    assert_eq!(azurite.data, DataAt::Folder("/p/store".into()));
}

#[test]
fn a_title_written_over_argv_and_a_cut_kernel_name_still_name_it() {
    // redis writes "redis-server *:6380" over its argv: the port comes from its listener.
    let redis = service(&[m(30, &["redis-server *:6380"]).cwd("/p/data").port(6380)]);
    assert_eq!(redis.data, DataAt::Folder("/p/data".into()));
    assert_eq!(
        redis.shutdown.as_deref(),
        Some("redis-cli -p 6380 shutdown")
    );
    // postgres's workers: "postgres: 16/main: checkpointer".
    let pg = service(&[m(31, &["postgres: 16/main: checkpointer"]).cwd("/p/pg")]);
    assert_eq!(pg.tool, "postgres");
    // An unreadable argv, the kernel's name cut at 15 bytes.
    let ch = service(&[m(32, &[]).comm("clickhouse-serv")]);
    assert_eq!(ch.tool, "clickhouse");
}

#[test]
fn substrings_and_lookalikes_are_not_names() {
    for words in [
        &["vim", "redis-server.conf"][..],
        &["node", "postgres-migrate.js"],
        &["grep", "mongod"],
        &["cockroach", "sql"],
        &["minio", "--version"],
        &["java", "-cp", "kafka.Kafka.jar", "org.example.Main"],
        &["pg_ctl", "-D", "/p/pgdata", "start"],
    ] {
        assert!(verdict(&[m(40, words)]).is_none(), "{words:?}");
    }
}

#[test]
fn a_member_holding_a_file_of_the_project_for_writing_or_locked_is_a_data_service() {
    let s = service(&[
        m(50, &["sh", "-c", "python3 app.py"]),
        m(51, &["python3", "app.py"]).holds(held(5, "/p/data.db", Hold::Write)),
    ]);
    assert_eq!(s.known_by, KnownBy::Files);
    assert_eq!((s.tool.as_str(), s.pid), ("python3 app.py", 51));
    assert_eq!(s.data, DataAt::Folder("/p".into()));
    assert_eq!(s.file, Some(("/p/data.db".into(), Hold::Write)));
    assert_eq!(s.shutdown, None);

    // A lock on a file only read, in a folder of its own: an emulator the table never named.
    let s = service(&[m(52, &["./emulator"])
        .holds(held(7, "/p/.emu/state/LOCK", Hold::Lock))
        .holds(held(8, "/p/.emu/state/000001.log", Hold::Write))]);
    assert_eq!(s.data, DataAt::Folder("/p/.emu/state".into()));
    assert_eq!(s.file, Some(("/p/.emu/state/LOCK".into(), Hold::Lock)));
}

#[test]
fn streams_logs_caches_builds_and_files_outside_the_project_are_not_data() {
    let not_data = [
        held(1, "/p/dev.log", Hold::Write),
        held(2, "/p/errors.txt", Hold::Write),
        held(0, "/p/input", Hold::Lock),
        held(4, "/p/server.log", Hold::Write),
        held(4, "/p/logs/app.txt", Hold::Write),
        held(4, "/p/log/development.txt", Hold::Write),
        held(4, "/p/node_modules/.vite/deps/_metadata.json", Hold::Write),
        held(4, "/p/.next/trace", Hold::Write),
        held(4, "/p/.next/dev/lock", Hold::Lock),
        held(4, "/p/target/debug/.cargo-lock", Hold::Lock),
        held(4, "/p/.venv/lib/x", Hold::Write),
        held(4, "/p/tmp/pids/server.pid", Hold::Lock),
        held(4, "/p/.git/index.lock", Hold::Write),
        held(4, "/p/web/.cache/x", Hold::Write),
        held(4, "/p/dist/bundle.js", Hold::Write),
        held(
            4,
            "/home/u/.local/share/jupyter/runtime/kernel.json",
            Hold::Write,
        ),
        held(4, "/pother/data.db", Hold::Write),
        held(4, "/p/../q/data.db", Hold::Write),
    ];
    for w in &not_data {
        assert!(!is_data(w, Some(Path::new(P))), "{w:?}");
    }
    let dev = not_data
        .iter()
        .cloned()
        .fold(m(60, &["node", "server.js"]), M::holds);
    assert!(verdict(&[dev]).is_none());
    // Data: a file in the project outside those, in a folder named like one only in part.
    for path in [
        "/p/data.db",
        "/p/db/development.sqlite3",
        "/p/build-data/x.db",
        "/p/.data/x",
    ] {
        assert!(
            is_data(&held(9, path, Hold::Write), Some(Path::new(P))),
            "{path}"
        );
    }
    // Outside any project nothing is data.
    assert!(!is_data(&held(9, "/p/data.db", Hold::Write), None));
}

#[test]
fn unreadable_files_of_a_member_cannot_rule_it_out() {
    let v = verdict(&[
        m(70, &["node", "server.js"]),
        m(71, &["worker"]).unreadable("/proc/71/fd: Permission denied"),
    ]);
    let Some(Verdict::Unreadable { pid, why, .. }) = &v else {
        panic!("{v:?}");
    };
    assert_eq!((*pid, why.as_str()), (71, "/proc/71/fd: Permission denied"));
    let e = evidence(v.as_ref().unwrap());
    assert_eq!(
        (e.kind, e.level),
        (EvidenceKind::DataService, Level::Yellow)
    );
    assert!(e
        .message
        .starts_with("may be a data service: the open files of pid 71 (worker)"));
    // A name or a file found elsewhere says more than the unreadable member.
    let v = verdict(&[
        m(72, &["redis-server", "--port", "7000"]),
        m(73, &["x"]).unreadable("EACCES"),
    ]);
    assert!(matches!(v, Some(Verdict::Service(_))), "{v:?}");
}

#[test]
fn the_evidence_names_where_the_data_is_and_the_command_that_stops_it() {
    let e = evidence(
        verdict(&[
            m(80, &["redis-server", "--port", "6380", "--dir", "/p/data"]).holds(held(
                9,
                "/p/data/dump.rdb",
                Hold::Write,
            )),
        ])
        .as_ref()
        .unwrap(),
    );
    assert_eq!(
        e.message,
        "data service: redis-server (pid 80) keeps its data in /p/data (it holds \
         /p/data/dump.rdb open for writing); Pier never stops it — `redis-cli -p 6380 \
         shutdown` does"
    );
    assert_eq!(
        (e.kind, e.level, e.source.as_str()),
        (EvidenceKind::DataService, Level::Yellow, "argv")
    );
    let e = evidence(
        verdict(&[m(81, &["./emulator"]).holds(held(3, "/p/state/LOCK", Hold::Lock))])
            .as_ref()
            .unwrap(),
    );
    assert_eq!(
        e.message,
        "data service: emulator (pid 81) keeps its data in /p/state (it holds a lock on \
         /p/state/LOCK); Pier never stops it — quit it its own way (its shutdown command or \
         quit action, Ctrl-C if its terminal is still open), or end it yourself once its data \
         is safe"
    );
    assert_eq!(e.source, "fd table");
    let e = evidence(verdict(&[m(82, &["memcached"])]).as_ref().unwrap());
    assert!(
        e.message.contains("keeps its data in memory;"),
        "{}",
        e.message
    );
}

#[test]
fn one_member_makes_the_whole_tree_a_data_service() {
    // A dev script that runs a database beside the server: the database names the tree.
    let s = service(&[
        m(
            90,
            &[
                "node",
                "/p/node_modules/.bin/concurrently",
                "vite",
                "redis-server",
            ],
        ),
        m(91, &["node", "/p/node_modules/.bin/vite"]).port(5173),
        m(92, &["redis-server", "--port", "6390"]).cwd("/p/.redis"),
    ]);
    assert_eq!((s.tool.as_str(), s.pid), ("redis-server", 92));
    assert_eq!(s.data, DataAt::Folder("/p/.redis".into()));
}

/// Through the whole scan (`evaluate.rs`), with the scripted probe's held files.
mod scanned {
    use crate::diagnose::tests::{has, only, run, APP};
    use crate::model::card::{EvidenceKind, Level};
    use crate::probe::fake::{process, FakeProbe};
    use crate::probe::Hold;

    fn vite_in(cwd: &str) -> FakeProbe {
        let vite = format!("{cwd}/node_modules/.bin/vite");
        FakeProbe::default()
            .with(process(100, 1, &["node", &vite]), cwd)
            .listen("127.0.0.1:5173", 100)
    }

    #[test]
    fn one_held_file_of_the_project_makes_a_known_dev_tool_yellow() {
        let clean = only(&run(&vite_in(APP))).clone();
        assert_eq!(clean.level, Level::Green, "{clean:#?}");
        let logged = vite_in(APP).holds(100, 1, "/home/u/app/dev.log", Hold::Write);
        assert_eq!(only(&run(&logged)).level, Level::Green);

        let probe = vite_in(APP).holds(100, 9, "/home/u/app/data.db", Hold::Write);
        let r = only(&run(&probe)).clone();
        assert_eq!(r.level, Level::Yellow, "{r:#?}");
        let e = r
            .evidence
            .iter()
            .find(|e| e.kind == EvidenceKind::DataService)
            .expect("data_service evidence");
        assert!(
            e.message
                .contains("it holds /home/u/app/data.db open for writing"),
            "{}",
            e.message
        );
    }

    #[test]
    fn files_are_read_inside_a_project_only_and_unreadable_ones_there_argue_against() {
        let mut probe = vite_in(APP);
        probe.writes.insert(100, Err("/proc/100/fd: EACCES".into()));
        let r = only(&run(&probe)).clone();
        assert_eq!(r.level, Level::Yellow);
        assert!(has(&r, EvidenceKind::DataService), "{r:#?}");
        // Outside any project nothing is read: the same failure is never met.
        let mut probe = vite_in("/srv/site");
        probe.writes.insert(100, Err("/proc/100/fd: EACCES".into()));
        let r = only(&run(&probe)).clone();
        assert!(!has(&r, EvidenceKind::DataService), "{r:#?}");
        // A data service is a kind of its own, where nothing else names the tree.
        let probe = FakeProbe::default()
            .with(
                process(100, 1, &["redis-server *:6380"]),
                "/home/u/app/data",
            )
            .listen("127.0.0.1:6380", 100);
        let r = only(&run(&probe)).clone();
        assert_eq!(r.kind, "redis-server");
        assert!(has(&r, EvidenceKind::DataService), "{r:#?}");
        assert!(!has(&r, EvidenceKind::UnknownKind), "{r:#?}");
        let probe = FakeProbe::default()
            .with(process(100, 1, &["python3", "store.py"]), APP)
            .listen("127.0.0.1:7000", 100)
            .holds(100, 5, "/home/u/app/store.db", Hold::Lock);
        assert_eq!(only(&run(&probe)).kind, "store");
        // …and it is still known by its name outside a project.
        let probe = FakeProbe::default()
            .with(
                process(100, 1, &["node", "/srv/site/node_modules/.bin/vite"]),
                "/srv/site",
            )
            .with(
                process(101, 100, &["redis-server", "--port", "6400"]),
                "/srv/site",
            )
            .listen("127.0.0.1:5173", 100);
        let r = only(&run(&probe)).clone();
        assert!(has(&r, EvidenceKind::DataService), "{r:#?}");
    }
}
