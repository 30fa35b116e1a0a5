//! Reads an existing Deep Review report: its metadata table and the raw reviews in its
//! "Appendix: Original Reviews", so an old report can be consolidated again (and a report the
//! tool wrote reads back to the same raw reviews).
//!
//! The appendix holds one `### <Reviewer>` heading per agent (`### Claude Opus 4.6`,
//! `### [Claude] — Pass 1`) followed by that agent's review verbatim. The reviews contain
//! headings of every level themselves and may be broken Markdown, so the appendix is split by
//! its own structure, line by line (see [`appendix`]), and ends where the writer marked its end
//! ([`crate::report::appendix_marks`]) or, in a report without the mark, at a report section
//! that follows the last review (`## Resolution`).
//!
//! The report's structure comes from the report, never from a review inside it: its Resolution,
//! its "Declined in prior rounds" list and its own findings are read only outside the appendix;
//! whatever a raw review holds is that review's text.

mod appendix;
pub mod resolution;

use std::collections::HashSet;
use std::path::Path;

use crate::parse::blocks::LineIndex;
use crate::parse::{ParseError, parse_review};
use crate::types::{
    CommitInfo, Finding, PrInfo, PriorItem, ReportMeta, RequestKind, Resolution, Review, Reviewer,
    Verdict,
};

/// What a report holds that consolidation can use again.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportSource {
    pub meta: ReportMeta,
    /// The report's verdict, when its Verdict row names one.
    pub verdict: Option<Verdict>,
    pub verdict_rationale: String,
    /// One parsed review per agent heading of the appendix, in report order.
    pub reviews: Vec<Review>,
    /// The report's own findings (its Critical / Important / Suggestions sections), with the
    /// ids the report gave them: what a later round's Resolution and matching refer to.
    pub findings: Vec<Finding>,
    /// The report's own Testing Assessment, one entry per gap (`Testing Gap #N` is the Nth).
    pub testing_gaps: Vec<String>,
    /// The `## Resolution` the author appended, when there is one.
    pub resolution: Option<Resolution>,
    /// Its "Declined in prior rounds" list, when it is a later round.
    pub declined: Vec<PriorItem>,
    /// Where the appendix is in the text (its heading to the end of the last review), when
    /// there is one: the text that is reviews, never the report's own structure.
    pub appendix: Option<std::ops::Range<usize>>,
    /// What could not be read in the report itself (unknown rows, reviewers with no review),
    /// as `line N: message`. Each review's own warnings are on the review, with lines counted
    /// within that review.
    pub warnings: Vec<String>,
}

/// Reads a report file.
pub fn read_report(path: &Path) -> Result<ReportSource, ParseError> {
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut src = parse_report(&text, &path.display().to_string())?;
    if std::str::from_utf8(&bytes).is_err() {
        src.warnings.insert(
            0,
            format!(
                "{}: not valid UTF-8; bad bytes were replaced with U+FFFD",
                path.display()
            ),
        );
    }
    Ok(src)
}

/// Reads a report's text. `path_for_errors` names it in errors and gives the report id when the
/// title has none. A report with no raw reviews in its appendix is an error: there is nothing
/// to consolidate again.
pub fn parse_report(text: &str, path_for_errors: &str) -> Result<ReportSource, ParseError> {
    parse_with(text, path_for_errors, true)
}

/// Reads a report as an earlier round: its metadata, its own findings and testing gaps, its
/// Resolution and its declined list. Never fails on what the text holds; a report with no
/// appendix simply has no reviews.
pub fn parse_round_report(text: &str, path_for_errors: &str) -> ReportSource {
    // Without `need_reviews` nothing in the text is an error.
    parse_with(text, path_for_errors, false).unwrap_or_default()
}

/// Reads a report file as an earlier round ([`parse_round_report`]).
pub fn read_round_report(path: &Path) -> Result<ReportSource, ParseError> {
    let bytes = std::fs::read(path).map_err(|source| ParseError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(parse_round_report(
        &String::from_utf8_lossy(&bytes),
        &path.display().to_string(),
    ))
}

/// The one reader of both: `need_reviews` makes a report without raw reviews an error.
fn parse_with(
    text: &str,
    path_for_errors: &str,
    need_reviews: bool,
) -> Result<ReportSource, ParseError> {
    let lines = LineIndex::new(text);
    let all_headings = appendix::headings(text);
    let appendix_at = appendix_heading(&all_headings);
    if appendix_at.is_none() && need_reviews {
        return Err(no_appendix_error(path_for_errors));
    }
    let appendix = appendix_at.map(|i| &all_headings[i]);
    let appendix_start = appendix.map_or(text.len(), |a| a.range.start);
    let headings = report_headings(&all_headings, appendix_at);

    let mut warnings = Vec::new();
    let meta_end = metadata_end(&headings, appendix_start);
    let table = read_metadata(text, &headings, meta_end, path_for_errors, &mut warnings);

    // The report's own findings and testing gaps: its body, read as a review.
    let body = report_body(text, &headings, meta_end, appendix_start);
    let own = parse_review("report", body);
    let declined = resolution::parse_declined(body);

    let split = split_appendix(text, &all_headings, appendix_at, &table.meta.reviewers);
    let appendix_span = appendix.map(|h| h.range.start..split.end.max(h.range.end));
    // The Resolution is the report's: read outside the reviews.
    let (resolution, resolution_warnings) =
        resolution::parse_resolution_outside(text, appendix_span.clone());
    warnings.extend(resolution_warnings);
    if split.reviews.is_empty() && need_reviews {
        return Err(no_reviews_error(
            path_for_errors,
            lines.line(appendix_start),
        ));
    }
    let reviews = read_reviews(text, &all_headings, &split, &lines, &mut warnings);
    warn_missing_reviews(&table.meta.reviewers, &split, &mut warnings);
    Ok(ReportSource {
        meta: table.meta,
        verdict: table.verdict,
        verdict_rationale: table.verdict_rationale,
        reviews,
        findings: own.findings,
        testing_gaps: own.testing.gaps,
        resolution,
        declined,
        appendix: appendix_span,
        warnings,
    })
}

/// The index of the appendix heading among all headings. Before the appendix the report is
/// the tool's own Markdown: headings in code are code.
fn appendix_heading(all_headings: &[appendix::Heading]) -> Option<usize> {
    all_headings
        .iter()
        .position(|h| !h.in_fence && h.level <= 2 && is_appendix(&h.text))
}

fn no_appendix_error(path_for_errors: &str) -> ParseError {
    ParseError::Invalid {
        path: path_for_errors.to_string(),
        line: 1,
        message: "the report holds no raw reviews: it has no \"## Appendix: Original \
                  Reviews\" section. Give the raw reviews with --raw NAME=FILE instead"
            .into(),
    }
}

fn no_reviews_error(path_for_errors: &str, appendix_line: usize) -> ParseError {
    ParseError::Invalid {
        path: path_for_errors.to_string(),
        line: appendix_line,
        message: "the report holds no raw reviews: its appendix has no `### <Reviewer>` \
                  heading naming a reviewer of the Reviewers row. Give the raw reviews \
                  with --raw NAME=FILE instead"
            .into(),
    }
}

/// The report's own headings: those before the appendix, outside code fences.
fn report_headings(
    all_headings: &[appendix::Heading],
    appendix_at: Option<usize>,
) -> Vec<&appendix::Heading> {
    all_headings[..appendix_at.unwrap_or(all_headings.len())]
        .iter()
        .filter(|h| !h.in_fence)
        .collect()
}

/// Where the metadata table ends: at the first section heading after the title.
fn metadata_end(headings: &[&appendix::Heading], appendix_start: usize) -> usize {
    headings
        .iter()
        .find(|h| h.level <= 2 && h.range.start > 0 && !h.text.starts_with("Deep Review"))
        .map(|h| h.range.start)
        .unwrap_or(appendix_start)
}

/// What the metadata table says: the report's metadata and its verdict.
#[derive(Default)]
struct Metadata {
    meta: ReportMeta,
    verdict: Option<Verdict>,
    verdict_rationale: String,
}

/// Reads the report's id and the table rows before `meta_end`, warning (`line N: …`) about
/// rows it cannot read.
fn read_metadata(
    text: &str,
    headings: &[&appendix::Heading],
    meta_end: usize,
    path_for_errors: &str,
    warnings: &mut Vec<String>,
) -> Metadata {
    let mut table = Metadata::default();
    table.meta.id = report_id(headings, meta_end, path_for_errors);
    let mut row_line = 0;
    for line in text[..meta_end.min(text.len())].lines() {
        row_line += 1;
        let Some((key, value)) = table_row(line) else {
            continue;
        };
        table.read_row(&key, value.trim(), row_line, warnings);
    }
    table
}

/// The id the title gives (`# Deep Review: <id>`), else the file name of `path_for_errors`.
fn report_id(headings: &[&appendix::Heading], meta_end: usize, path_for_errors: &str) -> String {
    let from_title = headings
        .iter()
        .find(|h| h.level == 1 && h.range.start < meta_end)
        .and_then(|title| {
            let t = title.text.trim();
            t.strip_prefix("Deep Review:")
                .or_else(|| t.strip_prefix("Deep Review"))
                .map(|id| id.trim_matches([' ', ':', '—', '-']).to_string())
        })
        .unwrap_or_default();
    if !from_title.is_empty() {
        return from_title;
    }
    Path::new(path_for_errors)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Metadata {
    /// Reads one row (`| key | value |`) at line `row_line` of the report.
    fn read_row(&mut self, key: &str, value: &str, row_line: usize, warnings: &mut Vec<String>) {
        let meta = &mut self.meta;
        match key.to_ascii_lowercase().as_str() {
            "date" => meta.date = parse_date(value),
            "repo" | "repository" => meta.repo = Some(link_text(value)),
            "round" => {
                meta.round = leading_number(value).and_then(|n| u32::try_from(n).ok());
                meta.round_of = round_of(value);
            }
            "author" => meta.author = Some(link_text(value).trim_start_matches('@').to_string()),
            "pr" | "pull request" => meta.pr = parse_pr(value),
            "mr" | "merge request" => {
                meta.pr = parse_pr(value).map(|pr| PrInfo {
                    kind: RequestKind::MergeRequest,
                    ..pr
                });
            }
            "branch" => meta.branch = Some(value.trim_matches('`').to_string()),
            "head" => meta.head = Some(link_text(value).replace('`', "")).filter(|h| is_hex(h)),
            "commits" | "commit" => meta.commits = parse_commits(value),
            "reviewers" | "agents" => meta.reviewers = parse_reviewers(value),
            "verdict" => {
                let (v, rationale) = parse_verdict(value);
                if v.is_none() {
                    warnings.push(format!(
                        "line {row_line}: verdict {value:?} is not one of Merge, \
                         Merge as-is, Merge with optional fixes, Merge with fixes, Rework"
                    ));
                }
                self.verdict = v;
                self.verdict_rationale = rationale;
            }
            "wall-clock time" | "wall clock time" | "wall-clock" | "duration" => {
                meta.wall_clock_s = parse_duration(value);
                if meta.wall_clock_s.is_none() {
                    warnings.push(format!(
                        "line {row_line}: wall-clock time {value:?} not understood"
                    ));
                }
            }
            "" => {}
            other => warnings.push(format!(
                "line {row_line}: metadata row {other:?} is not read"
            )),
        }
    }
}

/// The report's body: from the metadata's end to its first report section (or the appendix).
fn report_body<'t>(
    text: &'t str,
    headings: &[&appendix::Heading],
    meta_end: usize,
    appendix_start: usize,
) -> &'t str {
    let body_end = headings
        .iter()
        .find(|h| h.level <= 2 && h.range.start >= meta_end && is_report_section(&h.text))
        .map_or(appendix_start, |h| h.range.start.min(appendix_start));
    text.get(meta_end.min(body_end)..body_end).unwrap_or("")
}

/// The appendix's reviewer headings, then the end of the last review (where the writer marked
/// it, else where a report section follows); nothing when there is no appendix.
fn split_appendix(
    text: &str,
    all_headings: &[appendix::Heading],
    appendix_at: Option<usize>,
    reviewers: &[Reviewer],
) -> appendix::Split {
    let Some(at) = appendix_at else {
        return appendix::Split::default();
    };
    let names = appendix::ReviewerNames::new(reviewers);
    let marked = crate::report::appendix_marks::marked_end(text, all_headings[at].range.end);
    appendix::split(text, all_headings, at + 1, &names, marked)
}

/// One parsed review per reviewer heading of the appendix, in report order. Warns about a
/// heading inside the review before it's open fence, a second pass by one agent, and an entry
/// that is no raw review.
fn read_reviews(
    text: &str,
    all_headings: &[appendix::Heading],
    split: &appendix::Split,
    lines: &LineIndex,
    warnings: &mut Vec<String>,
) -> Vec<Review> {
    let mut reviews = Vec::new();
    let mut agents_seen: HashSet<&str> = HashSet::new();
    for (i, (k, agent)) in split.reviews.iter().enumerate() {
        let h = &all_headings[*k];
        let next = split.reviews.get(i + 1).map(|(n, _)| &all_headings[*n]);
        let stop = next.map_or(split.end, |n| n.range.start);
        let body = text.get(h.range.end..stop.max(h.range.end)).unwrap_or("");
        let raw = trim_separators(body);
        if let Some(next) = next
            && appendix::leaves_fence_open(raw)
        {
            warnings.push(format!(
                "line {}: agent heading {:?} is inside an unclosed code fence of the review \
                 before it; read it as a heading",
                lines.line(next.range.start),
                next.text
            ));
        }
        let mut review = parse_review(&agent.name, raw);
        review.display_name = agent
            .display
            .clone()
            .or_else(|| Some(h.text.trim().to_string()));
        if !agents_seen.insert(agent.name.as_str()) {
            warnings.push(format!(
                "line {}: a second review by {} (another pass); both are kept",
                lines.line(h.range.start),
                agent.name
            ));
        }
        if let Some(w) = no_raw_review(&review, raw, lines.line(h.range.start)) {
            warnings.push(w);
        }
        reviews.push(review);
    }
    reviews
}

/// A warning per reviewer of the Reviewers row with no raw review in the appendix. A report
/// with no appendix at all (read as an earlier round) is not missing reviews.
fn warn_missing_reviews(
    reviewers: &[Reviewer],
    split: &appendix::Split,
    warnings: &mut Vec<String>,
) {
    if split.reviews.is_empty() {
        return;
    }
    let seen: HashSet<&str> = split.reviews.iter().map(|(_, a)| a.name.as_str()).collect();
    for r in reviewers {
        if !seen.contains(r.name.as_str()) {
            warnings.push(format!(
                "reviewer {} has no raw review in the appendix",
                r.display
            ));
        }
    }
}

/// A warning when an appendix entry is not a raw review, so no finding can be read from it: a
/// pointer to a file elsewhere ("see /tmp/…/review-claude.md") or a summary of a line or two.
/// `line` is the line of the entry's heading in the report.
fn no_raw_review(review: &Review, raw: &str, line: usize) -> Option<String> {
    static POINTER_RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?:^|[\s(`"'\[])((?:~|\.{1,2})?/[^\s`"'()\[\]]*\.(?:md|markdown|json|txt|log))"#,
        )
        .expect("the pointer pattern is valid")
    });
    if !review.findings.is_empty() {
        return None;
    }
    let text: Vec<&str> = raw
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(6)
        .collect();
    let who = review.display();
    let give = format!(
        "give the raw review with --raw {}=FILE to consolidate its findings",
        review.agent
    );
    if text.len() <= 5
        && let Some(c) = text.iter().find_map(|l| POINTER_RE.captures(l))
    {
        return Some(format!(
            "line {line}: the appendix holds no raw review of {who}, only a pointer to {}; {give}",
            &c[1]
        ));
    }
    if text.len() <= 2
        && !text
            .iter()
            .any(|l| l.starts_with('#') || l.starts_with("**"))
    {
        let what = if text.is_empty() {
            "nothing".to_string()
        } else {
            let mut first: String = text[0].chars().take(80).collect();
            if first.len() < text[0].len() {
                first.push('…');
            }
            format!("only a summary ({first:?})")
        };
        return Some(format!(
            "line {line}: the appendix holds {what} for {who}, not its raw review; {give}"
        ));
    }
    None
}

fn is_appendix(t: &str) -> bool {
    let l = t.to_lowercase();
    l.starts_with("appendix") && (l.contains("review") || l.trim() == "appendix")
}

/// Report sections that may follow the appendix and are never part of a raw review.
fn is_report_section(t: &str) -> bool {
    let l = t.trim().to_lowercase();
    [
        "resolution",
        "agent performance retro",
        "review process notes",
        "skill improvement",
    ]
    .iter()
    .any(|p| l.starts_with(p))
}

/// The agent an appendix heading names, with its display name (see
/// [`appendix::ReviewerNames::agent_of`]).
#[cfg(test)]
fn agent_of_heading(text: &str, reviewers: &[Reviewer]) -> Option<(String, Option<String>)> {
    appendix::ReviewerNames::new(reviewers)
        .agent_of(text)
        .map(|a| (a.name, a.display))
}

/// The agent's short name: the first word of its display name, lower case.
pub fn short_name(display: &str) -> String {
    display
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// The appendix text of one review: trimmed of blank lines and of `---` separator lines at
/// its start and end, nothing else.
fn trim_separators(body: &str) -> &str {
    let mut s = body;
    loop {
        // Whole blank lines only at the start: a review indented as a whole keeps the
        // indentation of its first line.
        let first_text = s
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        let line_start = s[..first_text].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let t = s[line_start..].trim_end();
        let t2 = t
            .strip_prefix("---")
            .filter(|r| r.starts_with(['\n', '\r']) || r.is_empty())
            .unwrap_or(t);
        let t3 = t2
            .strip_suffix("---")
            .filter(|r| r.ends_with(['\n', '\r']) || r.is_empty())
            .unwrap_or(t2);
        if t3.len() == s.len() {
            return t3;
        }
        s = t3;
    }
}

/// `| **Key** | value |` → (`Key`, `value`). The value keeps any `|` it contains.
fn table_row(line: &str) -> Option<(String, String)> {
    let l = line.trim();
    let inner = l.strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let (key, value) = inner.split_once('|')?;
    let key = key.trim();
    if key.chars().all(|c| c == '-' || c == ':' || c == ' ') {
        return None;
    }
    let key = key.trim_matches('*').trim().to_string();
    Some((key, value.trim().replace("\\|", "|")))
}

/// `[text](url)` → `text`; anything else unchanged (trimmed of backticks).
fn link_text(s: &str) -> String {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix('[')
        && let Some((t, _)) = rest.split_once("](")
    {
        return t.trim().to_string();
    }
    s.trim_matches('`').to_string()
}

fn link_url(s: &str) -> Option<String> {
    let (_, rest) = s.split_once("](")?;
    let (url, _) = rest.split_once(')')?;
    Some(url.trim().to_string())
}

/// `5 (of PR #236)` → `PR #236`; `3 (of branch feat)` → `branch feat`.
fn round_of(value: &str) -> Option<String> {
    let (_, rest) = value.split_once('(')?;
    let inner = rest.rsplit_once(')').map_or(rest, |(i, _)| i).trim();
    let of = inner.strip_prefix("of ").unwrap_or(inner).trim();
    Some(of.replace('`', "")).filter(|o| !o.is_empty())
}

fn is_hex(s: &str) -> bool {
    s.len() >= 7 && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn leading_number(s: &str) -> Option<u64> {
    let d: String = s
        .trim()
        .trim_start_matches(['#', '!'])
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    d.parse().ok()
}

/// `[#236](url) — title` or `#236 — title` (`!42` for a merge request).
fn parse_pr(s: &str) -> Option<PrInfo> {
    let s = s.trim();
    let text = link_text(s);
    let number = leading_number(&text)?;
    let url = link_url(s);
    let after = match s.find(')') {
        Some(i) if url.is_some() => &s[i + 1..],
        _ => s
            .trim_start_matches(['#', '!'])
            .trim_start_matches(|c: char| c.is_ascii_digit()),
    };
    let title = after
        .trim()
        .trim_start_matches(['—', '–', '-', ':'])
        .trim()
        .to_string();
    Some(PrInfo {
        number,
        title,
        url,
        kind: RequestKind::PullRequest,
    })
}

/// `` `sha` subject<br>`sha` subject ``.
fn parse_commits(s: &str) -> Vec<CommitInfo> {
    let mut out = Vec::new();
    let normalized = s.replace("<br/>", "<br>").replace("<br />", "<br>");
    for part in normalized.split("<br>") {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        if let Some(rest) = p.strip_prefix('`')
            && let Some((sha, subject)) = rest.split_once('`')
        {
            out.push(CommitInfo {
                sha: sha.trim().to_string(),
                subject: subject.trim().to_string(),
            });
        } else {
            let (sha, subject) = p.split_once(' ').unwrap_or((p, ""));
            out.push(CommitInfo {
                sha: sha.to_string(),
                subject: subject.trim().to_string(),
            });
        }
    }
    out
}

/// `Claude Opus 4.7 (effort: xhigh), Codex GPT 5.5 (effort: xhigh)`.
fn parse_reviewers(s: &str) -> Vec<Reviewer> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth <= 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (display, paren) = match p.split_once('(') {
                Some((d, rest)) => (d.trim().to_string(), Some(rest.trim_end_matches(')'))),
                None => (p.clone(), None),
            };
            let effort = paren.and_then(|inner| {
                inner.split(',').find_map(|kv| {
                    let (k, v) = kv.split_once(':')?;
                    (k.trim().eq_ignore_ascii_case("effort")).then(|| v.trim().to_string())
                })
            });
            let model = display
                .split_once(' ')
                .map(|(_, m)| m.trim().to_string())
                .filter(|m| !m.is_empty());
            Reviewer {
                name: short_name(&display),
                display,
                model,
                effort,
            }
        })
        .collect()
}

/// `**Merge with fixes** — rationale`.
fn parse_verdict(s: &str) -> (Option<Verdict>, String) {
    let s = s.trim();
    let (word, rest) = if let Some(r) = s.strip_prefix("**") {
        match r.split_once("**") {
            Some((w, rest)) => (w.to_string(), rest.to_string()),
            None => (r.to_string(), String::new()),
        }
    } else {
        match s.split_once([' ']).filter(|_| s.contains(" — ")) {
            Some(_) => {
                let (w, r) = s.split_once(" — ").unwrap_or((s, ""));
                (w.to_string(), r.to_string())
            }
            None => (s.to_string(), String::new()),
        }
    };
    let rationale = rest
        .trim()
        .trim_start_matches(['—', '–', '-', ':'])
        .trim()
        .to_string();
    (word.parse().ok(), rationale)
}

/// `15 min 6 s`, `` `37 min 45 s` ``, `5m 07s`, `1 h 2 min`, `12:05`, `90 s` → seconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    crate::text::parse_duration(s).ok().map(|d| d.as_secs_f64())
}

/// A report's date as written (`2026-03-24 13:10`, seconds optional), or `None`.
fn parse_date(value: &str) -> Option<chrono::NaiveDateTime> {
    let v = value.trim().trim_matches('`').trim();
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(v, f).ok())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_rows_with_what_they_count_over() {
        assert_eq!(leading_number("5 (of PR #236)"), Some(5));
        assert_eq!(round_of("5 (of PR #236)").as_deref(), Some("PR #236"));
        assert_eq!(
            round_of("3 (of branch `feat/x`)").as_deref(),
            Some("branch feat/x")
        );
        assert_eq!(round_of("1"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("`15 min 6 s`"), Some(906.0));
        assert_eq!(parse_duration("12 min 27 s"), Some(747.0));
        assert_eq!(parse_duration("5m 07s"), Some(307.0));
        assert_eq!(parse_duration("1 h 2 min"), Some(3720.0));
        assert_eq!(parse_duration("7:09"), Some(429.0));
        assert_eq!(parse_duration("soon"), None);
    }

    #[test]
    fn reviewers_with_effort() {
        let r = parse_reviewers("Claude Opus 4.7 (effort: xhigh), Gemini 3.1 Pro");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].name, "claude");
        assert_eq!(r[0].display, "Claude Opus 4.7");
        assert_eq!(r[0].model.as_deref(), Some("Opus 4.7"));
        assert_eq!(r[0].effort.as_deref(), Some("xhigh"));
        assert_eq!(r[1].effort, None);
    }

    #[test]
    fn pr_and_commits_and_verdict() {
        let pr = parse_pr("[#236](https://x/pull/236) — Implement App controller").unwrap();
        assert_eq!(pr.number, 236);
        assert_eq!(pr.title, "Implement App controller");
        assert_eq!(pr.url.as_deref(), Some("https://x/pull/236"));
        let mr = parse_pr("[!42](https://x/g/p/-/merge_requests/42) — Add login").unwrap();
        assert_eq!((mr.number, mr.title.as_str()), (42, "Add login"));
        assert_eq!(parse_pr("!7 — x").map(|p| p.number), Some(7));
        let c = parse_commits("`2a3c5b2` Implement it<br>`049a3a0` Add test");
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].sha, "049a3a0");
        assert_eq!(c[1].subject, "Add test");
        let (v, why) = parse_verdict("**Merge with fixes** — must fix the leak");
        assert_eq!(v, Some(Verdict::MergeWithFixes));
        assert_eq!(why, "must fix the leak");
    }

    #[test]
    fn separators_trimmed_only_at_the_ends() {
        assert_eq!(
            trim_separators("\n---\n\nA\n\n---\n\nB\n\n---\n"),
            "A\n\n---\n\nB"
        );
        assert_eq!(trim_separators("\nA\n"), "A");
        // A review indented as a whole keeps its first line's indentation.
        assert_eq!(
            trim_separators("\n\n    ## A\n    b\n\n---\n"),
            "    ## A\n    b"
        );
    }

    #[test]
    fn agent_headings() {
        let revs = parse_reviewers("Claude Opus 4.6, Codex GPT 5.4");
        assert_eq!(
            agent_of_heading("[Claude] — Pass 1", &revs).map(|a| a.0),
            Some("claude".into())
        );
        assert_eq!(
            agent_of_heading("Codex GPT 5.4", &revs),
            Some(("codex".into(), Some("Codex GPT 5.4".into())))
        );
        assert_eq!(agent_of_heading("Executive Summary", &revs), None);
        assert_eq!(agent_of_heading("Claude's take", &revs), None);
    }
}
