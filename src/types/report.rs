//! The consolidated Deep Review report: what every output format renders.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::finding::{Category, CodeSnippet, Location, Severity};
use super::raw::{RunStatus, TokenUsage};
use super::review::ObservationKind;
use super::rounds::{PriorRef, PriorRounds, Resolution, RoundStatus};
use super::verification::Verification;

/// The report's recommendation, derived from what findings remain after calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Verdict {
    #[serde(rename = "Merge")]
    Merge,
    #[serde(rename = "Merge as-is")]
    MergeAsIs,
    #[serde(rename = "Merge with optional fixes")]
    MergeWithOptionalFixes,
    #[serde(rename = "Merge with fixes")]
    MergeWithFixes,
    #[serde(rename = "Rework")]
    Rework,
    /// No agent produced a review: there is nothing to judge the change by.
    #[serde(rename = "No review")]
    NoReview,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Merge => "Merge",
            Verdict::MergeAsIs => "Merge as-is",
            Verdict::MergeWithOptionalFixes => "Merge with optional fixes",
            Verdict::MergeWithFixes => "Merge with fixes",
            Verdict::Rework => "Rework",
            Verdict::NoReview => "No review",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = String;

    /// Reads the verdict words of a report, ignoring case, bold markers and trailing rationale.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().trim_matches('*').trim().to_ascii_lowercase();
        let t = t.replace('-', " ");
        if t.starts_with("merge with optional fixes") {
            Ok(Verdict::MergeWithOptionalFixes)
        } else if t.starts_with("merge with fixes") {
            Ok(Verdict::MergeWithFixes)
        } else if t.starts_with("merge as is") {
            Ok(Verdict::MergeAsIs)
        } else if t.starts_with("rework") {
            Ok(Verdict::Rework)
        } else if t.starts_with("no review") {
            Ok(Verdict::NoReview)
        } else if t.starts_with("merge") {
            Ok(Verdict::Merge)
        } else {
            Err(format!("unknown verdict {s:?}"))
        }
    }
}

/// The pull request (or merge request), when the change is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PrInfo {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A GitHub pull request (`#236`, the default) or a GitLab merge request (`!42`).
    #[serde(default, skip_serializing_if = "RequestKind::is_pull_request")]
    pub kind: RequestKind,
}

impl PrInfo {
    /// `#236` or `!42`, as the forge writes a reference to it.
    pub fn reference(&self) -> String {
        self.kind.reference(self.number)
    }

    /// What the rounds of its reports are counted over: `PR #236`, `MR !42`.
    pub fn round_label(&self) -> String {
        format!("{} {}", self.kind.short(), self.reference())
    }

    /// Names a run of it: `pr-236`, `mr-42`.
    pub fn label(&self) -> String {
        format!("{}-{}", self.kind.short().to_ascii_lowercase(), self.number)
    }
}

/// What kind of change request a forge keeps: GitHub's pull requests and GitLab's merge
/// requests are the same thing under two names and two reference signs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    #[default]
    PullRequest,
    MergeRequest,
}

impl RequestKind {
    pub fn is_pull_request(&self) -> bool {
        *self == RequestKind::PullRequest
    }

    /// `pull request`, `merge request`.
    pub fn noun(self) -> &'static str {
        match self {
            RequestKind::PullRequest => "pull request",
            RequestKind::MergeRequest => "merge request",
        }
    }

    /// `PR`, `MR`.
    pub fn short(self) -> &'static str {
        match self {
            RequestKind::PullRequest => "PR",
            RequestKind::MergeRequest => "MR",
        }
    }

    /// `#236`, `!42`.
    pub fn reference(self, number: u64) -> String {
        match self {
            RequestKind::PullRequest => format!("#{number}"),
            RequestKind::MergeRequest => format!("!{number}"),
        }
    }

    /// `pull request #236`, `merge request !42`.
    pub fn named(self, number: u64) -> String {
        format!("{} {}", self.noun(), self.reference(number))
    }
}

/// A review thread on the pull request that nobody has resolved: feedback someone else left,
/// carried into the brief as material to weigh and into the report's "Unresolved Feedback".
/// Every text field was written by someone other than deep-review's user: untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewThread {
    /// The file the thread is on; `None` for a thread on the pull request as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line at the head the thread is on (its original line when it is outdated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Who opened the thread (the forge's login).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The thread's first comment.
    pub body: String,
    /// The code the thread was on has changed since it was written.
    #[serde(default)]
    pub outdated: bool,
    /// How many replies followed the first comment.
    #[serde(default)]
    pub replies: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A commit of the change: short sha and subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommitInfo {
    pub sha: String,
    pub subject: String,
}

/// A reviewer of the report: the agent, how it is named, and its model settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reviewer {
    /// Short lower-case name: `claude`.
    pub name: String,
    /// "Claude Opus 4.6"
    pub display: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

/// The metadata table at the top of a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportMeta {
    /// `YYYYMMDD-HHMMSS-<target>`
    #[serde(default)]
    pub id: String,
    /// When the review ran, in the reviewer's local time (as the reference reports write it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<chrono::NaiveDateTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The repository's web page (`https://github.com/o/n`), when it is on a forge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    /// The reviewed commit and the merge-base it was compared against (full shas), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Which review of this change this is: 1 for the first, N+1 after N earlier reports of
    /// the same change (its pull request, else its branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// What the rounds are counted over: `PR #236`, `branch feat` (the metadata shows
    /// "5 (of PR #236)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<PrInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default)]
    pub commits: Vec<CommitInfo>,
    #[serde(default)]
    pub reviewers: Vec<Reviewer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_s: Option<f64>,
}

/// Which agent's finding a merged finding holds, and the severity that agent gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceRef {
    pub agent: String,
    /// The finding's id in that agent's review; for a note, its section and position
    /// (`Testing 2`).
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Set when the source is not a finding but a note of the agent's review that backs the
    /// finding (a testing, documentation or design item citing the same place): the section,
    /// `Testing`, `Documentation` or `Design`. "Also noted by Codex in Testing".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noted_in: Option<String>,
}

/// A finding of the report: one defect, with every agent's finding that named it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergedFinding {
    /// `C1`, `I2`, `S3`: numbered within its severity in report order.
    pub id: String,
    pub title: String,
    pub body: String,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(default)]
    pub locations: Vec<Location>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeSnippet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_diff: Option<String>,
    /// The agents whose findings it holds, lower case, in reviewer order. Derived from `sources`.
    pub agents: Vec<String>,
    pub sources: Vec<SourceRef>,
    /// Why the severity differs from what the agents wrote: "Gemini: critical → important".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<String>,
    /// 0..1: how sure consolidation is that this is a real defect worth the author's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// How the agents' records moved the confidence, when consolidation weighed them
    /// ([`Report::reliability`]): "Codex: 31 of 40 similar findings acted on".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_reason: Option<String>,
    /// Where the report puts it: among the findings, under "Low Confidence", or under
    /// "Unverified Findings". Decided by consolidation; renderers only read it.
    #[serde(default)]
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// Stable across rounds and line shifts: the same defect, the same fingerprint
    /// (`consolidate::fingerprint`). Rounds, SARIF and forge comments match findings by it.
    #[serde(default)]
    pub fingerprint: String,
    /// New this round, raised before and still there, or back after being marked fixed.
    #[serde(default)]
    pub round_status: RoundStatus,
    /// The earlier round's finding it was matched to, when it is not new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<PriorRef>,
}

impl MergedFinding {
    /// Shown among the Critical / Important / Suggestions findings.
    pub fn is_shown(&self) -> bool {
        self.tier == Tier::Shown
    }
}

/// Where a merged finding stands in the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Confident: shown in its severity's section and counted by the verdict.
    #[default]
    Shown,
    /// Too little support to stand: listed, collapsed, under "Low Confidence".
    LowConfidence,
    /// Raised by one agent only and its quoted code is not in the repository: "Unverified
    /// Findings", likely a false positive.
    Unverified,
}

/// A design observation, testing gap, documentation note or limitation, with who said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttributedNote {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    pub agents: Vec<String>,
}

/// A merged design observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MergedObservation {
    pub kind: ObservationKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    #[serde(default)]
    pub scopes: Vec<String>,
    pub agents: Vec<String>,
}

/// Raw counts of one agent's findings by the severity it wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SeverityCounts {
    pub critical: usize,
    pub important: usize,
    pub suggestion: usize,
}

/// `reviewed` of `total` files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileCount {
    pub reviewed: usize,
    pub total: usize,
}

/// One agent's row of the retro, and how its run went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRetro {
    pub name: String,
    pub display: String,
    pub counts: SeverityCounts,
    pub design_observations: usize,
    /// Findings only this agent had (clusters of one that stand in the report).
    pub unique_insights: usize,
    /// Findings of this agent that verification could not ground and nobody else supported.
    #[serde(default)]
    pub false_positives: usize,
    /// Files of the change the agent's coverage or findings name, out of all changed files;
    /// `None` when there is nothing to measure against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_reviewed: Option<FileCount>,
    pub coverage_misses: Vec<String>,
    /// Severity changes and drops that calibration made to this agent's findings.
    #[serde(default)]
    pub calibrations: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where `cost_usd` comes from: the CLI's own report, or tokens priced from the price table
    /// (which names its list prices' date) or the user's `[prices]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_basis: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The synthesizer's paragraph about this agent, when a synthesis was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis_note: Option<String>,
    /// What the agent changed in its read-only worktree (it must change nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worktree_changes: Vec<String>,
    /// The sandbox layers it ran under (`bwrap+landlock`, `landlock only: ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// Where it could connect, and what was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::types::NetworkRecord>,
    /// Bytes of output beyond the limit that were not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_cut_bytes: Option<u64>,
}

/// One raw review, verbatim, for the report's appendix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AppendixEntry {
    pub agent: String,
    pub display: String,
    pub text: String,
}

/// The user's checkout compared before and after the agents ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckoutCheck {
    /// What was compared: HEAD, the index, the working tree, `.git/config`, the hooks.
    pub checked: Vec<String>,
    /// Which of those changed while the agents ran; empty when the checkout was untouched.
    pub changed: Vec<String>,
}

/// The version of the JSON report layout: raised when a field changes meaning or goes away, so
/// a reader of old reports (`list`, `show`, rounds) knows what it holds.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// The consolidated report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// [`REPORT_SCHEMA_VERSION`] when written; 0 for a report read from Markdown.
    #[serde(default)]
    pub schema_version: u32,
    /// The round of this report ([`ReportMeta::round`], 1 when unknown).
    #[serde(default = "first_round")]
    pub round: u32,
    pub meta: ReportMeta,
    pub verdict: Verdict,
    #[serde(default)]
    pub verdict_rationale: String,
    #[serde(default)]
    pub summary: String,
    pub findings: Vec<MergedFinding>,
    #[serde(default)]
    pub observations: Vec<MergedObservation>,
    #[serde(default)]
    pub testing_gaps: Vec<AttributedNote>,
    #[serde(default)]
    pub documentation: Vec<AttributedNote>,
    #[serde(default)]
    pub limitations: Vec<AttributedNote>,
    /// The retro, one entry per agent in reviewer order.
    pub agents: Vec<AgentRetro>,
    #[serde(default)]
    pub appendix: Vec<AppendixEntry>,
    /// Problems met on the way (unparsable text, failed agents) that the reader should know.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Whether a synthesizer model wrote the summary and proposed merges, and what became of it.
    #[serde(default)]
    pub synthesis: SynthesisInfo,
    /// The cost budget of the run (`--budget-usd`) and what it stopped; `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// What became of the earlier rounds' findings; empty lists in a first round.
    #[serde(default)]
    pub prior_rounds: PriorRounds,
    /// What the author did about this report's findings (`deep-review resolve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// The user's checkout compared before and after the agents ran (a run only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout: Option<CheckoutCheck>,
    /// The pull request's review threads that were unresolved when the run started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved_feedback: Vec<ReviewThread>,
    /// The agents' records the confidences were weighed with, so the report says what it was
    /// scored with; `None` when no agent had a record. Only `bench --learn` weighs with records:
    /// measured on unseen data they added nothing over agreement and severity, so a run does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliability: Option<super::reliability::Reliability>,
}

/// A report of nothing: this schema, round 1, no findings, no agent, so no review to judge by.
/// The starting point of reports built field by field (tests, benchmarks).
impl Default for Report {
    fn default() -> Self {
        Report {
            schema_version: REPORT_SCHEMA_VERSION,
            round: 1,
            meta: ReportMeta::default(),
            verdict: Verdict::NoReview,
            verdict_rationale: String::new(),
            summary: String::new(),
            findings: Vec::new(),
            observations: Vec::new(),
            testing_gaps: Vec::new(),
            documentation: Vec::new(),
            limitations: Vec::new(),
            agents: Vec::new(),
            appendix: Vec::new(),
            warnings: Vec::new(),
            synthesis: SynthesisInfo::default(),
            budget: None,
            prior_rounds: PriorRounds::default(),
            resolution: None,
            checkout: None,
            unresolved_feedback: Vec::new(),
            reliability: None,
        }
    }
}

/// What became of the synthesizer's proposal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SynthesisStatus {
    /// No synthesizer was asked (`--synthesize` not given): the report is consolidation's alone.
    #[default]
    Off,
    /// Its JSON passed every check and was applied.
    Accepted,
    /// Its JSON failed the checks twice (or it failed to run): consolidation's report stands.
    Rejected,
}

impl SynthesisStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SynthesisStatus::Off => "off",
            SynthesisStatus::Accepted => "accepted",
            SynthesisStatus::Rejected => "rejected",
        }
    }
}

/// The synthesizer's part in the report (`synthesis` in the JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SynthesisInfo {
    /// The agent that synthesized, by its short name.
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub status: SynthesisStatus,
    /// Why it was rejected, or what it changed when accepted.
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The run's cost budget and what it stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetReport {
    pub limit_usd: f64,
    /// What the run spent, as estimated from tokens and prices (and the CLIs' own reports).
    pub spent_usd: f64,
    /// Agents the budget kept from starting, or stopped while they ran (short names).
    #[serde(default)]
    pub stopped: Vec<String>,
    /// Agents whose cost could not be counted (no price for their model).
    #[serde(default)]
    pub unpriced: Vec<String>,
}

fn first_round() -> u32 {
    1
}

impl Report {
    /// Whether a shown finding at `level` or above stands: the CI gate (`--fail-on`).
    pub fn fails_at(&self, level: Severity) -> bool {
        self.findings
            .iter()
            .any(|f| f.is_shown() && f.severity >= level)
    }

    /// How the report names agent `name`: the reviewers table's name, else the retro's, else
    /// the short name itself. The one place renderers get agent names from.
    pub fn display_of<'a>(&'a self, name: &'a str) -> &'a str {
        self.meta
            .reviewers
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.display.as_str())
            .or_else(|| {
                self.agents
                    .iter()
                    .find(|a| a.name == name)
                    .map(|a| a.display.as_str())
            })
            .unwrap_or(name)
    }
}
