//! Acting when it is safe (docs/design.md §5a): the stops Pier runs on its own, never on a
//! click. Each one is a full stop through the checkpoint chain (`crate::stop`), asked for by
//! who set it up. [`arms`] holds the armed stops ("stop when safe"): their records, whether a
//! card may be armed, and the judge asked at each rescan (fire, wait, or drop);
//! [`rules`] are the user's opt-in rules and their judge, [`pause`] their pause;
//! [`scheduler`] keeps the idle clock between rescans and fires what the judges say is due;
//! [`lock`] lets one scheduler per user act; [`service`] is `pier watch`'s unit or agent.

pub mod arms;
pub mod lock;
pub mod pause;
pub mod rules;
pub mod scheduler;
pub mod service;
pub mod view;

/// Who a record that stands for the user, not a process, speaks for (the pause, the view).
/// Why a fixed identity: the store changes a record only on behalf of the identity it names.
pub(crate) const NOBODY: crate::model::Identity = crate::model::Identity {
    pid: 0,
    start_time: 0,
};
