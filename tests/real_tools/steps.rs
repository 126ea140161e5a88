//! The scan steps of a case (found, kind, idle, client, client gone). Each returns a one-line
//! detail when it holds, or what Pier said against the ground truth when it does not.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::time::Instant;

use serde_json::Value;

use super::{client, poll, truth, Client, Ctx, Launch};
use crate::common::Started;

/// Polls like [`poll`], but gives up at once when the case's root is gone (the tool died).
pub(super) fn poll_alive<T>(
    c: &Ctx,
    secs: u64,
    mut f: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    poll(secs, || {
        let v = f();
        if v.is_err() && !truth::runs(c.root) {
            return Ok(Err(format!(
                "the tool's root (pid {}) exited: {}",
                c.root.pid,
                v.err().unwrap_or_default()
            )));
        }
        v.map(Ok)
    })?
}

pub(super) fn ident(v: &Value) -> Option<Started> {
    Some(Started {
        pid: v["pid"].as_u64()? as u32,
        start_time: v["start_time"].as_u64()?,
    })
}

pub(super) fn described(p: &Started) -> String {
    format!("{} ({})", p.pid, truth::command(p.pid))
}

fn list(ps: &BTreeSet<(u32, u64)>) -> String {
    let v: Vec<String> = ps
        .iter()
        .map(|(pid, st)| {
            described(&Started {
                pid: *pid,
                start_time: *st,
            })
        })
        .collect();
    v.join(", ")
}

fn set(ps: &[Started]) -> BTreeSet<(u32, u64)> {
    ps.iter().map(|p| (p.pid, p.start_time)).collect()
}

/// Pier's address text (`127.0.0.1:5173`, `[::1]:5173`, maybe `::1:5173`), IPv4-mapped
/// addresses as IPv4.
fn parse_addr(text: &str) -> Option<SocketAddr> {
    let a: SocketAddr = text.parse().ok().or_else(|| {
        let (ip, port) = text.rsplit_once(':')?;
        Some(SocketAddr::new(truth::parse_ip(ip)?, port.parse().ok()?))
    })?;
    Some(unmap(a))
}

fn unmap(a: SocketAddr) -> SocketAddr {
    match a.ip() {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(a, |v4| SocketAddr::new(IpAddr::V4(v4), a.port())),
        IpAddr::V4(_) => a,
    }
}

/// The resource (and its project) that holds the case's root, checked against the truth:
/// the root, the project folder, every member and every listening address.
fn matches(c: &Ctx) -> Result<(Value, Value), String> {
    let before = truth::tree(c.root);
    if before.is_empty() {
        return Err("the root is gone".into());
    }
    let listeners = truth::listeners(&before);
    if c.case.main_port && !listeners.iter().any(|l| l.port() == c.ports[0]) {
        return Err(format!(
            "the tree does not listen on port {} yet (it listens on {listeners:?})",
            c.ports[0]
        ));
    }
    let scan = c.scan()?;
    if truth::tree(c.root) != before {
        return Err("the tree changed during the scan".into());
    }
    let (project, r) = crate::common::resource_with(&scan, c.root.pid).ok_or_else(|| {
        let seen: Vec<String> = crate::common::resources(&scan)
            .iter()
            .map(|(_, r)| format!("{} {} {}", r["id"], r["kind"], r["level"]))
            .collect();
        format!(
            "no resource holds the root {}; Pier shows {seen:?}",
            described(&c.root)
        )
    })?;
    if ident(&r["root"]) != Some(c.root) {
        return Err(format!(
            "Pier's root is {}, not {}",
            r["root"],
            described(&c.root)
        ));
    }
    let canon = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let path = std::path::PathBuf::from(project["path"].as_str().unwrap_or_default());
    if canon(&path) != canon(&c.project) {
        return Err(format!(
            "project {}, not {}",
            path.display(),
            c.project.display()
        ));
    }
    let pier_members: BTreeSet<_> = r["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(ident)
        .map(|p| (p.pid, p.start_time))
        .collect();
    let tree = set(&before);
    if pier_members != tree {
        return Err(format!(
            "members: Pier misses [{}], Pier adds [{}]",
            list(&tree.difference(&pier_members).copied().collect()),
            list(&pier_members.difference(&tree).copied().collect())
        ));
    }
    let pier_ports: BTreeSet<SocketAddr> = r["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let ip = truth::parse_ip(p["address"].as_str()?)?;
            Some(SocketAddr::new(ip, p["port"].as_u64()? as u16))
        })
        .collect();
    if pier_ports != listeners {
        return Err(format!(
            "ports: the tree listens on {listeners:?}, Pier shows {pier_ports:?}"
        ));
    }
    // A tool with no helper has only the server's ports (a case with helpers checks them in
    // its own roles step).
    let helpers: Vec<&Value> = r["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| !p["helper"].is_null())
        .collect();
    if c.case.roles.is_none() && !helpers.is_empty() {
        return Err(format!(
            "Pier calls these ports a helper's, in a tool with no helper: {helpers:?}"
        ));
    }
    Ok((r, project))
}

fn evidence(r: &Value) -> Vec<(String, String, String)> {
    r["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("kind"), s("level"), s("message"))
        })
        .collect()
}

fn evidence_text(r: &Value) -> String {
    let v: Vec<String> = evidence(r)
        .into_iter()
        .map(|(_, l, m)| format!("{l}: {m}"))
        .collect();
    format!("{} [{}]", r["level"], v.join("; "))
}

fn has(r: &Value, kind: &str, level: &str, text: &str) -> bool {
    evidence(r)
        .iter()
        .any(|(k, l, m)| k == kind && l == level && m.contains(text))
}

pub fn found(c: &mut Ctx) -> Result<String, String> {
    let (r, _) = poll_alive(c, 90, || matches(c))?;
    c.id = r["id"].as_str().unwrap_or_default().to_owned();
    c.listeners = truth::listeners(&truth::tree(c.root));
    Ok(format!(
        "id {}, {} members, ports {:?}",
        c.id,
        r["members"].as_array().map_or(0, Vec::len),
        c.listeners
    ))
}

pub fn kind(c: &mut Ctx) -> Result<String, String> {
    let (r, _) = matches(c)?;
    if r["kind"] == c.case.kind {
        Ok(format!("kind {}", c.case.kind))
    } else {
        Err(format!(
            "kind {}, expected {}; {}",
            r["kind"],
            c.case.kind,
            evidence_text(&r)
        ))
    }
}

pub fn idle(c: &mut Ctx) -> Result<String, String> {
    let start = Instant::now();
    let r = poll_alive(c, 90, || {
        let (r, _) = matches(c)?;
        let settled = has(&r, "activity", "green", "idle")
            && match (c.case.launch, c.case.yellow) {
                (Launch::Orphan, None) => r["level"] == "green" && has(&r, "orphaned", "green", ""),
                (Launch::Orphan, Some(y)) => {
                    r["level"] == "yellow"
                        && has(&r, "orphaned", "green", "")
                        && has(&r, y.evidence.0, "yellow", y.evidence.1)
                }
                (Launch::Tmux, _) => {
                    r["level"] == "yellow" && has(&r, "not_orphaned", "yellow", "")
                }
            };
        settled
            .then_some(r.clone())
            .ok_or_else(|| evidence_text(&r))
    })?;
    Ok(format!(
        "after {:.1} s: {}",
        start.elapsed().as_secs_f64(),
        evidence_text(&r)
    ))
}

/// The main listener: on `{port}` when the tool has one, else the first.
pub(super) fn main_listener(c: &Ctx) -> Result<SocketAddr, String> {
    c.listeners
        .iter()
        .find(|l| !c.case.main_port || l.port() == c.ports[0])
        .copied()
        .ok_or_else(|| "the tree has no listener".to_owned())
}

pub fn client(c: &mut Ctx) -> Result<String, String> {
    let main = main_listener(c)?;
    let connected = match c.case.client {
        Client::Browser => {
            let host = if main.is_ipv6() && !main.ip().is_unspecified() {
                "[::1]".to_owned()
            } else {
                "localhost".to_owned()
            };
            let url = format!(
                "http://{host}:{}{}",
                main.port(),
                c.case.http_path.unwrap_or("/")
            );
            let profile = c.sandbox.path().join("chromium-profile");
            client::browser(&url, &profile, c.sandbox.path())?
        }
        Client::Tcp => client::tcp(truth::reach(main))?,
        Client::None => return Ok("no client".into()),
    };
    c.client = Some(connected);
    let held = c.client.as_ref().unwrap();
    poll_alive(c, 60, || {
        let ends: BTreeSet<SocketAddr> = held.ends(&c.listeners).into_iter().map(unmap).collect();
        if ends.is_empty() {
            return Err("the client holds no connection to the tool yet".into());
        }
        let (r, _) = matches(c)?;
        let peers: BTreeSet<SocketAddr> = r["connections"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| parse_addr(k["peer"].as_str()?))
            .collect();
        if r["level"] != "red" || !has(&r, "live_connection", "red", "") {
            return Err(format!("client ends {ends:?}, Pier: {}", evidence_text(&r)));
        }
        if peers.is_disjoint(&ends) {
            return Err(format!("client ends {ends:?}, Pier's peers {peers:?}"));
        }
        Ok(format!("red, client ends {ends:?} among Pier's peers"))
    })
}

pub fn client_gone(c: &mut Ctx) -> Result<String, String> {
    c.client = None;
    // Back to the level it settled at: green, or a yellow case's yellow.
    let level = if c.case.yellow.is_some() {
        "yellow"
    } else {
        "green"
    };
    poll_alive(c, 30, || {
        let (r, _) = matches(c)?;
        if r["level"] == level && !has(&r, "live_connection", "red", "") {
            Ok(format!("{level} again"))
        } else {
            Err(evidence_text(&r))
        }
    })
}
