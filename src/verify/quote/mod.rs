//! Finding a reviewer's quoted code in a file.
//!
//! Reviewers quote loosely, and a quote that is really in the file must still be found:
//!
//! - whitespace: lines are compared with whitespace folded (runs of spaces and tabs become one
//!   space, ends trimmed) and blank lines ignored on both sides. Whitespace is never dropped
//!   entirely: `"$@"` and `"$ @"` are different code, and telling them apart is the point;
//! - elisions: a line of `...`, `…`, `// ...` or `# ... rest unchanged` stands for any number of
//!   lines; `...` inside a line for any text, also over several lines (`Call(...)` for a call
//!   whose arguments take five lines, `&Config{...}` for a struct literal);
//! - comments: comment lines of the file the quote leaves out are passed over, a comment block
//!   may be condensed to one line, the file's trailing comment may be left out and the
//!   reviewer may add one (`// <- here`); the quote's own comment lines are matched when they
//!   are there and passed over when not;
//! - markers: a quote written as a diff (`-`/`+` on some lines) is also read as its new side and
//!   its old side, a quote written as a list (`- `, `1. `) without the markers, a quote copied
//!   with line numbers (`193: foo`) without them;
//! - slips: when nothing matches strictly, a few unquoted lines may sit between two quoted
//!   lines, and then a quarter of a long quote's lines may be found nowhere (a tool that
//!   expanded `@path` into one of them).
//!
//! Matching is linear in the file for a given quote (see `matcher.rs`): a repetitive file of
//! 100,000 lines and a quote anchored on `},` take milliseconds, not minutes.

mod lines;
mod matcher;
pub mod prose;
mod reading;

use lines::LineKind;
pub(crate) use lines::is_comment_line;
use matcher::Pass;
use reading::Reading;

/// A file's text as verification sees it: lines without their `\r\n`/`\n`, the same lines
/// with whitespace folded, and what the matcher needs to pass over blank and comment lines in
/// constant time.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    pub lines: Vec<String>,
    pub folded: Vec<String>,
    kinds: Vec<LineKind>,
    /// For each line index, the first index at or after it whose line is not blank (the line
    /// count when there is none).
    next_nonblank: Vec<u32>,
    /// For each line index, the first index at or after it whose line is code.
    next_code: Vec<u32>,
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
        let folded: Vec<String> = lines.iter().map(|l| fold(l)).collect();
        let kinds: Vec<LineKind> = folded.iter().map(|l| lines::kind(l)).collect();
        let n = u32::try_from(kinds.len()).unwrap_or(u32::MAX);
        let mut next_nonblank = vec![n; kinds.len()];
        let mut next_code = vec![n; kinds.len()];
        let (mut nonblank, mut code) = (n, n);
        for (i, kind) in kinds.iter().enumerate().rev() {
            let at = u32::try_from(i).unwrap_or(u32::MAX);
            if *kind != LineKind::Blank {
                nonblank = at;
            }
            if *kind == LineKind::Code {
                code = at;
            }
            next_nonblank[i] = nonblank;
            next_code[i] = code;
        }
        FileText {
            lines,
            folded,
            kinds,
            next_nonblank,
            next_code,
        }
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

/// A quote ready to be matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// As written first, then without markers (see [`reading::readings`]).
    readings: Vec<Reading>,
}

/// How many unquoted code lines may sit between two quoted lines once the strict pass failed.
const TOLERATED_SKIP: usize = 3;

/// A token shorter than this is too common to search a whole tree for.
const MIN_NEEDLE: usize = 4;

impl Quote {
    /// Parses a code block; `None` when it has no line of code to look for (empty, or only
    /// elisions and blank lines).
    pub fn parse(code: &str) -> Option<Quote> {
        let readings = reading::readings(code);
        (!readings.is_empty()).then_some(Quote { readings })
    }

    /// The quote's required lines as written (whitespace folded; line numbers, elisions and
    /// comment-only lines left out), in order: what identifies the quoted code however it was
    /// written, so a later round's quote of the same lines has the same key.
    pub fn required_lines(&self) -> impl Iterator<Item = &str> {
        self.readings
            .first()
            .into_iter()
            .flat_map(|r| r.required_lines().map(|l| l.text.as_str()))
    }

    /// How much text the quote pins down: the length of its required lines as written. A quote
    /// of a `}` or a `return nil` could be anywhere; one of a few real lines could not.
    pub fn weight(&self) -> usize {
        self.readings
            .first()
            .map_or(0, |r| r.required_lines().map(|l| l.text.len()).sum())
    }

    /// Words of the quote to find the files that may hold it (each file that holds the quote
    /// holds one of them): the longest whitespace-free token of the two lines that have the
    /// longest, per reading, without the reviewer's trailing annotations. Empty when no token
    /// is long enough to be worth a search.
    pub fn needles(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.readings {
            let mut best: Vec<&str> = r
                .required_lines()
                .filter_map(|l| longest_token(&l.text))
                .collect();
            best.sort_by_key(|t| std::cmp::Reverse(t.len()));
            for t in best.into_iter().take(2) {
                if t.len() >= MIN_NEEDLE && !out.iter().any(|o| o == t) {
                    out.push(t.to_string());
                }
            }
        }
        out
    }

    /// Every place the quote occurs in `file`, as 1-based inclusive line ranges in file order,
    /// from the strictest pass that finds it (each reading tried in order within a pass).
    pub fn find_in(&self, file: &FileText) -> Vec<(u32, u32)> {
        for level in 0..3 {
            for r in &self.readings {
                if let Some(pass) = pass(level, r) {
                    let spans = matcher::find(r, file, pass);
                    if !spans.is_empty() {
                        return spans;
                    }
                }
            }
        }
        Vec::new()
    }
}

/// Pass `level` for a reading: 0 strict (quoted lines on consecutive code lines), 1 with a few
/// unquoted lines between them, 2 with some quoted lines found nowhere (`None` when the
/// reading is too short to lose any).
fn pass(level: usize, r: &Reading) -> Option<Pass> {
    match level {
        0 => Some(Pass { skip: 0, drops: 0 }),
        1 => Some(Pass {
            skip: TOLERATED_SKIP,
            drops: 0,
        }),
        _ => (r.drop_budget() > 0).then(|| Pass {
            skip: TOLERATED_SKIP,
            drops: r.drop_budget(),
        }),
    }
}

/// The longest whitespace-free token of a folded quoted line, with `...` splitting tokens and
/// a trailing annotation (` // <- here`) left out.
fn longest_token(text: &str) -> Option<&str> {
    let code = lines::trailing_comment(text).map_or(text, |at| &text[..at]);
    code.split_whitespace()
        .flat_map(|t| t.split("..."))
        .flat_map(|t| t.split('…'))
        .max_by_key(|t| t.len())
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

    #[test]
    fn a_quote_of_many_elisions_over_a_repetitive_file_is_linear() {
        // 60,000 lines, a `}` on every other one; a quote of 150 `}` segments. A matcher that
        // retries each anchor's chain does 30,000 × 150 chains; this one does each once (a
        // hang is stopped and failed by nextest).
        let text = "{\n}\n".repeat(30_000) + "end()\n";
        let f = file(&text);
        let mut quote = "}\n...\n".repeat(150);
        let found = Quote::parse(&(quote.clone() + "end()"))
            .unwrap()
            .find_in(&f);
        // An elision stands for at most 2,000 lines: the first match starts near the end.
        assert_eq!(found.first(), Some(&(57_704, 60_001)));
        quote.push_str("never()");
        assert!(Quote::parse(&quote).unwrap().find_in(&f).is_empty());
    }

    #[test]
    fn a_quarter_of_a_long_quote_may_be_missing_but_no_more() {
        let f = file("a1()\na2()\na3()\na4()\na5()\na6()\na7()\na8()\n");
        let one_wrong = "a1()\na2()\n@/tmp/expanded/path.rs\na4()\na5()\na6()";
        assert_eq!(Quote::parse(one_wrong).unwrap().find_in(&f), vec![(1, 6)]);
        let first_wrong = "@/tmp/x\na2()\na3()\na4()\na5()";
        assert_eq!(Quote::parse(first_wrong).unwrap().find_in(&f), vec![(2, 5)]);
        let two_of_four = "a1()\nb2()\nb3()\na4()";
        assert!(Quote::parse(two_of_four).unwrap().find_in(&f).is_empty());
    }

    #[test]
    fn needles_are_long_tokens_of_the_code_not_of_annotations() {
        let q =
            Quote::parse("let total = compute_thing(42); // <- overflow_everywhere\nreturn total")
                .unwrap();
        assert_eq!(q.needles(), vec!["compute_thing(42);", "return"]);
        assert!(Quote::parse("}\n)").unwrap().needles().is_empty());
    }

    #[test]
    fn an_inline_ellipsis_against_a_file_of_calls_is_linear() {
        // Every line opens and closes the call; the middle piece is nowhere. Each line tries
        // one run of lines, not every run up to the span limit.
        let f = file(&"call(a, b)\n".repeat(100_000));
        let q = Quote::parse("call(... missing ...)").unwrap();
        assert!(q.find_in(&f).is_empty());
        let g = file("x = call(\n    a,\n    b,\n)\n");
        assert_eq!(
            Quote::parse("x = call(...)").unwrap().find_in(&g),
            vec![(1, 4)]
        );
    }
}
