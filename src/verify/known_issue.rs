//! A comment in the code that marks an issue as known or temporary (`TODO`, `FIXME`, `XXX`,
//! `HACK`, "temporary workaround", "temporarily"), looked for at a finding's grounded lines and
//! in the block around them. Calibration lowers the finding's severity one level for it and
//! quotes the comment as the reason: the code's author already knows.
//!
//! The search is bounded: the cited lines, then the enclosing blocks out to the top-level one
//! (found by indentation) and the comment lines just above it, never more than
//! [`MAX_REACH`] lines from the cited ones. The comment nearest the cited lines wins.

use std::sync::LazyLock;

use regex::Regex;

use super::quote::{FileText, is_comment_line};

/// How far above or below the cited lines the enclosing block is looked for.
const MAX_REACH: usize = 80;

/// How many comment lines above a block's first line belong to it (its doc comment).
const MAX_DOC_LINES: usize = 12;

/// The quoted comment is cut at this many characters.
const MAX_COMMENT_CHARS: usize = 240;

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

/// The text of a known-issue comment at lines `start..=end` (1-based) of `file` or in their
/// enclosing block, nearest first; `None` when there is none.
pub fn comment_near(file: &FileText, start: u32, end: u32) -> Option<String> {
    let n = file.lines.len();
    if n == 0 || start == 0 {
        return None;
    }
    let first = (start as usize - 1).min(n - 1);
    let last = (end as usize).clamp(first + 1, n) - 1;
    let (from, to) = enclosing_block(file, first, last);
    // Nearest to the cited lines first: the cited lines, then outward.
    let mut order: Vec<usize> = (first..=last).collect();
    let (mut up, mut down) = (first, last);
    while up > from || down < to {
        if up > from {
            up -= 1;
            order.push(up);
        }
        if down < to {
            down += 1;
            order.push(down);
        }
    }
    order.into_iter().find_map(|i| marker_comment(file, i))
}

/// The lines of the block that encloses lines `first..=last`: up to the nearest line above
/// that is indented less than they are, repeatedly, to the outermost such line within reach
/// (the function), with the comment lines just above it; down to the line that closes it (the
/// first one indented no more than its first line).
fn enclosing_block(file: &FileText, first: usize, last: usize) -> (usize, usize) {
    let floor = first.saturating_sub(MAX_REACH);
    let ceiling = (last + MAX_REACH).min(file.lines.len() - 1);
    let mut indent = (first..=last)
        .filter(|&i| !file.folded[i].is_empty())
        .map(|i| indentation(&file.lines[i]))
        .min()
        .unwrap_or(0);
    let mut top = first;
    let mut i = first;
    while indent > 0 && i > floor {
        i -= 1;
        if file.folded[i].is_empty() || is_comment_line(&file.folded[i]) {
            continue;
        }
        let here = indentation(&file.lines[i]);
        if here < indent {
            top = i;
            indent = here;
        }
    }
    // The block's doc comment.
    let mut from = top;
    while from > floor && top - from < MAX_DOC_LINES && is_comment_line(&file.folded[from - 1]) {
        from -= 1;
    }
    let mut to = last;
    while to < ceiling {
        let next = to + 1;
        if !file.folded[next].is_empty() && indentation(&file.lines[next]) <= indent && next > top {
            // The closing line (`}`, `end`) belongs to the block; a new statement does not.
            if is_closing(&file.folded[next]) {
                to = next;
            }
            break;
        }
        to = next;
    }
    (from, to)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// `}`, `})`, `end`, `fi`, `done`, `esac`, `];`: a line that only closes a block.
fn is_closing(folded: &str) -> bool {
    folded.chars().all(|c| "}])>;,".contains(c))
        || ["end", "fi", "done", "esac", "endif", "end;"].contains(&folded)
}

/// The known-issue comment on line `i`, with the comment lines that continue it: the comment's
/// text without its marker (`//`, `#`, ...), whitespace folded, cut to a readable length.
fn marker_comment(file: &FileText, i: usize) -> Option<String> {
    let line = &file.folded[i];
    let m = MARKER.find(line)?;
    let opener = comment_start(line, m.start())?;
    let mut text = strip_opener(&line[opener..]).to_string();
    // Continuation lines: whole-line comments that do not start a new marked comment.
    for next in file.folded.iter().skip(i + 1).take(3) {
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
    let mut out: String = text.chars().take(MAX_COMMENT_CHARS - 1).collect();
    out.push('…');
    out
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
    fn found_in_the_enclosing_function_not_beyond() {
        let f = file(&[
            "// FIXME: other function",  // 1
            "fn other() {}",             // 2
            "",                          // 3
            "/// Sends with retries.",   // 4
            "/// HACK: no backoff yet.", // 5
            "fn send() {",               // 6
            "    loop {",                // 7
            "        post();",           // 8
            "    }",                     // 9
            "}",                         // 10
            "// TODO: unrelated",        // 11
        ]);
        assert_eq!(
            comment_near(&f, 8, 8).as_deref(),
            Some("HACK: no backoff yet.")
        );
        assert_eq!(
            comment_near(&f, 2, 2).as_deref(),
            Some("FIXME: other function")
        );
    }
}
