//! Does consolidation's margin over the best single tool carry over to data its rules were not
//! chosen on? Figures per repository of the split, and leave one repository out: the two
//! thresholds of the rules ([`Tuning`]) are chosen on the other repositories, from a small grid
//! around the defaults, and the held-out repository is scored with that choice.
//!
//! The defaults themselves were set on this same split, so the per-repository figures with the
//! defaults are not an unseen test; the leave-one-out figures are, for the thresholds.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::consolidate::Tuning;

use super::score::{Figures, Tally};
use super::{BenchResult, Dataset, KeptFinding, PrOut};

/// Merge thresholds tried when tuning.
pub const MERGE_GRID: [f64; 4] = [0.25, 0.30, 0.35, 0.40];
/// Keep thresholds (log-odds) tried when tuning.
pub const KEEP_GRID: [f64; 5] = [-1.0, -0.5, 0.0, 0.5, 1.0];

/// The figures of one repository.
#[derive(Debug, Clone, Serialize)]
pub struct RepoFigures {
    pub repo: String,
    pub prs: usize,
    /// The best of the consolidated agents alone, by F1, on this repository.
    pub best_tool: String,
    pub best: Figures,
    pub consolidated: Figures,
    /// Consolidated F1 minus the best single tool's.
    pub delta_f1: f64,
}

/// One repository held out: the thresholds chosen on the others, and its figures with them.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub held_out: String,
    pub tuned_on: Vec<String>,
    pub tuning: Tuning,
    pub best_tool: String,
    pub best: Figures,
    pub consolidated: Figures,
    pub delta_f1: f64,
}

fn tally_of(f: &Figures) -> Tally {
    Tally {
        kept: f.kept,
        true_positives: f.true_positives,
        golden_found: f.golden_found,
        golden_total: f.golden_total,
    }
}

/// Per-repository tallies of the consolidation and of every tool: repo → (PRs, consolidated,
/// tool → tally).
type RepoTallies = BTreeMap<String, (usize, Tally, BTreeMap<String, Tally>)>;

fn tallies(prs: &[PrOut]) -> RepoTallies {
    let mut out: RepoTallies = BTreeMap::new();
    for pr in prs {
        let entry = out.entry(pr.repo.clone()).or_default();
        entry.0 += 1;
        entry.1.add(&tally_of(&pr.consolidated));
        for (tool, f) in &pr.tools {
            entry.2.entry(tool.clone()).or_default().add(&tally_of(f));
        }
    }
    out
}

/// The best of `agents` alone on these tallies (ties: the first by name).
fn best_of(tools: &BTreeMap<String, Tally>, agents: &[String]) -> (String, Figures) {
    tools
        .iter()
        .filter(|(name, _)| agents.contains(name))
        .map(|(name, t)| (name.clone(), t.figures()))
        .fold(
            None,
            |best: Option<(String, Figures)>, (name, f)| match best {
                Some((_, ref b)) if b.f1 >= f.f1 => best,
                _ => Some((name, f)),
            },
        )
        .unwrap_or_else(|| (String::new(), Tally::default().figures()))
}

/// The figures of each repository of a bench result.
pub fn per_repo(result: &BenchResult) -> Vec<RepoFigures> {
    tallies(&result.prs)
        .into_iter()
        .map(|(repo, (prs, consolidated, tools))| {
            let (best_tool, best) = best_of(&tools, &result.agents);
            let consolidated = consolidated.figures();
            RepoFigures {
                repo,
                prs,
                best_tool,
                best,
                delta_f1: consolidated.f1 - best.f1,
                consolidated,
            }
        })
        .collect()
}

/// Leave one repository out, for every repository, when the split has two or more.
pub fn leave_one_out(ds: &Dataset, agents: &[String]) -> Vec<HeldOut> {
    let repos: Vec<String> = {
        let mut r: Vec<String> = ds.prs.iter().map(|p| p.repo.clone()).collect();
        r.sort();
        r.dedup();
        r
    };
    if repos.len() < 2 {
        return Vec::new();
    }
    // Every tuning of the grid, run once over the whole split.
    let mut runs: Vec<(Tuning, RepoTallies)> = Vec::new();
    for merge_threshold in MERGE_GRID {
        for keep_log_odds in KEEP_GRID {
            let tuning = Tuning {
                merge_threshold,
                keep_log_odds,
            };
            let consolidator = move |reviews: &[crate::types::Review]| -> Vec<KeptFinding> {
                super::project_kept(reviews, tuning)
            };
            let r = super::run(ds, agents, &consolidator);
            runs.push((tuning, tallies(&r.prs)));
        }
    }
    let default = Tuning::default();
    repos
        .iter()
        .map(|held| {
            let train: Vec<String> = repos.iter().filter(|r| *r != held).cloned().collect();
            // The tuning with the best consolidated F1 on the other repositories; ties go to the
            // one nearest the defaults.
            let pooled = |t: &RepoTallies| {
                let mut sum = Tally::default();
                for r in &train {
                    if let Some((_, c, _)) = t.get(r) {
                        sum.add(c);
                    }
                }
                sum.figures().f1
            };
            let distance = |t: &Tuning| {
                (t.merge_threshold - default.merge_threshold).abs()
                    + (t.keep_log_odds - default.keep_log_odds).abs() / 10.0
            };
            let (tuning, tallies) = runs
                .iter()
                .max_by(|a, b| {
                    pooled(&a.1)
                        .total_cmp(&pooled(&b.1))
                        .then(distance(&b.0).total_cmp(&distance(&a.0)))
                })
                .expect("the grid is not empty");
            let (_, consolidated, tools) = &tallies[held];
            let (best_tool, best) = best_of(tools, agents);
            let consolidated = consolidated.figures();
            HeldOut {
                held_out: held.clone(),
                tuned_on: train,
                tuning: *tuning,
                best_tool,
                best,
                delta_f1: consolidated.f1 - best.f1,
                consolidated,
            }
        })
        .collect()
}
