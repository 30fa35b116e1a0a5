//! The agent performance retro: per agent, what it wrote and how it fared in consolidation.
//! Counts are of what the agent wrote, before calibration; coverage is measured against the
//! changed files when they are known, else against every file any agent named.

use std::collections::BTreeSet;

use crate::types::{AgentRetro, RawReview, Review, SeverityCounts};
use crate::verify::coverage::coverage_of;

/// What consolidation learnt about one agent's findings.
#[derive(Debug, Clone, Default)]
pub struct AgentOutcome {
    pub unique_insights: usize,
    pub false_positives: usize,
    pub calibrations: Vec<String>,
}

/// The files coverage is measured against.
pub fn coverage_universe(reviews: &[Review], changed_files: Option<&[String]>) -> Vec<String> {
    match changed_files {
        Some(files) => files.to_vec(),
        None => {
            let all: BTreeSet<String> = reviews
                .iter()
                .flat_map(|r| r.coverage.iter().map(|c| c.path.clone()))
                .collect();
            all.into_iter().collect()
        }
    }
}

/// One agent's retro row. `review` is `None` for an agent whose run produced no review.
pub fn agent_retro(
    name: &str,
    display: &str,
    review: Option<&Review>,
    run: Option<&RawReview>,
    outcome: &AgentOutcome,
    universe: &[String],
) -> AgentRetro {
    let mut counts = SeverityCounts::default();
    if let Some(r) = review {
        for f in &r.findings {
            match f.severity {
                Some(crate::types::Severity::Critical) => counts.critical += 1,
                Some(crate::types::Severity::Important) => counts.important += 1,
                Some(crate::types::Severity::Suggestion) => counts.suggestion += 1,
                None => {}
            }
        }
    }
    let (files_reviewed, coverage_misses) = match review {
        // Nobody named any file and the change is unknown: nothing to measure against.
        _ if universe.is_empty() => (None, Vec::new()),
        Some(r) => {
            let c = coverage_of(r, universe);
            (Some(c.files_reviewed()), c.misses)
        }
        None => (
            Some(crate::types::FileCount {
                reviewed: 0,
                total: universe.len(),
            }),
            universe.to_vec(),
        ),
    };
    AgentRetro {
        name: name.to_string(),
        display: display.to_string(),
        counts,
        design_observations: review.map_or(0, |r| r.observations.len()),
        unique_insights: outcome.unique_insights,
        false_positives: outcome.false_positives,
        files_reviewed,
        coverage_misses,
        calibrations: outcome.calibrations.clone(),
        status: run.map(|r| r.status),
        duration_s: run.map(|r| r.duration_s),
        tool_calls: run.map(|r| r.total_tool_calls()),
        tokens: run.and_then(|r| r.tokens.clone()),
        cost_usd: run.and_then(|r| r.cost_usd),
        cost_basis: run.and_then(|r| r.cost_basis.clone()),
        synthesis_note: None,
        error: run.and_then(|r| r.error.clone()),
        worktree_changes: run.map(|r| r.worktree_changes.clone()).unwrap_or_default(),
        sandbox: run.and_then(|r| r.sandbox.clone()),
        network: run.and_then(|r| r.network.clone()),
        output_cut_bytes: run.and_then(|r| r.output_cut_bytes),
    }
}
