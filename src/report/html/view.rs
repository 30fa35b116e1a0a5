//! The report as the HTML template sees it: every value the page shows, already decided
//! (which section, which class, which link). Plain text stays plain (the template escapes it);
//! only fields named `*_html` hold markup, and those come from [`markdown`](super::markdown),
//! which escapes what it is given.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::highlight::{Highlighter, PAGE_BUDGET};
use super::markdown::{self, CodeView};
use crate::report::links::{self, Forge};
use crate::report::markdown::{agent_paragraph, retro_rows};
use crate::types::{
    AttributedNote, MergedFinding, ObservationKind, PriorItem, Report, RoundStatus, Severity, Tier,
    Verdict, Verification, VerificationStatus,
};

/// Agents whose pills have their own colours (those of the reference reports).
const KNOWN_PILLS: [&str; 6] = ["claude", "codex", "gemini", "qwen", "gemma", "glm"];
/// Colours for any other agent, picked by a stable hash of its name.
const OTHER_PILLS: usize = 6;

#[derive(Debug, Serialize)]
pub struct ReportView {
    pub id: String,
    pub meta: MetaView,
    pub verdict: String,
    pub verdict_class: &'static str,
    pub rationale_html: String,
    pub counts: Counts,
    pub summary_html: String,
    pub sections: Vec<SectionView>,
    pub unverified: Vec<FindingView>,
    pub low_confidence: Vec<FindingView>,
    pub concerns: Vec<ObservationView>,
    pub strengths: Vec<ObservationView>,
    pub testing: Vec<NoteView>,
    pub documentation: Vec<NoteView>,
    pub limitations: Vec<NoteView>,
    /// The pull request's review threads open when the review started; `None` when the report
    /// is not of a pull request (no section at all).
    pub unresolved: Option<Vec<ThreadView>>,
    pub retro: RetroView,
    pub warnings: Vec<String>,
    pub appendix: Vec<AppendixView>,
    /// "Since Round N": the earlier findings this round has something to say about.
    pub since: Option<SinceView>,
    /// "Declined in prior rounds".
    pub declined: Vec<SinceRow>,
    /// The author's Resolution of this report.
    pub resolution: Option<ResolutionView>,
    /// Every agent of the report, for the filter.
    pub agents: Vec<Pill>,
    pub generator: String,
}

#[derive(Debug, Serialize)]
pub struct SinceView {
    pub round: u32,
    pub rows: Vec<SinceRow>,
}

/// One earlier finding in the Since table or the Declined list.
#[derive(Debug, Serialize)]
pub struct SinceRow {
    pub round: u32,
    pub id: String,
    pub title_html: String,
    pub status: &'static str,
    pub now: Option<String>,
    pub note: String,
    pub raised_again: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ResolutionView {
    pub addressed: Option<String>,
    pub commits: Vec<CommitView>,
    pub commit_note: Option<String>,
    pub rows: Vec<ResolutionRow>,
}

#[derive(Debug, Serialize)]
pub struct ResolutionRow {
    pub finding: String,
    pub title_html: String,
    pub action: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Default)]
pub struct MetaView {
    pub date: Option<String>,
    pub repo: Option<LinkView>,
    pub round: Option<u32>,
    /// `PR #236`, `branch feat`: what the rounds are counted over.
    pub round_of: Option<String>,
    pub author: Option<String>,
    pub pr: Option<PrView>,
    pub branch: Option<String>,
    pub head: Option<LinkView>,
    pub commits: Vec<CommitView>,
    pub reviewers: Vec<ReviewerView>,
    pub wall_clock: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct LinkView {
    pub text: String,
    pub href: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PrView {
    pub number: u64,
    /// `#236` or `!42`.
    pub reference: String,
    /// `PR` or `MR`: the metadata row's name.
    pub short: &'static str,
    /// `pull request` or `merge request`.
    pub noun: &'static str,
    pub title: String,
    pub href: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct CommitView {
    pub sha: String,
    pub subject: String,
    pub href: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ReviewerView {
    pub pill: Pill,
    pub model: Option<String>,
    pub effort: Option<String>,
}

/// An agent as the page names and colours it. `key` is unique in the report and safe in a
/// class list or a `data-` attribute (the filter matches cards by it).
#[derive(Debug, Clone, Serialize)]
pub struct Pill {
    pub key: String,
    pub display: String,
    pub class: String,
}

#[derive(Debug, Serialize, Default)]
pub struct Counts {
    pub critical: usize,
    pub important: usize,
    pub suggestion: usize,
    pub unverified: usize,
    pub low_confidence: usize,
}

#[derive(Debug, Serialize)]
pub struct SectionView {
    pub severity: &'static str,
    pub title: &'static str,
    pub anchor: &'static str,
    pub findings: Vec<FindingView>,
}

#[derive(Debug, Serialize)]
pub struct FindingView {
    pub id: String,
    /// The element id: the finding id when it is a plain word (`I1`), else `finding-N`.
    pub anchor: String,
    pub severity: &'static str,
    pub tier: &'static str,
    pub category: Option<String>,
    pub title_html: String,
    pub pills: Vec<Pill>,
    /// Space-separated pill keys, for the filter.
    pub agent_keys: String,
    pub confidence: Option<u32>,
    pub badges: Vec<Badge>,
    pub locations: Vec<LinkView>,
    pub calibration: Option<String>,
    /// How the agents' records moved the confidence.
    pub confidence_reason: Option<String>,
    pub verification_note: Option<String>,
    pub known_issue_comment: Option<String>,
    pub code: Option<CodeBlockView>,
    pub body_html: String,
    pub fix_html: Option<String>,
    pub fix_diff: Option<CodeBlockView>,
    pub sources: Vec<SourceView>,
}

#[derive(Debug, Serialize)]
pub struct CodeBlockView {
    /// The file the code is from, linked to its lines on the forge when possible.
    pub header: Option<LinkView>,
    pub code_html: String,
}

#[derive(Debug, Serialize)]
pub struct Badge {
    pub class: &'static str,
    pub text: String,
    /// What the badge means, shown on hover.
    pub title: String,
}

#[derive(Debug, Serialize)]
pub struct SourceView {
    pub agent: String,
    pub id: String,
    pub severity: Option<&'static str>,
}

#[derive(Debug, Serialize)]
pub struct ObservationView {
    pub title_html: Option<String>,
    pub text_html: String,
    pub scopes: Vec<String>,
    pub pills: Vec<Pill>,
}

#[derive(Debug, Serialize)]
pub struct NoteView {
    pub title_html: Option<String>,
    pub text_html: String,
    pub pills: Vec<Pill>,
}

/// One unresolved review thread of the pull request.
#[derive(Debug, Serialize)]
pub struct ThreadView {
    /// `path:line`, or `None` for the pull request as a whole.
    pub location: Option<String>,
    pub author: Option<String>,
    pub outdated: bool,
    pub replies: usize,
    pub href: Option<String>,
    /// The comment, someone else's Markdown, made safe ([`markdown`]).
    pub body_html: String,
}

#[derive(Debug, Serialize)]
pub struct RetroView {
    pub agents: Vec<RetroAgentView>,
    pub rows: Vec<RetroRow>,
}

#[derive(Debug, Serialize)]
pub struct RetroAgentView {
    pub pill: Pill,
    pub paragraph_html: String,
    pub failed: bool,
}

#[derive(Debug, Serialize)]
pub struct RetroRow {
    pub metric: &'static str,
    pub cells: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct AppendixView {
    pub pill: Pill,
    pub anchor: String,
    pub body_html: String,
}

/// Agent names → pills, with keys made unique and safe once for the whole report.
struct Pills(BTreeMap<String, Pill>);

impl Pills {
    fn new(report: &Report) -> Self {
        let mut names: Vec<&str> = Vec::new();
        let all = report
            .meta
            .reviewers
            .iter()
            .map(|r| r.name.as_str())
            .chain(report.agents.iter().map(|a| a.name.as_str()))
            .chain(
                report
                    .findings
                    .iter()
                    .flat_map(|f| f.agents.iter().map(String::as_str)),
            )
            .chain(report.appendix.iter().map(|a| a.agent.as_str()));
        for name in all {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut map = BTreeMap::new();
        let mut used: Vec<String> = Vec::new();
        for name in names {
            let base = slug(name);
            let base = if base.is_empty() {
                "agent".to_string()
            } else {
                base
            };
            let mut key = base.clone();
            let mut n = 2;
            while used.contains(&key) {
                key = format!("{base}-{n}");
                n += 1;
            }
            used.push(key.clone());
            let class = if KNOWN_PILLS.contains(&key.as_str()) {
                format!("pill-{key}")
            } else {
                format!("pill-x{}", stable_hash(name) % OTHER_PILLS)
            };
            map.insert(
                name.to_string(),
                Pill {
                    key,
                    display: report.display_of(name).to_string(),
                    class,
                },
            );
        }
        Pills(map)
    }

    fn of(&self, name: &str) -> Pill {
        self.0.get(name).cloned().unwrap_or_else(|| Pill {
            key: "agent".into(),
            display: name.to_string(),
            class: "pill-x0".into(),
        })
    }

    fn list(&self, names: &[String]) -> Vec<Pill> {
        names.iter().map(|n| self.of(n)).collect()
    }

    /// In the order agents first appear in the report (reviewers, retro, findings).
    fn all(&self, report: &Report) -> Vec<Pill> {
        let mut out: Vec<Pill> = Vec::new();
        let names = report
            .meta
            .reviewers
            .iter()
            .map(|r| r.name.as_str())
            .chain(report.agents.iter().map(|a| a.name.as_str()))
            .chain(
                report
                    .findings
                    .iter()
                    .flat_map(|f| f.agents.iter().map(String::as_str)),
            );
        for name in names {
            let pill = self.of(name);
            if !out.iter().any(|p| p.key == pill.key) {
                out.push(pill);
            }
        }
        out
    }
}

/// Lower-case letters, digits and dashes: safe in a class name, an id and a `data-` value.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').chars().take(40).collect()
}

/// FNV-1a: the same agent gets the same colour in every report.
fn stable_hash(text: &str) -> usize {
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h as usize
}

/// The class that colours a verdict: red for rework, amber for fixes, blue for optional ones.
pub(super) fn verdict_class(verdict: Verdict) -> &'static str {
    use crate::types::Verdict::*;
    match verdict {
        Rework => "verdict-rework",
        MergeWithFixes => "verdict-fixes",
        MergeWithOptionalFixes => "verdict-optional",
        Merge | MergeAsIs => "verdict-merge",
        NoReview => "verdict-none",
    }
}

pub fn build(report: &Report) -> ReportView {
    let pills = Pills::new(report);
    let forge = Forge::new(report.meta.repo_url.as_deref(), report.meta.head.as_deref());
    // One budget for the page: findings first, then the raw reviews in the appendix.
    let hl = Highlighter::new(PAGE_BUDGET);
    let findings = finding_lists(report, &hl, &pills, forge);
    let counts = counts_of(&findings);
    let retro = retro_view(report, &pills);
    let appendix = appendix_views(report, &hl, &pills);

    let (since, declined) = since_view(report);
    ReportView {
        since,
        declined,
        resolution: resolution_view(report),
        id: report.meta.id.clone(),
        meta: meta_view(report, &pills),
        verdict: report.verdict.to_string(),
        verdict_class: verdict_class(report.verdict),
        rationale_html: markdown::inline_to_html(&report.verdict_rationale),
        counts,
        summary_html: markdown::to_html(&hl, &report.summary, 2),
        sections: findings.sections,
        unverified: findings.unverified,
        low_confidence: findings.low_confidence,
        concerns: observation_views(report, ObservationKind::Concern, &hl, &pills),
        strengths: observation_views(report, ObservationKind::Strength, &hl, &pills),
        testing: note_views(&report.testing_gaps, &hl, &pills),
        documentation: note_views(&report.documentation, &hl, &pills),
        limitations: note_views(&report.limitations, &hl, &pills),
        unresolved: unresolved_view(report, &hl),
        retro,
        warnings: warning_lines(report),
        appendix,
        agents: pills.all(report),
        generator: format!("deep-review {}", env!("CARGO_PKG_VERSION")),
    }
}

/// The page's findings: the shown ones by severity, then the unverified and low-confidence
/// tiers. Built in this order, before anything else: they share the page's highlighting
/// budget and its anchors.
struct FindingLists {
    sections: Vec<SectionView>,
    unverified: Vec<FindingView>,
    low_confidence: Vec<FindingView>,
}

fn finding_lists(
    report: &Report,
    hl: &Highlighter,
    pills: &Pills,
    forge: Option<Forge<'_>>,
) -> FindingLists {
    let mut used_anchors = HashSet::new();
    let mut finding =
        |f: &MergedFinding| finding_view(hl, f, pills, forge, report, &mut used_anchors);
    let sections = Severity::ALL
        .into_iter()
        .map(|severity| section_view(report, severity, &mut finding))
        .collect::<Vec<_>>();
    let tier = |t: Tier| report.findings.iter().filter(move |f| f.tier == t);
    let unverified: Vec<FindingView> = tier(Tier::Unverified).map(&mut finding).collect();
    let low_confidence: Vec<FindingView> = tier(Tier::LowConfidence).map(&mut finding).collect();
    FindingLists {
        sections,
        unverified,
        low_confidence,
    }
}

/// One severity's section: its title, its anchor and its shown findings.
fn section_view(
    report: &Report,
    severity: Severity,
    finding: &mut impl FnMut(&MergedFinding) -> FindingView,
) -> SectionView {
    let (title, anchor) = match severity {
        Severity::Critical => ("Critical Issues", "critical-issues"),
        Severity::Important => ("Important Issues", "important-issues"),
        Severity::Suggestion => ("Suggestions", "suggestions"),
    };
    SectionView {
        severity: severity.as_str(),
        title,
        anchor,
        findings: report
            .findings
            .iter()
            .filter(|f| f.is_shown() && f.severity == severity)
            .map(finding)
            .collect(),
    }
}

fn counts_of(findings: &FindingLists) -> Counts {
    let sections = &findings.sections;
    Counts {
        critical: sections[0].findings.len(),
        important: sections[1].findings.len(),
        suggestion: sections[2].findings.len(),
        unverified: findings.unverified.len(),
        low_confidence: findings.low_confidence.len(),
    }
}

fn observation_views(
    report: &Report,
    kind: ObservationKind,
    hl: &Highlighter,
    pills: &Pills,
) -> Vec<ObservationView> {
    report
        .observations
        .iter()
        .filter(|o| o.kind == kind)
        .map(|o| ObservationView {
            title_html: o.title.as_deref().map(markdown::inline_to_html),
            text_html: markdown::to_html_compact(hl, &o.text),
            scopes: o.scopes.clone(),
            pills: pills.list(&o.agents),
        })
        .collect()
}

fn note_views(list: &[AttributedNote], hl: &Highlighter, pills: &Pills) -> Vec<NoteView> {
    list.iter()
        .map(|n| NoteView {
            title_html: n.title.as_deref().map(markdown::inline_to_html),
            text_html: markdown::to_html_compact(hl, &n.text),
            pills: pills.list(&n.agents),
        })
        .collect()
}

fn retro_view(report: &Report, pills: &Pills) -> RetroView {
    RetroView {
        agents: report
            .agents
            .iter()
            .map(|a| RetroAgentView {
                pill: pills.of(&a.name),
                paragraph_html: markdown::inline_to_html(&agent_paragraph(a)),
                failed: a.error.is_some(),
            })
            .collect(),
        rows: retro_rows(&report.agents)
            .into_iter()
            .map(|(metric, cells)| RetroRow { metric, cells })
            .collect(),
    }
}

fn appendix_views(report: &Report, hl: &Highlighter, pills: &Pills) -> Vec<AppendixView> {
    report
        .appendix
        .iter()
        .enumerate()
        .map(|(i, entry)| AppendixView {
            pill: Pill {
                display: entry.display.clone(),
                ..pills.of(&entry.agent)
            },
            anchor: format!("review-{}", i + 1),
            body_html: markdown::to_html(hl, &entry.text, 2),
        })
        .collect()
}

/// The unresolved review threads: shown on a pull request (even when there are none) or when
/// the report has any.
fn unresolved_view(report: &Report, hl: &Highlighter) -> Option<Vec<ThreadView>> {
    (report.meta.pr.is_some() || !report.unresolved_feedback.is_empty()).then(|| {
        report
            .unresolved_feedback
            .iter()
            .map(|t| ThreadView {
                location: t.path.as_ref().map(|p| match t.line {
                    Some(l) => format!("{p}:{l}"),
                    None => p.clone(),
                }),
                author: t.author.clone(),
                outdated: t.outdated,
                replies: t.replies,
                href: t.url.clone().filter(|u| links::is_safe_href(u)),
                body_html: markdown::to_html_compact(hl, &t.body),
            })
            .collect()
    })
}

/// The checkout's sentences (without their Markdown bold), then the report's warnings.
fn warning_lines(report: &Report) -> Vec<String> {
    report
        .checkout
        .iter()
        .map(|c| crate::report::markdown::checkout_sentence(c).replace("**", ""))
        .chain(report.warnings.iter().cloned())
        .collect()
}

fn meta_view(report: &Report, pills: &Pills) -> MetaView {
    let m = &report.meta;
    let repo_page = links::repo_page(m.repo_url.as_deref());
    MetaView {
        date: m.date.map(|d| d.format("%Y-%m-%d %H:%M").to_string()),
        repo: m
            .repo
            .clone()
            .or_else(|| repo_page.map(str::to_string))
            .map(|text| LinkView {
                text,
                href: repo_page.map(str::to_string),
            }),
        round: m.round,
        round_of: m.round_of.clone(),
        author: m.author.clone(),
        pr: m.pr.as_ref().map(|pr| PrView {
            number: pr.number,
            reference: pr.reference(),
            short: pr.kind.short(),
            noun: pr.kind.noun(),
            title: pr.title.clone(),
            href: pr
                .url
                .clone()
                .filter(|u| links::is_safe_href(u) && !u.starts_with('#')),
        }),
        branch: m.branch.clone(),
        head: m.head.as_ref().map(|head| LinkView {
            text: head.chars().take(12).collect(),
            href: links::commit_url(m.repo_url.as_deref(), head),
        }),
        commits: m
            .commits
            .iter()
            .map(|c| CommitView {
                sha: c.sha.clone(),
                subject: c.subject.clone(),
                href: links::commit_url(m.repo_url.as_deref(), &c.sha),
            })
            .collect(),
        reviewers: m
            .reviewers
            .iter()
            .map(|r| ReviewerView {
                pill: pills.of(&r.name),
                model: r.model.clone(),
                effort: r.effort.clone(),
            })
            .collect(),
        wall_clock: m.wall_clock_s.map(crate::text::duration_long),
    }
}

/// A finding id of letters then digits (`I1`, `S12`) is its own anchor, as in the reference
/// reports' permalinks; any other id, or a repeated one, gets `finding-N`.
fn anchor_for(id: &str, used: &mut HashSet<String>) -> String {
    let letters = id.chars().take_while(char::is_ascii_alphabetic).count();
    let digits = id.len() - letters;
    let plain = (1..=3).contains(&letters)
        && (1..=4).contains(&digits)
        && id[letters..].chars().all(|c| c.is_ascii_digit());
    let mut anchor = if plain { id.to_string() } else { String::new() };
    let mut n = used.len() + 1;
    while anchor.is_empty() || used.contains(&anchor) {
        anchor = format!("finding-{n}");
        n += 1;
    }
    used.insert(anchor.clone());
    anchor
}

fn finding_view(
    hl: &Highlighter,
    f: &MergedFinding,
    pills: &Pills,
    forge: Option<Forge<'_>>,
    report: &Report,
    used_anchors: &mut HashSet<String>,
) -> FindingView {
    let pill_list = pills.list(&f.agents);
    let agent_keys = pill_list
        .iter()
        .map(|p| p.key.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    // No link to a file verification did not find at head: it would open the forge's 404.
    let missing = f
        .verification
        .as_ref()
        .is_some_and(|v| v.status == VerificationStatus::Ungrounded && !v.path_ok);
    let location_link = |l: &crate::types::Location| LinkView {
        text: l.to_string(),
        href: forge.filter(|_| !missing).and_then(|fg| fg.lines(l)),
    };
    let first = f.locations.first();
    let code = f.code.as_ref().map(|c| {
        let first_line = first.and_then(|l| numbered_from(f.verification.as_ref(), l, &c.code));
        CodeBlockView {
            header: first.map(location_link),
            code_html: markdown::code_block(
                hl,
                &c.code,
                CodeView {
                    language: c.language.as_deref(),
                    path: first.map(|l| l.path.as_str()),
                    first_line,
                },
            ),
        }
    });
    let fix_html = f.fix.as_deref().map(|fix| fix_to_html(hl, fix));
    FindingView {
        id: f.id.clone(),
        anchor: anchor_for(&f.id, used_anchors),
        severity: f.severity.as_str(),
        tier: match f.tier {
            Tier::Shown => "shown",
            Tier::LowConfidence => "low-confidence",
            Tier::Unverified => "unverified",
        },
        category: f.category.as_ref().map(|c| c.to_string()),
        title_html: markdown::inline_to_html(&f.title),
        pills: pill_list,
        agent_keys,
        confidence: f
            .confidence
            .map(|c| (c.clamp(0.0, 1.0) * 100.0).round() as u32),
        badges: round_badge(f)
            .into_iter()
            .chain(f.verification.as_ref().map(badges).unwrap_or_default())
            .collect(),
        locations: f.locations.iter().map(location_link).collect(),
        calibration: f.calibration.clone(),
        confidence_reason: f.confidence_reason.clone(),
        verification_note: f.verification.as_ref().and_then(|v| v.note.clone()),
        known_issue_comment: f
            .verification
            .as_ref()
            .and_then(|v| v.known_issue_comment.clone()),
        code,
        body_html: markdown::to_html(hl, &f.body, 3),
        fix_html,
        fix_diff: f.fix_diff.as_ref().map(|d| CodeBlockView {
            header: None,
            code_html: markdown::code_block(
                hl,
                d,
                CodeView {
                    language: Some("diff"),
                    ..CodeView::default()
                },
            ),
        }),
        sources: source_views(f, report),
    }
}

/// The fix as HTML, without the `Fix:` label the agent may have written before it.
fn fix_to_html(hl: &Highlighter, fix: &str) -> String {
    let fix = fix.trim();
    let fix = fix
        .strip_prefix("Fix:")
        .or_else(|| fix.strip_prefix("fix:"))
        .unwrap_or(fix)
        .trim_start();
    markdown::to_html(hl, fix, 3)
}

/// Each agent's own finding behind a merged one, listed when there is more than one.
fn source_views(f: &MergedFinding, report: &Report) -> Vec<SourceView> {
    if f.sources.len() <= 1 {
        return Vec::new();
    }
    f.sources
        .iter()
        .map(|s| SourceView {
            agent: report.display_of(&s.agent).to_string(),
            id: s.id.clone(),
            severity: s.severity.map(Severity::as_str),
        })
        .collect()
}

/// The line number of the quote's first line, when verification found the quote exactly at the
/// finding's (possibly corrected) location and the quote spans that range line for line.
fn numbered_from(v: Option<&Verification>, l: &crate::types::Location, code: &str) -> Option<u32> {
    let v = v?;
    let at_lines = matches!(
        v.status,
        VerificationStatus::Grounded | VerificationStatus::Relocated
    ) && v.quote_ok == Some(true);
    let (start, end) = (l.start?, l.end_line()?);
    let lines = code.trim_end_matches('\n').split('\n').count();
    (at_lines && usize::try_from(end - start + 1).ok() == Some(lines)).then_some(start)
}

/// A finding's standing against earlier rounds, as a badge: regressed or persisting.
fn round_badge(f: &MergedFinding) -> Option<Badge> {
    let p = f.prior.as_ref()?;
    let id = if p.id.is_empty() {
        String::new()
    } else {
        format!(" ({})", p.id)
    };
    match f.round_status {
        RoundStatus::Regressed => Some(Badge {
            class: "badge-bad",
            text: "regressed".into(),
            title: format!("Marked fixed in round {}{id}, and raised again", p.round),
        }),
        RoundStatus::Persisting => Some(Badge {
            class: "badge-note",
            text: format!("since round {}", p.round),
            title: format!("Raised in round {}{id} too", p.round),
        }),
        RoundStatus::New => None,
    }
}

/// The Since table's rows, and the Declined list, from the report's prior-round lists.
fn since_view(report: &Report) -> (Option<SinceView>, Vec<SinceRow>) {
    let p = &report.prior_rounds;
    let row = |i: &PriorItem, status: &'static str| SinceRow {
        round: i.round,
        id: i.id.clone(),
        title_html: markdown::inline_to_html(&i.title),
        status,
        now: i.now.clone(),
        note: match (status, &i.action) {
            ("declined", Some(a)) if i.reason.is_empty() => a.to_string(),
            ("declined", Some(a)) => format!("{a}: {}", i.reason),
            _ => i.reason.clone(),
        },
        raised_again: i.raised_again.clone(),
    };
    let declined: Vec<SinceRow> = p.declined.iter().map(|i| row(i, "declined")).collect();
    let since = p.since_round.map(|round| SinceView {
        round,
        rows: p
            .regressed
            .iter()
            .map(|i| row(i, "regressed"))
            .chain(p.persisting.iter().map(|i| row(i, "persisting")))
            .chain(p.resolved.iter().map(|i| row(i, "resolved")))
            .chain(p.declined.iter().map(|i| row(i, "declined")))
            .collect(),
    });
    (since, declined)
}

fn resolution_view(report: &Report) -> Option<ResolutionView> {
    let res = report.resolution.as_ref()?;
    Some(ResolutionView {
        addressed: res.addressed.map(|d| d.to_string()),
        commits: res
            .commits
            .iter()
            .map(|c| CommitView {
                sha: c.sha.clone(),
                subject: c.subject.clone(),
                href: links::commit_url(report.meta.repo_url.as_deref(), &c.sha),
            })
            .collect(),
        commit_note: res.commit_note.clone(),
        rows: res
            .items
            .iter()
            .map(|i| ResolutionRow {
                finding: i.id.clone(),
                title_html: markdown::inline_to_html(&i.title),
                action: i.action.to_string(),
                reason: i.reason.clone(),
            })
            .collect(),
    })
}

/// What verification found, as small labelled badges.
fn badges(v: &Verification) -> Vec<Badge> {
    let mut out = vec![match v.status {
        VerificationStatus::Grounded => Badge {
            class: "badge-ok",
            text: "grounded".into(),
            title: "The file exists and the quoted code is at the cited lines".into(),
        },
        VerificationStatus::Relocated => Badge {
            class: "badge-moved",
            text: "relocated".into(),
            title: "The quoted code is in the file at other lines; the location was corrected"
                .into(),
        },
        VerificationStatus::Ungrounded => Badge {
            class: "badge-bad",
            text: "not found in code".into(),
            title: "The file, the lines or the quoted code are not in the repository at head"
                .into(),
        },
        VerificationStatus::Unchecked => Badge {
            class: "badge-none",
            text: "unchecked".into(),
            title: "Nothing could be checked against the code".into(),
        },
    }];
    if v.pre_existing {
        out.push(Badge {
            class: "badge-note",
            text: "pre-existing".into(),
            title: "The cited lines are the same at the merge-base: the change did not add them"
                .into(),
        });
    }
    if v.outside_change {
        out.push(Badge {
            class: "badge-note",
            text: "outside the change".into(),
            title: "The file is not among the files the change touched".into(),
        });
    }
    if !v.symbols_missing.is_empty() {
        out.push(Badge {
            class: "badge-bad",
            text: format!("missing: {}", v.symbols_missing.join(", ")),
            title: "Identifiers the finding names that exist nowhere in the repository".into(),
        });
    }
    if v.known_issue_comment.is_some() {
        out.push(Badge {
            class: "badge-note",
            text: "known-issue comment".into(),
            title: "A comment at the cited lines marks this as known or temporary".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe_words() {
        assert_eq!(slug("Claude Opus 4.6"), "claude-opus-4-6");
        assert_eq!(slug("\"><script>"), "script");
        assert_eq!(slug("---"), "");
    }

    #[test]
    fn anchors_are_plain_ids_or_numbered() {
        let mut used = HashSet::new();
        assert_eq!(anchor_for("I1", &mut used), "I1");
        assert_eq!(anchor_for("I1", &mut used), "finding-2");
        assert_eq!(anchor_for("x\" onmouseover=\"", &mut used), "finding-3");
        assert_eq!(anchor_for("1", &mut used), "finding-4");
        assert_eq!(anchor_for("appendix", &mut used), "finding-5");
    }
}
