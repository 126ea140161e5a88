//! The facts from the engine's JSON, shaped as Debian's Docker 20.10 answered here (API 1.41).

use super::*;

const LIST_ENTRY: &str = r#"{
  "Id": "fe7ae5f85c8ac8f8b745dc570885ffbb28e2789e9b94a40e4b6755992f2dc3dd",
  "Names": ["/web1"],
  "Image": "pier-busybox:test",
  "Command": "busybox httpd -f -p 8080 -h /",
  "Created": 1796278093,
  "Ports": [
    {"IP": "127.0.0.1", "PrivatePort": 8080, "PublicPort": 18080, "Type": "tcp"},
    {"IP": "::1", "PrivatePort": 8080, "PublicPort": 18080, "Type": "tcp"},
    {"IP": "0.0.0.0", "PrivatePort": 53, "PublicPort": 5353, "Type": "udp"},
    {"PrivatePort": 9000, "Type": "tcp"}
  ],
  "Labels": {
    "com.docker.compose.project": "shop",
    "com.docker.compose.service": "db",
    "com.docker.compose.project.working_dir": "/home/u/shop"
  },
  "State": "running",
  "Status": "Up 2 minutes",
  "HostConfig": {"NetworkMode": "default"},
  "NetworkSettings": {"Networks": {"bridge": {
    "Gateway": "172.30.249.1", "IPAddress": "172.30.249.2", "IPPrefixLen": 24,
    "IPv6Gateway": "", "GlobalIPv6Address": "", "GlobalIPv6PrefixLen": 0
  }}},
  "Mounts": []
}"#;

const INSPECTED: &str = r#"{
  "Id": "fe7ae5f85c8ac8f8b745dc570885ffbb28e2789e9b94a40e4b6755992f2dc3dd",
  "Name": "/web1",
  "State": {"Status": "running", "Running": true, "Pid": 18973,
            "StartedAt": "2026-12-03T06:08:14.144822442Z", "FinishedAt": "0001-01-01T00:00:00Z"},
  "HostConfig": {"RestartPolicy": {"Name": "unless-stopped", "MaximumRetryCount": 0},
                 "AutoRemove": true, "NetworkMode": "default"}
}"#;

fn read() -> Option<ContainerFacts> {
    facts(
        serde_json::from_str(LIST_ENTRY).unwrap(),
        serde_json::from_str(INSPECTED).unwrap(),
    )
}

#[test]
fn a_running_container_s_facts_come_from_its_list_entry_and_its_inspection() {
    let f = read().unwrap();
    assert_eq!(f.name, "web1");
    assert_eq!(f.image, "pier-busybox:test");
    assert_eq!(
        f.started_at.as_deref(),
        Some("2026-12-03T06:08:14.144822442Z")
    );
    // TCP ports published on the host only: not the UDP one, not the unpublished one.
    assert_eq!(
        f.ports,
        vec![
            Published {
                host_ip: "127.0.0.1".parse().unwrap(),
                host_port: 18080,
                container_port: 8080
            },
            Published {
                host_ip: "::1".parse().unwrap(),
                host_port: 18080,
                container_port: 8080
            },
        ]
    );
    assert_eq!(f.restart_policy.as_deref(), Some("unless-stopped"));
    assert!(f.auto_remove);
    assert_eq!(f.pid, Some(18973));
    assert_eq!(f.addresses, vec!["172.30.249.2".parse::<IpAddr>().unwrap()]);
    assert!(!f.host_network);
    let c = f.compose.unwrap();
    assert_eq!(c.project, "shop");
    assert_eq!(c.service.as_deref(), Some("db"));
    assert_eq!(c.working_dir, Some(PathBuf::from("/home/u/shop")));
}

#[test]
fn a_container_that_stopped_since_the_list_is_left_out_and_no_policy_is_none() {
    let mut inspected: serde_json::Value = serde_json::from_str(INSPECTED).unwrap();
    inspected["HostConfig"]["RestartPolicy"]["Name"] = "no".into();
    let f = facts(
        serde_json::from_str(LIST_ENTRY).unwrap(),
        serde_json::from_value(inspected.clone()).unwrap(),
    )
    .unwrap();
    assert_eq!(f.restart_policy, None);
    inspected["State"]["Running"] = false.into();
    assert_eq!(
        facts(
            serde_json::from_str(LIST_ENTRY).unwrap(),
            serde_json::from_value(inspected).unwrap(),
        ),
        None
    );
}
