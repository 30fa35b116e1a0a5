//! A tolerant reader of Markdown raw reviews.
//!
//! Reviewers are asked for one layout but drift from it: sections as `#`..`####` headings or as
//! bold paragraphs (`**Critical Issues**`), findings numbered or not, ids inside or before the
//! bold title, the `(severity, category)` note on the first line or at the end of the body,
//! coverage as a table or as bullets. The reader works in two passes over pulldown-cmark blocks:
//!
//! 1. `sections`: cuts the document into chunks, one per recognised section name (the name
//!    decides, not the heading level), keeping text before the first section as preamble;
//! 2. each chunk is read by the function of its section: `findings` for the findings sections,
//!    `notes` for the summary, observations, testing, documentation, limitations and coverage.
//!
//! What fits nowhere is kept verbatim in [`Review::unparsed`] and named in a warning with its
//! line, so nothing a reviewer wrote is dropped silently.

use std::ops::Range;

use super::blocks::{
    Block, BlockKind, Inline, InlineKind, LineIndex, dedented, parse_blocks_checked, plain,
};
use super::head::{FindingHead, find_scopes, find_trailing_severity, parse_head, strip_scopes};
use crate::types::{
    CodeSnippet, CoverageEntry, Finding, Observation, ObservationKind, ParseWarning, Review,
    Severity,
};

mod findings;
mod notes;
mod prepare;
mod sections;

use findings::*;
use notes::*;
use sections::*;

/// Shared state of one parse: the (possibly repaired) text, line numbers of the original, and
/// the review being filled.
struct Ctx<'t> {
    text: &'t str,
    lines: LineIndex,
    /// Bytes inserted into `text` to close unterminated fences: (offset in `text`, length).
    inserted: Vec<(usize, usize)>,
    /// Prefix sums of the inserted lengths, one more entry than `inserted`.
    inserted_before: Vec<usize>,
    review: Review,
    ids: super::ids::IdAllocator,
}

impl Ctx<'_> {
    /// The 1-based line in the original review of an offset in the working text.
    fn line(&self, offset: usize) -> usize {
        // `inserted` is sorted by offset; `inserted_before[k]` is the length of its first k.
        let k = self.inserted.partition_point(|(at, _)| *at <= offset);
        self.lines
            .line(offset.saturating_sub(self.inserted_before[k]))
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
        self.warn(offset, format!("{why}; the text is kept in `unparsed`"));
        self.review.unparsed.push(text);
    }
}

/// Whether a heading names a section of the review layout (`Findings`, `Coverage Summary`, ...).
pub(crate) fn is_section_name(name: &str) -> bool {
    classify(name).is_some()
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
    let base = prepare::normalize(text);
    let (work, inserted, repair_warnings) = prepare::repair(&base);
    let (work, inserted) = prepare::separate_finding_starts(work, inserted);
    review.warnings.extend(repair_warnings);
    let (blocks, too_deep) = parse_blocks_checked(&work);
    let mut ctx = Ctx {
        text: &work,
        // `base` has the lines of `text`, one for one.
        lines: LineIndex::new(&base),
        inserted_before: std::iter::once(0)
            .chain(inserted.iter().scan(0, |sum, (_, len)| {
                *sum += len;
                Some(*sum)
            }))
            .collect(),
        inserted,
        review,
        ids: Default::default(),
    };
    if let Some(at) = too_deep {
        ctx.warn(
            at,
            format!(
                "blocks nested more than {} deep were read as one block",
                super::blocks::MAX_DEPTH
            ),
        );
    }
    let chunks = split_sections(&blocks, &mut ctx);
    let mut preamble: Vec<(usize, String)> = Vec::new();
    for chunk in &chunks {
        match &chunk.sec {
            Sec::Preamble => read_preamble(chunk, &mut ctx, &mut preamble),
            Sec::Findings(sev) => {
                read_findings(chunk, *sev, false, &mut ctx);
            }
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
                // "No unresolved review comments." says the section is empty.
                let e = entries(chunk, &ctx).into_iter().filter(|s| {
                    !s.trim_start_matches(['*', '_'])
                        .to_ascii_lowercase()
                        .starts_with("no unresolved")
                });
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

/// The second line of a unit's first paragraph: where some reviewers put a finding's location.
fn second_line<'a>(u: &Unit<'a>) -> Option<Vec<&'a Inline>> {
    match u {
        Unit::Block(b) if b.kind == BlockKind::Paragraph => {
            split_lines_owned(&b.inlines).into_iter().nth(1)
        }
        Unit::Item { item, .. } => item
            .first_paragraph()
            .and_then(|p| split_lines_owned(&p.inlines).into_iter().nth(1)),
        Unit::Fragment { lines, .. } => lines.get(1).cloned(),
        _ => None,
    }
}

fn split_lines_owned(inlines: &[Inline]) -> Vec<Vec<&Inline>> {
    super::blocks::split_lines(inlines)
}

/// The rest of a paragraph after its first line.
fn rest_lines_src(p: &Block, ctx: &Ctx) -> Option<String> {
    rest_lines_src_from(p, ctx, 1)
}

/// The rest of a paragraph from its line `from` (0-based) on.
fn rest_lines_src_from(p: &Block, ctx: &Ctx, from: usize) -> Option<String> {
    let lines = p.lines();
    let second = lines.get(from)?.first()?;
    let s = ctx.src(&(second.range.start..p.range.end));
    (!s.trim().is_empty()).then_some(s)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_right_after_a_paragraph_is_still_a_finding() {
        let text = "### Findings\n#### Important Issues\n\
                    1. **one** — `main.rs:1` (important, regression)\n\
                    ```rust\nlet x = 1;\n```\nBad.\n\
                    2. **two** — `main.rs:2` (important, regression)\n\
                    ```rust\n2. **not a finding, inside code**\n```\nWorse.\n\
                    ## Coverage Summary\nnot a list\n- `main.rs` — Findings 1, 2\n";
        let review = parse_markdown("a", text);
        let titles: Vec<&str> = review.findings.iter().map(|f| f.title.as_str()).collect();
        assert_eq!(titles, ["one", "two"]);
        assert_eq!(review.findings[1].locations[0].start, Some(2));
        assert!(review.findings[1].explanation.contains("Worse."));
        // Line numbers of warnings still point into the original text: "not a list" is line 14
        // of the input, though a blank line was put before line 8 to read it.
        let lines: Vec<Option<usize>> = review.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [Some(14)]);
    }

    #[test]
    fn none_text() {
        assert!(is_none_text("None."));
        assert!(is_none_text("**None.**"));
        assert!(!is_none_text("None of the callers check this."));
    }
}
