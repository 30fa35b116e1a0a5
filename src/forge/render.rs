//! The text deep-review posts on a pull request: the summary comment, the review's inline
//! comments and body, and the reply that a finding is gone. Every piece of report text in them
//! goes through [`sanitize`]; every comment opens with its hidden marker ([`markers`]). The same
//! text serves every forge; where their Markdown differs (GitLab's suggestion blocks name their
//! lines, and a line starting with `/approve` is a command there), `kind` says which forge reads
//! it.

use std::fmt::Write;

use super::gitlab::quick_actions;
use super::{markers, sanitize};
use crate::types::{MergedFinding, Report, RequestKind, Severity, Tier};

/// The most rows of the summary's findings table (the full report has them all).
const MAX_TABLE_ROWS: usize = 100;
/// How much finding text the summary's "not on the diff" section holds in all.
const MAX_DETAILS_CHARS: usize = 30_000;

/// Where a shown finding of the report is on the pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Posted now as an inline comment.
    Inline,
    /// An inline comment of an earlier post holds it: not posted again.
    AlreadyPosted,
    /// Not on a line of the diff (or past the cap): in the summary only.
    Summary,
    /// On a line of the diff as deep-review reads it, but the forge would not take the inline
    /// comment (its own diff differs): in the summary only.
    Refused,
}

/// What the summary says beyond the report.
pub struct SummaryInput<'a> {
    pub report: &'a Report,
    /// The forge that reads it.
    pub kind: RequestKind,
    /// Each shown finding (index into `report.findings`) and where it is.
    pub placements: &'a [(usize, Placement)],
    /// Findings deep-review posted earlier that the report no longer has.
    pub no_longer_found: usize,
    /// Where the full report (HTML) can be read.
    pub report_url: Option<&'a str>,
}

fn icon(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "🔴",
        Severity::Important => "🟠",
        Severity::Suggestion => "🔵",
    }
}

/// `path:10-12` in a code span that nothing in it can close.
fn location_span(f: &MergedFinding) -> String {
    match f.locations.first() {
        Some(loc) => code_span(&loc.to_string()),
        None => "—".to_string(),
    }
}

/// Text in a code span for a table cell: control characters dropped, `|` escaped (GitHub
/// reads `\|` in a table's code span as `|`), fenced with more backticks than it holds.
fn code_span(text: &str) -> String {
    let flat: String = text
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('|', "\\|");
    let longest = flat.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if flat.starts_with('`') || flat.ends_with('`') {
        format!("{fence} {flat} {fence}")
    } else {
        format!("{fence}{flat}{fence}")
    }
}

fn agents(report: &Report, f: &MergedFinding) -> String {
    let names: Vec<&str> = f.agents.iter().map(|a| report.display_of(a)).collect();
    sanitize::line(&names.join(", "), 300)
}

fn short(sha: &str) -> String {
    sha.chars().take(7).collect()
}

/// A fenced block of `lines` with a fence longer than any backtick run in them.
fn fenced(info: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("{fence}{info}\n{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out
}

/// The summary comment: its heading and facts, the findings' table and those not on the diff,
/// what is not shown, what is gone, and a footer naming the report.
pub fn summary(input: &SummaryInput<'_>) -> String {
    let r = input.report;
    let mut out = String::new();
    summary_heading(&mut out, r);
    let shown: Vec<(&MergedFinding, Placement)> = input
        .placements
        .iter()
        .filter_map(|(i, p)| r.findings.get(*i).map(|f| (f, *p)))
        .collect();
    if shown.is_empty() {
        out.push_str("No findings stand.\n\n");
    } else {
        findings_table(&mut out, r, input.kind, &shown);
        findings_below(&mut out, r, &shown);
    }
    not_shown(&mut out, r);
    no_longer_found(&mut out, input.no_longer_found);
    if let Some(url) = input.report_url {
        let _ = writeln!(out, "[The full report]({url})\n");
    }
    let _ = write!(
        out,
        "<sub>deep-review {} · report `{}`</sub>",
        env!("CARGO_PKG_VERSION"),
        sanitize::line(&r.meta.id, 120).replace('`', "")
    );
    for_forge(out, input.kind)
}

/// The marker, the verdict, its rationale, the run's facts and the report's summary.
fn summary_heading(out: &mut String, r: &Report) {
    out.push_str(markers::SUMMARY);
    out.push('\n');
    let _ = writeln!(out, "## Deep Review: {}\n", r.verdict);
    if !r.verdict_rationale.trim().is_empty() {
        let _ = writeln!(out, "{}\n", sanitize::markdown(&r.verdict_rationale, 1_000));
    }
    let mut facts = Vec::new();
    if let Some(round) = r.meta.round {
        facts.push(format!("round {round}"));
    }
    if let Some(head) = &r.meta.head {
        facts.push(format!("head `{}`", short(head)));
    }
    let reviewers: Vec<&str> = r
        .meta
        .reviewers
        .iter()
        .map(|rv| rv.display.as_str())
        .collect();
    if !reviewers.is_empty() {
        facts.push(format!(
            "reviewed by {}",
            sanitize::line(&reviewers.join(", "), 300)
        ));
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "<sub>{}</sub>\n", facts.join(" · "));
    }
    if !r.summary.trim().is_empty() {
        let _ = writeln!(out, "{}\n", sanitize::markdown(&r.summary, 4_000));
    }
}

/// One row per shown finding (at most [`MAX_TABLE_ROWS`]) and where it is on the pull request.
fn findings_table(
    out: &mut String,
    r: &Report,
    kind: RequestKind,
    shown: &[(&MergedFinding, Placement)],
) {
    let _ = writeln!(
        out,
        "| | Finding | Location | Agents | On the {} |",
        kind.noun()
    );
    out.push_str("|---|---|---|---|---|\n");
    for (f, placement) in shown.iter().take(MAX_TABLE_ROWS) {
        // The same words whether posted now or by an earlier post: posting a report again
        // leaves its summary as it was.
        let where_ = match placement {
            Placement::Inline | Placement::AlreadyPosted => "inline comment",
            Placement::Summary => "below",
            Placement::Refused => "below (not taken inline)",
        };
        let _ = writeln!(
            out,
            "| {} {} | {} | {} | {} | {where_} |",
            icon(f.severity),
            sanitize::line(&f.id, 20),
            sanitize::line(&f.title, 300),
            location_span(f),
            agents(r, f),
        );
    }
    if shown.len() > MAX_TABLE_ROWS {
        let _ = writeln!(
            out,
            "\n…and {} more in the full report.",
            shown.len() - MAX_TABLE_ROWS
        );
    }
    out.push('\n');
}

/// The findings that are not inline comments, in full, within [`MAX_DETAILS_CHARS`].
fn findings_below(out: &mut String, r: &Report, shown: &[(&MergedFinding, Placement)]) {
    let below: Vec<&MergedFinding> = shown
        .iter()
        .filter(|(_, p)| matches!(p, Placement::Summary | Placement::Refused))
        .map(|(f, _)| *f)
        .collect();
    if below.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<details><summary>Findings not on the lines of this diff ({})</summary>\n",
        below.len()
    );
    let mut budget = MAX_DETAILS_CHARS;
    for f in below {
        let text = finding_text(r, f, None);
        if text.len() > budget {
            out.push_str("…the rest are in the full report.\n\n");
            break;
        }
        budget -= text.len();
        out.push_str(&text);
        out.push_str("\n\n");
    }
    out.push_str("</details>\n\n");
}

/// How many findings the summary leaves to the full report: too little support, code not found.
fn not_shown(out: &mut String, r: &Report) {
    let count = |tier: Tier| r.findings.iter().filter(|f| f.tier == tier).count();
    let low = count(Tier::LowConfidence);
    let unverified = count(Tier::Unverified);
    if low + unverified > 0 {
        let _ = writeln!(
            out,
            "Not shown here: {} with too little support and {} whose code was not found (both in the full report).\n",
            crate::text::plural(low, "finding", "findings"),
            crate::text::plural(unverified, "finding", "findings")
        );
    }
}

/// The findings of earlier posts that the report no longer has, and what became of them.
fn no_longer_found(out: &mut String, gone: usize) {
    if gone == 0 {
        return;
    }
    let one = gone == 1;
    let _ = writeln!(
        out,
        "{} posted earlier {} no longer found: {} a reply and {} resolved.\n",
        crate::text::plural(gone, "finding", "findings"),
        if one { "is" } else { "are" },
        if one {
            "its thread has"
        } else {
            "their threads have"
        },
        if one { "is" } else { "are" },
    );
}

/// `text` as the forge should get it: on GitLab, no line can run a quick action.
fn for_forge(text: String, kind: RequestKind) -> String {
    match kind {
        RequestKind::PullRequest => text,
        RequestKind::MergeRequest => quick_actions::inert(&text),
    }
}

/// Whether a suggestion of `lines` can be posted on the forge as it is: on GitLab a line of it
/// that reads as a quick action would have to be altered, so such a fix stays a diff.
pub fn suggestion_fits(kind: RequestKind, lines: &[String]) -> bool {
    kind == RequestKind::PullRequest || !lines.iter().any(|l| quick_actions::could_run(l))
}

/// The info string of a suggestion block on lines `start..=end` of a comment on `end`:
/// GitHub's replaces the comment's lines; GitLab's names how many lines above it replaces.
fn suggestion_info(kind: RequestKind, start: u32, end: u32) -> String {
    match kind {
        RequestKind::PullRequest => "suggestion".to_string(),
        RequestKind::MergeRequest => format!("suggestion:-{}+0", end.saturating_sub(start)),
    }
}

/// A suggestion block and the info string that opens it.
#[derive(Debug, Clone, Copy)]
pub struct Suggestion<'a> {
    pub info: &'a str,
    pub lines: &'a [String],
}

/// A finding's heading, text and fix as Markdown (no marker): the inline comment's body and
/// an entry of the summary's "not on the diff" list.
fn finding_text(r: &Report, f: &MergedFinding, suggestion: Option<Suggestion<'_>>) -> String {
    let mut out = String::new();
    let category = f
        .category
        .as_ref()
        .map(|c| format!(", {}", sanitize::line(c.as_str(), 40)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{} **{}. {}** ({}{category}) — {} · {}\n",
        icon(f.severity),
        sanitize::line(&f.id, 20),
        sanitize::line(&f.title, 300),
        f.severity,
        location_span(f),
        agents(r, f)
    );
    if !f.body.trim().is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            sanitize::markdown(&f.body, sanitize::MAX_FIELD_CHARS)
        );
    }
    if let Some(fix) = f.fix.as_deref().filter(|t| !t.trim().is_empty()) {
        let _ = writeln!(
            out,
            "**Fix:** {}\n",
            sanitize::markdown(fix, sanitize::MAX_FIELD_CHARS)
        );
    }
    match (suggestion, &f.fix_diff) {
        (Some(s), _) => {
            let _ = writeln!(out, "{}\n", fenced(s.info, &s.lines.join("\n")));
        }
        (None, Some(diff)) if !diff.trim().is_empty() => {
            let diff = sanitize::truncate(diff.trim_end(), sanitize::MAX_FIELD_CHARS);
            let _ = writeln!(out, "{}\n", fenced("diff", &diff));
        }
        _ => {}
    }
    out.trim_end().to_string()
}

/// An inline comment on lines `start..=end`: the finding's marker, then the finding, then a
/// footer.
pub fn inline(
    r: &Report,
    f: &MergedFinding,
    suggestion: Option<&[String]>,
    kind: RequestKind,
    (start, end): (u32, u32),
) -> String {
    let mut out = markers::finding(&f.fingerprint);
    out.push('\n');
    let info = suggestion_info(kind, start, end);
    let suggestion = suggestion.map(|lines| Suggestion { info: &info, lines });
    out.push_str(&finding_text(r, f, suggestion));
    let mut footer = vec![format!("deep-review · `{}`", f.fingerprint)];
    if let Some(c) = f.confidence {
        footer.push(format!("confidence {:.0}%", c * 100.0));
    }
    if let Some(round) = r.meta.round {
        footer.push(format!("round {round}"));
    }
    let _ = write!(out, "\n\n<sub>{}</sub>", footer.join(" · "));
    for_forge(out, kind)
}

/// The body of the review that carries the inline comments.
pub fn review_body(r: &Report, inline: usize) -> String {
    format!(
        "**Deep Review: {}** — {} on lines of this change{}; the summary comment lists every finding.",
        r.verdict,
        crate::text::plural(inline, "new finding", "new findings"),
        r.meta
            .round
            .map(|n| format!(" (round {n})"))
            .unwrap_or_default()
    )
}

/// The reply in the thread of a finding that the report no longer has.
pub fn resolved_reply(r: &Report, fingerprint: &str, kind: RequestKind) -> String {
    let mut out = markers::resolved(fingerprint);
    out.push('\n');
    let when = match (r.meta.round, r.meta.head.as_deref()) {
        (Some(n), Some(head)) => format!(" in round {n} (`{}`)", short(head)),
        (None, Some(head)) => format!(" at `{}`", short(head)),
        (Some(n), None) => format!(" in round {n}"),
        (None, None) => String::new(),
    };
    let _ = write!(
        out,
        "deep-review no longer finds this{when}: resolving the thread."
    );
    for_forge(out, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_hold_anything() {
        assert_eq!(code_span("src/a.rs:3-4"), "`src/a.rs:3-4`");
        assert_eq!(code_span("a`b|c"), "``a`b\\|c``");
        assert_eq!(code_span("`x"), "`` `x ``");
    }

    #[test]
    fn fences_outlast_their_content() {
        assert_eq!(fenced("suggestion", "a\nb"), "```suggestion\na\nb\n```");
        assert_eq!(fenced("diff", "````\nx"), "`````diff\n````\nx\n`````");
        assert_eq!(fenced("suggestion", ""), "```suggestion\n```");
    }
}
