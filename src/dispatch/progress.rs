//! Progress of a dispatch: a live line per agent on a terminal, one plain line per event
//! elsewhere (CI logs, `--quiet`, pipes), nothing at all for library callers that ask so.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::text::{duration_short as format_duration, plural};
use crate::types::{RawReview, RunStatus};

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

/// Progress display shared by every agent's task.
pub struct Progress {
    mode: ProgressMode,
    start: Instant,
    live: Option<Live>,
    /// Where plain lines go: stderr, or a test's buffer.
    sink: Mutex<Box<dyn Write + Send>>,
}

struct Live {
    _multi: MultiProgress,
    /// Width of the agent-name column.
    width: usize,
    total: ProgressBar,
    bars: Mutex<BTreeMap<String, ProgressBar>>,
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
                bar.set_prefix(agent.clone());
                bar.set_message("starting");
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
                bars: Mutex::new(bars),
            }
        });
        Progress {
            mode,
            start: Instant::now(),
            live,
            sink: Mutex::new(Box::new(std::io::stderr())),
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
        if let Some(live) = &self.live
            && let Ok(bars) = live.bars.lock()
            && let Some(bar) = bars.get(agent)
        {
            f(bar);
        }
    }

    pub fn started(&self, agent: &str) {
        self.plain(format!("{agent}: started"));
        self.bar(agent, |b| b.set_message("running"));
    }

    /// Live numbers while the agent runs (plain mode prints nothing for these).
    pub fn update(&self, agent: &str, tool_calls: u64, tokens: Option<u64>) {
        if self.live.is_none() {
            return;
        }
        let mut msg = format!(
            "running · {}",
            plural(tool_calls, "tool call", "tool calls")
        );
        if let Some(t) = tokens {
            msg.push_str(&format!(" · {} tokens", short_count(t)));
        }
        self.bar(agent, |b| b.set_message(msg));
    }

    pub fn retry(&self, agent: &str, attempt: u32, max: u32, reason: &str, wait: Duration) {
        self.plain(format!(
            "{agent}: retry {attempt}/{max} after {reason} (in {})",
            format_duration(wait)
        ));
        self.bar(agent, |b| {
            b.set_message(format!("retry {attempt}/{max} after {reason}"))
        });
    }

    pub fn finished(&self, review: &RawReview) {
        let line = summary(review);
        self.plain(format!("{}: {line}", review.agent));
        let width = self.live.as_ref().map_or(8, |l| l.width);
        self.bar(&review.agent, |b| {
            b.set_style(
                ProgressStyle::with_template(&format!("  {{prefix:<{width}}} {{wide_msg}}"))
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.finish_with_message(line.clone());
        });
    }

    pub fn cancelling(&self) {
        self.plain("cancelling: stopping every agent".to_string());
        if let Some(live) = &self.live {
            live.total.set_message("cancelling");
        }
    }

    /// Ends the display with the whole elapsed time.
    pub fn done(&self) {
        let total = format_duration(self.start.elapsed());
        self.plain(format!("all agents finished in {total}"));
        if let Some(live) = &self.live {
            live.total
                .finish_with_message(format!("all agents finished in {total}"));
        }
    }
}

/// "done in 4m12s, 37 tool calls" / "failed after 12s: ..." / "timed out after 30m0s".
pub fn summary(review: &RawReview) -> String {
    let took = format_duration(Duration::from_secs_f64(review.duration_s.max(0.0)));
    let tools = plural(review.total_tool_calls(), "tool call", "tool calls");
    let retries = if review.retries > 0 {
        format!(", {}", plural(review.retries, "retry", "retries"))
    } else {
        String::new()
    };
    let error = review
        .error
        .as_deref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    match review.status {
        RunStatus::Ok => format!("done in {took}, {tools}{retries}"),
        RunStatus::Failed => format!("failed after {took}{retries}{error}"),
        RunStatus::TimedOut => format!("timed out after {took}{retries}"),
        RunStatus::Cancelled => format!("cancelled after {took}"),
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

    fn review(status: RunStatus) -> RawReview {
        RawReview {
            agent: "claude".into(),
            display_name: None,
            model: None,
            effort: None,
            status,
            text: String::new(),
            exit_code: Some(0),
            duration_s: 252.4,
            tokens: None,
            cost_usd: None,
            tool_calls: BTreeMap::from([("Read".to_string(), 30), ("Grep".to_string(), 7)]),
            stderr_tail: String::new(),
            error: Some("HTTP 429".into()),
            retries: 0,
            worktree_changes: vec![],
        }
    }

    #[test]
    fn summaries_read_as_one_line() {
        assert_eq!(
            summary(&review(RunStatus::Ok)),
            "done in 4m12s, 37 tool calls"
        );
        let mut r = review(RunStatus::Failed);
        r.retries = 2;
        assert_eq!(summary(&r), "failed after 4m12s, 2 retries: HTTP 429");
        assert_eq!(
            summary(&review(RunStatus::TimedOut)),
            "timed out after 4m12s"
        );
    }

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Buf(std::sync::Arc<Mutex<Vec<u8>>>);
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
    fn plain_mode_prints_one_line_per_event() {
        let buf = Buf::default();
        let p = Progress::plain_to(&["claude".into(), "gemini".into()], Box::new(buf.clone()));
        p.started("claude");
        p.update("claude", 3, Some(100));
        p.retry("gemini", 1, 2, "HTTP 429", Duration::from_secs(5));
        p.finished(&review(RunStatus::Ok));
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "claude: started\ngemini: retry 1/2 after HTTP 429 (in 5s)\nclaude: done in 4m12s, 37 tool calls\n"
        );
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(short_count(34_500), "34.5k");
    }
}
