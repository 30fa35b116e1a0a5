//! Progress of a dispatch, as two consumers of its [events](super::events): a live line per
//! agent on a terminal, or one plain line per event elsewhere (CI logs, `--quiet`, pipes).
//! Library callers that want neither pass [`ProgressMode::Silent`].
//!
//! Everything an agent wrote (its error, its tool names) passes through
//! [`crate::text::printable_line`] first: it cannot act on the terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::events::{Event, EventKind, EventSink};
use crate::text::{duration_short, plural, printable_line};
use crate::types::RunStatus;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressMode {
    /// Live lines when stderr is a terminal and `CI` is not `true`, else plain lines.
    #[default]
    Auto,
    /// Live lines (indicatif) on stderr.
    Live,
    /// One line per event on stderr: "claude: started", "claude: done in 4m12s, 37 tool calls".
    Plain,
    /// Nothing.
    Silent,
}

impl ProgressMode {
    /// `Auto` made concrete for this process.
    pub fn resolve(self) -> ProgressMode {
        match self {
            ProgressMode::Auto => {
                let ci =
                    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
                if !ci && std::io::stderr().is_terminal() {
                    ProgressMode::Live
                } else {
                    ProgressMode::Plain
                }
            }
            other => other,
        }
    }
}

/// The progress display of one dispatch: an [`EventSink`].
pub struct Progress {
    mode: ProgressMode,
    live: Option<Live>,
    /// Where plain lines go: stderr, or a test's buffer.
    sink: Mutex<Box<dyn Write + Send>>,
    /// Per agent: tool calls and tokens so far (live mode shows both on one line).
    counts: Mutex<BTreeMap<String, (u64, Option<u64>)>>,
}

struct Live {
    _multi: MultiProgress,
    /// Width of the agent-name column.
    width: usize,
    total: ProgressBar,
    bars: BTreeMap<String, ProgressBar>,
}

impl Progress {
    /// A display for these agents, in the order given.
    pub fn new(mode: ProgressMode, agents: &[String]) -> Progress {
        let mode = mode.resolve();
        let live = (mode == ProgressMode::Live).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let width = agents.iter().map(|a| a.len()).max().unwrap_or(6).max(6);
            let style = ProgressStyle::with_template(&format!(
                "{{spinner:.cyan}} {{prefix:<{width}}} {{elapsed:>5}}  {{wide_msg}}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let mut bars = BTreeMap::new();
            for agent in agents {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(printable_line(agent));
                bar.set_message("queued");
                bar.enable_steady_tick(Duration::from_millis(200));
                bars.insert(agent.clone(), bar);
            }
            let total = multi.add(ProgressBar::new_spinner());
            total.set_style(style);
            total.set_prefix("total");
            total.enable_steady_tick(Duration::from_millis(200));
            Live {
                _multi: multi,
                width,
                total,
                bars,
            }
        });
        Progress {
            mode,
            live,
            sink: Mutex::new(Box::new(std::io::stderr())),
            counts: Mutex::new(BTreeMap::new()),
        }
    }

    /// Plain lines written to `sink` instead of stderr.
    pub fn plain_to(agents: &[String], sink: Box<dyn Write + Send>) -> Progress {
        let mut progress = Progress::new(ProgressMode::Plain, agents);
        progress.sink = Mutex::new(sink);
        progress
    }

    pub fn mode(&self) -> ProgressMode {
        self.mode
    }

    fn plain(&self, line: String) {
        if self.mode == ProgressMode::Plain
            && let Ok(mut sink) = self.sink.lock()
        {
            let _ = writeln!(sink, "{line}");
            let _ = sink.flush();
        }
    }

    fn bar(&self, agent: &str, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.live.as_ref().and_then(|l| l.bars.get(agent)) {
            f(bar);
        }
    }

    /// Live mode: "running · 12 tool calls · 34.5k tokens".
    fn show_counts(&self, agent: &str, update: impl FnOnce(&mut (u64, Option<u64>))) {
        if self.live.is_none() {
            return;
        }
        let (calls, tokens) = match self.counts.lock() {
            Ok(mut counts) => {
                let entry = counts.entry(agent.to_string()).or_default();
                update(entry);
                *entry
            }
            Err(_) => return,
        };
        let mut msg = format!("running · {}", plural(calls, "tool call", "tool calls"));
        if let Some(t) = tokens {
            msg.push_str(&format!(" · {} tokens", short_count(t)));
        }
        self.bar(agent, |b| b.set_message(msg));
    }

    fn finish_bar(&self, agent: &str, line: &str) {
        let width = self.live.as_ref().map_or(8, |l| l.width);
        self.bar(agent, |b| {
            b.set_style(
                ProgressStyle::with_template(&format!("  {{prefix:<{width}}} {{wide_msg}}"))
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.finish_with_message(line.to_string());
        });
    }
}

impl EventSink for Progress {
    fn event(&self, event: &Event) {
        let agent = event.agent.as_deref().unwrap_or("");
        let shown = printable_line(agent);
        match &event.kind {
            EventKind::Queued => {}
            EventKind::Started { attempt } => {
                if *attempt == 1 {
                    self.plain(format!("{shown}: started"));
                }
                self.bar(agent, |b| b.set_message("running"));
            }
            EventKind::ToolCall { total, .. } => self.show_counts(agent, |c| c.0 = *total),
            EventKind::Tokens { total } => self.show_counts(agent, |c| c.1 = Some(*total)),
            EventKind::Retry {
                attempt,
                max,
                reason,
                wait_s,
            } => {
                let reason = printable_line(reason);
                self.plain(format!(
                    "{shown}: retry {attempt}/{max} after {reason} (in {})",
                    duration_short(crate::text::seconds(*wait_s))
                ));
                self.bar(agent, |b| {
                    b.set_message(format!("retry {attempt}/{max} after {reason}"))
                });
            }
            EventKind::OutputCut { limit_bytes } => self.plain(format!(
                "{shown}: output passed {} MB; the rest is not kept",
                limit_bytes / (1024 * 1024)
            )),
            EventKind::Finished {
                duration_s,
                tool_calls,
                retries,
                ..
            } => {
                let line = format!(
                    "done in {}, {}{}",
                    duration_short(crate::text::seconds(*duration_s)),
                    plural(*tool_calls, "tool call", "tool calls"),
                    retries_note(*retries)
                );
                self.plain(format!("{shown}: {line}"));
                self.finish_bar(agent, &line);
            }
            EventKind::Failed {
                status,
                message,
                duration_s,
                retries,
                ..
            } => {
                let took = duration_short(crate::text::seconds(*duration_s));
                let message = printable_line(message);
                let line = match status {
                    RunStatus::TimedOut => {
                        format!("timed out after {took}{}", retries_note(*retries))
                    }
                    RunStatus::Cancelled => format!("cancelled after {took}"),
                    _ => format!("failed after {took}{}: {message}", retries_note(*retries)),
                };
                self.plain(format!("{shown}: {line}"));
                self.finish_bar(agent, &line);
            }
            EventKind::Cancelling => {
                self.plain("cancelling: stopping every agent".to_string());
                if let Some(live) = &self.live {
                    live.total.set_message("cancelling");
                }
            }
            EventKind::Done { duration_s } => {
                let total = duration_short(crate::text::seconds(*duration_s));
                self.plain(format!("all agents finished in {total}"));
                if let Some(live) = &self.live {
                    live.total
                        .finish_with_message(format!("all agents finished in {total}"));
                }
            }
        }
    }
}

fn retries_note(retries: u32) -> String {
    if retries > 0 {
        format!(", {}", plural(retries, "retry", "retries"))
    } else {
        String::new()
    }
}

fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::events::Emitter;
    use crate::types::Failure;
    use std::sync::Arc;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn plain_mode_prints_one_escaped_line_per_event() {
        let buf = Buf::default();
        let p = Progress::plain_to(&["claude".into(), "gemini".into()], Box::new(buf.clone()));
        let emitter = Emitter::new(vec![Arc::new(p)]);
        emitter.agent("claude", EventKind::Started { attempt: 1 });
        emitter.agent(
            "claude",
            EventKind::ToolCall {
                name: "Read".into(),
                total: 3,
            },
        );
        emitter.agent(
            "gemini",
            EventKind::Retry {
                attempt: 1,
                max: 2,
                reason: "HTTP 429".into(),
                wait_s: 5.0,
            },
        );
        emitter.agent(
            "claude",
            EventKind::Finished {
                duration_s: 252.4,
                tool_calls: 37,
                tokens: None,
                retries: 0,
            },
        );
        let failure = Failure::Reported {
            cause: "bad \u{1b}]52;c;x\u{7} key".into(),
        };
        emitter.agent(
            "gemini",
            EventKind::Failed {
                status: RunStatus::Failed,
                message: failure.sentence(),
                failure,
                duration_s: 12.0,
                retries: 2,
            },
        );
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "claude: started\ngemini: retry 1/2 after HTTP 429 (in 5s)\nclaude: done in 4m12s, 37 tool calls\ngemini: failed after 12s, 2 retries: bad \\x1b]52;c;x\\x07 key\n"
        );
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(short_count(34_500), "34.5k");
        assert_eq!(short_count(2_500_000), "2.5M");
    }
}
