//! What happens during a dispatch, as typed events: the supervisor emits them, and any number
//! of sinks consume them. The live display and the plain log lines are two sinks
//! ([`super::progress`]); [`JsonlSink`] writes `events.jsonl` into the run bundle, so a run can be
//! followed (or audited) after the fact; a front-end (a GitHub check, a test) can add its own.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::types::{Failure, RunStatus, TokenUsage};

/// One event of one reviewer (or of the whole dispatch, when `agent` is `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the dispatch started.
    pub at_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The reviewer is waiting for its checkout or its turn.
    Queued,
    /// An attempt started (1 for the first).
    Started { attempt: u32 },
    /// The reviewer called a tool; `total` counts every call so far.
    ToolCall { name: String, total: u64 },
    /// The reviewer's token count so far (input + output).
    Tokens { total: u64 },
    /// An attempt failed in a way worth another try; the next one starts after `wait_s`.
    Retry {
        attempt: u32,
        max: u32,
        reason: String,
        wait_s: f64,
    },
    /// The reviewer's output passed the limit; what came after was not kept.
    OutputCut { limit_bytes: u64 },
    /// The reviewer produced a review.
    Finished {
        duration_s: f64,
        tool_calls: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<TokenUsage>,
        retries: u32,
    },
    /// The reviewer ended without a review.
    Failed {
        status: RunStatus,
        failure: Failure,
        /// The sentence users see ([`Failure::sentence`]).
        message: String,
        duration_s: f64,
        retries: u32,
    },
    /// The user asked to stop: every reviewer is being stopped.
    Cancelling,
    /// Every reviewer has ended.
    Done { duration_s: f64 },
}

/// A consumer of events. Called from the dispatch's tasks: keep it quick and never block on
/// the network.
pub trait EventSink: Send + Sync {
    fn event(&self, event: &Event);
}

/// Fans events out to every sink, stamping them with the time since the dispatch started.
/// Stamping and fan-out happen under one lock, so every sink sees events in the order of their
/// times (agents emit from several threads at once; `events.jsonl` must read in time order).
#[derive(Clone)]
pub struct Emitter {
    start: Instant,
    sinks: Arc<Vec<Arc<dyn EventSink>>>,
    order: Arc<Mutex<()>>,
}

impl Emitter {
    pub fn new(sinks: Vec<Arc<dyn EventSink>>) -> Emitter {
        Emitter {
            start: Instant::now(),
            sinks: Arc::new(sinks),
            order: Arc::new(Mutex::new(())),
        }
    }

    /// Seconds since the dispatch started.
    pub fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    pub fn emit(&self, agent: Option<&str>, kind: EventKind) {
        let _in_order = self.order.lock().unwrap_or_else(|e| e.into_inner());
        let event = Event {
            at_s: (self.elapsed_s() * 1000.0).round() / 1000.0,
            agent: agent.map(str::to_string),
            kind,
        };
        for sink in self.sinks.iter() {
            sink.event(&event);
        }
    }

    pub fn agent(&self, agent: &str, kind: EventKind) {
        self.emit(Some(agent), kind);
    }
}

/// Writes one JSON object per line to a file (the run bundle's `events.jsonl`), flushed after
/// every event so a crash loses nothing that was emitted.
pub struct JsonlSink {
    file: Mutex<std::fs::File>,
}

impl JsonlSink {
    /// Appends to `path` (a resumed run adds its events after the first run's).
    pub fn append(path: &Path) -> std::io::Result<JsonlSink> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(JsonlSink {
            file: Mutex::new(file),
        })
    }
}

impl EventSink for JsonlSink {
    fn event(&self, event: &Event) {
        if let (Ok(line), Ok(mut file)) = (serde_json::to_string(event), self.file.lock()) {
            let _ = writeln!(file, "{}", crate::redact::redact(&line));
            let _ = file.flush();
        }
    }
}

/// Keeps every event in memory: for tests and for front-ends that summarize a run.
#[derive(Default)]
pub struct Recorder(Mutex<Vec<Event>>);

impl Recorder {
    pub fn events(&self) -> Vec<Event> {
        self.0.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl EventSink for Recorder {
    fn event(&self, event: &Event) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_one_json_object_per_line_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let sink: Arc<dyn EventSink> = Arc::new(JsonlSink::append(&path).unwrap());
        let emitter = Emitter::new(vec![sink]);
        emitter.agent("claude", EventKind::Started { attempt: 1 });
        emitter.agent(
            "claude",
            EventKind::Retry {
                attempt: 1,
                max: 2,
                reason: "HTTP 429".into(),
                wait_s: 5.0,
            },
        );
        emitter.emit(None, EventKind::Cancelling);
        let text = std::fs::read_to_string(&path).unwrap();
        let events: Vec<Event> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].agent.as_deref(), Some("claude"));
        assert_eq!(events[0].kind, EventKind::Started { attempt: 1 });
        assert!(text.lines().nth(1).unwrap().contains(r#""event":"retry""#));
        assert_eq!(events[2].agent, None);
    }
}
