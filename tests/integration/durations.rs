//! Durations saturate instead of overflowing (issue 20, item 5): a timeout of
//! `18446744073709551615s` in the config, or a server's `retry-after` of 1e300 seconds, never
//! panics a run: the timeout is read as "no limit" (a hundred years) and the wait as the most a
//! retry waits.

use assert_cmd::Command;
use serde_json::Value;

use crate::support::fake_model::{Api, FakeModel, Script};
use crate::support::standin::{Agents, json_report, repo, review, run};

const HUGE: &str = "18446744073709551615s";

#[test]
fn a_timeout_too_large_for_a_clock_saturates() {
    let repo = repo();
    let agents = Agents::new();
    agents.reviewing("alpha", &review("Login accepts any password", None));
    let config = agents.config_file();
    std::fs::write(
        &config,
        std::fs::read_to_string(&config).unwrap()
            + &format!("timeout = \"{HUGE}\"\nrequest_timeout = \"{HUGE}\"\n"),
    )
    .unwrap();

    let dry = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--dry-run"]));
    assert_eq!(dry.code, Some(0), "{}", dry.stderr);
    assert!(dry.stdout.contains("timeout 876000h0m"), "{}", dry.stdout);
    let ran = run(agents
        .cmd(repo.path())
        .args(["run", "--agents", "alpha", "--quiet"]));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    assert_eq!(json_report(&ran)["verdict"], "Merge with fixes");
}

#[test]
fn a_retry_after_too_large_for_a_clock_is_no_panic() {
    let repo = repo();
    let server = FakeModel::start();
    server.script(
        Api::Chat,
        Script::review("## Executive Summary\n\nFine.\n")
            .fail_429(5)
            .retry_after("1e300"),
    );
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("deep-review")).unwrap();
    std::fs::write(
        xdg.path().join("deep-review/config.toml"),
        format!(
            "[agents.local]\nkind = \"openai-compatible\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n\
             timeout = \"3s\"\n",
            server.url()
        ),
    )
    .unwrap();
    let out = Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .args(["run", "--agents", "local", "--quiet"])
        .env("XDG_CONFIG_HOME", xdg.path())
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("CI")
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The only agent was rate limited for longer than its timeout: no review, exit 3.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let json = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.ends_with(".json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    let report: Value = serde_json::from_str(&json).unwrap();
    let local = &report["agents"][0];
    assert_eq!(local["status"], "failed", "{local:#}");
}
