//! Each real agent CLI, run headless as AGENT_CLIS.md says, against the fake model server: the
//! scripted review must come back whole. This proves the fake server speaks each stream well
//! enough for the real clients, before any `deep-review run` test relies on it.

mod support;

use std::time::Duration;

use support::agents::{AgentHome, CLIS, require_clis, review_text, run_with_stdin};
use support::fake_model::{Api, FakeModel, Script};
use support::git;

const LIMIT: Duration = Duration::from_secs(120);

fn review_for(name: &str) -> String {
    format!(
        "## Summary\n\nReviewed by the fake {name} model.\n\n## Findings\n\n\
         1. **Parser panics on bad input** — `src/parse.rs:2` (important, regression)\n   \
         `unwrap()` on user input; return an error instead.\n"
    )
}

fn smoke(api: Api) {
    let name = CLIS
        .iter()
        .find(|(_, a)| *a == api)
        .map(|(n, _)| *n)
        .expect("known API");
    let test = format!("e2e_cli_smoke::{name}");
    if require_clis(&test, &[name]).is_none() {
        return;
    }
    let server = FakeModel::start();
    let review = review_for(name);
    server.script(api, Script::review(&review));
    let home = AgentHome::new(&server);
    let repo = tempfile::tempdir().expect("temp repo");
    git::two_commit_branch(repo.path());

    let ran = run_with_stdin(
        home.command(api, repo.path()),
        "Review the last two commits of this repository.",
        LIMIT,
    );
    let requests = server.summary();
    assert!(
        !ran.timed_out,
        "{name} did not finish within {LIMIT:?}; requests:\n{requests}\nstderr:\n{}",
        ran.stderr
    );
    assert!(
        ran.status.success(),
        "{name} exited {:?}; requests:\n{requests}\nstdout:\n{}\nstderr:\n{}",
        ran.status,
        ran.stdout,
        ran.stderr
    );
    assert_eq!(
        review_text(api, &ran.stdout).trim(),
        review.trim(),
        "{name} did not return the scripted review; requests:\n{requests}\nstdout:\n{}",
        ran.stdout
    );
    assert!(
        !server.model_requests(api).is_empty(),
        "{name} made no model request; requests:\n{requests}"
    );
    assert_eq!(
        server.connects(),
        Vec::<String>::new(),
        "{name} tried to leave the machine"
    );
    if std::env::var_os("FAKE_MODEL_DEBUG").is_some() {
        eprintln!(
            "{name} requests:\n{requests}\nstdout:\n{}\nstderr:\n{}",
            ran.stdout, ran.stderr
        );
    }
}

#[test]
fn claude_returns_the_scripted_review() {
    smoke(Api::Anthropic);
}

#[test]
fn codex_returns_the_scripted_review() {
    smoke(Api::OpenAi);
}

#[test]
fn gemini_returns_the_scripted_review() {
    smoke(Api::Gemini);
}
