//! Model APIs as reviewers (`kind = "anthropic" | "openai" | "gemini" | "openai-compatible"`),
//! mixed with a CLI agent, through the built binary against the fake model server over real
//! HTTP on 127.0.0.1: the packed prompt, streaming, usage and cost in the retro and the JSON,
//! retries on 429 with `retry-after`, a malformed stream, `--budget-usd`, and the synthesizer
//! whose proposals code checks.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};

use crate::support::fake_model::{Api, FakeModel, Script};
use crate::support::repo::Repo;
use crate::support::standin::repo;

const ANTHROPIC_KEY: &str = "sk-ant-test-0123456789abcdef";
const GATEWAY_KEY: &str = "gw-test-key-0123456789abcdef";

/// A raw review with one important finding `title` at `at`, quoting `quote`.
fn review(title: &str, at: &str, quote: &str, why: &str) -> String {
    format!(
        "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login function.\n\n\
         ## Findings\n\n### Critical Issues\n\nNone.\n\n### Important Issues\n\n\
         1. **{title}** — `{at}` (important, regression)\n\n\
         ```rust\n{quote}\n```\n\n{why}\n\nFix: do it properly.\n\n### Suggestions\n\nNone.\n\n\
         ## Coverage Summary\n\n| File | Status |\n|------|--------|\n\
         | `src/auth.rs` | Reviewed |\n| `src/lib.rs` | Reviewed |\n"
    )
}

fn login_review() -> String {
    review(
        "Login accepts any password",
        "src/auth.rs:1",
        "pub fn login(_pw: &str) -> bool { true }",
        "`login` returns true for every password, so anyone can log in.",
    )
}

/// The fake server, stand-in CLI agents and the user's config naming them all.
struct Setup {
    server: FakeModel,
    tools: tempfile::TempDir,
    xdg: tempfile::TempDir,
    config: std::cell::RefCell<String>,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            server: FakeModel::start(),
            tools: tempfile::tempdir().unwrap(),
            xdg: tempfile::tempdir().unwrap(),
            config: Default::default(),
        }
    }

    fn url(&self) -> String {
        self.server.url()
    }

    /// Adds `text` to the user's config (trusted, as a user's own file is).
    fn config(&self, text: &str) {
        let mut c = self.config.borrow_mut();
        c.push_str(text);
        c.push('\n');
        let path = self.xdg.path().join("deep-review/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c.as_str()).unwrap();
    }

    /// A CLI agent (a stand-in script) that prints `review`.
    fn cli(&self, name: &str, review: &str) {
        let file = self.tools.path().join(format!("{name}.md"));
        std::fs::write(&file, review).unwrap();
        let script = self.tools.path().join(format!("{name}.sh"));
        std::fs::write(
            &script,
            format!("#!/bin/sh\ncat >/dev/null\ncat '{}'\n", file.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.config(&format!(
            "[agents.{name}]\ncommand = \"{}\"\n",
            script.display()
        ));
    }

    /// `deep-review ARGS` in `repo` with only the keys the test gives and no proxy.
    fn cmd(&self, repo: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::cargo_bin("deep-review").unwrap();
        cmd.current_dir(repo)
            .args(args)
            .env("XDG_CONFIG_HOME", self.xdg.path())
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            .env("MY_GATEWAY_KEY", GATEWAY_KEY)
            .env_remove("CI")
            .env_remove("OPENAI_API_KEY")
            .env_remove("GEMINI_API_KEY");
        for proxy in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
        ] {
            cmd.env_remove(proxy);
        }
        cmd
    }
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Ran {
    let out = cmd
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn written(ran: &Ran, ext: &str) -> PathBuf {
    ran.stdout
        .lines()
        .find(|l| l.ends_with(ext))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no {ext} report:\n{}\n{}", ran.stdout, ran.stderr))
}

fn json_report(ran: &Ran) -> Value {
    serde_json::from_str(&std::fs::read_to_string(written(ran, ".json")).unwrap()).unwrap()
}

fn markdown(ran: &Ran) -> String {
    std::fs::read_to_string(written(ran, ".md")).unwrap()
}

fn agent<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no agent {name} in {report:#}"))
}

/// Every file of a run bundle, as text.
fn bundle_text(repo: &Path, report: &Value) -> String {
    let dir = repo
        .join(".git/deep-review/runs")
        .join(report["meta"]["id"].as_str().unwrap());
    let mut all = String::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                all.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    all
}

#[test]
fn a_cli_agent_and_two_model_apis_review_together_with_tokens_and_cost() {
    let repo = repo();
    let s = Setup::new();
    s.cli("standin", &login_review());
    s.config(&format!(
        "[agents.sonnet]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n\
         max_output_tokens = 2000\n\n\
         [agents.local]\nkind = \"openai-compatible\"\nbase_url = \"{}/v1\"\nmodel = \"local-coder\"\n\
         context_tokens = 32768\ntemperature = 0.0\napi_key_env = \"MY_GATEWAY_KEY\"\n\n\
         [prices.\"local-coder\"]\ninput_per_mtok = 0.5\noutput_per_mtok = 1.5\n",
        s.url(),
        s.url()
    ));
    s.server
        .script(Api::Anthropic, Script::review(login_review()));
    // llama.cpp-like: a stream with no usage in it.
    s.server
        .script(Api::Chat, Script::review(login_review()).no_usage());

    let ran = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "standin,sonnet,local",
            "--quiet",
            "main..login",
        ],
    ));
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stderr, s.server.summary());
    let report = json_report(&ran);

    // All three in the report, the login defect found by all three.
    let names: Vec<&str> = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["standin", "sonnet", "local"]);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["agents"] == json!(["standin", "sonnet", "local"])),
        "{report:#}"
    );

    // Tokens and cost: the Messages stream reports usage; the chat stream has none, so it is
    // estimated and marked; the CLI stand-in reports none either.
    let sonnet = agent(&report, "sonnet");
    assert_eq!(sonnet["status"], "ok");
    assert!(
        sonnet["tokens"]["input"].as_u64().unwrap() > 100,
        "{sonnet:#}"
    );
    assert!(sonnet["tokens"].get("estimated").is_none(), "{sonnet:#}");
    let expected = (sonnet["tokens"]["input"].as_f64().unwrap() * 3.0
        + sonnet["tokens"]["output"].as_f64().unwrap() * 15.0)
        / 1e6;
    assert!((sonnet["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-9);
    assert!(
        sonnet["cost_basis"]
            .as_str()
            .unwrap()
            .contains("list price of claude-sonnet-4-5"),
        "{sonnet:#}"
    );
    let local = agent(&report, "local");
    assert_eq!(local["tokens"]["estimated"], true, "{local:#}");
    assert!(local["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(
        local["cost_basis"]
            .as_str()
            .unwrap()
            .contains("your price for local-coder")
    );
    let standin = agent(&report, "standin");
    assert_eq!(standin["tokens"]["estimated"], true);
    assert!(standin.get("cost_usd").is_none(), "no model, no price");

    // The retro shows them; the terminal summary too.
    let md = markdown(&ran);
    let retro = md.split("## Agent Performance Retro").nth(1).unwrap();
    assert!(retro.contains("| Tokens (in/out) |"), "{retro}");
    assert!(retro.contains("**Tokens:**"), "{retro}");
    assert!(retro.contains("(estimated: none were reported)"), "{retro}");
    assert!(ran.stderr.contains("cost: Sonnet:"), "{}", ran.stderr);
    assert!(ran.stderr.contains("in all"), "{}", ran.stderr);

    // The requests: each to its endpoint, with its key in its header, streamed.
    let messages = s.server.model_requests(Api::Anthropic);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(messages[0].json()["stream"], true);
    let chat = s.server.model_requests(Api::Chat);
    assert_eq!(chat.len(), 1);
    assert_eq!(chat[0].path, "/v1/chat/completions");
    let bearer = format!("Bearer {GATEWAY_KEY}");
    assert_eq!(chat[0].header("authorization"), Some(bearer.as_str()));
    let body = chat[0].json();
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["response_format"]["type"], "json_schema");
    // The packed prompt: the change's code is in it, exactly as saved in the bundle.
    let prompt = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("pub fn login(_pw: &str) -> bool { true }"),
        "{prompt}"
    );
    let dir = repo
        .path()
        .join(".git/deep-review/runs")
        .join(report["meta"]["id"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("local/prompt.md")).unwrap(),
        prompt
    );
    // Raw streams in the bundle; no key anywhere in it.
    assert!(
        std::fs::read_to_string(dir.join("local/stdout.jsonl"))
            .unwrap()
            .contains("data: [DONE]")
    );
    let command = std::fs::read_to_string(dir.join("sonnet/command.txt")).unwrap();
    assert!(command.contains("/v1/messages") && command.contains("$ANTHROPIC_API_KEY"));
    let all = bundle_text(repo.path(), &report);
    assert!(!all.contains(ANTHROPIC_KEY) && !all.contains(GATEWAY_KEY));
}

#[test]
fn responses_and_gemini_ask_for_the_review_schema_and_read_what_comes_back() {
    let repo = repo();
    let s = Setup::new();
    s.config(&format!(
        "[agents.gpt]\nkind = \"openai\"\nbase_url = \"{0}/v1\"\nmodel = \"gpt-5\"\neffort = \"high\"\n\
         api_key_env = \"MY_GATEWAY_KEY\"\n\n\
         [agents.gem]\nkind = \"gemini\"\nbase_url = \"{0}/v1beta\"\nmodel = \"gemini-2.5-pro\"\n\
         api_key_env = \"MY_GATEWAY_KEY\"\n",
        s.url()
    ));
    // Responses ignores the schema and answers in Markdown; Gemini answers JSON of it.
    s.server.script(Api::OpenAi, Script::review(login_review()));
    let json_review = json!({
        "verdict": "Merge with fixes",
        "summary": "Adds a login.",
        "findings": [{
            "id": "I1", "title": "Login accepts every password", "severity": "important",
            "category": "regression",
            "locations": [{"path": "src/auth.rs", "start": 1}],
            "code": {"code": "pub fn login(_pw: &str) -> bool { true }", "language": "rust"},
            "explanation": "`login` returns true whatever the password."
        }]
    });
    s.server
        .script(Api::Gemini, Script::review(json_review.to_string()));

    let ran = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "gpt,gem", "--quiet", "main..login"],
    ));
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stderr, s.server.summary());
    let report = json_report(&ran);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["agents"] == json!(["gpt", "gem"])),
        "both read, and both name the same defect: {report:#}"
    );
    let responses = &s.server.model_requests(Api::OpenAi)[0];
    assert_eq!(responses.path, "/v1/responses");
    let body = responses.json();
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["reasoning"]["effort"], "high");
    assert!(body["text"]["format"]["schema"]["properties"]["findings"].is_object());
    let gemini = &s.server.model_requests(Api::Gemini)[0];
    assert_eq!(
        gemini.path,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(gemini.header("x-goog-api-key"), Some(GATEWAY_KEY));
    assert!(gemini.json()["generationConfig"]["responseJsonSchema"].is_object());
    for name in ["gpt", "gem"] {
        let a = agent(&report, name);
        assert!(a["cost_usd"].as_f64().unwrap() > 0.0, "{a:#}");
        assert!(
            a["tokens"].get("estimated").is_none(),
            "usage was reported: {a:#}"
        );
    }
}

#[test]
fn a_rate_limit_is_retried_after_what_the_server_asks_and_a_malformed_stream_fails_alone() {
    let repo = repo();
    let s = Setup::new();
    s.config(&format!(
        "[agents.local]\nkind = \"openai-compatible\"\nbase_url = \"{0}/v1\"\nmodel = \"m\"\n\n\
         [agents.broken]\nkind = \"anthropic\"\nbase_url = \"{0}\"\nmodel = \"claude-haiku-4-5\"\n",
        s.url()
    ));
    s.server.script(
        Api::Chat,
        Script::review(login_review()).fail_429(1).retry_after("1"),
    );
    s.server
        .script(Api::Anthropic, Script::review(login_review()).malformed());
    let ran = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "local,broken", "--quiet", "main..login"],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(agent(&report, "local")["status"], "ok");
    assert_eq!(s.server.model_requests(Api::Chat).len(), 2);
    let events = std::fs::read_to_string(
        repo.path()
            .join(".git/deep-review/runs")
            .join(report["meta"]["id"].as_str().unwrap())
            .join("events.jsonl"),
    )
    .unwrap();
    let retry: Value = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "retry")
        .expect("a retry event");
    assert_eq!(retry["agent"], "local");
    assert_eq!(retry["wait_s"], 1.0, "the server's retry-after: {retry}");
    assert!(retry["reason"].as_str().unwrap().contains("rate limit"));

    let broken = agent(&report, "broken");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("malformed stream"),
        "{broken:#}"
    );
    // Not retried: a malformed stream is not a transient failure.
    assert_eq!(s.server.model_requests(Api::Anthropic).len(), 1);
}

#[test]
fn a_missing_key_fails_that_reviewer_with_the_variable_to_set() {
    let repo = repo();
    let s = Setup::new();
    s.cli("standin", &login_review());
    s.config(&format!(
        "[agents.gem]\nkind = \"gemini\"\nbase_url = \"{}/v1beta\"\nmodel = \"gemini-2.5-flash\"\n",
        s.url()
    ));
    let ran = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "standin,gem", "--quiet", "main..login"],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let gem = agent(&json_report(&ran), "gem").clone();
    assert_eq!(gem["status"], "failed");
    assert!(
        gem["error"]
            .as_str()
            .unwrap()
            .contains("`GEMINI_API_KEY` is not set"),
        "{gem:#}"
    );
    assert!(s.server.model_requests(Api::Gemini).is_empty());
}

/// A change of 40 files of 120 lines each: far more than a 3,000-token context holds.
fn big_change() -> Repo {
    let repo = Repo::new();
    repo.write("README.md", "base\n");
    repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "big"]);
    for i in 0..40 {
        let body: String = (0..120)
            .map(|l| format!("    let value_{l} = compute_{i}({l}) + {l};\n"))
            .collect();
        repo.write(
            &format!("src/mod_{i:02}.rs"),
            format!("pub fn f_{i}() {{\n{body}}}\n"),
        );
    }
    repo.commit("Add forty modules");
    repo
}

#[test]
fn a_change_over_the_context_budget_is_packed_and_the_prompt_lists_what_it_left_out() {
    let repo = big_change();
    let s = Setup::new();
    s.config(&format!(
        "[agents.small]\nkind = \"openai-compatible\"\nbase_url = \"{}/v1\"\nmodel = \"small\"\n\
         context_tokens = 3000\nmax_output_tokens = 500\n",
        s.url()
    ));
    s.server.script(Api::Chat, Script::review(login_review()));

    let dry = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "small", "--dry-run", "main..big"],
    ));
    assert_eq!(dry.code, Some(0), "{}", dry.stderr);
    assert!(
        dry.stdout.contains("packed prompt: ") && dry.stdout.contains(" of 2500 tokens"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("left out:"), "{}", dry.stdout);
    assert!(
        dry.stderr
            .contains("does not fit a context of 2,500 tokens"),
        "{}",
        dry.stderr
    );

    let ran = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "small", "--quiet", "main..big"],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let sent = &s.server.model_requests(Api::Chat)[0];
    let prompt = sent.json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    // Within the budget (at four bytes a token), with some code, and naming what is not there.
    assert!(prompt.len() / 4 <= 2500, "{} bytes", prompt.len());
    assert!(prompt.contains("compute_"), "some code is shown");
    let left_out = prompt
        .split("\n# Left out\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no Left out section:\n{prompt}"));
    assert!(left_out.contains("src/mod_"), "{left_out}");
    let shown_files = (0..40)
        .filter(|i| prompt.contains(&format!("## `src/mod_{i:02}.rs`")))
        .count();
    assert!(shown_files < 40, "not everything fits");
    assert_eq!(sent.json()["max_tokens"], 500);
}

#[test]
fn the_budget_keeps_work_from_starting_once_its_estimate_would_pass_the_limit() {
    let repo = repo();
    let s = Setup::new();
    s.config(&format!(
        "[agents.cheap]\nkind = \"openai-compatible\"\nbase_url = \"{0}/v1\"\nmodel = \"cheap-model\"\n\
         max_output_tokens = 100\n\n\
         [agents.dear]\nkind = \"anthropic\"\nbase_url = \"{0}\"\nmodel = \"dear-model\"\n\
         max_output_tokens = 1000\n\n\
         [prices.\"cheap-model\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n\n\
         [prices.\"dear-model\"]\ninput_per_mtok = 1000.0\noutput_per_mtok = 1000.0\n",
        s.url()
    ));
    s.server.script(Api::Chat, Script::review(login_review()));
    s.server
        .script(Api::Anthropic, Script::review(login_review()));

    // The dry run says what each would cost.
    let dry = run(&mut s.cmd(
        repo.path(),
        &["run", "--agents", "cheap,dear", "--dry-run", "main..login"],
    ));
    assert!(dry.stdout.contains("estimated cost: $"), "{}", dry.stdout);
    assert!(
        dry.stdout.contains("your price for dear-model"),
        "{}",
        dry.stdout
    );

    let ran = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "cheap,dear",
            "--budget-usd",
            "0.05",
            "--quiet",
            "main..login",
        ],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(agent(&report, "cheap")["status"], "ok");
    let dear = agent(&report, "dear");
    assert_eq!(dear["status"], "failed");
    assert!(
        dear["error"]
            .as_str()
            .unwrap()
            .starts_with("not started by the budget"),
        "{dear:#}"
    );
    assert!(
        s.server.model_requests(Api::Anthropic).is_empty(),
        "never sent"
    );
    assert_eq!(report["budget"]["limit_usd"], 0.05);
    assert_eq!(report["budget"]["stopped"], json!(["dear"]));
    assert!(report["budget"]["spent_usd"].as_f64().unwrap() > 0.0);
    let md = markdown(&ran);
    assert!(
        md.contains("the budget stopped Dear: this report holds what was done before the limit"),
        "{md}"
    );
}

#[test]
fn the_budget_stops_a_running_model_api_when_the_limit_is_spent() {
    let repo = repo();
    let s = Setup::new();
    s.config(&format!(
        "[agents.greedy]\nkind = \"openai-compatible\"\nbase_url = \"{0}/v1\"\nmodel = \"greedy\"\n\
         max_output_tokens = 100\n\n\
         [agents.slow]\nkind = \"anthropic\"\nbase_url = \"{0}\"\nmodel = \"slow\"\n\
         max_output_tokens = 100\n\n\
         [prices.greedy]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n\n\
         [prices.slow]\ninput_per_mtok = 1.0\noutput_per_mtok = 1.0\n",
        s.url()
    ));
    // `greedy` reports 5 million input tokens ($5); `slow` answers after 60 s.
    s.server.script(
        Api::Chat,
        Script::review(login_review()).usage_input(5_000_000),
    );
    s.server.script(
        Api::Anthropic,
        Script::review(login_review()).delay(std::time::Duration::from_secs(60)),
    );
    let started = std::time::Instant::now();
    let ran = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "greedy,slow",
            "--budget-usd",
            "1",
            "--quiet",
            "main..login",
        ],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(50),
        "the slow reviewer was stopped, not waited for"
    );
    let report = json_report(&ran);
    assert_eq!(agent(&report, "greedy")["status"], "ok");
    let slow = agent(&report, "slow");
    assert!(
        slow["error"]
            .as_str()
            .unwrap()
            .starts_with("stopped by the budget"),
        "{slow:#}"
    );
    assert_eq!(report["budget"]["stopped"], json!(["slow"]));
    assert!(report["budget"]["spent_usd"].as_f64().unwrap() >= 5.0);
    assert!(markdown(&ran).contains("the budget stopped Slow"));
}

/// Two reviewers whose findings consolidation keeps apart (different files, different words).
fn two_apart(s: &Setup) {
    s.cli("alpha", &login_review());
    s.cli(
        "beta",
        &review(
            "Module wiring exposes internals",
            "src/lib.rs:2",
            "pub mod auth;",
            "Making `auth` public exposes the session internals to every crate.",
        ),
    );
}

fn synth_config(s: &Setup) {
    s.config(&format!(
        "[agents.synth]\nkind = \"openai-compatible\"\nbase_url = \"{}/v1\"\nmodel = \"synth-model\"\n\
         enabled = false\n",
        s.url()
    ));
}

#[test]
fn a_synthesis_that_drops_without_a_reason_or_cites_an_unknown_id_is_rejected_twice() {
    let repo = repo();
    let s = Setup::new();
    two_apart(&s);
    synth_config(&s);
    let bad = json!({
        "executive_summary": "SYNTHESIZED: nothing to worry about.",
        "verdict_rationale": "All fine.",
        "decisions": [
            {"action": "drop", "sources": ["alpha:I1"]},
            {"action": "merge", "sources": ["beta:I1", "gamma:I7"], "reason": "same"}
        ],
        "agents": {"alpha": "Good."}
    })
    .to_string();
    s.server
        .script_model("synth-model", Script::review(bad.clone()).then(bad));

    // Each in a store of its own, so both are a first round and their summaries compare.
    let plain_store = tempfile::tempdir().unwrap();
    let plain = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "alpha,beta",
            "--quiet",
            "--store",
            plain_store.path().to_str().unwrap(),
            "main..login",
        ],
    ));
    let deterministic = json_report(&plain);
    let ran = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "alpha,beta",
            "--synthesize",
            "synth",
            "--quiet",
            "main..login",
        ],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    // Sent back once with the reasons, then given up.
    let asked = s.server.requests_for("synth-model");
    assert_eq!(asked.len(), 2, "{}", s.server.summary());
    let second = asked[1].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        second.contains("Your previous reply was rejected"),
        "{second}"
    );
    assert!(
        second.contains("decision 1 (drop) gives no reason"),
        "{second}"
    );

    let synthesis = &report["synthesis"];
    assert_eq!(synthesis["agent"], "synth");
    assert_eq!(synthesis["status"], "rejected");
    let reason = synthesis["reason"].as_str().unwrap();
    assert!(reason.contains("gives no reason"), "{reason}");
    assert!(
        reason.contains("`gamma:I7`, which is not a source id of this report"),
        "{reason}"
    );
    // The deterministic report stands.
    assert_eq!(report["summary"], deterministic["summary"]);
    assert_eq!(report["findings"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["sources"].clone())
            .collect::<Vec<_>>(),
        deterministic["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["sources"].clone())
            .collect::<Vec<_>>()
    );
    assert!(markdown(&ran).contains("The synthesis by Synth was rejected"));
    // The run without `--synthesize` says so too.
    assert_eq!(deterministic["synthesis"]["status"], "off");
}

#[test]
fn a_valid_synthesis_changes_the_summary_and_merges_with_attribution_from_the_ids() {
    let repo = repo();
    let s = Setup::new();
    two_apart(&s);
    synth_config(&s);
    // First an unknown id (sent back), then a valid merge whose words name a reviewer that did
    // not find it: the attribution must still come from the ids.
    let wrong = json!({
        "executive_summary": "x",
        "decisions": [{"action": "merge", "sources": ["alpha:I9", "beta:I1"], "reason": "r"}]
    })
    .to_string();
    let good = json!({
        "executive_summary": "SYNTHESIZED SUMMARY: the login and its wiring are one problem.",
        "verdict_rationale": "SYNTHESIZED RATIONALE.",
        "decisions": [{
            "action": "merge",
            "sources": ["alpha:I1", "beta:I1"],
            "reason": "Both are the exposed login; gamma found it first."
        }],
        "agents": {"alpha": "ALPHA NOTE: precise.", "beta": "BETA NOTE: broad."}
    })
    .to_string();
    s.server
        .script_model("synth-model", Script::review(wrong).then(good));

    let ran = run(&mut s.cmd(
        repo.path(),
        &[
            "run",
            "--agents",
            "alpha,beta",
            "--synthesize",
            "synth",
            "--quiet",
            "main..login",
        ],
    ));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = json_report(&ran);
    assert_eq!(
        report["synthesis"]["status"], "accepted",
        "{:#}",
        report["synthesis"]
    );
    assert_eq!(
        report["summary"],
        "SYNTHESIZED SUMMARY: the login and its wiring are one problem."
    );
    assert_eq!(report["verdict_rationale"], "SYNTHESIZED RATIONALE.");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["agents"], json!(["alpha", "beta"]));
    let mut ids: Vec<String> = findings[0]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}:{}",
                s["agent"].as_str().unwrap(),
                s["id"].as_str().unwrap()
            )
        })
        .collect();
    ids.sort();
    assert_eq!(ids, ["alpha:I1", "beta:I1"]);
    assert_eq!(
        agent(&report, "alpha")["synthesis_note"],
        "ALPHA NOTE: precise."
    );
    let md = markdown(&ran);
    assert!(md.contains("**Synthesizer:** BETA NOTE: broad."), "{md}");
    assert!(md.contains("SYNTHESIZED SUMMARY"), "{md}");
    assert!(!md.contains("[Gamma"), "no attribution from its words");
    // Its run is in the bundle, both tries.
    let dir = repo
        .path()
        .join(".git/deep-review/runs")
        .join(report["meta"]["id"].as_str().unwrap());
    assert!(dir.join("synthesis/synth/review.md").is_file());
    assert!(dir.join("synthesis-2/synth/review.md").is_file());
    assert!(report["synthesis"]["tokens"]["output"].as_u64().unwrap() > 0);
}
