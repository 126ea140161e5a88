//! "Did you mean" for an argument of `pier stop` that is no id at all (`6989-372106x`): the
//! usage error names the one current card whose id is close to it, from a scan of the user's
//! own cards (`diagnose::suggest`). Words only: a suggestion is never acted on.

use std::process::ExitCode;

use pier_core::diagnose::rules::Thresholds;
use pier_core::diagnose::{port, suggest};
use pier_core::model::target::TargetId;
use pier_core::probe::Probe;

use crate::cli::{not_a_resource_id, usage};

/// An argument that is neither an id, nor `:PORT`, nor a bare number (asked about,
/// `ask.rs`).
fn malformed(arg: &str) -> bool {
    port::parse(arg).is_none()
        && !super::ask::is_bare_number(arg)
        && arg.parse::<TargetId>().is_err()
}

/// The first malformed argument, refused (exit 2) with the card it may have meant; `None`
/// when every argument is well-formed (no scan is made then).
pub(super) fn refuse_malformed(
    ids: &[String],
    probe: &(dyn Probe + Sync),
    t: Thresholds,
) -> Option<ExitCode> {
    let bad = ids.iter().find(|a| malformed(a))?;
    let mut why = not_a_resource_id(bad);
    // A scan that cannot be made only loses the suggestion: the refusal stands.
    let scan = pier_core::diagnose::scan(
        probe,
        &super::selection_options(t),
        &pier_core::diagnose::project::marker_on_disk,
    );
    if let Some(s) = scan.ok().and_then(|scan| suggest::did_you_mean(&scan, bad)) {
        let mut meant = pier_core::words::did_you_mean(&s);
        meant[..1].make_ascii_uppercase();
        why = format!("{why} {meant}");
    }
    Some(usage(&why))
}
