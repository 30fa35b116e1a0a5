//! Each real agent CLI, run headless as AGENT_CLIS.md says, against the fake model server: the
//! scripted review must come back whole, and the fake's failure scripts (429, a malformed stream,
//! a file-writing tool call) must reach each CLI the way a real API's would. This proves the fake
//! server before any `deep-review run` test relies on it.

use crate::support;

use std::time::Duration;

use crate::support::agents::{AgentHome, CLIS, Ran, require_clis, review_text, run_with_stdin};
use crate::support::fake_model::{Api, FakeModel, Script, ToolCall};
use crate::support::git;

/// A guard against a CLI that waits forever; a healthy run takes 0.3-3 s.
const LIMIT: Duration = Duration::from_secs(120);

fn cli_name(api: Api) -> &'static str {
    CLIS.iter()
        .find(|(_, a)| *a == api)
        .map(|(n, _)| *n)
        .expect("every API has a CLI")
}

fn review_for(name: &str) -> String {
    format!(
        "## Executive Summary\n\nReviewed by the fake {name} model.\n\n## Findings\n\n\
         ### Important Issues\n\n\
         1. **Parser panics on bad input** — `src/parse.rs:2` (important, regression)\n\n   \
         `unwrap()` on user input; return an error instead.\n"
    )
}

/// One CLI run against a fresh fake server scripted with `script`, in a fresh two-commit repo.
struct Outcome {
    ran: Ran,
    server: FakeModel,
    repo: tempfile::TempDir,
}

impl Outcome {
    fn context(&self) -> String {
        format!(
            "exit {:?}\nrequests:\n{}\nstdout:\n{}\nstderr:\n{}",
            self.ran.status,
            self.server.summary(),
            self.ran.stdout,
            self.ran.stderr
        )
    }
}

/// Runs `api`'s CLI, or returns `None` when it is not installed (outside CI).
fn run(test: &str, api: Api, script: impl FnOnce(&std::path::Path) -> Script) -> Option<Outcome> {
    let name = cli_name(api);
    require_clis(&format!("e2e_cli_smoke::{test}::{name}"), &[name]);
    let server = FakeModel::start();
    let home = AgentHome::new(&server);
    let repo = tempfile::tempdir().expect("temp repo");
    git::two_commit_branch(repo.path());
    server.script(api, script(repo.path()));
    let ran = run_with_stdin(
        home.command(api, repo.path()),
        "Review the last two commits of this repository.",
        LIMIT,
    );
    let outcome = Outcome { ran, server, repo };
    assert!(
        !outcome.ran.timed_out,
        "{name} did not finish within {LIMIT:?}\n{}",
        outcome.context()
    );
    assert_eq!(
        outcome.server.connects(),
        Vec::<String>::new(),
        "{name} tried to reach another host\n{}",
        outcome.context()
    );
    Some(outcome)
}

fn returns_the_scripted_review(api: Api) {
    let name = cli_name(api);
    let review = review_for(name);
    let Some(out) = run("review", api, |_| Script::review(&review)) else {
        return;
    };
    assert!(out.ran.status.success(), "{name} failed\n{}", out.context());
    assert_eq!(
        review_text(api, &out.ran.stdout).trim(),
        review.trim(),
        "{name} did not return the scripted review\n{}",
        out.context()
    );
    assert_eq!(
        out.server.model_requests(api).len(),
        1,
        "{name} should answer in one model request\n{}",
        out.context()
    );
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_returns_the_scripted_review() {
    returns_the_scripted_review(Api::Anthropic);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn codex_returns_the_scripted_review() {
    returns_the_scripted_review(Api::OpenAi);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn gemini_returns_the_scripted_review() {
    returns_the_scripted_review(Api::Gemini);
}

/// The read-only settings deny a file write the model asks for; the CLI sends the refusal back
/// to the model, which then answers with the review. Claude is asked to write into the checkout
/// by absolute path, Codex and Gemini to run a shell command that writes in their cwd.
fn denies_a_file_write(api: Api) {
    let name = cli_name(api);
    let review = review_for(name);
    let Some(out) = run("write", api, |repo| {
        let call = match api {
            Api::Anthropic => ToolCall::WriteFile {
                path: repo.join("pwned.txt").display().to_string(),
                content: "written by the model".into(),
            },
            Api::OpenAi | Api::Gemini | Api::Chat => ToolCall::Shell {
                command: "echo pwned > pwned.txt".into(),
            },
        };
        Script::review(&review).tool_call(call)
    }) else {
        return;
    };
    assert!(out.ran.status.success(), "{name} failed\n{}", out.context());
    assert!(
        !out.repo.path().join("pwned.txt").exists(),
        "{name} wrote the file the model asked for\n{}",
        out.context()
    );
    assert_eq!(
        git::git(out.repo.path(), &["status", "--porcelain"]),
        "",
        "{name} changed the checkout"
    );
    let requests = out.server.model_requests(api);
    assert_eq!(
        requests.len(),
        2,
        "{name} should ask again after the tool call\n{}",
        out.context()
    );
    assert!(
        requests[1].body.contains("pwned") || requests[1].body.contains("written by the model"),
        "{name}'s second request does not carry the tool call back\n{}",
        out.context()
    );
    assert_eq!(
        review_text(api, &out.ran.stdout).trim(),
        review.trim(),
        "{name} did not return the review after the denied call\n{}",
        out.context()
    );
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_denies_a_file_write() {
    denies_a_file_write(Api::Anthropic);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn codex_denies_a_file_write() {
    denies_a_file_write(Api::OpenAi);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn gemini_denies_a_file_write() {
    denies_a_file_write(Api::Gemini);
}

/// With their own retries off (AGENT_CLIS.md's settings), a 429 makes each CLI fail at once and
/// say so in its output: what deep-review's retry has to recognise. Gemini names no status
/// code, only "Resource has been exhausted".
fn fails_on_a_429(api: Api) {
    let name = cli_name(api);
    let Some(out) = run("429", api, |_| Script::review("unused").fail_429(1)) else {
        return;
    };
    assert!(
        !out.ran.status.success(),
        "{name} succeeded on a 429\n{}",
        out.context()
    );
    assert_eq!(
        out.server.model_requests(api).len(),
        1,
        "{name} retried by itself\n{}",
        out.context()
    );
    let said = format!("{}{}", out.ran.stdout, out.ran.stderr);
    let marker = match api {
        Api::Anthropic => "(429)",
        Api::OpenAi => "429 Too Many Requests",
        Api::Gemini => "Resource has been exhausted",
        Api::Chat => "Rate limit reached",
    };
    assert!(
        said.contains(marker),
        "{name} does not say `{marker}`\n{}",
        out.context()
    );
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_fails_on_a_429() {
    fails_on_a_429(Api::Anthropic);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn codex_fails_on_a_429() {
    fails_on_a_429(Api::OpenAi);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn gemini_fails_on_a_429() {
    fails_on_a_429(Api::Gemini);
}

/// A stream that is not JSON is a failure (non-zero exit), never a review. Claude Code puts its
/// error message in a synthetic assistant message (model `<synthetic>`) and flags the result
/// `is_error`: text alone does not tell a review from a failure.
fn fails_on_a_malformed_stream(api: Api) {
    let name = cli_name(api);
    let Some(out) = run("malformed", api, |_| {
        Script::review("THE REVIEW THAT NEVER ARRIVES").malformed()
    }) else {
        return;
    };
    assert!(
        !out.ran.status.success(),
        "{name} succeeded on a malformed stream\n{}",
        out.context()
    );
    assert!(
        !review_text(api, &out.ran.stdout).contains("NEVER ARRIVES"),
        "{name}: {}",
        out.context()
    );
    if api == Api::Anthropic {
        assert!(
            out.ran.stdout.contains(r#""is_error":true"#),
            "claude's result is not flagged is_error\n{}",
            out.context()
        );
    }
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_fails_on_a_malformed_stream() {
    fails_on_a_malformed_stream(Api::Anthropic);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn codex_fails_on_a_malformed_stream() {
    fails_on_a_malformed_stream(Api::OpenAi);
}

#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn gemini_fails_on_a_malformed_stream() {
    fails_on_a_malformed_stream(Api::Gemini);
}

/// The pinned version of one CLI in scripts/install-agent-clis.sh (`NAME_VERSION="x.y.z"`).
fn pinned_version(variable: &str) -> String {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-agent-clis.sh");
    let text = std::fs::read_to_string(&script).expect("read scripts/install-agent-clis.sh");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{variable}=\"")))
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_else(|| panic!("{variable} is not pinned in {}", script.display()))
        .to_owned()
}

/// `deep-review agents` finds the three installed CLIs, at the versions the install script pins
/// (the versions this suite was checked with).
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn agents_command_lists_the_installed_clis_at_the_pinned_versions() {
    let paths = support::agents::require_all("e2e_cli_smoke::agents");
    let bin_dirs: Vec<_> = paths.iter().filter_map(|p| p.parent()).collect();
    let path = std::env::join_paths(bin_dirs.iter().chain([
        &std::path::Path::new("/usr/bin"),
        &std::path::Path::new("/bin"),
    ]))
    .expect("PATH");
    let out = std::process::Command::new(support::run::BIN)
        .args(["agents", "--json"])
        .env_clear()
        .env("PATH", path)
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("run deep-review agents");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "deep-review agents failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for (agent, variable) in [
        ("claude", "CLAUDE_CODE_VERSION"),
        ("codex", "CODEX_VERSION"),
        ("gemini", "GEMINI_CLI_VERSION"),
    ] {
        let entry = found
            .iter()
            .find(|e| e["agent"] == agent)
            .unwrap_or_else(|| panic!("{agent} not listed: {stdout}"));
        assert_eq!(entry["status"], "found", "{entry}");
        let version = entry["version"].as_str().unwrap_or_default();
        let pinned = pinned_version(variable);
        assert!(
            version.contains(&pinned),
            "{agent} is {version}, the install script pins {pinned}: run scripts/install-agent-clis.sh"
        );
    }
}
