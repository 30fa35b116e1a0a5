//! `bench --learn`: do the agents' records, learnt where labels exist, carry over to a
//! repository they were not learnt on?
//!
//! Leave one repository out. For each repository of the split, the records are learnt on the
//! others: every PR there is consolidated as `bench` does with no record (every merged
//! finding, shown or not), and each merged finding is labelled with the benchmark's golden
//! labels as an author's decision would label it: acted on when some source finding of it is a
//! candidate the judge matched to a golden bug, declined otherwise. Those labelled findings
//! go through the same estimate as the store's outcomes ([`crate::outcomes::reliability`]), and
//! the held-out repository is consolidated with the records and scored. With `agreement`, the
//! records are estimated from the other repositories' agreement alone
//! ([`crate::outcomes::agreement`]): no label is read.
//!
//! Nothing here was fitted to a figure: the estimate, its prior strength and the confidence
//! model are the ones `run` uses, and the keep threshold is the default.

use std::collections::BTreeMap;

use serde::Serialize;

use super::score::{Figures, Tally};
use super::{BenchResult, Consolidator, Dataset, KeptFinding, PrData};
use crate::consolidate::{ConsolidateOptions, Tuning, consolidate_tuned};
use crate::outcomes::Outcome;
use crate::outcomes::agreement::{self, Raised};
use crate::outcomes::reliability::{Labelled, estimate};
use crate::types::{Reliability, Review};

/// What `--learn` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Learn {
    /// No records: today's figures.
    None,
    /// Records learnt on the other repositories' golden labels.
    LeaveOneRepoOut,
    /// Records estimated from the other repositories' agreement alone (no label read).
    Agreement,
}

/// One repository held out, scored with records learnt on the others.
#[derive(Debug, Clone, Serialize)]
pub struct LearnedRepo {
    pub repo: String,
    pub learnt_on: Vec<String>,
    /// Findings the records were learnt from (labelled, or all for agreement).
    pub findings_learnt_from: usize,
    pub best_tool: String,
    pub best: Figures,
    /// Consolidated with no record (today's figures).
    pub unlearned: Figures,
    /// Consolidated with the records learnt on the other repositories.
    pub learned: Figures,
    /// `learned` F1 minus the best single tool's.
    pub delta_f1: f64,
    pub reliability: Reliability,
}

/// The learnt figures of a bench run.
#[derive(Debug, Clone, Serialize)]
pub struct Learned {
    pub method: Learn,
    pub repos: Vec<LearnedRepo>,
    /// Every repository's held-out figures summed: each PR scored with records learnt on the
    /// repositories it is not in.
    pub learned: Figures,
    pub unlearned: Figures,
}

/// The consolidation of `reviews` with `reliability` (or none), every merged finding with
/// whether it is kept.
fn consolidated(reviews: &[Review], reliability: Option<&Reliability>) -> crate::types::Report {
    let opts = ConsolidateOptions {
        reliability: reliability.cloned(),
        ..ConsolidateOptions::default()
    };
    consolidate_tuned(reviews, &opts, Tuning::default())
}

/// The reviews of `agents` on `pr`, in the order `bench` gives them.
fn reviews_of(pr: &PrData, agents: &[String]) -> Vec<Review> {
    agents
        .iter()
        .filter_map(|a| pr.review(a).cloned())
        .collect()
}

/// Every merged finding of `pr`'s consolidation (no record), labelled by the golden labels.
pub fn labelled(pr: &PrData, agents: &[String]) -> Vec<Labelled> {
    let reviews = reviews_of(pr, agents);
    let reviewed_by: Vec<String> = reviews
        .iter()
        .filter(|r| !r.findings.is_empty())
        .map(|r| r.agent.clone())
        .collect();
    consolidated(&reviews, None)
        .findings
        .iter()
        .map(|f| {
            let real = f.sources.iter().any(|s| {
                pr.golden_matched(&s.agent, &s.id)
                    .is_some_and(|m| !m.is_empty())
            });
            Labelled {
                raised: f.agents.clone(),
                reviewed_by: reviewed_by.clone(),
                category: f.category.as_ref().map(|c| c.as_str().to_lowercase()),
                outcome: if real {
                    Outcome::ActedOn
                } else {
                    Outcome::Declined
                },
            }
        })
        .collect()
}

/// The records `method` learns from the PRs of `repos`.
fn learn_on(
    ds: &Dataset,
    agents: &[String],
    repos: &[String],
    method: Learn,
) -> (Reliability, usize) {
    let prs = ds.prs.iter().filter(|p| repos.contains(&p.repo));
    let items: Vec<Labelled> = prs.flat_map(|pr| labelled(pr, agents)).collect();
    let n = items.len();
    let whence = format!(
        "of {} on the benchmark's {}",
        agents.len(),
        repos.join(", ")
    );
    match method {
        Learn::Agreement => {
            let raised: Vec<Raised> = items
                .into_iter()
                .map(|i| Raised {
                    raised: i.raised,
                    reviewed_by: i.reviewed_by,
                })
                .collect();
            let basis = format!("agreement on {n} merged findings {whence}; no label read");
            (agreement::estimate(&raised, basis).reliability, n)
        }
        _ => {
            let basis = format!("{n} merged findings labelled by the golden bugs {whence}");
            (estimate(&items, basis), n)
        }
    }
}

/// Consolidates each PR with the records of its repository.
struct ByRepo {
    tables: BTreeMap<String, Reliability>,
}

impl Consolidator for ByRepo {
    fn kept(&self, reviews: &[Review]) -> Vec<KeptFinding> {
        super::kept_findings(&consolidated(reviews, None))
    }

    fn kept_for(&self, pr: &PrData, reviews: &[Review]) -> Vec<KeptFinding> {
        super::kept_findings(&consolidated(reviews, self.tables.get(&pr.repo)))
    }
}

/// Leave one repository out with `method`, beside `unlearned` (the same agents' bench result
/// with no record). `None` for [`Learn::None`] or a split of one repository.
pub fn leave_one_repo_out(
    ds: &Dataset,
    agents: &[String],
    method: Learn,
    unlearned: &BenchResult,
) -> Option<(Learned, BenchResult)> {
    if method == Learn::None {
        return None;
    }
    let mut repos: Vec<String> = ds.prs.iter().map(|p| p.repo.clone()).collect();
    repos.sort();
    repos.dedup();
    if repos.len() < 2 {
        return None;
    }
    let mut tables = BTreeMap::new();
    let mut sizes = BTreeMap::new();
    for held in &repos {
        let others: Vec<String> = repos.iter().filter(|r| *r != held).cloned().collect();
        let (table, n) = learn_on(ds, agents, &others, method);
        tables.insert(held.clone(), table);
        sizes.insert(held.clone(), (others, n));
    }
    let result = super::run(
        ds,
        agents,
        &ByRepo {
            tables: tables.clone(),
        },
    );
    let unlearned_by_repo: BTreeMap<&str, &super::generalize::RepoFigures> = unlearned
        .repos
        .iter()
        .map(|r| (r.repo.as_str(), r))
        .collect();
    let per_repo = result
        .repos
        .iter()
        .map(|r| {
            let (learnt_on, n) = sizes[&r.repo].clone();
            LearnedRepo {
                repo: r.repo.clone(),
                learnt_on,
                findings_learnt_from: n,
                best_tool: r.best_tool.clone(),
                best: r.best,
                unlearned: unlearned_by_repo
                    .get(r.repo.as_str())
                    .map_or_else(|| Tally::default().figures(), |u| u.consolidated),
                learned: r.consolidated,
                delta_f1: r.delta_f1,
                reliability: tables[&r.repo].clone(),
            }
        })
        .collect();
    let learned = Learned {
        method,
        repos: per_repo,
        learned: result.consolidated,
        unlearned: unlearned.consolidated,
    };
    Some((learned, result))
}
