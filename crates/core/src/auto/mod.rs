//! Acting when it is safe (docs/design.md §5a): the stops Pier runs on its own, never on a
//! click. Each one is a full stop through the checkpoint chain (`crate::stop`), asked for by
//! who set it up. [`arms`] holds the armed stops ("stop when safe"): their records in the
//! state folder, whether a card may be armed, and the judge a scheduler's tick asks at each
//! rescan (fire, wait, or drop); the tick itself, which fires, is the scheduler's.

pub mod arms;
