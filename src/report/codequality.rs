//! The report as GitLab's Code Quality report: the subset of the CodeClimate issue format that
//! GitLab reads from a job's `artifacts:reports:codequality`, so the findings show in the merge
//! request's widget and beside the lines of its diff.
//!
//! One issue per shown finding with a place in the repository (the Unverified and Low
//! Confidence tiers stay in the report, as in SARIF; a finding with no file has nowhere to
//! show): `description` (id, title and agents), `check_name` from the category,
//! `fingerprint` unique in the file and stable across rounds (the finding's own, so GitLab tells
//! new findings from fixed ones between the target branch and the merge request), `severity`
//! (`critical`, `major`, `minor` for critical, important, suggestion), `location.path` and
//! `location.lines.begin`.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::report::links::relative_path_uri;
use crate::types::{Category, MergedFinding, Report, Severity};

#[derive(Serialize)]
struct Issue {
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    categories: Vec<&'static str>,
    location: IssueLocation,
}

#[derive(Serialize)]
struct IssueLocation {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<u32>,
}

/// CodeClimate's severity for a finding's.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::Important => "major",
        Severity::Suggestion => "minor",
    }
}

/// `deep-review/regression`, or `deep-review/finding` without a category.
fn check_name(category: Option<&Category>) -> String {
    let mut name = String::new();
    for c in category.map(Category::as_str).unwrap_or("").chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    format!(
        "deep-review/{}",
        if name.is_empty() { "finding" } else { name }
    )
}

/// The CodeClimate categories GitLab knows, by the finding's category.
fn categories(category: Option<&Category>) -> Vec<&'static str> {
    let text = category
        .map(Category::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    if text.contains("security") {
        vec!["Security"]
    } else if text.contains("perf") {
        vec!["Performance"]
    } else if text.contains("regression") || text.contains("bug") {
        vec!["Bug Risk"]
    } else {
        vec!["Clarity"]
    }
}

fn description(report: &Report, f: &MergedFinding) -> String {
    let agents: Vec<&str> = f.agents.iter().map(|a| report.display_of(a)).collect();
    let text = format!("{}: {} [{}]", f.id, f.title, agents.join(", "));
    crate::text::printable_line(&text)
}

/// The findings as a Code Quality report (a JSON array).
pub fn render(report: &Report) -> String {
    let mut seen = Fingerprints::default();
    let mut issues = Vec::new();
    for f in report.findings.iter().filter(|f| f.is_shown()) {
        let Some(loc) = f.locations.first() else {
            continue;
        };
        // Only a plain path inside the repository: GitLab matches it against the diff's files.
        if relative_path_uri(&loc.path).is_none() {
            continue;
        }
        let path = loc.path.strip_prefix("./").unwrap_or(&loc.path).to_string();
        let begin = loc.start.unwrap_or(1).max(1);
        let end = loc.end_line().filter(|e| *e > begin);
        let base = if f.fingerprint.is_empty() {
            format!("{}:{}", f.id, path)
        } else {
            f.fingerprint.clone()
        };
        let fingerprint = unique(&mut seen, &base);
        issues.push(Issue {
            kind: "issue",
            description: description(report, f),
            check_name: check_name(f.category.as_ref()),
            fingerprint,
            severity: severity(f.severity),
            categories: categories(f.category.as_ref()),
            location: IssueLocation {
                path,
                lines: Lines { begin, end },
            },
        });
    }
    let mut out = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".to_string());
    out.push('\n');
    out
}

/// The fingerprints given so far, and per base the next counter to try: findings that share a
/// base (a looping agent repeats one) take the next counter at once, not every one before it.
#[derive(Default)]
struct Fingerprints {
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

/// `base` hashed to 32 hex digits (the MD5 length GitLab's own analysers write), with a
/// counter when two findings share a fingerprint: GitLab needs every issue's to differ.
fn unique(seen: &mut Fingerprints, base: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = |key: &str| -> String {
        let digest = Sha256::digest(key.as_bytes());
        hex::encode(&digest[..16])
    };
    let n = seen.next.entry(base.to_string()).or_insert(0);
    let mut hex = if *n == 0 {
        hash(base)
    } else {
        hash(&format!("{base}#{n}"))
    };
    // Another base's counter may have hashed to the same digits: try on, rarely more than once.
    while !seen.taken.insert(hex.clone()) {
        *n += 1;
        hex = hash(&format!("{base}#{n}"));
    }
    *n += 1;
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_severities() {
        assert_eq!(check_name(None), "deep-review/finding");
        assert_eq!(severity(Severity::Important), "major");
        let mut seen = Fingerprints::default();
        let a = unique(&mut seen, "ab12");
        let b = unique(&mut seen, "ab12");
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
    }
}
