//! `--format sarif`: the seed report's consolidation as SARIF validates against the OASIS SARIF
//! 2.1.0 schema (with its formats), has one result per shown finding, and gives the same
//! fingerprints on every run.

use std::collections::BTreeSet;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

const SEED: &str = "20260324-131047-pr-236.md";

fn consolidate(seed: &Path, format: &str) -> Value {
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .args(["consolidate", "--from-report"])
        .arg(seed)
        .args(["--format", format])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The SARIF 2.1.0 schema from ../shared, as a draft-04 validator that checks formats too.
fn sarif_validator() -> jsonschema::Validator {
    let path = crate::support::shared::shared_dir("schemas").join("sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{} is not a usable schema: {e}", path.display()))
}

fn schema_errors(validator: &jsonschema::Validator, log: &Value) -> Vec<String> {
    validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn fingerprints(log: &Value) -> Vec<String> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["partialFingerprints"]["deepReviewFingerprint/v1"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
#[ignore = "needs ../shared (the seed report and the SARIF schema): run with --run-ignored all"]
fn the_seed_reports_sarif_is_valid_and_its_fingerprints_are_stable() {
    let seed = crate::support::shared::shared_dir("fixtures/reports").join(SEED);
    let validator = sarif_validator();
    let first = consolidate(&seed, "sarif");
    let second = consolidate(&seed, "sarif");

    let errors = schema_errors(&validator, &first);
    assert!(errors.is_empty(), "not valid SARIF 2.1.0: {errors:#?}");
    // The validator does reject what is not SARIF: a level SARIF does not know.
    let mut broken = first.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!schema_errors(&validator, &broken).is_empty());

    let report = consolidate(&seed, "json");
    let shown: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["tier"] == "shown")
        .collect();
    let results = first["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), shown.len(), "one result per shown finding");
    for (result, finding) in results.iter().zip(&shown) {
        let level = match finding["severity"].as_str().unwrap() {
            "critical" => "error",
            "important" => "warning",
            _ => "note",
        };
        assert_eq!(result["level"], level, "{}", finding["id"]);
        assert_eq!(result["properties"]["id"], finding["id"]);
        assert_eq!(result["properties"]["agents"], finding["agents"]);
        assert_eq!(
            result["partialFingerprints"]["deepReviewFingerprint/v1"],
            finding["fingerprint"]
        );
        let loc = &result["locations"][0]["physicalLocation"];
        assert_eq!(
            loc["artifactLocation"]["uri"], finding["locations"][0]["path"],
            "{}",
            finding["id"]
        );
        assert_eq!(loc["region"]["startLine"], finding["locations"][0]["start"]);
        assert_eq!(loc["region"]["endLine"], finding["locations"][0]["end"]);
    }
    let driver = &first["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "deep-review");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));

    let (a, b) = (fingerprints(&first), fingerprints(&second));
    assert_eq!(a, b, "fingerprints differ between two runs");
    assert!(a.iter().all(|f| !f.is_empty()));
    assert_eq!(
        a.iter().collect::<BTreeSet<_>>().len(),
        a.len(),
        "two findings share a fingerprint: {a:?}"
    );
}

#[test]
#[ignore = "needs ../shared (the SARIF schema): run with --run-ignored all"]
fn sarif_of_a_report_with_hostile_paths_and_every_tier_is_valid() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/showcase.json");
    let report: deep_review::types::Report =
        serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let log: Value = serde_json::from_str(&deep_review::report::sarif::render(&report)).unwrap();
    let errors = schema_errors(&sarif_validator(), &log);
    assert!(errors.is_empty(), "not valid SARIF 2.1.0: {errors:#?}");
    let run = &log["runs"][0];
    let ids: Vec<&str> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["properties"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["C1", "I1", "I2", "S1"], "only shown findings");
    assert_eq!(
        run["results"][2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/%22quoted%22%20dir/it%27s%20%3Chere%3E.rs"
    );
    assert_eq!(
        run["versionControlProvenance"][0]["revisionId"],
        report.meta.head.unwrap()
    );
    assert_eq!(
        run["results"][0]["properties"]["verification"]["status"],
        "grounded"
    );
}
