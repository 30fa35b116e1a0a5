//! Before the Markdown is parsed: undo the ways a whole review gets hidden from a Markdown
//! parser, and cut the review into parts that are parsed one at a time. Every step keeps the
//! line numbers of the original (or records what it inserted), so warnings still point into the
//! review as the agent wrote it.
//!
//! - [`normalize`]: a review indented as a whole (four spaces: an indented code block to
//!   CommonMark) is dedented; a review wrapped in one outer fence (```` ```markdown ````, even
//!   when it has inner fences of the same length) is unwrapped. Both keep every line where it
//!   is.
//! - [`segment`]: one pass over the lines. It puts a blank line before `2. **Title**` written
//!   right after a paragraph line, and cuts the text into parts at lines where a new top-level
//!   block starts, so the parser's memory follows the part, not the review (a 50 MB review is
//!   read in parts of about 256 KB). A code fence that is never closed ends at the first heading
//!   inside it, and an HTML comment (`<!--`) or `<pre>`, `<script>`, `<style>`, `<textarea>`
//!   block that never ends stops at its first blank line or heading: the text is cut there, so
//!   CommonMark does not read the rest of the review as code or HTML.

use std::borrow::Cow;
use std::ops::Range;

use super::super::lines::{atx_heading, fence as fence_line, with_offsets as lines_with_offsets};

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

/// The size a part grows to before it is cut at the next line that starts a top-level block
/// (not a list item, so a loose list stays one list).
const PART: usize = 256 * 1024;
/// The size from which a part is also cut before a list item.
const PART_LIST: usize = 4 * PART;
/// The size from which a part is cut at any line outside code: a paragraph of a megabyte is
/// no review, and CommonMark parsers hold a paragraph's whole inline structure at once.
const PART_MAX: usize = 4 * PART;

/// The text to parse, cut into parts.
pub(super) struct Prepared<'t> {
    /// The text with the blank lines put before findings.
    pub(super) work: Cow<'t, str>,
    /// What was inserted into `work`: (offset in `work`, length), sorted.
    pub(super) inserted: Vec<(usize, usize)>,
    /// The parts, in order, covering `work`.
    pub(super) parts: Vec<Part>,
}

/// One part of the text, parsed on its own.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Part {
    pub(super) range: Range<usize>,
    /// Why the part ends where it does.
    pub(super) end: PartEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartEnd {
    /// The end of the text.
    Text,
    /// A line where a new top-level block starts anyway.
    Block,
    /// The first heading inside a code fence that is never closed.
    OpenFence,
    /// The first blank line or heading inside an HTML block whose end marker never comes.
    OpenHtml,
}

/// An HTML block that ends only at its end marker (CommonMark's kinds 1 to 5), when the line
/// opens one: the marker it waits for.
fn html_opener(line: &str) -> Option<&'static str> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 || !t.starts_with('<') {
        return None;
    }
    let head: String = t.chars().take(11).collect::<String>().to_ascii_lowercase();
    if head.starts_with("<!--") {
        return Some("-->");
    }
    if head.starts_with("<![cdata[") {
        return Some("]]>");
    }
    if head.starts_with("<?") {
        return Some("?>");
    }
    for (tag, end) in [
        ("pre", "</pre>"),
        ("script", "</script>"),
        ("style", "</style>"),
        ("textarea", "</textarea>"),
    ] {
        if let Some(r) = head[1..].strip_prefix(tag)
            && (r.is_empty() || r.starts_with([' ', '\t', '>', '\n', '\r']))
        {
            return Some(end);
        }
    }
    None
}

/// Whether `haystack` contains `needle`, ignoring ASCII case.
fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let n = needle.as_bytes();
    haystack.len() >= n.len()
        && haystack
            .as_bytes()
            .windows(n.len())
            .any(|w| w.eq_ignore_ascii_case(n))
}

/// The last offset at which `needle` starts in `text`, ignoring ASCII case.
fn last_ignore_case(text: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    let first = n.first()?.to_ascii_lowercase();
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(n.len() - 1))
        .rev()
        .find(|&i| {
            bytes[i].to_ascii_lowercase() == first && bytes[i..i + n.len()].eq_ignore_ascii_case(n)
        })
}

/// A fence that opens a code block, also after list markers and `>` (`1. ```go`).
fn fence_opener(line: &str) -> Option<(char, usize)> {
    if let Some((c, run, _)) = fence_line(line) {
        return Some((c, run));
    }
    let mut rest = line.trim_start_matches(' ');
    for _ in 0..8 {
        let after = if let Some(r) = rest.strip_prefix('>') {
            r
        } else if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
            r
        } else {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest[digits..].strip_prefix(['.', ')']) {
                Some(r) if (1..=9).contains(&digits) => r,
                _ => return None,
            }
        };
        if !after.starts_with([' ', '\t']) && !after.starts_with('`') && !after.starts_with('~') {
            return None;
        }
        rest = after.trim_start_matches([' ', '\t']);
        if let Some((c, run, _)) = fence_line(rest) {
            return Some((c, run));
        }
    }
    None
}

/// A list item's first line: `- x`, `* x`, `+ x`, `1. x`, `1) x`.
fn is_list_item(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    let after = if let Some(r) = t.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        match t[digits..].strip_prefix(['.', ')']) {
            Some(r) if (1..=9).contains(&digits) => r,
            _ => return false,
        }
    };
    after.is_empty() || after.starts_with([' ', '\t', '\n', '\r'])
}

/// Where the code fences that can close a block are: (offset of the line, character, length)
/// of every bare fence line, and from each on, the longest such line of each character.
struct Closers {
    at: Vec<usize>,
    /// `[backtick, tilde]` longest run from this closer to the end.
    longest_after: Vec<[usize; 2]>,
}

impl Closers {
    fn new(text: &str) -> Self {
        let mut lines: Vec<(usize, char, usize)> = lines_with_offsets(text)
            .filter_map(|(at, l)| {
                fence_line(l)
                    .filter(|(_, _, rest)| rest.trim().is_empty())
                    .map(|(c, n, _)| (at, c, n))
            })
            .collect();
        lines.shrink_to_fit();
        let mut longest_after = vec![[0, 0]; lines.len()];
        let mut best = [0usize, 0usize];
        for (k, (_, c, n)) in lines.iter().enumerate().rev() {
            let i = usize::from(*c == '~');
            best[i] = best[i].max(*n);
            longest_after[k] = best;
        }
        Closers {
            at: lines.into_iter().map(|(at, _, _)| at).collect(),
            longest_after,
        }
    }

    /// Whether a fence of `c` and `run` opened before `from` closes at or after it.
    fn closes_after(&self, from: usize, c: char, run: usize) -> bool {
        let k = self.at.partition_point(|&at| at < from);
        self.longest_after
            .get(k)
            .is_some_and(|l| l[usize::from(c == '~')] >= run)
    }
}

/// Reads the text line by line: puts a blank line before findings written right after a
/// paragraph line, and cuts the text into parts (see the module doc).
pub(super) fn segment(text: &str) -> Prepared<'_> {
    let mut seg = Segmenter::new(text);
    for (start, line) in lines_with_offsets(text) {
        seg.line(start, line);
    }
    seg.finish()
}

/// What `segment` is inside of at a line.
enum State {
    Text,
    /// In a code block whose text starts at `at`.
    Fence {
        c: char,
        run: usize,
        at: usize,
    },
    /// In an HTML block waiting for its end marker; whether the marker comes later.
    Html {
        end: &'static str,
        ends: bool,
    },
}

/// The state of `segment`'s one pass over the text.
struct Segmenter<'t> {
    text: &'t str,
    /// Built when a heading inside a code block asks whether the block closes later.
    closers: Option<Closers>,
    /// Where each end marker last occurs, found once per marker.
    last_end: std::collections::HashMap<&'static str, Option<usize>>,
    state: State,
    /// Where a blank line goes in, as offsets in `text`.
    inserts: Vec<usize>,
    /// Where each part but the last ends, as offsets in `text`, and why.
    cuts: Vec<(usize, PartEnd)>,
    part_start: usize,
    previous_blank: bool,
    previous_is_text: bool,
}

impl<'t> Segmenter<'t> {
    fn new(text: &'t str) -> Self {
        Segmenter {
            text,
            closers: None,
            last_end: std::collections::HashMap::new(),
            state: State::Text,
            inserts: Vec::new(),
            cuts: Vec::new(),
            part_start: 0,
            previous_blank: true,
            previous_is_text: false,
        }
    }

    /// One line: the open block takes it, else it may cut a part, get a blank line before
    /// it, and open a block.
    fn line(&mut self, start: usize, line: &str) {
        let blank = line.trim().is_empty();
        let heading = atx_heading(line).is_some();
        let taken = match self.state {
            State::Fence { c, run, at } => self.in_fence(start, line, blank, heading, (c, run, at)),
            State::Html { end, ends } => self.in_html(start, line, blank, heading, (end, ends)),
            State::Text => false,
        };
        if taken {
            return;
        }
        self.cut_at_block(start, line, blank, heading);
        let trimmed = line.trim_start_matches(' ');
        if self.previous_is_text && starts_finding(line, trimmed) {
            self.inserts.push(start);
        }
        self.previous_blank = blank;
        self.previous_is_text = !blank && !trimmed.starts_with('#');
        self.open_block(start, line, trimmed);
    }

    /// A line inside a code block: whether the block takes it. Its closing fence ends it; a
    /// heading in a block that never closes cuts the part there and leaves the block.
    fn in_fence(
        &mut self,
        start: usize,
        line: &str,
        blank: bool,
        heading: bool,
        (c, run, at): (char, usize, usize),
    ) -> bool {
        if fence_line(line)
            .is_some_and(|(lc, lr, rest)| lc == c && lr >= run && rest.trim().is_empty())
        {
            self.close_block();
            return true;
        }
        let text = self.text;
        if !heading
            || self
                .closers
                .get_or_insert_with(|| Closers::new(text))
                .closes_after(at, c, run)
        {
            self.previous_blank = blank;
            return true;
        }
        self.cut(start, PartEnd::OpenFence);
        self.state = State::Text;
        false
    }

    /// A line inside an HTML block: whether the block takes it. Its end marker ends it; in a
    /// block that never ends, a heading or a line after a blank one cuts the part there.
    fn in_html(
        &mut self,
        start: usize,
        line: &str,
        blank: bool,
        heading: bool,
        (end, ends): (&'static str, bool),
    ) -> bool {
        if contains_ignore_case(line, end) {
            self.close_block();
            return true;
        }
        if ends || !(heading || (self.previous_blank && !blank)) {
            self.previous_blank = blank;
            return true;
        }
        self.cut(start, PartEnd::OpenHtml);
        self.state = State::Text;
        false
    }

    fn close_block(&mut self) {
        self.state = State::Text;
        self.previous_blank = false;
        self.previous_is_text = false;
    }

    /// Cuts the part before a top-level block once it is long enough (see the module doc).
    fn cut_at_block(&mut self, start: usize, line: &str, blank: bool, heading: bool) {
        let size = start - self.part_start;
        let top_level = !blank && !line.starts_with([' ', '\t']);
        let block_start = top_level && (self.previous_blank || heading);
        let cut = (size >= PART && block_start && !is_list_item(line))
            || (size >= PART_LIST && block_start)
            || (size >= PART_MAX && !blank);
        if cut {
            self.cut(start, PartEnd::Block);
        }
    }

    fn cut(&mut self, start: usize, end: PartEnd) {
        self.cuts.push((start, end));
        self.part_start = start;
    }

    /// Enters a code block or an HTML block that the line opens.
    fn open_block(&mut self, start: usize, line: &str, trimmed: &str) {
        if let Some((c, run)) = fence_opener(line) {
            self.state = State::Fence {
                c,
                run,
                at: start + line.len(),
            };
            self.previous_is_text = false;
        } else if let Some(end) = html_opener(line)
            && !contains_ignore_case(&trimmed[4.min(trimmed.len())..], end)
        {
            let text = self.text;
            let last = *self
                .last_end
                .entry(end)
                .or_insert_with(|| last_ignore_case(text, end));
            let ends = last.is_some_and(|at| at >= start + line.len());
            self.state = State::Html { end, ends };
            self.previous_is_text = false;
        }
    }

    /// The text with its blank lines put in, and its parts.
    fn finish(self) -> Prepared<'t> {
        let inserts = self.inserts;
        // Offsets in the text with blank lines inserted: each insertion moves what follows it.
        let shifted = |at: usize| at + inserts.partition_point(|&i| i <= at);
        let mut parts = Vec::with_capacity(self.cuts.len() + 1);
        let mut from = 0;
        for (at, end) in &self.cuts {
            let to = shifted(*at);
            if to > from {
                parts.push(Part {
                    range: from..to,
                    end: *end,
                });
                from = to;
            }
        }
        let work = with_blank_lines(self.text, &inserts);
        parts.push(Part {
            range: from..work.len(),
            end: PartEnd::Text,
        });
        let inserted = inserts
            .iter()
            .enumerate()
            .map(|(k, &at)| (at + k, 1))
            .collect();
        Prepared {
            work,
            inserted,
            parts,
        }
    }
}

/// Whether a line starts a finding (`1. **`, `S1. **`, `**S1.`), indented at most three spaces.
fn starts_finding(line: &str, trimmed: &str) -> bool {
    static FINDING_START: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:\d{1,4}[.)]\s+\*\*|[A-Z]{1,3}-?\d{1,4}[.:)]\s+\*\*|\*\*[A-Z]{1,3}-?\d{1,4}[.:)])",
        )
        .expect("the finding-start pattern is valid")
    });
    line.len() - trimmed.len() <= 3 && FINDING_START.is_match(trimmed)
}

/// The text with a newline put in at each offset of `inserts` (sorted).
fn with_blank_lines<'t>(text: &'t str, inserts: &[usize]) -> Cow<'t, str> {
    if inserts.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + inserts.len());
    let mut last = 0;
    for &at in inserts {
        out.push_str(&text[last..at]);
        out.push('\n');
        last = at;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
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

    fn parts(text: &str) -> Vec<(&str, PartEnd)> {
        let p = segment(text);
        assert!(matches!(p.work, Cow::Borrowed(_)));
        p.parts
            .iter()
            .map(|part| (&text[part.range.clone()], part.end))
            .collect()
    }

    #[test]
    fn open_fences_and_html_end_the_part_before_the_heading_or_blank_line() {
        let text = "## A\n\n```go\nx()\n## B\n\ntext\n";
        assert_eq!(
            parts(text),
            [
                ("## A\n\n```go\nx()\n", PartEnd::OpenFence),
                ("## B\n\ntext\n", PartEnd::Text)
            ]
        );
        // A fence closed later holds its headings.
        let text = "```sh\n# comment\n```\n## B\n";
        assert_eq!(parts(text), [(text, PartEnd::Text)]);
        let text = "## A\n\n<!-- note\nmore\n\n## B\n\n<PRE>\nx\n\n## C\n";
        assert_eq!(
            parts(text),
            [
                ("## A\n\n<!-- note\nmore\n\n", PartEnd::OpenHtml),
                ("## B\n\n<PRE>\nx\n\n", PartEnd::OpenHtml),
                ("## C\n", PartEnd::Text)
            ]
        );
        // A comment that ends later, and one that ends on its line, hold their text.
        let text = "<!-- a\n\nb -->\n\n## B\n<!-- c -->\n\nd\n";
        assert_eq!(parts(text), [(text, PartEnd::Text)]);
    }

    #[test]
    fn a_fence_in_a_list_item_that_closes_is_no_cut() {
        let text = "1. ```go\n   x()\n   ```\n## B\n";
        assert_eq!(parts(text), [(text, PartEnd::Text)]);
    }

    #[test]
    fn a_long_text_is_cut_where_top_level_blocks_start() {
        let mut text = String::new();
        while text.len() < 3 * PART {
            text.push_str("1. **F** — `a.rs:1`\n\n   Body.\n\nA paragraph.\n\n```go\n\nx\n```\n\n");
        }
        let p = segment(&text);
        assert!(p.parts.len() >= 3, "{}", p.parts.len());
        for part in &p.parts {
            let s = &text[part.range.clone()];
            assert!(s.starts_with("1. ") || s.starts_with("A paragraph") || s.starts_with("```"));
            // Never inside the code block.
            assert!(!s.starts_with("\nx"));
        }
        assert_eq!(p.parts.last().unwrap().range.end, text.len());
    }

    #[test]
    fn findings_after_a_paragraph_line_get_a_blank_line() {
        let p = segment("Intro.\n2. **B** — x\n```\n3. **C**\n```\n");
        assert_eq!(p.work, "Intro.\n\n2. **B** — x\n```\n3. **C**\n```\n");
        assert_eq!(p.inserted, [(7, 1)]);
    }
}
