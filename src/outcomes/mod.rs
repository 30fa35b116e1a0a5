//! Outcomes: what became of each finding after its report was read, computed in one place.
//!
//! A report is a record that is read as much as written. Its Resolution says what the author
//! did about each finding (`deep-review resolve`), and the next round of the same change says
//! what was raised again, declined, or not raised any more. Read together, they give each
//! finding a fate:
//!
//! - **acted on**: Fixed, Test written, Documentation updated, whether in its own report's
//!   Resolution or in a later round's (the finding raised again and then fixed);
//! - **declined**: Skipped or Commented, in its own report or a later round's, or listed as
//!   declined by a later round;
//! - **unknown**: no decision recorded, or a later round no longer raised it but nobody said
//!   why ("resolved without decision"), or a decision in words the tool does not know.
//!
//! The latest decision on a defect is its fate, as for rounds. A finding raised again in a
//! later round (`persisting`) is the same defect: it is counted once, in the round that first
//! raised it, with the agents of every round that raised it. Each fate carries where it came
//! from ([`Provenance`]).
//!
//! What reads outcomes:
//!
//! - [`stats`]: each agent's scorecard (`deep-review stats`);
//! - [`reliability`]: each agent's record (a Beta posterior of its chances, shrunk toward
//!   today's defaults), which `stats` shows and `bench --learn` weighs confidence with
//!   ([`crate::consolidate::confidence::record_term`]); a run does not (ARCHITECTURE.md);
//! - [`agreement`]: the same chances estimated from agreement alone (Dawid-Skene), for a team
//!   with no decisions recorded yet, shown when asked.
//!
//! Forge thread states are not read yet: a report does not record the state of deep-review's
//! own comment threads (the pull request target keeps other people's unresolved threads only).

pub mod agreement;
pub mod fates;
pub mod load;
pub mod reliability;
pub mod stats;

pub use crate::types::outcomes::{FindingOutcome, Outcome, Provenance, ProvenanceKind};
pub use fates::of_reports;
