//! A fake model server on 127.0.0.1 that the real agent CLIs talk to in tests.
//!
//! It speaks the three streams the CLIs use (Anthropic Messages for Claude Code, OpenAI Responses
//! for Codex, Gemini `streamGenerateContent` for Gemini CLI), which are also what deep-review's own
//! model-API reviewers speak, and OpenAI-style chat completions (`/v1/chat/completions`, as
//! llama.cpp, Ollama and vLLM serve it) for `openai-compatible` reviewers. Each answers with a raw
//! review the test scripts. Each API (or one model, [`FakeModel::script_model`]) can be told to
//! wait, to fail with 429 a number of times (with a `retry-after`), to hang, to send a malformed
//! stream, to leave usage out of its stream (as llama.cpp does), to report a usage of its choosing,
//! to answer later requests differently, or to ask for a file-writing tool call first, so tests
//! can drive the failure paths with the real CLIs and no network.
//!
//! The server runs on its own thread with its own tokio runtime, so sync tests, async tests and
//! benchmarks can all use it; dropping [`FakeModel`] stops it and drops every open connection
//! (which is what ends a hanging request). Every request is recorded (method, path, body) so
//! tests can assert what the CLIs sent. Requests the fake does not know (model lists, token
//! counts, `CONNECT` through the proxy variable) are recorded too and answered so that a CLI
//! carries on: a `CONNECT` gets 403, so anything that tries to leave the machine fails fast and
//! shows up in [`FakeModel::connects`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::http_server::Server;

/// The model name tests pass to every CLI (`--model`, `-m`).
pub const MODEL: &str = "fake-model";

/// The three model APIs, one per agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages (`POST /v1/messages`), Claude Code.
    Anthropic,
    /// OpenAI Responses (`POST /v1/responses`), Codex CLI.
    OpenAi,
    /// Gemini (`POST /v1beta/models/M:streamGenerateContent`), Gemini CLI.
    Gemini,
    /// OpenAI-style chat completions (`POST /v1/chat/completions`): llama.cpp, Ollama, vLLM.
    Chat,
}

impl Api {
    pub const ALL: [Api; 3] = [Api::Anthropic, Api::OpenAi, Api::Gemini];
}

/// A tool call the fake model asks for on its first answer, before it gives the review.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// Write `content` to `path` (Claude `Write`, Gemini `write_file`; Codex gets a shell
    /// command that writes the file, as it has no plain write tool).
    WriteFile { path: String, content: String },
    /// Run a shell command (Claude `Bash`, Codex `exec_command` or whichever shell tool it
    /// offers, Gemini `run_shell_command`).
    Shell { command: String },
    /// Read a file (Claude `Read`, Gemini `read_file`; Codex gets `cat`).
    ReadFile { path: String },
}

/// How one API answers its model requests.
#[derive(Debug, Clone, Default)]
pub struct Script {
    /// The raw review text (Markdown) the model answers with.
    pub review: String,
    /// Wait this long before answering each model request.
    pub delay: Duration,
    /// Answer the first K model requests with HTTP 429.
    pub fail_429: usize,
    /// Never answer model requests (the connection stays open until the server stops).
    pub hang: bool,
    /// Answer model requests with a stream that is not valid JSON.
    pub malformed: bool,
    /// On the first answered model request, ask for this tool call; answer with the review after.
    pub tool_call: Option<ToolCall>,
    /// The `retry-after` header of the 429 answers (default `0`).
    pub retry_after: Option<String>,
    /// Leave token usage out of the answer (llama.cpp's streams carry none).
    pub no_usage: bool,
    /// Report this many input tokens instead of the request's size / 4.
    pub usage_input: Option<u64>,
    /// What later answered requests get, in order (the last one repeats); the first gets
    /// `review`.
    pub then: Vec<String>,
    /// Chat completions: refuse `response_format` of type `json_schema` with a 500 naming it,
    /// as llama-cpp-python's server does (it knows only `text` and `json_object`).
    pub only_json_object: bool,
}

impl Script {
    /// A script that answers with `review` at once.
    pub fn review(review: impl Into<String>) -> Script {
        Script {
            review: review.into(),
            ..Script::default()
        }
    }

    pub fn delay(mut self, delay: Duration) -> Script {
        self.delay = delay;
        self
    }

    pub fn fail_429(mut self, times: usize) -> Script {
        self.fail_429 = times;
        self
    }

    pub fn hang(mut self) -> Script {
        self.hang = true;
        self
    }

    pub fn malformed(mut self) -> Script {
        self.malformed = true;
        self
    }

    pub fn tool_call(mut self, call: ToolCall) -> Script {
        self.tool_call = Some(call);
        self
    }

    pub fn retry_after(mut self, value: &str) -> Script {
        self.retry_after = Some(value.to_string());
        self
    }

    pub fn no_usage(mut self) -> Script {
        self.no_usage = true;
        self
    }

    pub fn only_json_object(mut self) -> Script {
        self.only_json_object = true;
        self
    }

    pub fn usage_input(mut self, tokens: u64) -> Script {
        self.usage_input = Some(tokens);
        self
    }

    /// Answers the next request with `review` (after the ones before it).
    pub fn then(mut self, review: impl Into<String>) -> Script {
        self.then.push(review.into());
        self
    }

    /// The review of the `n`th answered request (0 for the first).
    fn reply(&self, n: usize) -> &str {
        if n == 0 || self.then.is_empty() {
            return &self.review;
        }
        &self.then[(n - 1).min(self.then.len() - 1)]
    }
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`); for `CONNECT`, the authority (`host:443`).
    pub path: String,
    /// The API when this was a model request, which counts against the script.
    pub api: Option<Api>,
    pub body: String,
    /// What the fake answered: the HTTP status, or 0 for a request it never answered.
    pub status: u16,
    /// The request's headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The model the request named (its body's `model`, or Gemini's path).
    pub model: Option<String>,
}

impl Recorded {
    /// The value of header `name` (lower case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct State {
    scripts: HashMap<Api, Script>,
    /// Model requests seen per API: what 429s and the first tool call count against.
    model_requests: HashMap<Api, usize>,
    /// Scripts for one model, whatever the API: they win over the API's script.
    model_scripts: HashMap<String, Script>,
    model_counts: HashMap<String, usize>,
    log: Vec<Recorded>,
}

/// The running fake server. Dropping it stops it.
pub struct FakeModel {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// Stops the server when the fake is dropped.
    _server: Server,
}

impl FakeModel {
    /// Starts the server on a free port of 127.0.0.1. Every API answers with an empty review
    /// until [`FakeModel::script`] says otherwise.
    pub fn start() -> FakeModel {
        let state = Arc::new(Mutex::new(State::default()));
        let thread_state = state.clone();
        let server = Server::start("fake model server", move |req, _| {
            handle(thread_state.clone(), req)
        });
        FakeModel {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// Starts the server with one script for all three APIs.
    pub fn with_all(script: Script) -> FakeModel {
        let server = FakeModel::start();
        for api in Api::ALL {
            server.script(api, script.clone());
        }
        server
    }

    /// Sets how `api` answers from now on, and restarts its request count.
    pub fn script(&self, api: Api, script: Script) {
        let mut state = self.lock();
        state.scripts.insert(api, script);
        state.model_requests.remove(&api);
    }

    /// Sets how requests for `model` answer, whatever their API (over the API's script).
    pub fn script_model(&self, model: &str, script: Script) {
        let mut state = self.lock();
        state.model_scripts.insert(model.to_string(), script);
        state.model_counts.remove(model);
    }

    /// The model requests that named `model`.
    pub fn requests_for(&self, model: &str) -> Vec<Recorded> {
        self.lock()
            .log
            .iter()
            .filter(|r| r.api.is_some() && r.model.as_deref() == Some(model))
            .cloned()
            .collect()
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT`, with no trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().log.clone()
    }

    /// The model requests of one API so far.
    pub fn model_requests(&self, api: Api) -> Vec<Recorded> {
        self.lock()
            .log
            .iter()
            .filter(|r| r.api == Some(api))
            .cloned()
            .collect()
    }

    /// Hosts a CLI tried to reach through the proxy variable: should stay empty.
    pub fn connects(&self) -> Vec<String> {
        self.lock()
            .log
            .iter()
            .filter(|r| r.method == "CONNECT")
            .map(|r| r.path.clone())
            .collect()
    }

    /// A readable list of every request, for assertion messages.
    pub fn summary(&self) -> String {
        self.lock()
            .log
            .iter()
            .map(|r| format!("{} {} -> {}", r.method, r.path, r.status))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in a handler must not hide the test's own failure behind a poisoned lock.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// What to send for one request, decided under the lock and sent after it.
enum Answer {
    Now(Response<Full<Bytes>>),
    After(Duration, Response<Full<Bytes>>),
    Never,
}

async fn handle(
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().clone();
    let path = if method == Method::CONNECT {
        req.uri()
            .authority()
            .map(|a| a.to_string())
            .unwrap_or_else(|| req.uri().to_string())
    } else {
        req.uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_else(|| req.uri().path().to_string())
    };
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match req.into_body().collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let mut api = model_api(&method, &path);
    // Side calls that want JSON back (Gemini's routing or next-speaker checks) get a JSON stub
    // and do not count against the script.
    let side_call =
        api == Some(Api::Gemini) && wants_json(&serde_json::from_str(&body).unwrap_or(Value::Null));
    if side_call {
        api = None;
    }
    let model = api.and_then(|_| model_of(&path, &body));
    let answer = {
        let mut st = lock(&state);
        let answer = match api {
            Some(api) => model_answer(&mut st, api, model.as_deref(), &path, &body),
            None if side_call => Answer::Now(gemini_json_stub(&path)),
            None => Answer::Now(other_answer(&method, &path, &body)),
        };
        let status = match &answer {
            Answer::Now(r) | Answer::After(_, r) => r.status().as_u16(),
            Answer::Never => 0,
        };
        st.log.push(Recorded {
            method: method.to_string(),
            path: path.clone(),
            api,
            body,
            status,
            headers,
            model,
        });
        answer
    };
    match answer {
        Answer::Now(response) => Ok(response),
        Answer::After(delay, response) => {
            tokio::time::sleep(delay).await;
            Ok(response)
        }
        Answer::Never => std::future::pending().await,
    }
}

/// Which API a request is a model request of: the ones that count against the script.
fn model_api(method: &Method, path: &str) -> Option<Api> {
    if method != Method::POST {
        return None;
    }
    let bare = path.split('?').next().unwrap_or(path);
    if bare == "/v1/messages" {
        Some(Api::Anthropic)
    } else if bare == "/v1/responses" {
        Some(Api::OpenAi)
    } else if bare.contains("/models/")
        && (bare.ends_with(":streamGenerateContent") || bare.ends_with(":generateContent"))
    {
        Some(Api::Gemini)
    } else if bare.ends_with("/chat/completions") {
        Some(Api::Chat)
    } else {
        None
    }
}

/// The model a request names: the body's `model`, or Gemini's `/models/M:...`.
fn model_of(path: &str, body: &str) -> Option<String> {
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    if let Some(m) = request["model"].as_str() {
        return Some(m.to_string());
    }
    let bare = path.split('?').next().unwrap_or(path);
    let after = bare.split("/models/").nth(1)?;
    let name = after.split(':').next()?;
    Some(percent_decode(name))
}

/// `%2D` → `-`: enough for model names in a path.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn model_answer(st: &mut State, api: Api, model: Option<&str>, path: &str, body: &str) -> Answer {
    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let (script, index) = match model.filter(|m| st.model_scripts.contains_key(*m)) {
        Some(m) => {
            let script = st.model_scripts[m].clone();
            let n = st.model_counts.entry(m.to_string()).or_insert(0);
            let index = *n;
            *n += 1;
            (script, index)
        }
        None => {
            let script = st.scripts.get(&api).cloned().unwrap_or_default();
            let n = st.model_requests.entry(api).or_insert(0);
            let index = *n;
            *n += 1;
            (script, index)
        }
    };
    if index < script.fail_429 {
        return Answer::Now(rate_limited(
            api,
            script.retry_after.as_deref().unwrap_or("0"),
        ));
    }
    if script.hang {
        return Answer::Never;
    }
    if api == Api::Chat
        && script.only_json_object
        && request["response_format"]["type"] == "json_schema"
    {
        // llama-cpp-python's answer (0.3.x) to a value its request model does not allow: its
        // error handler turns the validation error into a 500 that names the field.
        return Answer::Now(json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": {
                "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}",
                "type": "internal_server_error", "param": null, "code": null}}),
        ));
    }
    let response = if script.malformed {
        malformed(api)
    } else {
        let tool = match &script.tool_call {
            Some(call) if index == script.fail_429 => Some(call),
            _ => None,
        };
        let streaming = match api {
            Api::Gemini => path.contains(":streamGenerateContent"),
            _ => request
                .get("stream")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        let prompt_tokens = script.usage_input.unwrap_or((body.len() / 4) as u64);
        let review = script.reply(index - script.fail_429);
        match api {
            Api::Anthropic => anthropic(review, tool, streaming, prompt_tokens),
            Api::OpenAi => openai(&request, review, tool, streaming, prompt_tokens),
            Api::Gemini => gemini(review, tool, streaming, prompt_tokens),
            Api::Chat => chat(&request, review, streaming, prompt_tokens, !script.no_usage),
        }
    };
    if script.delay.is_zero() {
        Answer::Now(response)
    } else {
        Answer::After(script.delay, response)
    }
}

/// Gemini CLI's own side calls (routing: `complexity_score`; next speaker: `next_speaker`),
/// told apart from a reviewer that asks for JSON of the review schema.
fn wants_json(request: &Value) -> bool {
    let config = &request["generationConfig"];
    let asks_json = config["responseMimeType"].as_str() == Some("application/json")
        || !config["responseJsonSchema"].is_null()
        || !config["responseSchema"].is_null();
    let schema = format!(
        "{}{}",
        config["responseJsonSchema"], config["responseSchema"]
    );
    asks_json
        && (schema.contains("complexity_score")
            || schema.contains("next_speaker")
            || (schema == "nullnull"))
}

/// Answers for everything that is not a model request.
fn other_answer(method: &Method, path: &str, body: &str) -> Response<Full<Bytes>> {
    let bare = path.split('?').next().unwrap_or(path);
    if method == Method::CONNECT {
        return text(
            StatusCode::FORBIDDEN,
            "the fake model server does not tunnel",
        );
    }
    if method == Method::HEAD || (method == Method::GET && bare == "/") {
        return text(StatusCode::OK, "");
    }
    if bare.ends_with("/count_tokens") {
        return json_response(
            StatusCode::OK,
            &json!({"input_tokens": (body.len() / 4) as u64}),
        );
    }
    if bare.ends_with(":countTokens") {
        return json_response(
            StatusCode::OK,
            &json!({"totalTokens": (body.len() / 4) as u64}),
        );
    }
    if method == Method::GET && bare.ends_with("/models") {
        // One object that reads as an OpenAI model list, Codex's own model list and Gemini's.
        return json_response(
            StatusCode::OK,
            &json!({
                "object": "list",
                "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}],
                "models": [],
            }),
        );
    }
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"error": {"message": format!("the fake model server has no {method} {bare}")}}),
    )
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a plain response")
}

fn json_response(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(value.to_string())))
        .expect("a JSON response")
}

fn sse_response(body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Full::new(Bytes::from(body)))
        .expect("an SSE response")
}

/// One SSE event; `event` is omitted when empty (Gemini sends bare `data:` lines).
fn sse(out: &mut String, event: &str, data: &Value) {
    if !event.is_empty() {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// Splits the review into a few deltas, as a real stream would, on char boundaries.
fn chunks(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(4).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn output_tokens(review: &str) -> u64 {
    (review.len() / 4).max(1) as u64
}

fn rate_limited(api: Api, retry_after: &str) -> Response<Full<Bytes>> {
    let body = match api {
        Api::Anthropic => json!({
            "type": "error",
            "error": {"type": "rate_limit_error", "message": "Rate limited by the fake model server"},
        }),
        Api::OpenAi | Api::Chat => json!({
            "error": {
                "message": "Rate limit reached (fake model server)",
                "type": "rate_limit_exceeded",
                "code": "rate_limit_exceeded",
            },
        }),
        Api::Gemini => json!({
            "error": {
                "code": 429,
                "message": "Resource has been exhausted (fake model server)",
                "status": "RESOURCE_EXHAUSTED",
            },
        }),
    };
    Response::builder()
        .status(StatusCode::TOO_MANY_REQUESTS)
        .header("content-type", "application/json")
        .header("retry-after", retry_after)
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a 429 response")
}

fn malformed(api: Api) -> Response<Full<Bytes>> {
    let body = match api {
        Api::Anthropic => {
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{oops\n\nevent: content_block_delta\ndata: not json at all\n\n"
        }
        Api::OpenAi => {
            "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{oops\n\ndata: not json at all\n\n"
        }
        Api::Gemini => "data: {\"candidates\":[{oops\n\ndata: not json at all\n\n",
        Api::Chat => {
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{oops\n\ndata: not json at all\n\n"
        }
    };
    sse_response(body.to_owned())
}

// ---------------------------------------------------------------- Anthropic Messages

fn anthropic(
    review: &str,
    tool: Option<&ToolCall>,
    streaming: bool,
    prompt_tokens: u64,
) -> Response<Full<Bytes>> {
    let out_tokens = output_tokens(review);
    let (block, input, stop_reason) = match tool {
        Some(ToolCall::WriteFile { path, content }) => (
            json!({"type": "tool_use", "id": "toolu_fake_write", "name": "Write", "input": {}}),
            json!({"file_path": path, "content": content}),
            "tool_use",
        ),
        Some(ToolCall::Shell { command }) => (
            json!({"type": "tool_use", "id": "toolu_fake_bash", "name": "Bash", "input": {}}),
            json!({"command": command, "description": "write a file"}),
            "tool_use",
        ),
        Some(ToolCall::ReadFile { path }) => (
            json!({"type": "tool_use", "id": "toolu_fake_read", "name": "Read", "input": {}}),
            json!({"file_path": path}),
            "tool_use",
        ),
        None => (json!({"type": "text", "text": ""}), Value::Null, "end_turn"),
    };
    if !streaming {
        let content = if tool.is_some() {
            let mut b = block.clone();
            b["input"] = input.clone();
            b
        } else {
            json!({"type": "text", "text": review})
        };
        return json_response(
            StatusCode::OK,
            &json!({
                "id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL,
                "content": [content], "stop_reason": stop_reason, "stop_sequence": null,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": out_tokens},
            }),
        );
    }
    let mut out = String::new();
    sse(
        &mut out,
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": prompt_tokens, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }}),
    );
    sse(
        &mut out,
        "content_block_start",
        &json!({"type": "content_block_start", "index": 0, "content_block": block}),
    );
    if tool.is_some() {
        sse(
            &mut out,
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        );
    } else {
        for piece in chunks(review) {
            sse(
                &mut out,
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": piece}}),
            );
        }
    }
    sse(
        &mut out,
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    sse(
        &mut out,
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": out_tokens}}),
    );
    sse(&mut out, "message_stop", &json!({"type": "message_stop"}));
    sse_response(out)
}

// ---------------------------------------------------------------- OpenAI Responses

fn openai(
    request: &Value,
    review: &str,
    tool: Option<&ToolCall>,
    streaming: bool,
    prompt_tokens: u64,
) -> Response<Full<Bytes>> {
    let out_tokens = output_tokens(review);
    let usage = json!({
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt_tokens + out_tokens,
    });
    let item = match tool {
        Some(call) => {
            let script = match call {
                ToolCall::WriteFile { path, content } => {
                    format!(
                        "printf '%s' {} > {}",
                        shell_quote(content),
                        shell_quote(path)
                    )
                }
                ToolCall::Shell { command } => command.clone(),
                ToolCall::ReadFile { path } => format!("cat {}", shell_quote(path)),
            };
            // Codex names its shell tool differently across versions: use the one it offers.
            let (name, arguments) = if offers_tool(request, "exec_command") {
                ("exec_command", json!({"cmd": script}))
            } else if offers_tool(request, "shell_command") {
                ("shell_command", json!({"command": script}))
            } else {
                ("shell", json!({"command": ["bash", "-lc", script]}))
            };
            json!({
                "type": "function_call", "id": "fc_fake", "call_id": "call_fake",
                "name": name, "status": "completed", "arguments": arguments.to_string(),
            })
        }
        None => json!({
            "type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": review, "annotations": []}],
        }),
    };
    // Every field the Responses API's `Response` object requires, as its SDK types it.
    let response = |status: &str, output: Value| {
        json!({
            "id": "resp_fake", "object": "response", "created_at": 0, "status": status,
            "model": MODEL, "output": output, "usage": usage.clone(),
            "error": null, "incomplete_details": null, "instructions": null, "metadata": {},
            "parallel_tool_calls": true, "temperature": 1.0, "tool_choice": "auto",
            "tools": [], "top_p": 1.0,
        })
    };
    if !streaming {
        return json_response(StatusCode::OK, &response("completed", json!([item])));
    }
    // The events of a real stream, numbered as the API numbers them.
    let mut out = String::new();
    let mut sequence = 0u64;
    let mut event = |out: &mut String, name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        sse(out, name, &data);
    };
    event(
        &mut out,
        "response.created",
        json!({"response": response("in_progress", json!([]))}),
    );
    event(
        &mut out,
        "response.in_progress",
        json!({"response": response("in_progress", json!([]))}),
    );
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    if tool.is_none() {
        added["content"] = json!([]);
    }
    event(
        &mut out,
        "response.output_item.added",
        json!({"output_index": 0, "item": added}),
    );
    if tool.is_none() {
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        let at = json!({"item_id": "msg_fake", "output_index": 0, "content_index": 0});
        let with = |mut v: Value, key: &str, value: Value| {
            v[key] = value;
            v
        };
        event(
            &mut out,
            "response.content_part.added",
            with(at.clone(), "part", part("")),
        );
        for piece in chunks(review) {
            let delta = with(at.clone(), "delta", json!(piece));
            event(
                &mut out,
                "response.output_text.delta",
                with(delta, "logprobs", json!([])),
            );
        }
        let done = with(at.clone(), "text", json!(review));
        event(
            &mut out,
            "response.output_text.done",
            with(done, "logprobs", json!([])),
        );
        event(
            &mut out,
            "response.content_part.done",
            with(at, "part", part(review)),
        );
    }
    event(
        &mut out,
        "response.output_item.done",
        json!({"output_index": 0, "item": item}),
    );
    event(
        &mut out,
        "response.completed",
        json!({"response": response("completed", json!([item]))}),
    );
    sse_response(out)
}

/// Whether a Responses request lists a function tool called `name`.
fn offers_tool(request: &Value, name: &str) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

// ---------------------------------------------------------------- Gemini

fn gemini(
    review: &str,
    tool: Option<&ToolCall>,
    streaming: bool,
    prompt_tokens: u64,
) -> Response<Full<Bytes>> {
    let out_tokens = output_tokens(review);
    let usage = json!({
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": out_tokens,
        "totalTokenCount": prompt_tokens + out_tokens,
    });
    let candidate = |parts: Value, finish: Option<&str>| {
        let mut c = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            c["finishReason"] = json!(f);
        }
        c
    };
    let tool_part = tool.map(|call| match call {
        ToolCall::WriteFile { path, content } => json!({"functionCall": {
            "name": "write_file", "args": {"file_path": path, "content": content}}}),
        ToolCall::Shell { command } => json!({"functionCall": {
            "name": "run_shell_command", "args": {"command": command}}}),
        ToolCall::ReadFile { path } => json!({"functionCall": {
            "name": "read_file", "args": {"absolute_path": path}}}),
    });
    if !streaming {
        let parts = match &tool_part {
            Some(p) => json!([p]),
            None => json!([{"text": review}]),
        };
        return json_response(
            StatusCode::OK,
            &json!({"candidates": [candidate(parts, Some("STOP"))], "usageMetadata": usage,
                    "modelVersion": MODEL}),
        );
    }
    let mut out = String::new();
    match &tool_part {
        Some(p) => sse(
            &mut out,
            "",
            &json!({"candidates": [candidate(json!([p]), Some("STOP"))],
                    "usageMetadata": usage, "modelVersion": MODEL}),
        ),
        None => {
            let pieces = chunks(review);
            let last = pieces.len() - 1;
            for (i, piece) in pieces.into_iter().enumerate() {
                let mut event = json!({
                    "candidates": [candidate(json!([{"text": piece}]),
                                             (i == last).then_some("STOP"))],
                    "modelVersion": MODEL,
                });
                if i == last {
                    event["usageMetadata"] = usage.clone();
                }
                sse(&mut out, "", &event);
            }
        }
    }
    sse_response(out)
}

/// Gemini CLI's side calls ask for JSON (routing: `complexity_score`; next speaker:
/// `next_speaker`): one object that satisfies both, saying "the user speaks next".
fn gemini_json_stub(path: &str) -> Response<Full<Bytes>> {
    let stub = json!({
        "complexity_reasoning": "fake", "complexity_score": 1,
        "reasoning": "fake", "next_speaker": "user",
    })
    .to_string();
    let body = json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": stub}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    });
    if path.contains(":streamGenerateContent") {
        let mut out = String::new();
        sse(&mut out, "", &body);
        sse_response(out)
    } else {
        json_response(StatusCode::OK, &body)
    }
}

// ---------------------------------------------------------------- chat completions

/// OpenAI-style chat completions as llama.cpp's server streams them: a role delta first, the
/// content in pieces, a chunk with `finish_reason`, a usage chunk when asked for
/// (`stream_options.include_usage`) and given, then `data: [DONE]`.
fn chat(
    request: &Value,
    review: &str,
    streaming: bool,
    prompt_tokens: u64,
    with_usage: bool,
) -> Response<Full<Bytes>> {
    let out_tokens = output_tokens(review);
    let usage = json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": prompt_tokens + out_tokens,
    });
    let chunk = |choices: Value| {
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
               "model": MODEL, "choices": choices})
    };
    if !streaming {
        let mut body = json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": review},
                         "finish_reason": "stop"}],
        });
        if with_usage {
            body["usage"] = usage;
        }
        return json_response(StatusCode::OK, &body);
    }
    let mut out = String::new();
    sse(
        &mut out,
        "",
        &chunk(json!([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}])),
    );
    for piece in chunks(review) {
        sse(
            &mut out,
            "",
            &chunk(json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}])),
        );
    }
    sse(
        &mut out,
        "",
        &chunk(json!([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
    );
    if with_usage && request["stream_options"]["include_usage"] == true {
        let mut last = chunk(json!([]));
        last["usage"] = usage;
        sse(&mut out, "", &last);
    }
    out.push_str("data: [DONE]\n\n");
    sse_response(out)
}
