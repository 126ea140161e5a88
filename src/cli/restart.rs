//! `pier history` and `pier restart SNAPSHOT`.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use super::{print, usage, EXIT_FAILED, EXIT_NOT_ALL_STOPPED};
use crate::probe;
use crate::restart::{self, HistoryEntry, RestartReport, RestartResult};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RestartArgs {
    /// A snapshot as `pier history` names it (`snap-…`), or a resource id (its newest snapshot).
    snapshot: String,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds to wait for the server's recorded ports to listen again (a helper's are not
    /// waited for).
    #[arg(long, value_name = "SECS", default_value_t = 15.0)]
    wait: f64,
}

#[derive(Serialize)]
struct HistoryDocument<'a> {
    schema: u32,
    snapshots: &'a [HistoryEntry],
    /// Records that could not be read; they were kept as they are.
    unreadable: &'a [String],
}

fn open_store() -> Result<Store, ExitCode> {
    Store::open().map_err(|e| {
        eprintln!("pier: {e}");
        ExitCode::from(EXIT_FAILED)
    })
}

/// Runs `pier history`.
pub fn history(args: HistoryArgs) -> ExitCode {
    let store = match open_store() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let probe = probe::system_probe();
    let (entries, unreadable) = match restart::history(probe.as_ref(), &store) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("pier: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if args.json {
        let doc = HistoryDocument {
            schema: 1,
            snapshots: &entries,
            unreadable: &unreadable,
        };
        let mut text = serde_json::to_vec_pretty(&doc).expect("history serialises");
        text.push(b'\n');
        return print(&text);
    }
    let mut out = String::new();
    if entries.is_empty() && unreadable.is_empty() {
        out.push_str("No snapshots yet.\n");
    }
    for e in &entries {
        let server: Vec<&str> = e.server_ports().map(String::as_str).collect();
        let _ = writeln!(
            out,
            "{}  {}  stopped {}  {}  ports {}",
            e.snapshot,
            e.project,
            e.stopped_at,
            e.result.as_deref().unwrap_or("unfinished"),
            if server.is_empty() {
                "none".into()
            } else {
                server.join(", ")
            }
        );
        if !e.helper_ports.is_empty() {
            let _ = writeln!(out, "    a helper's ports: {}", e.helper_ports.join(", "));
        }
        let _ = writeln!(out, "    {}", e.root_command.join(" "));
        let _ = match &e.why_not {
            None => writeln!(out, "    can be restarted"),
            Some(why) => writeln!(out, "    cannot be restarted: {why}"),
        };
    }
    for u in &unreadable {
        let _ = writeln!(out, "unreadable: {u}");
    }
    print(out.as_bytes())
}

/// Runs `pier restart`.
pub fn restart(args: RestartArgs) -> ExitCode {
    if !args.wait.is_finite() || args.wait < 0.0 {
        return usage(&format!(
            "--wait {}: must be a number of seconds, zero or more",
            args.wait
        ));
    }
    let store = match open_store() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let probe = probe::system_probe();
    let report = match restart::find(&store, &args.snapshot) {
        Ok((name, _)) => restart::restart(
            probe.as_ref(),
            &store,
            &name,
            Duration::from_secs_f64(args.wait),
        ),
        Err(why) => RestartReport {
            snapshot: args.snapshot.clone(),
            result: RestartResult::Refused,
            reason: why,
            pid: None,
            start_time: None,
            log: None,
            log_tail: Vec::new(),
            helper_ports: Vec::new(),
        },
    };
    let written = if args.json {
        let mut text = serde_json::to_vec_pretty(&report).expect("reports serialise");
        text.push(b'\n');
        print(&text)
    } else {
        let result = serde_json::to_value(report.result).expect("a result serialises");
        let result = result.as_str().unwrap_or_default().to_uppercase();
        let mut out = format!("{}  {result}  {}\n", report.snapshot, report.reason);
        if !report.helper_ports.is_empty() {
            let _ = writeln!(
                out,
                "    not waited for (a helper's ports): {}",
                report.helper_ports.join(", ")
            );
        }
        if let Some(log) = &report.log {
            let _ = writeln!(out, "    log {log}");
        }
        for line in &report.log_tail {
            let _ = writeln!(out, "    | {line}");
        }
        print(out.as_bytes())
    };
    if written != ExitCode::SUCCESS {
        return written;
    }
    match report.result {
        RestartResult::Ready => ExitCode::SUCCESS,
        RestartResult::Failed => ExitCode::from(EXIT_FAILED),
        RestartResult::NotReady | RestartResult::Refused => ExitCode::from(EXIT_NOT_ALL_STOPPED),
    }
}
