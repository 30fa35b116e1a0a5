//! Each agent's record, learnt from outcomes, as consolidation weighs it.
//!
//! Consolidation's confidence reasons with two chances per agent (see
//! [`crate::consolidate::confidence`]): that it raises a real defect that is there, and that it
//! raises a given point that is not one. Today both are the same for every agent
//! ([`P_FIND_REAL`], [`P_FIND_SPURIOUS`]). With outcomes they can be each agent's own: among
//! the findings acted on in the reviews an agent took part in, the share it raised; among those
//! declined, the share it raised. Each is a Beta posterior mean with the default as the prior
//! mean and [`PRIOR_STRENGTH`] findings of weight:
//!
//! ```text
//! p_raise_real     = (acted on, raised by it + n0 · P_FIND_REAL)     / (acted on, in its reviews + n0)
//! p_raise_spurious = (declined, raised by it + n0 · P_FIND_SPURIOUS) / (declined, in its reviews + n0)
//! ```
//!
//! so with little data an agent keeps the default, and with none it has no row at all (and
//! consolidation is exactly what it is without a table). Per category, the same with the
//! agent's own figures over all categories as the prior mean. The ratio of the two chances is
//! the odds of the agent's findings being acted on over the odds of anyone's: a reviewer whose
//! similar findings were acted on 31 times of 40 weighs more than one declined 30 times of 40.
//!
//! [`PRIOR_STRENGTH`] was set to ten findings before any figure was measured, and not varied
//! since: the code-review benchmark's leave-one-repository-out figures use it as it is.

use std::collections::BTreeMap;

use super::Outcome;
use crate::consolidate::confidence::{P_FIND_REAL, P_FIND_SPURIOUS};
use crate::types::{AgentRecord, Reliability, ReliabilityMethod};

/// How many findings the default chances count as.
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

/// Counts of one agent (over all categories, or one).
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

    fn decided_seen(&self) -> usize {
        self.acted_on_seen + self.declined_seen
    }

    /// The row of these counts, shrunk toward `(real, spurious)`.
    fn row(
        &self,
        agent: &str,
        category: Option<&str>,
        toward: (f64, f64),
        strength: f64,
    ) -> AgentRecord {
        AgentRecord {
            agent: agent.to_string(),
            category: category.map(str::to_string),
            acted_on: self.acted_on,
            declined: self.declined,
            acted_on_seen: self.acted_on_seen,
            declined_seen: self.declined_seen,
            p_raise_real: posterior_mean(self.acted_on, self.acted_on_seen, toward.0, strength),
            p_raise_spurious: posterior_mean(self.declined, self.declined_seen, toward.1, strength),
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
    let mut rows: Vec<AgentRecord> = Vec::new();
    for (agent, counts) in &overall {
        let all = counts.row(agent, None, (P_FIND_REAL, P_FIND_SPURIOUS), PRIOR_STRENGTH);
        let toward = (all.p_raise_real, all.p_raise_spurious);
        rows.push(all);
        for ((_, category), c) in by_category
            .range((*agent, "")..)
            .take_while(|((a, _), _)| a == agent)
        {
            if c.decided_seen() > 0 {
                rows.push(c.row(agent, Some(category), toward, PRIOR_STRENGTH));
            }
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
        assert!((codex.p_raise_real - (31.0 + 4.0) / 51.0).abs() < 1e-12);
        assert!((codex.p_raise_spurious - (9.0 + 1.5) / 49.0).abs() < 1e-12);
        let gemini = table.row("gemini", Some("regression")).unwrap();
        assert_eq!(gemini.category.as_deref(), Some("regression"));
        let ratio = |r: &AgentRecord| r.p_raise_real / r.p_raise_spurious;
        assert!(ratio(codex) > P_FIND_REAL / P_FIND_SPURIOUS);
        assert!(ratio(gemini) < P_FIND_REAL / P_FIND_SPURIOUS);
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
        assert!((codex.p_raise_real - 5.0 / 11.0).abs() < 1e-12);
        assert!((codex.p_raise_spurious - P_FIND_SPURIOUS).abs() < 1e-12);
        let none = estimate(&[item(&["codex"], Outcome::Unknown)], "none".into());
        assert!(none.is_empty());
    }
}
