//! The hidden markers that let deep-review find its own comments again: the summary comment,
//! each finding's inline comment (by fingerprint) and the reply that says a finding is gone.
//!
//! A marker counts only as the very first line of a comment's body. deep-review writes it there,
//! before any text from an agent; text that quotes or imitates a marker further down (an agent's,
//! or anyone's) is never taken for one, so it cannot hide a finding or hijack the summary.

/// Opens the summary comment.
pub const SUMMARY: &str = "<!-- deep-review:summary -->";

const FINDING_PREFIX: &str = "<!-- deep-review:finding:";
const RESOLVED_PREFIX: &str = "<!-- deep-review:resolved:";
const SUFFIX: &str = " -->";

/// The first line of the inline comment of the finding with `fingerprint`.
pub fn finding(fingerprint: &str) -> String {
    format!("{FINDING_PREFIX}{fingerprint}{SUFFIX}")
}

/// The first line of the reply that says the finding with `fingerprint` is no longer found.
pub fn resolved(fingerprint: &str) -> String {
    format!("{RESOLVED_PREFIX}{fingerprint}{SUFFIX}")
}

/// A fingerprint deep-review could have written: 1 to 64 lower-case hex digits. Anything else
/// is not put in a marker (and not read from one).
pub fn is_fingerprint(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The body opens with the summary marker.
pub fn is_summary(body: &str) -> bool {
    first_line(body) == SUMMARY
}

/// The fingerprint of a finding comment's marker, when the body opens with one.
pub fn finding_of(body: &str) -> Option<&str> {
    marked(body, FINDING_PREFIX)
}

/// The fingerprint of a "no longer found" reply's marker, when the body opens with one.
pub fn resolved_of(body: &str) -> Option<&str> {
    marked(body, RESOLVED_PREFIX)
}

fn marked<'a>(body: &'a str, prefix: &str) -> Option<&'a str> {
    let fp = first_line(body)
        .strip_prefix(prefix)?
        .strip_suffix(SUFFIX)?;
    is_fingerprint(fp).then_some(fp)
}

fn first_line(body: &str) -> &str {
    body.lines().next().unwrap_or("").trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_read_only_as_the_first_line() {
        let body = format!("{}\n**I1** text", finding("00ff12"));
        assert_eq!(finding_of(&body), Some("00ff12"));
        assert_eq!(finding_of(&format!("quoted:\n{}", finding("00ff12"))), None);
        assert_eq!(finding_of("<!-- deep-review:finding:XYZ -->"), None);
        assert_eq!(finding_of("<!-- deep-review:finding: -->"), None);
        assert_eq!(resolved_of(&resolved("abc")), Some("abc"));
        assert_eq!(finding_of(&resolved("abc")), None);
        assert!(is_summary(&format!("{SUMMARY}\r\n## Deep Review")));
        assert!(!is_summary(&format!("> {SUMMARY}")));
        assert!(!is_fingerprint(&"a".repeat(65)));
    }
}
