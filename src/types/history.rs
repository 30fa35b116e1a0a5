//! A change's earlier rounds, as consolidation is given them: what a round is counted over
//! ([`TargetKey`]), each earlier round with its findings and the author's decisions, and the
//! round a new report is. [`crate::rounds`] finds and reads them (from the store or from report
//! files); consolidation only takes them, so it needs nothing above it to do so.

use std::fmt;

use super::{Action, CodeSnippet, Location, ReportMeta, RequestKind, Target};

/// What the rounds of a review are counted over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetKey {
    /// A pull request, by number.
    Pr(u64),
    /// A GitLab merge request, by its number in the project (`!42`).
    Mr(u64),
    /// A branch, by name.
    Branch(String),
}

impl TargetKey {
    /// The key of the change being reviewed: its PR, else its branch; `None` for a commit range
    /// with neither (nothing to count rounds over).
    pub fn of_target(target: &Target) -> Option<TargetKey> {
        match (&target.pr, &target.branch) {
            (Some(pr), _) => Some(TargetKey::of_request(pr.kind, pr.number)),
            (None, Some(b)) if !b.is_empty() => Some(TargetKey::Branch(b.clone())),
            _ => None,
        }
    }

    fn of_request(kind: RequestKind, number: u64) -> TargetKey {
        match kind {
            RequestKind::PullRequest => TargetKey::Pr(number),
            RequestKind::MergeRequest => TargetKey::Mr(number),
        }
    }

    /// The key of a report: its PR, else its branch, else what its Round row says it counts
    /// over ("5 (of PR #236)").
    pub fn of_meta(meta: &ReportMeta) -> Option<TargetKey> {
        if let Some(pr) = &meta.pr {
            return Some(TargetKey::of_request(pr.kind, pr.number));
        }
        if let Some(b) = meta.branch.as_ref().filter(|b| !b.is_empty()) {
            return Some(TargetKey::Branch(b.clone()));
        }
        let of = meta.round_of.as_deref()?.trim();
        if let Some(n) = of
            .strip_prefix("PR #")
            .or_else(|| of.strip_prefix("PR "))
            .or_else(|| of.strip_prefix('#'))
        {
            return n.trim().parse().ok().map(TargetKey::Pr);
        }
        if let Some(n) = of.strip_prefix("MR !").or_else(|| of.strip_prefix('!')) {
            return n.trim().parse().ok().map(TargetKey::Mr);
        }
        of.strip_prefix("branch ")
            .map(|b| TargetKey::Branch(b.trim().to_string()))
    }
}

impl fmt::Display for TargetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetKey::Pr(n) => write!(f, "PR #{n}"),
            TargetKey::Mr(n) => write!(f, "MR !{n}"),
            TargetKey::Branch(b) => write!(f, "branch {b}"),
        }
    }
}

/// One earlier round, as a later round needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorRound {
    pub round: u32,
    /// The report's id (`20260521-153126-pr-361`).
    pub report_id: String,
    /// The commit that round reviewed, when its report says.
    pub head: Option<String>,
    /// Whether that round produced a review at all (a run whose agents all failed did not).
    pub reviewed: bool,
    pub findings: Vec<PriorFinding>,
}

/// One finding of an earlier round, with the author's decision on it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorFinding {
    pub round: u32,
    /// Its id in that round's report: `S4`, or `T3` for the report's third testing gap.
    pub id: String,
    pub title: String,
    pub body: String,
    pub locations: Vec<Location>,
    pub code: Option<CodeSnippet>,
    pub fingerprint: String,
    /// Recorded in that report's Resolution (or carried from a later report's lists).
    pub action: Option<Action>,
    pub reason: String,
    /// Shown among that report's findings (not low confidence, unverified or a testing gap).
    pub shown: bool,
    /// Its quoted code was found at that round's head by verification (`None`: not checked).
    pub grounded: Option<bool>,
    /// Known only from a later report's list (a title and a reason), not from its own report.
    pub carried: bool,
    /// Whether its code changed materially between that round's head and the head now being
    /// reviewed ([`crate::rounds::code::mark_changes`]); `None` when that cannot be told.
    pub code_changed: Option<bool>,
}

impl PriorFinding {
    /// `(round, id)`, or `(round, title)` for a carried finding without an id: what tells two
    /// earlier findings apart.
    pub fn key(&self) -> (u32, String) {
        if self.id.is_empty() {
            (self.round, self.title.to_lowercase())
        } else {
            (self.round, self.id.to_ascii_uppercase())
        }
    }
}

/// The earlier rounds of one change, oldest first, and the round a new report of it is.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub key: Option<TargetKey>,
    pub rounds: Vec<PriorRound>,
    /// The round number of the next report: 1 when there is no earlier one.
    pub next_round: u32,
    /// Reports that could not be read as rounds, one sentence each.
    pub warnings: Vec<String>,
}

impl Default for History {
    fn default() -> Self {
        History {
            key: None,
            rounds: Vec::new(),
            next_round: 1,
            warnings: Vec::new(),
        }
    }
}

impl History {
    /// True when there is no earlier round to compare with.
    pub fn is_first(&self) -> bool {
        self.rounds.is_empty()
    }

    /// The last earlier round that reviewed something: what "Since round N" compares with.
    pub fn last_reviewed(&self) -> Option<&PriorRound> {
        self.rounds.iter().rev().find(|r| r.reviewed)
    }

    /// Every earlier finding, oldest round first.
    pub fn findings(&self) -> impl Iterator<Item = &PriorFinding> {
        self.rounds.iter().flat_map(|r| r.findings.iter())
    }

    /// Sets the round numbers of `meta` for a new report of this change.
    pub fn stamp(&self, meta: &mut ReportMeta) {
        meta.round = Some(self.next_round);
        meta.round_of = self.key.as_ref().map(ToString::to_string);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_from_reports_and_their_round_rows() {
        let mut meta = ReportMeta {
            round_of: Some("PR #236".into()),
            ..ReportMeta::default()
        };
        assert_eq!(TargetKey::of_meta(&meta), Some(TargetKey::Pr(236)));
        meta.round_of = Some("MR !42".into());
        assert_eq!(TargetKey::of_meta(&meta), Some(TargetKey::Mr(42)));
        meta.round_of = Some("branch feat/x".into());
        assert_eq!(
            TargetKey::of_meta(&meta),
            Some(TargetKey::Branch("feat/x".into()))
        );
        meta.branch = Some("other".into());
        assert_eq!(
            TargetKey::of_meta(&meta),
            Some(TargetKey::Branch("other".into()))
        );
        assert_eq!(TargetKey::Pr(7).to_string(), "PR #7");
        assert_eq!(TargetKey::Mr(42).to_string(), "MR !42");
        assert_eq!(TargetKey::Branch("b".into()).to_string(), "branch b");
    }
}
