//! Each agent's record, as consolidation weighs it: how often its findings were acted on or
//! declined before, turned into the two chances the confidence model reasons with
//! ([`crate::consolidate::confidence`]). Built by [`crate::outcomes`] from what authors did with
//! earlier findings (or, when asked, from agreement alone), recorded in the run bundle and the
//! report so that a report consolidated again weighs its agents the same way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a reliability table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReliabilityMethod {
    /// Learnt from outcomes: the authors' decisions on earlier findings (Fixed, Skipped, ...).
    Outcomes,
    /// Estimated from agreement alone (Dawid-Skene expectation maximisation): no decision is
    /// read, only which agents raised what.
    Agreement,
}

impl ReliabilityMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ReliabilityMethod::Outcomes => "outcomes",
            ReliabilityMethod::Agreement => "agreement",
        }
    }
}

/// The agents' records consolidation used, and what they were learnt from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reliability {
    pub method: ReliabilityMethod,
    /// What was read, in a sentence: "41 decided findings of 12 reports (5 changes) in the
    /// store; this change's own reports left out".
    pub basis: String,
    /// How many findings the default counts as (the Beta prior's weight): an agent's record
    /// moves the default chances only as far as its findings outnumber this.
    pub prior_strength: f64,
    /// One row per agent over every category, then per agent and category, sorted.
    pub rows: Vec<AgentRecord>,
}

/// One agent's record, over all its findings (`category: None`) or over one category.
///
/// The confidence model asks two things of an agent ([`crate::consolidate::confidence`]):
/// how likely it is to raise a real defect that is there (`p_raise_real`), and how likely to
/// raise a given point that is not one (`p_raise_spurious`). Both are Beta posterior means,
/// shrunk toward the same chances over every agent (`pool_*`, themselves shrunk toward today's
/// defaults); a category's toward the agent's own figure over all categories. Consolidation
/// weighs an agent by how its chances differ from the pool's, not by their level: decisions
/// are recorded mostly on findings consolidation already showed, so the level says as much
/// about that selection as about the agents, while the differences between agents of the same
/// reviews do not depend on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRecord {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Its findings the authors acted on (Fixed, Test written, Documentation updated).
    pub acted_on: usize,
    /// Its findings the authors declined (Skipped, Commented).
    pub declined: usize,
    /// Findings acted on in the reviews it took part in, whoever raised them.
    pub acted_on_seen: usize,
    /// Findings declined in the reviews it took part in, whoever raised them.
    pub declined_seen: usize,
    /// Chance that it raises a real defect that is there (posterior mean).
    pub p_raise_real: f64,
    /// Chance that it raises a given point that is not a defect (posterior mean).
    pub p_raise_spurious: f64,
    /// The same two chances over every agent (of this category): what the row is weighed
    /// against.
    pub pool_raise_real: f64,
    pub pool_raise_spurious: f64,
}

impl Reliability {
    /// The row of `agent` for `category`, else its row over every category.
    pub fn row(&self, agent: &str, category: Option<&str>) -> Option<&AgentRecord> {
        let exact = category.and_then(|c| {
            self.rows.iter().find(|r| {
                r.agent == agent
                    && r.category
                        .as_deref()
                        .is_some_and(|rc| rc.eq_ignore_ascii_case(c))
            })
        });
        exact.or_else(|| {
            self.rows
                .iter()
                .find(|r| r.agent == agent && r.category.is_none())
        })
    }

    /// True when no agent has a record: consolidation behaves exactly as without a table.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows of `agents` only: what a report of those agents was weighed with.
    pub fn of_agents(&self, agents: &[String]) -> Reliability {
        Reliability {
            rows: self
                .rows
                .iter()
                .filter(|r| agents.contains(&r.agent))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }
}
