//! The fake model server alone, over raw HTTP/1.1 on 127.0.0.1: its scripts do what the CLI tests
//! rely on (429 K times then the review, the first tool call, malformed streams, delays, side
//! endpoints, CONNECT refused and recorded). Needs no agent CLI, so it runs everywhere.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support::fake_model::{Api, FakeModel, Script, ToolCall};
use serde_json::Value;

/// Sends one request with `Connection: close` and returns (status, body).
fn send(server: &FakeModel, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(server.addr()).expect("connect to the fake server");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("read timeout");
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.addr(),
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read the answer");
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The JSON payloads of an SSE body's `data:` lines.
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

const ANTHROPIC: (&str, &str) = ("/v1/messages?beta=true", r#"{"stream":true,"model":"m"}"#);
const OPENAI: (&str, &str) = ("/v1/responses", r#"{"stream":true,"model":"m"}"#);
const CHAT: (&str, &str) = (
    "/v1/chat/completions",
    r#"{"stream":true,"model":"m","stream_options":{"include_usage":true}}"#,
);
const GEMINI: (&str, &str) = (
    "/v1beta/models/m:streamGenerateContent?alt=sse",
    r#"{"contents":[]}"#,
);

fn text_of(api: Api, body: &str) -> String {
    let evs = events(body);
    match api {
        Api::Anthropic => evs
            .iter()
            .filter(|e| e["delta"]["type"] == "text_delta")
            .map(|e| e["delta"]["text"].as_str().unwrap_or_default())
            .collect(),
        Api::OpenAi => evs
            .iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .map(|e| e["delta"].as_str().unwrap_or_default())
            .collect(),
        Api::Gemini => evs
            .iter()
            .flat_map(|e| {
                e["candidates"][0]["content"]["parts"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|p| p["text"].as_str().map(str::to_owned))
            .collect(),
        Api::Chat => evs
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect(),
    }
}

fn endpoint(api: Api) -> (&'static str, &'static str) {
    match api {
        Api::Anthropic => ANTHROPIC,
        Api::OpenAi => OPENAI,
        Api::Gemini => GEMINI,
        Api::Chat => CHAT,
    }
}

#[test]
fn chat_completions_stream_like_llama_cpp_with_usage_only_when_asked_and_given() {
    let review = "## Findings\n\n1. **Ünïcode ✓ title** — `a.rs:1` (important, gap)\n";
    let server = FakeModel::start();
    server.script(Api::Chat, Script::review(review));
    let (status, answer) = send(&server, "POST", CHAT.0, CHAT.1);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(text_of(Api::Chat, &answer), review);
    let evs = events(&answer);
    assert_eq!(evs[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(
        evs.iter()
            .any(|e| e["choices"][0]["finish_reason"] == "stop")
    );
    assert!(evs.last().unwrap()["usage"]["completion_tokens"].as_u64() > Some(0));
    assert!(answer.trim_end().ends_with("data: [DONE]"));
    // llama.cpp leaves usage out of streams whatever is asked.
    server.script(Api::Chat, Script::review(review).no_usage());
    let (_, answer) = send(&server, "POST", CHAT.0, CHAT.1);
    assert!(events(&answer).iter().all(|e| e.get("usage").is_none()));
    // Not streamed: one JSON body.
    let (_, answer) = send(&server, "POST", CHAT.0, r#"{"model":"m"}"#);
    let body: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], review);
}

#[test]
fn a_model_script_wins_answers_in_turn_and_sets_retry_after() {
    let server = FakeModel::with_all(Script::review("API"));
    server.script_model(
        "special",
        Script::review("first")
            .then("second")
            .fail_429(1)
            .retry_after("7"),
    );
    let body = r#"{"stream":true,"model":"special"}"#;
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    write!(
        stream,
        "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 429"), "{raw}");
    assert!(raw.to_ascii_lowercase().contains("retry-after: 7"), "{raw}");
    assert_eq!(
        text_of(Api::OpenAi, &send(&server, "POST", OPENAI.0, body).1),
        "first"
    );
    assert_eq!(
        text_of(Api::OpenAi, &send(&server, "POST", OPENAI.0, body).1),
        "second"
    );
    assert_eq!(
        text_of(Api::OpenAi, &send(&server, "POST", OPENAI.0, body).1),
        "second"
    );
    // Other models still get the API's script.
    assert_eq!(
        text_of(Api::OpenAi, &send(&server, "POST", OPENAI.0, OPENAI.1).1),
        "API"
    );
    assert_eq!(server.requests_for("special").len(), 4);
    let gemini = "/v1beta/models/special:streamGenerateContent?alt=sse";
    assert_eq!(
        text_of(Api::Gemini, &send(&server, "POST", gemini, "{}").1),
        "second"
    );
}

#[test]
fn each_api_streams_the_scripted_review_whole() {
    let review = "## Findings\n\n1. **Ünïcode ✓ title** — `a.rs:1` (important, gap)\n";
    let server = FakeModel::with_all(Script::review(review));
    for api in Api::ALL {
        let (path, body) = endpoint(api);
        let (status, answer) = send(&server, "POST", path, body);
        assert_eq!(status, 200, "{api:?}: {answer}");
        assert_eq!(text_of(api, &answer), review, "{api:?}: {answer}");
    }
    let first = events(&send(&server, "POST", ANTHROPIC.0, ANTHROPIC.1).1);
    let kinds: Vec<&str> = first.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    assert!(
        first
            .iter()
            .any(|e| e["delta"]["stop_reason"] == "end_turn")
    );
    let openai = events(&send(&server, "POST", OPENAI.0, OPENAI.1).1);
    let done = openai
        .iter()
        .find(|e| e["type"] == "response.completed")
        .expect("response.completed");
    assert!(done["response"]["usage"]["output_tokens"].as_u64() > Some(0));
}

#[test]
fn rate_limit_then_review_counts_per_api() {
    let server = FakeModel::with_all(Script::review("R").fail_429(2));
    for api in Api::ALL {
        let (path, body) = endpoint(api);
        assert_eq!(send(&server, "POST", path, body).0, 429, "{api:?} first");
        assert_eq!(send(&server, "POST", path, body).0, 429, "{api:?} second");
        let (status, answer) = send(&server, "POST", path, body);
        assert_eq!(
            (status, text_of(api, &answer)),
            (200, "R".into()),
            "{api:?} third"
        );
        assert_eq!(server.model_requests(api).len(), 3);
    }
    // A new script restarts the count.
    server.script(Api::Gemini, Script::review("again").fail_429(1));
    assert_eq!(send(&server, "POST", GEMINI.0, GEMINI.1).0, 429);
}

#[test]
fn first_answer_is_the_tool_call_then_the_review() {
    let call = ToolCall::WriteFile {
        path: "/tmp/x.txt".into(),
        content: "hi".into(),
    };
    let server = FakeModel::with_all(Script::review("R").tool_call(call));
    let anthropic = events(&send(&server, "POST", ANTHROPIC.0, ANTHROPIC.1).1);
    assert!(
        anthropic
            .iter()
            .any(|e| e["content_block"]["name"] == "Write")
    );
    assert!(
        anthropic
            .iter()
            .any(|e| e["delta"]["stop_reason"] == "tool_use")
    );
    let openai_body = r#"{"stream":true,"tools":[{"type":"function","name":"exec_command"}]}"#;
    let openai = events(&send(&server, "POST", OPENAI.0, openai_body).1);
    let item = openai
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .expect("an output item");
    assert_eq!(item["item"]["name"], "exec_command");
    assert!(
        item["item"]["arguments"]
            .as_str()
            .unwrap_or("")
            .contains("/tmp/x.txt")
    );
    let gemini = events(&send(&server, "POST", GEMINI.0, GEMINI.1).1);
    assert_eq!(
        gemini[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
        "write_file"
    );
    for api in Api::ALL {
        let (path, body) = endpoint(api);
        assert_eq!(
            text_of(api, &send(&server, "POST", path, body).1),
            "R",
            "{api:?}"
        );
    }
}

#[test]
fn malformed_stream_is_not_json() {
    let server = FakeModel::with_all(Script::review("R").malformed());
    for api in Api::ALL {
        let (path, body) = endpoint(api);
        let (status, answer) = send(&server, "POST", path, body);
        assert_eq!(status, 200);
        assert!(
            answer
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .any(|d| serde_json::from_str::<Value>(d).is_err()),
            "{api:?}: {answer}"
        );
    }
}

#[test]
fn delay_holds_the_answer_back() {
    let server = FakeModel::with_all(Script::review("R").delay(Duration::from_millis(600)));
    let started = Instant::now();
    let (status, _) = send(&server, "POST", OPENAI.0, OPENAI.1);
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(600));
}

#[test]
fn side_endpoints_answer_and_connect_is_refused_and_recorded() {
    let server = FakeModel::start();
    assert_eq!(send(&server, "HEAD", "/", "").0, 200);
    assert_eq!(send(&server, "GET", "/v1/models", "").0, 200);
    let (status, body) = send(&server, "POST", "/v1/messages/count_tokens", "{}");
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(
        &server,
        "POST",
        "/v1beta/models/m:generateContent",
        r#"{"generationConfig":{"responseMimeType":"application/json"}}"#,
    );
    assert_eq!(status, 200);
    let stub: Value = serde_json::from_str(&body).expect("JSON");
    let inner = stub["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .expect("text part");
    assert!(inner.contains("next_speaker"), "{inner}");
    assert!(
        server.model_requests(Api::Gemini).is_empty(),
        "a JSON side call must not count against the script"
    );
    assert_eq!(send(&server, "CONNECT", "example.com:443", "").0, 403);
    assert_eq!(server.connects(), vec!["example.com:443".to_string()]);
    assert_eq!(send(&server, "GET", "/nothing/here", "").0, 404);
    assert!(server.summary().contains("GET /nothing/here -> 404"));
}

#[test]
fn hang_never_answers_and_dropping_the_server_ends_it() {
    let server = FakeModel::with_all(Script::review("R").hang());
    let mut stream = TcpStream::connect(server.addr()).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_millis(800)))
        .expect("read timeout");
    let body = OPENAI.1;
    write!(
        stream,
        "POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut buf = [0u8; 64];
    let err = stream
        .read(&mut buf)
        .expect_err("a hanging request must not be answered");
    assert!(matches!(
        err.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    ));
    assert_eq!(server.requests()[0].status, 0, "recorded as unanswered");
    drop(server);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    assert_eq!(
        stream.read(&mut buf).unwrap_or(0),
        0,
        "the connection is closed"
    );
}
