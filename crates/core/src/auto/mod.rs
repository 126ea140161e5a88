//! Acting when it is safe (docs/design.md §5a): the scheduler that measures idleness over time
//! and fires armed stops.

pub mod scheduler;
