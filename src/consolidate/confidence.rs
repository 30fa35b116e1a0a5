//! Confidence: how sure consolidation is that a merged finding is a real defect worth the
//! author's time, and the keep rule that decides where the report shows it.
//!
//! Evidence, each stated as a term of the score:
//! - agreement: every further agent that found the same defect is strong evidence;
//! - verification: grounded in the code adds, quoted code that is not there takes away;
//! - specificity: a location, a quote or named identifiers make a claim checkable;
//! - severity: the author's own reviewers thought it mattered.
//!
//! Keep rule: a finding is shown among the findings when its confidence is at least
//! [`KEEP_THRESHOLD`]; a finding one agent alone raised can stand when it is grounded and specific.

use crate::model::{Severity, VerificationStatus};

/// Findings at or above this confidence are shown among the findings.
pub const KEEP_THRESHOLD: f64 = 0.5;

/// What the confidence of one merged finding is computed from.
#[derive(Debug, Clone, Copy)]
pub struct Evidence {
    /// Agents whose findings the cluster holds.
    pub agents: usize,
    /// Agents that reviewed the change.
    pub total_agents: usize,
    pub verification: Option<VerificationStatus>,
    /// Has a location, a code quote or identifiers in backticks.
    pub specific: bool,
    pub severity: Option<Severity>,
}

pub fn confidence(e: &Evidence) -> f64 {
    let mut score: f64 = 0.45;
    if e.agents >= 2 {
        score += 0.25 + 0.1 * (e.agents.min(4) - 2) as f64;
    }
    match e.verification {
        Some(VerificationStatus::Grounded) | Some(VerificationStatus::Relocated) => score += 0.15,
        Some(VerificationStatus::Ungrounded) => score -= 0.35,
        _ => {}
    }
    if e.specific {
        score += 0.05;
    }
    match e.severity {
        Some(Severity::Critical) | Some(Severity::Important) => score += 0.05,
        _ => {}
    }
    score.clamp(0.0, 1.0)
}

pub fn is_confident(score: f64) -> bool {
    score >= KEEP_THRESHOLD
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(agents: usize, v: Option<VerificationStatus>) -> Evidence {
        Evidence {
            agents,
            total_agents: 3,
            verification: v,
            specific: true,
            severity: Some(Severity::Important),
        }
    }

    #[test]
    fn a_grounded_specific_finding_of_one_agent_stands() {
        assert!(is_confident(confidence(&ev(
            1,
            Some(VerificationStatus::Grounded)
        ))));
        assert!(is_confident(confidence(&ev(1, None))));
    }

    #[test]
    fn an_ungrounded_finding_of_one_agent_does_not() {
        assert!(!is_confident(confidence(&ev(
            1,
            Some(VerificationStatus::Ungrounded)
        ))));
    }

    #[test]
    fn agreement_raises_confidence() {
        assert!(confidence(&ev(2, None)) > confidence(&ev(1, None)));
        assert!(confidence(&ev(3, None)) > confidence(&ev(2, None)));
    }
}
