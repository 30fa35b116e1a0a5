//! Not a review is a failed agent (issue 20, item 3): a `--raw` file or an agent's output with
//! nothing of the review layout (no verdict, no findings section, no summary, no JSON review)
//! is that agent's failure with the reason; with no review left the command exits 3 with the
//! verdict No review, and `--fail-on` never passes on it.

use assert_cmd::Command;
use serde_json::Value;

use crate::support::standin::{Agents, json_report, repo, review, run};

const REASON: &str = "not a review: no verdict, findings or summary found";

fn consolidate(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("consolidate")
        .args(args)
        .output()
        .unwrap()
}

fn agent<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no agent {name}: {report:#}"))
}

#[test]
fn a_file_that_is_not_a_review_fails_the_gate_with_the_reason() {
    let out = consolidate(&["--raw", "a=Cargo.toml", "--fail-on", "suggestion"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("a: {REASON}")), "{stderr}");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("**No review**"), "{md}");
    assert!(!md.contains("[package]"), "Cargo.toml is no summary: {md}");

    // Beside a real review, the file is a failed agent and the review decides.
    let out = consolidate(&[
        "--raw",
        "a=Cargo.toml",
        "--raw",
        "claude=examples/reviews/claude.md",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(agent(&report, "a")["status"], "failed");
    assert_eq!(agent(&report, "a")["error"], REASON);
    assert_ne!(agent(&report, "claude")["status"], "failed");
    assert_ne!(report["verdict"], "No review");
    assert!(
        report["summary"].as_str().unwrap().contains(REASON),
        "{}",
        report["summary"]
    );
}

#[test]
fn an_agent_that_prints_an_error_page_failed() {
    let repo = repo();
    let agents = Agents::new();
    agents.add(
        "gateway",
        "echo '<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>'",
    );
    let ran = run(agents.cmd(repo.path()).args([
        "run",
        "--agents",
        "gateway",
        "--quiet",
        "--fail-on",
        "suggestion",
    ]));
    assert_eq!(ran.code, Some(3), "{}\n{}", ran.stdout, ran.stderr);
    assert!(ran.stderr.contains(REASON), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(report["verdict"], "No review");
    assert_eq!(agent(&report, "gateway")["status"], "failed");
    assert_eq!(agent(&report, "gateway")["error"], REASON);

    // With a real reviewer beside it, the run stands on that one.
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "gateway,alpha", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(report["verdict"], "Merge with fixes");
    assert_eq!(agent(&report, "gateway")["status"], "failed");
}
