//! Text that changes meaning on screen (issue 20, item 6): a display name with a newline or a
//! control character is refused at config load with its key and line (and on the command line);
//! bidi controls and zero-width characters are written out (`\u{202e}`) in the terminal, the
//! Markdown and HTML reports and the pull request comments; a Markdown image in a comment
//! becomes a link.

use assert_cmd::Command;
use serde_json::Value;

use crate::support::standin::{Agents, json_report, repo, run};

/// A review whose finding hides its meaning: a right-to-left override, an isolate, a zero-width
/// space, and an image that would load when the comment is viewed.
fn sneaky_review() -> String {
    "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login.\u{200b}\n\n\
     ## Findings\n\n### Important Issues\n\n1. **Login is fine\u{202e}reversed** — \
     `src/auth.rs:1` (important, regression)\n\n```rust\npub fn login(_pw: &str) -> bool { true }\n```\n\n\
     `login` returns true\u{2066} for every password. \
     ![t](https://evil.example/t.gif?id=42)\n"
        .to_string()
}

fn shows_no_invisible(what: &str, text: &str) {
    for c in ['\u{202e}', '\u{2066}', '\u{200b}'] {
        assert!(!text.contains(c), "{what} holds U+{:04X}: {text}", c as u32);
    }
}

#[test]
fn a_display_name_on_several_lines_is_refused_with_its_key_and_line() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &sneaky_review());
    let config = agents.config_file();
    std::fs::write(
        &config,
        std::fs::read_to_string(&config).unwrap() + "display = \"Alpha\\n## Verdict\\n<!--\"\n",
    )
    .unwrap();
    let line = std::fs::read_to_string(&config).unwrap().lines().count();
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--dry-run"]));
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains(&format!("line {line}, key `agents.alpha.display`"))
            && ran.stderr.contains("a line break"),
        "{}",
        ran.stderr
    );

    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "consolidate",
            "--raw",
            "claude=examples/reviews/claude.md",
            "--reviewer",
            "claude=Claude\n## Verdict: Merge",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--reviewer") && stderr.contains("a line break"),
        "{stderr}"
    );
}

#[test]
fn bidi_and_zero_width_characters_are_shown_and_images_are_links() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &sneaky_review());
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    shows_no_invisible("the terminal", &(ran.stdout.clone() + &ran.stderr));
    assert!(
        ran.stderr.contains("Login is fine\\u{202e}reversed"),
        "{}",
        ran.stderr
    );
    let report = json_report(&ran);
    let id = report["meta"]["id"].as_str().unwrap().to_string();
    for ext in ["md", "html"] {
        let text = std::fs::read_to_string(repo.store().join(format!("{id}.{ext}"))).unwrap();
        shows_no_invisible(ext, &text);
        assert!(
            text.contains("\\u{202e}") && text.contains("\\u{2066}"),
            "{ext}"
        );
    }

    // The same report as a pull request's, posted (a dry run prints every body it would send).
    let target = repo.store().join("runs").join(&id).join("target.json");
    let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    t["pr"] = serde_json::json!({"number": 7, "title": "Login"});
    std::fs::write(&target, t.to_string()).unwrap();
    let posted = run(agents
        .cmd(repo.path())
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env("GITHUB_REPOSITORY", "o/r")
        .args(["post", "latest", "--dry-run"]));
    assert_eq!(posted.code, Some(0), "{}", posted.stderr);
    shows_no_invisible("the comments", &posted.stdout);
    assert!(posted.stdout.contains("Login is fine"), "{}", posted.stdout);
    assert!(!posted.stdout.contains("!["), "{}", posted.stdout);
    assert!(
        posted
            .stdout
            .contains("](https://evil.example/t.gif?id=42)"),
        "{}",
        posted.stdout
    );
}
