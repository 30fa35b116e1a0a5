//! What environment an agent gets: an allowlist (PATH, HOME, locale, proxies, its own provider's
//! variables, deep-review's own, what config names), never the reviewer's other secrets; and
//! secrets are redacted from everything saved. Sets variables of the test process itself: run
//! it in its own process (nextest does).

use crate::support::repo as repo_support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use deep_review::dispatch::{AgentSpec, DispatchOptions, ProgressMode, dispatch_with};
use deep_review::types::RunStatus;
use repo_support::Repo;

#[tokio::test]
async fn agents_get_an_allowlisted_environment_and_secrets_are_not_saved() {
    // SAFETY: set before any thread of this test reads the environment; nextest runs each test
    // in a process of its own.
    unsafe {
        std::env::set_var("GITHUB_TOKEN", "ghp_from_the_user_0123456789abcdef");
        std::env::set_var("GH_TOKEN", "gho_from_the_user_0123456789abcdef");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "aws-secret-value-0123456789");
        std::env::set_var("OPENAI_API_KEY", "sk-openai-0123456789abcdef");
        std::env::set_var("DEEP_REVIEW_TEST_INHERITED", "inherited-value");
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = Repo::new();
    repo_dir.commit("one");
    let repo = repo_dir.path().to_path_buf();

    // The agent prints its whole environment as its review.
    let script = tmp.path().join("env-agent");
    std::fs::write(&script, "#!/bin/sh\ncat >/dev/null\nenv\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let spec = |name: &str, pass: bool| AgentSpec {
        extra_args: vec!["https://user:hunter2@example.com/x".into()],
        timeout: Duration::from_secs(30),
        env: BTreeMap::from([("AGENT_OWN".to_string(), format!("own-{name}"))]),
        pass_forge_tokens: pass,
        ..AgentSpec::new(name, script.to_string_lossy())
    };
    let agents = [spec("strict", false), spec("forge", true)];
    let bundle = tmp.path().join("bundle");
    let outcome = dispatch_with(
        &repo,
        "HEAD",
        "brief",
        &agents,
        &bundle,
        ProgressMode::Silent,
        &DispatchOptions {
            sandbox_helper: Some(env!("CARGO_BIN_EXE_deep-review").into()),
            ..DispatchOptions::default()
        },
    )
    .await;
    for r in &outcome.reviews {
        assert_eq!(r.status, RunStatus::Ok, "{}: {:?}", r.agent, r.error);
    }

    let strict = &outcome.reviews[0].text;
    for absent in [
        "AWS_SECRET_ACCESS_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
    ] {
        assert!(
            !strict.contains(absent),
            "{absent} reached the agent: {strict}"
        );
    }
    assert!(
        strict.contains("DEEP_REVIEW_TEST_INHERITED=inherited-value"),
        "{strict}"
    );
    assert!(strict.contains("AGENT_OWN=own-strict"), "{strict}");
    // HOME is a throwaway home made for the run, never the user's own.
    if let Ok(home) = std::env::var("HOME") {
        assert!(
            !strict.contains(&format!("HOME={home}\n")),
            "HOME is the user's: {strict}"
        );
    }
    assert!(strict.contains("/home-strict\n"), "{strict}");

    // Forge tokens pass when config says so, and their values never reach a saved file.
    let forge = &outcome.reviews[1].text;
    assert!(forge.contains("GITHUB_TOKEN=***"), "{forge}");
    let saved = std::fs::read_to_string(bundle.join("forge/stdout.jsonl")).unwrap();
    assert!(saved.contains("GH_TOKEN=***"), "{saved}");
    assert!(!saved.contains("gho_from_the_user"), "{saved}");
    let review = std::fs::read_to_string(bundle.join("forge/review.md")).unwrap();
    assert!(!review.contains("ghp_from_the_user"), "{review}");

    // The saved command line hides URL credentials.
    let cmd = std::fs::read_to_string(bundle.join("strict/command.txt")).unwrap();
    assert!(cmd.contains("https://***@example.com/x"), "{cmd}");
    assert!(!cmd.contains("hunter2"), "{cmd}");
    assert!(cmd.contains("AGENT_OWN=own-strict"), "{cmd}");
}
