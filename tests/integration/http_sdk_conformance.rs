//! The model APIs as their providers' official SDKs describe them, both ways: every request body
//! deep-review sends (Anthropic Messages, OpenAI Responses, Gemini generateContent, chat
//! completions; with and without structured output, effort and temperature) is validated against
//! the SDKs' request types, and the fake model server's streams are read back through the SDKs'
//! own stream readers, so that the client and the fake both follow the providers.

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

use crate::support::fake_model::{Api, FakeModel, MODEL, Script};
use crate::support::sdks;
use crate::support::standin::{repo, review};

fn config(xdg: &Path, text: &str) {
    let path = xdg.join("deep-review/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn deep_review(repo: &Path, xdg: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::cargo_bin("deep-review").unwrap();
    cmd.current_dir(repo)
        .args(args)
        .env("XDG_CONFIG_HOME", xdg)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("OPENAI_API_KEY", "sk-test-0123456789")
        .env("GEMINI_API_KEY", "gemini-test-0123456789")
        .env("MY_GATEWAY_KEY", "gw-test-0123456789")
        .env_remove("CI")
        .timeout(std::time::Duration::from_secs(120));
    for proxy in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env_remove(proxy);
    }
    cmd.output().unwrap()
}

fn kind_of(api: Option<Api>) -> &'static str {
    match api {
        Some(Api::Anthropic) => "anthropic",
        Some(Api::OpenAi) => "openai",
        Some(Api::Gemini) => "gemini",
        Some(Api::Chat) => "chat",
        None => "none",
    }
}

#[test]
#[ignore = "needs the providers' SDKs: scripts/install-provider-sdks.sh"]
fn every_request_deep_review_sends_fits_the_sdks_request_types() {
    let repo = repo();
    let xdg = tempfile::tempdir().unwrap();
    let server = FakeModel::start();
    let text = review("Login accepts any password", None);
    for api in [Api::Anthropic, Api::OpenAi, Api::Gemini, Api::Chat] {
        server.script(api, Script::review(text.clone()));
    }
    // A server that knows only the older JSON mode (llama-cpp-python): asked again in its form.
    server.script_model(
        "legacy-json",
        Script::review(text.clone()).only_json_object(),
    );
    let url = server.url();
    config(
        xdg.path(),
        &format!(
            "[agents.messages]\nkind = \"anthropic\"\nbase_url = \"{url}\"\nmodel = \"claude-sonnet-4-5\"\n\
             temperature = 0.2\n\n\
             [agents.responses]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"gpt-5\"\neffort = \"high\"\n\n\
             [agents.responses-md]\nkind = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"gpt-5-mini\"\n\
             structured_output = false\ntemperature = 0.5\n\n\
             [agents.gemini-api]\nkind = \"gemini\"\nbase_url = \"{url}/v1beta\"\nmodel = \"gemini-2.5-pro\"\n\
             temperature = 0.1\n\n\
             [agents.chat]\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"qwen\"\n\
             api_key_env = \"MY_GATEWAY_KEY\"\neffort = \"low\"\ntemperature = 0.0\nmax_output_tokens = 3000\n\n\
             [agents.chat-md]\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"qwen-md\"\n\
             structured_output = false\n\n\
             [agents.legacy]\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\nmodel = \"legacy-json\"\n"
        ),
    );
    let agents = "messages,responses,responses-md,gemini-api,chat,chat-md,legacy";
    let out = deep_review(
        repo.path(),
        xdg.path(),
        &["run", "--agents", agents, "--quiet", "main..login"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        server.summary()
    );
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.api.is_some())
        .collect();
    assert_eq!(
        requests.len(),
        8,
        "one each, two for the legacy server: {}",
        server.summary()
    );
    let legacy: Vec<u16> = server
        .requests_for("legacy-json")
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(legacy, [500, 200], "{}", server.summary());
    assert_eq!(
        server.requests_for("legacy-json")[1].json()["response_format"]["type"],
        "json_object"
    );

    // The legacy server's second request is llama-cpp-python's dialect, not OpenAI's: checked
    // as what it is, the one body outside the SDK types, and refused by them (the check bites).
    let bodies: Vec<(&str, Value)> = requests
        .iter()
        .map(|r| (kind_of(r.api), r.json()))
        .collect();
    let results = sdks::check_requests(&bodies);
    let mut refused = Vec::new();
    for ((r, (kind, _)), result) in requests.iter().zip(&bodies).zip(&results) {
        let legacy_form = r.json()["response_format"]["type"] == "json_object";
        match (result, legacy_form) {
            (Ok(()), false) => {}
            (Err(_), true) => refused.push(r.model.clone()),
            (Ok(()), true) => panic!("the SDK took llama-cpp-python's JSON mode: {}", r.body),
            (Err(e), false) => panic!(
                "{kind} request for {:?} does not fit the SDK's type:\n{e}\n{}",
                r.model, r.body
            ),
        }
    }
    assert_eq!(refused, [Some("legacy-json".to_string())]);
}

#[test]
#[ignore = "needs the providers' SDKs: scripts/install-provider-sdks.sh"]
fn the_checker_refuses_bodies_the_sdks_refuse() {
    let results = sdks::check_requests(&[
        (
            "anthropic",
            json!({"model": "m", "maxTokens": 10, "stream": true,
                   "messages": [{"role": "user", "content": "p"}]}),
        ),
        (
            "openai",
            json!({"model": "m", "input": "p", "stream": true,
                   "text": {"format": {"type": "json_schema", "schema": {}}}}),
        ),
        (
            "chat",
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "p"}],
                   "response_format": {"type": "json_object", "schema": {}}}),
        ),
        (
            "gemini",
            json!({"contents": [{"role": "user", "parts": [{"text": "p"}]}],
                   "generationConfig": {"max_tokens": 10}}),
        ),
        (
            "anthropic",
            json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "p"}]}),
        ),
    ]);
    for (i, r) in results.iter().enumerate() {
        assert!(r.is_err(), "body {i} was accepted");
    }
    let errors: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(errors[0].contains("maxTokens"), "{}", errors[0]);
    assert!(
        errors[1].contains("name"),
        "a json_schema format needs its name: {}",
        errors[1]
    );
    assert!(errors[2].contains("schema"), "{}", errors[2]);
    assert!(errors[3].contains("max_tokens"), "{}", errors[3]);
    assert!(errors[4].contains("stream"), "{}", errors[4]);
}

#[test]
#[ignore = "needs the providers' SDKs: scripts/install-provider-sdks.sh"]
fn the_fake_models_streams_read_back_through_the_sdks() {
    let server = FakeModel::start();
    let text = review("Login accepts any password", Some("Module name is vague"));
    for api in [Api::Anthropic, Api::OpenAi, Api::Gemini, Api::Chat] {
        server.script(api, Script::review(text.clone()).usage_input(1234));
    }
    let read = sdks::read_streams(&server.url(), MODEL);
    let out_tokens = (text.len() / 4) as u64;
    for api in ["anthropic", "openai", "chat", "gemini"] {
        let got = &read[api];
        assert!(
            got.get("error").is_none(),
            "{api}: {got:#}\n{}",
            server.summary()
        );
        assert_eq!(
            got["text"],
            text.as_str(),
            "{api}: the text the SDK streamed"
        );
        assert_eq!(
            got["final_text"],
            text.as_str(),
            "{api}: the SDK's final message"
        );
        assert_eq!(got["input_tokens"], 1234, "{api}: {got:#}");
        assert_eq!(got["output_tokens"], out_tokens, "{api}: {got:#}");
        assert!(got["events"].as_u64().unwrap() >= 3, "{api}: {got:#}");
    }
    assert_eq!(read["anthropic"]["stop_reason"], "end_turn");
    assert_eq!(read["openai"]["status"], "completed");
    assert_eq!(read["chat"]["finish_reason"], "stop");
    assert_eq!(read["gemini"]["finish_reason"], "STOP");
}
