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
    Block, BlockKind, Inline, InlineKind, LineIndex, dedented, parse_blocks_at, plain,
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
    /// The most findings this review is read for ([`super::MAX_FINDINGS`]).
    max_findings: usize,
    /// Findings met after that many, not built; and where the first of them starts.
    skipped: usize,
    first_skipped: Option<usize>,
}

impl Ctx<'_> {
    /// Whether the review already holds its [`Ctx::max_findings`]: then the finding starting
    /// at `at` is counted as skipped, not built.
    fn full(&mut self, at: usize) -> bool {
        if self.review.findings.len() < self.max_findings {
            return false;
        }
        self.skipped += 1;
        self.first_skipped.get_or_insert(at);
        true
    }

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
    let mut review = read_markdown(agent, text, super::MAX_FINDINGS);
    review.raw = text.to_string();
    review
}

/// [`parse_markdown`] of a text the review then keeps as its raw text, without a copy.
pub fn parse_markdown_owned(agent: &str, text: String) -> Review {
    parse_markdown_owned_limited(agent, text, super::MAX_FINDINGS)
}

/// [`parse_markdown_owned`] reading at most `max_findings` findings.
pub fn parse_markdown_owned_limited(agent: &str, text: String, max_findings: usize) -> Review {
    let mut review = read_markdown(agent, &text, max_findings);
    review.raw = text;
    review
}

/// Reads the review, its first `max_findings` findings; `raw` is left to the caller.
fn read_markdown(agent: &str, text: &str, max_findings: usize) -> Review {
    let mut review = Review {
        agent: agent.to_string(),
        ..Review::default()
    };
    if text.trim().is_empty() {
        review.warnings.push(ParseWarning {
            line: Some(1),
            message: "the review is empty: the agent wrote nothing to parse".into(),
        });
        review.not_a_review = Some(super::NOT_A_REVIEW.to_string());
        return review;
    }
    let base = prepare::normalize(text);
    let prepared = prepare::segment(&base);
    let work: &str = &prepared.work;
    let mut ctx = Ctx {
        text: work,
        // `base` has the lines of `text`, one for one.
        lines: LineIndex::new(&base),
        inserted_before: std::iter::once(0)
            .chain(prepared.inserted.iter().scan(0, |sum, (_, len)| {
                *sum += len;
                Some(*sum)
            }))
            .collect(),
        inserted: prepared.inserted,
        review,
        ids: Default::default(),
        max_findings,
        skipped: 0,
        first_skipped: None,
    };
    // Warnings that explain what follows them: blocks that run on, nesting too deep.
    let mut first_warnings: Vec<ParseWarning> = Vec::new();
    let mut too_deep_seen = false;
    let mut splitter = Splitter::new();
    for part in &prepared.parts {
        if ctx.review.findings.len() >= ctx.max_findings {
            // A flood: what follows is not read (the raw text keeps it).
            ctx.first_skipped.get_or_insert(part.range.start);
            break;
        }
        let (blocks, too_deep) = parse_blocks_at(&work[part.range.clone()], part.range.start);
        if let Some(at) = too_deep
            && !std::mem::replace(&mut too_deep_seen, true)
        {
            first_warnings.push(ParseWarning {
                line: Some(ctx.line(at)),
                message: format!(
                    "blocks nested more than {} deep were read as one block",
                    super::blocks::MAX_DEPTH
                ),
            });
        }
        if let Some(w) = open_block_warning(&blocks, part, &ctx) {
            first_warnings.push(w);
        }
        for b in blocks {
            splitter.block(b, &mut ctx);
        }
    }
    let (preamble, any_section, layout_section) = splitter.finish(&mut ctx);
    // Text before the first section: the summary when the review has none, else unparsed.
    if !preamble.is_empty() {
        let pre: Vec<&str> = preamble.iter().map(|(_, s)| s.as_str()).collect();
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
    if !any_section && ctx.review.findings.is_empty() {
        ctx.review.warnings.push(ParseWarning {
            line: Some(1),
            message: "no review sections found (Findings, Critical Issues, ...): the whole text \
                      was read as the summary"
                .into(),
        });
    }
    // Nothing of the layout (a config file, an error page, a chat answer): not a review.
    if !layout_section && ctx.review.findings.is_empty() && ctx.review.verdict.is_none() {
        ctx.review.not_a_review = Some(super::NOT_A_REVIEW.to_string());
    }
    first_warnings.extend(flood_warning(&ctx));
    ctx.review.warnings.splice(0..0, first_warnings);
    ctx.review
}

/// Where reading stopped at the findings cap, when it did: a flood, whose rest the raw review
/// keeps.
fn flood_warning(ctx: &Ctx<'_>) -> Option<ParseWarning> {
    let at = ctx.first_skipped?;
    let more = if ctx.skipped > 0 {
        format!(
            " ({} more findings were met before reading stopped)",
            ctx.skipped
        )
    } else {
        String::new()
    };
    Some(ParseWarning {
        line: Some(ctx.line(at)),
        message: format!(
            "the review holds more than {} findings: reading stopped here{more}; so many is a flood, not one reviewer's reading of a change, and the raw review keeps the rest",
            ctx.max_findings
        ),
    })
}

/// The warning for a part cut where a code fence or HTML block that never ends would have run
/// on (see [`prepare::segment`]), or for a code fence that runs to the end of the review.
fn open_block_warning(blocks: &[Block], part: &prepare::Part, ctx: &Ctx) -> Option<ParseWarning> {
    use prepare::PartEnd;
    if part.end == PartEnd::Block {
        return None;
    }
    let end = part.range.start + ctx.text[part.range.clone()].trim_end().len();
    let mut stack: Vec<&Block> = blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        let runs_on = b.range.end >= end;
        let message = match (&b.kind, part.end) {
            (
                BlockKind::Code {
                    fenced: true,
                    closed: false,
                    ..
                },
                PartEnd::Text,
            ) if runs_on => {
                "code fence is never closed; everything after it was read as code".to_string()
            }
            (
                BlockKind::Code {
                    fenced: true,
                    closed: false,
                    ..
                },
                PartEnd::OpenFence,
            ) if runs_on => {
                format!(
                    "code fence is never closed; read it as closed before the heading at line {}",
                    ctx.line(part.range.end)
                )
            }
            (BlockKind::Html, PartEnd::OpenHtml) if runs_on => {
                let opener = ctx.text[b.range.clone()].trim_start();
                let what = if opener.starts_with("<!--") {
                    "HTML comment `<!--`".to_string()
                } else {
                    let tag: String = opener
                        .chars()
                        .skip(1)
                        .take_while(char::is_ascii_alphabetic)
                        .collect();
                    format!("`<{}>`", tag.to_ascii_lowercase())
                };
                format!(
                    "{what} is never closed; read it as closed before line {}",
                    ctx.line(part.range.end)
                )
            }
            _ => {
                stack.extend(b.children.iter().rev());
                continue;
            }
        };
        return Some(ParseWarning {
            line: Some(ctx.line(b.range.start)),
            message,
        });
    }
    None
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
fn first_line<'u, 'a>(u: &'u Unit<'a>) -> Option<Vec<&'u Inline<'a>>> {
    nth_line(u, 0)
}

/// The second line of a unit's first paragraph: where some reviewers put a finding's location.
fn second_line<'u, 'a>(u: &'u Unit<'a>) -> Option<Vec<&'u Inline<'a>>> {
    nth_line(u, 1)
}

fn nth_line<'u, 'a>(u: &'u Unit<'a>, n: usize) -> Option<Vec<&'u Inline<'a>>> {
    match u {
        Unit::Block(b) => match b.kind {
            BlockKind::Paragraph => b.line(n),
            BlockKind::Heading(_) if n == 0 => b.line(0),
            _ => None,
        },
        Unit::Item { item, .. } => item.first_paragraph().and_then(|p| p.line(n)),
        Unit::Fragment { lines, .. } => lines.get(n).map(|l| l.iter().collect()),
    }
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
    fn text_with_nothing_of_the_layout_is_not_a_review() {
        let not = |text: &str| parse_markdown("a", text).not_a_review;
        let reason = Some(crate::parse::NOT_A_REVIEW.to_string());
        assert_eq!(
            not("[package]\nname = \"x\"\n# a comment\nversion = 1\n"),
            reason
        );
        assert_eq!(not("<html><h1>502 Bad Gateway</h1></html>\n"), reason);
        assert_eq!(not("Looks fine to me.\n"), reason);
        assert_eq!(not(""), reason);
        assert_eq!(not("## Unknown\n\ntext\n"), reason);
        // Any part of the layout makes it a review, however short.
        assert_eq!(not("**Verdict**: Approve\n"), None);
        assert_eq!(not("## Executive Summary\n\nFine.\n"), None);
        assert_eq!(not("## Findings\n\nNone.\n"), None);
        assert_eq!(not("1. **Bug** — `a.rs:1` (important, regression)\n"), None);
    }

    #[test]
    fn none_text() {
        assert!(is_none_text("None."));
        assert!(is_none_text("**None.**"));
        assert!(!is_none_text("None of the callers check this."));
    }
}
