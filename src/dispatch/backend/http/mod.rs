//! The HTTP backend: a reviewer that is a model API (`kind = "anthropic"`, `"openai"`,
//! `"gemini"` or `"openai-compatible"`).
//!
//! A model behind an API cannot read the repository, so it gets the packed prompt
//! (`brief::pack`, made by the pipeline for its context budget) instead of the brief the CLIs
//! get. One attempt is one streamed request: the raw stream goes to the bundle as it arrives
//! (`stdout.jsonl`, as for a CLI), the text and the token usage are read from its events
//! ([`stream`]), and what it has spent so far is reported to the run's cost meter, which may
//! stop it at the budget. Failures are typed for the supervisor, which retries: HTTP 429 is
//! [`Failure::RateLimited`] with the server's `retry-after`, other statuses
//! [`Failure::Http`] (5xx and 529 transient), a broken connection [`Failure::Network`].
//!
//! The key is read from the environment when the reviewer is prepared and sent only in its
//! header: `command.txt` names the variable, never the value.

pub mod api;
pub mod schema;
pub mod stream;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::{Attempt, AttemptRequest, Backend, BoxFuture, Session, Shared};
use crate::bundle;
use crate::cost::Priced;
use crate::dispatch::budget::CostMeter;
use crate::dispatch::events::EventKind;
use crate::dispatch::output::{RunOutput, one_sentence};
use crate::types::{AgentSpec, Failure};
use api::ApiRequest;
use stream::Decoder;

/// Installs rustls' `ring` provider as the process default, once; later calls do nothing.
/// Every HTTP client of deep-review uses it (one provider only: two make rustls panic).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// How long connecting may take before the attempt counts as a network failure.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of an error response is read for its message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// Tokens and cost are reported this often while a stream runs (every N events).
const REPORT_EVERY: u64 = 16;

/// Runs reviewers that are model APIs.
pub struct HttpBackend;

impl Backend for HttpBackend {
    fn prepare<'a>(
        &'a self,
        shared: &'a Shared,
        spec: &'a AgentSpec,
        dir_name: &'a str,
    ) -> BoxFuture<'a, Result<Box<dyn Session>, Failure>> {
        Box::pin(async move {
            let could_not = |reason: String| Failure::CouldNotStart { reason };
            let kind = spec.kind.config_name();
            let base = spec
                .http
                .base_url
                .clone()
                .or_else(|| spec.kind.default_base_url().map(str::to_string))
                .ok_or_else(|| {
                    could_not(format!(
                        "`{kind}` agent {} has no `base_url`: give the server's address in your \
                         config",
                        spec.name
                    ))
                })?;
            if spec.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                return Err(could_not(format!(
                    "`{kind}` agent {} has no `model`: name the model in your config",
                    spec.name
                )));
            }
            let key_env = spec
                .http
                .api_key_env
                .clone()
                .or_else(|| spec.kind.default_key_env().map(str::to_string));
            let key = match &key_env {
                None => None,
                Some(var) => match std::env::var(var) {
                    Ok(value) if !value.trim().is_empty() => Some(value.trim().to_string()),
                    _ => {
                        return Err(could_not(format!(
                            "`{var}` is not set: export the API key in it{}",
                            if spec.http.api_key_env.is_some() {
                                String::new()
                            } else {
                                ", or name another variable with `api_key_env` in your config"
                                    .to_string()
                            }
                        )));
                    }
                },
            };
            install_crypto_provider();
            let client = reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                .map_err(|e| could_not(format!("could not make an HTTP client: {e}")))?;
            let prompt = shared.prompt_for(spec);
            let request = api::request(spec, &base, key.as_deref(), &prompt);
            // The prompt exactly as sent, beside the agent's other files.
            let agent_dir = bundle::agent_dir(&shared.bundle_dir, dir_name);
            let shown = crate::redact::redact(&prompt);
            std::fs::write(agent_dir.join(bundle::PROMPT_FILE), shown.as_bytes()).map_err(|e| {
                could_not(format!(
                    "could not write {}: {e}",
                    agent_dir.join(bundle::PROMPT_FILE).display()
                ))
            })?;
            let describe = describe(spec, &request, key_env.as_deref(), key.is_some());
            Ok(Box::new(HttpSession {
                client,
                request,
                prompt_bytes: prompt.len(),
                describe,
                priced: shared.prices.for_agent(spec),
                meter: Arc::clone(&shared.meter),
                meter_key: shared.meter_key(spec),
            }) as Box<dyn Session>)
        })
    }
}

/// `POST URL (model M, ...)`: what `command.txt` records, without the key.
fn describe(spec: &AgentSpec, r: &ApiRequest, key_env: Option<&str>, has_key: bool) -> String {
    let mut parts = vec![
        format!("model {}", spec.model.as_deref().unwrap_or("")),
        format!("max output {} tokens", spec.max_output_tokens()),
    ];
    if let Some(t) = spec.http.temperature {
        parts.push(
            if r.body.get("temperature").is_some()
                || spec.kind != crate::types::AgentKind::Anthropic
            {
                format!("temperature {t}")
            } else {
                format!("temperature {t} not sent (the Messages API has none)")
            },
        );
    }
    if let Some(e) = &spec.effort {
        parts.push(format!("effort {e}"));
    }
    parts.push(if r.structured {
        "structured output: the raw-review schema".into()
    } else {
        "structured output: none (Markdown layout)".into()
    });
    parts.push(match (key_env, has_key) {
        (Some(var), true) => format!("key from ${var}"),
        _ => "no key".into(),
    });
    crate::redact::redact(&format!(
        "POST {} ({}; {})",
        r.url,
        spec.kind.config_name(),
        parts.join(", ")
    ))
    .into_owned()
}

/// One model API reviewer, ready to send its request.
struct HttpSession {
    client: reqwest::Client,
    request: ApiRequest,
    prompt_bytes: usize,
    describe: String,
    priced: Option<Priced>,
    meter: Arc<CostMeter>,
    meter_key: String,
}

impl Session for HttpSession {
    fn describe(&self) -> String {
        self.describe.clone()
    }

    fn sandbox(&self) -> String {
        "none needed: a model API (no local process, no checkout)".to_string()
    }

    fn attempt<'a>(&'a mut self, request: AttemptRequest<'a>) -> BoxFuture<'a, Attempt> {
        Box::pin(self.run(request))
    }

    fn close(self: Box<Self>) -> BoxFuture<'static, Vec<String>> {
        Box::pin(async { Vec::new() })
    }
}

/// Why reading the body stopped early.
enum Stop {
    Transport(reqwest::Error),
    OverLimit,
}

impl HttpSession {
    async fn run(&mut self, request: AttemptRequest<'_>) -> Attempt {
        let AttemptRequest {
            shared,
            spec,
            agent_dir,
            deadline,
        } = request;
        let started = Instant::now();
        if shared.cancel.is_cancelled() {
            return Attempt::not_run(Failure::Cancelled);
        }
        if self.meter.tripped().is_cancelled() {
            return Attempt::not_run(self.meter.stop(&self.meter_key));
        }
        let raw_path = agent_dir.join(bundle::STDOUT_FILE);
        let mut raw = match std::fs::File::create(&raw_path) {
            Ok(f) => f,
            Err(err) => {
                return Attempt::not_run(Failure::CouldNotStart {
                    reason: format!("could not create {}: {err}", raw_path.display()),
                });
            }
        };
        // The request's own limit, when config sets one, inside the agent's deadline.
        let request_deadline = spec
            .http
            .request_timeout
            .map(|t| Instant::from_std(crate::text::deadline(started.into_std(), t)));
        let stop_at = match request_deadline {
            Some(r) if r < deadline => r,
            _ => deadline,
        };
        let mut decoder = Decoder::new(spec.kind);
        let mut output_cut = None;
        let meter = Arc::clone(&self.meter);
        let meter_key = self.meter_key.clone();
        let exchange =
            self.exchange_or_fallback(shared, spec, &mut decoder, &mut raw, &mut output_cut);
        let outcome = tokio::select! {
            r = exchange => r,
            _ = tokio::time::sleep_until(stop_at) => Err(if Some(stop_at) == request_deadline {
                Failure::Network {
                    cause: format!(
                        "no complete answer within the request timeout of {}",
                        crate::text::duration_short(spec.http.request_timeout.unwrap_or_default())
                    ),
                }
            } else {
                Failure::TimedOut { after_s: spec.timeout.as_secs_f64() }
            }),
            _ = shared.cancel.cancelled() => Err(Failure::Cancelled),
            _ = meter.tripped().cancelled() => Err(meter.stop(&meter_key)),
        };
        let _ = raw.flush();
        let usage = decoder.usage(self.prompt_bytes);
        self.report_cost(&usage);
        let mut failure = outcome.err();
        if failure.is_none() {
            failure = judge(&decoder);
        }
        let text = decoder.text().to_string();
        // Why the answer ended early (`max_tokens`, `length`): kept as the run's error output.
        let stderr = decoder
            .stop_reason
            .as_ref()
            .map(|reason| format!("the API stopped with `{reason}`"))
            .unwrap_or_default();
        Attempt {
            output: RunOutput {
                text,
                tokens: Some(usage),
                ..RunOutput::default()
            },
            failure,
            exit_code: None,
            stderr,
            elapsed: started.elapsed(),
            output_cut,
        }
    }

    /// [`HttpSession::exchange`], and once more with the request's fallback body when the
    /// server refused the first body's `response_format` (a 400, 422 or 500 naming it); later
    /// attempts send the fallback from the start.
    async fn exchange_or_fallback(
        &mut self,
        shared: &Shared,
        spec: &AgentSpec,
        decoder: &mut Decoder,
        raw: &mut std::fs::File,
        output_cut: &mut Option<u64>,
    ) -> Result<(), Failure> {
        let mut refused = String::new();
        let first = self
            .exchange(shared, spec, decoder, raw, output_cut, &mut refused)
            .await;
        // llama-cpp-python's server answers its request model's refusal with a 500 whose
        // message names the field; FastAPI and others with a 422, OpenAI with a 400.
        let refuses_format = matches!(
            first,
            Err(Failure::Http {
                status: 400 | 422 | 500,
                ..
            })
        ) && refused.contains("response_format");
        match self.request.fallback.take() {
            Some(fallback) if refuses_format => {
                self.request.body = fallback;
                let _ = writeln!(
                    raw,
                    "\n(deep-review: the server refused `response_format` of type json_schema; asking again with type json_object and the schema)"
                );
                self.exchange(shared, spec, decoder, raw, output_cut, &mut refused)
                    .await
            }
            other => {
                self.request.fallback = other;
                first
            }
        }
    }

    /// Sends the request and reads the answer into `decoder`, the raw bytes into `raw`; an
    /// error answer's body also into `refused`.
    async fn exchange(
        &self,
        shared: &Shared,
        spec: &AgentSpec,
        decoder: &mut Decoder,
        raw: &mut std::fs::File,
        output_cut: &mut Option<u64>,
        refused: &mut String,
    ) -> Result<(), Failure> {
        let response = self.send().await?;
        if !response.status().is_success() {
            return Err(refusal(response, raw, refused).await);
        }
        if !is_event_stream(&response) {
            // A server that ignored `stream: true`: one JSON body.
            return read_json_body(response, shared.output_limit, decoder, raw).await;
        }
        self.read_event_stream(shared, spec, response, decoder, raw, output_cut)
            .await
    }

    /// Posts the request's body with its headers.
    async fn send(&self) -> Result<reqwest::Response, Failure> {
        let mut builder = self.client.post(&self.request.url).json(&self.request.body);
        for (name, value) in &self.request.headers {
            builder = builder.header(*name, value);
        }
        builder.send().await.map_err(network)
    }

    /// Reads the event stream into `decoder` (the raw bytes, redacted, into `raw`), reporting
    /// tokens and cost as it goes; stops at the output limit, at an error event, or at a
    /// stream that is not server-sent events.
    async fn read_event_stream(
        &self,
        shared: &Shared,
        spec: &AgentSpec,
        response: reqwest::Response,
        decoder: &mut Decoder,
        raw: &mut std::fs::File,
        output_cut: &mut Option<u64>,
    ) -> Result<(), Failure> {
        let limit = shared.output_limit;
        let received = AtomicU64::new(0);
        // Chunks are cut anywhere: a secret split between two is still found.
        let mut raw = crate::redact::RedactingWriter::new(raw);
        let bytes = response.bytes_stream().map(|chunk| {
            let chunk = chunk.map_err(Stop::Transport)?;
            let total =
                received.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
            if total > limit {
                return Err(Stop::OverLimit);
            }
            raw.write_piece(&chunk);
            Ok(chunk)
        });
        let mut events = bytes.eventsource();
        let mut seen = 0u64;
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => {
                    self.take_event(shared, spec, decoder, &event, &mut seen)?;
                    if decoder.error.is_some() {
                        break;
                    }
                }
                Err(err) => {
                    let received = received.load(Ordering::Relaxed);
                    return Err(stream_failure(err, shared, spec, received, output_cut));
                }
            }
        }
        Ok(())
    }

    /// Feeds one event to `decoder`; every [`REPORT_EVERY`] events, reports the tokens and
    /// cost so far.
    fn take_event(
        &self,
        shared: &Shared,
        spec: &AgentSpec,
        decoder: &mut Decoder,
        event: &eventsource_stream::Event,
        seen: &mut u64,
    ) -> Result<(), Failure> {
        decoder
            .event(&event.event, &event.data)
            .map_err(|cause| Failure::Reported {
                cause: one_sentence(&cause),
            })?;
        *seen += 1;
        if seen.is_multiple_of(REPORT_EVERY) {
            let usage = decoder.usage(self.prompt_bytes);
            shared.events.agent(
                &spec.name,
                EventKind::Tokens {
                    total: usage.input + usage.output,
                },
            );
            self.report_cost(&usage);
        }
        Ok(())
    }

    /// Reports what this reviewer has spent so far to the run's meter.
    fn report_cost(&self, usage: &crate::types::TokenUsage) {
        // Counts the server could not have meant are not charged (the run's notes say so).
        if crate::dispatch::numbers::check_tokens(usage).is_err() {
            return;
        }
        if let Some(p) = &self.priced {
            self.meter
                .record(&self.meter_key, p.price.cost(usage.input, usage.output));
        }
    }
}

/// The failure an error answer stands for; its body goes (redacted) into `raw` and (as it
/// is) into `refused`.
async fn refusal(
    response: reqwest::Response,
    raw: &mut std::fs::File,
    refused: &mut String,
) -> Failure {
    let status = response.status();
    let retry_after = retry_after(response.headers());
    let body = read_some(response, ERROR_BODY_LIMIT).await;
    let _ = raw.write_all(crate::redact::redact(&body).as_bytes());
    let failure = http_failure(status.as_u16(), retry_after, &body);
    *refused = body;
    failure
}

/// Whether the answer is an event stream, by its content type.
fn is_event_stream(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Reads an answer that is one JSON body (up to `limit` bytes) into `decoder`, the raw bytes
/// (redacted) into `raw`.
async fn read_json_body(
    response: reqwest::Response,
    limit: u64,
    decoder: &mut Decoder,
    raw: &mut std::fs::File,
) -> Result<(), Failure> {
    let body = read_some(response, usize::try_from(limit).unwrap_or(usize::MAX)).await;
    let _ = raw.write_all(crate::redact::redact(&body).as_bytes());
    match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(value) => {
            decoder.body(&value);
            Ok(())
        }
        Err(_) => Err(Failure::Reported {
            cause: "the server answered with neither an event stream nor JSON".into(),
        }),
    }
}

/// The failure a broken event stream stands for. Past the output limit, the bytes cut go into
/// `output_cut` and the run's events are told.
fn stream_failure(
    err: EventStreamError<Stop>,
    shared: &Shared,
    spec: &AgentSpec,
    received: u64,
    output_cut: &mut Option<u64>,
) -> Failure {
    let limit = shared.output_limit;
    match err {
        EventStreamError::Transport(Stop::OverLimit) => {
            *output_cut = Some(received.saturating_sub(limit));
            shared
                .events
                .agent(&spec.name, EventKind::OutputCut { limit_bytes: limit });
            Failure::OutputOverLimit { limit_bytes: limit }
        }
        EventStreamError::Transport(Stop::Transport(err)) => network(err),
        EventStreamError::Utf8(_) => Failure::Reported {
            cause: "the server sent a malformed stream: it is not UTF-8".into(),
        },
        EventStreamError::Parser(_) => Failure::Reported {
            cause: "the server sent a malformed stream: it is not server-sent events".into(),
        },
    }
}

/// The failure a finished stream stands for: an error event, no text, or none.
fn judge(decoder: &Decoder) -> Option<Failure> {
    if let Some(err) = &decoder.error {
        let cause = one_sentence(&err.message);
        return Some(match err.status {
            Some(429) => Failure::RateLimited {
                cause,
                retry_after_s: crate::dispatch::failure::retry_after_in(&err.message),
            },
            Some(status) => Failure::Http { status, cause },
            None => Failure::Reported { cause },
        });
    }
    if decoder.text().trim().is_empty() {
        return Some(if let Some(reason) = &decoder.stop_reason {
            // A reasoning model can spend all of its output on thinking.
            Failure::Reported {
                cause: format!(
                    "the API stopped (`{reason}`) before it wrote any review text: raise \
                     `max_output_tokens` in its config"
                ),
            }
        } else if decoder.finished {
            Failure::NoReview
        } else {
            Failure::Network {
                cause: "the stream ended before the answer was complete".into(),
            }
        });
    }
    None
}

/// A request that did not get an answer: a network failure, transient.
fn network(err: reqwest::Error) -> Failure {
    let what = if err.is_connect() {
        "could not connect to the API"
    } else if err.is_timeout() {
        "the API did not answer in time"
    } else if err.is_body() || err.is_decode() {
        "the connection broke while the answer streamed"
    } else {
        "the request to the API failed"
    };
    // reqwest's own message names the URL; the source names the cause.
    let mut cause = what.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        cause = format!("{what}: {s}");
        source = s.source();
    }
    Failure::Network {
        cause: one_sentence(&crate::redact::redact(&cause)),
    }
}

/// The typed failure of an HTTP error status with its body.
fn http_failure(status: u16, retry_after_s: Option<f64>, body: &str) -> Failure {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| stream::error_of(&v))
        .map(|e| e.message)
        .or_else(|| crate::dispatch::failure::cause_line(body))
        .unwrap_or_default();
    let message = one_sentence(&crate::redact::redact(&message));
    let cause = if message.is_empty() {
        format!("the API answered HTTP {status}")
    } else {
        format!("the API answered HTTP {status}: {message}")
    };
    if status == 429 {
        Failure::RateLimited {
            cause,
            retry_after_s: retry_after_s.or_else(|| crate::dispatch::failure::retry_after_in(body)),
        }
    } else {
        Failure::Http { status, cause }
    }
}

/// `retry-after` in seconds (or an HTTP date), and OpenAI's `retry-after-ms`.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<f64> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(ms / 1000.0).filter(|s| s.is_finite() && *s >= 0.0);
    }
    let value = text("retry-after")?.trim();
    if let Ok(s) = value.parse::<f64>() {
        return Some(s).filter(|s| s.is_finite() && *s >= 0.0);
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at
        .signed_duration_since(chrono::Utc::now())
        .num_milliseconds();
    Some((wait.max(0) as f64) / 1000.0)
}

/// At most `limit` bytes of a body, as text (an error body, or a whole JSON answer).
async fn read_some(mut response: reqwest::Response, limit: usize) -> String {
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit.saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= limit {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_become_typed_failures() {
        let f = http_failure(
            429,
            Some(7.0),
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}"#,
        );
        assert_eq!(
            f,
            Failure::RateLimited {
                cause: "the API answered HTTP 429: Rate limit reached".into(),
                retry_after_s: Some(7.0)
            }
        );
        assert!(f.is_transient());
        let f = http_failure(503, None, "Service Unavailable");
        assert!(matches!(f, Failure::Http { status: 503, .. }));
        assert!(f.is_transient());
        let f = http_failure(
            401,
            None,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        );
        assert!(!f.is_transient());
        assert!(
            f.sentence().contains("invalid x-api-key"),
            "{}",
            f.sentence()
        );
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "12".parse().unwrap());
        assert_eq!(retry_after(&h), Some(12.0));
        h.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&h), Some(1.5));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(0.0), "a date in the past: no wait");
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn a_stream_without_text_is_no_review_or_a_broken_one() {
        let mut d = Decoder::new(crate::types::AgentKind::OpenAiCompatible);
        assert!(matches!(judge(&d), Some(Failure::Network { .. })));
        d.event("", "[DONE]").unwrap();
        assert_eq!(judge(&d), Some(Failure::NoReview));
    }
}
