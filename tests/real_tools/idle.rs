//! The idle clock against real tools (docs/real-tools.md, "The idle clock"): several tools
//! started the way developers start them, each in its own project of one sandbox, watched by one
//! `pier watch --json --every 2`. Each tool, left alone, must reach `idle` within
//! [`FIRST_IDLE`] of its launch and stay idle for [`QUIET`] rescans (its own timers under the
//! bounds); then one real `GET` must make its next interval `active`, with why, and it must be
//! idle again within [`IDLE_AGAIN`]. The figures of each quiet stretch are read from `/proc`
//! ([`truth::used`]), never from Pier, and printed as a table.

use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::watch::{clock, in_rescan, Watch};
use super::{cache, client, launch, lock, truth, Case, Cleanup};
use crate::common::{self, Sandbox, Started};

/// Seconds between two rescans of the watch.
pub const EVERY: u64 = 2;
/// The longest a tool may take from its launch to its first idle interval: its start-up burst
/// (Vite's dependency scan, Next's first compile) and a rescan or two.
pub const FIRST_IDLE: Duration = Duration::from_secs(60);
/// Idle rescans in a row that show a tool's own timers stay under the bounds.
pub const QUIET: u32 = 5;
/// The longest a tool may stay active after one request: a closed connection shows for 60 s
/// (TIME-WAIT), then an interval or two.
pub const IDLE_AGAIN: Duration = Duration::from_secs(60 + 6 * EVERY);
/// The whole run's deadline.
const ALL_DONE: Duration = Duration::from_secs(200);

/// Where one tool stands.
enum Phase {
    /// Started, waiting for [`QUIET`] idle rescans in a row.
    Settling,
    /// The request runs on its own thread: when it answered, and the status line.
    Asking(JoinHandle<Result<(Instant, String), String>>),
    /// The request answered at this instant: the next rescan must be active.
    Asked(Instant),
    /// Active after the request, since the answer at this instant: waiting for idle.
    Cooling(Instant),
    Done,
}

/// What a tool's quiet stretch used per second, from `/proc`.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub cpu_percent: f64,
    pub bytes_per_second: f64,
    pub calls_per_second: f64,
    pub secs: f64,
}

/// One tool of the run, and what was seen of it.
struct Tool<'c> {
    case: &'c Case,
    project: PathBuf,
    ports: [u16; 3],
    root: Started,
    launched: Instant,
    phase: Phase,
    first_idle: Option<Duration>,
    quiet: u32,
    quiet_from: Option<(Instant, truth::Used)>,
    figures: Option<Figures>,
    /// Why its intervals were active before it settled (the start-up burst), in order.
    busy: Vec<String>,
    answer: Option<String>,
    flipped: Option<String>,
    again: Option<Duration>,
    failed: Option<String>,
}

impl Tool<'_> {
    /// One rescan, arrived at `at`: the tool's card in it, if any.
    fn on_rescan(&mut self, r: Option<&Value>, at: Instant) {
        if let Phase::Asking(h) = &self.phase {
            if h.is_finished() {
                let Phase::Asking(h) = std::mem::replace(&mut self.phase, Phase::Done) else {
                    unreachable!()
                };
                match h.join().expect("the request thread ends") {
                    Ok((answered, line)) => {
                        self.answer = Some(line);
                        self.phase = Phase::Asked(answered);
                    }
                    Err(e) => self.failed = Some(e),
                }
            }
        }
        let Some(r) = r else { return };
        let (state, why) = clock(r);
        match self.phase {
            Phase::Settling => self.settling(state, why, at),
            Phase::Asked(answered) if at > answered => {
                if state == "active" {
                    self.flipped = Some(why.to_owned());
                    self.phase = Phase::Cooling(answered);
                } else {
                    self.failed = Some(format!(
                        "the first rescan after the request answered says {state}, not active"
                    ));
                    self.phase = Phase::Done;
                }
            }
            Phase::Cooling(answered) if state == "idle" => {
                self.again = Some(at - answered);
                self.phase = Phase::Done;
            }
            _ => {}
        }
    }

    /// Settling: count idle rescans in a row; at [`QUIET`], the figures, and the request.
    fn settling(&mut self, state: &str, why: &str, at: Instant) {
        if state != "idle" {
            if state == "active" && self.busy.last().map(String::as_str) != Some(why) {
                self.busy.push(why.to_owned());
            }
            self.quiet = 0;
            self.quiet_from = None;
            return;
        }
        self.first_idle.get_or_insert(at - self.launched);
        self.quiet += 1;
        let now = truth::used(&truth::tree(self.root));
        let Some((from, was)) = self.quiet_from else {
            self.quiet_from = Some((at, now));
            return;
        };
        if self.quiet >= QUIET {
            let secs = (at - from).as_secs_f64();
            let rate = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
            self.figures = Some(Figures {
                cpu_percent: rate(was.cpu_ns, now.cpu_ns) / 1e7,
                bytes_per_second: rate(was.io_bytes, now.io_bytes),
                calls_per_second: rate(was.calls, now.calls),
                secs,
            });
            self.phase = Phase::Asking(self.ask());
        }
    }

    /// One whole real request on the tool's main port ([`client::whole_request`]), on a
    /// thread of its own (Next compiles the page first): when it answered, and its status line.
    fn ask(&self) -> JoinHandle<Result<(Instant, String), String>> {
        let listeners = truth::listeners(&truth::tree(self.root));
        let main = listeners
            .iter()
            .find(|l| l.port() == self.ports[0])
            .or(listeners.iter().next())
            .copied();
        let path = self.case.http_path.unwrap_or("/");
        std::thread::spawn(move || {
            let main = main.ok_or("no listener to ask")?;
            let (line, bytes) =
                client::whole_request(truth::reach(main), path, Duration::from_secs(60))?;
            Ok((Instant::now(), format!("{line}, {bytes} bytes")))
        })
    }

    fn done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// What went wrong with this tool against the bounds, if anything.
    fn wrong(&self) -> Option<String> {
        let name = self.case.name;
        if let Some(f) = &self.failed {
            return Some(format!("{name}: {f}"));
        }
        match (self.first_idle, self.figures, &self.flipped, self.again) {
            (None, ..) => Some(format!("{name}: never idle; busy: {:?}", self.busy)),
            (Some(t), ..) if t > FIRST_IDLE => Some(format!(
                "{name}: first idle after {:.0} s (more than {} s); busy: {:?}",
                t.as_secs_f64(),
                FIRST_IDLE.as_secs(),
                self.busy
            )),
            (_, None, ..) => Some(format!(
                "{name}: not idle for {QUIET} rescans in a row; busy: {:?}",
                self.busy
            )),
            (_, _, None, _) => Some(format!("{name}: the request's interval was never seen")),
            // A whole request closes cleanly: its connection shows for a minute, and the
            // interval that held it names it, whatever CPU the answer took.
            (_, _, Some(why), _) if !why.contains("connection") => Some(format!(
                "{name}: the request's interval was active for {why:?}, not its connection"
            )),
            (.., None) => Some(format!(
                "{name}: not idle again within {} s of the request",
                IDLE_AGAIN.as_secs()
            )),
            (.., Some(t)) if t > IDLE_AGAIN => Some(format!(
                "{name}: idle again only {:.0} s after the request",
                t.as_secs_f64()
            )),
            _ => None,
        }
    }

    /// The tool's row of the table.
    fn row(&self) -> String {
        let secs =
            |d: Option<Duration>| d.map_or("-".to_owned(), |d| format!("{:.0}", d.as_secs_f64()));
        let figures = self.figures.map_or("-".to_owned(), |f| {
            format!(
                "{:.2}% CPU, {:.0} B/s, {:.1} calls/s over {:.0} s",
                f.cpu_percent, f.bytes_per_second, f.calls_per_second, f.secs
            )
        });
        format!(
            "| {} | {} | {figures} | {} ({}) | {} |",
            self.case.name,
            secs(self.first_idle),
            self.flipped.as_deref().unwrap_or("-"),
            self.answer.as_deref().unwrap_or("no answer"),
            secs(self.again)
        )
    }
}

/// Starts every case, watches them settle, asks each once, and judges each against the bounds.
pub fn run_idle(name: &str, cases: &[Case]) {
    let mut dirs = Vec::new();
    for case in cases {
        let Some(dir) = cache(case) else { return };
        dirs.push(dir);
    }
    if common::fixtures_cannot_be_orphans(name) {
        return;
    }
    let cache = &dirs[0];
    let _lock = lock(cache);
    let sandbox = Sandbox::new();
    let mut cleanup = Cleanup::default();
    cleanup.folder = Some(sandbox.path().to_path_buf());
    let watch = Watch::start(&sandbox, EVERY, 60);
    let mut tools: Vec<Tool> = cases
        .iter()
        .map(|case| {
            let (project, ports, root) = launch::start_in(case, cache, sandbox.path());
            cleanup.roots.push(root);
            tool(case, project, ports, root)
        })
        .collect();
    let deadline = Instant::now() + ALL_DONE;
    while !tools.iter().all(Tool::done) {
        let Some((at, line)) = watch.next(deadline) else {
            break;
        };
        for t in &mut tools {
            t.on_rescan(in_rescan(&line, &t.project), at);
        }
    }
    report(name, &tools);
}

fn tool(case: &Case, project: PathBuf, ports: [u16; 3], root: Started) -> Tool<'_> {
    Tool {
        case,
        project,
        ports,
        root,
        launched: Instant::now(),
        phase: Phase::Settling,
        first_idle: None,
        quiet: 0,
        quiet_from: None,
        figures: None,
        busy: Vec::new(),
        answer: None,
        flipped: None,
        again: None,
        failed: None,
    }
}

/// The table of every tool, then the test's verdict.
fn report(name: &str, tools: &[Tool]) {
    eprintln!(
        "{name}: | tool | s to first idle | idle figures (/proc) | the request's interval | s to idle again |"
    );
    for t in tools {
        eprintln!("{name}: {}", t.row());
        if !t.busy.is_empty() {
            eprintln!("{name}:   {} before it settled: {:?}", t.case.name, t.busy);
        }
    }
    let wrong: Vec<String> = tools.iter().filter_map(Tool::wrong).collect();
    assert!(wrong.is_empty(), "{name}: {}", wrong.join("; "));
}
