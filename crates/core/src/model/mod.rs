//! The ground floor: the engine's data as plain, serialisable types that depend on nothing above
//! them (no OS, no store, no rules) — one process identity, the cards a scan shows, the shown
//! state a stop is checked against, the recovery snapshot, the outcomes of a stop and a
//! restart, and the history. Every stage reads and writes these; none of them reads the OS.
//!
//! - [`identity`]: [`Identity`] (pid and start time) and [`Pid`];
//! - [`card`]: the `pier scan --json` document: projects, resources, members, ports, evidence;
//! - [`client`]: who holds a connection's other end, and what program it likely is;
//! - [`container`]: a container card and the engines a scan asked;
//! - [`managed`]: who brings a resource back: its process manager, its respawners;
//! - [`memory`]: a process's memory, a tree's, and what a cleanup frees;
//! - [`protect`]: what the user says must never be offered (projects, ports, containers);
//! - [`shown`]: what a card showed the user, which a stop re-checks;
//! - [`snapshot`]: the recovery snapshot, with exact bytes ([`bytes`]);
//! - [`outcome`]: a stop's member outcomes, newcomers and result;
//! - [`history`]: a restart's result and `pier history`'s lines;
//! - [`target`]: the names of targets and records ([`TargetId`], [`RecordName`]), one grammar;
//! - [`request`]: who asked for a stop ([`RequestedBy`]); [`agent`]: what an agent asked for;
//! - [`reason`]: every fact against a stop as one typed [`reason::Reason`], and what may set each aside;
//! - [`doctor`]: `pier doctor`'s report: the self-test's checks;
//! - [`idle`]: what the idle clock says of a resource; [`arm`]: an armed stop ("stop when safe");
//! - [`rules`]: the user's automatic-stop rules, a pause, memory pressure, and what they say of a card;
//! - `examples`: cards built by hand, for tests (feature `test-support`).

pub mod agent;
pub mod arm;
pub mod bytes;
pub mod card;
pub mod client;
pub mod container;
pub mod doctor;
#[cfg(any(test, feature = "test-support"))]
pub mod examples;
pub mod history;
pub mod identity;
pub mod idle;
pub mod managed;
pub mod memory;
pub mod outcome;
pub mod protect;
pub mod reason;
pub mod request;
pub mod rules;
pub mod shown;
pub mod snapshot;
pub mod target;

pub use card::SCHEMA_VERSION;
pub use identity::{Identity, Pid};
pub use request::RequestedBy;
pub use target::{RecordName, TargetId, TargetKind};
