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
    if let Some(port) = port_meant(bad) {
        return Some(usage(&format!(
            "{bad:?} is not a resource id, and a port is a colon then its number. Did you \
             mean :{port}?"
        )));
    }
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

/// The port an argument written as an address names: `5173:`, `localhost:5173`,
/// `127.0.0.1:5173`, `[::1]:5173`, `http://localhost:5173/`. Why: people copy the address a
/// dev server prints, or put the colon on the wrong side; `pier stop :5173` is what they
/// meant, and it is only suggested (it stops what `pier stop :5173` would, after they type it).
fn port_meant(arg: &str) -> Option<u16> {
    let bare = arg
        .strip_prefix("http://")
        .or_else(|| arg.strip_prefix("https://"))
        .unwrap_or(arg);
    let bare = bare.strip_suffix('/').unwrap_or(bare);
    let digits = |d: &str| match port::parse(&format!(":{d}")) {
        Some(Ok(p)) => Some(p),
        _ => None,
    };
    if let Some(d) = bare.strip_suffix(':') {
        return digits(d);
    }
    let (host, d) = bare.rsplit_once(':')?;
    let local = host == "localhost"
        || host.parse::<std::net::Ipv4Addr>().is_ok()
        || host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .is_some_and(|h| h.parse::<std::net::Ipv6Addr>().is_ok());
    local.then(|| digits(d)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_or_a_colon_after_the_number_means_its_port() {
        for (typed, port) in [
            ("5173:", 5173),
            ("localhost:5173", 5173),
            ("127.0.0.1:5173", 5173),
            ("0.0.0.0:8000", 8000),
            ("[::1]:3000", 3000),
            ("http://localhost:5173/", 5173),
            ("https://127.0.0.1:8443", 8443),
        ] {
            assert_eq!(port_meant(typed), Some(port), "{typed:?}");
        }
        for typed in [
            "container-12",
            "6989-372106x",
            ":5173",
            "5173",
            "0:",
            "70000:",
            "05173:",
            "example.com:80",
            "localhost:",
            "localhost:http",
            ":",
        ] {
            assert_eq!(port_meant(typed), None, "{typed:?}");
        }
    }
}
