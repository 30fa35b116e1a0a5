//! Rounds: a change reviewed again after each fix is one story, not a series of first reviews.
//!
//! The reports of one change (its pull request when known, else its branch) are its rounds,
//! in time order. What this module does with them:
//!
//! - [`history`]: finds a change's earlier reports (in the store, or given as files with
//!   `consolidate --prior`, this tool's JSON or Markdown or the reference system's Markdown)
//!   and reads each as a [`PriorRound`]: its findings with what the author decided about them;
//! - [`code`]: tells, by reading commits through git (never the working tree), whether an
//!   earlier finding's code is still there at a later head;
//! - [`crate::consolidate::matching`] (consolidation's, as it decides with it): matches a new
//!   round's findings to the earlier ones (fingerprint, location, quoted code, text), so
//!   consolidation can drop what was declined and its code did not change, flag what was fixed
//!   and is back as regressed, and say what was resolved;
//! - [`brief`]: what the next round's brief says about the earlier rounds and the interdiff;
//! - [`resolve`]: records the author's decisions (`deep-review resolve`) in a report.

pub mod brief;
pub mod code;
pub mod history;
pub mod resolve;

pub use crate::types::history::{History, PriorFinding, PriorRound, TargetKey};

/// A commit id as reports record them (7 to 64 hex digits): a report's `head` is used in git
/// commands only when it is one, so a hand-edited report cannot slip an option into them.
pub fn is_sha(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
}
