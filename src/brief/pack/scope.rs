//! The enclosing function or block of a changed line, found without parsing the language: by
//! indentation, which nearly all code keeps whatever its syntax (braces, `end`, or indentation
//! itself).
//!
//! From the changed lines, walk up to the nearest line indented less (the block's opener) and
//! down to the next line indented no more than the opener (its closer: included when it closes,
//! like `}` or `end`; otherwise the block ends before it). Widen to the next enclosing block while
//! the block is small and its opener does not look like a definition (`fn`, `def`, `class`, ...),
//! so a change in a short `if` shows its function. Every walk is bounded ([`MAX_WALK`] lines each
//! way, [`MAX_SCOPE_LINES`] in all), so the cost per hunk is bounded too.

/// Lines walked up or down from a change, at most, looking for a block's edge.
pub const MAX_WALK: usize = 400;
/// A block longer than this is not shown whole (the diff's usual context is used instead).
pub const MAX_SCOPE_LINES: usize = 200;
/// Blocks are widened outward only while they stay this short.
const WIDEN_BELOW: usize = 40;

/// Words that open a definition in common languages: the block they open is the "function" a
/// reader wants, so widening stops there.
const DEFINITION_WORDS: &[&str] = &[
    "fn",
    "func",
    "def",
    "function",
    "class",
    "impl",
    "struct",
    "enum",
    "trait",
    "interface",
    "module",
    "mod",
    "sub",
    "procedure",
    "proc",
    "method",
    "object",
    "namespace",
    "record",
];

/// The block (1-based, inclusive line numbers of `lines`) enclosing lines `first..=last`, or
/// `None` when there is none within the bounds (top-level code, or a block too long to show).
pub fn enclosing(lines: &[&str], first: usize, last: usize) -> Option<(usize, usize)> {
    if lines.is_empty() || first == 0 || first > lines.len() {
        return None;
    }
    let last = last.clamp(first, lines.len());
    let line = |n: usize| lines[n - 1];

    let mut indent = (first..=last)
        .map(line)
        .filter(|l| !l.trim().is_empty())
        .map(indentation)
        .min()
        .or_else(|| nearest_indent_above(lines, first))?;
    let (mut start, mut end) = (first, last);
    let mut found = None;
    while indent > 0 {
        let Some(opener) = walk_up(lines, start, indent) else {
            break;
        };
        let opener_indent = indentation(line(opener));
        let close = walk_down(lines, end, opener_indent);
        // Allman style: a lone `{` belongs to the line above it.
        let opener = if line(opener).trim() == "{" {
            previous_non_blank(lines, opener).unwrap_or(opener)
        } else {
            opener
        };
        let Some(close) = close else {
            break;
        };
        if close + 1 - opener > MAX_SCOPE_LINES {
            break;
        }
        found = Some((opener, close));
        if looks_like_definition(line(opener)) || close + 1 - opener >= WIDEN_BELOW {
            break;
        }
        start = opener;
        end = close;
        indent = opener_indent;
    }
    found
}

/// Leading whitespace width, a tab counting 4.
fn indentation(line: &str) -> usize {
    let mut width = 0;
    for c in line.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width += 4,
            _ => break,
        }
    }
    width
}

fn nearest_indent_above(lines: &[&str], from: usize) -> Option<usize> {
    (from.saturating_sub(MAX_WALK).max(1)..from)
        .rev()
        .map(|n| lines[n - 1])
        .find(|l| !l.trim().is_empty())
        .map(indentation)
}

/// The nearest line above `from` indented less than `indent`, within [`MAX_WALK`] lines.
fn walk_up(lines: &[&str], from: usize, indent: usize) -> Option<usize> {
    let stop = from.saturating_sub(MAX_WALK).max(1);
    (stop..from).rev().find(|&n| {
        let l = lines[n - 1];
        !l.trim().is_empty() && indentation(l) < indent
    })
}

/// The last line of the block opened at indentation `opener_indent` that contains `from`: the
/// closing line when the next line at that indentation closes (`}`, `end`, `)`), else the last
/// non-blank line before it; the end of the file ends a block too.
fn walk_down(lines: &[&str], from: usize, opener_indent: usize) -> Option<usize> {
    let stop = (from + MAX_WALK).min(lines.len());
    for n in from + 1..=stop {
        let l = lines[n - 1];
        if l.trim().is_empty() || indentation(l) > opener_indent {
            continue;
        }
        return Some(if closes(l) {
            n
        } else {
            previous_non_blank(lines, n).unwrap_or(from).max(from)
        });
    }
    (stop == lines.len()).then(|| {
        previous_non_blank(lines, stop + 1)
            .unwrap_or(from)
            .max(from)
    })
}

fn previous_non_blank(lines: &[&str], before: usize) -> Option<usize> {
    let stop = before.saturating_sub(MAX_WALK).max(1);
    (stop..before)
        .rev()
        .find(|&n| !lines[n - 1].trim().is_empty())
}

/// A line that closes a block: `}`, `)`, `]`, `end`, `fi`, `done`, `esac`, `</tag>`.
fn closes(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(['}', ')', ']'])
        || t.starts_with("</")
        || ["end", "fi", "done", "esac", "endif", "endfunction", "until"]
            .iter()
            .any(|w| t == *w || t.starts_with(&format!("{w} ")) || t.starts_with(&format!("{w};")))
}

/// Whether `line` opens a definition: one of [`DEFINITION_WORDS`] as a word before any `(`.
fn looks_like_definition(line: &str) -> bool {
    let head = line.split('(').next().unwrap_or(line);
    head.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| DEFINITION_WORDS.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    #[test]
    fn a_change_in_a_short_if_shows_its_function() {
        let src = lines(
            "use x;\n\nimpl A {\n    fn one(&self) {\n        if ok {\n            call();\n        }\n        done();\n    }\n\n    fn two() {}\n}\n",
        );
        // Line 6 `call();` → the function `one`, lines 4-9.
        assert_eq!(enclosing(&src, 6, 6), Some((4, 9)));
        // Line 8 `done();` → `one` too.
        assert_eq!(enclosing(&src, 8, 8), Some((4, 9)));
        // Top-level code has no enclosing block.
        assert_eq!(enclosing(&src, 1, 1), None);
    }

    #[test]
    fn python_blocks_end_at_the_dedent() {
        let src =
            lines("def f(x):\n    if x:\n        return 1\n    return 2\n\n\ndef g():\n    pass\n");
        assert_eq!(enclosing(&src, 3, 3), Some((1, 4)));
    }

    #[test]
    fn allman_braces_include_the_header() {
        let src = lines("void f()\n{\n    int a = 1;\n    g(a);\n}\n");
        assert_eq!(enclosing(&src, 4, 4), Some((1, 5)));
    }

    #[test]
    fn a_long_block_is_not_taken_whole() {
        let mut text = String::from("fn big() {\n");
        for i in 0..(MAX_SCOPE_LINES + 10) {
            text.push_str(&format!("    let x{i} = {i};\n"));
        }
        text.push_str("}\n");
        let src = lines(&text);
        assert_eq!(enclosing(&src, 50, 50), None);
    }

    #[test]
    fn out_of_range_and_empty_input() {
        assert_eq!(enclosing(&[], 1, 1), None);
        let src = lines("a\n  b\n");
        assert_eq!(enclosing(&src, 0, 1), None);
        assert_eq!(enclosing(&src, 9, 9), None);
        assert_eq!(enclosing(&src, 2, 2), Some((1, 2)));
    }
}
