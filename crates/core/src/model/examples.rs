//! Example cards for tests outside the diagnosis (the app's menu, the CLI's text): plain data a
//! scan could have produced, built by hand.

use crate::model::card::{Evidence, EvidenceKind, Level, Member, Port, Project, Resource};
use crate::model::memory::{Memory, MemoryKind};
use crate::model::Identity;

/// A vite resource `id` (`<pid>-<start>`) at `level`, listening on 127.0.0.1:`port`, orphaned,
/// holding 48.2 MB (proportional).
pub fn resource(id: &str, level: Level, port: u16) -> Resource {
    let pid: u32 = id.split('-').next().unwrap().parse().unwrap();
    Resource {
        id: id.into(),
        level,
        kind: "vite".into(),
        root: Identity {
            pid,
            start_time: 100,
        },
        ports: vec![Port {
            port,
            address: "127.0.0.1".into(),
            pid,
            helper: None,
        }],
        members: vec![Member {
            pid,
            start_time: 100,
            ppid: 1,
            uid: 1000,
            argv: vec!["node".into(), "vite".into()],
            command: "node".into(),
            exe: None,
            cwd: None,
            memory: Some(Memory {
                bytes: 48_200_000,
                kind: MemoryKind::Proportional,
            }),
        }],
        connections: vec![],
        age_seconds: Some(7_500),
        activity: None,
        memory: Some(Memory {
            bytes: 48_200_000,
            kind: MemoryKind::Proportional,
        }),
        evidence: vec![Evidence {
            kind: EvidenceKind::Orphaned,
            level: Level::Green,
            message: "orphaned: its parent is PID 1".into(),
            source: "/proc/1/stat".into(),
        }],
        reasons: Vec::new(),
        managed_by: None,
        respawners: Vec::new(),
        parent: None,
        idle: None,
        armed: None,
        auto: None,
    }
}

/// A project at `path` holding `resources`.
pub fn project(path: &str, level: Level, resources: Vec<Resource>) -> Project {
    Project {
        name: path.rsplit('/').next().unwrap().into(),
        path: path.into(),
        marker: Some("package.json".into()),
        level,
        resources,
        containers: Vec::new(),
    }
}

/// A notebook server on 127.0.0.1:8888 whose kernel listens on two random loopback ports.
pub fn notebook(path: &str) -> Project {
    let mut r = resource("30-100", Level::Green, 8888);
    r.kind = "jupyter".into();
    for port in [40001, 40002] {
        r.ports.push(Port {
            port,
            address: "127.0.0.1".into(),
            pid: 31,
            helper: Some("notebook kernel".into()),
        });
    }
    project(path, Level::Green, vec![r])
}

/// A Compose database container `name` publishing 127.0.0.1:`port` → 5432, kept by a restart
/// policy (yellow).
pub fn container(name: &str, port: u16) -> crate::model::container::Container {
    crate::model::container::Container {
        id: "container-0123456789ab".into(),
        level: Level::Yellow,
        name: name.into(),
        image: "postgres:16".into(),
        container_id: "0123456789ab".repeat(5) + "cdef",
        engine: "Docker".into(),
        engine_host: "unix:///var/run/docker.sock".into(),
        ports: vec![crate::model::container::PublishedPort {
            port,
            address: "127.0.0.1".into(),
            container_port: 5432,
        }],
        connections: vec![],
        age_seconds: Some(600),
        started_at: Some("2026-12-03T08:00:00.000000001Z".into()),
        activity: None,
        compose_project: Some("shop".into()),
        compose_service: Some("db".into()),
        restart_policy: Some("always".into()),
        auto_remove: false,
        evidence: vec![Evidence {
            kind: EvidenceKind::EngineManaged,
            level: Level::Yellow,
            message: format!(
                "restart policy always: Docker starts it again when it ends, so a lasting stop \
                 is Docker's: `docker stop {name}`"
            ),
            source: "container engine".into(),
        }],
        reasons: vec![super::reason::Reason::Managed],
    }
}
