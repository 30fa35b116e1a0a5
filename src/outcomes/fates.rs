//! Each finding's fate across the rounds of its change, read from the reports alone.
//!
//! The reports are grouped by change (repository, then pull request or branch, as rounds count
//! them) and read oldest round first. A finding that continues an earlier one (`persisting`,
//! with `prior` naming it) joins that finding; a finding that comes back after a fix
//! (`regressed`) is a new one, and the fix stays on the old. Each Resolution row sets the fate
//! of the finding it names (the latest decision wins); a later round's lists fill in what no
//! Resolution said.

use std::collections::{BTreeMap, HashMap};

use super::{FindingOutcome, Outcome, Provenance, ProvenanceKind};
use crate::rounds::TargetKey;
use crate::rounds::history::titles_agree;
use crate::store::reports::id_order;
use crate::types::{
    Action, MergedFinding, PriorItem, Report, ReportMeta, RoundStatus, RunStatus, Tier,
    VerificationStatus,
};

/// Every finding of `reports`, each once, with its fate: grouped by change, in the order the
/// changes' first reports were made, each change's findings in report order.
pub fn of_reports(reports: &[Report]) -> Vec<FindingOutcome> {
    let mut changes: BTreeMap<String, Vec<&Report>> = BTreeMap::new();
    for r in reports {
        changes.entry(change_of(r)).or_default().push(r);
    }
    let mut ordered: Vec<(String, Vec<&Report>)> = changes.into_iter().collect();
    for (_, list) in &mut ordered {
        list.sort_by(|a, b| {
            round_of(a)
                .cmp(&round_of(b))
                .then(id_order(&a.meta.id, &b.meta.id))
        });
    }
    ordered.sort_by(|a, b| id_order(&a.1[0].meta.id, &b.1[0].meta.id));
    ordered
        .into_iter()
        .flat_map(|(change, list)| Change::read(&change, &list))
        .collect()
}

/// The change a report belongs to: `repo · PR #236`, `repo · branch feat`, else its own id.
pub fn change_of(report: &Report) -> String {
    change_of_meta(&report.meta, &report.meta.id)
}

/// The change of a report with metadata `meta`; `id` when it names no pull request or branch.
pub fn change_of_meta(meta: &ReportMeta, id: &str) -> String {
    let repo = meta.repo.as_deref().unwrap_or("");
    match TargetKey::of_meta(meta) {
        Some(key) if repo.is_empty() => key.to_string(),
        Some(key) => format!("{repo} · {key}"),
        None => id.to_string(),
    }
}

fn round_of(r: &Report) -> u32 {
    r.meta.round.unwrap_or(r.round)
}

/// The agents that reviewed the change in `report`: a retro row whose run did not fail and
/// that reported a finding (as consolidation counts the agents that looked), and any agent a
/// finding is attributed to.
pub fn reviewers_of(report: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in &report.agents {
        let completed = a.status.is_none_or(|s| s == RunStatus::Ok);
        let wrote = a.counts.critical + a.counts.important + a.counts.suggestion > 0;
        if completed && wrote {
            out.push(a.name.clone());
        }
    }
    for f in &report.findings {
        for agent in &f.agents {
            if !out.contains(agent) {
                out.push(agent.clone());
            }
        }
    }
    out
}

/// The findings of one change as they are being read.
struct Change {
    findings: Vec<FindingOutcome>,
    /// `(round, id)` of every finding of every report read so far → its entry in `findings`.
    by_key: HashMap<(u32, String), usize>,
}

impl Change {
    fn read(change: &str, reports: &[&Report]) -> Vec<FindingOutcome> {
        let mut c = Change {
            findings: Vec::new(),
            by_key: HashMap::new(),
        };
        for report in reports {
            c.add_report(change, report);
        }
        c.findings
    }

    fn add_report(&mut self, change: &str, report: &Report) {
        let round = round_of(report);
        let reviewers = reviewers_of(report);
        // Each finding of this report, as an index into `self.findings`.
        let mut own: Vec<usize> = Vec::with_capacity(report.findings.len());
        for f in &report.findings {
            let continues = match (&f.round_status, &f.prior) {
                (RoundStatus::Persisting, Some(p)) => self
                    .by_key
                    .get(&(p.round, p.id.to_ascii_uppercase()))
                    .copied(),
                _ => None,
            };
            let at = match continues {
                Some(at) => {
                    let entry = &mut self.findings[at];
                    union(&mut entry.agents, &f.agents);
                    union(&mut entry.reviewed_by, &reviewers);
                    entry
                        .raised_again
                        .push((report.meta.id.clone(), f.id.clone()));
                    at
                }
                None => {
                    self.findings
                        .push(first_raised(change, report, round, f, &reviewers));
                    self.findings.len() - 1
                }
            };
            self.by_key.insert((round, f.id.to_ascii_uppercase()), at);
            own.push(at);
        }
        if let Some(res) = &report.resolution {
            for item in &res.items {
                let Some(k) = named_finding(&report.findings, &item.id, &item.title) else {
                    continue;
                };
                self.decide(
                    own[k],
                    &item.action,
                    Provenance {
                        kind: ProvenanceKind::Resolution,
                        report_id: Some(report.meta.id.clone()),
                        round: Some(round),
                        action: Some(item.action.clone()),
                        id: Some(report.findings[k].id.clone()),
                    },
                );
            }
        }
        let lists = &report.prior_rounds;
        for item in &lists.declined {
            self.fill(item, report, round, Some(Action::Skipped));
        }
        for item in lists.resolved.iter().chain(&lists.regressed) {
            self.fill(item, report, round, None);
        }
    }

    /// Sets the fate of entry `at` from a Resolution row: the latest decision wins.
    fn decide(&mut self, at: usize, action: &Action, provenance: Provenance) {
        let entry = &mut self.findings[at];
        entry.outcome = Outcome::of_action(action);
        entry.provenance = provenance;
    }

    /// A later round's list entry: it decides the fate of the earlier finding it names only
    /// when no Resolution did. An entry with no decision says the finding was not raised
    /// again (resolved without decision).
    fn fill(&mut self, item: &PriorItem, report: &Report, round: u32, default: Option<Action>) {
        let Some(&at) = self.by_key.get(&(item.round, item.id.to_ascii_uppercase())) else {
            return;
        };
        let entry = &mut self.findings[at];
        if entry.provenance.kind != ProvenanceKind::NoDecision {
            return;
        }
        let action = item.action.clone().or(default);
        let (outcome, kind) = match &action {
            Some(a) => (Outcome::of_action(a), ProvenanceKind::LaterRound),
            None => (Outcome::Unknown, ProvenanceKind::NotRaisedAgain),
        };
        entry.outcome = outcome;
        entry.provenance = Provenance {
            kind,
            report_id: Some(report.meta.id.clone()),
            round: Some(round),
            action,
            id: Some(item.id.clone()),
        };
    }
}

/// A finding as its report first raised it, with no decision yet.
fn first_raised(
    change: &str,
    report: &Report,
    round: u32,
    f: &MergedFinding,
    reviewers: &[String],
) -> FindingOutcome {
    let mut reviewed_by = reviewers.to_vec();
    union(&mut reviewed_by, &f.agents);
    FindingOutcome {
        change: change.to_string(),
        report_id: report.meta.id.clone(),
        round,
        id: f.id.clone(),
        title: f.title.clone(),
        severity: f.severity,
        category: f.category.as_ref().map(|c| c.as_str().to_lowercase()),
        agents: f.agents.clone(),
        reviewed_by,
        shown: f.tier == Tier::Shown,
        grounded: f.verification.as_ref().and_then(|v| match v.status {
            VerificationStatus::Grounded | VerificationStatus::Relocated => Some(true),
            VerificationStatus::Ungrounded => Some(false),
            VerificationStatus::Unchecked => None,
        }),
        raised_again: Vec::new(),
        outcome: Outcome::Unknown,
        provenance: Provenance {
            kind: ProvenanceKind::NoDecision,
            report_id: None,
            round: None,
            action: None,
            id: None,
        },
    }
}

/// The finding a Resolution row names: by id when the titles agree (a report consolidated again
/// renumbers its findings), else by title.
fn named_finding(findings: &[MergedFinding], id: &str, title: &str) -> Option<usize> {
    findings
        .iter()
        .position(|f| {
            f.id.eq_ignore_ascii_case(id) && (title.is_empty() || titles_agree(&f.title, title))
        })
        .or_else(|| {
            findings
                .iter()
                .position(|f| !title.is_empty() && titles_agree(&f.title, title))
        })
}

fn union(into: &mut Vec<String>, more: &[String]) {
    for m in more {
        if !into.contains(m) {
            into.push(m.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        AgentRetro, PriorRef, PriorRounds, Resolution, ResolutionItem, Severity, SeverityCounts,
        SourceRef,
    };

    pub(crate) fn finding(id: &str, title: &str, agents: &[&str]) -> MergedFinding {
        MergedFinding {
            id: id.into(),
            title: title.into(),
            body: String::new(),
            severity: Severity::Important,
            category: Some("regression".into()),
            locations: vec![],
            code: None,
            fix: None,
            fix_diff: None,
            agents: agents.iter().map(|a| a.to_string()).collect(),
            sources: agents
                .iter()
                .map(|a| SourceRef {
                    agent: a.to_string(),
                    id: "I1".into(),
                    severity: Some(Severity::Important),
                    noted_in: None,
                })
                .collect(),
            calibration: None,
            confidence: Some(0.8),
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: String::new(),
            round_status: RoundStatus::New,
            prior: None,
        }
    }

    fn retro(name: &str) -> AgentRetro {
        AgentRetro {
            name: name.into(),
            display: name.into(),
            counts: SeverityCounts {
                critical: 0,
                important: 1,
                suggestion: 0,
            },
            design_observations: 0,
            unique_insights: 0,
            false_positives: 0,
            files_reviewed: None,
            coverage_misses: vec![],
            calibrations: vec![],
            status: Some(RunStatus::Ok),
            duration_s: Some(10.0),
            tool_calls: None,
            tokens: None,
            cost_usd: Some(0.5),
            cost_basis: None,
            error: None,
            synthesis_note: None,
            network: None,
            worktree_changes: vec![],
            sandbox: None,
            output_cut_bytes: None,
        }
    }

    fn report(id: &str, round: u32, findings: Vec<MergedFinding>) -> Report {
        Report {
            round,
            meta: ReportMeta {
                id: id.into(),
                round: Some(round),
                branch: Some("feat".into()),
                repo: Some("acme/app".into()),
                ..ReportMeta::default()
            },
            findings,
            agents: vec![retro("alpha"), retro("beta")],
            ..Report::default()
        }
    }

    fn decided(items: &[(&str, &str, Action)]) -> Option<Resolution> {
        Some(Resolution {
            items: items
                .iter()
                .map(|(id, title, action)| ResolutionItem {
                    id: id.to_string(),
                    title: title.to_string(),
                    action: action.clone(),
                    reason: String::new(),
                })
                .collect(),
            ..Resolution::default()
        })
    }

    #[test]
    fn a_finding_raised_again_is_one_finding_and_the_latest_decision_is_its_fate() {
        let mut r1 = report(
            "20260101-000000-feat",
            1,
            vec![
                finding("I1", "Retry loop never ends", &["alpha"]),
                finding("I2", "Token is a constant", &["beta"]),
                finding("I3", "Cache never expires", &["alpha", "beta"]),
            ],
        );
        // Round 1: I1 skipped, I2 commented, I3 left undecided.
        r1.resolution = decided(&[
            ("I1", "Retry loop never ends", Action::Skipped),
            ("I2", "Token is a constant", Action::Commented),
        ]);
        // Round 2: the retry loop raised again by beta too (its code changed), then fixed;
        // the cache is no longer raised and nobody said why.
        let mut again = finding("I1", "Retry loop never ends", &["beta"]);
        again.round_status = RoundStatus::Persisting;
        again.prior = Some(PriorRef {
            round: 1,
            id: "I1".into(),
        });
        let mut r2 = report(
            "20260102-000000-feat",
            2,
            vec![again, finding("I2", "Log line is noisy", &["alpha"])],
        );
        r2.resolution = decided(&[("I1", "Retry loop never ends", Action::Fixed)]);
        r2.prior_rounds = PriorRounds {
            since_round: Some(1),
            resolved: vec![PriorItem {
                round: 1,
                id: "I3".into(),
                title: "Cache never expires".into(),
                reason: String::new(),
                action: None,
                fingerprint: None,
                now: None,
                raised_again: vec![],
            }],
            ..PriorRounds::default()
        };
        // Given newest first: the order of the input does not matter.
        let out = of_reports(&[r2, r1]);
        let fates: Vec<(&str, &str, Outcome, ProvenanceKind)> = out
            .iter()
            .map(|f| {
                (
                    f.report_id.as_str(),
                    f.id.as_str(),
                    f.outcome,
                    f.provenance.kind,
                )
            })
            .collect();
        assert_eq!(
            fates,
            [
                (
                    "20260101-000000-feat",
                    "I1",
                    Outcome::ActedOn,
                    ProvenanceKind::Resolution
                ),
                (
                    "20260101-000000-feat",
                    "I2",
                    Outcome::Declined,
                    ProvenanceKind::Resolution
                ),
                (
                    "20260101-000000-feat",
                    "I3",
                    Outcome::Unknown,
                    ProvenanceKind::NotRaisedAgain
                ),
                (
                    "20260102-000000-feat",
                    "I2",
                    Outcome::Unknown,
                    ProvenanceKind::NoDecision
                ),
            ]
        );
        // The fix was recorded in round 2, on the finding round 1 raised; beta joined it.
        assert_eq!(
            out[0].provenance.report_id.as_deref(),
            Some("20260102-000000-feat")
        );
        assert_eq!(out[0].agents, ["alpha", "beta"]);
        assert_eq!(
            out[0].raised_again,
            [("20260102-000000-feat".to_string(), "I1".to_string())]
        );
        assert_eq!(out[0].change, "acme/app · branch feat");
    }

    #[test]
    fn a_later_rounds_declined_list_fills_in_what_no_resolution_said() {
        let r1 = report(
            "20260101-000000-feat",
            1,
            vec![finding("S1", "Rename the helper", &["alpha"])],
        );
        let mut r2 = report("20260102-000000-feat", 2, vec![]);
        r2.prior_rounds.declined = vec![PriorItem {
            round: 1,
            id: "S1".into(),
            title: "Rename the helper".into(),
            reason: "Skipped in round 1: the name is the API's".into(),
            action: None,
            fingerprint: None,
            now: None,
            raised_again: vec![],
        }];
        let out = of_reports(&[r1, r2]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].outcome, Outcome::Declined);
        assert_eq!(out[0].provenance.kind, ProvenanceKind::LaterRound);
        assert_eq!(out[0].provenance.round, Some(2));
    }

    #[test]
    fn a_resolution_row_finds_its_finding_by_title_when_ids_moved() {
        let mut r = report(
            "20260101-000000-feat",
            1,
            vec![
                finding("I1", "Cache never expires", &["alpha"]),
                finding("I2", "Retry loop never ends", &["beta"]),
            ],
        );
        // Recorded when the retry loop was I1; the report was consolidated again since.
        r.resolution = decided(&[
            ("I1", "Retry loop never ends", Action::Fixed),
            ("I9", "Something no finding says", Action::Fixed),
            ("I1x", "", Action::Other("Deferred to #12".into())),
        ]);
        let out = of_reports(&[r]);
        assert_eq!(out[0].outcome, Outcome::Unknown);
        assert_eq!(out[1].outcome, Outcome::ActedOn);
        assert_eq!(reviewers_of(&report("x", 1, vec![])), ["alpha", "beta"]);
    }
}
