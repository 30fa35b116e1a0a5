//! What became of each finding, and each agent's scorecard over them: the data `stats` computes
//! ([`crate::outcomes`]) and the report renders ([`crate::report::html`]), here so that the
//! renderer takes them without reaching up into the stage that computes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Action, Reliability, Severity};

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

/// Every agent's scorecard, and what it was computed from.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stats {
    pub schema_version: u32,
    /// What was read: the store, the `reviews` branch.
    pub sources: Vec<String>,
    pub reports: usize,
    pub changes: usize,
    /// Reports or sources that could not be read, one sentence each.
    pub warnings: Vec<String>,
    /// One row per agent, over every category and severity, by name.
    pub agents: Vec<AgentStats>,
    /// One row per agent and category (findings without a category under `none`).
    pub by_category: Vec<AgentStats>,
    /// One row per agent and severity (the report's calibrated severity).
    pub by_severity: Vec<AgentStats>,
    /// The records learnt from every outcome read (descriptive: no run is weighed with them);
    /// `None` when no finding has a decision.
    pub reliability: Option<Reliability>,
    /// The same chances estimated from agreement alone (Dawid-Skene), when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementEstimate>,
    /// Every finding with its fate and where the fate was read.
    pub findings: Vec<FindingOutcome>,
}

/// The agreement-only estimate and how its fit went.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AgreementEstimate {
    pub reliability: Reliability,
    /// The estimated share of findings that are real.
    pub share_real: f64,
    pub iterations: usize,
    pub converged: bool,
}

/// One agent's figures, over everything or over one category or severity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct AgentStats {
    pub agent: String,
    pub display: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Reports in which its run completed (rows over everything only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviews: Option<usize>,
    pub findings: usize,
    pub kept: usize,
    /// Kept findings no other agent raised.
    pub kept_only_it: usize,
    /// Findings whose quoted code verification found, and those it checked.
    pub grounded: usize,
    pub checked: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounded_rate: Option<f64>,
    pub acted_on: usize,
    pub declined: usize,
    /// Findings with no known decision.
    pub undecided: usize,
    /// Acted-on and declined findings as shares of its findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acted_on_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declined_rate: Option<f64>,
    /// What its completed reviews cost and took in all (rows over everything only; `None`
    /// when no review recorded it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_review: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_per_review: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_acted_on: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds_per_acted_on: Option<f64>,
}
