//! The report as SARIF 2.1.0, for code scanning (GitHub, GitLab, IDE viewers).
//!
//! One result per shown finding (the Unverified and Low Confidence tiers stay in the report):
//! level `error` / `warning` / `note` from critical / important / suggestion, the rule from the
//! category, each location as a repository-relative URI with its lines, the finding's stable
//! fingerprint as `partialFingerprints` (so code scanning tracks a finding across rounds and line
//! shifts), and the attribution, confidence and verification in `properties`.
//!
//! Written with a few serde structs rather than the serde-sarif crate: the report uses a dozen
//! of SARIF's objects, and serde-sarif's generated types cost about 38 s of build on this
//! project's two cores; a test validates the output against the OASIS schema instead.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::report::links::relative_path_uri;
use crate::types::{Category, MergedFinding, Report, Severity};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The key of the fingerprint in `partialFingerprints`: versioned, as SARIF recommends, so a
/// change of the fingerprint's recipe shows as a new key rather than as every finding moving.
pub const FINGERPRINT_KEY: &str = "deepReviewFingerprint/v1";
/// Where result URIs are rooted: the repository's top-level directory.
const SRCROOT: &str = "SRCROOT";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    automation_details: Option<AutomationDetails>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    version_control_provenance: Vec<VersionControl>,
    original_uri_base_ids: BTreeMap<&'static str, Value>,
    results: Vec<SarifResult>,
    properties: Value,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    name: String,
    short_description: Message,
    full_description: Message,
}

#[derive(Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionControl {
    repository_uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    revision_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Message,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<ResultLocation>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    properties: Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultLocation {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    end_line: u32,
}

/// SARIF's level for a severity.
fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "error",
        Severity::Important => "warning",
        Severity::Suggestion => "note",
    }
}

/// The rule a finding reports: its category in lower case, letters, digits and dashes only
/// (`regression`, `gap`, `enhancement`, `security`), or `finding` without a category.
fn rule_id(category: Option<&Category>) -> String {
    let mut id = String::new();
    for c in category.map(Category::as_str).unwrap_or("").chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    let id = id.trim_end_matches('-');
    if id.is_empty() {
        "finding".to_string()
    } else {
        id.chars().take(64).collect()
    }
}

fn rule(id: &str) -> Rule {
    let (name, text) = match id {
        "regression" => (
            "Regression",
            "The change breaks behaviour that worked before it.",
        ),
        "gap" => (
            "Gap",
            "The change leaves a case, a test or a document it needs unhandled.",
        ),
        "enhancement" => (
            "Enhancement",
            "The change works, and could be made clearer, safer or simpler.",
        ),
        "finding" => ("Finding", "A defect the reviewers found in the change."),
        _ => ("", ""),
    };
    let (name, text) = if name.is_empty() {
        let mut name: Vec<char> = id.chars().collect();
        if let Some(first) = name.first_mut() {
            *first = first.to_ascii_uppercase();
        }
        let name: String = name.into_iter().collect();
        let text = format!("Findings the reviewers filed under `{id}`.");
        (name, text)
    } else {
        (name.to_string(), text.to_string())
    };
    Rule {
        id: id.to_string(),
        name,
        short_description: Message { text: text.clone() },
        full_description: Message {
            text: format!(
                "{text} Found by AI reviewers, checked against the code and consolidated by deep-review; \
                 see the finding's properties for who found it and how it was verified."
            ),
        },
    }
}

/// The result's message: the title, then the explanation and the fix, as plain text.
fn message(f: &MergedFinding) -> String {
    let mut text = format!("{}: {}", f.id, f.title.trim());
    let body = f.body.trim();
    if !body.is_empty() {
        text.push_str("\n\n");
        text.push_str(body);
    }
    if let Some(fix) = f.fix.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        text.push_str("\n\n");
        if !fix.to_ascii_lowercase().starts_with("fix") {
            text.push_str("Fix: ");
        }
        text.push_str(fix);
    }
    text
}

fn locations(f: &MergedFinding) -> Vec<ResultLocation> {
    f.locations
        .iter()
        .filter_map(|l| {
            let uri = relative_path_uri(&l.path)?;
            let region = l.start.map(|start| Region {
                start_line: start,
                end_line: l.end_line().unwrap_or(start).max(start),
            });
            Some(ResultLocation {
                physical_location: PhysicalLocation {
                    artifact_location: ArtifactLocation {
                        uri,
                        uri_base_id: SRCROOT,
                    },
                    region,
                },
            })
        })
        .collect()
}

fn properties(f: &MergedFinding, report: &Report) -> Value {
    let mut props = json!({
        "id": f.id,
        "severity": f.severity.as_str(),
        "agents": f.agents,
        "agentNames": f.agents.iter().map(|a| report.display_of(a)).collect::<Vec<_>>(),
        "sources": f.sources.iter().map(|s| json!({
            "agent": s.agent,
            "id": s.id,
            "severity": s.severity.map(Severity::as_str),
        })).collect::<Vec<_>>(),
    });
    if let Some(category) = &f.category {
        props["category"] = json!(category.as_str());
    }
    if let Some(c) = f.confidence {
        props["confidence"] = json!(c);
    }
    if let Some(r) = &f.confidence_reason {
        props["confidenceReason"] = json!(r);
    }
    if let Some(c) = &f.calibration {
        props["calibration"] = json!(c);
    }
    if let Some(v) = &f.verification {
        props["verification"] = serde_json::to_value(v).unwrap_or(Value::Null);
    }
    props
}

/// The report as a SARIF 2.1.0 log with one run.
pub fn render(report: &Report) -> String {
    let m = &report.meta;
    let mut rule_ids: Vec<String> = Vec::new();
    let mut results = Vec::new();
    for f in report.findings.iter().filter(|f| f.is_shown()) {
        let id = rule_id(f.category.as_ref());
        let rule_index = match rule_ids.iter().position(|r| *r == id) {
            Some(i) => i,
            None => {
                rule_ids.push(id.clone());
                rule_ids.len() - 1
            }
        };
        results.push(SarifResult {
            rule_id: id,
            rule_index,
            level: level(f.severity),
            message: Message { text: message(f) },
            locations: locations(f),
            partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, f.fingerprint.clone())]),
            properties: properties(f, report),
        });
    }
    let version_control_provenance = m
        .repo_url
        .as_deref()
        .filter(|u| crate::report::links::is_safe_href(u) && u.contains("://"))
        .map(|url| VersionControl {
            repository_uri: url.trim_end_matches('/').to_string(),
            revision_id: m.head.clone(),
            branch: m.branch.clone(),
        })
        .into_iter()
        .collect();
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "deep-review",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    rules: rule_ids.iter().map(|id| rule(id)).collect(),
                },
            },
            automation_details: (!m.id.is_empty()).then(|| AutomationDetails {
                id: format!("deep-review/{}", m.id),
            }),
            version_control_provenance,
            original_uri_base_ids: BTreeMap::from([(
                SRCROOT,
                json!({"description": {"text": "The top-level directory of the reviewed repository."}}),
            )]),
            results,
            properties: json!({
                "reportId": m.id,
                "verdict": report.verdict.as_str(),
                "verdictRationale": report.verdict_rationale,
                "head": m.head,
                "base": m.base,
            }),
        }],
    };
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_else(|e| {
        format!("{{\"error\": \"the SARIF log could not be serialized: {e}\"}}")
    });
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Location, SourceRef, Tier, Verdict};

    fn finding(id: &str, severity: Severity, category: Option<&str>) -> MergedFinding {
        MergedFinding {
            id: id.into(),
            title: format!("Title of {id}"),
            body: "Why it matters.".into(),
            severity,
            category: category.map(Category::from),
            locations: vec![Location::new("pkg/app.go", Some(10), Some(20))],
            code: None,
            fix: Some("Check the error.".into()),
            fix_diff: None,
            agents: vec!["claude".into(), "gemini".into()],
            sources: vec![
                SourceRef {
                    agent: "claude".into(),
                    id: "I1".into(),
                    severity: Some(severity),
                    noted_in: None,
                },
                SourceRef {
                    agent: "gemini".into(),
                    id: "C2".into(),
                    severity: Some(Severity::Critical),
                    noted_in: None,
                },
            ],
            calibration: None,
            confidence: Some(0.9),
            confidence_reason: None,
            tier: Tier::Shown,
            verification: None,
            fingerprint: format!("fp-{id}"),
            round_status: Default::default(),
            prior: None,
        }
    }

    fn report(findings: Vec<MergedFinding>) -> Report {
        Report {
            verdict: Verdict::MergeWithFixes,
            findings,
            ..Report::default()
        }
    }

    #[test]
    fn shown_findings_become_results_with_levels_rules_and_fingerprints() {
        let mut hidden = finding("S9", Severity::Suggestion, None);
        hidden.tier = Tier::LowConfidence;
        let r = report(vec![
            finding("C1", Severity::Critical, Some("regression")),
            finding("I1", Severity::Important, Some("Security issue")),
            finding("S1", Severity::Suggestion, None),
            finding("S2", Severity::Suggestion, Some("regression")),
            hidden,
        ]);
        let log: Value = serde_json::from_str(&render(&r)).unwrap();
        let run = &log["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "the low-confidence finding is left out");
        let levels: Vec<&str> = results
            .iter()
            .map(|r| r["level"].as_str().unwrap())
            .collect();
        assert_eq!(levels, ["error", "warning", "note", "note"]);
        let rules: Vec<&str> = results
            .iter()
            .map(|r| r["ruleId"].as_str().unwrap())
            .collect();
        assert_eq!(
            rules,
            ["regression", "security-issue", "finding", "regression"]
        );
        let driver_rules: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(driver_rules, ["regression", "security-issue", "finding"]);
        for r in results {
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(driver_rules[index], r["ruleId"]);
        }
        assert_eq!(results[0]["partialFingerprints"][FINGERPRINT_KEY], "fp-C1");
        let region = &results[0]["locations"][0]["physicalLocation"]["region"];
        assert_eq!(
            (region["startLine"].as_u64(), region["endLine"].as_u64()),
            (Some(10), Some(20))
        );
        assert_eq!(
            results[0]["properties"]["agents"],
            json!(["claude", "gemini"])
        );
        assert_eq!(results[0]["properties"]["sources"][1]["id"], "C2");
        assert_eq!(results[0]["properties"]["confidence"], 0.9);
        assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn paths_that_leave_the_repository_get_no_location() {
        let mut f = finding("I1", Severity::Important, None);
        f.locations = vec![
            Location::new("/etc/passwd", Some(1), None),
            Location::new("../x.go", Some(1), None),
            Location::new("dir with space/\"q\".go", None, None),
        ];
        let log: Value = serde_json::from_str(&render(&report(vec![f]))).unwrap();
        let locations = log["runs"][0]["results"][0]["locations"]
            .as_array()
            .unwrap();
        assert_eq!(locations.len(), 1);
        let loc = &locations[0]["physicalLocation"];
        assert_eq!(
            loc["artifactLocation"]["uri"],
            "dir%20with%20space/%22q%22.go"
        );
        assert!(loc.get("region").is_none());
    }
}
