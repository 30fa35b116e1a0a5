//! `deep-review consolidate --from-report` on the four reference reports in ../shared: the seed
//! report's consolidation, the per-agent raw counts, and the round trip through our own report.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

/// The reference reports, or `None` (with the reason printed) when ../shared is absent.
/// In CI the data must be there: a missing directory fails the test.
fn reports_dir() -> Option<PathBuf> {
    Some(crate::support::shared::shared_dir("fixtures/reports"))
}

fn consolidate_json(args: &[&str]) -> Value {
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .arg("consolidate")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The merged finding that holds the given agent's finding.
fn holding<'a>(report: &'a Value, agent: &str, id: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["sources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["agent"] == agent && s["id"] == id)
        })
        .unwrap_or_else(|| panic!("no merged finding holds {agent} {id}"))
}

fn agents(finding: &Value) -> Vec<&str> {
    finding["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn seed_report_consolidates_to_its_six_findings_with_their_attributions() {
    let Some(dir) = reports_dir() else { return };
    let path = dir.join("20260324-131047-pr-236.md");
    let report = consolidate_json(&["--from-report", path.to_str().unwrap()]);

    assert_eq!(report["verdict"], "Merge with fixes");
    // Each kept finding of the seed consolidation, found by one raw finding it must hold
    // (the ids are those of the raw reviews in the seed's appendix).
    let expected: [(&str, &str, &[&str]); 6] = [
        ("gemini", "C2", &["claude", "codex", "gemini"]), // template ConfigMap ownership
        ("claude", "I2", &["claude", "gemini"]),          // ObservedGeneration
        ("gemini", "C1", &["gemini"]),                    // swallowed error, deletion path
        ("claude", "S1", &["claude"]),                    // template name duplicated
        ("gemini", "I2", &["gemini"]),                    // swallowed error, normal path
        ("claude", "S3", &["claude", "gemini"]),          // condition-message comment
    ];
    for (agent, id, who) in expected {
        let f = holding(&report, agent, id);
        assert_eq!(
            agents(f),
            who,
            "attribution of the finding holding {agent} {id}"
        );
        assert_eq!(
            f["tier"], "shown",
            "the finding holding {agent} {id} must stand among the findings"
        );
    }
    // The ownership finding holds exactly one finding of each agent, named by id.
    let ownership = holding(&report, "gemini", "C2");
    let mut sources: Vec<(String, String)> = ownership["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["agent"].as_str().unwrap().into(),
                s["id"].as_str().unwrap().into(),
            )
        })
        .collect();
    sources.sort();
    assert_eq!(
        sources,
        [
            ("claude".into(), "I1".into()),
            ("codex".into(), "I1".into()),
            ("gemini".into(), "C2".into())
        ]
    );
    // Gemini's lone critical (the deletion-path leak) is calibrated down with a reason.
    let leak = holding(&report, "gemini", "C1");
    assert_eq!(leak["severity"], "important");
    assert!(
        leak["calibration"]
            .as_str()
            .unwrap()
            .contains("critical → important")
    );
    // The summary opens with what the PR does, in an agent's words, attributed; then what
    // decides the verdict, by finding id.
    let summary = report["summary"].as_str().unwrap();
    let opening = summary.split("\n\n").next().unwrap();
    assert!(
        opening.starts_with("This PR implements the core App controller reconciliation loop"),
        "{summary}"
    );
    assert!(
        opening.ends_with("(Claude Opus 4.6; Codex GPT 5.4 and Gemini 3.1 Pro say the same)"),
        "{opening}"
    );
    assert!(summary.contains("The verdict is **Merge with fixes** because of I1 "));
    let rationale = report["verdict_rationale"].as_str().unwrap();
    assert!(
        rationale.contains("I1 ") && rationale.contains("I2 "),
        "{rationale}"
    );
    // Claude's two documentation notes that cite a file (`controller.go:63`, `:18`) and say
    // what is wrong there become gap suggestions of Claude; nothing else is credited anew.
    let gaps: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["sources"][0]["noted_in"] == "Documentation")
        .collect();
    assert_eq!(gaps.len(), 2, "{gaps:#?}");
    assert!(
        gaps.iter()
            .all(|g| agents(g) == ["claude"] && g["category"] == "gap")
    );
    // The only other extra findings are the two the raw reviews hold beyond the seed's six.
    let titles: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 10, "{titles:#?}");
}

/// Per-agent counts of findings by the severity the agent wrote, read from each raw review in
/// the fixtures' appendices by hand: (report, [(agent, critical, important, suggestion)]).
/// (agent, critical, important, suggestion)
type AgentCounts = (&'static str, usize, usize, usize);

const RAW_COUNTS: [(&str, [AgentCounts; 3]); 4] = [
    (
        "20260316-111459-pr-238.md",
        [("claude", 0, 1, 2), ("codex", 0, 1, 1), ("gemini", 1, 1, 1)],
    ),
    (
        "20260324-131047-pr-236.md",
        [("claude", 0, 2, 3), ("codex", 0, 2, 0), ("gemini", 2, 2, 1)],
    ),
    (
        "20260521-153126-pr-361.md",
        [("claude", 0, 0, 4), ("codex", 0, 0, 2), ("gemini", 0, 2, 0)],
    ),
    (
        "20260521-205512-pr-361.md",
        [("claude", 0, 0, 6), ("codex", 0, 0, 1), ("gemini", 0, 2, 1)],
    ),
];

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn per_agent_raw_counts_match_the_raw_reviews_of_all_four_fixtures() {
    let Some(dir) = reports_dir() else { return };
    for (file, expected) in RAW_COUNTS {
        let report = consolidate_json(&["--from-report", dir.join(file).to_str().unwrap()]);
        let agents = report["agents"].as_array().unwrap();
        assert_eq!(agents.len(), 3, "{file}");
        for (name, c, i, s) in expected {
            let a = agents
                .iter()
                .find(|a| a["name"] == name)
                .unwrap_or_else(|| panic!("{file}: no agent {name}"));
            let counts = &a["counts"];
            assert_eq!(
                (
                    counts["critical"].as_u64(),
                    counts["important"].as_u64(),
                    counts["suggestion"].as_u64()
                ),
                (Some(c as u64), Some(i as u64), Some(s as u64)),
                "{file}: counts of {name}"
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared (reference reports and benchmark data): run with --run-ignored all"]
fn a_report_we_write_reads_back_with_nothing_lost() {
    let Some(dir) = reports_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (file, _) in RAW_COUNTS {
        let first_md = tmp.path().join(format!("first-{file}"));
        let src = dir.join(file);
        Command::cargo_bin("deep-review")
            .unwrap()
            .args([
                "consolidate",
                "--from-report",
                src.to_str().unwrap(),
                "--out",
                first_md.to_str().unwrap(),
            ])
            .assert()
            .success();
        let original = consolidate_json(&["--from-report", src.to_str().unwrap()]);
        let again = consolidate_json(&["--from-report", first_md.to_str().unwrap()]);
        assert_eq!(
            again["findings"], original["findings"],
            "{file}: findings differ after the round trip"
        );
        assert_eq!(
            again["agents"], original["agents"],
            "{file}: retro differs after the round trip"
        );
        assert_eq!(
            again["appendix"], original["appendix"],
            "{file}: raw reviews differ after the round trip"
        );
        assert_eq!(
            again["meta"], original["meta"],
            "{file}: metadata differs after the round trip"
        );
        assert_eq!(again["verdict"], original["verdict"]);
    }
}
