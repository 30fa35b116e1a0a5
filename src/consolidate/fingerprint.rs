//! A merged finding's stable fingerprint: the same defect gets the same fingerprint in every
//! round of a pull request, whatever lines it moved to, so rounds can match findings, SARIF can
//! carry `partialFingerprints` and a forge comment can be found again.
//!
//! It hashes what survives a rebase or an unrelated edit above the code: the file's name (not its
//! directories: one round may cite `app.go` and the next `pkg/app.go`, and a moved file keeps
//! its defects), the quoted code read as verification reads it (whitespace folded, line numbers,
//! elisions and comment-only lines left out: its first lines, which a fix to the defect changes
//! but a shift does not), and, with no quote, the title's content words, sorted (rewording that
//! keeps the words keeps the fingerprint). Line numbers never enter it.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use crate::types::{CodeSnippet, Location, MergedFinding};
use crate::verify::quote::{Quote, fold};

/// How many non-blank lines of the quote count: enough to tell two defects in one file apart,
/// few enough that an edit far below the defect leaves the fingerprint alone.
const QUOTE_LINES: usize = 3;

/// Words too common in finding titles to tell two defects apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "and", "or", "is", "are", "be", "not",
    "no", "with", "without", "when", "from", "by", "it", "its", "this", "that", "can", "may",
    "should", "could", "missing", "issue", "bug",
];

/// The fingerprint of `finding`: 16 hex digits.
pub fn fingerprint(finding: &MergedFinding) -> String {
    fingerprint_of(&finding.locations, finding.code.as_ref(), &finding.title)
}

/// The fingerprint of a finding given by its parts (an earlier round's finding read from a
/// report that has none).
pub fn fingerprint_of(locations: &[Location], code: Option<&CodeSnippet>, title: &str) -> String {
    let path = locations
        .first()
        .map(|l| l.file_name().trim().to_ascii_lowercase())
        .unwrap_or_default();
    let quote = code.map(|c| quote_key(&c.code)).unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(path.as_bytes());
    hasher.update([0]);
    // A quote identifies the defect better than words: with one, the title words only break
    // ties between defects in the same lines; without one, they are all there is.
    hasher.update(quote.as_bytes());
    hasher.update([0]);
    if quote.is_empty() {
        hasher.update(title_words(title).join(" ").as_bytes());
    }
    let digest = hasher.finalize();
    hex::encode(&digest[..8])
}

/// The first required lines of a quote as verification reads it ([`Quote`]); a block it cannot
/// read as code falls back to its first non-blank lines, whitespace folded.
fn quote_key(code: &str) -> String {
    match Quote::parse(code) {
        Some(q) => q
            .required_lines()
            .take(QUOTE_LINES)
            .collect::<Vec<_>>()
            .join("\n"),
        None => code
            .lines()
            .map(fold)
            .filter(|l| !l.is_empty())
            .take(QUOTE_LINES)
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The title's content words, lower case, deduplicated and sorted.
pub fn title_words(title: &str) -> Vec<String> {
    let words: BTreeSet<String> = title
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .map(str::to_lowercase)
        .filter(|w| w.len() > 1 && !STOP_WORDS.contains(&w.as_str()))
        .collect();
    words.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Severity, Tier};

    fn finding(title: &str, path: &str, start: u32, code: Option<&str>) -> MergedFinding {
        MergedFinding {
            id: "I1".into(),
            title: title.into(),
            body: String::new(),
            severity: Severity::Important,
            category: None,
            locations: vec![Location::new(path, Some(start), Some(start + 3))],
            code: code.map(|c| CodeSnippet {
                language: None,
                code: c.into(),
            }),
            fix: None,
            fix_diff: None,
            agents: vec!["claude".into()],
            sources: vec![],
            calibration: None,
            confidence: None,
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: String::new(),
            round_status: Default::default(),
            prior: None,
        }
    }

    #[test]
    fn a_line_shift_or_reindent_keeps_the_fingerprint() {
        let a = finding(
            "Retry loop never ends",
            "src/a.rs",
            10,
            Some("loop {\n  retry();\n}"),
        );
        let b = finding(
            "Retry loop never ends",
            "./src/a.rs",
            42,
            Some("    loop {\n        retry();\n    }"),
        );
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(fingerprint(&a).len(), 16);
    }

    #[test]
    fn rewording_with_the_same_words_keeps_it_and_other_code_changes_it() {
        let a = finding("The retry loop never ends", "src/a.rs", 10, None);
        let b = finding("Retry loop: never ends", "src/a.rs", 90, None);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let c = finding(
            "Retry loop never ends",
            "src/a.rs",
            10,
            Some("loop { retry(); }"),
        );
        let d = finding(
            "Retry loop never ends",
            "src/a.rs",
            10,
            Some("while true { x(); }"),
        );
        assert_ne!(fingerprint(&c), fingerprint(&d));
        let e = finding("Retry loop never ends", "src/b.rs", 10, None);
        assert_ne!(fingerprint(&a), fingerprint(&e));
    }

    #[test]
    fn the_same_code_quoted_differently_keeps_it() {
        let plain = finding(
            "Retry loop never ends",
            "src/net/a.rs",
            10,
            Some("loop {\n    retry();\n    sleep(1);\n}"),
        );
        // The next round's reviewers number the lines, or add a pointer comment and elide,
        // and cite the file by its name.
        let numbered = finding(
            "Unbounded retries",
            "a.rs",
            57,
            Some("57 | loop {\n58 |     retry();\n59 |     sleep(1);\n"),
        );
        let annotated = finding(
            "Unbounded retries",
            "a.rs",
            57,
            Some("loop {\n    retry(); \n    // <- never stops\n    sleep(1);\n    ...\n"),
        );
        assert_eq!(fingerprint(&plain), fingerprint(&numbered));
        assert_eq!(fingerprint(&plain), fingerprint(&annotated));
        // A fix to the quoted code changes it.
        let fixed = finding(
            "Retry loop never ends",
            "src/net/a.rs",
            10,
            Some("for _ in 0..3 {\n    retry();\n    sleep(1);\n}"),
        );
        assert_ne!(fingerprint(&plain), fingerprint(&fixed));
    }
}
