//! The protect list against real processes on Linux: what it names is never green, never in
//! a batch and never stopped — not even with Force — and says so on its card; taken off the
//! list, it is offered again. Each test has its own config folder (`PIER_CONFIG_DIR`, set by
//! the sandbox), state folder and orphans, signalled only by identity at clean-up.
#![cfg(target_os = "linux")]

mod common;

use common::*;
use serde_json::Value;

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn card(sb: &Sandbox, server: &Value) -> Value {
    let scan = sb.scan(&[]);
    resource_with(&scan, pid(server))
        .expect("the fixture is found")
        .1
}

#[test]
fn a_protected_port_is_never_offered_nor_stopped_until_taken_off_the_list() {
    if fixtures_cannot_be_orphans("protect") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("pay", &[], |_| true);
    let port = server["port"].as_u64().unwrap().to_string();
    assert_eq!(card(&sb, &server)["level"], "green");

    let said = ok(sb.pier_exact(&["protect", "add", "--port", &port]));
    assert!(
        said.starts_with(&format!("protected: port {port}\n")),
        "{said}"
    );
    let r = card(&sb, &server);
    assert_eq!(r["level"], "yellow", "{r:#}");
    assert!(
        evidence_kinds(&r).contains(&"user_protected".to_owned()),
        "{r:#}"
    );
    let id = r["id"].as_str().unwrap().to_owned();

    // Not in a batch: left alone, with the reason.
    let out = sb.pier(&["stop", "--all-green", "--json", "--sample-ms", "50"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["results"].as_array().unwrap().is_empty(), "{doc:#}");
    let reason = doc["left_alone"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("on your protect list (port {port})")),
        "{reason}"
    );
    // Not even a stop anyway, and not by its port.
    let mut args = vec!["stop", &id, "--json"];
    args.extend(common::ANYWAY_ALL);
    let out = sb.pier_exact(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "refused", "{doc:#}");
    assert!(doc["results"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("never touched: on your protect list"));
    let out = sb.pier_exact(&["stop", &format!(":{port}"), "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["ports"][0]["stops"].is_null(), "{doc:#}");
    assert!(!doc["ports"][0]["hint"]
        .as_str()
        .unwrap()
        .contains("pier stop --anyway"));
    assert!(alive(pid(&server)));

    ok(sb.pier_exact(&["protect", "remove", "--port", &port]));
    assert_eq!(card(&sb, &server)["level"], "green");
}

#[test]
fn a_protected_project_folder_covers_every_project_inside_it() {
    if fixtures_cannot_be_orphans("protect project") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("shop", &[], |_| true);
    let folder = sb.path().to_str().unwrap().to_owned();
    ok(sb.pier_exact(&["protect", "add", "--project", &folder]));
    let r = card(&sb, &server);
    assert_eq!(r["level"], "yellow", "{r:#}");
    let listed = ok(sb.pier_exact(&["protect", "list", "--json"]));
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["schema"], 1);
    let canonical = std::fs::canonicalize(sb.path()).unwrap();
    assert_eq!(listed["projects"][0], canonical.to_str().unwrap());
}

/// A list that cannot be parsed protects everything and is never written over.
#[test]
fn an_unreadable_list_offers_nothing_and_is_kept_as_it_is() {
    if fixtures_cannot_be_orphans("protect unreadable") {
        return;
    }
    let sb = Sandbox::new();
    let server = sb.start_vite("app", &[], |_| true);
    let config = sb.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("protect.toml"), "ports = [").unwrap();
    let r = card(&sb, &server);
    assert_eq!(r["level"], "yellow", "{r:#}");
    let out = sb.pier_exact(&["protect", "add", "--port", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not valid: line 1"));
    assert_eq!(
        std::fs::read_to_string(config.join("protect.toml")).unwrap(),
        "ports = ["
    );
}
