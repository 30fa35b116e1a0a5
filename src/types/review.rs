//! One agent's review after parsing: the contract every reviewer is asked to write.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::finding::Finding;

/// Whether a design observation is a worry or something done well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ObservationKind {
    Concern,
    Strength,
}

/// A design observation: broader than a finding, tagged with its scope
/// (`in-scope`, `future`, `pre-existing`, `persistent`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Observation {
    pub kind: ObservationKind,
    /// The bold lead of the bullet, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// One row of a review's coverage summary: a file and what the reviewer says it did with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CoverageEntry {
    pub path: String,
    /// As written: "Reviewed, no issues", "Finding 1", "Trivial", ...
    #[serde(default)]
    pub status: String,
}

/// The testing assessment: an overall judgement and the untested scenarios, ranked by risk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestingAssessment {
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub gaps: Vec<String>,
}

/// A problem met while reading a raw review. Nothing is dropped silently: what could not be
/// understood is kept in [`Review::unparsed`] and named here with its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ParseWarning {
    /// 1-based line in the raw review, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
}

/// One agent's review, parsed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Review {
    /// The agent's short name in lower case: `claude`, `codex`, `gemini`.
    pub agent: String,
    /// How the report names the reviewer: "Claude Opus 4.6".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The reviewer's own verdict, as written ("Approve with requested changes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub observations: Vec<Observation>,
    #[serde(default)]
    pub testing: TestingAssessment,
    #[serde(default)]
    pub documentation: Vec<String>,
    #[serde(default)]
    pub limitations: Vec<String>,
    #[serde(default)]
    pub unresolved_feedback: Vec<String>,
    #[serde(default)]
    pub coverage: Vec<CoverageEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_structure: Option<String>,
    /// Text the parser could not place in any section, kept verbatim.
    #[serde(default)]
    pub unparsed: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<ParseWarning>,
    /// The raw review exactly as the agent wrote it: the report's appendix shows this.
    #[serde(default)]
    pub raw: String,
    /// Why the text is not a review at all, when nothing of the review layout was found in it
    /// (no verdict, no findings section, no summary, no JSON review): the parser says so, and
    /// the pipeline counts that agent as failed with this reason ([`crate::parse::NOT_A_REVIEW`]).
    #[serde(skip)]
    pub not_a_review: Option<String>,
}

impl Review {
    /// The name to show for this agent: its display name, else its short name.
    pub fn display(&self) -> &str {
        self.display_name.as_deref().unwrap_or(&self.agent)
    }
}

/// How a report names an agent nobody gave a display name: `claude` → `Claude`.
pub fn default_display(agent: &str) -> String {
    let mut chars = agent.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
