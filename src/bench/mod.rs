//! `deep-review bench`: measures what consolidation is worth on a public code-review benchmark.
//!
//! For every PR of a split, each tool's candidates become one agent's review; each tool alone
//! and the consolidation of the chosen agents are scored against the judge's verdicts (see
//! [`score`]). Consolidation sees only the reviews: never the verdicts, the golden comments or
//! anything about a tool beyond its agent id.

pub mod dataset;
pub mod generalize;
pub mod learn;
pub mod score;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::consolidate::ConsolidateOptions;
use crate::types::Review;

pub use dataset::{Dataset, PrData};
pub use score::{Figures, KeptFinding, SourceId, Tally};

/// A member of a kept finding, with its text, as the JSON output shows it.
#[derive(Debug, Clone, Serialize)]
pub struct MemberOut {
    pub agent: String,
    pub id: String,
    pub text: String,
}

/// A kept finding as the JSON output shows it: its representative's agent and text, and every
/// member (the representative first). `true_positive` is the scoring's verdict on it.
#[derive(Debug, Clone, Serialize)]
pub struct KeptOut {
    pub agent: String,
    pub text: String,
    pub true_positive: bool,
    pub members: Vec<MemberOut>,
}

/// One PR of the output.
#[derive(Debug, Clone, Serialize)]
pub struct PrOut {
    pub url: String,
    pub repo: String,
    pub consolidated: Figures,
    pub tools: BTreeMap<String, Figures>,
    pub kept: Vec<KeptOut>,
}

/// The whole result of a bench run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    pub dataset: String,
    pub judge: String,
    /// The agents whose reviews were consolidated, in the order given to consolidation.
    pub agents: Vec<String>,
    /// Learnt weights used by consolidation and the split they came from; `none` when the rules
    /// are fixed (they are).
    pub weights: String,
    pub tools: BTreeMap<String, Figures>,
    pub consolidated: Figures,
    /// The same figures per repository of the split.
    pub repos: Vec<generalize::RepoFigures>,
    /// Each repository held out, the thresholds chosen on the others (filled by the `bench`
    /// command; empty when the split has one repository).
    pub leave_one_out: Vec<generalize::HeldOut>,
    /// Each repository held out, scored with agents' records learnt on the others (`--learn`);
    /// `None` without `--learn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned: Option<learn::Learned>,
    pub prs: Vec<PrOut>,
    pub warnings: Vec<String>,
    pub wall_time_s: f64,
}

impl BenchResult {
    /// The best tool alone by F1 among `among` (ties: the first by name).
    pub fn best_tool<'a>(&'a self, among: &[String]) -> Option<(&'a str, &'a Figures)> {
        self.tools
            .iter()
            .filter(|(name, _)| among.contains(name))
            .fold(
                None,
                |best: Option<(&str, &Figures)>, (name, fig)| match best {
                    Some((_, b)) if b.f1 >= fig.f1 => best,
                    _ => Some((name.as_str(), fig)),
                },
            )
    }
}

/// Something that consolidates one PR's reviews into the findings it keeps.
pub trait Consolidator {
    fn kept(&self, reviews: &[Review]) -> Vec<KeptFinding>;

    /// [`Consolidator::kept`] for a PR whose repository it may know something about (the
    /// records learnt for it, [`learn`]). An implementation must not read the PR's verdicts or
    /// golden bugs: they are what it is scored by.
    fn kept_for(&self, _pr: &PrData, reviews: &[Review]) -> Vec<KeptFinding> {
        self.kept(reviews)
    }
}

impl<F: Fn(&[Review]) -> Vec<KeptFinding>> Consolidator for F {
    fn kept(&self, reviews: &[Review]) -> Vec<KeptFinding> {
        self(reviews)
    }
}

/// Every candidate its own kept finding: the union of the tools, no consolidation at all.
pub fn union_consolidator(reviews: &[Review]) -> Vec<KeptFinding> {
    reviews
        .iter()
        .flat_map(|r| {
            r.findings.iter().map(|f| KeptFinding {
                members: vec![SourceId::new(&r.agent, &f.id)],
            })
        })
        .collect()
}

/// The project's consolidation: the confident merged findings of the report, each with its
/// sources in the report's order (the first is the representative).
pub fn project_consolidator(reviews: &[Review]) -> Vec<KeptFinding> {
    project_kept(reviews, crate::consolidate::Tuning::default())
}

/// [`project_consolidator`] with other thresholds.
pub fn project_kept(reviews: &[Review], tuning: crate::consolidate::Tuning) -> Vec<KeptFinding> {
    let report =
        crate::consolidate::consolidate_tuned(reviews, &ConsolidateOptions::default(), tuning);
    kept_findings(&report)
}

/// The findings a report shows, each as the candidates it merged: what the bench scores.
pub(crate) fn kept_findings(report: &crate::types::Report) -> Vec<KeptFinding> {
    report
        .findings
        .iter()
        .filter(|f| f.is_shown())
        .map(|f| KeptFinding {
            members: f
                .sources
                .iter()
                .map(|s| SourceId::new(&s.agent, &s.id))
                .collect(),
        })
        .collect()
}

/// Checks `agents` against the dataset's tools and drops repeats; `None` means all tools.
pub fn resolve_agents(ds: &Dataset, agents: Option<&[String]>) -> anyhow::Result<Vec<String>> {
    let Some(agents) = agents else {
        return Ok(ds.tools.clone());
    };
    if agents.is_empty() {
        anyhow::bail!(
            "--agents is empty: name at least one of {}",
            ds.tools.join(", ")
        );
    }
    let mut out: Vec<String> = Vec::new();
    for a in agents {
        if !ds.tools.contains(a) {
            anyhow::bail!(
                "--agents: unknown tool {a:?}; the dataset's tools are {}",
                ds.tools.join(", ")
            );
        }
        // A tool named twice is one agent: two copies of its review would be two "agents"
        // agreeing with each other.
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// Scores every tool alone and the consolidation of `agents` on every PR of `ds`.
pub fn run(ds: &Dataset, agents: &[String], consolidator: &dyn Consolidator) -> BenchResult {
    let started = std::time::Instant::now();
    let mut tools: BTreeMap<String, Tally> = BTreeMap::new();
    let mut consolidated = Tally::default();
    let mut prs = Vec::new();
    for pr in &ds.prs {
        let mut pr_tools = BTreeMap::new();
        for tool in &ds.tools {
            let t = score::score_pr(pr, &score::tool_alone(pr, tool));
            tools.entry(tool.clone()).or_default().add(&t);
            pr_tools.insert(tool.clone(), t.figures());
        }
        let reviews: Vec<Review> = agents
            .iter()
            .filter_map(|a| pr.review(a).cloned())
            .collect();
        let kept = consolidator.kept_for(pr, &reviews);
        let t = score::score_pr(pr, &kept);
        consolidated.add(&t);
        prs.push(PrOut {
            url: pr.url.clone(),
            repo: pr.repo.clone(),
            consolidated: t.figures(),
            tools: pr_tools,
            kept: kept.iter().map(|k| kept_out(pr, k)).collect(),
        });
    }
    let mut result = BenchResult {
        dataset: ds.dir.display().to_string(),
        judge: ds.judge.clone(),
        agents: agents.to_vec(),
        weights: "none (fixed rules, nothing learnt)".to_string(),
        tools: tools.into_iter().map(|(k, v)| (k, v.figures())).collect(),
        consolidated: consolidated.figures(),
        repos: Vec::new(),
        leave_one_out: Vec::new(),
        learned: None,
        prs,
        warnings: ds.warnings.clone(),
        wall_time_s: started.elapsed().as_secs_f64(),
    };
    result.repos = generalize::per_repo(&result);
    result
}

fn kept_out(pr: &PrData, k: &KeptFinding) -> KeptOut {
    let members: Vec<MemberOut> = k
        .members
        .iter()
        .map(|m| MemberOut {
            agent: m.agent.clone(),
            id: m.id.clone(),
            text: pr
                .finding(&m.agent, &m.id)
                .map(|f| f.explanation.clone())
                .unwrap_or_default(),
        })
        .collect();
    let (agent, text) = members
        .first()
        .map(|m| (m.agent.clone(), m.text.clone()))
        .unwrap_or_default();
    let true_positive = score::score_pr(pr, std::slice::from_ref(k)).true_positives == 1;
    KeptOut {
        agent,
        text,
        true_positive,
        members,
    }
}
