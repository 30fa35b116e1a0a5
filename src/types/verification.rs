//! What the verify stage found when it checked a finding against the code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The outcome of checking one finding against the repository at head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerificationStatus {
    /// The file exists and the quoted code is at the cited lines (or there was no quote to check
    /// and the lines exist).
    Grounded,
    /// The quoted code is in the file, but at other lines: the location was corrected.
    Relocated,
    /// The file, the lines or the quoted code are not there.
    Ungrounded,
    /// Nothing could be checked (no location and no quote, or no repository given).
    Unchecked,
}

/// The result of the verify stage for one finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    pub status: VerificationStatus,
    pub path_ok: bool,
    pub lines_ok: bool,
    /// `None` when the finding quotes no code.
    #[serde(default)]
    pub quote_ok: Option<bool>,
    /// Identifiers the finding names in backticks that exist nowhere in the repository at head.
    #[serde(default)]
    pub symbols_missing: Vec<String>,
    /// The finding is labelled a regression but its lines are untouched by the change.
    #[serde(default)]
    pub pre_existing: bool,
    /// The path is not among the files the change touched.
    #[serde(default)]
    pub outside_change: bool,
    /// A comment at or around the cited lines that marks the issue as known or temporary
    /// (`TODO`, `FIXME`, "temporary"), quoted: calibration lowers the severity one level for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_issue_comment: Option<String>,
    /// One short line for the report: "lines corrected 193 → 207", "quoted code not found in x.go".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verification {
    /// The verification of a finding nothing could be checked for.
    pub fn unchecked(note: impl Into<String>) -> Self {
        Verification {
            status: VerificationStatus::Unchecked,
            path_ok: false,
            lines_ok: false,
            quote_ok: None,
            symbols_missing: Vec::new(),
            pre_existing: false,
            outside_change: false,
            known_issue_comment: None,
            note: Some(note.into()),
        }
    }
}
