//! Real folders, real config files and real unix sockets in a temporary home.

use std::os::unix::net::UnixListener;

use super::*;

struct Home {
    dir: tempfile::TempDir,
    _sockets: Vec<UnixListener>,
}

impl Home {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            _sockets: Vec::new(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn socket(&mut self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        self._sockets.push(UnixListener::bind(&path).unwrap());
        path
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn env(&self) -> Env {
        Env {
            home: Some(self.dir.path().to_owned()),
            runtime_dir: Some(self.path("run")),
            ..Env::default()
        }
    }
}

/// The usual places inside the temporary home (the machine's own /var/run/docker.sock and
/// /run/podman/podman.sock are left out: they are the machine's, not the test's).
fn found_in_home(env: &Env, home: &Home) -> Vec<Result<Endpoint, Unusable>> {
    let root = format!("unix://{}", home.dir.path().display());
    find(env)
        .into_iter()
        .filter(|f| f.as_ref().is_err() || f.as_ref().unwrap().host.starts_with(&root))
        .collect()
}

#[test]
fn docker_host_is_the_one_engine_asked_and_a_tcp_one_is_reported() {
    let mut home = Home::new();
    home.socket(".orbstack/run/docker.sock");
    let mut env = home.env();
    env.docker_host = Some("unix:///somewhere/docker.sock".into());
    let found = find(&env);
    assert_eq!(
        found,
        vec![Ok(Endpoint {
            engine: "Docker",
            host: "unix:///somewhere/docker.sock".into(),
            origin: "DOCKER_HOST".into(),
        })]
    );
    env.docker_host = Some("tcp://10.0.0.5:2376".into());
    let found = find(&env);
    let Err((endpoint, why)) = &found[0] else {
        panic!("{found:?}")
    };
    assert_eq!(endpoint.host, "tcp://10.0.0.5:2376");
    assert!(matches!(why, UnusableSetting::NotUnix { .. }), "{why}");
    assert_eq!(found.len(), 1);
}

#[test]
fn the_current_context_from_config_json_names_the_socket() {
    let home = Home::new();
    home.write(".docker/config.json", r#"{"currentContext": "colima"}"#);
    home.write(
        ".docker/contexts/meta/0123abcd/meta.json",
        r#"{"Name":"colima","Metadata":{},"Endpoints":{"docker":{"Host":"unix:///h/.colima/default/docker.sock","SkipTLSVerify":false}}}"#,
    );
    home.write(
        ".docker/contexts/meta/4567ef/meta.json",
        r#"{"Name":"other","Endpoints":{"docker":{"Host":"unix:///other.sock"}}}"#,
    );
    assert_eq!(
        find(&home.env()),
        vec![Ok(Endpoint {
            engine: "Colima",
            host: "unix:///h/.colima/default/docker.sock".into(),
            origin: "docker context colima".into(),
        })]
    );
    // DOCKER_CONTEXT wins over the config, and "default" means the usual places.
    let mut env = home.env();
    env.docker_context = Some("other".into());
    assert_eq!(find(&env)[0].as_ref().unwrap().host, "unix:///other.sock");
    env.docker_context = Some("default".into());
    assert_eq!(found_in_home(&env, &home), vec![]);
}

#[test]
fn a_current_context_that_cannot_be_found_is_said() {
    let home = Home::new();
    home.write(".docker/config.json", r#"{"currentContext": "gone"}"#);
    let found = find(&home.env());
    let Err((_, why)) = &found[0] else {
        panic!("{found:?}")
    };
    assert!(
        matches!(why, UnusableSetting::NoSuchContext { .. }),
        "{why}"
    );
}

#[test]
fn without_a_setting_every_usual_socket_is_asked_once() {
    let mut home = Home::new();
    let desktop = home.socket(".docker/run/docker.sock");
    home.socket("run/podman/podman.sock");
    // Docker Desktop's second name for its socket, a link: asked once.
    fs::create_dir_all(home.path(".docker/desktop")).unwrap();
    std::os::unix::fs::symlink(&desktop, home.path(".docker/desktop/docker.sock")).unwrap();
    // A plain file where a socket would be is not an engine.
    home.write(".orbstack/run/docker.sock", "");
    let hosts: Vec<(&str, String)> = found_in_home(&home.env(), &home)
        .into_iter()
        .map(|f| {
            let e = f.unwrap();
            (e.engine, e.host)
        })
        .collect();
    let root = home.dir.path().display();
    assert_eq!(
        hosts,
        vec![
            (
                "Docker Desktop",
                format!("unix://{root}/.docker/run/docker.sock")
            ),
            ("Podman", format!("unix://{root}/run/podman/podman.sock")),
        ]
    );
}

#[test]
fn an_unreadable_config_falls_back_to_the_usual_places() {
    let mut home = Home::new();
    home.write(".docker/config.json", "{ not json");
    home.socket("run/docker.sock");
    let found = found_in_home(&home.env(), &home);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].as_ref().unwrap().engine, "Docker");
}
