//! Scoring kept findings against the judge's verdicts.
//!
//! A kept finding is a true positive when its representative (the first of its members: the
//! source finding the report shows for it) is a candidate the judge matched to a golden bug.
//! Recall counts golden bugs, each once however many kept findings match it; precision counts
//! kept findings. Both are summed over PRs before dividing (micro average).

use std::collections::BTreeSet;

use serde::Serialize;

use super::dataset::PrData;

/// One source finding: the agent (tool) and the finding's id in that agent's review.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SourceId {
    pub agent: String,
    pub id: String,
}

impl SourceId {
    pub fn new(agent: impl Into<String>, id: impl Into<String>) -> Self {
        SourceId {
            agent: agent.into(),
            id: id.into(),
        }
    }
}

/// A finding that consolidation kept: the source findings it holds, its representative first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFinding {
    pub members: Vec<SourceId>,
}

impl KeptFinding {
    /// The source finding the report shows for this finding: the first member.
    pub fn representative(&self) -> Option<&SourceId> {
        self.members.first()
    }
}

/// Counts from which precision, recall and F1 follow; they add over PRs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub kept: usize,
    /// Kept findings whose representative the judge matched to a golden bug.
    pub true_positives: usize,
    /// Distinct golden bugs matched by some kept finding's representative.
    pub golden_found: usize,
    pub golden_total: usize,
}

impl Tally {
    /// TP / kept; 0 when nothing was kept.
    pub fn precision(&self) -> f64 {
        ratio(self.true_positives, self.kept)
    }

    /// Golden bugs found / golden bugs; 0 when there are none.
    pub fn recall(&self) -> f64 {
        ratio(self.golden_found, self.golden_total)
    }

    /// Harmonic mean of precision and recall; 0 when both are 0.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    pub fn add(&mut self, other: &Tally) {
        self.kept += other.kept;
        self.true_positives += other.true_positives;
        self.golden_found += other.golden_found;
        self.golden_total += other.golden_total;
    }

    /// The figures as the JSON output shows them.
    pub fn figures(&self) -> Figures {
        Figures {
            precision: self.precision(),
            recall: self.recall(),
            f1: self.f1(),
            kept: self.kept,
            true_positives: self.true_positives,
            golden_found: self.golden_found,
            golden_total: self.golden_total,
        }
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Precision, recall, F1 and the counts behind them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub kept: usize,
    pub true_positives: usize,
    pub golden_found: usize,
    pub golden_total: usize,
}

/// Scores one PR's kept findings. A representative the PR does not know (an id no review has)
/// counts as a false positive.
pub fn score_pr(pr: &PrData, kept: &[KeptFinding]) -> Tally {
    let mut found: BTreeSet<usize> = BTreeSet::new();
    let mut true_positives = 0;
    for k in kept {
        let matched = k
            .representative()
            .and_then(|r| pr.golden_matched(&r.agent, &r.id))
            .filter(|m| !m.is_empty());
        if let Some(m) = matched {
            true_positives += 1;
            found.extend(m.iter().copied());
        }
    }
    Tally {
        kept: kept.len(),
        true_positives,
        golden_found: found.len(),
        golden_total: pr.golden.len(),
    }
}

/// A tool alone: every one of its candidates kept as its own finding.
pub fn tool_alone(pr: &PrData, tool: &str) -> Vec<KeptFinding> {
    pr.review(tool)
        .map(|r| {
            r.findings
                .iter()
                .map(|f| KeptFinding {
                    members: vec![SourceId::new(tool, &f.id)],
                })
                .collect()
        })
        .unwrap_or_default()
}
