//! The findings as a Bitbucket Code Insights report: Bitbucket's place for static analysis
//! results (the counterpart of GitLab's Code Quality and of SARIF), shown beside the pull
//! request's diff as annotations on their lines.
//!
//! The report goes on the full hash of the commit reviewed (Bitbucket's reports API takes a
//! commit, and pull request objects name commits by 12 characters only). Each post replaces it:
//! the report is deleted with its annotations and written again, then its annotations are sent
//! 100 a request (Bitbucket's limit), 1000 at most (Bitbucket keeps no more per report). Every
//! text is cut to what Bitbucket accepts (450 characters for an annotation's summary, 2000 for
//! details): a longer one makes Bitbucket refuse the whole request.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::http::{Client, ForgeApi as _, refused_status};
use crate::types::{MergedFinding, Report, Severity};

/// The report's id on the commit: one per commit, replaced by each post.
pub const REPORT_ID: &str = "deep-review";
/// Annotations per request and per report, as Bitbucket limits them.
pub const PER_REQUEST: usize = 100;
pub const PER_REPORT: usize = 1000;
/// The longest summary and details Bitbucket accepts, in characters.
const MAX_SUMMARY: usize = 450;
const MAX_DETAILS: usize = 2000;

/// What one post sends: the report, its annotations in batches Bitbucket takes, and how many
/// findings its per-report limit left out.
#[derive(Debug)]
pub struct Planned {
    pub report: Value,
    pub batches: Vec<Vec<Value>>,
    pub annotations: usize,
    pub left_out: usize,
}

/// The report and annotations of `report`'s shown findings (those with a place in a file).
pub fn plan(report: &Report) -> Planned {
    let shown: Vec<&MergedFinding> = report.findings.iter().filter(|f| f.is_shown()).collect();
    let placed: Vec<&&MergedFinding> = shown.iter().filter(|f| !f.locations.is_empty()).collect();
    let annotations: Vec<Value> = placed
        .iter()
        .take(PER_REPORT)
        .map(|f| annotation(f))
        .collect();
    Planned {
        report: report_body(report, shown.len()),
        batches: annotations
            .chunks(PER_REQUEST)
            .map(<[Value]>::to_vec)
            .collect(),
        annotations: annotations.len(),
        left_out: placed.len().saturating_sub(PER_REPORT),
    }
}

/// Posts `report`'s shown findings as the Code Insights report on commit `head` (a full
/// hash), replacing the one there; returns what the user should know.
pub fn publish(client: &Client, head: &str, report: &Report) -> anyhow::Result<Vec<String>> {
    let planned = plan(report);
    let base = client.repo_url(&format!("commit/{head}/reports/{REPORT_ID}"))?;
    let earlier = "the earlier Code Insights report";
    match client.send(Method::DELETE, base.clone(), None, earlier) {
        Ok(_) => {}
        Err(err) if refused_status(&err) == Some(StatusCode::NOT_FOUND) => {}
        Err(err) => return Err(err),
    }
    client.send_json(
        Method::PUT,
        base.clone(),
        &planned.report,
        "the Code Insights report",
    )?;
    let mut url = base;
    url.path_segments_mut()
        .map_err(|_| anyhow::anyhow!("the Bitbucket API address cannot take a path"))?
        .push("annotations");
    for batch in planned.batches {
        client.send_json(
            Method::POST,
            url.clone(),
            &Value::Array(batch),
            "the Code Insights annotations",
        )?;
    }
    let mut notes = vec![format!(
        "Code Insights report posted on {} with {}",
        &head[..head.len().min(12)],
        crate::text::plural(planned.annotations, "annotation", "annotations")
    )];
    if planned.left_out > 0 {
        notes.push(format!(
            "{} past Bitbucket's {PER_REPORT} annotations a report: in the summary comment and the full report only",
            crate::text::plural(planned.left_out, "finding is", "findings are")
        ));
    }
    Ok(notes)
}

/// The report: deep-review's verdict, failed when a finding stands.
fn report_body(report: &Report, shown: usize) -> Value {
    let details = format!(
        "{}: {}",
        report.verdict,
        crate::text::printable_line(&report.verdict_rationale)
    );
    json!({
        "title": "deep-review",
        "details": cut(&details, MAX_DETAILS),
        "report_type": "BUG",
        "reporter": "deep-review",
        "result": if shown == 0 { "PASSED" } else { "FAILED" },
        "data": [
            { "title": "Findings", "type": "NUMBER", "value": shown },
            { "title": "Report", "type": "TEXT", "value": cut(&report.meta.id, 100) },
        ],
    })
}

/// One finding as an annotation on its first location, keyed by its fingerprint so Bitbucket
/// updates rather than repeats it.
fn annotation(f: &MergedFinding) -> Value {
    let loc = &f.locations[0];
    let mut a = json!({
        "external_id": format!("deep-review-{}", f.fingerprint),
        "annotation_type": "BUG",
        "path": loc.path,
        "summary": cut(&format!("{}. {}", f.id, crate::text::printable_line(&f.title)), MAX_SUMMARY),
        "details": cut(&redact(&f.body), MAX_DETAILS),
        "severity": severity(f.severity),
        "result": "FAILED",
    });
    if let Some(line) = loc.start.filter(|l| *l > 0) {
        a["line"] = json!(line);
    }
    a
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "CRITICAL",
        Severity::Important => "HIGH",
        Severity::Suggestion => "LOW",
    }
}

/// Agent text with every secret of the environment hidden, as in comments.
fn redact(text: &str) -> String {
    crate::redact::redact(text).into_owned()
}

/// At most `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::types::{Location, ReportMeta, Tier};

    fn finding(n: usize, title: &str, body: &str) -> MergedFinding {
        MergedFinding {
            id: format!("I{n}"),
            title: title.into(),
            body: body.into(),
            severity: Severity::Important,
            category: None,
            locations: vec![Location::new("src/a.rs", Some(n as u32 + 1), None)],
            code: None,
            fix: None,
            fix_diff: None,
            agents: vec!["claude".into()],
            sources: vec![],
            calibration: None,
            confidence: Some(0.9),
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: format!("{n:x}"),
            round_status: Default::default(),
            prior: None,
        }
    }

    fn report(findings: Vec<MergedFinding>) -> Report {
        Report {
            meta: ReportMeta {
                id: "20260101-000000-pr-7".into(),
                ..ReportMeta::default()
            },
            findings,
            ..Report::default()
        }
    }

    #[test]
    fn annotations_go_100_a_request_and_1000_a_report() {
        let many = (0..1050).map(|n| finding(n, "t", "b")).collect();
        let planned = plan(&report(many));
        assert_eq!(planned.batches.len(), 10);
        assert!(planned.batches.iter().all(|b| b.len() == PER_REQUEST));
        assert_eq!((planned.annotations, planned.left_out), (1000, 50));
        assert_eq!(planned.report["result"], "FAILED");
        let none = plan(&report(vec![]));
        assert!(none.batches.is_empty());
        assert_eq!(none.report["result"], "PASSED");
    }

    #[test]
    fn each_annotation_fits_bitbucket_limits() {
        let long = plan(&report(vec![finding(
            1,
            &"t".repeat(600),
            &"b".repeat(5000),
        )]));
        let a = &long.batches[0][0];
        assert_eq!(a["summary"].as_str().unwrap().chars().count(), MAX_SUMMARY);
        assert_eq!(a["details"].as_str().unwrap().chars().count(), MAX_DETAILS);
        assert_eq!(
            (a["line"].as_u64(), a["path"].as_str()),
            (Some(2), Some("src/a.rs"))
        );
        assert_eq!(a["external_id"], "deep-review-1");
    }

    #[test]
    fn texts_fit_bitbucket_limits() {
        let long = "é".repeat(3000);
        assert_eq!(cut(&long, MAX_DETAILS).chars().count(), MAX_DETAILS);
        assert_eq!(cut("short", MAX_SUMMARY), "short");
        assert_eq!(severity(Severity::Important), "HIGH");
    }
}
