//! Reading a model API's answer: the events of its stream (or a whole JSON body, from a server
//! that ignored `stream: true`) into the review text, the token usage and the error it reported.
//!
//! Unknown event types are skipped (APIs add them between versions); an event whose data is not
//! JSON is a malformed stream and ends the read with what was received so far.

use serde_json::Value;

use crate::types::{AgentKind, TokenUsage};

/// An error the API reported inside a successful response.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status it stands for, when the error names one (`overloaded_error` is 529).
    pub status: Option<u16>,
    pub message: String,
}

/// What a stream said, so far or in all.
#[derive(Debug, Default)]
pub struct Decoder {
    kind: Option<AgentKind>,
    text: String,
    input: Option<u64>,
    output: Option<u64>,
    cached: u64,
    /// The API said the answer is complete (`message_stop`, `[DONE]`, a finish reason).
    pub finished: bool,
    /// Why it stopped, when that is worth a word (`max_tokens`: the answer was cut short).
    pub stop_reason: Option<String>,
    pub error: Option<ApiError>,
    /// Responses: the text of completed output items, the fallback when no deltas came.
    item_texts: Vec<String>,
}

impl Decoder {
    pub fn new(kind: AgentKind) -> Decoder {
        Decoder {
            kind: Some(kind),
            ..Decoder::default()
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Tokens the API reported: `None` until it reports any.
    pub fn reported_usage(&self) -> Option<TokenUsage> {
        if self.input.is_none() && self.output.is_none() {
            return None;
        }
        Some(TokenUsage {
            input: self.input.unwrap_or(0),
            output: self.output.unwrap_or(0),
            cached: self.cached,
            estimated: self.input.is_none() || self.output.is_none(),
        })
    }

    /// The usage to record: the API's numbers where it gave them, else `prompt_bytes` and the
    /// text so far at four bytes a token, marked estimated.
    pub fn usage(&self, prompt_bytes: usize) -> TokenUsage {
        let est = |bytes: usize| crate::types::brief::estimate_tokens(bytes) as u64;
        TokenUsage {
            input: self.input.unwrap_or_else(|| est(prompt_bytes)),
            output: self.output.unwrap_or_else(|| est(self.text.len())),
            cached: self.cached,
            estimated: self.input.is_none() || self.output.is_none(),
        }
    }

    /// One SSE event. `Err` for data that is not JSON: the stream is malformed.
    pub fn event(&mut self, name: &str, data: &str) -> Result<(), String> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.finished = true;
            return Ok(());
        }
        let value: Value = serde_json::from_str(data).map_err(|_| {
            let shown: String = data.chars().take(60).collect();
            format!("the server sent a malformed stream: an event's data is not JSON (`{shown}`)")
        })?;
        self.value(name, &value);
        Ok(())
    }

    /// A whole JSON body (a server that does not stream), or one event's data.
    pub fn body(&mut self, value: &Value) {
        match value {
            // Gemini without `alt=sse` answers with an array of chunks.
            Value::Array(items) => {
                for item in items {
                    self.value("", item);
                }
            }
            other => self.value("", other),
        }
        if self.error.is_none() {
            self.finished = true;
        }
    }

    fn value(&mut self, name: &str, v: &Value) {
        if let Some(err) = error_of(v) {
            self.error = Some(err);
            return;
        }
        match self.kind {
            Some(AgentKind::Anthropic) => self.anthropic(name, v),
            Some(AgentKind::OpenAi) => self.responses(v),
            Some(AgentKind::GeminiApi) => self.gemini(v),
            _ => self.chat(v),
        }
    }

    fn anthropic(&mut self, name: &str, v: &Value) {
        let kind = v["type"].as_str().unwrap_or(name);
        match kind {
            "message_start" => self.anthropic_usage(&v["message"]["usage"]),
            "content_block_delta" => {
                if v["delta"]["type"] == "text_delta"
                    && let Some(t) = v["delta"]["text"].as_str()
                {
                    self.text.push_str(t);
                }
            }
            "message_delta" => {
                self.anthropic_usage(&v["usage"]);
                self.anthropic_stop(v["delta"]["stop_reason"].as_str());
            }
            "message_stop" => self.finished = true,
            // A whole message (no stream).
            "message" => {
                for block in v["content"].as_array().into_iter().flatten() {
                    if let Some(t) = block["text"].as_str() {
                        self.text.push_str(t);
                    }
                }
                self.anthropic_usage(&v["usage"]);
                self.anthropic_stop(v["stop_reason"].as_str());
                self.finished = true;
            }
            _ => {}
        }
    }

    /// A stop worth a word: not the normal end of a turn.
    fn anthropic_stop(&mut self, reason: Option<&str>) {
        if let Some(r) = reason.filter(|r| !matches!(*r, "end_turn" | "stop_sequence")) {
            self.stop_reason = Some(r.to_string());
        }
    }

    /// Anthropic input counts the cached part separately: all of it is prompt.
    fn anthropic_usage(&mut self, u: &Value) {
        if !u.is_object() {
            return;
        }
        let n = |k: &str| u[k].as_u64();
        if let Some(input) = n("input_tokens") {
            let cached = n("cache_read_input_tokens").unwrap_or(0);
            // Saturating: the server's counts may be absurd (`dispatch::numbers` refuses them).
            self.input = Some(
                input
                    .saturating_add(n("cache_creation_input_tokens").unwrap_or(0))
                    .saturating_add(cached),
            );
            self.cached = cached;
        }
        if let Some(out) = n("output_tokens") {
            self.output = Some(out);
        }
    }

    fn responses(&mut self, v: &Value) {
        match v["type"].as_str().unwrap_or("") {
            "response.output_text.delta" => {
                if let Some(d) = v["delta"].as_str() {
                    self.text.push_str(d);
                }
            }
            "response.output_item.done" => self.responses_item(&v["item"]),
            "response.completed" | "response.incomplete" => {
                let r = &v["response"];
                self.responses_usage(&r["usage"]);
                if r["status"] == "incomplete" {
                    self.stop_reason = r["incomplete_details"]["reason"]
                        .as_str()
                        .map(str::to_string)
                        .or(Some("incomplete".into()));
                }
                if self.text.is_empty() {
                    for item in r["output"].as_array().into_iter().flatten() {
                        self.responses_item(item);
                    }
                }
                self.finish_items();
                self.finished = true;
            }
            "response.failed" => {
                let e = &v["response"]["error"];
                self.error = Some(ApiError {
                    status: None,
                    message: e["message"]
                        .as_str()
                        .unwrap_or("the response failed")
                        .to_string(),
                });
            }
            // A whole response (no stream).
            "" if v["object"] == "response" => {
                for item in v["output"].as_array().into_iter().flatten() {
                    self.responses_item(item);
                }
                self.responses_usage(&v["usage"]);
                self.finish_items();
            }
            _ => {}
        }
    }

    fn responses_item(&mut self, item: &Value) {
        if item["type"] != "message" {
            return;
        }
        let text: String = item["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "output_text")
            .filter_map(|c| c["text"].as_str())
            .collect();
        if !text.is_empty() {
            self.item_texts.push(text);
        }
    }

    fn finish_items(&mut self) {
        if self.text.is_empty() && !self.item_texts.is_empty() {
            self.text = self.item_texts.join("\n\n");
        }
    }

    fn responses_usage(&mut self, u: &Value) {
        if let Some(i) = u["input_tokens"].as_u64() {
            self.input = Some(i);
        }
        if let Some(o) = u["output_tokens"].as_u64() {
            self.output = Some(o);
        }
        if let Some(c) = u["input_tokens_details"]["cached_tokens"].as_u64() {
            self.cached = c;
        }
    }

    fn gemini(&mut self, v: &Value) {
        if let Some(c) = v["candidates"].get(0) {
            for part in c["content"]["parts"].as_array().into_iter().flatten() {
                if part["thought"].as_bool() == Some(true) {
                    continue;
                }
                if let Some(t) = part["text"].as_str() {
                    self.text.push_str(t);
                }
            }
            if let Some(r) = c["finishReason"].as_str() {
                if r != "STOP" {
                    self.stop_reason = Some(r.to_string());
                }
                self.finished = true;
            }
        }
        let u = &v["usageMetadata"];
        if let Some(p) = u["promptTokenCount"].as_u64() {
            self.input = Some(p);
        }
        if u["candidatesTokenCount"].is_u64() || u["thoughtsTokenCount"].is_u64() {
            self.output = Some(
                u["candidatesTokenCount"]
                    .as_u64()
                    .unwrap_or(0)
                    .saturating_add(u["thoughtsTokenCount"].as_u64().unwrap_or(0)),
            );
        }
        if let Some(c) = u["cachedContentTokenCount"].as_u64() {
            self.cached = c;
        }
    }

    fn chat(&mut self, v: &Value) {
        if let Some(choice) = v["choices"].get(0) {
            // A chunk's delta, or a whole message (no stream).
            for holder in [&choice["delta"], &choice["message"]] {
                if let Some(t) = holder["content"].as_str() {
                    self.text.push_str(t);
                }
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                if r != "stop" {
                    self.stop_reason = Some(r.to_string());
                }
                self.finished = true;
            }
        }
        let u = &v["usage"];
        if let Some(p) = u["prompt_tokens"].as_u64() {
            self.input = Some(p);
        }
        if let Some(c) = u["completion_tokens"].as_u64() {
            self.output = Some(c);
        }
        if let Some(c) = u["prompt_tokens_details"]["cached_tokens"].as_u64() {
            self.cached = c;
        }
    }
}

/// An error object in a body or event: `{"error": {...}}` (OpenAI, Gemini, most servers),
/// `{"type": "error", "error": {...}}` (Anthropic), or `{"type": "error", "message": ...}`
/// (Responses' stream).
pub fn error_of(v: &Value) -> Option<ApiError> {
    let e = match (&v["error"], v["type"].as_str()) {
        (e, _) if e.is_object() => e,
        (Value::String(s), _) => {
            return Some(ApiError {
                status: None,
                message: s.clone(),
            });
        }
        (_, Some("error")) => v,
        _ => return None,
    };
    let message = e["message"]
        .as_str()
        .or_else(|| e["type"].as_str())
        .unwrap_or("the API reported an error")
        .to_string();
    let status = e["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..600).contains(c))
        .or_else(|| match e["type"].as_str().or(e["status"].as_str()) {
            Some("overloaded_error") => Some(529),
            Some("rate_limit_error" | "rate_limit_exceeded" | "RESOURCE_EXHAUSTED") => Some(429),
            Some("api_error" | "server_error" | "INTERNAL") => Some(500),
            Some("UNAVAILABLE") => Some(503),
            _ => None,
        });
    Some(ApiError { status, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(kind: AgentKind, events: &[(&str, &str)]) -> Decoder {
        let mut d = Decoder::new(kind);
        for (name, data) in events {
            d.event(name, data).unwrap();
        }
        d
    }

    #[test]
    fn anthropic_stream_gives_text_and_usage() {
        let d = feed(
            AgentKind::Anthropic,
            &[
                (
                    "message_start",
                    r#"{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}"#,
                ),
                ("ping", r#"{"type":"ping"}"#),
                (
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
                ),
                (
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
                ),
                (
                    "message_delta",
                    r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#,
                ),
                ("message_stop", r#"{"type":"message_stop"}"#),
            ],
        );
        assert_eq!(d.text(), "Hello");
        assert!(d.finished);
        let u = d.reported_usage().unwrap();
        assert_eq!(
            (u.input, u.output, u.cached, u.estimated),
            (15, 7, 5, false)
        );
    }

    #[test]
    fn responses_stream_and_its_fallback_to_the_completed_output() {
        let d = feed(
            AgentKind::OpenAi,
            &[
                (
                    "response.output_text.delta",
                    r#"{"type":"response.output_text.delta","delta":"Hi"}"#,
                ),
                (
                    "response.completed",
                    r#"{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}"#,
                ),
            ],
        );
        assert_eq!(d.text(), "Hi");
        assert_eq!(d.reported_usage().unwrap().output, 2);
        // A minimal server: no deltas, only the completed item.
        let d = feed(
            AgentKind::OpenAi,
            &[
                (
                    "",
                    r#"{"type":"response.output_item.done","item":{"type":"message","content":[{"type":"output_text","text":"whole"}]}}"#,
                ),
                (
                    "",
                    r#"{"type":"response.completed","response":{"status":"completed"}}"#,
                ),
            ],
        );
        assert_eq!(d.text(), "whole");
    }

    #[test]
    fn gemini_and_chat_streams() {
        let d = feed(
            AgentKind::GeminiApi,
            &[
                (
                    "",
                    r#"{"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"A"}]}}]}"#,
                ),
                (
                    "",
                    r#"{"candidates":[{"content":{"parts":[{"text":"B"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2,"thoughtsTokenCount":3}}"#,
                ),
            ],
        );
        assert_eq!(d.text(), "AB");
        assert_eq!(d.reported_usage().unwrap().output, 5);
        // llama.cpp: no usage in the stream.
        let d = feed(
            AgentKind::OpenAiCompatible,
            &[
                ("", r#"{"choices":[{"delta":{"role":"assistant"}}]}"#),
                ("", r#"{"choices":[{"delta":{"content":"x y"}}]}"#),
                ("", r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#),
                ("", "[DONE]"),
            ],
        );
        assert_eq!(d.text(), "x y");
        assert!(d.reported_usage().is_none());
        let u = d.usage(400);
        assert_eq!((u.input, u.output, u.estimated), (100, 1, true));
        assert_eq!(d.stop_reason.as_deref(), Some("length"));
    }

    #[test]
    fn malformed_data_and_error_events() {
        let mut d = Decoder::new(AgentKind::Anthropic);
        let err = d
            .event("message_start", "{\"type\":\"message_start\",oops")
            .unwrap_err();
        assert!(err.contains("malformed"), "{err}");
        let d = feed(
            AgentKind::Anthropic,
            &[(
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )],
        );
        assert_eq!(
            d.error,
            Some(ApiError {
                status: Some(529),
                message: "Overloaded".into()
            })
        );
        let e = error_of(&serde_json::json!({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}})).unwrap();
        assert_eq!(e.status, Some(429));
    }
}
