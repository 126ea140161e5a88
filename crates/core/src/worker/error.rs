//! Why the worker has no answer of the engine's to hand on: a refresh without its scan or its
//! history, a stop without a report for a target, an engine call that panicked. Each is a type
//! the UI can match, with its sentence made here; every one is `Clone`, as the updates that
//! carry them are (the UI keeps the last).

use std::sync::Arc;

use crate::diagnose::ScanError;

/// The engine panicked while it worked; what it was doing, and the panic's message, are in the
/// log. One bad item never takes a batch or a result line down with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Pier hit an internal error ({0}); see app.log")]
pub struct Panicked(
    /// The panic's message.
    pub String,
);

/// Why a target of a stop has no report: whether signals were sent to it is then unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoReport {
    /// The engine panicked inside the batch, before this target's report was final.
    #[error(transparent)]
    Panicked(#[from] Panicked),
    /// The batch ended and gave no report for it.
    #[error("Pier gave no report for it")]
    Missing,
}

/// Why a refresh has no scan, or no snapshot history, to show.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RefreshError {
    /// The scan could not be made (shared: the update that carries it is cloned).
    #[error(transparent)]
    Scan(Arc<ScanError>),
    /// The snapshot history could not be read, in `restart::history`'s words.
    #[error("{0}")]
    History(String),
}

impl From<ScanError> for RefreshError {
    fn from(e: ScanError) -> Self {
        Self::Scan(Arc::new(e))
    }
}
