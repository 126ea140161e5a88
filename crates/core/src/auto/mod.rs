//! Acting when it is safe (docs/design.md §5a): the stops Pier runs on its own, never on a
//! click. Each one is a full stop through the checkpoint chain (`crate::stop`), asked for by
//! who set it up. [`arms`] holds the armed stops ("stop when safe"): their records, whether a
//! card may be armed, and the judge asked at each rescan (fire, wait, or drop);
//! [`scheduler`] keeps the idle clock between rescans and fires what the judge says is due.

pub mod arms;
pub mod pause;
pub mod rules;
pub mod scheduler;
pub mod view;
