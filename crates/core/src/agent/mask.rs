//! What an agent is never told: an environment (no reply carries one), and argv values that
//! look like secrets (docs/design.md §7a), masked before any reply leaves.

/// What a masked value reads as.
pub const MASK: &str = "•••";

/// `argv` with every value that looks like a secret replaced by [`MASK`]: the value after a
/// flag named like a token, key, secret or password (`--api-key X`, `--token=X`), a
/// `NAME=value` whose name is, and a URL's password (`postgres://u:X@h`).
pub fn argv(argv: &[String]) -> Vec<String> {
    todo!("mask {argv:?}")
}

/// A whole command line, space-joined, masked as [`argv`] masks its words.
pub fn command(line: &str) -> String {
    todo!("{line}")
}

/// Every argv and command line in a scan.
pub fn scan(scan: &mut crate::model::card::Scan) {
    todo!("{}", scan.projects.len())
}

/// Every command line in a port's answer.
pub fn port(answer: &mut crate::diagnose::port::PortAnswer) {
    todo!("{}", answer.port)
}

/// Every argv and command line in a stop's report.
pub fn report(report: &mut crate::model::outcome::StopReport) {
    todo!("{}", report.id)
}

/// Every command line in a history entry; the environment entries it names keep their names.
pub fn history(entry: &mut crate::model::history::HistoryEntry) {
    todo!("{}", entry.snapshot)
}

/// Every command line in a restart's report; the environment entries keep their names.
pub fn restart(report: &mut crate::model::history::RestartReport) {
    todo!("{:?}", report.result)
}
