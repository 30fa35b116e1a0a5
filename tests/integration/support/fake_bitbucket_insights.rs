//! The fake Bitbucket's Code Insights: reports on a full commit hash, annotations in batches,
//! with the report service's own limits and 400s (see `support::fake_bitbucket`).

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::bitbucket_description::Description;
use super::fake_bitbucket::{View, error, respond};
use super::fake_bitbucket_routes::{Answer, Req, lacks};

/// Annotations per request and per report, and the report service's text limits.
const ANNOTATIONS_PER_REQUEST: usize = 100;
const ANNOTATIONS_PER_REPORT: usize = 1000;
const MAX_SUMMARY: usize = 450;
const MAX_DETAILS: usize = 2000;

/// The report service's 400.
fn report_error(message: &str) -> Answer {
    respond(
        StatusCode::BAD_REQUEST,
        &json!({ "key": "report-service.general.bad-request", "message": message, "arguments": {} }),
    )
}

/// The report's key, when its commit is a full hash of the pull request (Bitbucket's reports
/// API does not take a short one).
fn report_key(v: &View<'_>, r: &Req<'_>) -> Option<(String, String)> {
    let commit = r.param("commit");
    let full = commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    let known =
        v.pr.as_ref()
            .is_some_and(|pr| pr.commits.iter().any(|c| c == commit) || pr.head == commit);
    (full && known).then(|| (commit.to_string(), r.param("reportId").to_string()))
}

fn no_commit(r: &Req<'_>) -> Answer {
    error(
        StatusCode::NOT_FOUND,
        &format!("Commit not found: {}", r.param("commit")),
    )
}

pub fn put_report(v: &mut View<'_>, d: &Description, r: &Req<'_>) -> Answer {
    if !v.may("repository:write") {
        return lacks(v, "repository:write");
    }
    let Some(key) = report_key(v, r) else {
        return no_commit(r);
    };
    if let Some(problem) = d.check("Report", &r.body) {
        return report_error(&problem);
    }
    for item in r.body["data"].as_array().into_iter().flatten() {
        if let Some(problem) = d.check("ReportData", item) {
            return report_error(&problem);
        }
    }
    if r.body["title"].as_str().is_none_or(str::is_empty) {
        return report_error("The title field is required.");
    }
    if r.body["details"]
        .as_str()
        .is_some_and(|s| s.chars().count() > MAX_DETAILS)
    {
        return report_error("The details field cannot contain more than 2000 characters.");
    }
    v.reports.insert(key, r.body.clone());
    respond(StatusCode::OK, &r.body)
}

pub fn delete_report(v: &mut View<'_>, r: &Req<'_>) -> Answer {
    if !v.may("repository:write") {
        return lacks(v, "repository:write");
    }
    let Some(key) = report_key(v, r) else {
        return no_commit(r);
    };
    v.annotations.remove(&key);
    match v.reports.remove(&key) {
        Some(_) => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .body(Full::new(Bytes::new()))
            .expect("a response"),
        None => error(StatusCode::NOT_FOUND, "Report not found"),
    }
}

pub fn annotate(v: &mut View<'_>, d: &Description, r: &Req<'_>) -> Answer {
    if !v.may("repository:write") {
        return lacks(v, "repository:write");
    }
    let Some(key) = report_key(v, r) else {
        return no_commit(r);
    };
    if !v.reports.contains_key(&key) {
        return error(StatusCode::NOT_FOUND, "Report not found");
    }
    let Some(items) = r.body.as_array() else {
        return report_error("The request body must be a list of annotations.");
    };
    if items.len() > ANNOTATIONS_PER_REQUEST {
        return report_error("Cannot add more than 100 annotations per request.");
    }
    for a in items {
        if let Some(problem) = d.check("ReportAnnotation", a) {
            return report_error(&problem);
        }
        if a["summary"]
            .as_str()
            .is_none_or(|s| s.is_empty() || s.chars().count() > MAX_SUMMARY)
        {
            return report_error("The summary field cannot contain more than 450 characters.");
        }
        if a["details"]
            .as_str()
            .is_some_and(|s| s.chars().count() > MAX_DETAILS)
        {
            return report_error("The details field cannot contain more than 2000 characters.");
        }
    }
    let stored = v.annotations.entry(key).or_default();
    for a in items {
        stored.retain(|s| s["external_id"] != a["external_id"] || a["external_id"].is_null());
        stored.push(a.clone());
    }
    if stored.len() > ANNOTATIONS_PER_REPORT {
        return report_error("A report cannot have more than 1000 annotations.");
    }
    respond(StatusCode::OK, &Value::Array(items.clone()))
}
