//! `deep-review consolidate --repo DIR --head REV --base REV`: the example reviews verified
//! against a real git repository made for them, and what verification changes in the report.

use crate::support::git as git_support;

use std::path::Path;

use assert_cmd::Command;
use git_support::git;
use serde_json::Value;

/// `src/fetch.rs` at head: `MAX_ATTEMPTS` on line 8, the unbounded retry loop on lines 41-47,
/// as the example reviews cite them.
fn fetch_rs(with_retry: bool) -> String {
    let mut lines: Vec<String> = (1..=38)
        .map(|i| format!("// fetch helpers, line {i}"))
        .collect();
    lines[7] = "const MAX_ATTEMPTS: u32 = 5;".into();
    if with_retry {
        lines.push(
            "pub fn fetch_with_retry(client: &Client, url: &str) -> Result<Response> {".into(),
        );
        lines.push("    // Retry while the server is busy.".into());
        for l in [
            "    loop {",
            "        let resp = client.get(url).send()?;",
            "        if resp.status() == 503 {",
            "            continue;",
            "        }",
            "        return Ok(resp);",
            "    }",
            "}",
        ] {
            lines.push(l.into());
        }
    }
    lines.join("\n") + "\n"
}

fn example_repo(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("src/fetch.rs"), fetch_rs(false)).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    git(dir, &["checkout", "-qb", "retry"]);
    std::fs::write(dir.join("src/fetch.rs"), fetch_rs(true)).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    let client = Client::builder().build();\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    git(dir, &["commit", "-qam", "Retry busy servers"]);
}

fn consolidate(repo: &Path, format: &str) -> std::process::Output {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/reviews");
    Command::cargo_bin("deep-review")
        .unwrap()
        .arg("consolidate")
        .args(["--raw", &format!("claude={examples}/claude.md")])
        .args(["--raw", &format!("codex={examples}/codex.md")])
        .args(["--raw", &format!("gemini={examples}/gemini.md")])
        .args([
            "--repo",
            repo.to_str().unwrap(),
            "--head",
            "retry",
            "--base",
            "main",
        ])
        .args(["--format", format])
        .output()
        .unwrap()
}

#[test]
fn verified_findings_stand_and_an_ungrounded_lone_one_is_set_apart() {
    let tmp = tempfile::tempdir().unwrap();
    example_repo(tmp.path());
    let out = consolidate(tmp.path(), "json");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();

    let findings = r["findings"].as_array().unwrap();
    let retry = &findings[0];
    assert_eq!(retry["id"], "I1");
    assert_eq!(retry["agents"].as_array().unwrap().len(), 3);
    assert_eq!(retry["verification"]["status"], "grounded");
    assert_eq!(retry["verification"]["pre_existing"], false);
    // The comment above the loop marks nothing as known.
    assert!(retry["verification"].get("known_issue_comment").is_none());

    // Gemini quotes `Client::new()` in src/main.rs; the file has no such line at head.
    let client = findings
        .iter()
        .find(|f| {
            f["sources"][0]["agent"] == "gemini" && f["agents"].as_array().unwrap().len() == 1
        })
        .expect("gemini's lone finding");
    assert_eq!(client["verification"]["status"], "ungrounded");
    assert_eq!(client["verification"]["quote_ok"], false);
    assert_eq!(client["tier"], "unverified");
    assert_eq!(client["id"], "U1");

    let gemini = r["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "gemini")
        .unwrap();
    assert_eq!(gemini["false_positives"], 1);
    let claude = r["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "claude")
        .unwrap();
    assert_eq!(claude["false_positives"], 0);
    assert_eq!(
        claude["files_reviewed"],
        serde_json::json!({"reviewed": 2, "total": 2})
    );
    // The unverified suggestion does not count toward the verdict; the important one does.
    assert_eq!(r["verdict"], "Merge with fixes");
}

#[test]
fn markdown_lists_the_unverified_finding_apart_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    example_repo(tmp.path());
    let out = consolidate(tmp.path(), "md");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    let unverified = md
        .find("## Unverified Findings")
        .expect("an Unverified Findings section");
    let client = md
        .find("Timeout configured after the client is built")
        .unwrap();
    assert!(
        client > unverified,
        "the ungrounded finding belongs under Unverified Findings"
    );
    assert!(
        md[unverified..].contains("Verification:"),
        "the reason is shown"
    );
    assert!(md.contains("| False positives | 0 | 0 | 1 |"), "{md}");
}

#[test]
fn a_todo_the_change_wrote_does_not_lower_its_own_finding() {
    let tmp = tempfile::tempdir().unwrap();
    example_repo(tmp.path());
    let fetch = tmp.path().join("src/fetch.rs");
    let text = std::fs::read_to_string(&fetch).unwrap().replace(
        "    // Retry while the server is busy.",
        "    // TODO: bound the retries; temporary until the job queue lands.",
    );
    std::fs::write(&fetch, text).unwrap();
    git(tmp.path(), &["commit", "-qam", "Mark the loop"]);
    let out = consolidate(tmp.path(), "json");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let retry = &r["findings"][0];
    // The change under review wrote that comment: its author cannot lower their own finding.
    assert_eq!(retry["id"], "I1");
    assert!(
        retry["verification"]["known_issue_comment"].is_null(),
        "{retry:#}"
    );
}

#[test]
fn a_directory_that_is_not_a_repository_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = consolidate(tmp.path(), "md");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a git repository"), "{err}");
}
