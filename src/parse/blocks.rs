//! Markdown → a small tree of blocks with byte ranges, built from pulldown-cmark events.
//!
//! The review parser works on blocks (headings, paragraphs, list items, code blocks, tables)
//! rather than on lines, so a `#` inside a code fence or a `-` inside a table never looks like
//! structure. Every block keeps its byte range in the source, so line numbers for warnings and
//! verbatim text for explanations come from the review itself.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

/// What a block is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BlockKind {
    Paragraph,
    Heading(u8),
    /// A code block. `closed` is false for a fence that runs to the end of the text.
    Code {
        lang: Option<String>,
        text: String,
        fenced: bool,
        closed: bool,
    },
    /// A list; `start` is the number of the first item of an ordered list.
    List {
        start: Option<u64>,
    },
    Item,
    Quote,
    Table,
    /// A table row; `head` for the header row.
    Row {
        head: bool,
    },
    Cell,
    Rule,
    Html,
    Other,
}

/// A piece of inline text: plain text, a code span, or a line break.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inline<'a> {
    pub kind: InlineKind,
    /// The text, borrowed from the review where it is written as it reads.
    pub text: CowStr<'a>,
    /// Inside `**strong**`.
    pub strong: bool,
    /// Inside `*emphasis*`.
    pub emph: bool,
    /// Inside a link: its destination (`[a.go#L3](https://…/a.go#L3)`), which may hold the
    /// line the text leaves out.
    pub link: Option<std::rc::Rc<str>>,
    pub range: Range<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineKind {
    Text,
    Code,
    Break,
}

/// One block of the document with its children (list items, cells, nested blocks) and, for
/// paragraphs, headings and cells, its inline content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block<'a> {
    pub kind: BlockKind,
    pub range: Range<usize>,
    pub children: Vec<Block<'a>>,
    pub inlines: Vec<Inline<'a>>,
}

impl<'a> Block<'a> {
    fn new(kind: BlockKind, range: Range<usize>) -> Self {
        Block {
            kind,
            range,
            children: Vec::new(),
            inlines: Vec::new(),
        }
    }

    /// The inline content split at line breaks.
    pub fn lines(&self) -> Vec<Vec<&Inline<'a>>> {
        split_lines(&self.inlines)
    }

    /// Line `n` (from 0) of the inline content, without splitting the lines after it.
    pub fn line(&self, n: usize) -> Option<Vec<&Inline<'a>>> {
        line_of(&self.inlines, n)
    }

    /// The plain text of the inline content, code spans in backticks, lines joined by `\n`.
    pub fn plain(&self) -> String {
        // As `split_lines` then `plain` per line joined by `\n`, without the vectors.
        let mut s = String::new();
        let mut line_has_text = false;
        let mut newline_due = false;
        for i in &self.inlines {
            if i.kind == InlineKind::Break {
                newline_due |= line_has_text;
                line_has_text = false;
                continue;
            }
            if std::mem::take(&mut newline_due) {
                s.push('\n');
            }
            line_has_text = true;
            if i.kind == InlineKind::Code {
                s.push('`');
                s.push_str(&i.text);
                s.push('`');
            } else {
                s.push_str(&i.text);
            }
        }
        s
    }

    /// For a list item or other container: the first paragraph in it, if any.
    pub fn first_paragraph(&self) -> Option<&Block<'a>> {
        self.children
            .first()
            .filter(|b| matches!(b.kind, BlockKind::Paragraph | BlockKind::Heading(_)))
    }
}

/// Splits inline content into lines at soft and hard breaks.
pub(crate) fn split_lines<'b, 'a>(inlines: &'b [Inline<'a>]) -> Vec<Vec<&'b Inline<'a>>> {
    let mut lines = vec![Vec::new()];
    for i in inlines {
        if i.kind == InlineKind::Break {
            lines.push(Vec::new());
        } else if let Some(last) = lines.last_mut() {
            last.push(i);
        }
    }
    lines.retain(|l| !l.is_empty());
    lines
}

/// Line `n` (from 0) of inline content, counted as [`split_lines`] does (empty lines are not
/// lines), reading no further than that line.
pub(crate) fn line_of<'b, 'a>(inlines: &'b [Inline<'a>], n: usize) -> Option<Vec<&'b Inline<'a>>> {
    let mut current: Vec<&Inline> = Vec::new();
    let mut k = 0;
    for i in inlines {
        if i.kind == InlineKind::Break {
            if !current.is_empty() {
                if k == n {
                    return Some(current);
                }
                k += 1;
                current.clear();
            }
        } else {
            current.push(i);
        }
    }
    (k == n && !current.is_empty()).then_some(current)
}

/// The plain text of one line: text as written, code spans wrapped in backticks.
pub(crate) fn plain(line: &[&Inline]) -> String {
    let mut s = String::new();
    for i in line {
        match i.kind {
            InlineKind::Code => {
                s.push('`');
                s.push_str(&i.text);
                s.push('`');
            }
            _ => s.push_str(&i.text),
        }
    }
    s
}

/// Maps byte offsets to 1-based line numbers.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

/// The parser options every reader of reviews and reports uses.
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}

/// How deep blocks may nest (quotes in lists in quotes...). Deeper containers are flattened
/// into the one at this depth: the tree is walked and dropped recursively, and a hostile review
/// of 100,000 nested `>` must not overflow the stack.
pub(crate) const MAX_DEPTH: usize = 48;

/// Parses Markdown into top-level blocks.
#[cfg(test)]
pub(crate) fn parse_blocks(text: &str) -> Vec<Block<'_>> {
    parse_blocks_checked(text).0
}

/// Parses Markdown into top-level blocks; also returns the offset of the first block that was
/// nested deeper than [`MAX_DEPTH`], if any.
#[cfg(test)]
pub(crate) fn parse_blocks_checked(text: &str) -> (Vec<Block<'_>>, Option<usize>) {
    parse_blocks_at(text, 0)
}

/// Parses a part of a text into top-level blocks whose ranges are offsets in the whole text
/// (`offset` is where the part starts); also returns the offset of the first block that was
/// nested deeper than [`MAX_DEPTH`], if any.
pub(crate) fn parse_blocks_at(text: &str, offset: usize) -> (Vec<Block<'_>>, Option<usize>) {
    let (mut blocks, too_deep) = parse_part(text);
    if offset > 0 {
        for b in &mut blocks {
            shift(b, offset);
        }
    }
    (blocks, too_deep.map(|at| at + offset))
}

/// Moves a block's ranges (and its children's) by `by` bytes.
fn shift(b: &mut Block<'_>, by: usize) {
    // Iterative: the tree is at most MAX_DEPTH deep, but stay clear of recursion anyway.
    let mut stack: Vec<&mut Block<'_>> = vec![b];
    while let Some(b) = stack.pop() {
        b.range = b.range.start + by..b.range.end + by;
        for i in &mut b.inlines {
            i.range = i.range.start + by..i.range.end + by;
        }
        stack.extend(b.children.iter_mut());
    }
}

fn parse_part(text: &str) -> (Vec<Block<'_>>, Option<usize>) {
    let mut tree = TreeBuilder::new(text);
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        tree.event(event, range);
    }
    tree.finish()
}

/// The block tree of one part, built from pulldown-cmark's events: blocks open and close on a
/// stack, inline content goes to the innermost open block with the emphasis and link it is in.
struct TreeBuilder<'a> {
    text: &'a str,
    root: Block<'a>,
    stack: Vec<Block<'a>>,
    strong: usize,
    emph: usize,
    /// The destination of the link being read, if any (links do not nest).
    link: Option<std::rc::Rc<str>>,
    /// Containers opened beyond MAX_DEPTH and not pushed; their ends are skipped too.
    flattened: usize,
    /// Where the first such container opened.
    too_deep: Option<usize>,
}

impl<'a> TreeBuilder<'a> {
    fn new(text: &'a str) -> Self {
        TreeBuilder {
            text,
            root: Block::new(BlockKind::Other, 0..text.len()),
            stack: Vec::new(),
            strong: 0,
            emph: 0,
            link: None,
            flattened: 0,
            too_deep: None,
        }
    }

    fn event(&mut self, event: Event<'a>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(end) => self.end(end, range),
            Event::Text(t) => self.text(t, range),
            Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                self.push_inline(InlineKind::Code, t, range, true);
            }
            Event::SoftBreak | Event::HardBreak => {
                self.push_inline(InlineKind::Break, CowStr::Borrowed(""), range, false);
            }
            Event::Html(h) | Event::InlineHtml(h) => self.html(h, range),
            Event::Rule => {
                self.flush_item_inlines(range.start);
                self.attach(Block::new(BlockKind::Rule, range));
            }
            Event::TaskListMarker(done) => {
                let mark = CowStr::Borrowed(if done { "[x] " } else { "[ ] " });
                self.push_inline(InlineKind::Text, mark, range, false);
            }
            Event::FootnoteReference(_) => {}
        }
    }

    /// A tag opens: emphasis and links change the state of the inlines that follow; other
    /// tags open a block (below [`MAX_DEPTH`] of them; deeper ones are flattened into their
    /// parent and the first such place remembered).
    fn start(&mut self, tag: Tag<'a>, range: Range<usize>) {
        let Some(kind) = self.block_kind(tag) else {
            return;
        };
        if self.stack.len() >= MAX_DEPTH {
            self.flattened += 1;
            self.too_deep.get_or_insert(range.start);
            return;
        }
        self.flush_item_inlines(range.start);
        self.stack.push(Block::new(kind, range));
    }

    /// The block a tag opens, or `None` for an inline style (whose state it records).
    fn block_kind(&mut self, tag: Tag<'a>) -> Option<BlockKind> {
        Some(match tag {
            Tag::Paragraph => BlockKind::Paragraph,
            Tag::Heading { level, .. } => BlockKind::Heading(level as u8),
            Tag::BlockQuote(_) => BlockKind::Quote,
            Tag::CodeBlock(kind) => {
                let (lang, fenced) = match kind {
                    CodeBlockKind::Fenced(info) => {
                        let lang = info.split_whitespace().next().map(str::to_string);
                        (lang.filter(|l| !l.is_empty()), true)
                    }
                    CodeBlockKind::Indented => (None, false),
                };
                BlockKind::Code {
                    lang,
                    text: String::new(),
                    fenced,
                    closed: true,
                }
            }
            Tag::HtmlBlock => BlockKind::Html,
            Tag::List(start) => BlockKind::List { start },
            Tag::Item => BlockKind::Item,
            Tag::Table(_) => BlockKind::Table,
            Tag::TableHead => BlockKind::Row { head: true },
            Tag::TableRow => BlockKind::Row { head: false },
            Tag::TableCell => BlockKind::Cell,
            Tag::Strong => {
                self.strong += 1;
                return None;
            }
            Tag::Emphasis => {
                self.emph += 1;
                return None;
            }
            Tag::Link { dest_url, .. } => {
                self.link = Some(std::rc::Rc::from(dest_url.as_ref()));
                return None;
            }
            Tag::Strikethrough | Tag::Superscript | Tag::Subscript | Tag::Image { .. } => {
                return None;
            }
            _ => BlockKind::Other,
        })
    }

    /// A tag closes: an inline style ends, a flattened container's end is skipped, else the
    /// innermost block is finished (a fenced code block learns whether its fence was closed)
    /// and attached to its parent.
    fn end(&mut self, end: TagEnd, range: Range<usize>) {
        match end {
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Emphasis => self.emph = self.emph.saturating_sub(1),
            TagEnd::Link => self.link = None,
            TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript | TagEnd::Image => {}
            _ if self.flattened > 0 => self.flattened -= 1,
            _ => {
                self.flush_item_inlines(range.end);
                if let Some(mut b) = self.stack.pop() {
                    if let BlockKind::Code {
                        fenced: true,
                        closed,
                        ..
                    } = &mut b.kind
                    {
                        *closed = fence_is_closed(self.text, &b.range);
                    }
                    self.attach(b);
                }
            }
        }
    }

    /// Text: a code block's content, else an inline of the innermost block.
    fn text(&mut self, t: CowStr<'a>, range: Range<usize>) {
        if let Some(top) = self.stack.last_mut()
            && let BlockKind::Code { text: code, .. } = &mut top.kind
        {
            code.push_str(&t);
            return;
        }
        self.push_inline(InlineKind::Text, t, range, true);
    }

    /// HTML: `<br>` inside text reads as a line break, other HTML inside a block is kept as
    /// text, and HTML outside any block is a block of its own.
    fn html(&mut self, h: CowStr<'a>, range: Range<usize>) {
        if self.stack.is_empty() {
            let mut b = Block::new(BlockKind::Html, range);
            b.inlines.push(Inline {
                kind: InlineKind::Text,
                text: h,
                strong: false,
                emph: false,
                link: None,
                range: b.range.clone(),
            });
            self.root.children.push(b);
            return;
        }
        if h.trim().to_ascii_lowercase().starts_with("<br") {
            self.push_inline(InlineKind::Break, CowStr::Borrowed(""), range, true);
        } else {
            self.push_inline(InlineKind::Text, h, range, true);
        }
    }

    /// An inline of the innermost open block (none outside blocks); `styled`: it carries the
    /// emphasis and link it is in.
    fn push_inline(
        &mut self,
        kind: InlineKind,
        text: CowStr<'a>,
        range: Range<usize>,
        styled: bool,
    ) {
        let (strong, emph, link) = if styled {
            (self.strong > 0, self.emph > 0, self.link.clone())
        } else {
            (false, false, None)
        };
        if let Some(top) = self.stack.last_mut() {
            top.inlines.push(Inline {
                kind,
                text,
                strong,
                emph,
                link,
                range,
            });
        }
    }

    /// Attaches a finished block to its parent (or the root).
    fn attach(&mut self, b: Block<'a>) {
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(b),
            None => self.root.children.push(b),
        }
    }

    /// Tight list items hold inline content directly; before a nested block starts, wrap that
    /// content in a paragraph so the order of text and blocks is kept.
    /// The paragraph's range runs from the first inline (backed up over the `**`, `_` or `[`
    /// that open it) to where the next block starts, so its source is the text as written.
    fn flush_item_inlines(&mut self, next: usize) {
        let text = self.text;
        if let Some(top) = self.stack.last_mut()
            && top.kind == BlockKind::Item
            && !top.inlines.is_empty()
        {
            let inl = std::mem::take(&mut top.inlines);
            let bytes = text.as_bytes();
            let mut start = inl
                .first()
                .map(|i| i.range.start)
                .unwrap_or(top.range.start);
            while start > top.range.start
                && matches!(bytes.get(start - 1), Some(b'*' | b'_' | b'[' | b'~'))
            {
                start -= 1;
            }
            let mut end = next.max(start).min(text.len());
            while end > start && bytes.get(end - 1).is_some_and(|b| b.is_ascii_whitespace()) {
                end -= 1;
            }
            let mut p = Block::new(BlockKind::Paragraph, start..end);
            p.inlines = inl;
            top.children.push(p);
        }
    }

    /// The blocks of the part and where it went too deep, if it did. Events are balanced, but
    /// be safe: anything left open is attached.
    fn finish(mut self) -> (Vec<Block<'a>>, Option<usize>) {
        while let Some(b) = self.stack.pop() {
            self.attach(b);
        }
        (self.root.children, self.too_deep)
    }
}

/// Whether a fenced code block's source ends with a closing fence. pulldown-cmark closes an
/// unterminated fence at the end of the text; the parser warns about it.
fn fence_is_closed(text: &str, range: &Range<usize>) -> bool {
    let Some(src) = text.get(range.clone()) else {
        return true;
    };
    let opener = src.trim_start();
    let fence_char = match opener.chars().next() {
        Some(c @ ('`' | '~')) => c,
        _ => return true,
    };
    let fence_len = opener.chars().take_while(|&c| c == fence_char).count();
    let mut lines = src.trim_end_matches(['\n', '\r']).lines();
    lines.next();
    match lines.next_back() {
        Some(last) => {
            let t = last.trim();
            t.len() >= fence_len && t.chars().all(|c| c == fence_char)
        }
        None => false,
    }
}

/// The source of a block, with the indentation of a list item's continuation lines removed.
pub(crate) fn dedented(text: &str, range: &Range<usize>) -> String {
    let Some(src) = text.get(range.clone()) else {
        return String::new();
    };
    let src = src.trim_end();
    let Some((first, rest)) = src.split_once('\n') else {
        return src.trim_start().to_string();
    };
    let indent = rest
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(src.len());
    out.push_str(first.trim_start().trim_end_matches('\r'));
    for l in rest.lines() {
        out.push('\n');
        out.push_str(l.get(indent.min(l.len())..).unwrap_or(l.trim_start()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_items_headings_and_code_with_offsets() {
        let text = "# Title\n\n1. **A** — `x.rs:1`\n2. B\n\n```go\nfoo()\n```\n";
        let blocks = parse_blocks(text);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0].kind, BlockKind::Heading(1));
        assert_eq!(blocks[1].kind, BlockKind::List { start: Some(1) });
        assert_eq!(blocks[1].children.len(), 2);
        let item = &blocks[1].children[0];
        let p = item.first_paragraph().unwrap();
        assert_eq!(p.plain(), "A — `x.rs:1`");
        assert!(p.inlines[0].strong);
        match &blocks[2].kind {
            BlockKind::Code {
                lang, text, closed, ..
            } => {
                assert_eq!(lang.as_deref(), Some("go"));
                assert_eq!(text, "foo()\n");
                assert!(closed);
            }
            k => panic!("unexpected {k:?}"),
        }
        let idx = LineIndex::new(text);
        assert_eq!(idx.line(blocks[2].range.start), 6);
    }

    #[test]
    fn deep_nesting_is_flattened() {
        let text = format!("{}x\n", "> ".repeat(100_000));
        let (blocks, too_deep) = parse_blocks_checked(&text);
        assert_eq!(too_deep, Some(2 * MAX_DEPTH));
        let mut depth = 0;
        let mut b = &blocks[0];
        while let Some(c) = b.children.first() {
            depth += 1;
            b = c;
        }
        assert!(depth <= MAX_DEPTH);
    }

    #[test]
    fn unclosed_fence_is_noticed() {
        let blocks = parse_blocks("text\n\n```go\nfoo()\n## Heading\n");
        let Some(BlockKind::Code { closed, .. }) = blocks.last().map(|b| b.kind.clone()) else {
            panic!("no code block")
        };
        assert!(!closed);
    }

    #[test]
    fn dedent_removes_item_indentation() {
        let text = "- a\n\n  ```diff\n  +x\n  ```\n";
        let blocks = parse_blocks(text);
        let code = &blocks[0].children[0].children[1];
        assert_eq!(dedented(text, &code.range), "```diff\n+x\n```");
    }
}
