//! A quoted code block turned into what to look for: one or more readings (as written, and
//! without the diff or list markers reviewers put in front of lines), each a list of segments
//! of lines that follow one another, the segments separated by elisions.

use super::fold;
use super::lines::{is_comment_line, trailing_comment};

/// At most this many lines of a quote are matched; the rest is left out (a quote that long
/// pins its place down well before its end).
const MAX_QUOTE_LINES: usize = 400;

/// One quoted line, whitespace folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct QLine {
    pub text: String,
    /// A comment line: often the reviewer's own annotation, so it is matched when it is
    /// there and passed over when not (unless the quote is nothing but comments).
    pub optional: bool,
    pub comment: bool,
    /// The text around each `...`/`…` when the line has some: they stand for any text, also
    /// across lines (`Call(...)` over a multi-line argument list).
    pub pieces: Option<Vec<String>>,
    /// Where a trailing comment starts (`x := 1 // why`), so the code before it can be
    /// compared with a file line that has its own comment.
    pub code_len: Option<usize>,
}

impl QLine {
    /// A quoted line from its folded text: a comment line is optional.
    pub fn new(text: String) -> QLine {
        let comment = is_annotation_or_comment(&text);
        let pieces = (text.contains("...") || text.contains('…')).then(|| {
            text.replace('…', "...")
                .split("...")
                .map(|p| p.trim().to_string())
                .collect()
        });
        QLine {
            code_len: trailing_comment(&text),
            optional: comment,
            comment,
            pieces,
            text,
        }
    }
}

/// One way of reading a quote: segments of lines, any number of file lines between segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Reading {
    pub segments: Vec<Vec<QLine>>,
    /// How many lines must be found (not optional).
    pub required: usize,
}

impl Reading {
    /// How many required lines may go unmatched on the lossy pass: a quarter (a tool that
    /// expanded `@path` into one line, a line retyped from memory), and never so many that
    /// fewer than three lines are left to agree.
    pub fn drop_budget(&self) -> usize {
        if self.required < 4 {
            0
        } else {
            self.required / 4
        }
    }

    fn lines(&self) -> impl Iterator<Item = &QLine> {
        self.segments.iter().flatten()
    }

    /// The required lines, in order.
    pub fn required_lines(&self) -> impl Iterator<Item = &QLine> {
        self.lines().filter(|l| !l.optional)
    }
}

/// The readings of a code block, most literal first: as written; for a quote written as a
/// diff, its new side then its old side; for a quote whose every line carries a list marker,
/// the lines without it. Line numbers copied from `cat -n` or an editor are stripped first.
pub(super) fn readings(code: &str) -> Vec<Reading> {
    let raw: Vec<&str> = code
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .take(MAX_QUOTE_LINES)
        .collect();
    let numbered = strip_line_numbers(&raw);
    let lines: Vec<&str> = match &numbered {
        Some(stripped) => stripped.iter().map(String::as_str).collect(),
        None => raw,
    };
    let mut texts: Vec<Vec<String>> = vec![lines.iter().map(|l| l.to_string()).collect()];
    if let Some((new, old)) = diff_sides(&lines) {
        texts.push(new);
        texts.push(old);
    }
    if let Some(unlisted) = without_list_markers(&lines) {
        texts.push(unlisted);
    }
    let mut out: Vec<Reading> = Vec::new();
    for text in texts {
        if let Some(r) = reading(&text)
            && !out.contains(&r)
        {
            out.push(r);
        }
    }
    out
}

/// One reading of the lines; `None` when nothing in them is code to look for.
fn reading(lines: &[String]) -> Option<Reading> {
    let mut segments: Vec<Vec<QLine>> = vec![Vec::new()];
    for line in lines {
        let folded = fold(line);
        if folded.is_empty() {
            continue;
        }
        if is_elision(&folded) {
            if segments.last().is_some_and(|s| !s.is_empty()) {
                segments.push(Vec::new());
            }
            continue;
        }
        if let Some(segment) = segments.last_mut() {
            segment.push(QLine::new(folded));
        }
    }
    let mut required = segments.iter().flatten().filter(|l| !l.optional).count();
    if required == 0 {
        // A quote of nothing but comments: every line of it must be found.
        for line in segments.iter_mut().flatten() {
            line.optional = false;
        }
        required = segments.iter().flatten().count();
    }
    // A segment of comments alone between two elisions pins nothing down.
    segments.retain(|s| s.iter().any(|l| !l.optional));
    if segments.is_empty() {
        return None;
    }
    Some(Reading { segments, required })
}

/// Lines a reviewer marks as their own remark or that are comments: `//`, `#`, `--`, `/*`,
/// `<!--`, `;`, `%`. Looser than [`is_comment_line`] on purpose: a quoted line taken for a
/// comment is only made optional.
fn is_annotation_or_comment(folded: &str) -> bool {
    is_comment_line(folded)
        || ["//", "#", "--", "/*", "<!--", ";", "%"]
            .iter()
            .any(|m| folded.starts_with(m))
}

/// A line that stands for omitted lines: `...`, `…`, `// ...`, `# ... rest unchanged`,
/// `/* ... */`, `[...]`.
pub(super) fn is_elision(folded: &str) -> bool {
    let mut t = folded;
    for marker in ["//", "#", "--", "/*", "<!--", ";", "%"] {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest.trim_start();
            break;
        }
    }
    let t = t.trim_start_matches(['[', '(', '{']).trim_start();
    t.starts_with("...") || t.starts_with('…')
}

/// The new and old sides of a quote written as a diff, or as code with some lines marked `+`
/// or `-` (context lines often lose their leading space when a reviewer re-indents): `None`
/// when no line carries a marker. File headers (`+++`, `---`, `diff --git`, `index`) and hunk
/// headers (`@@`) are left out of both sides.
fn diff_sides(lines: &[&str]) -> Option<(Vec<String>, Vec<String>)> {
    let marked = |l: &str, m: char| {
        l.strip_prefix(m)
            .is_some_and(|rest| !rest.starts_with(['+', '-', '=', '>']))
    };
    let header = |l: &str| {
        l.starts_with("+++ ")
            || l.starts_with("--- ")
            || l.starts_with("@@")
            || l.starts_with("diff --git")
            || l.starts_with("index ")
    };
    let any_marked = lines
        .iter()
        .any(|l| !header(l) && (marked(l, '+') || marked(l, '-')));
    if !any_marked {
        return None;
    }
    let side = |keep: char, drop: char| -> Vec<String> {
        lines
            .iter()
            .filter(|l| !header(l) && !marked(l, drop))
            .map(|l| {
                if marked(l, keep) {
                    l[1..].to_string()
                } else {
                    l.strip_prefix(' ').unwrap_or(l).to_string()
                }
            })
            .collect()
    };
    Some((side('+', '-'), side('-', '+')))
}

/// A quote written as a Markdown list or block quote: every non-blank line starts with `- `,
/// `* `, `+ `, `> `, `1. ` or `1) `. The lines without the marker, else `None`.
fn without_list_markers(lines: &[&str]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let t = line.trim_start();
        if t.is_empty() {
            out.push(String::new());
            continue;
        }
        let rest = ["- ", "* ", "+ ", "> "]
            .iter()
            .find_map(|m| t.strip_prefix(m))
            .or_else(|| {
                let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                (digits > 0)
                    .then(|| &t[digits..])
                    .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
            })?;
        out.push(rest.to_string());
    }
    Some(out)
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

    fn texts(r: &Reading) -> Vec<Vec<&str>> {
        r.segments
            .iter()
            .map(|s| s.iter().map(|l| l.text.as_str()).collect())
            .collect()
    }

    #[test]
    fn elisions_split_segments_and_comments_are_optional() {
        let r = &readings("a()\n// why\n...\n\nb()\n// ...\n")[0];
        assert_eq!(texts(r), vec![vec!["a()", "// why"], vec!["b()"]]);
        assert_eq!(r.required, 2);
        assert!(r.segments[0][1].optional);
    }

    #[test]
    fn diff_and_list_markers_give_more_readings() {
        let all = readings("-    let a = 1;\n+    let a = 2;\ng(a);");
        assert_eq!(all.len(), 3);
        assert_eq!(texts(&all[1]), vec![vec!["let a = 2;", "g(a);"]]);
        assert_eq!(texts(&all[2]), vec![vec!["let a = 1;", "g(a);"]]);
        let listed = readings("- foo()\n- bar()");
        assert_eq!(texts(listed.last().unwrap()), vec![vec!["foo()", "bar()"]]);
        let numbered = readings("1. foo()\n2) bar()");
        assert_eq!(
            texts(numbered.last().unwrap()),
            vec![vec!["foo()", "bar()"]]
        );
    }

    #[test]
    fn a_quote_of_comments_alone_requires_them() {
        let r = &readings("// TODO: remove\n// once fixed")[0];
        assert_eq!(r.required, 2);
        assert!(r.segments[0].iter().all(|l| !l.optional));
    }

    #[test]
    fn inline_ellipsis_gives_pieces() {
        let r = &readings("return &Config{...}")[0];
        assert_eq!(
            r.segments[0][0].pieces.as_deref(),
            Some(&["return &Config{".to_string(), "}".to_string()][..])
        );
    }
}
