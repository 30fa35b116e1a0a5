//! Reviews that flood: thousands of findings, or a saved review far larger than a run keeps of
//! an agent's output. Reading stops at the cap with a warning that says where, the raw text is
//! kept, and `consolidate` on such a file stays within issue 10's bounds (200 MB of memory).

use assert_cmd::Command;
use deep_review::parse::{MAX_FINDINGS, parse_review};
use serde_json::Value;

/// `n` findings under one section, one agent's ids repeating every 2,000 (a loop).
fn flood(n: usize) -> String {
    let mut text = String::from("## Findings\n\n### Important Issues\n\n");
    for i in 0..n {
        text.push_str(&format!(
            "**I{}. Title number {i} about `fooBar{i}`** — `src/a{}.rs:{}`\n\nBody of finding {i}.\n\n",
            i % 2000 + 1,
            i % 50,
            i % 900 + 1
        ));
    }
    text
}

/// The largest resident set of this process's waited-for children, in bytes.
fn children_max_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given; nothing else is touched.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    (usage.ru_maxrss as u64) * 1024
}

#[test]
fn a_markdown_review_is_read_to_its_first_five_thousand_findings() {
    let text = flood(MAX_FINDINGS + 1_000);
    let review = parse_review("looping", &text);
    assert_eq!(review.findings.len(), MAX_FINDINGS);
    assert_eq!(review.findings[0].title, "Title number 0 about `fooBar0`");
    let last = &review.findings[MAX_FINDINGS - 1];
    assert_eq!(
        last.title,
        format!(
            "Title number {} about `fooBar{}`",
            MAX_FINDINGS - 1,
            MAX_FINDINGS - 1
        )
    );
    let stop = review
        .warnings
        .iter()
        .find(|w| w.message.contains("more than 5000 findings"))
        .expect("a warning that reading stopped");
    // It names a line at or after the first finding not read (each finding takes four lines,
    // after four lines of headings).
    let first_not_read = 5 + 4 * MAX_FINDINGS;
    assert!(
        stop.line.is_some_and(|l| l >= first_not_read),
        "{stop:?} (the first finding not read is on line {first_not_read})"
    );
    // Nothing is lost: the raw review is whole.
    assert_eq!(review.raw, text);
}

#[test]
fn a_json_review_is_cut_to_its_first_five_thousand_findings() {
    let findings: Vec<Value> = (0..MAX_FINDINGS + 10)
        .map(|i| serde_json::json!({"id": format!("I{i}"), "title": format!("Finding {i}")}))
        .collect();
    let text = serde_json::json!({"findings": findings}).to_string();
    let review = parse_review("looping", &text);
    assert_eq!(review.findings.len(), MAX_FINDINGS);
    assert!(
        review.warnings.iter().any(|w| w
            .message
            .contains(&format!("holds {} findings", MAX_FINDINGS + 10))),
        "{:?}",
        review.warnings
    );
}

#[test]
fn a_saved_review_larger_than_a_run_keeps_is_read_that_far_within_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.md");
    // About 30 MB: more than the 20 MB a run keeps of an agent's output.
    let chunk = flood(20_000);
    let mut text = String::new();
    while text.len() < 30 * 1024 * 1024 {
        text.push_str(&chunk);
    }
    std::fs::write(&file, &text).unwrap();
    let out_file = dir.path().join("report.json");
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .arg("consolidate")
        .arg("--raw")
        .arg(format!("looping={}", file.display()))
        .args(["--format", "json", "--out"])
        .arg(&out_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is longer than 20 MB (30 MB)"), "{stderr}");
    assert!(stderr.contains("more than 5000 findings"), "{stderr}");
    // The thousands of repeated ids are summed up, not printed one by one.
    assert!(
        stderr.lines().count() <= 25,
        "{} lines:\n{stderr}",
        stderr.lines().count()
    );
    assert!(stderr.contains("more warnings, not shown here"), "{stderr}");
    let report: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(
        !findings.is_empty() && findings.len() <= MAX_FINDINGS,
        "{}",
        findings.len()
    );
    let rss = children_max_rss();
    assert!(
        rss < 200 * 1024 * 1024,
        "consolidate peaked at {} MB",
        rss / 1024 / 1024
    );
}

#[test]
fn a_json_review_longer_than_a_run_keeps_is_an_error_that_says_why_it_ends_early() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.json");
    let findings: Vec<Value> = (0..200_000)
        .map(|i| {
            serde_json::json!({
                "id": format!("I{i}"),
                "title": format!("Finding {i} about fooBar{i}"),
                "explanation": "a body long enough to pass twenty megabytes in all",
            })
        })
        .collect();
    let text = serde_json::json!({ "findings": findings }).to_string();
    assert!(text.len() > 21 * 1024 * 1024, "{} bytes", text.len());
    std::fs::write(&file, &text).unwrap();
    let err = deep_review::parse::read_review_file("looping", &file).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("longer than 20 MB") && message.contains("its JSON ends early"),
        "{message}"
    );
}
