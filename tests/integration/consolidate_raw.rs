//! `deep-review consolidate --raw NAME=FILE` on the project's own example reviews, and its
//! errors on bad arguments.

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::Value;

const EXAMPLES: [&str; 6] = [
    "--raw",
    "claude=examples/reviews/claude.md",
    "--raw",
    "codex=examples/reviews/codex.md",
    "--raw",
    "gemini=examples/reviews/gemini.md",
];

fn deep_review() -> Command {
    let mut cmd = Command::cargo_bin("deep-review").unwrap();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

#[test]
fn example_reviews_consolidate_into_one_json_report() {
    let out = deep_review()
        .arg("consolidate")
        .args(EXAMPLES)
        .args(["--reviewer", "claude=Claude Opus 4.6", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();

    assert_eq!(r["verdict"], "Merge with fixes");
    let findings = r["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3);
    let retry = &findings[0];
    for key in [
        "id",
        "title",
        "body",
        "severity",
        "category",
        "locations",
        "agents",
        "sources",
    ] {
        assert!(retry.get(key).is_some(), "finding lacks `{key}`");
    }
    assert_eq!(retry["id"], "I1");
    assert_eq!(
        retry["agents"],
        serde_json::json!(["claude", "codex", "gemini"])
    );
    assert_eq!(retry["severity"], "important");
    assert_eq!(retry["locations"][0]["path"], "src/fetch.rs");
    let gemini_source = retry["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agent"] == "gemini")
        .unwrap();
    assert_eq!(gemini_source["id"], "C1");
    assert_eq!(gemini_source["severity"], "critical");

    let agents = r["agents"].as_array().unwrap();
    let claude = &agents[0];
    assert_eq!(claude["name"], "claude");
    assert_eq!(claude["display"], "Claude Opus 4.6");
    assert_eq!(
        claude["counts"],
        serde_json::json!({"critical": 0, "important": 1, "suggestion": 1})
    );
    assert_eq!(claude["unique_insights"], 1);
    assert_eq!(
        claude["files_reviewed"],
        serde_json::json!({"reviewed": 2, "total": 2})
    );
    assert_eq!(agents[1]["display"], "Codex");
    assert_eq!(agents[2]["counts"]["critical"], 1);
}

#[test]
fn markdown_report_has_the_reference_sections_in_order() {
    let out = deep_review()
        .arg("consolidate")
        .args(EXAMPLES)
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    let order = [
        "# Deep Review:",
        "| **Verdict** | **Merge with fixes**",
        "## Executive Summary",
        "## Critical Issues",
        "## Important Issues",
        "**I1. Unbounded retry on HTTP 503",
        "## Suggestions",
        "## Design Observations",
        "## Testing Assessment",
        "## Documentation Assessment",
        "## Acknowledged Limitations",
        "## Agent Performance Retro",
        "### Summary",
        "## Appendix: Original Reviews",
        "### Claude",
        "### Codex",
        "### Gemini",
    ];
    let mut at = 0;
    for needle in order {
        let found = md[at..]
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` missing or out of order"));
        at += found + needle.len();
    }
    // The raw reviews are in the appendix verbatim.
    let raw = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/reviews/codex.md"
    ))
    .unwrap();
    assert!(md.contains(raw.trim_end()));
}

#[test]
fn out_writes_the_file_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.md");
    deep_review()
        .arg("consolidate")
        .args(EXAMPLES)
        .args(["--out", path.to_str().unwrap()])
        .assert()
        .success()
        .stderr(contains("report.md"));
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("# Deep Review:")
    );
}

#[test]
fn bad_arguments_get_one_clear_sentence() {
    deep_review()
        .args(["consolidate", "--raw", "claude"])
        .assert()
        .code(2)
        .stderr(contains("expected NAME=VALUE"));
    deep_review()
        .args(["consolidate", "--raw", "claude=does/not/exist.md"])
        .assert()
        .code(2)
        .stderr(contains("does/not/exist.md"));
    deep_review()
        .args([
            "consolidate",
            "--raw",
            "claude=examples/reviews/claude.md",
            "--raw",
            "claude=examples/reviews/codex.md",
        ])
        .assert()
        .code(2)
        .stderr(contains("given twice"));
    deep_review()
        .args([
            "consolidate",
            "--raw",
            "claude=examples/reviews/claude.md",
            "--reviewer",
            "codex=Codex",
        ])
        .assert()
        .code(2)
        .stderr(contains("names no agent"));
}

/// A review cut off inside a code block (as a timed-out agent leaves it) must not swallow the
/// reviews after it in the appendix: reading the report back gives every agent again.
#[test]
fn a_review_cut_off_in_a_code_block_does_not_swallow_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.md");
    std::fs::write(
        &cut,
        "### Findings\n#### Important Issues\n1. **one** — `main.rs:1` (important, regression)\n\n```rust\nlet x = 1;\n\nBad.\n",
    )
    .unwrap();
    let report = dir.path().join("report.md");
    deep_review()
        .arg("consolidate")
        .args(["--raw", &format!("cut={}", cut.display())])
        .args(["--raw", "codex=examples/reviews/codex.md"])
        .args(["--out", report.to_str().unwrap()])
        .assert()
        .success();
    let out = deep_review()
        .args([
            "consolidate",
            "--format",
            "json",
            "--from-report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = r["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cut", "codex"]);
    assert_eq!(
        r["agents"][1]["counts"]["important"], 1,
        "codex's finding survives"
    );
}

/// `deep-review consolidate ... | head -1`: the reader leaving early is not a crash.
#[test]
fn a_reader_that_stops_early_is_not_a_crash() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.md");
    let mut text = String::from("## Findings\n### Suggestions\n\n");
    for i in 1..=3000 {
        text.push_str(&format!(
            "{i}. **Finding number {i}** — `a.rs:{i}` (suggestion, gap)\n\nText {i}.\n\n"
        ));
    }
    std::fs::write(&big, text).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("deep-review"))
        .args(["consolidate", "--raw", &format!("a={}", big.display())])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("# Deep Review:"));
    // The pipe's read end is dropped here; the rest of the report has nowhere to go.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
