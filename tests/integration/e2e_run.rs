//! `deep-review run` end to end, as issue 3 specifies it: the built binary in a fresh git
//! repository with a two-commit branch, the three real agent CLIs (Claude Code, Codex CLI, Gemini
//! CLI) talking to the fake model server on 127.0.0.1.

use crate::support;

use std::time::{Duration, Instant};

use crate::support::agents::require_all;
use crate::support::fake_model::{Api, ToolCall};
use crate::support::run::{
    RunFixture, agent_entries, consolidated_part, script_three, three_reviews, wait_limited,
};

/// A guard so that a broken run fails the test instead of hanging the suite; a healthy run
/// against the fake server takes a few seconds.
const LIMIT: Duration = Duration::from_secs(240);

fn needs_clis(test: &str) -> bool {
    !require_all(&format!("e2e_run::{test}")).is_empty()
}

/// Asserts the run ended by itself with exit 0 and wrote one report; returns it.
fn finished_report(fx: &RunFixture, out: &support::run::RunOutput) -> String {
    assert!(
        !out.timed_out,
        "deep-review run did not finish\n{}",
        fx.context(out)
    );
    assert!(
        out.status.success(),
        "deep-review run failed\n{}",
        fx.context(out)
    );
    fx.the_report(out)
}

fn assert_holds_finding(fx: &RunFixture, out: &support::run::RunOutput, report: &str, title: &str) {
    assert!(
        consolidated_part(report).contains(title),
        "the consolidated report (before its appendix) lacks the finding {title:?}\nreport:\n{report}\n{}",
        fx.context(out)
    );
}

/// The acceptance test: a new user's `deep-review run`, no arguments, no config.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn run_writes_one_report_with_all_three_agents_findings() {
    if !needs_clis("run_writes_one_report_with_all_three_agents_findings") {
        return;
    }
    let fx = RunFixture::new();
    script_three(&fx, |_, s| s);
    let out = fx.run(&["run"], LIMIT);
    let report = finished_report(&fx, &out);
    for (_, title, _) in three_reviews() {
        assert_holds_finding(&fx, &out, &report, title);
    }
    let lower = consolidated_part(&report).to_lowercase();
    for agent in ["claude", "codex", "gemini"] {
        assert!(
            lower.contains(agent),
            "the report does not name {agent}\n{report}"
        );
    }
    let path = fx.reports("md").remove(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    assert!(
        out.stdout.contains(&*name.clone().unwrap_or_default())
            || out.stderr.contains(&*name.unwrap_or_default()),
        "deep-review did not print the report's path\n{}",
        fx.context(&out)
    );
    assert!(
        fx.path().join(".git/deep-review/runs").is_dir(),
        "no run bundle under .git/deep-review/runs/\n{}",
        fx.context(&out)
    );
    for api in Api::ALL {
        assert_eq!(
            fx.server.model_requests(api).len(),
            1,
            "{api:?} should have been asked once\n{}",
            fx.context(&out)
        );
    }
    assert_eq!(
        fx.server.connects(),
        Vec::<String>::new(),
        "an agent tried to leave the machine"
    );
    fx.assert_checkout_untouched();
    assert_eq!(
        fx.linked_worktrees(),
        Vec::<std::path::PathBuf>::new(),
        "worktrees left behind"
    );
    assert_eq!(
        fx.leftover_processes(),
        Vec::<String>::new(),
        "agent processes left behind"
    );
}

/// Each model answers 429 twice, then the review: every agent's CLI fails twice (their own
/// retries are off), deep-review retries it, and the third try's review is in the report.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn rate_limited_twice_then_answered_is_retried() {
    if !needs_clis("rate_limited_twice_then_answered_is_retried") {
        return;
    }
    let fx = RunFixture::new();
    script_three(&fx, |_, s| s.fail_429(2));
    let out = fx.run(&["run", "main..feature"], LIMIT);
    let report = finished_report(&fx, &out);
    for (api, title, _) in three_reviews() {
        assert_eq!(
            fx.server.model_requests(api).len(),
            3,
            "{api:?}: expected two 429s and one answer\n{}",
            fx.context(&out)
        );
        assert_holds_finding(&fx, &out, &report, title);
    }
    assert_eq!(
        fx.leftover_processes(),
        Vec::<String>::new(),
        "agent processes left behind"
    );
}

/// Gemini's model never answers; with `timeout = "5s"` for it, the run still ends, the report
/// says Gemini timed out, and Claude's and Codex's findings stand.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn hanging_agent_is_timed_out_and_the_others_stand() {
    if !needs_clis("hanging_agent_is_timed_out_and_the_others_stand") {
        return;
    }
    let fx = RunFixture::new();
    script_three(&fx, |api, s| if api == Api::Gemini { s.hang() } else { s });
    fx.config("[agents.gemini]\ntimeout = \"5s\"\n");
    let out = fx.run(&["run", "main..feature", "--format", "json"], LIMIT);
    assert!(
        !out.timed_out,
        "deep-review run did not finish\n{}",
        fx.context(&out)
    );
    assert!(
        out.status.success(),
        "one agent timing out must not sink the review\n{}",
        fx.context(&out)
    );
    let report = fx.the_report(&out);
    for (api, title, _) in three_reviews() {
        if api != Api::Gemini {
            assert_holds_finding(&fx, &out, &report, title);
        }
    }
    let says_gemini_timed_out = consolidated_part(&report).lines().any(|line| {
        let l = line.to_lowercase();
        l.contains("gemini") && (l.contains("timed out") || l.contains("timeout"))
    });
    assert!(
        says_gemini_timed_out,
        "the report does not say that Gemini timed out\n{report}"
    );
    let json_reports = fx.reports("json");
    assert_eq!(
        json_reports.len(),
        1,
        "--format json wrote {json_reports:?}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json_reports[0]).expect("read the JSON report"),
    )
    .expect("the JSON report parses");
    let statuses: Vec<(String, String)> = agent_entries(&json)
        .into_iter()
        .map(|e| {
            (
                e.to_string().to_lowercase(),
                e["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let status_of = |agent: &str| {
        statuses
            .iter()
            .find(|(text, s)| {
                text.contains(agent) && ["ok", "failed", "timed_out"].contains(&s.as_str())
            })
            .map(|(_, s)| s.clone())
    };
    assert_eq!(
        status_of("gemini").as_deref(),
        Some("timed_out"),
        "{json:#}"
    );
    assert_eq!(status_of("claude").as_deref(), Some("ok"), "{json:#}");
    assert_eq!(status_of("codex").as_deref(), Some("ok"), "{json:#}");
    assert_eq!(
        fx.leftover_processes(),
        Vec::<String>::new(),
        "the timed-out agent is still running"
    );
    assert_eq!(
        fx.linked_worktrees(),
        Vec::<std::path::PathBuf>::new(),
        "worktrees left behind"
    );
}

/// Every model first asks to write a file (Claude into the user's checkout by absolute path,
/// Codex and Gemini through a shell command in their worktree); the read-only settings deny it,
/// each model then gives its review, and nothing was written anywhere.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn agent_asked_to_write_is_denied_and_nothing_changes() {
    if !needs_clis("agent_asked_to_write_is_denied_and_nothing_changes") {
        return;
    }
    let fx = RunFixture::new();
    let target = fx.path().join("pwned.txt").display().to_string();
    script_three(&fx, |api, s| {
        s.tool_call(match api {
            Api::Anthropic => ToolCall::WriteFile {
                path: target.clone(),
                content: "written by the model".into(),
            },
            Api::OpenAi | Api::Gemini | Api::Chat => ToolCall::Shell {
                command: "echo pwned > pwned.txt && git commit -qam pwned".into(),
            },
        })
    });
    let out = fx.run(&["run", "main..feature"], LIMIT);
    let report = finished_report(&fx, &out);
    for (api, title, _) in three_reviews() {
        assert!(
            fx.server.model_requests(api).len() >= 2,
            "{api:?}: the model was not asked again after its tool call\n{}",
            fx.context(&out)
        );
        assert_holds_finding(&fx, &out, &report, title);
    }
    // Each agent's worktree was checked after its run and found unchanged (the run bundle's
    // meta.json keeps what the check found).
    let metas = fx.agent_metas();
    for agent in ["claude", "codex", "gemini"] {
        let meta = metas
            .iter()
            .find(|(name, _)| name == agent)
            .map(|(_, m)| m)
            .unwrap_or_else(|| panic!("no meta.json for {agent} in the run bundle: {metas:?}"));
        assert_eq!(
            meta["worktree_changes"],
            serde_json::json!([]),
            "{agent} changed its worktree although every write was to be denied"
        );
    }
    fx.assert_checkout_untouched();
    assert_eq!(
        fx.linked_worktrees(),
        Vec::<std::path::PathBuf>::new(),
        "worktrees left behind"
    );
}

/// Ctrl-C while every agent waits on its model: deep-review kills every agent, removes the
/// worktrees and exits 130.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn sigint_mid_run_leaves_no_agent_and_no_worktree() {
    if !needs_clis("sigint_mid_run_leaves_no_agent_and_no_worktree") {
        return;
    }
    let fx = RunFixture::new();
    script_three(&fx, |_, s| s.hang());
    let child = fx.spawn(&["run", "main..feature"]);
    let pid = child.id();

    // Wait until all three agents are talking to their models.
    let deadline = Instant::now() + Duration::from_secs(120);
    while Api::ALL
        .iter()
        .any(|api| fx.server.model_requests(*api).is_empty())
    {
        assert!(
            Instant::now() < deadline,
            "the agents never reached the model server:\n{}\nstderr:\n{}",
            fx.server.summary(),
            fx.read_log("stderr")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let worktrees = fx.agent_checkouts(pid);
    // Sandboxed agents share one read-only checkout; unsandboxed ones get one each.
    let expected = if deep_review::dispatch::sandbox::available() {
        1
    } else {
        3
    };
    assert_eq!(
        worktrees.len(),
        expected,
        "checkouts while the agents run: {worktrees:?}"
    );
    let agents_running = fx.leftover_processes();
    assert!(
        agents_running.len() > 1,
        "expected deep-review and its agents to be running: {agents_running:?}"
    );

    let pid = i32::try_from(pid).expect("pid fits in i32");
    // SAFETY: kill(2) on the deep-review process this test started; no memory is involved.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let (status, timed_out) = wait_limited(child, Duration::from_secs(60));
    let out = support::run::RunOutput {
        status,
        timed_out,
        stdout: fx.read_log("stdout"),
        stderr: fx.read_log("stderr"),
        elapsed: Duration::ZERO,
    };
    assert!(
        !timed_out,
        "deep-review did not stop on SIGINT\n{}",
        fx.context(&out)
    );
    assert_eq!(
        status.code(),
        Some(130),
        "exit status on SIGINT\n{}",
        fx.context(&out)
    );
    assert_eq!(
        fx.leftover_processes(),
        Vec::<String>::new(),
        "agent processes survived SIGINT (before it: {agents_running:?})"
    );
    assert_eq!(
        fx.linked_worktrees(),
        Vec::<std::path::PathBuf>::new(),
        "git still lists worktrees after SIGINT (before it: {worktrees:?})"
    );
    for dir in &worktrees {
        assert!(!dir.exists(), "worktree {} is still on disk", dir.display());
        // The temporary folder that held the worktrees goes too.
        if let Some(parent) = dir.parent().filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("deep-review-"))
        }) {
            assert!(!parent.exists(), "{} is still on disk", parent.display());
        }
    }
    fx.assert_checkout_untouched();
}

/// A model whose stream is garbage fails its agent; the other two reviews still make a report
/// that names the failed agent.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn malformed_stream_fails_one_agent_and_the_others_stand() {
    if !needs_clis("malformed_stream_fails_one_agent_and_the_others_stand") {
        return;
    }
    let fx = RunFixture::new();
    script_three(
        &fx,
        |api, s| if api == Api::OpenAi { s.malformed() } else { s },
    );
    let out = fx.run(&["run", "main..feature"], LIMIT);
    let report = finished_report(&fx, &out);
    for (api, title, _) in three_reviews() {
        if api != Api::OpenAi {
            assert_holds_finding(&fx, &out, &report, title);
        }
    }
    let names_codex_failed = consolidated_part(&report).lines().any(|line| {
        let l = line.to_lowercase();
        l.contains("codex") && (l.contains("fail") || l.contains("error"))
    });
    assert!(
        names_codex_failed,
        "the report does not say Codex failed\n{report}"
    );
}

/// An agent that tries what a hostile change could make it try: read a key in `$HOME/.ssh`,
/// write into the user's checkout and `$HOME`, set `core.fsmonitor` in the shared `.git/config`,
/// install a `post-checkout` hook, and scribble in its own checkout. Under the sandbox every
/// attempt fails, nothing changed, and the report names the sandbox. Needs no agent CLI; needs
/// Landlock (this machine's kernel and CI's have it).
#[test]
fn a_sandboxed_agent_cannot_read_secrets_or_write_outside_its_state() {
    assert!(
        deep_review::dispatch::sandbox::available(),
        "this test needs a kernel with Landlock (Linux 5.13+, enabled)"
    );
    let fx = RunFixture::new();
    let home = fx.home.path();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY MATERIAL\n").unwrap();
    let repo = fx.path().to_path_buf();
    let config_before = std::fs::read(repo.join(".git/config")).unwrap();
    let script = home.join("attacker.sh");
    let review = support::run::review(
        "Parser panics on malformed input",
        "src/parse.rs:4",
        "important",
        "`unwrap()` on user-supplied text aborts the process.",
    );
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
cat > /dev/null
try() {{ if sh -c "$2" >/dev/null 2>&1; then echo "ALLOWED $1"; else echo "DENIED $1"; fi; }}
try ssh "cat '{home}/.ssh/id_test'"
try checkout "echo x > '{repo}/pwned.txt'"
try gitconfig "printf '[core]\n\tfsmonitor = touch /tmp/fsmonitor-ran\n' >> '{repo}/.git/config'"
try hook "echo 'touch /tmp/hook-ran' > '{repo}/.git/hooks/post-checkout'"
try home "echo x > '{home}/.profile-pwned'"
try own-checkout "echo scribbled > scribble.txt"
try read-own-checkout "cat src/parse.rs"
cat <<'REVIEW'
{review}REVIEW
"#,
            home = home.display(),
            repo = repo.display(),
        ),
    )
    .expect("write the agent script");
    let mut perms = std::fs::metadata(&script).expect("script").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).expect("chmod the agent script");
    fx.config(&format!(
        "[agents.attacker]\ncommand = \"{}\"\ndisplay = \"Attacker\"\n",
        script.display()
    ));
    let out = fx.run(
        &[
            "run",
            "main..feature",
            "--agents",
            "attacker",
            "--format",
            "json",
        ],
        LIMIT,
    );
    let report = finished_report(&fx, &out);
    assert_holds_finding(&fx, &out, &report, "Parser panics on malformed input");
    let raw = std::fs::read_dir(fx.path().join(".git/deep-review/runs"))
        .unwrap()
        .flatten()
        .map(|run| std::fs::read_to_string(run.path().join("attacker/review.md")).unwrap())
        .next()
        .unwrap();
    for attempt in [
        "ssh",
        "checkout",
        "gitconfig",
        "hook",
        "home",
        "own-checkout",
    ] {
        assert!(
            raw.contains(&format!("DENIED {attempt}\n")),
            "{attempt} was not denied:\n{raw}"
        );
    }
    assert!(raw.contains("ALLOWED read-own-checkout\n"), "{raw}");
    assert!(!raw.contains("PRIVATE KEY"), "{raw}");
    fx.assert_checkout_untouched();
    assert_eq!(
        std::fs::read(repo.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!repo.join(".git/hooks/post-checkout").exists());
    assert!(!home.join(".profile-pwned").exists());
    // The report names the sandbox the agent ran under.
    let json = fx.reports("json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    let attacker = json["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "attacker")
        .unwrap();
    let layers = deep_review::dispatch::sandbox::Plan::new(
        deep_review::dispatch::sandbox::Mode::Auto,
        Some(assert_cmd::cargo::cargo_bin("deep-review")),
    )
    .layers
    .name();
    // In CI bubblewrap is installed (scripts/test.sh): the strongest layers, not a fallback.
    if std::env::var_os("CI").is_some() {
        assert_eq!(layers, "bwrap+landlock", "CI runs without bubblewrap");
    }
    assert_eq!(attacker["sandbox"], layers.as_str(), "{attacker:#}");
    assert!(report.contains(&layers), "{report}");
    assert_eq!(
        fx.linked_worktrees(),
        Vec::<std::path::PathBuf>::new(),
        "worktrees left behind"
    );
}

/// `git diff`, `git log` and `git show` are the only shell commands Claude is allowed, and all
/// three take `--output FILE`: a write anywhere on the machine that the worktree check cannot
/// see. So does a shell redirection. Those must be denied, while plain reading commands still
/// run.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_git_commands_read_but_cannot_write_outside_the_worktree() {
    if !needs_clis("claude_git_commands_read_but_cannot_write_outside_the_worktree") {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("written-by-git.txt");
    let t = target.display();
    let writes = [
        format!("git diff --output={t} HEAD~1"),
        format!("git log -p --output {t} -1"),
        format!("git show HEAD > {t}"),
        format!("git diff HEAD~1 | tee {t}"),
    ];
    for command in &writes {
        let tool_result = claude_tool_result(command);
        assert!(
            tool_result.contains("has been denied"),
            "`{command}` was not denied: {tool_result}"
        );
        assert!(!target.exists(), "`{command}` wrote {t}");
    }
    let tool_result = claude_tool_result("git log --oneline -3");
    assert!(
        tool_result.contains("Add a number parser"),
        "`git log --oneline -3` should run: {tool_result}"
    );
}

/// Claude's own Read tool is confined by the sandbox, not only by its permission rules: told by
/// its model to read a file in the user's home (outside its checkout), the CLI gets a denial
/// from the kernel and the content never reaches the model.
#[test]
#[ignore = "needs the agent CLIs from npm: scripts/install-agent-clis.sh, then --run-ignored all"]
fn claude_cannot_read_outside_its_checkout() {
    if !needs_clis("claude_cannot_read_outside_its_checkout") {
        return;
    }
    let fx = RunFixture::new();
    let secret = fx.home.path().join("notes/credentials.txt");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "aws_secret_access_key = SUPERSECRET123\n").unwrap();
    let result = tool_result_of(
        &fx,
        ToolCall::ReadFile {
            path: secret.display().to_string(),
        },
    );
    assert!(
        !result.contains("SUPERSECRET123"),
        "the file was read: {result}"
    );
    // Under bubblewrap the user's home is not even in the agent's file system; under Landlock
    // alone the kernel denies the read.
    assert!(
        result.contains("File does not exist") || result.contains("EACCES"),
        "no denial by the sandbox: {result}"
    );
}

/// Runs Claude alone with its model asking for `command` first, and returns what the CLI sent
/// back to the model as the tool's result.
fn claude_tool_result(command: &str) -> String {
    let fx = RunFixture::new();
    tool_result_of(
        &fx,
        ToolCall::Shell {
            command: command.to_string(),
        },
    )
}

/// Runs Claude alone with its model asking for `call` first, and returns what the CLI sent
/// back to the model as the tool's result.
fn tool_result_of(fx: &RunFixture, call: ToolCall) -> String {
    let command = format!("{call:?}");
    script_three(fx, |api, s| match api {
        Api::Anthropic => s.tool_call(call.clone()),
        _ => s,
    });
    let out = fx.run(&["run", "main..feature", "--agents", "claude"], LIMIT);
    let requests = fx.server.model_requests(Api::Anthropic);
    let body = requests.last().map(|r| r.body.clone()).unwrap_or_default();
    let at = body.find("tool_result").unwrap_or_else(|| {
        panic!(
            "Claude never sent a tool result for `{command}`\n{}",
            fx.context(&out)
        )
    });
    body[at..].chars().take(300).collect()
}
