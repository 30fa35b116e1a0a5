//! Severity calibration: the severity a merged finding is shown with, and why.
//!
//! The rules, applied in order:
//!
//! 1. **Agreement.** When several agents found the defect, it takes the median of the severities
//!    they wrote (the lower middle one when their number is even): one agent's alarm does not
//!    outvote the others' reading of the same code.
//! 2. **Lone critical.** A critical that only one agent raised, while another agent reviewed the
//!    same file and did not call it out, is shown as important.
//! 3. **Unverified critical.** A critical whose quoted code is not in the repository at head is
//!    not a critical: it is shown as important.
//! 4. **Marked as known.** When the code at or around the cited lines itself marks the issue as
//!    known or temporary (a `TODO`, `FIXME` or "temporary" comment in the enclosing block, which
//!    verify quotes in [`Verification::known_issue_comment`]), the severity goes one level down
//!    (a suggestion stays a suggestion) and the comment is quoted as the reason: the author has
//!    already said so, in the code.
//! 5. **No severity.** A finding whose source gave no severity (benchmark data) is a suggestion.
//!
//! [`Verification::known_issue_comment`]: crate::types::Verification::known_issue_comment
//!
//! Every change is recorded per agent ("Gemini: critical → important") with the rule's reason.

use crate::types::Severity;

/// One member of a cluster: who wrote it and with which severity.
#[derive(Debug, Clone)]
pub struct Vote<'a> {
    pub display: &'a str,
    pub severity: Option<Severity>,
}

/// What calibration knows beyond the votes.
#[derive(Debug, Clone, Copy, Default)]
pub struct CalibrationContext<'a> {
    /// Another agent reviewed a file this finding is in and did not raise it.
    pub others_saw_the_code: bool,
    /// The finding quotes code that verification did not find at head.
    pub quote_missing: bool,
    /// A comment in the code around the cited lines that marks the issue as known or
    /// temporary, as verify quoted it.
    pub known_issue_comment: Option<&'a str>,
}

/// How many characters of a known-issue comment the reason quotes.
const QUOTE_CHARS: usize = 120;

/// The calibrated severity and, when it differs from what an agent wrote, the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub severity: Severity,
    /// "Gemini: critical → important (2 of 3 agents rated it important)"; `None` when every
    /// agent's severity stands.
    pub reason: Option<String>,
    /// `(display, from, to)` for each agent whose severity changed.
    pub changes: Vec<(String, Severity, Severity)>,
}

pub fn calibrate(votes: &[Vote<'_>], ctx: CalibrationContext<'_>) -> Calibration {
    let mut written: Vec<Severity> = votes.iter().filter_map(|v| v.severity).collect();
    if written.is_empty() {
        return Calibration {
            severity: Severity::Suggestion,
            reason: None,
            changes: Vec::new(),
        };
    }
    written.sort();
    // Lower median: for [important, critical] that is important.
    let mut severity = written[(written.len() - 1) / 2];
    let mut why = if written.len() > 1 {
        let agreeing = written.iter().filter(|s| **s == severity).count();
        format!("{agreeing} of {} agents rated it {severity}", written.len())
    } else {
        String::new()
    };

    if severity == Severity::Critical && votes.len() == 1 && ctx.others_saw_the_code {
        severity = Severity::Important;
        why = "a lone critical: other agents reviewed the same code and did not raise it".into();
    }
    if severity == Severity::Critical && ctx.quote_missing {
        severity = Severity::Important;
        why = "its quoted code is not in the file at head".into();
    }
    if let Some(comment) = ctx
        .known_issue_comment
        .map(str::trim)
        .filter(|c| !c.is_empty())
        && let Some(lower) = one_level_down(severity)
    {
        severity = lower;
        let marked = format!("the code marks it as known: \"{}\"", quote(comment));
        why = if why.is_empty() {
            marked
        } else {
            format!("{why}; {marked}")
        };
    }

    let changes: Vec<(String, Severity, Severity)> = votes
        .iter()
        .filter_map(|v| {
            v.severity
                .filter(|s| *s != severity)
                .map(|s| (v.display.to_string(), s, severity))
        })
        .collect();
    let reason = (!changes.is_empty()).then(|| {
        let list: Vec<String> = changes
            .iter()
            .map(|(who, from, to)| format!("{who}: {from} → {to}"))
            .collect();
        format!("{} ({why})", list.join("; "))
    });
    Calibration {
        severity,
        reason,
        changes,
    }
}

/// The next severity down; `None` for a suggestion, the lowest.
fn one_level_down(severity: Severity) -> Option<Severity> {
    match severity {
        Severity::Critical => Some(Severity::Important),
        Severity::Important => Some(Severity::Suggestion),
        Severity::Suggestion => None,
    }
}

/// The comment on one line, cut at [`QUOTE_CHARS`] characters, with its quotes made single so
/// that it reads inside the reason's double quotes.
fn quote(comment: &str) -> String {
    let one_line = comment.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(QUOTE_CHARS).collect();
    if one_line.chars().count() > QUOTE_CHARS {
        out.push('…');
    }
    out.replace('"', "'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use Severity::*;

    fn votes(list: &[(&'static str, Severity)]) -> Vec<Vote<'static>> {
        list.iter()
            .map(|(d, s)| Vote {
                display: d,
                severity: Some(*s),
            })
            .collect()
    }

    #[test]
    fn agreement_takes_the_median_and_records_the_outlier() {
        let v = votes(&[
            ("Claude", Important),
            ("Codex", Important),
            ("Gemini", Critical),
        ]);
        let c = calibrate(&v, CalibrationContext::default());
        assert_eq!(c.severity, Important);
        assert_eq!(
            c.reason.as_deref(),
            Some("Gemini: critical → important (2 of 3 agents rated it important)")
        );
    }

    #[test]
    fn two_agents_that_disagree_take_the_lower() {
        let v = votes(&[("Claude", Important), ("Gemini", Critical)]);
        assert_eq!(
            calibrate(&v, CalibrationContext::default()).severity,
            Important
        );
    }

    #[test]
    fn lone_critical_is_important_when_others_saw_the_code() {
        let v = votes(&[("Gemini", Critical)]);
        let seen = CalibrationContext {
            others_saw_the_code: true,
            ..Default::default()
        };
        let c = calibrate(&v, seen);
        assert_eq!(c.severity, Important);
        assert!(
            c.reason
                .unwrap()
                .starts_with("Gemini: critical → important (a lone critical")
        );
        assert_eq!(
            calibrate(&v, CalibrationContext::default()).severity,
            Critical
        );
    }

    #[test]
    fn a_critical_quoting_absent_code_is_not_critical() {
        let v = votes(&[("Claude", Critical), ("Codex", Critical)]);
        let ctx = CalibrationContext {
            quote_missing: true,
            ..Default::default()
        };
        assert_eq!(calibrate(&v, ctx).severity, Important);
    }

    #[test]
    fn a_known_issue_comment_lowers_one_level_and_is_quoted() {
        let known = CalibrationContext {
            known_issue_comment: Some("// TODO: this is \"temporary\"\n// until v2"),
            ..Default::default()
        };
        let c = calibrate(&votes(&[("Codex", Important)]), known);
        assert_eq!(c.severity, Suggestion);
        assert_eq!(
            c.reason.as_deref(),
            Some(
                "Codex: important → suggestion (the code marks it as known: \"// TODO: this is \
                 'temporary' // until v2\")"
            )
        );
        // Agreement first, then one level down: [important, critical] → important → suggestion.
        let c = calibrate(
            &votes(&[("Claude", Important), ("Gemini", Critical)]),
            known,
        );
        assert_eq!(c.severity, Suggestion);
        assert!(
            c.reason
                .as_deref()
                .unwrap()
                .contains("(1 of 2 agents rated it important; the code marks it as known: ")
        );
        // A suggestion stays a suggestion, with nothing to explain.
        let c = calibrate(&votes(&[("Claude", Suggestion)]), known);
        assert_eq!((c.severity, c.reason), (Suggestion, None));
        // A blank comment is no mark.
        let blank = CalibrationContext {
            known_issue_comment: Some("  "),
            ..Default::default()
        };
        assert_eq!(
            calibrate(&votes(&[("Codex", Important)]), blank).severity,
            Important
        );
    }

    #[test]
    fn unanimous_severity_has_no_reason() {
        let v = votes(&[("Claude", Suggestion), ("Gemini", Suggestion)]);
        let c = calibrate(&v, CalibrationContext::default());
        assert_eq!((c.severity, c.reason), (Suggestion, None));
    }
}
