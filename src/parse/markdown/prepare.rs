//! Before the Markdown is parsed: undo the ways a whole review gets hidden from a Markdown
//! parser, and repair the blocks that would swallow the rest of it. Every step keeps the line
//! numbers of the original (or records what it inserted), so warnings still point into the
//! review as the agent wrote it.
//!
//! - [`normalize`]: a review indented as a whole (four spaces: an indented code block to
//!   CommonMark) is dedented; a review wrapped in one outer fence (```` ```markdown ````, even
//!   when it has inner fences of the same length) is unwrapped. Both keep every line where it
//!   is.
//! - [`repair`]: a code fence that is never closed is closed before the first heading inside
//!   it; an HTML comment (`<!--`) or `<pre>`/`<script>`/`<style>`/`<textarea>` block that is
//!   never terminated is terminated before its first blank line or heading. CommonMark would
//!   otherwise read everything after them as code or HTML.
//! - [`separate_finding_starts`]: a blank line before `2. **Title**` written right after a
//!   paragraph line.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag};

use super::super::blocks::{LineIndex, options};
use super::super::lines::{
    self, atx_heading, fence as fence_line, with_offsets as lines_with_offsets,
};
use crate::types::ParseWarning;

/// Dedents a review indented as a whole, and unwraps a review wrapped in one outer fence.
/// Line count and line order are kept: removed indentation and wrapper lines leave their
/// newlines behind.
pub(super) fn normalize(text: &str) -> Cow<'_, str> {
    let dedented = dedent(text);
    match unwrap_fence(&dedented) {
        Some(inner) => Cow::Owned(dedent(&inner).into_owned()),
        None => dedented,
    }
}

/// Removes the indentation every non-blank line shares, when it is four columns or more (less
/// does not change how CommonMark reads the text). A tab counts as four columns when every
/// non-blank line starts with one.
fn dedent(text: &str) -> Cow<'_, str> {
    let non_blank = || text.lines().filter(|l| !l.trim().is_empty());
    if non_blank().next().is_none() {
        return Cow::Borrowed(text);
    }
    let (unit, width) = if non_blank().all(|l| l.starts_with('\t')) {
        ('\t', 1)
    } else {
        let min = non_blank()
            .map(|l| l.len() - l.trim_start_matches(' ').len())
            .min()
            .unwrap_or(0);
        (' ', min)
    };
    if width == 0 || (unit == ' ' && width < 4) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let strip = line
            .bytes()
            .take(width)
            .take_while(|b| *b == unit as u8)
            .count();
        out.push_str(&line[strip..]);
    }
    Cow::Owned(out)
}

/// The text of a review wrapped in one outer fence, with the wrapper's two lines left empty.
/// The wrapper opens on the first non-blank line (```` ```markdown ````, ```` ````md ````; a
/// bare or `text` fence when the text inside starts like a review, with `#` or `**`) and closes
/// at the last fence line of its character at least as long, so inner fences of the same
/// length do not end it.
fn unwrap_fence(text: &str) -> Option<String> {
    let mut lines = lines_with_offsets(text).filter(|(_, l)| !l.trim().is_empty());
    let (open_at, open_line) = lines.next()?;
    let (c, run, info) = fence_line(open_line)?;
    let info = info.trim().to_ascii_lowercase();
    let markdown = matches!(info.as_str(), "markdown" | "md" | "gfm" | "commonmark");
    if !markdown && !matches!(info.as_str(), "" | "text" | "txt" | "plaintext") {
        return None;
    }
    let body_start = open_at + open_line.len();
    let (close_at, close_line) = lines_with_offsets(&text[body_start..])
        .filter(|(_, l)| {
            fence_line(l).is_some_and(|(cc, r, rest)| cc == c && r >= run && rest.trim().is_empty())
        })
        .last()
        .map(|(at, l)| (body_start + at, l))?;
    if !markdown {
        let first = text[body_start..close_at]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())?;
        if !(first.starts_with('#') || first.starts_with("**")) {
            return None;
        }
    }
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..open_at]);
    out.push_str(line_break(open_line));
    out.push_str(&text[body_start..close_at]);
    out.push_str(line_break(close_line));
    out.push_str(&text[close_at + close_line.len()..]);
    Some(out)
}

/// The line break a line ends with (`\n`, `\r\n` or none).
fn line_break(line: &str) -> &str {
    let body = line.trim_end_matches(['\n', '\r']);
    &line[body.len()..]
}

/// What would swallow the rest of the review, and the text that ends it.
struct Problem {
    /// Where the unclosed block opens.
    open: usize,
    /// Where to insert `insert` (the start of a line), if the block can be ended.
    close: Option<usize>,
    insert: String,
    what: &'static str,
}

/// How many bytes [`repair`] may parse in all, as a multiple of the text's length: each repair
/// parses the text after it again, so without a bound a text of many unclosed blocks would
/// cost its length times their number.
const REPARSE_BUDGET: usize = 4;

/// Closes code fences that never close before the first heading inside them, and terminates
/// HTML blocks that never end before their first blank line or heading. Returns the repaired
/// text, the insertions made (offset in the repaired text, length), and a warning per repair
/// with the line in `text`.
pub(super) fn repair(text: &str) -> (String, Vec<(usize, usize)>, Vec<ParseWarning>) {
    let lines = LineIndex::new(text);
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut warnings = Vec::new();
    let mut from = 0;
    let mut budget = REPARSE_BUDGET * text.len() + 64 * 1024;
    loop {
        let rest = &text[from..];
        if rest.len() > budget {
            warnings.push(ParseWarning {
                line: Some(lines.line(from)),
                message: "too many unclosed code fences or HTML blocks to repair them all; from \
                          this line on the review may be read as code"
                    .into(),
            });
            break;
        }
        budget -= rest.len();
        let Some(p) = first_problem(rest) else {
            break;
        };
        let open_line = lines.line(from + p.open);
        match p.close {
            Some(close) => {
                let at = from + close;
                warnings.push(ParseWarning {
                    line: Some(open_line),
                    message: format!(
                        "{}; read it as closed before line {}",
                        p.what,
                        lines.line(at)
                    ),
                });
                inserts.push((at, p.insert));
                from = at;
            }
            None => {
                warnings.push(ParseWarning {
                    line: Some(open_line),
                    message: format!("{}; everything after it was read as code", p.what),
                });
                break;
            }
        }
    }
    let mut out =
        String::with_capacity(text.len() + inserts.iter().map(|i| i.1.len()).sum::<usize>());
    let mut inserted = Vec::with_capacity(inserts.len());
    let mut last = 0;
    for (at, s) in inserts {
        out.push_str(&text[last..at]);
        inserted.push((out.len(), s.len()));
        out.push_str(&s);
        last = at;
    }
    out.push_str(&text[last..]);
    (out, inserted, warnings)
}

/// The first code fence or HTML block of the text that runs on past where it was meant to end.
fn first_problem(text: &str) -> Option<Problem> {
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => {
                if let Some(p) = open_fence(text, range) {
                    return Some(p);
                }
            }
            Event::Start(Tag::HtmlBlock) => {
                if let Some(p) = open_html(text, range) {
                    return Some(p);
                }
            }
            _ => {}
        }
    }
    None
}

/// The prefix an inserted line needs to stay in the block's container: the opening line's text
/// before the block, with everything but `>` turned into spaces (`1. ```` → three spaces).
fn container_prefix(text: &str, block_start: usize) -> String {
    let line_start = text[..block_start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let lead = &text[line_start..block_start];
    let rest = &text[block_start..];
    let marker = rest.len() - rest.trim_start_matches(' ').len();
    lead.chars()
        .map(|c| if c == '>' { '>' } else { ' ' })
        .chain(std::iter::repeat_n(' ', marker))
        .collect()
}

/// A fenced code block that never closes: it is closed before the first ATX heading line in it.
fn open_fence(text: &str, range: Range<usize>) -> Option<Problem> {
    let src = text.get(range.clone())?;
    let (first, body) = src.split_once('\n').unwrap_or((src, ""));
    let (c, run, _) = fence_line(first.trim_start_matches(['>', ' ']))
        .or_else(|| fence_line(first.trim_start()))?;
    let closed = body
        .trim_end_matches(['\n', '\r'])
        .lines()
        .next_back()
        .is_some_and(|last| {
            let t = last.trim();
            t.len() >= run && t.chars().all(|x| x == c)
        });
    if closed {
        return None;
    }
    let body_start = range.start + first.len() + 1;
    let close = (body_start < range.end)
        .then(|| {
            lines_with_offsets(&text[body_start..range.end])
                .find(|(_, l)| is_atx_heading(l))
                .map(|(at, _)| body_start + at)
        })
        .flatten();
    // A block its list item or quote ended took nothing from the rest of the review.
    if close.is_none() && range.end < text.trim_end().len() {
        return None;
    }
    let prefix = container_prefix(text, range.start);
    Some(Problem {
        open: range.start,
        close,
        insert: format!("{prefix}{}\n", c.to_string().repeat(run)),
        what: "code fence is never closed",
    })
}

/// An HTML block of a kind that ends only at its end marker (`-->`, `</pre>`, ...) that never
/// comes: it is ended before its first blank line or heading.
fn open_html(text: &str, range: Range<usize>) -> Option<Problem> {
    let src = text.get(range.clone())?;
    let start = src.trim_start();
    let lower: String = start
        .chars()
        .take(12)
        .collect::<String>()
        .to_ascii_lowercase();
    let (end, what): (String, &'static str) = if lower.starts_with("<!--") {
        ("-->".into(), "HTML comment `<!--` is never closed")
    } else if let Some(tag) = ["pre", "script", "style", "textarea"].iter().find(|t| {
        lower
            .strip_prefix('<')
            .and_then(|r| r.strip_prefix(**t))
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t', '>', '\n', '\r']))
    }) {
        (
            format!("</{tag}>"),
            match *tag {
                "pre" => "`<pre>` is never closed",
                "script" => "`<script>` is never closed",
                "style" => "`<style>` is never closed",
                _ => "`<textarea>` is never closed",
            },
        )
    } else {
        return None;
    };
    // The end marker may sit on the opening line itself.
    let opener_len = start.len().min(4);
    if contains_ignore_case(&start[opener_len..], &end) {
        return None;
    }
    let (first, _) = src.split_once('\n')?;
    let body_start = range.start + first.len() + 1;
    if body_start >= range.end {
        return None;
    }
    let close = lines_with_offsets(&text[body_start..range.end])
        .find(|(_, l)| l.trim().is_empty() || is_atx_heading(l))
        .map(|(at, _)| body_start + at)?;
    let prefix = container_prefix(text, range.start);
    Some(Problem {
        open: range.start,
        close: Some(close),
        insert: format!("{prefix}{end}\n"),
        what,
    })
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let n = needle.as_bytes();
    haystack
        .as_bytes()
        .windows(n.len())
        .any(|w| w.eq_ignore_ascii_case(n))
}

fn is_atx_heading(line: &str) -> bool {
    atx_heading(line).is_some()
}

/// Puts a blank line before a line that starts a finding (`2. **Title**`, `S2. **Title**`,
/// `**S2. Title**`) right after a paragraph line. In CommonMark such a line does not interrupt
/// a paragraph (only a list starting at 1 does), so without this the finding would be read as
/// the end of the previous finding's explanation and lost. Returns the text and the insertions
/// (the repairs' shifted, plus these), sorted by offset.
pub(super) fn separate_finding_starts(
    work: String,
    inserted: Vec<(usize, usize)>,
) -> (String, Vec<(usize, usize)>) {
    static FINDING_START: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:\d{1,4}[.)]\s+\*\*|[A-Z]{1,3}-?\d{1,4}[.:)]\s+\*\*|\*\*[A-Z]{1,3}-?\d{1,4}[.:)])",
        )
        .expect("the finding-start pattern is valid")
    });
    let mut at_old: Vec<usize> = Vec::new();
    let mut fences = lines::Fences::default();
    let mut previous_is_text = false;
    for (start, line) in lines_with_offsets(&work) {
        if fences.code(line) {
            previous_is_text = false;
            continue;
        }
        let trimmed = line.trim_start_matches(' ');
        let shallow = line.len() - trimmed.len() <= 3;
        if previous_is_text && shallow && FINDING_START.is_match(trimmed) {
            at_old.push(start);
        }
        previous_is_text = !line.trim().is_empty() && !trimmed.starts_with('#');
    }
    if at_old.is_empty() {
        return (work, inserted);
    }
    let mut out = String::with_capacity(work.len() + at_old.len());
    let mut last = 0;
    let mut ours = Vec::with_capacity(at_old.len());
    for (k, &at) in at_old.iter().enumerate() {
        out.push_str(&work[last..at]);
        ours.push((at + k, 1));
        out.push('\n');
        last = at;
    }
    out.push_str(&work[last..]);
    let shift = |old: usize| at_old.partition_point(|&a| a <= old);
    let mut all: Vec<(usize, usize)> = inserted
        .into_iter()
        .map(|(at, len)| (at + shift(at), len))
        .chain(ours)
        .collect();
    all.sort_unstable();
    (out, all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indented_review_is_dedented_line_for_line() {
        let text = "    ## Findings\n\n    1. **A** — `a.rs:1`\n        body\n";
        assert_eq!(
            normalize(text),
            "## Findings\n\n1. **A** — `a.rs:1`\n    body\n"
        );
        // Less than four columns: CommonMark reads it as it is.
        assert!(matches!(normalize("  ## Findings\n"), Cow::Borrowed(_)));
        assert_eq!(normalize("\t## A\n\t\tb\n"), "## A\n\tb\n");
    }

    #[test]
    fn wrapped_review_is_unwrapped_even_with_inner_fences_of_the_same_length() {
        let text = "```markdown\n## Findings\n```go\nx()\n```\nText.\n```\n";
        assert_eq!(normalize(text), "\n## Findings\n```go\nx()\n```\nText.\n\n");
        // A bare fence is a wrapper only around text that starts like a review.
        let code = "```\nlet x = 1;\n```\n";
        assert!(matches!(normalize(code), Cow::Borrowed(_)));
        assert_eq!(normalize("````\n# R\n````"), "\n# R\n");
        // A review that merely starts with a code block is not unwrapped.
        let review = "```go\nx()\n```\n\n## Findings\n";
        assert!(matches!(normalize(review), Cow::Borrowed(_)));
    }

    #[test]
    fn unterminated_comment_and_pre_end_at_the_blank_line() {
        let text = "## A\n\n<!-- note\nmore\n\n## B\n\n<PRE>\nx\n\n## C\n";
        let (work, inserted, warnings) = repair(text);
        assert_eq!(
            work,
            "## A\n\n<!-- note\nmore\n-->\n\n## B\n\n<PRE>\nx\n</pre>\n\n## C\n"
        );
        assert_eq!(inserted, [(21, 4), (40, 7)]);
        let lines: Vec<Option<usize>> = warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [Some(3), Some(8)]);
        assert!(
            warnings[0].message.contains("before line 5"),
            "{warnings:?}"
        );
        // A terminated comment is left alone.
        let ok = "<!-- a\n\nb -->\n\n## B\n";
        assert_eq!(repair(ok).0, ok);
    }

    #[test]
    fn a_fence_in_a_list_item_is_closed_inside_the_item() {
        let text = "1. **A**\n\n   ```go\n   x()\n   ## not a heading of the review\n";
        let (work, _, warnings) = repair(text);
        assert_eq!(
            work,
            "1. **A**\n\n   ```go\n   x()\n   ```\n   ## not a heading of the review\n"
        );
        assert_eq!(warnings.len(), 1);
    }
}
