//! The verdict follows from what remains after calibration, by a fixed rule.

use crate::types::{MergedFinding, Severity, Verdict};

/// `Rework` when a critical stands, `Merge with fixes` for an important, `Merge with optional
/// fixes` for suggestions only, `Merge as-is` for nothing. Only findings shown with confidence
/// count: unverified and low-confidence ones do not block a merge.
pub fn verdict(findings: &[MergedFinding]) -> Verdict {
    let worst = findings
        .iter()
        .filter(|f| f.is_shown())
        .map(|f| f.severity)
        .max();
    match worst {
        Some(Severity::Critical) => Verdict::Rework,
        Some(Severity::Important) => Verdict::MergeWithFixes,
        Some(Severity::Suggestion) => Verdict::MergeWithOptionalFixes,
        None => Verdict::MergeAsIs,
    }
}
