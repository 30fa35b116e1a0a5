//! The model providers' official Python SDKs (PyPI `anthropic`, `openai`, `google-genai`, pinned
//! and installed by `scripts/install-provider-sdks.sh` into a cached venv), which the model-API
//! conformance tests hold deep-review's requests and the fake model server's streams to:
//! `tests/sdk/check_requests.py` validates request bodies against the SDKs' request types,
//! `tests/sdk/read_streams.py` reads the fake's streams through the SDKs' own stream readers.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The venv's python: `DEEP_REVIEW_PROVIDER_SDKS_PYTHON`, else the install script's default.
/// A test that calls this is `#[ignore = "needs the providers' SDKs ..."]`: asked to run without
/// them, it fails with what to install.
pub fn python() -> PathBuf {
    let path = match std::env::var_os("DEEP_REVIEW_PROVIDER_SDKS_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => dirs::home_dir()
            .unwrap_or_default()
            .join(".cache/deep-review/provider-sdks/bin/python"),
    };
    assert!(
        path.is_file(),
        "the providers' SDKs are not installed at {}: run scripts/install-provider-sdks.sh \
         (PyPI anthropic, openai, google-genai) or set DEEP_REVIEW_PROVIDER_SDKS_PYTHON",
        path.display()
    );
    path
}

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sdk")
        .join(name)
}

/// Each `(kind, body)` checked against its SDK request type: `Err` with pydantic's errors.
/// Kinds: `anthropic`, `openai` (Responses), `chat` (chat completions), `gemini`.
pub fn check_requests(requests: &[(&str, Value)]) -> Vec<Result<(), String>> {
    let mut child = Command::new(python())
        .arg(script("check_requests.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the SDK request checker");
    {
        let mut stdin = child.stdin.take().unwrap();
        for (kind, body) in requests {
            let line = serde_json::json!({"kind": kind, "body": body});
            writeln!(stdin, "{line}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the SDK request checker failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Result<(), String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["ok"] == true {
                Ok(())
            } else {
                Err(v["error"].as_str().unwrap_or("").to_string())
            }
        })
        .collect();
    assert_eq!(results.len(), requests.len(), "one answer per request");
    results
}

/// What the SDKs read from the fake at `base_url` for `model`: per API (`anthropic`,
/// `openai`, `chat`, `gemini`) the text, the token usage, or `error`.
pub fn read_streams(base_url: &str, model: &str) -> Value {
    let out = Command::new(python())
        .arg(script("read_streams.py"))
        .args([base_url, model])
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("all_proxy")
        .output()
        .expect("start the SDK stream reader");
    assert!(
        out.status.success(),
        "the SDK stream reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the stream reader's JSON")
}
