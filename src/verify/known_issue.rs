//! A comment in the code that marks an issue as known or temporary (`TODO`, `FIXME`, `XXX`,
//! `HACK`, "temporary workaround", "temporarily"), looked for at a finding's grounded lines and
//! in the block around them. Calibration lowers the finding's severity one level for it and
//! quotes the comment as the reason: the code's author already knows.
//!
//! A comment the change under review added does not count: the change's author cannot lower
//! the severity of their own finding by writing `// TODO` above it (see `check.rs`).
//!
//! Only comments that speak about these lines count, nearest first: the cited lines
//! themselves (a trailing comment), the comment just above them, then for each enclosing block
//! outward (found by indentation, within `MAX_REACH` lines) its first line and the comment
//! above it (a function's doc comment). A `TODO` elsewhere in a long function is about other
//! code and is not taken.

use std::sync::LazyLock;

use regex::Regex;

use super::quote::{FileText, is_comment_line};

/// How far above the cited lines enclosing blocks are looked for.
const MAX_REACH: usize = 120;

/// How many lines a comment block above or below a line may have.
const MAX_COMMENT_RUN: usize = 12;

/// The quoted comment is cut at this many characters (at the end of a sentence when one ends
/// past half of it).
const MAX_COMMENT_CHARS: usize = 240;

/// How many comment lines after the marked one may continue it.
const MAX_CONTINUATION: usize = 8;

/// The markers, as whole words: `TODO`, `FIXME`, `HACK` in any case, `XXX` in capitals, and
/// "temporary" only where it says the code is (`temporary fix`, `is temporary`, `temporarily`),
/// not for a temporary file or buffer.
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        \b(?i:todo|fixme|hack)\b
        | \bXXX\b
        | \b(?i:temporarily)\b
        | \b(?i:temporary)\b (?: \s+ (?i:fix|workaround|hack|solution|measure|patch|change|kludge|code|until|for\s+now) \b | \s*[.,;:)!] | \s*$ )
        | \b(?i:is|are|as\s+a|this\s+is)\s+(?i:temporary)\b",
    )
    .expect("valid regex")
});

/// The text of a known-issue comment about lines `start..=end` (1-based) of `file`, nearest
/// first, skipping comments on lines for which `written_by_change` (1-based) says yes; `None`
/// when there is none.
pub fn comment_near(
    file: &FileText,
    start: u32,
    end: u32,
    written_by_change: impl Fn(u32) -> bool,
) -> Option<String> {
    let n = file.lines.len();
    if n == 0 || start == 0 {
        return None;
    }
    let first = (start as usize - 1).min(n - 1);
    let last = (end as usize).clamp(first + 1, n) - 1;
    let mut places: Vec<usize> = (first..=last).collect();
    places.extend(comments_above(file, first));
    for header in enclosing_headers(file, first, last) {
        places.push(header);
        places.extend(comments_above(file, header));
    }
    places
        .into_iter()
        .filter(|&i| !written_by_change(i as u32 + 1))
        .find_map(|i| marker_comment(file, i))
}

/// The comment lines just above line `i` (a blank line between allowed), nearest first.
fn comments_above(file: &FileText, i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut j = i;
    let mut blank_seen = false;
    while j > 0 && out.len() < MAX_COMMENT_RUN {
        j -= 1;
        let line = &file.folded[j];
        if line.is_empty() && !blank_seen && out.is_empty() {
            blank_seen = true;
            continue;
        }
        if !is_comment_line(line) {
            break;
        }
        out.push(j);
    }
    out
}

/// The first lines of the blocks enclosing lines `first..=last`, innermost first: going up,
/// each code line indented less than everything below it, to the first one not indented.
fn enclosing_headers(file: &FileText, first: usize, last: usize) -> Vec<usize> {
    let floor = first.saturating_sub(MAX_REACH);
    let mut indent = (first..=last)
        .filter(|&i| !file.folded[i].is_empty())
        .map(|i| indentation(&file.lines[i]))
        .min()
        .unwrap_or(0);
    let mut headers = Vec::new();
    let mut i = first;
    while indent > 0 && i > floor {
        i -= 1;
        if file.folded[i].is_empty() || is_comment_line(&file.folded[i]) {
            continue;
        }
        let here = indentation(&file.lines[i]);
        if here < indent {
            headers.push(i);
            indent = here;
        }
    }
    headers
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The known-issue comment on line `i`, with the comment lines that continue it: the comment's
/// text without its marker (`//`, `#`, ...), whitespace folded, cut to a readable length.
fn marker_comment(file: &FileText, i: usize) -> Option<String> {
    let line = &file.folded[i];
    let m = MARKER.find(line)?;
    let opener = comment_start(line, m.start())?;
    let mut text = strip_opener(&line[opener..]).to_string();
    // Continuation lines: whole-line comments that do not start a new marked comment.
    for next in file.folded.iter().skip(i + 1).take(MAX_CONTINUATION) {
        if !is_comment_line(next) || MARKER.is_match(next) {
            break;
        }
        let more = strip_opener(next);
        if more.is_empty() {
            break;
        }
        text.push(' ');
        text.push_str(more);
    }
    let text = text
        .trim_end_matches("*/")
        .trim_end_matches("-->")
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>();
    Some(cut(&text))
}

/// Where the comment holding byte `at` of `line` starts: a whole-line comment, or a comment
/// opener (`//`, `#`, `/*`, `--`, `<!--`, `;`) before `at`; `None` when `at` is code or a
/// string (`log("TODO")`).
fn comment_start(line: &str, at: usize) -> Option<usize> {
    if is_comment_line(line) {
        return Some(0);
    }
    let before = &line[..at];
    ["//", "/*", " #", " -- ", "<!--"]
        .iter()
        .filter_map(|o| {
            before
                .find(o)
                .map(|p| if o.starts_with(' ') { p + 1 } else { p })
        })
        .filter(|&p| !in_string(&line[..p]))
        .min()
}

/// Whether an odd number of `"` precede: a comment opener there is inside a string.
fn in_string(before: &str) -> bool {
    before.matches('"').count() % 2 == 1
}

fn strip_opener(comment: &str) -> &str {
    comment
        .trim_start_matches("<!--")
        .trim_start_matches(['/', '#', '*', ';'])
        .trim_start_matches("--")
        .trim()
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_COMMENT_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_COMMENT_CHARS - 1).collect();
    match head.rfind(". ") {
        Some(at) if at >= head.len() / 2 => head[..=at].to_string(),
        _ => head + "…",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[&str]) -> FileText {
        FileText::new(&(lines.join("\n") + "\n"))
    }

    #[test]
    fn markers_in_comments_only() {
        for yes in [
            "// TODO: drop this",
            "# FIXME(ann) wrong for leap years",
            "x = 1  # XXX overflow",
            "/* HACK around the driver bug */",
            "// temporary workaround until v2",
            "// Temporarily disabled.",
            "// This is temporary.",
            "-- todo: index this column",
        ] {
            let f = file(&[yes]);
            assert!(marker_comment(&f, 0).is_some(), "{yes}");
        }
        for no in [
            "log(\"TODO\")",
            "// create a temporary file",
            "// the xxx placeholder",
            "todo_list.push(item)",
            "let hacker = 1; // hackers welcome",
        ] {
            let f = file(&[no]);
            assert!(marker_comment(&f, 0).is_none(), "{no}");
        }
    }

    #[test]
    fn the_comment_text_with_its_continuation() {
        let f = file(&[
            "    // TODO: retry forever for now;",
            "    // bound it once the queue exists.",
            "    loop {",
        ]);
        assert_eq!(
            marker_comment(&f, 0).as_deref(),
            Some("TODO: retry forever for now; bound it once the queue exists.")
        );
    }

    #[test]
    fn found_around_the_lines_and_the_enclosing_blocks_not_beyond() {
        let f = file(&[
            "// FIXME: other function",           // 1
            "fn other() {}",                      // 2
            "",                                   // 3
            "/// Sends with retries.",            // 4
            "/// HACK: no backoff yet.",          // 5
            "fn send() {",                        // 6
            "    // TODO: about prepare only",    // 7
            "    prepare();",                     // 8
            "    loop {",                         // 9
            "        post();",                    // 10
            "    }",                              // 11
            "    // XXX: the flush is unchecked", // 12
            "",                                   // 13
            "    flush();",                       // 14
            "}",                                  // 15
        ]);
        // The loop's own lines have no comment; the function's doc comment has one.
        assert_eq!(
            comment_near(&f, 10, 10, |_| false).as_deref(),
            Some("HACK: no backoff yet.")
        );
        assert_eq!(
            comment_near(&f, 8, 8, |_| false).as_deref(),
            Some("TODO: about prepare only")
        );
        assert_eq!(
            comment_near(&f, 14, 14, |_| false).as_deref(),
            Some("XXX: the flush is unchecked")
        );
        assert_eq!(
            comment_near(&f, 2, 2, |_| false).as_deref(),
            Some("FIXME: other function")
        );
        // The same lines, when the change under review wrote the doc comment: it does not
        // count (the author cannot lower their own finding), and nothing else does either.
        assert_eq!(comment_near(&f, 10, 10, |line| line == 5), None);
        let g = file(&[
            "/// HACK: no backoff yet.",
            "fn send() {",
            "    prepare();",
            "    // XXX: other code",
            "    other();",
            "    loop {",
            "        post();",
            "    }",
            "}",
        ]);
        // A marked comment elsewhere in the body is about other code; the doc comment counts.
        assert_eq!(
            comment_near(&g, 7, 7, |_| false).as_deref(),
            Some("HACK: no backoff yet.")
        );
        let h = file(&[
            "fn a() {",
            "    // XXX: other code",
            "    other();",
            "    mine();",
            "}",
        ]);
        assert_eq!(comment_near(&h, 4, 4, |_| false), None);
    }
}
