//! Finding a reviewer's quoted code in a file.
//!
//! Reviewers quote loosely: they drop leading indentation, re-wrap spaces, leave out blank lines,
//! elide stretches with `...` or `// ...`, write `foo(...)` for a call's arguments, add a
//! `// <- here` to point at a line, and now and then skip a line without saying so. Matching
//! therefore compares lines with whitespace folded (runs of spaces and tabs become one space,
//! ends trimmed), ignores blank lines on both sides, treats an elision line as a gap of any
//! length and `...` inside a line as a wildcard. It never drops whitespace entirely: `"$@"` and
//! `"$ @"` are different code, and telling them apart is the point.

/// A file's text as verification sees it: lines without their `\r\n`/`\n`, and the same lines
/// with whitespace folded.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    pub lines: Vec<String>,
    pub folded: Vec<String>,
}

impl FileText {
    /// Splits `text` into lines: `\n` and `\r\n` both end a line, and a final newline does not
    /// start another.
    pub fn new(text: &str) -> Self {
        let mut lines: Vec<String> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
            .collect();
        if text.ends_with('\n') || text.is_empty() {
            lines.pop();
        }
        let folded = lines.iter().map(|l| fold(l)).collect();
        FileText { lines, folded }
    }

    pub fn line_count(&self) -> u32 {
        u32::try_from(self.lines.len()).unwrap_or(u32::MAX)
    }
}

/// Whitespace folded: runs of whitespace become one space, and both ends are trimmed.
pub fn fold(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// One line of a parsed quote.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// A line to find, whitespace folded. `optional` lines (comment-only lines, which are often
    /// the reviewer's own annotations) are matched when they are there and skipped otherwise.
    Line { text: String, optional: bool },
    /// An elision: any number of lines.
    Gap,
}

/// A quote ready to be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    items: Vec<Item>,
    /// When the quote reads like a diff (`+`/`-` markers), its new side: tried when the quote
    /// as written is not found.
    new_side: Option<Box<Quote>>,
}

/// How many unquoted, non-blank lines may sit between two quoted lines on the second, tolerant
/// pass (reviewers skip a line now and then without marking it).
const TOLERATED_SKIP: usize = 3;

/// How many non-blank lines an elision may stand for. Bounds the work of a quote whose
/// anchor line is common (`}`) in a very long file.
const MAX_GAP: usize = 2000;

const COMMENT_MARKERS: [&str; 7] = ["//", "#", "--", "/*", "<!--", ";", "%"];

impl Quote {
    /// Parses a code block; `None` when it has no line of code to look for (empty, or only
    /// elisions and blank lines).
    pub fn parse(code: &str) -> Option<Quote> {
        let new_side = diff_new_side(code).and_then(|text| Quote::parse_plain(&text));
        match Quote::parse_plain(code) {
            Some(mut q) => {
                q.new_side = new_side.map(Box::new);
                Some(q)
            }
            None => new_side,
        }
    }

    fn parse_plain(code: &str) -> Option<Quote> {
        let raw: Vec<&str> = code
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        let numbered = strip_line_numbers(&raw);
        let lines: Vec<&str> = match &numbered {
            Some(stripped) => stripped.iter().map(String::as_str).collect(),
            None => raw,
        };
        let mut items = Vec::new();
        for line in lines {
            let folded = fold(line);
            if folded.is_empty() {
                continue;
            }
            if is_elision(&folded) {
                if items.last() != Some(&Item::Gap) {
                    items.push(Item::Gap);
                }
                continue;
            }
            let optional = COMMENT_MARKERS.iter().any(|m| folded.starts_with(m));
            items.push(Item::Line {
                text: folded,
                optional,
            });
        }
        let required = items
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Item::Line {
                        optional: false,
                        ..
                    }
                )
            })
            .count();
        if required == 0 {
            // A quote of nothing but comments: every line of it must be found.
            for item in &mut items {
                if let Item::Line { optional, .. } = item {
                    *optional = false;
                }
            }
        }
        while items.first() == Some(&Item::Gap) {
            items.remove(0);
        }
        while items.last() == Some(&Item::Gap) {
            items.pop();
        }
        if items.is_empty() {
            None
        } else {
            Some(Quote {
                items,
                new_side: None,
            })
        }
    }

    /// The longest required quoted line without a wildcard: the best needle to find the file.
    pub fn longest_line(&self) -> Option<&str> {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Line {
                    text,
                    optional: false,
                } if !text.contains("...") && !text.contains('…') => Some(text.as_str()),
                _ => None,
            })
            .max_by_key(|t| t.len())
    }

    /// The quote's required lines (whitespace folded; line numbers, elisions and comment-only
    /// lines left out), in order: what identifies the quoted code however it was written.
    pub fn required_lines(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|i| match i {
            Item::Line {
                text,
                optional: false,
            } => Some(text.as_str()),
            _ => None,
        })
    }

    /// How much text the quote pins down: the length of its required lines. A quote of a
    /// `}` or a `return nil` could be anywhere; one of a few real lines could not.
    pub fn weight(&self) -> usize {
        self.items
            .iter()
            .map(|i| match i {
                Item::Line {
                    text,
                    optional: false,
                } => text.len(),
                _ => 0,
            })
            .sum()
    }

    /// Every place the quote occurs in `file`, as 1-based inclusive line ranges in file order.
    /// Tries a strict match first (quoted lines on consecutive non-blank lines); only when that
    /// finds nothing, allows a few skipped lines between quoted lines.
    pub fn find_in(&self, file: &FileText) -> Vec<(u32, u32)> {
        let strict = self.find_with(&file.folded, 0);
        if !strict.is_empty() {
            return strict;
        }
        let tolerant = self.find_with(&file.folded, TOLERATED_SKIP);
        if !tolerant.is_empty() {
            return tolerant;
        }
        match &self.new_side {
            Some(q) => q.find_in(file),
            None => Vec::new(),
        }
    }

    fn find_with(&self, folded: &[String], skip: usize) -> Vec<(u32, u32)> {
        // Anchor on the first required line; optional lines before it are dropped.
        let Some(anchor) = self.items.iter().position(|i| {
            matches!(
                i,
                Item::Line {
                    optional: false,
                    ..
                }
            )
        }) else {
            return Vec::new();
        };
        let Item::Line { text: first, .. } = &self.items[anchor] else {
            return Vec::new();
        };
        let rest = &self.items[anchor + 1..];
        let mut found = Vec::new();
        for (i, line) in folded.iter().enumerate() {
            if !line_matches(first, line) {
                continue;
            }
            if let Some(last) = match_rest(rest, folded, i + 1, skip) {
                let span = (to_line(i), to_line(last.unwrap_or(i)));
                if found.last() != Some(&span) {
                    found.push(span);
                }
            }
        }
        found
    }
}

fn to_line(index: usize) -> u32 {
    u32::try_from(index + 1).unwrap_or(u32::MAX)
}

/// Matches `items` from file index `pos` on. Returns `Some(last matched index)` (or
/// `Some(None)` when nothing after the anchor was matched), `None` when the quote is not there.
fn match_rest(
    items: &[Item],
    folded: &[String],
    mut pos: usize,
    skip: usize,
) -> Option<Option<usize>> {
    let mut last = None;
    let mut after_gap = false;
    for item in items {
        match item {
            Item::Gap => after_gap = true,
            Item::Line { text, optional } => {
                let limit = if after_gap { MAX_GAP } else { skip };
                match next_match(text, folded, pos, limit) {
                    Some(j) => {
                        pos = j + 1;
                        last = Some(j);
                        after_gap = false;
                    }
                    None if *optional => {}
                    None => return None,
                }
            }
        }
    }
    Some(last)
}

/// The index of the first line from `pos` that matches `text`, passing over blank lines freely
/// and over at most `skip` non-blank lines that do not match.
fn next_match(text: &str, folded: &[String], pos: usize, skip: usize) -> Option<usize> {
    let mut skipped = 0usize;
    for (j, line) in folded.iter().enumerate().skip(pos) {
        if line.is_empty() {
            continue;
        }
        if line_matches(text, line) {
            return Some(j);
        }
        skipped += 1;
        if skipped > skip {
            return None;
        }
    }
    None
}

/// Whether a quoted line (folded) stands for a file line (folded): equal; or the file line plus
/// a trailing comment the reviewer added; or equal with `...`/`…` standing for any text.
fn line_matches(quoted: &str, line: &str) -> bool {
    if quoted == line {
        return true;
    }
    if line.is_empty() {
        return false;
    }
    if let Some(rest) = quoted.strip_prefix(line) {
        let rest = rest.trim_start();
        if rest.len() < quoted.len() - line.len()
            && ["//", "#", "<-", "←", "/*", "--"]
                .iter()
                .any(|m| rest.starts_with(m))
        {
            return true;
        }
    }
    if quoted.contains("...") || quoted.contains('…') {
        return wildcard_match(quoted, line);
    }
    false
}

/// `...` and `…` inside a quoted line match any text; the pieces between them must appear in
/// order, the first at the start of the line and the last at its end.
fn wildcard_match(quoted: &str, line: &str) -> bool {
    let normalized = quoted.replace('…', "...");
    let pieces: Vec<&str> = normalized.split("...").collect();
    let n = pieces.len();
    let mut rest = line;
    for (k, piece) in pieces.iter().enumerate() {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        if k == 0 {
            match rest.strip_prefix(piece) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if k == n - 1 {
            return rest.trim_end().ends_with(piece);
        } else {
            match rest.find(piece) {
                Some(at) => rest = &rest[at + piece.len()..],
                None => return false,
            }
        }
    }
    true
}

/// A line that stands for omitted lines: `...`, `…`, `// ...`, `# ... rest unchanged`,
/// `/* ... */`, `[...]`.
fn is_elision(folded: &str) -> bool {
    let mut t = folded;
    for marker in COMMENT_MARKERS {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest.trim_start();
            break;
        }
    }
    let t = t.trim_start_matches(['[', '(', '{']).trim_start();
    t.starts_with("...") || t.starts_with('…')
}

/// The new side of a quote written as a diff: every non-blank line starts with `+`, `-`, a
/// space or `@@`, and some line is added (`+`, not `++`). Kept: the added and context lines,
/// without their marker.
fn diff_new_side(code: &str) -> Option<String> {
    let lines: Vec<&str> = code
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let is_diff = lines
        .iter()
        .all(|l| l.starts_with(['+', '-', ' ']) || l.starts_with("@@"))
        && lines
            .iter()
            .any(|l| l.starts_with('+') && !l.starts_with("++"));
    if !is_diff {
        return None;
    }
    let kept: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with(['+', ' ']))
        .map(|l| &l[1..])
        .collect();
    Some(kept.join("\n"))
}

/// Quotes copied from `cat -n` or an editor carry line numbers (`193: foo`, `193 | foo`,
/// `193\tfoo`). When every non-blank line has one, strip them.
fn strip_line_numbers(lines: &[&str]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(lines.len());
    let mut numbered = 0;
    for line in lines {
        if line.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        let trimmed = line.trim_start();
        let digits = trimmed.len()
            - trimmed
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        if digits == 0 {
            return None;
        }
        let after = &trimmed[digits..];
        let rest = if let Some(r) = after.strip_prefix('\t') {
            r
        } else {
            let a = after.trim_start_matches(' ');
            match a.chars().next() {
                Some(c @ (':' | '|' | '│' | '→')) => {
                    let r = &a[c.len_utf8()..];
                    r.strip_prefix(' ').unwrap_or(r)
                }
                _ => return None,
            }
        };
        numbered += 1;
        out.push(rest.to_string());
    }
    (numbered >= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> FileText {
        FileText::new(text)
    }

    #[test]
    fn crlf_and_final_newline() {
        let f = file("a\r\nb\r\n");
        assert_eq!(f.lines, vec!["a", "b"]);
        assert_eq!(file("a\nb").line_count(), 2);
        assert_eq!(file("").line_count(), 0);
    }

    #[test]
    fn dropped_indentation_and_folded_spaces_match() {
        let f = file("fn main() {\n    let  x = 1;\n\n    call(x);\n}\n");
        let q = Quote::parse("let x = 1;\ncall(x);").unwrap();
        assert_eq!(q.find_in(&f), vec![(2, 4)]);
    }

    #[test]
    fn whitespace_inside_a_token_is_not_folded_away() {
        let f = file("exec \"$@\"\n");
        let q = Quote::parse("exec \"$ @\"").unwrap();
        assert!(q.find_in(&f).is_empty());
    }

    #[test]
    fn elision_lines_are_gaps() {
        let f = file("a()\nb()\nc()\nd()\nx()\ny()\ne()\n");
        for quote in [
            "a()\n...\ne()",
            "a()\n// ...\ne()",
            "a()\n  # ... more\ne()",
            "a()\n…\ne()",
        ] {
            let q = Quote::parse(quote).unwrap();
            assert_eq!(q.find_in(&f), vec![(1, 7)], "{quote}");
        }
        // Without the elision, a() and e() are too far apart (more than a few skipped lines).
        assert!(Quote::parse("a()\ne()").unwrap().find_in(&f).is_empty());
    }

    #[test]
    fn inline_ellipsis_and_annotations() {
        let f = file("if err := load(cfg, path); err != nil {\n\treturn err\n}\n");
        let q = Quote::parse("if err := load(...); err != nil {\n    return err // <- swallowed")
            .unwrap();
        assert_eq!(q.find_in(&f), vec![(1, 2)]);
    }

    #[test]
    fn one_skipped_line_is_tolerated_only_when_strict_fails() {
        let f = file("a = 1\nb = 2\nc = 3\n");
        assert_eq!(
            Quote::parse("a = 1\nc = 3").unwrap().find_in(&f),
            vec![(1, 3)]
        );
    }

    #[test]
    fn a_quote_written_as_a_diff_matches_its_new_side() {
        let f = file("fn f() {\n    let a = 2;\n    g(a);\n}\n");
        let q = Quote::parse("-    let a = 1;\n+    let a = 2;\n     g(a);").unwrap();
        assert_eq!(q.find_in(&f), vec![(2, 3)]);
        // A YAML list is not a diff.
        let y = file("items:\n- a\n- b\n");
        assert_eq!(Quote::parse("- a\n- b").unwrap().find_in(&y), vec![(2, 3)]);
    }

    #[test]
    fn line_numbers_are_stripped() {
        let f = file("x\nfoo()\nbar()\n");
        let q = Quote::parse("2: foo()\n3: bar()").unwrap();
        assert_eq!(q.find_in(&f), vec![(2, 3)]);
    }

    #[test]
    fn empty_or_only_elided_quotes_are_none() {
        assert!(Quote::parse("").is_none());
        assert!(Quote::parse("\n...\n// ...\n").is_none());
    }
}
