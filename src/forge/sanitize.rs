//! Text from agents (and from the change they read) made safe to post on a forge as Markdown.
//!
//! A posted comment is rendered by the forge and can act there: `@org/everyone` notifies a
//! whole team, raw HTML such as `<!--` hides the rest of the comment (deep-review's own text
//! with it), a ```` ```suggestion ```` block offers a one-click commit of whatever it holds. An
//! agent read a change written by someone else and may repeat what it was told to, so its text
//! is rewritten here before it is posted:
//!
//! - mentions (`@name`, `@org/team`, Bitbucket's `@{account-id}`) get a zero-width space after
//!   the `@` (`&#8203;`, as bots commonly do): they read the same and notify no one;
//! - raw HTML is shown as text (`<` becomes `&lt;`): no comment, `<details>` or image tag;
//! - a Markdown image (`![t](https://host/t.gif)`) becomes a link: nothing loads when the
//!   comment is viewed;
//! - bidi controls and zero-width characters are written out (`\u{202e}`,
//!   [`crate::text::reveal_invisible`]);
//! - a fenced block whose info string is `suggestion` becomes a plain `text` block: only
//!   deep-review's own checked suggestions ([`super::suggestion`]) are suggestions;
//! - a code fence left open is closed, so it cannot swallow what deep-review writes after it;
//! - text is cut to a length the forge accepts.
//!
//! Code (inline and fenced) is left exactly as written, apart from the fence fixes: mentions
//! in code do not notify, and code must stay byte-for-byte.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// The longest text of one agent's field posted (bodies, fixes); forges cap a comment at about
/// 65,000 characters and a review holds many.
pub const MAX_FIELD_CHARS: usize = 6_000;

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// A block of untrusted Markdown, cut to `max_chars` and made safe to post.
pub fn markdown(text: &str, max_chars: usize) -> String {
    let text = crate::text::reveal_invisible(text);
    let text = truncate(text.trim_end(), max_chars);
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut in_code_block = false;
    // Adjacent text events are one run of text: `&#64;team` comes as `@` then `team`.
    let mut run: Option<(Range<usize>, String)> = None;
    let flush = |run: &mut Option<(Range<usize>, String)>, edits: &mut Vec<_>| {
        if let Some((range, decoded)) = run.take()
            && (has_mention(&decoded) || decoded.contains('<'))
        {
            edits.push((range, escape_text(&decoded)));
        }
    };
    for (event, range) in Parser::new_ext(&text, options()).into_offset_iter() {
        if let Event::Text(decoded) = &event
            && !in_code_block
        {
            match &mut run {
                Some((r, t)) if r.end == range.start => {
                    r.end = range.end;
                    t.push_str(decoded);
                }
                _ => {
                    flush(&mut run, &mut edits);
                    run = Some((range, decoded.to_string()));
                }
            }
            continue;
        }
        flush(&mut run, &mut edits);
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                if let CodeBlockKind::Fenced(info) = kind
                    && info.trim_start().starts_with("suggestion")
                {
                    let line_end = text[range.start..]
                        .find('\n')
                        .map_or(range.end, |i| range.start + i);
                    if let Some(at) = text[range.start..line_end].find("suggestion") {
                        let at = range.start + at;
                        edits.push((at..at + "suggestion".len(), "text".to_string()));
                    }
                }
            }
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            // An image loads from its address when the comment is viewed (a beacon): a link.
            Event::Start(Tag::Image { .. }) if text[range.clone()].starts_with('!') => {
                edits.push((range.start..range.start + 1, String::new()));
            }
            Event::Html(raw) | Event::InlineHtml(raw) if !in_code_block => {
                edits.push((range, escape_html(&raw)));
            }
            _ => {}
        }
    }
    flush(&mut run, &mut edits);
    let mut out = apply(&text, edits);
    close_open_fence(&mut out);
    out
}

/// One line of untrusted text for a table cell or a heading: newlines and control characters
/// become spaces, `|` is escaped, and the line is made safe as [`markdown`] does.
pub fn line(text: &str, max_chars: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|");
    // A line starting with `#`, `>`, `-` or a fence would be a block of its own.
    let safe = markdown(&flat, max_chars).replace('\n', " ");
    match safe.chars().next() {
        Some('#' | '>' | '-' | '+' | '*' | '`' | '~' | '=') => format!("\\{safe}"),
        _ => safe,
    }
}

/// At most `max_chars` characters, cut at a line end when one is near, with a note saying so.
pub fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    let head = match head.rfind('\n') {
        Some(i) if i > cut / 2 => &head[..i],
        _ => head,
    };
    format!("{head}\n\n… (cut: the full text is in the report)")
}

/// `@` followed by a name character: what a forge would read as a mention.
fn has_mention(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'@' && is_name_byte(w[1]))
}

/// A byte that can follow the `@` of a mention (`{` opens Bitbucket's `@{account-id}`).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'{'
}

/// Decoded text written back as Markdown that renders to the same text with every mention
/// broken: ASCII punctuation is backslash-escaped (so nothing becomes markup), and a zero-width
/// space follows each `@` that starts a name.
fn escape_text(decoded: &str) -> String {
    let mut out = String::with_capacity(decoded.len() + 16);
    let bytes = decoded.as_bytes();
    for (i, c) in decoded.char_indices() {
        if c == '@' {
            out.push_str("\\@");
            if bytes.get(i + 1).is_some_and(|b| is_name_byte(*b)) {
                out.push_str("&#8203;");
            }
        } else if c == '<' {
            out.push_str("&lt;");
        } else if c.is_ascii_punctuation() {
            out.push('\\');
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Raw HTML shown as text: `<` and `&` as entities, mentions broken.
fn escape_html(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 16);
    let bytes = raw.as_bytes();
    for (i, c) in raw.char_indices() {
        match c {
            '<' => out.push_str("&lt;"),
            '&' => out.push_str("&amp;"),
            '@' => {
                out.push('@');
                if bytes.get(i + 1).is_some_and(|b| is_name_byte(*b)) {
                    out.push_str("&#8203;");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Applies non-overlapping edits (sorted here) to `text`.
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    if edits.is_empty() {
        return text.to_string();
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 8);
    let mut at = 0;
    for (range, replacement) in edits {
        if range.start < at {
            continue;
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&replacement);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// When the text ends inside a fenced code block, closes it, so that what follows the text in
/// a comment is not swallowed into the code.
fn close_open_fence(text: &mut String) {
    let mut open: Option<(char, usize)> = None;
    for line in text.lines() {
        let t = line.trim_start_matches(' ');
        let indent = line.len() - t.len();
        let fence_char = match t.chars().next() {
            Some(c @ ('`' | '~')) if indent < 4 => c,
            _ => continue,
        };
        let run = t.chars().take_while(|c| *c == fence_char).count();
        if run < 3 {
            continue;
        }
        match open {
            None => {
                // A backtick fence's info string may not hold a backtick.
                if fence_char == '~' || !t[run..].contains('`') {
                    open = Some((fence_char, run));
                }
            }
            Some((c, n)) if c == fence_char && run >= n && t[run..].trim().is_empty() => {
                open = None;
            }
            Some(_) => {}
        }
    }
    if let Some((c, n)) = open {
        text.push('\n');
        text.extend(std::iter::repeat_n(c, n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_notify_no_one_and_code_is_kept() {
        let out = markdown(
            "Ask @org/everyone and @alice; mail a@b.c.\n\n`@decorator` stays.\n\n```py\n@property\ndef x(self): ...\n```",
            1000,
        );
        assert!(!out.contains("@org"), "{out}");
        assert!(out.contains("\\@&#8203;org\\/everyone"), "{out}");
        assert!(out.contains("\\@&#8203;alice"), "{out}");
        assert!(out.contains("`@decorator` stays."), "{out}");
        assert!(
            out.contains("```py\n@property\ndef x(self): ...\n```"),
            "{out}"
        );
    }

    #[test]
    fn entities_and_escapes_cannot_smuggle_a_mention() {
        for hostile in [
            "&#64;team",
            "\\@team",
            "&commat;team",
            "@{557058:f0e1d2c3-b4a5-4697-8899-aabbccddeeff}",
        ] {
            let out = markdown(hostile, 100);
            assert!(out.contains("&#8203;"), "{hostile} -> {out}");
        }
    }

    #[test]
    fn html_is_shown_as_text_and_cannot_hide_the_rest() {
        let out = markdown("before <!-- hidden\n\n<details><summary>@x</summary>", 1000);
        assert!(!out.contains("<!--"), "{out}");
        assert!(!out.contains("<details>"), "{out}");
        assert!(out.starts_with("before &lt;"), "{out}");
        assert!(out.contains("@&#8203;x"), "{out}");
    }

    #[test]
    fn only_deep_review_writes_suggestions_and_fences_are_closed() {
        let out = markdown("Try:\n\n```suggestion\nrm -rf /\n```\n", 1000);
        assert!(!out.contains("```suggestion"), "{out}");
        assert!(out.contains("```text\nrm -rf /\n```"), "{out}");
        let out = markdown("Open:\n\n````rust\nfn x() {}\n```\n", 1000);
        assert!(out.ends_with("\n````"), "{out}");
        let out = markdown("Closed:\n\n```\nx\n```", 1000);
        assert!(out.ends_with("x\n```"), "{out}");
    }

    #[test]
    fn images_become_links_and_invisible_characters_show() {
        let out = markdown(
            "See ![t](https://evil.example/t.gif?id=42) and ![r][ref].\n\n[ref]: https://evil.example/r.png\n",
            1000,
        );
        assert!(!out.contains("!["), "{out}");
        assert!(
            out.contains("[t](https://evil.example/t.gif?id=42)"),
            "{out}"
        );
        assert!(out.contains("[r][ref]"), "{out}");
        // Code keeps its `![`.
        assert!(markdown("`![x](y)`", 100).contains("`![x](y)`"));
        let out = markdown("ok\u{202e}txt.exe\n```\nif a\u{2066} {}\n```", 1000);
        assert!(out.contains("ok\\u{202e}txt.exe"), "{out}");
        assert!(out.contains("if a\\u{2066} {}"), "{out}");
        assert!(
            !out.contains('\u{202e}') && !out.contains('\u{2066}'),
            "{out}"
        );
        // In a run with a mention, where punctuation is escaped, it reads the same.
        let out = markdown("\u{200b}@x", 100);
        assert!(out.starts_with("\\\\u\\{200b\\}"), "{out}");
        assert!(!out.contains('\u{200b}'), "{out}");
        assert_eq!(line("a\u{202e}b", 100), "a\\u{202e}b");
    }

    #[test]
    fn lines_stay_one_cell() {
        assert_eq!(line("a | b\nc", 100), "a \\| b c");
        assert_eq!(line("# not a heading", 100), "\\# not a heading");
        assert_eq!(line("hi @bob", 100), "hi \\@&#8203;bob");
    }

    #[test]
    fn long_text_is_cut_with_a_note() {
        let long = "line\n".repeat(1000);
        let out = truncate(&long, 100);
        assert!(out.chars().count() < 150, "{}", out.len());
        assert!(out.ends_with("(cut: the full text is in the report)"));
        assert_eq!(truncate("é", 1), "é");
    }
}
