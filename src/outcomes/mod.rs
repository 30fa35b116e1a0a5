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
//! - [`reliability`]: each agent's record as consolidation weighs it (a Beta posterior of its
//!   chances, shrunk toward today's defaults), threaded into confidence
//!   ([`crate::consolidate::confidence::record_term`]);
//! - [`agreement`]: the same chances estimated from agreement alone (Dawid-Skene), for a team
//!   with no decisions recorded yet, used only when asked.
//!
//! Forge thread states are not read yet: a report does not record the state of deep-review's
//! own comment threads (the pull request target keeps other people's unresolved threads only).

pub mod agreement;
pub mod fates;
pub mod load;
pub mod reliability;
pub mod stats;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::types::{Action, Severity};

pub use fates::of_reports;

/// What became of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The author changed something for it: code, a test, the documentation.
    ActedOn,
    /// The author decided not to act on it: skipped with a reason, or answered with a comment.
    Declined,
    /// No decision is known.
    Unknown,
}

impl Outcome {
    /// The fate an author's decision gives a finding.
    pub fn of_action(action: &Action) -> Outcome {
        if action.addresses() {
            Outcome::ActedOn
        } else if action.declines() {
            Outcome::Declined
        } else {
            Outcome::Unknown
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::ActedOn => "acted on",
            Outcome::Declined => "declined",
            Outcome::Unknown => "unknown",
        }
    }
}

/// Where a fate was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProvenanceKind {
    /// A row of a report's Resolution: the finding's own report, or a later round's where the
    /// finding was raised again.
    Resolution,
    /// A later round's "Declined in prior rounds" or "resolved" list.
    LaterRound,
    /// A later round no longer raised it and no decision was recorded: unknown.
    NotRaisedAgain,
    /// Nothing was recorded about it.
    NoDecision,
}

/// Where a finding's fate comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    pub kind: ProvenanceKind,
    /// The report that says it (absent for [`ProvenanceKind::NoDecision`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The decision as recorded (`Fixed`, `Skipped`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The finding's id in the report that says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A finding of a report, as first raised, with what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingOutcome {
    /// The change it was raised on: the repository and its pull request or branch
    /// (`acme/app · PR #236`), or the report id when the report names neither.
    pub change: String,
    /// The report that first raised it.
    pub report_id: String,
    pub round: u32,
    /// Its id in that report (`I1`).
    pub id: String,
    pub title: String,
    /// Its calibrated severity in that report.
    pub severity: Severity,
    /// Its category, lower case (`regression`); `None` when none was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The agents that raised it, in any round.
    pub agents: Vec<String>,
    /// The agents that reviewed the change in the rounds that raised it (raised it or not).
    pub reviewed_by: Vec<String>,
    /// Shown among the report's findings (not low confidence or unverified).
    pub shown: bool,
    /// Verification found its quoted code (`None`: not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounded: Option<bool>,
    /// Later rounds that raised it again: `(report id, id there)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raised_again: Vec<(String, String)>,
    pub outcome: Outcome,
    pub provenance: Provenance,
}

impl FindingOutcome {
    /// Only one agent raised it and it was shown: a finding that stood on that agent alone.
    pub fn only(&self, agent: &str) -> bool {
        self.shown && self.agents.len() == 1 && self.agents[0] == agent
    }
}
