//! What environment an agent gets: the user's (HOME included: their logins live there) minus
//! the forge tokens, plus the agent's own variables. One test per binary, because it sets
//! variables of the test process itself.

use crate::support::repo as repo_support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use deep_review::dispatch::{AgentSpec, DispatchOptions, ProgressMode, dispatch_with};
use deep_review::types::RunStatus;
use repo_support::Repo;

#[tokio::test]
async fn agents_inherit_the_environment_minus_forge_tokens() {
    // SAFETY: the only test in this binary, and no other thread of it reads the environment.
    unsafe {
        std::env::set_var("GITHUB_TOKEN", "ghp_from_the_user_0123456789abcdef");
        std::env::set_var("GH_TOKEN", "gho_from_the_user_0123456789abcdef");
        std::env::set_var("DEEP_REVIEW_TEST_INHERITED", "inherited-value");
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = Repo::new();
    repo_dir.commit("one");
    let repo = repo_dir.path().to_path_buf();

    let script = tmp.path().join("env-agent");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nenv > \"{}/$1.env\"\necho review",
            tmp.path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();

    let spec = |name: &str, pass: bool| AgentSpec {
        // A name outside the registry: the extra args are the whole command line.
        extra_args: vec![name.into()],
        timeout: Duration::from_secs(30),
        env: BTreeMap::from([("AGENT_OWN".to_string(), format!("own-{name}"))]),
        pass_forge_tokens: pass,
        ..AgentSpec::new(name, script.to_string_lossy())
    };
    let agents = [spec("strict", false), spec("trusted", true)];
    let outcome = dispatch_with(
        &repo,
        "HEAD",
        "brief",
        &agents,
        &tmp.path().join("bundle"),
        ProgressMode::Silent,
        &DispatchOptions::default(),
    )
    .await;
    for r in &outcome.reviews {
        assert_eq!(r.status, RunStatus::Ok, "{}: {:?}", r.agent, r.error);
    }

    let strict = std::fs::read_to_string(tmp.path().join("strict.env")).unwrap();
    assert!(!strict.contains("GITHUB_TOKEN="), "{strict}");
    assert!(!strict.contains("GH_TOKEN="), "{strict}");
    assert!(strict.contains("DEEP_REVIEW_TEST_INHERITED=inherited-value"));
    assert!(strict.contains("AGENT_OWN=own-strict"));
    if let Ok(home) = std::env::var("HOME") {
        assert!(
            strict.contains(&format!("HOME={home}\n")),
            "HOME is the user's"
        );
    }

    let trusted = std::fs::read_to_string(tmp.path().join("trusted.env")).unwrap();
    assert!(trusted.contains("GITHUB_TOKEN=ghp_from_the_user_0123456789abcdef"));
    assert!(trusted.contains("GH_TOKEN=gho_from_the_user_0123456789abcdef"));

    // The bundle's command line names the removed variables and shows no token.
    let cmd = std::fs::read_to_string(tmp.path().join("bundle/strict/command.txt")).unwrap();
    assert!(cmd.contains("-u GITHUB_TOKEN -u GH_TOKEN"), "{cmd}");
    assert!(cmd.contains("AGENT_OWN=own-strict"), "{cmd}");
}
