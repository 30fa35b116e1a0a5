//! Each agent's record, learnt from outcomes, as consolidation weighs it.
//!
//! Consolidation's confidence reasons with two chances per agent (see
//! [`crate::consolidate::confidence`]): that it raises a real defect that is there, and that it
//! raises a given point that is not one. Today both are the same for every agent
//! ([`P_FIND_REAL`], [`P_FIND_SPURIOUS`]). With outcomes they can be each agent's own: among
//! the findings acted on in the reviews an agent took part in, the share it raised; among those
//! declined, the share it raised. Each is a Beta posterior mean with [`PRIOR_STRENGTH`]
//! findings of weight on its prior mean:
//!
//! ```text
//! pool (every agent's counts summed)   toward P_FIND_REAL, P_FIND_SPURIOUS
//! agent, over every category           toward the pool
//! pool of one category                 toward the pool
//! agent, one category                  toward the agent's own figures over every category
//!
//! p_raise_real     = (acted on, raised by it + n0 · prior mean) / (acted on, in its reviews + n0)
//! p_raise_spurious = (declined, raised by it + n0 · prior mean) / (declined, in its reviews + n0)
//! ```
//!
//! so with little data an agent stays with the pool, and an agent with no decided finding in its
//! reviews has no row at all (consolidation is then exactly what it is without a table).
//! Consolidation weighs an agent by how its chances differ from its pool's
//! ([`crate::consolidate::confidence::record_term`]): the ratio of the two is the odds of the
//! agent's findings being acted on over the odds of every agent's, so a reviewer whose similar
//! findings were acted on 31 times of 40 weighs more than one declined 30 times of 40.
//!
//! [`PRIOR_STRENGTH`] was set to ten findings before any figure was measured, and not varied
//! since: the code-review benchmark's leave-one-repository-out figures use it as it is.

use std::collections::BTreeMap;

use super::Outcome;
use crate::consolidate::confidence::{P_FIND_REAL, P_FIND_SPURIOUS};
use crate::types::{AgentRecord, Reliability, ReliabilityMethod};

/// How many findings a prior mean counts as.
pub const PRIOR_STRENGTH: f64 = 10.0;

/// One finding with a known fate, as the estimate needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// The agents that raised it.
    pub raised: Vec<String>,
    /// The agents that reviewed the change it was raised on (raised it or not).
    pub reviewed_by: Vec<String>,
    /// Lower case; `None` when no category was written.
    pub category: Option<String>,
    pub outcome: Outcome,
}

/// Counts of one agent, or of every agent summed (over all categories, or one).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    acted_on: usize,
    declined: usize,
    acted_on_seen: usize,
    declined_seen: usize,
}

impl Counts {
    fn add(&mut self, raised: bool, outcome: Outcome) {
        match outcome {
            Outcome::ActedOn => {
                self.acted_on_seen += 1;
                self.acted_on += usize::from(raised);
            }
            Outcome::Declined => {
                self.declined_seen += 1;
                self.declined += usize::from(raised);
            }
            Outcome::Unknown => {}
        }
    }

    fn sum(&mut self, other: &Counts) {
        self.acted_on += other.acted_on;
        self.declined += other.declined;
        self.acted_on_seen += other.acted_on_seen;
        self.declined_seen += other.declined_seen;
    }

    /// `(p_raise_real, p_raise_spurious)` shrunk toward `toward`.
    fn chances(&self, toward: (f64, f64)) -> (f64, f64) {
        (
            posterior_mean(self.acted_on, self.acted_on_seen, toward.0, PRIOR_STRENGTH),
            posterior_mean(self.declined, self.declined_seen, toward.1, PRIOR_STRENGTH),
        )
    }

    fn row(
        &self,
        agent: &str,
        category: Option<&str>,
        chances: (f64, f64),
        pool: (f64, f64),
    ) -> AgentRecord {
        AgentRecord {
            agent: agent.to_string(),
            category: category.map(str::to_string),
            acted_on: self.acted_on,
            declined: self.declined,
            acted_on_seen: self.acted_on_seen,
            declined_seen: self.declined_seen,
            p_raise_real: chances.0,
            p_raise_spurious: chances.1,
            pool_raise_real: pool.0,
            pool_raise_spurious: pool.1,
        }
    }
}

/// The mean of Beta(`strength · mean + hits`, `strength · (1 − mean) + trials − hits`).
pub fn posterior_mean(hits: usize, trials: usize, mean: f64, strength: f64) -> f64 {
    (hits as f64 + strength * mean) / (trials as f64 + strength)
}

/// The records of every agent that reviewed a change with a decided finding, over all
/// categories and per category. `basis` says in a sentence what the items are.
pub fn estimate(items: &[Labelled], basis: String) -> Reliability {
    let mut overall: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut by_category: BTreeMap<(&str, &str), Counts> = BTreeMap::new();
    for item in items.iter().filter(|i| i.outcome != Outcome::Unknown) {
        for agent in reviewers(item) {
            let raised = item.raised.iter().any(|a| a == agent);
            overall.entry(agent).or_default().add(raised, item.outcome);
            if let Some(c) = &item.category {
                by_category
                    .entry((agent, c.as_str()))
                    .or_default()
                    .add(raised, item.outcome);
            }
        }
    }
    let mut pooled = Counts::default();
    overall.values().for_each(|c| pooled.sum(c));
    let pool = pooled.chances((P_FIND_REAL, P_FIND_SPURIOUS));
    let mut category_pools: BTreeMap<&str, Counts> = BTreeMap::new();
    for ((_, category), c) in &by_category {
        category_pools.entry(category).or_default().sum(c);
    }
    let category_pool = |category: &str| category_pools[category].chances(pool);

    let mut rows: Vec<AgentRecord> = Vec::new();
    for (agent, counts) in &overall {
        let own = counts.chances(pool);
        rows.push(counts.row(agent, None, own, pool));
        let of_agent = by_category
            .range((*agent, "")..)
            .take_while(|((a, _), _)| a == agent);
        for ((_, category), c) in of_agent {
            rows.push(c.row(
                agent,
                Some(category),
                c.chances(own),
                category_pool(category),
            ));
        }
    }
    Reliability {
        method: ReliabilityMethod::Outcomes,
        basis,
        prior_strength: PRIOR_STRENGTH,
        rows,
    }
}

/// The agents that reviewed the item's change, those that raised it included, each once.
fn reviewers(item: &Labelled) -> Vec<&str> {
    let mut out: Vec<&str> = item.reviewed_by.iter().map(String::as_str).collect();
    for a in &item.raised {
        if !out.contains(&a.as_str()) {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(raised: &[&str], outcome: Outcome) -> Labelled {
        Labelled {
            raised: raised.iter().map(|a| a.to_string()).collect(),
            reviewed_by: vec!["codex".into(), "gemini".into()],
            category: Some("regression".into()),
            outcome,
        }
    }

    #[test]
    fn an_agent_acted_on_31_of_40_times_weighs_more_than_one_declined_30_of_40() {
        let mut items = Vec::new();
        for i in 0..40 {
            // Codex: 31 acted on, 9 declined; Gemini: 10 acted on, 30 declined.
            let codex = if i < 31 {
                Outcome::ActedOn
            } else {
                Outcome::Declined
            };
            let gemini = if i < 10 {
                Outcome::ActedOn
            } else {
                Outcome::Declined
            };
            items.push(item(&["codex"], codex));
            items.push(item(&["gemini"], gemini));
        }
        items.push(item(&["codex"], Outcome::Unknown));
        let table = estimate(&items, "test".into());
        let codex = table.row("codex", None).unwrap();
        assert_eq!((codex.acted_on, codex.declined), (31, 9));
        // Acted on 41 times in its reviews (its 31 and Gemini's 10), declined 39 times.
        assert_eq!((codex.acted_on_seen, codex.declined_seen), (41, 39));
        // The pool: every agent's counts summed (41 acted on seen twice, 39 declined twice).
        let pool_real = (41.0 + 4.0) / 92.0;
        let pool_spurious = (39.0 + 1.5) / 88.0;
        assert!((codex.pool_raise_real - pool_real).abs() < 1e-12);
        assert!((codex.pool_raise_spurious - pool_spurious).abs() < 1e-12);
        assert!((codex.p_raise_real - (31.0 + 10.0 * pool_real) / 51.0).abs() < 1e-12);
        assert!((codex.p_raise_spurious - (9.0 + 10.0 * pool_spurious) / 49.0).abs() < 1e-12);
        let gemini = table.row("gemini", Some("regression")).unwrap();
        assert_eq!(gemini.category.as_deref(), Some("regression"));
        let ratio = |r: &AgentRecord| r.p_raise_real / r.p_raise_spurious;
        let pool = |r: &AgentRecord| r.pool_raise_real / r.pool_raise_spurious;
        assert!(ratio(codex) > pool(codex));
        assert!(ratio(gemini) < pool(gemini));
        // A category row falls back to the agent's row.
        assert!(
            table
                .row("codex", Some("style"))
                .unwrap()
                .category
                .is_none()
        );
        assert!(table.row("claude", None).is_none());
    }

    #[test]
    fn little_data_stays_near_the_default_and_none_gives_no_row() {
        let table = estimate(&[item(&["codex"], Outcome::ActedOn)], "one".into());
        let codex = table.row("codex", None).unwrap();
        // Pool: acted on 1 seen twice (Codex's and Gemini's reviews), raised once.
        let pool_real = (1.0 + 10.0 * P_FIND_REAL) / 12.0;
        assert!((codex.pool_raise_real - pool_real).abs() < 1e-12);
        assert!((codex.p_raise_real - (1.0 + 10.0 * pool_real) / 11.0).abs() < 1e-12);
        assert!((codex.p_raise_spurious - P_FIND_SPURIOUS).abs() < 1e-12);
        let none = estimate(&[item(&["codex"], Outcome::Unknown)], "none".into());
        assert!(none.is_empty());
    }
}
