//! Output readers: one CLI's captured stdout (a JSONL stream) turned into the whole review
//! text and the run's measurements.
//!
//! The reader is fed line by line while the agent runs, so live progress can show tool calls
//! and tokens, and it never fails: a line that is not JSON, or JSON of an unknown shape, is
//! skipped (CLIs add event types between versions).

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use crate::types::AgentKind;
use crate::types::TokenUsage;

/// What a finished run's output says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutput {
    /// The whole review text.
    pub text: String,
    pub tokens: Option<TokenUsage>,
    pub cost_usd: Option<f64>,
    /// The duration the CLI itself reported, when it reports one.
    pub duration_s: Option<f64>,
    pub tool_calls: BTreeMap<String, u64>,
    /// One sentence saying why the run failed, when the output says it failed.
    pub error: Option<String>,
    /// The HTTP status of the provider's error, when the output gives it as a number.
    pub http_status: Option<u16>,
    /// What the reader of the run should know about this output: a file the agent wrote that
    /// was not read, a number it reported that was refused.
    pub notes: Vec<String>,
}

/// Incremental reader of one agent's stdout.
#[derive(Debug)]
pub struct StreamReader {
    kind: AgentKind,
    /// Claude, Gemini: every assistant text block; Codex: every agent message.
    texts: Vec<String>,
    /// Gemini: a tool call happened since the last text, so the next text is a new block.
    gemini_new_block: bool,
    raw: String,
    tokens: Option<TokenUsage>,
    /// Claude: usage per assistant message id, for live token counts.
    claude_usage: BTreeMap<String, TokenUsage>,
    cost_usd: Option<f64>,
    duration_s: Option<f64>,
    tool_calls: BTreeMap<String, u64>,
    codex_items: HashSet<String>,
    /// A fatal error the stream reported.
    error: Option<String>,
    /// Non-fatal errors (Codex `error` items, Gemini warnings): the failure reason when the run
    /// produced nothing else.
    soft_errors: Vec<String>,
    /// Claude's `result` text, the fallback when no assistant text block was seen.
    result_text: Option<String>,
    /// The provider's HTTP status for a failure, when the stream gives it.
    http_status: Option<u16>,
    /// The tool most recently called, for progress events.
    last_tool: Option<String>,
}

impl StreamReader {
    pub fn new(kind: AgentKind) -> Self {
        StreamReader {
            kind,
            texts: Vec::new(),
            gemini_new_block: false,
            raw: String::new(),
            tokens: None,
            claude_usage: BTreeMap::new(),
            cost_usd: None,
            duration_s: None,
            tool_calls: BTreeMap::new(),
            codex_items: HashSet::new(),
            error: None,
            soft_errors: Vec::new(),
            result_text: None,
            http_status: None,
            last_tool: None,
        }
    }

    /// The tool most recently called.
    pub fn last_tool(&self) -> Option<&str> {
        self.last_tool.as_deref()
    }

    /// Feeds one line of stdout (with or without its newline).
    pub fn feed_line(&mut self, line: &str) {
        if !matches!(
            self.kind,
            AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini
        ) {
            self.raw.push_str(line);
            if !line.ends_with('\n') {
                self.raw.push('\n');
            }
            return;
        }
        let trimmed = line.trim();
        if !trimmed.starts_with('{') {
            return;
        }
        let Ok(event) = serde_json::from_str::<Value>(trimmed) else {
            return;
        };
        match self.kind {
            AgentKind::Claude => self.claude(&event),
            AgentKind::Codex => self.codex(&event),
            AgentKind::Gemini => self.gemini(&event),
            _ => {}
        }
    }

    /// Tool calls seen so far, by tool name.
    pub fn tool_calls(&self) -> &BTreeMap<String, u64> {
        &self.tool_calls
    }

    pub fn total_tool_calls(&self) -> u64 {
        self.tool_calls.values().sum()
    }

    /// Tokens known so far (input + output), for live progress.
    pub fn tokens_so_far(&self) -> Option<u64> {
        if let Some(t) = &self.tokens {
            return Some(t.input.saturating_add(t.output));
        }
        if self.claude_usage.is_empty() {
            return None;
        }
        Some(self.claude_usage.values().fold(0u64, |sum, t| {
            sum.saturating_add(t.input.saturating_add(t.output))
        }))
    }

    /// Ends the stream. `stderr` is the captured standard error (Gemini reports fatal errors
    /// there); `last_message` is the text the CLI wrote to its own last-message file, if any.
    pub fn finish(mut self, stderr: &str, last_message: Option<&str>) -> RunOutput {
        let mut text = match self.kind {
            AgentKind::Codex => self.texts.last().cloned().unwrap_or_default(),
            AgentKind::Claude | AgentKind::Gemini => join_blocks(&self.texts),
            _ => std::mem::take(&mut self.raw),
        };
        if text.trim().is_empty()
            && let Some(result) = &self.result_text
        {
            text = result.clone();
        }
        if text.trim().is_empty()
            && let Some(last) = last_message
        {
            text = last.to_string();
        }
        let mut error = self.error.clone();
        let mut http_status = self.http_status;
        if error.is_none()
            && self.kind == AgentKind::Gemini
            && let Some((message, code)) = gemini_stderr_error(stderr)
        {
            error = Some(message);
            http_status = http_status.or(code);
        }
        if error.is_none() && text.trim().is_empty() {
            error = self.soft_errors.last().cloned();
        }
        let tokens = self.tokens.clone().or_else(|| {
            if self.claude_usage.is_empty() {
                return None;
            }
            let mut sum = TokenUsage::default();
            for t in self.claude_usage.values() {
                sum.input = sum.input.saturating_add(t.input);
                sum.output = sum.output.saturating_add(t.output);
                sum.cached = sum.cached.saturating_add(t.cached);
            }
            Some(sum)
        });
        RunOutput {
            text,
            tokens,
            cost_usd: self.cost_usd,
            duration_s: self.duration_s,
            tool_calls: self.tool_calls,
            error,
            http_status,
            notes: Vec::new(),
        }
    }

    fn count_tool(&mut self, name: &str) {
        *self.tool_calls.entry(name.to_string()).or_insert(0) += 1;
        self.last_tool = Some(name.to_string());
    }

    fn claude(&mut self, event: &Value) {
        match str_at(event, "type") {
            // An API failure comes as a synthetic assistant message carrying `error`: its text
            // is the error, not part of the review.
            Some("assistant") if event.get("error").is_some_and(|e| !e.is_null()) => {
                let blocks = event["message"]["content"].as_array();
                let text = blocks
                    .into_iter()
                    .flatten()
                    .filter_map(|b| str_at(b, "text"))
                    .collect::<Vec<_>>()
                    .join(" ");
                let text = if text.trim().is_empty() {
                    str_at(event, "error").unwrap_or("API error").to_string()
                } else {
                    text
                };
                self.soft_errors.push(one_sentence(&text));
            }
            Some("assistant") => {
                let message = &event["message"];
                if let Some(blocks) = message["content"].as_array() {
                    for block in blocks {
                        match str_at(block, "type") {
                            Some("text") => {
                                if let Some(t) = str_at(block, "text") {
                                    self.texts.push(t.to_string());
                                }
                            }
                            Some("tool_use") => {
                                let name = str_at(block, "name").unwrap_or("unknown").to_string();
                                self.count_tool(&name);
                            }
                            _ => {}
                        }
                    }
                }
                if let Some(usage) = claude_usage(&message["usage"]) {
                    let id = str_at(message, "id").unwrap_or("").to_string();
                    self.claude_usage.insert(id, usage);
                }
            }
            Some("result") => {
                if let Some(usage) = claude_usage(&event["usage"]) {
                    self.tokens = Some(usage);
                }
                self.cost_usd = event["total_cost_usd"].as_f64().or(self.cost_usd);
                if let Some(ms) = event["duration_ms"].as_f64() {
                    self.duration_s = Some(ms / 1000.0);
                }
                let result = str_at(event, "result").map(str::to_string);
                let subtype = str_at(event, "subtype").unwrap_or("");
                let is_error = event["is_error"].as_bool().unwrap_or(false);
                if is_error || subtype.starts_with("error") {
                    let reason = match subtype {
                        "error_max_turns" => "it reached the --max-turns limit".to_string(),
                        _ => result
                            .as_deref()
                            .filter(|r| !r.trim().is_empty())
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("it ended with `{subtype}`")),
                    };
                    // The HTTP status, when the API gave one, decides whether a retry may help.
                    self.http_status = event["api_error_status"]
                        .as_u64()
                        .and_then(|s| u16::try_from(s).ok());
                    self.error = Some(one_sentence(&reason));
                } else {
                    self.result_text = result;
                }
            }
            _ => {}
        }
    }

    fn codex(&mut self, event: &Value) {
        match str_at(event, "type") {
            Some(kind @ ("item.started" | "item.updated" | "item.completed")) => {
                let item = &event["item"];
                let id = str_at(item, "id").unwrap_or("").to_string();
                match str_at(item, "type") {
                    Some("agent_message") if kind == "item.completed" => {
                        if let Some(t) = str_at(item, "text") {
                            self.texts.push(t.to_string());
                        }
                    }
                    Some("error") if kind == "item.completed" => {
                        if let Some(m) = str_at(item, "message") {
                            self.soft_errors.push(one_sentence(m));
                        }
                    }
                    Some(tool @ ("command_execution" | "file_change" | "web_search"))
                        if self.codex_items.insert(id.clone()) =>
                    {
                        self.count_tool(tool);
                    }
                    Some("mcp_tool_call") if self.codex_items.insert(id.clone()) => {
                        let name = str_at(item, "tool").unwrap_or("mcp_tool_call");
                        let name = match str_at(item, "server") {
                            Some(server) => format!("{server}.{name}"),
                            None => name.to_string(),
                        };
                        self.count_tool(&name);
                    }
                    _ => {}
                }
            }
            Some("turn.completed") => {
                let u = &event["usage"];
                let add = TokenUsage {
                    input: u["input_tokens"].as_u64().unwrap_or(0),
                    output: u["output_tokens"].as_u64().unwrap_or(0),
                    cached: u["cached_input_tokens"].as_u64().unwrap_or(0),
                    estimated: false,
                };
                let t = self.tokens.get_or_insert_with(TokenUsage::default);
                // Saturating: a stream's counts are the agent's word, and may be absurd
                // (`numbers` refuses them; they must not overflow first).
                t.input = t.input.saturating_add(add.input);
                t.output = t.output.saturating_add(add.output);
                t.cached = t.cached.saturating_add(add.cached);
            }
            Some("turn.failed") => {
                let msg = str_at(&event["error"], "message").unwrap_or("the turn failed");
                self.error = Some(one_sentence(msg));
            }
            Some("error") => {
                if let Some(m) = str_at(event, "message") {
                    self.error = Some(one_sentence(m));
                }
            }
            _ => {}
        }
    }

    fn gemini(&mut self, event: &Value) {
        match str_at(event, "type") {
            Some("message") if str_at(event, "role") == Some("assistant") => {
                let content = str_at(event, "content").unwrap_or("");
                let delta = event["delta"].as_bool().unwrap_or(false);
                match self.texts.last_mut() {
                    Some(last) if delta && !self.gemini_new_block => last.push_str(content),
                    _ => self.texts.push(content.to_string()),
                }
                self.gemini_new_block = !delta;
            }
            Some("tool_use") => {
                let name = str_at(event, "tool_name").unwrap_or("unknown").to_string();
                self.count_tool(&name);
                self.gemini_new_block = true;
            }
            Some("error") => {
                if let Some(m) = str_at(event, "message") {
                    self.soft_errors.push(one_sentence(m));
                }
            }
            Some("result") => {
                let stats = &event["stats"];
                if stats.is_object() {
                    let input = stats["input_tokens"].as_u64().or(stats["input"].as_u64());
                    let output = stats["output_tokens"].as_u64();
                    if input.is_some() || output.is_some() {
                        self.tokens = Some(TokenUsage {
                            input: input.unwrap_or(0),
                            output: output.unwrap_or(0),
                            cached: stats["cached"].as_u64().unwrap_or(0),
                            estimated: false,
                        });
                    }
                    if let Some(ms) = stats["duration_ms"].as_f64() {
                        self.duration_s = Some(ms / 1000.0);
                    }
                }
                if str_at(event, "status") == Some("error") {
                    let msg = str_at(&event["error"], "message").unwrap_or("the run failed");
                    self.error = Some(one_sentence(msg));
                }
            }
            // `-o json` (one object) if extra args switch the format back.
            None if event.get("response").is_some() || event.get("error").is_some() => {
                if let Some(r) = str_at(event, "response") {
                    self.texts.push(r.to_string());
                }
                if let Some(m) = str_at(&event["error"], "message") {
                    self.error = Some(one_sentence(m));
                }
            }
            _ => {}
        }
    }
}

/// Reads a whole captured stdout at once.
pub fn read_output(
    kind: AgentKind,
    stdout: &str,
    stderr: &str,
    last_message: Option<&str>,
) -> RunOutput {
    let mut reader = StreamReader::new(kind);
    for line in stdout.split_inclusive('\n') {
        reader.feed_line(line);
    }
    reader.finish(stderr, last_message)
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Claude usage: input counts every prompt token, cached ones included.
fn claude_usage(u: &Value) -> Option<TokenUsage> {
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let cached = n("cache_read_input_tokens");
    Some(TokenUsage {
        input: n("input_tokens")
            .saturating_add(n("cache_creation_input_tokens"))
            .saturating_add(cached),
        output: n("output_tokens"),
        cached,
        estimated: false,
    })
}

fn join_blocks(blocks: &[String]) -> String {
    blocks
        .iter()
        .map(|b| b.trim_matches('\n'))
        .filter(|b| !b.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Gemini writes fatal errors to stderr as `{"error":{"type","message","code"}}`, possibly
/// pretty-printed and after other log lines: the message, and the code when it is an HTTP
/// status.
fn gemini_stderr_error(stderr: &str) -> Option<(String, Option<u16>)> {
    let mut rest = stderr;
    while let Some(start) = rest.find('{') {
        let candidate = &rest[start..];
        let mut stream = serde_json::Deserializer::from_str(candidate).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next() {
            if let Some(msg) = str_at(&value["error"], "message") {
                let code = value["error"]["code"].as_i64();
                let status = code
                    .filter(|c| (400..600).contains(c))
                    .and_then(|c| u16::try_from(c).ok());
                let code = code.map(|c| format!(" (code {c})")).unwrap_or_default();
                return Some((one_sentence(&format!("{msg}{code}")), status));
            }
            let used = stream.byte_offset().max(1);
            rest = &candidate[used..];
        } else {
            rest = &candidate[1..];
        }
    }
    None
}

/// The first line of a message, shortened, as one sentence for a report table.
pub fn one_sentence(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    const MAX: usize = 240;
    if line.chars().count() > MAX {
        let cut: String = line.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE_OK: &str = r###"{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read","Grep"],"model":"claude-opus-4-6"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"## Summary\nLooks fine."}],"usage":{"input_tokens":10,"output_tokens":5}}}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/a.rs"}}],"usage":{"input_tokens":10,"output_tokens":9}}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fn a() {}"}]}}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"a"}},{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/w/b.rs"}}],"usage":{"input_tokens":20,"output_tokens":4}}}
{"type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"text","text":"## Findings\n1. **Bug** — `a.rs:1`"}],"usage":{"input_tokens":30,"output_tokens":40}}}
{"type":"result","subtype":"success","is_error":false,"result":"## Findings\n1. **Bug** — `a.rs:1`","duration_ms":4200,"num_turns":3,"total_cost_usd":0.0123,"usage":{"input_tokens":60,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":53},"permission_denials":[]}
"###;

    #[test]
    fn claude_joins_every_text_block_and_counts_tools() {
        let out = read_output(AgentKind::Claude, CLAUDE_OK, "", None);
        assert_eq!(
            out.text,
            "## Summary\nLooks fine.\n\n## Findings\n1. **Bug** — `a.rs:1`"
        );
        assert_eq!(out.tool_calls.get("Read"), Some(&2));
        assert_eq!(out.tool_calls.get("Grep"), Some(&1));
        assert_eq!(out.cost_usd, Some(0.0123));
        assert_eq!(out.duration_s, Some(4.2));
        assert_eq!(
            out.tokens,
            Some(TokenUsage {
                input: 165,
                output: 53,
                cached: 100,
                estimated: false,
            })
        );
        assert_eq!(out.error, None);
    }

    #[test]
    fn claude_live_tokens_count_each_message_once() {
        let mut r = StreamReader::new(AgentKind::Claude);
        for line in CLAUDE_OK.lines().take(5) {
            r.feed_line(line);
        }
        // m1 (last usage 10+9) + m2 (20+4)
        assert_eq!(r.tokens_so_far(), Some(43));
        assert_eq!(r.total_tool_calls(), 3);
    }

    #[test]
    fn claude_is_error_with_exit_success_subtype_is_a_failure() {
        let out = read_output(
            AgentKind::Claude,
            r###"{"type":"result","subtype":"success","is_error":true,"result":"API Error: Connection error.\nretrying","duration_ms":10}"###,
            "",
            None,
        );
        assert_eq!(out.error.as_deref(), Some("API Error: Connection error."));
        assert_eq!(out.text, "");
        let out = read_output(
            AgentKind::Claude,
            r###"{"type":"result","subtype":"error_max_turns","is_error":false,"duration_ms":10}"###,
            "",
            None,
        );
        assert_eq!(
            out.error.as_deref(),
            Some("it reached the --max-turns limit")
        );
    }

    /// As Claude Code 2.1.197 printed it with no server to talk to (ids shortened).
    const CLAUDE_API_DOWN: &str = r###"{"type":"system","subtype":"init","session_id":"s","tools":["Bash","Glob","Grep","Read"],"permissionMode":"dontAsk"}
{"type":"assistant","message":{"id":"77a6","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","type":"message","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"API Error: Unable to connect to API (ConnectionRefused)"}]},"parent_tool_use_id":null,"session_id":"s","error":"server_error"}
{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"duration_ms":96,"num_turns":1,"result":"API Error: Unable to connect to API (ConnectionRefused)","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0},"permission_denials":[]}
"###;

    #[test]
    fn claude_api_error_text_is_not_review_text() {
        let out = read_output(AgentKind::Claude, CLAUDE_API_DOWN, "", None);
        assert_eq!(out.text, "");
        assert_eq!(
            out.error.as_deref(),
            Some("API Error: Unable to connect to API (ConnectionRefused)")
        );
        let limited = CLAUDE_API_DOWN
            .replace(
                "Unable to connect to API (ConnectionRefused)",
                "Rate limited",
            )
            .replace("\"api_error_status\":null", "\"api_error_status\":429");
        let out = read_output(AgentKind::Claude, &limited, "", None);
        assert_eq!(out.error.as_deref(), Some("API Error: Rate limited"));
        assert_eq!(out.http_status, Some(429));
    }

    #[test]
    fn claude_result_text_is_the_fallback_when_no_text_block_streamed() {
        let out = read_output(
            AgentKind::Claude,
            r###"{"type":"result","subtype":"success","is_error":false,"result":"Only here"}"###,
            "",
            None,
        );
        assert_eq!(out.text, "Only here");
    }

    const CODEX_OK: &str = r###"{"type":"thread.started","thread_id":"t-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"Looking at the diff"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'git diff abc'","aggregated_output":"","status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'git diff abc'","aggregated_output":"diff --git","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"I will read the files."}}
{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"rg foo","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"## Summary\nAll good."}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":300,"reasoning_output_tokens":100}}
"###;

    #[test]
    fn codex_takes_the_last_agent_message() {
        let out = read_output(AgentKind::Codex, CODEX_OK, "", Some("from -o"));
        assert_eq!(out.text, "## Summary\nAll good.");
        assert_eq!(out.tool_calls.get("command_execution"), Some(&2));
        assert_eq!(
            out.tokens,
            Some(TokenUsage {
                input: 1200,
                output: 300,
                cached: 1000,
                estimated: false,
            })
        );
        assert_eq!(out.cost_usd, None);
        assert_eq!(out.duration_s, None);
        assert_eq!(out.error, None);
    }

    #[test]
    fn codex_falls_back_to_the_last_message_file() {
        let out = read_output(
            AgentKind::Codex,
            "{\"type\":\"turn.started\"}\n",
            "",
            Some("file text"),
        );
        assert_eq!(out.text, "file text");
    }

    #[test]
    fn codex_turn_failed_is_the_error() {
        let stream = r###"{"type":"turn.started"}
{"type":"error","message":"stream error: unexpected status 429 Too Many Requests; retrying"}
{"type":"turn.failed","error":{"message":"unexpected status 429 Too Many Requests: rate limit"}}
"###;
        let out = read_output(AgentKind::Codex, stream, "", None);
        assert_eq!(
            out.error.as_deref(),
            Some("unexpected status 429 Too Many Requests: rate limit")
        );
    }

    #[test]
    fn codex_error_item_explains_an_empty_run() {
        let stream = r###"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"model not found: gpt-9"}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":0}}
"###;
        let out = read_output(AgentKind::Codex, stream, "", None);
        assert_eq!(out.text, "");
        assert_eq!(out.error.as_deref(), Some("model not found: gpt-9"));
    }

    const GEMINI_OK: &str = r###"{"type":"init","timestamp":"2026-12-02T10:00:00Z","session_id":"g1","model":"gemini-2.5-pro"}
{"type":"message","timestamp":"2026-12-02T10:00:00Z","role":"user","content":"Review this"}
{"type":"message","timestamp":"2026-12-02T10:00:01Z","role":"assistant","content":"Let me ","delta":true}
{"type":"message","timestamp":"2026-12-02T10:00:01Z","role":"assistant","content":"look.","delta":true}
{"type":"tool_use","timestamp":"2026-12-02T10:00:02Z","tool_name":"read_file","tool_id":"r1","parameters":{"absolute_path":"/w/a.rs"}}
{"type":"tool_result","timestamp":"2026-12-02T10:00:02Z","tool_id":"r1","status":"success","output":"fn a() {}"}
{"type":"tool_use","timestamp":"2026-12-02T10:00:03Z","tool_name":"search_file_content","tool_id":"r2","parameters":{"pattern":"a"}}
{"type":"message","timestamp":"2026-12-02T10:00:04Z","role":"assistant","content":"## Summary\n","delta":true}
{"type":"message","timestamp":"2026-12-02T10:00:04Z","role":"assistant","content":"Fine.","delta":true}
{"type":"result","timestamp":"2026-12-02T10:00:05Z","status":"success","stats":{"total_tokens":700,"input_tokens":500,"output_tokens":200,"cached":50,"duration_ms":5000,"tool_calls":2}}
"###;

    #[test]
    fn gemini_joins_deltas_into_blocks_split_at_tool_calls() {
        let out = read_output(AgentKind::Gemini, GEMINI_OK, "", None);
        assert_eq!(out.text, "Let me look.\n\n## Summary\nFine.");
        assert_eq!(out.tool_calls.get("read_file"), Some(&1));
        assert_eq!(out.tool_calls.get("search_file_content"), Some(&1));
        assert_eq!(
            out.tokens,
            Some(TokenUsage {
                input: 500,
                output: 200,
                cached: 50,
                estimated: false,
            })
        );
        assert_eq!(out.duration_s, Some(5.0));
    }

    #[test]
    fn gemini_error_on_stderr_is_found_after_log_lines() {
        let stderr = "Loaded cached credentials.\n{\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"[API Error: got status: 429 Too Many Requests.]\",\n    \"code\": 1\n  }\n}\n";
        let out = read_output(AgentKind::Gemini, "", stderr, None);
        assert_eq!(
            out.error.as_deref(),
            Some("[API Error: got status: 429 Too Many Requests.] (code 1)")
        );
    }

    #[test]
    fn gemini_result_error_status() {
        let out = read_output(
            AgentKind::Gemini,
            r###"{"type":"result","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns"},"stats":{"duration_ms":10}}"###,
            "",
            None,
        );
        assert_eq!(out.error.as_deref(), Some("Reached max session turns"));
    }

    #[test]
    fn junk_lines_are_skipped_and_generic_keeps_raw_stdout() {
        let out = read_output(AgentKind::Claude, "not json\n{broken\n", "", None);
        assert_eq!(out, RunOutput::default());
        let out = read_output(AgentKind::Generic, "line one\nline two", "", None);
        assert_eq!(out.text, "line one\nline two\n");
    }

    #[test]
    fn one_sentence_takes_the_first_line_and_shortens() {
        assert_eq!(one_sentence("\n  first  \nsecond"), "first");
        let long = "x".repeat(500);
        assert_eq!(one_sentence(&long).chars().count(), 241);
    }
}
