//! Each agent's chances estimated from agreement alone, for a team with no decisions recorded
//! yet: the two-coin model of Dawid and Skene (1979), fitted by expectation maximisation over
//! the store's findings.
//!
//! Every finding is real or not, unseen. An agent that reviewed the change raises a real one
//! with its chance `p_raise_real` and a spurious one with its chance `p_raise_spurious`, each
//! agent independently. Starting from today's defaults, each round of the fit
//!
//! - **E**: gives each finding the probability that it is real, from who raised it and who
//!   reviewed the change but did not (the confidence model's agreement terms, per agent);
//! - **M**: re-estimates every agent's chances and the share of real findings from those
//!   probabilities, each as a Beta posterior mean with the defaults as prior means and
//!   [`super::reliability::PRIOR_STRENGTH`] findings of weight (so an agent seen a few times
//!   stays near the default, and the fit cannot run off to 0 or 1).
//!
//! It stops when no chance moves by more than 1e-6, or after [`MAX_ITERATIONS`]. Each round is
//! linear in the findings times the agents that reviewed them.
//!
//! Agreement is not truth: agents that make the same mistakes look reliable to it. `stats`
//! reports this estimate beside the one learnt from outcomes, and `bench --learn` measures
//! consolidation weighed with it (`--learn agreement`); no run is.

use std::collections::BTreeMap;

use super::reliability::PRIOR_STRENGTH;
use crate::consolidate::confidence::{P_FIND_REAL, P_FIND_SPURIOUS, PRIOR};
use crate::types::{AgentRecord, Reliability, ReliabilityMethod};

/// The most rounds of expectation maximisation.
pub const MAX_ITERATIONS: usize = 200;

/// One finding, as agreement sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Raised {
    pub raised: Vec<String>,
    /// The agents that reviewed its change (raised it or not).
    pub reviewed_by: Vec<String>,
}

/// The estimate, and how the fit went.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub reliability: Reliability,
    /// The estimated share of findings that are real.
    pub share_real: f64,
    pub iterations: usize,
    pub converged: bool,
}

/// One finding with its agents as indices: who raised it, who reviewed it and did not.
struct Item {
    raised: Vec<usize>,
    silent: Vec<usize>,
}

/// Fits the two-coin model to `items`. Agents that reviewed nothing get no row.
pub fn estimate(items: &[Raised], basis: String) -> Fit {
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for item in items {
        for a in item.reviewed_by.iter().chain(&item.raised) {
            let next = names.len();
            names.entry(a.as_str()).or_insert(next);
        }
    }
    let indexed: Vec<Item> = items
        .iter()
        .filter(|i| !i.raised.is_empty())
        .map(|i| {
            let raised: Vec<usize> = i.raised.iter().map(|a| names[a.as_str()]).collect();
            let mut silent: Vec<usize> = i
                .reviewed_by
                .iter()
                .map(|a| names[a.as_str()])
                .filter(|a| !raised.contains(a))
                .collect();
            silent.sort_unstable();
            silent.dedup();
            Item { raised, silent }
        })
        .collect();
    let n = names.len();
    let mut real = vec![P_FIND_REAL; n];
    let mut spurious = vec![P_FIND_SPURIOUS; n];
    let mut share = PRIOR;
    let mut posterior = vec![0.0; indexed.len()];
    let mut iterations = 0;
    let mut converged = indexed.is_empty();
    while !converged && iterations < MAX_ITERATIONS {
        iterations += 1;
        expect(&indexed, &real, &spurious, share, &mut posterior);
        let (new_real, new_spurious, new_share) = maximise(&indexed, &posterior, n);
        let moved = real
            .iter()
            .zip(&new_real)
            .chain(spurious.iter().zip(&new_spurious))
            .map(|(a, b)| (a - b).abs())
            .fold((share - new_share).abs(), f64::max);
        (real, spurious, share) = (new_real, new_spurious, new_share);
        converged = moved < 1e-6;
    }
    expect(&indexed, &real, &spurious, share, &mut posterior);

    // Expected counts, for the report: how many of its findings are likely real (one pass over
    // the findings, as the M-step counts them).
    let counts = expected_counts(&indexed, &posterior, n);
    let mut rows: Vec<AgentRecord> = Vec::new();
    let mut pooled = [0.0f64; 4];
    for (name, &a) in &names {
        let [acted, declined, seen_real, seen_spurious] = counts[a];
        for (sum, x) in pooled.iter_mut().zip(counts[a]) {
            *sum += x;
        }
        rows.push(AgentRecord {
            agent: name.to_string(),
            category: None,
            acted_on: acted.round() as usize,
            declined: declined.round() as usize,
            acted_on_seen: seen_real.round() as usize,
            declined_seen: seen_spurious.round() as usize,
            p_raise_real: real[a],
            p_raise_spurious: spurious[a],
            pool_raise_real: 0.0,
            pool_raise_spurious: 0.0,
        });
    }
    // The pool: every agent's expected counts summed, as the outcome estimate pools its counts.
    let k = PRIOR_STRENGTH;
    let pool_real = (pooled[0] + k * P_FIND_REAL) / (pooled[2] + k);
    let pool_spurious = (pooled[1] + k * P_FIND_SPURIOUS) / (pooled[3] + k);
    for row in &mut rows {
        row.pool_raise_real = pool_real;
        row.pool_raise_spurious = pool_spurious;
    }
    Fit {
        reliability: Reliability {
            method: ReliabilityMethod::Agreement,
            basis,
            prior_strength: PRIOR_STRENGTH,
            rows,
        },
        share_real: share,
        iterations,
        converged,
    }
}

/// E-step: the probability that each finding is real.
fn expect(items: &[Item], real: &[f64], spurious: &[f64], share: f64, out: &mut [f64]) {
    let prior = (share / (1.0 - share)).ln();
    let raise: Vec<f64> = real
        .iter()
        .zip(spurious)
        .map(|(r, s)| (r / s).ln())
        .collect();
    let miss: Vec<f64> = real
        .iter()
        .zip(spurious)
        .map(|(r, s)| ((1.0 - s) / (1.0 - r)).ln())
        .collect();
    for (item, q) in items.iter().zip(out.iter_mut()) {
        let log_odds = prior + item.raised.iter().map(|&a| raise[a]).sum::<f64>()
            - item.silent.iter().map(|&a| miss[a]).sum::<f64>();
        *q = 1.0 / (1.0 + (-log_odds).exp());
    }
}

/// Per agent, the expected `[raised and real, raised and spurious, real in its reviews,
/// spurious in its reviews]` given each finding's probability of being real.
fn expected_counts(items: &[Item], posterior: &[f64], n: usize) -> Vec<[f64; 4]> {
    let mut counts = vec![[0.0; 4]; n];
    for (item, &q) in items.iter().zip(posterior) {
        for &a in &item.raised {
            counts[a][0] += q;
            counts[a][1] += 1.0 - q;
        }
        for &a in item.raised.iter().chain(&item.silent) {
            counts[a][2] += q;
            counts[a][3] += 1.0 - q;
        }
    }
    counts
}

/// M-step: each agent's chances and the share of real findings, as Beta posterior means.
fn maximise(items: &[Item], posterior: &[f64], n: usize) -> (Vec<f64>, Vec<f64>, f64) {
    let counts = expected_counts(items, posterior, n);
    let k = PRIOR_STRENGTH;
    let real = counts
        .iter()
        .map(|c| (c[0] + k * P_FIND_REAL) / (c[2] + k))
        .collect();
    let spurious = counts
        .iter()
        .map(|c| (c[1] + k * P_FIND_SPURIOUS) / (c[3] + k))
        .collect();
    let share = (posterior.iter().sum::<f64>() + k * PRIOR) / (items.len() as f64 + k);
    (real, spurious, share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raised(by: &[&str]) -> Raised {
        Raised {
            raised: by.iter().map(|a| a.to_string()).collect(),
            reviewed_by: vec!["a".into(), "b".into(), "c".into(), "noisy".into()],
        }
    }

    #[test]
    fn an_agent_the_others_confirm_scores_above_one_they_never_do() {
        let mut items = Vec::new();
        // a, b and c agree on 30 findings, each missing a few; `noisy` raises 40 points alone
        // and joins 5 of the agreed ones.
        for i in 0..30 {
            let mut by = vec!["a", "b", "c"];
            by.retain(|x| !(i % 7 == 0 && *x == "b" || i % 5 == 0 && *x == "c"));
            if i < 5 {
                by.push("noisy");
            }
            items.push(raised(&by));
        }
        for _ in 0..40 {
            items.push(raised(&["noisy"]));
        }
        let fit = estimate(&items, "test".into());
        assert!(fit.converged, "{} iterations", fit.iterations);
        let row = |name: &str| fit.reliability.row(name, None).unwrap().clone();
        let ratio = |r: &AgentRecord| r.p_raise_real / r.p_raise_spurious;
        assert!(ratio(&row("a")) > 3.0 * ratio(&row("noisy")), "{fit:#?}");
        let pool = row("a").pool_raise_real / row("a").pool_raise_spurious;
        assert!(ratio(&row("a")) > pool && ratio(&row("noisy")) < pool);
        assert!(row("noisy").p_raise_spurious > row("a").p_raise_spurious);
        assert_eq!(fit.reliability.method, ReliabilityMethod::Agreement);
        // Bounded: the share of real findings stays a probability.
        assert!(fit.share_real > 0.0 && fit.share_real < 1.0);
    }

    #[test]
    fn nothing_to_fit_gives_no_rows() {
        let fit = estimate(&[], "empty".into());
        assert!(fit.reliability.is_empty() && fit.converged);
    }
}
