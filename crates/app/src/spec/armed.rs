//! "Stop when safe" on a resource of a yellow or red card (docs/design.md §5a): one item that
//! arms a stop the app's worker runs once the card is green and has stayed green for a settle;
//! and, on a resource an arm waits on, what it waits for and "Cancel armed stop". Offered only
//! where an armed stop waits for every reason to clear ([`ids::offers_when_safe`]).

use pier_core::auto::arms::holds_kernel;
use pier_core::model::card::{Project, Resource};
use pier_core::worker::ActionKey;

use super::{shortened, Entry};
use crate::ids::{self, Click};
use crate::state::UiState;

/// The item that arms a stop.
pub const ARM: &str = "Stop when safe";

/// The same item on a resource holding a live notebook kernel: clicking it is the
/// confirmation that the kernel's state is lost.
pub const ARM_KERNEL: &str = "Stop when safe (its notebook kernel's state will be lost)";

/// The item that cancels an arm.
pub const CANCEL: &str = "Cancel armed stop";

/// The armed-stop lines of `r`, the `i`th resource of the card of `p`: the arm and its cancel
/// when one waits on it, else "Stop when safe" where the card offers it, else nothing. Each
/// item is enabled as "Clean up safely" is, when no action on the card runs. `at` names each
/// line.
pub fn lines(
    state: &UiState,
    p: &Project,
    i: usize,
    r: &Resource,
    at: &dyn Fn(&str) -> String,
) -> Vec<Entry> {
    let Ok(id) = r.id.parse() else {
        return Vec::new();
    };
    let key = ActionKey::Project(p.path.clone());
    let enabled = !state.is_running(&key) && state.may_stop().is_ok();
    if let Some(armed) = &r.armed {
        let waits = match armed.waiting_for.first() {
            Some(first) => format!("waiting for {first}"),
            None => "due at the next scan".to_owned(),
        };
        let cancel = Click::CancelArmed {
            path: p.path.clone(),
            id,
        };
        return vec![
            Entry::info(
                at(&format!("res:{i}:armed")),
                shortened(&format!("Armed: stops when safe — {waits}")),
            ),
            Entry::action(&cancel, CANCEL, !state.is_running(&key)),
        ];
    }
    if !ids::offers_when_safe(p, r) {
        return Vec::new();
    }
    let kernel = holds_kernel(r);
    let click = Click::StopWhenSafe {
        path: p.path.clone(),
        id,
        seen: ids::card_seen(p),
        kernel,
    };
    let text = if kernel { ARM_KERNEL } else { ARM };
    vec![Entry::action(&click, text, enabled)]
}

#[cfg(test)]
mod tests;
