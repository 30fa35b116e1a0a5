//! The reports outcomes are read from: the store (through [`crate::store`] only), and the
//! branch `publish` commits them to, when asked.
//!
//! A report without a JSON record (the reference system's Markdown, or one copied in) has no
//! attribution to read per finding: it is left out, and counted in a warning.

use std::collections::HashSet;

use super::reliability::{Labelled, estimate};
use super::{FindingOutcome, Outcome, agreement, fates};
use crate::store::Store;
use crate::types::{Reliability, ReliabilityMethod, Report};

/// Reports read, and what could not be.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub reports: Vec<Report>,
    /// Where they were read: `the store <dir>`, `branch reviews`.
    pub sources: Vec<String>,
    /// One sentence per report or source that could not be read.
    pub warnings: Vec<String>,
}

impl Loaded {
    /// Adds `other`'s reports whose ids this one does not hold yet.
    pub fn merge(&mut self, other: Loaded) {
        let have: HashSet<String> = self.reports.iter().map(|r| r.meta.id.clone()).collect();
        self.reports.extend(
            other
                .reports
                .into_iter()
                .filter(|r| !have.contains(&r.meta.id)),
        );
        self.sources.extend(other.sources);
        self.warnings.extend(other.warnings);
    }
}

/// Every JSON report of `store` whose id `skip` does not refuse.
pub fn from_store(store: &Store, skip: &dyn Fn(&str) -> bool) -> Loaded {
    let mut loaded = Loaded {
        sources: vec![format!("the store {}", store.dir().display())],
        ..Loaded::default()
    };
    let entries = match store.list() {
        Ok(entries) => entries,
        Err(err) => {
            loaded.warnings.push(format!("{err:#}"));
            return loaded;
        }
    };
    let mut markdown_only = 0;
    for entry in entries.iter().rev() {
        if skip(&entry.id) {
            continue;
        }
        if !store.report_path(&entry.id, "json").is_file() {
            markdown_only += 1;
            continue;
        }
        match store.read_report(&entry.id) {
            Ok(mut report) => {
                if report.meta.id.is_empty() {
                    report.meta.id = entry.id.clone();
                }
                loaded.reports.push(slim(report));
            }
            Err(err) => loaded
                .warnings
                .push(format!("report {} is not counted: {err:#}", entry.id)),
        }
    }
    if markdown_only > 0 {
        loaded.warnings.push(format!(
            "{} without a JSON record (Markdown only) {} not counted: a Markdown report does \
             not say which agent raised each finding in a form that can be counted",
            crate::text::plural(markdown_only, "report", "reports"),
            if markdown_only == 1 { "is" } else { "are" }
        ));
    }
    loaded
}

/// `report` without what outcomes never read (the raw reviews of its appendix, finding bodies,
/// code and fixes), so a store of thousands of reports is held in a fraction of its size.
fn slim(mut report: Report) -> Report {
    report.appendix = Vec::new();
    for f in &mut report.findings {
        f.body = String::new();
        f.code = None;
        f.fix = None;
        f.fix_diff = None;
    }
    report
}

/// Every JSON report `publish` committed to `branch` of `repo`.
pub fn from_branch(repo: &std::path::Path, branch: &str) -> anyhow::Result<Loaded> {
    let mut loaded = Loaded {
        sources: vec![format!("branch {branch}")],
        ..Loaded::default()
    };
    for (id, bytes) in crate::store::publish::published_reports(repo, branch)? {
        match serde_json::from_slice::<Report>(&bytes) {
            Ok(mut report) => {
                if report.meta.id.is_empty() {
                    report.meta.id = id;
                }
                loaded.reports.push(slim(report));
            }
            Err(err) => loaded.warnings.push(format!(
                "{id}.json on branch {branch} is not counted: not a Deep Review JSON report this \
                 version can read ({err})"
            )),
        }
    }
    Ok(loaded)
}

/// The findings of `outcomes` with a known fate, as the estimate reads them.
pub fn labelled(outcomes: &[FindingOutcome]) -> Vec<Labelled> {
    outcomes
        .iter()
        .filter(|f| f.outcome != Outcome::Unknown)
        .map(|f| Labelled {
            raised: f.agents.clone(),
            reviewed_by: f.reviewed_by.clone(),
            category: f.category.clone(),
            outcome: f.outcome,
        })
        .collect()
}

/// Every finding of `outcomes`, as agreement reads them (fates unread).
pub fn raised(outcomes: &[FindingOutcome]) -> Vec<agreement::Raised> {
    outcomes
        .iter()
        .map(|f| agreement::Raised {
            raised: f.agents.clone(),
            reviewed_by: f.reviewed_by.clone(),
        })
        .collect()
}

/// The records `method` gives from `reports`; `whence` ends the basis sentence.
pub fn from_reports(reports: &[Report], method: ReliabilityMethod, whence: &str) -> Reliability {
    records(&fates::of_reports(reports), reports.len(), method, whence)
}

/// The records `method` gives from the fates of `reports` reports' findings.
pub fn records(
    outcomes: &[FindingOutcome],
    reports: usize,
    method: ReliabilityMethod,
    whence: &str,
) -> Reliability {
    let changes: HashSet<&str> = outcomes.iter().map(|f| f.change.as_str()).collect();
    match method {
        ReliabilityMethod::Outcomes => {
            let items = labelled(outcomes);
            let acted = items
                .iter()
                .filter(|i| i.outcome == Outcome::ActedOn)
                .count();
            estimate(
                &items,
                format!(
                    "{} ({acted} acted on, {} declined) of {} ({}) {whence}",
                    crate::text::plural(items.len(), "decided finding", "decided findings"),
                    items.len() - acted,
                    crate::text::plural(reports, "report", "reports"),
                    crate::text::plural(changes.len(), "change", "changes"),
                ),
            )
        }
        ReliabilityMethod::Agreement => {
            agreement::estimate(
                &raised(outcomes),
                format!(
                    "agreement among the agents on {} of {} ({}) {whence}; no decision read",
                    crate::text::plural(outcomes.len(), "finding", "findings"),
                    crate::text::plural(reports, "report", "reports"),
                    crate::text::plural(changes.len(), "change", "changes"),
                ),
            )
            .reliability
        }
    }
}
