//! A change's earlier rounds: found in the store, or read from report files, and numbered.
//!
//! A report is read as a round from its JSON record when it has one (this tool's reports) and
//! from its Markdown otherwise (a report of the reference system, or one copied in): its own
//! findings with their ids, its testing gaps (`T1`, ...), its Resolution, and the lists a
//! later round carries forward (what was declined, and what was resolved by a fix), so that a
//! round known only from a later report still counts.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Context;

use super::{History, PriorFinding, PriorRound, TargetKey};
use crate::consolidate::fingerprint::{fingerprint_of, title_words};
use crate::git::git_bytes;
use crate::report::markdown_read::{ReportSource, parse_round_report};
use crate::store::Store;
use crate::store::reports::id_order;
use crate::types::{
    Action, Finding, MergedFinding, PriorItem, Report, ReportMeta, Resolution, Target, Tier,
    Verdict, VerificationStatus,
};

/// One earlier report, read: its metadata, the round it is, and what later reports carry.
#[derive(Debug, Clone)]
pub struct ReadRound {
    pub meta: ReportMeta,
    pub round: PriorRound,
    /// Findings of still earlier rounds this report lists (declined, resolved by a fix).
    pub carried: Vec<PriorFinding>,
}

/// Numbers the rounds (each report's own round number, unless that is not after the one before
/// it) and merges what the reports carry, in the order given (oldest first).
pub fn assemble(key: Option<TargetKey>, reads: Vec<ReadRound>, warnings: Vec<String>) -> History {
    let mut rounds: Vec<PriorRound> = Vec::new();
    let mut carried: Vec<PriorFinding> = Vec::new();
    let mut last = 0u32;
    for mut read in reads {
        let claimed = read.meta.round.unwrap_or(0);
        let number = claimed.max(last + 1);
        last = number;
        read.round.round = number;
        for f in &mut read.round.findings {
            f.round = number;
        }
        rounds.push(read.round);
        carried.extend(read.carried);
    }
    // A carried finding is known better from its own report: keep it only when that report is
    // not among the rounds, once.
    let mut known: HashSet<(u32, String)> = HashSet::new();
    for r in &rounds {
        for f in &r.findings {
            known.insert(f.key());
            known.insert((f.round, f.title.to_lowercase()));
        }
    }
    for f in carried {
        if known.contains(&f.key()) || known.contains(&(f.round, f.title.to_lowercase())) {
            continue;
        }
        known.insert(f.key());
        known.insert((f.round, f.title.to_lowercase()));
        match rounds.iter_mut().find(|r| r.round == f.round) {
            Some(r) => r.findings.push(f),
            None => {
                let at = rounds.partition_point(|r| r.round < f.round);
                rounds.insert(
                    at,
                    PriorRound {
                        round: f.round,
                        report_id: String::new(),
                        head: None,
                        reviewed: false,
                        findings: vec![f],
                    },
                );
            }
        }
    }
    History {
        key,
        next_round: last + 1,
        rounds,
        warnings,
    }
}

/// The earlier rounds of `target` in `store`: its reports (same PR, else same branch, same
/// repository) older than `before_id` when given.
pub fn in_store(store: &Store, target: &Target, before_id: Option<&str>) -> History {
    let Some(key) = TargetKey::of_target(target) else {
        return History::default();
    };
    let entries = match store.list() {
        Ok(entries) => entries,
        Err(err) => {
            return History {
                key: Some(key),
                warnings: vec![format!(
                    "earlier rounds were not read: {err:#}; this report is round 1"
                )],
                ..History::default()
            };
        }
    };
    let label = match &key {
        TargetKey::Pr(_) | TargetKey::Mr(_) => key.to_string(),
        TargetKey::Branch(b) => b.clone(),
    };
    let mut reads = Vec::new();
    let mut warnings = Vec::new();
    let committed = committed_reports(store, target);
    // Oldest first.
    for entry in entries.iter().rev() {
        if entry.target != label
            || before_id.is_some_and(|b| id_order(&entry.id, b) != std::cmp::Ordering::Less)
        {
            continue;
        }
        if committed.contains(&entry.id) {
            warnings.push(format!(
                "report {} is committed in the repository, so the change under review may have \
                 written it: it is not counted as an earlier round (a change does not get to \
                 say what was declined)",
                entry.id
            ));
            continue;
        }
        let json = store.report_path(&entry.id, "json");
        let read = if json.is_file() {
            read_prior_file(&json)
        } else {
            read_prior_file(&store.report_path(&entry.id, "md"))
        };
        match read {
            Ok(read) => {
                let same_repo = match (&read.meta.repo, target.repo_name.as_str()) {
                    (Some(a), b) if !b.is_empty() => a == b,
                    _ => true,
                };
                if same_repo && TargetKey::of_meta(&read.meta).as_ref() == Some(&key) {
                    reads.push(read);
                }
            }
            Err(err) => warnings.push(format!(
                "report {} is not counted as an earlier round: {err:#}",
                entry.id
            )),
        }
    }
    assemble(Some(key), reads, warnings)
}

/// The ids of the reports in `store` that git tracks (in the checkout's index, or in the tree of
/// the commit under review): files that came with the repository rather than from a run here.
/// Empty when the store is outside the repository.
pub(crate) fn committed_reports(store: &Store, target: &Target) -> HashSet<String> {
    let (Ok(root), Ok(dir)) = (
        std::fs::canonicalize(&target.repo),
        std::fs::canonicalize(store.dir()),
    ) else {
        return HashSet::new();
    };
    let Ok(rel) = dir.strip_prefix(&root) else {
        return HashSet::new();
    };
    let rel = rel.to_string_lossy().into_owned();
    let mut ids = HashSet::new();
    let listings = [
        git_bytes(&target.repo, &["ls-files", "-z", "--", &rel]),
        git_bytes(
            &target.repo,
            &[
                "ls-tree",
                "-r",
                "--name-only",
                "-z",
                &target.head,
                "--",
                &rel,
            ],
        ),
    ];
    for listing in listings.into_iter().flatten() {
        for path in listing.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path);
            let name = path.rsplit('/').next().unwrap_or(&path);
            if let Some(id) = name
                .strip_suffix(".json")
                .or_else(|| name.strip_suffix(".md"))
            {
                ids.insert(id.to_string());
            }
        }
    }
    ids
}

/// Reads a report file, JSON (this tool's record) or Markdown (this tool's, or the reference
/// system's), as an earlier round.
pub fn read_prior_file(path: &Path) -> anyhow::Result<ReadRound> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the report {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with('{') {
        let report: Report = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a Deep Review JSON report this version can read",
                path.display()
            )
        })?;
        return Ok(from_report(&report));
    }
    let src = parse_round_report(&text, &path.display().to_string());
    if src.findings.is_empty()
        && src.resolution.is_none()
        && src.meta.round.is_none()
        && src.verdict.is_none()
    {
        anyhow::bail!(
            "{} does not read as a Deep Review report: no findings, Round, Verdict or \
             Resolution found",
            path.display()
        );
    }
    Ok(from_source(&src))
}

/// An earlier round from a report of this tool.
pub fn from_report(report: &Report) -> ReadRound {
    let round = report.meta.round.unwrap_or(report.round);
    let mut findings: Vec<PriorFinding> = report
        .findings
        .iter()
        .map(|f| of_merged(round, f))
        .collect();
    findings.extend(testing_gaps(
        round,
        report.testing_gaps.iter().map(|g| g.text.as_str()),
    ));
    if let Some(res) = &report.resolution {
        apply_resolution(round, &mut findings, res);
    }
    let mut carried: Vec<PriorFinding> = report
        .prior_rounds
        .declined
        .iter()
        .map(|i| of_item(i, Action::Skipped))
        .collect();
    carried.extend(
        report
            .prior_rounds
            .resolved
            .iter()
            .filter(|i| i.action.as_ref().is_some_and(Action::addresses))
            .map(|i| of_item(i, Action::Fixed)),
    );
    ReadRound {
        meta: report.meta.clone(),
        round: PriorRound {
            round,
            report_id: report.meta.id.clone(),
            head: report.meta.head.clone().filter(|h| super::is_sha(h)),
            reviewed: report.verdict != Verdict::NoReview,
            findings,
        },
        carried,
    }
}

/// An earlier round from a Markdown report (the reference system's, or this tool's without
/// its JSON).
pub fn from_source(src: &ReportSource) -> ReadRound {
    let round = src.meta.round.unwrap_or(1);
    let mut findings: Vec<PriorFinding> =
        src.findings.iter().map(|f| of_finding(round, f)).collect();
    findings.extend(testing_gaps(
        round,
        src.testing_gaps.iter().map(String::as_str),
    ));
    if let Some(res) = &src.resolution {
        apply_resolution(round, &mut findings, res);
    }
    ReadRound {
        meta: src.meta.clone(),
        round: PriorRound {
            round,
            report_id: src.meta.id.clone(),
            head: src.meta.head.clone().filter(|h| super::is_sha(h)),
            reviewed: src.verdict != Some(Verdict::NoReview),
            findings,
        },
        carried: src
            .declined
            .iter()
            .map(|i| of_item(i, Action::Skipped))
            .collect(),
    }
}

fn of_merged(round: u32, f: &MergedFinding) -> PriorFinding {
    PriorFinding {
        round,
        id: f.id.clone(),
        title: f.title.clone(),
        body: f.body.clone(),
        locations: f.locations.clone(),
        code: f.code.clone(),
        fingerprint: if f.fingerprint.is_empty() {
            fingerprint_of(&f.locations, f.code.as_ref(), &f.title)
        } else {
            f.fingerprint.clone()
        },
        action: None,
        reason: String::new(),
        shown: f.tier == Tier::Shown,
        grounded: f.verification.as_ref().and_then(|v| match v.status {
            VerificationStatus::Grounded | VerificationStatus::Relocated => Some(true),
            VerificationStatus::Ungrounded => Some(false),
            VerificationStatus::Unchecked => None,
        }),
        carried: false,
        code_changed: None,
    }
}

fn of_finding(round: u32, f: &Finding) -> PriorFinding {
    let id = f.id.to_ascii_uppercase();
    PriorFinding {
        round,
        shown: matches!(id.chars().next(), Some('C' | 'I' | 'S')),
        id,
        title: f.title.clone(),
        body: f.explanation.clone(),
        locations: f.locations.clone(),
        code: f.code.clone(),
        fingerprint: fingerprint_of(&f.locations, f.code.as_ref(), &f.title),
        action: None,
        reason: String::new(),
        grounded: None,
        carried: false,
        code_changed: None,
    }
}

/// A report's testing gaps as findings `T1`, `T2`, ... (how Resolution tables name them).
fn testing_gaps<'a>(round: u32, gaps: impl Iterator<Item = &'a str>) -> Vec<PriorFinding> {
    gaps.enumerate()
        .map(|(i, text)| {
            let title = gap_title(text);
            PriorFinding {
                round,
                id: format!("T{}", i + 1),
                fingerprint: fingerprint_of(&[], None, &title),
                title,
                body: text.to_string(),
                locations: Vec::new(),
                code: None,
                action: None,
                reason: String::new(),
                shown: false,
                grounded: None,
                carried: false,
                code_changed: None,
            }
        })
        .collect()
}

/// A testing gap's title: its bold lead (`**`Reconcile` path** — ...`), else its first clause.
fn gap_title(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("**")
        && let Some((title, _)) = rest.split_once("**")
    {
        return title.trim().to_string();
    }
    let end = t
        .find([':', '.', '—'])
        .filter(|&i| i > 0)
        .unwrap_or(t.len().min(100));
    let mut end = end.min(t.len());
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    t[..end].trim().to_string()
}

fn of_item(item: &PriorItem, default_action: Action) -> PriorFinding {
    PriorFinding {
        round: item.round,
        id: item.id.clone(),
        title: item.title.clone(),
        body: item.reason.clone(),
        locations: Vec::new(),
        code: None,
        fingerprint: item.fingerprint.clone().unwrap_or_default(),
        action: Some(item.action.clone().unwrap_or(default_action)),
        reason: reason_of(&item.reason),
        shown: false,
        grounded: None,
        carried: true,
        code_changed: None,
    }
}

/// The author's reason in a carried list entry ("Skipped in round 1: reason" → "reason").
fn reason_of(text: &str) -> String {
    text.split_once(": ")
        .filter(|(head, _)| head.to_ascii_lowercase().contains("round"))
        .map_or(text, |(_, r)| r)
        .trim()
        .to_string()
}

/// Puts each decision of `res` on the finding it names: by id when the titles agree (ids
/// change when a report is consolidated again), else by title, else as a finding of its own
/// known only by its title.
fn apply_resolution(round: u32, findings: &mut Vec<PriorFinding>, res: &Resolution) {
    for item in &res.items {
        let by_id = findings.iter().position(|f| {
            f.id.eq_ignore_ascii_case(&item.id)
                && (item.title.is_empty() || titles_agree(&f.title, &item.title))
        });
        let at = by_id.or_else(|| {
            findings
                .iter()
                .position(|f| !item.title.is_empty() && titles_agree(&f.title, &item.title))
        });
        match at {
            Some(i) => {
                findings[i].action = Some(item.action.clone());
                findings[i].reason = item.reason.clone();
                // A testing gap's title is only its first words; the row names it as the
                // author saw it.
                if findings[i].id.starts_with('T') && !item.title.is_empty() {
                    findings[i].title = item.title.clone();
                }
            }
            None => findings.push(PriorFinding {
                round,
                id: item.id.to_ascii_uppercase(),
                title: item.title.clone(),
                body: String::new(),
                locations: Vec::new(),
                code: None,
                fingerprint: fingerprint_of(&[], None, &item.title),
                action: Some(item.action.clone()),
                reason: item.reason.clone(),
                shown: false,
                grounded: None,
                carried: false,
                code_changed: None,
            }),
        }
    }
}

/// Two titles that share most of their content words.
pub fn titles_agree(a: &str, b: &str) -> bool {
    let (wa, wb) = (title_words(a), title_words(b));
    if wa.is_empty() || wb.is_empty() {
        return false;
    }
    let shared = wa.iter().filter(|w| wb.contains(w)).count();
    shared * 2 > wa.len().min(wb.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(round: Option<u32>, titles: &[&str]) -> ReadRound {
        let findings = titles
            .iter()
            .enumerate()
            .map(|(i, t)| PriorFinding {
                round: 0,
                id: format!("S{}", i + 1),
                title: t.to_string(),
                body: String::new(),
                locations: Vec::new(),
                code: None,
                fingerprint: String::new(),
                action: None,
                reason: String::new(),
                shown: true,
                grounded: None,
                carried: false,
                code_changed: None,
            })
            .collect();
        ReadRound {
            meta: ReportMeta {
                round,
                ..ReportMeta::default()
            },
            round: PriorRound {
                round: 0,
                report_id: String::new(),
                head: None,
                reviewed: true,
                findings,
            },
            carried: Vec::new(),
        }
    }

    #[test]
    fn rounds_are_numbered_in_time_order_and_never_go_back() {
        // Every report this tool wrote before rounds said "Round 1".
        let h = assemble(
            None,
            vec![read(Some(1), &[]), read(Some(1), &[]), read(None, &[])],
            vec![],
        );
        let numbers: Vec<u32> = h.rounds.iter().map(|r| r.round).collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert_eq!(h.next_round, 4);
        // A report that says round 5 is round 5.
        let h = assemble(None, vec![read(Some(5), &["a"])], vec![]);
        assert_eq!((h.rounds[0].findings[0].round, h.next_round), (5, 6));
        assert_eq!(History::default().next_round, 1);
    }

    #[test]
    fn carried_findings_count_only_when_their_own_report_is_missing() {
        let mut later = read(Some(2), &["New thing"]);
        let declined = |round: u32, title: &str| {
            // As the reference reports list them: a title and a reason, no id.
            PriorFinding {
                carried: true,
                id: String::new(),
                action: Some(Action::Skipped),
                ..read(None, &[title]).round.findings[0].clone()
            }
            .with_round(round)
        };
        later.carried = vec![declined(1, "Nil guards"), declined(1, "Retry loop")];
        let mut first = read(Some(1), &["Retry loop"]);
        first.round.findings[0].action = Some(Action::Skipped);
        let h = assemble(None, vec![first, later.clone()], vec![]);
        let titles: Vec<(u32, &str, bool)> = h
            .findings()
            .map(|f| (f.round, f.title.as_str(), f.carried))
            .collect();
        assert_eq!(
            titles,
            [
                (1, "Retry loop", false),
                (1, "Nil guards", true),
                (2, "New thing", false)
            ]
        );
        // Only the later report: round 1 is known from what it carries, and is not "reviewed".
        let h = assemble(None, vec![later], vec![]);
        assert_eq!(h.rounds.len(), 2);
        assert!(!h.rounds[0].reviewed && h.rounds[1].reviewed);
        assert_eq!(h.last_reviewed().unwrap().round, 2);
    }

    impl PriorFinding {
        fn with_round(mut self, round: u32) -> Self {
            self.round = round;
            self
        }
    }

    #[test]
    fn decisions_find_their_finding_by_id_then_by_title() {
        let mut findings = read(None, &["Retry loop never ends", "Nil guards missing"])
            .round
            .findings;
        let res = Resolution {
            items: vec![
                crate::types::ResolutionItem {
                    id: "S2".into(),
                    title: "Retry loop never ends".into(),
                    action: Action::Fixed,
                    reason: String::new(),
                },
                crate::types::ResolutionItem {
                    id: "T9".into(),
                    title: "Smoke test".into(),
                    action: Action::Skipped,
                    reason: "cheap".into(),
                },
            ],
            ..Resolution::default()
        };
        apply_resolution(1, &mut findings, &res);
        // S2 is another finding now: the decision goes to the one with that title.
        assert_eq!(findings[0].action, Some(Action::Fixed));
        assert_eq!(findings[1].action, None);
        assert_eq!(findings[2].id, "T9");
        assert_eq!(findings[2].action, Some(Action::Skipped));
        assert_eq!(
            gap_title("**`Reconcile` path** — no test"),
            "`Reconcile` path"
        );
        assert_eq!(reason_of("Skipped in round 1: too costly"), "too costly");
    }
}
