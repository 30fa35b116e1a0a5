//! `deep-review agents` with a PATH made for the test: one working CLI, one broken, one missing.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn tool(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn lists_found_broken_and_missing_agents() {
    let bin = tempfile::tempdir().unwrap();
    tool(
        bin.path(),
        "claude",
        r#"[ "$1" = "--version" ] && echo "2.1.197 (Claude Code)""#,
    );
    tool(
        bin.path(),
        "codex",
        "echo 'codex: broken install' >&2\nexit 2",
    );
    // Not executable: not an agent on PATH.
    std::fs::write(bin.path().join("gemini"), "not a program").unwrap();

    let home = tempfile::tempdir().unwrap();
    Command::cargo_bin("deep-review")
        .unwrap()
        .arg("agents")
        .current_dir(home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("PATH", bin.path())
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^claude\s+2\.1\.197 \(Claude Code\)\s+/").unwrap())
        .stdout(predicate::str::contains("codex   broken"))
        .stdout(predicate::str::contains("codex: broken install"))
        .stdout(predicate::str::is_match(r"(?m)^gemini\s+missing\s+`gemini` is not found: install it with `npm install -g @google/gemini-cli`").unwrap());

    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .args(["agents", "--json"])
        .current_dir(home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["status"], "found");
    assert_eq!(lines[0]["version"], "2.1.197 (Claude Code)");
    assert_eq!(lines[1]["status"], "broken");
    assert_eq!(lines[2]["status"], "missing");
    assert_eq!(lines[2]["npm_package"], "@google/gemini-cli");
}

/// Listing what it found is the command's success, usable or not (1 would mean a gate failed).
#[test]
fn no_usable_agent_is_listed_with_what_to_install_and_exits_0() {
    let empty = tempfile::tempdir().unwrap();
    Command::cargo_bin("deep-review")
        .unwrap()
        .arg("agents")
        .env("PATH", empty.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("claude  missing"))
        .stderr(predicate::str::contains(
            "npm install -g @anthropic-ai/claude-code",
        ));
}

/// The commands the config gives the agents are the ones checked, custom agents included.
#[test]
fn configured_commands_are_the_ones_checked() {
    let bin = tempfile::tempdir().unwrap();
    tool(
        bin.path(),
        "my-claude",
        r#"[ "$1" = "--version" ] && echo "9.9.9 (Claude Code)""#,
    );
    tool(bin.path(), "reviewer.sh", "cat");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("deep-review")).unwrap();
    std::fs::write(
        home.path().join("deep-review/config.toml"),
        format!(
            "[agents.claude]\ncommand = \"{0}/my-claude\"\n[agents.codex]\nenabled = false\n\
             [agents.gemini]\nenabled = false\n[agents.house]\ncommand = \"{0}/reviewer.sh\"\n",
            bin.path().display()
        ),
    )
    .unwrap();
    Command::cargo_bin("deep-review")
        .unwrap()
        .arg("agents")
        .current_dir(home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("PATH", "/nonexistent")
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(r"(?m)^claude\s+9\.9\.9 \(Claude Code\)\s+/.*my-claude$")
                .unwrap(),
        )
        .stdout(
            predicate::str::is_match(r"(?m)^house\s+\(custom agent\)\s+/.*reviewer\.sh$").unwrap(),
        )
        .stdout(predicate::str::contains("codex").not());
}
