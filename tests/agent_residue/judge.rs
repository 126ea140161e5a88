//! Pier's answers on a real parent's tree, each checked against the truth read from `/proc`.

use serde_json::Value;

use crate::common::{resource_with, resources, Sandbox, Started};
use crate::real_tools::{poll, truth};

/// One line naming a card: id, kind, level and what argues against a stop.
pub fn named(r: &Value) -> String {
    format!(
        "{} {} {} against {:?}",
        r["id"],
        r["kind"],
        r["level"],
        crate::common::against(r)
    )
}

/// The card holding any member of `tree`, in one scan scoped to the sandbox.
pub fn card(sb: &Sandbox, tree: &[Started]) -> Option<Value> {
    let scan = sb.scan(&[]);
    tree.iter()
        .find_map(|p| resource_with(&scan, p.pid))
        .map(|(_, r)| r)
}

/// No card holds a member of `tree` (a server under its live parent is not residue).
pub fn no_card(sb: &Sandbox, tree: &[Started]) -> Result<(), String> {
    match card(sb, tree) {
        Some(r) => Err(format!(
            "a card for a tree under a live parent: {}",
            named(&r)
        )),
        None => Ok(()),
    }
}

/// Pier shows nothing at all under the sandbox (what exited by itself left nothing behind).
pub fn nothing(sb: &Sandbox) -> Result<(), String> {
    let scan = sb.scan(&[]);
    let shown: Vec<String> = resources(&scan).iter().map(|(_, r)| named(r)).collect();
    if shown.is_empty() {
        Ok(())
    } else {
        Err(format!("cards after the tree exited: {shown:?}"))
    }
}

/// Within `secs`, the card of `tree` is rooted at its root, of `kind`, at `level`, and holds
/// exactly the tree's live members. Answers its id.
pub fn judged(
    sb: &Sandbox,
    tree: &[Started],
    kind: &str,
    level: &str,
    secs: u64,
) -> Result<String, String> {
    poll(secs, || {
        let r = card(sb, tree).ok_or("no card holds the tree")?;
        let members: Vec<u64> = r["members"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["pid"].as_u64())
            .collect();
        let live: Vec<u64> = truth::tree(tree[0])
            .iter()
            .map(|p| u64::from(p.pid))
            .collect();
        let root_ok = r["root"]["pid"].as_u64() == Some(u64::from(tree[0].pid));
        let same = live.iter().all(|p| members.contains(p)) && members.len() == live.len();
        if r["kind"] == kind && r["level"] == level && root_ok && same {
            Ok(r["id"].as_str().unwrap_or_default().to_owned())
        } else {
            Err(format!(
                "{}; members {members:?}, the tree {live:?}",
                named(&r)
            ))
        }
    })
}

/// `pier stop ID --json`: stopped (exit 0), every live member of `tree` reported with a true
/// outcome, and the whole tree gone within the grace and 15 s.
pub fn stop(sb: &Sandbox, id: &str, tree: &[Started]) -> Result<String, String> {
    let before: Vec<Started> = tree.iter().copied().filter(|p| truth::runs(*p)).collect();
    let out = sb.pier_exact(&["stop", id, "--json"]);
    let (code, doc) = crate::common::exit_and_json(&out);
    let res = &doc["results"][0];
    let mut wrong = Vec::new();
    if code != 0 || res["result"] != "stopped" {
        wrong.push(format!(
            "exit {code}, result {} ({})",
            res["result"], res["reason"]
        ));
    }
    let reported: Vec<(u64, String)> = res["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| Some((m["pid"].as_u64()?, m["outcome"].as_str()?.to_owned())))
        .collect();
    for p in &before {
        match reported.iter().find(|(pid, _)| *pid == u64::from(p.pid)) {
            None => wrong.push(format!(
                "{} ({}) not in the report",
                p.pid,
                truth::command(p.pid)
            )),
            Some((_, o)) if (o == "still_running") != truth::runs(*p) => {
                wrong.push(format!("{} reported {o}, runs: {}", p.pid, truth::runs(*p)))
            }
            Some(_) => {}
        }
    }
    if let Err(e) = super::gone(tree, 20) {
        wrong.push(e);
    }
    let summary = format!("stopped {id}: {reported:?}");
    if wrong.is_empty() {
        Ok(summary)
    } else {
        Err(format!("{summary}; wrong: {}", wrong.join("; ")))
    }
}

/// `pier restart ID --json` is refused (exit 3) with a sentence, and starts nothing.
pub fn restart_refused(sb: &Sandbox, id: &str) -> Result<String, String> {
    let out = sb.pier_exact(&["restart", id, "--json"]);
    let (code, doc) = crate::common::exit_and_json(&out);
    if let (Some(pid), Some(start_time)) = (doc["pid"].as_u64(), doc["start_time"].as_u64()) {
        sb.own(Started {
            pid: pid as u32,
            start_time,
        });
    }
    let reason = doc["reason"].as_str().unwrap_or_default();
    let sentence = reason.len() > 20 && reason.contains(' ');
    if code == 3 && doc["result"] == "refused" && sentence {
        Ok(format!("restart refused: {reason}"))
    } else {
        Err(format!(
            "restart: exit {code}, {doc}; expected refused with a sentence"
        ))
    }
}
