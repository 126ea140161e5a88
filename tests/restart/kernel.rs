//! A server with a helper: the dev-server fixture with a stand-in notebook kernel
//! as its child (`tests/fixtures/kernel.py`, run as `python3 -m ipykernel_launcher -f …`, the
//! argv Jupyter gives a real kernel), whose two random loopback ports are the kernel's, not the
//! server's. The real JupyterLab is held to the same rule by the real-tools suite.

use super::*;

/// `(port, helper)` of every listener of the resource holding `server`, from a scan.
fn roles(sb: &Sandbox, server: &Value) -> Vec<(u16, Value)> {
    let scan = sb.scan(&[]);
    let (_, r) = resource_with(&scan, pid(server)).expect("found");
    r["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["port"].as_u64().unwrap() as u16, p["helper"].clone()))
        .collect()
}

fn kernel_ports_of(report: &Value) -> Vec<u16> {
    report["kernel_ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() as u16)
        .collect()
}

#[test]
fn a_server_is_ready_again_without_its_kernels_ports_even_when_one_is_taken() {
    if fixtures_cannot_be_orphans("restart with a kernel") {
        return;
    }
    let sb = Sandbox::new();
    let kernels = sb.path().join("kernels");
    sb.install(&kernels.join("ipykernel_launcher.py"), "kernel.py");
    let (_, before) = started(&sb, &["--kernel", kernels.to_str().unwrap()]);
    let server_port = before["port"].as_u64().unwrap() as u16;
    let mut kernel_ports = kernel_ports_of(&before);
    kernel_ports.sort_unstable(); // as Pier lists them

    let mut expected = vec![(server_port, Value::Null)];
    expected.extend(
        kernel_ports
            .iter()
            .map(|&p| (p, Value::from("notebook kernel"))),
    );
    expected.sort_by_key(|(p, _)| *p);
    assert_eq!(
        roles(&sb, &before),
        expected,
        "the kernel's ports are the helper's, the server's its own"
    );

    let (name, stopped) = stop(&sb, &before, &[]);
    assert_eq!(stopped["result"], "stopped", "{stopped:#}");
    // Someone else now listens on one of the kernel's old ports: no reason to refuse, since a
    // kernel binds new ones at each start.
    let taken = TcpListener::bind(("127.0.0.1", kernel_ports[0])).unwrap();
    let (code, r) = restart(&sb, &name);
    assert_eq!(
        (code, &r["result"]),
        (0, &Value::from("ready")),
        "ready once the server's own port listens, while a recorded kernel port is held by the \
         test: {r:#}"
    );
    let after = new_report(&sb, "app", pid(&before));
    let mut again = vec![(server_port, Value::Null)];
    again.extend(
        kernel_ports_of(&after)
            .into_iter()
            .map(|p| (p, Value::from("notebook kernel"))),
    );
    again.sort_by_key(|(p, _)| *p);
    assert_eq!(
        roles(&sb, &after),
        again,
        "the restarted tree's new kernel ports are the helper's too"
    );
    let helper_ports: Vec<String> = kernel_ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    assert_eq!(r["helper_ports"], serde_json::json!(helper_ports), "{r:#}");
    assert!(TcpStream::connect(("127.0.0.1", server_port)).is_ok());
    let h: Value = serde_json::from_slice(&sb.pier_exact(&["history", "--json"]).stdout).unwrap();
    assert_eq!(
        h["snapshots"][0]["helper_ports"],
        serde_json::json!(helper_ports),
        "{h:#}"
    );
    drop(taken);
}
