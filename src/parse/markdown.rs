//! A tolerant reader of Markdown raw reviews.
//!
//! Reviewers are asked for one layout but drift from it: sections as `#`..`####` headings or as
//! bold paragraphs (`**Critical Issues**`), findings numbered or not, ids inside or before the
//! bold title, the `(severity, category)` note on the first line or at the end of the body,
//! coverage as a table or as bullets. The reader works in two passes over pulldown-cmark blocks:
//!
//! 1. [`split_sections`] cuts the document into chunks, one per recognised section name (the
//!    name decides, not the heading level), keeping text before the first section as preamble;
//! 2. each chunk is read by the function of its section ([`read_findings`], ...).
//!
//! What fits nowhere is kept verbatim in [`Review::unparsed`] and named in a warning with its
//! line, so nothing a reviewer wrote is dropped silently.

use std::ops::Range;

use super::blocks::{
    Block, BlockKind, Inline, InlineKind, LineIndex, dedented, parse_blocks, plain,
};
use super::head::{Head, find_scopes, find_trailing_severity, parse_head, strip_scopes};
use crate::model::{
    CodeSnippet, CoverageEntry, Finding, Observation, ObservationKind, ParseWarning, Review,
    Severity,
};

/// The sections of the review contract.
#[derive(Debug, Clone, PartialEq)]
enum Sec {
    /// Text before the first recognised section, and title headings.
    Preamble,
    Summary,
    Verdict,
    /// A findings section; the severity of its heading when it names one.
    Findings(Option<Severity>),
    Observations(ObservationKind),
    Testing,
    Documentation,
    Limitations,
    Unresolved,
    Coverage,
    Commits,
    /// A section the contract does not have; its text goes to `unparsed`.
    Unknown(String),
}

/// One piece of a section: a block, a list item, or the rest of a paragraph whose first line
/// was a bold section name.
#[derive(Debug)]
enum Unit<'a> {
    Block(&'a Block),
    Item {
        item: &'a Block,
        list: &'a Block,
        number: Option<u64>,
    },
    Fragment {
        lines: Vec<Vec<&'a Inline>>,
        range: Range<usize>,
    },
}

impl Unit<'_> {
    fn start(&self) -> usize {
        match self {
            Unit::Block(b) => b.range.start,
            Unit::Item { item, .. } => item.range.start,
            Unit::Fragment { range, .. } => range.start,
        }
    }
}

#[derive(Debug)]
struct Chunk<'a> {
    sec: Sec,
    /// The heading level, or `None` for a bold-paragraph section.
    level: Option<u8>,
    /// Byte offset of the section's heading.
    at: usize,
    units: Vec<Unit<'a>>,
}

/// Shared state of one parse: the (possibly repaired) text, line numbers of the original, and
/// the review being filled.
struct Ctx<'t> {
    text: &'t str,
    lines: LineIndex,
    /// Bytes inserted into `text` to close unterminated fences: (offset in `text`, length).
    inserted: Vec<(usize, usize)>,
    review: Review,
    used_ids: std::collections::HashSet<String>,
}

impl Ctx<'_> {
    /// The 1-based line in the original review of an offset in the working text.
    fn line(&self, offset: usize) -> usize {
        let shift: usize = self
            .inserted
            .iter()
            .filter(|(at, _)| *at <= offset)
            .map(|(_, len)| len)
            .sum();
        self.lines.line(offset.saturating_sub(shift))
    }

    fn warn(&mut self, offset: usize, message: impl Into<String>) {
        let line = self.line(offset);
        self.review.warnings.push(ParseWarning {
            line: Some(line),
            message: message.into(),
        });
    }

    fn src(&self, range: &Range<usize>) -> String {
        dedented(self.text, range)
    }

    fn keep_unparsed(&mut self, offset: usize, text: String, why: &str) {
        if text.trim().is_empty() {
            return;
        }
        let line = self.line(offset);
        self.warn(
            offset,
            format!("line {line}: {why}; the text is kept in `unparsed`"),
        );
        self.review.unparsed.push(text);
    }
}

/// Parses a Markdown raw review. Never fails; see the module doc.
pub fn parse_markdown(agent: &str, text: &str) -> Review {
    let mut review = Review {
        agent: agent.to_string(),
        raw: text.to_string(),
        ..Review::default()
    };
    if text.trim().is_empty() {
        review.warnings.push(ParseWarning {
            line: Some(1),
            message: "the review is empty: the agent wrote nothing to parse".into(),
        });
        return review;
    }
    let (work, inserted, fence_warnings) = close_open_fences(text);
    review.warnings.extend(fence_warnings);
    let blocks = parse_blocks(&work);
    let mut ctx = Ctx {
        text: &work,
        lines: LineIndex::new(text),
        inserted,
        review,
        used_ids: Default::default(),
    };
    let chunks = split_sections(&blocks, &mut ctx);
    let mut preamble: Vec<(usize, String)> = Vec::new();
    for chunk in &chunks {
        match &chunk.sec {
            Sec::Preamble => read_preamble(chunk, &mut ctx, &mut preamble),
            Sec::Findings(sev) => read_findings(chunk, *sev, false, &mut ctx),
            Sec::Summary => {
                let s = join_units(&chunk.units, &ctx);
                push_para(&mut ctx.review.summary, &s);
            }
            Sec::Verdict => read_verdict(chunk, &mut ctx),
            Sec::Observations(kind) => read_observations(chunk, *kind, &mut ctx),
            Sec::Testing => read_testing(chunk, &mut ctx),
            Sec::Documentation => {
                let e = entries(chunk, &ctx);
                ctx.review.documentation.extend(e);
            }
            Sec::Limitations => {
                let e = entries(chunk, &ctx);
                ctx.review.limitations.extend(e);
            }
            Sec::Unresolved => {
                let e = entries(chunk, &ctx);
                ctx.review.unresolved_feedback.extend(e);
            }
            Sec::Coverage => read_coverage(chunk, &mut ctx),
            Sec::Commits => {
                let s = join_units(&chunk.units, &ctx);
                if !s.trim().is_empty() {
                    let cs = ctx.review.commit_structure.get_or_insert_with(String::new);
                    push_para(cs, &s);
                }
            }
            Sec::Unknown(name) => {
                // Findings with a `(severity, category)` note still count; the rest is kept.
                let mut rest: Vec<(usize, String)> = Vec::new();
                read_preamble(chunk, &mut ctx, &mut rest);
                let s: Vec<String> = rest.into_iter().map(|(_, s)| s).collect();
                let why = format!("section \"{name}\" is not part of the review layout");
                let at = chunk.at;
                ctx.keep_unparsed(
                    at,
                    format!("{name}\n\n{}", s.join("\n\n")).trim().to_string(),
                    &why,
                );
            }
        }
    }
    // Text before the first section: the summary when the review has none, else unparsed.
    let pre: Vec<String> = preamble.iter().map(|(_, s)| s.clone()).collect();
    if !pre.is_empty() {
        if ctx.review.summary.trim().is_empty() {
            ctx.review.summary = pre.join("\n\n");
        } else {
            let at = preamble[0].0;
            ctx.keep_unparsed(
                at,
                pre.join("\n\n"),
                "text before the first section is not part of the review layout",
            );
        }
    }
    if chunks.iter().all(|c| c.sec == Sec::Preamble) && ctx.review.findings.is_empty() {
        ctx.review.warnings.push(ParseWarning {
            line: Some(1),
            message: "no review sections found (Findings, Critical Issues, ...): the whole text \
                      was read as the summary"
                .into(),
        });
    }
    ctx.review
}

/// Closes code fences that run to the end of the text before the next ATX heading, so one
/// missing ```` ``` ```` does not swallow the rest of the review. Returns the repaired text, the
/// insertions made, and a warning per unterminated fence.
fn close_open_fences(text: &str) -> (String, Vec<(usize, usize)>, Vec<ParseWarning>) {
    let mut work = text.to_string();
    let mut inserted: Vec<(usize, usize)> = Vec::new();
    let mut warnings = Vec::new();
    let orig_lines = LineIndex::new(text);
    let to_orig = |ins: &[(usize, usize)], off: usize| {
        let shift: usize = ins
            .iter()
            .filter(|(at, _)| *at <= off)
            .map(|(_, l)| l)
            .sum();
        off.saturating_sub(shift)
    };
    for _ in 0..32 {
        let blocks = parse_blocks(&work);
        let Some(open) = find_open_fence(&blocks) else {
            break;
        };
        let open_line = orig_lines.line(to_orig(&inserted, open.start));
        let body = &work[open.clone()];
        let fence: String = body
            .trim_start()
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        // The first heading line after the opening line.
        let mut pos = open.start + body.find('\n').map(|i| i + 1).unwrap_or(body.len());
        let mut close_at = None;
        while pos < open.end {
            let line_end = work[pos..]
                .find('\n')
                .map(|i| pos + i + 1)
                .unwrap_or(work.len());
            let line = work[pos..line_end].trim_start();
            if line.starts_with('#') && {
                let hashes = line.chars().take_while(|c| *c == '#').count();
                hashes <= 6 && line[hashes..].starts_with([' ', '\t', '\n'])
            } {
                close_at = Some(pos);
                break;
            }
            pos = line_end;
        }
        match close_at {
            Some(at) => {
                let heading_line = orig_lines.line(to_orig(&inserted, at));
                let insert = format!("{fence}\n");
                work.insert_str(at, &insert);
                for (p, _) in inserted.iter_mut() {
                    if *p >= at {
                        *p += insert.len();
                    }
                }
                inserted.push((at, insert.len()));
                warnings.push(ParseWarning {
                    line: Some(open_line),
                    message: format!(
                        "line {open_line}: code fence is never closed; read it as closed before \
                         the heading at line {heading_line}"
                    ),
                });
            }
            None => {
                warnings.push(ParseWarning {
                    line: Some(open_line),
                    message: format!(
                        "line {open_line}: code fence is never closed; everything after it was \
                         read as code"
                    ),
                });
                break;
            }
        }
    }
    (work, inserted, warnings)
}

fn find_open_fence(blocks: &[Block]) -> Option<Range<usize>> {
    for b in blocks {
        if let BlockKind::Code {
            fenced: true,
            closed: false,
            ..
        } = b.kind
        {
            return Some(b.range.clone());
        }
        if let Some(r) = find_open_fence(&b.children) {
            return Some(r);
        }
    }
    None
}

/// Normalises a heading or bold lead for matching section names.
fn norm(s: &str) -> String {
    let s = s.to_lowercase();
    let s = s.trim_matches(|c: char| !c.is_alphanumeric() && c != '(' && c != ')');
    // Drop a leading number ("1. Findings", "A) Summary").
    let s = match s.split_once(['.', ')']) {
        Some((n, rest))
            if !n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            if n.chars().all(|c| c.is_ascii_digit()) || n.len() == 1 {
                rest
            } else {
                s
            }
        }
        _ => s,
    };
    // Drop a trailing count or note: "Suggestions (3)", "Critical Issues: none".
    let s = s.split(['(', ':', '—']).next().unwrap_or(s);
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

/// The section a heading or bold lead names, if it names one.
fn classify(name: &str) -> Option<Sec> {
    let n = norm(name);
    let sec = match n.as_str() {
        "executive summary" | "summary" | "overview" | "overall assessment" => Sec::Summary,
        "verdict" | "overall verdict" | "recommendation" | "final verdict" => Sec::Verdict,
        "findings" | "issues" | "review findings" | "detailed findings" | "issues found" => {
            Sec::Findings(None)
        }
        "critical issues" | "critical" | "critical findings" | "blocking issues" | "blockers"
        | "critical issue" => Sec::Findings(Some(Severity::Critical)),
        "important issues" | "important" | "important findings" | "major issues"
        | "important issue" => Sec::Findings(Some(Severity::Important)),
        "suggestions"
        | "suggestion"
        | "minor issues"
        | "nits"
        | "nitpicks"
        | "optional suggestions"
        | "minor suggestions" => Sec::Findings(Some(Severity::Suggestion)),
        "design observations"
        | "design observation"
        | "observations"
        | "design notes"
        | "architecture"
        | "design" => Sec::Observations(ObservationKind::Concern),
        "concerns" | "design concerns" | "concern" => Sec::Observations(ObservationKind::Concern),
        "strengths" | "strength" | "design strengths" | "positives" | "what went well" => {
            Sec::Observations(ObservationKind::Strength)
        }
        "testing assessment" | "testing" | "tests" | "test coverage" | "testing gaps"
        | "test assessment" => Sec::Testing,
        "documentation assessment" | "documentation" | "docs" | "documentation gaps" => {
            Sec::Documentation
        }
        "acknowledged limitations" | "limitations" | "known limitations" => Sec::Limitations,
        "unresolved feedback"
        | "unresolved review comments"
        | "unresolved comments"
        | "unresolved review feedback"
        | "prior feedback" => Sec::Unresolved,
        "coverage summary" | "coverage" | "files reviewed" | "file coverage" => Sec::Coverage,
        "commit structure" | "commits" | "commit history" => Sec::Commits,
        _ => return None,
    };
    Some(sec)
}

/// The bold lead of a line (all leading strong spans) and the text after it, when the line
/// starts with bold.
fn bold_lead(line: &[&Inline]) -> Option<(String, String, usize)> {
    let start = line
        .iter()
        .position(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()))?;
    if !line[start].strong {
        return None;
    }
    let end = line[start..]
        .iter()
        .position(|i| !i.strong)
        .map(|p| start + p)
        .unwrap_or(line.len());
    Some((plain(&line[start..end]), plain(&line[end..]), end))
}

fn strip_sep(s: &str) -> &str {
    s.trim()
        .trim_start_matches([':', '—', '–', '-', '.'])
        .trim_start()
}

/// Pass 1: cut the top-level blocks into sections.
fn split_sections<'a>(blocks: &'a [Block], ctx: &mut Ctx) -> Vec<Chunk<'a>> {
    let mut chunks = vec![Chunk {
        sec: Sec::Preamble,
        level: None,
        at: 0,
        units: Vec::new(),
    }];
    for b in blocks {
        let cur = chunks.last().map(|c| (c.sec.clone(), c.level));
        let (cur_sec, cur_level) = cur.unwrap_or((Sec::Preamble, None));
        match &b.kind {
            BlockKind::Heading(level) => {
                let level = *level;
                let name = b.plain();
                if let Some(sec) = classify(&name) {
                    if sec == Sec::Verdict
                        && let Some(v) = inline_value(&name)
                    {
                        // `## Verdict: Approve`
                        ctx.review.verdict = Some(clean_verdict(&v));
                        continue;
                    }
                    chunks.push(Chunk {
                        sec,
                        level: Some(level),
                        at: b.range.start,
                        units: Vec::new(),
                    });
                    continue;
                }
                let deeper = cur_level.is_none_or(|l| level > l);
                let in_findings = matches!(cur_sec, Sec::Findings(_));
                let has_sev = super::head::find_severity(&name).is_some();
                if (in_findings && (deeper || NUMBERED_RE.is_match(&name))) || has_sev {
                    push_unit(&mut chunks, Unit::Block(b));
                } else if cur_sec == Sec::Preamble {
                    // A title heading ("# Deep Review: PR #361"): nothing to keep but its place.
                    if level > 2 && !name.to_lowercase().contains("review") {
                        push_unit(&mut chunks, Unit::Block(b));
                    }
                } else if deeper && cur_level.is_some() {
                    push_unit(&mut chunks, Unit::Block(b));
                } else {
                    chunks.push(Chunk {
                        sec: Sec::Unknown(name),
                        level: Some(level),
                        at: b.range.start,
                        units: Vec::new(),
                    });
                }
            }
            BlockKind::Paragraph => split_paragraph(b, &mut chunks, ctx),
            BlockKind::List { start } => {
                for (i, item) in b.children.iter().enumerate() {
                    push_unit(
                        &mut chunks,
                        Unit::Item {
                            item,
                            list: b,
                            number: start.map(|s| s + i as u64),
                        },
                    );
                }
            }
            BlockKind::Rule => {}
            _ => push_unit(&mut chunks, Unit::Block(b)),
        }
    }
    chunks
}

fn push_unit<'a>(chunks: &mut [Chunk<'a>], u: Unit<'a>) {
    if let Some(c) = chunks.last_mut() {
        c.units.push(u);
    }
}

/// A paragraph whose first lines are bold section names (`**Critical Issues**`,
/// `**Strengths** — text`, `**Verdict**: Approve`) switches sections; the rest of it is a
/// fragment of the new section.
fn split_paragraph<'a>(b: &'a Block, chunks: &mut Vec<Chunk<'a>>, ctx: &mut Ctx) {
    let lines = b.lines();
    let mut k = 0;
    while k < lines.len() {
        let Some((bold, after, bold_end)) = bold_lead(&lines[k]) else {
            break;
        };
        let Some(sec) = classify(&bold) else {
            break;
        };
        let rest_inlines: Vec<&Inline> = lines[k][bold_end..].to_vec();
        let rest_text = strip_sep(&after).to_string();
        if sec == Sec::Verdict {
            // `**Verdict**: Approve`, `**Verdict: Approve**`
            let value = if rest_text.is_empty() {
                inline_value(&bold)
            } else {
                Some(rest_text.clone())
            };
            if let Some(v) = value {
                ctx.review.verdict = Some(clean_verdict(&v));
                k += 1;
                continue;
            }
        }
        let at = lines[k]
            .first()
            .map(|i| i.range.start)
            .unwrap_or(b.range.start);
        chunks.push(Chunk {
            sec,
            level: None,
            at,
            units: Vec::new(),
        });
        if !rest_text.is_empty() {
            // `**Strengths** — text`: the text after the lead starts the section.
            let mut frag_lines = vec![rest_inlines];
            frag_lines.extend(lines[k + 1..].iter().cloned());
            let mut start = frag_lines
                .first()
                .and_then(|l| l.first())
                .map(|i| i.range.start)
                .unwrap_or(b.range.start);
            // Skip the separator after the lead: `**Strengths** — text`.
            while let Some(c) = ctx.text.get(start..).and_then(|t| t.chars().next())
                && matches!(c, ' ' | '—' | '–' | '-' | ':' | '*')
                && start < b.range.end
            {
                start += c.len_utf8();
            }
            push_unit(
                chunks,
                Unit::Fragment {
                    lines: frag_lines,
                    range: start..b.range.end,
                },
            );
            return;
        }
        k += 1;
    }
    if k == 0 {
        push_unit(chunks, Unit::Block(b));
    } else if k < lines.len() {
        let frag_lines: Vec<Vec<&Inline>> = lines[k..].to_vec();
        let start = frag_lines
            .first()
            .and_then(|l| l.first())
            .map(|i| i.range.start)
            .unwrap_or(b.range.start);
        push_unit(
            chunks,
            Unit::Fragment {
                lines: frag_lines,
                range: start..b.range.end,
            },
        );
    }
}

/// A heading such as `1. Title` or `C2: Title`: a finding even at its section's level.
static NUMBERED_RE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^\s*(?:[A-Z]{1,3}-?)?\d{1,4}[.:)]\s").unwrap());

/// The value after a label in one line: `Verdict: Approve` → `Approve`.
fn inline_value(s: &str) -> Option<String> {
    let i = s.find([':', '—'])?;
    let v = s[i..]
        .trim_start_matches([':', '—'])
        .trim()
        .trim_matches('*')
        .trim();
    (!v.is_empty()).then(|| v.to_string())
}

fn clean_verdict(s: &str) -> String {
    s.trim()
        .trim_matches('*')
        .trim()
        .trim_end_matches('.')
        .trim()
        .to_string()
}

fn push_para(into: &mut String, s: &str) {
    let s = s.trim();
    if s.is_empty() {
        return;
    }
    if !into.is_empty() {
        into.push_str("\n\n");
    }
    into.push_str(s);
}

/// The source text of a unit (list items without their marker).
fn unit_src(u: &Unit, ctx: &Ctx) -> String {
    match u {
        Unit::Block(b) => ctx.src(&b.range),
        Unit::Item { item, .. } => item_text(item, ctx),
        Unit::Fragment { range, .. } => ctx.src(range),
    }
}

fn item_text(item: &Block, ctx: &Ctx) -> String {
    item.children
        .iter()
        .map(|c| ctx.src(&c.range))
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn join_units(units: &[Unit], ctx: &Ctx) -> String {
    units
        .iter()
        .map(|u| match u {
            Unit::Item { item, .. } => format!("- {}", item_text(item, ctx)),
            _ => unit_src(u, ctx),
        })
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `None.`, `N/A`, `No issues found.`: a section that says it is empty.
fn is_none_text(s: &str) -> bool {
    let n = s
        .trim()
        .trim_matches(|c: char| c == '*' || c == '_' || c == '.' || c.is_whitespace())
        .to_lowercase();
    matches!(
        n.as_str(),
        "none"
            | "n/a"
            | "na"
            | "nothing"
            | "none found"
            | "none identified"
            | "no issues"
            | "no issues found"
            | "no findings"
            | "nothing to report"
            | "none noted"
    ) || n.starts_with("none —")
        || n.starts_with("none -")
        || n.starts_with("none.")
        || n.starts_with("none,")
}

/// The first line of a unit's text, for reading a head.
fn first_line<'a>(u: &Unit<'a>) -> Option<Vec<&'a Inline>> {
    match u {
        Unit::Block(b) => match b.kind {
            BlockKind::Paragraph | BlockKind::Heading(_) => {
                split_lines_owned(&b.inlines).into_iter().next()
            }
            _ => None,
        },
        Unit::Item { item, .. } => item
            .first_paragraph()
            .and_then(|p| split_lines_owned(&p.inlines).into_iter().next()),
        Unit::Fragment { lines, .. } => lines.first().cloned(),
    }
}

fn split_lines_owned(inlines: &[Inline]) -> Vec<Vec<&Inline>> {
    super::blocks::split_lines(inlines)
}

/// Words that lead a paragraph inside a finding's body and never start a finding.
const LABELS: &[&str] = &[
    "fix",
    "suggested fix",
    "note",
    "why",
    "impact",
    "evidence",
    "example",
    "recommendation",
    "root cause",
    "reproduction",
    "details",
    "context",
    "problem",
    "risk",
    "proposed fix",
    "remediation",
    "location",
    "severity",
    "category",
    "code",
    "explanation",
    "why it matters",
];

/// How a finding's first line was written; later findings of a section are written the same
/// way, which tells a new finding from a bold sentence in a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Heading(u8),
    Ordered,
    Bullet,
    Para,
}

fn style_of(u: &Unit) -> Option<Style> {
    match u {
        Unit::Block(b) => match b.kind {
            BlockKind::Heading(l) => Some(Style::Heading(l)),
            BlockKind::Paragraph => Some(Style::Para),
            _ => None,
        },
        Unit::Item { list, .. } => match list.kind {
            BlockKind::List { start: Some(_) } => Some(Style::Ordered),
            _ => Some(Style::Bullet),
        },
        Unit::Fragment { .. } => Some(Style::Para),
    }
}

fn is_label(head: &Head) -> bool {
    LABELS.contains(&norm(&head.title).as_str())
}

/// A finding being read: its first unit and the units of its body.
struct Draft<'u, 'a> {
    head: Head,
    start: &'u Unit<'a>,
    number: Option<u64>,
    body: Vec<&'u Unit<'a>>,
}

/// Reads a findings section (or, with `strict`, the preamble or an unknown section, where only
/// a line with a `(severity, category)` note starts a finding).
fn read_findings(chunk: &Chunk, sec_sev: Option<Severity>, strict: bool, ctx: &mut Ctx) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut style: Option<Style> = None;
    let mut first_list: Option<*const Block> = None;
    let mut last_number: Option<u64> = None;
    for u in &chunk.units {
        // A table whose header names the finding columns holds one finding per row.
        if !strict
            && let Unit::Block(b) = u
            && b.kind == BlockKind::Table
            && let Some(cols) = finding_columns(b)
        {
            for row in b
                .children
                .iter()
                .filter(|r| r.kind == (BlockKind::Row { head: false }))
            {
                entries.push(Entry::Row(row, cols.clone()));
            }
            continue;
        }
        let st = style_of(u);
        let head = first_line(u).map(|l| parse_head(&l));
        let number = match u {
            Unit::Item { number, .. } => *number,
            _ => head.as_ref().and_then(|h| h.number),
        };
        let any_draft = entries.iter().any(|e| matches!(e, Entry::Draft(_)));
        let is_fix =
            strip_fix_label(&first_line(u).map(|l| plain(&l)).unwrap_or_default()).is_some();
        let starts = match (&head, st) {
            (Some(h), Some(st)) => {
                if (is_label(h) && h.bold) || is_fix {
                    false
                } else if st == Style::Para && !h.bold && h.id.is_none() {
                    // A plain sentence is never a finding's first line, even with a
                    // `(severity, category)` note at its end.
                    false
                } else if strict {
                    h.severity.is_some() && (h.bold || h.id.is_some())
                } else if !any_draft {
                    matches!(u, Unit::Item { .. })
                        || matches!(st, Style::Heading(_))
                        || h.bold
                        || h.id.is_some()
                        || h.severity.is_some()
                } else if let (Unit::Item { list, .. }, Some(fl)) = (u, first_list)
                    && std::ptr::eq(*list as *const Block, fl)
                {
                    true
                } else if matches!(st, Style::Heading(_)) && Some(st) == style {
                    // Findings written as headings: every heading of their level is one.
                    true
                } else {
                    Some(st) == style && looks_like_finding(h, number, last_number)
                }
            }
            _ => false,
        };
        if starts {
            if !any_draft {
                style = st;
                if let Unit::Item { list, .. } = u {
                    first_list = Some(*list as *const Block);
                }
            }
            last_number = number;
            entries.push(Entry::Draft(Draft {
                head: head.unwrap_or_default(),
                start: u,
                number,
                body: Vec::new(),
            }));
        } else if let Some(Entry::Draft(d)) = entries.last_mut() {
            d.body.push(u);
        } else {
            let s = unit_src(u, ctx);
            if strict {
                continue; // the caller keeps the preamble text
            }
            if !is_none_text(&s) {
                ctx.keep_unparsed(
                    u.start(),
                    s,
                    "text in a findings section that is not a finding",
                );
            }
        }
    }
    let mut position = 0;
    for e in entries {
        position += 1;
        let f = match e {
            Entry::Draft(d) => build_finding(d, sec_sev, position, ctx),
            Entry::Row(row, cols) => finding_from_row(row, &cols, sec_sev, position, ctx),
        };
        ctx.review.findings.push(f);
    }
}

/// A finding to build: a run of units, or a row of a findings table.
enum Entry<'u, 'a> {
    Draft(Draft<'u, 'a>),
    Row(&'a Block, Columns),
}

/// Which columns of a findings table hold what.
#[derive(Debug, Clone, Default)]
struct Columns {
    id: Option<usize>,
    title: usize,
    severity: Option<usize>,
    category: Option<usize>,
    location: Option<usize>,
    fix: Option<usize>,
    detail: Option<usize>,
}

/// The columns of a table that lists findings (`| # | Severity | File | Issue |`): it needs a
/// title column and a severity or location column.
fn finding_columns(table: &Block) -> Option<Columns> {
    let head = table
        .children
        .iter()
        .find(|r| r.kind == (BlockKind::Row { head: true }))?;
    let names: Vec<String> = head.children.iter().map(|c| norm(&c.plain())).collect();
    let find = |keys: &[&str]| names.iter().position(|n| keys.contains(&n.as_str()));
    let mut cols = Columns {
        id: find(&["#", "id", "no", "finding id"])
            .or_else(|| names.iter().position(|n| n.is_empty())),
        title: find(&["issue", "finding", "title", "problem", "summary", "what"])
            .or_else(|| find(&["description"]))?,
        severity: find(&["severity", "level", "priority", "sev"]),
        category: find(&["category", "type", "kind"]),
        location: find(&["file", "location", "path", "where", "lines", "file:line"]),
        fix: find(&["fix", "suggested fix", "recommendation", "suggestion"]),
        detail: None,
    };
    let d = find(&["description", "details", "explanation", "why", "impact"]);
    if d != Some(cols.title) {
        cols.detail = d;
    }
    (cols.severity.is_some() || cols.location.is_some()).then_some(cols)
}

fn finding_from_row(
    row: &Block,
    cols: &Columns,
    sec_sev: Option<Severity>,
    position: usize,
    ctx: &mut Ctx,
) -> Finding {
    let cell = |i: Option<usize>| -> String {
        i.and_then(|i| row.children.get(i))
            .map(|c| c.plain().replace("**", "").trim().to_string())
            .unwrap_or_default()
    };
    let at = row.range.start;
    let mut f = Finding::new(String::new(), cell(Some(cols.title)));
    let sev_text = cell(cols.severity);
    f.severity = sev_text
        .split(|c: char| !c.is_alphanumeric())
        .find_map(|w| w.parse().ok())
        .or(sec_sev);
    let cat = cell(cols.category);
    if !cat.is_empty() {
        f.category = Some(cat.as_str().into());
    }
    f.locations = super::head::locations_in_text(&cell(cols.location));
    f.explanation = cell(cols.detail);
    let fix = cell(cols.fix);
    if !fix.is_empty() {
        f.fix = Some(fix);
    }
    let own = Some(cell(cols.id)).filter(|s| !s.is_empty());
    let own_num = own
        .as_deref()
        .and_then(|s| s.trim_start_matches('#').parse::<u64>().ok());
    let own_id = own.filter(|s| s.parse::<u64>().is_err() && !s.starts_with('#'));
    finish_finding(f, own_id, own_num, sec_sev, position, at, ctx)
}

fn looks_like_finding(h: &Head, number: Option<u64>, prev_number: Option<u64>) -> bool {
    if h.id.is_some() || h.severity.is_some() {
        return true;
    }
    if !h.bold {
        return false;
    }
    if !h.locations.is_empty() {
        return true;
    }
    if let (Some(n), Some(p)) = (number, prev_number)
        && n == p + 1
    {
        return true;
    }
    !h.colon_after_bold
}

/// One piece of a finding's body.
enum Piece {
    Text(String),
    Code(Option<String>, String),
    Heading(String),
}

fn pieces_of_block(b: &Block, ctx: &Ctx, out: &mut Vec<Piece>) {
    match &b.kind {
        BlockKind::Code { lang, text, .. } => out.push(Piece::Code(lang.clone(), text.clone())),
        BlockKind::Rule => {}
        BlockKind::Heading(_) => out.push(Piece::Heading(b.plain())),
        _ => out.push(Piece::Text(ctx.src(&b.range))),
    }
}

/// The rest of a paragraph after its first line.
fn rest_lines_src(p: &Block, ctx: &Ctx) -> Option<String> {
    let lines = p.lines();
    let second = lines.get(1)?.first()?;
    let s = ctx.src(&(second.range.start..p.range.end));
    (!s.trim().is_empty()).then_some(s)
}

fn is_diff(lang: &Option<String>, code: &str) -> bool {
    if let Some(l) = lang {
        return l.eq_ignore_ascii_case("diff") || l.eq_ignore_ascii_case("patch");
    }
    let mut changed = false;
    for l in code.lines().filter(|l| !l.is_empty()) {
        if l.starts_with("@@") || l.starts_with('+') || l.starts_with('-') {
            changed = true;
        } else if !l.starts_with(' ') {
            return false;
        }
    }
    changed
}

/// `**Severity:** important`, `Category: gap`, `Location: \`a.go:3\``: labelled lines some
/// reviewers write under a finding's title. They fill what the first line did not say and are
/// removed from the text.
fn take_fields(text: &str, f: &mut Finding) -> String {
    static FIELD_RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)^\s*(?:[-*]\s+)?\*{0,2}(severity|category|locations?|files?|where)\*{0,2}\s*:\s*\*{0,2}\s*(.*?)\s*$",
        )
        .unwrap()
    });
    if !text.contains(':') {
        return text.to_string();
    }
    let mut kept: Vec<&str> = Vec::new();
    for line in text.lines() {
        let Some(c) = FIELD_RE.captures(line) else {
            kept.push(line);
            continue;
        };
        let value = c[2].trim_matches('*').trim();
        let used = match c[1].to_ascii_lowercase().as_str() {
            "severity" => match value
                .split(|ch: char| !ch.is_alphanumeric())
                .find_map(|w| w.parse::<Severity>().ok())
            {
                Some(sev) => {
                    f.severity.get_or_insert(sev);
                    true
                }
                None => false,
            },
            "category" if !value.is_empty() => {
                if f.category.is_none() {
                    f.category = Some(value.trim_matches('`').into());
                }
                true
            }
            _ => {
                let locs = super::head::locations_in_text(value);
                let any = !locs.is_empty();
                for l in locs {
                    if !f.locations.contains(&l) {
                        f.locations.push(l);
                    }
                }
                any
            }
        };
        if !used {
            kept.push(line);
        }
    }
    kept.join("\n")
}

/// `Fix: text`, `**Fix:** text`, `Suggested fix — text`: the text after the label.
fn strip_fix_label(s: &str) -> Option<String> {
    let t = s.trim_start();
    let unbold = t.trim_start_matches(['*', '_']);
    let lower = unbold.to_ascii_lowercase();
    for label in [
        "fix",
        "suggested fix",
        "proposed fix",
        "recommended fix",
        "remediation",
        "recommendation",
    ] {
        if let Some(after) = lower.strip_prefix(label) {
            let after_trim = after.trim_start_matches(['*', '_']);
            if after_trim.starts_with(':')
                || after_trim.starts_with(" —")
                || after_trim.starts_with(" -")
            {
                let cut = unbold.len() - after_trim.len();
                let rest = unbold[cut..]
                    .trim_start_matches([':', ' ', '—', '-'])
                    .trim_start_matches(['*', '_'])
                    .trim_start_matches([':', ' '])
                    .trim();
                return Some(rest.to_string());
            }
        }
    }
    None
}

fn fenced(lang: &Option<String>, code: &str) -> String {
    format!(
        "```{}\n{}```",
        lang.as_deref().unwrap_or(""),
        if code.ends_with('\n') {
            code.to_string()
        } else {
            format!("{code}\n")
        }
    )
}

fn build_finding(d: Draft, sec_sev: Option<Severity>, position: usize, ctx: &mut Ctx) -> Finding {
    let at = d.start.start();
    let mut pieces: Vec<Piece> = Vec::new();
    match d.start {
        Unit::Block(b) if matches!(b.kind, BlockKind::Paragraph) => {
            if let Some(s) = rest_lines_src(b, ctx) {
                pieces.push(Piece::Text(s));
            }
        }
        Unit::Block(_) => {}
        Unit::Item { item, .. } => {
            let mut children = item.children.iter();
            if let Some(first) = item.first_paragraph() {
                children.next();
                if let Some(s) = rest_lines_src(first, ctx) {
                    pieces.push(Piece::Text(s));
                }
            }
            for c in children {
                pieces_of_block(c, ctx, &mut pieces);
            }
        }
        Unit::Fragment { lines, range } => {
            if let Some(second) = lines.get(1).and_then(|l| l.first()) {
                pieces.push(Piece::Text(ctx.src(&(second.range.start..range.end))));
            }
        }
    }
    for u in &d.body {
        match u {
            Unit::Block(b) => pieces_of_block(b, ctx, &mut pieces),
            Unit::Item { item, list, .. } => {
                let marker = match list.kind {
                    BlockKind::List { start: Some(_) } => "1. ",
                    _ => "- ",
                };
                pieces.push(Piece::Text(format!("{marker}{}", item_text(item, ctx))));
            }
            Unit::Fragment { range, .. } => pieces.push(Piece::Text(ctx.src(range))),
        }
    }

    let head = d.head;
    let mut finding = Finding::new(String::new(), head.title.clone());
    finding.locations = head.locations.clone();
    finding.severity = head.severity;
    finding.category = head.category.clone();
    let mut expl: Vec<String> = Vec::new();
    let mut fix: Vec<String> = Vec::new();
    let mut diffs: Vec<String> = Vec::new();
    let mut seen_fix = false;
    if !head.rest.is_empty() && !head.rest.starts_with('[') {
        expl.push(head.rest.clone());
    }
    for p in pieces {
        match p {
            Piece::Code(lang, code) => {
                if is_diff(&lang, &code) {
                    diffs.push(code);
                } else if !seen_fix && finding.code.is_none() {
                    finding.code = Some(CodeSnippet {
                        language: lang,
                        code,
                    });
                } else if seen_fix {
                    fix.push(fenced(&lang, &code));
                } else {
                    expl.push(fenced(&lang, &code));
                }
            }
            Piece::Text(s) => {
                let s = if seen_fix {
                    s
                } else {
                    take_fields(&s, &mut finding)
                };
                if let Some(rest) = strip_fix_label(&s) {
                    seen_fix = true;
                    if !rest.is_empty() {
                        fix.push(rest);
                    }
                } else if seen_fix {
                    fix.push(s);
                } else {
                    expl.push(s);
                }
            }
            Piece::Heading(h) => {
                if strip_fix_label(&format!("{h}:")).is_some_and(|r| r.is_empty()) {
                    seen_fix = true;
                } else if seen_fix {
                    fix.push(h);
                } else {
                    expl.push(h);
                }
            }
        }
    }
    // A severity note written after the body: `... (important, gap)`.
    if finding.severity.is_none() {
        for part in fix.iter_mut().rev().chain(expl.iter_mut().rev()) {
            if let Some((sev, cat, range)) = find_trailing_severity(part) {
                finding.severity = Some(sev);
                if finding.category.is_none() {
                    finding.category = cat;
                }
                let mut t = part.trim_end().trim_end_matches('.').trim_end().to_string();
                if range.end <= t.len() {
                    t.replace_range(range, "");
                }
                *part = t.trim().to_string();
                break;
            }
        }
    }
    expl.retain(|s| !s.trim().is_empty());
    fix.retain(|s| !s.trim().is_empty());
    finding.explanation = expl.join("\n\n");
    if !fix.is_empty() {
        finding.fix = Some(fix.join("\n\n"));
    }
    if !diffs.is_empty() {
        finding.fix_diff = Some(diffs.join("\n"));
    }
    if finding.severity.is_none() {
        finding.severity = sec_sev;
    }

    finish_finding(
        finding,
        head.id.clone(),
        d.number,
        sec_sev,
        position,
        at,
        ctx,
    )
}

/// Gives a finding its id (the reviewer's own, else section letter + number or position;
/// unique in the review) and warns about what it lacks.
fn finish_finding(
    mut finding: Finding,
    own_id: Option<String>,
    number: Option<u64>,
    sec_sev: Option<Severity>,
    position: usize,
    at: usize,
    ctx: &mut Ctx,
) -> Finding {
    let letter = sec_sev
        .or(finding.severity)
        .map(Severity::id_prefix)
        .unwrap_or('F');
    let mut id = match (own_id, number) {
        (Some(own), _) => own,
        (None, Some(n)) => format!("{letter}{n}"),
        (None, None) => {
            // Unnumbered: the next free number of the section's letter.
            let mut n = position;
            while ctx.used_ids.contains(&format!("{letter}{n}")) {
                n += 1;
            }
            format!("{letter}{n}")
        }
    };
    if ctx.used_ids.contains(&id) {
        let original = id.clone();
        let mut k = 2;
        while ctx.used_ids.contains(&id) {
            id = format!("{original}-{k}");
            k += 1;
        }
        let line = ctx.line(at);
        ctx.warn(
            at,
            format!("line {line}: finding id {original} is used twice; this one is {id}"),
        );
    }
    ctx.used_ids.insert(id.clone());
    finding.id = id;

    let line = ctx.line(at);
    if finding.severity.is_none() {
        ctx.warn(
            at,
            format!(
                "line {line}: finding {} has no severity: no `(severity, category)` note and no \
                 severity section",
                finding.id
            ),
        );
    }
    if finding.title.trim().is_empty() {
        ctx.warn(
            at,
            format!("line {line}: finding {} has no title", finding.id),
        );
    }
    if finding.explanation.is_empty()
        && finding.code.is_none()
        && finding.fix.is_none()
        && finding.fix_diff.is_none()
    {
        ctx.warn(
            at,
            format!(
                "line {line}: finding {} has a title but no body",
                finding.id
            ),
        );
    }
    finding
}

fn read_preamble(chunk: &Chunk, ctx: &mut Ctx, preamble: &mut Vec<(usize, String)>) {
    // Findings written with no section around them still count when their first line carries
    // a `(severity, category)` note.
    let before = ctx.review.findings.len();
    read_findings(chunk, None, true, ctx);
    let found_any = ctx.review.findings.len() > before;
    // Units that belong to a finding were consumed; keep the ones before the first.
    let first_start = if found_any {
        first_finding_start(chunk)
    } else {
        usize::MAX
    };
    for u in &chunk.units {
        if u.start() >= first_start {
            break;
        }
        let s = unit_src(u, ctx);
        if let Unit::Block(b) = u
            && let BlockKind::Paragraph = b.kind
            && let Some((bold, after, _)) = b.lines().first().and_then(|l| bold_lead(l))
            && norm(&bold) == "verdict"
        {
            ctx.review.verdict = Some(clean_verdict(strip_sep(&after)));
            continue;
        }
        if !s.trim().is_empty() {
            preamble.push((u.start(), s));
        }
    }
}

fn first_finding_start(chunk: &Chunk) -> usize {
    chunk
        .units
        .iter()
        .find(|u| {
            first_line(u).is_some_and(|l| {
                let h = parse_head(&l);
                h.severity.is_some() && (h.bold || h.id.is_some())
            })
        })
        .map(|u| u.start())
        .unwrap_or(usize::MAX)
}

fn read_verdict(chunk: &Chunk, ctx: &mut Ctx) {
    let mut units = chunk.units.iter();
    if let Some(u) = units.next() {
        let s = unit_src(u, ctx);
        ctx.review.verdict = Some(clean_verdict(&s.replace("**", "")));
    }
    for u in units {
        let s = unit_src(u, ctx);
        ctx.keep_unparsed(u.start(), s, "text after the verdict");
    }
}

fn read_observations(chunk: &Chunk, kind: ObservationKind, ctx: &mut Ctx) {
    let mut obs: Vec<Observation> = Vec::new();
    let mut open_title_only = false;
    for u in &chunk.units {
        let src = unit_src(u, ctx);
        if is_none_text(&src) {
            continue;
        }
        match u {
            Unit::Item { item, .. } => {
                let head = first_line(u).map(|l| parse_head(&l)).unwrap_or_default();
                let mut text = if head.bold {
                    head.rest_full.clone()
                } else {
                    strip_scopes(&first_line(u).map(|l| plain(&l)).unwrap_or_default())
                        .trim()
                        .to_string()
                };
                let mut children = item.children.iter();
                if let Some(p) = item.first_paragraph() {
                    children.next();
                    if let Some(s) = rest_lines_src(p, ctx) {
                        push_line(&mut text, &s);
                    }
                }
                for c in children {
                    push_line(&mut text, &ctx.src(&c.range));
                }
                open_title_only = text.is_empty();
                obs.push(Observation {
                    kind,
                    title: head.bold.then(|| head.title.clone()),
                    text,
                    scopes: head.scopes.clone(),
                });
            }
            Unit::Block(b) if matches!(b.kind, BlockKind::Heading(_)) => {
                let head = first_line(u).map(|l| parse_head(&l)).unwrap_or_default();
                obs.push(Observation {
                    kind,
                    title: Some(head.title.clone()),
                    text: String::new(),
                    scopes: head.scopes.clone(),
                });
                open_title_only = true;
            }
            Unit::Block(b) if !matches!(b.kind, BlockKind::Paragraph) => {
                // Code, tables, quotes: part of the observation before them.
                match obs.last_mut() {
                    Some(o) => push_line(&mut o.text, &src),
                    None => obs.push(Observation {
                        kind,
                        title: None,
                        text: src,
                        scopes: Vec::new(),
                    }),
                }
            }
            _ => {
                let line = first_line(u).unwrap_or_default();
                let head = parse_head(&line);
                let rest_src = match u {
                    Unit::Block(b) => rest_lines_src(b, ctx),
                    Unit::Fragment { lines, range } => lines
                        .get(1)
                        .and_then(|l| l.first())
                        .map(|i| ctx.src(&(i.range.start..range.end))),
                    _ => None,
                };
                if head.bold && !is_label(&head) {
                    let mut text = head.rest_full.clone();
                    if let Some(r) = rest_src {
                        push_line(&mut text, &r);
                    }
                    open_title_only = text.is_empty();
                    obs.push(Observation {
                        kind,
                        title: Some(head.title.clone()),
                        text,
                        scopes: head.scopes.clone(),
                    });
                } else if open_title_only && let Some(o) = obs.last_mut() {
                    o.text = src;
                    for s in find_scopes(&plain(&line)) {
                        if !o.scopes.contains(&s) {
                            o.scopes.push(s);
                        }
                    }
                    open_title_only = false;
                } else {
                    obs.push(Observation {
                        kind,
                        title: None,
                        text: src.clone(),
                        scopes: find_scopes(&plain(&line)),
                    });
                }
            }
        }
    }
    ctx.review.observations.extend(obs);
}

fn push_line(into: &mut String, s: &str) {
    let s = s.trim();
    if s.is_empty() {
        return;
    }
    if !into.is_empty() {
        into.push('\n');
    }
    into.push_str(s);
}

/// Paragraphs are the summary; list items are the gaps. When there are several lists, the
/// gaps are the lists introduced as untested or ranked by risk.
fn read_testing(chunk: &Chunk, ctx: &mut Ctx) {
    // Group consecutive items of one list.
    let mut groups: Vec<(Option<String>, Vec<String>)> = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    let mut last_para: Option<String> = None;
    let mut last_list: Option<*const Block> = None;
    for u in &chunk.units {
        match u {
            Unit::Item { item, list, .. } => {
                let t = item_text(item, ctx);
                if last_list == Some(*list as *const Block)
                    && let Some(g) = groups.last_mut()
                {
                    g.1.push(t);
                } else {
                    groups.push((last_para.clone(), vec![t]));
                    last_list = Some(*list as *const Block);
                }
            }
            _ => {
                let s = unit_src(u, ctx);
                if is_none_text(&s) {
                    continue;
                }
                last_list = None;
                last_para = Some(s.clone());
                summary.push(s);
            }
        }
    }
    let gap_words = [
        "untested",
        "gap",
        "missing",
        "not tested",
        "ranked",
        "risk",
        "uncovered",
    ];
    let is_gap_intro = |p: &Option<String>| {
        p.as_ref().is_some_and(|p| {
            let l = p.to_lowercase();
            gap_words.iter().any(|w| l.contains(w))
        })
    };
    let use_filter = groups.len() > 1 && groups.iter().any(|g| is_gap_intro(&g.0));
    for (intro, items) in groups {
        if !use_filter || is_gap_intro(&intro) {
            ctx.review.testing.gaps.extend(items);
        } else {
            summary.push(
                items
                    .iter()
                    .map(|i| format!("- {i}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
    }
    for s in summary {
        push_para(&mut ctx.review.testing.summary, &s);
    }
}

/// One entry per list item or paragraph; `None.` adds nothing.
fn entries(chunk: &Chunk, ctx: &Ctx) -> Vec<String> {
    chunk
        .units
        .iter()
        .map(|u| unit_src(u, ctx))
        .filter(|s| !s.trim().is_empty() && !is_none_text(s))
        .collect()
}

fn read_coverage(chunk: &Chunk, ctx: &mut Ctx) {
    for u in &chunk.units {
        match u {
            Unit::Block(b) if b.kind == BlockKind::Table => {
                for row in &b.children {
                    if row.kind == (BlockKind::Row { head: true }) {
                        continue;
                    }
                    let cells: Vec<String> = row
                        .children
                        .iter()
                        .map(|c| {
                            c.lines()
                                .iter()
                                .map(|l| plain(l))
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .collect();
                    let Some(path) = cells.first() else { continue };
                    let path = path.trim().trim_matches('`').trim().to_string();
                    if path.is_empty() {
                        continue;
                    }
                    let status = cells.get(1..).map(|c| c.join(" | ")).unwrap_or_default();
                    ctx.review.coverage.push(CoverageEntry {
                        path,
                        status: status.trim().to_string(),
                    });
                }
            }
            Unit::Item { item, .. } => {
                if let Some(p) = item.first_paragraph() {
                    let lines = p.lines();
                    if let Some(entry) = lines.first().and_then(|l| coverage_line(l)) {
                        ctx.review.coverage.push(entry);
                    }
                }
            }
            _ => {
                let s = unit_src(u, ctx);
                if is_none_text(&s) {
                    continue;
                }
                let mut any = false;
                if let Unit::Block(b) = u
                    && b.kind == BlockKind::Paragraph
                {
                    for l in b.lines() {
                        if let Some(e) = coverage_line(&l)
                            && l.first().is_some_and(|i| i.kind == InlineKind::Code)
                        {
                            ctx.review.coverage.push(e);
                            any = true;
                        }
                    }
                }
                if !any {
                    ctx.keep_unparsed(u.start(), s, "coverage text that names no file");
                }
            }
        }
    }
}

/// `` `path` — status ``, `` `path`: status ``, `path - status`.
fn coverage_line(line: &[&Inline]) -> Option<CoverageEntry> {
    let first = line
        .iter()
        .find(|i| !(i.kind == InlineKind::Text && i.text.trim().is_empty()))?;
    let (path, rest) = if first.kind == InlineKind::Code {
        let idx = line.iter().position(|i| std::ptr::eq(*i, *first))?;
        (first.text.clone(), plain(&line[idx + 1..]))
    } else {
        let p = plain(line);
        let cut = [" — ", " – ", " - ", ": "]
            .iter()
            .filter_map(|s| p.find(s).map(|i| (i, s.len())))
            .min()?;
        (p[..cut.0].to_string(), p[cut.0..].to_string())
    };
    let path = path.trim().trim_matches('*').trim().to_string();
    if path.is_empty() {
        return None;
    }
    let status = strip_sep(&rest).replace("**", "").trim().to_string();
    Some(CoverageEntry { path, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_match_across_spellings() {
        assert_eq!(
            classify("#### Critical Issues"),
            Some(Sec::Findings(Some(Severity::Critical)))
        );
        assert_eq!(
            classify("Suggestions (3)"),
            Some(Sec::Findings(Some(Severity::Suggestion)))
        );
        assert_eq!(classify("2. Findings"), Some(Sec::Findings(None)));
        assert_eq!(classify("Coverage Summary:"), Some(Sec::Coverage));
        assert_eq!(classify("PR #236 Review: Implement"), None);
    }

    #[test]
    fn fix_label_forms() {
        assert_eq!(strip_fix_label("Fix: do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("**Fix:** do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("**Fix**: do x").as_deref(), Some("do x"));
        assert_eq!(strip_fix_label("Fix:").as_deref(), Some(""));
        assert_eq!(strip_fix_label("Fixing this is hard"), None);
    }

    #[test]
    fn none_text() {
        assert!(is_none_text("None."));
        assert!(is_none_text("**None.**"));
        assert!(!is_none_text("None of the callers check this."));
    }
}
