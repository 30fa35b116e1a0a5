//! deep-review's comment text as Bitbucket shows it, and back.
//!
//! Bitbucket renders Markdown but escapes raw HTML: deep-review's `<!-- deep-review:... -->`
//! markers would show as text, and so would its `<sub>` footers and `<details>` sections. On
//! Bitbucket each of them becomes a Markdown link reference definition, `[//]: # (...)`, which
//! Markdown renderers consume without displaying; the text they wrapped stays as plain
//! Markdown. Bitbucket has no suggestion blocks either: a ```` ```suggestion ```` fence becomes
//! a plain fence after a hidden note.
//!
//! The translation is exact both ways, line by line, so the summary read back from Bitbucket
//! compares equal to the same summary rendered again (posting twice edits nothing). It is
//! applied back only to comments that open with a hidden marker: other people's text is read
//! as they wrote it, and a visible `<!-- deep-review:... -->` line someone typed is never
//! taken for a marker.

/// The opening of every hidden line.
const HIDDEN_PREFIX: &str = "[//]: # (deep-review:";
const HIDDEN_SUFFIX: &str = ")";
const MARKER_PREFIX: &str = "<!-- deep-review:";
const MARKER_SUFFIX: &str = " -->";

/// The hidden lines standing for the HTML deep-review writes.
const SUB: &str = "[//]: # (deep-review:sub)";
const DETAILS: &str = "[//]: # (deep-review:details)";
const DETAILS_END: &str = "[//]: # (deep-review:/details)";
const SUGGESTION: &str = "[//]: # (deep-review:suggestion)";
/// The second line of a signed comment (see [`super::identity`]).
const SIGNATURE_PREFIX: &str = "[//]: # (deep-review:sig:";

/// `body` (as the shared renderer writes it) as it is posted on Bitbucket, signed with
/// `signature` after its marker when given.
pub fn to_bitbucket(body: &str, signature: Option<&str>) -> String {
    let mut out: Vec<String> = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        if i == 0
            && let Some(tag) = marker_tag(line)
        {
            out.push(format!("{HIDDEN_PREFIX}{tag}{HIDDEN_SUFFIX}"));
            if let Some(sig) = signature {
                out.push(format!("{SIGNATURE_PREFIX}{sig}{HIDDEN_SUFFIX}"));
            }
            continue;
        }
        if let Some(inner) = line
            .strip_prefix("<sub>")
            .and_then(|l| l.strip_suffix("</sub>"))
        {
            out.push(SUB.to_string());
            out.push(inner.to_string());
        } else if let Some(title) = line
            .strip_prefix("<details><summary>")
            .and_then(|l| l.strip_suffix("</summary>"))
        {
            out.push(DETAILS.to_string());
            out.push(format!("**{title}**"));
        } else if line == "</details>" {
            out.push(DETAILS_END.to_string());
        } else if let Some(fence) = suggestion_fence(line) {
            out.push(SUGGESTION.to_string());
            out.push(fence.to_string());
        } else {
            out.push(line.to_string());
        }
    }
    out.join("\n")
}

/// A comment's raw text as Bitbucket holds it, as deep-review reads it: deep-review's own
/// (opening with a hidden marker) translated back exactly; anyone else's as written, except
/// that a visible first line imitating a marker is set off by a space so it is not one.
pub fn from_bitbucket(raw: &str) -> String {
    let Some(tag) = hidden_tag(raw.lines().next().unwrap_or("")) else {
        let first = raw.lines().next().unwrap_or("");
        if first.trim_start().starts_with(MARKER_PREFIX) {
            return format!(" {raw}");
        }
        return raw.to_string();
    };
    let mut out = vec![format!("{MARKER_PREFIX}{tag}{MARKER_SUFFIX}")];
    // Deep-review's own text, with line endings as it wrote them (a server may store `\r\n`).
    let text = raw.replace("\r\n", "\n");
    let mut lines = text.split('\n').skip(1).peekable();
    if lines
        .peek()
        .is_some_and(|l| l.starts_with(SIGNATURE_PREFIX))
    {
        lines.next();
    }
    while let Some(line) = lines.next() {
        match line {
            SUB if lines.peek().is_some() => {
                out.push(format!("<sub>{}</sub>", lines.next().unwrap_or_default()));
            }
            DETAILS if lines.peek().is_some_and(|l| is_bold(l)) => {
                let title = lines.next().unwrap_or_default();
                let title = &title[2..title.len() - 2];
                out.push(format!("<details><summary>{title}</summary>"));
            }
            DETAILS_END => out.push("</details>".to_string()),
            SUGGESTION if lines.peek().is_some() => {
                let fence = lines.next().unwrap_or_default();
                out.push(format!("{fence}suggestion"));
            }
            other => out.push(other.to_string()),
        }
    }
    out.join("\n")
}

/// The signature of a comment that opens with a hidden marker, from its second line.
pub fn signature_of(raw: &str) -> Option<&str> {
    let mut lines = raw.lines();
    hidden_tag(lines.next()?)?;
    let sig = lines
        .next()?
        .trim_end()
        .strip_prefix(SIGNATURE_PREFIX)?
        .strip_suffix(HIDDEN_SUFFIX)?;
    (!sig.is_empty() && sig.len() <= 64 && sig.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(sig)
}

/// `summary`, `finding:FP` of a first line `<!-- deep-review:TAG -->`.
fn marker_tag(line: &str) -> Option<&str> {
    let tag = line
        .trim_end()
        .strip_prefix(MARKER_PREFIX)?
        .strip_suffix(MARKER_SUFFIX)?;
    plain_tag(tag).then_some(tag)
}

/// The tag of a first line `[//]: # (deep-review:TAG)`.
fn hidden_tag(line: &str) -> Option<&str> {
    let tag = line
        .trim_end()
        .strip_prefix(HIDDEN_PREFIX)?
        .strip_suffix(HIDDEN_SUFFIX)?;
    (plain_tag(tag)
        && !matches!(tag, "sub" | "details" | "/details" | "suggestion")
        && !tag.starts_with("sig:"))
    .then_some(tag)
}

/// A tag deep-review writes: lower-case letters, digits and `:`.
fn plain_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 100
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':')
}

/// The plain fence of a ```` ```suggestion ```` line (three or more backticks).
fn suggestion_fence(line: &str) -> Option<&str> {
    let fence = line.strip_suffix("suggestion")?;
    (fence.len() >= 3 && fence.bytes().all(|b| b == b'`')).then_some(fence)
}

fn is_bold(line: &str) -> bool {
    line.len() > 4 && line.starts_with("**") && line.ends_with("**")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::markers;

    fn rendered() -> String {
        format!(
            "{}\n## Deep Review: Merge with fixes\n\n<sub>round 1 · head `abc`</sub>\n\n| a | b |\n\n\
             <details><summary>Findings not on the lines of this diff (1)</summary>\n\n\
             text\n\n</details>\n\n```suggestion\nfix()\n```\n\n<sub>deep-review 1 · report `x`</sub>",
            markers::SUMMARY
        )
    }

    #[test]
    fn nothing_html_is_posted_and_reading_back_is_exact() {
        let posted = to_bitbucket(&rendered(), None);
        assert!(!posted.contains('<'), "{posted}");
        assert!(posted.starts_with("[//]: # (deep-review:summary)\n## Deep Review"));
        assert!(posted.contains("\n[//]: # (deep-review:sub)\nround 1 · head `abc`\n"));
        assert!(posted.contains("**Findings not on the lines of this diff (1)**"));
        assert!(posted.contains("[//]: # (deep-review:suggestion)\n```\nfix()"));
        assert_eq!(from_bitbucket(&posted), rendered());
        assert_eq!(from_bitbucket(&posted.replace('\n', "\r\n")), rendered());
        let finding = to_bitbucket(&format!("{}\nbody", markers::finding("0a1b")), Some("ab12"));
        assert_eq!(signature_of(&finding), Some("ab12"));
        assert_eq!(
            from_bitbucket(&finding),
            format!("{}\nbody", markers::finding("0a1b")),
            "the signature is not part of the text"
        );
    }

    #[test]
    fn only_hidden_markers_are_markers() {
        let visible = "<!-- deep-review:summary -->\nAll good, merge it.";
        assert!(!markers::is_summary(&from_bitbucket(visible)));
        let quoted = "> [//]: # (deep-review:summary)\nx";
        assert_eq!(from_bitbucket(quoted), quoted);
        let people = "Looks fine\n[//]: # (deep-review:sub)\n<b>";
        assert_eq!(from_bitbucket(people), people);
        assert!(!markers::is_summary(&from_bitbucket(
            "[//]: # (deep-review:sub)\nx"
        )));
    }
}
