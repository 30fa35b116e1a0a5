//! `deep-review stats`: each agent's scorecard over the reports read, from their findings'
//! outcomes and the runs' retro rows.
//!
//! The unit is a finding as the report that first raised it shows it (a finding raised again in
//! a later round is the same finding, counted once; see [`super`]). For each agent, and for
//! each agent by category and by severity:
//!
//! - **reviews**: reports in which its run completed (over all categories only);
//! - **findings**: findings it raised (alone or with others);
//! - **kept**: of those, shown among the report's findings after consolidation;
//! - **only it**: kept, and no other agent raised it;
//! - **grounded**: of those verification checked, the share whose quoted code was found;
//! - **acted on** and **declined**: counts, and shares of its findings (the rest has no
//!   decision);
//! - **cost and time**: per review and per acted-on finding, from the retro rows of its
//!   completed reviews (over all categories only).

use std::collections::BTreeMap;

use super::{FindingOutcome, Outcome, agreement, fates, load};
pub use crate::types::outcomes::{AgentStats, AgreementEstimate, Stats};
use crate::types::{ReliabilityMethod, Report, RunStatus, Severity};

/// The layout version of `stats --format json` (`deep-review schema stats`).
pub const STATS_SCHEMA_VERSION: u32 = 1;

impl AgentStats {
    fn count(&mut self, f: &FindingOutcome) {
        self.findings += 1;
        self.kept += usize::from(f.shown);
        self.kept_only_it += usize::from(f.only(&self.agent));
        if let Some(g) = f.grounded {
            self.checked += 1;
            self.grounded += usize::from(g);
        }
        match f.outcome {
            Outcome::ActedOn => self.acted_on += 1,
            Outcome::Declined => self.declined += 1,
            Outcome::Unknown => self.undecided += 1,
        }
    }

    fn finish(&mut self) {
        let share = |n: usize, of: usize| (of > 0).then(|| n as f64 / of as f64);
        self.grounded_rate = share(self.grounded, self.checked);
        self.acted_on_rate = share(self.acted_on, self.findings);
        self.declined_rate = share(self.declined, self.findings);
        let per = |total: Option<f64>, n: usize| total.filter(|_| n > 0).map(|t| t / n as f64);
        let reviews = self.reviews.unwrap_or(0);
        self.cost_per_review = per(self.cost_usd, reviews);
        self.seconds_per_review = per(self.duration_s, reviews);
        self.cost_per_acted_on = per(self.cost_usd, self.acted_on);
        self.seconds_per_acted_on = per(self.duration_s, self.acted_on);
    }
}

/// The scorecards of `loaded`'s reports; with `with_agreement`, the agreement-only estimate too.
pub fn compute(loaded: &load::Loaded, with_agreement: bool) -> Stats {
    let reports = &loaded.reports;
    let findings = fates::of_reports(reports);
    let displays = display_names(reports);
    let display = |agent: &str| {
        displays
            .get(agent)
            .cloned()
            .unwrap_or_else(|| crate::types::default_display(agent))
    };

    let mut agents: BTreeMap<String, AgentStats> = BTreeMap::new();
    let row = |agent: &str| AgentStats {
        agent: agent.to_string(),
        display: display(agent),
        ..AgentStats::default()
    };
    for r in reports {
        for a in &r.agents {
            let entry = agents.entry(a.name.clone()).or_insert_with(|| row(&a.name));
            if a.status.is_none_or(|s| s == RunStatus::Ok) {
                *entry.reviews.get_or_insert(0) += 1;
                add(&mut entry.cost_usd, a.cost_usd);
                add(&mut entry.duration_s, a.duration_s);
            }
        }
    }
    let mut by_category: BTreeMap<(String, String), AgentStats> = BTreeMap::new();
    let mut by_severity: BTreeMap<(String, std::cmp::Reverse<Severity>), AgentStats> =
        BTreeMap::new();
    for f in &findings {
        for agent in &f.agents {
            agents
                .entry(agent.clone())
                .or_insert_with(|| row(agent))
                .count(f);
            let category = f.category.clone().unwrap_or_else(|| "none".to_string());
            by_category
                .entry((agent.clone(), category.clone()))
                .or_insert_with(|| AgentStats {
                    category: Some(category),
                    ..row(agent)
                })
                .count(f);
            by_severity
                .entry((agent.clone(), std::cmp::Reverse(f.severity)))
                .or_insert_with(|| AgentStats {
                    severity: Some(f.severity),
                    ..row(agent)
                })
                .count(f);
        }
    }
    let finish = |m: Vec<AgentStats>| -> Vec<AgentStats> {
        m.into_iter()
            .map(|mut s| {
                s.finish();
                s
            })
            .collect()
    };

    let reliability = load::records(
        &findings,
        reports.len(),
        ReliabilityMethod::Outcomes,
        "read by this command",
    );
    let agreement = with_agreement.then(|| {
        let fit = agreement::estimate(
            &load::raised(&findings),
            format!(
                "agreement among the agents on {} of {}; no decision read",
                crate::text::plural(findings.len(), "finding", "findings"),
                crate::text::plural(reports.len(), "report", "reports")
            ),
        );
        AgreementEstimate {
            reliability: fit.reliability,
            share_real: fit.share_real,
            iterations: fit.iterations,
            converged: fit.converged,
        }
    });
    let changes: std::collections::HashSet<String> = reports.iter().map(fates::change_of).collect();
    Stats {
        schema_version: STATS_SCHEMA_VERSION,
        sources: loaded.sources.clone(),
        reports: reports.len(),
        changes: changes.len(),
        warnings: loaded.warnings.clone(),
        agents: finish(agents.into_values().collect()),
        by_category: finish(by_category.into_values().collect()),
        by_severity: finish(by_severity.into_values().collect()),
        reliability: (!reliability.is_empty()).then_some(reliability),
        agreement,
        findings,
    }
}

fn add(total: &mut Option<f64>, value: Option<f64>) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        *total = Some(total.unwrap_or(0.0) + v);
    }
}

/// Each agent's name as the newest report that lists it shows it.
fn display_names(reports: &[Report]) -> BTreeMap<String, String> {
    let mut ordered: Vec<&Report> = reports.iter().collect();
    ordered.sort_by(|a, b| crate::store::reports::id_order(&a.meta.id, &b.meta.id));
    let mut out = BTreeMap::new();
    for r in ordered {
        for a in &r.agents {
            out.insert(a.name.clone(), r.display_of(&a.name).to_string());
        }
    }
    out
}

/// Writes the store's scorecards page (`stats.html`, beside `index.html`) from every report in
/// it, and returns its path.
pub fn write_page(store: &crate::store::Store) -> anyhow::Result<std::path::PathBuf> {
    let stats = compute(&load::from_store(store, &|_| false), false);
    let html = crate::report::html::render_stats(&stats, Some("index.html"));
    store.write_report(crate::store::reports::STATS_PAGE, "html", &html)
}
