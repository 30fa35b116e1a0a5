//! The dispatch stage with real processes and real git repositories: shell scripts stand in
//! for the agent CLIs (each is recognised as its agent by `spec.name`), so these tests need no
//! CLI from npm. The tests with the real CLIs and a fake model server live elsewhere.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::procs;
use deep_review::dispatch::{
    AgentSpec, CancelToken, DispatchOptions, DispatchOutcome, ProgressMode, dispatch_with,
};
use deep_review::types::{RawReview, RunStatus};

/// A repository with two commits; returns its path and the head sha.
fn repo(dir: &Path) -> (PathBuf, String) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "T"]);
    std::fs::write(repo.join("a.rs"), "fn a() {}\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "first"]);
    std::fs::write(repo.join("a.rs"), "fn a() { b() }\n").unwrap();
    git(&["commit", "-qam", "second"]);
    let head = git(&["rev-parse", "HEAD"]);
    // The user's checkout is dirty: dispatch must neither review nor touch this.
    std::fs::write(repo.join("a.rs"), "fn a() { dirty() }\n").unwrap();
    (repo, head)
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A stand-in agent: it may write in the directory of its script (where the tests keep their
/// records), nowhere else outside its sandbox.
fn spec(name: &str, command: &Path, timeout: Duration) -> AgentSpec {
    if let Some(dir) = command.parent() {
        crate::support::standin::open_to_agents(dir);
    }
    AgentSpec {
        display: format!("{name} display"),
        model: Some(format!("{name}-model")),
        timeout,
        sandbox_write: command
            .parent()
            .map(Path::to_path_buf)
            .into_iter()
            .collect(),
        ..AgentSpec::new(name, command.to_string_lossy())
    }
}

fn options() -> DispatchOptions {
    DispatchOptions {
        sandbox_helper: Some(env!("CARGO_BIN_EXE_deep-review").into()),
        max_retries: 2,
        retry_backoff: Duration::from_millis(20),
        cancel: CancelToken::new(),
        ..DispatchOptions::default()
    }
}

async fn run(
    repo: &Path,
    head: &str,
    brief: &str,
    agents: &[AgentSpec],
    bundle: &Path,
) -> DispatchOutcome {
    dispatch_with(
        repo,
        head,
        brief,
        agents,
        bundle,
        ProgressMode::Plain,
        &options(),
    )
    .await
}

fn by_name<'a>(outcome: &'a DispatchOutcome, name: &str) -> &'a RawReview {
    outcome
        .reviews
        .iter()
        .find(|r| r.agent == name)
        .unwrap_or_else(|| panic!("no review for {name}"))
}

/// Worktrees git still knows about, besides the main one.
fn extra_worktrees(repo: &Path) -> Vec<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["worktree", "list", "--porcelain"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines()
        .filter(|l| l.starts_with("worktree "))
        .skip(1)
        .map(str::to_string)
        .collect()
}

const CLAUDE_STREAM: &str = r###"{"type":"system","subtype":"init","session_id":"s"}
{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"## Summary\nClaude part one."}],"usage":{"input_tokens":10,"output_tokens":5}}}
{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}},{"type":"tool_use","id":"t2","name":"Grep","input":{}}],"usage":{"input_tokens":20,"output_tokens":5}}}
{"type":"assistant","message":{"id":"m3","content":[{"type":"text","text":"## Findings\nClaude part two."}],"usage":{"input_tokens":30,"output_tokens":5}}}
{"type":"result","subtype":"success","is_error":false,"result":"## Findings\nClaude part two.","duration_ms":1200,"total_cost_usd":0.5,"usage":{"input_tokens":60,"output_tokens":15}}"###;

const GEMINI_STREAM: &str = r###"{"type":"init","session_id":"g","model":"m"}
{"type":"message","role":"assistant","content":"Gemini ","delta":true}
{"type":"tool_use","tool_name":"read_file","tool_id":"1","parameters":{}}
{"type":"message","role":"assistant","content":"review.","delta":true}
{"type":"result","status":"success","stats":{"input_tokens":7,"output_tokens":3,"duration_ms":900,"tool_calls":1}}"###;

/// A script that saves its stdin, working directory and HEAD, then prints `stream`.
fn recording_agent(dir: &Path, name: &str, stream: &str) -> PathBuf {
    let rec = dir.join(format!("{name}.rec"));
    std::fs::create_dir_all(&rec).unwrap();
    crate::support::standin::open_to_agents(&rec);
    let out = dir.join(format!("{name}.out"));
    std::fs::write(&out, format!("{stream}\n")).unwrap();
    script(
        dir,
        &format!("fake-{name}"),
        &format!(
            r#"cat > "{rec}/stdin"
pwd > "{rec}/pwd"
git rev-parse HEAD > "{rec}/head"
printf '%s\n' "$@" > "{rec}/args"
env > "{rec}/env"
cat "{out}""#,
            rec = rec.display(),
            out = out.display()
        ),
    )
}

#[tokio::test]
async fn three_agents_run_in_their_worktrees_with_the_brief_on_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let bundle = tmp.path().join("bundle");
    // Bigger than one command-line argument may be (128 KiB): only stdin can carry it.
    let brief = format!("Review this change.\n{}\nEND\n", "x".repeat(200 * 1024));

    let claude = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let gemini = recording_agent(tmp.path(), "gemini", GEMINI_STREAM);
    // Codex: the final text comes from the stream's last agent_message; -o gets it too.
    let codex = script(
        tmp.path(),
        "fake-codex",
        &format!(
            r#"cat > /dev/null
pwd > "{dir}/codex.pwd"
last=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && last="$a"; prev="$a"; done
printf 'codex from -o' > "$last"
echo '{{"type":"thread.started","thread_id":"t"}}'
echo '{{"type":"item.completed","item":{{"id":"i0","type":"command_execution","command":"git diff","status":"completed"}}}}'
echo '{{"type":"item.completed","item":{{"id":"i1","type":"agent_message","text":"Codex review."}}}}'
echo '{{"type":"turn.completed","usage":{{"input_tokens":100,"cached_input_tokens":40,"output_tokens":9}}}}'"#,
            dir = tmp.path().display()
        ),
    );

    let agents = [
        spec("claude", &claude, Duration::from_secs(60)),
        spec("codex", &codex, Duration::from_secs(60)),
        spec("gemini", &gemini, Duration::from_secs(60)),
    ];
    let outcome = run(&repo, "HEAD", &brief, &agents, &bundle).await;

    assert!(!outcome.cancelled);
    let names: Vec<&str> = outcome.reviews.iter().map(|r| r.agent.as_str()).collect();
    assert_eq!(
        names,
        ["claude", "codex", "gemini"],
        "reviews come in the order given"
    );
    for r in &outcome.reviews {
        assert_eq!(
            r.status,
            RunStatus::Ok,
            "{}: {:?} {}",
            r.agent,
            r.error,
            r.stderr_tail
        );
        assert!(
            r.worktree_changes.is_empty(),
            "{}: {:?}",
            r.agent,
            r.worktree_changes
        );
        assert_eq!(r.exit_code, Some(0));
        assert_eq!(r.retries, 0);
    }

    let c = by_name(&outcome, "claude");
    assert_eq!(
        c.text,
        "## Summary\nClaude part one.\n\n## Findings\nClaude part two."
    );
    assert_eq!(c.total_tool_calls(), 2);
    assert_eq!(c.cost_usd, Some(0.5));
    assert_eq!(c.display_name.as_deref(), Some("claude display"));
    assert_eq!(c.model.as_deref(), Some("claude-model"));
    let x = by_name(&outcome, "codex");
    assert_eq!(x.text, "Codex review.");
    assert_eq!(x.tool_calls.get("command_execution"), Some(&1));
    assert_eq!(
        x.tokens.as_ref().map(|t| (t.input, t.output, t.cached)),
        Some((100, 9, 40))
    );
    let g = by_name(&outcome, "gemini");
    assert_eq!(g.text, "Gemini \n\nreview.");
    assert_eq!(g.tool_calls.get("read_file"), Some(&1));

    // The brief arrived whole on stdin; the arguments are the registry's, without the brief.
    let got = std::fs::read_to_string(tmp.path().join("claude.rec/stdin")).unwrap();
    assert_eq!(got, brief);
    let args = std::fs::read_to_string(tmp.path().join("claude.rec/args")).unwrap();
    assert!(
        args.starts_with("-p\n--output-format\nstream-json\n"),
        "{args}"
    );
    assert!(args.contains("--model\nclaude-model\n"), "{args}");
    assert!(
        !args.contains("Review this change"),
        "the brief is never an argument"
    );

    // Each agent ran in its own worktree of the head commit, not in the user's checkout.
    let mut dirs = Vec::new();
    for name in ["claude", "gemini"] {
        let pwd = std::fs::read_to_string(tmp.path().join(format!("{name}.rec/pwd"))).unwrap();
        let pwd = PathBuf::from(pwd.trim());
        let seen_head =
            std::fs::read_to_string(tmp.path().join(format!("{name}.rec/head"))).unwrap();
        assert_eq!(seen_head.trim(), head);
        assert_ne!(pwd, repo);
        assert!(!pwd.exists(), "worktree {} was removed", pwd.display());
        dirs.push(pwd);
    }
    let codex_pwd = std::fs::read_to_string(tmp.path().join("codex.pwd")).unwrap();
    dirs.push(PathBuf::from(codex_pwd.trim()));
    dirs.sort();
    dirs.dedup();
    if deep_review::dispatch::sandbox::available() {
        // Sandboxed agents cannot write to their checkout: one serves them all.
        assert_eq!(dirs.len(), 1, "one shared checkout: {dirs:?}");
    } else {
        assert_eq!(dirs.len(), 3, "one worktree per agent: {dirs:?}");
    }
    assert!(
        extra_worktrees(&repo).is_empty(),
        "{:?}",
        extra_worktrees(&repo)
    );
    // The user's dirty checkout is as it was.
    assert_eq!(
        std::fs::read_to_string(repo.join("a.rs")).unwrap(),
        "fn a() { dirty() }\n"
    );

    // The run bundle, per agent.
    for name in ["claude", "codex", "gemini"] {
        let d = bundle.join(name);
        for f in [
            "command.txt",
            "stdout.jsonl",
            "review.md",
            "stderr-tail.txt",
            "meta.json",
        ] {
            assert!(d.join(f).is_file(), "{name}/{f} missing");
        }
        let review = std::fs::read_to_string(d.join("review.md")).unwrap();
        assert_eq!(review, by_name(&outcome, name).text);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap();
        assert!(
            meta.get("text").is_none(),
            "meta.json leaves the text to review.md"
        );
        assert_eq!(meta["status"], "ok");
        assert_eq!(meta["head"], head.as_str());
        assert_eq!(meta["attempts"].as_array().map(Vec::len), Some(1));
    }
    let raw = std::fs::read_to_string(bundle.join("claude/stdout.jsonl")).unwrap();
    assert_eq!(
        raw,
        format!("{CLAUDE_STREAM}\n"),
        "stdout is saved byte for byte"
    );
    let cmd = std::fs::read_to_string(bundle.join("codex/command.txt")).unwrap();
    assert!(cmd.contains("exec --json --ephemeral"), "{cmd}");
    assert_eq!(
        std::fs::read_to_string(bundle.join("codex/last-message.txt")).unwrap(),
        "codex from -o"
    );
}

#[tokio::test]
async fn a_hanging_agent_is_timed_out_with_its_whole_process_group() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    // The CLI starts a child of its own (as node CLIs do) and hangs.
    let marker = procs::marker("hang");
    let hang = script(tmp.path(), "hang", &procs::child_with(&marker));
    let ok = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let agents = [
        spec("gemini", &hang, Duration::from_secs(2)),
        spec("claude", &ok, Duration::from_secs(60)),
    ];
    let outcome = run(&repo, &head, "brief", &agents, &tmp.path().join("b")).await;

    let g = by_name(&outcome, "gemini");
    assert_eq!(g.status, RunStatus::TimedOut);
    assert!(
        g.error
            .as_deref()
            .unwrap_or("")
            .contains("timed out after 2"),
        "{:?}",
        g.error
    );
    assert_eq!(g.retries, 0, "a timeout is not retried");
    assert!(
        procs::wait_gone(&marker, Duration::from_secs(5)),
        "the agent's child outlived the timeout: {:?}",
        procs::with_marker(&marker)
    );
    // The other agent's result stands.
    assert_eq!(by_name(&outcome, "claude").status, RunStatus::Ok);
    assert!(extra_worktrees(&repo).is_empty());
    let meta = std::fs::read_to_string(tmp.path().join("b/gemini/meta.json")).unwrap();
    assert!(meta.contains("\"timed_out\""), "{meta}");
}

#[tokio::test]
async fn a_rate_limited_agent_is_retried_until_it_succeeds() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let count = tmp.path().join("count");
    let out = tmp.path().join("claude.out");
    std::fs::write(&out, format!("{CLAUDE_STREAM}\n")).unwrap();
    let flaky = script(
        tmp.path(),
        "flaky",
        &format!(
            r#"cat > /dev/null
n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{count}'
if [ $n -le 2 ]; then echo '{{"type":"system","subtype":"init"}}'; echo "API Error: HTTP 429 Too Many Requests (attempt $n)" >&2; exit 1; fi
cat '{out}'"#,
            count = count.display(),
            out = out.display()
        ),
    );
    let bundle = tmp.path().join("b");
    let outcome = run(
        &repo,
        &head,
        "brief",
        &[spec("claude", &flaky, Duration::from_secs(60))],
        &bundle,
    )
    .await;

    let c = by_name(&outcome, "claude");
    assert_eq!(c.status, RunStatus::Ok, "{:?}", c.error);
    assert_eq!(c.retries, 2);
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "3");
    assert!(c.text.contains("Claude part two."));
    // Earlier attempts' output is kept beside the final one.
    assert!(bundle.join("claude/stdout.attempt-1.jsonl").is_file());
    assert!(bundle.join("claude/stdout.attempt-2.jsonl").is_file());
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("claude/meta.json")).unwrap())
            .unwrap();
    let attempts = meta["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 3);
    assert_eq!(attempts[0]["retried_because"], "a rate limit");
    assert_eq!(attempts[2]["outcome"], "ok");
}

#[tokio::test]
async fn retries_stop_after_two_and_other_failures_are_not_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let counter = |name: &str, msg: &str| {
        let count = tmp.path().join(format!("{name}.count"));
        let path = script(
            tmp.path(),
            name,
            &format!(
                "n=$(cat '{c}' 2>/dev/null || echo 0); echo $((n+1)) > '{c}'\necho '{msg}' >&2\nexit 1",
                c = count.display()
            ),
        );
        (path, count)
    };
    let (always_busy, busy_count) = counter("busy", "Error: 503 Service Unavailable");
    let (bad_login, login_count) = counter("login", "Invalid API key. Please run /login");
    let agents = [
        spec("codex", &always_busy, Duration::from_secs(60)),
        spec("claude", &bad_login, Duration::from_secs(60)),
    ];
    let outcome = run(&repo, &head, "brief", &agents, &tmp.path().join("b")).await;

    let x = by_name(&outcome, "codex");
    assert_eq!(x.status, RunStatus::Failed);
    assert_eq!(x.retries, 2);
    assert_eq!(std::fs::read_to_string(&busy_count).unwrap().trim(), "3");
    assert_eq!(
        x.error.as_deref(),
        Some("exited with code 1: Error: 503 Service Unavailable")
    );

    let c = by_name(&outcome, "claude");
    assert_eq!(c.status, RunStatus::Failed);
    assert_eq!(c.retries, 0);
    assert_eq!(std::fs::read_to_string(&login_count).unwrap().trim(), "1");
    assert!(
        c.error.as_deref().unwrap().contains("Invalid API key"),
        "{:?}",
        c.error
    );
    assert!(c.stderr_tail.contains("Invalid API key"));
}

#[tokio::test]
async fn one_failing_agent_never_sinks_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let ok = recording_agent(tmp.path(), "gemini", GEMINI_STREAM);
    let crash = script(tmp.path(), "crash", "echo 'something broke' >&2\nexit 3");
    let is_error = script(
        tmp.path(),
        "is-error",
        r#"echo '{"type":"result","subtype":"success","is_error":true,"result":"Invalid model name"}'
exit 0"#,
    );
    let silent = script(tmp.path(), "silent", "exit 0");
    let agents = [
        spec(
            "claude",
            Path::new("/nonexistent/claude"),
            Duration::from_secs(60),
        ),
        spec("codex", &crash, Duration::from_secs(60)),
        spec("gemini", &ok, Duration::from_secs(60)),
        AgentSpec {
            name: "claude-b".into(),
            ..spec("claude", &is_error, Duration::from_secs(60))
        },
        spec("other", &silent, Duration::from_secs(60)),
    ];
    let outcome = run(&repo, &head, "brief", &agents, &tmp.path().join("b")).await;

    let missing = by_name(&outcome, "claude");
    assert_eq!(missing.status, RunStatus::Failed);
    let err = missing.error.as_deref().unwrap();
    assert!(
        err.contains("not found") && err.contains("@anthropic-ai/claude-code"),
        "{err}"
    );
    let crashed = by_name(&outcome, "codex");
    assert_eq!(crashed.status, RunStatus::Failed);
    assert_eq!(crashed.exit_code, Some(3));
    assert_eq!(
        crashed.error.as_deref(),
        Some("exited with code 3: something broke")
    );
    // `claude-b` is of kind Claude (the spec says so, whatever its name): its stream is read as
    // Claude's, so `is_error` fails it with the stream's own reason.
    let claude_b = by_name(&outcome, "claude-b");
    assert_eq!(claude_b.status, RunStatus::Failed);
    assert_eq!(claude_b.error.as_deref(), Some("Invalid model name"));
    let silent = by_name(&outcome, "other");
    assert_eq!(silent.status, RunStatus::Failed);
    assert_eq!(
        silent.error.as_deref(),
        Some("it exited normally but wrote no review text")
    );
    assert_eq!(by_name(&outcome, "gemini").status, RunStatus::Ok);
    assert!(extra_worktrees(&repo).is_empty());
}

#[tokio::test]
async fn claude_is_error_fails_the_run_even_with_exit_zero() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let is_error = script(
        tmp.path(),
        "is-error",
        r#"echo '{"type":"result","subtype":"success","is_error":true,"result":"API Error: Connection error."}'"#,
    );
    let outcome = run(
        &repo,
        &head,
        "b",
        &[spec("claude", &is_error, Duration::from_secs(30))],
        &tmp.path().join("b"),
    )
    .await;
    let c = by_name(&outcome, "claude");
    assert_eq!(c.status, RunStatus::Failed);
    assert_eq!(c.error.as_deref(), Some("API Error: Connection error."));
    // "Connection error" is a network error: it was retried.
    assert_eq!(c.retries, 2);
}

#[tokio::test]
async fn without_the_sandbox_changes_an_agent_makes_to_its_worktree_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let out = tmp.path().join("claude.out");
    std::fs::write(&out, format!("{CLAUDE_STREAM}\n")).unwrap();
    let writer = script(
        tmp.path(),
        "writer",
        &format!(
            "echo pwned > hacked.txt\necho change >> a.rs\ncat '{}'",
            out.display()
        ),
    );
    let mover = script(
        tmp.path(),
        "mover",
        &format!("git checkout -q HEAD~1\ncat '{}'", out.display()),
    );
    let agents = [
        spec("claude", &writer, Duration::from_secs(30)),
        AgentSpec {
            name: "codex".into(),
            ..spec("claude", &mover, Duration::from_secs(30))
        },
    ];
    // Where the kernel has no sandbox, each agent gets its own worktree, checked afterwards.
    let outcome = dispatch_with(
        &repo,
        &head,
        "b",
        &agents,
        &tmp.path().join("b"),
        ProgressMode::Plain,
        &DispatchOptions {
            sandbox: deep_review::dispatch::sandbox::Mode::Off,
            ..options()
        },
    )
    .await;

    let c = by_name(&outcome, "claude");
    assert!(
        c.worktree_changes.contains(&"?? hacked.txt".to_string()),
        "{:?}",
        c.worktree_changes
    );
    assert!(
        c.worktree_changes.contains(&" M a.rs".to_string()),
        "{:?}",
        c.worktree_changes
    );
    let x = by_name(&outcome, "codex");
    assert!(
        x.worktree_changes
            .iter()
            .any(|l| l.starts_with(&format!("HEAD moved from {head}"))),
        "{:?}",
        x.worktree_changes
    );
    // Recorded in the bundle too, and the user's checkout is untouched.
    let meta = std::fs::read_to_string(tmp.path().join("b/claude/meta.json")).unwrap();
    assert!(meta.contains("hacked.txt"), "{meta}");
    assert!(!repo.join("hacked.txt").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join("a.rs")).unwrap(),
        "fn a() { dirty() }\n"
    );
    assert!(extra_worktrees(&repo).is_empty());
}

#[tokio::test]
async fn cancel_kills_every_agent_and_removes_the_worktrees() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let mut agents = Vec::new();
    let markers: Vec<String> = ["claude", "codex", "gemini"]
        .iter()
        .map(|n| procs::marker(n))
        .collect();
    for (name, marker) in ["claude", "codex", "gemini"].iter().zip(&markers) {
        let body = format!(
            "pwd > '{d}/{name}.pwd'\necho '{{\"type\":\"init\"}}'\n{child}",
            d = tmp.path().display(),
            child = procs::child_with(marker)
        );
        let path = script(tmp.path(), &format!("slow-{name}"), &body);
        agents.push(spec(name, &path, Duration::from_secs(600)));
    }
    let options = options();
    let cancel = options.cancel.clone();
    let bundle = tmp.path().join("b");
    let task = {
        let (repo, head, bundle, agents) =
            (repo.clone(), head.clone(), bundle.clone(), agents.clone());
        tokio::spawn(async move {
            dispatch_with(
                &repo,
                &head,
                "brief",
                &agents,
                &bundle,
                ProgressMode::Plain,
                &options,
            )
            .await
        })
    };
    // Wait until every agent runs and has started its child (off the runtime's one thread,
    // which the dispatch needs).
    for marker in markers.clone() {
        let started = tokio::task::spawn_blocking(move || {
            procs::wait_present(&marker, Duration::from_secs(20))
        });
        assert!(started.await.unwrap(), "an agent never started its child");
    }
    cancel.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(60), task)
        .await
        .expect("dispatch returns after cancel")
        .unwrap();

    assert!(outcome.cancelled);
    for r in &outcome.reviews {
        assert_eq!(r.status, RunStatus::Cancelled, "{}: {:?}", r.agent, r.error);
    }
    for (name, marker) in ["claude", "codex", "gemini"].iter().zip(&markers) {
        assert!(
            procs::wait_gone(marker, Duration::from_secs(5)),
            "{name}'s child survived the cancel"
        );
        let pwd = std::fs::read_to_string(tmp.path().join(format!("{name}.pwd"))).unwrap();
        assert!(!Path::new(pwd.trim()).exists(), "{name}'s worktree is left");
        // What was saved stays saved.
        let raw = std::fs::read_to_string(bundle.join(name).join("stdout.jsonl")).unwrap();
        assert_eq!(raw, "{\"type\":\"init\"}\n");
        assert!(bundle.join(name).join("meta.json").is_file());
    }
    assert!(extra_worktrees(&repo).is_empty());
}

#[tokio::test]
async fn a_head_that_is_no_commit_fails_every_agent_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = repo(tmp.path());
    let ok = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let agents = [
        spec("claude", &ok, Duration::from_secs(30)),
        spec("codex", &ok, Duration::from_secs(30)),
    ];
    let outcome = run(&repo, "no-such-branch", "b", &agents, &tmp.path().join("b")).await;
    assert_eq!(outcome.reviews.len(), 2);
    for r in &outcome.reviews {
        assert_eq!(r.status, RunStatus::Failed);
        let err = r.error.as_deref().unwrap();
        assert!(err.contains("`no-such-branch` is not a commit"), "{err}");
    }
    assert!(!tmp.path().join("claude.rec/stdin").exists(), "nothing ran");
}

#[tokio::test]
async fn an_agent_listed_twice_fails_the_second_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let ok = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let agents = [
        spec("claude", &ok, Duration::from_secs(30)),
        spec("claude", &ok, Duration::from_secs(30)),
    ];
    let outcome = run(&repo, &head, "b", &agents, &tmp.path().join("b")).await;
    assert_eq!(outcome.reviews[0].status, RunStatus::Ok);
    assert_eq!(outcome.reviews[1].status, RunStatus::Failed);
    assert!(
        outcome.reviews[1]
            .error
            .as_deref()
            .unwrap()
            .contains("listed twice")
    );
}

#[tokio::test]
async fn the_users_git_hooks_do_not_run_in_agent_worktrees() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let marker = tmp.path().join("hook-ran");
    // A post-checkout hook that writes into the new worktree and fails.
    script(
        &repo.join(".git/hooks"),
        "post-checkout",
        &format!("touch hooked.txt '{}'\nexit 1", marker.display()),
    );
    let ok = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let outcome = run(
        &repo,
        &head,
        "b",
        &[spec("claude", &ok, Duration::from_secs(30))],
        &tmp.path().join("b"),
    )
    .await;
    let c = by_name(&outcome, "claude");
    assert_eq!(c.status, RunStatus::Ok, "{:?}", c.error);
    assert!(c.worktree_changes.is_empty(), "{:?}", c.worktree_changes);
    assert!(!marker.exists(), "the hook ran");
}

/// Many agents at once each get a worktree of their own, and every one is removed. (The race
/// between concurrent `git worktree add`s that the worktree lock prevents is too rare here
/// to be caught reliably; this guards the many-at-once path as a whole.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_agents_at_once_each_get_a_worktree() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let agent = script(tmp.path(), "plain", "cat > /dev/null\necho review");
    let agents: Vec<AgentSpec> = (0..10)
        .map(|i| spec(&format!("agent{i}"), &agent, Duration::from_secs(60)))
        .collect();
    for round in 0..3 {
        let bundle = tmp.path().join(format!("b{round}"));
        let outcome = run(&repo, &head, "b", &agents, &bundle).await;
        for r in &outcome.reviews {
            assert_eq!(
                r.status,
                RunStatus::Ok,
                "round {round} {}: {:?}",
                r.agent,
                r.error
            );
        }
        assert!(extra_worktrees(&repo).is_empty());
    }
}

/// The live display (indicatif) runs its whole course with retries, a failure and a success;
/// without a terminal it draws nothing, and the results are the same as in plain mode.
#[tokio::test]
async fn live_progress_runs_its_course() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo(tmp.path());
    let ok = recording_agent(tmp.path(), "claude", CLAUDE_STREAM);
    let busy = script(tmp.path(), "busy", "echo 'HTTP 429' >&2\nexit 1");
    let agents = [
        spec("claude", &ok, Duration::from_secs(30)),
        spec("codex", &busy, Duration::from_secs(30)),
    ];
    let outcome = dispatch_with(
        &repo,
        &head,
        "b",
        &agents,
        &tmp.path().join("b"),
        ProgressMode::Live,
        &options(),
    )
    .await;
    assert_eq!(by_name(&outcome, "claude").status, RunStatus::Ok);
    assert_eq!(by_name(&outcome, "codex").retries, 2);
}
