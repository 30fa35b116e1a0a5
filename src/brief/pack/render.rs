//! One changed file as a listing for the packed prompt: the file at head with the change marked,
//! showing either the usual diff context, the enclosing blocks, or the whole file.
//!
//! Built from the exact `-U0` hunks the target stage found and the two blobs, so any amount of
//! context costs no further git call:
//!
//! ```text
//!     12  fn parse(s: &str) -> i32 {
//!     13 +    s.trim().parse().unwrap_or(0)
//!        -    s.trim().parse().unwrap()
//!     14  }
//!    ...
//! ```
//!
//! Numbers are head line numbers; a removed line has none.

use crate::brief::escape::escape_code_line;
use crate::types::Hunk;

use super::scope;

/// How much of the file around each hunk is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// `n` lines before and after each hunk, like `git diff -U<n>`.
    Lines(usize),
    /// The enclosing function or block of each hunk (see [`scope`]), or 3 lines where none is
    /// found.
    Scope,
    /// The whole file.
    Whole,
}

/// The text of one file on both sides, split into lines.
pub struct FileLines<'a> {
    pub old: Vec<&'a str>,
    pub new: Vec<&'a str>,
}

impl<'a> FileLines<'a> {
    pub fn new(old: &'a str, new: &'a str) -> FileLines<'a> {
        FileLines {
            old: split(old),
            new: split(new),
        }
    }
}

fn split(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// A hunk in 1-based line numbers: removed `old_first..old_first+removed`, added
/// `new_first..new_first+added`; with nothing added, the removal sits before `new_first`.
#[derive(Debug, Clone, Copy)]
struct Span {
    old_first: usize,
    removed: usize,
    new_first: usize,
    added: usize,
}

impl Span {
    fn of(h: &Hunk) -> Span {
        let old_first = if h.old_lines == 0 {
            h.old_start as usize + 1
        } else {
            h.old_start as usize
        };
        let new_first = if h.new_lines == 0 {
            h.new_start as usize + 1
        } else {
            h.new_start as usize
        };
        Span {
            old_first,
            removed: h.old_lines as usize,
            new_first,
            added: h.new_lines as usize,
        }
    }

    /// The last head line of the hunk (the line before it when it only removes).
    fn new_last(&self) -> usize {
        (self.new_first + self.added).saturating_sub(1)
    }
}

/// The listing of `file` changed by `hunks` (git's `-U0` hunks, in order), with `window` of the
/// file shown around them, appended to `out`.
pub fn listing(file: &FileLines, hunks: &[Hunk], window: Window, out: &mut String) {
    let n_new = file.new.len();
    let spans: Vec<Span> = hunks.iter().map(Span::of).collect();
    if spans.is_empty() {
        return;
    }
    // Each hunk's window in head lines, inclusive; `lo > hi` is an empty window.
    let windows: Vec<(usize, usize)> = spans
        .iter()
        .map(|s| {
            let around = |n: usize| {
                (
                    s.new_first.saturating_sub(n).max(1),
                    (s.new_last() + n).min(n_new),
                )
            };
            match window {
                Window::Whole => (1, n_new),
                Window::Lines(n) => around(n),
                Window::Scope => {
                    let (lo, hi) = around(3);
                    let first = s.new_first.min(n_new.max(1));
                    match scope::enclosing(&file.new, first, s.new_last().max(first)) {
                        Some((a, b)) => (a.min(lo), b.max(hi)),
                        None => (lo, hi),
                    }
                }
            }
        })
        .collect();

    let mut i = 0;
    let mut shown_to = 0; // the last head line written
    while i < spans.len() {
        // A group: hunks whose windows overlap or touch.
        let (lo, mut hi) = windows[i];
        let mut j = i + 1;
        while j < spans.len() && windows[j].0 <= hi + 1 {
            hi = hi.max(windows[j].1);
            j += 1;
        }
        let lo = lo.max(shown_to + 1);
        if lo > shown_to + 1 {
            out.push_str("   ...\n");
        }
        let mut cursor = lo;
        for s in &spans[i..j] {
            context(file, cursor, s.new_first.saturating_sub(1), out);
            for n in s.old_first..s.old_first + s.removed {
                if let Some(l) = file.old.get(n.wrapping_sub(1)) {
                    line(None, '-', l, out);
                }
            }
            for n in s.new_first..s.new_first + s.added {
                if let Some(l) = file.new.get(n.wrapping_sub(1)) {
                    line(Some(n), '+', l, out);
                }
            }
            cursor = cursor.max(s.new_first + s.added);
        }
        context(file, cursor, hi, out);
        shown_to = hi.max(cursor.saturating_sub(1));
        i = j;
    }
    if shown_to < n_new {
        out.push_str("   ...\n");
    }
}

/// Head lines `from..=to` as unchanged context.
fn context(file: &FileLines, from: usize, to: usize, out: &mut String) {
    for n in from.max(1)..=to.min(file.new.len()) {
        line(Some(n), ' ', file.new[n - 1], out);
    }
}

fn line(number: Option<usize>, mark: char, text: &str, out: &mut String) {
    use std::fmt::Write as _;
    match number {
        Some(n) => {
            let _ = write!(out, "{n:>6} {mark}");
        }
        None => {
            let _ = write!(out, "       {mark}");
        }
    }
    out.push_str(&escape_code_line(text));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> Hunk {
        Hunk {
            old_start,
            old_lines,
            new_start,
            new_lines,
        }
    }

    #[test]
    fn a_modified_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let f = FileLines::new(old, new);
        let mut out = String::new();
        listing(&f, &[hunk(4, 1, 4, 1)], Window::Lines(1), &mut out);
        assert_eq!(
            out,
            "   ...\n     3  c\n       -d\n     4 +D\n     5  e\n   ...\n"
        );
        let mut whole = String::new();
        listing(&f, &[hunk(4, 1, 4, 1)], Window::Whole, &mut whole);
        assert!(whole.starts_with("     1  a\n"), "{whole}");
        assert!(whole.ends_with("     8  h\n"), "{whole}");
        assert!(!whole.contains("..."));
    }

    #[test]
    fn pure_additions_and_removals() {
        // Line 2 removed; a line added after line 4 (head line 4).
        let old = "1\n2\n3\n4\n5\n";
        let new = "1\n3\n4\nnew\n5\n";
        let f = FileLines::new(old, new);
        let mut out = String::new();
        listing(
            &f,
            &[hunk(2, 1, 1, 0), hunk(4, 0, 4, 1)],
            Window::Lines(0),
            &mut out,
        );
        assert_eq!(out, "   ...\n       -2\n   ...\n     4 +new\n   ...\n");
    }

    #[test]
    fn added_and_deleted_files() {
        let f = FileLines::new("", "x\ny\n");
        let mut out = String::new();
        listing(&f, &[hunk(0, 0, 1, 2)], Window::Lines(3), &mut out);
        assert_eq!(out, "     1 +x\n     2 +y\n");
        let f = FileLines::new("x\ny\n", "");
        let mut out = String::new();
        listing(&f, &[hunk(1, 2, 0, 0)], Window::Whole, &mut out);
        assert_eq!(out, "       -x\n       -y\n");
    }

    #[test]
    fn overlapping_windows_merge_and_scope_shows_the_function() {
        let old = "fn a() {\n    one();\n    two();\n    three();\n}\n\nfn b() {}\n";
        let new = "fn a() {\n    one();\n    TWO();\n    three();\n}\n\nfn b() {}\n";
        let f = FileLines::new(old, new);
        let mut out = String::new();
        listing(&f, &[hunk(3, 1, 3, 1)], Window::Scope, &mut out);
        assert!(out.starts_with("     1  fn a() {\n"), "{out}");
        assert!(
            out.contains("       -    two();\n     3 +    TWO();\n"),
            "{out}"
        );
        assert!(out.contains("     5  }\n"), "{out}");
    }
}
