//! The run's cost meter: what every reviewer (and the synthesizer) has spent and is expected to
//! spend, against the budget of `--budget-usd`.
//!
//! One meter serves the whole run, shared by every dispatch of it. Work is admitted in the order
//! the agents are listed: an agent starts only when what is committed (every running agent's
//! estimate or, once larger, what it has spent; every finished agent's cost) plus its own
//! estimate stays within the limit. Model APIs report what they spend as they stream; when the
//! spending reaches the limit the meter trips, running HTTP reviewers stop with what they have
//! written, and nothing new starts. A model with no price counts as free and is named in the
//! report, so a budget is never silently blind.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::types::{BudgetReport, Failure};

/// The meter; cheap to share (`Arc`).
#[derive(Debug, Default)]
pub struct CostMeter {
    limit: Option<f64>,
    state: Mutex<State>,
    tripped: CancellationToken,
}

#[derive(Debug, Default)]
struct State {
    charges: BTreeMap<String, Charge>,
    /// Work the budget kept from starting or stopped, by key, in order.
    stopped: Vec<String>,
    unpriced: BTreeSet<String>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Charge {
    reserved: f64,
    spent: f64,
    done: bool,
}

impl Charge {
    /// What this work counts for against the limit.
    fn committed(&self) -> f64 {
        if self.done {
            self.spent
        } else {
            self.spent.max(self.reserved)
        }
    }
}

impl CostMeter {
    /// A meter that counts but never stops anything.
    pub fn unlimited() -> Arc<CostMeter> {
        Arc::new(CostMeter::default())
    }

    /// A meter that stops work at `limit_usd`.
    pub fn with_limit(limit_usd: f64) -> Arc<CostMeter> {
        Arc::new(CostMeter {
            limit: Some(limit_usd.max(0.0)),
            ..CostMeter::default()
        })
    }

    pub fn limit(&self) -> Option<f64> {
        self.limit
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What has been spent so far, by every piece of work.
    pub fn spent(&self) -> f64 {
        self.lock().charges.values().map(|c| c.spent).sum()
    }

    /// Cancelled when spending reached the limit.
    pub fn tripped(&self) -> &CancellationToken {
        &self.tripped
    }

    /// Whether work `key`, expected to cost `estimate` (`None`: no price known), may start.
    /// Refused work is recorded as stopped by the budget.
    pub fn admit(&self, key: &str, estimate: Option<f64>) -> Result<(), Failure> {
        let mut st = self.lock();
        if estimate.is_none() {
            st.unpriced.insert(key.to_string());
        }
        if let Some(limit) = self.limit {
            let committed: f64 = st
                .charges
                .iter()
                .filter(|(k, _)| k.as_str() != key)
                .map(|(_, c)| c.committed())
                .sum();
            let prior = st.charges.get(key).map_or(0.0, |c| c.spent);
            let wanted = estimate.unwrap_or(0.0);
            if self.tripped.is_cancelled() || committed + prior + wanted > limit + 1e-12 {
                let spent = st.charges.values().map(|c| c.spent).sum();
                if !st.stopped.iter().any(|k| k == key) {
                    st.stopped.push(key.to_string());
                }
                return Err(Failure::OverBudget {
                    limit_usd: limit,
                    spent_usd: spent,
                    started: false,
                });
            }
        }
        let charge = st.charges.entry(key.to_string()).or_default();
        charge.reserved = charge.spent + estimate.unwrap_or(0.0);
        charge.done = false;
        Ok(())
    }

    /// What work `key` has spent so far (a running model API, as it streams). Trips the meter
    /// when the run's spending reaches the limit.
    pub fn record(&self, key: &str, spent_usd: f64) {
        let total = {
            let mut st = self.lock();
            let charge = st.charges.entry(key.to_string()).or_default();
            charge.spent = spent_usd.max(0.0);
            st.charges.values().map(|c| c.spent).sum::<f64>()
        };
        if let Some(limit) = self.limit
            && total >= limit
        {
            self.tripped.cancel();
        }
    }

    /// Work `key` ended, having cost `spent_usd` (`None`: unknown, counted as nothing).
    pub fn finish(&self, key: &str, spent_usd: Option<f64>) {
        {
            let mut st = self.lock();
            let charge = st.charges.entry(key.to_string()).or_default();
            if let Some(s) = spent_usd {
                charge.spent = s.max(0.0);
            }
            charge.done = true;
        }
        self.record(key, spent_usd.unwrap_or_else(|| self.charge_of(key)));
    }

    fn charge_of(&self, key: &str) -> f64 {
        self.lock().charges.get(key).map_or(0.0, |c| c.spent)
    }

    /// The failure of work `key` that the tripped meter stops while it runs.
    pub fn stop(&self, key: &str) -> Failure {
        let mut st = self.lock();
        if !st.stopped.iter().any(|k| k == key) {
            st.stopped.push(key.to_string());
        }
        Failure::OverBudget {
            limit_usd: self.limit.unwrap_or(0.0),
            spent_usd: st.charges.values().map(|c| c.spent).sum(),
            started: true,
        }
    }

    /// The budget as the report shows it; `None` without a limit.
    pub fn report(&self) -> Option<BudgetReport> {
        let limit = self.limit?;
        let st = self.lock();
        Some(BudgetReport {
            limit_usd: limit,
            spent_usd: st.charges.values().map(|c| c.spent).sum(),
            stopped: st.stopped.clone(),
            unpriced: st.unpriced.iter().cloned().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_starts_while_its_estimate_fits_in_order() {
        let meter = CostMeter::with_limit(1.0);
        assert!(meter.admit("a", Some(0.6)).is_ok());
        // 0.6 committed + 0.5 passes the limit: not started.
        let refused = meter.admit("b", Some(0.5)).unwrap_err();
        assert!(matches!(
            refused,
            Failure::OverBudget { started: false, .. }
        ));
        // A smaller one still fits.
        assert!(meter.admit("c", Some(0.3)).is_ok());
        // `a` ends cheaper than expected: room for `b` again.
        meter.finish("a", Some(0.1));
        assert!(meter.admit("b", Some(0.5)).is_ok());
        let report = meter.report().unwrap();
        assert_eq!(report.stopped, vec!["b".to_string()]);
    }

    #[test]
    fn spending_the_limit_trips_the_meter_and_stops_new_work() {
        let meter = CostMeter::with_limit(0.5);
        meter.admit("a", Some(0.1)).unwrap();
        meter.record("a", 0.3);
        assert!(!meter.tripped().is_cancelled());
        meter.record("a", 0.5);
        assert!(meter.tripped().is_cancelled());
        assert!(
            matches!(meter.stop("a"), Failure::OverBudget { started: true, spent_usd, .. } if spent_usd >= 0.5)
        );
        assert!(meter.admit("b", Some(0.0)).is_err());
    }

    #[test]
    fn without_a_limit_nothing_stops_and_unpriced_work_is_named() {
        let meter = CostMeter::unlimited();
        assert!(meter.admit("a", Some(1e9)).is_ok());
        meter.record("a", 1e9);
        assert!(!meter.tripped().is_cancelled());
        assert!(meter.report().is_none());
        let limited = CostMeter::with_limit(1.0);
        limited.admit("local", None).unwrap();
        assert_eq!(
            limited.report().unwrap().unpriced,
            vec!["local".to_string()]
        );
    }
}
