//! One quoted line against the file at one place: equal once whitespace is folded, or close in
//! the ways reviewers write: an annotation added, the file's trailing comment left out, `...`
//! for text (also over several lines), a comment block condensed to one line.

use super::FileText;
use super::reading::QLine;

/// What a file line is, for deciding what a quote may pass over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineKind {
    Blank,
    /// A comment line: a quote may leave it out.
    Comment,
    Code,
}

/// How many file lines one quoted line with `...` may stand for (`Call(...)` over a long
/// argument list).
const MAX_WILDCARD_SPAN: usize = 40;

/// How many file comment lines one quoted comment line may condense.
const MAX_COMMENT_JOIN: usize = 12;

/// The kind of a folded file line.
pub(super) fn kind(folded: &str) -> LineKind {
    if folded.is_empty() {
        LineKind::Blank
    } else if is_comment_line(folded) {
        LineKind::Comment
    } else {
        LineKind::Code
    }
}

/// A whole-line comment in the common languages: `//`, `/*`, `*/`, `* text` (inside a block
/// comment), `# text` (not `#[attr]`, `#!`, `#include`), `-- text`, `<!--`, `;;`.
pub(crate) fn is_comment_line(folded: &str) -> bool {
    let starts = |p: &str| folded.starts_with(p);
    if starts("//") || starts("/*") || starts("*/") || starts("<!--") || starts(";;") {
        return true;
    }
    if folded == "*" || starts("* ") || folded == "#" || starts("# ") || starts("##") {
        return true;
    }
    folded == "--" || starts("-- ")
}

/// Where a trailing comment starts in a folded line (` // x`, ` # x`, ` /* x`, ` -- x`): the
/// byte offset of the space before it. A marker needs a space before it, so `http://x` and
/// `a--` are not comments.
pub(super) fn trailing_comment(folded: &str) -> Option<usize> {
    folded
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b == b' ')
        .map(|(i, _)| i)
        .find(|&i| starts_comment(&folded[i..]))
}

/// Whether `rest` (from a space on) is a trailing comment.
fn starts_comment(rest: &str) -> bool {
    [" //", " #", " /*", " <!--"]
        .iter()
        .any(|m| rest.starts_with(m))
        || rest == " --"
        || rest.starts_with(" -- ")
}

/// Whether a quoted line stands for a file line (folded). Cheap when they differ at once, as
/// almost every pair does: the matcher asks this for every line of the file.
pub(super) fn same_line(q: &QLine, line: &str) -> bool {
    let quoted = q.text.as_str();
    if quoted == line {
        return true;
    }
    if line.is_empty() || quoted.is_empty() || quoted.as_bytes()[0] != line.as_bytes()[0] {
        return false;
    }
    // The reviewer's annotation after the code: `return err // <- swallowed`.
    if let Some(rest) = quoted.strip_prefix(line) {
        return rest.strip_prefix(' ').is_some_and(|r| {
            ["//", "#", "<-", "←", "/*", "--"]
                .iter()
                .any(|m| r.starts_with(m))
        });
    }
    // The file's trailing comment left out of the quote.
    if let Some(rest) = line.strip_prefix(quoted) {
        return starts_comment(rest);
    }
    // Both carry a comment, after the same code.
    match q.code_len {
        Some(c) if c > 0 => {
            line.len() > c
                && line.as_bytes()[..c] == quoted.as_bytes()[..c]
                && starts_comment(&line[c..])
        }
        _ => false,
    }
}

/// `...` pieces inside a quoted line match any text: the first piece starts the text, the last
/// ends it, the ones between appear in order.
pub(super) fn wildcard_match(pieces: &[String], text: &str) -> bool {
    let n = pieces.len();
    let mut rest = text;
    for (k, piece) in pieces.iter().enumerate() {
        if piece.is_empty() {
            continue;
        }
        if k == 0 {
            match rest.strip_prefix(piece.as_str()) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if k == n - 1 {
            return rest.trim_end().ends_with(piece.as_str());
        } else {
            match rest.find(piece.as_str()) {
                Some(at) => rest = &rest[at + piece.len()..],
                None => return false,
            }
        }
    }
    true
}

/// Whether quoted line `q` matches the file at line index `j`; the last line index it covers
/// (more than `j` when `...` stands for several lines or a comment block was condensed).
pub(super) fn matches_at(q: &QLine, file: &FileText, j: usize) -> Option<usize> {
    let line = file.folded.get(j)?;
    if same_line(q, line) {
        return Some(j);
    }
    if let Some(pieces) = &q.pieces {
        if !pieces[0].is_empty() && !line.starts_with(pieces[0].as_str()) {
            return None;
        }
        if wildcard_match(pieces, line) {
            return Some(j);
        }
        // The line with its trailing comment cut off, as the quote may leave it out.
        if let Some(at) = trailing_comment(line)
            && wildcard_match(pieces, &line[..at])
        {
            return Some(j);
        }
        return wildcard_over_lines(pieces, file, j);
    }
    if q.comment && file.kinds[j] == LineKind::Comment {
        return condensed_comment(&q.text, file, j);
    }
    None
}

/// `Call(...)` for `Call(` on line `j`, the arguments on the next lines and `)` closing a later
/// one: the run of lines up to the first (within [`MAX_WILDCARD_SPAN`]) that ends with the last
/// piece, joined, matched against the pieces. Only that first closing line is tried, so a line
/// costs `O(MAX_WILDCARD_SPAN × line length)` whatever the file.
fn wildcard_over_lines(pieces: &[String], file: &FileText, j: usize) -> Option<usize> {
    let first = pieces.first().filter(|p| !p.is_empty())?;
    let last = pieces.last().filter(|p| !p.is_empty())?;
    if pieces.len() < 2 || !file.folded[j].starts_with(first.as_str()) {
        return None;
    }
    let end = (j + MAX_WILDCARD_SPAN).min(file.folded.len() - 1);
    for k in j + 1..=end {
        let line = &file.folded[k];
        let code = if line.ends_with(last.as_str()) || !line.contains(last.as_str()) {
            line.as_str()
        } else {
            trailing_comment(line).map_or(line.as_str(), |at| &line[..at])
        };
        if !code.ends_with(last.as_str()) {
            continue;
        }
        let joined = file.folded[j..k].join(" ") + " " + code;
        return wildcard_match(pieces, &joined).then_some(k);
    }
    None
}

/// A quoted comment line that condenses the comment block starting at line `j`: the block's
/// lines joined, their markers dropped after the first, read the same.
fn condensed_comment(quoted: &str, file: &FileText, j: usize) -> Option<usize> {
    let mut joined = file.folded[j].clone();
    let end = (j + MAX_COMMENT_JOIN).min(file.folded.len() - 1);
    for k in j + 1..=end {
        if file.kinds[k] != LineKind::Comment || joined.len() >= quoted.len() {
            return None;
        }
        let text = file.folded[k]
            .trim_start_matches(['/', '#', '*', '-', ';', '<', '!'])
            .trim_start();
        if text.is_empty() {
            continue;
        }
        joined.push(' ');
        joined.push_str(text);
        if joined == quoted {
            return Some(k);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(quoted: &str, line: &str) -> bool {
        same_line(&QLine::new(quoted.to_string()), line)
    }

    #[test]
    fn annotations_and_trailing_comments() {
        assert!(same("return err // <- swallowed", "return err"));
        assert!(same("x := 1", "x := 1 // the default"));
        assert!(same("x := 1 # mine", "x := 1 # theirs"));
        assert!(same("x := 1 // mine", "x := 1 /* theirs */"));
        assert!(!same("x := 1", "x := 12"));
        assert!(!same("x := 1 // mine", "x := 12 // mine"));
        assert!(!same("url := \"http:", "url := \"http://x\""));
        assert!(!same("a", "a--"));
    }

    #[test]
    fn comment_lines() {
        for c in [
            "// a",
            "/* a",
            " * a",
            "*/",
            "# a",
            "## a",
            "-- a",
            "<!-- a -->",
        ] {
            assert!(is_comment_line(c.trim()), "{c}");
        }
        for c in [
            "#[derive(Debug)]",
            "#!/bin/sh",
            "#include <x.h>",
            "*p = 1;",
            "--flag",
        ] {
            assert!(!is_comment_line(c), "{c}");
        }
    }

    #[test]
    fn wildcards() {
        let p = |s: &str| -> Vec<String> { s.split("...").map(|x| x.trim().to_string()).collect() };
        assert!(wildcard_match(
            &p("load(...); err != nil {"),
            "load(cfg, path); err != nil {"
        ));
        assert!(!wildcard_match(
            &p("load(...); err != nil {"),
            "save(cfg); err != nil {"
        ));
        assert!(wildcard_match(&p("a...b...c"), "a x b y c"));
    }
}
